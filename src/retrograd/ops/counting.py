"""Counting, binning and integer ops, none of them differentiable: bincount, histc, histogram,
isin, unique_consecutive, unravel_index, gcd/lcm, heaviside, nextafter, frexp, and the
predicates (isneginf, isposinf, isreal, is_nonzero, is_same_size, is_signed, ...).

Their results are new tensors that record nothing, as in PyTorch (where these ops have no
derivative formula, or ``frexp``'s mantissa, whose is not implemented).
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import return_types
from .._dtypes import F32, FLOAT_CHARS, WIDE_CHARS, bfloat16, to_dtype
from .._tensor import Tensor
from ._base import not_implemented
from ._core import (
    arg_error,
    bf16_nans,
    check_broadcast,
    f16_binary_nans,
    operands,
    wrap,
    wrap_dim,
)

__all__ = [
    "bincount", "histc", "histogram", "histogramdd", "isin", "unique_consecutive",
    "unravel_index", "gcd", "lcm", "heaviside", "nextafter", "frexp", "isneginf", "isposinf",
    "isreal", "is_nonzero", "is_same_size", "is_signed", "is_conj", "is_neg",
]
XP: list = []


def _arr(x) -> np.ndarray:
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def _is_float(a: np.ndarray) -> bool:
    return a.dtype.char in FLOAT_CHARS


def bincount(input, weights=None, minlength: int = 0) -> Tensor:  # noqa: A002
    """How often each non-negative integer occurs (summing ``weights`` instead of ones).

    >>> import retrograd as torch
    >>> torch.bincount(torch.tensor([1, 1, 3]))
    tensor([0, 2, 0, 1])
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("bincount_cpu", input._data.dtype)  # uint16/32/64
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("bincount", "input", 1, input) from None
    if _is_float(a) or a.dtype == np.bool_:  # (the dtype's kernel first, as PyTorch)
        raise NotImplementedError(
            f"\"bincount_cpu\" not implemented for '{to_dtype(a.dtype).scalar_name}'")
    if a.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if a.size and a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None or a.size == 0:  # (an empty input gives int64 counts, as PyTorch)
        return wrap(np.bincount(a, minlength=minlength).astype(np.int64))
    w = weights._data
    if w.shape != a.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    # float32 weights count in float32; every other dtype in float64, as PyTorch
    out_dtype = np.float32 if w.dtype == np.float32 else np.float64
    return wrap(np.bincount(a, weights=w.astype(np.float64), minlength=minlength)
                .astype(out_dtype))


def histc(input, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    """A histogram of ``bins`` equal bins over ``[min, max]`` (the data's range when both are
    0); values outside are ignored.

    >>> import retrograd as torch
    >>> torch.histc(torch.tensor([1., 2., 1.]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("histc", "input", 1, input) from None
    if not _is_float(a):  # (bool fails first in the bin edges' linspace)
        raise NotImplementedError(
            f'"{"linspace" if a.dtype == np.bool_ else "histogram"}_cpu" not implemented for '
            f"'{input.dtype.scalar_name}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histc(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc(): max must be larger than min")
    hist, _ = np.histogram(a.ravel(), bins=bins, range=(lo, hi))
    return wrap(hist.astype(a.dtype))


def histogram(input, bins=100, *, range=None, weight=None, density: bool = False):  # noqa: A002
    """A histogram with its bin edges: ``bins`` is a count (equal bins over ``range`` or the
    data's range) or a 1-D tensor of edges.

    >>> import retrograd as torch
    >>> torch.histogram(torch.tensor([1., 2., 1.]), bins=3, range=(0., 3.)).hist
    tensor([0., 2., 1.])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("histogram", "input", 1, input) from None
    if not _is_float(a):
        raise NotImplementedError(
            f'"histogram_cpu" not implemented for \'{input.dtype.scalar_name}\'')
    edges = bins._data if isinstance(bins, Tensor) else bins
    w = None if weight is None else weight._data.ravel()
    hist, out_edges = np.histogram(a.ravel(), bins=edges, range=range, weights=w,
                                   density=density)
    return return_types.histogram((wrap(hist.astype(a.dtype)),
                                   wrap(np.asarray(out_edges).astype(a.dtype))))


def histogramdd(input, bins=10, *, range=None, weight=None, density: bool = False):  # noqa: A002
    """A histogram of the rows of an ``(N, D)`` tensor over ``D`` dimensions.

    >>> import retrograd as torch
    >>> torch.histogramdd(torch.tensor([[0., 0.], [1., 1.]]), bins=[2, 2]).hist
    tensor([[1., 0.],
            [0., 1.]])
    """
    a = input._data
    d = a.shape[-1]
    if isinstance(bins, int):
        bins = [bins] * d
    bins = [b._data if isinstance(b, Tensor) else b for b in bins]
    rng = None if range is None else [(range[2 * i], range[2 * i + 1]) for i in builtins.range(d)]
    w = None if weight is None else weight._data.ravel()
    hist, edges = np.histogramdd(a.reshape(-1, d), bins=bins, range=rng, weights=w,
                                 density=density)
    return return_types.histogramdd((wrap(hist.astype(a.dtype)),
                                     [wrap(np.asarray(e).astype(a.dtype)) for e in edges]))



def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False):
    """Whether each element of ``elements`` occurs in ``test_elements`` (either may be a
    number).

    >>> import retrograd as torch
    >>> torch.isin(torch.tensor([1, 2, 3]), torch.tensor([2, 5]))
    tensor([False,  True, False])
    """
    if elements.__class__ is Tensor and elements._data.dtype.char in WIDE_CHARS:
        raise not_implemented("isin_default_cpu", elements._data.dtype)  # uint16/32/64
    a, b = _arr(elements), _arr(test_elements)
    # bfloat16 in float32 (exact): np.isin sorts, and ml_dtypes compares NaN as no value
    a, b = (x.astype(F32) if x.dtype == bfloat16.np else x for x in (a, b))
    return wrap(np.asarray(np.isin(a, b, invert=invert)))


def unique_consecutive(input, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
                       dim=None):
    """Collapse runs of equal consecutive values (or slices along ``dim``) to one.

    >>> import retrograd as torch
    >>> torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 3, 1]))
    tensor([1, 2, 3, 1])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("unique_consecutive", "input", 1, input) from None
    if dim is None:
        flat = a.reshape(-1)
        change = flat[1:] != flat[:-1]
        axis_len, take = flat.shape[0], flat
        d = 0
    else:
        if a.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = wrap_dim(dim, a.ndim)
        if a.size == 0 and any(n == 0 for k, n in enumerate(a.shape) if k != d):
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied")
        moved = np.moveaxis(a, d, 0)
        change = (moved[1:] != moved[:-1]).reshape(
            max(moved.shape[0] - 1, 0), math.prod(moved.shape[1:])).any(axis=1)
        axis_len, take = moved.shape[0], a
    starts = np.concatenate([[True], change]) if axis_len else np.zeros(0, bool)
    idx = np.flatnonzero(starts)
    out = take[idx] if dim is None else np.take(a, idx, axis=d)
    res = (wrap(np.ascontiguousarray(out)),)
    if return_inverse:
        inv = np.cumsum(starts) - 1
        res += (wrap(inv.reshape(a.shape) if dim is None else inv),)
    if return_counts:
        res += (wrap(np.diff(np.append(idx, axis_len)).astype(np.int64)),)
    return res[0] if len(res) == 1 else res


def unravel_index(indices, shape) -> tuple:
    """The coordinates of flat ``indices`` in a tensor of ``shape``, one tensor per dim.

    >>> import retrograd as torch
    >>> torch.unravel_index(torch.tensor([5, 7]), (3, 4))
    (tensor([1, 1]), tensor([1, 3]))
    """
    a = _arr(indices)
    if _is_float(a) or a.dtype == np.bool_:
        raise TypeError("expected 'indices' to be integer dtype, but got "
                        f"{to_dtype(a.dtype)}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    n = math.prod(shape)
    if a.size and (a.min() < -n or a.max() >= n):
        raise ValueError(f"'indices' must be in range [-{n}, {n})")
    coords = np.unravel_index(np.where(a < 0, a + n, a), shape)
    return tuple(wrap(c.astype(np.int64)) for c in coords)


def _int_binary(name, fn):
    def op(input, other):  # noqa: A002
        for arg, pos, v in (("input", 1, input), ("other", 2, other)):
            if not isinstance(v, Tensor):  # no overload takes a number
                raise arg_error(name, arg, pos, v)
        a, b = operands(input, other)
        if _is_float(a) or a.dtype == np.bool_:
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{to_dtype(a.dtype).scalar_name}'")
        return wrap(np.asarray(fn(a, b)))
    op.__name__ = name
    return op


gcd = _int_binary("gcd", np.gcd)
gcd.__doc__ = """The greatest common divisor, elementwise (integers).

    >>> import retrograd as torch
    >>> torch.gcd(torch.tensor([4, 6]), torch.tensor([6, -9]))
    tensor([2, 3])
    """
lcm = _int_binary("lcm", np.lcm)
lcm.__doc__ = """The least common multiple, elementwise (integers).

    >>> import retrograd as torch
    >>> torch.lcm(torch.tensor([4, 6]), torch.tensor([6, -9]))
    tensor([12, 18])
    """


def heaviside(input, values) -> Tensor:  # noqa: A002
    """The step function: 0 below zero, 1 above, ``values`` at zero.

    >>> import retrograd as torch
    >>> torch.heaviside(torch.tensor([-1., 0., 2.]), torch.tensor([0.5]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    try:
        a, v = input._data, values._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        which = ("input", 1, input) if not isinstance(input, Tensor) else ("values", 2, values)
        raise arg_error("heaviside", *which) from None
    check_broadcast(a.shape, v.shape)
    if a.dtype != v.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    # PyTorch's kernel: ``values`` at 0, else ``input > 0`` (so NaN gives 0, not NumPy's NaN)
    with np.errstate(invalid="ignore"):
        return wrap(np.where(a == 0, v, a > 0).astype(a.dtype))


def nextafter(input, other) -> Tensor:  # noqa: A002
    """The next floating-point value after ``input`` towards ``other``.

    >>> import retrograd as torch
    >>> torch.nextafter(torch.tensor([1.0]), torch.tensor([2.0])) > 1
    tensor([True])
    """
    try:
        a, b = input._data, other._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        which = ("input", 1, input) if not isinstance(input, Tensor) else ("other", 2, other)
        raise arg_error("nextafter", *which) from None
    if a.dtype != b.dtype:  # promoted as PyTorch promotes (bfloat16 with float32: float32)
        a, b = operands(input, other)
    if a.dtype.char not in FLOAT_CHARS:
        raise NotImplementedError(
            f"\"nextafter_cpu\" not implemented for '{to_dtype(a.dtype).scalar_name}'")
    out = np.nextafter(a, b)  # (float16: glibc's x + y of a NaN, in every loop)
    return wrap(f16_binary_nans(out, a, b, "first", "first") if out.dtype == np.float16 else out)


def frexp(input):  # noqa: A002
    """Mantissa in ``[0.5, 1)`` and integer exponent: ``input = mantissa * 2 ** exponent``.

    >>> import retrograd as torch
    >>> torch.frexp(torch.tensor([8., 3.])).exponent.tolist()
    [4, 2]
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("frexp", "input", 1, input) from None
    if not _is_float(a):
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = np.frexp(a)
    m = m.astype(a.dtype)
    if m.dtype == bfloat16.np:
        m = bf16_nans(m)  # (torch's kernel: scalar code only, a NaN 0x7FC0)
    return return_types.frexp((wrap(m), wrap(e.astype(np.int32))))


def isneginf(input) -> Tensor:  # noqa: A002
    """Whether each element is minus infinity.

    >>> import retrograd as torch
    >>> torch.isneginf(torch.tensor([-float("inf"), 1.0]))
    tensor([ True, False])
    """
    try:
        return wrap(np.asarray(np.isneginf(input._data)))
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("isneginf", "input", 1, input) from None


def isposinf(input) -> Tensor:  # noqa: A002
    """Whether each element is plus infinity.

    >>> import retrograd as torch
    >>> torch.isposinf(torch.tensor([float("inf"), 1.0]))
    tensor([ True, False])
    """
    try:
        return wrap(np.asarray(np.isposinf(input._data)))
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("isposinf", "input", 1, input) from None


def isreal(input) -> Tensor:  # noqa: A002
    """Whether each element is real: always, without complex dtypes.

    >>> import retrograd as torch
    >>> torch.isreal(torch.tensor([1.0, 2.0]))
    tensor([True, True])
    """
    try:
        return wrap(np.ones(input._data.shape, np.bool_))
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("isreal", "input", 1, input) from None


def is_nonzero(input) -> bool:  # noqa: A002
    """Whether a one-element tensor is nonzero (an error for any other size).

    >>> import retrograd as torch
    >>> torch.is_nonzero(torch.tensor([0.5]))
    True
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("is_nonzero", "input", 1, input) from None
    if a.size == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if a.size > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(a.reshape(-1)[0] != 0)


def is_same_size(input, other) -> bool:  # noqa: A002
    """Whether two tensors have the same shape.

    >>> import retrograd as torch
    >>> torch.is_same_size(torch.zeros(2, 3), torch.ones(2, 3))
    True
    """
    return input._data.shape == other._data.shape


def is_signed(input) -> bool:  # noqa: A002
    """Whether the tensor's dtype is signed (everything but uint8 and bool).

    >>> import retrograd as torch
    >>> torch.is_signed(torch.tensor([1], dtype=torch.uint8))
    False
    """
    try:
        return input._data.dtype.kind in "fi" or input._data.dtype.char in FLOAT_CHARS
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("is_signed", "input", 1, input) from None


def is_conj(input) -> bool:  # noqa: A002
    """False: without complex dtypes no tensor carries a conjugate bit."""
    return False


def is_neg(input) -> bool:  # noqa: A002
    """False: retrograd keeps no lazy negation bit."""
    return False


METHODS = {name: globals()[name] for name in __all__ if name not in ("histogramdd", "isin")}
INPLACE = {
    "gcd_": gcd, "lcm_": lcm, "heaviside_": heaviside, "nextafter_": nextafter,
}
