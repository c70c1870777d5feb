"""Tensor factories for ranges, grids and index patterns: ``arange``, ``linspace``,
``logspace``, ``eye``, ``tril_indices``/``triu_indices``, ``meshgrid`` and ``cartesian_prod``.

They follow PyTorch's signatures, dtype rules and errors, and use the argument and ``out=``
helpers of ``_creation`` (the constructors from data and the filled tensors live there).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from . import _dtypes
from ._creation import (
    _MISSING,
    _as_index,
    check_device,
    finish,
    fmt_number,
    number,
    resolve_dtype,
    scalar_to,
    type_name,
)
from ._dtypes import FLOAT_CHARS, dtype, get_default_dtype, to_dtype
from ._tensor import Tensor
from .ops.join import stack

__all__ = [
    "arange", "linspace", "logspace", "eye", "tril_indices", "triu_indices", "meshgrid",
    "cartesian_prod",
]


# -- ranges ------------------------------------------------------------------------------------
def _check_int64(x: int | float) -> None:
    if isinstance(x, int) and not -(2**63) <= x < 2**63:
        # PyTorch parses a number as a 64-bit integer (signed or not), then converts it.
        if -(2**63) <= x < 2**64:
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        raise OverflowError("int too big to convert")


def _trunc_div(a: int, b: int) -> int:
    """C++'s integer division, which truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def arange(start: Any = 0, end: Any = None, step: Any = 1, *, out: Tensor | None = None,
           dtype: Any = None, layout: Any = None, device: Any = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Values from ``start`` up to (not including) ``end`` in steps of ``step``.

    All-integer arguments give ``int64``, any float gives the default dtype; the length is
    ``ceil((end - start) / step)``.

    >>> import retrograd as torch
    >>> torch.arange(5)
    tensor([0, 1, 2, 3, 4])
    >>> torch.arange(1, 2.5, 0.5)
    tensor([1.0000, 1.5000, 2.0000])
    """
    check_device(device)
    if end is None:
        start, end = 0, start
    start = number(start, "arange", "start")
    end = number(end, "arange", "end")
    step = number(step, "arange", "step")
    for x in (start, end, step):
        _check_int64(x)
    is_float = any(isinstance(x, float) for x in (start, end, step))
    dt = resolve_dtype(dtype, out, get_default_dtype() if is_float else _dtypes.int64)
    if dt is _dtypes.bool or dt in _dtypes.WIDE_UNSIGNED:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{dt.scalar_name}'")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {fmt_number(start)} -> {fmt_number(end)}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dt is _dtypes.int64:
        # int64 counts in integers after truncating each bound, as PyTorch does.
        xs, xe, xst = int(start), int(end), int(step)
        if xst == 0:
            raise ValueError("step must be nonzero")
        sgn = 1 if xst > 0 else -1
        n = max(_trunc_div(xe - xs + xst - sgn, xst), 0)
        arr = xs + xst * np.arange(n, dtype=np.int64)
    else:
        n_f = math.ceil((float(end) - float(start)) / float(step))
        if not 0 <= n_f < 2**63:
            raise RuntimeError("invalid size, possible overflow?")
        idx = np.arange(int(n_f), dtype=np.int64)
        if dt.is_floating_point:
            # float16 accumulates in float32 as in PyTorch, the others in float64
            acc = np.float32 if dt is _dtypes.float16 else np.float64
            with np.errstate(over="ignore"):
                arr = (acc(start) + idx.astype(acc) * acc(step)).astype(dt.np)
        else:
            # narrower integer types: the length comes from the float values, the elements
            # from the truncated start and step, wrapping into the dtype
            arr = (int(start) + int(step) * idx).astype(dt.np)
    return finish(arr, requires_grad, out, "arange")


def _endpoint(x: Any, name: str, arg: str) -> int | float:
    if isinstance(x, Tensor) and x._data.ndim != 0:
        raise RuntimeError(
            f"{name} only supports 0-dimensional start and end tensors, but got {arg} with "
            f"{x._data.ndim} dimension(s)."
        )
    return number(x, name, arg)


def _steps_arg(steps: Any, name: str) -> int:
    try:
        steps = _as_index(steps)
    except TypeError:
        raise TypeError(
            f"{name}(): argument 'steps' (position 3) must be int, not {type_name(steps)}"
        ) from None
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return steps


def _fma_type(dt: np.dtype):
    """A type wide enough that ``a * k + b`` rounds once when cast back to ``dt``, which is
    what PyTorch's fused multiply-add gives (long double where the platform has one)."""
    if dt == np.float64:
        return np.longdouble
    return np.float64


def _linspace_values(s: Any, e: Any, steps: int, dt: dtype) -> np.ndarray:
    """The first half counts up from ``s`` and the second half down from ``e``, so that both
    ends come out exact; the step is a float of the dtype (float64 for integers)."""
    idx = np.arange(steps, dtype=np.int64)
    half = steps // 2
    up, down = idx[:half], steps - idx[half:] - 1
    with np.errstate(all="ignore"):
        if dt.np in _dtypes.REDUCED:
            # float16/bfloat16 round after every operation (the index too), as PyTorch's kernel
            h = dt.np.type
            step = (h(e) - h(s)) / h(steps - 1)
            lo = h(s) + step * up.astype(h)
            hi = h(e) - step * down.astype(h)
        else:
            work = dt.np.type if dt.is_floating_point else np.float64
            step = (work(e) - work(s)) / work(steps - 1)
            w = _fma_type(np.dtype(work))
            lo = w(s) + w(step) * up.astype(w)
            hi = w(e) - w(step) * down.astype(w)
        vals = np.concatenate([lo, hi])
        if not dt.is_floating_point:
            vals = vals.astype(np.float64)  # round as a double would before truncating
        return vals.astype(dt.np)


def linspace(start: Any, end: Any, steps: Any, *, out: Tensor | None = None, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False,
             pin_memory: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end``, both included.

    >>> import retrograd as torch
    >>> torch.linspace(0, 1, 5)
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    >>> torch.linspace(0, 10, 4, dtype=torch.int64)
    tensor([ 0,  3,  6, 10])
    """
    check_device(device)
    start = _endpoint(start, "linspace", "start")
    end = _endpoint(end, "linspace", "end")
    steps = _steps_arg(steps, "linspace")
    dt = resolve_dtype(dtype, out, get_default_dtype())
    if dt in _dtypes.WIDE_UNSIGNED:
        raise NotImplementedError(f"\"linspace_cpu\" not implemented for '{dt.scalar_name}'")
    if dt is _dtypes.bool:
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    if steps == 0:
        arr = np.empty(0, dt.np)
    elif steps == 1:
        arr = np.full(1, scalar_to(start, dt), dt.np)
    else:
        arr = _linspace_values(scalar_to(start, dt), scalar_to(end, dt), steps, dt)
    return finish(arr, requires_grad, out, "linspace")


def logspace(start: Any, end: Any, steps: Any, base: float = 10.0, *,
             out: Tensor | None = None, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False,
             pin_memory: bool = False) -> Tensor:
    """``steps`` values from ``base ** start`` to ``base ** end``, evenly spaced in exponent.

    >>> import retrograd as torch
    >>> torch.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    >>> torch.logspace(0, 3, 4, base=2, dtype=torch.int64)
    tensor([1, 2, 4, 8])
    """
    check_device(device)
    start = _endpoint(start, "logspace", "start")
    end = _endpoint(end, "logspace", "end")
    steps = _steps_arg(steps, "logspace")
    base = float(number(base, "logspace", "base"))
    dt = resolve_dtype(dtype, out, get_default_dtype())
    if dt in _dtypes.WIDE_UNSIGNED:
        raise NotImplementedError(f"\"logspace_cpu\" not implemented for '{dt.scalar_name}'")
    if dt is _dtypes.bool:
        raise NotImplementedError("\"logspace_cpu\" not implemented for 'Bool'")
    with np.errstate(all="ignore"):
        if steps == 0:
            exps = np.empty(0)
        elif steps == 1:
            # one value: base ** start, converted with the overflow check of ``full``
            arr = np.full(1, scalar_to(float(base) ** float(start), dt), dt.np)
            return finish(arr, requires_grad, out, "logspace")
        else:
            s, e = scalar_to(start, dt), scalar_to(end, dt)
            # the span is taken in the dtype itself (so rounded for float16/float32), the
            # rest in float64
            span = float(e - s) if dt.is_floating_point else float(int(e) - int(s))
            s, e = float(s), float(e)
            step = span / (steps - 1)
            idx = np.arange(steps, dtype=np.float64)
            half = steps // 2
            exps = np.concatenate([s + step * idx[:half], e - step * (steps - idx[half:] - 1)])
        # integer dtypes raise a float32 base, as PyTorch does, to avoid double promotion
        b = float(np.float32(base)) if dt.np.char not in FLOAT_CHARS else base
        arr = np.power(b, exps).astype(dt.np)
    return finish(arr, requires_grad, out, "logspace")


def eye(n: int, m: int | None = None, *, out: Tensor | None = None, dtype: Any = None,
        layout: Any = None, device: Any = None, requires_grad: bool = False,
        pin_memory: bool = False) -> Tensor:
    """A 2-D tensor with ones on the diagonal: ``n`` rows and ``m`` (default ``n``) columns.

    >>> import retrograd as torch
    >>> torch.eye(2, 3)
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    check_device(device)
    dims = []
    for arg, pos, v in (("n", 1, n), ("m", 2, n if m is None else m)):
        try:
            v = _as_index(v)
        except TypeError:
            raise TypeError(
                f"eye(): argument '{arg}' (position {pos}) must be int, not {type_name(v)}"
            ) from None
        if v < 0:
            raise RuntimeError(f"{arg} must be greater or equal to 0, got {v}")
        dims.append(v)
    dt = resolve_dtype(dtype, out, get_default_dtype())
    if dt in _dtypes.WIDE_UNSIGNED:
        raise NotImplementedError(f"\"eye\" not implemented for '{dt.scalar_name}'")
    return finish(np.eye(dims[0], dims[1], dtype=dt.np), requires_grad, out, "eye")


# -- triangle indices --------------------------------------------------------------------------
def _tri_int(x: Any, name: str, arg: str, pos: int) -> int:
    try:
        return _as_index(x)
    except TypeError:
        raise TypeError(
            f"{name}(): argument '{arg}' (position {pos}) must be int, not {type_name(x)}"
        ) from None


def _tri_indices(name: str, row: Any, col: Any, offset: Any, dt: Any, requires_grad: bool,
                 device: Any, lower: bool) -> Tensor:
    check_device(device)
    row = _tri_int(row, name, "row", 1)
    col = _tri_int(col, name, "col", 2)
    offset = _tri_int(offset, name, "offset", 3)
    dt = _dtypes.int64 if dt is None else to_dtype(dt)
    if dt not in (_dtypes.int64, _dtypes.int32):
        raise NotImplementedError(f"\"{name}\" not implemented for '{dt.scalar_name}'")
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    # Offsets beyond the matrix change nothing; clamping keeps the arithmetic in int64.
    offset = max(-row - 1, min(offset, col + 1))
    r = np.arange(row, dtype=np.int64)
    if lower:
        # row r holds columns 0 .. r + offset
        first = np.zeros(row, np.int64)
        counts = np.clip(r + offset + 1, 0, col)
    else:
        # row r holds columns max(r + offset, 0) .. col - 1
        first = np.clip(r + offset, 0, col)
        counts = col - first
    rows = np.repeat(r, counts)
    starts = np.cumsum(counts) - counts
    cols = np.arange(rows.size, dtype=np.int64) - np.repeat(starts - first, counts)
    return finish(np.stack([rows, cols]).astype(dt.np), requires_grad)


def tril_indices(row: int, col: int = _MISSING, offset: int = 0, *, dtype: Any = None,
                 layout: Any = None, device: Any = None, pin_memory: bool = False,
                 requires_grad: bool = False) -> Tensor:
    """The ``(2, N)`` row and column indices of the lower triangle of a ``row x col`` matrix,
    row by row; ``offset`` moves the diagonal up (positive) or down (negative).

    >>> import retrograd as torch
    >>> torch.tril_indices(3, 3)
    tensor([[0, 1, 1, 2, 2, 2],
            [0, 0, 1, 0, 1, 2]])
    """
    if col is _MISSING:
        raise TypeError('tril_indices() missing 1 required positional arguments: "col"')
    return _tri_indices("tril_indices", row, col, offset, dtype, requires_grad, device, True)


def triu_indices(row: int, col: int = _MISSING, offset: int = 0, *, dtype: Any = None,
                 layout: Any = None, device: Any = None, pin_memory: bool = False,
                 requires_grad: bool = False) -> Tensor:
    """The ``(2, N)`` row and column indices of the upper triangle of a ``row x col`` matrix,
    row by row; ``offset`` moves the diagonal up (positive) or down (negative).

    >>> import retrograd as torch
    >>> torch.triu_indices(3, 3, 1)
    tensor([[0, 0, 1],
            [1, 2, 2]])
    """
    if col is _MISSING:
        raise TypeError('triu_indices() missing 1 required positional arguments: "col"')
    return _tri_indices("triu_indices", row, col, offset, dtype, requires_grad, device, False)


# -- grids -------------------------------------------------------------------------------------
_MESHGRID_WARNING = (
    "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."
)


def _tensor_list(tensors: tuple, unpack: bool = True) -> list:
    """``f(a, b)`` or (with ``unpack``) ``f([a, b])``: the tensors, each checked as PyTorch
    checks a TensorList."""
    if unpack and len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type_name(t)}"
            )
    return list(tensors)


def _meshgrid(ts: list, indexing: str) -> tuple:
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in ts:
        if t._data.ndim > 1:
            raise RuntimeError(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                + t.__repr__()
            )
    if any(t._data.dtype != ts[0]._data.dtype for t in ts):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    # "xy" is "ij" with the first two inputs (and so the first two output dims) swapped.
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts = [ts[1], ts[0]] + ts[2:]
    grid = tuple(t._data.size for t in ts)
    n = len(ts)
    # Each output is a view of its input: reshaped to put its values on its own dim (a view,
    # ViewBackward0), then broadcast along the others (ExpandBackward0), as in PyTorch.
    outs = [t.reshape((1,) * i + (-1,) + (1,) * (n - i - 1)).expand(grid)
            for i, t in enumerate(ts)]
    if swap:
        outs[0], outs[1] = outs[1], outs[0]
    return tuple(outs)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple:
    """Coordinate grids from 1-D (or 0-D) tensors, as views of them (differentiable).

    With ``indexing="ij"`` the outputs have shape ``(len(t0), len(t1), ...)``; with
    ``"xy"`` the first two dims are swapped (Cartesian, as in NumPy). Leaving ``indexing``
    out means ``"ij"`` and warns, as PyTorch does.

    >>> import retrograd as torch
    >>> x, y = torch.meshgrid(torch.tensor([1, 2, 3]), torch.tensor([4, 5]), indexing="ij")
    >>> x
    tensor([[1, 1],
            [2, 2],
            [3, 3]])
    >>> y
    tensor([[4, 5],
            [4, 5],
            [4, 5]])
    """
    ts = _tensor_list(tensors)
    if indexing is None:
        if ts:
            warnings.warn(_MESHGRID_WARNING, UserWarning, stacklevel=2)
        indexing = "ij"
    return _meshgrid(ts, indexing)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each 1-D tensor, as the rows of an
    ``(N, len(tensors))`` tensor (a single tensor comes back as is). Differentiable.

    >>> import retrograd as torch
    >>> torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    ts = _tensor_list(tensors, unpack=False)
    for t in ts:
        if t._data.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)}")
    if len(ts) == 1:
        return ts[0]
    grids = _meshgrid(ts, "ij")
    return stack([g.reshape(-1) for g in grids], 1)
