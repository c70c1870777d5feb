"""Looking at the graph: Graphviz drawings and the bytes a graph keeps alive.

PyTorch answers "what does my graph look like" with add-ons (torchviz) and "how much memory does
it hold" not at all. retrograd's graph is plain Python objects, so both are a walk away:
``to_dot`` writes Graphviz DOT source of the backward graph (no dependency), ``draw`` writes it
to a file (and renders SVG/PNG where Graphviz's ``dot`` program is installed), and
``memory_report`` counts the bytes of the tensors the graph saved for backward. Shared storage
is counted once. These are public in ``retrograd.autograd.graph``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import namedtuple
from collections.abc import Iterable, Iterator

import numpy as np

from .._tensor import Tensor, edge

__all__ = ["to_dot", "draw", "memory_report", "MemoryReport", "saved_arrays", "walk",
           "increment_version", "GradientEdge", "get_gradient_edge"]


def increment_version(tensor) -> None:
    """Bump the version counter of ``tensor`` (or of each tensor of an iterable), as an in-place
    change does: backward then refuses the values saved before.

    >>> import retrograd as torch
    >>> x = torch.zeros(2); increment_version(x); x._version
    1
    """
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._vc[0] += 1


GradientEdge = namedtuple("GradientEdge", ["node", "output_nr", "ownership_token"],
                          defaults=(None,))
GradientEdge.__doc__ = "An edge of the backward graph: the node and which of its outputs."


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge through which ``tensor``'s gradient flows: its ``grad_fn`` (or its leaf's
    AccumulateGrad) and output number.

    >>> import retrograd as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> get_gradient_edge(x * 2).node.name()
    'MulBackward0'
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node, nr = edge(tensor)
    return GradientEdge(node, nr)


def walk(roots: Iterable) -> Iterator:
    """Every node reachable from ``roots`` (nodes), each once, parents before children.

    >>> import retrograd as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> [n.name() for n in walk([(x * 2).sum().grad_fn])]
    ['SumBackward0', 'MulBackward0', 'torch::autograd::AccumulateGrad']
    """
    seen = set()
    stack = [r for r in roots if r is not None][::-1]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        for fn, _ in reversed(node.next_functions):
            if fn is not None and id(fn) not in seen:
                stack.append(fn)


def saved_arrays(node) -> list:
    """``(name, array)`` for each array ``node`` keeps for its backward: saved inputs, a saved
    output, and arrays the op kept aside (indices, masks). Empty once the graph is freed.

    >>> import retrograd as torch
    >>> x = torch.ones(3, requires_grad=True)
    >>> [(k, a.shape) for k, a in saved_arrays((x * x).grad_fn)]
    [('saved_0', (3,)), ('saved_1', (3,))]
    """
    out = []
    saved = node.__dict__.get("_saved")
    if saved:
        for i, s in enumerate(saved):
            if isinstance(s, Tensor):
                out.append((f"saved_{i}", s._data))
            elif isinstance(s, np.ndarray) and s.ndim:
                out.append((f"saved_{i}", s))
            elif isinstance(s, tuple) and s and isinstance(s[0], np.ndarray):
                out.append((f"saved_{i}", s[0]))  # a user Function's saved output
    res = node.__dict__.get("_out")
    if res.__class__ is tuple:  # (not when packed by a saved-tensor hook)
        out.append(("result", res[0]))
    for k, v in node.__dict__.items():
        if isinstance(v, np.ndarray) and v.ndim and k not in ("_saved", "_out"):
            out.append((k.lstrip("_"), v))
    return out


def storage(a: np.ndarray) -> np.ndarray:
    """The array that owns ``a``'s memory (views share it): what a saved array keeps alive."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _nodes_of(tensors) -> list:
    roots = []
    for t in tensors:
        if isinstance(t, Tensor):
            roots.append(t.grad_fn)
        elif t is not None:
            roots.append(t)  # a node
    return roots


def _param_names(params) -> dict:
    return {} if params is None else {id(p): n for n, p in dict(params).items()}


def _esc(s: str) -> str:
    """A label as a DOT string body: quotes and backslashes escaped, lines as ``\\n``."""
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _shape(a) -> str:
    return "(" + ", ".join(str(d) for d in a.shape) + ")"


def to_dot(*tensors: Tensor, params: dict | None = None, show_saved: bool = True) -> str:
    """Graphviz DOT source of the backward graph reachable from ``tensors``.

    One box per node (its grad_fn name), leaves in light blue named by ``params`` (a dict
    name -> tensor, e.g. ``dict(model.named_parameters())``) with their shapes, the given
    tensors' nodes in green, and, with ``show_saved``, each node's saved tensors (shape, dtype,
    bytes) in orange. Paste the text into any Graphviz viewer, or use ``draw``.

    >>> import retrograd as torch
    >>> w = torch.ones(3, requires_grad=True)
    >>> dot = to_dot((w * 2).sum(), params={"w": w})
    >>> "SumBackward0" in dot and "MulBackward0" in dot, dot.count("->")
    (True, 2)
    """
    names = _param_names(params)
    outputs = {id(n) for n in _nodes_of(tensors) if n is not None}
    lines = [
        "digraph {",
        '  graph [rankdir=BT, size="12,12"];',
        '  node [shape=box, style=filled, fillcolor=white, fontname=monospace, fontsize=10];',
    ]
    for t in tensors:
        if isinstance(t, Tensor) and t.grad_fn is None and t.requires_grad:
            # A leaf given directly: draw it alone.
            label = names.get(id(t), "leaf") + "\n" + _shape(t._data)
            lines.append(f'  n{id(t)} [label="{_esc(label)}", fillcolor=lightblue];')
    for node in walk(_nodes_of(tensors)):
        nid = f"n{id(node)}"
        var = getattr(node, "variable", None) if node.name().endswith("AccumulateGrad") else None
        if var is not None:
            label = names.get(id(var), "") + "\n" + _shape(var._data)
            lines.append(f'  {nid} [label="{_esc(label.strip())}", fillcolor=lightblue];')
        else:
            color = "darkolivegreen1" if id(node) in outputs else "white"
            lines.append(f'  {nid} [label="{_esc(node.name())}", fillcolor={color}];')
        for fn, _ in node.next_functions:
            if fn is not None:
                lines.append(f"  n{id(fn)} -> {nid};")
        if show_saved:
            for k, a in saved_arrays(node):
                sid = f"s{id(node)}_{_esc(k)}"
                label = f"{k}\n{_shape(a)} {a.dtype} {a.nbytes} B"
                lines.append(f'  {sid} [label="{_esc(label)}", shape=oval, fillcolor=orange];')
                lines.append(f"  {sid} -> {nid} [style=dashed, arrowhead=none];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def draw(tensor: Tensor, path: str, params: dict | None = None) -> str:
    """Write the graph of ``tensor`` to ``path``. The DOT source is always written (``path``
    itself, or beside it with a ``.dot`` suffix); ``.svg``/``.png``/``.pdf`` are then rendered by
    Graphviz's ``dot`` program, which must be installed for them. Returns ``path``.

    >>> import os, tempfile, retrograd as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> p = draw((x * x).sum(), os.path.join(tempfile.mkdtemp(), "g.dot"))
    >>> open(p).read().startswith("digraph")
    True
    """
    src = to_dot(tensor, params=params)
    ext = os.path.splitext(path)[1].lower()
    if ext in ("", ".dot", ".gv"):
        with open(path, "w") as f:
            f.write(src)
        return path
    if ext not in (".svg", ".png", ".pdf"):
        raise ValueError(f"draw(): cannot write {ext!r} files; use .dot, .svg, .png or .pdf")
    with open(os.path.splitext(path)[0] + ".dot", "w") as f:
        f.write(src)
    dot = shutil.which("dot")
    if dot is None:
        raise RuntimeError(
            f"draw(): rendering {ext} needs Graphviz's 'dot' program, which was not found. Install "
            "Graphviz (e.g. 'apt install graphviz' or 'brew install graphviz'); the .dot file "
            f"{os.path.splitext(path)[0]}.dot was written and needs nothing."
        )
    subprocess.run([dot, f"-T{ext[1:]}", "-o", path], input=src.encode(), check=True)
    return path


class MemoryReport:
    """What ``memory_report`` found: ``total_bytes``, ``per_node`` (a list of
    ``(node name, bytes)``, one entry per node that saves something, largest first) and
    ``per_module`` (``{module name: bytes}``, when parameters were given). ``str()`` is a table.
    """

    def __init__(self, total_bytes: int, per_node: list, per_module: dict) -> None:
        self.total_bytes = total_bytes
        self.per_node = per_node
        self.per_module = per_module

    def __str__(self) -> str:
        rows = [("node", "saved bytes")] + [(n, f"{b:,}") for n, b in self.per_node]
        if self.per_module:
            rows += [("", ""), ("module", "saved bytes")]
            rows += [(m or "(top level)", f"{b:,}") for m, b in self.per_module.items()]
        rows += [("", ""), ("total", f"{self.total_bytes:,}")]
        w = max(len(r[0]) for r in rows)
        v = max(len(r[1]) for r in rows)
        return "\n".join(f"{a:<{w}}  {b:>{v}}".rstrip() for a, b in rows)

    __repr__ = __str__


def _module_of(node, owner: dict, memo: dict) -> str | None:
    """The module a node belongs to: the module of a parameter it consumes directly, else the
    module of the nearest node on its input side that does (activations follow their layer)."""
    stack, path, found = [node], [], None
    while stack and found is None:
        n = stack.pop()
        if id(n) in memo:
            found = memo[id(n)]
            break
        path.append(n)
        for fn, _ in n.next_functions:
            if fn is None:
                continue
            var = getattr(fn, "variable", None) if fn.name().endswith("AccumulateGrad") else None
            if var is not None and id(var) in owner:
                found = owner[id(var)]
                break
            stack.append(fn)
    for n in path:
        memo[id(n)] = found
    return found


def _span_owner(spans: list):
    """A function: node -> the innermost module whose last forward made it (``spans``: the
    modules' ``(name, (start, end))``, recorded by ``Module.__call__``), or None."""
    spans = sorted(spans, key=lambda r: r[1][1] - r[1][0])  # innermost (shortest) first

    def owner(node):
        seq = node._seq
        for name, (lo, hi) in spans:
            if lo < seq < hi:
                return name
        return None

    return owner


def memory_report(*tensors: Tensor, params: dict | None = None, model=None) -> MemoryReport:
    """The bytes of saved tensors held by the graph reachable from ``tensors``, in total, per
    node and, given a ``model``, per module (the module whose forward made the node; nodes made
    outside it count under ``None``) or, given ``params`` (name -> tensor), per parameter owner
    (the module of a parameter a node consumes, the nearest one on its input side for the
    nodes between layers). Storage shared by several saved tensors counts once.

    >>> import retrograd as torch
    >>> x = torch.ones(256, requires_grad=True)
    >>> y = (x.exp() * x).sum()
    >>> memory_report(y).total_bytes    # exp's result and x, 1024 bytes each
    2048
    """
    by_span = None
    if model is not None:
        spans = [(n, m.__dict__["_graph_span"]) for n, m in model.named_modules()
                 if "_graph_span" in m.__dict__]
        if spans:
            by_span = _span_owner(spans)
        else:  # the model was never called: fall back on its parameters
            params = dict(model.named_parameters())
    owner = {id(p): n.rpartition(".")[0] for n, p in (params or {}).items()}
    seen: set = set()
    total = 0
    per_node = []
    per_module: dict = {}
    memo: dict = {}
    for node in walk(_nodes_of(tensors)):
        nbytes = 0
        for _, a in saved_arrays(node):
            s = storage(a)
            if id(s) not in seen:
                seen.add(id(s))
                nbytes += s.nbytes
        if nbytes:
            total += nbytes
            per_node.append((node.name(), nbytes))
            if by_span is not None or owner:
                m = by_span(node) if by_span is not None else _module_of(node, owner, memo)
                per_module[m] = per_module.get(m, 0) + nbytes
    per_node.sort(key=lambda r: -r[1])
    return MemoryReport(total, per_node, per_module)
