"""Focused tests for reductions, sorting, selection and scans: indices and ties, zeros in
products, in-place scans, integer dtypes, errors, and the non-differentiable outputs."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.autograd import gradcheck, gradgradcheck

ZEROS = [[0.0, 2.0, 0.5, 3.0], [1.5, 0.0, 0.0, -2.0], [0.7, -1.2, 2.0, 0.3]]


@pytest.mark.parametrize("fn", [
    lambda x: x.prod(),
    lambda x: x.prod(1),
    lambda x: x.prod(0, keepdim=True),
    lambda x: x.cumprod(1),
    lambda x: x.cumprod(0),
])
def test_products_with_zeros_gradcheck(fn):
    x = retrograd.tensor(ZEROS, dtype=retrograd.float64, requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_scans_and_reductions_by_form():
    x = retrograd.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, 4.0]])
    assert retrograd.equal(x.cumsum(1), retrograd.cumsum(x, 1))
    assert retrograd.equal(x.sort(1).values, retrograd.sort(x, 1)[0])
    assert retrograd.equal(x.amax(1), retrograd.amax(x, dim=1))
    assert retrograd.equal(x.var(1), retrograd.var(x, 1))
    assert retrograd.equal(x.logsumexp(1), retrograd.logsumexp(x, dim=1))


@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_inplace_scans(name):
    x = retrograd.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x * 1
    v = y._version
    ref = getattr(x * 1, name[:-1])(1)
    r = getattr(y, name)(1)
    assert r is y and y._version == v + 1
    assert retrograd.equal(y, ref)
    y.sum().backward()
    g = retrograd.autograd.grad(ref.sum(), x)[0]
    np.testing.assert_allclose(x.grad.numpy(), g.numpy())


def test_return_types():
    x = retrograd.tensor([[3.0, 1.0], [2.0, 5.0]])
    assert type(x.sort()).__name__ == "sort" and x.sort()._fields == ("values", "indices")
    r = retrograd.aminmax(x)
    assert r.min is r[0] and float(r.max) == 5.0
    assert isinstance(retrograd.var_mean(x), tuple)
    assert "retrograd.return_types.topk(" in repr(x.topk(1))


def _both(lib, arr, fn, dtype=None):
    out = fn(lib, lib.tensor(arr) if dtype is None else lib.tensor(arr, dtype=dtype))
    return out


def _cmp(a, b):
    if isinstance(b, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _cmp(x, y)
        return
    assert a.dtype.name == str(b.dtype).replace("torch.", ""), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, equal_nan=True)


TIES = [[2.0, 1.0, 2.0, 3.0, 2.0, 5.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        [4.0, 1.0, 4.0, 4.0, 1.0, 1.0]]
NANS = [1.0, float("nan"), 2.0, float("nan"), 0.5]


@pytest.mark.parametrize("fn", [
    lambda lib, x: tuple(x.sort(1)),
    lambda lib, x: tuple(x.sort(1, descending=True)),
    lambda lib, x: tuple(lib.sort(x, dim=0, stable=True)),
    lambda lib, x: x.argsort(1, descending=True),
    lambda lib, x: x.topk(2).values,  # torch's tie order among topk indices is unspecified
    lambda lib, x: x.topk(3, largest=False).values,
    lambda lib, x: tuple(x.cummax(1)),
    lambda lib, x: tuple(x.cummin(1)),
    lambda lib, x: tuple(x.mode(1)),
    lambda lib, x: tuple(x.mode(0, keepdim=True)),
    lambda lib, x: tuple(x.max(1)),
    lambda lib, x: tuple(x.min(0)),
    lambda lib, x: x.argmax(1),
    lambda lib, x: x.median(),
    lambda lib, x: lib.unique(x, return_inverse=True, return_counts=True),
    lambda lib, x: lib.unique(x, dim=0, return_inverse=True, return_counts=True),
    lambda lib, x: lib.unique(x, dim=1),
    lambda lib, x: lib.aminmax(x, dim=1),
    lambda lib, x: x.count_nonzero(1),
    lambda lib, x: x.all(1),
    lambda lib, x: x.any(),
    lambda lib, x: x.diff(n=2, dim=0),
])
def test_ties_and_indices(torch, fn):
    _cmp(fn(retrograd, retrograd.tensor(TIES)), fn(torch, torch.tensor(TIES)))


@pytest.mark.parametrize("fn", [
    lambda lib, x: tuple(x.sort()),
    lambda lib, x: tuple(x.sort(descending=True)),
    lambda lib, x: tuple(x.topk(2)),
    lambda lib, x: tuple(x.cummax(0)),
    lambda lib, x: tuple(x.cummin(0)),
    lambda lib, x: tuple(x.median(0)),
    lambda lib, x: tuple(x.nanmedian(0)),
    lambda lib, x: x.nanmedian(),
    lambda lib, x: x.median(),
    lambda lib, x: tuple(x.kthvalue(3)),
    lambda lib, x: x.nansum(),
    lambda lib, x: x.nanmean(),
    lambda lib, x: x.argmax(),
    lambda lib, x: x.max(),
    lambda lib, x: x.amax(),
    lambda lib, x: x.unique(),
    lambda lib, x: x.logsumexp(0),
])
def test_nans(torch, fn):
    _cmp(fn(retrograd, retrograd.tensor(NANS)), fn(torch, torch.tensor(NANS)))


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.amax(1),
    lambda lib, x: x.amin(),
    lambda lib, x: x.max(),
    lambda lib, x: x.max(1).values,
    lambda lib, x: x.median(),
    lambda lib, x: x.nanmedian(),
    lambda lib, x: lib.aminmax(x).max * 2 + lib.aminmax(x).min,
    lambda lib, x: lib.linalg.vector_norm(x, float("inf"), 1),
    lambda lib, x: x.cummax(1).values,
    lambda lib, x: x.sort(dim=1, stable=True).values * lib.arange(6.0),
    lambda lib, x: lib.linalg.matrix_norm(x, 1),
])
def test_tie_gradients(torch, fn):
    """Ties: amax/amin/max()/median() share the gradient, max(dim)/cummax/sort select."""
    xs = [lib.tensor(TIES, requires_grad=True) for lib in (retrograd, torch)]
    outs = [fn(lib, x) for lib, x in zip((retrograd, torch), xs)]
    w = np.random.default_rng(0).standard_normal(tuple(outs[1].shape)).astype(np.float32)
    g = [lib.autograd.grad((o * lib.tensor(w)).sum(), x)[0]
         for lib, o, x in zip((retrograd, torch), outs, xs)]
    np.testing.assert_allclose(g[0].numpy(), g[1].numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.prod(),
    lambda lib, x: x.prod(1),
    lambda lib, x: x.cumprod(1),
    lambda lib, x: x.cumprod(0),
])
def test_zeros_against_torch(torch, fn):
    xs = [lib.tensor(ZEROS, dtype=lib.float64, requires_grad=True) for lib in (retrograd, torch)]
    outs = [fn(lib, x) for lib, x in zip((retrograd, torch), xs)]
    w = np.random.default_rng(1).standard_normal(tuple(outs[1].shape))
    gs = [lib.autograd.grad((o * lib.tensor(w)).sum(), x, create_graph=True)[0]
          for lib, o, x in zip((retrograd, torch), outs, xs)]
    np.testing.assert_allclose(gs[0].detach().numpy(), gs[1].detach().numpy(), atol=1e-12)
    w2 = np.random.default_rng(2).standard_normal(xs[0].shape)
    g2 = [lib.autograd.grad((g * lib.tensor(w2)).sum(), x)[0]
          for lib, g, x in zip((retrograd, torch), gs, xs)]
    np.testing.assert_allclose(g2[0].numpy(), g2[1].numpy(), atol=1e-12)


INTS = [[3, 1, 2], [0, 5, 5]]


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("fn", [
    lambda lib, x: x.sum(),
    lambda lib, x: x.nansum(1),
    lambda lib, x: x.prod(1),
    lambda lib, x: x.cumsum(1),
    lambda lib, x: x.cumprod(0),
    lambda lib, x: x.amax(1),
    lambda lib, x: x.amin(),
    lambda lib, x: tuple(x.cummax(1)),
    lambda lib, x: tuple(x.sort(1)),
    lambda lib, x: x.argsort(0),
    lambda lib, x: x.all(1),
    lambda lib, x: x.any(),
    lambda lib, x: x.count_nonzero(),
    lambda lib, x: x.logsumexp(1),
    lambda lib, x: x.unique(),
    lambda lib, x: x.sum(1, dtype=lib.float32),
    lambda lib, x: x.cumsum(0, dtype=lib.float64),
    lambda lib, x: lib.aminmax(x),
])
def test_integer_dtypes(torch, fn, dtype):
    _cmp(fn(retrograd, retrograd.tensor(INTS, dtype=getattr(retrograd, dtype))),
         fn(torch, torch.tensor(INTS, dtype=getattr(torch, dtype))))


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.var(),
    lambda lib, x: x.std(1),
    lambda lib, x: x.nanmean(),
    lambda lib, x: x.mean(),
    lambda lib, x: x.logcumsumexp(0),
    lambda lib, x: lib.linalg.vector_norm(x),
    lambda lib, x: lib.linalg.matrix_norm(x),
    lambda lib, x: x.float().amax(5),
    lambda lib, x: x.float().sum((0, 0)),
    lambda lib, x: x.float().var((1, 1)),
    lambda lib, x: lib.zeros(0, 3).amax(0),
    lambda lib, x: lib.zeros(0).amax(),
    lambda lib, x: lib.zeros(0).max(),
    lambda lib, x: lib.zeros(0).aminmax(),
    lambda lib, x: x.topk(4),
    lambda lib, x: x.kthvalue(0),
    lambda lib, x: x.kthvalue(4, 1),
    lambda lib, x: x.cumsum(2),
    lambda lib, x: x.sort(-3),
    lambda lib, x: lib.tensor(1.0).diff(),
    lambda lib, x: lib.linalg.vector_norm(x.float(), "fro"),
    lambda lib, x: lib.linalg.matrix_norm(x.float()[0]),
    lambda lib, x: lib.linalg.matrix_norm(x.float(), 3),
    lambda lib, x: lib.linalg.matrix_norm(x.float(), "abc"),
    lambda lib, x: lib.linalg.matrix_norm(x.float(), dim=(1, -1)),
    lambda lib, x: lib.norm(x.float(), "nuc", dim=0),
    lambda lib, x: x.bool().median(),
    lambda lib, x: x.float().median(dim=(0,)),
    lambda lib, x: lib.zeros(2, 0).median(1),
])
def test_errors_match_torch(torch, fn):
    with pytest.raises(Exception) as ref:
        fn(torch, torch.tensor(INTS))
    with pytest.raises(type(ref.value)) as got:
        fn(retrograd, retrograd.tensor(INTS))
    assert str(got.value) == str(ref.value)


def test_unique_has_no_derivative(torch):
    for lib in (retrograd, torch):
        x = lib.tensor([1.0, 2.0, 1.0], requires_grad=True)
        out = lib.unique(x)
        assert out.grad_fn.name() == "Unique2Backward0"
        with pytest.raises(NotImplementedError, match="the derivative for '_unique2' is not"):
            out.sum().backward()


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is")
def test_empty_and_scalar_values(torch):
    for fn in (lambda lib, x: x.sum(), lambda lib, x: x.prod(), lambda lib, x: x.mean(),
               lambda lib, x: x.var(), lambda lib, x: x.median(), lambda lib, x: x.nansum(),
               lambda lib, x: x.logsumexp(0), lambda lib, x: x.cumsum(0),
               lambda lib, x: lib.linalg.vector_norm(x), lambda lib, x: x.all(),
               lambda lib, x: x.any(), lambda lib, x: x.count_nonzero()):
        for arr in ([], 2.5):
            with np.errstate(all="ignore"):
                _cmp(fn(retrograd, retrograd.tensor(arr)), fn(torch, torch.tensor(arr)))


def test_logsumexp_stable():
    x = retrograd.tensor([1000.0, 1000.0, -float("inf")])
    assert float(x.logsumexp(0)) == pytest.approx(1000.0 + np.log(2.0))
    big = retrograd.tensor([800.0, 0.0], requires_grad=True)
    big.logcumsumexp(0).sum().backward()
    assert np.isfinite(big.grad.numpy()).all()


@pytest.mark.parametrize("fn", [
    lambda L, x, h: L.linalg.vector_norm(x, dtype=L.float64),
    lambda L, x, h: L.linalg.vector_norm(x, 3, dim=0, dtype=L.float64),
    lambda L, x, h: L.linalg.vector_norm(h, 3, dim=0, dtype=L.float32),
    lambda L, x, h: L.linalg.vector_norm(h, float("inf"), 1, True, dtype=L.float64),
    lambda L, x, h: L.linalg.matrix_norm(x, dtype=L.float64),
    lambda L, x, h: L.linalg.matrix_norm(x, 1, dtype=L.float64),
    lambda L, x, h: L.norm(x, dtype=L.float64)])
def test_vector_norm_dtype_builds_torchs_graph(torch, fn):
    """vector_norm(dtype=) computes in dtype but records its node on the input itself (no
    ToCopyBackward0): the same graph, result dtype, values and gradients (in the input's
    dtype) as PyTorch's."""
    a = np.array([[3.0, 4.0, 1e-3], [0.0, -2.0, 7.0]])
    res = []
    for lib in (retrograd, torch):
        x = lib.tensor(a, dtype=lib.float32, requires_grad=True)
        h = lib.tensor(a, dtype=lib.float16, requires_grad=True)
        y = fn(lib, x, h)
        names, stack = [], [y.grad_fn]
        while stack:
            n = stack.pop()
            if n is not None:
                names.append((n.name().replace("torch::autograd::", ""), len(n.next_functions)))
                stack += [m for m, _ in n.next_functions]
        g = lib.autograd.grad(y.sum(), (x, h), allow_unused=True)
        res.append((y, [t if t is None else (str(t.dtype)[-7:], t.double().numpy()) for t in g],
                    names))
    (y, g, n), (yt, gt, nt) = res
    assert n == nt and str(y.dtype)[-7:] == str(yt.dtype)[-7:]
    np.testing.assert_allclose(y.detach().double().numpy(), yt.detach().double().numpy(),
                               rtol=1e-6)
    for u, v in zip(g, gt):
        assert (u is None) == (v is None)
        if u is not None:
            assert u[0] == v[0]
            np.testing.assert_allclose(u[1], v[1], rtol=1e-3 if u[0] == "float16" else 1e-6)


@pytest.mark.parametrize("have, want", [("float32", "int64"), ("bfloat16", "float16"),
                                        ("float16", "bfloat16"), ("float64", "float32")])
def test_vector_norm_dtype_errors_match_torch(torch, have, want):
    msgs = []
    for lib in (retrograd, torch):
        with pytest.raises(RuntimeError) as e:
            lib.linalg.vector_norm(lib.ones(2, dtype=getattr(lib, have)),
                                   dtype=getattr(lib, want))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("ord", ["nuc", 1, -1, 2, -2, float("inf"), -float("inf")])
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm_builds_torchs_graph(torch, ord, keepdim):
    """matrix_norm as PyTorch composes it: 1/inf through vector_norm(A, 1) over one dim then
    amax/amin, 2/nuc over the singular values with keepdim passed on and one unsqueeze."""
    a = np.random.default_rng(3).standard_normal((2, 3, 4))
    res = []
    for lib in (retrograd, torch):
        t = lib.tensor(a, requires_grad=True)
        y = lib.linalg.matrix_norm(t, ord, (2, 0), keepdim)
        names, stack = [], [y.grad_fn]
        while stack:
            n = stack.pop()
            if n is not None:
                names.append(n.name().replace("torch::autograd::", ""))
                stack += [m for m, _ in n.next_functions]
        res.append((y.detach().numpy(), lib.autograd.grad(y.sum(), t)[0].numpy(), names))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-10)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-8, atol=1e-12)
    assert res[0][2] == res[1][2]
