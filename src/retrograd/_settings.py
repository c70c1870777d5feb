"""Top-level settings, flags and constants PyTorch programs read or set: determinism,
float32 matmul precision, warn-always, flush-denormal, interop threads; the layout and
memory-format objects; ``e``/``pi``/``inf``/``nan``/``newaxis``; ``typename``; and the data
exchange functions ``frombuffer``, ``from_dlpack``/``to_dlpack`` (through NumPy's DLPack).

retrograd computes on NumPy, which is deterministic, so the determinism switches only record
what was asked (and answer it back), as PyTorch's do on a CPU.

>>> import retrograd as torch
>>> torch.use_deterministic_algorithms(True)
>>> torch.are_deterministic_algorithms_enabled()
True
>>> torch.use_deterministic_algorithms(False)
"""

from __future__ import annotations

import math

import numpy as np

from . import _dtypes
from ._memory_format import (  # noqa: F401 - torch.<name>
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from ._tensor import Tensor, make
from .ops._core import checked_scalar

__all__ = [
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
    "get_deterministic_debug_mode", "set_float32_matmul_precision",
    "get_float32_matmul_precision", "set_warn_always", "is_warn_always_enabled",
    "set_flush_denormal", "get_num_interop_threads", "set_num_interop_threads", "layout",
    "strided", "memory_format", "contiguous_format", "preserve_format", "channels_last",
    "channels_last_3d", "e", "pi", "inf", "nan", "newaxis", "typename", "frombuffer",
    "from_dlpack", "to_dlpack", "scalar_tensor", "is_storage",
]

_state = {"deterministic": False, "warn_only": False, "precision": "highest", "warn": False,
          "interop": 1}

e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
newaxis = None


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms (retrograd's always are; the setting is recorded)."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    _state["deterministic"] = mode
    _state["warn_only"] = warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in effect."""
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether deterministic mode was asked with ``warn_only=True``."""
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode) -> None:
    """``"default"``/0, ``"warn"``/1 or ``"error"``/2, as PyTorch's."""
    names = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (warn only) or 2 (deterministic)."""
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    """``"highest"``, ``"high"`` or ``"medium"`` (NumPy always computes at the highest)."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision: {precision}")
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    """The precision last set (``"highest"`` by default)."""
    return _state["precision"]


def set_warn_always(b: bool) -> None:
    """Record PyTorch's warn-always flag."""
    _state["warn"] = bool(b)


def is_warn_always_enabled() -> bool:
    """PyTorch's warn-always flag."""
    return _state["warn"]


def set_flush_denormal(mode: bool) -> bool:
    """Not available on NumPy: returns False, as PyTorch does where the CPU cannot."""
    return False


def get_num_interop_threads() -> int:
    """Inter-op threads: retrograd runs ops one after another."""
    return _state["interop"]


def set_num_interop_threads(n: int) -> None:
    """Accepted for compatibility."""
    _state["interop"] = int(n)


class layout:  # noqa: N801 - PyTorch's name
    """A tensor layout; retrograd's tensors are all ``strided``."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"


strided = layout("strided")


def typename(obj) -> str:
    """PyTorch's type name: ``"torch.FloatTensor"`` for a float32 tensor.

    >>> import retrograd as torch
    >>> torch.typename(torch.zeros(1))
    'torch.FloatTensor'
    """
    if isinstance(obj, Tensor):
        return f"torch.{obj.dtype.scalar_name}Tensor"
    module = getattr(type(obj), "__module__", "")
    name = type(obj).__qualname__
    return name if module in ("builtins", "") else f"{module}.{name}"


def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor sharing the memory of a Python buffer (``bytes``, ``bytearray``, ...).

    >>> import retrograd as torch
    >>> torch.frombuffer(bytearray(b"\\x01\\x02"), dtype=torch.uint8).tolist()
    [1, 2]
    """
    np_dtype = np.dtype(dtype.np)
    nbytes = memoryview(buffer).nbytes
    if offset < 0 or offset >= nbytes:
        raise ValueError(f"both buffer length ({nbytes}) and offset ({offset}) must be > 0 and "
                         "offset must be less than buffer length")
    arr = np.frombuffer(buffer, dtype=np_dtype, count=count, offset=offset)
    t = make(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor sharing memory with any object that speaks DLPack (a NumPy array, another
    retrograd tensor, a CPU torch tensor).

    >>> import numpy as np, retrograd as torch
    >>> torch.from_dlpack(np.arange(3.0)).tolist()
    [0.0, 1.0, 2.0]
    """
    if isinstance(ext_tensor, Tensor):
        return ext_tensor.detach()
    return make(np.from_dlpack(ext_tensor))


def to_dlpack(tensor: Tensor):
    """A DLPack capsule of the tensor's memory (NumPy's)."""
    return tensor.detach().numpy().__dlpack__()


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None,
                  requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding ``s`` (in the default float dtype unless ``dtype``).

    >>> import retrograd as torch
    >>> torch.scalar_tensor(3)
    tensor(3.)
    """
    from_np = np.dtype(_dtypes.get_default_dtype().np) if dtype is None else np.dtype(dtype.np)
    t = make(np.asarray(checked_scalar(s, from_np), dtype=from_np))  # (PyTorch's overflow check)
    if requires_grad:
        t.requires_grad_(True)
    return t


def is_storage(obj) -> bool:
    """False: retrograd has no storage objects."""
    return False
