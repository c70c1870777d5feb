"""Tests for Binomial, Multinomial and the relaxed (Gumbel-softmax) categoricals: samples
equal torch's, log_prob/entropy/moments and gradients match torch's; closed forms hold
without torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd as rg
import retrograd.distributions as RD


def _param(lib, shape, positive=False, seed=0):
    a = (0.5 * np.random.RandomState(seed).randn(*shape)).astype(np.float32)
    return lib.tensor(np.exp(a) if positive else a).requires_grad_()


def _binomial(L, D):
    logits = _param(L, (2, 3))
    d = D.Binomial(L.tensor([[5.0], [3.0]]), logits=logits)
    L.manual_seed(1)
    s = d.sample((4,))
    y = d.log_prob(s).sum() + D.Binomial(4, logits=logits).entropy().sum()
    y.backward()
    kl = D.kl_divergence(D.Binomial(L.tensor([5.0, 6.0]), L.tensor([0.3, 0.6])),
                         D.Binomial(5, L.tensor([0.5, 0.2])))
    return [s, y, logits.grad, d.mean, d.mode, d.variance, d.probs, kl,
            D.Binomial(4, L.tensor([0.3, 0.9])).enumerate_support()]


def _multinomial(L, D):
    p = _param(L, (2, 4), True)
    d = D.Multinomial(6, p)
    L.manual_seed(2)
    s = d.sample((3,))
    y = d.log_prob(s).sum() + d.entropy().sum()
    y.backward()
    return [s, y, p.grad, d.mean, d.variance, d.event_shape]


def _relaxed(L, D):
    logits, temp = _param(L, (2, 3)), L.tensor(0.7)
    d = D.RelaxedOneHotCategorical(temp, logits=logits)
    L.manual_seed(3)
    x = d.rsample((2,))
    y = d.log_prob(x).sum() + (x * L.arange(3.0)).sum()
    y.backward()
    e = D.relaxed_categorical.ExpRelaxedCategorical(temp, probs=L.tensor([0.2, 0.3, 0.5]))
    return [x, y, logits.grad, d.probs, d.batch_shape, d.event_shape, e.rsample((2,)),
            repr(d.support)]


@pytest.mark.parametrize("fn", [_binomial, _multinomial, _relaxed])
def test_matches_torch(torch, fn):
    for x, y in zip(fn(torch, torch.distributions), fn(rg, RD)):
        if hasattr(x, "detach"):
            np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)
        else:
            assert str(x).replace("torch.", "") == str(y).replace("retrograd.", "")


def test_integer_samples_match_torch_exactly(torch):
    def f(L, D):
        L.manual_seed(8)
        return [D.Binomial(L.tensor([10.0, 3.0]), L.tensor([0.3, 0.6])).sample((5,)),
                D.Multinomial(7, L.tensor([0.1, 0.6, 0.3])).sample((4,))]

    for x, y in zip(f(torch, torch.distributions), f(rg, RD)):
        np.testing.assert_array_equal(y.numpy(), x.numpy())
        assert str(x.dtype)[6:] == str(y.dtype)[10:]


def test_closed_forms():
    f64 = rg.float64
    b = RD.Binomial(5, rg.tensor(0.3, dtype=f64))
    assert b.log_prob(rg.tensor(2.0, dtype=f64)).item() == pytest.approx(
        math.log(10 * 0.3**2 * 0.7**3), 1e-12)
    assert b.entropy().exp().item() > 1
    m = RD.Multinomial(3, rg.tensor([0.2, 0.8], dtype=f64))
    assert m.log_prob(rg.tensor([1.0, 2.0], dtype=f64)).item() == pytest.approx(
        math.log(3 * 0.2 * 0.64), 1e-12)
    r = RD.RelaxedOneHotCategorical(rg.tensor(0.1), logits=rg.tensor([0.0, 5.0, 0.0]))
    rg.manual_seed(0)
    s = r.sample((200,))
    np.testing.assert_allclose(s.sum(-1).numpy(), 1.0, rtol=1e-5)
    assert (s.argmax(-1) == 1).float().mean().item() > 0.9
