"""Tests for ``nn.functional.activation``, ``nn.modules.activation`` and the primitives in
``ops.nn_activation``: values, gradients and grad_fn names against PyTorch (the oracle, skipped
without it), gradcheck/gradgradcheck in float64, in-place semantics, reprs and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn  # noqa: F401 - binds rg.nn
import retrograd.nn.functional as RF
from retrograd.autograd import gradcheck, gradgradcheck


def _t(torch, a, rg_grad=True):
    return torch.tensor(a, requires_grad=rg_grad)


# name -> (call on the functional module, kwargs) ; the same call runs on torch's F and RF.
ACTS = {
    "relu": ("relu", {}),
    "relu6": ("relu6", {}),
    "leaky_relu": ("leaky_relu", {"negative_slope": 0.2}),
    "elu": ("elu", {"alpha": 0.7}),
    "selu": ("selu", {}),
    "celu": ("celu", {"alpha": 1.5}),
    "gelu": ("gelu", {}),
    "gelu_tanh": ("gelu", {"approximate": "tanh"}),
    "silu": ("silu", {}),
    "mish": ("mish", {}),
    "softplus": ("softplus", {}),
    "softplus_beta": ("softplus", {"beta": 2.0, "threshold": 3.0}),
    "softsign": ("softsign", {}),
    "tanh": ("tanh", {}),
    "sigmoid": ("sigmoid", {}),
    "hardtanh": ("hardtanh", {"min_val": -0.5, "max_val": 2.0}),
    "hardsigmoid": ("hardsigmoid", {}),
    "hardswish": ("hardswish", {}),
    "logsigmoid": ("logsigmoid", {}),
    "threshold": ("threshold", {"threshold": 0.3, "value": -2.0}),
    "softmax": ("softmax", {"dim": -1}),
    "log_softmax": ("log_softmax", {"dim": 0}),
    "softmin": ("softmin", {"dim": -1}),
    "glu": ("glu", {"dim": -1}),
    "hardshrink": ("hardshrink", {"lambd": 0.4}),
    "softshrink": ("softshrink", {"lambd": 0.4}),
    "tanhshrink": ("tanhshrink", {}),
}

SHAPES = [(6,), (3, 4), (2, 3, 2, 4)]


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) * 3
    flat = a.reshape(-1)
    # Boundary points where subgradient conventions matter.
    for k, v in enumerate([0.0, -1.0, 1.0, 3.0, -3.0, 0.3, 6.0, -0.5, 2.0, 25.0, -25.0]):
        if k < flat.size:
            flat[k] = v
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", sorted(ACTS))
def test_activation_matches_torch(torch, name, shape, dtype):
    import torch.nn.functional as TF

    fname, kw = ACTS[name]
    a = _data(shape, dtype)
    xt = torch.tensor(a, requires_grad=True)
    xr = rg.tensor(a, requires_grad=True)
    yt = getattr(TF, fname)(xt, **kw)
    yr = getattr(RF, fname)(xr, **kw)
    assert yr.dtype == rg.float32 if dtype == np.float32 else yr.dtype == rg.float64
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(yr.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    g = np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype(dtype)
    yt.backward(torch.tensor(g))
    yr.backward(rg.tensor(g))
    np.testing.assert_allclose(xr.grad.numpy(), xt.grad.numpy(), rtol=tol * 10, atol=tol * 10)
    assert yr.grad_fn.name() == yt.grad_fn.name()


@pytest.mark.parametrize("name", sorted(ACTS))
def test_activation_gradcheck(name):
    fname, kw = ACTS[name]
    a = np.random.default_rng(3).standard_normal((2, 4)) * 2
    # keep away from kinks, where finite differences are meaningless
    a = np.where(np.abs(a) < 0.1, 0.5, a)
    for k in (3.0, -3.0, 1.0, -1.0, 0.3, 0.4, -0.4, -0.5, 2.0):
        a = np.where(np.abs(a - k) < 0.05, a + 0.2, a)
    x = rg.tensor(a, dtype=rg.float64, requires_grad=True)

    def f(t):
        return getattr(RF, fname)(t, **kw)

    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_scalar_and_empty(torch):
    import torch.nn.functional as TF

    for fname, kw in [("softmax", {"dim": 0}), ("log_softmax", {"dim": -1}), ("gelu", {}),
                      ("silu", {}), ("elu", {})]:
        for a in (np.array(0.7), np.zeros((0, 3))):
            yt = getattr(TF, fname)(torch.tensor(a), **kw)
            yr = getattr(RF, fname)(rg.tensor(a), **kw)
            assert tuple(yr.shape) == tuple(yt.shape)
            np.testing.assert_allclose(yr.numpy(), yt.numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_and_signed_zero(torch, dtype):
    """hardshrink and softshrink keep NaN; elu/selu/celu keep -0. (as PyTorch's kernels; 48
    elements, in their vector loops: softshrink's scalar tail gives -0. for -0.)."""
    import torch.nn.functional as TF

    a = np.tile([np.nan, -0.0, 0.0, -0.3, 0.3, 2.0], 8)
    for fname, kw in [("hardshrink", {"lambd": 0.25}), ("softshrink", {"lambd": 0.25}),
                      ("elu", {}), ("selu", {}), ("celu", {"alpha": 0.5})]:
        yt = getattr(TF, fname)(torch.tensor(a, dtype=getattr(torch, dtype)), **kw).numpy()
        yr = getattr(RF, fname)(rg.tensor(a, dtype=getattr(rg, dtype)), **kw).numpy()
        np.testing.assert_array_equal(np.signbit(yr), np.signbit(yt))
        np.testing.assert_allclose(yr, yt, rtol=1e-6)


def test_softmax_extreme_logits(torch):
    import torch.nn.functional as TF

    inf = float("inf")
    a = np.array([[inf, 1.0], [-inf, -inf], [inf, inf], [-inf, 0.0], [1e4, -1e4],
                  [-1e4, 1e4], [1e30, 1e30], [88.0, -88.0]], dtype=np.float32)
    for fn in ("softmax", "log_softmax", "softmin"):
        for dtype in (np.float32, np.float64):
            xt = torch.tensor(a.astype(dtype))
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # no NumPy overflow warnings leak out
                yr = getattr(RF, fn)(rg.tensor(a.astype(dtype)), dim=1)
            yt = getattr(TF, fn)(xt, dim=1)
            np.testing.assert_allclose(yr.numpy(), yt.numpy(), rtol=1e-6)
    # the gradient at extreme finite logits is finite
    x = rg.tensor([[1e4, -1e4, 0.0]], requires_grad=True)
    RF.log_softmax(x, 1)[0, 1].backward()
    assert np.isfinite(x.grad.numpy()).all()


def test_softmax_dtype_arg_and_methods(torch):
    a = np.array([[1, 2, 3], [0, 0, 5]])
    for fn in ("softmax", "log_softmax"):
        yt = getattr(torch, fn)(torch.tensor(a), 1, dtype=torch.float64)
        yr = getattr(rg, fn)(rg.tensor(a), 1, dtype=rg.float64)
        assert yr.dtype == rg.float64
        np.testing.assert_allclose(yr.numpy(), yt.numpy())
        x = rg.tensor(a.astype(np.float32))
        np.testing.assert_allclose(getattr(x, fn)(0).numpy(),
                                   getattr(torch.tensor(a.astype(np.float32)), fn)(0).numpy(),
                                   rtol=1e-6)
        with pytest.raises(NotImplementedError, match=f'"{fn}_lastdim_kernel_impl" not '
                                                      "implemented for 'Long'"):
            getattr(rg, fn)(rg.tensor(a), 1)


@pytest.mark.parametrize("ndim", [0, 1, 2, 3, 4])
def test_softmax_implicit_dim(torch, ndim):
    import torch.nn.functional as TF

    a = np.random.default_rng(0).standard_normal((2,) * ndim)
    for fn in ("softmax", "log_softmax", "softmin"):
        with pytest.warns(UserWarning, match=f"Implicit dimension choice for {fn} has been "
                                             "deprecated"):
            yr = getattr(RF, fn)(rg.tensor(a))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yt = getattr(TF, fn)(torch.tensor(a))
        np.testing.assert_allclose(yr.numpy(), yt.numpy(), rtol=1e-12)


def test_softmax_higher_order(torch):
    a = np.random.default_rng(0).standard_normal((3, 4))
    w = np.random.default_rng(1).standard_normal((3, 4))
    res = []
    for lib, F in ((torch, torch.nn.functional), (rg, RF)):
        x = lib.tensor(a, requires_grad=True)
        y = (F.softmax(x, 1) * lib.tensor(w)).sum() + (F.log_softmax(x, 0) ** 2).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        res.append((g.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-10)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("fname,kw", [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {"negative_slope": 0.3}), ("elu", {}),
    ("selu", {}), ("celu", {}), ("silu", {}), ("mish", {}), ("hardtanh", {}),
    ("hardsigmoid", {}), ("hardswish", {}), ("threshold", {"threshold": 0.1, "value": 5.0}),
])
def test_inplace(torch, fname, kw):
    import torch.nn.functional as TF

    a = _data((3, 4), np.float64)
    out = []
    for lib, F in ((torch, TF), (rg, RF)):
        x = lib.tensor(a, requires_grad=True)
        h = x * 2
        r = getattr(F, fname)(h, **kw, inplace=True)
        assert r is h
        (r * lib.tensor(a)).sum().backward()
        out.append((h.detach().numpy(), x.grad.numpy(), h.grad_fn.name(), h._version
                    if lib is torch else h._version))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-12, atol=1e-15)
    assert out[1][2] == out[0][2]
    assert out[1][3] == out[0][3]


def test_inplace_on_leaf_errors():
    x = rg.tensor([1.0, -1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        RF.relu(x, inplace=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        RF.elu_(x)
    y = rg.tensor([1.0, -1.0])
    RF.leaky_relu_(y, 0.5)
    np.testing.assert_allclose(y.numpy(), [1.0, -0.5])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,nw", [((2, 3, 4), 3), ((2, 3), 1), ((5,), 1), ((), 1),
                                      ((2, 3, 2, 2), 3)])
def test_prelu(torch, shape, nw, dtype):
    import torch.nn.functional as TF

    a = _data(shape, dtype)
    w = np.linspace(-0.5, 0.7, nw).astype(dtype)
    xt, wt = torch.tensor(a, requires_grad=True), torch.tensor(w, requires_grad=True)
    xr, wr = rg.tensor(a, requires_grad=True), rg.tensor(w, requires_grad=True)
    yt, yr = TF.prelu(xt, wt), RF.prelu(xr, wr)
    assert yr.grad_fn.name() == yt.grad_fn.name()
    g = np.random.default_rng(2).standard_normal(shape).astype(dtype)
    yt.backward(torch.tensor(g))
    yr.backward(rg.tensor(g))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(yr.detach().numpy(), yt.detach().numpy(), rtol=tol)
    np.testing.assert_allclose(xr.grad.numpy(), xt.grad.numpy(), rtol=tol)
    np.testing.assert_allclose(wr.grad.numpy(), wt.grad.numpy(), rtol=tol * 10, atol=tol)
    if dtype == np.float64 and shape:
        xr64 = rg.tensor(np.where(np.abs(a) < 0.1, 0.5, a), requires_grad=True)
        assert gradcheck(RF.prelu, (xr64, wr))
        assert gradgradcheck(RF.prelu, (xr64, wr))


def test_prelu_module(torch):
    tm, rm = torch.nn.PReLU(3, init=0.1), rg.nn.PReLU(3, init=0.1)
    assert repr(rm) == repr(tm)
    assert list(rm.state_dict()) == list(tm.state_dict())
    np.testing.assert_allclose(rm.weight.detach().numpy(), tm.weight.detach().numpy())
    assert rg.nn.PReLU(dtype=rg.float64).weight.dtype == rg.float64
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel "
                                           "size. Found parameter numbers = 3 and channel "
                                           "size = 4."):
        rm(rg.ones(2, 4))


def _module_pairs(nn):
    return [
        nn.ReLU(), nn.ReLU(True), nn.ReLU6(), nn.ReLU6(inplace=True), nn.LeakyReLU(),
        nn.LeakyReLU(0.2, True), nn.ELU(), nn.ELU(0.5, True), nn.SELU(), nn.SELU(True),
        nn.CELU(), nn.CELU(2.0, True), nn.GELU(), nn.GELU("tanh"), nn.SiLU(), nn.SiLU(True),
        nn.Mish(), nn.Mish(True), nn.Softplus(), nn.Softplus(2, 10), nn.Softsign(), nn.Tanh(),
        nn.Sigmoid(), nn.Hardtanh(), nn.Hardtanh(-2, 3, True), nn.Hardsigmoid(),
        nn.Hardsigmoid(True), nn.Hardswish(), nn.Hardswish(True), nn.LogSigmoid(), nn.PReLU(),
        nn.PReLU(4, 0.1), nn.Threshold(0.1, 20), nn.Threshold(1, 2, True), nn.Softmax(),
        nn.Softmax(1), nn.LogSoftmax(-1), nn.LogSoftmax(), nn.Softmin(0), nn.Softmin(), nn.GLU(),
        nn.GLU(1), nn.Hardshrink(), nn.Softshrink(0.3), nn.Tanhshrink(), nn.RReLU(),
        nn.RReLU(0.1, 0.3, True), nn.Softmax2d(),
    ]


def test_module_reprs_and_outputs(torch):
    tms, rms = _module_pairs(torch.nn), _module_pairs(rg.nn)
    a = _data((2, 4, 3, 2), np.float64)
    for tm, rm in zip(tms, rms):
        tm.double()
        rm.double()
        assert repr(rm) == repr(tm)
        assert list(rm.state_dict()) == list(tm.state_dict())
        if isinstance(tm, torch.nn.RReLU):
            tm.eval()
            rm.eval()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yt = tm(torch.tensor(a))
            yr = rm(rg.tensor(a))
        np.testing.assert_allclose(yr.detach().numpy(), yt.detach().numpy(), rtol=1e-12,
                                   err_msg=repr(tm))
    r = rg.nn.Sequential(rg.nn.Linear(2, 3), rg.nn.ReLU(), rg.nn.Softmax(dim=1))
    t = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Softmax(dim=1))
    assert repr(r) == repr(t)


def test_rrelu_training():
    rg.manual_seed(0)
    x = rg.tensor(np.linspace(-3, 3, 200), requires_grad=True)
    y = RF.rrelu(x, 0.1, 0.3, training=True)
    ratio = (y / x).detach().numpy()
    neg = x.detach().numpy() < 0
    assert ((ratio[neg] >= 0.1) & (ratio[neg] <= 0.3)).all()
    np.testing.assert_allclose(ratio[~neg], 1.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ratio)


def test_errors(torch):
    import torch.nn.functional as TF

    cases = [
        ("gelu", (np.ones(3),), {"approximate": "foo"}),
        ("gelu", (np.array([1, 2]),), {}),
        ("elu", (np.array([1, 2]),), {}),
        ("silu", (np.array([1, 2]),), {}),
        ("leaky_relu", (np.array([1, 2]),), {}),
        ("softplus", (np.array([1, 2]),), {}),
        ("hardtanh", (np.ones(3),), {"min_val": 2.0, "max_val": 1.0}),
        ("glu", (np.ones((3, 5)),), {}),
        ("glu", (np.ones((3, 4)),), {"dim": 0}),
        ("glu", (np.array(1.0),), {}),
        ("softmax", (np.ones((2, 3)),), {"dim": 2}),
        ("prelu", (np.ones((3, 4)), np.ones(3)), {}),
        ("prelu", (np.ones(4), np.ones(4)), {}),
    ]
    for fname, args, kw in cases:
        with pytest.raises(Exception) as et:
            getattr(TF, fname)(*[torch.tensor(a) for a in args], **kw)
        with pytest.raises(et.type) as er:
            getattr(RF, fname)(*[rg.tensor(a) for a in args], **kw)
        assert str(er.value) == str(et.value), fname
    with pytest.raises(AssertionError):
        rg.nn.Hardtanh(1.0, -1.0)


def test_int_inputs_where_torch_allows(torch):
    import torch.nn.functional as TF

    a = np.array([1, -2, 3])
    for fname in ("relu", "hardtanh", "relu6"):
        yt = getattr(TF, fname)(torch.tensor(a))
        yr = getattr(RF, fname)(rg.tensor(a))
        assert str(yr.dtype).split(".")[1] == str(yt.dtype).split(".")[1]
        np.testing.assert_array_equal(yr.numpy(), yt.numpy())


def test_no_grad_records_nothing():
    x = rg.randn(3, 4, requires_grad=True)
    with rg.no_grad():
        for fname, kw in ACTS.values():
            assert getattr(RF, fname)(x, **kw).grad_fn is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,transposed", [((3, 2053), False), ((64, 128), True),
                                              ((4, 1024), False)])
def test_relu_large_contiguous_path(torch, dtype, shape, transposed):
    """relu of a large contiguous float array runs against a cached row of zeros, with a short
    tail when the size is not a multiple of the row (a non-contiguous input takes the scalar
    path): the same values as torch for NaN and infinities, and the same gradient (a NaN input
    passes it, as torch's ``y <= 0 ? 0 : g``)."""
    a = np.random.default_rng(4).standard_normal(shape).astype(dtype)
    a.reshape(-1)[:6] = [np.nan, -np.inf, np.inf, 0.0, -1.0, 2.0]
    a.reshape(-1)[-3:] = [np.nan, -2.0, 3.0]
    if transposed:
        a = a.T
    g = np.random.default_rng(5).standard_normal(a.shape).astype(dtype)
    res = []
    for lib in (torch, rg):
        x = lib.tensor(a, requires_grad=True)
        y = lib.relu(x)
        y.backward(lib.tensor(g))
        res.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_array_equal(res[1][0], res[0][0])
    np.testing.assert_array_equal(np.isnan(res[1][0]), np.isnan(res[0][0]))
    np.testing.assert_array_equal(res[1][1], res[0][1])
