"""Tests for ``retrograd.distributions.kl``: each registered pair's KL divergence and its
gradients match torch's (infinities included), ``register_kl`` dispatch, and two training
steps as programs write them: REINFORCE with Categorical and a VAE with Normal.rsample."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd as rg
import retrograd.distributions as RD


def _data(lib, shape, seed=0):
    return lib.tensor(np.random.RandomState(seed).randn(*shape).astype(np.float32))


def _kls(L, D):
    p = _data(L, (2, 3)).requires_grad_()
    A = _data(L, (3, 3), 1)
    out = [
        D.kl_divergence(D.Normal(p, L.ones(2, 3)), D.Normal(L.zeros(2, 3), p.detach().exp())),
        D.kl_divergence(D.Bernoulli(L.tensor([0.0, 0.3, 1.0, 0.5])),
                        D.Bernoulli(L.tensor([0.2, 0.0, 1.0, 1.0]))),
        D.kl_divergence(D.Categorical(L.tensor([[0.0, 1.0, 1.0], [1.0, 1.0, 1.0]])),
                        D.Categorical(L.tensor([[1.0, 0.0, 1.0], [1.0, 2.0, 1.0]]))),
        D.kl_divergence(D.Uniform(L.tensor([0.0, 0.0]), L.tensor([1.0, 1.0])),
                        D.Uniform(L.tensor([-1.0, 0.5]), L.tensor([2.0, 3.0]))),
        D.kl_divergence(D.Independent(D.Normal(p, L.ones(2, 3)), 1),
                        D.Independent(D.Normal(L.zeros(2, 3), L.ones(2, 3)), 1)),
        D.kl_divergence(D.MultivariateNormal(p, A @ A.T + L.eye(3)),
                        D.MultivariateNormal(L.zeros(3), L.eye(3) * 2)),
        D.kl_divergence(D.OneHotCategorical(L.tensor([0.2, 0.8])),
                        D.OneHotCategorical(L.tensor([0.5, 0.5]))),
    ]
    sum(o.sum() for o in out if bool(o.isfinite().all())).backward()
    return out + [p.grad]


def test_kl_matches_torch(torch):
    a, b = (_kls(torch, torch.distributions), _kls(rg, RD))
    for x, y in zip(a, b):
        np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_kl_closed_form_and_dispatch():
    kl = RD.kl_divergence(RD.Normal(0.0, 2.0), RD.Normal(1.0, 1.0)).item()
    assert kl == pytest.approx(0.5 * (4 + 1 - 1 - math.log(4)), 1e-6)

    class Sub(RD.Normal):
        pass

    assert RD.kl_divergence(Sub(0.0, 1.0), RD.Normal(0.0, 1.0)).item() == 0.0

    @RD.register_kl(Sub, RD.Normal)
    def _kl_sub(p, q):
        return rg.tensor(7.0)

    assert RD.kl_divergence(Sub(0.0, 1.0), RD.Normal(0.0, 1.0)).item() == 7.0
    assert RD.kl_divergence(RD.Normal(0.0, 1.0), Sub(0.0, 1.0)).item() == 0.0
    with pytest.raises(NotImplementedError, match="p type Normal and q type Uniform"):
        RD.kl_divergence(RD.Normal(0.0, 1.0), RD.Uniform(0.0, 1.0))


def _reinforce(L, D):
    """One REINFORCE step: a linear policy over 3 actions, loss -log pi(a) * return."""
    L.manual_seed(0)
    w = _data(L, (4, 3)).requires_grad_()
    obs = _data(L, (5, 4), 2)
    dist = D.Categorical(logits=obs @ w)
    actions = dist.sample()
    returns = actions.float() - 1.0
    loss = -(dist.log_prob(actions) * returns).mean() - 0.01 * dist.entropy().mean()
    loss.backward()
    return [actions, loss, w.grad]


def _vae(L, D):
    """One VAE step: Gaussian encoder, reparameterized sample, Bernoulli decoder, KL to N(0,1)."""
    L.manual_seed(1)
    enc = _data(L, (6, 4)).requires_grad_()
    dec = _data(L, (2, 6), 3).requires_grad_()
    x = (_data(L, (3, 6), 4) > 0).float()
    h = x @ enc
    q = D.Normal(h[:, :2], h[:, 2:].exp())
    z = q.rsample()
    recon = D.Bernoulli(logits=z @ dec).log_prob(x).sum(-1)
    kl = D.kl_divergence(q, D.Normal(L.zeros_like(z), L.ones_like(z))).sum(-1)
    loss = (kl - recon).mean()
    loss.backward()
    return [z, loss, enc.grad, dec.grad]


@pytest.mark.parametrize("step", [_reinforce, _vae])
def test_training_steps_match_torch(torch, step):
    a, b = step(torch, torch.distributions), step(rg, RD)
    for x, y in zip(a, b):
        np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=1e-5, atol=1e-6)
