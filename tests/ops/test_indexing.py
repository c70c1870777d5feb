"""Focused tests of the indexing family: index expressions, in-place forms, errors vs torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
from retrograd.ops.indexing import one_hot

X = np.arange(60, dtype=np.float64).reshape(3, 4, 5) - 30


def test_getitem_int_then_advanced_keeps_torch_order():
    x = retrograd.tensor(X)
    # PyTorch applies the int as a select first: no advanced-index transpose (NumPy differs).
    assert tuple(x[1, :, [0, 1]].shape) == (4, 2)
    assert tuple(x[[0, 1], :, [1, 2]].shape) == (2, 4)
    assert tuple(x[None, True, ..., False].shape) == (0, 1, 3, 4, 5)


def test_setitem_grads_both_ways():
    x = retrograd.tensor(X, requires_grad=True)
    v = retrograd.tensor(np.ones((4, 2)), requires_grad=True)
    y = x * 1
    y[1, :, [0, 3]] = v * 2
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    (y * y).sum().backward()
    gx = 2 * X
    gx[1][:, [0, 3]] = 0
    np.testing.assert_allclose(x.grad.numpy(), gx)
    np.testing.assert_allclose(v.grad.numpy(), 8 * np.ones((4, 2)))


def test_index_put_accumulate_in_place_bumps_version():
    x = retrograd.zeros(4)
    v0 = x._version
    x.index_put_((retrograd.tensor([0, 2, 2]),), retrograd.tensor(1.0), accumulate=True)
    assert x.tolist() == [1.0, 0.0, 2.0, 0.0]
    assert x._version > v0


INPLACE = [
    ("scatter_", lambda lib: (0, lib.tensor([[2, 0, 1]]), lib.ones(1, 3))),
    ("scatter_add_", lambda lib: (0, lib.tensor([[2, 0, 2]]), lib.ones(1, 3))),
    ("scatter_reduce_", lambda lib: (0, lib.tensor([[2, 0, 2]]), lib.ones(1, 3) * 7, "amax")),
    ("index_add_", lambda lib: (1, lib.tensor([2, 2]), lib.ones(3, 2))),
    ("index_copy_", lambda lib: (1, lib.tensor([2, 0]), lib.ones(3, 2))),
    ("index_fill_", lambda lib: (0, lib.tensor([1]), -1.0)),
    ("masked_fill_", lambda lib: (lib.tensor([True, False, True]), 5.0)),
    ("masked_scatter_", lambda lib: (lib.tensor([[True], [False], [True]]), lib.ones(6))),
    ("put_", lambda lib: (lib.tensor([0, 8]), lib.tensor([3.0, 4.0]))),
    ("index_put_", lambda lib: ((lib.tensor([1]),), lib.tensor(2.0))),
]


@pytest.mark.parametrize("name,args", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_matches_out_of_place_and_torch(name, args):
    base = np.arange(9, dtype=np.float32).reshape(3, 3)
    x = retrograd.tensor(base)
    v0 = x._version
    r = getattr(x, name)(*args(retrograd))
    assert r is x and x._version > v0
    ref = getattr(retrograd.tensor(base), name[:-1])(*args(retrograd))
    np.testing.assert_array_equal(x.numpy(), ref.numpy())
    torch = pytest.importorskip("torch")
    t = torch.tensor(base)
    getattr(t, name)(*args(torch))
    np.testing.assert_array_equal(x.numpy(), t.numpy())


def test_inplace_on_non_leaf_records_history():
    a = retrograd.tensor(np.ones((3, 3)), requires_grad=True)
    s = retrograd.tensor(np.full((1, 3), 2.0), requires_grad=True)
    y = a * 1
    y.scatter_(0, retrograd.tensor([[2, 0, 1]]), s)
    assert y.grad_fn.name() == "ScatterBackward0"
    y.sum().backward()
    assert a.grad.sum().item() == 6.0 and s.grad.tolist() == [[1.0, 1.0, 1.0]]


def test_functions_and_methods_agree():
    x = retrograd.tensor(X[0])
    i = retrograd.tensor([[0, 1, 2, 3, 0]])
    assert retrograd.equal(retrograd.gather(x, 0, i), x.gather(0, i))
    assert retrograd.equal(retrograd.take(x, i), x.take(i))
    assert retrograd.equal(retrograd.argwhere(x > 0), (x > 0).nonzero())
    assert all(retrograd.equal(a, b) for a, b in zip(
        retrograd.nonzero(x > 0, as_tuple=True), retrograd.where(x > 0)))


def test_integer_and_bool_inputs_keep_dtype():
    x = retrograd.tensor([[1, 2], [3, 4]])
    assert x.gather(1, retrograd.tensor([[1], [0]])).dtype == retrograd.int64
    assert x[x > 1].dtype == retrograd.int64
    b = retrograd.tensor([True, False])
    assert b[[1, 0]].tolist() == [False, True]
    assert retrograd.scatter_reduce(retrograd.tensor([1, 2, 3]), 0, retrograd.tensor([0, 0, 2]),
                                    retrograd.tensor([4, 4, 4]), "mean").tolist() == [3, 2, 3]


def test_one_hot():
    assert one_hot(retrograd.tensor([0, 2])).tolist() == [[1, 0, 0], [0, 0, 1]]
    assert tuple(one_hot(retrograd.tensor([], dtype=retrograd.int64), 3).shape) == (0, 3)
    assert one_hot(retrograd.tensor(1), 2).dtype == retrograd.int64


def test_scatter_reduce_legacy_has_no_gradient():
    a = retrograd.ones(3, requires_grad=True)
    y = retrograd.scatter(a * 1, 0, retrograd.tensor([0, 0]), 2.0, reduce="multiply")
    assert y.tolist() == [4.0, 1.0, 1.0]
    assert y.grad_fn.name() == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        y.sum().backward()


def test_prod_scatter_reduce_grad_at_zero():
    torch = pytest.importorskip("torch")
    base, src = [1.0, 0.0, 3.0], [0.0, 2.0, 5.0, 0.0]
    idx = [0, 0, 2, 1]
    out = []
    for lib in (retrograd, torch):
        x = lib.tensor(base, dtype=lib.float64, requires_grad=True)
        s = lib.tensor(src, dtype=lib.float64, requires_grad=True)
        y = x.scatter_reduce(0, lib.tensor(idx), s, "prod")
        out.append(lib.autograd.grad(y.sum(), (x, s)))
    for a, b in zip(*out):
        np.testing.assert_allclose(a.numpy(), b.numpy())


# -- error types and messages against torch -----------------------------------------------------

ERRORS = {
    "getitem_oob": lambda lib, x: x[5],
    "getitem_oob_neg": lambda lib, x: x[-4],
    "getitem_oob_dim1": lambda lib, x: x[0, 7],
    "getitem_oob_after_none": lambda lib, x: x[None, 0, ..., 9],
    "getitem_oob_mixed": lambda lib, x: x[None, 0, [0], 9],
    "getitem_oob_after_true": lambda lib, x: x[True, 0, 9],
    "getitem_oob_after_mask": lambda lib, x: x[lib.tensor([[True] * 4] * 3), 7],
    "getitem_adv_oob": lambda lib, x: x[lib.tensor([5])],
    "getitem_adv_oob_dim": lambda lib, x: x[:, [0, 9]],
    "getitem_adv_elem_order": lambda lib, x: x[[0, 5], [9, 0]],
    "getitem_adv_neg_oob": lambda lib, x: x[[0, -5]],
    "getitem_bcast": lambda lib, x: x[[0, 1], [0, 1, 2]],
    "getitem_mask_shape": lambda lib, x: x[1:, :, lib.tensor([True])],
    "getitem_float": lambda lib, x: x[1.5],
    "getitem_float_tensor": lambda lib, x: x[lib.tensor([1.0])],
    "getitem_too_many": lambda lib, x: x[0, 0, 0, 0],
    "getitem_step0": lambda lib, x: x[::0],
    "getitem_step_neg": lambda lib, x: x[::-1],
    "getitem_0d": lambda lib, x: x[0, 0, 0][0],
    "setitem_oob": lambda lib, x: x.__setitem__([0, 5], 1.0),
    "setitem_shape": lambda lib, x: x.__setitem__([0, 1], lib.ones(3, 3)),
    "setitem_dtype": lambda lib, x: x.__setitem__([0], lib.ones(4, 5, dtype=lib.float32)),
    "gather_float": lambda lib, x: x.gather(0, lib.zeros(1, 4, 5)),
    "gather_oob": lambda lib, x: x.gather(0, lib.full((1, 4, 5), 3)),
    "gather_neg": lambda lib, x: x.gather(0, lib.full((1, 4, 5), -1)),
    "gather_ndim": lambda lib, x: x.gather(0, lib.zeros(4, dtype=lib.int64)),
    "gather_size": lambda lib, x: x.gather(0, lib.zeros(1, 5, 5, dtype=lib.int64)),
    "gather_dim": lambda lib, x: x.gather(3, lib.zeros(1, 4, 5, dtype=lib.int64)),
    "scatter_src_small": lambda lib, x: x.scatter(
        0, lib.zeros(2, 4, 5, dtype=lib.int64), lib.ones(1, 4, 5, dtype=lib.float64)),
    "scatter_dtype": lambda lib, x: x.scatter(0, lib.zeros(1, 4, 5, dtype=lib.int64),
                                              lib.ones(1, 4, 5)),
    "scatter_reduce_arg": lambda lib, x: x.scatter(0, lib.zeros(1, 4, 5, dtype=lib.int64), 1.0,
                                                   reduce="sum"),
    "scatter_reduce_bad": lambda lib, x: x.scatter_reduce(
        0, lib.zeros(1, 4, 5, dtype=lib.int64), x, "foo"),
    "index_select_2d": lambda lib, x: x.index_select(0, lib.tensor([[0]])),
    "index_select_float": lambda lib, x: x.index_select(0, lib.tensor([0.0])),
    "index_select_neg": lambda lib, x: x.index_select(0, lib.tensor([-1])),
    "index_add_float": lambda lib, x: x.index_add(0, lib.tensor([0.0]), x[:1]),
    "index_add_oob": lambda lib, x: x.index_add(0, lib.tensor([3]), x[:1]),
    "index_add_count": lambda lib, x: x.index_add(0, lib.tensor([0, 1]), x[:1]),
    "index_add_shape": lambda lib, x: x.index_add(0, lib.tensor([0]), x[:1, :3]),
    "index_add_dtype": lambda lib, x: x.index_add(0, lib.tensor([0]), x[:1].float()),
    "index_copy_int32": lambda lib, x: x.index_copy(0, lib.tensor([0], dtype=lib.int32), x[:1]),
    "index_copy_oob": lambda lib, x: x.index_copy(0, lib.tensor([-1]), x[:1]),
    "index_copy_count": lambda lib, x: x.index_copy(0, lib.tensor([0, 1]), x[:1]),
    "index_fill_int32": lambda lib, x: x.index_fill(0, lib.tensor([0], dtype=lib.int32), 1.0),
    "index_fill_oob": lambda lib, x: x.index_fill(0, lib.tensor([3]), 1.0),
    "index_fill_value": lambda lib, x: x.index_fill(0, lib.tensor([0]), lib.ones(2)),
    "masked_select_int": lambda lib, x: x.masked_select(lib.ones(5, dtype=lib.int64)),
    "masked_scatter_few": lambda lib, x: x.masked_scatter(x > -100, lib.ones(3,
                                                                           dtype=lib.float64)),
    "masked_fill_int": lambda lib, x: x.masked_fill(lib.ones(5, dtype=lib.int64), 1.0),
    "take_int32": lambda lib, x: x.take(lib.tensor([0], dtype=lib.int32)),
    "take_oob": lambda lib, x: x.take(lib.tensor([60])),
    "take_along_int32": lambda lib, x: x.take_along_dim(lib.zeros(1, 1, 1, dtype=lib.int32), 0),
    "take_along_ndim": lambda lib, x: x.take_along_dim(lib.tensor([0]), 0),
    "take_along_bcast": lambda lib, x: x.take_along_dim(lib.zeros(1, 2, 5, dtype=lib.int64), 0),
    "put_numel": lambda lib, x: x.put(lib.tensor([0, 1]), lib.ones(1, dtype=lib.float64)),
    "searchsorted_side": lambda lib, x: lib.searchsorted(x[0, 0], x[0], side="foo"),
    "searchsorted_conflict": lambda lib, x: lib.searchsorted(x[0, 0], x[0], side="left",
                                                             right=True),
    "searchsorted_shape": lambda lib, x: lib.searchsorted(x[0], x[0, 0]),
    "searchsorted_sorter": lambda lib, x: lib.searchsorted(
        x[0, 0], x[0], sorter=lib.zeros(5, dtype=lib.int32)),
    "bucketize_2d": lambda lib, x: lib.bucketize(x[0, 0], x[0]),
    "one_hot_float": lambda lib, x: _one_hot(lib)(x[0, 0]),
    "one_hot_neg": lambda lib, x: _one_hot(lib)(lib.tensor([-1])),
    "one_hot_big": lambda lib, x: _one_hot(lib)(lib.tensor([3]), 2),
    "one_hot_empty": lambda lib, x: _one_hot(lib)(lib.tensor([], dtype=lib.int64)),
}


def _one_hot(lib):
    return one_hot if lib is retrograd else lib.nn.functional.one_hot


def _error(lib, fn):
    x = lib.tensor(X)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(lib, x)
    except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    torch = pytest.importorskip("torch")
    expected = _error(torch, ERRORS[name])
    assert expected is not None, "torch accepts this"
    assert _error(retrograd, ERRORS[name]) == expected


# -- index expressions: shapes, values and gradients against torch -----------------------------

EXPRS = [
    lambda lib: (0, slice(1, None), [1, 3]),
    lambda lib: ([2, 0], 1, slice(None), None),
    lambda lib: (slice(None), None, [[0, 1]], [[2], [3]]),
    lambda lib: (Ellipsis, lib.tensor([True, False, True, True, False])),
    lambda lib: (lib.tensor(X[:, :, 0] > 0),),
    lambda lib: (slice(None), lib.tensor([[True, False, True, True, False]] * 4)),
    lambda lib: ([[0, 1], [1, 2]],),
    lambda lib: [lib.tensor(1), lib.tensor(2)],
    lambda lib: (lib.tensor(2), [0, 0], None, [4, -1]),
    lambda lib: (slice(-2, None, 2), [-1, 0], slice(None, None, 2)),
    lambda lib: (True, [0], False, Ellipsis),
    lambda lib: (lib.tensor([1, 0], dtype=lib.int32), [[3], [0]]),
    lambda lib: [0.0, 2.7],
    lambda lib: (slice(None), []),
    lambda lib: (lib.zeros(0, dtype=lib.int64), 1),
]


@pytest.mark.parametrize("k", range(len(EXPRS)))
def test_index_expressions_against_torch(k):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (retrograd, torch):
        x = lib.tensor(X, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = x[EXPRS[k](lib)]
            z = x * 1
            z[EXPRS[k](lib)] = 0.5
        w = lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))
        (g,) = lib.autograd.grad((y * w).sum() + (z * z).sum(), (x,))
        results.append((y.detach().numpy(), z.detach().numpy(), g.numpy()))
    for a, b in zip(*results):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b)


def test_uint8_mask_index_warns_and_masks():
    x = retrograd.tensor([1.0, 2.0, 3.0])
    with pytest.warns(UserWarning, match="uint8"):
        y = x[retrograd.tensor([1, 0, 1], dtype=retrograd.uint8)]
    assert y.tolist() == [1.0, 3.0]


def test_nonzero_and_search_are_not_differentiable():
    x = retrograd.tensor([0.5, -1.0, 2.0], requires_grad=True)
    assert not retrograd.nonzero(x).requires_grad
    s = retrograd.searchsorted(retrograd.tensor([0.0, 1.0]), x)
    assert not s.requires_grad and s.tolist() == [1, 0, 2]
    assert retrograd.bucketize(2.0, retrograd.tensor([1.0, 2.0, 3.0])).tolist() == 1
    sorter = retrograd.tensor([1, 2, 0])
    assert retrograd.searchsorted(retrograd.tensor([3.0, 1.0, 2.0]), retrograd.tensor([2.5]),
                                  sorter=sorter).tolist() == [2]
