#!/usr/bin/env python3
"""How big retrograd is: code lines per module and per layer, and the size limits.

A code line is a line holding at least one token of code: blank lines, comments and the
docstrings of modules, classes and functions do not count (a string that is not a docstring
does, every line of it). Run ``python tools/size_report.py`` from anywhere; ``--check`` exits 1
when the autograd core (engine + function + graph) is over 600 code lines or a module is over
800, naming what broke. ``--root DIR`` reports on another package directory.
"""

from __future__ import annotations

import argparse
import ast
import io
import pathlib
import sys
import tokenize

CORE_LIMIT = 600
MODULE_LIMIT = 800
CORE = ("autograd/engine.py", "autograd/function.py", "autograd/graph.py")
DEFAULT_ROOT = pathlib.Path(__file__).resolve().parent.parent / "src" / "retrograd"

# The Tensor and what every op needs beside it (dtypes, creation, RNG, printing, storage).
TENSOR_CORE = ("_tensor.py", "_dtypes.py", "_creation.py", "_random.py", "_printing.py",
               "_allocator.py")
LAYERS = ("tensor core", "autograd/", "ops/", "nn/", "optim/", "utils/", "others")

# Tokens that are layout, not code: a line holding only these is not a code line.
_LAYOUT = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
           tokenize.ENDMARKER}
_HAS_DOCSTRING = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, _HAS_DOCSTRING) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def code_lines(source: str) -> int:
    """Number of code lines in Python ``source``.

    >>> code_lines('def f():\\n    "doc"\\n    # why\\n\\n    return 1\\n')
    2
    """
    skip = _docstring_lines(ast.parse(source))
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in _LAYOUT:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return len(lines - skip)


def count_tree(root: pathlib.Path) -> dict[str, int]:
    """Code lines of every ``.py`` file under ``root``, keyed by POSIX path relative to it."""
    return {p.relative_to(root).as_posix(): code_lines(p.read_text(encoding="utf-8"))
            for p in sorted(root.rglob("*.py"))}


def layer_of(module: str) -> str:
    """The layer a module (a path relative to the package) belongs to."""
    if module in TENSOR_CORE:
        return "tensor core"
    top = module.split("/", 1)[0] + "/"
    return top if top in LAYERS else "others"


def problems(counts: dict[str, int]) -> list[str]:
    """What breaks a size limit, one line each (empty when all hold)."""
    bad = []
    core = sum(counts.get(m, 0) for m in CORE)
    if core > CORE_LIMIT:
        bad.append(f"autograd core (engine + function + graph) has {core} code lines "
                   f"> {CORE_LIMIT}")
    for module, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if n > MODULE_LIMIT:
            bad.append(f"{module} has {n} code lines > {MODULE_LIMIT}")
    return bad


def report(counts: dict[str, int]) -> str:
    """The printed report: modules (largest first), layers, totals and limits."""
    width = max([len(m) for m in counts] + [len("package total")])
    out = ["code lines (no docstrings, comments or blank lines)", "",
           f"{'module':<{width}}  {'code':>6}"]
    for module, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        mark = "  over limit" if n > MODULE_LIMIT else ""
        out.append(f"{module:<{width}}  {n:>6}{mark}")
    per_layer = {layer: [0, 0] for layer in LAYERS}
    for module, n in counts.items():
        entry = per_layer[layer_of(module)]
        entry[0] += 1
        entry[1] += n
    out += ["", f"{'layer':<{width}}  {'code':>6}  {'modules':>7}"]
    for layer, (files, n) in per_layer.items():
        out.append(f"{layer:<{width}}  {n:>6}  {files:>7}")
    out.append(f"{'package total':<{width}}  {sum(counts.values()):>6}  {len(counts):>7}")
    core = sum(counts.get(m, 0) for m in CORE)
    over = [f"{m} ({n})" for m, n in sorted(counts.items(), key=lambda kv: -kv[1])
            if n > MODULE_LIMIT]
    out += ["", f"autograd core (engine + function + graph): {core} code lines "
                f"(limit {CORE_LIMIT})",
            f"modules over {MODULE_LIMIT} code lines: {', '.join(over) if over else 'none'}"]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a limit is broken")
    parser.add_argument("--root", type=pathlib.Path, default=DEFAULT_ROOT,
                        help="package directory to measure (default: src/retrograd)")
    args = parser.parse_args(argv)
    counts = count_tree(args.root)
    print(report(counts))
    bad = problems(counts)
    print("size: " + ("ok" if not bad else "; ".join(bad)))
    return 1 if args.check and bad else 0


if __name__ == "__main__":
    sys.exit(main())
