"""Tests for ContinuousBernoulli: samples, log_prob, cdf/icdf, moments (both sides of the
Taylor switch at probs = 0.5), entropy and gradients match torch's; the density integrates
to 1 without torch."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
import retrograd.distributions as RD


def _run(L, D):
    p = L.tensor([0.1, 0.4995, 0.5, 0.7, 0.95]).requires_grad_()
    d = D.ContinuousBernoulli(p)
    L.manual_seed(3)
    x = d.rsample((3,))
    y = d.log_prob(x).sum() + d.entropy().sum() + d.cdf(x).sum() + d.mean.sum() + d.stddev.sum()
    y.backward()
    lg = L.tensor([-2.0, 0.0, 0.001, 3.0])
    e = D.ContinuousBernoulli(logits=lg)
    return [x, y, p.grad, d.mean, d.variance, e.probs, e.log_prob(L.tensor([0.2, 0.5, 0.9, 1.0])),
            D.ExponentialFamily.entropy(e), e.sample((2,))]


def test_matches_torch(torch):
    for x, y in zip(_run(torch, torch.distributions), _run(rg, RD)):
        np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=2e-5,
                                   atol=2e-6)


def test_errors_match_torch(torch):
    msgs = []
    for L, D in ((torch, torch.distributions), (rg, RD)):
        with pytest.raises(ValueError) as info:
            D.ContinuousBernoulli(L.tensor([1.5]), validate_args=True)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_density_integrates_to_one():
    x = rg.linspace(0.0, 1.0, 20001, dtype=rg.float64)
    for p in (0.05, 0.3, 0.5, 0.8):
        d = RD.ContinuousBernoulli(rg.tensor(p, dtype=rg.float64))
        dens = d.log_prob(x).exp().numpy()
        assert np.trapezoid(dens, x.numpy()) == pytest.approx(1.0, abs=1e-6)
