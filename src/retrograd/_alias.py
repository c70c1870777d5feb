"""``torch`` as an alias of retrograd, on request: ``as_torch()`` and ``python -m retrograd.run``.

``import retrograd as torch`` renames only the top-level module: Python resolves ``import
torch.nn as nn`` or ``from torch.utils.data import DataLoader`` by the module *name*, so those
lines would fail, or import real PyTorch's submodules next to retrograd's tensors. ``as_torch()``
puts a finder at the front of ``sys.meta_path`` that maps ``torch`` to the ``retrograd`` module
object itself and ``torch.<name>`` to ``retrograd.<name>``, generically by name: every submodule
retrograd has (``nn``, ``nn.functional``, ``optim.lr_scheduler``, ``utils.data.dataloader`` ...)
resolves to the very same module object, so ``torch.nn is retrograd.nn``. An import of a name
retrograd lacks raises ``ModuleNotFoundError`` (an ImportError) saying that retrograd does not
provide it. Nothing is installed unless a program asks: without ``as_torch()`` (or
``python -m retrograd.run``), ``import torch`` means whatever the environment has.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

__all__ = ["as_torch"]

_TORCH = "torch"
_OURS = "retrograd"


def _not_provided(torch_name: str) -> ModuleNotFoundError:
    real = _OURS + torch_name[len(_TORCH):]
    return ModuleNotFoundError(
        f"No module named {torch_name!r}: {torch_name} is not provided by retrograd "
        f"(there is no {real}; torch is an alias of retrograd in this process)",
        name=torch_name,
    )


def _resolve(real: str):
    """The retrograd module object named ``real`` (``retrograd.nn.functional``), or None."""
    mod = sys.modules.get(real)
    if mod is not None:
        return mod
    parent, _, child = real.rpartition(".")
    try:
        # A module kept as an attribute of its parent (``retrograd.utils.data`` loads lazily).
        obj = getattr(importlib.import_module(parent), child, None)
    except Exception:  # noqa: BLE001 - a parent's __getattr__ may refuse in its own way
        obj = None
    if isinstance(obj, types.ModuleType) and obj.__name__.startswith(_OURS + "."):
        return obj
    try:
        return importlib.import_module(real)
    except ModuleNotFoundError as e:
        if e.name != real:
            raise  # retrograd's own module failed to import something: a real bug, not a miss
        return None


class _TorchFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch.<name>`` as ``retrograd.<name>``; loads it as that same module object."""

    def __init__(self) -> None:
        self._delegating = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith(_TORCH + "."):
            real = _OURS + fullname[len(_TORCH):]
            module = _resolve(real)
            if module is None:
                raise _not_provided(fullname)
            spec = importlib.machinery.ModuleSpec(
                fullname, self, loader_state=module,
                is_package=hasattr(module, "__path__"))
            return spec
        if fullname.startswith(_OURS + ".") and not self._delegating:
            # ``from torch import fft`` asks for ``retrograd.fft`` (the module's own name): let
            # the other finders look, and if none has it, say it is not provided by retrograd
            # rather than Python's "cannot import name 'fft' from 'retrograd'".
            self._delegating = True
            try:
                for finder in sys.meta_path:
                    if finder is self or not hasattr(finder, "find_spec"):
                        continue
                    spec = finder.find_spec(fullname, path, target)
                    if spec is not None:
                        return spec
            finally:
                self._delegating = False
            raise _not_provided(_TORCH + fullname[len(_OURS):])
        return None

    def create_module(self, spec):
        module = spec.loader_state
        spec.loader_state = (module, getattr(module, "__spec__", None))
        return module

    def exec_module(self, module) -> None:
        # Nothing runs: the module is retrograd's, already imported. The import system set
        # ``__spec__`` to the torch-named spec; give the module its own back.
        spec = module.__spec__
        if spec is not None and isinstance(spec.loader_state, tuple):
            own = spec.loader_state[1]
            if own is not None:
                module.__spec__ = own


_finder = _TorchFinder()


def _real_torch_modules() -> list:
    ours = sys.modules[_OURS]
    found = []
    for name, mod in list(sys.modules.items()):
        if name == _TORCH or name.startswith(_TORCH + "."):
            if mod is None or mod is ours or getattr(mod, "__name__", "").startswith(_OURS):
                continue
            found.append(name)
    return found


def as_torch() -> types.ModuleType:
    """Make ``import torch`` (and every ``torch.<sub>`` retrograd provides) resolve to retrograd
    in this process, so code written for PyTorch runs unchanged; returns retrograd.

    Refuses with a RuntimeError when real PyTorch is already imported: its tensors and
    retrograd's cannot be mixed. Calling it again is harmless.

    >>> import subprocess, sys
    >>> code = ("import retrograd; retrograd.as_torch(); import torch.nn as nn; "
    ...         "print(nn is retrograd.nn)")
    >>> subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    'True\\n'
    """
    ours = sys.modules[_OURS]
    real = _real_torch_modules()
    if real:
        mod = sys.modules[real[0]]
        raise RuntimeError(
            f"retrograd.as_torch(): PyTorch is already imported in this process "
            f"({real[0]} is {mod!r}), so torch cannot become an alias of retrograd. Call "
            "retrograd.as_torch() before anything imports torch, or run the program with "
            "python -m retrograd.run SCRIPT."
        )
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    sys.modules[_TORCH] = ours
    return ours
