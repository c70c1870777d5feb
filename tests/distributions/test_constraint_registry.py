"""Tests for ``biject_to``/``transform_to`` and the transforms they return (Softplus,
Softmax, StickBreaking, LowerCholesky, PositiveDefinite, Reshape, CumulativeDistribution):
values, inverses, log-Jacobians and gradients match torch's; round trips land in the
constraint's region without torch."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
import retrograd.distributions as RD


def _x(lib, shape, seed=0):
    a = (0.5 * np.random.RandomState(seed).randn(*shape)).astype(np.float32)
    return lib.tensor(a).requires_grad_()


def _constraints(C):
    return [C.real, C.positive, C.nonnegative, C.greater_than(1.5), C.greater_than_eq(-2.0),
            C.less_than(3.0), C.unit_interval, C.interval(-1.0, 4.0),
            C.half_open_interval(0.0, 2.0), C.simplex, C.real_vector, C.independent(C.positive, 1)]


def _registry(L, D):
    out = []
    x = _x(L, (2, 3))
    for reg in (D.biject_to, D.transform_to):
        for c in _constraints(D.constraints):
            t = reg(c)
            y = t(x)
            out += [y, t.inv(y), repr(t), bool(c.check(y).all())]
            if t.bijective:
                out.append(t.log_abs_det_jacobian(x, y))
    sum(o.sum() for o in out if hasattr(o, "sum")).backward()
    return out + [x.grad]


def _matrix_transforms(L, D):
    T = D.transforms
    m = _x(L, (2, 3, 3), 1)
    out = []
    for t in (T.LowerCholeskyTransform(), T.PositiveDefiniteTransform(),
              D.transform_to(D.constraints.positive_definite),
              D.transform_to(D.constraints.lower_cholesky)):
        y = t(m)
        out += [y, t.inv(y), repr(t)]
    r = T.ReshapeTransform((3, 3), (9,))
    out += [r(m), r.inv(r(m)), r.log_abs_det_jacobian(m, r(m)), r.forward_shape((2, 3, 3))]
    sp = T.SoftplusTransform()
    out += [sp(m), sp.inv(sp(m)), sp.log_abs_det_jacobian(m, sp(m))]
    cdf = T.CumulativeDistributionTransform(D.Normal(0.0, 2.0))
    out += [cdf(m), cdf.inv(cdf(m)), cdf.log_abs_det_jacobian(m, cdf(m))]
    sum(o.sum() for o in out if hasattr(o, "sum")).backward()
    return out + [m.grad]


@pytest.mark.parametrize("fn", [_registry, _matrix_transforms])
def test_matches_torch(torch, fn):
    for x, y in zip(fn(torch, torch.distributions), fn(rg, RD)):
        if hasattr(x, "detach"):
            np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=2e-5,
                                       atol=2e-6)
        else:
            assert str(x).replace("torch.", "") == str(y).replace("retrograd.", "")


def test_errors_match_torch(torch):
    msgs = []
    for D in (torch.distributions, RD):
        with pytest.raises(NotImplementedError) as info:
            D.biject_to(D.constraints.lower_cholesky)
        msgs.append(str(info.value))
        with pytest.raises(ValueError) as info:
            D.transforms.ReshapeTransform((2, 3), (5,))
        msgs.append(str(info.value))
    assert msgs[:2] == msgs[2:]


def test_round_trips():
    C = RD.constraints
    x = rg.tensor([[-2.0, 0.3, 1.5]], dtype=rg.float64)
    for c in _constraints(C):
        t = RD.biject_to(c)
        y = t(x)
        assert bool(c.check(y).all())
        np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-9, atol=1e-12)
    s = RD.biject_to(C.simplex)(x)
    assert s.shape == (1, 4) and abs(s.sum().item() - 1) < 1e-12


def _cat_stack(L, D):
    T, C = D.transforms, D.constraints
    x = _x(L, (2, 4), 2)
    out = []
    cat = T.CatTransform([T.ExpTransform(), T.SigmoidTransform(), T.AffineTransform(1.0, 3.0)],
                         dim=1, lengths=[1, 2, 1])
    stack = T.StackTransform([T.ExpTransform(), T.TanhTransform()], dim=0)
    reg = D.biject_to(C.cat([C.positive, C.unit_interval], dim=-1, lengths=[3, 1]))
    reg2 = D.transform_to(C.stack([C.real, C.positive], dim=0))
    for t in (cat, stack, reg, reg2):
        y = t(x)
        out += [y, t.inv(y), t.log_abs_det_jacobian(x, y), t.bijective]
    sum(o.sum() for o in out if hasattr(o, "sum")).backward()
    return out + [x.grad]


def test_cat_stack_match_torch(torch):
    for x, y in zip(_cat_stack(torch, torch.distributions), _cat_stack(rg, RD)):
        if hasattr(x, "detach"):
            np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=2e-5,
                                       atol=2e-6)
        else:
            assert x == y


def _corr(L, D):
    x = _x(L, (2, 3), 3)
    t = D.biject_to(D.constraints.corr_cholesky)
    y = t(x)
    ldj = t.log_abs_det_jacobian(x, y)
    (y.sum() + ldj.sum() + t.inv(y).sum()).backward()
    U = D.utils
    return [y, t.inv(y), ldj, x.grad, bool(D.constraints.corr_cholesky.check(y).all()),
            U.tril_matrix_to_vec(y, diag=-1), U.vec_to_tril_matrix(x.detach(), diag=-1),
            t.forward_shape((2, 3)), t.inverse_shape((2, 3, 3))]


def test_corr_cholesky_matches_torch(torch):
    for x, y in zip(_corr(torch, torch.distributions), _corr(rg, RD)):
        if hasattr(x, "detach"):
            np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=2e-5,
                                       atol=2e-6)
        else:
            assert tuple(x) == tuple(y) if isinstance(x, tuple) else x == y
