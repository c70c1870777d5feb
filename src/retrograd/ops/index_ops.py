"""The index_* ops (index_select, index_add, index_copy, index_fill) and the masked ops
(masked_fill, masked_select, masked_scatter).
"""

from __future__ import annotations

import numpy as np

from .._dtypes import FROM_NP, WIDE_CHARS
from .._tensor import Tensor
from ..autograd.graph import Node
from . import _array
from ._apply import apply
from ._array import add_at
from ._autocast import promote
from ._base import kept_if_grad, not_implemented
from ._core import Signatures, arg_error, c_order, checked_scalar, scalar_value, wrap_dim
from .indexing import (
    _as1d,
    _check_bounds,
    _first_oob,
    _idx_of,
    _is_int_index,
    _legacy,
    _on_arrays,
    _size_mismatch,
)

# PyTorch's signatures, for its errors when arguments fit none (checked only after a failure).
_INDEX_SELECT = Signatures("index_select", "Tensor input, int dim, Tensor index")


def _dim_index(a, dim):
    d = wrap_dim(dim, a.ndim)
    return d, _as1d(a).shape[d]


def _along(d: int, idx) -> tuple:
    return (slice(None),) * d + (idx,)


class IndexSelectBackward0(Node):
    """index_select's backward adds ``g`` into zeros at the selected slices.

    It is also the node of ``copies.index_dims`` (a gather along several dims, for
    repeat_interleave and the non-constant pads), which records its ``((dim, idx), ...)`` as
    ``_idxs`` and sets the grad_fn name PyTorch gives that op.
    """

    _idxs = None
    _keeps = False  # the reflection/replication pads keep their input, as PyTorch's nodes do
    # What PyTorch's node saves, in its order (autograd/saved_hooks.py): the index as given.
    _packs = (("_idx", lambda n, i: i.reshape(_given_shape(n, i)), lambda n, i: i.reshape(-1)),)

    def backward(self, xp, g):
        if self._keeps:
            self.saved(False)  # (version-checks it)
        if self._idxs is not None:
            return xp.index_dims_backward(g, self._idxs, self._meta[0][0])
        return xp.index_add(xp.zeros_meta(self._meta[0]), self._dim, self._idx, g)


def _given_shape(node, idx) -> tuple:
    g = node.__dict__.get("_g")
    return idx.shape if g is None else np.shape(_idx_of(g[1]))


def index_select(input, dim, index) -> Tensor:  # noqa: A002
    """The slices of ``input`` along ``dim`` at the positions in the 1-D ``index``.

    >>> import retrograd as torch
    >>> torch.arange(6).view(2, 3).index_select(1, torch.tensor([2, 0]))
    tensor([[2, 0],
            [5, 3]])
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("index_select", input._data.dtype)  # uint16/32/64
    try:
        a = input._data
        if not isinstance(index, (Tensor, np.ndarray)):
            raise arg_error("index_select", "index", 3, index)
        idx = _idx_of(index)
        if idx.ndim > 1:  # (checked first, as PyTorch)
            raise IndexError("index_select(): Index is supposed to be a vector")
        if not _is_int_index(idx):
            raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
        d, size = _dim_index(a, dim)
        idx = _as1d(idx).astype(np.int64, copy=False)
        if a.ndim == 0 and idx.size != 1:
            raise RuntimeError(
                f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)"
            )
        bad = _first_oob(idx, 0, size) if idx.size else None
        if bad is not None and a.ndim > 1 and size == 0:
            raise RuntimeError("index_select(): self indexing axis dim should be positive")
        if bad is not None:
            if a.ndim > 1 and d == 1 and size:  # PyTorch's dim-1 fast path checks its own way
                raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} "
                                   f"axis_dim={size}")
            raise IndexError("index out of range in self")
        out = np.take(_as1d(a), idx, axis=d)
        if a.ndim == 0:
            out = out.reshape(())
        return apply(IndexSelectBackward0, out, input, save=(), _idx=idx, _dim=d, _g=(dim, index))
    except (AttributeError, TypeError):
        _INDEX_SELECT.check(input, dim, index)
        raise


class IndexAddBackward0(Node):
    _packs = ("_idx", 0)

    def backward(self, xp, g):
        self.saved(False)  # (version-checks the kept source, as PyTorch's node does)
        nf = self.next_functions
        gs = None
        if nf[1][0] is not None:
            gs = xp.index_select(g, self._dim, self._idx)
            if self._alpha != 1:
                gs = gs * self._alpha
            src_shape = self._meta[1][0]
            if src_shape != gs.shape:
                gs = xp.reshape(gs, src_shape)
        return (g if nf[0][0] is not None else None), gs


def _check_source(op, a, s, d, idx, *, copy=False):
    n = _as1d(s).shape[d] if s.ndim or a.ndim <= 1 else None
    if copy:
        if idx.size != (s.shape[d] if s.ndim else 1):
            raise IndexError(
                f"index_copy_(): Number of indices ({idx.size}) should be equal to "
                f"source.size(dim) ({s.shape[d] if s.ndim else 1})"
            )
    elif n is None or idx.size != n:
        raise RuntimeError(
            f"{op}(): Number of indices ({idx.size}) should be equal to source.size(dim): "
            f"({n}), for dim: {d}"
        )
    ash = [k for j, k in enumerate(_as1d(a).shape) if j != d]
    ssh = [k for j, k in enumerate(_as1d(s).shape) if j != d]
    if ash != ssh:
        if copy:
            j = next((j for j, (p, q) in enumerate(zip(ash, ssh)) if p != q), 0)
            raise RuntimeError(
                "index_copy_(): Source/destination tensor must have same slice shapes. "
                f"Destination slice shape: {ash[j] if ash else 1} at dimension {j} and source "
                f"slice shape: {ssh[j] if ssh else 1} at dimension {j}."
            )
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(a.shape)} source.shape = {list(s.shape)}"
        )


def index_add(input, dim, index, source, *, alpha=1) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``alpha * source`` added to the slices along ``dim`` at
    ``index`` (repeats add up).

    >>> import retrograd as torch
    >>> torch.zeros(3).index_add(0, torch.tensor([0, 0, 2]), torch.tensor([1., 2., 3.]))
    tensor([3., 0., 3.])
    """
    a, s = input._data, source._data
    idx = _idx_of(index)
    if not _is_int_index(idx):
        raise RuntimeError(
            f"index_add_(): Expected dtype int32/int64 for index but got: {_legacy(idx)}"
        )
    if idx.ndim > 1:
        raise IndexError(
            f"index_add_(): Index is supposed to be a vector, but got dim: {idx.ndim} with "
            f"type: {_legacy(idx)} and size: {list(idx.shape)}"
        )
    if s.dtype != a.dtype:
        raise RuntimeError(
            f"index_add_(): self ({_legacy(a)}) and source ({_legacy(s)}) must have the same "
            "scalar type"
        )
    d, size = _dim_index(a, dim)
    idx = _as1d(idx).astype(np.int64, copy=False)
    _check_source("index_add_", a, s, d, idx)
    _check_bounds(idx, d, size)
    out = _as1d(a).copy()
    v = _as1d(s)
    if alpha != 1:
        v = (v * alpha).astype(a.dtype)
    add_at(out, _along(d, idx), v)
    out = out.reshape(a.shape)
    return apply(IndexAddBackward0, out, input, source, save=(kept_if_grad(source),), _idx=idx,
                 _dim=d, _alpha=alpha)


class IndexCopyBackward0(Node):
    _packs = ("_idx", 0)

    def backward(self, xp, g):
        self.saved(False)  # (version-checks the kept source, as PyTorch's node does)
        nf = self.next_functions
        idx = self._idx
        gx = xp.index_fill(g, self._dim, idx, 0.0) if nf[0][0] is not None else None
        gs = None
        if nf[1][0] is not None:
            gs = xp.index_select(g, self._dim, idx)
            src_shape = self._meta[1][0]
            if src_shape != gs.shape:
                gs = xp.reshape(gs, src_shape)
        return gx, gs


@promote
def index_copy(input, dim, index, source) -> Tensor:  # noqa: A002
    """A copy of ``input`` with the slices along ``dim`` at ``index`` replaced by ``source``.

    >>> import retrograd as torch
    >>> torch.zeros(3).index_copy(0, torch.tensor([2, 0]), torch.tensor([1., 2.]))
    tensor([2., 0., 1.])
    """
    a, s = input._data, source._data
    idx = _idx_of(index)
    if idx.dtype != np.int64:
        raise RuntimeError(
            f"index_copy_(): Expected a long tensor for index, but got {_legacy(idx)}"
        )
    if idx.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
    d, size = _dim_index(a, dim)
    idx = _as1d(idx)
    _check_source("index_copy_", a, s, d, idx, copy=True)
    if s.dtype != a.dtype:
        raise RuntimeError(
            "index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{_legacy(a)} and (source) {_legacy(s)}"
        )
    _check_bounds(idx, d, size, prefix="index_copy_(): ", exc=IndexError)
    out = _as1d(a).copy()
    out[_along(d, idx)] = _as1d(s)
    out = out.reshape(a.shape)
    return apply(IndexCopyBackward0, out, input, source, save=(kept_if_grad(source),), _idx=idx,
                 _dim=d)


class IndexFillBackward0(Node):
    """index_fill with a number."""

    _packs = ("_idx",)

    def backward(self, xp, g):
        return xp.index_fill(g, self._dim, self._idx, 0.0)


class IndexFillBackward1(Node):
    """index_fill with a 0-dim tensor."""

    _packs = ("_idx",)

    def backward(self, xp, g):
        nf = self.next_functions
        idx = self._idx
        gx = xp.index_fill(g, self._dim, idx, 0.0) if nf[0][0] is not None else None
        gv = None
        if nf[1][0] is not None:
            # Each filled place counts once, however often the index repeats it.
            gv = xp.sum(xp.index_select(g, self._dim, np.unique(idx)))
        return gx, gv


def index_fill(input, dim, index, value) -> Tensor:  # noqa: A002
    """A copy of ``input`` with the slices along ``dim`` at ``index`` set to ``value``.

    >>> import retrograd as torch
    >>> torch.zeros(2, 3).index_fill(1, torch.tensor([0, 2]), 5.0)
    tensor([[5., 0., 5.],
            [5., 0., 5.]])
    """
    a = input._data
    idx = _idx_of(index)
    if idx.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if idx.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    vt = isinstance(value, Tensor)
    if vt and value._data.ndim != 0:
        raise RuntimeError(
            "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value._data.ndim} dimension(s)."
        )
    d, size = _dim_index(a, dim)
    idx = _as1d(idx)
    _check_bounds(idx, d, size, low=-size, exc=IndexError)
    idx = np.where(idx < 0, idx + size, idx)
    out = _as1d(a).copy()
    v = value._data if vt else scalar_value(value)
    out[_along(d, idx)] = np.asarray(v).astype(a.dtype)
    out = out.reshape(a.shape)
    if vt:
        return apply(IndexFillBackward1, out, input, value, save=(), _idx=idx, _dim=d, _g=index)
    return apply(IndexFillBackward0, out, input, save=(), _idx=idx, _dim=d, _g=index)


# -- masks --------------------------------------------------------------------------------------


def _mask_of(mask) -> np.ndarray:
    return mask._data if isinstance(mask, Tensor) else np.asarray(mask)


def _bshape(a, b) -> tuple:
    try:
        return np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise RuntimeError(_size_mismatch(a.shape, b.shape)) from None


class MaskedFillBackward0(Node):
    """masked_fill with a number."""

    _packs = ("_mask",)

    def backward(self, xp, g):
        return xp.where(self._mask, 0.0, g)


class MaskedFillBackward1(Node):
    """masked_fill with a 0-dim tensor."""

    _packs = ("_mask",)

    def backward(self, xp, g):
        nf = self.next_functions
        m = self._mask
        gx = xp.where(m, 0.0, g) if nf[0][0] is not None else None
        gv = xp.sum(xp.where(m, g, 0.0)) if nf[1][0] is not None else None
        return gx, gv


def masked_fill(input, mask, value, _inplace: bool = False) -> Tensor:  # noqa: A002
    """``value`` where ``mask`` is True, ``input`` elsewhere.

    >>> import retrograd as torch
    >>> torch.tensor([1., 2.]).masked_fill(torch.tensor([True, False]), 0.)
    tensor([0., 2.])
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("masked_fill", input._data.dtype)  # uint16/32/64
    m = _mask_of(mask)
    if m.dtype.kind != "b":
        d = FROM_NP.get(m.dtype)  # a mask given as a list may hold a type retrograd lacks
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{d.c_name if d else m.dtype.name}"
        )
    a = input._data
    vt = isinstance(value, Tensor)
    if vt:
        if value._data.ndim != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value._data.ndim} dimension(s)."
            )
        v = value._data.astype(a.dtype)
    else:
        sv = scalar_value(value)
        v = np.asarray(checked_scalar(sv, a.dtype) if sv is not None else value).astype(a.dtype)
    # PyTorch's messages name the mask first, or the tensor written into first.
    _bshape(a, m) if _inplace else _bshape(m, a)
    out = c_order(np.where(m, v, a))  # (contiguous, as PyTorch's clone-then-fill)
    if vt:
        return apply(MaskedFillBackward1, out, input, value, save=(), _mask=m)
    return apply(MaskedFillBackward0, out, input, save=(), _mask=m)


def _given_mask(node, m):
    """The mask as the call gave it (PyTorch saves that one), not broadcast."""
    return _mask_of(node._g)


def _broadcast_mask(node, m):
    return np.broadcast_to(m, np.broadcast_shapes(node._meta[0][0], m.shape))


class MaskedSelectBackward0(Node):
    _packs = (("_mask", _given_mask, _broadcast_mask), 0)

    def backward(self, xp, g):
        self.saved(False)  # (version-checks the kept input, as PyTorch's node does)
        # Zeros of the broadcast shape (the mask's, as saved); the engine sums it down to the
        # input's.
        m = self._mask
        return xp.masked_scatter(xp.zeros_meta((m.shape, self._meta[0][1])), m, g)


def masked_select(input, mask) -> Tensor:  # noqa: A002
    """The elements of ``input`` where ``mask`` (broadcast with it) is True, as a 1-D tensor.

    >>> import retrograd as torch
    >>> torch.masked_select(torch.tensor([1, 2, 3]), torch.tensor([True, False, True]))
    tensor([1, 3])
    """
    m = _mask_of(mask)
    if m.dtype.kind != "b":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    a = input._data
    shape = _bshape(m, a)  # PyTorch names the mask "tensor a" in its mismatch error
    ab = np.broadcast_to(a, shape) if a.shape != shape else a
    mb = np.broadcast_to(m, shape) if m.shape != shape else m
    return apply(MaskedSelectBackward0, ab[mb], input, save=(input,), _mask=mb, _g=mask)


class MaskedScatterBackward0(Node):
    _packs = (("_mask", _given_mask, _broadcast_mask),)

    def backward(self, xp, g):
        nf = self.next_functions
        m = self._mask
        gx = xp.where(m, 0.0, g) if nf[0][0] is not None else None
        gs = None
        if nf[1][0] is not None:
            gs = xp.masked_select(g, m)
            src_shape, dtype = self._meta[1]
            numel, n = int(np.prod(src_shape)), self._n
            if n < numel:
                gs = xp.index_add(xp.zeros_meta(((numel,), dtype)), 0, np.arange(n), gs)
            gs = xp.reshape(gs, src_shape)
        return gx, gs


def masked_scatter(input, mask, source) -> Tensor:  # noqa: A002
    """A copy of ``input`` with the leading elements of ``source``, in order, written where
    ``mask`` is True.

    >>> import retrograd as torch
    >>> torch.zeros(4).masked_scatter(torch.tensor([True, False, True, False]),
    ...                               torch.tensor([1., 2., 3.]))
    tensor([1., 0., 2., 0.])
    """
    m = _mask_of(mask)
    if m.dtype.kind != "b":
        raise RuntimeError(
            "masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{_legacy(m)}"
        )
    a, s = input._data, source._data
    if s.dtype != a.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{_legacy(a)} and {_legacy(s)}"
        )
    shape = _bshape(m, a)  # PyTorch names the mask "tensor a" in its mismatch error
    mb = np.broadcast_to(m, shape) if m.shape != shape else m
    out = np.array(np.broadcast_to(a, shape), order="C")
    n = int(np.count_nonzero(mb))
    if s.size < n:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[mb] = s.reshape(-1)[:n]
    return apply(MaskedScatterBackward0, out, input, source, save=(), _mask=mb, _n=n, _g=mask)


_array.register(
    index_select=_on_arrays(index_select), index_add=_on_arrays(index_add),
    index_fill=_on_arrays(index_fill), masked_select=_on_arrays(masked_select),
    masked_scatter=_on_arrays(masked_scatter),
)

__all__ = ["index_select", "index_add", "index_copy", "index_fill", "masked_fill",
           "masked_select", "masked_scatter"]
XP: list = []
METHODS = {name: globals()[name] for name in __all__}
INPLACE = {name + "_": globals()[name] for name in (
    "index_add", "index_copy", "index_fill", "masked_scatter")}
INPLACE["masked_fill_"] = lambda input, mask, value: masked_fill(input, mask, value, True)
