"""The gather/scatter family: gather, scatter, scatter_add, scatter_reduce, take, put and
take_along_dim, with take_along and scatter_along, their forms on NumPy indices for backward
formulas.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._dtypes import FLOAT_CHARS, WIDE_CHARS
from .._tensor import Tensor
from ..autograd.graph import Node
from . import _array
from ._apply import apply, recording
from ._array import add_at
from ._base import kept_if_grad, not_implemented
from ._core import Signatures, arg_error, scalar_value, wrap, wrap_dim
from .arithmetic import NotImplementedBackward
from .indexing import (
    _along_index,
    _as1d,
    _bc_ok,
    _check_bounds,
    _first_oob,
    _idx_of,
    _is_int_index,
    _legacy,
    _on_arrays,
    _size_mismatch,
)
from .shape import expand, reshape

# PyTorch's signatures, for its errors when arguments fit none (checked only after a failure).
_GATHER = Signatures("gather", "Tensor input, int dim, Tensor index, *, bool sparse_grad = False")


def _take_along_array(x, idx: np.ndarray, dim: int) -> np.ndarray:
    return np.take_along_axis(x, idx, axis=dim)


def _scatter_along_array(g, idx: np.ndarray, dim: int, shape) -> np.ndarray:
    out = np.zeros(shape, g.dtype)
    add_at(out, _along_index(idx, dim), g)
    return out


def take_along(input, idx: np.ndarray, dim: int) -> Tensor:  # noqa: A002
    """Gather ``input`` at NumPy indices ``idx`` along ``dim``."""
    return apply(GatherBackward0, _take_along_array(input._data, idx, dim), input,
                 _along=True, _idx=idx, _dim=dim)


def scatter_along(g, idx: np.ndarray, dim: int, shape) -> Tensor:
    """Zeros of ``shape`` with ``g`` added at NumPy indices ``idx`` along ``dim``."""
    return apply(ScatterAddBackward0, _scatter_along_array(g._data, idx, dim, shape), g,
                 _along=True, _idx=idx, _dim=dim)


def _scatter_args(op, a, dim, index, src_shape, gather=False):
    """Checks shared by gather and the scatter family; returns (dim, index, grids)."""
    idx = _idx_of(index)
    if idx.dtype.kind not in "iu" or idx.dtype == np.uint8 or not _is_int_index(idx):
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    d = wrap_dim(dim, a.ndim)
    nd = max(a.ndim, 1)
    if max(idx.ndim, 1) != nd:
        what = "input" if gather else "self"
        raise RuntimeError(
            f"Index tensor must have the same number of dimensions as {what} tensor"
        )
    if src_shape is not None and max(len(src_shape), 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    ishape, ashape = _as1d(idx).shape, _as1d(a).shape
    sshape = src_shape if src_shape is None or src_shape else (1,)
    ok = all(ishape[k] <= ashape[k] for k in range(nd) if k != d)
    if sshape is not None:
        ok = ok and all(ishape[k] <= sshape[k] for k in range(nd))
    if not ok:
        if gather:
            k = next(k for k in range(nd) if k != d and ishape[k] > ashape[k])
            raise RuntimeError(
                f"Size does not match at dimension {k} expected index {list(idx.shape)} to be no "
                f"larger than self {list(a.shape)} apart from dimension {d}"
            )
        msg = (f"Expected index {list(idx.shape)} to be no larger than self {list(a.shape)} "
               f"apart from dimension {d}")
        if src_shape is not None:
            msg += f" and to be no larger size than src {list(src_shape)}"
        raise RuntimeError(msg)
    idx = _as1d(idx).astype(np.int64, copy=False)
    _check_bounds(idx, d, ashape[d])
    return d, idx, _along_index(idx, d)


def _src_part(s: np.ndarray, ishape) -> np.ndarray:
    s = _as1d(s)
    if s.shape != ishape:
        s = s[tuple(slice(0, n) for n in ishape)]
    return s


class GatherBackward0(Node):
    """gather's backward adds ``g`` into zeros at the index. ``take_along`` (gather on the
    NumPy indices of backward formulas, shaped as ``g``; its forward) records ``_along`` and
    scatters along directly."""

    forward = staticmethod(_take_along_array)
    _along = False
    _packs = ("_idx", 0)  # PyTorch saves index, self (autograd/saved_hooks.py)

    def backward(self, xp, g):
        self.saved(False)  # (version-checks the kept input, as PyTorch's node does)
        if self._along:
            return xp.scatter_along(g, self._idx, self._dim, self._meta[0][0])
        return xp.scatter_add(xp.zeros_meta(self._meta[0]), self._dim, self._idx, g)


def gather(input, dim, index, *, sparse_grad: bool = False) -> Tensor:  # noqa: A002
    """Values of ``input`` along ``dim`` at ``index``: ``out[i][j] = input[index[i][j]][j]``
    for ``dim=0``.

    >>> import retrograd as torch
    >>> torch.gather(torch.tensor([[1, 2], [3, 4]]), 1, torch.tensor([[0, 0], [1, 0]]))
    tensor([[1, 1],
            [4, 3]])
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("scatter_gather_tensor_cpu", input._data.dtype)  # uint16/32/64
    try:
        a = input._data
        if not isinstance(index, (Tensor, np.ndarray)):
            raise arg_error("gather", "index", 3, index)
        d, idx, grids = _scatter_args("gather", a, dim, index, None, gather=True)
        ishape = _idx_of(index).shape
        out = _as1d(a)[grids].reshape(ishape)
        return apply(GatherBackward0, out, input, save=(input,), _idx=idx.reshape(ishape), _dim=d,
                     _g=dim)
    except (AttributeError, TypeError):
        _GATHER.check(input, dim, index, sparse_grad=sparse_grad or None)
        raise


class ScatterBackward0(Node):
    """scatter with a src tensor."""

    _bad_src = None
    _packs = ("_idx",)  # what PyTorch's node saves, in its order (autograd/saved_hooks.py)

    def backward(self, xp, g):
        nf = self.next_functions
        idx = self._idx  # (read once: under saved-tensor hooks this unpacks it)
        gx = xp.scatter(g, self._dim, idx, 0.0) if nf[0][0] is not None else None
        gs = None
        if nf[1][0] is not None:
            _check_src_grad(self)
            gs = xp.gather(g, self._dim, idx)
        return gx, gs


class ScatterBackward1(Node):
    """scatter with a value."""

    _packs = ("_idx",)

    def backward(self, xp, g):
        return xp.scatter(g, self._dim, self._idx, 0.0)


def _check_same_dtype(a, s, op, index=None) -> None:
    """PyTorch's order: the index's dtype, then self's and src's."""
    if index is not None:
        idx = _idx_of(index)
        if idx.dtype.kind not in "iu" or idx.dtype == np.uint8 or not _is_int_index(idx):
            raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    if s.dtype != a.dtype:
        raise RuntimeError(f"{op}(): Expected self.dtype to be equal to src.dtype")


def scatter(input, dim, index, src=None, *, value=None, reduce=None) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``src`` (a tensor, or a number ``value``) written along ``dim``
    at ``index``; ``reduce='add'`` or ``'multiply'`` combines instead (not differentiable).

    >>> import retrograd as torch
    >>> torch.zeros(2, 3).scatter(1, torch.tensor([[2], [0]]), 1.0)
    tensor([[0., 0., 1.],
            [1., 0., 0.]])
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("scatter_gather_tensor_cpu" if isinstance(src, Tensor) else
                              "scatter_gather_scalar_cpu", input._data.dtype)  # uint16/32/64
    if src is None:
        src = value
    a = input._data
    is_t = isinstance(src, Tensor)
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if is_t:
            warnings.warn(
                "The reduce argument of torch.scatter with Tensor src is deprecated and will be "
                "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
                "reduction options.", UserWarning, stacklevel=2)
    if is_t:  # (PyTorch checks the dtypes before the index)
        _check_same_dtype(a, src._data, "scatter", index)
    d, idx, grids = _scatter_args("scatter", a, dim, index, src._data.shape if is_t else None)
    out = _as1d(a).copy()
    if is_t:
        v = _src_part(src._data, idx.shape)
    else:
        v = np.asarray(scalar_value(src) if scalar_value(src) is not None else src, a.dtype)
    if reduce == "add":
        add_at(out, grids, v)
    elif reduce == "multiply":
        np.multiply.at(out, grids, v)
    else:
        out[grids] = v
    out = out.reshape(a.shape)
    if reduce is not None:
        return apply(NotImplementedBackward, out, *((input, src) if is_t else (input,)),
                     _op="scatter")
    ishape = _idx_of(index).shape
    if is_t:
        return apply(ScatterBackward0, out, input, src, save=(), _idx=idx.reshape(ishape), _dim=d,
                     _bad_src=_src_mismatch(src._data.shape, ishape))
    return apply(ScatterBackward1, out, input, save=(), _idx=idx.reshape(ishape), _dim=d)


def _src_mismatch(sshape, ishape):
    """(index shape, src shape) where they differ: src's gradient cannot be formed then."""
    if tuple(sshape) != tuple(ishape):
        return (tuple(ishape), tuple(sshape))
    return None


def _check_src_grad(node) -> None:
    bad = node._bad_src
    if bad is not None:
        # PyTorch's formula gives src a gradient of index's shape, which its engine refuses.
        raise RuntimeError(
            f"Function {node.name()} returned an invalid gradient at index 1 - got "
            f"{list(bad[0])} but expected shape compatible with {list(bad[1])}"
        )


class ScatterAddBackward0(Node):
    """scatter_add's backward. ``scatter_along`` (scatter_add into zeros on the NumPy indices
    of backward formulas; its forward) records ``_along``: its one input is the values."""

    forward = staticmethod(_scatter_along_array)
    _along = False
    _bad_src = None
    _packs = ("_idx",)

    def backward(self, xp, g):
        if self._along:
            return xp.take_along(g, self._idx, self._dim)
        nf = self.next_functions
        gs = None
        if nf[1][0] is not None:
            _check_src_grad(self)
            gs = xp.gather(g, self._dim, self._idx)
        return (g if nf[0][0] is not None else None), gs


def scatter_add(input, dim, index, src) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``src`` added along ``dim`` at ``index`` (repeats add up).

    >>> import retrograd as torch
    >>> torch.zeros(3).scatter_add(0, torch.tensor([0, 2, 0]), torch.tensor([1., 2., 3.]))
    tensor([4., 0., 2.])
    """
    a = input._data
    if not isinstance(src, Tensor):
        raise arg_error("scatter_add", "src", 4, src)
    s = src._data
    _check_same_dtype(a, s, "scatter", index)  # (PyTorch checks the dtypes before the index)
    d, idx, grids = _scatter_args("scatter", a, dim, index, s.shape)
    out = _as1d(a).copy()
    add_at(out, grids, _src_part(s, idx.shape))
    out = out.reshape(a.shape)
    ishape = _idx_of(index).shape
    return apply(ScatterAddBackward0, out, input, src, save=(), _idx=idx.reshape(ishape), _dim=d,
                 _g=dim, _bad_src=_src_mismatch(s.shape, ishape))


_REDUCE_UFUNC = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum,
                 "amin": np.minimum}


def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.char in FLOAT_CHARS:
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


class ScatterReduceBackward0(Node):
    """Keeps ``input``, ``src`` and the result for every reduction, as PyTorch's node does
    (only ``prod``'s formula reads them; the others version-check them)."""

    _bad_src = None
    _packs = ("_idx", 0, 1, "out")

    def backward(self, xp, g):
        nf = self.next_functions
        dim, idx, red, inc = self._dim, self._idx, self._reduce, self._include_self
        if red != "prod":
            self.saved(False)
            self.saved_output(False)
        gx = gs = None
        if nf[1][0] is not None:
            _check_src_grad(self)
        if red == "sum":
            gx = g
            gs = xp.gather(g, dim, idx) if nf[1][0] is not None else None
        elif red == "mean":
            gx = g / self._n
            gs = xp.gather(gx, dim, idx) if nf[1][0] is not None else None
        elif red in ("amax", "amin"):
            gd = g / self._n
            gx = xp.where(self._self_is, gd, 0.0)
            if nf[1][0] is not None:
                gs = xp.where(self._src_is, xp.gather(gd, dim, idx), 0.0)
        else:
            x, s = self.saved(xp.TENSORS)
            r = self.saved_output(xp.TENSORS)
            # Exclusive products, so that a zero factor still gets its gradient.
            mx = xp.where(self._x_zero, 1.0, x)
            mres = xp.scatter_reduce(mx, dim, idx, s, "prod", include_self=inc)
            gx = g * mres / mx
            if nf[1][0] is not None:
                single = self._single
                ms = xp.where(single, 1.0, s)
                msres = xp.scatter_reduce(x, dim, idx, ms, "prod", include_self=inc)
                gs = xp.where(single, xp.gather(g * msres, dim, idx),
                              xp.gather(g * r, dim, idx) / xp.where(self._s_zero, 1.0, s))
        if nf[0][0] is None:
            gx = None
        elif not inc:
            gx = xp.where(self._scattered, 0.0, gx)
        return gx, gs


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``src`` reduced into it along ``dim`` at ``index``: ``reduce`` is
    ``'sum'``, ``'prod'``, ``'mean'``, ``'amax'`` or ``'amin'``; ``include_self=False`` leaves
    the old values of scattered-to places out.

    >>> import retrograd as torch
    >>> x = torch.tensor([1., 2., 3.])
    >>> x.scatter_reduce(0, torch.tensor([0, 0]), torch.tensor([5., 7.]), "amax")
    tensor([7., 2., 3.])
    """
    red = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if red not in _REDUCE_UFUNC:
        raise RuntimeError(
            "reduce argument must be either sum, prod, mean, amax or amin, got " + str(reduce)
        )
    a = input._data
    if not isinstance(src, Tensor):
        raise arg_error("scatter_add", "src", 4, src)
    s = src._data
    _check_same_dtype(a, s, "scatter", index)  # (PyTorch checks the dtypes before the index)
    d, idx, grids = _scatter_args("scatter", a, dim, index, s.shape)
    sv = _src_part(s, idx.shape)
    out = _as1d(a).copy()
    scattered = np.zeros(out.shape, bool)
    scattered[grids] = True
    if not include_self:
        out[scattered] = _identity(red, a.dtype)
    _REDUCE_UFUNC[red].at(out, grids, sv)
    count = None
    if red == "mean":
        count = np.zeros(out.shape, np.int64)
        add_at(count, grids, 1)
        if include_self:
            count += 1
        count = np.maximum(count, 1)
        if out.dtype.char in FLOAT_CHARS:
            out = (out / count).astype(a.dtype)
        else:
            out = out // count
    out = out.reshape(a.shape)
    if not recording(input, src):
        return wrap(out)
    # The masks and counts below are made only for a backward that will read them.
    ishape = _idx_of(index).shape
    attrs = {"_idx": idx.reshape(ishape), "_dim": d, "_reduce": red,
             "_include_self": bool(include_self), "_scattered": scattered.reshape(a.shape),
             "_bad_src": _src_mismatch(s.shape, ishape)}
    if red == "mean":
        attrs["_n"] = count.reshape(a.shape).astype(a.dtype)
    elif red in ("amax", "amin"):
        o1 = _as1d(out)
        self_is = _as1d(a) == o1
        if not include_self:
            self_is &= ~scattered
        src_is = sv == o1[grids]
        n = self_is.astype(a.dtype)
        add_at(n, grids, src_is)
        attrs.update(_n=np.maximum(n, 1).reshape(a.shape), _self_is=self_is.reshape(a.shape),
                     _src_is=src_is.reshape(ishape))
    elif red == "prod":
        s_zero = sv == 0
        nz = np.zeros(_as1d(a).shape, np.int64)
        add_at(nz, grids, s_zero)
        attrs.update(_x_zero=a == 0, _s_zero=s_zero.reshape(ishape),
                     _single=(s_zero & (nz[grids] == 1)).reshape(ishape))
    return apply(ScatterReduceBackward0, out, input, src, save=(input, src), save_out=True,
                 **attrs)


# -- take / put / take_along_dim ----------------------------------------------------------------


def _flat_index(op, idx, numel) -> np.ndarray:
    if idx.dtype != np.int64:
        raise RuntimeError(f"{op}(): Expected a long tensor for index, but got {_legacy(idx)}")
    v = _first_oob(idx, -numel, numel) if idx.size else None
    if v is not None:
        raise IndexError(f"out of range: tried to access index {v} on a tensor of {numel} "
                         "elements.")
    return np.where(idx < 0, idx + numel, idx)


class TakeBackward0(Node):
    _packs = ("_idx", 0)

    def backward(self, xp, g):
        self.saved(False)  # (version-checks the kept input, as PyTorch's node does)
        return xp.put(xp.zeros_meta(self._meta[0]), self._idx, g, True)


def take(input, index) -> Tensor:  # noqa: A002
    """The elements of ``input``, read as 1-D, at ``index`` (result has ``index``'s shape).

    >>> import retrograd as torch
    >>> torch.take(torch.tensor([[1, 2], [3, 4]]), torch.tensor([0, 3, -1]))
    tensor([1, 4, 4])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("take", "input", 1, input) from None
    idx = _flat_index("take", _idx_of(index), a.size)
    return apply(TakeBackward0, a.reshape(-1)[idx], input, save=(input,), _idx=idx, _g=index)


class PutBackward0(Node):
    _packs = ("_idx", 0)

    def backward(self, xp, g):
        self.saved(False)  # (version-checks the kept source, as PyTorch's node does)
        nf = self.next_functions
        src_meta = self._meta[1]
        idx = self._idx
        gx = None
        if nf[0][0] is not None:
            gx = g if self._accumulate else xp.put(g, idx, xp.zeros_meta(src_meta), False)
        gs = xp.reshape(xp.take(g, idx), src_meta[0]) if nf[1][0] is not None else None
        return gx, gs


def put(input, index, source, accumulate: bool = False) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``source`` written (or added) at the 1-D positions ``index``.

    >>> import retrograd as torch
    >>> torch.put(torch.zeros(2, 2), torch.tensor([0, 3]), torch.tensor([1., 2.]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    a, s = input._data, source._data
    idx = _idx_of(index)
    if s.size != idx.size:
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {s.size}, index.numel() = {idx.size}"
        )
    if s.dtype != a.dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{_legacy(a)} and source.dtype = {_legacy(s)}"
        )
    idx = _flat_index("put_", idx, a.size)
    out = a.copy()
    flat = out.reshape(-1)
    if accumulate:
        add_at(flat, idx.reshape(-1), s.reshape(-1))
    else:
        flat[idx.reshape(-1)] = s.reshape(-1)
    return apply(PutBackward0, out, input, source, save=(kept_if_grad(source),), _idx=idx,
                 _accumulate=bool(accumulate), _g=index)


def take_along_dim(input, indices, dim=None) -> Tensor:  # noqa: A002
    """Values of ``input`` at ``indices`` along ``dim`` (the two broadcast in the other dims);
    with no ``dim``, ``input`` is read as 1-D.

    >>> import retrograd as torch
    >>> x = torch.tensor([[10, 30, 20], [60, 40, 50]])
    >>> torch.take_along_dim(x, x.argmax(1, keepdim=True), 1)
    tensor([[30],
            [60]])
    """
    idx = _idx_of(indices)
    if idx.dtype != np.int64:
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got {_legacy(idx)}"
        )
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("take_along_dim", "input", 1, input) from None
    if dim is None:
        return gather(reshape(input, -1), 0, idx.reshape(-1))
    if a.ndim != idx.ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {a.ndim} dimensions for input, and {idx.ndim} dimensions for "
            "indices"
        )
    d = wrap_dim(dim, a.ndim)
    sa = list(a.shape)
    si = list(idx.shape)
    sa[d] = si[d] = 1
    b = list(np.broadcast_shapes(tuple(sa), tuple(si))) if _bc_ok(sa, si) else None
    if b is None:
        raise RuntimeError(_size_mismatch(sa, si))
    ba, bi = list(b), list(b)
    ba[d], bi[d] = a.shape[d], idx.shape[d]
    x = expand(input, ba)  # PyTorch expands even to the same shape (an ExpandBackward0)
    if list(idx.shape) != bi:
        idx = np.broadcast_to(idx, bi)
    return gather(x, d, idx)


_array.register(
    take_along=GatherBackward0.forward, scatter_along=ScatterAddBackward0.forward,
    gather=_on_arrays(gather), scatter=_on_arrays(scatter),
    scatter_add=_on_arrays(scatter_add), scatter_reduce=_on_arrays(scatter_reduce),
    take=_on_arrays(take), put=_on_arrays(put),
)

__all__ = ["gather", "scatter", "scatter_add", "scatter_reduce", "take", "put", "take_along_dim"]
XP = ["take_along", "scatter_along"]
METHODS = {name: globals()[name] for name in __all__}
INPLACE = {name + "_": globals()[name] for name in (
    "scatter", "scatter_add", "scatter_reduce", "put")}
