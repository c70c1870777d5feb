"""The C++ standard library's selection and sorting, step for step, for PyTorch's tie order.

PyTorch's CPU ``topk`` (which ``multinomial`` without replacement uses) selects with
``std::partial_sort`` or ``std::nth_element`` then ``std::sort`` on (value, index) pairs. With
distinct values any correct algorithm gives the same answer; with equal values (categories of
probability zero, say) the order of the tied indices is whatever libstdc++'s introselect,
introsort and heap operations leave, which these functions reproduce.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

Comp = Callable[[tuple, tuple], bool]


def _lg(n: int) -> int:
    return n.bit_length() - 1


def _greater(x: tuple, y: tuple) -> bool:
    """PyTorch's comparator for ``largest=True``: NaN first, then larger values."""
    xn, yn = math.isnan(x[0]), math.isnan(y[0])
    return (xn and not yn) or x[0] > y[0]


def _less(x: tuple, y: tuple) -> bool:
    """PyTorch's comparator for ``largest=False``: smaller values first, NaN last."""
    xn, yn = math.isnan(x[0]), math.isnan(y[0])
    return (yn and not xn) or x[0] < y[0]


# -- heaps ---------------------------------------------------------------------------------------
def _push_heap(a: list, first: int, hole: int, top: int, value: tuple, comp: Comp) -> None:
    parent = (hole - 1) // 2
    while hole > top and comp(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value


def _adjust_heap(a: list, first: int, hole: int, length: int, value: tuple, comp: Comp) -> None:
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if comp(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    _push_heap(a, first, hole, top, value, comp)


def _make_heap(a: list, first: int, last: int, comp: Comp) -> None:
    length = last - first
    if length < 2:
        return
    parent = (length - 2) // 2
    while True:
        _adjust_heap(a, first, parent, length, a[first + parent], comp)
        if parent == 0:
            return
        parent -= 1


def _pop_heap(a: list, first: int, last: int, result: int, comp: Comp) -> None:
    value = a[result]
    a[result] = a[first]
    _adjust_heap(a, first, 0, last - first, value, comp)


def _heap_select(a: list, first: int, middle: int, last: int, comp: Comp) -> None:
    _make_heap(a, first, middle, comp)
    for i in range(middle, last):
        if comp(a[i], a[first]):
            _pop_heap(a, first, middle, i, comp)


def _sort_heap(a: list, first: int, last: int, comp: Comp) -> None:
    while last - first > 1:
        last -= 1
        _pop_heap(a, first, last, last, comp)


def partial_sort(a: list, first: int, middle: int, last: int, comp: Comp) -> None:
    _heap_select(a, first, middle, last, comp)
    _sort_heap(a, first, middle, comp)


# -- partitions and insertion sort ---------------------------------------------------------------
def _move_median_to_first(a: list, result: int, x: int, y: int, z: int, comp: Comp) -> None:
    if comp(a[x], a[y]):
        if comp(a[y], a[z]):
            pick = y
        elif comp(a[x], a[z]):
            pick = z
        else:
            pick = x
    elif comp(a[x], a[z]):
        pick = x
    elif comp(a[y], a[z]):
        pick = z
    else:
        pick = y
    a[result], a[pick] = a[pick], a[result]


def _unguarded_partition(a: list, first: int, last: int, pivot: int, comp: Comp) -> int:
    while True:
        while comp(a[first], a[pivot]):
            first += 1
        last -= 1
        while comp(a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def _partition_pivot(a: list, first: int, last: int, comp: Comp) -> int:
    mid = first + (last - first) // 2
    _move_median_to_first(a, first, first + 1, mid, last - 1, comp)
    return _unguarded_partition(a, first + 1, last, first, comp)


def _linear_insert(a: list, last: int, comp: Comp) -> None:
    value = a[last]
    nxt = last - 1
    while comp(value, a[nxt]):
        a[last] = a[nxt]
        last = nxt
        nxt -= 1
    a[last] = value


def _insertion_sort(a: list, first: int, last: int, comp: Comp) -> None:
    if first == last:
        return
    for i in range(first + 1, last):
        if comp(a[i], a[first]):
            value = a[i]
            a[first + 1:i + 1] = a[first:i]
            a[first] = value
        else:
            _linear_insert(a, i, comp)


# -- the algorithms ------------------------------------------------------------------------------
def nth_element(a: list, first: int, nth: int, last: int, comp: Comp) -> None:
    if first == last or nth == last:
        return
    depth = 2 * _lg(last - first)
    while last - first > 3:
        if depth == 0:
            _heap_select(a, first, nth + 1, last, comp)
            a[first], a[nth] = a[nth], a[first]
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, comp)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(a, first, last, comp)


def _introsort_loop(a: list, first: int, last: int, depth: int, comp: Comp) -> None:
    while last - first > 16:
        if depth == 0:
            partial_sort(a, first, last, last, comp)
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, comp)
        _introsort_loop(a, cut, last, depth, comp)
        last = cut


def sort(a: list, first: int, last: int, comp: Comp) -> None:
    if first == last:
        return
    _introsort_loop(a, first, last, 2 * _lg(last - first), comp)
    if last - first > 16:
        _insertion_sort(a, first, first + 16, comp)
        for i in range(first + 16, last):
            _linear_insert(a, i, comp)
    else:
        _insertion_sort(a, first, last, comp)


def topk_largest(values: np.ndarray, k: int) -> np.ndarray:
    """The indices of the ``k`` largest of the 1-D ``values``, in the order PyTorch's CPU
    ``topk(sorted=True)`` returns them (ties included)."""
    n = values.size
    order = np.argsort(-values.astype(np.float64), kind="stable")
    head = values[order[:min(k + 1, n)]]
    if not np.isnan(head).any() and np.unique(head).size == head.size:
        return order[:k]  # no ties that matter: every algorithm agrees
    pairs = list(zip(values.astype(np.float64).tolist(), range(n)))
    if k * 64 <= n:
        partial_sort(pairs, 0, k, n, _greater)
    else:
        nth_element(pairs, 0, k - 1, n, _greater)
        sort(pairs, 0, k - 1, _greater)
    return np.array([i for _, i in pairs[:k]], np.int64)


def topk(values: list, k: int, largest: bool = True, sorted: bool = True) -> list:  # noqa: A002
    """The indices PyTorch's CPU ``topk`` picks from the 1-D ``values`` (a list of Python
    numbers), in its order: ``std::partial_sort`` when ``k * 64 <= n``, else
    ``std::nth_element`` followed (when ``sorted``) by ``std::sort`` of the first ``k - 1``.

    >>> topk([3.0, 1.0, 3.0, 2.0, 1.0, 3.0], 3)
    [2, 0, 5]
    """
    n = len(values)
    comp = _greater if largest else _less
    pairs = list(zip(values, range(n)))
    if k == 0:
        return []
    if k * 64 <= n:
        partial_sort(pairs, 0, k, n, comp)
    else:
        nth_element(pairs, 0, k - 1, n, comp)
        if sorted:
            sort(pairs, 0, k - 1, comp)
    return [i for _, i in pairs[:k]]


def _rank_less(x: tuple, y: tuple) -> bool:
    return x[0] < y[0]


def _rank_greater(x: tuple, y: tuple) -> bool:
    return x[0] > y[0]


def ranks(values: np.ndarray) -> list:
    """The 1-D ``values`` as integer ranks that compare as PyTorch's sorting comparators compare
    the values (NaN above every number and equal to NaN; ``-0.0`` equal to ``0.0``), so that the
    emulations below compare plain Python ints."""
    return np.unique(values, return_inverse=True)[1].reshape(-1).tolist()


def sort_order(keys: list, descending: bool = False) -> list:
    """The indices in the order ``std::sort`` leaves ``(key, index)`` pairs compared on their
    keys alone (PyTorch's CPU ``sort(stable=False)`` and ``mode``), ties included.

    >>> sort_order([1, 0, 1, 0] * 5)[:10]
    [1, 19, 17, 15, 13, 11, 9, 7, 5, 3]
    """
    pairs = list(zip(keys, range(len(keys))))
    sort(pairs, 0, len(pairs), _rank_greater if descending else _rank_less)
    return [i for _, i in pairs]


def quick_select(keys: list, k: int) -> int:
    """The index that ATen's ``quick_select_template`` (Sedgewick's quickselect, the CPU
    ``kthvalue``) leaves at position ``k`` of ``(key, index)`` pairs, ties included.

    >>> quick_select([2, 1, 2, 1, 2], 3)
    0
    """
    a = list(zip(keys, range(len(keys))))
    lo, hi = 0, len(a) - 1
    while True:
        if hi <= lo:
            return a[k][1]
        if hi == lo + 1:
            if a[lo][0] > a[hi][0]:
                a[lo], a[hi] = a[hi], a[lo]
            return a[k][1]
        p = (lo + hi) >> 1
        a[p], a[lo + 1] = a[lo + 1], a[p]
        if a[lo + 1][0] > a[hi][0]:
            a[lo + 1], a[hi] = a[hi], a[lo + 1]
        if a[lo][0] > a[hi][0]:
            a[lo], a[hi] = a[hi], a[lo]
        if a[lo + 1][0] > a[lo][0]:
            a[lo + 1], a[lo] = a[lo], a[lo + 1]
        i, j, piv = lo + 1, hi, a[lo][0]
        while True:
            i += 1
            while piv > a[i][0]:
                i += 1
            j -= 1
            while a[j][0] > piv:
                j -= 1
            if j < i:
                break
            a[i], a[j] = a[j], a[i]
        a[lo], a[j] = a[j], a[lo]
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
