"""Indexing: ``x[...]`` (basic indexing as a chain of views, advanced indexing as a copy),
select, slice and narrow (defined in ``_views``, beneath ``shape``), index_put, the
index-valued ops (nonzero, searchsorted, one_hot), and the index checks the other indexing
families (``scatter_gather``, ``index_ops``) share.

Basic indexing decomposes as PyTorch does: ``x[0, 1:]`` is ``select`` then ``slice``, each a view
with its own node, and a full ``:`` is skipped.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._dtypes import FLOAT_CHARS, WIDE_CHARS
from .._tensor import Tensor, make
from ..autograd.graph import Node
from . import _array
from ._apply import apply
from ._array import add_at
from ._base import legacy, not_implemented
from ._core import arg_error, c_order, ndarray, scalar_value
from ._views import narrow, replay, select, slice_dim
from .shape import alias, unsqueeze


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
    if arr.dtype.char in FLOAT_CHARS:
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


def _parse(index, shape, adv0d: bool = False, bounds: bool = True) -> tuple:
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
    _check_adv(arrays, vshape, bounds)
    key = [slice(None)] * (arrays[-1][0] + 1 if arrays else 0)
    for d, v in arrays:
        key[d] = v
    return pre, tuple(key), trivial


def _check_adv(arrays, vshape, bounds: bool = True) -> None:
    """PyTorch's errors for index tensors that do not broadcast or point out of bounds (the
    elements' bounds only with ``bounds``: index_put checks them after the value's shape and
    dtype; and, as PyTorch's kernel, only where the result has elements)."""
    try:
        bshape = np.broadcast_shapes(*(v.shape for _, v in arrays))
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(str(list(v.shape)) for _, v in arrays)
        ) from None
    if any(vshape[d] == 0 and v.size for d, v in arrays):
        raise IndexError("index is out of bounds for dimension with size 0")
    indexed = {d for d, _ in arrays}
    if not bounds or 0 in bshape or any(
            n == 0 for k, n in enumerate(vshape) if k not in indexed):
        return
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


def _basic(x: Tensor, index: tuple, skip_full: bool, single: bool = False) -> Tensor:
    """Apply ints, slices, None and Ellipsis as a chain of views (PyTorch's order);
    ``single``: the index was one item, not a tuple (PyTorch's 0-dim errors differ)."""
    ndim = x._data.ndim
    consumed = sum(1 for i in index if i is not None and i is not Ellipsis)
    if consumed > ndim:
        if ndim == 0 and single:
            if isinstance(index[0], slice):
                raise IndexError("slice() cannot be applied to a 0-dim tensor.")
            if isinstance(index[0], int) and index[0] != 0:
                raise IndexError(f"index {index[0]} is out of bounds for dimension 0 with size 0")
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
    """Advanced indexing's backward adds ``g`` back at the index. ``key_get`` (index_put's
    backward for the values) is this node too, with its resolved key in ``_key``."""

    _key = None
    _packs = ("=indices",)  # PyTorch saves the index tensors (autograd/saved_hooks.py)

    def backward(self, xp, g):
        if self._key is not None:
            return xp.key_add(g, self._key, self._meta[0][0])
        return xp.scatter_into(g, self._index, self._meta[0][0])


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
        r = _basic(input, (index,), False, True)
        return alias(input) if r is input else r
    pre, key, trivial = _parse(index, input._data.shape)
    r = input if trivial else _basic(input, pre, True)
    try:
        out = r._data[key]
    except IndexError:  # an empty result: PyTorch's kernel reads no index, so checks none
        key = tuple(np.zeros_like(k) if isinstance(k, np.ndarray) else k for k in key)
        out = r._data[key]
    # (contiguous, as PyTorch's index kernel allocates it; NumPy may put the indexed dims first)
    return apply(IndexBackward0, c_order(out), r, save=(), _index=key, _g=index)


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
    """index_put's backward: for the input, ``g`` with zeros at the key (``g`` itself when the
    values were added); for the values, ``g`` at the key.

    The helpers its formulas call are this node too: ``key_zero`` (a put of zeros, whose one
    input is the tensor) and ``key_add`` (an accumulating put into zeros, whose one input is the
    values: ``_into_zeros``).
    """

    _accumulate = False
    _into_zeros = False
    _packs = ("=indices",)

    def backward(self, xp, g):
        key = self._key
        if self._into_zeros:
            return xp.key_get(g, key)
        nf = self.next_functions
        gx = None
        if nf[0][0] is not None:
            gx = g if self._accumulate else xp.key_zero(g, key)
        if len(nf) == 1:
            return gx
        gv = xp.key_get(g, key) if nf[1][0] is not None else None
        return gx, gv


_COPY_SLICES = "torch::autograd::CopySlices"


def _key_view(out: np.ndarray, key):
    return out[key[0] + (Ellipsis,)] if key[0] else out


def _dtype_mismatch(a, v):
    raise RuntimeError(
        "Index put requires the source and destination dtypes match, got "
        f"{legacy(a.dtype)} for the destination and {legacy(v.dtype)} for the source.")


def index_put(input, indices, values, accumulate: bool = False) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``values`` written (or with ``accumulate``, added) at
    ``indices``, a tuple of index tensors (None for a whole dim).

    >>> import retrograd as torch
    >>> torch.zeros(4).index_put((torch.tensor([0, 2, 2]),), torch.tensor(1.), accumulate=True)
    tensor([1., 0., 2., 0.])
    """
    a = input._data
    setitem = isinstance(indices, _SetIndex)
    # (the indices' bounds after the value's shape and dtype, as PyTorch checks them)
    if setitem:
        pre, adv, trivial = _parse(indices.index, a.shape, bounds=False)
    else:
        if isinstance(indices, Tensor):
            indices = (indices,)
        items = tuple(slice(None) if i is None else i for i in indices)
        pre, adv, trivial = _parse(items, a.shape, True, bounds=False)
    key = (pre, adv)
    if isinstance(values, Tensor):
        v = values._data
    else:
        sv = scalar_value(values)
        v = np.asarray(sv if sv is not None else values, dtype=a.dtype)
        values = None
    out = a.copy()
    view = _key_view(out, key)
    # the indexing result's shape, before the indices' bounds are checked
    target = np.broadcast_to(_ZERO_STRIDE, view.shape)[tuple(
        np.zeros_like(k) if isinstance(k, np.ndarray) else k for k in adv)]
    try:
        np.broadcast_to(v, target.shape)
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(v.shape)} cannot be broadcast to "
            f"indexing result of shape {list(target.shape)}"
        ) from None
    if values is not None and v.dtype != a.dtype:
        _dtype_mismatch(a, v)
    _check_adv([(d, k) for d, k in enumerate(adv) if isinstance(k, np.ndarray)], view.shape)
    if accumulate:
        add_at(view, adv, v)
    else:
        view[adv] = v
    # A number for values (None here): PyTorch still gives the node an (empty) second edge.
    if setitem and not trivial:
        # PyTorch writes through a view of the basic part: its node is CopySlices.
        return apply(IndexPutBackward0, out, input, values, save=(), _key=key,
                     _accumulate=bool(accumulate), _name=_COPY_SLICES, _g=indices.index)
    # (``_g``: the index as given, for ``grad_fn._saved_indices``)
    return apply(IndexPutBackward0, out, input, values, save=(), _key=key,
                 _accumulate=bool(accumulate), _g=indices.index if setitem else indices)


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


def key_get(x, key) -> Tensor:
    """``x`` indexed by a resolved key (index_put's backward for the values)."""
    return apply(IndexBackward0, _key_get(x._data, key), x, _key=key)


def key_add(g, key, shape) -> Tensor:
    """Zeros of ``shape`` with ``g`` added at a resolved key."""
    return apply(IndexPutBackward0, _key_add(g._data, key, shape), g, _key=key,
                 _into_zeros=True)


def key_zero(g, key) -> Tensor:
    """``g`` with zeros at a resolved key."""
    return apply(IndexPutBackward0, _key_zero(g._data, key), g, _key=key)


# -- the backward formulas of the views and of indexing, as ops (for higher orders) -----------


def _embed_select(g, shape, dim, index):
    out = np.zeros(shape, g.dtype)
    out[(slice(None),) * dim + (index,)] = g
    return out


class SelectBackwardBackward0(Node):
    forward = staticmethod(_embed_select)

    def backward(self, xp, g):
        return xp.select(g, self._dim, self._index)


def embed_select(g, shape, dim, index) -> Tensor:
    """Zeros of ``shape`` with ``g`` at ``index`` along ``dim`` (select's backward)."""
    return apply(SelectBackwardBackward0, _embed_select(g._data, shape, dim, index), g,
                 _dim=dim, _index=index)


def _embed_slice(g, shape, dim, start, stop, step):
    out = np.zeros(shape, g.dtype)
    out[(slice(None),) * dim + (slice(start, stop, step),)] = g
    return out


class SliceBackwardBackward0(Node):
    forward = staticmethod(_embed_slice)

    def backward(self, xp, g):
        return xp.slice_dim(g, self._dim, *self._range)


def embed_slice(g, shape, dim, start, stop, step) -> Tensor:
    """Zeros of ``shape`` with ``g`` in a slice along ``dim`` (slice's backward)."""
    return apply(SliceBackwardBackward0, _embed_slice(g._data, shape, dim, start, stop, step), g,
                 _dim=dim, _range=(start, stop, step))


def _scatter_into(g, index, shape):
    out = np.zeros(shape, g.dtype)
    add_at(out, index, g)
    return out


class IndexBackwardBackward0(Node):
    forward = staticmethod(_scatter_into)

    def backward(self, xp, g):
        return xp.getitem(g, self._index)


def scatter_into(g, index, shape) -> Tensor:
    """Zeros of ``shape`` with ``g`` added at an advanced ``index`` (indexing's backward)."""
    return apply(IndexBackwardBackward0, _scatter_into(g._data, index, shape), g, _index=index)


def _embed_view(x, steps, base_shape):
    out = np.zeros(base_shape, x.dtype)
    dst = _array.replay(out, steps)
    if dst.flags.writeable:
        dst[...] = x
        return out
    # A view that repeats base elements (expand; NumPy makes it read-only): each element sums
    # the gradients of its copies, a scatter-add at the base positions the view reads.
    pos = _array.replay(np.arange(out.size).reshape(base_shape), steps)
    if pos.size and pos.min() < 0:  # (as_strided past the base's elements: -1, no gradient)
        keep = pos >= 0
        pos, x = pos[keep], np.broadcast_to(x, keep.shape)[keep]
    add_at(out.reshape(-1), pos, x)
    return out


class EmbedViewBackward(Node):
    _name = "AsStridedScatterBackward0"
    forward = staticmethod(_embed_view)

    def backward(self, xp, g):
        return replay(xp, g, self._steps)


def embed_view(x, steps, base_shape) -> Tensor:
    """Zeros of ``base_shape`` with ``x`` where a view's ``steps`` point (CopySlices' helper)."""
    return apply(EmbedViewBackward, _embed_view(x._data, steps, base_shape), x, _steps=steps)


# -- index checks shared by the indexing families --------------------------------------


def _idx_of(index) -> np.ndarray:
    """The array of an index argument: a tensor, or (inside backward formulas) an array."""
    if isinstance(index, Tensor):
        return index._data
    return index if isinstance(index, ndarray) else np.asarray(index)


def _legacy(arr) -> str:
    return legacy(arr.dtype)


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


def _along_index(idx: np.ndarray, dim: int) -> tuple:
    """Full advanced index that addresses ``idx`` positions along ``dim``."""
    grids = list(np.indices(idx.shape, sparse=True))
    grids[dim] = idx
    return tuple(grids)


def _size_mismatch(sa, sb) -> str:
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    for k in range(n - 1, -1, -1):
        if pa[k] != pb[k] and pa[k] != 1 and pb[k] != 1:
            return (f"The size of tensor a ({pa[k]}) must match the size of tensor b ({pb[k]}) "
                    f"at non-singleton dimension {k}")
    return "shapes do not broadcast"


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
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("nonzero_count_cpu", input._data.dtype)  # uint16/32/64
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("nonzero", "input", 1, input) from None
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
    if sorted_sequence.__class__ is Tensor and sorted_sequence._data.dtype.char in WIDE_CHARS:
        raise not_implemented("searchsorted_out_cpu", sorted_sequence._data.dtype)  # uint16/32/64
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


# -- array twins of the ops of the indexing families, for backward formulas (see _array) --


def _on_arrays(fn):
    """The NumPy twin of an op: the same call on arrays, returning an array."""

    def array_fn(*args, **kwargs):
        args = [make(x) if x.__class__ is ndarray else x for x in args]
        return fn(*args, **kwargs)._data

    array_fn.__name__ = fn.__name__
    return array_fn


_array.register(
    key_get=_key_get, key_add=_key_add, key_zero=_key_zero,
    embed_select=SelectBackwardBackward0.forward, embed_slice=SliceBackwardBackward0.forward,
    scatter_into=IndexBackwardBackward0.forward, embed_view=EmbedViewBackward.forward,
)

__all__ = ["select", "narrow", "index_put", "nonzero", "argwhere", "searchsorted", "bucketize"]
XP = ["getitem", "slice_dim", "embed_select", "embed_slice", "embed_view", "scatter_into",
      "key_get", "key_add", "key_zero", "one_hot"]
_NOT_METHODS = {"searchsorted", "bucketize"}
METHODS = {name: globals()[name] for name in __all__ if name not in _NOT_METHODS}
INPLACE = {"index_put_": index_put}
