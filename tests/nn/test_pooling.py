"""Tests for pooling (max, average, adaptive) and interpolation, functional and modules, against
PyTorch (the oracle; skipped without it): values, indices, gradients, grad_fn names, reprs and
errors. The gradcheck/gradgradcheck cases need no torch.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn  # noqa: F401 - binds rg.nn
import retrograd.nn.functional as F
from retrograd.autograd import gradcheck, gradgradcheck

from ..oracle import run_both, same_call

TOL = {np.float32: dict(rtol=2e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-13)}


def _array(shape, dtype, seed=0, relu=False):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return np.maximum(a, 0) if relu else a   # relu: many ties (zeros) in the windows


def check(torch, name, shape, dtype=np.float64, relu=False, **kw):
    """torch.nn.functional.<name> and retrograd's agree on values (indices exactly), the
    grad_fn name and the input's gradient."""
    run_both(torch, *same_call(torch, f"nn.functional.{name}", **kw),
             [_array(shape, dtype, relu=relu)], tol=TOL[dtype])


MAX2D = [
    ((2, 3, 8, 8), dict(kernel_size=2)),
    ((2, 3, 9, 7), dict(kernel_size=2)),
    ((2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ((2, 3, 9, 8), dict(kernel_size=(3, 2), stride=1, padding=1, dilation=2)),
    ((2, 3, 10, 9), dict(kernel_size=3, stride=(2, 3), dilation=(1, 2), ceil_mode=True)),
    ((3, 8, 8), dict(kernel_size=2, stride=1)),
    ((2, 3, 8, 8), dict(kernel_size=2, return_indices=True)),
    ((2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1, return_indices=True)),
    ((3, 7, 8), dict(kernel_size=3, padding=1, return_indices=True)),
]


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,kw", MAX2D)
def test_max_pool2d(torch, shape, kw, dtype, relu):
    check(torch, "max_pool2d", shape, dtype, relu, **kw)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,kw", [
    ((2, 3, 9), dict(kernel_size=3, stride=2, ceil_mode=True)),
    ((2, 3, 9), dict(kernel_size=2, padding=1, dilation=2)),
    ((3, 9), dict(kernel_size=2)),
    ((2, 3, 9), dict(kernel_size=3, stride=1, return_indices=True)),
])
def test_max_pool1d(torch, shape, kw, dtype):
    check(torch, "max_pool1d", shape, dtype, True, **kw)


def test_max_pool_nan(torch):
    x = _array((1, 1, 4, 4), np.float64)
    x[0, 0, 1, 1] = np.nan
    to, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)
    ro, ri = F.max_pool2d(rg.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(ro.numpy(), to.numpy())
    np.testing.assert_array_equal(ri.numpy(), ti.numpy())


def test_max_pool_integer(torch):
    x = np.arange(2 * 3 * 6 * 6).reshape(2, 3, 6, 6) % 7
    to = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, 1)
    ro = F.max_pool2d(rg.tensor(x), 3, 2, 1)
    assert ro.dtype == rg.int64
    np.testing.assert_array_equal(ro.numpy(), to.numpy())


AVG2D = [
    ((2, 3, 8, 8), dict(kernel_size=2)),
    ((2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ((2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                        count_include_pad=False)),
    ((2, 3, 9, 8), dict(kernel_size=(3, 2), padding=(1, 0), divisor_override=5)),
    ((3, 7, 8), dict(kernel_size=2, stride=(1, 2))),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,kw", AVG2D)
def test_avg_pool2d(torch, shape, kw, dtype):
    check(torch, "avg_pool2d", shape, dtype, **kw)


@pytest.mark.parametrize("shape,kw", [
    ((2, 3, 9), dict(kernel_size=3, stride=2, padding=1)),
    ((2, 3, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                     count_include_pad=False)),
    ((3, 9), dict(kernel_size=2)),
])
def test_avg_pool1d(torch, shape, kw):
    check(torch, "avg_pool1d", shape, **kw)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,out", [
    ((2, 3, 9, 7), (4, 3)), ((2, 3, 8, 8), 4), ((2, 3, 9, 7), 1), ((3, 5, 7), (None, 3)),
    ((2, 3, 5, 7), (7, 9)),
])
def test_adaptive_avg_pool2d(torch, shape, out, dtype):
    check(torch, "adaptive_avg_pool2d", shape, dtype, output_size=out)


@pytest.mark.parametrize("shape,out", [((2, 3, 10), 4), ((3, 10), 3), ((2, 3, 5), 8)])
def test_adaptive_avg_pool1d(torch, shape, out):
    check(torch, "adaptive_avg_pool1d", shape, output_size=out)


@pytest.mark.parametrize("shape,out", [((2, 3, 9, 7), (4, 3)), ((3, 8, 8), 3),
                                       ((2, 3, 5, 7), (7, 9))])
def test_adaptive_max_pool2d(torch, shape, out):
    for ri in (False, True):
        x = _array(shape, np.float64, relu=True)
        tx, rx = torch.tensor(x, requires_grad=True), rg.tensor(x, requires_grad=True)
        to = torch.nn.functional.adaptive_max_pool2d(tx, out, return_indices=ri)
        ro = F.adaptive_max_pool2d(rx, out, return_indices=ri)
        if ri:
            np.testing.assert_array_equal(ro[1].numpy(), to[1].numpy())
            to, ro = to[0], ro[0]
        np.testing.assert_allclose(ro.detach().numpy(), to.detach().numpy())
        to.sum().backward()
        ro.sum().backward()
        np.testing.assert_allclose(rx.grad.numpy(), tx.grad.numpy())


def test_adaptive_max_pool_nan_ties_and_grad_fn(torch):
    # The first maximum of a window wins, or its last NaN; overlapping windows add gradients.
    x = np.array([[[1.0, np.nan, 3.0, np.nan, 2.0], [np.nan, 0.0, 3.0, 5.0, 5.0],
                   [4.0, 4.0, 1.0, 1.0, 0.0]]])
    for out in ((1, 2), (2, 3), (3, 5)):
        to, ti = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), out, True)
        ro, ri = F.adaptive_max_pool2d(rg.tensor(x), out, True)
        np.testing.assert_array_equal(ro.numpy(), to.numpy())
        np.testing.assert_array_equal(ri.numpy(), ti.numpy())
    y = np.nan_to_num(x, nan=4.0)
    ro, to = run_both(torch, lambda a: F.adaptive_max_pool2d(a, (2, 3)),
                      lambda a: torch.nn.functional.adaptive_max_pool2d(a, (2, 3)), [y],
                      tol=TOL[np.float64])
    assert ro.grad_fn.name() == "AdaptiveMaxPool2DBackward0"
    run_both(torch, lambda a: F.adaptive_max_pool1d(a, 2),
             lambda a: torch.nn.functional.adaptive_max_pool1d(a, 2), [y[0]],
             tol=TOL[np.float64])


@pytest.mark.parametrize("fn", [
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.arange(16).view(1, 4, 4), 2),
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.zeros(1, 0, 3), 2),
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.zeros(2, 3, 4, 0), 2),
    lambda lib: lib.nn.functional.adaptive_max_pool1d(lib.zeros(5), 2),
])
def test_adaptive_max_pool_errors(torch, oracle, fn):
    oracle.compare_error(fn)


def test_adaptive_max_pool_empty_output_and_batch(torch, oracle):
    oracle.compare(lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.ones(1, 2, 3, 3), 0,
                                                                     True))
    oracle.compare(lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.ones(0, 2, 3, 3), 2,
                                                                     True))


INTERP = [
    ((2, 3, 5, 7), dict(scale_factor=2)),
    ((2, 3, 5, 7), dict(scale_factor=1.7)),
    ((2, 3, 5, 7), dict(scale_factor=(0.5, 2.5))),
    ((2, 3, 5, 7), dict(size=(3, 11))),
    ((2, 3, 5, 7), dict(size=(3, 11), mode="nearest-exact")),
    ((2, 3, 5, 7), dict(scale_factor=1.5, mode="nearest-exact")),
    ((2, 3, 5), dict(scale_factor=2.5)),
    ((2, 3, 5), dict(size=4)),
    ((2, 3, 5, 7), dict(scale_factor=2.3, mode="bilinear")),
    ((2, 3, 5, 7), dict(scale_factor=2, mode="bilinear", align_corners=False)),
    ((2, 3, 5, 7), dict(size=(9, 4), mode="bilinear", align_corners=True)),
    ((2, 3, 5, 7), dict(size=(1, 4), mode="bilinear", align_corners=True)),
    ((2, 3, 5, 7), dict(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)),
    ((2, 3, 5), dict(scale_factor=1.5, mode="linear")),
    ((2, 3, 5), dict(size=9, mode="linear", align_corners=True)),
    ((2, 3, 5, 7), dict(size=(3, 4), mode="area")),
    ((2, 3, 5, 7), dict(size=(7, 8), mode="bicubic")),
    ((2, 3, 5, 7), dict(scale_factor=2, mode="bicubic", align_corners=True)),
    ((2, 3, 8, 6), dict(scale_factor=(0.5, 1.7), mode="bicubic")),
    ((1, 2, 3, 3), dict(size=(9, 2), mode="bicubic", recompute_scale_factor=None)),
    ((1, 1, 1, 1), dict(size=3, mode="bicubic")),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,kw", INTERP)
def test_interpolate(torch, shape, kw, dtype):
    check(torch, "interpolate", shape, dtype, **kw)


def _t(*shape, seed=0):
    return rg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


@pytest.mark.parametrize("fn,shape", [
    (lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), (1, 2, 5, 6)),
    (lambda x: F.max_pool2d(x, 2), (2, 4, 4)),
    (lambda x: F.max_pool1d(x, 2), (1, 2, 6)),
    (lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), (1, 2, 5, 6)),
    (lambda x: F.avg_pool1d(x, 2, 1), (1, 2, 5)),
    (lambda x: F.adaptive_avg_pool2d(x, (3, 4)), (1, 2, 5, 6)),
    (lambda x: F.adaptive_max_pool2d(x, (3, 4)), (1, 2, 5, 6)),
    (lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear"), (1, 2, 3, 4)),
    (lambda x: F.interpolate(x, size=(5, 7)), (1, 2, 3, 4)),
    (lambda x: F.interpolate(x, size=4, mode="linear", align_corners=True), (1, 2, 3)),
    (lambda x: F.interpolate(x, size=(4, 5), mode="bicubic"), (1, 2, 3, 4)),
])
def test_gradcheck(fn, shape):
    x = _t(*shape)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def _tie_windows():
    """2x2 windows that test the first-maximum rule: all equal, the (0, 1)/(1, 0) tie (a
    column-first or row-first reduction picks differently), bottom-row and right-column ties,
    zeros after a relu, infinities."""
    wins = [[[1, 1], [1, 1]], [[0, 5], [5, 0]], [[0, 2], [5, 5]], [[3, 0], [3, 0]],
            [[0, 0], [0, 0]], [[-1, 4], [2, 4]], [[np.inf, 1], [np.inf, 0]],
            [[-np.inf, -np.inf], [-np.inf, -np.inf]], [[2, 7], [7, 7]], [[-3, -2], [-2, -3]],
            [[1, 2], [3, 4]], [[9, 8], [7, 6]]]
    a = np.array(wins, np.float64)  # (12, 2, 2) -> (1, 2, 2, 12): 2 channels of 6 windows
    return a.reshape(2, 6, 2, 2).transpose(0, 2, 1, 3).reshape(1, 2, 2, 12)


@pytest.mark.parametrize("batched", [True, False])
def test_max_pool_2x2_fast_path_ties_and_special_gradients(torch, batched):
    """The 2x2/stride-2 fast path (shifted maxima, comparison masks) against torch, bit for bit:
    values, the first maximum of tied windows, and gradients holding -0.0, inf and NaN (PyTorch
    adds each to a zero: -0.0 becomes +0.0, and the other positions stay +0.0)."""
    x = _tie_windows()
    g = np.arange(12.0).reshape(1, 2, 1, 6) - 5.0
    g[0, 0, 0, :4] = [-0.0, np.inf, -np.inf, np.nan]
    for gg in (g, np.where(np.isfinite(g), g, 1.5)):  # non-finite: the general path
        res = []
        for lib in (torch, rg):
            t = lib.tensor(x if batched else x[0], requires_grad=True)
            y = lib.nn.functional.max_pool2d(t, 2)
            y.backward(lib.tensor(gg if batched else gg[0]))
            res.append((y.detach().numpy(), t.grad.numpy()))
        (ty, tg), (ry, rgr) = res
        np.testing.assert_array_equal(ry, ty)
        np.testing.assert_array_equal(rgr, tg)
        np.testing.assert_array_equal(np.signbit(rgr), np.signbit(tg))


def test_max_pool_2x2_fast_path_matches_general_path():
    """Gradients of the fast path equal the general path's (return_indices=True takes it) on
    relu'd inputs full of tied zeros, and a NaN in the input sends the call to the general path."""
    rng = np.random.default_rng(5)
    x = np.maximum(rng.standard_normal((3, 4, 6, 8)), 0).round(1)
    g = rng.standard_normal((3, 4, 3, 4))
    for xx in (x, np.where(rng.random(x.shape) < 0.05, np.nan, x)):
        grads = []
        for fast in (True, False):
            t = rg.tensor(xx, requires_grad=True)
            y = F.max_pool2d(t, 2) if fast else F.max_pool2d(t, 2, return_indices=True)[0]
            y.backward(rg.tensor(g))
            grads.append((y.detach().numpy(), t.grad.numpy()))
        np.testing.assert_array_equal(grads[0][0], grads[1][0])
        np.testing.assert_array_equal(grads[0][1], grads[1][1])
    xi = (np.arange(2 * 3 * 4 * 6) * 7 % 11).reshape(2, 3, 4, 6)
    np.testing.assert_array_equal(F.max_pool2d(rg.tensor(xi), 2).numpy(),
                                  F.max_pool2d(rg.tensor(xi), 2, return_indices=True)[0].numpy())


def test_max_pool_2x2_double_backward(torch):
    x = np.maximum(_array((2, 2, 6, 4), np.float64), 0)
    res = []
    for lib in (torch, rg):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.max_pool2d(t, 2)
        (g,) = lib.autograd.grad((y ** 3).sum(), t, create_graph=True)
        (g ** 2).sum().backward()
        res.append((g.detach().numpy(), t.grad.numpy()))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-12)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-12)


def test_max_pool_double_backward(torch):
    x = _array((2, 2, 6, 6), np.float64)
    res = []
    for lib, fn in ((torch, torch.nn.functional.max_pool2d), (rg, F.max_pool2d)):
        t = lib.tensor(x, requires_grad=True)
        y = fn(t, 3, 2, 1)
        (g,) = lib.autograd.grad((y ** 3).sum(), t, create_graph=True)
        (g ** 2).sum().backward()
        res.append(t.grad.numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-12)


# -- errors ------------------------------------------------------------------------------------

ERRORS = [
    ("max_pool2d", (2, 3, 8, 8), dict(kernel_size=3, padding=2)),
    ("max_pool2d", (2, 3, 2, 2), dict(kernel_size=3)),
    ("max_pool2d", (3, 8), dict(kernel_size=2)),
    ("max_pool2d", (2, 3, 8, 8), dict(kernel_size=2, stride=0)),
    ("max_pool1d", (3,), dict(kernel_size=2)),
    ("avg_pool2d", (2, 3, 2, 2), dict(kernel_size=3)),
    ("avg_pool2d", (2, 3, 8, 8), dict(kernel_size=3, padding=2)),
    ("avg_pool2d", (2, 3, 8, 8), dict(kernel_size=2, divisor_override=0)),
    ("adaptive_avg_pool2d", (3, 8), dict(output_size=2)),
    ("interpolate", (2, 3, 8, 8), dict(size=4, scale_factor=2)),
    ("interpolate", (2, 3, 8, 8), {}),
    ("interpolate", (2, 3, 8), dict(size=3, mode="bilinear")),
    ("interpolate", (2, 3, 8, 8), dict(scale_factor=2, align_corners=True)),
]


@pytest.mark.parametrize("name,shape,kw", ERRORS)
def test_errors(torch, name, shape, kw):
    x = _array(shape, np.float32)
    with pytest.raises(Exception) as te:
        getattr(torch.nn.functional, name)(torch.tensor(x), **kw)
    with pytest.raises(type(te.value)) as re_:
        getattr(F, name)(rg.tensor(x), **kw)
    assert str(re_.value) == str(te.value)


# -- modules -----------------------------------------------------------------------------------

MODULES = [
    ("MaxPool2d", (2,), {}, (2, 3, 8, 8)),
    ("MaxPool2d", ((3, 2),), dict(stride=(2, 1), padding=1, dilation=1, ceil_mode=True),
     (2, 3, 9, 8)),
    ("MaxPool1d", (3,), dict(stride=2, padding=1), (2, 3, 9)),
    ("AvgPool2d", (3,), dict(stride=2, padding=1, count_include_pad=False), (2, 3, 9, 8)),
    ("AvgPool2d", (2,), dict(divisor_override=3), (2, 3, 8, 8)),
    ("AvgPool1d", (3,), dict(stride=2, ceil_mode=True), (2, 3, 9)),
    ("AdaptiveAvgPool2d", ((4, 3),), {}, (2, 3, 9, 7)),
    ("AdaptiveAvgPool2d", ((None, 3),), {}, (2, 3, 9, 7)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 9)),
    ("AdaptiveMaxPool2d", (3,), {}, (2, 3, 9, 7)),
    ("AdaptiveMaxPool1d", (4,), {}, (2, 3, 9)),
    ("Upsample", (), dict(scale_factor=2), (2, 3, 4, 5)),
    ("Upsample", (), dict(size=(7, 3), mode="bilinear"), (2, 3, 4, 5)),
    ("Upsample", (), dict(scale_factor=(2, 1.5), mode="bilinear", align_corners=True),
     (2, 3, 4, 5)),
    ("UpsamplingNearest2d", (), dict(scale_factor=3), (2, 3, 4, 5)),
    ("UpsamplingBilinear2d", (), dict(size=7), (2, 3, 4, 5)),
]


@pytest.mark.parametrize("name,args,kw,shape", MODULES)
def test_modules(torch, name, args, kw, shape):
    t_mod = getattr(torch.nn, name)(*args, **kw)
    r_mod = getattr(rg.nn, name)(*args, **kw)
    assert repr(r_mod) == repr(t_mod)
    run_both(torch, r_mod, t_mod, [_array(shape, np.float32)], tol=TOL[np.float32])


def test_max_pool_module_return_indices(torch):
    x = _array((2, 3, 8, 8), np.float32)
    to, ti = torch.nn.MaxPool2d(2, return_indices=True)(torch.tensor(x))
    ro, ri = rg.nn.MaxPool2d(2, return_indices=True)(rg.tensor(x))
    np.testing.assert_array_equal(ri.numpy(), ti.numpy())
    np.testing.assert_array_equal(ro.numpy(), to.numpy())
