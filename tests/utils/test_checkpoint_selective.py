"""Selective activation checkpointing (``create_selective_checkpoint_contexts``,
``CheckpointPolicy``) and ``torch.ops.aten`` names: the ops a policy sees, values and gradients
as the plain run and as torch, saved ops not recomputed, PyTorch's errors."""

import functools

import numpy as np
import pytest

import retrograd
from retrograd.ops import linalg
from retrograd.utils import checkpoint as rg_cp
from retrograd.utils._sac import _VersionWrapper


def _fn(lib, x, y):
    return lib.sigmoid(lib.matmul(lib.matmul(x, y), y)) * y


def _inputs(lib):
    x = lib.tensor(np.arange(9.0).reshape(3, 3) / 10, dtype=lib.float32).requires_grad_()
    y = lib.tensor(np.arange(9.0).reshape(3, 3) / 7, dtype=lib.float32).requires_grad_()
    return x, y


def _run(lib, cp, policy, fn=_fn, **kw):
    """Checkpoint ``fn`` under ``policy``; the ops the policy saw (name, is_recompute, type of
    op_output, number of args) and the gradients."""
    seen = []

    def spy(ctx, op, *args, **kwargs):
        seen.append((str(op), ctx.is_recompute, type(ctx.op_output).__name__, len(args)))
        return policy(ctx, op, *args, **kwargs)

    x, y = _inputs(lib)
    context_fn = functools.partial(cp.create_selective_checkpoint_contexts, spy, **kw)
    out = cp.checkpoint(lambda a, b: fn(lib, a, b), x, y, use_reentrant=False,
                        context_fn=context_fn)
    n = len(seen)
    out.sum().backward()
    assert len(seen) == n  # the policy runs in the forward only
    return seen, out.detach().numpy(), x.grad.numpy(), y.grad.numpy()


def _save_mm(lib, cp):
    def policy(ctx, op, *args, **kwargs):
        if op == lib.ops.aten.mm.default:
            return cp.CheckpointPolicy.MUST_SAVE
        return cp.CheckpointPolicy.PREFER_RECOMPUTE
    return policy


def test_values_and_gradients_equal_the_plain_run():
    seen, out, gx, gy = _run(retrograd, rg_cp, _save_mm(retrograd, rg_cp))
    assert [s[0] for s in seen] == ["aten.mm.default", "aten.mm.default", "aten.sigmoid.default",
                                    "aten.mul.Tensor"]
    assert all(s[1] is False and s[2] == "Tensor" for s in seen)
    x, y = _inputs(retrograd)
    plain = _fn(retrograd, x, y)
    plain.sum().backward()
    np.testing.assert_array_equal(out, plain.detach().numpy())
    np.testing.assert_allclose(gx, x.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gy, y.grad.numpy(), rtol=1e-6)


def test_matches_torch(torch):
    import torch.utils.checkpoint as t_cp

    for make in (_save_mm, lambda lib, cp: lambda ctx, op, *a, **k: op == lib.ops.aten.mm.default,
                 lambda lib, cp: lambda ctx, op, *a, **k: cp.CheckpointPolicy.PREFER_SAVE):
        got = _run(retrograd, rg_cp, make(retrograd, rg_cp))
        want = _run(torch, t_cp, make(torch, t_cp))
        assert got[0] == want[0]
        for g, w in zip(got[1:], want[1:]):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)


def test_saved_products_are_not_recomputed(monkeypatch):
    calls = []
    orig = linalg._matmul_arrays
    monkeypatch.setattr(linalg, "_matmul_arrays", lambda a, b: calls.append(1) or orig(a, b))
    counts = {}
    for name, context_fn in (
            ("plain", rg_cp.noop_context_fn),
            ("save mm", functools.partial(rg_cp.create_selective_checkpoint_contexts,
                                          [retrograd.ops.aten.mm.default]))):
        x, y = _inputs(retrograd)
        calls.clear()
        out = rg_cp.checkpoint(lambda a, b: _fn(retrograd, a, b), x, y, use_reentrant=False,
                               context_fn=context_fn)
        forward = len(calls)
        out.sum().backward()
        counts[name] = (forward, len(calls) - forward)
    assert counts == {"plain": (2, 2), "save mm": (2, 0)}


def test_kept_outputs_are_the_saved_ops_only():
    caching, cached = rg_cp.create_selective_checkpoint_contexts([retrograd.ops.aten.mm.default])
    x, y = _inputs(retrograd)
    out = rg_cp.checkpoint(lambda a, b: _fn(retrograd, a, b), x, y, use_reentrant=False,
                           context_fn=lambda: (caching, cached))
    kept = [w.val for entries in caching.storage.values() for w in entries.values()
            if isinstance(w, _VersionWrapper)]
    assert len(kept) == 2 and sum(t.numel() * t.element_size() for t in kept) == 2 * 9 * 4
    out.sum().backward()
    assert all(not isinstance(w, _VersionWrapper)
               for entries in caching.storage.values() for w in entries.values())


def test_mlp_with_dropout_matches_torch(torch):
    import torch.utils.checkpoint as t_cp

    def run(lib, cp):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Dropout(0.5),
                                lib.nn.Linear(8, 3), lib.nn.LayerNorm(3), lib.nn.GELU())
        x = lib.randn(5, 4, requires_grad=True)
        ops = [lib.ops.aten.addmm.default, lib.ops.aten.native_layer_norm.default]
        out = cp.checkpoint(net, x, use_reentrant=False, context_fn=functools.partial(
            cp.create_selective_checkpoint_contexts, ops))
        out.pow(2).sum().backward()
        return out.detach().numpy(), x.grad.numpy(), net[0].weight.grad.numpy()

    for g, w in zip(run(retrograd, rg_cp), run(torch, t_cp)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _errors(lib, cp):
    aten = lib.ops.aten
    got = []
    for bad in ([aten.mm], ["mm"], 3):
        with pytest.raises((ValueError, TypeError)) as e:
            cp.create_selective_checkpoint_contexts(bad)
        got.append((e.type.__name__, str(e.value)))
    x, y = _inputs(lib)
    cf = functools.partial(cp.create_selective_checkpoint_contexts, [aten.mm.default])
    out = cp.checkpoint(lambda a, b: _fn(lib, a, b), x, y, use_reentrant=False, context_fn=cf)
    out.sum().backward(retain_graph=True)
    with pytest.raises(RuntimeError) as e:
        out.sum().backward()
    got.append(str(e.value))

    def mutates(a):
        m = lib.mm(a, a)
        s = m.sin()
        m.mul_(2)  # a kept output changed in place
        return s * 1

    with pytest.raises(RuntimeError) as e:
        cp.checkpoint(mutates, x, use_reentrant=False, context_fn=cf).sum().backward()
    got.append(str(e.value))
    cf2 = functools.partial(cp.create_selective_checkpoint_contexts, [aten.mm.default],
                            allow_cache_entry_mutation=True)
    cp.checkpoint(mutates, x, use_reentrant=False, context_fn=cf2).sum().backward()
    return got


def test_errors_match_torch(torch):
    import torch.utils.checkpoint as t_cp

    got = _errors(retrograd, rg_cp)
    assert got == _errors(torch, t_cp)
    assert got[-1] == "Tensor cached during selective activation checkpoint has been mutated"


def test_aten_names():
    aten = retrograd.ops.aten
    assert str(aten.mm.default) == "aten.mm.default"
    assert repr(aten.mm.default) == "<OpOverload(op='aten.mm', overload='default')>"
    assert aten.mm.default.name() == "aten::mm" and aten.add.Tensor.name() == "aten::add.Tensor"
    assert aten.mm.default.__name__ == "mm.default" and str(aten.mm) == "aten.mm"
    assert aten.mm.default.overloadpacket is aten.mm
    assert aten.mm.default in [aten.mm.default] and aten.mm.default != aten.addmm.default
    assert aten.mul.Tensor == aten.mul.Scalar  # one primitive for both (see retrograd._aten)
    np.testing.assert_array_equal(
        aten.mm.default(retrograd.eye(2), retrograd.ones(2, 2)).numpy(), np.ones((2, 2)))
    assert list(rg_cp.CheckpointPolicy)[0] is rg_cp.CheckpointPolicy.MUST_SAVE
    assert aten.detach.default in rg_cp.SAC_IGNORED_OPS


def _hooked_bytes(lib, cp):
    """What saved-tensor hooks around the call see: (number, bytes) packed in the forward,
    for the plain run, a checkpoint and a checkpoint saving mm, and the unpacks in backward."""
    x, y = _inputs(lib)
    res = {}
    for name in ("plain", "checkpoint", "save mm"):
        packed = []
        with lib.autograd.graph.saved_tensors_hooks(
                lambda t, packed=packed: packed.append(t.numel() * t.element_size()) or t,
                lambda t: t):
            if name == "plain":
                out = _fn(lib, x, y)
            else:
                cf = cp.noop_context_fn if name == "checkpoint" else functools.partial(
                    cp.create_selective_checkpoint_contexts, [lib.ops.aten.mm.default])
                out = cp.checkpoint(lambda a, b: _fn(lib, a, b), x, y, use_reentrant=False,
                                    context_fn=cf)
            out = out.exp().sum()
        n = len(packed)
        out.backward()
        res[name] = (n, sum(packed), len(packed) - n)
    return res


def test_saved_bytes_seen_by_hooks_match_torch(torch):
    import torch.utils.checkpoint as t_cp

    got = _hooked_bytes(retrograd, rg_cp)
    # plain: 8 saved tensors; a checkpoint keeps its two inputs (and exp's result outside)
    assert got == {"plain": (8, 288, 0), "checkpoint": (3, 108, 0), "save mm": (3, 108, 0)}
    assert got == _hooked_bytes(torch, t_cp)


def test_an_input_changed_in_place_before_the_recomputation(torch):
    import torch.utils.checkpoint as t_cp

    def run(lib, cp):
        a = lib.ones(3, requires_grad=True)
        x = a * 2
        out = cp.checkpoint(lambda t: t.sin(), x, use_reentrant=False)
        x.mul_(3)
        with pytest.raises(RuntimeError) as e:
            out.sum().backward()
        return str(e.value).splitlines()[0]

    got = run(retrograd, rg_cp)
    assert "modified by an inplace operation" in got
    assert got == run(torch, t_cp)


def test_saved_linear_layers_are_not_recomputed(monkeypatch):
    from retrograd.ops import nn_norm

    calls = []

    class CountingNumPy:  # nn_norm's numpy, counting its matrix products
        def __getattr__(self, name):
            return getattr(np, name)

        @staticmethod
        def matmul(*args, **kwargs):
            calls.append(1)
            return np.matmul(*args, **kwargs)

    monkeypatch.setattr(nn_norm, "np", CountingNumPy())
    retrograd.manual_seed(0)
    net = retrograd.nn.Sequential(retrograd.nn.Linear(4, 8), retrograd.nn.Tanh(),
                                  retrograd.nn.Linear(8, 2))
    x = retrograd.randn(3, 4, requires_grad=True)
    plain = net(x)
    plain.sum().backward()
    want = [p.grad.numpy().copy() for p in net.parameters()] + [x.grad.numpy().copy()]
    counts = {}
    for name, ops in (("plain", []), ("save addmm", [retrograd.ops.aten.addmm.default])):
        net.zero_grad()
        x.grad = None
        calls.clear()
        out = rg_cp.checkpoint(net, x, use_reentrant=False, context_fn=functools.partial(
            rg_cp.create_selective_checkpoint_contexts, ops))
        forward = len(calls)
        out.sum().backward()
        counts[name] = (forward, len(calls) - forward)
        np.testing.assert_array_equal(out.detach().numpy(), plain.detach().numpy())
        got = [p.grad.numpy() for p in net.parameters()] + [x.grad.numpy()]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6)
    # (backward: the two recomputed products, then two in the gradient formulas)
    assert counts == {"plain": (2, 4), "save addmm": (2, 2)}


def test_context_fn_misuse_matches_torch(torch):
    import torch.utils.checkpoint as t_cp

    def errors(lib, cp):
        x = lib.ones(2, requires_grad=True)
        cf = functools.partial(cp.create_selective_checkpoint_contexts, [lib.ops.aten.mul.Tensor])
        got = []
        for kw in ({"use_reentrant": False, "debug": True}, {"use_reentrant": True}):
            with pytest.raises(ValueError) as e:
                cp.checkpoint(lambda a: a * 2, x, context_fn=cf, **kw)
            got.append(str(e.value))
        with pytest.raises(TypeError) as e:
            cp.create_selective_checkpoint_contexts((lib.ops.aten.mm.default,))
        got.append(str(e.value))
        with lib.no_grad():  # nothing to save: a plain call
            got.append(cp.checkpoint(lambda a: a * 2, x, use_reentrant=False,
                                     context_fn=cf).requires_grad)
        return got

    assert errors(retrograd, rg_cp) == errors(torch, t_cp)


def test_saved_pointwise_ops_are_not_recomputed(monkeypatch):
    from retrograd.ops.unary import SigmoidBackward0

    calls = []
    orig = SigmoidBackward0.forward
    monkeypatch.setattr(SigmoidBackward0, "forward",
                        staticmethod(lambda a: calls.append(1) or orig(a)))
    counts = {}
    for name, ops in (("plain", []), ("save sigmoid", [retrograd.ops.aten.sigmoid.default])):
        x, y = _inputs(retrograd)
        calls.clear()
        out = rg_cp.checkpoint(lambda a, b: _fn(retrograd, a, b), x, y, use_reentrant=False,
                               context_fn=functools.partial(
                                   rg_cp.create_selective_checkpoint_contexts, ops))
        forward = len(calls)
        out.sum().backward()
        counts[name] = (forward, len(calls) - forward)
        x2, y2 = _inputs(retrograd)
        _fn(retrograd, x2, y2).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-6)
        np.testing.assert_allclose(y.grad.numpy(), y2.grad.numpy(), rtol=1e-6)
    assert counts == {"plain": (1, 1), "save sigmoid": (1, 0)}
