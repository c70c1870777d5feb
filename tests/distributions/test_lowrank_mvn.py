"""Tests for LowRankMultivariateNormal: samples, log_prob, entropy, its matrices, KL and the
gradients match torch's; log_prob equals the dense MultivariateNormal's without torch."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
import retrograd.distributions as RD


def _param(lib, shape, positive=False, seed=0):
    a = (0.5 * np.random.RandomState(seed).randn(*shape)).astype(np.float32)
    return lib.tensor(np.exp(a) if positive else a).requires_grad_()


def _run(L, D):
    loc, W, d = _param(L, (2, 3)), _param(L, (3, 2), seed=1), _param(L, (3,), True, 2)
    m = D.LowRankMultivariateNormal(loc, W, d)
    L.manual_seed(3)
    x = m.rsample((4,))
    q = D.LowRankMultivariateNormal(L.zeros(3), W.detach() * 0.5, d.detach() + 1)
    y = m.log_prob(x).sum() + m.entropy().sum() + D.kl_divergence(m, q).sum()
    y.backward()
    return [x, y, loc.grad, W.grad, d.grad, m.variance, m.scale_tril, m.covariance_matrix,
            m.precision_matrix, m.batch_shape, m.event_shape, m.expand((5, 2)).sample().shape]


def test_matches_torch(torch):
    for x, y in zip(_run(torch, torch.distributions), _run(rg, RD)):
        if hasattr(x, "detach"):
            np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=2e-5,
                                       atol=2e-6)
        else:
            assert str(x).replace("torch.", "") == str(y).replace("retrograd.", "")


def test_errors_match_torch(torch):
    msgs = []
    for L, D in ((torch, torch.distributions), (rg, RD)):
        for args in ((L.zeros(3), L.zeros(2, 1), L.ones(3)), (L.zeros(3), L.zeros(3, 1),
                                                              L.ones(2))):
            with pytest.raises(ValueError) as info:
                D.LowRankMultivariateNormal(*args)
            msgs.append(str(info.value).replace(L.__name__ + ".Size", "Size"))
    assert msgs[:2] == msgs[2:]


def test_agrees_with_dense_mvn():
    f64 = rg.float64
    W = rg.tensor([[1.0, 0.2], [0.3, -0.5], [0.0, 0.7]], dtype=f64)
    d = rg.tensor([0.5, 1.5, 2.0], dtype=f64)
    loc = rg.tensor([0.1, -0.2, 0.3], dtype=f64)
    low = RD.LowRankMultivariateNormal(loc, W, d)
    dense = RD.MultivariateNormal(loc, W @ W.T + rg.diag(d))
    x = rg.tensor([[0.5, 0.5, -1.0], [0.0, 1.0, 2.0]], dtype=f64)
    np.testing.assert_allclose(low.log_prob(x).numpy(), dense.log_prob(x).numpy(), rtol=1e-12)
    assert low.entropy().item() == pytest.approx(dense.entropy().item(), 1e-12)
    np.testing.assert_allclose((low.precision_matrix @ low.covariance_matrix).numpy(),
                               np.eye(3), atol=1e-12)
