"""``nn.utils.parametrize``, ``nn.utils.parametrizations`` (weight_norm, spectral_norm) and the
legacy weight_norm/spectral_norm hooks, against PyTorch: module layout, reprs, state_dict keys,
values and gradients (state copied from torch), and the cache."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as rt

from ..oracle import compare_error, copy_state, run_both

TOL = dict(rtol=1e-7, atol=1e-9)
R = np.random.default_rng(0)


def _sym(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).mT

        def right_inverse(self, a):
            return a.triu()
    return Symmetric()


def _scale(lib):
    class Scale(lib.nn.Module):
        def forward(self, x):
            return 2 * x
    return Scale()


def _both(make):
    """``make(lib)`` for each library, warnings recorded: (torch result, retrograd result)."""
    import torch
    out = []
    for lib in (torch, rt):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out.append((make(lib), [str(m.message) for m in w]))
    (tm, tw), (rm, rw) = out
    assert rw == tw
    return tm, rm


def _check(torch, tm, rm, shape, train=True):
    assert repr(rm) == repr(tm)
    assert type(rm).__name__ == type(tm).__name__
    assert list(rm.state_dict()) == list(tm.state_dict())
    copy_state(tm, rm)
    tm.train(train)
    rm.train(train)
    run_both(torch, rm, tm, [R.standard_normal(shape)], tol=TOL, grad_fn=False,
             modules=(rm, tm))
    for (k, a), b in zip(tm.state_dict().items(), rm.state_dict().values()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-7, atol=1e-9, err_msg=k)


def test_register_and_remove_parametrization_match_torch(torch):
    def make(lib):
        m = lib.nn.Linear(3, 3).double()
        P = lib.nn.utils.parametrize
        P.register_parametrization(m, "weight", _sym(lib))
        P.register_parametrization(m, "weight", _scale(lib))
        P.register_parametrization(m, "bias", _scale(lib))
        return m
    tm, rm = _both(make)
    _check(torch, tm, rm, (2, 3))
    P = rt.nn.utils.parametrize
    assert P.is_parametrized(rm) and P.is_parametrized(rm, "weight")
    assert P.type_before_parametrizations(rm) is rt.nn.Linear
    # assignment goes through right_inverse (Scale has none: both refuse)
    w = R.standard_normal((3, 3))
    w = w + w.T
    compare_error(lambda lib: setattr(rm if lib is rt else tm, "weight", lib.tensor(w)))
    ms = []
    for lib in (torch, rt):
        m = lib.nn.Linear(3, 3).double()
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _sym(lib))
        m.weight = lib.tensor(w)
        ms.append(m)
    np.testing.assert_allclose(ms[1].weight.detach().numpy(), ms[0].weight.detach().numpy())
    np.testing.assert_allclose(ms[1].parametrizations.weight.original.detach().numpy(),
                               ms[0].parametrizations.weight.original.detach().numpy())
    for leave in (True, False):
        t2, r2 = _both(make)
        copy_state(t2, r2)
        for lib, m in ((torch, t2), (rt, r2)):
            lib.nn.utils.parametrize.remove_parametrizations(m, "weight", leave_parametrized=leave)
        assert type(r2).__name__ == type(t2).__name__ == "ParametrizedLinear"
        for lib, m in ((torch, t2), (rt, r2)):
            lib.nn.utils.parametrize.remove_parametrizations(m, "bias")
        assert type(r2) is rt.nn.Linear and repr(r2) == repr(t2)
        assert list(r2.state_dict()) == list(t2.state_dict())
        np.testing.assert_allclose(r2.weight.detach().numpy(), t2.weight.detach().numpy())


def test_cached_computes_once():
    calls = []

    class Count(rt.nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 1
    m = rt.nn.utils.parametrize.register_parametrization(rt.nn.Linear(2, 2), "weight", Count())
    calls.clear()
    with rt.nn.utils.parametrize.cached():
        a, b = m.weight, m.weight
    assert a is b and len(calls) == 1
    _ = m.weight, m.weight
    assert len(calls) == 3


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization_matches_torch(torch, dim):
    tm, rm = _both(lambda lib: lib.nn.utils.parametrizations.weight_norm(
        lib.nn.Conv1d(2, 3, 2).double(), dim=dim))
    _check(torch, tm, rm, (2, 2, 5))


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_weight_norm_graph_matches_torch(torch, dim):
    """weight_norm's weight is one WeightNormInterfaceBackward0 node for the first or last dim
    (PyTorch's _weight_norm), its composite otherwise; the legacy hook computes the same."""
    def graph(lib):
        warnings.simplefilter("ignore", FutureWarning)
        m = lib.nn.utils.parametrizations.weight_norm(lib.nn.Conv1d(2, 3, 2), dim=dim)
        legacy = lib.nn.utils.weight_norm(lib.nn.Conv1d(2, 3, 2), dim=None if dim == -1 else dim)
        legacy(lib.ones(1, 2, 3))
        fn = m.weight.grad_fn
        return (fn.name(), [e[0].name() for e in fn.next_functions], legacy.weight.grad_fn.name(),
                getattr(fn, "_saved_dim", None))
    assert graph(rt) == graph(torch)


def test_weight_norm_second_order_by_finite_differences():
    rng = np.random.default_rng(0)
    v = rt.tensor(rng.normal(size=(3, 4, 2)), requires_grad=True)
    for dim, gshape in ((0, (3, 1, 1)), (2, (1, 1, 2))):
        g = rt.tensor(rng.normal(size=gshape), requires_grad=True)
        assert rt.autograd.gradgradcheck(lambda a, b, d=dim: rt._weight_norm(a, b, d), [v, g])


@pytest.mark.parametrize("train", [True, False])
def test_spectral_norm_parametrization_matches_torch(torch, train):
    for make, shape in ((lambda lib: lib.nn.Linear(4, 3).double(), (2, 4)),
                        (lambda lib: lib.nn.ConvTranspose1d(2, 3, 2).double(), (1, 2, 4))):
        tm, rm = _both(lambda lib, mk=make: lib.nn.utils.parametrizations.spectral_norm(
            mk(lib), n_power_iterations=2))
        _check(torch, tm, rm, shape, train)


def test_legacy_weight_and_spectral_norm_match_torch(torch):
    tm, rm = _both(lambda lib: lib.nn.utils.weight_norm(lib.nn.Linear(4, 3).double(), dim=1))
    _check(torch, tm, rm, (2, 4))
    for lib, m in ((torch, tm), (rt, rm)):
        lib.nn.utils.remove_weight_norm(m)
    assert list(rm.state_dict()) == list(tm.state_dict())
    np.testing.assert_allclose(rm.weight.detach().numpy(), tm.weight.detach().numpy())
    for train in (True, False):
        tm, rm = _both(lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(4, 3).double()))
        _check(torch, tm, rm, (2, 4), train)
        for lib, m in ((torch, tm), (rt, rm)):
            lib.nn.utils.remove_spectral_norm(m)
        assert list(rm.state_dict()) == list(tm.state_dict())
        np.testing.assert_allclose(rm.weight.detach().numpy(), tm.weight.detach().numpy())


def test_parametrize_errors_match_torch():
    P = lambda lib: lib.nn.utils.parametrize  # noqa: E731
    cases = [
        lambda lib: P(lib).register_parametrization(lib.nn.Linear(2, 2), "nope", _scale(lib)),
        lambda lib: P(lib).remove_parametrizations(lib.nn.Linear(2, 2), "weight"),
        lambda lib: lib.nn.utils.remove_weight_norm(lib.nn.Linear(2, 2)),
        lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), "nope"),
    ]
    for case in cases:
        compare_error(case, exact=False)


@pytest.mark.parametrize("shape,kw", [((3, 3), {}), ((4, 3), {}), ((3, 5), {}),
                                      ((3, 3), dict(orthogonal_map="cayley")),
                                      ((4, 3), dict(orthogonal_map="matrix_exp")),
                                      ((4, 3), dict(use_trivialization=False))])
def test_orthogonal_matches_torch(torch, shape, kw):
    torch.manual_seed(0)
    tm = torch.nn.Linear(shape[1], shape[0]).double()
    rm = rt.nn.Linear(shape[1], shape[0]).double()
    copy_state(tm, rm)
    torch.manual_seed(1)
    rt.manual_seed(1)
    torch.nn.utils.parametrizations.orthogonal(tm, **kw)
    rt.nn.utils.parametrizations.orthogonal(rm, **kw)
    assert repr(rm) == repr(tm)
    assert list(rm.state_dict()) == list(tm.state_dict())
    for (k, a), b in zip(tm.state_dict().items(), rm.state_dict().values()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-7, atol=1e-9, err_msg=k)
    w = rm.weight.detach().numpy()
    small = min(shape)
    gram = w @ w.T if shape[0] == small else w.T @ w
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-9)
    run_both(torch, rm, tm, [R.standard_normal((2, shape[1]))], tol=TOL, grad_fn=False,
             modules=(rm, tm))
