"""utils.checkpoint against torch: outputs and gradients equal to the plain run (dropout too,
through the saved RNG state), the function re-run once by backward, PyTorch's warnings and
errors; and the memory it saves, counted with the saved-tensor hooks."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import retrograd
from retrograd.utils.checkpoint import checkpoint

from ..oracle import compare, compare_error

R = np.random.default_rng(0)
X = R.standard_normal((2, 4)).astype(np.float32)


def ck(lib):
    return importlib.import_module(lib.__name__ + ".utils.checkpoint")


def _net(lib):
    lib.manual_seed(0)
    net = lib.nn.Sequential(*[m for _ in range(3) for m in
                              (lib.nn.Linear(4, 4), lib.nn.Tanh(), lib.nn.Dropout(0.3))])
    rng = np.random.default_rng(1)
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return net


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_same_outputs_and_grads_as_plain_run_and_torch(torch, use_reentrant):
    def run(lib):
        net = _net(lib)
        x = lib.tensor(X, requires_grad=True)
        lib.manual_seed(1)
        plain = net(x)
        plain.sum().backward()
        ref = [x.grad] + [p.grad for p in net.parameters()]
        net.zero_grad()
        x.grad = None
        calls = []

        def block(a):
            calls.append(1)
            return net(a)

        lib.manual_seed(1)
        y = ck(lib).checkpoint(block, x, use_reentrant=use_reentrant)
        n_forward = len(calls)
        y.sum().backward()
        got = [x.grad] + [p.grad for p in net.parameters()]
        for a, b in zip(got, ref):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
        assert bool((y == plain).all())
        return y, got, n_forward, len(calls), y.grad_fn.name()

    compare(run)


def test_checkpoint_sequential_and_kwargs(torch):
    def run(lib):
        net = _net(lib)
        x = lib.tensor(X, requires_grad=True)
        lib.manual_seed(2)
        y = ck(lib).checkpoint_sequential(net, 3, x, use_reentrant=False)
        y.sum().backward()
        z = ck(lib).checkpoint(lambda a, scale: a.sin() * scale, x, use_reentrant=False,
                               scale=3.0)
        (g,) = lib.autograd.grad(z.sum(), x)
        return y, x.grad, g

    compare(run)


def _warned(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in rec]


def test_warnings_and_errors(torch):
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        c = ck(lib)
        return (_warned(lambda: c.checkpoint(lambda a: a.sin(), x)),
                _warned(lambda: c.checkpoint_sequential([lib.nn.Tanh()], 1, x)),
                _warned(lambda: c.checkpoint(lambda a: a.sin(), lib.tensor(X),
                                             use_reentrant=True)),
                _warned(lambda: c.checkpoint(lambda a: a.sin(), x, use_reentrant=False)))

    compare(run)
    compare_error(lambda lib: ck(lib).checkpoint(lambda a, b: a, lib.tensor(X),
                                                 use_reentrant=True, b=1))
    compare_error(lambda lib: ck(lib).checkpoint(lambda a: a, lib.tensor(X), use_reentrant=True,
                                                 debug=True))


def _changing(lib, kind):
    """A function whose recomputation differs from its first run (a shape, or what it saves)."""
    calls = []

    def f(a):
        calls.append(1)
        if kind == "shape":
            return a[: len(calls)].sin()
        b = a.sin()
        return b.exp() if len(calls) == 1 else b

    return f


def test_recomputation_checks_and_reentrant_grad(torch):
    """A recomputation that saves other tensors than the forward did is PyTorch's
    CheckpointError (unless determinism_check="none"); the reentrant variant refuses
    autograd.grad and backward(inputs=...)."""

    def backward(lib, kind, **kw):
        x = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        ck(lib).checkpoint(_changing(lib, kind), x, use_reentrant=False, **kw).sum().backward()
        return x.grad

    for kind in ("shape", "count"):
        ours, ref = compare_error(lambda lib, kind=kind: backward(lib, kind))
        assert type(ours).__name__ == type(ref).__name__ == "CheckpointError"
    compare(lambda lib: backward(lib, "shape", determinism_check="none"))
    compare_error(lambda lib: backward(lib, "shape", determinism_check="always"))

    def reentrant(lib, how):
        x = lib.tensor(X, requires_grad=True)
        y = ck(lib).checkpoint(lambda a: a.sin(), x, use_reentrant=True).sum()
        return lib.autograd.grad(y, x) if how == "grad" else y.backward(inputs=[x])

    compare_error(lambda lib: reentrant(lib, "grad"))
    compare_error(lambda lib: reentrant(lib, "inputs"))
    with retrograd.utils.checkpoint.set_checkpoint_debug_enabled(True):
        x = retrograd.tensor(X, requires_grad=True)
        checkpoint(lambda a: a.sin(), x, use_reentrant=True).sum().backward()  # plain: fine
    np.testing.assert_allclose(x.grad.numpy(), np.cos(X))


def test_reentrant_and_double_backward_paths():
    x = retrograd.tensor(X, requires_grad=True)
    y = checkpoint(lambda a: (a * a).sin(), x, use_reentrant=False)
    (g,) = retrograd.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = retrograd.autograd.grad(g.sum(), x)
    x2 = retrograd.tensor(X, requires_grad=True)
    (h,) = retrograd.autograd.grad((x2 * x2).sin().sum(), x2, create_graph=True)
    (hh,) = retrograd.autograd.grad(h.sum(), x2)
    np.testing.assert_allclose(gg.numpy(), hh.numpy(), rtol=1e-6)


# -- memory ----------------------------------------------------------------------------------------

WIDTH, BATCH, BLOCKS = 16, 8, 32


class _Counter:
    """Saved-tensor hooks that count the bytes of distinct tensors kept for backward."""

    def __init__(self) -> None:
        self.seen: dict = {}

    def pack(self, t):
        self.seen[t.data_ptr()] = t.numel() * t.element_size()
        return t

    @property
    def total(self) -> int:
        return sum(self.seen.values())


def _mlp():
    retrograd.manual_seed(0)
    nn = retrograd.nn
    return [nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.Tanh(), nn.Linear(4 * WIDTH, WIDTH))
            for _ in range(BLOCKS)]


def _train(blocks, mode, steps=2):
    """A few SGD steps; returns the losses and the saved bytes of the first step."""
    params = [p for b in blocks for p in b.parameters()]
    opt = retrograd.optim.SGD(params, lr=0.01)
    x = retrograd.tensor(np.random.default_rng(3).standard_normal((BATCH, WIDTH))
                         .astype(np.float32), requires_grad=True)
    losses, kept = [], None
    for _ in range(steps):
        counter = _Counter()
        with retrograd.autograd.graph.saved_tensors_hooks(counter.pack, lambda t: t):
            h = x
            for b in blocks:
                if mode == "plain":
                    h = b(h)
                else:
                    # (the input a checkpoint keeps to recompute from is a saved tensor of
                    # both variants: the hooks count it)
                    h = checkpoint(b, h, use_reentrant=(mode == "reentrant"))
            loss = (h * h).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        kept = counter.total if kept is None else kept
    return losses, kept


def test_checkpointing_every_block_keeps_a_quarter_of_the_saved_bytes():
    plain_losses, plain = _train(_mlp(), "plain")
    for mode in ("reentrant", "non-reentrant"):
        losses, kept = _train(_mlp(), mode)
        np.testing.assert_allclose(losses, plain_losses, rtol=1e-6)
        assert kept * 4 <= plain, (mode, kept, plain)
