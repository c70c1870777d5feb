"""Tests for linear, bilinear, Flatten/Unflatten, normalize, cosine_similarity and
pairwise_distance, against PyTorch (skipped without it), with gradcheck on the functional forms."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn  # noqa: F401
import retrograd.nn.functional as F
from retrograd.autograd import gradcheck, gradgradcheck

from .. import oracle

TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-10, atol=1e-12)}


def rand(*shape, dt=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dt)


def run_both(torch, fn_rg, fn_t, arrays, dt, seed=0, **kw):
    """The oracle's ``run_both`` with this file's tolerances and upstream seeds."""
    return oracle.run_both(torch, fn_rg, fn_t, arrays, tol=TOL[dt], seed=seed + 100, **kw)


def names(t):
    fn = t.grad_fn
    return fn.name(), [f.name() if f is not None else None for f, _ in fn.next_functions]


# -- linear ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("xshape", [(4, 3), (2, 4, 3), (3,), (2, 2, 1, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(torch, dt, xshape, bias):
    arrays = [rand(*xshape, dt=dt), rand(5, 3, dt=dt, seed=1)]
    if bias:
        arrays.append(rand(5, dt=dt, seed=2))
    y, yt = run_both(torch, F.linear, torch.nn.functional.linear, arrays, dt)
    assert y.grad_fn.name() == yt.grad_fn.name()
    if len(xshape) == 2:
        assert names(y)[0] == names(yt)[0]


def test_linear_frozen_input_and_weight(torch):
    x = rg.randn(4, 3)
    w = rg.randn(5, 3, requires_grad=True)
    b = rg.randn(5)
    F.linear(x, w, b).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.tile(x.numpy().sum(0), (5, 1)), rtol=1e-5)
    x2 = rg.randn(4, 3, requires_grad=True)
    F.linear(x2, w.detach(), rg.randn(1, 5, requires_grad=True)).sum().backward()
    np.testing.assert_allclose(x2.grad.numpy(), np.tile(w.detach().numpy().sum(0), (4, 1)),
                               rtol=1e-5)
    with rg.no_grad():
        assert F.linear(x2, w, b).grad_fn is None


def test_linear_gradcheck():
    x = rg.randn(3, 2, dtype=rg.float64, requires_grad=True)
    w = rg.randn(4, 2, dtype=rg.float64, requires_grad=True)
    b = rg.randn(4, dtype=rg.float64, requires_grad=True)
    for args in [(x, w, b), (x, w), (x[0].detach().requires_grad_(), w, b),
                 (x.reshape(3, 1, 2).detach().requires_grad_(), w, b)]:
        assert gradcheck(F.linear, args)
        assert gradgradcheck(F.linear, args)


def test_linear_errors(torch):
    def cases(lib):
        f = lib.nn.functional.linear
        return [
            lambda: f(lib.randn(4, 3, dtype=lib.float64), lib.randn(5, 3)),
            lambda: f(lib.randn(4, 3), lib.randn(5, 2)),
            lambda: f(lib.randn(4, 3), lib.randn(5, 3), lib.randn(4)),
            lambda: f(lib.randn(2, 4, 3), lib.randn(5, 2), lib.randn(5)),
            lambda: f(lib.randn(3), lib.randn(5, 2), lib.randn(5)),
        ]
    for ct, cr in zip(cases(torch), cases(rg)):
        with pytest.raises(Exception) as et:
            ct()
        with pytest.raises(type(et.value)) as er:
            cr()
        assert str(er.value) == str(et.value)


def test_linear_module(torch):
    m, mt = rg.nn.Linear(3, 5), torch.nn.Linear(3, 5)
    m.load_state_dict({k: rg.tensor(v.detach().numpy()) for k, v in mt.state_dict().items()})
    run_both(torch, m, mt, [rand(4, 3, dt=np.float32)], np.float32)
    np.testing.assert_allclose(m.weight.grad.numpy(), mt.weight.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(m.bias.grad.numpy(), mt.bias.grad.numpy(), rtol=1e-5)
    assert m(rg.randn(4, 3)).grad_fn.name() == "AddmmBackward0"


# -- bilinear ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("batch", [(4,), (2, 3), ()])
@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_matches_torch(torch, dt, batch, bias):
    arrays = [rand(*batch, 3, dt=dt), rand(*batch, 2, dt=dt, seed=1),
              rand(5, 3, 2, dt=dt, seed=2)]
    if bias:
        arrays.append(rand(5, dt=dt, seed=3))
    run_both(torch, F.bilinear, torch.nn.functional.bilinear, arrays, dt)


def test_bilinear_module_and_gradcheck(torch):
    m, mt = rg.nn.Bilinear(3, 2, 4), torch.nn.Bilinear(3, 2, 4)
    assert repr(m) == repr(mt)
    assert list(m.state_dict()) == list(mt.state_dict())
    assert repr(rg.nn.Bilinear(3, 2, 4, bias=False)) == repr(torch.nn.Bilinear(3, 2, 4,
                                                                               bias=False))
    m.load_state_dict({k: rg.tensor(v.detach().numpy()) for k, v in mt.state_dict().items()})
    run_both(torch, m, mt, [rand(5, 3, dt=np.float32), rand(5, 2, dt=np.float32, seed=1)],
             np.float32)
    w = rg.nn.Bilinear(400, 2, 50).weight.detach().numpy()
    assert np.abs(w).max() <= 1 / 20 and w.std() > 0.9 / 20 / np.sqrt(3)
    args = [rg.randn(2, 3, dtype=rg.float64, requires_grad=True),
            rg.randn(2, 2, dtype=rg.float64, requires_grad=True),
            rg.randn(4, 3, 2, dtype=rg.float64, requires_grad=True),
            rg.randn(4, dtype=rg.float64, requires_grad=True)]
    assert gradgradcheck(F.bilinear, args)
    with pytest.raises(RuntimeError) as et:
        torch.nn.Bilinear(2, 3, 4)(torch.randn(4, 3), torch.randn(4, 3))
    with pytest.raises(RuntimeError) as er:
        rg.nn.Bilinear(2, 3, 4)(rg.randn(4, 3), rg.randn(4, 3))
    assert str(er.value) == str(et.value)


def test_linear_default_init():
    m = rg.nn.Linear(400, 30)
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert np.abs(w).max() <= 1 / 20 and np.abs(b).max() <= 1 / 20
    assert abs(w.std() - 1 / 20 / np.sqrt(3)) < 0.003


# -- flatten -----------------------------------------------------------------------------------

def test_flatten_unflatten(torch):
    for args in [(), (0,), (1, 2), (0, -2)]:
        m, mt = rg.nn.Flatten(*args), torch.nn.Flatten(*args)
        assert repr(m) == repr(mt)
        y, yt = run_both(torch, m, mt, [rand(2, 3, 4, 5)], np.float64)
        assert y.shape == yt.shape and y.grad_fn.name() == yt.grad_fn.name()
    for args in [(1, (2, 2)), (1, [2, 2]), (-1, (2, 1, 2))]:
        m, mt = rg.nn.Unflatten(*args), torch.nn.Unflatten(*args)
        assert repr(m) == repr(mt)
        y, yt = run_both(torch, m, mt, [rand(3, 4)], np.float64)
        assert y.shape == yt.shape
    with pytest.raises(TypeError) as et:
        torch.nn.Unflatten(1, (2.0, 2))
    with pytest.raises(TypeError) as er:
        rg.nn.Unflatten(1, (2.0, 2))
    assert str(er.value) == str(et.value)
    with pytest.raises(IndexError):
        rg.nn.Flatten()(rg.randn(3))


# -- normalize, cosine_similarity, pairwise_distance ------------------------------------------

@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [{}, dict(p=1.0, dim=0), dict(dim=-1, eps=1e-3), dict(p=3)])
def test_normalize(torch, dt, kw):
    x = rand(4, 3, dt=dt)
    x[1] = 0
    y, yt = run_both(torch, lambda x: F.normalize(x, **kw),
                     lambda x: torch.nn.functional.normalize(x, **kw), [x], dt)
    assert y.grad_fn.name() == yt.grad_fn.name()


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("s1,s2,kw", [((4, 3), (4, 3), {}), ((4, 3), (1, 3), {}),
                                      ((2, 3, 4), (2, 3, 4), dict(dim=-1)),
                                      ((4, 3), (4, 3), dict(dim=0, eps=0.5))])
def test_cosine_similarity(torch, dt, s1, s2, kw):
    run_both(torch, lambda a, b: F.cosine_similarity(a, b, **kw),
             lambda a, b: torch.nn.functional.cosine_similarity(a, b, **kw),
             [rand(*s1, dt=dt), rand(*s2, dt=dt, seed=1)], dt)


def test_cosine_similarity_tiny_norm_and_gradcheck(torch):
    a = rand(3, 4) * 1e-9
    run_both(torch, F.cosine_similarity, torch.nn.functional.cosine_similarity,
             [a, rand(3, 4, seed=1)], np.float64)
    args = (rg.randn(3, 4, dtype=rg.float64, requires_grad=True),
            rg.randn(3, 4, dtype=rg.float64, requires_grad=True))
    assert gradgradcheck(F.cosine_similarity, args)
    assert gradgradcheck(F.normalize, args[:1])


@pytest.mark.parametrize("kw", [{}, dict(p=1.0), dict(keepdim=True), dict(eps=0.1, p=3.0)])
def test_pairwise_distance(torch, kw):
    run_both(torch, lambda a, b: F.pairwise_distance(a, b, **kw),
             lambda a, b: torch.nn.functional.pairwise_distance(a, b, **kw),
             [rand(4, 3), rand(4, 3, seed=1)], np.float64)  # grad_fn NormBackward1
