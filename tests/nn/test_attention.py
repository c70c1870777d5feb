"""scaled_dot_product_attention and multi_head_attention_forward against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rt
import retrograd.nn.functional as RF
from retrograd.autograd import gradcheck, gradgradcheck

from ..oracle import leaves, run_both

TOL = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-9, atol=1e-11)}


def _pairs(torch, arrays, grad=True):
    return leaves(torch, arrays, grad), leaves(rt, arrays, grad)


def _check_sdpa(torch, q, k, v, mask=None, dtype="float64", **kw):
    """scaled_dot_product_attention in both libraries: the oracle compares the output and the
    gradients of q, k, v and a float mask (which requires no grad with ``is_causal``: a mask
    that requires grad sends PyTorch to its math path, which rejects is_causal)."""
    arrays = [q.astype(dtype), k.astype(dtype), v.astype(dtype)]
    if mask is not None:
        arrays.append(mask if mask.dtype == bool else mask.astype(dtype))
    needs = [True, True, True, not kw.get("is_causal")]

    def call(lib):
        def f(q, k, v, m=None):
            return lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw)
        return f

    return run_both(torch, call(rt), call(torch), arrays, requires_grad=needs[:len(arrays)],
                    tol=TOL[dtype], seed=0)[0]


R = np.random.default_rng(42)
Q = R.standard_normal((2, 3, 4, 5))
K = R.standard_normal((2, 3, 6, 5))
V = R.standard_normal((2, 3, 6, 7))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ["plain", "causal", "float", "bool", "bool_causal", "float_causal",
                                  "broadcast", "scale", "fully_masked"])
def test_sdpa_matches_torch(torch, case, dtype):
    mask = None
    kw = {}
    if case == "causal":
        kw["is_causal"] = True
    elif case == "float":
        mask = R.standard_normal((4, 6))
    elif case == "bool":
        mask = R.random((4, 6)) > 0.3
        mask[:, 0] = True
    elif case == "bool_causal":
        mask = R.random((4, 6)) > 0.3
        mask[:, 0] = True
        kw["is_causal"] = True
    elif case == "float_causal":
        mask = R.standard_normal((4, 6))
        kw["is_causal"] = True
    elif case == "broadcast":
        mask = R.standard_normal((2, 1, 4, 6))
    elif case == "scale":
        kw["scale"] = 0.3
    elif case == "fully_masked":
        mask = np.ones((4, 6), dtype=bool)
        mask[1] = False
    v = V[..., :5] if "causal" in case else V  # PyTorch combines mask and is_causal (flash)
    out = _check_sdpa(torch, Q, K, v, mask, dtype, **kw)
    if case == "fully_masked":
        assert (out.detach().numpy()[:, :, 1] == 0).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sdpa_low_rank_inputs_and_gqa(torch, dtype):
    _check_sdpa(torch, Q[0], K[0], V[0], dtype=dtype)              # 3-D
    _check_sdpa(torch, Q[0, 0], K[0, 0], V[0, 0], dtype=dtype)     # 2-D
    q = R.standard_normal((2, 4, 3, 5))
    k = R.standard_normal((2, 2, 6, 5))
    v = R.standard_normal((2, 2, 6, 5))
    _check_sdpa(torch, q, k, v, dtype=dtype, enable_gqa=True)
    _check_sdpa(torch, q, k, v, dtype=dtype, enable_gqa=True, is_causal=True)


def test_sdpa_extreme_logits_are_stable(torch):
    q = np.full((1, 1, 2, 3), 1e4)
    k = R.standard_normal((1, 1, 4, 3)) * 1e3
    out = _check_sdpa(torch, q, k, V[:1, :1, :4])
    assert np.isfinite(out.detach().numpy()).all()


def test_sdpa_grad_fn_names(torch):
    ts, rs = _pairs(torch, [Q, K, V])
    mask = R.standard_normal((4, 6))
    for kw in ({}, dict(is_causal=True), dict(attn_mask=mask)):
        kt = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        kr = {k: rt.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        t = torch.nn.functional.scaled_dot_product_attention(*ts, **kt)
        r = RF.scaled_dot_product_attention(*rs, **kr)
        assert r.grad_fn.name() == t.grad_fn.name()


def _graph(t) -> list:
    out, stack = [], [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is not None:
            # (with the edge count: MulBackward1 has one, the number is not an input)
            out.append((n.name().replace("torch::autograd::", ""), len(n.next_functions)))
            stack += [m for m, _ in n.next_functions if m is not None]
    return out


@pytest.mark.parametrize("shapes, kw", [
    (((2, 3, 4), (2, 5, 4), (2, 5, 4)), dict(dropout_p=0.3)),
    (((2, 3, 4), (2, 5, 4), (2, 5, 4)), dict(dropout_p=1.0)),
    (((1, 4, 3, 4), (1, 2, 5, 4), (1, 2, 5, 6)), dict(enable_gqa=True)),
    (((2, 3, 4), (2, 5, 4), (2, 5, 4)), dict(scale=-0.3)),
    (((3, 4), (5, 4), (5, 4)), dict(is_causal=True)),
    (((2, 3, 4), (2, 5, 4), (2, 5, 4)), dict(attn_mask=np.array(
        [[False] * 5, [True] * 5, [True, False, True, False, True]]))),
    (((2, 3, 4), (2, 5, 4), (2, 5, 4)), dict(half=True))])
def test_sdpa_math_path_builds_torchs_graph(torch, shapes, kw):
    """Off the flash kernel, attention is PyTorch's math composite: scaled query and key, matmul,
    the mask added, _safe_softmax (fully masked rows give zeros), dropout's product with the
    noise (drawn as PyTorch draws it), matmul; float16 in float32. Same nodes, values, grads."""
    arrays = [R.standard_normal(s) for s in shapes]
    res = []
    for lib in (torch, rt):
        lib.manual_seed(0)
        dt = lib.float16 if kw.get("half") else lib.float64
        ts = [lib.tensor(a, dtype=dt, requires_grad=True) for a in arrays]
        k = {a: (lib.tensor(b) if isinstance(b, np.ndarray) else b) for a, b in kw.items()
             if a != "half"}
        y = lib.nn.functional.scaled_dot_product_attention(*ts, **k)
        res.append((y, lib.autograd.grad(y.sum(), ts)))
    (yt, gt), (y, g) = res
    assert _graph(y) == _graph(yt)
    tol = dict(atol=1e-2) if kw.get("half") else dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(y.detach().double().numpy(), yt.detach().double().numpy(), **tol)
    for a, b in zip(g, gt):
        np.testing.assert_allclose(a.double().numpy(), b.double().numpy(), **tol)


def test_safe_softmax_matches_torch(torch):
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.0, 1.0, -np.inf], [2.0, 0.5, 1.0]])
    g = R.standard_normal((3, 3))
    outs = []
    for lib in (rt, torch):
        t = lib.tensor(x, requires_grad=True)
        y = lib._safe_softmax(t, -1)
        y.backward(lib.tensor(g))
        outs.append((y.detach().numpy(), t.grad.numpy(), y.grad_fn.name()))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-12)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-12)
    assert outs[0][2] == outs[1][2] == "SafeSoftmaxBackward0"
    t = rt.tensor(x[1:], requires_grad=True)
    assert gradcheck(lambda a: rt._safe_softmax(a, -1), (t,))
    assert gradgradcheck(lambda a: rt._safe_softmax(a, -1), (t,))


def test_sdpa_dropout():
    rt.manual_seed(0)
    q = rt.randn(4, 2, 50, 8)
    v = rt.ones(4, 2, 50, 8)
    out = RF.scaled_dot_product_attention(q, q, v, dropout_p=0.5)
    vals = out.numpy()
    assert abs(vals.mean() - 1.0) < 0.1      # dropout keeps the expectation
    assert vals.std() > 0.1                  # but the rows now differ
    zero = RF.scaled_dot_product_attention(q, q, v, dropout_p=1.0)
    assert (zero.numpy() == 0).all()
    same = RF.scaled_dot_product_attention(q, q, v, dropout_p=0.0)
    np.testing.assert_allclose(same.numpy(), 1.0, rtol=1e-6)
    # Gradients flow through the kept weights only, consistently with the forward.
    qq = rt.randn(1, 1, 3, 4, dtype=rt.float64, requires_grad=True)
    rt.manual_seed(1)
    o1 = RF.scaled_dot_product_attention(qq, qq, qq, dropout_p=0.5)
    o1.sum().backward()
    assert np.isfinite(qq.grad.numpy()).all()


def test_sdpa_errors_match_torch(torch):
    cases = [
        lambda F, T: F.scaled_dot_product_attention(T.randn(2, 3, 4, 5), T.randn(2, 3, 6, 5),
                                                    T.randn(2, 3, 6, 5),
                                                    attn_mask=T.zeros(4, 6, dtype=T.long)),
        lambda F, T: F.scaled_dot_product_attention(T.randn(2, 3, 4, 5), T.randn(2, 3, 6, 5),
                                                    T.randn(2, 3, 6, 5), dropout_p=1.5),
        lambda F, T: F.scaled_dot_product_attention(T.randn(2, 3, 4, 5),
                                                    T.randn(2, 2, 6, 5), T.randn(2, 2, 6, 5)),
        lambda F, T: F.scaled_dot_product_attention(T.randn(2, 3, 4, 5), T.randn(2, 2, 6, 5),
                                                    T.randn(2, 2, 6, 5), enable_gqa=True),
        lambda F, T: F.scaled_dot_product_attention(T.randn(2, 3, 4, 5),
                                                    T.randn(2, 3, 6, 5).double(),
                                                    T.randn(2, 3, 6, 5)),
        lambda F, T: F.scaled_dot_product_attention(T.randn(5), T.randn(5), T.randn(5)),
        lambda F, T: F.scaled_dot_product_attention(T.randn(3, 4, 5), T.randn(3, 6, 5),
                                                    T.randn(3, 6, 5), is_causal=True,
                                                    attn_mask=T.ones(4, 6, dtype=T.bool)),
    ]
    for case in cases:
        outcomes = []
        for F, T in ((torch.nn.functional, torch), (RF, rt)):
            try:
                case(F, T)
                outcomes.append(None)
            except Exception as e:  # noqa: BLE001
                outcomes.append((type(e).__name__, str(e)))
        assert outcomes[0] is not None and outcomes[1] == outcomes[0]


@pytest.mark.parametrize("kw", [{}, dict(is_causal=True), dict(mask=True), dict(gqa=True)])
def test_sdpa_gradcheck_gradgradcheck(kw):
    rt.manual_seed(0)
    d = rt.float64
    q = rt.randn(1, 2, 3, 4, dtype=d, requires_grad=True)
    hk = 1 if kw.get("gqa") else 2
    k = rt.randn(1, hk, 5, 4, dtype=d, requires_grad=True)
    v = rt.randn(1, hk, 5, 3, dtype=d, requires_grad=True)
    args = [q, k, v]
    if kw.get("mask"):
        args.append(rt.randn(3, 5, dtype=d, requires_grad=True))

    def f(q, k, v, m=None):
        return RF.scaled_dot_product_attention(q, k, v, attn_mask=m,
                                               is_causal=kw.get("is_causal", False),
                                               enable_gqa=kw.get("gqa", False))

    assert gradcheck(f, args)
    assert gradgradcheck(f, args)


def test_sdpa_double_backward_matches_torch(torch):
    ts, rs = _pairs(torch, [Q, K, V])
    gt = torch.autograd.grad(
        torch.nn.functional.scaled_dot_product_attention(*ts, is_causal=True).pow(2).sum(),
        ts, create_graph=True)
    gr = rt.autograd.grad(RF.scaled_dot_product_attention(*rs, is_causal=True).pow(2).sum(), rs,
                          create_graph=True)
    sum(g.pow(2).sum() for g in gt).backward()
    sum(g.pow(2).sum() for g in gr).backward()
    for a, b in zip(ts, rs):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.filterwarnings("ignore:Support for mismatched")
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multi_head_attention_forward_functional(torch, need_weights, dtype):
    E, H, L, S, N = 8, 2, 4, 5, 3
    arrays = [R.standard_normal(s).astype(dtype) for s in
              ((L, N, E), (S, N, E), (S, N, E), (3 * E, E), (3 * E,), (E, E), (E,))]
    ts, rs = _pairs(torch, arrays)
    kpm = np.zeros((N, S), dtype=bool)
    kpm[1, -2:] = True
    am = R.standard_normal((L, S)).astype(dtype)

    def run(F, T, xs):
        return F.multi_head_attention_forward(
            xs[0], xs[1], xs[2], E, H, xs[3], xs[4], None, None, False, 0.0, xs[5], xs[6],
            training=False, key_padding_mask=T.tensor(kpm), need_weights=need_weights,
            attn_mask=T.tensor(am))

    ot, wt = run(torch.nn.functional, torch, ts)
    orr, wr = run(RF, rt, rs)
    tol = TOL[dtype]
    np.testing.assert_allclose(orr.detach().numpy(), ot.detach().numpy(), **tol)
    if need_weights:
        np.testing.assert_allclose(wr.detach().numpy(), wt.detach().numpy(), **tol)
    else:
        assert wr is None and wt is None
    ot.pow(2).sum().backward()
    orr.pow(2).sum().backward()
    for a, b in zip(ts, rs):
        scale = np.abs(a.grad.numpy()).max()
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=tol["rtol"],
                                   atol=tol["rtol"] * scale)


def test_mha_forward_gradgradcheck():
    rt.manual_seed(0)
    d = rt.float64
    E, H = 4, 2
    x = rt.randn(3, 1, E, dtype=d, requires_grad=True)
    w = rt.randn(3 * E, E, dtype=d, requires_grad=True)
    wo = rt.randn(E, E, dtype=d, requires_grad=True)

    def f(x, w, wo):
        return RF.multi_head_attention_forward(x, x, x, E, H, w, None, None, None, False, 0.0,
                                               wo, None, need_weights=False)[0]

    assert gradcheck(f, (x, w, wo))
    assert gradgradcheck(f, (x, w, wo))
