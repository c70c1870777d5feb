"""Indexing: ``x[...]`` (basic indexing as a chain of views, advanced indexing as a copy),
select and slice, gather-style helpers, masked_fill, nonzero.

Basic indexing decomposes as PyTorch does: ``x[0, 1:]`` is ``select`` then ``slice``, each a view
with its own node, and a full ``:`` is skipped.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, make
from ..autograd.grad_mode import state
from ..autograd.graph import Node
from ._core import as_tensor_arg, asarray, ndarray, record, scalar_value, wrap, wrap_dim
from .shape import alias, make_view, unsqueeze


def _recording(x: Tensor) -> bool:
    return state.grad_enabled and (x._rg or (x._view is not None and x.requires_grad))


class SelectBackward0(Node):
    def backward(self, xp, g):
        return xp.embed_select(g, self._in_shape, self._dim, self._index)


def select(input, dim, index) -> Tensor:  # noqa: A002
    """The slice at ``index`` along ``dim``, without that dim (a view).

    >>> import retrograd as torch
    >>> torch.arange(6).view(2, 3).select(1, 2)
    tensor([2, 5])
    """
    a = input._data
    if a.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, a.ndim)
    size = a.shape[d]
    index = int(index)
    if not -size <= index < size:
        raise IndexError(
            f"index {index} is out of bounds for dimension {d} with size {size}"
        )
    if index < 0:
        index += size
    key = (slice(None),) * d + (index,)
    out = a[key]
    if out.__class__ is not ndarray:
        out = a[key + (Ellipsis,)]
    node = None
    if _recording(input):
        node = SelectBackward0()
        node._in_shape, node._dim, node._index = a.shape, d, index
    return make_view(out, input, ("select", (d, index)), node)


class SliceBackward0(Node):
    def backward(self, xp, g):
        return xp.embed_slice(g, self._in_shape, self._dim, *self._range)


def slice_dim(input, dim, start, stop, step=1) -> Tensor:  # noqa: A002
    """``input[..., start:stop:step, ...]`` along ``dim`` (a view)."""
    a = input._data
    d = wrap_dim(dim, a.ndim)
    if step is not None and step <= 0:
        raise ValueError("step must be greater than zero")
    start, stop, step = slice(start, stop, step).indices(a.shape[d])
    stop = max(stop, start)
    out = a[(slice(None),) * d + (slice(start, stop, step),)]
    node = None
    if _recording(input):
        node = SliceBackward0()
        node._in_shape, node._dim, node._range = a.shape, d, (start, stop, step)
    return make_view(out, input, ("slice_dim", (d, start, stop, step)), node)


def narrow(input, dim, start, length) -> Tensor:  # noqa: A002
    return slice_dim(input, dim, start, int(start) + int(length), 1)


def _is_basic(item) -> bool:
    if item is None or item is Ellipsis or isinstance(item, slice):
        return True
    if isinstance(item, (bool, np.bool_)):
        return False
    if isinstance(item, (int, np.integer)):
        return True
    if isinstance(item, Tensor):
        return item._data.ndim == 0 and item._data.dtype.kind in "iu"
    return False


def _to_np_index(item):
    if isinstance(item, Tensor):
        arr = item._data
        if arr.dtype.kind not in "iub":
            raise IndexError(
                "tensors used as indices must be long, int, byte or bool tensors"
            )
        return arr
    if isinstance(item, (list, tuple)):
        arr = np.asarray([_to_np_index(i) if isinstance(i, Tensor) else i for i in item])
        if arr.dtype.kind == "f":
            raise IndexError(
                "tensors used as indices must be long, int, byte or bool tensors"
            )
        return arr
    if isinstance(item, float):
        raise IndexError(
            "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
            "valid indices (got float)"
        )
    return item


def _basic(x: Tensor, index: tuple, skip_full: bool) -> Tensor:
    ndim = x._data.ndim
    consumed = sum(1 for i in index if i is not None and i is not Ellipsis)
    if consumed > ndim:
        raise IndexError(
            f"too many indices for tensor of dimension {ndim}"
        )
    if sum(1 for i in index if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    r = x
    dim = 0
    for item in index:
        if item is None:
            r = unsqueeze(r, dim)
            dim += 1
        elif item is Ellipsis:
            dim += ndim - consumed
        elif isinstance(item, slice):
            start, stop, step = item.start, item.stop, item.step
            if step is not None and int(step) <= 0:
                raise ValueError("step must be greater than zero")
            size = r._data.shape[dim]
            # PyTorch skips a full ``:`` inside a multi-part index, not on its own.
            if skip_full and (start in (None, 0)) and (stop is None or (int(stop) >= size)) \
                    and step in (None, 1):
                dim += 1
                continue
            r = slice_dim(r, dim, None if start is None else int(start),
                          None if stop is None else int(stop), 1 if step is None else int(step))
            dim += 1
        else:
            r = select(r, dim, int(item))
    if r is x:
        return alias(x)
    return r


class IndexBackward0(Node):
    def backward(self, xp, g):
        return xp.scatter_into(g, self._index, self._in_shape)


def _normalize_index(index):
    if not isinstance(index, tuple):
        index = (index,)
    return index


def getitem(input, index) -> Tensor:  # noqa: A002
    """``input[index]``: PyTorch's (NumPy's) indexing rules.

    >>> import retrograd as torch
    >>> x = torch.arange(6).view(2, 3)
    >>> x[1, 1:]
    tensor([4, 5])
    >>> x[x > 3]
    tensor([4, 5])
    """
    skip_full = isinstance(index, tuple) and len(index) > 1
    index = _normalize_index(index)
    if all(_is_basic(i) for i in index):
        return _basic(input, index, skip_full)
    np_index = tuple(_to_np_index(i) for i in index)
    a = input._data
    try:
        out = a[np_index]
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None
    if out.__class__ is not ndarray:
        out = asarray(out)
    if _recording(input):
        node = IndexBackward0()
        node._index, node._in_shape = np_index, a.shape
        return record(node, out, input)
    return make(out)


def is_basic_index(index) -> bool:
    return all(_is_basic(i) for i in _normalize_index(index))


def np_index(index) -> tuple:
    return tuple(_to_np_index(i) for i in _normalize_index(index))


class IndexPutBackward0(Node):
    def backward(self, xp, g):
        nf = self.next_functions
        gx = xp.index_zero(g, self._index) if nf[0][0] is not None else None
        gv = xp.getitem(g, self._index) if nf[1][0] is not None else None
        return gx, gv


def index_put(input, index, values) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``values`` written at ``index`` (advanced indexing)."""
    idx = np_index(index) if not (isinstance(index, tuple) and
                                  all(isinstance(i, ndarray) for i in index)) else index
    values = values if isinstance(values, Tensor) else as_tensor_arg(
        np.asarray(scalar_value(values) if scalar_value(values) is not None else values,
                   dtype=input._data.dtype))
    out = input._data.copy()
    try:
        out[idx] = values._data
    except ValueError as e:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(values._data.shape)} cannot be "
            f"broadcast to indexing result of shape {list(out[idx].shape)}"
        ) from e
    if state.grad_enabled and (input.requires_grad or values.requires_grad):
        node = IndexPutBackward0()
        node._index = idx
        node._shapes = (input._data.shape, values._data.shape)
        if values._data.dtype != out.dtype:
            node._dtypes = (out.dtype, values._data.dtype)
        return record(node, out, input, values)
    return make(out)


# -- the backward ops of indexing, themselves differentiable -----------------------------------


class SelectBackwardBackward0(Node):
    def backward(self, xp, g):
        return xp.select(g, self._dim, self._index)


def embed_select(g, shape, dim, index) -> Tensor:
    """Zeros of ``shape`` with ``g`` at ``index`` along ``dim`` (select's backward)."""
    out = np.zeros(shape, g._data.dtype)
    out[(slice(None),) * dim + (index,)] = g._data
    if _recording(g):
        node = SelectBackwardBackward0()
        node._dim, node._index = dim, index
        return record(node, out, g)
    return make(out)


class SliceBackwardBackward0(Node):
    def backward(self, xp, g):
        return xp.slice_dim(g, self._dim, *self._range)


def embed_slice(g, shape, dim, start, stop, step) -> Tensor:
    """Zeros of ``shape`` with ``g`` in a slice along ``dim`` (slice's backward)."""
    out = np.zeros(shape, g._data.dtype)
    out[(slice(None),) * dim + (slice(start, stop, step),)] = g._data
    if _recording(g):
        node = SliceBackwardBackward0()
        node._dim, node._range = dim, (start, stop, step)
        return record(node, out, g)
    return make(out)


class IndexBackwardBackward0(Node):
    def backward(self, xp, g):
        return xp.getitem(g, self._index)


def scatter_into(g, index, shape) -> Tensor:
    """Zeros of ``shape`` with ``g`` added at an advanced ``index`` (indexing's backward)."""
    out = np.zeros(shape, g._data.dtype)
    np.add.at(out, index, g._data)
    if _recording(g):
        node = IndexBackwardBackward0()
        node._index = index
        node._shapes = ()
        return record(node, out, g)
    return make(out)


class IndexZeroBackward(Node):
    _name = "IndexPutBackward0"

    def backward(self, xp, g):
        return xp.index_zero(g, self._index)


def index_zero(g, index) -> Tensor:
    """``g`` with the elements at ``index`` set to zero."""
    out = g._data.copy()
    out[index] = 0
    if _recording(g):
        node = IndexZeroBackward()
        node._index = index
        return record(node, out, g)
    return make(out)


def _along_index(idx: np.ndarray, dim: int) -> tuple:
    """Full advanced index that addresses ``idx`` positions along ``dim``."""
    grids = list(np.indices(idx.shape, sparse=True))
    grids[dim] = idx
    return tuple(grids)


class GatherBackward0(Node):
    def backward(self, xp, g):
        return xp.scatter_along(g, self._idx, self._dim, self._in_shape)


def take_along(input, idx: np.ndarray, dim: int) -> Tensor:  # noqa: A002
    """Gather ``input`` at NumPy indices ``idx`` along ``dim``."""
    out = np.take_along_axis(input._data, idx, axis=dim)
    if _recording(input):
        node = GatherBackward0()
        node._idx, node._dim, node._in_shape = idx, dim, input._data.shape
        return record(node, out, input)
    return make(out)


class ScatterAddBackward0(Node):
    def backward(self, xp, g):
        return xp.take_along(g, self._idx, self._dim)


def scatter_along(g, idx: np.ndarray, dim: int, shape) -> Tensor:
    """Zeros of ``shape`` with ``g`` added at NumPy indices ``idx`` along ``dim``."""
    out = np.zeros(shape, g._data.dtype)
    np.add.at(out, _along_index(idx, dim), g._data)
    if _recording(g):
        node = ScatterAddBackward0()
        node._idx, node._dim = idx, dim
        return record(node, out, g)
    return make(out)


class MaskedFillBackward0(Node):
    def backward(self, xp, g):
        nf = self.next_functions
        gx = xp.where(self._mask, 0.0, g) if nf[0][0] is not None else None
        gv = None
        if len(nf) > 1 and nf[1][0] is not None:
            gv = xp.sum(xp.where(self._mask, g, 0.0))
        return (gx, gv) if len(nf) > 1 else gx


def masked_fill(input, mask, value) -> Tensor:  # noqa: A002
    """``value`` where ``mask`` is True, ``input`` elsewhere.

    >>> import retrograd as torch
    >>> torch.tensor([1., 2.]).masked_fill(torch.tensor([True, False]), 0.)
    tensor([0., 2.])
    """
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype.kind != "b":
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{str(m.dtype)}"
        )
    a = input._data
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value._data.ndim} dimension(s)."
            )
        v = value._data.astype(a.dtype)
    else:
        v = scalar_value(value)
    out = np.where(m, v, a).astype(a.dtype, copy=False)
    if out.shape != a.shape:
        raise RuntimeError(
            f"The size of tensor a ({a.shape}) must match the size of tensor b ({m.shape})"
        )
    vt = isinstance(value, Tensor)
    if state.grad_enabled and (input.requires_grad or (vt and value.requires_grad)):
        node = MaskedFillBackward0()
        node._mask = m
        if vt:
            if value._data.dtype != a.dtype:
                node._dtypes = (a.dtype, value._data.dtype)
            return record(node, out, input, value)
        return record(node, out, input)
    return wrap(out)


def nonzero(input, *, as_tuple=False):  # noqa: A002
    """Indices of the non-zero elements: an (n, ndim) tensor, or a tuple of 1-D tensors.

    >>> import retrograd as torch
    >>> torch.nonzero(torch.tensor([0, 3, 0, 4]))
    tensor([[1],
            [3]])
    """
    a = input._data
    if as_tuple:
        if a.ndim == 0:
            return (make(np.zeros(int(a != 0), np.int64)),)
        return tuple(make(i.astype(np.int64)) for i in np.nonzero(a))
    return make(np.argwhere(a).astype(np.int64))


class EmbedViewBackward(Node):
    _name = "AsStridedScatterBackward0"

    def backward(self, xp, g):
        from .inplace import _replay

        return _replay(xp, g, self._steps)


def embed_view(x, steps, base_shape) -> Tensor:
    """Zeros of ``base_shape`` with ``x`` where a view's ``steps`` point (CopySlices' helper)."""
    from . import _array

    out = np.zeros(base_shape, x._data.dtype)
    _array.replay(out, steps)[...] = x._data
    if _recording(x):
        node = EmbedViewBackward()
        node._steps = steps
        return record(node, out, x)
    return make(out)


__all__ = ["select", "narrow", "masked_fill", "nonzero"]
XP = ["getitem", "slice_dim", "index_put", "embed_select", "embed_slice", "embed_view",
      "scatter_into", "index_zero", "take_along", "scatter_along"]
METHODS = {name: globals()[name] for name in __all__}
INPLACE = {"masked_fill_": masked_fill}
