"""Tests for the gamma family: ``_standard_gamma`` gives torch's samples bit for bit under
the same seed (float32 and float64, alpha below and above 1), its reparameterised gradient
matches torch's and a finite difference of the inverse CDF; Gamma and Chi2 match torch's
samples, log_prob, cdf, moments, entropy, rsample gradients and KL divergences."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
import retrograd.distributions as RD

_ALPHAS = [1e-4, 0.01, 0.3, 0.9, 1.0, 1.5, 2.5, 7.0, 9.0, 50.0, 1000.0]


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_standard_gamma_bits(torch, dt):
    a = np.array(_ALPHAS * 3)
    torch.manual_seed(7)
    t = torch._standard_gamma(torch.tensor(a, dtype=getattr(torch, dt)))
    t_after = torch.rand(2)
    rg.manual_seed(7)
    r = rg._standard_gamma(rg.tensor(a, dtype=getattr(rg, dt)))
    assert r.dtype is getattr(rg, dt)
    np.testing.assert_array_equal(r.numpy(), t.numpy())
    np.testing.assert_array_equal(rg.rand(2).numpy(), t_after.numpy())  # same draws consumed
    g = rg._standard_gamma_grad(rg.tensor(a, dtype=getattr(rg, dt)), r)
    gt = torch._standard_gamma_grad(torch.tensor(a, dtype=getattr(torch, dt)), t)
    np.testing.assert_allclose(g.numpy(), gt.numpy(), rtol=1e-5)


def test_standard_gamma_zero_and_nodes(torch):
    assert rg._standard_gamma(rg.zeros(2)).tolist() == torch._standard_gamma(
        torch.zeros(2)).tolist()
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = rg._standard_gamma(x)
    assert y.grad_fn.name() == "StandardGammaBackward0"
    g = rg._standard_gamma_grad(x, y.detach())
    assert g.grad_fn.name() == "StandardGammaGradBackward0"
    with pytest.raises(NotImplementedError, match="_standard_gamma_grad"):
        g.sum().backward()


def test_sample_dirichlet_bits(torch):
    a = np.array([[0.5, 1.0, 2.5], [3.0, 0.1, 7.0]])
    torch.manual_seed(3)
    t = torch._sample_dirichlet(torch.tensor(a, dtype=torch.float32))
    rg.manual_seed(3)
    r = rg._sample_dirichlet(rg.tensor(a, dtype=rg.float32))
    np.testing.assert_array_equal(r.numpy(), t.numpy())


def test_gamma_grad_finite_difference():
    # d sample / d alpha at fixed CDF level: (icdf(u; a + h) - icdf(u; a - h)) / 2h, with the
    # icdf found by bisection on the regularised incomplete gamma function
    special = pytest.importorskip("scipy.special")
    for a, x in [(0.5, 0.3), (2.0, 1.7), (12.0, 11.0), (3.0, 0.5), (20.0, 30.0)]:
        u = special.gammainc(a, x)
        h = 1e-5
        fd = (special.gammaincinv(a + h, u) - special.gammaincinv(a - h, u)) / (2 * h)
        got = rg._standard_gamma_grad(rg.tensor([a], dtype=rg.float64),
                                      rg.tensor([x], dtype=rg.float64)).item()
        assert abs(got - fd) <= 5e-3 * abs(fd), (a, x, got, fd)


def _run(L, D):
    conc = L.tensor([0.5, 2.0, 9.0]).requires_grad_()
    rate = L.tensor([1.0, 0.5, 3.0]).requires_grad_()
    d = D.Gamma(conc, rate)
    L.manual_seed(5)
    x = d.rsample((4,))
    y = d.log_prob(x).sum() + d.entropy().sum() + x.sum()
    y.backward()
    c2 = D.Chi2(L.tensor([1.0, 3.0]))
    L.manual_seed(6)
    s2 = c2.sample((2,))
    q = D.Gamma(L.tensor([1.5, 1.0, 4.0]), L.tensor([2.0, 1.0, 0.5]))
    kls = [D.kl_divergence(d, q), D.kl_divergence(D.Exponential(rate), q),
           D.kl_divergence(d, D.Exponential(rate)),
           D.kl_divergence(d, D.Normal(L.tensor(0.5), L.tensor(2.0)))]
    cdf = D.Gamma(conc.detach(), rate.detach()).cdf(x.detach())
    return [x, y, cdf, conc.grad, rate.grad, d.mean, d.variance, d.mode, s2, c2.df,
            c2.log_prob(s2), d.expand((2, 3)).rsample(), *kls]


def test_gamma_chi2_match_torch(torch):
    for x, y in zip(_run(torch, torch.distributions), _run(rg, RD)):
        np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_dirichlet_grad(torch, dt):
    a = np.array([[0.05, 3.4], [1.6, 0.004], [10.0, 12.0], [0.1, 0.2], [30.0, 40.0],
                  [7.0, 8.0], [2.0, 0.5], [0.7, 1.3]])
    T, R = getattr(torch, dt), getattr(rg, dt)
    torch.manual_seed(1)
    x = torch._sample_dirichlet(torch.tensor(a, dtype=T))
    tot = torch.tensor(a, dtype=T).sum(-1, True).expand(a.shape)
    gt = torch._dirichlet_grad(x, torch.tensor(a, dtype=T), tot)
    gr = rg._dirichlet_grad(rg.tensor(x.numpy()), rg.tensor(a, dtype=R), rg.tensor(tot.numpy()))
    # float32: the kernel's small-x series run in float32, whose last bits vary with libm
    np.testing.assert_allclose(gr.numpy(), gt.numpy(), rtol=1e-3 if dt == "float32" else 1e-9)


def _run_beta(L, D):
    c1 = L.tensor([0.5, 2.0, 9.0], dtype=L.float64).requires_grad_()
    c0 = L.tensor([1.0, 0.5, 8.0], dtype=L.float64).requires_grad_()
    d = D.Beta(c1, c0)
    L.manual_seed(4)
    x = d.rsample((2,))
    y = d.log_prob(x).sum() + d.entropy().sum() + x.sum()
    y.backward()
    conc = L.tensor([[0.5, 2.0, 3.0], [1.0, 1.0, 0.2]], dtype=L.float64).requires_grad_()
    dd = D.Dirichlet(conc)
    L.manual_seed(8)
    z = dd.rsample((2,))
    (z * L.tensor([1.0, 2.0, 3.0], dtype=L.float64)).sum().backward()
    q = D.Beta(L.tensor([1.5, 1.0, 4.0], dtype=L.float64), L.tensor(2.0, dtype=L.float64))
    g = D.Gamma(L.tensor([1.5], dtype=L.float64), L.tensor([2.0], dtype=L.float64))
    kls = [D.kl_divergence(d, q), D.kl_divergence(dd, D.Dirichlet(conc.detach().flip(-1))),
           D.kl_divergence(d, D.Exponential(c0.detach())), D.kl_divergence(d, g),
           D.kl_divergence(d, D.Normal(L.tensor(0.5, dtype=L.float64),
                                       L.tensor(2.0, dtype=L.float64)))]
    return [x, y, c1.grad, c0.grad, d.mean, d.variance, d.mode, z, conc.grad, dd.mean,
            dd.variance, dd.mode, dd.entropy(), dd.log_prob(z), *kls]


def test_beta_dirichlet_match_torch(torch):
    for x, y in zip(_run_beta(torch, torch.distributions), _run_beta(rg, RD)):
        np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=1e-7,
                                   atol=1e-9)
    z = RD.Dirichlet(rg.ones(3, requires_grad=True)).rsample()
    assert z.grad_fn.name() == "_DirichletBackward"


def _run_t(L, D):
    df = L.tensor([0.8, 1.5, 3.0, 7.0], dtype=L.float64).requires_grad_()
    loc = L.tensor([0.0, 1.0, -1.0, 0.5], dtype=L.float64).requires_grad_()
    scale = L.tensor([1.0, 2.0, 0.5, 1.5], dtype=L.float64).requires_grad_()
    d = D.StudentT(df, loc, scale)
    L.manual_seed(11)
    x = d.rsample((2,))
    y = d.log_prob(x).sum() + d.entropy().sum() + x.sum()
    ig = D.InverseGamma(df, scale)
    L.manual_seed(12)
    xi = ig.rsample((2,))
    y = y + ig.log_prob(xi).sum() + ig.entropy().sum() + xi.sum()
    f = D.FisherSnedecor(df, scale * 3)
    L.manual_seed(13)
    xf = f.rsample((2,))
    y = y + f.log_prob(xf).sum() + xf.sum()
    y.backward()
    return [x, xi, xf, y, df.grad, loc.grad, scale.grad, d.mean, d.variance, ig.mean,
            ig.variance, ig.mode, f.mean, f.variance, f.mode, d.expand((2, 4)).sample()]


def test_studentt_inversegamma_fisher_match_torch(torch):
    for x, y in zip(_run_t(torch, torch.distributions), _run_t(rg, RD)):
        np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=1e-7,
                                   atol=1e-9)


def _run_nb(L, D):
    d = D.NegativeBinomial(L.tensor([0.0, 2.0, 5.5]), L.tensor([0.3, 0.5, 0.8]))
    e = D.NegativeBinomial(L.tensor([3.0]), logits=L.tensor([[0.2], [-1.0]]))
    L.manual_seed(21)
    x = d.sample((3,))
    y = e.expand((2, 1)).sample()
    return [x, y, d.log_prob(x), e.log_prob(y), d.mean, d.variance, d.mode, e.probs]


def test_negative_binomial_matches_torch(torch):
    for x, y in zip(_run_nb(torch, torch.distributions), _run_nb(rg, RD)):
        np.testing.assert_allclose(y.numpy(), x.numpy(), rtol=1e-6, atol=1e-7)
