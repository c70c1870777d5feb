"""Tests for GeneralizedPareto: samples, log_prob, cdf/icdf, moments, entropy and gradients
match torch's for negative, zero and positive concentrations; the exponential limit holds
without torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd as rg
import retrograd.distributions as RD


def _run(L, D):
    loc = L.tensor([0.0, 0.5, -1.0, 0.2]).requires_grad_()
    scale = L.tensor([1.0, 2.0, 0.5, 1.5]).requires_grad_()
    conc = L.tensor([0.0, 0.3, -0.2, 0.7]).requires_grad_()
    d = D.GeneralizedPareto(loc, scale, conc)
    L.manual_seed(5)
    x = d.rsample((3,))
    y = d.log_prob(x).sum() + d.entropy().sum() + d.cdf(x).sum()
    y.backward()
    return [x, y, loc.grad, scale.grad, conc.grad, d.mean, d.variance, d.mode,
            d.log_survival_function(x), repr(d.support.__class__.__name__)]


def test_matches_torch(torch):
    for x, y in zip(_run(torch, torch.distributions), _run(rg, RD)):
        if hasattr(x, "detach"):
            np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=2e-5,
                                       atol=2e-6)
        else:
            assert x == y


def test_exponential_limit():
    # float32, as torch's log_prob compares the concentration with a float32 zero
    d = RD.GeneralizedPareto(0.0, 2.0, 0.0)
    e = RD.Exponential(rg.tensor(0.5))
    x = rg.tensor([0.3, 1.0, 4.0])
    np.testing.assert_allclose(d.log_prob(x).numpy(), e.log_prob(x).numpy(), rtol=1e-6)
    assert d.entropy().item() == pytest.approx(1 + math.log(2.0), 1e-6)
