"""The CTC loss primitive (``CtcLossBackward0``), behind ``nn.functional.ctc_loss``.

NOTE: a primitive, not a composite, for speed and stability: the forward-backward recursions
run in log space over all samples at once (one NumPy step per time frame), where a composite
would record a graph node per frame and label. The gradient is PyTorch's: with respect to the
log-probabilities *as if they came out of a log_softmax*, ``exp(lp) - exp(lcab + nll - lp)``
(``lcab``: log of the sum of alpha*beta over the positions of each class); composed with
``log_softmax``, as CTC is used, that gives the exact derivative. PyTorch has no second
derivative here: under ``create_graph`` the gradient is linear in the incoming gradient and
constant in the log-probabilities.

The function is internal (``__all__`` is empty); ``nn.functional`` wraps it.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, make
from ..autograd.graph import Node
from ._apply import apply, recording

__all__: list = []
XP: list = []
METHODS: dict = {}
INPLACE: dict = {}

_NEG = -np.inf


def _lse3(a, b, c):
    """log(exp(a) + exp(b) + exp(c)), elementwise, with -inf handled."""
    m = np.maximum(np.maximum(a, b), c)
    safe = np.where(np.isneginf(m), 0.0, m)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.exp(a - safe) + np.exp(b - safe) + np.exp(c - safe))


def _extended(targets: np.ndarray, lengths: np.ndarray, blank: int):
    """Blank-interleaved labels (N, 2 S + 1) and where the skip transition s-2 -> s is allowed."""
    n, s_max = targets.shape
    ext = np.full((n, 2 * s_max + 1), blank, np.int64)
    ext[:, 1::2] = targets
    skip = np.zeros(ext.shape, bool)
    skip[:, 3::2] = targets[:, 1:] != targets[:, :-1]
    pos = np.arange(2 * s_max + 1)
    live = pos[None, :] < (2 * lengths[:, None] + 1)
    return ext, skip & live, live


def _shift(a, k):
    out = np.full(a.shape, _NEG, a.dtype)
    out[:, k:] = a[:, :a.shape[1] - k]
    return out


def _unshift(a, k):
    out = np.full(a.shape, _NEG, a.dtype)
    out[:, :a.shape[1] - k] = a[:, k:]
    return out


def _forward(lp, ext, skip, live, in_len, tg_len):
    """log alpha (T, N, 2S+1) and the negative log likelihood per sample."""
    t_max, n = lp.shape[0], lp.shape[1]
    rows = np.arange(n)[:, None]
    emit = lp[:, rows, ext]                          # (T, N, 2S+1)
    emit = np.where(live[None], emit, _NEG)
    alpha = np.full(emit.shape, _NEG, lp.dtype)
    alpha[0, :, 0] = emit[0, :, 0]
    alpha[0, :, 1] = np.where(tg_len > 0, emit[0, :, 1], _NEG) if ext.shape[1] > 1 else _NEG
    for t in range(1, t_max):
        prev = alpha[t - 1]
        two = np.where(skip, _shift(prev, 2), _NEG)
        alpha[t] = _lse3(prev, _shift(prev, 1), two) + emit[t]
    last = alpha[np.maximum(in_len - 1, 0), np.arange(n)]         # (N, 2S+1)
    end = last[np.arange(n), 2 * tg_len]
    before = np.where(tg_len > 0, last[np.arange(n), np.maximum(2 * tg_len - 1, 0)], _NEG)
    return alpha, -np.logaddexp(end, before), emit


def _backward_beta(emit, skip, in_len, tg_len):
    """log beta (T, N, 2S+1), each frame's own emission included (as PyTorch's)."""
    t_max, n = emit.shape[0], emit.shape[1]
    beta = np.full(emit.shape, _NEG, emit.dtype)
    skip_next = _unshift(skip, 2)  # the skip s -> s+2 is allowed where skip[s+2]
    idx = np.arange(n)
    for t in range(t_max - 1, -1, -1):
        start = np.zeros(emit.shape[1:], bool)
        start[idx, 2 * tg_len] = True
        start[idx, np.maximum(2 * tg_len - 1, 0)] |= tg_len > 0
        init = np.where(start, emit[t], _NEG)
        if t + 1 < t_max:
            nxt = beta[t + 1]
            rec = _lse3(nxt, _unshift(nxt, 1), np.where(skip_next, _unshift(nxt, 2), _NEG))
            rec = rec + emit[t]
        else:
            rec = np.full(init.shape, _NEG, emit.dtype)
        here = (t == in_len - 1)[:, None]
        beta[t] = np.where(here, init, np.where((t < in_len - 1)[:, None], rec, _NEG))
    return beta


class CtcLossBackward0(Node):
    _grad = None
    # What PyTorch's node saves, in its order (autograd/saved_hooks.py): log alpha as well.
    _packs = (0, "_targets", "out", "=result1")

    def backward(self, xp, g):
        # (unpacked, and version-checked, as PyTorch's node does; the gradient is kept)
        self.saved(False)
        self.saved_output(False)
        self._targets  # noqa: B018
        # g: (N,); the gradient is the precomputed (T, N, C) array times g per sample.
        if xp.TENSORS:
            return make(self._grad) * g.reshape(1, -1, 1)
        return self._grad * g.reshape(1, -1, 1)

    def release(self) -> None:
        super().release()
        self._grad = None

    def log_alpha(self) -> Tensor:
        """PyTorch's ``grad_fn._saved_result1``: log alpha as ``(N, T, 2 S + 1)``, found again
        from the saved log-probabilities (the backward does not read it). Where PyTorch's
        kernel leaves it unwritten (frames past a sample's input length; after the first frame,
        positions past its target) it reads 0, as PyTorch's freshly allocated memory does."""
        (lp,) = self.saved(False)
        in_len, tg_len = self._lengths
        ext, skip, live = _extended(self._targets, tg_len, self._blank)
        alpha = _forward(lp, ext, skip, live, in_len, tg_len)[0].transpose(1, 0, 2).copy()
        t = np.arange(alpha.shape[1])[None, :, None]
        s = np.arange(alpha.shape[2])[None, None, :]
        alpha[(t >= in_len[:, None, None]) |
              ((t >= 1) & (s >= 2 * tg_len[:, None, None] + 1))] = 0.0
        return make(alpha)


def _gradient(lp, ext, alpha, beta, nll, in_len, zero_infinity):
    t_max, n, c = lp.shape
    ab = alpha + beta
    m = ab.max(axis=2, keepdims=True)
    m = np.where(np.isneginf(m), 0.0, m)
    acc = np.zeros((t_max, n, c), lp.dtype)
    tt, nn, _ = np.indices(ab.shape)
    np.add.at(acc, (tt, nn, np.broadcast_to(ext[None], ab.shape)), np.exp(ab - m))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lcab = np.log(acc) + m
        grad = np.exp(lp) - np.exp(lcab + nll[None, :, None] - lp)
    grad = np.where((np.arange(t_max)[:, None] < in_len[None, :])[:, :, None], grad, 0.0)
    if zero_infinity:
        grad = np.where(np.isinf(nll)[None, :, None], 0.0, grad)
    return np.nan_to_num(grad, nan=0.0).astype(lp.dtype, copy=False)


def ctc_loss(log_probs: Tensor, targets: np.ndarray, input_lengths: np.ndarray,
             target_lengths: np.ndarray, blank: int, zero_infinity: bool) -> Tensor:
    """Per-sample CTC negative log likelihood (N,) of batched ``(T, N, C)`` log-probabilities;
    ``targets`` an (N, S) integer array; the arguments already checked."""
    lp = log_probs._data
    ext, skip, live = _extended(targets, target_lengths, blank)
    alpha, nll, emit = _forward(lp, ext, skip, live, input_lengths, target_lengths)
    grad = None
    if recording(log_probs):
        beta = _backward_beta(emit, skip, input_lengths, target_lengths)
        grad = _gradient(lp, ext, alpha, beta, nll, input_lengths, zero_infinity)
    # (what PyTorch's node keeps, as it shows them: grad_fn._saved_<name>)
    return apply(CtcLossBackward0, nll.astype(lp.dtype), log_probs, save=(log_probs,),
                 save_out=True, _grad=grad, _blank=blank, _zero_infinity=zero_infinity,
                 _targets=targets, _lengths=(input_lengths, target_lengths))
