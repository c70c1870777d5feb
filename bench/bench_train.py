"""Training steps of real models: retrograd against hand-written NumPy and torch, in one run.

Each workload is one training step (forward, loss, backward, optimizer step), float32, written
three ways in the same process: with retrograd (``import retrograd as rt``: nn modules,
nn.functional and optim, exactly as PyTorch code is written), with torch (skipped when torch is
not installed), and by hand in NumPy, forward and backward written explicitly, which is the
floor for a NumPy-based engine. Workloads:

- MLP 784-512-512-10, ReLU, cross-entropy, SGD with momentum, batch 64 and batch 512;
- a LeNet-style CNN (conv 5x5 -> relu -> maxpool 2 -> conv 5x5 -> relu -> maxpool 2 -> linear
  -> relu -> linear) on 28x28 images, cross-entropy, SGD with momentum, batch 32;
- a transformer block (LayerNorm, causal self-attention, GELU MLP, residuals), batch 8,
  sequence 64, width 128, 4 heads, MSE against a fixed target, AdamW.

It prints milliseconds per step (best of several runs) and the ratios retrograd/numpy and
retrograd/torch (< 1 means retrograd is faster). Before timing, the hand-written NumPy
gradients are checked against torch once (float64) so the floor is a correct one. Run it on
one thread, with the environment's forced BLAS kernel lifted for this command alone::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 python bench/bench_train.py

Targets (issue 4): MLP within 1.15x of NumPy at batch 512 and 1.3x at batch 64; the CNN and the
transformer within 1.3x.

Importing retrograd tunes glibc's malloc to keep freed memory (``RETROGRAD_MALLOC=default``
opts out; see ``retrograd/_allocator.py``). The hand-written NumPy runs in the same process, so
its floor is measured with the same allocator, as a hand-tuned NumPy program would be. The
three implementations are timed in interleaved rounds (best round kept), so a busy machine
slows all of them alike.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

try:  # the script runs from a checkout without installing retrograd
    import retrograd as rt
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
    import retrograd as rt

from retrograd import _allocator

try:
    import torch
except ImportError:
    torch = None

try:
    import threadpoolctl
except ImportError:
    threadpoolctl = None


# --------------------------------------------------------------------------------------------
# The models, written once against the PyTorch API (``lib`` is retrograd or torch)
# --------------------------------------------------------------------------------------------

def make_mlp(lib, sizes=(784, 512, 512, 10)):
    nn, F = lib.nn, lib.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(sizes[0], sizes[1])
            self.fc2 = nn.Linear(sizes[1], sizes[2])
            self.fc3 = nn.Linear(sizes[2], sizes[3])

        def forward(self, x):
            return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))

    return MLP()


def make_lenet(lib, channels=(6, 16), hidden=120, classes=10):
    nn, F = lib.nn, lib.nn.functional

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, channels[0], 5)
            self.conv2 = nn.Conv2d(channels[0], channels[1], 5)
            self.fc1 = nn.Linear(channels[1] * 4 * 4, hidden)
            self.fc2 = nn.Linear(hidden, classes)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = F.relu(self.fc1(x.flatten(1)))
            return self.fc2(x)

    return LeNet()


def make_block(lib, width=128, heads=4):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(width)
            self.attn = nn.Linear(width, 3 * width)
            self.proj = nn.Linear(width, width)
            self.ln2 = nn.LayerNorm(width)
            self.fc = nn.Linear(width, 4 * width)
            self.fc2 = nn.Linear(4 * width, width)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.attn(self.ln1(x)).split(C, dim=2)
            q = q.view(B, T, heads, C // heads).transpose(1, 2)
            k = k.view(B, T, heads, C // heads).transpose(1, 2)
            v = v.view(B, T, heads, C // heads).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            x = x + self.proj(y)
            return x + self.fc2(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    return Block()


# --------------------------------------------------------------------------------------------
# The same steps by hand in NumPy
# --------------------------------------------------------------------------------------------

class NumpySGD:
    """torch.optim.SGD(momentum=m): buf = g (first step), then buf = m * buf + g; p -= lr * buf."""

    def __init__(self, params, lr, momentum):
        self.params, self.lr, self.momentum = params, lr, momentum
        self.bufs = None

    def step(self, grads):
        if self.bufs is None:
            self.bufs = [g.copy() for g in grads]
        else:
            for b, g in zip(self.bufs, grads):
                b *= self.momentum
                b += g
        for p, b in zip(self.params, self.bufs):
            p -= self.lr * b


class NumpyAdamW:
    """torch.optim.AdamW with its defaults (betas 0.9, 0.999, eps 1e-8), no amsgrad."""

    def __init__(self, params, lr, weight_decay, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.lr, self.wd, self.betas, self.eps = params, lr, weight_decay, betas, eps
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, grads):
        self.t += 1
        b1, b2 = self.betas
        bc1 = 1.0 - b1 ** self.t
        bc2_sqrt = math.sqrt(1.0 - b2 ** self.t)
        step_size = self.lr / bc1
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            p *= 1.0 - self.lr * self.wd
            m *= b1
            m += (1.0 - b1) * g
            v *= b2
            v += (1.0 - b2) * (g * g)
            denom = np.sqrt(v)
            denom /= bc2_sqrt
            denom += self.eps
            p -= step_size * (m / denom)


def np_cross_entropy(z, y):
    """Mean cross-entropy of logits z (N, K) at labels y, and its gradient w.r.t. z."""
    n = z.shape[0]
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    loss = (np.log(s[:, 0]) - z[rows, y]).mean()
    e /= s
    e[rows, y] -= 1.0
    e /= n
    return loss, e


class NumpyMLP:
    """Linear-ReLU-Linear-ReLU-Linear, weights in torch's (out, in) layout."""

    names = ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias")

    def __init__(self, state, lr=0.01, momentum=0.9):
        self.params = [np.array(state[k]) for k in self.names]
        self.opt = NumpySGD(self.params, lr, momentum)

    def loss_and_grads(self, x, y):
        w1, b1, w2, b2, w3, b3 = self.params
        h1 = x @ w1.T
        h1 += b1
        np.maximum(h1, 0, out=h1)
        h2 = h1 @ w2.T
        h2 += b2
        np.maximum(h2, 0, out=h2)
        z = h2 @ w3.T
        z += b3
        loss, dz = np_cross_entropy(z, y)
        dw3 = dz.T @ h2
        db3 = dz.sum(axis=0)
        dh2 = dz @ w3
        dh2 *= h2 > 0
        dw2 = dh2.T @ h1
        db2 = dh2.sum(axis=0)
        dh1 = dh2 @ w2
        dh1 *= h1 > 0
        dw1 = dh1.T @ x
        db1 = dh1.sum(axis=0)
        return loss, [dw1, db1, dw2, db2, dw3, db3]

    def step(self, x, y):
        loss, grads = self.loss_and_grads(x, y)
        self.opt.step(grads)
        return loss

    def grads_as_torch(self, grads):
        return dict(zip(self.names, grads))


def _pool2(a):
    """2x2 max pool of the last two dims (even sizes), two passes of pairwise maxima."""
    *lead, h, w = a.shape
    ar = a.reshape(*lead, h // 2, 2 * w)
    m = np.maximum(ar[..., :w], ar[..., w:])
    mr = m.reshape(*lead, h // 2, w // 2, 2)
    return np.maximum(mr[..., 0], mr[..., 1])


def _unpool2_relu(a, pooled, g):
    """Gradient through relu -> 2x2 max pool of the last two dims: to each window's maximum.

    The relu's mask is applied at the pooled size (a window's max is positive iff the relu let
    it through); a window of tied zeros then gets no gradient, as through the relu.
    """
    g = g * (pooled > 0)
    gu = np.repeat(np.repeat(g, 2, axis=-1), 2, axis=-2)
    pu = np.repeat(np.repeat(pooled, 2, axis=-1), 2, axis=-2)
    gu *= a == pu
    return gu


class NumpyLeNet:
    """The LeNet step in NCHW with im2col convolutions, written for NumPy's strengths.

    Convolutions are one batched matmul per layer, (O, C*k*k) @ (N, C*k*k, H*W): OpenBLAS is
    much faster on N small products than on one very wide one. Pools are two pairwise maxima.
    The input gradient of conv2 (col2im) adds the 25 shifted kernel contributions as long
    contiguous runs: the gradient is laid out in rows as wide as the input image, with zero
    padding, so each shift is one add over a flat offset (the padding adds zeros where rows
    wrap).
    """

    names = ("conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias",
             "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")

    def __init__(self, state, lr=0.01, momentum=0.9):
        p = {k: np.array(state[k]) for k in self.names}
        self.shape1, self.shape2 = p["conv1.weight"].shape, p["conv2.weight"].shape
        p["conv1.weight"] = p["conv1.weight"].reshape(self.shape1[0], -1)
        p["conv2.weight"] = p["conv2.weight"].reshape(self.shape2[0], -1)
        self.params = [p[name] for name in self.names]
        self.opt = NumpySGD(self.params, lr, momentum)

    def loss_and_grads(self, x, y):
        cw1, cb1, cw2, cb2, w3, b3, w4, b4 = self.params
        o1, c1, k, _ = self.shape1
        o2 = self.shape2[0]
        n = x.shape[0]
        sw = np.lib.stride_tricks.sliding_window_view
        # conv1 -> relu -> pool
        win = sw(x, (k, k), axis=(2, 3))                                # N,C,24,24,k,k
        h0, w0 = win.shape[2], win.shape[3]
        cols1 = win.transpose(0, 1, 4, 5, 2, 3).reshape(n, c1 * k * k, h0 * w0)
        a1 = np.matmul(cw1, cols1)                                      # N, 6, 576
        a1 += cb1[:, None]
        np.maximum(a1, 0, out=a1)
        a1 = a1.reshape(n, o1, h0, w0)
        p1 = _pool2(a1)                                                 # N, 6, 12, 12
        # conv2 -> relu -> pool
        hi, wi = p1.shape[2], p1.shape[3]
        h1, w1 = hi - k + 1, wi - k + 1
        cols2 = sw(p1, (k, k), axis=(2, 3)).transpose(0, 1, 4, 5, 2, 3).reshape(
            n, o1 * k * k, h1 * w1)                                     # N, 150, 64
        a2 = np.matmul(cw2, cols2)                                      # N, 16, 64
        a2 += cb2[:, None]
        np.maximum(a2, 0, out=a2)
        a2 = a2.reshape(n, o2, h1, w1)
        p2 = _pool2(a2)                                                 # N, 16, 4, 4
        f = p2.reshape(n, -1)
        h3 = f @ w3.T
        h3 += b3
        np.maximum(h3, 0, out=h3)
        z = h3 @ w4.T
        z += b4
        loss, dz = np_cross_entropy(z, y)
        dw4 = dz.T @ h3
        db4 = dz.sum(axis=0)
        dh3 = dz @ w4
        dh3 *= h3 > 0
        dw3 = dh3.T @ f
        db3 = dh3.sum(axis=0)
        dp2 = (dh3 @ w3).reshape(p2.shape)
        da2 = _unpool2_relu(a2, p2, dp2).reshape(n, o2, h1 * w1)       # N, 16, 64
        dcw2 = np.matmul(da2, cols2.transpose(0, 2, 1)).sum(axis=0)
        dcb2 = da2.sum(axis=(0, 2))
        # col2im: rows of da2 padded to the input width, each image to the input's size (the
        # nonzero part of a shifted image never leaves its own image; only padding spills)
        step = hi * wi
        dpad = np.zeros((n, o2, step), dtype=x.dtype)
        dpad[:, :, :h1 * wi].reshape(n, o2, h1, wi)[..., :w1] = da2.reshape(n, o2, h1, w1)
        wt = cw2.reshape(o2, o1, k, k).transpose(2, 3, 1, 0).reshape(k * k * o1, o2)
        dcols = np.matmul(wt, dpad).reshape(n, k * k, o1 * step)      # (ki, kj), (c, pos)
        acc = np.zeros((n, o1 * step + (k - 1) * (wi + 1)), dtype=x.dtype)
        for i in range(k):
            for j in range(k):
                off = i * wi + j
                acc[:, off:off + o1 * step] += dcols[:, i * k + j]
        dp1 = acc[:, :o1 * step].reshape(n, o1, step)[:, :, :hi * wi].reshape(p1.shape)
        da1 = _unpool2_relu(a1, p1, dp1).reshape(n, o1, h0 * w0)       # N, 6, 576
        dcw1 = np.matmul(da1, cols1.transpose(0, 2, 1)).sum(axis=0)
        dcb1 = da1.sum(axis=(0, 2))
        return loss, [dcw1, dcb1, dcw2, dcb2, dw3, db3, dw4, db4]

    def step(self, x, y):
        loss, grads = self.loss_and_grads(x, y)
        self.opt.step(grads)
        return loss

    def grads_as_torch(self, grads):
        g = dict(zip(self.names, grads))
        g["conv1.weight"] = g["conv1.weight"].reshape(self.shape1)
        g["conv2.weight"] = g["conv2.weight"].reshape(self.shape2)
        return g


_GELU_C = math.sqrt(2.0 / math.pi)


def _ln_fwd(x, g, b, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    var = np.mean(xc * xc, axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    xhat = xc
    xhat *= rstd
    return xhat * g + b, xhat, rstd


def _ln_bwd(dy, xhat, rstd, g, need_input=True):
    dg = (dy * xhat).sum(axis=0)
    db = dy.sum(axis=0)
    if not need_input:
        return None, dg, db
    dxhat = dy * g
    dx = dxhat - dxhat.mean(axis=-1, keepdims=True)
    dx -= xhat * np.mean(dxhat * xhat, axis=-1, keepdims=True)
    dx *= rstd
    return dx, dg, db


class NumpyBlock:
    """Pre-LN transformer block with causal attention, by hand; rows are the B*T tokens."""

    names = ("ln1.weight", "ln1.bias", "attn.weight", "attn.bias", "proj.weight", "proj.bias",
             "ln2.weight", "ln2.bias", "fc.weight", "fc.bias", "fc2.weight", "fc2.bias")

    def __init__(self, state, heads=4, lr=1e-3, weight_decay=0.01):
        self.params = [np.array(state[k]) for k in self.names]
        self.heads = heads
        self.opt = NumpyAdamW(self.params, lr, weight_decay)
        self.mask = None

    def loss_and_grads(self, x, target):
        g1, be1, wa, ba, wp, bp, g2, be2, wf, bf, wf2, bf2 = self.params
        B, T, C = x.shape
        H = self.heads
        D = C // H
        scale = 1.0 / math.sqrt(D)
        if self.mask is None or self.mask.shape != (T, T) or self.mask.dtype != x.dtype:
            self.mask = np.triu(np.full((T, T), -np.inf, dtype=x.dtype), 1)
        x2 = x.reshape(B * T, C)
        h1, xhat1, rstd1 = _ln_fwd(x2, g1, be1)
        qkv = h1 @ wa.T
        qkv += ba
        qkv5 = qkv.reshape(B, T, 3, H, D).transpose(2, 0, 3, 1, 4)   # 3, B, H, T, D
        q, k, v = qkv5[0], qkv5[1], qkv5[2]
        s = q @ k.transpose(0, 1, 3, 2)
        s *= scale
        s += self.mask
        s -= s.max(axis=-1, keepdims=True)
        p = np.exp(s, out=s)
        p /= p.sum(axis=-1, keepdims=True)
        yh = p @ v                                                  # B, H, T, D
        y = yh.transpose(0, 2, 1, 3).reshape(B * T, C)
        x1 = y @ wp.T
        x1 += bp
        x1 += x2
        h2, xhat2, rstd2 = _ln_fwd(x1, g2, be2)
        f = h2 @ wf.T
        f += bf
        t = np.tanh(_GELU_C * (f + 0.044715 * (f * f * f)))
        ge = 0.5 * f * (1.0 + t)
        out = ge @ wf2.T
        out += bf2
        out += x1
        diff = out - target.reshape(B * T, C)
        loss = np.mean(diff * diff)
        dout = diff
        dout *= 2.0 / diff.size
        # MLP
        dwf2 = dout.T @ ge
        dbf2 = dout.sum(axis=0)
        dge = dout @ wf2
        ff = f * f
        dgelu = 0.5 * (1.0 + t) + (0.5 * _GELU_C) * f * (1.0 - t * t) * (1.0 + 0.134145 * ff)
        df = dge * dgelu
        dwf = df.T @ h2
        dbf = df.sum(axis=0)
        dh2 = df @ wf
        dx1, dg2, dbe2 = _ln_bwd(dh2, xhat2, rstd2, g2)
        dx1 += dout
        # attention
        dwp = dx1.T @ y
        dbp = dx1.sum(axis=0)
        dy = (dx1 @ wp).reshape(B, T, H, D).transpose(0, 2, 1, 3)  # B, H, T, D
        dp = dy @ v.transpose(0, 1, 3, 2)
        dv = p.transpose(0, 1, 3, 2) @ dy
        ds = dp
        ds -= (dp * p).sum(axis=-1, keepdims=True)
        ds *= p
        ds *= scale
        dq = ds @ k
        dk = ds.transpose(0, 1, 3, 2) @ q
        dqkv = np.empty((B, T, 3, H, D), dtype=x.dtype)
        dqkv[:, :, 0] = dq.transpose(0, 2, 1, 3)
        dqkv[:, :, 1] = dk.transpose(0, 2, 1, 3)
        dqkv[:, :, 2] = dv.transpose(0, 2, 1, 3)
        dqkv = dqkv.reshape(B * T, 3 * C)
        dwa = dqkv.T @ h1
        dba = dqkv.sum(axis=0)
        dh1 = dqkv @ wa
        _, dg1, dbe1 = _ln_bwd(dh1, xhat1, rstd1, g1, need_input=False)  # x needs no grad
        return loss, [dg1, dbe1, dwa, dba, dwp, dbp, dg2, dbe2, dwf, dbf, dwf2, dbf2]

    def step(self, x, target):
        loss, grads = self.loss_and_grads(x, target)
        self.opt.step(grads)
        return loss

    def grads_as_torch(self, grads):
        return dict(zip(self.names, grads))


# --------------------------------------------------------------------------------------------
# Workloads
# --------------------------------------------------------------------------------------------

class Workload:
    def __init__(self, name, make_model, numpy_cls, data, loss, optim, *, numpy_kw=None):
        self.name, self.make_model, self.numpy_cls = name, make_model, numpy_cls
        self.data, self.loss, self.optim = data, loss, optim
        self.numpy_kw = numpy_kw or {}


def _ce(lib):
    return lib.nn.functional.cross_entropy


def _mse(lib):
    return lib.nn.functional.mse_loss


def _sgd(lib, params):
    return lib.optim.SGD(params, lr=0.01, momentum=0.9)


def _adamw(lib, params):
    return lib.optim.AdamW(params, lr=1e-3, weight_decay=0.01)


def _mlp_data(batch):
    def data(rng, dtype):
        return (rng.standard_normal((batch, 784)).astype(dtype),
                rng.integers(0, 10, size=batch).astype(np.int64))
    return data


def _cnn_data(rng, dtype):
    return (rng.standard_normal((32, 1, 28, 28)).astype(dtype),
            rng.integers(0, 10, size=32).astype(np.int64))


def _block_data(rng, dtype):
    return (rng.standard_normal((8, 64, 128)).astype(dtype),
            rng.standard_normal((8, 64, 128)).astype(dtype))


WORKLOADS = [
    Workload("MLP batch 64", make_mlp, NumpyMLP, _mlp_data(64), _ce, _sgd),
    Workload("MLP batch 512", make_mlp, NumpyMLP, _mlp_data(512), _ce, _sgd),
    Workload("CNN batch 32", make_lenet, NumpyLeNet, _cnn_data, _ce, _sgd),
    Workload("transformer block", make_block, NumpyBlock, _block_data, _mse, _adamw),
]
TARGETS = {"MLP batch 64": 1.3, "MLP batch 512": 1.15, "CNN batch 32": 1.3,
           "transformer block": 1.3}


def initial_state(work, dtype):
    """Initial weights as NumPy arrays: from a torch model where torch exists, else retrograd's."""
    lib = torch if torch is not None else rt
    lib.manual_seed(0)
    model = work.make_model(lib)
    return {k: v.detach().numpy().astype(dtype) for k, v in model.state_dict().items()}


def lib_stepper(lib, work, state, batch):
    """A closure doing one training step with ``lib`` (retrograd or torch) on a fixed batch."""
    model = work.make_model(lib)
    if next(iter(state.values())).dtype == np.float64:
        model.double()
    model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    opt = work.optim(lib, model.parameters())
    loss_fn = work.loss(lib)
    x, y = (lib.tensor(a) for a in batch)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def check_numpy_grads(work, rtol=1e-7, atol=1e-9):
    """One float64 step: the hand-written NumPy loss and gradients equal torch's."""
    state = initial_state(work, np.float64)
    batch = work.data(np.random.default_rng(1), np.float64)
    impl = work.numpy_cls(state, **work.numpy_kw)
    loss, grads = impl.loss_and_grads(*batch)
    grads = impl.grads_as_torch(grads)
    model = work.make_model(torch).double()
    model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    x, y = (torch.tensor(a) for a in batch)
    t_loss = work.loss(torch)(model(x), y)
    t_loss.backward()
    np.testing.assert_allclose(loss, t_loss.item(), rtol=rtol, atol=atol)
    for name, p in model.named_parameters():
        np.testing.assert_allclose(grads[name], p.grad.numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"{work.name}: {name}")


def time_all(fns, repeat, min_time):
    """Seconds per call of each function: the best over ``repeat`` rounds, each round timing
    every function in turn for about ``min_time`` (interleaved, so a busy machine slows all
    of them alike rather than whichever ran at the wrong moment)."""
    numbers = {}
    for name, fn in fns.items():
        t0 = time.perf_counter()
        fn()
        fn()
        numbers[name] = max(1, int(min_time / max((time.perf_counter() - t0) / 2, 1e-6)))
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(numbers[name]):
                fn()
            best[name] = min(best[name], (time.perf_counter() - t0) / numbers[name])
    return best


def blas_info():
    if threadpoolctl is None:
        return "BLAS: threadpoolctl not installed (pip install threadpoolctl to print the kernel)"
    lines = []
    for info in threadpoolctl.threadpool_info():
        lines.append(f"{info.get('user_api')}: {info.get('internal_api')} "
                     f"{info.get('version')} kernel={info.get('architecture')} "
                     f"threads={info.get('num_threads')} ({os.path.basename(info['filepath'])})")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=7, help="timed rounds (best kept)")
    p.add_argument("--min-time", type=float, default=0.1,
                   help="seconds per timed run of one implementation")
    p.add_argument("--only", default="", help="run only workloads whose name contains this")
    p.add_argument("--no-check", action="store_true",
                   help="skip checking the hand-written NumPy gradients against torch")
    args = p.parse_args(argv)

    limiter = None
    if threadpoolctl is not None:
        limiter = threadpoolctl.threadpool_limits(1)
    if torch is not None:
        torch.set_num_threads(1)
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if var in os.environ:
            print(f"warning: {var}={os.environ[var]} is set; it forces a slower BLAS kernel "
                  f"(run with `env -u {var} ...`)")
    print(f"numpy {np.__version__}, retrograd {rt.__version__}, "
          f"torch {torch.__version__ if torch is not None else 'not installed'}")
    print(blas_info())
    print(f"malloc tuned by retrograd: {'yes' if _allocator.tuned else 'no'} "
          "(glibc keeps freed memory; RETROGRAD_MALLOC=default opts out).\nThe hand-written "
          "NumPy runs in the same process, so it benefits from that too (as does torch).")

    works = [w for w in WORKLOADS if args.only.lower() in w.name.lower()]
    if torch is not None and not args.no_check:
        for w in works:
            check_numpy_grads(w)
        print("hand-written NumPy gradients checked against torch (float64): ok")

    print("\none training step (forward, loss, backward, optimizer step), float32, "
          "one thread, ms per step (best of runs):")
    head = f"  {'workload':18s} {'retrograd':>10s} {'numpy':>8s} {'torch':>8s}" \
           f" {'rg/numpy':>9s} {'rg/torch':>9s} {'target':>7s}"
    print(head)
    results = {}
    for w in works:
        state = initial_state(w, np.float32)
        batch = w.data(np.random.default_rng(1), np.float32)
        impl = w.numpy_cls(state, **w.numpy_kw)
        fns = {"numpy": lambda impl=impl, b=batch: impl.step(*b)}
        try:
            fns["retrograd"] = lib_stepper(rt, w, state, batch)
            fns["retrograd"]()
        except Exception as e:  # a layer retrograd lacks: report it, keep going
            fns.pop("retrograd")
            print(f"  {w.name:18s} retrograd failed: {type(e).__name__}: {e}")
        if torch is not None:
            fns["torch"] = lib_stepper(torch, w, state, batch)
        times = time_all(fns, args.repeat, args.min_time)
        results[w.name] = times
        ms = {k: v * 1e3 for k, v in times.items()}
        rg = ms.get("retrograd")

        def fmt(v, spec="10.3f"):
            return format(v, spec) if v is not None else "-".rjust(int(spec.split(".")[0]))

        r_np = rg / ms["numpy"] if rg is not None else None
        r_t = rg / ms["torch"] if rg is not None and "torch" in ms else None
        mark = "" if r_np is None else ("  ok" if r_np <= TARGETS[w.name] else "  MISSED")
        print(f"  {w.name:18s} {fmt(rg)} {fmt(ms['numpy'], '8.3f')} "
              f"{fmt(ms.get('torch'), '8.3f')} {fmt(r_np, '9.2f')} {fmt(r_t, '9.2f')}"
              f" {TARGETS[w.name]:6.2f}x{mark}", flush=True)
    if limiter is not None:
        limiter.restore_original_limits()
    return 0


if __name__ == "__main__":
    sys.exit(main())
