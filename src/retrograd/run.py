"""``python -m retrograd.run``: run a PyTorch program unchanged, with ``torch`` being retrograd.

::

    python -m retrograd.run SCRIPT [ARGS...]
    python -m retrograd.run -m MODULE [ARGS...]

makes ``import torch`` and every ``torch.<sub>`` retrograd provides resolve to retrograd
(``retrograd.as_torch()``, see ``_alias.py``), then runs the program as Python would run it
directly, the way ``python -m pdb`` or ``coverage run`` wrap a script: ``sys.argv`` is
``[SCRIPT, ARGS...]``, the code runs as ``__main__`` (its ``if __name__ == "__main__":`` block
runs), ``sys.path[0]`` is the script's directory, ``sys.exit(n)`` and an uncaught exception give
the exit code they would, and a traceback shows the program's frames, not this wrapper's.
"""

from __future__ import annotations

import builtins
import importlib.machinery
import importlib.util
import io
import os
import runpy
import signal
import sys
import types
import zipfile

from ._alias import as_torch

__all__ = ["main", "run_script", "run_module"]

USAGE = """usage: python -m retrograd.run SCRIPT [ARGS...]
       python -m retrograd.run -m MODULE [ARGS...]

Run a PyTorch program with `torch` resolving to retrograd (retrograd.as_torch())."""


def _fresh_main(**attrs) -> types.ModuleType:
    """A new ``__main__`` module in ``sys.modules``, as Python makes one for a program."""
    main = types.ModuleType("__main__")
    main.__dict__.update(__builtins__=builtins, __spec__=None, __loader__=None,
                         __package__=None, __cached__=None)
    main.__dict__.update(attrs)
    sys.modules["__main__"] = main
    return main


def run_script(path: str, args: list) -> None:
    """Run the program at ``path`` as ``__main__`` with ``sys.argv = [path, *args]``.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     script = os.path.join(d, "prog.py")
    ...     with open(script, "w") as f:
    ...         _ = f.write("import sys; print(__name__, sys.argv[1:])")
    ...     saved = sys.argv, sys.path[0], sys.modules["__main__"]
    ...     try:
    ...         run_script(script, ["a", "b"])
    ...     finally:
    ...         sys.argv, sys.path[0], sys.modules["__main__"] = saved
    __main__ ['a', 'b']
    """
    sys.argv = [path, *args]
    if os.path.isdir(path) or not path.endswith(".py") and zipfile.is_zipfile(path):
        # A directory or zip archive with a __main__.py, as Python runs it.
        sys.path[0] = path
        runpy.run_path(path, run_name="__main__")
        return
    sys.path[0] = os.path.dirname(os.path.realpath(path))
    with io.open_code(path) as f:
        source = f.read()
    filename = os.path.abspath(path)
    code = compile(source, filename, "exec", dont_inherit=True)
    loader = importlib.machinery.SourceFileLoader("__main__", filename)
    main = _fresh_main(__file__=filename, __loader__=loader)
    exec(code, main.__dict__)


def run_module(name: str, args: list) -> None:
    """Run module ``name`` (a package: its ``__main__``) as ``python -m name`` would."""
    spec = importlib.util.find_spec(name)
    if spec is None:
        raise ModuleNotFoundError(f"No module named {name}", name=name)
    if spec.submodule_search_locations is not None:
        spec = importlib.util.find_spec(name + ".__main__")
        if spec is None:
            raise ModuleNotFoundError(
                f"No module named {name}.__main__; '{name}' is a package and cannot be "
                "directly executed", name=name + ".__main__")
    code = spec.loader.get_code(spec.name)
    if code is None:
        raise ImportError(f"No code object available for {name}")
    sys.argv = [spec.origin or name, *args]
    sys.path[0] = os.getcwd()
    main = _fresh_main(__file__=spec.origin, __loader__=spec.loader, __spec__=spec,
                       __package__=spec.parent, __cached__=spec.cached)
    exec(code, main.__dict__)


def _program_traceback(tb):
    """The traceback without this wrapper's (and runpy's) frames on top."""
    skip = {os.path.normcase(__file__), os.path.normcase(runpy.__file__)}
    while tb is not None and os.path.normcase(tb.tb_frame.f_code.co_filename) in skip:
        tb = tb.tb_next
    return tb


def main(argv: list | None = None) -> int:
    """The command line: parse, alias ``torch``, run; returns the exit code of an uncaught
    exception (``sys.exit`` from the program propagates as it would)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    as_module = argv[0] == "-m"
    if as_module:
        if len(argv) < 2:
            print("Argument expected for the -m option\n" + USAGE, file=sys.stderr)
            return 2
        target, args = argv[1], argv[2:]
    else:
        target, args = argv[0], argv[1:]
        if not os.path.exists(target):
            print(f"{sys.executable}: can't open file {os.path.abspath(target)!r}: "
                  f"[Errno 2] No such file or directory", file=sys.stderr)
            return 2
    as_torch()
    keep = sys.modules["__main__"]  # this wrapper's own globals stay alive while it runs
    try:
        if as_module:
            try:
                run_module(target, args)
            except ModuleNotFoundError as e:
                if e.name not in (target, target + ".__main__"):
                    raise
                print(f"{sys.executable}: {e.msg}", file=sys.stderr)
                return 1
        else:
            run_script(target, args)
    except SystemExit:
        raise
    except BaseException as e:  # noqa: BLE001 - reported as Python reports an uncaught one
        tb = _program_traceback(e.__traceback__)
        e.__traceback__ = tb
        sys.last_type, sys.last_value, sys.last_traceback = type(e), e, tb
        sys.excepthook(type(e), e, tb)
        if isinstance(e, KeyboardInterrupt):
            _exit_by_sigint()
        return 1
    finally:
        del keep
    return 0


def _exit_by_sigint() -> None:
    """Die of SIGINT, as Python does after an uncaught KeyboardInterrupt (exit status 130)."""
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)


if __name__ == "__main__":
    sys.exit(main())
