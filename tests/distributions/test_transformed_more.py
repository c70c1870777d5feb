"""Tests for the distributions torch builds from transforms or one-line estimators:
HalfCauchy, Pareto, Weibull, Kumaraswamy, LogisticNormal, RelaxedBernoulli (and its
LogitRelaxedBernoulli base) and OneHotCategoricalStraightThrough: samples, log_prob,
moments and gradients match torch's; closed forms hold without torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd as rg
import retrograd.distributions as RD


def _param(lib, shape, positive=False, seed=0):
    a = (0.5 * np.random.RandomState(seed).randn(*shape)).astype(np.float32)
    return lib.tensor(np.exp(a) if positive else a).requires_grad_()


def _make(L, D, name):
    a, b = _param(L, (2, 3), True), _param(L, (2, 3), True, 1)
    if name == "half_cauchy":
        return D.HalfCauchy(a), [a]
    if name == "pareto":
        return D.Pareto(a, b + 2), [a, b]
    if name == "weibull":
        return D.Weibull(a, b + 1), [a, b]
    if name == "kumaraswamy":
        return D.Kumaraswamy(a, b + 1), [a, b]
    if name == "logistic_normal":
        loc = _param(L, (2, 3), seed=4)
        return D.LogisticNormal(loc, b), [loc, b]
    if name == "relaxed_bernoulli":
        logits = _param(L, (2, 3), seed=2)
        return D.RelaxedBernoulli(L.tensor(0.6), logits=logits), [logits]
    p = _param(L, (2, 3), True, 3)
    return D.OneHotCategoricalStraightThrough(p), [p]


NAMES = ["half_cauchy", "pareto", "weibull", "relaxed_bernoulli", "straight_through",
         "kumaraswamy", "logistic_normal"]


def _run(L, D, name):
    d, params = _make(L, D, name)
    L.manual_seed(11)
    x = d.rsample((2,))
    y = (x * L.arange(1.0, 1.0 + x.shape[-1])).sum()
    out = [x]
    if name != "straight_through":
        y = y + d.log_prob(x).sum()
        out += [d.expand((4,) + tuple(d.batch_shape)).sample().shape]
    if name in ("half_cauchy", "pareto", "weibull", "kumaraswamy"):
        y = y + d.entropy().sum()
        out += [d.mean, d.mode, d.variance]
    y.backward()
    return out + [y, *(p.grad for p in params), d.sample((3,))]


@pytest.mark.parametrize("name", NAMES)
def test_matches_torch(torch, name):
    for x, y in zip(_run(torch, torch.distributions, name), _run(rg, RD, name)):
        if hasattr(x, "detach"):
            np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)
        else:
            assert str(x).replace("torch.", "") == str(y).replace("retrograd.", "")


def test_logit_relaxed_bernoulli_matches_torch(torch):
    def f(L, mod):
        d = mod.LogitRelaxedBernoulli(L.tensor(0.3), probs=L.tensor([0.2, 0.7]))
        L.manual_seed(12)
        x = d.rsample((3,))
        return [x, d.log_prob(x)]

    a = f(torch, torch.distributions.relaxed_bernoulli)
    b = f(rg, RD.relaxed_bernoulli)
    for x, y in zip(a, b):
        np.testing.assert_allclose(y.numpy(), x.numpy(), rtol=1e-5)


def test_closed_forms():
    f64 = rg.float64
    p = RD.Pareto(rg.tensor(1.0, dtype=f64), rg.tensor(3.0, dtype=f64))
    assert p.log_prob(rg.tensor(2.0, dtype=f64)).item() == pytest.approx(
        math.log(3 / 2**4), 1e-12)
    w = RD.Weibull(rg.tensor(2.0, dtype=f64), rg.tensor(1.5, dtype=f64))
    x = 1.3
    want = math.log(1.5 / 2) + 0.5 * math.log(x / 2) - (x / 2) ** 1.5
    assert w.log_prob(rg.tensor(x, dtype=f64)).item() == pytest.approx(want, 1e-12)
    h = RD.HalfCauchy(rg.tensor(1.0, dtype=f64))
    assert h.cdf(rg.tensor(1.0, dtype=f64)).item() == pytest.approx(0.5, 1e-14)
    probs = rg.tensor([0.3, 0.7], requires_grad=True)
    s = RD.OneHotCategoricalStraightThrough(probs).rsample()
    (s * rg.tensor([1.0, 2.0])).sum().backward()
    # through the normalization probs / probs.sum(): c_i - sum_j c_j p_j
    assert s.detach().sum().item() == 1.0
    np.testing.assert_allclose(probs.grad.numpy(), [1.0 - 1.7, 2.0 - 1.7], rtol=1e-6)
