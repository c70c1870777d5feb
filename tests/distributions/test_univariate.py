"""Tests for the univariate distributions beyond Normal/Bernoulli/Categorical/Uniform
(Exponential, Laplace, Cauchy, Poisson, Geometric) and ``ExponentialFamily``: samples equal
torch's bit for bit, values and gradients match torch's, closed forms hold without torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd as rg
import retrograd.distributions as RD


def _param(lib, shape, positive=False, seed=0):
    a = np.random.RandomState(seed).randn(*shape).astype(np.float32)
    return lib.tensor(np.exp(a) if positive else a).requires_grad_()


def _run(L, D, name):
    """Samples, log_prob (+ entropy, cdf) and their gradients for one distribution."""
    if name in ("laplace", "cauchy"):
        params = [_param(L, (2, 3)), _param(L, (2, 3), True, 1)]
        d = getattr(D, name.capitalize())(*params)
    elif name in ("exponential", "poisson"):
        params = [_param(L, (2, 3), True)]
        d = getattr(D, name.capitalize())(*params)
    elif name == "geometric":
        params = [L.tensor([0.1, 0.5, 0.9]).requires_grad_()]
        d = D.Geometric(*params)
    else:
        params = [_param(L, (3,))]
        d = D.Geometric(logits=params[0])
    L.manual_seed(5)
    s = d.rsample((3,)) if d.has_rsample else d.sample((3,))
    y = d.log_prob(s).sum()
    if name != "poisson":  # torch's Poisson has no entropy (no carrier measure)
        y = y + d.entropy().sum()
    if d.has_rsample:
        y = y + d.cdf(s).sum() + d.icdf(L.full(tuple(d.batch_shape), 0.3)).sum()
    y.backward()
    return [s, y, *(p.grad for p in params), d.mean, d.variance, d.stddev, d.mode, d.sample()]


NAMES = ["exponential", "laplace", "cauchy", "poisson", "geometric", "geometric_logits"]


@pytest.mark.parametrize("name", NAMES)
def test_matches_torch(torch, name):
    a, b = _run(torch, torch.distributions, name), _run(rg, RD, name)
    np.testing.assert_array_equal(b[0].detach().numpy(), a[0].detach().numpy())  # samples
    np.testing.assert_array_equal(b[-1].numpy(), a[-1].numpy())
    for x, y in zip(a[1:-1], b[1:-1]):
        assert x.dtype.__repr__().split(".")[-1] == repr(y.dtype).split(".")[-1]
        np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=2e-6, atol=1e-6)


def test_kl_and_exponential_family_match_torch(torch):
    def f(L, D):
        t = L.tensor
        return [D.kl_divergence(D.Exponential(t([1.0, 2.0])), D.Exponential(t([3.0, 0.5]))),
                D.kl_divergence(D.Laplace(t([1.0, 2.0]), 1.0), D.Laplace(t([3.0, 0.5]), 2.0)),
                D.kl_divergence(D.Poisson(t([1.0, 2.0])), D.Poisson(t([3.0, 0.5]))),
                D.kl_divergence(D.Geometric(t([0.3, 0.7])), D.Geometric(t([0.5, 0.5]))),
                D.ExponentialFamily.entropy(D.Normal(t([0.5, 1.0]), t([1.0, 2.0]))),
                D.ExponentialFamily.entropy(D.Bernoulli(t([0.2, 0.6])))]

    for x, y in zip(f(torch, torch.distributions), f(rg, RD)):
        np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=1e-6)


def test_errors_match_torch(torch):
    for make in (lambda L, D: D.Geometric(L.tensor([0.0, 0.5])),
                 lambda L, D: D.Poisson(L.tensor([1.0])).log_prob(L.tensor([0.5])),
                 lambda L, D: D.Exponential(L.tensor([-1.0]))):
        msgs = []
        for L, D in ((torch, torch.distributions), (rg, RD)):
            with pytest.raises(ValueError) as info:
                make(L, D)
            msgs.append(str(info.value).replace(L.__name__ + ".", ""))
        assert msgs[0] == msgs[1]


def test_closed_forms():
    f64 = rg.float64
    e = RD.Exponential(rg.tensor([2.0], dtype=f64))
    assert e.log_prob(rg.tensor([1.5], dtype=f64)).item() == pytest.approx(math.log(2) - 3, 1e-14)
    assert RD.ExponentialFamily.entropy(e).item() == pytest.approx(1 - math.log(2), 1e-12)
    lap = RD.Laplace(rg.tensor(0.0, dtype=f64), rg.tensor(2.0, dtype=f64))
    assert lap.cdf(rg.tensor(0.0, dtype=f64)).item() == 0.5
    assert lap.icdf(lap.cdf(rg.tensor(1.3, dtype=f64))).item() == pytest.approx(1.3, 1e-12)
    p = RD.Poisson(rg.tensor(3.0, dtype=f64))
    assert p.log_prob(rg.tensor(2.0, dtype=f64)).item() == pytest.approx(
        2 * math.log(3) - 3 - math.log(2), 1e-12)
    g = RD.Geometric(rg.tensor(0.25, dtype=f64))
    assert g.log_prob(rg.tensor(2.0, dtype=f64)).item() == pytest.approx(
        math.log(0.75**2 * 0.25), 1e-12)
    c = RD.Cauchy(rg.tensor(0.0, dtype=f64), rg.tensor(1.0, dtype=f64))
    assert c.cdf(rg.tensor(1.0, dtype=f64)).item() == pytest.approx(0.75, 1e-14)
