"""Indexing: ``x[...]`` (basic indexing as a chain of views, advanced indexing as a copy),
select and slice, gather-style helpers, masked_fill, nonzero.

Basic indexing decomposes as PyTorch does: ``x[0, 1:]`` is ``select`` then ``slice``, each a view
with its own node, and a full ``:`` is skipped.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._tensor import Tensor, make
from ..autograd.grad_mode import state
from ..autograd.graph import Node
from . import _array
from ._array import add_at
from ._core import asarray, ndarray, record, scalar_value, wrap, wrap_dim
from .inplace import _LEGACY
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
    """``length`` entries of ``dim`` from ``start`` on (a view).

    >>> import retrograd as torch
    >>> torch.arange(5).narrow(0, 1, 3)
    tensor([1, 2, 3])
    """
    return slice_dim(input, dim, start, int(start) + int(length), 1)


def _is_basic(item) -> bool:
    if item is None or item is Ellipsis or isinstance(item, slice):
        return True
    if isinstance(item, (bool, np.bool_)):
        return False
    if isinstance(item, (int, np.integer)):
        return True
    if isinstance(item, Tensor):
        return item._data.ndim == 0 and item._data.dtype.kind in "iu" and \
            item._data.dtype != np.uint8
    return False


_BAD_TENSOR_INDEX = "tensors used as indices must be long, int, byte or bool tensors"


def _seq_array(seq) -> np.ndarray:
    """A list index as an array; PyTorch truncates float entries to integers."""
    arr = np.asarray([i._data if isinstance(i, Tensor) else i for i in seq]) if seq else \
        np.zeros(0, np.int64)
    if arr.dtype.kind == "f":
        arr = arr.astype(np.int64)
    return arr


def _items(index) -> tuple:
    """The index as a tuple of items. As in PyTorch (and old NumPy), a list holding tensors,
    sequences, slices, None or Ellipsis means a tuple."""
    if index.__class__ is tuple:
        return index
    if isinstance(index, list) and len(index) < 32 and any(
            isinstance(i, (Tensor, list, tuple, slice, np.ndarray)) or i is None or i is Ellipsis
            for i in index):
        return tuple(index)
    return (index,)


def _classify(item, adv0d=False):
    """(kind, value): kind is new, ell, bool, int, slice, arr (int array) or mask (bool array)."""
    if item is None:
        return "new", None
    if item is Ellipsis:
        return "ell", None
    if isinstance(item, (bool, np.bool_)):
        return "bool", bool(item)
    if isinstance(item, (int, np.integer)):
        return "int", int(item)
    if isinstance(item, slice):
        return "slice", item
    if isinstance(item, float):
        raise IndexError(
            "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
            "valid indices (got float)"
        )
    if isinstance(item, Tensor):
        arr = item._data
        if arr.dtype == np.uint8:
            warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                          "torch.bool instead.", UserWarning, stacklevel=4)
            arr = arr.astype(bool)
    elif isinstance(item, (list, tuple)):
        arr = _seq_array(item)
    elif isinstance(item, np.ndarray):
        arr = item
    else:
        raise IndexError(
            "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
            f"valid indices (got {type(item).__name__})"
        )
    kind = arr.dtype.kind
    if kind == "b":
        return ("bool", bool(arr)) if arr.ndim == 0 else ("mask", arr)
    if kind not in "iu":
        raise IndexError(_BAD_TENSOR_INDEX)
    if arr.ndim == 0 and not adv0d and not isinstance(item, (list, tuple)):
        return "int", int(arr)
    return "arr", arr.astype(np.int64, copy=False)


def _full_slice(s: slice, size: int) -> bool:
    return s.start in (None, 0) and (s.stop is None or int(s.stop) >= size) and \
        s.step in (None, 1)


def _check_step(s: slice) -> None:
    if s.step is not None:
        if int(s.step) == 0:
            raise ValueError("slice step cannot be zero")
        if int(s.step) < 0:
            raise ValueError("step must be greater than zero")


_ZERO_STRIDE = np.zeros((), np.int8)


def _parse(index, shape, adv0d: bool = False) -> tuple:
    """Split a PyTorch index into a basic part and an advanced part, as PyTorch applies it.

    PyTorch first applies ints, slices and None as views (an int is a ``select``, even beside
    index tensors, so it never takes part in the advanced-index dimension rules), then indexes
    the view with the tensors. Returns ``(pre, adv, trivial)``: ``pre`` a NumPy basic index,
    ``adv`` a tuple of int arrays and full slices for the view ``a[pre]``, and ``trivial``
    when ``pre`` is no real view (only full slices).
    """
    items = tuple(_classify(i, adv0d) for i in _items(index))
    ndim = len(shape)
    consumed = 0
    n_ell = 0
    for kind, v in items:
        if kind in ("int", "slice", "arr"):
            consumed += 1
        elif kind == "mask":
            consumed += v.ndim
        elif kind == "ell":
            n_ell += 1
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    pre = []
    adv = []   # (view dim, int array) or (view dim, mask)
    trivial = True
    d = s = 0  # the view's dim, the input's dim
    real = 0   # the dim PyTorch's messages count: every item, None included
    for kind, v in items:
        real_here = real
        real += ndim - consumed if kind == "ell" else 1
        if kind == "slice":
            _check_step(v)
            pre.append(v)
            if not _full_slice(v, shape[s]):
                trivial = False
            d += 1
            s += 1
        elif kind == "arr":
            pre.append(slice(None))
            adv.append((d, v))
            d += 1
            s += 1
        elif kind == "int":
            size = shape[s]
            if not -size <= v < size:
                raise IndexError(
                    f"index {v} is out of bounds for dimension {real_here} with size {size}"
                )
            pre.append(v)
            trivial = False
            s += 1
        elif kind == "new":
            pre.append(None)
            trivial = False
            d += 1
        elif kind == "bool":
            # True/False add a dim of size 1 and index it with [0] or [] (PyTorch's rule).
            pre.append(None)
            trivial = False
            adv.append((d, np.zeros(1 if v else 0, np.int64)))
            d += 1
        elif kind == "mask":
            pre.extend([slice(None)] * v.ndim)
            adv.append((d, v))
            d += v.ndim
            s += v.ndim
        else:
            k = ndim - consumed
            pre.extend([slice(None)] * k)
            d += k
            s += k
    pre = tuple(pre)
    vshape = np.broadcast_to(_ZERO_STRIDE, shape)[pre + (Ellipsis,)].shape
    arrays = []
    for d, v in adv:
        if v.dtype.kind == "b":
            vs = list(vshape[d:d + v.ndim])
            if list(v.shape) != vs:
                j = next(k for k, (m, t) in enumerate(zip(v.shape, vs)) if m != t)
                raise IndexError(
                    f"The shape of the mask {list(v.shape)} at index {j} does not match the "
                    f"shape of the indexed tensor {list(vshape)} at index {d + j}"
                )
            arrays.extend((d + j, nz) for j, nz in enumerate(np.nonzero(v)))
        else:
            arrays.append((d, v))
    _check_adv(arrays, vshape)
    key = [slice(None)] * (arrays[-1][0] + 1 if arrays else 0)
    for d, v in arrays:
        key[d] = v
    return pre, tuple(key), trivial


def _check_adv(arrays, vshape) -> None:
    """PyTorch's errors for index tensors that do not broadcast or point out of bounds."""
    try:
        bshape = np.broadcast_shapes(*(v.shape for _, v in arrays))
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(str(list(v.shape)) for _, v in arrays)
        ) from None
    bad = [(d, v) for d, v in arrays
           if v.size and (v.min() < -vshape[d] or v.max() >= vshape[d])]
    if not bad:
        return
    # PyTorch walks the elements in order and reports the first bad index of the first one.
    oob = np.stack([np.broadcast_to((v < -vshape[d]) | (v >= vshape[d]), bshape)
                    for d, v in arrays])
    flat = oob.reshape(len(arrays), -1)
    pos = int(np.argmax(flat.any(axis=0)))
    j = int(np.argmax(flat[:, pos]))
    d, v = arrays[j]
    value = int(np.broadcast_to(v, bshape).reshape(-1)[pos])
    raise IndexError(f"index {value} is out of bounds for dimension {j} with size {vshape[d]}")


def _basic(x: Tensor, index: tuple, skip_full: bool) -> Tensor:
    """Apply ints, slices, None and Ellipsis as a chain of views (PyTorch's order)."""
    ndim = x._data.ndim
    consumed = sum(1 for i in index if i is not None and i is not Ellipsis)
    if consumed > ndim:
        if ndim == 0 and consumed == 1 and not isinstance(index[0], slice):
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
            )
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if sum(1 for i in index if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    r = x
    dim = real = 0  # the view's dim, and the dim PyTorch's error messages count (None counts)
    for item in index:
        if item is None:
            r = unsqueeze(r, dim)
            dim += 1
            real += 1
            continue
        if item is Ellipsis:
            dim += ndim - consumed
            real += ndim - consumed
            continue
        real += 1
        if isinstance(item, slice):
            _check_step(item)
            start, stop, step = item.start, item.stop, item.step
            # PyTorch skips a full ``:`` inside a multi-part index, not on its own.
            if skip_full and _full_slice(item, r._data.shape[dim]):
                dim += 1
                continue
            r = slice_dim(r, dim, None if start is None else int(start),
                          None if stop is None else int(stop), 1 if step is None else int(step))
            dim += 1
        else:
            i, size = int(item), r._data.shape[dim]
            if not -size <= i < size:
                raise IndexError(
                    f"index {i} is out of bounds for dimension {real - 1} with size {size}"
                )
            r = select(r, dim, i)
    return r


class IndexBackward0(Node):
    def backward(self, xp, g):
        return xp.scatter_into(g, self._index, self._in_shape)


def getitem(input, index) -> Tensor:  # noqa: A002
    """``input[index]``: PyTorch's (NumPy's) indexing rules.

    Ints, slices, None and Ellipsis give views; integer and boolean tensors (and lists) give a
    copy. Separated index tensors put their broadcast dims first, adjacent ones keep their
    place.

    >>> import retrograd as torch
    >>> x = torch.arange(6).view(2, 3)
    >>> x[1, 1:]
    tensor([4, 5])
    >>> x[x > 3]
    tensor([4, 5])
    >>> x[[0, 1], [2, 0]]
    tensor([2, 3])
    """
    if index.__class__ is tuple:
        if all(_is_basic(i) for i in index):
            r = _basic(input, index, len(index) > 1)
            return alias(input) if r is input else r
    elif _is_basic(index):
        r = _basic(input, (index,), False)
        return alias(input) if r is input else r
    pre, key, trivial = _parse(index, input._data.shape)
    r = input if trivial else _basic(input, pre, True)
    out = r._data[key]
    if out.__class__ is not ndarray:
        out = asarray(out)
    if _recording(r):
        node = IndexBackward0()
        node._index, node._in_shape = key, r._data.shape
        return record(node, out, r)
    return make(out)


def is_basic_index(index) -> bool:
    if index.__class__ is tuple:
        return all(_is_basic(i) for i in index)
    return _is_basic(index) and not isinstance(index, list)


class _SetIndex:
    """An index as ``x[index] = v`` received it; resolved against the tensor by index_put."""

    __slots__ = ("index",)

    def __init__(self, index) -> None:
        self.index = index


def np_index(index) -> _SetIndex:
    return _SetIndex(index)


class IndexPutBackward0(Node):
    def backward(self, xp, g):
        nf = self.next_functions
        gx = None
        if nf[0][0] is not None:
            gx = g if self._accumulate else xp.key_zero(g, self._key)
        if len(nf) == 1:
            return gx
        gv = xp.key_get(g, self._key) if nf[1][0] is not None else None
        return gx, gv


_COPY_SLICES = "torch::autograd::CopySlices"


def _key_view(out: np.ndarray, key):
    return out[key[0] + (Ellipsis,)] if key[0] else out


def index_put(input, indices, values, accumulate: bool = False) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``values`` written (or with ``accumulate``, added) at
    ``indices``, a tuple of index tensors (None for a whole dim).

    >>> import retrograd as torch
    >>> torch.zeros(4).index_put((torch.tensor([0, 2, 2]),), torch.tensor(1.), accumulate=True)
    tensor([1., 0., 2., 0.])
    """
    a = input._data
    setitem = isinstance(indices, _SetIndex)
    if setitem:
        pre, adv, trivial = _parse(indices.index, a.shape)
    else:
        if isinstance(indices, Tensor):
            indices = (indices,)
        items = tuple(slice(None) if i is None else i for i in indices)
        pre, adv, trivial = _parse(items, a.shape, True)
    key = (pre, adv)
    if isinstance(values, Tensor):
        v = values._data
    else:
        sv = scalar_value(values)
        v = np.asarray(sv if sv is not None else values, dtype=a.dtype)
        values = None
    out = a.copy()
    view = _key_view(out, key)
    target = view[adv]
    try:
        np.broadcast_to(v, target.shape)
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(v.shape)} cannot be broadcast to "
            f"indexing result of shape {list(target.shape)}"
        ) from None
    if values is not None and v.dtype != a.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_LEGACY[a.dtype.name]} for the destination and "
            f"{_LEGACY[v.dtype.name]} for the source."
        )
    if accumulate:
        add_at(view, adv, v)
    else:
        view[adv] = v
    if state.grad_enabled and (input.requires_grad or (values is not None and
                                                       values.requires_grad)):
        node = IndexPutBackward0()
        node._key, node._accumulate = key, bool(accumulate)
        if setitem and not trivial:
            # PyTorch writes through a view of the basic part: its node is CopySlices.
            node._name = _COPY_SLICES
        if values is None:  # a number: PyTorch still gives the node an (empty) second edge
            return record(node, out, input, None)
        node._shapes = (a.shape, v.shape)
        return record(node, out, input, values)
    return make(out)


def _key_get(x, key):
    return _key_view(x, key)[key[1]]


def _key_add(g, key, shape):
    out = np.zeros(shape, g.dtype)
    add_at(_key_view(out, key), key[1], g)
    return out


def _key_zero(g, key):
    out = np.array(g, copy=True)
    _key_view(out, key)[key[1]] = 0
    return out


class _KeyGetBackward(Node):
    _name = "IndexBackward0"

    def backward(self, xp, g):
        return xp.key_add(g, self._key, self._in_shape)


def key_get(x, key) -> Tensor:
    """``x`` indexed by a resolved key (index_put's backward for the values)."""
    out = asarray(_key_get(x._data, key))
    if _recording(x):
        node = _KeyGetBackward()
        node._key, node._in_shape = key, x._data.shape
        return record(node, out, x)
    return make(out)


class _KeyAddBackward(Node):
    _name = "IndexPutBackward0"

    def backward(self, xp, g):
        return xp.key_get(g, self._key)


def key_add(g, key, shape) -> Tensor:
    """Zeros of ``shape`` with ``g`` added at a resolved key."""
    out = _key_add(g._data, key, shape)
    if _recording(g):
        node = _KeyAddBackward()
        node._key = key
        return record(node, out, g)
    return make(out)


class _KeyZeroBackward(Node):
    _name = "IndexPutBackward0"

    def backward(self, xp, g):
        return xp.key_zero(g, self._key)


def key_zero(g, key) -> Tensor:
    """``g`` with zeros at a resolved key."""
    out = _key_zero(g._data, key)
    if _recording(g):
        node = _KeyZeroBackward()
        node._key = key
        return record(node, out, g)
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
    add_at(out, index, g._data)
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


def take_along(input, idx: np.ndarray, dim: int) -> Tensor:  # noqa: A002
    """Gather ``input`` at NumPy indices ``idx`` along ``dim``."""
    out = np.take_along_axis(input._data, idx, axis=dim)
    if _recording(input):
        node = GatherBackward0()
        node._idx, node._dim, node._in_shape = idx, dim, input._data.shape
        return record(node, out, input)
    return make(out)


def scatter_along(g, idx: np.ndarray, dim: int, shape) -> Tensor:
    """Zeros of ``shape`` with ``g`` added at NumPy indices ``idx`` along ``dim``."""
    out = np.zeros(shape, g._data.dtype)
    add_at(out, _along_index(idx, dim), g._data)
    if _recording(g):
        node = ScatterAddBackward0()
        node._idx, node._dim = idx, dim
        return record(node, out, g)
    return make(out)


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


# -- gather / scatter ---------------------------------------------------------------------------


def _idx_of(index) -> np.ndarray:
    """The array of an index argument: a tensor, or (inside backward formulas) an array."""
    if isinstance(index, Tensor):
        return index._data
    return index if isinstance(index, ndarray) else np.asarray(index)


def _legacy(arr) -> str:
    return _LEGACY.get(arr.dtype.name, arr.dtype.name)


def _is_int_index(idx: np.ndarray, int32_ok: bool = True) -> bool:
    return idx.dtype == np.int64 or (int32_ok and idx.dtype == np.int32)


def _as1d(a: np.ndarray) -> np.ndarray:
    return a.reshape(1) if a.ndim == 0 else a


def _first_oob(idx: np.ndarray, low: int, high: int):
    bad = (idx < low) | (idx >= high)
    if bad.any():
        return int(idx.reshape(-1)[np.argmax(bad.reshape(-1))])
    return None


def _check_bounds(idx, d, size, low=0, prefix="", exc=RuntimeError) -> None:
    if idx.size:
        v = _first_oob(idx, low, size)
        if v is not None:
            raise exc(f"{prefix}index {v} is out of bounds for dimension {d} with size {size}")


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
    def backward(self, xp, g):
        if self.__dict__.get("_meta") is None:  # take_along's node: same-shaped indices
            return xp.scatter_along(g, self._idx, self._dim, self._in_shape)
        return xp.scatter_add(xp.zeros_meta(self._meta), self._dim, self._idx, g)


def gather(input, dim, index, *, sparse_grad: bool = False) -> Tensor:  # noqa: A002
    """Values of ``input`` along ``dim`` at ``index``: ``out[i][j] = input[index[i][j]][j]``
    for ``dim=0``.

    >>> import retrograd as torch
    >>> torch.gather(torch.tensor([[1, 2], [3, 4]]), 1, torch.tensor([[0, 0], [1, 0]]))
    tensor([[1, 1],
            [4, 3]])
    """
    a = input._data
    d, idx, grids = _scatter_args("gather", a, dim, index, None, gather=True)
    ishape = _idx_of(index).shape
    out = _as1d(a)[grids].reshape(ishape)
    if _recording(input):
        node = GatherBackward0()
        node._idx, node._dim, node._meta = idx.reshape(ishape), d, (a.shape, a.dtype)
        return record(node, out, input)
    return make(out)


class ScatterBackward0(Node):
    """scatter with a src tensor."""

    def backward(self, xp, g):
        nf = self.next_functions
        gx = xp.scatter(g, self._dim, self._idx, 0.0) if nf[0][0] is not None else None
        gs = None
        if nf[1][0] is not None:
            _check_src_grad(self)
            gs = xp.gather(g, self._dim, self._idx)
        return gx, gs


class ScatterBackward1(Node):
    """scatter with a value."""

    def backward(self, xp, g):
        return xp.scatter(g, self._dim, self._idx, 0.0)


class _ScatterNotImplemented(Node):
    _name = "torch::autograd::NotImplemented"

    def backward(self, xp, g):
        raise RuntimeError("derivative for aten::scatter is not implemented")


def _check_same_dtype(a, s, op) -> None:
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
    d, idx, grids = _scatter_args("scatter", a, dim, index, src._data.shape if is_t else None)
    out = _as1d(a).copy()
    if is_t:
        _check_same_dtype(a, src._data, "scatter")
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
    if state.grad_enabled and (input.requires_grad or (is_t and src.requires_grad)):
        if reduce is not None:
            node = _ScatterNotImplemented()
            return record(node, out, input, src) if is_t else record(node, out, input)
        ishape = _idx_of(index).shape
        node = ScatterBackward0() if is_t else ScatterBackward1()
        node._idx, node._dim = idx.reshape(ishape), d
        if is_t:
            _src_grad_shape(node, src._data.shape, ishape)
            return record(node, out, input, src)
        return record(node, out, input)
    return make(out)


def _src_grad_shape(node, sshape, ishape) -> None:
    if tuple(sshape) != tuple(ishape):
        node._bad_src = (tuple(ishape), tuple(sshape))


def _check_src_grad(node) -> None:
    bad = node.__dict__.get("_bad_src")
    if bad is not None:
        # PyTorch's formula gives src a gradient of index's shape, which its engine refuses.
        raise RuntimeError(
            f"Function {node.name()} returned an invalid gradient at index 1 - got "
            f"{list(bad[0])} but expected shape compatible with {list(bad[1])}"
        )


class ScatterAddBackward0(Node):
    def backward(self, xp, g):
        if self.__dict__.get("_meta", 0) == 0:  # scatter_along's node
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
    s = src._data
    d, idx, grids = _scatter_args("scatter", a, dim, index, s.shape)
    _check_same_dtype(a, s, "scatter")
    out = _as1d(a).copy()
    add_at(out, grids, _src_part(s, idx.shape))
    out = out.reshape(a.shape)
    if state.grad_enabled and (input.requires_grad or src.requires_grad):
        node = ScatterAddBackward0()
        node._idx, node._dim, node._meta = idx.reshape(_idx_of(index).shape), d, None
        _src_grad_shape(node, s.shape, node._idx.shape)
        return record(node, out, input, src)
    return make(out)


_REDUCE_UFUNC = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum,
                 "amin": np.minimum}


def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


class ScatterReduceBackward0(Node):
    def backward(self, xp, g):
        nf = self.next_functions
        dim, idx, red, inc = self._dim, self._idx, self._reduce, self._include_self
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
    s = src._data
    d, idx, grids = _scatter_args("scatter", a, dim, index, s.shape)
    _check_same_dtype(a, s, "scatter")
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
        if out.dtype.kind == "f":
            out = (out / count).astype(a.dtype)
        else:
            out = out // count
    out = out.reshape(a.shape)
    if not (state.grad_enabled and (input.requires_grad or src.requires_grad)):
        return make(out)
    node = ScatterReduceBackward0()
    ishape = _idx_of(index).shape
    node._idx, node._dim = idx.reshape(ishape), d
    node._reduce, node._include_self = red, bool(include_self)
    node._scattered = scattered.reshape(a.shape)
    _src_grad_shape(node, s.shape, ishape)
    if red == "mean":
        node._n = count.reshape(a.shape).astype(a.dtype)
    elif red in ("amax", "amin"):
        o1 = _as1d(out)
        self_is = _as1d(a) == o1
        if not include_self:
            self_is &= ~scattered
        src_is = sv == o1[grids]
        n = self_is.astype(a.dtype)
        add_at(n, grids, src_is)
        node._n = np.maximum(n, 1).reshape(a.shape)
        node._self_is, node._src_is = self_is.reshape(a.shape), src_is.reshape(ishape)
    elif red == "prod":
        node.save(input, src)
        node._x_zero = a == 0
        s_zero = sv == 0
        nz = np.zeros(_as1d(a).shape, np.int64)
        add_at(nz, grids, s_zero)
        node._s_zero = s_zero.reshape(ishape)
        node._single = (s_zero & (nz[grids] == 1)).reshape(ishape)
    r = record(node, out, input, src)
    if red == "prod":
        node.save_output(r)
    return r


# -- index_select / index_add / index_copy / index_fill ----------------------------------------


def _dim_index(a, dim):
    d = wrap_dim(dim, a.ndim)
    return d, _as1d(a).shape[d]


def _along(d: int, idx) -> tuple:
    return (slice(None),) * d + (idx,)


class IndexSelectBackward0(Node):
    def backward(self, xp, g):
        return xp.index_add(xp.zeros_meta(self._meta), self._dim, self._idx, g)


def index_select(input, dim, index) -> Tensor:  # noqa: A002
    """The slices of ``input`` along ``dim`` at the positions in the 1-D ``index``.

    >>> import retrograd as torch
    >>> torch.arange(6).view(2, 3).index_select(1, torch.tensor([2, 0]))
    tensor([[2, 0],
            [5, 3]])
    """
    a = input._data
    idx = _idx_of(index)
    if not _is_int_index(idx):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d, size = _dim_index(a, dim)
    idx = _as1d(idx).astype(np.int64, copy=False)
    if a.ndim == 0 and idx.size != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)"
        )
    if idx.size and _first_oob(idx, 0, size) is not None:
        raise IndexError("index out of range in self")
    out = np.take(_as1d(a), idx, axis=d)
    if a.ndim == 0:
        out = out.reshape(())
    if _recording(input):
        node = IndexSelectBackward0()
        node._idx, node._dim, node._meta = idx, d, (a.shape, a.dtype)
        return record(node, out, input)
    return make(out)


class IndexAddBackward0(Node):
    def backward(self, xp, g):
        nf = self.next_functions
        gs = None
        if nf[1][0] is not None:
            gs = xp.index_select(g, self._dim, self._idx)
            if self._alpha != 1:
                gs = gs * self._alpha
            if self._src_shape != gs.shape:
                gs = xp.reshape(gs, self._src_shape)
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
    if state.grad_enabled and (input.requires_grad or source.requires_grad):
        node = IndexAddBackward0()
        node._idx, node._dim, node._alpha, node._src_shape = idx, d, alpha, s.shape
        return record(node, out, input, source)
    return make(out)


class IndexCopyBackward0(Node):
    def backward(self, xp, g):
        nf = self.next_functions
        gx = xp.index_fill(g, self._dim, self._idx, 0.0) if nf[0][0] is not None else None
        gs = None
        if nf[1][0] is not None:
            gs = xp.index_select(g, self._dim, self._idx)
            if self._src_shape != gs.shape:
                gs = xp.reshape(gs, self._src_shape)
        return gx, gs


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
    if state.grad_enabled and (input.requires_grad or source.requires_grad):
        node = IndexCopyBackward0()
        node._idx, node._dim, node._src_shape = idx, d, s.shape
        return record(node, out, input, source)
    return make(out)


class IndexFillBackward0(Node):
    """index_fill with a number."""

    def backward(self, xp, g):
        return xp.index_fill(g, self._dim, self._idx, 0.0)


class IndexFillBackward1(Node):
    """index_fill with a 0-dim tensor."""

    def backward(self, xp, g):
        nf = self.next_functions
        gx = xp.index_fill(g, self._dim, self._idx, 0.0) if nf[0][0] is not None else None
        gv = None
        if nf[1][0] is not None:
            # Each filled place counts once, however often the index repeats it.
            gv = xp.sum(xp.index_select(g, self._dim, self._unique))
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
    if state.grad_enabled and (input.requires_grad or (vt and value.requires_grad)):
        if vt:
            node = IndexFillBackward1()
            node._unique = np.unique(idx)
            if value._data.dtype != a.dtype:
                node._dtypes = (a.dtype, value._data.dtype)
        else:
            node = IndexFillBackward0()
        node._idx, node._dim = idx, d
        return record(node, out, input, value) if vt else record(node, out, input)
    return make(out)


# -- masks --------------------------------------------------------------------------------------


def _mask_of(mask) -> np.ndarray:
    return mask._data if isinstance(mask, Tensor) else np.asarray(mask)


def _bshape(a, b) -> tuple:
    try:
        return np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise RuntimeError(_size_mismatch(a.shape, b.shape)) from None


def _size_mismatch(sa, sb) -> str:
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    for k in range(n - 1, -1, -1):
        if pa[k] != pb[k] and pa[k] != 1 and pb[k] != 1:
            return (f"The size of tensor a ({pa[k]}) must match the size of tensor b ({pb[k]}) "
                    f"at non-singleton dimension {k}")
    return "shapes do not broadcast"


_C_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "float32": "float", "float64": "double",
            "float16": "c10::Half"}


class MaskedFillBackward0(Node):
    """masked_fill with a number."""

    def backward(self, xp, g):
        return xp.where(self._mask, 0.0, g)


class MaskedFillBackward1(Node):
    """masked_fill with a 0-dim tensor."""

    def backward(self, xp, g):
        nf = self.next_functions
        gx = xp.where(self._mask, 0.0, g) if nf[0][0] is not None else None
        gv = xp.sum(xp.where(self._mask, g, 0.0)) if nf[1][0] is not None else None
        return gx, gv


def masked_fill(input, mask, value) -> Tensor:  # noqa: A002
    """``value`` where ``mask`` is True, ``input`` elsewhere.

    >>> import retrograd as torch
    >>> torch.tensor([1., 2.]).masked_fill(torch.tensor([True, False]), 0.)
    tensor([0., 2.])
    """
    m = _mask_of(mask)
    if m.dtype.kind != "b":
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{_C_NAMES.get(m.dtype.name, m.dtype.name)}"
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
        v = np.asarray(scalar_value(value) if scalar_value(value) is not None else value
                       ).astype(a.dtype)
    _bshape(a, m)
    out = np.where(m, v, a)
    if state.grad_enabled and (input.requires_grad or (vt and value.requires_grad)):
        node = MaskedFillBackward1() if vt else MaskedFillBackward0()
        node._mask = m
        if out.shape != a.shape:
            node._shapes = (a.shape, ())
        if vt:
            if value._data.dtype != a.dtype:
                node._dtypes = (a.dtype, value._data.dtype)
            return record(node, out, input, value)
        return record(node, out, input)
    return wrap(out)


class MaskedSelectBackward0(Node):
    def backward(self, xp, g):
        return xp.masked_scatter(xp.zeros_meta(self._meta), self._mask, g)


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
    shape = _bshape(a, m)
    ab = np.broadcast_to(a, shape) if a.shape != shape else a
    mb = np.broadcast_to(m, shape) if m.shape != shape else m
    out = ab[mb]
    if _recording(input):
        node = MaskedSelectBackward0()
        node._mask, node._meta = mb, (shape, a.dtype)
        if shape != a.shape:
            node._shapes = (a.shape,)
        return record(node, out, input)
    return make(out)


class MaskedScatterBackward0(Node):
    def backward(self, xp, g):
        nf = self.next_functions
        m = self._mask
        gx = xp.where(m, 0.0, g) if nf[0][0] is not None else None
        gs = None
        if nf[1][0] is not None:
            gs = xp.masked_select(g, m)
            numel, n = self._src_numel, self._n
            if n < numel:
                gs = xp.index_add(xp.zeros_meta(((numel,), self._dtype)), 0,
                                  np.arange(n), gs)
            gs = xp.reshape(gs, self._src_shape)
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
    shape = _bshape(a, m)
    mb = np.broadcast_to(m, shape) if m.shape != shape else m
    out = np.array(np.broadcast_to(a, shape))
    n = int(np.count_nonzero(mb))
    if s.size < n:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[mb] = s.reshape(-1)[:n]
    if state.grad_enabled and (input.requires_grad or source.requires_grad):
        node = MaskedScatterBackward0()
        node._mask, node._n, node._src_numel = mb, n, s.size
        node._src_shape, node._dtype = s.shape, a.dtype
        if shape != a.shape:
            node._shapes = (a.shape, s.shape)
        return record(node, out, input, source)
    return make(out)


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
    def backward(self, xp, g):
        return xp.put(xp.zeros_meta(self._meta), self._idx, g, True)


def take(input, index) -> Tensor:  # noqa: A002
    """The elements of ``input``, read as 1-D, at ``index`` (result has ``index``'s shape).

    >>> import retrograd as torch
    >>> torch.take(torch.tensor([[1, 2], [3, 4]]), torch.tensor([0, 3, -1]))
    tensor([1, 4, 4])
    """
    a = input._data
    idx = _flat_index("take", _idx_of(index), a.size)
    out = a.reshape(-1)[idx]
    if _recording(input):
        node = TakeBackward0()
        node._idx, node._meta = idx, (a.shape, a.dtype)
        return record(node, out, input)
    return make(out)


class PutBackward0(Node):
    def backward(self, xp, g):
        nf = self.next_functions
        gx = None
        if nf[0][0] is not None:
            gx = g if self._accumulate else xp.put(g, self._idx, xp.zeros_meta(self._src_meta),
                                                   False)
        gs = xp.reshape(xp.take(g, self._idx), self._src_meta[0]) \
            if nf[1][0] is not None else None
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
    if state.grad_enabled and (input.requires_grad or source.requires_grad):
        node = PutBackward0()
        node._idx, node._accumulate, node._src_meta = idx, bool(accumulate), (s.shape, s.dtype)
        return record(node, out, input, source)
    return make(out)


def take_along_dim(input, indices, dim=None) -> Tensor:  # noqa: A002
    """Values of ``input`` at ``indices`` along ``dim`` (the two broadcast in the other dims);
    with no ``dim``, ``input`` is read as 1-D.

    >>> import retrograd as torch
    >>> x = torch.tensor([[10, 30, 20], [60, 40, 50]])
    >>> torch.take_along_dim(x, x.argmax(1, keepdim=True), 1)
    tensor([[30],
            [60]])
    """
    from .shape import expand, reshape

    idx = _idx_of(indices)
    if idx.dtype != np.int64:
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got {_legacy(idx)}"
        )
    a = input._data
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


def _bc_ok(sa, sb) -> bool:
    try:
        np.broadcast_shapes(tuple(sa), tuple(sb))
        return True
    except ValueError:
        return False


# -- index-valued ops (not differentiable) -----------------------------------------------------


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


def argwhere(input) -> Tensor:  # noqa: A002
    """Indices of the non-zero elements, one row per element (``nonzero``).

    >>> import retrograd as torch
    >>> torch.argwhere(torch.tensor([[0, 1], [2, 0]]))
    tensor([[0, 1],
            [1, 0]])
    """
    return nonzero(input)


def _values_arg(v):
    if isinstance(v, Tensor):
        return v._data, False
    return np.asarray(v), True


def _search(seq: np.ndarray, vals: np.ndarray, side: str, sorter) -> np.ndarray:
    dt = np.result_type(seq.dtype, vals.dtype)
    seq, vals = seq.astype(dt, copy=False), vals.astype(dt, copy=False)
    if seq.ndim == 1:
        if sorter is not None:
            return np.searchsorted(seq, vals, side=side, sorter=sorter)
        return np.searchsorted(seq, vals, side=side)
    n = seq.shape[-1]
    rows = seq.reshape(-1, n)
    vrows = vals.reshape(rows.shape[0], -1)
    srows = sorter.reshape(-1, n) if sorter is not None else None
    out = np.empty(vrows.shape, np.int64)
    for k in range(rows.shape[0]):
        out[k] = np.searchsorted(rows[k], vrows[k], side=side,
                                 sorter=None if srows is None else srows[k])
    return out.reshape(vals.shape)


def searchsorted(sorted_sequence, input, *, out_int32: bool = False,  # noqa: A002
                 right: bool = False, side=None, sorter=None) -> Tensor:
    """Where each of ``input``'s values would go in ``sorted_sequence`` (sorted along its
    last dim) to keep it sorted; ``right=True`` (or ``side='right'``) after equal values.

    >>> import retrograd as torch
    >>> torch.searchsorted(torch.tensor([1, 3, 5, 7]), torch.tensor([3, 6]))
    tensor([1, 3])
    >>> torch.searchsorted(torch.tensor([1, 3, 5, 7]), torch.tensor([3, 6]), right=True)
    tensor([2, 3])
    """
    seq = sorted_sequence._data
    vals, scalar = _values_arg(input)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
            )
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got side of "
                "left while right was True"
            )
        right = side == "right"
    if seq.ndim == 0:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
            "dimension"
        )
    if scalar and seq.ndim != 1:
        raise RuntimeError(
            "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
            f"dimension is 1, but we got boundaries tensor dim({seq.ndim}) and input value's "
            f"dim({vals.ndim}) numel(1)"
        )
    if seq.ndim > 1 and (vals.ndim != seq.ndim or vals.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor {list(vals.shape)}"
        )
    srt = None
    if sorter is not None:
        srt = _idx_of(sorter)
        if srt.dtype != np.int64:
            raise RuntimeError(
                "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                f"{_legacy(srt)}"
            )
        if srt.shape != seq.shape:
            raise RuntimeError(
                "torch.searchsorted(): boundary and sorter must have the same size, but got "
                f"boundary tensor {list(seq.shape)} and got sorter tensor {list(srt.shape)}"
            )
    out = _search(seq, vals, "right" if right else "left", srt)
    return make(np.asarray(out, np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False  # noqa: A002
              ) -> Tensor:
    """The bucket of each of ``input``'s values between the sorted 1-D ``boundaries``:
    ``boundaries[i-1] < x <= boundaries[i]``, or with ``right=True``,
    ``boundaries[i-1] <= x < boundaries[i]``.

    >>> import retrograd as torch
    >>> torch.bucketize(torch.tensor([1, 5, 9]), torch.tensor([1, 3, 5, 7]))
    tensor([0, 2, 4])
    """
    b = boundaries._data
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    vals, _ = _values_arg(input)
    out = _search(b, vals, "right" if right else "left", None)
    return make(np.asarray(out, np.int32 if out_int32 else np.int64))


def one_hot(tensor, num_classes: int = -1) -> Tensor:
    """Class indices as one-hot rows of ``num_classes`` (inferred as max + 1 when -1).

    >>> import retrograd as torch
    >>> from retrograd.ops.indexing import one_hot  # also torch.nn.functional.one_hot
    >>> one_hot(torch.tensor([0, 2]), 3)
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    t = tensor._data
    if t.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if t.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(t.max()) + 1
    if t.size:
        if t.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if t.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return make((t[..., None] == np.arange(num_classes)).astype(np.int64))


# -- array twins of the ops above, for backward formulas (see _array) ---------------------------


def _on_arrays(fn):
    """The NumPy twin of an op: the same call on arrays, returning an array."""

    def array_fn(*args, **kwargs):
        args = [make(x) if x.__class__ is ndarray else x for x in args]
        return fn(*args, **kwargs)._data

    array_fn.__name__ = fn.__name__
    return array_fn


_array.register(
    gather=_on_arrays(gather), scatter=_on_arrays(scatter),
    scatter_add=_on_arrays(scatter_add), scatter_reduce=_on_arrays(scatter_reduce),
    index_select=_on_arrays(index_select), index_add=_on_arrays(index_add),
    index_fill=_on_arrays(index_fill), masked_select=_on_arrays(masked_select),
    masked_scatter=_on_arrays(masked_scatter), take=_on_arrays(take), put=_on_arrays(put),
    key_get=_key_get, key_add=_key_add, key_zero=_key_zero,
)


__all__ = ["select", "narrow", "gather", "scatter", "scatter_add", "scatter_reduce",
           "index_select", "index_add", "index_copy", "index_fill", "index_put", "masked_fill",
           "masked_select", "masked_scatter", "take", "put", "take_along_dim", "nonzero",
           "argwhere", "searchsorted", "bucketize"]
XP = ["getitem", "slice_dim", "embed_select", "embed_slice", "embed_view",
      "scatter_into", "index_zero", "take_along", "scatter_along", "key_get", "key_add",
      "key_zero", "one_hot"]
_NOT_METHODS = {"searchsorted", "bucketize"}
METHODS = {name: globals()[name] for name in __all__ if name not in _NOT_METHODS}
INPLACE = {name + "_": globals()[name] for name in (
    "scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy", "index_fill",
    "index_put", "masked_fill", "masked_scatter", "put")}
