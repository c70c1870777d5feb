"""Tests for ``retrograd.distributions.transforms`` and the transformed distributions
(TransformedDistribution, LogNormal, HalfNormal): values, log-Jacobians, inverses, reprs and
gradients match torch's, including a tanh-squashed Gaussian policy step (SAC); closed forms
and round trips run without torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd as rg
import retrograd.distributions as RD


def _param(lib, shape, positive=False, seed=0, scale=1.0):
    a = (scale * np.random.RandomState(seed).randn(*shape)).astype(np.float32)
    return lib.tensor(np.exp(a) if positive else a).requires_grad_()


def _close(a, b, rtol=1e-5):
    for x, y in zip(a, b):
        if hasattr(x, "detach"):
            np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=rtol,
                                       atol=1e-6)
        else:
            assert str(x).replace("torch.", "") == str(y).replace("retrograd.", "")


def _transforms(L, D):
    T = D.transforms
    x = _param(L, (2, 3))
    out = []
    for t in [T.ExpTransform(), T.SigmoidTransform(), T.TanhTransform(),
              T.AffineTransform(_param(L, (3,)), _param(L, (3,), True, 2), event_dim=1),
              T.ComposeTransform([T.AffineTransform(1.0, 2.0), T.ExpTransform(),
                                  T.PowerTransform(_param(L, (3,), True, 3))]),
              T.ExpTransform().inv, T.IndependentTransform(T.SigmoidTransform(), 1)]:
        y = t(x)
        out += [y, t.inv(y), t.log_abs_det_jacobian(x, y), repr(t), repr(t.domain),
                repr(t.codomain), t.bijective]
    sum(o.sum() for o in out if hasattr(o, "sum")).backward()
    return out + [x.grad, T.ExpTransform() == T.ExpTransform(), T.identity_transform(x)]


def _sac(L, D):
    """A SAC actor step: tanh-squashed Normal, rescaled to the action range."""
    L.manual_seed(2)
    mu, sd = _param(L, (2, 3), scale=0.5), _param(L, (2, 3), True, 1, scale=0.3)
    T = D.transforms
    d = D.TransformedDistribution(D.Normal(mu, sd), [T.TanhTransform(cache_size=1),
                                                     T.AffineTransform(0.5, 2.0)])
    a = d.rsample()
    lp = d.log_prob(a).sum(-1)
    (lp - a.sum(-1)).mean().backward()
    return [a, lp, mu.grad, sd.grad, repr(d.support), d.batch_shape, d.sample((2,))]


def _lognormal(L, D):
    L.manual_seed(3)
    mu, sd = _param(L, (2, 3), scale=0.5), _param(L, (2, 3), True, 1, scale=0.3)
    d = D.LogNormal(mu, sd)
    x = d.rsample((2,))
    y = (d.log_prob(x).sum() + d.entropy().sum() + d.cdf(x).sum()
         + d.icdf(L.full((2, 3), 0.3)).sum())
    y.backward()
    kl = D.kl_divergence(d, D.LogNormal(L.zeros(2, 3), 1.0))
    return [x, y, mu.grad, sd.grad, d.mean, d.mode, d.variance, repr(d), kl,
            d.expand((4, 2, 3)).sample().shape]


def _halfnormal(L, D):
    L.manual_seed(4)
    sd = _param(L, (2, 3), True, 1)
    d = D.HalfNormal(sd)
    x = d.rsample((2,))
    y = (d.log_prob(x).sum() + d.entropy().sum() + d.cdf(x).sum()
         + d.icdf(L.full((2, 3), 0.3)).sum())
    y.backward()
    return [x, y, sd.grad, d.mean, d.mode, d.variance,
            D.HalfNormal(sd, validate_args=False).log_prob(L.tensor([-1.0, 0.5, 1.0]))]


@pytest.mark.parametrize("fn", [_transforms, _sac, _lognormal, _halfnormal])
def test_matches_torch(torch, fn):
    _close(fn(torch, torch.distributions), fn(rg, RD))


def test_samples_match_torch(torch):
    def f(L, D):
        L.manual_seed(9)
        return [D.HalfNormal(L.ones(3)).sample(), D.LogNormal(L.zeros(3), 1.0).sample((2,))]

    (h0, l0), (h1, l1) = f(torch, torch.distributions), f(rg, RD)
    np.testing.assert_array_equal(h1.numpy(), h0.numpy())
    # exp of the same normal draws: float32 exp may differ from torch's in the last bit
    np.testing.assert_allclose(l1.numpy(), l0.numpy(), rtol=2e-7)


def test_errors_match_torch(torch):
    for make in (lambda L, D: D.TransformedDistribution(D.Normal(0.0, 1.0), 3),
                 lambda L, D: D.TransformedDistribution(D.Normal(0.0, 1.0), [
                     D.transforms.IndependentTransform(D.transforms.ExpTransform(), 1)]),
                 lambda L, D: D.transforms.ExpTransform(cache_size=2),
                 lambda L, D: D.LogNormal(0.0, -1.0),
                 lambda L, D: D.HalfNormal(1.0).log_prob(L.tensor(-1.0))):
        msgs = []
        for L, D in ((torch, torch.distributions), (rg, RD)):
            with pytest.raises(ValueError) as info:
                make(L, D)
            msgs.append(str(info.value).replace(L.__name__ + ".", ""))
        assert msgs[0] == msgs[1]


def test_round_trips_and_closed_forms():
    T = RD.transforms
    x = rg.tensor([-1.5, 0.2, 2.0], dtype=rg.float64)
    for t in (T.ExpTransform(), T.SigmoidTransform(), T.TanhTransform(),
              T.AffineTransform(1.0, -3.0), T.PowerTransform(2.0).inv):
        xx = x.abs() if isinstance(t.domain, type(RD.constraints.positive)) else x
        np.testing.assert_allclose(t.inv(t(xx)).numpy(), xx.numpy(), rtol=1e-12)
    tanh = T.TanhTransform()
    np.testing.assert_allclose(tanh.log_abs_det_jacobian(x, tanh(x)).numpy(),
                               np.log(1 - np.tanh(x.numpy()) ** 2), rtol=1e-12)
    cached = T.TanhTransform(cache_size=1)
    y = cached(x)
    assert cached.inv(y) is x
    d = RD.LogNormal(rg.tensor(0.0, dtype=rg.float64), rg.tensor(1.0, dtype=rg.float64))
    v = 2.0
    want = -math.log(v) - 0.5 * math.log(2 * math.pi) - math.log(v) ** 2 / 2
    assert d.log_prob(rg.tensor(v, dtype=rg.float64)).item() == pytest.approx(want, 1e-14)
    assert d.mean.item() == pytest.approx(math.exp(0.5), 1e-14)
