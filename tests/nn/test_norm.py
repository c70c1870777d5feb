"""Tests for batch, layer, group, instance and RMS normalisation (functional and modules).

Values and gradients are compared with PyTorch (skipped without it) on the same weights, in
float32 and float64; gradcheck and gradgradcheck run on tiny float64 inputs.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn  # noqa: F401
import retrograd.nn.functional as F
from retrograd.autograd import gradcheck, gradgradcheck

from .. import oracle
from ..oracle import assert_close, copy_state

TOL = {np.float32: dict(rtol=2e-4, atol=2e-5), np.float64: dict(rtol=1e-9, atol=1e-10)}


def close(a, t, dt):
    assert a is not None and t is not None
    assert_close(a, t, **TOL[dt])


def run_both(torch, fn_rg, fn_t, arrays, dt, seed=0):
    """The oracle's ``run_both`` (outputs and all input grads) with this file's tolerances."""
    return oracle.run_both(torch, fn_rg, fn_t, arrays, tol=TOL[dt], seed=seed)


def rand(*shape, dt=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dt)


# -- layer norm --------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape,ns", [((4, 5), (5,)), ((2, 3, 4), (4,)), ((2, 3, 4), (3, 4)),
                                      ((6,), (6,))])
def test_layer_norm_matches_torch(torch, dt, shape, ns):
    x, w, b = rand(*shape, dt=dt), rand(*ns, dt=dt, seed=1), rand(*ns, dt=dt, seed=2)
    y, yt = run_both(torch, lambda x, w, b: F.layer_norm(x, ns, w, b, 1e-5),
                     lambda x, w, b: torch.nn.functional.layer_norm(x, ns, w, b, 1e-5),
                     [x, w, b], dt)
    assert y.grad_fn.name() == yt.grad_fn.name() == "NativeLayerNormBackward0"
    assert y.dtype == getattr(rg, np.dtype(dt).name)
    run_both(torch, lambda x: F.layer_norm(x, ns), lambda x: torch.nn.functional.layer_norm(x, ns),
             [x], dt)
    run_both(torch, lambda x, w: F.layer_norm(x, ns, w),
             lambda x, w: torch.nn.functional.layer_norm(x, ns, w), [x, w], dt)


def test_layer_norm_gradcheck():
    x = rg.randn(3, 4, dtype=rg.float64, requires_grad=True)
    w = rg.randn(4, dtype=rg.float64, requires_grad=True)
    b = rg.randn(4, dtype=rg.float64, requires_grad=True)
    f = lambda x, w, b: F.layer_norm(x, (4,), w, b)  # noqa: E731
    assert gradcheck(f, (x, w, b))
    assert gradgradcheck(f, (x, w, b))
    assert gradgradcheck(lambda x: F.layer_norm(x, (2, 4)), (x.reshape(1, 3, 4).expand(2, 3, 4)
                                                             .contiguous().reshape(3, 2, 4)
                                                             .detach().requires_grad_(),))


def test_layer_norm_module(torch):
    for kw in [{}, dict(elementwise_affine=False), dict(bias=False), dict(eps=1e-3)]:
        m, mt = rg.nn.LayerNorm([3, 4], **kw), torch.nn.LayerNorm([3, 4], **kw)
        assert repr(m) == repr(mt)
        assert list(m.state_dict()) == list(mt.state_dict())
        for p in mt.parameters():
            with torch.no_grad():
                p.normal_()
        copy_state(mt, m)
        x = rand(2, 3, 4, dt=np.float32)
        y, yt = run_both(torch, m, mt, [x], np.float32)
        for (_n, p), (_, pt) in zip(m.named_parameters(), mt.named_parameters()):
            close(p.grad, pt.grad, np.float32)
    assert rg.nn.LayerNorm(3).weight.tolist() == [1.0, 1.0, 1.0]
    assert rg.nn.LayerNorm(3).bias.tolist() == [0.0, 0.0, 0.0]
    assert rg.nn.LayerNorm(3, dtype=rg.float64).weight.dtype == rg.float64


def test_layer_norm_errors(torch):
    cases = [
        lambda F: F.layer_norm(lib(F).randn(4, 3), (4,)),
        lambda F: F.layer_norm(lib(F).randn(4, 3), (3,), lib(F).ones(4)),
        lambda F: F.layer_norm(lib(F).randn(4, 3), (3,), None, lib(F).ones(2)),
        lambda F: F.layer_norm(lib(F).randn(4, 3), (2, 3)),
    ]
    check_errors(torch, cases)


def lib(F):
    return rg if F.__name__.startswith("retrograd") else pytest.importorskip("torch")


def check_errors(torch, cases):
    for case in cases:
        with pytest.raises(Exception) as et:
            case(torch.nn.functional)
        with pytest.raises(type(et.value)) as er:
            case(F)
        msg = str(et.value).replace("torch.", "retrograd.")
        assert str(er.value) == msg


# -- batch norm --------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5), (4, 3, 2, 5)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_functional(torch, dt, shape, training):
    c = shape[1]
    rm0, rv0 = rand(c, dt=dt, seed=5), np.abs(rand(c, dt=dt, seed=6)) + 0.5
    rm, rv = rg.tensor(rm0), rg.tensor(rv0)
    rmt, rvt = torch.tensor(rm0), torch.tensor(rv0)
    x, w, b = rand(*shape, dt=dt), rand(c, dt=dt, seed=1), rand(c, dt=dt, seed=2)
    y, yt = run_both(
        torch, lambda x, w, b: F.batch_norm(x, rm, rv, w, b, training, 0.3, 1e-4),
        lambda x, w, b: torch.nn.functional.batch_norm(x, rmt, rvt, w, b, training, 0.3, 1e-4),
        [x, w, b], dt)
    assert y.grad_fn.name() == yt.grad_fn.name()
    close(rm, rmt, dt)
    close(rv, rvt, dt)
    run_both(torch, lambda x: F.batch_norm(x, None, None, training=True),
             lambda x: torch.nn.functional.batch_norm(x, None, None, training=True), [x], dt)


def test_batch_norm_gradcheck():
    x = rg.randn(4, 2, 3, dtype=rg.float64, requires_grad=True)
    w = rg.randn(2, dtype=rg.float64, requires_grad=True)
    b = rg.randn(2, dtype=rg.float64, requires_grad=True)
    f = lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True)  # noqa: E731
    assert gradcheck(f, (x, w, b))
    assert gradgradcheck(f, (x, w, b))
    rm = rg.randn(2, dtype=rg.float64)
    rv = rg.rand(2, dtype=rg.float64) + 0.5
    g = lambda x, w, b: F.batch_norm(x, rm, rv, w, b, training=False)  # noqa: E731
    assert gradcheck(g, (x, w, b))
    assert gradgradcheck(g, (x, w, b))
    assert gradgradcheck(lambda x: F.batch_norm(x, None, None, training=True), (x,))


@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (6, 3, 4)),
                                       ("BatchNorm2d", (4, 3, 2, 5)),
                                       ("BatchNorm3d", (2, 3, 2, 2, 2))])
@pytest.mark.parametrize("kw", [{}, dict(momentum=None), dict(affine=False),
                                dict(track_running_stats=False), dict(bias=False),
                                dict(eps=1e-3, momentum=0.5)])
def test_batch_norm_module(torch, cls, shape, kw):
    m, mt = getattr(rg.nn, cls)(3, **kw), getattr(torch.nn, cls)(3, **kw)
    assert repr(m) == repr(mt)
    assert list(m.state_dict()) == list(mt.state_dict())
    for p in mt.parameters():
        with torch.no_grad():
            p.normal_()
    copy_state(mt, m)
    for step in range(3):
        x = rand(*shape, dt=np.float32, seed=step)
        run_both(torch, m, mt, [x], np.float32)
        for (_n, p), (_, pt) in zip(m.named_parameters(), mt.named_parameters()):
            close(p.grad, pt.grad, np.float32)
    for (_k, v), (_, vt) in zip(m.state_dict().items(), mt.state_dict().items()):
        np.testing.assert_allclose(v.numpy(), vt.numpy(), rtol=1e-5, atol=1e-6)
    m.eval()
    mt.eval()
    run_both(torch, m, mt, [rand(*shape, dt=np.float32, seed=9)], np.float32)


def test_batch_norm_module_double_and_reset(torch):
    m, mt = rg.nn.BatchNorm1d(3).double(), torch.nn.BatchNorm1d(3).double()
    run_both(torch, m, mt, [rand(5, 3)], np.float64)
    close(m.running_var, mt.running_var, np.float64)
    assert int(m.num_batches_tracked) == 1
    m.reset_running_stats()
    assert m.running_mean.tolist() == [0.0] * 3 and m.running_var.tolist() == [1.0] * 3
    assert int(m.num_batches_tracked) == 0


def test_batch_norm_errors(torch):
    cases = [
        lambda F: F.batch_norm(lib(F).randn(1, 3), None, None, training=True),
        lambda F: F.batch_norm(lib(F).randn(4, 3), lib(F).zeros(4), lib(F).ones(4),
                               training=True),
        lambda F: F.batch_norm(lib(F).randn(4, 3), None, None, training=False),
        lambda F: F.batch_norm(lib(F).randn(4, 3), lib(F).zeros(3), None, training=True),
    ]
    check_errors(torch, cases)
    for cls, x in [("BatchNorm1d", (2, 3, 4, 5)), ("BatchNorm2d", (2, 3, 4))]:
        with pytest.raises(ValueError) as et:
            getattr(torch.nn, cls)(3)(torch.randn(*x))
        with pytest.raises(ValueError, match=re.escape(str(et.value))):
            getattr(rg.nn, cls)(3)(rg.randn(*x))


# -- group norm --------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape,groups", [((4, 6), 3), ((2, 6, 5), 2), ((2, 4, 3, 3), 4),
                                          ((2, 4, 3, 3), 1)])
def test_group_norm_matches_torch(torch, dt, shape, groups):
    c = shape[1]
    x, w, b = rand(*shape, dt=dt), rand(c, dt=dt, seed=1), rand(c, dt=dt, seed=2)
    y, yt = run_both(torch, lambda x, w, b: F.group_norm(x, groups, w, b),
                     lambda x, w, b: torch.nn.functional.group_norm(x, groups, w, b), [x, w, b],
                     dt)
    assert y.grad_fn.name() == yt.grad_fn.name() == "NativeGroupNormBackward0"
    run_both(torch, lambda x: F.group_norm(x, groups),
             lambda x: torch.nn.functional.group_norm(x, groups), [x], dt)


def test_group_norm_gradcheck_and_module(torch):
    x = rg.randn(2, 4, 3, dtype=rg.float64, requires_grad=True)
    w = rg.randn(4, dtype=rg.float64, requires_grad=True)
    b = rg.randn(4, dtype=rg.float64, requires_grad=True)
    f = lambda x, w, b: F.group_norm(x, 2, w, b)  # noqa: E731
    assert gradcheck(f, (x, w, b))
    assert gradgradcheck(f, (x, w, b))
    for kw in [{}, dict(affine=False), dict(bias=False)]:
        m, mt = rg.nn.GroupNorm(2, 4, **kw), torch.nn.GroupNorm(2, 4, **kw)
        assert repr(m) == repr(mt)
        assert list(m.state_dict()) == list(mt.state_dict())
        run_both(torch, m, mt, [rand(3, 4, 5, dt=np.float32)], np.float32)
    with pytest.raises(ValueError, match=r"num_channels \(4\) must be divisible by num_groups "
                                         r"\(3\)"):
        rg.nn.GroupNorm(3, 4)
    check_errors(torch, [
        lambda F: F.group_norm(lib(F).randn(4, 6), 4),
        lambda F: F.group_norm(lib(F).randn(4, 6, 2), 3, lib(F).ones(5)),
    ])


# -- rms norm ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rms_norm_matches_torch(torch, dt, eps):
    x, w = rand(2, 3, 4, dt=dt), rand(4, dt=dt, seed=1)
    y, yt = run_both(torch, lambda x, w: F.rms_norm(x, (4,), w, eps),
                     lambda x, w: torch.nn.functional.rms_norm(x, (4,), w, eps), [x, w], dt)
    assert y.grad_fn.name() == yt.grad_fn.name()
    run_both(torch, lambda x: F.rms_norm(x, [3, 4], eps=eps),
             lambda x: torch.nn.functional.rms_norm(x, [3, 4], eps=eps), [x], dt)
    for kw in [{}, dict(elementwise_affine=False), dict(eps=1e-2)]:
        m, mt = rg.nn.RMSNorm(4, **kw), torch.nn.RMSNorm(4, **kw)
        assert repr(m) == repr(mt)
        assert list(m.state_dict()) == list(mt.state_dict())
        run_both(torch, m, mt, [x], dt) if dt == np.float32 else None


def test_rms_norm_gradcheck(torch):
    x = rg.randn(3, 4, dtype=rg.float64, requires_grad=True)
    w = rg.randn(4, dtype=rg.float64, requires_grad=True)
    assert gradgradcheck(lambda x, w: F.rms_norm(x, (4,), w, 1e-6), (x, w))
    check_errors(torch, [lambda F: F.rms_norm(lib(F).randn(4, 3), (4,))])


# -- instance norm -----------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{}, dict(affine=True), dict(track_running_stats=True),
                                dict(affine=True, track_running_stats=True)])
def test_instance_norm_module(torch, kw):
    for cls, shape in [("InstanceNorm1d", (2, 3, 5)), ("InstanceNorm2d", (2, 3, 4, 4)),
                       ("InstanceNorm1d", (3, 5))]:
        m, mt = getattr(rg.nn, cls)(3, **kw), getattr(torch.nn, cls)(3, **kw)
        assert repr(m) == repr(mt)
        assert list(m.state_dict()) == list(mt.state_dict())
        for p in mt.parameters():
            with torch.no_grad():
                p.normal_()
        copy_state(mt, m)
        run_both(torch, m, mt, [rand(*shape, dt=np.float32)], np.float32)
        for (_k, v), (_, vt) in zip(m.state_dict().items(), mt.state_dict().items()):
            np.testing.assert_allclose(v.numpy(), vt.numpy(), rtol=1e-5, atol=1e-6)
        m.eval()
        mt.eval()
        run_both(torch, m, mt, [rand(*shape, dt=np.float32, seed=3)], np.float32)


def _bn_state_dict_versions(lib):
    """BatchNorm's state dict is of version 2 (it added num_batches_tracked); one of version 1,
    or without metadata, loads without that key, as in PyTorch."""
    nn = lib.nn
    m = nn.Sequential(nn.BatchNorm1d(2))
    sd = m.state_dict()
    out = [dict(sd._metadata)]
    plain = {k: v for k, v in sd.items() if "num_batches" not in k}
    out.append(str(m.load_state_dict(plain)))
    del sd["0.num_batches_tracked"]
    try:
        m.load_state_dict(sd)
    except RuntimeError as e:
        out.append(str(e))
    return out


def test_batchnorm_state_dict_version_matches_torch(torch):
    assert _bn_state_dict_versions(rg) == _bn_state_dict_versions(torch)
