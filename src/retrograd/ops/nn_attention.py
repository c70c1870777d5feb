"""Primitive ops behind nn.functional (attention): the ones numerical stability or speed ask for.

``sdpa`` is scaled dot-product attention as one node, where PyTorch runs its CPU flash kernel
(one node too, ``ScaledDotProductFlashAttentionForCpuBackward0``). NOTE: a primitive because the
composite (matmul, mask, softmax, dropout, matmul) costs six nodes and keeps three
``(..., L, S)`` temporaries alive; the fused backward reuses the saved probabilities and needs
only the five matmuls of the textbook formula. Its softmax subtracts the row maximum (stable at
extreme logits) and gives fully masked rows zero weight, as PyTorch's CPU kernel does. Under
``create_graph=True`` the probabilities are recomputed from the saved inputs with differentiable
ops, so every order of derivative is available. Where PyTorch falls back to its math path (not
4-d, dropout, a mask that requires grad, other value widths), ``sdpa_math`` builds that path's
graph from the same ops as PyTorch, so node names and saved tensors are PyTorch's.

``lstm_layer`` (one LSTM layer and direction over all timesteps) lives here too, as the family
of ops behind ``nn.LSTM``: see its NOTE.
"""

from __future__ import annotations

import numpy as np

from .._dtypes import F32, REDUCED
from .._tensor import Tensor
from ..autograd import api as _autograd  # a module reference: api imports ops (a cycle)
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import Node
from . import _array, _core
from ._apply import apply, apply_multi
from ._core import wrap
from .arithmetic import add, mul, mul_scalar
from .copies import repeat_interleave
from .linalg import matmul
from .nn_activation import _safe_softmax
from .shape import to_dtype_op, transpose

__all__: list = []
XP: list = []
METHODS: dict = {}
INPLACE: dict = {}

_NEG_INF = -np.inf


def _softmax_rows(s: np.ndarray) -> np.ndarray:
    """Softmax over the last axis in place of ``s``; rows that are all ``-inf`` become zeros."""
    m = s.max(axis=-1, keepdims=True)
    if not np.isfinite(m).all():
        m = np.where(np.isfinite(m), m, 0.0).astype(s.dtype, copy=False)
    np.subtract(s, m, out=s)
    np.exp(s, out=s)
    d = s.sum(axis=-1, keepdims=True)
    if not d.all():
        d[d == 0] = 1
    np.divide(s, d, out=s)
    return s


def _repeat_heads(x, groups: int, tensors: bool):
    """GQA: repeat each key/value head ``groups`` times along dim -3 (repeat_interleave)."""
    if groups == 1:
        return x
    if tensors:
        return x.repeat_interleave(groups, dim=-3)
    return np.repeat(x, groups, axis=-3)


def _unrepeat_heads(g, groups: int, shape: tuple, xp):
    """The backward of ``_repeat_heads``: sum each group of repeated heads."""
    if groups != 1:
        gs = g.shape
        g = xp.sum(xp.reshape(g, tuple(gs[:-3]) + (gs[-3] // groups, groups) + tuple(gs[-2:])),
                   -3)
    return xp.sum_to(g, tuple(shape))


class SdpaBackward(Node):
    _name = "ScaledDotProductFlashAttentionForCpuBackward0"

    def backward(self, xp, g):
        q, k, v, fmask = self.saved(xp.TENSORS)
        scale, groups, allowed, keep = self._scale, self._groups, self._allowed, self._keep
        tensors = xp.TENSORS
        kr = _repeat_heads(k, groups, tensors)
        vr = _repeat_heads(v, groups, tensors)
        if tensors:
            p = _probs_tensor(xp, q, kr, fmask, allowed, scale)
        else:
            p = self._p
        pd = p if keep is None else p * keep
        need_q, need_k, need_v, need_m = (self._needs(i) for i in range(4))
        gq = gk = gv = gm = None
        if need_v:
            gv = _unrepeat_heads(xp.matmul(xp.transpose(pd, -1, -2), g), groups, v.shape, xp)
        if need_q or need_k or need_m:
            gp = xp.matmul(g, xp.transpose(vr, -1, -2))
            if keep is not None:
                gp = gp * keep
            gs = p * (gp - xp.sum(gp * p, -1, True))
            if need_m:
                gm = xp.sum_to(gs, tuple(fmask.shape))
            if need_q:
                gq = xp.sum_to(xp.matmul(gs, kr) * scale, tuple(q.shape))
            if need_k:
                gk = _unrepeat_heads(xp.matmul(xp.transpose(gs, -1, -2), q) * scale, groups,
                                     k.shape, xp)
        return gq, gk, gv, gm


def _probs_tensor(xp, q: Tensor, k: Tensor, fmask, allowed, scale: float) -> Tensor:
    """Attention probabilities with the differentiable ops of ``xp`` (``create_graph=True``)."""
    s = xp.matmul(q, xp.transpose(k, -1, -2)) * scale
    if fmask is not None:
        s = s + fmask
    if allowed is not None:
        s = xp.masked_fill(s, wrap(~allowed), float("-inf"))
    m = xp.amax(s, -1, True).detach()
    m = xp.masked_fill(m, xp.isinf(m), 0.0)
    e = xp.exp(s - m)
    d = xp.sum(e, -1, True)
    d = xp.masked_fill(d, d == 0, 1.0)
    return e / d


def sdpa(query: Tensor, key: Tensor, value: Tensor, fmask, bmask, causal: bool, scale: float,
         dropout_p: float, groups: int, keep_fn, name: str | None = None) -> Tensor:
    """Scaled dot-product attention as one node.

    ``fmask``: a float tensor added to the scores (or None); ``bmask``: a boolean tensor, False
    where attention is forbidden (or None); ``causal``: also forbid attending to later positions
    (a top-left lower-triangular mask); ``groups``: query heads per key/value head (GQA);
    ``keep_fn(shape, dtype)``: the dropout keep-mask already divided by ``1 - p`` (called only
    when ``dropout_p > 0``).
    """
    qd, kd, vd = query._data, key._data, value._data
    rd = qd.dtype if qd.dtype in REDUCED else None
    if rd is not None:  # float32 inside, as PyTorch's CPU flash attention; one rounding
        qd, kd, vd = qd.astype(F32), kd.astype(F32), vd.astype(F32)
    allowed = None if bmask is None else bmask._data
    if causal:
        tri = np.tri(qd.shape[-2], kd.shape[-2], dtype=np.bool_)
        allowed = tri if allowed is None else np.logical_and(allowed, tri)
    kr = _repeat_heads(kd, groups, False)
    vr = _repeat_heads(vd, groups, False)
    s = _array.matmul(qd, np.swapaxes(kr, -1, -2))
    s *= s.dtype.type(scale)
    if fmask is not None:
        s = s + fmask._data.astype(s.dtype, copy=False)
    if allowed is not None:
        if s.shape == np.broadcast_shapes(s.shape, allowed.shape):
            np.copyto(s, s.dtype.type(_NEG_INF), where=~allowed)
        else:
            s = np.where(allowed, s, s.dtype.type(_NEG_INF))
    keep = None
    if rd is not None and dropout_p == 0:
        # PyTorch's CPU flash attention: the unnormalised exp(s - max) rounded to the dtype for
        # the product with v (float32 sums), divided by the float32 row sums, rounded once.
        m = s.max(axis=-1, keepdims=True)
        if not np.isfinite(m).all():
            m = np.where(np.isfinite(m), m, 0.0).astype(s.dtype, copy=False)
        e = np.exp(s - m)
        d = e.sum(axis=-1, keepdims=True)
        if not d.all():
            d[d == 0] = 1
        out = (_array.matmul(e.astype(rd).astype(F32), vr) / d).astype(rd)
        p = np.divide(e, d, out=e)
    else:
        p = _softmax_rows(s)
        pd = p
        if dropout_p > 0:
            keep = keep_fn(p.shape, p.dtype)
            pd = p * keep
        out = _array.matmul(pd, vr)
        if rd is not None:
            out = out.astype(rd)
    inputs = (query, key, value, fmask)
    return apply(SdpaBackward, out, *inputs, save=inputs, _name=name or SdpaBackward._name,
                 _p=p, _keep=keep, _allowed=allowed, _scale=scale, _groups=groups)



def sdpa_math(query: Tensor, key: Tensor, value: Tensor, fmask, bmask, causal: bool,
              scale: float, dropout_p: float, groups: int, keep_fn) -> Tensor:
    """Scaled dot-product attention as PyTorch's math path composes it, op for op, so its
    graph and saved tensors are PyTorch's: query and the transposed key each times
    ``sqrt(|scale|)`` (the query's negated for a negative scale), matmul, the mask added in
    place (a boolean or causal mask as 0 / -inf), ``_safe_softmax``, dropout as a product
    with the keep-mask, matmul with the value; 16-bit inputs in float32, the result cast back.
    Arguments as ``sdpa``'s."""
    origin = query._data.dtype
    if origin in REDUCED:  # PyTorch keeps the math in float32 (one rounding at the end)
        query, key, value = (to_dtype_op(t, F32) for t in (query, key, value))
    sf = float(np.sqrt(abs(scale)))
    q = mul_scalar(query, -sf if scale < 0 else sf)
    mask = fmask
    if causal or bmask is not None:
        allowed = np.tri(q._data.shape[-2], key._data.shape[-2], dtype=np.bool_) if causal \
            else bmask._data
        dt = q._data.dtype if causal else origin
        mask = _core.made_constant(np.where(allowed, dt.type(0), dt.type(_NEG_INF)),
                                   *(() if causal else (bmask,)))
    if groups != 1:  # GQA: each key/value head serves `groups` query heads
        key = repeat_interleave(key, groups, dim=-3)
        value = repeat_interleave(value, groups, dim=-3)
    attn = matmul(q, mul_scalar(transpose(key, -2, -1), sf))
    if mask is not None:
        # PyTorch adds in place; out of place is the same graph (an AddBackward0 saving
        # nothing) on this fresh product, and vmap batches it by rule rather than by loop.
        # A mask that would grow the product keeps add_ for PyTorch's error.
        same = np.broadcast_shapes(attn._data.shape, mask._data.shape) == attn._data.shape
        attn = add(attn, mask) if same else attn.add_(mask)
    attn = _safe_softmax(attn, -1)
    if dropout_p > 0:  # at::dropout on a CPU tensor: a product with Bernoulli noise / (1 - p)
        dt = attn._data.dtype
        noise = np.zeros((), dt) if dropout_p >= 1 else keep_fn(attn._data.shape, dt)
        attn = mul(attn, wrap(noise))
    out = matmul(attn, value)
    return to_dtype_op(out, origin) if origin in REDUCED else out


# -- recurrent: one LSTM layer as one node ------------------------------------------------------


def _sigmoid_(x: np.ndarray) -> np.ndarray:
    """Logistic sigmoid in place, stable for large inputs of either sign (via tanh)."""
    x *= 0.5
    np.tanh(x, out=x)
    x += 1.0
    x *= 0.5
    return x


class LstmLayerBackward(Node):
    """Backpropagation through time for ``lstm_layer``.

    First order runs the recurrence on arrays and forms ``dW_hh`` with one matmul over all
    steps. Under ``create_graph=True`` it replays the layer with differentiable ops (``replay``)
    and differentiates that, so higher orders are exact too.
    """

    _materialize = False
    _n_out = 3

    def backward(self, xp, g_out, g_hn, g_cn):
        if xp.TENSORS:
            return self._backward_recorded(xp, g_out, g_hn, g_cn)
        xproj, h0, c0, w_hh = self.saved(False)
        acts, hs, cs, tcs = self._acts, self._hs, self._cs, self._tcs
        T, N, G = acts.shape
        H = G // 4
        dt = acts.dtype
        one = dt.type(1)
        # Derivatives of the activations, for all steps at once: s' = s(1 - s), tanh' = 1 - t².
        dfac = acts * (one - acts)
        gsl = acts[:, :, 2 * H:3 * H]
        dfac[:, :, 2 * H:3 * H] = one - gsl * gsl
        o_dtc = acts[:, :, 3 * H:] * (one - tcs * tcs)
        dh = np.zeros((N, H), dt) if g_hn is None else np.array(g_hn, dtype=dt)
        dc = np.zeros((N, H), dt) if g_cn is None else np.array(g_cn, dtype=dt)
        dgates = np.empty_like(acts)
        rev = self._reverse
        for s in range(T - 1, -1, -1):
            if g_out is not None:
                dh += g_out[T - 1 - s if rev else s]
            a = acts[s]
            d = dgates[s]
            dc += dh * o_dtc[s]
            np.multiply(dc, a[:, 2 * H:3 * H], out=d[:, :H])      # through i
            np.multiply(dc, cs[s], out=d[:, H:2 * H])              # through f
            np.multiply(dc, a[:, :H], out=d[:, 2 * H:3 * H])       # through g
            np.multiply(dh, tcs[s], out=d[:, 3 * H:])              # through o
            d *= dfac[s]
            dc *= a[:, H:2 * H]
            dh = _array.matmul(d, w_hh)
        need = [self._needs(i) for i in range(4)]
        gx = None
        if need[0]:
            gx = dgates[::-1] if rev else dgates
        gw = None
        if need[3]:
            gw = _array.matmul(dgates.reshape(T * N, G).T, hs[:T].reshape(T * N, H))
        return gx, (dh if need[1] else None), (dc if need[2] else None), gw

    def jvp(self, xp, t_x, t_h0, t_c0, t_w):
        """Forward mode: the tangent recurrence, step by step beside the saved activations
        (``(s)' = s(1 - s)``, ``tanh' = 1 - tanh²``, ``c' = f' c + f c' + i' g + i g'``,
        ``h' = o' tanh(c) + o (1 - tanh²(c)) c'``). Under a recording forward mode
        (reverse-over-forward) the activations come from a differentiable replay instead."""
        xproj, h0, c0, w_hh = self.saved(xp.TENSORS)
        T = xproj.shape[0]
        H = w_hh.shape[1]
        if xp.TENSORS:
            acts, cs, tcs, hs = _replay_steps(xp, xproj, h0, c0, w_hh, self._reverse)
        else:
            acts, cs, tcs, hs = self._acts, self._cs, self._tcs, self._hs
        w_t = xp.transpose(w_hh, 0, 1)
        tw_t = None if t_w is None else xp.transpose(t_w, 0, 1)
        dh, dc = t_h0, t_c0
        outs = [None] * T
        for s in range(T):
            k = T - 1 - s if self._reverse else s
            parts = []
            if t_x is not None:
                parts.append(t_x[k])
            if dh is not None:
                parts.append(xp.matmul(dh, w_t))
            if tw_t is not None:
                parts.append(xp.matmul(hs[s], tw_t))
            a = acts[s]
            i, f, g, o = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
            tc = tcs[s]
            dc_new = None if dc is None else f * dc
            do = None
            if parts:  # the gates' pre-activations moved
                d = parts[0]
                for q in parts[1:]:
                    d = d + q
                di = d[:, :H] * (i - i * i)
                df = d[:, H:2 * H] * (f - f * f)
                dg = d[:, 2 * H:3 * H] * (1.0 - g * g)
                do = d[:, 3 * H:] * (o - o * o)
                moved = df * cs[s] + di * g + i * dg
                dc_new = moved if dc_new is None else dc_new + moved
            dh = o * (1.0 - tc * tc) * dc_new
            if do is not None:
                dh = dh + do * tc
            dc = dc_new
            outs[k] = dh
        stack = xp.stack if xp.TENSORS else np.stack
        return stack(outs, 0), dh, dc

    def _backward_recorded(self, xp, g_out, g_hn, g_cn):
        xproj, h0, c0, w_hh = self.saved(True)
        inputs = (xproj, h0, c0, w_hh)
        need = [self._needs(i) for i in range(4)]
        with enable_grad():
            out, hn, cn = lstm_replay(xp, xproj, h0, c0, w_hh, self._reverse)
            outs, gs = [], []
            for y, gy in ((out, g_out), (hn, g_hn), (cn, g_cn)):
                if gy is not None:
                    outs.append(y)
                    gs.append(gy)
            wanted = [t for t, n in zip(inputs, need) if n]
            got = iter(_autograd.grad(outs, wanted, gs, create_graph=True,
                                      allow_unused=True))
        return tuple(next(got) if n else None for n in need)


def lstm_replay(xp, xproj: Tensor, h0: Tensor, c0: Tensor, w_hh: Tensor, reverse: bool) -> tuple:
    """``lstm_layer`` with the differentiable ops of ``xp`` (a create_graph backward's
    namespace): the reference the fused node reproduces."""
    T = xproj.shape[0]
    H = w_hh.shape[1]
    w_t = xp.transpose(w_hh, 0, 1)
    h, c = h0, c0
    outs = [None] * T
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        gates = xp.addmm(xp.select(xproj, 0, t), h, w_t)
        i, f, _, o = xp.chunk(xp.sigmoid(gates), 4, 1)
        g = xp.tanh(gates[:, 2 * H:3 * H])
        c = f * c + i * g
        h = o * xp.tanh(c)
        outs[t] = h
    return xp.stack(outs, 0), h, c


def _replay_steps(xp, xproj: Tensor, h0: Tensor, c0: Tensor, w_hh: Tensor, reverse: bool):
    """Per processing step, as differentiable tensors: the gate activations (i, f, g, o side
    by side, as ``lstm_layer``'s ``acts``), the cell before the step, tanh of the cell after
    it, and the hidden state before it (what the forward-mode rule reads)."""
    T = xproj.shape[0]
    H = w_hh.shape[1]
    w_t = xp.transpose(w_hh, 0, 1)
    h, c = h0, c0
    acts, cs, tcs, hs = [], [], [], []
    for s in range(T):
        gates = xp.addmm(xp.select(xproj, 0, T - 1 - s if reverse else s), h, w_t)
        sg = xp.sigmoid(gates)
        a = xp.cat([sg[:, :2 * H], xp.tanh(gates[:, 2 * H:3 * H]), sg[:, 3 * H:]], 1)
        acts.append(a)
        cs.append(c)
        hs.append(h)
        c = a[:, H:2 * H] * c + a[:, :H] * a[:, 2 * H:3 * H]
        tc = xp.tanh(c)
        tcs.append(tc)
        h = a[:, 3 * H:] * tc
    return acts, cs, tcs, hs


def lstm_layer(xproj: Tensor, h0: Tensor, c0: Tensor, w_hh: Tensor, reverse: bool) -> tuple:
    """One LSTM layer and direction over all timesteps as one node.

    ``xproj`` is ``(T, N, 4H)``: the input projection of every step with both biases (gates i,
    f, g, o). Returns ``(output (T, N, H), h_n, c_n)``. NOTE: a primitive for speed: the
    composite costs about ten nodes a step; this runs the recurrence on arrays and forms the
    recurrent weight's gradient with a single matmul over all steps.
    """
    xd, hd, cd, wd = xproj._data, h0._data, c0._data, w_hh._data
    T, N, G = xd.shape
    H = G // 4
    dt = xd.dtype
    acts = np.empty((T, N, G), dt)
    hs = np.empty((T + 1, N, H), dt)
    cs = np.empty((T + 1, N, H), dt)
    tcs = np.empty((T, N, H), dt)
    hs[0] = hd
    cs[0] = cd
    w_t = np.ascontiguousarray(wd.T)
    H2, H3 = 2 * H, 3 * H
    for s in range(T):
        a = acts[s]
        np.matmul(hs[s], w_t, out=a)
        a += xd[T - 1 - s if reverse else s]
        g = np.tanh(a[:, H2:H3])
        _sigmoid_(a)
        a[:, H2:H3] = g
        c = cs[s + 1]
        np.multiply(a[:, H:H2], cs[s], out=c)
        c += a[:, :H] * g
        tc = tcs[s]
        np.tanh(c, out=tc)
        np.multiply(a[:, H3:], tc, out=hs[s + 1])
    out = hs[:0:-1].copy() if reverse else hs[1:].copy()
    h_n = hs[T].copy()
    c_n = cs[T].copy()
    inputs = (xproj, h0, c0, w_hh)
    return apply_multi(LstmLayerBackward, (out, h_n, c_n), inputs, save=inputs, _acts=acts,
                       _hs=hs, _cs=cs, _tcs=tcs, _reverse=reverse)
