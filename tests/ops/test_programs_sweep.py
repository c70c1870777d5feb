"""Differences a sweep of typical PyTorch programs found, each compared with torch: matmul's
fold-or-bmm choice (graphs and error messages), reshape's ``_reshape_alias`` node, narrow's
range checks, and the empty-list errors of cat and stack.
"""

from __future__ import annotations

import pytest

import retrograd


def _chain(fn) -> str:
    if fn is None:
        return "None"
    kids = [_chain(f) for f, _ in fn.next_functions if f is not None]
    return fn.name().split("::")[-1] + "(" + ",".join(kids) + ")"


def _error(lib, f):
    try:
        f(lib)
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return type(e).__name__, str(e)
    return None


MATMUL = [((2, 3, 4), (4, 5)), ((5,), (2, 5, 4)), ((3, 5), (2, 5, 4)), ((2, 3, 4), (4,)),
          ((2, 3, 4), (2, 4, 5)), ((4,), (2, 3, 4, 6)), ((2, 1, 3, 4), (3, 4, 6))]


@pytest.mark.parametrize("rga,rgb", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("sa,sb", MATMUL)
def test_matmul_graph_matches_torch(torch, sa, sb, rga, rgb):
    def run(lib):
        a = lib.ones(sa, requires_grad=rga)
        b = lib.ones(sb, requires_grad=rgb)
        return _chain((a @ b).grad_fn)
    assert run(retrograd) == run(torch)


def test_matmul_strided_batch_does_not_fold(torch):
    def run(lib):
        x = lib.ones(2, 4, 3, requires_grad=True).transpose(1, 2)
        return _chain((x @ lib.ones(4, 5)).grad_fn), _chain((x.detach() @ lib.ones(
            4, 5, requires_grad=True)).grad_fn)
    assert run(retrograd) == run(torch)


BAD = [((3, 4), (3,)), ((2, 3, 4), (5,)), ((5,), (2, 3, 4)), ((2, 2, 3), (4, 5)),
       ((3, 4), (2, 5, 6)), ((2, 3, 4), (2, 5, 6)), ((2, 3, 4), (3, 4, 5)),
       ((2, 1, 3, 4), (3, 5, 6)), ((2, 2, 3, 4), (5, 6)), ((4,), (2, 2, 3, 4)),
       ((2, 3, 4), (1, 5, 6)), ((3,), (4, 5))]


@pytest.mark.parametrize("rg", [False, True])
@pytest.mark.parametrize("sa,sb", BAD)
def test_matmul_shape_errors_match_torch(torch, sa, sb, rg):
    def f(lib):
        return lib.matmul(lib.ones(sa, requires_grad=rg), lib.ones(sb))
    got, want = _error(retrograd, f), _error(torch, f)
    assert want is not None and got == want


def test_reshape_of_strided_tensor_is_reshape_alias(torch):
    def run(lib):
        x = lib.ones(2, 4, 3, requires_grad=True)
        return [y.grad_fn.name() for y in (
            x.transpose(1, 2).reshape(2, 3, 4), x.reshape(4, 6), x.transpose(0, 1).reshape(4, 6),
            x[:, :, :2].reshape(8, 2), x[0].t().reshape(3, 2, 2), x.transpose(0, 1).flatten(1))]
    assert run(retrograd) == run(torch)


NARROW = [(0, 2, 2), (0, -1, 1), (0, 4, 0), (0, 3, 0), (0, -4, 1), (2, 0, 1), (0, 1, -1),
          (1, -4, 4), (1, 0, 5)]


@pytest.mark.parametrize("dim,start,length", NARROW)
def test_narrow_range_checks_match_torch(torch, dim, start, length):
    def f(lib):
        return lib.arange(12).reshape(3, 4).narrow(dim, start, length).tolist()
    want = _error(torch, f)
    assert _error(retrograd, f) == want
    if want is None:
        assert f(retrograd) == f(torch)


@pytest.mark.parametrize("name", ["cat", "concat", "stack", "hstack", "vstack", "row_stack",
                                  "dstack", "column_stack"])
def test_join_of_nothing_matches_torch(torch, name):
    def f(lib):
        return getattr(lib, name)([])
    assert _error(retrograd, f) == _error(torch, f)


@pytest.mark.parametrize("call", ["masked_select", "masked_scatter", "masked_fill", "masked_fill_"])
def test_masked_ops_broadcast_error_names_match_torch(torch, call):
    def f(lib):
        x, m = lib.zeros(3, 4), lib.ones(2, dtype=lib.bool)
        args = {"masked_scatter": (m, lib.ones(12)), "masked_fill": (m, 1.0),
                "masked_fill_": (m, 1.0)}.get(call, (m,))
        return getattr(x, call)(*args)
    assert _error(retrograd, f) == _error(torch, f) is not None


INDEX_SELECT = [((2, 2), 1, [2]), ((2, 2), 0, [2]), ((3,), 0, [3]), ((2, 3, 4), 2, [4]),
                ((2, 3, 4), 1, [-4]), ((2, 3), 1, [0, 5]), ((0, 2), 1, [5]), ((2, 0), 1, [5]),
                ((0,), 0, [1]), ((0, 3), 0, [0]), ((3, 0), 0, [1])]


@pytest.mark.parametrize("shape,dim,index", INDEX_SELECT)
def test_index_select_out_of_range_errors_match_torch(torch, shape, dim, index):
    def f(lib):
        return lib.ones(shape).index_select(dim, lib.tensor(index, dtype=lib.long)).shape
    want = _error(torch, f)
    assert _error(retrograd, f) == want
    if want is None:
        assert tuple(f(retrograd)) == tuple(f(torch))


@pytest.mark.parametrize("call", ["argmax", "argmin"])
def test_arg_reduction_of_nothing_is_index_error(torch, call):
    def f(lib):
        return getattr(lib.ones(0, 3), call)()
    assert _error(retrograd, f) == _error(torch, f) is not None


def test_storage_offset_and_real_match_torch(torch):
    def run(lib):
        x = lib.arange(24.).reshape(4, 6)
        views = [x[1:, 2:], x[1:, 2:][1:], x.t(), x.view(-1)[3:], x[:, 1], x.unbind(0)[2],
                 x.chunk(2, 1)[1], x.diagonal(1), x[2:].detach(), x[1:].data, x.narrow(1, 2, 3),
                 x.split([1, 5], 1)[1], x.flip(0), x * 2, x.max(1).values, x[1:].contiguous(),
                 x[1:].real]
        return [v.storage_offset() for v in views], x.real is x
    assert run(retrograd) == run(torch)
