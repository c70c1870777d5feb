"""Op table entries for the indexing family: ``x[...]``, ``x[...] = v``, gather/scatter,
index_* ops, masks, take/put, and the index-valued ops (compared by value only)."""

from __future__ import annotations

from .op_table import OpInfo, _sh


def _t(lib, data):
    return lib.tensor(data)


def _set_fn(lib, a, make_index, value):
    y = a * 1
    y[make_index(lib)] = value
    return y


M34 = _sh(((3, 4),))
M234 = _sh(((2, 3, 4),))

# Index expressions for x of shape (2, 3, 4), written once for both libraries.
GETITEM = {
    "neg_int": lambda lib: -1,
    "neg_slice": lambda lib: (slice(-2, None), slice(None, -1)),
    "step": lambda lib: (Ellipsis, slice(None, None, 3)),
    "none_ell": lambda lib: (None, Ellipsis, None, 1),
    "int_tensor0d": lambda lib: (lib.tensor(1), 2),
    "list": lambda lib: [1, 0, 1],
    "list_neg": lambda lib: (slice(None), [-1, 0]),
    "list_2d": lambda lib: [[0, 1], [1, 1]],
    "tensor_2d": lambda lib: (slice(None), lib.tensor([[2, 0], [1, 1]])),
    "adjacent": lambda lib: (slice(None), lib.tensor([0, 2]), lib.tensor([3, 1])),
    "separated": lambda lib: (lib.tensor([1, 0]), slice(None), lib.tensor([3, 1])),
    "separated_bcast": lambda lib: (lib.tensor([[1], [0]]), slice(1, None), lib.tensor([3, 1, 0])),
    "int_with_adv": lambda lib: (1, slice(None), [0, 3]),
    "int_between": lambda lib: ([1, 0], 2, [0, 3]),
    "none_between": lambda lib: ([1, 0], None, [0, 1]),
    "ellipsis_adv": lambda lib: (Ellipsis, [3, 3, 0]),
    "bool_mask_1d": lambda lib: lib.tensor([False, True]),
    "bool_mask_2d": lambda lib: (slice(None), lib.tensor([[True, False, True, True],
                                                         [False, False, True, False],
                                                         [True, True, False, False]])),
    "bool_list": lambda lib: (slice(None), [True, False, True]),
    "bool_and_int": lambda lib: (lib.tensor([True, False]), slice(None), [0, 2]),
    "python_true": lambda lib: (True, 1),
    "python_false": lambda lib: (False, Ellipsis),
    "tensor_true": lambda lib: lib.tensor(True),
    "empty_list": lambda lib: (slice(None), []),
    "dup": lambda lib: ([0, 0, 1, 0], slice(None), [1, 1, 1, 2]),
}

SETITEM = {
    "adv": (lambda lib: [1, 0], (3, 4)),
    "adv_slice": (lambda lib: (slice(None), [2, 0]), (2, 4)),
    "int_adv": (lambda lib: (1, slice(None), [0, 3]), (3, 2)),
    "separated": (lambda lib: ([1, 0], slice(None), [3, 1]), (2, 3)),
    "mask": (lambda lib: lib.tensor([[True, False, True], [False, False, True]]), (4,)),
    "neg": (lambda lib: (slice(None), [-1]), (2, 1, 4)),
    "true": (lambda lib: (True, 0), (3, 4)),
}


def _getter(f):
    return lambda lib, a: a[f(lib)]


def _setter(f, scalar=False):
    if scalar:
        return lambda lib, a: _set_fn(lib, a, f, 1.5)
    return lambda lib, a, v: _set_fn(lib, a, f, v * 2)


def _reducer(red, inc):
    return lambda lib, a, s: a.scatter_reduce(
        0, _t(lib, [[0, 2, 1, 0], [2, 0, 0, 1], [0, 0, 0, 2]]), s, red, include_self=inc)


def _getitem_ops():
    return [OpInfo(f"getitem_{name}", _getter(f), M234) for name, f in GETITEM.items()]


def _setitem_ops():
    ops = []
    for name, (f, vshape) in SETITEM.items():
        ops.append(OpInfo(f"setitem_{name}",
                          _setter(f),
                          _sh(((2, 3, 4), vshape))))
        ops.append(OpInfo(f"setitem_{name}_scalar",
                          _setter(f, True), M234))
    ops.append(OpInfo("setitem_bcast_value",
                      lambda lib, a, v: _set_fn(lib, a, lambda lib: [1, 0], v.exp()),
                      _sh(((2, 3, 4), (4,)), ((2, 3, 4), ()))))
    return ops


IDX_ROWS = [[0, 2, 1, 0], [2, 0, 0, 1]]           # for dim 0 of (3, 4), duplicates
PERM_ROWS = [[0, 2, 1, 0], [2, 0, 2, 1]]          # unique within each column
IDX_COLS = [[3, 0], [1, 1], [0, 2]]               # for dim 1 of (3, 4)

OPS = _getitem_ops() + _setitem_ops() + [
    OpInfo("gather_dim0", lambda lib, a: lib.gather(a, 0, _t(lib, IDX_ROWS)), M34),
    OpInfo("gather_dim_neg", lambda lib, a: a.gather(-1, _t(lib, IDX_COLS)), M34),
    OpInfo("gather_smaller", lambda lib, a: a.gather(1, _t(lib, [[1], [0]])), M34),
    OpInfo("gather_0d", lambda lib, a: a.gather(0, _t(lib, 0)), _sh(((),))),
    OpInfo("gather_empty", lambda lib, a: a.gather(0, lib.zeros(0, 4, dtype=lib.int64)), M34),
    OpInfo("scatter_src", lambda lib, a, s: lib.scatter(a, 0, _t(lib, PERM_ROWS[:1]), s),
           _sh(((3, 4), (1, 4)))),
    OpInfo("scatter_src_dim1", lambda lib, a, s: a.scatter(1, _t(lib, [[2, 0], [1, 3]]), s),
           _sh(((3, 4), (2, 2)))),
    OpInfo("scatter_value", lambda lib, a: a.scatter(0, _t(lib, IDX_ROWS), 0.5), M34),
    OpInfo("scatter_value_kw", lambda lib, a: lib.scatter(a, 1, _t(lib, IDX_COLS), value=-1.0),
           M34),
    OpInfo("scatter_add", lambda lib, a, s: lib.scatter_add(a, 0, _t(lib, IDX_ROWS), s),
           _sh(((3, 4), (2, 4)))),
    OpInfo("scatter_add_method", lambda lib, a, s: a.scatter_add(-1, _t(lib, IDX_COLS), s),
           _sh(((3, 4), (3, 2)))),
    OpInfo("index_select", lambda lib, a: lib.index_select(a, 1, _t(lib, [3, 0, 3])), M34),
    OpInfo("index_select_0d_index", lambda lib, a: a.index_select(-1, _t(lib, 2)), M234),
    OpInfo("index_select_0d", lambda lib, a: a.index_select(0, _t(lib, [0])), _sh(((),))),
    OpInfo("index_add", lambda lib, a, s: lib.index_add(a, 0, _t(lib, [2, 0, 2]), s),
           _sh(((3, 4), (3, 4)))),
    OpInfo("index_add_alpha", lambda lib, a, s: a.index_add(1, _t(lib, [1, 1]), s, alpha=-2.5),
           _sh(((3, 4), (3, 2)))),
    OpInfo("index_copy", lambda lib, a, s: lib.index_copy(a, 1, _t(lib, [3, 0]), s),
           _sh(((3, 4), (3, 2)))),
    OpInfo("index_copy_method", lambda lib, a, s: a.index_copy(0, _t(lib, [2]), s),
           _sh(((3, 4), (1, 4)))),
    OpInfo("index_fill", lambda lib, a: lib.index_fill(a, 1, _t(lib, [0, -1]), 2.5), M34),
    OpInfo("index_fill_tensor", lambda lib, a, v: a.index_fill(0, _t(lib, [2, 0, 2]), v * 3),
           _sh(((3, 4), ()))),
    OpInfo("index_put", lambda lib, a, v: lib.index_put(a, (_t(lib, [2, 0]),), v),
           _sh(((3, 4), (2, 4)), ((3, 4), (4,)))),
    OpInfo("index_put_2idx", lambda lib, a, v: a.index_put((_t(lib, [2, 0]), _t(lib, [1, 3])), v),
           _sh(((3, 4), (2,)), ((3, 4), ()))),
    OpInfo("index_put_accumulate",
           lambda lib, a, v: a.index_put((_t(lib, [2, 0, 2]),), v, accumulate=True),
           _sh(((3, 4), (3, 4)), ((3, 4), (4,)))),
    OpInfo("masked_fill_scalar", lambda lib, a: a.masked_fill(a > 0, -0.5), M34,
           positive_gap=0.05),
    OpInfo("masked_fill_tensor", lambda lib, a, v: lib.masked_fill(a, a > 0, v * 2),
           _sh(((3, 4), ())), positive_gap=0.05),
    OpInfo("masked_fill_bcast_mask",
           lambda lib, a: a.masked_fill(lib.tensor([True, False, False, True]), 0.0), M34),
    OpInfo("masked_select", lambda lib, a: lib.masked_select(a, a > 0), M34, positive_gap=0.05),
    OpInfo("masked_select_bcast",
           lambda lib, a: a.masked_select(lib.tensor([[True], [False], [True]])),
           _sh(((4,),), ((3, 4),))),
    OpInfo("masked_scatter", lambda lib, a, s: lib.masked_scatter(a, a > 0, s),
           _sh(((3, 4), (3, 4)), ((3, 4), (15,))), positive_gap=0.05),
    OpInfo("masked_scatter_bcast",
           lambda lib, a, s: a.masked_scatter(lib.tensor([True, False, True, True]), s),
           _sh(((3, 4), (3, 4)))),
    OpInfo("take", lambda lib, a: lib.take(a, _t(lib, [[0, 5], [11, -1]])), M34),
    OpInfo("take_dup", lambda lib, a: a.take(_t(lib, [3, 3, 0])), M234),
    OpInfo("put", lambda lib, a, s: lib.put(a, _t(lib, [0, 5, -1]), s), _sh(((3, 4), (3,)))),
    OpInfo("put_accumulate", lambda lib, a, s: a.put(_t(lib, [[0, 5], [0, 5]]), s, True),
           _sh(((3, 4), (2, 2)))),
    OpInfo("take_along_dim", lambda lib, a: lib.take_along_dim(a, _t(lib, IDX_ROWS), 0), M34),
    OpInfo("take_along_dim_bcast", lambda lib, a: a.take_along_dim(_t(lib, [[1, 0, 1, 0]]), 0),
           M34),
    OpInfo("take_along_dim_bcast_idx",
           lambda lib, a: lib.take_along_dim(a, _t(lib, [[[1], [0], [2]]]), dim=-1), M234),
    OpInfo("take_along_dim_flat", lambda lib, a: lib.take_along_dim(a, _t(lib, [0, 7, 7])), M34),
    OpInfo("argsort_gather", lambda lib, a: a.gather(1, a.argsort(1)), M34),
    # index-valued ops: values, dtypes and shapes only
    OpInfo("nonzero", lambda lib, a: lib.nonzero(a > 0), M234, grad=False, positive_gap=0.05),
    OpInfo("nonzero_method_0d", lambda lib, a: (a > 0).nonzero(), _sh(((),)), grad=False),
    OpInfo("argwhere", lambda lib, a: lib.argwhere(a > 0), M34, grad=False, positive_gap=0.05),
    OpInfo("searchsorted", lambda lib, s, v: lib.searchsorted(s.sort().values, v),
           _sh(((5,), (3, 4)), ((2, 5), (2, 3)), ((5,), ())), grad=False),
    OpInfo("searchsorted_right_int32",
           lambda lib, s, v: lib.searchsorted(s.sort().values, v, right=True, out_int32=True),
           _sh(((5,), (3,))), grad=False),
    OpInfo("bucketize", lambda lib, v, b: lib.bucketize(v, b.sort().values), _sh(((3, 4), (5,))),
           grad=False),
    OpInfo("bucketize_right", lambda lib, v, b: lib.bucketize(v, b.sort()[0], right=True),
           _sh(((6,), (5,))), grad=False),
    OpInfo("scatter_reduce_sum_float_idx_values",
           lambda lib, a, s: lib.scatter_reduce(a, 0, _t(lib, IDX_ROWS), s, "sum"),
           _sh(((3, 4), (2, 4)))),
] + [
    OpInfo(f"scatter_reduce_{red}{'' if inc else '_noself'}",
           _reducer(red, inc),
           _sh(((3, 4), (3, 4))), positive_gap=0.2 if red == "prod" else 0.0)
    for red in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)
]
