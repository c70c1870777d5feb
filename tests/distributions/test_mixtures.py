"""Tests for MixtureSameFamily (a Gaussian mixture and a mixture of diagonal Gaussians, as
mixture density networks build them) and Gumbel: samples, log_prob, moments and gradients
match torch's; closed forms hold without torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd as rg
import retrograd.distributions as RD


def _param(lib, shape, positive=False, seed=0):
    a = (0.5 * np.random.RandomState(seed).randn(*shape)).astype(np.float32)
    return lib.tensor(np.exp(a) if positive else a).requires_grad_()


def _gmm(L, D):
    logits, mu, sd = _param(L, (2, 3)), _param(L, (2, 3), seed=1), _param(L, (2, 3), True, 2)
    m = D.MixtureSameFamily(D.Categorical(logits=logits), D.Normal(mu, sd))
    L.manual_seed(4)
    x = m.sample((5,))
    y = m.log_prob(x).sum() + m.cdf(x).sum() + m.mean.sum() + m.variance.sum()
    y.backward()
    return [x, y, logits.grad, mu.grad, sd.grad, m.batch_shape, m.expand((4, 2)).batch_shape]


def _mdn(L, D):
    logits, mu, sd = _param(L, (3,)), _param(L, (3, 2), seed=1), _param(L, (3, 2), True, 2)
    m = D.MixtureSameFamily(D.Categorical(logits=logits), D.Independent(D.Normal(mu, sd), 1))
    L.manual_seed(5)
    x = m.sample((4,))
    y = -m.log_prob(x).mean()
    y.backward()
    return [x, y, logits.grad, mu.grad, sd.grad, m.event_shape, m.mean, m.variance,
            repr(m.support)]


def _gumbel(L, D):
    loc, scale = _param(L, (2, 3)), _param(L, (2, 3), True, 1)
    d = D.Gumbel(loc, scale)
    L.manual_seed(6)
    x = d.rsample((2,))
    y = d.log_prob(x).sum() + d.entropy().sum()
    y.backward()
    return [x, y, loc.grad, scale.grad, d.mean, d.stddev, d.variance, d.mode,
            D.Gumbel(0.0, 1.0).sample((3,))]


@pytest.mark.parametrize("fn", [_gmm, _mdn, _gumbel])
def test_matches_torch(torch, fn):
    for x, y in zip(fn(torch, torch.distributions), fn(rg, RD)):
        if hasattr(x, "detach"):
            np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)
        else:
            assert str(x).replace("torch.", "") == str(y).replace("retrograd.", "")


def test_mixture_errors_match_torch(torch):
    for make in (lambda L, D: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(L.zeros(2), 1.0)),
                 lambda L, D: D.MixtureSameFamily(D.Categorical(L.ones(3)),
                                                  D.Normal(L.zeros(2), 1.0))):
        msgs = []
        for L, D in ((torch, torch.distributions), (rg, RD)):
            with pytest.raises(ValueError) as info:
                make(L, D)
            msgs.append(str(info.value).replace(L.__name__ + ".Size", "Size"))
        assert msgs[0] == msgs[1]


def test_closed_forms():
    f64 = rg.float64
    m = RD.MixtureSameFamily(RD.Categorical(rg.tensor([0.25, 0.75], dtype=f64)),
                             RD.Normal(rg.tensor([-1.0, 1.0], dtype=f64), 1.0))
    x = 0.3
    want = math.log(0.25 * math.exp(-((x + 1) ** 2) / 2) + 0.75 * math.exp(-((x - 1) ** 2) / 2)) \
        - 0.5 * math.log(2 * math.pi)
    assert m.log_prob(rg.tensor(x, dtype=f64)).item() == pytest.approx(want, 1e-13)
    assert m.mean.item() == pytest.approx(0.5, 1e-14)
    g = RD.Gumbel(rg.tensor(1.0, dtype=f64), rg.tensor(2.0, dtype=f64))
    z = (1.0 - 0.4) / 2.0
    assert g.log_prob(rg.tensor(0.4, dtype=f64)).item() == pytest.approx(
        z - math.exp(z) - math.log(2.0), 1e-13)
