"""Sorting, selection and scans: sort, argsort, topk, kthvalue, median, mode, unique, diff, and
the cumulative ops (cumsum, cumprod, cummax, cummin, logcumsumexp).

Value-selecting ops (sort, topk, kthvalue, median with a dim, mode, cummax, cummin) send the
gradient to the selected indices (``reduction._ValueSelecting``); ``median()`` of a whole tensor
shares it evenly among ties, as PyTorch does. Ties are broken as PyTorch's CPU kernels break
them: stable sorts keep the original order, cummax/cummin take the latest equal element, mode
the last occurrence of its value.
"""

from __future__ import annotations

import numpy as np

from .. import _stl, return_types
from .._dtypes import F32, FLOAT_CHARS, REDUCED, WIDE_CHARS, bfloat16, to_dtype
from .._tensor import Tensor
from ..autograd.graph import Node
from . import _array
from ._apply import apply, apply_multi, recording
from ._base import check_grad_dtype, not_implemented
from ._core import Signatures, arg_error, c_order, wrap, wrap_dim
from ._views import slice_dim
from .arithmetic import sub
from .compare import logical_xor
from .join import cat
from .reduction import _VALUES, _EvenlyDistributed, _ValueSelecting, dtype_name
from .shape import cast

# PyTorch's signatures, for its errors when arguments fit none (checked only after a failure).
_SCAN = {name: Signatures(name, "Tensor input, int dim, *, torch.dtype? dtype = None")
         for name in ("cumsum", "cumprod")}

# -- selection ---------------------------------------------------------------------------------


class SortBackward0(_ValueSelecting):
    pass


class SortBackward1(_ValueSelecting):
    pass


class TopkBackward0(_ValueSelecting):
    pass


class KthvalueBackward0(_ValueSelecting):
    pass


class MedianBackward1(_ValueSelecting):
    pass


class NanmedianBackward1(_ValueSelecting):
    pass


class ModeBackward0(_ValueSelecting):
    pass


class CummaxBackward0(_ValueSelecting):
    _keeps = True
    _packs = (0, "_idx")


class CumminBackward0(_ValueSelecting):
    _keeps = True
    _packs = (0, "_idx")


class MedianBackward0(_EvenlyDistributed):
    pass


class NanmedianBackward0(_EvenlyDistributed):
    pass


def sort_keys(a: np.ndarray) -> np.ndarray:
    """``a`` as NumPy sorts it in PyTorch's order (NaN last): a bfloat16 array's float32
    values (exact), since ml_dtypes' bfloat16 compares a NaN as neither smaller nor larger, so
    NumPy's sorts left it and the values around it unsorted.

    >>> import ml_dtypes
    >>> np.sort(sort_keys(np.array([3.0, np.nan, -1.0], ml_dtypes.bfloat16)))
    array([-1.,  3., nan], dtype=float32)
    """
    return a.astype(F32) if a.dtype == bfloat16.np else a


def _stable_argsort(a, d, descending=False):
    """Indices sorting ``a`` along ``d``; ties keep their order either way, NaN counts as the
    largest value (PyTorch's order)."""
    a = sort_keys(a)
    if not descending:
        return np.argsort(a, axis=d, kind="stable")
    # Sorting the reversed array and reversing back keeps ties in their original order.
    rev = np.argsort(np.flip(a, d), axis=d, kind="stable")
    return (a.shape[d] - 1) - np.flip(rev, d)

# Tied rows of more than this many elements in all keep the stable order rather than replay
# libstdc++ in Python (about 1 s per 10^5 elements): tie order is then the only difference left.
_REPLAY_LIMIT = 1 << 17


def _rows(x, d):
    """``x`` with ``d`` moved last, as a 2-D array of rows (a view where NumPy can)."""
    return np.moveaxis(x, d, -1).reshape(-1, x.shape[d])


def _unrow(rows, like, d):
    """The inverse of ``_rows``: ``rows`` shaped as ``like`` with its last dim moved to ``d``."""
    return np.moveaxis(rows.reshape(np.moveaxis(like, d, -1).shape), -1, d)


def _tied(head):
    """Per row of the sorted ``head``, whether two neighbours are equal (NaN equal to NaN)."""
    same = head[:, 1:] == head[:, :-1]
    if head.dtype.kind == "f":
        same |= np.isnan(head[:, 1:]) & np.isnan(head[:, :-1])
    return same.any(axis=1)


def _libstdcxx_sort(a, d, order, descending):
    """The stable ``order`` along ``d`` changed to the order PyTorch's ``sort(stable=False)``
    leaves ties in: ``std::sort`` (``_stl.sort_order``), except in rows of at most 16 elements
    (its insertion sort is stable) and for 1-D integer tensors of 32768 or more elements in
    ascending order (PyTorch sorts those with fbgemm's stable radix sort)."""
    n = a.shape[d]
    if n <= 16 or (a.ndim == 1 and a.dtype.kind in "iu" and not descending and n >= 32768):
        return order
    rows_a, rows_o = _rows(a, d), _rows(order, d)
    redo = np.flatnonzero(_tied(np.take_along_axis(rows_a, rows_o, axis=1)))
    if redo.size == 0 or redo.size * n > _REPLAY_LIMIT:
        return order
    rows_o = rows_o.copy()
    for r in redo:
        rows_o[r] = _stl.sort_order(_stl.ranks(rows_a[r]), descending)
    return _unrow(rows_o, order, d)


def _quick_select_ties(a, d, order, k):
    """The index of the ``k``-th smallest along ``d`` (kept as a dim of size 1) that PyTorch's
    ``kthvalue`` picks: the stable order's where the value is unique in its row, else the
    index ATen's quickselect leaves (``_stl.quick_select``)."""
    idx = order[(slice(None),) * d + (slice(k - 1, k),)]
    rows_a, rows_o = _rows(a, d), _rows(order, d)
    head = np.take_along_axis(rows_a, rows_o[:, max(k - 2, 0):k + 1], axis=1)
    redo = np.flatnonzero(_tied(head))
    if redo.size == 0 or redo.size * a.shape[d] > _REPLAY_LIMIT:
        return idx
    rows_i = _rows(idx, d).copy()
    for r in redo:
        rows_i[r, 0] = _stl.quick_select(_stl.ranks(rows_a[r]), k - 1)
    return _unrow(rows_i, idx, d)


def _selected(node_cls, rtype, input, idx, d, keepdim, given=None, save=()):  # noqa: A002
    """``(values, indices)`` for NumPy indices ``idx`` (the reduced dim kept) along ``d``;
    ``given`` is ``(dim, keepdim)`` as the caller got them (``grad_fn._saved_dim``); ``save``
    what the node keeps besides (cummax/cummin keep their input, as PyTorch's do)."""
    a = input._data
    if a.ndim == 0:
        vals, idx, keepdim = a.copy(), np.zeros((), np.int64), True
    else:
        idx = idx.astype(np.int64, copy=False)
        vals = np.take_along_axis(a, idx, axis=d)
    out_vals = vals if keepdim else np.squeeze(vals, axis=d)
    out_idx = idx if keepdim else np.squeeze(idx, axis=d)
    return rtype(apply_multi(node_cls, (out_vals, out_idx), (input,), differentiable=_VALUES,
                             save=save, _idx=idx, _dim=d, _keepdim=keepdim, _in_shape=a.shape,
                             _g=given))


def sort(input, dim=-1, descending=False, *, stable=None):  # noqa: A002
    """Sorted values and their indices along ``dim``; NaN sorts as the largest value.

    >>> import retrograd as torch
    >>> torch.tensor([3., 1., 2.]).sort()
    retrograd.return_types.sort(
    values=tensor([1., 2., 3.]),
    indices=tensor([1, 2, 0]))
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("sort", "input", 1, input) from None
    d = wrap_dim(dim, a.ndim)
    idx = None
    if a.ndim:
        idx = _stable_argsort(a, d, descending)
        if not stable:
            idx = _libstdcxx_sort(a, d, idx, descending)
    cls = SortBackward0 if stable is None else SortBackward1
    return _selected(cls, return_types.sort, input, idx, d, True, (dim, True))


def argsort(input, dim=-1, descending=False, stable=False) -> Tensor:  # noqa: A002
    """The indices that sort ``input`` along ``dim``.

    >>> import retrograd as torch
    >>> torch.tensor([3., 1., 2.]).argsort(descending=True)
    tensor([0, 2, 1])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("argsort", "input", 1, input) from None
    d = wrap_dim(dim, a.ndim)
    if recording(input):  # PyTorch sorts: a node keeping the indices, freed with the values
        return sort(input, dim, descending, stable=stable).indices
    if a.ndim == 0:
        return wrap(np.zeros((), np.int64))
    idx = _stable_argsort(a, d, descending)
    if not stable:
        idx = _libstdcxx_sort(a, d, idx, descending)
    return wrap(idx.astype(np.int64, copy=False))


def _libstdcxx_ties(a, d, order, k, largest, sorted):  # noqa: A002
    """The first ``k`` of the stable ``order`` along ``d``, except in rows where PyTorch's CPU
    topk (libstdc++'s selection, ``_stl.topk``) leaves another order: rows with ties among the
    first ``k + 1`` sorted values, and every row when ``sorted=False`` makes it skip the final
    sort (``nth_element`` order, when ``k * 64 > n`` and ``k > 1``)."""
    n = a.shape[d]
    idx = order[(slice(None),) * d + (slice(0, k),)]
    if k == 0:
        return idx
    rows_a, rows_o = _rows(a, d), _rows(order, d)
    if not sorted and k > 1 and k * 64 > n:
        redo = np.arange(rows_a.shape[0])
    else:
        redo = np.flatnonzero(_tied(np.take_along_axis(rows_a, rows_o[:, :k + 1], axis=1)))
    if redo.size == 0 or redo.size * n > _REPLAY_LIMIT:
        return idx
    rows_i = _rows(idx, d).copy()
    for r in redo:
        rows_i[r] = _stl.topk(rows_a[r].tolist(), k, largest, sorted)
    return _unrow(rows_i, idx, d)


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A001, A002
    """The ``k`` largest (or smallest) values along ``dim``, with their indices.

    >>> import retrograd as torch
    >>> torch.tensor([1., 4., 2., 3.]).topk(2)
    retrograd.return_types.topk(
    values=tensor([4., 3.]),
    indices=tensor([1, 3]))
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("topk", "input", 1, input) from None
    if a.dtype.char in WIDE_CHARS:
        raise not_implemented("topk_cpu", a.dtype)  # uint16/32/64
    if a.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d] if a.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if a.ndim == 0:
        if k == 0:
            return return_types.topk((wrap(np.zeros((0,), a.dtype)),
                                      wrap(np.zeros((0,), np.int64))))
        return _selected(TopkBackward0, return_types.topk, input, None, d, True, (dim, True))
    keys = sort_keys(a)
    idx = _libstdcxx_ties(keys, d, _stable_argsort(keys, d, largest), k, largest, sorted)
    return _selected(TopkBackward0, return_types.topk, input, idx, d, True, (dim, True))


def kthvalue(input, k, dim=-1, keepdim=False):  # noqa: A002
    """The ``k``-th smallest value along ``dim`` and its index.

    >>> import retrograd as torch
    >>> torch.tensor([3., 1., 2.]).kthvalue(2)
    retrograd.return_types.kthvalue(
    values=tensor(2.),
    indices=tensor(2))
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("kthvalue", "input", 1, input) from None
    if a.dtype.char in WIDE_CHARS:
        raise not_implemented("kthvalue_cpu", a.dtype)  # uint16/32/64
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d] if a.ndim else 1
    if n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if a.dtype == np.bool_:  # (after the empty dim's error, as PyTorch)
        raise not_implemented("kthvalue_cpu", a.dtype)
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    idx = None
    if a.ndim:
        keys = sort_keys(a)
        idx = _quick_select_ties(keys, d, _stable_argsort(keys, d), k)
    return _selected(KthvalueBackward0, return_types.kthvalue, input, idx, d, keepdim,
                     (dim, keepdim))


def _median_whole(input, ignore_nan):  # noqa: A002
    a = input._data
    flat = a.reshape(-1)
    if ignore_nan:
        flat = flat[~np.isnan(flat)] if a.dtype.char in FLOAT_CHARS else flat
    if flat.size == 0:
        out = np.asarray(np.nan, a.dtype) if a.dtype.char in FLOAT_CHARS else np.zeros((), a.dtype)
    elif a.dtype.char in FLOAT_CHARS and np.isnan(flat).any():
        out = np.asarray(np.nan, a.dtype)
    else:
        out = np.asarray(np.partition(sort_keys(flat), (flat.size - 1) // 2)[(flat.size - 1) // 2],
                         a.dtype)
    cls = NanmedianBackward0 if ignore_nan else MedianBackward0
    return apply(cls, out, input, save=(input,), save_out=True)


def _median_dim(input, dim, keepdim, ignore_nan):  # noqa: A002
    name = "nanmedian" if ignore_nan else "median"
    if not isinstance(dim, int):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    a = input._data
    d = wrap_dim(dim, a.ndim)
    rtype = return_types.nanmedian if ignore_nan else return_types.median
    cls = NanmedianBackward1 if ignore_nan else MedianBackward1
    if a.ndim == 0:
        return _selected(cls, rtype, input, None, d, keepdim, (dim, keepdim))
    n = a.shape[d]
    if n == 0:  # (nanmedian's error is median's)
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    order = _stable_argsort(a, d)
    nan = np.isnan(a) if a.dtype.char in FLOAT_CHARS else np.zeros(a.shape, bool)
    if ignore_nan:
        m = n - np.sum(nan, axis=d, keepdims=True)
        k = np.maximum((m - 1) // 2, 0)
        idx = np.take_along_axis(order, k, axis=d)
    else:
        idx = order[(slice(None),) * d + (slice((n - 1) // 2, (n - 1) // 2 + 1),)]
        # Any NaN makes the median NaN, at the first NaN's index.
        has_nan = np.any(nan, axis=d, keepdims=True)
        idx = np.where(has_nan, np.argmax(nan, axis=d, keepdims=True), idx)
    return _selected(cls, rtype, input, idx, d, keepdim, (dim, keepdim))


def median(input, dim=None, keepdim=False):  # noqa: A002
    """The lower median of all elements, or ``(values, indices)`` along ``dim``.

    >>> import retrograd as torch
    >>> torch.tensor([4., 1., 3., 2.]).median()
    tensor(2.)
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("median_cpu" if dim is None else "median_out",
                              input._data.dtype)  # uint16/32/64
    _check_median_dtype("median", input, dim)
    if dim is None:
        return _median_whole(input, False)
    return _median_dim(input, dim, keepdim, False)


def nanmedian(input, dim=None, keepdim=False):  # noqa: A002
    """``median`` ignoring NaN values.

    >>> import retrograd as torch
    >>> torch.tensor([1., float('nan'), 3., 2.]).nanmedian()
    tensor(2.)
    """
    _check_median_dtype("nanmedian", input, dim)
    if dim is None:
        return _median_whole(input, True)
    return _median_dim(input, dim, keepdim, True)


def _check_median_dtype(name, input, dim) -> None:  # noqa: A002
    try:
        kind = input._data.dtype.kind
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error(name, "input", 1, input) from None
    if kind == "b":  # (PyTorch's kernels: median's for both, the _out one over a dim)
        raise NotImplementedError(
            f"\"{'median_cpu' if dim is None else 'median_out'}\" not implemented for 'Bool'")


def mode(input, dim=-1, keepdim=False):  # noqa: A002
    """The most frequent value along ``dim`` (the smallest among equally frequent ones) and the
    index of its last occurrence.

    >>> import retrograd as torch
    >>> torch.tensor([3., 1., 3., 2.]).mode()
    retrograd.return_types.mode(
    values=tensor(3.),
    indices=tensor(2))
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("mode_cpu", input._data.dtype)  # uint16/32/64
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("mode", "input", 1, input) from None
    d = wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        return _selected(ModeBackward0, return_types.mode, input, None, d, keepdim, (dim, keepdim))
    n = a.shape[d]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    am = np.moveaxis(sort_keys(a), d, -1)
    order = np.argsort(am, axis=-1, kind="stable")
    s = np.take_along_axis(am, order, axis=-1)
    ar = np.arange(n)
    start = np.ones(s.shape, bool)
    start[..., 1:] = s[..., 1:] != s[..., :-1]
    end = np.ones(s.shape, bool)
    end[..., :-1] = start[..., 1:]
    first = np.maximum.accumulate(np.where(start, ar, 0), axis=-1)
    last = np.flip(np.minimum.accumulate(np.flip(np.where(end, ar, n - 1), -1), axis=-1), -1)
    # argmax takes the first longest run: runs are sorted, so the smallest such value.
    runs = last - first + 1
    best = np.argmax(runs, axis=-1)[..., None]
    idx = np.take_along_axis(order, np.take_along_axis(last, best, axis=-1), axis=-1)
    idx = _libstdcxx_mode(am, idx, np.take_along_axis(runs, best, axis=-1))
    return _selected(ModeBackward0, return_types.mode, input, np.moveaxis(idx, -1, d), d,
                     keepdim, (dim, keepdim))


def _libstdcxx_mode(am, idx, freq):
    """``mode``'s indices (``am`` with the dim last) where PyTorch's kernel, which scans
    ``std::sort``'s order for the longest run, ends on another element than the last occurrence
    in the stable order: rows longer than 16 (introsort rather than insertion sort) whose mode
    occurs more than once (``freq``), and rows holding NaN, are replayed (``_stl.sort_order``)."""
    rows_a, rows_i, freq = am.reshape(-1, am.shape[-1]), idx.reshape(-1, 1).copy(), freq.ravel()
    redo = freq > 1 if am.shape[-1] > 16 else np.zeros(freq.shape, bool)
    if am.dtype.kind == "f":
        redo |= np.isnan(rows_a).any(axis=1)
    redo = np.flatnonzero(redo)
    if redo.size == 0 or redo.size * am.shape[-1] > _REPLAY_LIMIT:
        return idx
    for r in redo:
        row = rows_a[r]
        # The kernel compares with a plain ``<``, under which NaN ties with every value.
        keys = row.tolist() if row.dtype.kind == "f" and np.isnan(row).any() else _stl.ranks(row)
        order = _stl.sort_order(keys)
        vals = row[order]
        ends = np.flatnonzero(np.append(vals[1:] != vals[:-1], True))
        lens = np.diff(ends, prepend=-1)
        rows_i[r, 0] = order[ends[np.argmax(lens)]]
    return rows_i.reshape(idx.shape)


class _NoDerivative(Node):
    def backward(self, xp, *grads):
        raise NotImplementedError(f"the derivative for '{self._op}' is not implemented.")


class Unique2Backward0(_NoDerivative):
    _op = "_unique2"


class UniqueDimBackward0(_NoDerivative):
    _op = "unique_dim"


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A001, A002
    """The distinct values (sorted), optionally with the inverse indices and the counts.

    >>> import retrograd as torch
    >>> torch.unique(torch.tensor([3, 1, 3, 2]), return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 1, 2]))
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("_unique2", "input", 1, input) from None
    kw = {"equal_nan": False} if a.dtype.char in FLOAT_CHARS else {}
    if dim is None:
        out, inv, cnt = np.unique(sort_keys(a).reshape(-1), return_inverse=True,
                                  return_counts=True, **kw)
        inv = inv.reshape(a.shape)
    else:
        if a.ndim == 0:  # (PyTorch's unique_dim names the dim: no dims to take it from)
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = wrap_dim(dim, a.ndim)
        if a.size == 0 and any(n == 0 for k, n in enumerate(a.shape) if k != d):
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied")
        out, inv, cnt = np.unique(sort_keys(a), return_inverse=True, return_counts=True, axis=d)
        inv = inv.reshape(-1)
    out = out.astype(a.dtype, copy=False)
    res = (apply(Unique2Backward0 if dim is None else UniqueDimBackward0, out, input),)
    if return_inverse:
        res += (wrap(inv.astype(np.int64, copy=False)),)
    if return_counts:
        res += (wrap(cnt.astype(np.int64, copy=False)),)
    return res[0] if len(res) == 1 else res


# -- scans -------------------------------------------------------------------------------------


def _cumsum_np(x, dim):
    if x.dtype in REDUCED:  # accumulated in float32, as PyTorch's kernel
        return c_order(np.cumsum(x, axis=dim, dtype=F32).astype(x.dtype))
    # (NumPy accumulates bool and the small ints in int64: a dtype= of those stays exact)
    return c_order(np.cumsum(x, axis=dim).astype(x.dtype, copy=False))


def _cumsum_rev_np(x, dim):
    return np.flip(_cumsum_np(np.flip(x, dim), dim), dim)


def _cumprod_np(x, dim):
    return c_order(np.cumprod(x, axis=dim).astype(x.dtype, copy=False))


def _lcse_np(x, dim, reverse=False):
    if x.ndim == 0:
        return x
    if reverse:
        return c_order(np.flip(np.logaddexp.accumulate(np.flip(x, dim), axis=dim), dim))
    return c_order(np.logaddexp.accumulate(x, axis=dim))


def _logcumsumexp_rev_np(x, dim):
    return _lcse_np(x, dim, True)


def _scan_input(input, dim, dtype, name):  # noqa: A002
    check_grad_dtype(input, dtype)
    a = input._data
    if dtype is not None:
        a = a.astype(to_dtype(dtype).np)
    elif a.dtype.kind in "biu":
        a = a.astype(np.int64)
    return a, wrap_dim(dim, a.ndim)


class CumsumBackward0(Node):
    forward = staticmethod(_cumsum_np)

    def backward(self, xp, g):
        if len(g.shape) == 0:
            return g
        return xp.cumsum_rev(g, self._dim)


class CumsumReverseBackward(Node):
    forward = staticmethod(_cumsum_rev_np)

    def backward(self, xp, g):
        return xp.cumsum(g, self._dim)


def cumsum(input, dim, *, dtype=None) -> Tensor:  # noqa: A002
    """Cumulative sum along ``dim``; bools and integers give int64.

    >>> import retrograd as torch
    >>> torch.tensor([1., 2., 3.]).cumsum(0)
    tensor([1., 3., 6.])
    """
    try:
        a, d = _scan_input(input, dim, dtype, "cumsum")
        out = _cumsum_np(a, d) if a.ndim else a.copy()
        return apply(CumsumBackward0, out, input, _dim=d, _g=dim)
    except (AttributeError, TypeError):
        _SCAN["cumsum"].check(input, dim, dtype=dtype)
        raise


def cumsum_rev(x, dim) -> Tensor:
    """Cumulative sum from the end (cumsum's backward), differentiably."""
    return apply(CumsumReverseBackward, _cumsum_rev_np(x._data, dim), x, _dim=dim)


def _cumprod_grad_np(x, out, g, d):
    """The gradient of cumprod along ``d``, exact where ``x`` has zeros (O(n))."""
    zero = x == 0
    if not zero.any():
        return _cumsum_rev_np(g * out, d) / x
    n = x.shape[d]
    shape = [1] * x.ndim
    shape[d] = n
    ar = np.arange(n).reshape(shape)
    # z: the position of the first zero in each slice (n where there is none).
    z = np.where(zero.any(axis=d, keepdims=True), np.argmax(zero, axis=d, keepdims=True), n)
    before = ar < z
    # Before the first zero, out/x is safe; later outputs are all zero.
    grad = _cumsum_rev_np(np.where(before, g * out, 0), d) / np.where(before, x, 1)
    # At the first zero: sum over j >= z of g_j times the product of x_i (i <= j, i != z).
    c = np.cumprod(np.where(ar == z, 1, x), axis=d)
    at_z = np.sum(np.where(ar >= z, g * c, 0), axis=d, keepdims=True)
    return np.where(before, grad, np.where(ar == z, at_z, 0)).astype(x.dtype, copy=False)


class CumprodBackward0(Node):
    forward = staticmethod(_cumprod_np)

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        out = self.saved_output(xp.TENSORS)
        d = self._dim
        if len(g.shape) == 0:
            return g
        if not xp.TENSORS:
            return _cumprod_grad_np(x, out, g, d)
        if not (x._data == 0).any():
            return xp.cumsum_rev(g * out, d) / x
        # NOTE: with zeros the recorded gradient is built from cumprods of x with each position
        # in turn replaced by one (n x n), so every order stays exact.
        n = x.shape[d]
        rows = xp.where(np.eye(n, dtype=bool), 1.0, xp.unsqueeze(xp.transpose(x, d, -1), -2))
        prods = xp.cumprod(rows, -1)  # [k, j]: product of x_i for i <= j, i != k
        gt = xp.unsqueeze(xp.transpose(g, d, -1), -2)
        upper = np.triu(np.ones((n, n), dtype=bool))  # j >= k
        return xp.transpose(xp.sum(xp.where(upper, gt * prods, 0.0), -1), d, -1)


def cumprod(input, dim, *, dtype=None) -> Tensor:  # noqa: A002
    """Cumulative product along ``dim``; the gradient is exact where there are zeros.

    >>> import retrograd as torch
    >>> torch.tensor([1., 2., 3.]).cumprod(0)
    tensor([1., 2., 6.])
    """
    try:
        check_grad_dtype(input, dtype)
        if dtype is not None and input.requires_grad and input._data.dtype != to_dtype(dtype).np:
            # Cast differentiably first: the saved input must lead back to ``input``.
            input = cast(input, to_dtype(dtype).np)  # noqa: A001
        a, d = _scan_input(input, dim, dtype, "cumprod")
        out = _cumprod_np(a, d) if a.ndim else a.copy()
        # Recording needs a float input, and then ``a`` is ``input``'s own array (a ``dtype`` was
        # applied differentiably above), so the formula reads ``input``.
        return apply(CumprodBackward0, out, input, save=(input,), save_out=True, _dim=d,
                     _g=dim)
    except (AttributeError, TypeError):
        _SCAN["cumprod"].check(input, dim, dtype=dtype)
        raise


class _LogcumsumexpNode(Node):
    """d/dx_k = sum_{j>=k} g_j exp(x_k - out_j), summed in log space separately for the
    positive and negative parts of g so nothing overflows."""

    _reverse = False

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        out = self.saved_output(xp.TENSORS)
        d = self._dim
        if len(g.shape) == 0:
            return g
        back = xp.logcumsumexp if self._reverse else xp.logcumsumexp_rev
        pos = g > 0
        neg = g < 0
        log_pos = xp.where(pos, xp.log(xp.where(pos, g, 1.0)), _LOWEST)
        log_neg = xp.where(neg, xp.log(xp.where(neg, -g, 1.0)), _LOWEST)
        return xp.exp(back(log_pos - out, d) + x) - xp.exp(back(log_neg - out, d) + x)


# Stands in for log(0): finite in float32 and float64, so differences stay finite.
_LOWEST = -3.0e38


class LogcumsumexpBackward0(_LogcumsumexpNode):
    forward = staticmethod(_lcse_np)


class LogcumsumexpReverseBackward(_LogcumsumexpNode):
    forward = staticmethod(_logcumsumexp_rev_np)
    _reverse = True


_array.register(cumsum=CumsumBackward0.forward, cumsum_rev=CumsumReverseBackward.forward,
                cumprod=CumprodBackward0.forward, logcumsumexp=LogcumsumexpBackward0.forward,
                logcumsumexp_rev=LogcumsumexpReverseBackward.forward)


def _lcse(input, dim, reverse, cls):  # noqa: A002
    a = input._data
    if a.dtype.char not in FLOAT_CHARS:
        raise NotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{dtype_name(a.dtype)}'"
        )
    d = wrap_dim(dim, a.ndim)
    out = _lcse_np(a, d, reverse).astype(a.dtype, copy=False) if a.ndim else a.copy()
    return apply(cls, out, input, save=(input,), save_out=True, _dim=d, _g=dim)


def logcumsumexp(input, dim) -> Tensor:  # noqa: A002
    """``log(cumsum(exp(x)))`` along ``dim``, computed without overflow.

    >>> import retrograd as torch
    >>> torch.tensor([0., 0.]).logcumsumexp(0)
    tensor([0.0000, 0.6931])
    """
    return _lcse(input, dim, False, LogcumsumexpBackward0)


def logcumsumexp_rev(x, dim) -> Tensor:
    """logcumsumexp from the end (logcumsumexp's backward), differentiably."""
    return _lcse(x, dim, True, LogcumsumexpReverseBackward)


def _cum_extreme(input, dim, is_max):  # noqa: A002
    a = input._data
    if a.ndim == 0 and dim not in (0, -1):  # (the scalar case's own message)
        raise IndexError(f"{'cummax' if is_max else 'cummin'}(): Expected reduction dim -1 or 0 "
                         f"for scalar but got {dim}")
    d = wrap_dim(dim, a.ndim)
    rtype = return_types.cummax if is_max else return_types.cummin
    cls = CummaxBackward0 if is_max else CumminBackward0
    if a.ndim == 0 or a.size == 0:
        return _selected(cls, rtype, input, np.zeros(a.shape, np.int64), d, True, (dim, True),
                         (input,))
    acc = (np.maximum if is_max else np.minimum).accumulate(a, axis=d)
    # The index moves to every element that equals the running extreme (the latest tie wins)
    # and, once a NaN is seen, to every later NaN.
    hit = a == acc
    if a.dtype.char in FLOAT_CHARS:
        hit |= np.isnan(a)
    shape = [1] * a.ndim
    shape[d] = a.shape[d]
    ar = np.arange(a.shape[d]).reshape(shape)
    idx = c_order(np.maximum.accumulate(np.where(hit, ar, 0), axis=d))
    return _selected(cls, rtype, input, idx, d, True, (dim, True), (input,))


def cummax(input, dim):  # noqa: A002
    """Running maximum along ``dim`` and the index where each value was taken.

    >>> import retrograd as torch
    >>> torch.tensor([1., 3., 2.]).cummax(0)
    retrograd.return_types.cummax(
    values=tensor([1., 3., 3.]),
    indices=tensor([0, 1, 1]))
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("cummax_cpu", input._data.dtype)  # uint16/32/64
    return _cum_extreme(input, dim, True)


def cummin(input, dim):  # noqa: A002
    """Running minimum along ``dim`` and the index where each value was taken.

    >>> import retrograd as torch
    >>> torch.tensor([2., 3., 1.]).cummin(0)
    retrograd.return_types.cummin(
    values=tensor([2., 2., 1.]),
    indices=tensor([0, 0, 2]))
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("cummin_cpu", input._data.dtype)  # uint16/32/64
    return _cum_extreme(input, dim, False)


def diff(input, n=1, dim=-1, prepend=None, append=None) -> Tensor:  # noqa: A002
    """The ``n``-th forward difference along ``dim``, after concatenating ``prepend`` and
    ``append``.

    >>> import retrograd as torch
    >>> torch.tensor([1., 4., 9.]).diff()
    tensor([3., 5.])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("diff", "input", 1, input) from None
    if a.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = wrap_dim(dim, a.ndim)
    x = input
    if prepend is not None or append is not None:
        parts = [p for p in (prepend, input, append) if p is not None]
        x = cat(parts, d)
    # NOTE: a composite (narrow and sub), as PyTorch's: its grad_fn is SubBackward0.
    op = logical_xor if a.dtype.kind == "b" else sub
    for _ in range(n):
        length = x.shape[d]
        # (dim as given: PyTorch's slices keep it so, grad_fn._saved_dim)
        x = op(slice_dim(x, dim, 1, length), slice_dim(x, dim, 0, max(length - 1, 0)))
    return x


__all__ = [
    "sort", "argsort", "topk", "kthvalue", "median", "nanmedian", "mode", "unique", "cumsum",
    "cumprod", "cummax", "cummin", "logcumsumexp", "diff",
]
XP = ["cumsum_rev", "logcumsumexp_rev"]
METHODS = {name: globals()[name] for name in __all__}
INPLACE = {"cumsum_": cumsum, "cumprod_": cumprod}
