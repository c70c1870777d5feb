"""PyTorch's memory formats (``torch.channels_last`` and the others) and the strided layouts
they stand for: the checks (``is_contiguous(memory_format=...)``, ``suggest_memory_format``)
and the arrays laid out in a format, for ``contiguous``, ``clone``, ``to`` and ``*_like``.

NumPy arrays carry any strides, so a channels-last tensor is an NHWC array transposed to NCHW,
with PyTorch's strides, e.g. (60, 1, 15, 3) for a (2, 3, 4, 5) tensor.
"""

from __future__ import annotations

import numpy as np

__all__ = ["memory_format", "contiguous_format", "preserve_format", "channels_last",
           "channels_last_3d"]


class memory_format:  # noqa: N801 - PyTorch's name
    """A memory format: how a tensor's elements are laid out in its memory."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")

_RANK = {"channels_last": 4, "channels_last_3d": 5}
# The dimensions from the fastest-varying to the slowest, as PyTorch's checks visit them.
_FAST_TO_SLOW = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}
_TO_SIGNATURES = (
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n")


def _type_name(v) -> str:
    if isinstance(v, memory_format):
        return "torch.memory_format"
    module = type(v).__module__
    name = type(v).__name__
    return f"torch.{name}" if module.startswith("retrograd") and name != "Tensor" else name


def to_args_error(args: tuple, kwargs: dict) -> TypeError:
    """PyTorch's TypeError for a ``to()`` call fitting none of its signatures."""
    got = [_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()]
    if kwargs and not args:
        got.append("")  # PyTorch writes "got (memory_format=int, )"
    return TypeError(f"to() received an invalid combination of arguments - got "
                     f"({', '.join(got)}), but expected one of:\n{_TO_SIGNATURES}")


def format_name(fmt, fname: str = "to", args: tuple = (), kwargs: dict | None = None) -> str | None:
    """The name of memory format ``fmt`` (None for None or ``preserve_format``), or PyTorch's
    TypeError of ``fname`` for something else (``to()``'s names its call: ``args``/``kwargs``).
    """
    if fmt is None:
        return None
    if not isinstance(fmt, memory_format):
        if fname == "to":
            raise to_args_error(args, {**(kwargs or {}), "memory_format": fmt})
        raise TypeError(f"{fname}(): argument 'memory_format' must be torch.memory_format, "
                        f"not {type(fmt).__name__}")
    return None if fmt._name == "preserve_format" else fmt._name


def check_rank(name: str, ndim: int) -> None:
    """PyTorch's RuntimeError for a channels-last format on a tensor of another rank."""
    rank = _RANK.get(name)
    if rank is not None and ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {name} format")


def _elem_strides(a: np.ndarray) -> tuple:
    return tuple(s // a.itemsize for s in a.strides)


def is_contiguous_as(a: np.ndarray, fmt, fname: str = "is_contiguous") -> bool:
    """``Tensor.is_contiguous(memory_format=fmt)`` for the array of a tensor (``fname``: the
    function asking, for PyTorch's TypeError if ``fmt`` is no memory format)."""
    name = format_name(fmt, fname)
    if name not in _RANK:
        return a.flags.c_contiguous
    if a.ndim != _RANK[name]:
        return False
    expected, strides = 1, _elem_strides(a)
    for d in _FAST_TO_SLOW[a.ndim]:
        if a.shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= a.shape[d]
    return True


def suggest(a: np.ndarray) -> str:
    """PyTorch's ``suggest_memory_format`` of an array: the channels-last format whose stride
    order it has (ambiguous cases count as contiguous, as in PyTorch), else contiguous."""
    if a.ndim not in _FAST_TO_SLOW:
        return "contiguous_format"
    strides, lo = _elem_strides(a), 0
    if strides[1] == 0:
        return "contiguous_format"
    for d in _FAST_TO_SLOW[a.ndim]:
        if a.shape[d] == 0 or strides[d] < lo or (d == 0 and lo == strides[1]):
            return "contiguous_format"
        lo = strides[d] * (a.shape[d] if a.shape[d] > 1 else 1)
    return "channels_last" if a.ndim == 4 else "channels_last_3d"


def empty_as(shape: tuple, np_dtype, name: str | None) -> np.ndarray:
    """An uninitialised array of ``shape`` laid out in format ``name`` (C order unless a
    channels-last one; raises PyTorch's error for a channels-last format of another rank)."""
    if name not in _RANK:
        return np.empty(shape, np_dtype)
    check_rank(name, len(shape))
    perm = (0, *range(2, len(shape)), 1)  # NCHW -> NHWC
    return np.empty([shape[d] for d in perm], np_dtype).transpose(np.argsort(perm))


def copy_as(a: np.ndarray, name: str) -> np.ndarray:
    """A copy of ``a`` laid out in format ``name``."""
    out = empty_as(a.shape, a.dtype, name)
    np.copyto(out, a)
    return out


def preserve_copy(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` as PyTorch's ``preserve_format`` lays it out: in ``a``'s own order of
    dimensions unless ``a`` repeats elements (expanded), then in its suggested format."""
    if a.flags.c_contiguous or any(s == 0 and n > 1 for n, s in zip(a.shape, a.strides)):
        name = suggest(a)
        return a.copy() if name == "contiguous_format" else copy_as(a, name)
    return a.copy(order="K")


def like_order(a: np.ndarray, fmt, fname: str) -> tuple | None:
    """The order of dimensions, slowest first, of the result of ``fname(a,
    memory_format=fmt)`` (a ``*_like`` function); None for C order. ``preserve_format``, the
    default, follows ``a``'s strides, or its suggested format if it repeats elements."""
    name = None if fmt is None else format_name(fmt, fname)
    if name is None:
        if not any(s == 0 and n > 1 for n, s in zip(a.shape, a.strides)):
            if a.ndim < 2 or a.flags.c_contiguous:
                return None
            order = sorted(range(a.ndim), key=lambda d: -abs(a.strides[d]) if a.shape[d] > 1
                           else 0)
            return None if order == list(range(a.ndim)) else tuple(order)
        name = suggest(a)
    if name not in _RANK:
        return None
    check_rank(name, a.ndim)
    return (0, *range(2, a.ndim), 1)
