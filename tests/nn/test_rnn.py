"""RNN, LSTM, GRU and their cells against PyTorch: values, gradients, reprs, init and errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import retrograd as rt
from retrograd.autograd import gradcheck, gradgradcheck
from retrograd.ops import nn_attention

from ..oracle import copy_state, leaves, run_both

TOL = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-9, atol=1e-11)}


def _copy(tm, rm, dtype: str):
    for m in (tm, rm):
        m.double() if dtype == "float64" else m.float()
    copy_state(tm, rm)


def _compare(torch, tm, rm, x: np.ndarray, hx=None, dtype: str = "float64"):
    """Run both modules on the same input (and state): the oracle compares every output and
    the gradients of the input, the state and every parameter."""
    _copy(tm, rm, dtype)
    hs = [] if hx is None else list(hx) if isinstance(hx, tuple) else [hx]

    def call(m):
        def f(x, *h):
            if hx is None:
                return m(x)
            return m(x, tuple(h) if isinstance(hx, tuple) else h[0])
        return f

    def loss(lib, outs):  # touches every output, with distinct weights
        return sum((a * a).sum() * (i + 1) for i, a in enumerate(outs))

    run_both(torch, call(rm), call(tm), [a.astype(dtype) for a in [x, *hs]], tol=TOL[dtype],
             loss=loss, modules=(rm, tm), grad_fn=False)  # module internals differ


CONFIGS = [
    {},
    dict(num_layers=2, bidirectional=True),
    dict(batch_first=True, num_layers=3),
    dict(bias=False, bidirectional=True),
    dict(batch_first=True, bidirectional=True, num_layers=2),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", CONFIGS, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items())
                         or "default")
@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_layers_match_torch(torch, mode, kw, dtype):
    torch.manual_seed(0)
    tm = getattr(torch.nn, mode)(3, 5, **kw)
    rm = getattr(rt.nn, mode)(3, 5, **kw)
    rng = np.random.default_rng(1)
    shape = (2, 6, 3) if kw.get("batch_first") else (6, 2, 3)
    _compare(torch, tm, rm, rng.standard_normal(shape), dtype=dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rnn_relu_and_initial_state(torch, dtype):
    torch.manual_seed(0)
    kw = dict(nonlinearity="relu", num_layers=2, bidirectional=True)
    rng = np.random.default_rng(2)
    _compare(torch, torch.nn.RNN(3, 4, **kw), rt.nn.RNN(3, 4, **kw), rng.standard_normal((5, 2, 3)),
             rng.standard_normal((4, 2, 4)), dtype)


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_initial_states(torch, mode):
    torch.manual_seed(0)
    kw = dict(num_layers=2, bidirectional=True, batch_first=True)
    rng = np.random.default_rng(3)
    h = rng.standard_normal((4, 3, 5))
    hx = (h, rng.standard_normal((4, 3, 5))) if mode == "LSTM" else h
    _compare(torch, getattr(torch.nn, mode)(2, 5, **kw), getattr(rt.nn, mode)(2, 5, **kw),
             rng.standard_normal((3, 4, 2)), hx)


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_unbatched(torch, mode):
    torch.manual_seed(0)
    rng = np.random.default_rng(4)
    kw = dict(num_layers=2)
    _compare(torch, getattr(torch.nn, mode)(3, 4, **kw), getattr(rt.nn, mode)(3, 4, **kw),
             rng.standard_normal((5, 3)))
    h = rng.standard_normal((2, 4))
    hx = (h, rng.standard_normal((2, 4))) if mode == "LSTM" else h
    _compare(torch, getattr(torch.nn, mode)(3, 4, **kw), getattr(rt.nn, mode)(3, 4, **kw),
             rng.standard_normal((5, 3)), hx)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lstm_projection(torch, dtype):
    torch.manual_seed(0)
    kw = dict(num_layers=2, bidirectional=True, proj_size=2)
    rng = np.random.default_rng(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _compare(torch, torch.nn.LSTM(3, 4, **kw), rt.nn.LSTM(3, 4, **kw),
                 rng.standard_normal((5, 2, 3)), dtype=dtype)


def test_dropout_between_layers_eval_and_train(torch):
    torch.manual_seed(0)
    kw = dict(num_layers=3, dropout=0.5)
    tm, rm = torch.nn.LSTM(3, 4, **kw).eval(), rt.nn.LSTM(3, 4, **kw).eval()
    _compare(torch, tm, rm, np.random.default_rng(6).standard_normal((5, 2, 3)))
    rm.train()
    x = rt.randn(5, 2, 3, dtype=rt.float64)
    a, b = rm(x)[0], rm(x)[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    rm.eval()
    np.testing.assert_array_equal(rm(x)[0].detach().numpy(), rm(x)[0].detach().numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cell", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_torch(torch, cell, dtype):
    torch.manual_seed(0)
    rng = np.random.default_rng(7)
    for kw in ({}, dict(bias=False)):
        h = rng.standard_normal((2, 4))
        hx = (h, rng.standard_normal((2, 4))) if cell == "LSTMCell" else h
        _compare(torch, getattr(torch.nn, cell)(3, 4, **kw), getattr(rt.nn, cell)(3, 4, **kw),
                 rng.standard_normal((2, 3)), hx, dtype)
        _compare(torch, getattr(torch.nn, cell)(3, 4, **kw), getattr(rt.nn, cell)(3, 4, **kw),
                 rng.standard_normal((2, 3)), None, dtype)
        _compare(torch, getattr(torch.nn, cell)(3, 4, **kw), getattr(rt.nn, cell)(3, 4, **kw),
                 rng.standard_normal(3), None, dtype)
    _compare(torch, torch.nn.RNNCell(3, 4, nonlinearity="relu"),
             rt.nn.RNNCell(3, 4, nonlinearity="relu"), rng.standard_normal((2, 3)), None, dtype)


REPRS = [
    ("RNN", (3, 4), {}), ("RNN", (3, 4), dict(nonlinearity="relu", num_layers=2)),
    ("RNN", (3, 4), dict(bias=False, batch_first=True, dropout=0.5, num_layers=2)),
    ("LSTM", (3, 4), dict(bidirectional=True, num_layers=2)),
    ("LSTM", (3, 4), dict(proj_size=2)), ("GRU", (3, 4), dict(bias=False, bidirectional=True)),
    ("RNNCell", (3, 4), dict(nonlinearity="relu")), ("LSTMCell", (3, 4), {}),
    ("GRUCell", (3, 4), dict(bias=False)),
]


@pytest.mark.parametrize("name,args,kw", REPRS)
def test_repr_and_state_dict_keys(torch, name, args, kw):
    tm = getattr(torch.nn, name)(*args, **kw)
    rm = getattr(rt.nn, name)(*args, **kw)
    assert repr(rm) == repr(tm)
    assert list(rm.state_dict()) == list(tm.state_dict())
    for (n1, p1), (n2, p2) in zip(tm.named_parameters(), rm.named_parameters()):
        assert n1 == n2 and tuple(p1.shape) == tuple(p2.shape)


@pytest.mark.parametrize("cls", [rt.nn.LSTM, rt.nn.GRU, rt.nn.RNN, rt.nn.LSTMCell])
def test_default_init_bounds(cls):
    rt.manual_seed(0)
    m = cls(20, 64)
    bound = 1 / math.sqrt(64)
    vals = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    assert vals.min() >= -bound and vals.max() <= bound
    assert abs(vals.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert abs(vals.mean()) < 0.05 * bound


def test_dtype_kwarg_and_all_weights():
    m = rt.nn.LSTM(3, 4, num_layers=2, bidirectional=True, dtype=rt.float64)
    assert all(p.dtype == rt.float64 for p in m.parameters())
    assert len(m.all_weights) == 4 and len(m.all_weights[0]) == 4
    m.flatten_parameters()
    out, (h, c) = m(rt.ones(2, 3, dtype=rt.float64))
    assert out.shape == (2, 8) and h.shape == (4, 4) and c.shape == (4, 4)


ERRORS = [
    (lambda nn: nn.RNN(3, 4, dropout=1.5), None),
    (lambda nn: nn.RNN(3, 0), None),
    (lambda nn: nn.RNN(3, 4.0), None),
    (lambda nn: nn.RNN(3, 4, num_layers=0), None),
    (lambda nn: nn.RNN(3, 4, nonlinearity="gelu"), None),
    (lambda nn: nn.LSTM(3, 4, proj_size=4), None),
    (lambda nn: nn.LSTM(3, 4, proj_size=-1), None),
    (lambda nn: nn.GRU(3, 4, proj_size=2), None),
    (lambda nn: nn.LSTM(3, 4), lambda m, T: m(T.randn(5, 2, 4))),
    (lambda nn: nn.LSTM(3, 4), lambda m, T: m(T.randn(5, 2, 3, 1))),
    (lambda nn: nn.LSTM(3, 4), lambda m, T: m(T.randn(5, 2, 3), (T.randn(1, 3, 4),
                                                                 T.randn(1, 2, 4)))),
    (lambda nn: nn.LSTM(3, 4), lambda m, T: m(T.randn(5, 2, 3), (T.randn(1, 2, 4),
                                                                 T.randn(1, 3, 4)))),
    (lambda nn: nn.LSTM(3, 4), lambda m, T: m(T.randn(5, 2, 3), (T.randn(2, 4),
                                                                 T.randn(2, 4)))),
    (lambda nn: nn.LSTM(3, 4), lambda m, T: m(T.randn(5, 3), (T.randn(1, 1, 4),
                                                              T.randn(1, 1, 4)))),
    (lambda nn: nn.GRU(3, 4), lambda m, T: m(T.randn(5, 2, 3), T.randn(1, 3, 4))),
    (lambda nn: nn.GRU(3, 4), lambda m, T: m(T.randn(5, 2, 3), T.randn(2, 4))),
    (lambda nn: nn.GRU(3, 4), lambda m, T: m(T.randn(5, 3), T.randn(1, 1, 4))),
    (lambda nn: nn.GRU(3, 4), lambda m, T: m(T.randn(5, 2, 3, 3))),
    (lambda nn: nn.RNN(3, 4), lambda m, T: m(T.randn(5, 2, 3, 3))),
    (lambda nn: nn.LSTMCell(3, 4), lambda m, T: m(T.randn(5, 2, 3))),
    (lambda nn: nn.LSTMCell(3, 4), lambda m, T: m(T.randn(2, 4))),
    (lambda nn: nn.LSTMCell(3, 4), lambda m, T: m(T.randn(2, 3), (T.randn(3, 4),
                                                                  T.randn(2, 4)))),
    (lambda nn: nn.GRUCell(3, 4), lambda m, T: m(T.randn(5, 2, 3))),
    (lambda nn: nn.RNNCell(3, 4), lambda m, T: m(T.randn(2, 3), T.randn(3, 4))),
]


@pytest.mark.parametrize("make,call", ERRORS)
def test_errors_match_torch(torch, make, call):

    def outcome(lib):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = make(lib.nn)
                if call is not None:
                    call(m, lib)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e).replace("torch.", "").replace("retrograd.", "")
        return None

    expected = outcome(torch)
    assert expected is not None
    assert outcome(rt) == expected


def test_dropout_warning_single_layer():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        rt.nn.GRU(3, 4, dropout=0.2)


@pytest.mark.parametrize("reverse", [False, True])
def test_fused_lstm_layer_gradcheck(reverse):
    rt.manual_seed(0)
    args = [rt.randn(*s, dtype=rt.float64, requires_grad=True)
            for s in ((3, 2, 8), (2, 2), (2, 2), (8, 2))]

    def f(*a):
        return nn_attention.lstm_layer(*a, reverse)

    assert gradcheck(f, args)
    assert gradgradcheck(f, args)


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_module_gradgradcheck(mode):
    rt.manual_seed(0)
    m = getattr(rt.nn, mode)(2, 2, num_layers=2, bidirectional=True).double()
    x = rt.randn(3, 1, 2, dtype=rt.float64, requires_grad=True)
    h = rt.randn(4, 1, 2, dtype=rt.float64, requires_grad=True)

    def f(x, h):
        hx = (h, h * 0.5) if mode == "LSTM" else h
        out, hn = m(x, hx)
        return out, (hn[0] if mode == "LSTM" else hn)

    assert gradcheck(f, (x, h))
    assert gradgradcheck(f, (x, h))


def test_lstm_double_backward_matches_torch(torch):
    torch.manual_seed(0)
    tm, rm = torch.nn.LSTM(3, 4), rt.nn.LSTM(3, 4)
    _copy(tm, rm, "float64")
    x = np.random.default_rng(8).standard_normal((4, 2, 3))
    xt, xr = leaves(torch, [x])[0], leaves(rt, [x])[0]
    (gt,) = torch.autograd.grad(tm(xt)[0].pow(2).sum(), xt, create_graph=True)
    (gr,) = rt.autograd.grad(rm(xr)[0].pow(2).sum(), xr, create_graph=True)
    np.testing.assert_allclose(gr.detach().numpy(), gt.detach().numpy(), rtol=1e-9, atol=1e-12)
    gt.pow(2).sum().backward()
    gr.pow(2).sum().backward()
    np.testing.assert_allclose(xr.grad.numpy(), xt.grad.numpy(), rtol=1e-8, atol=1e-11)
    for p1, p2 in zip(tm.parameters(), rm.parameters()):
        np.testing.assert_allclose(p2.grad.numpy(), p1.grad.numpy(), rtol=1e-8, atol=1e-11)


@pytest.mark.parametrize("reverse", [False, True])
def test_fused_lstm_layer_forward_ad_gradcheck(reverse):
    # Forward mode through the fused layer (its jvp rule) against finite differences, each
    # input's tangent alone and all together.
    rt.manual_seed(1)
    args = [rt.randn(*s, dtype=rt.float64, requires_grad=True)
            for s in ((3, 2, 8), (2, 2), (2, 2), (8, 2))]

    def f(*a):
        return nn_attention.lstm_layer(*a, reverse)

    assert gradcheck(f, args, check_forward_ad=True, check_backward_ad=False,
                     check_batched_grad=False)


def _lstm_tangents(lib, fw, m, x, h0, c0, tangents):
    with fw.dual_level():
        xd = fw.make_dual(lib.tensor(x), lib.tensor(tangents[0]))
        hd = fw.make_dual(lib.tensor(h0), lib.tensor(tangents[1]))
        cd = lib.tensor(c0)  # a state without a tangent
        out, (hn, cn) = m(xd, (hd, cd))
        return [fw.unpack_dual(t).tangent.detach().numpy() for t in (out, hn, cn)]


def test_lstm_forward_ad_matches_torch(torch):
    # Two layers, both directions: tangents of output and final states against torch's forward
    # mode (which has its own LSTM rule), with tangents on the input and h0.
    import torch.autograd.forward_ad as tfw

    import retrograd.autograd.forward_ad as rfw

    torch.manual_seed(0)
    tm = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    rm = rt.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    _copy(tm, rm, "float64")
    rng = np.random.default_rng(9)
    x, h0, c0 = (rng.standard_normal(s) for s in ((5, 2, 3), (4, 2, 4), (4, 2, 4)))
    tangents = [rng.standard_normal(x.shape), rng.standard_normal(h0.shape)]
    with torch.no_grad():
        want = _lstm_tangents(torch, tfw, tm, x, h0, c0, tangents)
    got = _lstm_tangents(rt, rfw, rm, x, h0, c0, tangents)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_lstm_hvp_reverse_over_forward_matches_torch(torch):
    # autograd.functional.hvp runs reverse-over-forward: the layer's tangent rule recorded on
    # a differentiable replay, then differentiated; torch runs double backward.
    torch.manual_seed(0)
    tm, rm = torch.nn.LSTM(2, 3), rt.nn.LSTM(2, 3)
    _copy(tm, rm, "float64")
    rng = np.random.default_rng(4)
    x, v = rng.standard_normal((3, 1, 2)), rng.standard_normal((3, 1, 2))
    ref = torch.autograd.functional.hvp(lambda z: tm(z)[0].pow(2).sum(), torch.tensor(x),
                                        torch.tensor(v))
    got = rt.autograd.functional.hvp(lambda z: rm(z)[0].pow(2).sum(), rt.tensor(x),
                                     rt.tensor(v))
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("kw", [{}, {"num_layers": 2, "bidirectional": True}])
def test_batch_first_output_is_transposed_back_as_torch(torch, cls, kw):
    # PyTorch runs time-major and transposes back: a strided view, TransposeBackward0 for
    # LSTM, TransposeBackward1 (transpose_) for GRU and RNN.
    def run(lib):
        lib.manual_seed(0)
        out, _ = getattr(lib.nn, cls)(3, 4, batch_first=True, **kw)(lib.randn(2, 5, 3))
        return out.grad_fn.name(), out.stride(), out.detach().numpy()
    (nr, sr, vr), (nt, st, vt) = run(rt), run(torch)
    assert (nr, sr) == (nt, st)
    np.testing.assert_allclose(vr, vt, rtol=1e-5, atol=1e-6)
