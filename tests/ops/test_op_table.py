"""Generic op tests, run over every entry of the op table (``op_table.OPS``).

- gradcheck (reverse and forward mode) and gradgradcheck in float64, by finite differences (no
  torch needed);
- against torch (the ``torch`` fixture of ``tests/conftest.py``: these alone skip where torch is
  not installed): values, dtype and shape in float32 and float64, the grad_fn
  name, and first- and second-order gradients with random upstream gradients.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import warnings
import zlib

import numpy as np
import pytest

import retrograd
from retrograd.autograd import gradcheck, gradgradcheck

from . import op_table
from .op_table import make_inputs

# The table is op_table.OPS plus the OPS of every op_table_<family>.py beside it.
OPS = list(op_table.OPS)
for _info in sorted(pkgutil.iter_modules([os.path.dirname(__file__)]), key=lambda m: m.name):
    if _info.name.startswith("op_table_"):
        OPS += importlib.import_module(f"{__package__}.{_info.name}").OPS

CASES = [(op, shapes) for op in OPS for shapes in op.samples]
IDS = [i for op in OPS for i in op.ids()]


def _rng(op, shapes):
    # A stable seed per case (str hashes change between runs).
    return np.random.default_rng(zlib.crc32(f"{op.name}{shapes}".encode()))


def _tensors(lib, arrays, requires_grad=True):
    return [lib.tensor(a, requires_grad=requires_grad) for a in arrays]


@pytest.mark.parametrize("op,shapes", CASES, ids=IDS)
def test_gradcheck(op, shapes):
    if not op.grad or op.no_gradcheck:
        pytest.skip(op.no_gradcheck or "not differentiable")
    xs = _tensors(retrograd, make_inputs(op, shapes, _rng(op, shapes)))
    # Forward mode too: its Jacobian, one JVP per input element, against the same differences.
    assert gradcheck(lambda *t: op.fn(retrograd, *t), xs,
                     check_forward_ad="no_forward_ad" not in op.extra)


@pytest.mark.parametrize("op,shapes", CASES, ids=IDS)
def test_gradgradcheck(op, shapes):
    if not (op.grad and op.gradgrad and not op.no_gradgrad):
        pytest.skip(op.no_gradgrad or "no second order")
    xs = _tensors(retrograd, make_inputs(op, shapes, _rng(op, shapes)))
    assert gradgradcheck(lambda *t: op.fn(retrograd, *t), xs)


def _np(t):
    return t.detach().numpy(force=True) if t is not None else None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op,shapes", CASES, ids=IDS)
def test_against_torch(torch, op, shapes, dtype):
    arrays = [a.astype(dtype) for a in make_inputs(op, shapes, _rng(op, shapes))]
    rg_in = _tensors(retrograd, arrays, op.grad)
    t_in = _tensors(torch, arrays, op.grad)
    out = op.fn(retrograd, *rg_in)
    ref = op.fn(torch, *t_in)

    assert tuple(out.shape) == tuple(ref.shape)
    assert out.dtype.name == str(ref.dtype).replace("torch.", "")
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float64" else dict(rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), **tol)
    if not op.grad:
        return
    names = (out.grad_fn.name() if out.grad_fn else None,
             ref.grad_fn.name() if ref.grad_fn else None)
    assert names[0] == names[1] or "known_name_gap" in op.extra, names

    # First order, with a random upstream gradient.
    rng = np.random.default_rng(1)
    v = rng.standard_normal(ref.shape).astype(dtype)
    g = retrograd.autograd.grad(out, rg_in, retrograd.tensor(v), create_graph=True,
                                allow_unused=True)
    tg = torch.autograd.grad(ref, t_in, torch.tensor(v), create_graph=True, allow_unused=True)
    for a, b, x in zip(g, tg, arrays):
        a = np.zeros_like(x) if a is None else _np(a)
        b = np.zeros_like(x) if b is None else _np(b)
        np.testing.assert_allclose(a, b, **tol)

    if op.no_gradgrad:
        return
    # Second order: the gradient of <grad, w> with respect to the inputs.
    ws = [rng.standard_normal(x.shape).astype(dtype) for x in arrays]
    rg_s = [(gi * retrograd.tensor(w)).sum() for gi, w in zip(g, ws) if gi is not None]
    t_s = [(gi * torch.tensor(w)).sum() for gi, w in zip(tg, ws) if gi is not None]
    rg_s = [s for s in rg_s if s.requires_grad]
    t_s = [s for s in t_s if s.requires_grad]
    g2 = retrograd.autograd.grad(sum(rg_s), rg_in, allow_unused=True) if rg_s else \
        [None] * len(arrays)
    tg2 = torch.autograd.grad(sum(t_s), t_in, allow_unused=True) if t_s else \
        [None] * len(arrays)
    if dtype == "float32":
        tol = dict(rtol=1e-3, atol=1e-4)  # second order compounds float32 rounding
    for a, b, x in zip(g2, tg2, arrays):
        a = np.zeros_like(x) if a is None else _np(a)
        b = np.zeros_like(x) if b is None else _np(b)
        np.testing.assert_allclose(a, b, **tol)
    if "known_name_gap" in op.extra:
        assert names[0] != names[1], "the grad_fn names agree now: drop known_name_gap"
        pytest.xfail(op.extra["known_name_gap"])


# Where torch's forward mode disagrees with finite differences (and retrograd's agrees).
_TORCH_FORWARD_AD_DIFFERS = {
    "ldexp": "torch's tangent computes 2 ** other in integers: 0 for a negative exponent",
}


@pytest.mark.parametrize("op,shapes", CASES, ids=IDS)
def test_forward_ad_against_torch(torch, op, shapes):
    """Forward mode: the tangent of the output for random input tangents, against torch's
    forward mode in float64 (ops torch cannot forward-differentiate are skipped)."""
    if not op.grad or "no_forward_ad" in op.extra:
        pytest.skip("not differentiable" if not op.grad else op.extra["no_forward_ad"])
    import torch.autograd.forward_ad as tfw

    import retrograd.autograd.forward_ad as rfw

    arrays = make_inputs(op, shapes, _rng(op, shapes))
    rng = np.random.default_rng(2)
    tangents = [rng.standard_normal(a.shape) if a.dtype.kind == "f" else None for a in arrays]

    def run(lib, fw):
        with fw.dual_level():
            xs = [fw.make_dual(lib.tensor(a), lib.tensor(t)) if t is not None else lib.tensor(a)
                  for a, t in zip(arrays, tangents)]
            out = op.fn(lib, *xs)
            p, t = fw.unpack_dual(out)
            return _np(p), _np(t)

    try:
        ref = run(torch, tfw)
    except (NotImplementedError, RuntimeError) as e:
        pytest.skip(f"torch has no forward AD here: {e}"[:200])
    if ref[1] is None:
        pytest.skip("torch's forward AD gives this op's output no tangent")
    why = op.extra.get("no_torch_forward_ad") or _TORCH_FORWARD_AD_DIFFERS.get(op.name)
    if why:
        pytest.skip(why)
    got = run(retrograd, rfw)
    tol = dict(rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[0], ref[0], **tol)
    np.testing.assert_allclose(np.zeros_like(ref[1]) if got[1] is None else got[1], ref[1],
                               **tol)


# -- reduced precision: bfloat16 and float16 against torch ----------------------------------------

# Ops whose reduced-precision forms still differ from torch's (the reason says how).
_REDUCED_GAPS: dict = {}

# Ops whose reduced-precision kernels are wrong in torch 2.13 itself: retrograd computes them in
# float32 and rounds once, compared with torch's float32 result rounded (forward only).
_TORCH_REDUCED_BROKEN: dict = {
    ("matrix_exp", "bfloat16"): "torch gives inf (even for 0.1 * I), and inf/nan gradients",
    ("matrix_exp", "float16"): "as in bfloat16",
}

# One sample per op (its first shapes), forward and first order: the float32/float64 test above
# covers the shapes; this one covers the dtypes.
REDUCED_CASES = [(op, op.samples[0]) for op in OPS]
REDUCED_IDS = [op.ids()[0] for op in OPS]


def _reduced_tol(torch, dtype, ref):
    """Tolerances set by the dtype: a few units in the last place, relative to the values."""
    eps = float(torch.finfo(getattr(torch, dtype)).eps)
    scale = max(1.0, float(np.nanmax(np.abs(ref)))) if ref.size else 1.0
    return dict(rtol=8 * eps, atol=8 * eps * scale, equal_nan=True)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("op,shapes", REDUCED_CASES, ids=REDUCED_IDS)
def test_reduced_precision_against_torch(torch, op, shapes, dtype):
    """Values, dtype and first-order gradients in bfloat16 and float16, against torch's CPU
    kernels; ops torch does not support in the dtype are skipped."""
    arrays = [a.astype(np.float32) if a.dtype.kind == "f" else a
              for a in make_inputs(op, shapes, _rng(op, shapes))]

    def leaves(lib):
        d = getattr(lib, dtype)
        out = []
        for a in arrays:
            t = lib.tensor(a)
            if a.dtype.kind == "f":
                t = t.to(d).requires_grad_(op.grad)
            out.append(t)
        return out

    t_in = leaves(torch)
    try:
        ref = op.fn(torch, *t_in)
    except (RuntimeError, NotImplementedError, TypeError) as e:
        pytest.skip(f"torch: {e}"[:120])
    if not isinstance(ref, torch.Tensor) or not ref.is_floating_point():
        pytest.skip("not a floating result")
    if (op.name, dtype) in _REDUCED_GAPS:
        pytest.xfail(_REDUCED_GAPS[op.name, dtype])
    rg_in = leaves(retrograd)
    out = op.fn(retrograd, *rg_in)
    assert out.dtype.name == str(ref.dtype).replace("torch.", "")
    broken = (op.name, dtype) in _TORCH_REDUCED_BROKEN
    if broken:
        ref = op.fn(torch, *[t.detach().float() if t.is_floating_point() else t
                             for t in t_in]).to(ref.dtype)
    want = ref.detach().float().numpy()
    tol = _reduced_tol(torch, dtype, want)
    np.testing.assert_allclose(out.detach().float().numpy(), want, **tol)
    if not (op.grad and ref.requires_grad and out.requires_grad) or broken:
        return
    v = np.random.default_rng(1).standard_normal(ref.shape).astype(np.float32)
    diff = [i for i, t in enumerate(t_in) if t.requires_grad]
    tg = torch.autograd.grad(ref, [t_in[i] for i in diff], torch.tensor(v).to(ref.dtype),
                             allow_unused=True)
    g = retrograd.autograd.grad(out, [rg_in[i] for i in diff],
                                retrograd.tensor(v).to(out.dtype), allow_unused=True)
    for a, b in zip(g, tg):
        if b is None:
            continue
        if a is None:  # no gradient: zeros (as the float32 test reads it)
            a = retrograd.zeros(tuple(b.shape), dtype=getattr(retrograd, dtype))
        assert a.dtype.name == str(b.dtype).replace("torch.", "")
        b = b.float().numpy()
        # Gradients compound roundings (and torch's backward kernels fuse differently).
        tol = _reduced_tol(torch, dtype, b)
        tol = dict(rtol=4 * tol["rtol"], atol=4 * tol["atol"], equal_nan=True)
        np.testing.assert_allclose(a.float().numpy(), b, **tol)


# -- vmap: batching rules against the per-sample loop ---------------------------------------------

@pytest.mark.parametrize("op,shapes", CASES, ids=IDS)
def test_vmap_against_loop(op, shapes):
    """``vmap`` over three samples equals the op run per sample (values, shape, dtype). A call
    whose primitives all have batching rules runs through them; one without falls back to the
    loop (``_vmap.LAST`` says which): a rule that gives the wrong shape or dtype fails here."""
    from retrograd.func import _vmap

    if not shapes:
        pytest.skip("no tensor input to map over")
    rng = _rng(op, shapes)
    samples = [make_inputs(op, shapes, rng) for _ in range(3)]

    def f(*t):
        return op.fn(retrograd, *t)

    try:
        want = [f(*[retrograd.tensor(a) for a in s]) for s in samples]
        want = np.stack([w.detach().numpy() for w in want])
    except Exception as e:  # noqa: BLE001 - ops the loop cannot stack (data-dependent shapes)
        pytest.skip(f"the per-sample loop cannot stack: {e}"[:120])
    batched = [retrograd.tensor(np.stack(a)) for a in zip(*samples)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            got = retrograd.func.vmap(f)(*batched)
        except RuntimeError as e:
            if "randomness" not in str(e):
                raise
            pytest.skip("random ops need vmap(randomness=...)")
    reason = _vmap.LAST["reason"] or ""
    assert "its rule gave" not in reason and "replay error" not in reason, reason
    assert got.shape == want.shape and got.dtype.name == want.dtype.name
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op,shapes", REDUCED_CASES, ids=REDUCED_IDS)
def test_vmap_grad_against_loop(op, shapes):
    """Per-sample gradients, ``vmap(grad(<the op's output summed>))`` over three samples,
    equal ``grad`` per sample: the rules' batched backward (or the loop) gives each sample its
    own gradient."""
    if not op.grad or not shapes:
        pytest.skip("not differentiable" if shapes else "no tensor input to map over")
    rng = _rng(op, shapes)
    samples = [make_inputs(op, shapes, rng) for _ in range(3)]

    def loss(a, *rest):
        out = op.fn(retrograd, a, *rest)
        return (out * out).sum() if out.is_floating_point() else out.sum()

    from retrograd.func import _vmap

    g = retrograd.func.grad(loss)
    batched = [retrograd.tensor(np.stack(a)) for a in zip(*samples)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            got = retrograd.func.vmap(g)(*batched)
        except Exception as e:  # noqa: BLE001 - where grad itself does not apply to the op
            pytest.skip(f"{type(e).__name__}: {e}"[:120])
    reason = _vmap.LAST["reason"] or ""
    assert "its rule gave" not in reason and "replay error" not in reason, reason
    if _vmap.LAST["path"] == "loop":
        return  # grad per sample, stacked: nothing batched to check
    want = np.stack([g(*[retrograd.tensor(a) for a in s]).numpy() for s in samples])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)
