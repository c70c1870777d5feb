"""Tests for ``retrograd.distributions``: samples equal torch's bit for bit under the same seed,
log_prob/entropy/moments and their gradients match torch's, validation errors carry torch's
texts; closed-form and finite-difference checks run without torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd as rg
import retrograd.distributions as RD


def _np(t):
    return t.detach().numpy()


def _same(a, b, exact=False):
    x, y = _np(a), _np(b)
    assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, y.shape, x.dtype, y.dtype)
    if exact:
        np.testing.assert_array_equal(x, y)
    else:
        np.testing.assert_allclose(x, y, rtol=2e-6, atol=1e-6)


def _data(lib, shape, seed=0, positive=False):
    a = np.random.RandomState(seed).randn(*shape).astype(np.float32)
    return lib.tensor(np.exp(a) if positive else a)


def _both(torch, fn):
    """``fn(lib, D)`` under torch and retrograd, each after ``manual_seed(3)``."""
    out = []
    for lib, D in ((torch, torch.distributions), (rg, RD)):
        lib.manual_seed(3)
        out.append(fn(lib, D))
    return out


# -- samples: the same random numbers as torch -------------------------------------------------
SAMPLERS = {
    "normal.sample": lambda L, D: D.Normal(_data(L, (2, 3)), _data(L, (2, 3), 1, True))
    .sample((4,)),
    "normal.rsample": lambda L, D: D.Normal(_data(L, (3,)), 2.0).rsample((2, 2)),
    "normal.scalar": lambda L, D: D.Normal(0.0, 1.0).sample((5,)),
    "normal.float64": lambda L, D: D.Normal(L.zeros(3, dtype=L.float64), 1.0).rsample(),
    "bernoulli": lambda L, D: D.Bernoulli(L.tensor([0.1, 0.5, 0.9])).sample((3, 2)),
    "bernoulli.logits": lambda L, D: D.Bernoulli(logits=_data(L, (2, 3))).sample(),
    "categorical": lambda L, D: D.Categorical(_data(L, (2, 4), positive=True)).sample((3, 5)),
    "categorical.1d": lambda L, D: D.Categorical(logits=_data(L, (5,))).sample((7,)),
    "categorical.scalar": lambda L, D: D.Categorical(L.tensor([0.3, 0.7])).sample(),
    "onehot": lambda L, D: D.OneHotCategorical(_data(L, (2, 4), positive=True)).sample((3,)),
    "uniform": lambda L, D: D.Uniform(_data(L, (2,)), _data(L, (2,)) + 3).rsample((4,)),
    "independent": lambda L, D: D.Independent(D.Normal(L.zeros(2, 3), 1.0), 1).sample((2,)),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_samples_match_torch(torch, name):
    a, b = _both(torch, SAMPLERS[name])
    _same(a, b, exact=True)


def test_mvn_rsample_matches_torch(torch):
    def f(L, D):
        A = _data(L, (3, 3))
        return D.MultivariateNormal(_data(L, (2, 3)), A @ A.T + L.eye(3)).rsample((4,))

    a, b = _both(torch, f)
    _same(a, b)


# -- values and gradients ----------------------------------------------------------------------
def _normal(L, D):
    loc = _data(L, (2, 3)).requires_grad_()
    scale = _data(L, (2, 3), 1, True).requires_grad_()
    d = D.Normal(loc, scale)
    x = d.rsample((2,))
    y = (d.log_prob(x).sum() + d.entropy().sum() + d.cdf(x).sum()
         + d.icdf(L.full((2, 3), 0.3)).sum())
    y.backward()
    return [x, y, loc.grad, scale.grad, d.mean, d.variance, d.stddev, d.mode]


def _bernoulli(L, D):
    p = L.tensor([0.1, 0.5, 0.9, 0.0]).requires_grad_()
    d = D.Bernoulli(p)
    s = d.sample((3,))
    y = d.log_prob(s).sum() + d.entropy().sum()
    y.backward()
    return [s, y, p.grad, d.logits, d.mean, d.variance, d.mode, d.enumerate_support()]


def _bernoulli_logits(L, D):
    lg = _data(L, (2, 3)).requires_grad_()
    d = D.Bernoulli(logits=lg)
    y = d.log_prob(d.sample()).sum()
    y.backward()
    return [y, lg.grad, d.probs]


def _categorical(L, D):
    p = _data(L, (2, 4), positive=True).requires_grad_()
    d = D.Categorical(p)
    s = d.sample((3, 5))
    y = d.log_prob(s).sum() + d.entropy().sum() + d.perplexity().sum()
    y.backward()
    return [s, y, p.grad, d.probs, d.logits, d.mode, d.mean, d.enumerate_support()]


def _uniform(L, D):
    lo = _data(L, (2, 3)).requires_grad_()
    hi = (lo.detach() + 2).requires_grad_()
    d = D.Uniform(lo, hi)
    x = d.rsample((2,))
    y = d.log_prob(x).sum() + d.entropy().sum() + d.cdf(x).sum()
    y.backward()
    return [x, y, lo.grad, hi.grad, d.mean, d.variance, d.stddev, d.icdf(L.full((2, 3), 0.5))]


def _independent(L, D):
    loc = _data(L, (2, 3)).requires_grad_()
    d = D.Independent(D.Normal(loc, L.ones(2, 3)), 1)
    x = d.rsample((4,))
    y = d.log_prob(x).sum() + d.entropy().sum()
    y.backward()
    return [x, y, loc.grad, d.mean, d.variance]


def _mvn(L, D):
    A = _data(L, (3, 3))
    cov = (A @ A.T + L.eye(3)).requires_grad_()
    loc = _data(L, (2, 3)).requires_grad_()
    d = D.MultivariateNormal(loc, cov)
    x = d.rsample((4,))
    y = d.log_prob(x).sum() + d.entropy().sum()
    y.backward()
    prec = D.MultivariateNormal(loc.detach(), precision_matrix=cov.detach())
    tril = D.MultivariateNormal(loc.detach(), scale_tril=L.linalg.cholesky(cov.detach()))
    return [y, loc.grad, cov.grad, d.scale_tril, d.precision_matrix, d.variance,
            prec.covariance_matrix, prec.log_prob(x.detach()), tril.entropy()]


def _onehot(L, D):
    d = D.OneHotCategorical(_data(L, (2, 4), positive=True))
    s = d.sample((3,))
    return [s, d.log_prob(s), d.entropy(), d.mode, d.variance, d.enumerate_support()]


VALUES = {"normal": _normal, "bernoulli": _bernoulli, "bernoulli_logits": _bernoulli_logits,
          "categorical": _categorical, "uniform": _uniform, "independent": _independent,
          "mvn": _mvn, "onehot": _onehot}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_and_grads_match_torch(torch, name):
    a, b = _both(torch, VALUES[name])
    for x, y in zip(a, b):
        _same(x, y)


def test_shapes_and_repr(torch):
    for L, D in ((torch, torch.distributions), (rg, RD)):
        shown = L.__name__ + "."
        n = D.Normal(L.zeros(3), L.ones(3))
        assert repr(n) == f"Normal(loc: {shown}Size([3]), scale: {shown}Size([3]))"
        assert repr(D.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
        e = n.expand((2, 3))
        assert tuple(e.batch_shape) == (2, 3) and tuple(e.sample((4,)).shape) == (4, 2, 3)
        c = D.Categorical(logits=L.zeros(2, 5))
        assert tuple(c.sample((3, 2)).shape) == (3, 2, 2) and c.sample().dtype == L.int64
        i = D.Independent(D.Normal(L.zeros(2, 3), 1.0), 1)
        assert (tuple(i.batch_shape), tuple(i.event_shape)) == ((2,), (3,))
        assert repr(i) == f"Independent(Normal(loc: {shown}Size([2, 3]), " \
                          f"scale: {shown}Size([2, 3])), 1)"
        assert repr(i.support) == "IndependentConstraint(Real(), 1)"
        assert repr(c.support) == "IntegerInterval(lower_bound=0, upper_bound=4)"
        m = D.MultivariateNormal(L.zeros(4, 2), L.eye(2))
        assert (tuple(m.batch_shape), tuple(m.event_shape)) == ((4,), (2,))


ERRORS = {
    "bad_scale": lambda L, D: D.Normal(L.zeros(2), L.tensor([1.0, -1.0])),
    "nan_value": lambda L, D: D.Normal(L.zeros(2), L.ones(2)).log_prob(
        L.tensor([float("nan"), 1.0])),
    "shape": lambda L, D: D.Normal(L.zeros(2), L.ones(2)).log_prob(L.zeros(3)),
    "not_tensor": lambda L, D: D.Normal(L.zeros(2), L.ones(2)).log_prob(1.0),
    "both": lambda L, D: D.Bernoulli(L.tensor(0.5), L.tensor(0.0)),
    "bad_probs": lambda L, D: D.Bernoulli(L.tensor([1.5])),
    "bad_bool": lambda L, D: D.Bernoulli(L.tensor([0.5])).log_prob(L.tensor([0.5])),
    "cat_0d": lambda L, D: D.Categorical(L.tensor(1.0)),
    "cat_value": lambda L, D: D.Categorical(L.ones(3)).log_prob(L.tensor(3)),
    "cat_simplex": lambda L, D: D.Categorical(L.tensor([1.0, -1.0, 1.0])),
    "uniform": lambda L, D: D.Uniform(L.tensor([1.0]), L.tensor([0.0])),
    "uniform_support": lambda L, D: D.Uniform(0.0, 1.0).log_prob(L.tensor(2.0)),
    "independent": lambda L, D: D.Independent(D.Normal(L.zeros(2), L.ones(2)), 2),
    "mvn_none": lambda L, D: D.MultivariateNormal(L.zeros(2)),
    "mvn_pd": lambda L, D: D.MultivariateNormal(L.zeros(2), L.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "mvn_loc": lambda L, D: D.MultivariateNormal(L.tensor(0.0), L.eye(1)),
    "kl_missing": lambda L, D: D.kl_divergence(D.Normal(L.zeros(1), 1.0),
                                               D.Categorical(L.ones(1, 2))),
    "mode": lambda L, D: D.Distribution(validate_args=False).mode,
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    msgs = []
    for L, D in ((torch, torch.distributions), (rg, RD)):
        with pytest.raises(Exception) as info:
            ERRORS[name](L, D)
        msgs.append((info.type.__name__, str(info.value).replace(L.__name__ + ".", "")
                     .replace("retrograd", "torch")))
    assert msgs[0] == msgs[1]


def test_validate_args_off():
    RD.Distribution.set_default_validate_args(False)
    try:
        d = RD.Normal(0.0, -1.0)
        assert d.scale.item() == -1.0
        lp = RD.Uniform(0.0, 1.0).log_prob(rg.tensor([2.0, 0.5]))
        assert lp.tolist() == [-math.inf, 0.0]
    finally:
        RD.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        RD.Distribution.set_default_validate_args(2)


def test_sample_n_warns():
    with pytest.warns(FutureWarning, match="sample_n"):
        assert tuple(RD.Normal(0.0, 1.0).sample_n(3).shape) == (3,)


# -- without torch: closed forms and finite differences ----------------------------------------
def test_normal_closed_form():
    d = RD.Normal(rg.tensor([1.0], dtype=rg.float64), rg.tensor([2.0], dtype=rg.float64))
    x = 2.5
    want = -((x - 1) ** 2) / 8 - math.log(2) - 0.5 * math.log(2 * math.pi)
    assert d.log_prob(rg.tensor([x], dtype=rg.float64)).item() == pytest.approx(want, 1e-14)
    assert d.entropy().item() == pytest.approx(0.5 * math.log(2 * math.pi * math.e * 4), 1e-14)
    assert d.cdf(rg.tensor([1.0], dtype=rg.float64)).item() == 0.5


def test_rsample_gradient_is_the_reparameterization():
    loc = rg.tensor([0.5, -1.0], dtype=rg.float64, requires_grad=True)
    scale = rg.tensor([2.0, 0.5], dtype=rg.float64, requires_grad=True)
    rg.manual_seed(0)
    x = RD.Normal(loc, scale).rsample()
    x.sum().backward()
    eps = (x.detach() - loc.detach()) / scale.detach()
    np.testing.assert_allclose(loc.grad.numpy(), [1.0, 1.0])
    np.testing.assert_allclose(scale.grad.numpy(), eps.numpy())


def test_log_prob_gradcheck():
    def f(loc, scale, logits):
        return (RD.Normal(loc, scale).log_prob(rg.tensor([0.3, -0.2], dtype=rg.float64)).sum()
                + RD.Categorical(logits=logits).log_prob(rg.tensor(1)).sum()
                + RD.Bernoulli(logits=loc).entropy().sum())

    args = [rg.tensor([0.1, 0.4], dtype=rg.float64, requires_grad=True),
            rg.tensor([1.5, 0.7], dtype=rg.float64, requires_grad=True),
            rg.tensor([0.2, -0.3, 1.0], dtype=rg.float64, requires_grad=True)]
    assert rg.autograd.gradcheck(f, args)


def test_categorical_normalizes_and_samples_frequencies():
    d = RD.Categorical(rg.tensor([1.0, 3.0]))
    np.testing.assert_allclose(d.probs.numpy(), [0.25, 0.75])
    rg.manual_seed(0)
    s = d.sample((4000,))
    assert abs(s.float().mean().item() - 0.75) < 0.03
    np.testing.assert_allclose(d.logits.exp().numpy(), [0.25, 0.75], rtol=1e-6)


def test_mvn_parameterizations_agree():
    cov = rg.tensor([[2.0, 0.5], [0.5, 1.0]], dtype=rg.float64)
    x = rg.tensor([0.3, -0.4], dtype=rg.float64)
    a = RD.MultivariateNormal(rg.zeros(2, dtype=rg.float64), cov)
    b = RD.MultivariateNormal(rg.zeros(2, dtype=rg.float64), precision_matrix=rg.linalg.inv(cov))
    want = (-0.5 * (x @ rg.linalg.inv(cov) @ x).item() - math.log(2 * math.pi)
            - 0.5 * math.log(np.linalg.det(cov.numpy())))
    assert a.log_prob(x).item() == pytest.approx(want, 1e-12)
    assert b.log_prob(x).item() == pytest.approx(want, 1e-12)
    np.testing.assert_allclose(b.covariance_matrix.numpy(), cov.numpy(), atol=1e-12)


def test_constraints():
    C = RD.constraints
    assert C.positive.check(rg.tensor([1.0, 0.0])).tolist() == [True, False]
    assert C.simplex.check(rg.tensor([[0.5, 0.5], [0.5, 0.6]])).tolist() == [True, False]
    assert C.integer_interval(0, 2).check(rg.tensor([0.0, 2.0, 1.5, 3.0])).tolist() == \
        [True, True, False, False]
    assert C.real_vector.check(rg.tensor([[1.0, float("nan")], [1.0, 2.0]])).tolist() == \
        [False, True]
    assert C.lower_cholesky.check(rg.tensor([[1.0, 0.0], [2.0, 1.0]])).item()
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    assert repr(C.unit_interval) == "Interval(lower_bound=0.0, upper_bound=1.0)"
    with pytest.raises(ValueError, match="dependent"):
        C.dependent.check(rg.zeros(1))


def test_torch_names_resolve():
    assert rg.distributions.Normal is RD.normal.Normal
    with pytest.raises(AttributeError,
                       match="does not implement torch.distributions.Wishart .built on the gamma"):
        rg.distributions.Wishart  # noqa: B018
