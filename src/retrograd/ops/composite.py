"""Differentiable ops composed from the primitives: no new nodes, so every order of derivative
comes from the primitives' formulas.

atleast_1d/2d/3d, block_diag, cdist, combinations, cov, corrcoef, trapezoid (trapz),
cumulative_trapezoid, vander, diagflat, dist, renorm, copysign, ldexp, msort, hsplit/vsplit/
dsplit, split_with_sizes, the *_scatter ops, quantile/nanquantile, chain_matmul, and the
identities that complex dtypes would make non-trivial (conj, resolve_conj, resolve_neg, real).
Their grad_fn names are those of the last primitive, where PyTorch has one node of its own.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._dtypes import FLOAT_CHARS, REDUCED, get_default_dtype, promote_types
from .._tensor import Tensor
from ._autocast import fp32
from ._core import Signatures, arg_error, operands, wrap, wrap_dim
from ._views import slice_dim
from .arithmetic import div_scalar, mul, mul_scalar, sub
from .compare import where
from .copies import diag
from .fused import fused
from .index_ops import masked_select
from .join import cat, stack
from .linalg import matmul
from .linalg_composite import multi_dot
from .reduction import sum as _sum
from .reduction import vector_norm
from .scatter_gather import gather
from .shape import clone, expand, reshape, split, tensor_split, to_dtype_op, view
from .sorting import cumsum, sort
from .unary import abs as _abs

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "cdist", "combinations", "cov",
    "corrcoef", "trapezoid", "trapz", "cumulative_trapezoid", "vander", "diagflat", "dist",
    "renorm", "copysign", "ldexp", "msort", "hsplit", "vsplit", "dsplit", "split_with_sizes",
    "select_scatter", "slice_scatter", "diagonal_scatter", "quantile", "nanquantile",
    "chain_matmul", "conj", "conj_physical", "resolve_conj", "resolve_neg", "real",
]
XP: list = []


def _atleast(tensors, n: int, shape_of):
    one = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    seq = tensors if not (len(tensors) == 1 and isinstance(tensors[0], (list, tuple))) \
        else tensors[0]
    out = tuple(t if t.dim() >= n else reshape(t, shape_of(t)) for t in seq)
    return out[0] if one else out


def atleast_1d(*tensors):
    """Views with at least one dimension (a 0-d tensor becomes shape ``(1,)``).

    >>> import retrograd as torch
    >>> tuple(torch.atleast_1d(torch.tensor(1.)).shape)
    (1,)
    """
    return _atleast(tensors, 1, lambda t: (1,))


def atleast_2d(*tensors):
    """Views with at least two dimensions (``(n,)`` becomes ``(1, n)``).

    >>> import retrograd as torch
    >>> tuple(torch.atleast_2d(torch.tensor([1., 2.])).shape)
    (1, 2)
    """
    return _atleast(tensors, 2, lambda t: (1, t.numel()) if t.dim() == 1 else (1, 1))


def atleast_3d(*tensors):
    """Views with at least three dimensions (``(n,)`` becomes ``(1, n, 1)``, ``(m, n)``
    becomes ``(m, n, 1)``).

    >>> import retrograd as torch
    >>> tuple(torch.atleast_3d(torch.ones(2, 3)).shape)
    (2, 3, 1)
    """
    def shape_of(t):
        if t.dim() == 0:
            return (1, 1, 1)
        if t.dim() == 1:
            return (1, t.shape[0], 1)
        return (*t.shape, 1)

    return _atleast(tensors, 3, shape_of)


def block_diag(*tensors) -> Tensor:
    """A block-diagonal matrix of the given tensors (0-d and 1-d ones count as one row).

    >>> import retrograd as torch
    >>> torch.block_diag(torch.ones(1, 1), torch.tensor([2., 3.]))
    tensor([[1., 0., 0.],
            [0., 2., 3.]])
    """
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.dim()} dimensions")
    if not tensors:
        return wrap(np.zeros((1, 0), np.float32))
    return fused("BlockDiagBackward0", _block_diag, *tensors, _packs=())


def _block_diag(*tensors) -> Tensor:
    mats = [reshape(t, (1, -1)) if t.dim() < 2 else t for t in tensors]
    width = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        r, c = m.shape
        zl = m.new_zeros((r, left))
        zr = m.new_zeros((r, width - left - c))
        rows.append(cat([zl, m, zr], dim=1))
        left += c
    return cat(rows, dim=0)


@fp32
def cdist(x1, x2, p: float = 2.0, compute_mode=None) -> Tensor:
    """The ``p``-norm distance between each pair of rows of two (batches of) matrices.

    >>> import retrograd as torch
    >>> torch.cdist(torch.tensor([[0., 0.]]), torch.tensor([[3., 4.], [1., 0.]]))
    tensor([[5., 1.]])
    """
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype.np in REDUCED:  # PyTorch has no float16/bfloat16 kernel (autocast casts first)
        raise NotImplementedError(f"\"cdist\" not implemented for '{x1.dtype.scalar_name}'")
    return fused("CdistBackward0",
                 lambda a, b: vector_norm(sub(a.unsqueeze(-2), b.unsqueeze(-3)), p, dim=-1),
                 x1, x2, _p=float(p), _packs=(0, 1, "=result"))


def combinations(input, r: int = 2, with_replacement: bool = False) -> Tensor:  # noqa: A002
    """The ``r``-element combinations of a 1-D tensor's elements, as rows.

    >>> import retrograd as torch
    >>> torch.combinations(torch.tensor([1, 2, 3]))
    tensor([[1, 2],
            [1, 3],
            [2, 3]])
    """
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_zeros((0,))
    # PyTorch's composite (Itertools.cpp): an r-dim meshgrid of the input (a view and an
    # expand each), each grid masked_select-ed where its indices increase, stacked as columns.
    n = input.shape[0]
    grid = np.indices((n,) * r, sparse=True)
    mask = np.ones((n,) * r, np.bool_)
    for i in range(r - 1):
        mask &= grid[i] <= grid[i + 1] if with_replacement else grid[i] < grid[i + 1]
    keep = wrap(mask)
    cols = []
    for i in range(r):
        dims = [1] * r
        dims[i] = -1
        cols.append(masked_select(expand(view(input, dims), (n,) * r), keep))
    return stack(cols, 1)


def cov(input, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:  # noqa: A002
    """The covariance matrix of the variables in the rows of ``input`` (observations in
    columns), with frequency and observation weights.

    >>> import retrograd as torch
    >>> torch.cov(torch.tensor([[0., 1., 2.], [2., 1., 0.]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.dim()} dimensions")
    if input._data.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    # PyTorch's composite, op for op (Correlation.cpp), so the graph and saved tensors match.
    x = input if input.dim() == 2 else input.view(1, -1)
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_cov_weights(fweights, "fweights", n, "integral")
        w = fweights
    if aweights is not None:
        _check_cov_weights(aweights, "aweights", n, "floating point")
        w = aweights if w is None else mul(w, aweights)
    if w is None:
        w_sum = wrap(np.array(n, np.int64))
    else:
        w_sum = w.sum()
        if not w_sum._data:
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x if w is None else mul(x, w)).sum(1) / w_sum
    if w is None:
        norm = wrap(np.array(n - correction, np.int64))
    elif correction == 0:
        norm = w_sum
    elif aweights is None:
        norm = w_sum - correction
    elif fweights is None and n == 1 and correction == 1:
        norm = wrap(np.array(0, np.int64))
    else:
        norm = w_sum - mul_scalar(mul(w, aweights).sum(), correction) / w_sum
    if norm._data <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", stacklevel=2)
        norm.zero_()
    if n == 1 and (fweights is None) != (aweights is None):
        # PyTorch zeroes the input itself here (one observation: its average), then promotes
        x.zero_()
        if x._data.dtype.kind in "iub":
            x = x.float()
    else:
        x = sub(x, avg.unsqueeze(1))
    c = matmul(x, (x if w is None else mul(x, w)).t().conj())
    return (c / norm).squeeze()


def _check_cov_weights(w: Tensor, name: str, n: int, kind: str) -> None:
    """PyTorch's checks of cov's fweights (integral) and aweights (floating point)."""
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.dim()} dimensions")
    dt = w._data.dtype
    if not (dt.char in FLOAT_CHARS if kind[0] == "f" else dt.kind in "iu"):
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{w.dtype.scalar_name} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if n and not w.min().ge(0).item():  # (through min, as PyTorch checks: a MinBackward1)
        raise RuntimeError(f"cov(): {name} cannot be negative")


def corrcoef(input) -> Tensor:  # noqa: A002
    """Pearson correlation coefficients of the variables in the rows of ``input``.

    >>> import retrograd as torch
    >>> torch.corrcoef(torch.tensor([[0., 1., 2.], [2., 1., 0.]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    c = cov(input)
    if c.dim() == 0:
        return c / c
    stddev = c.diagonal().sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return c.clip(-1, 1)


def _trapz_dx(y, x, dx, dim):
    d = wrap_dim(dim, y.dim())
    n = y.shape[d]
    if n == 0:
        return None, d
    left = slice_dim(y, d, 0, -1)  # (PyTorch's slices: grad_fn._saved_start/_end)
    right = slice_dim(y, d, 1, ...)
    if x is None:
        return mul_scalar(left + right, 0.5 if dx is None else dx / 2.0), d
    if x.dim() == 1:
        shape = [1] * y.dim()
        shape[d] = n
        xs = reshape(x, tuple(shape))
    else:
        xs = x
    width = xs.narrow(d, 1, n - 1) - xs.narrow(d, 0, n - 1)
    return (left + right) * width / 2.0, d


def trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``: with sample points ``x`` or spacing ``dx`` (1).

    >>> import retrograd as torch
    >>> torch.trapezoid(torch.tensor([1., 2., 3.]))
    tensor(4.)
    """
    if isinstance(x, (int, float)):
        x, dx = None, x
    d = wrap_dim(dim, y.dim())
    n = y.shape[d]
    if n == 0:
        return _sum(y, dim=d) * 0
    if x is None:  # as PyTorch: (sum - (first + last) / 2) * dx, with dim as given
        ends = mul_scalar(y.select(dim, 0) + y.select(dim, -1), 0.5)
        return mul_scalar(_sum(y, dim=dim) - ends, 1.0 if dx is None else dx)
    xs = reshape(x, tuple(n if i == d else 1 for i in range(y.dim()))) if x.dim() == 1 else x
    # (PyTorch's slices: right - left of x, then y's right + left)
    left = slice_dim(xs, d, 0, -1)
    width = slice_dim(xs, d, 1, ...) - left
    ends = slice_dim(y, d, 0, -1) + slice_dim(y, d, 1, ...)
    return div_scalar(_sum(mul(ends, width), dim=d), 2.0)


def trapz(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """Alias of ``trapezoid``.

    >>> import retrograd as torch
    >>> torch.trapz(torch.tensor([1., 2., 3.]), dx=2.0)
    tensor(8.)
    """
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running trapezoidal integral along ``dim`` (one element shorter than ``y``).

    >>> import retrograd as torch
    >>> torch.cumulative_trapezoid(torch.tensor([1., 2., 3.]))
    tensor([1.5000, 4.0000])
    """
    if isinstance(x, (int, float)):
        x, dx = None, x
    terms, d = _trapz_dx(y, x, dx, dim)
    if terms is None:
        return y
    return cumsum(terms, d)


def vander(x, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803
    """The Vandermonde matrix: columns are powers of ``x`` (decreasing unless ``increasing``).

    >>> import retrograd as torch
    >>> torch.vander(torch.tensor([1, 2, 3]), N=3)
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    base = x if x.is_floating_point() else x.long()
    if n == 0:
        return base.new_zeros((x.shape[0], 0))
    cols = [base.new_ones(x.shape)] + [base] * (n - 1)
    out = stack(cols, dim=1).cumprod(dim=1) if n > 1 else stack(cols, dim=1)
    return out if increasing else out.flip(1)


def diagflat(input, offset: int = 0) -> Tensor:  # noqa: A002
    """A matrix with the flattened ``input`` on its ``offset``-th diagonal.

    >>> import retrograd as torch
    >>> torch.diagflat(torch.tensor([[1., 2.]]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    return diag(reshape(input, (-1,)), offset)


def dist(input, other, p: float = 2) -> Tensor:  # noqa: A002
    """The ``p``-norm of ``input - other``.

    >>> import retrograd as torch
    >>> torch.dist(torch.tensor([3., 0.]), torch.tensor([0., 4.]))
    tensor(5.)
    """
    return fused("DistBackward0", lambda a, b: vector_norm(sub(a, b), p), input, other, _p=p,
                 _packs=(1, 0, "=result"))


def renorm(input, p: float, dim: int, maxnorm: float) -> Tensor:  # noqa: A002
    """Rescale each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` to that norm.

    >>> import retrograd as torch
    >>> torch.renorm(torch.tensor([[3., 4.], [0.3, 0.4]]), 2, 0, 1.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    d = wrap_dim(dim, input.dim())
    dims = tuple(i for i in range(input.dim()) if i != d)

    def scaled(x: Tensor) -> Tensor:
        norms = vector_norm(x, p, dim=dims, keepdim=True)
        return x * where(norms > maxnorm, maxnorm / (norms + 1e-7), norms.new_ones(()))

    return fused("RenormBackward0", scaled, input, _p=p, _dim=dim, _maxnorm=maxnorm)


_COPYSIGN = Signatures("copysign", "Tensor input, Tensor other, *, Tensor? out = None",
                       "Tensor input, Number other, *, Tensor? out = None")


def copysign(input, other) -> Tensor:  # noqa: A002
    """``|input|`` with the sign of ``other`` (signed zeros count).

    >>> import retrograd as torch
    >>> torch.copysign(torch.tensor([1., -2.]), -1.)
    tensor([-1., -2.])
    """
    if not isinstance(input, Tensor):
        _COPYSIGN.check(input, other)
    a = input if input.is_floating_point() else input.float()
    neg = other.signbit() if isinstance(other, Tensor) else wrap(np.signbit(np.float64(other)))
    # the result's dtype: the two promoted as PyTorch promotes (bfloat16 with float32: float32)
    rt = operands(input, other)[0].dtype if isinstance(other, Tensor) else a._data.dtype
    if rt.char not in FLOAT_CHARS:
        rt = a._data.dtype

    def signed(a: Tensor, other=None) -> Tensor:  # other's gradient: zeros (ops/fused.py)
        mag = _abs(a)
        if mag._data.dtype != rt:
            mag = to_dtype_op(mag, rt)
        out = where(neg, -mag, mag)
        d = a._data
        if d.dtype in REDUCED and d.dtype == rt:  # torch's kernel sets the sign bit: a NaN
            bits = (d.view(np.uint16) & 0x7FFF) | (neg._data.astype(np.uint16) << 15)
            out._data = np.ascontiguousarray(np.broadcast_to(bits, out.shape)).view(d.dtype)
        return out

    if isinstance(other, Tensor):
        return fused("CopysignBackward0", signed, a, other, _packs=(0, "=result"))
    return fused("CopysignBackward1", signed, a, _packs=(0, "=result"))


def ldexp(input, other) -> Tensor:  # noqa: A002
    """``input * 2 ** other``.

    >>> import retrograd as torch
    >>> torch.ldexp(torch.tensor([1., 3.]), torch.tensor([2, 1]))
    tensor([4., 6.])
    """
    if not isinstance(other, Tensor):  # no overload takes a number
        raise arg_error("ldexp", "other", 2, other)
    # PyTorch's ldexp is ``input * pow(2.0, other)``: a float other promotes with input; an
    # integer other leaves input's float dtype (the default float for an integer input).
    power = other.dtype if other.is_floating_point() else (
        input.dtype if input.is_floating_point() else get_default_dtype())
    dt = promote_types(input.dtype, power)
    a = input if input.dtype == dt else input.to(dt)
    # The gradient is 2 ** other also for negative integer powers (PyTorch's is 0 there: it
    # takes that power in integers).
    return fused("LdexpBackward0", lambda a, other: mul(a, 2.0 ** other.to(a.dtype)), a, other,
                 _packs=(1, "=result"))


def msort(input) -> Tensor:  # noqa: A002
    """Sort along the first dimension.

    >>> import retrograd as torch
    >>> torch.msort(torch.tensor([[2., 1.], [1., 3.]]))
    tensor([[1., 1.],
            [2., 3.]])
    """
    return sort(input, dim=0).values


def _nsplit(name: str, min_dim: int, dim_of):
    def fn(input, indices_or_sections):  # noqa: A002
        if input.dim() < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} "
                               f"dimension, but got a tensor with {input.dim()} dimensions!")
        d = dim_of(input)
        if isinstance(indices_or_sections, int) and input.shape[d] % indices_or_sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but "
                               f"the size of the dimension {input.shape[d]} is not divisible "
                               f"by the split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    fn.__name__ = name
    return fn


hsplit = _nsplit("hsplit", 1, lambda t: 1 if t.dim() > 1 else 0)
hsplit.__doc__ = """Split along columns (dim 1; dim 0 for 1-D tensors), as ``tensor_split``.

    >>> import retrograd as torch
    >>> [t.shape[1] for t in torch.hsplit(torch.ones(2, 4), 2)]
    [2, 2]
    """
vsplit = _nsplit("vsplit", 2, lambda t: 0)
vsplit.__doc__ = """Split along rows (dim 0), as ``tensor_split``.

    >>> import retrograd as torch
    >>> [t.shape[0] for t in torch.vsplit(torch.ones(4, 2), [1])]
    [1, 3]
    """
dsplit = _nsplit("dsplit", 3, lambda t: 2)
dsplit.__doc__ = """Split along depth (dim 2), as ``tensor_split``.

    >>> import retrograd as torch
    >>> len(torch.dsplit(torch.ones(1, 1, 4), 4))
    4
    """


def split_with_sizes(input, split_sizes, dim: int = 0) -> tuple:  # noqa: A002
    """Split into pieces of the given sizes along ``dim``.

    >>> import retrograd as torch
    >>> [t.tolist() for t in torch.split_with_sizes(torch.arange(5), [2, 3])]
    [[0, 1], [2, 3, 4]]
    """
    return split(input, list(split_sizes), dim)


def _scatter_into(input, src, index) -> Tensor:
    out = clone(input)
    out[index] = src
    return out


def select_scatter(input, src, dim: int, index: int) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``input.select(dim, index)`` replaced by ``src``.

    >>> import retrograd as torch
    >>> torch.select_scatter(torch.zeros(2, 2), torch.ones(2), 0, 0)
    tensor([[1., 1.],
            [0., 0.]])
    """
    d = wrap_dim(dim, input.dim())
    key = (slice(None),) * d + (index,)
    return fused("SelectScatterBackward0", lambda a, b: _scatter_into(a, b, key), input, src,
                 _dim=dim, _index=index, _packs=())


def slice_scatter(input, src, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:  # noqa: A002
    """A copy of ``input`` with the slice ``start:end:step`` along ``dim`` replaced by ``src``.

    >>> import retrograd as torch
    >>> torch.slice_scatter(torch.zeros(4), torch.ones(2), start=2)
    tensor([0., 0., 1., 1.])
    """
    d = wrap_dim(dim, input.dim())
    index = (slice(None),) * d + (slice(start, end, step),)
    return fused("SliceScatterBackward0", lambda a, b: _scatter_into(a, b, index), input, src,
                 _dim=dim, _start=start, _end=end, _step=step, _packs=())


def diagonal_scatter(input, src, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    """A copy of ``input`` with its ``offset`` diagonal (over ``dim1``, ``dim2``) set to
    ``src``.

    >>> import retrograd as torch
    >>> torch.diagonal_scatter(torch.zeros(2, 2), torch.ones(2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    def scattered(a: Tensor, b: Tensor) -> Tensor:
        out = clone(a)
        out.diagonal(offset, dim1, dim2).copy_(b)
        return out

    return fused("DiagonalScatterBackward0", scattered, input, src, _offset=offset, _dim1=dim1,
                 _dim2=dim2, _packs=())


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name):  # noqa: A002
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    if input.dtype.name not in ("float32", "float64"):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    scalar_q = not isinstance(q, Tensor)
    qa = np.asarray(q if scalar_q else q.numpy(), dtype=np.float64)
    if qa.ndim > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    bad = qa[(qa < 0) | (qa > 1)]
    if bad.size:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {bad[0]:g}")
    # Laid out as PyTorch's quantile: the reduced dim last (kept as 1 where it was, with
    # keepdim), sorted (NaNs last), ranks gathered and interpolated with lerp; the grad_fn
    # chain is PyTorch's (SqueezeBackward4 over LerpBackward1 or GatherBackward0).
    # PyTorch sorts the flattened input, the input itself (dim last) or the input with dim
    # moved last, then views the sorted values as (*out_shape, n).
    sizes = list(input.shape)
    if dim is None:
        srt = sort(input.flatten(), dim=-1).values
        in_shape = ((1,) * input.dim() if keepdim else ()) + (srt.shape[-1],)
    else:
        d = wrap_dim(dim, max(input.dim(), 1))
        if d == input.dim() - 1:
            srt = sort(input, dim=-1).values
        else:
            srt = sort(input.unsqueeze(-1).transpose(d, -1), dim=-1).values
        n = sizes[d] if sizes else 1
        if sizes:
            sizes[d] = 1
        in_shape = tuple(sizes if keepdim else sizes[:d] + sizes[d + 1:]) + (n,)
    srt = srt.view(in_shape)
    n = srt.shape[-1]
    nan = np.isnan(srt.detach().numpy())
    if ignore_nan:
        count = (~nan).sum(-1, keepdims=True).astype(np.float64)
    else:
        count = np.full(srt.shape[:-1] + (1,), float(n))
    ranks = qa.reshape(-1) * np.maximum(count - 1, 0)  # (..., Q)
    if interpolation == "lower":
        ranks = np.floor(ranks)
    elif interpolation == "higher":
        ranks = np.ceil(ranks)
    elif interpolation == "nearest":
        ranks = np.round(ranks)  # round half to even, as PyTorch
    # A NaN result where one is due: the rank of the last element, a NaN.
    last = (count == 0) if ignore_nan else nan.any(-1, keepdims=True)
    ranks = np.where(last, n - 1, ranks)
    lo = np.floor(ranks).astype(np.int64)
    out = gather(srt, -1, wrap(lo))
    if interpolation in ("linear", "midpoint"):
        hi = np.minimum(np.ceil(ranks).astype(np.int64), n - 1)
        frac = np.where(hi > lo, 0.5, 0.0) if interpolation == "midpoint" else ranks - lo
        w = wrap(frac.astype(srt.detach().numpy().dtype))
        out = out.lerp(gather(srt, -1, wrap(hi)), w)
    if scalar_q or qa.ndim == 0:
        return out.squeeze_(-1)
    return out.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)


@fp32
def quantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):  # noqa: A002
    """The ``q``-th quantiles along ``dim`` (of all elements by default); any NaN makes its
    result NaN. ``q`` may be a number or a 1-D tensor (its dimension comes first).

    >>> import retrograd as torch
    >>> torch.quantile(torch.tensor([0., 1., 2., 3.]), 0.5)
    tensor(1.5000)
    """
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


@fp32
def nanquantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):  # noqa: A002
    """``quantile`` ignoring NaNs (NaN only where a slice holds nothing else).

    >>> import retrograd as torch
    >>> torch.nanquantile(torch.tensor([0., float("nan"), 2.]), 0.5)
    tensor(1.)
    """
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile")


def chain_matmul(*matrices) -> Tensor:
    """The product of the given matrices (deprecated in PyTorch for ``linalg.multi_dot``).

    >>> import retrograd as torch
    >>> tuple(torch.chain_matmul(torch.eye(2), torch.ones(2, 1)).shape)
    (2, 1)
    """
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        return clone(matrices[0])
    return multi_dot(matrices)  # as PyTorch: linalg.multi_dot (its order, a view)


def conj(input) -> Tensor:  # noqa: A002
    """The complex conjugate: the tensor itself, without complex dtypes.

    >>> import retrograd as torch
    >>> x = torch.tensor([1.0]); torch.conj(x) is x
    True
    """
    return input


def conj_physical(input) -> Tensor:  # noqa: A002
    """The conjugate as a new tensor: a copy, without complex dtypes.

    >>> import retrograd as torch
    >>> torch.conj_physical(torch.tensor([1.0]))
    tensor([1.])
    """
    return clone(input)


def resolve_conj(input) -> Tensor:  # noqa: A002
    """The tensor itself: no conjugate bit to resolve without complex dtypes."""
    return input


def resolve_neg(input) -> Tensor:  # noqa: A002
    """The tensor itself: retrograd keeps no lazy negation bit."""
    return input


def real(input) -> Tensor:  # noqa: A002
    """The real part: the tensor itself, without complex dtypes.

    >>> import retrograd as torch
    >>> torch.real(torch.tensor([1.5]))
    tensor([1.5000])
    """
    return input


METHODS = {name: globals()[name] for name in __all__ if name not in (
    "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "cdist", "combinations", "trapezoid",
    "trapz", "cumulative_trapezoid", "vander", "chain_matmul", "split_with_sizes",
    "real")}  # Tensor.real is a property (_tensor_extras)
METHODS["split_with_sizes"] = split_with_sizes
INPLACE = {"copysign_": copysign, "ldexp_": ldexp, "renorm_": renorm}
