"""Property test: random chains of ops on random broadcastable shapes agree with torch.

Hypothesis draws a few input shapes that broadcast together and then a program: a chain of
steps, each applying a unary op (tanh, sigmoid, exp of clamped values, a reduction over a dim,
transpose, unsqueeze/squeeze, ...) or a binary op (+, -, *, /, matmul) to values computed so far.
Each step is chosen from what the current shapes allow, and recorded, so that the same program
then runs in torch. The two must agree on the output's values, dtype and shape and on the
gradients with respect to every input for a random upstream gradient (and, for some programs,
on the second-order gradient of ``<grad, w>``).
"""

from __future__ import annotations

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import retrograd  # noqa: E402

MAX_DIMS = 4


# -- the ops -----------------------------------------------------------------------------------
# Each unary op: (name, applies(shape) -> bool, fn(lib, x, k)) where ``k`` is a drawn integer
# the op may use to pick a dim. Binary ops take (lib, a, b) and apply when ``applies(sa, sb)``.
def _dim(shape, k):
    return k % len(shape) - len(shape) if k % 2 else k % len(shape)  # negative dims too


def _squeezable(shape):
    return [i for i, s in enumerate(shape) if s == 1]


UNARY = [
    ("neg", lambda s: True, lambda lib, x, k: -x),
    ("tanh", lambda s: True, lambda lib, x, k: lib.tanh(x)),
    ("sigmoid", lambda s: True, lambda lib, x, k: x.sigmoid()),
    ("exp_clamped", lambda s: True, lambda lib, x, k: lib.exp(x.clamp(-3.0, 3.0))),
    ("affine", lambda s: True, lambda lib, x, k: 0.5 * x + 1.25),
    ("square", lambda s: True, lambda lib, x, k: x * x),
    ("sum_dim_keepdim", lambda s: len(s) >= 1,
     lambda lib, x, k: x.sum(dim=_dim(x.shape, k), keepdim=True)),
    ("sum_dim", lambda s: len(s) >= 1, lambda lib, x, k: lib.sum(x, _dim(x.shape, k))),
    ("sum", lambda s: True, lambda lib, x, k: x.sum()),
    ("mean", lambda s: True, lambda lib, x, k: x.mean()),
    ("mean_dim", lambda s: len(s) >= 1,
     lambda lib, x, k: x.mean(_dim(x.shape, k), keepdim=bool(k % 3 == 0))),
    ("transpose", lambda s: len(s) >= 2,
     lambda lib, x, k: x.transpose(_dim(x.shape, k), _dim(x.shape, k // 3))),
    ("mT", lambda s: len(s) >= 2, lambda lib, x, k: x.mT),
    ("unsqueeze", lambda s: len(s) < MAX_DIMS,
     lambda lib, x, k: x.unsqueeze(k % (x.dim() + 1))),
    ("squeeze_dim", lambda s: bool(_squeezable(s)),
     lambda lib, x, k: x.squeeze(_squeezable(x.shape)[k % len(_squeezable(x.shape))])),
    ("squeeze", lambda s: True, lambda lib, x, k: x.squeeze()),
    ("matmul_self", lambda s: len(s) >= 1,
     lambda lib, x, k: x @ x.mT if x.dim() >= 2 else x @ x),
]


def _broadcasts(sa, sb):
    try:
        np.broadcast_shapes(sa, sb)
        return True
    except ValueError:
        return False


def _matmul_ok(sa, sb):
    if not sa or not sb:
        return False
    k_b = sb[-2] if len(sb) >= 2 else sb[0]
    if sa[-1] != k_b:
        return False
    return len(sa) < 3 or len(sb) < 3 or _broadcasts(sa[:-2], sb[:-2])


BINARY = [
    ("add", _broadcasts, lambda lib, a, b: a + b),
    ("sub", _broadcasts, lambda lib, a, b: lib.sub(a, b)),
    ("mul", _broadcasts, lambda lib, a, b: a * b),
    # the denominator kept away from 0
    ("div", _broadcasts, lambda lib, a, b: a / (b.abs() + 0.5)),
    ("matmul", _matmul_ok, lambda lib, a, b: lib.matmul(a, b)),
    ("matmul_t", lambda sa, sb: _matmul_ok(sa, sb[::-1]) and len(sb) == 2,
     lambda lib, a, b: a @ b.t()),
]
UNARY_BY_NAME = {name: fn for name, _, fn in UNARY}
BINARY_BY_NAME = {name: fn for name, _, fn in BINARY}


# -- drawing a program -------------------------------------------------------------------------
@st.composite
def programs(draw):
    """Shapes, dtypes and seeds come from Hypothesis (so they shrink); the chain of steps is
    planned by a NumPy generator seeded from a drawn integer, which covers the ops evenly
    where Hypothesis' own choices lean towards the first option and the shortest chain."""
    n_in = draw(st.integers(1, 3))
    shapes = draw(hnp.mutually_broadcastable_shapes(
        num_shapes=n_in, min_dims=0, max_dims=3, min_side=1, max_side=3)).input_shapes
    dtypes = draw(st.lists(st.sampled_from(["float64", "float64", "float32"]),
                           min_size=n_in, max_size=n_in))
    seed = draw(st.integers(0, 2**32 - 1))
    plan = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    shapes_now = list(shapes)
    steps = []
    for _ in range(int(plan.integers(1, 7))):
        # prefer recent values, so that chains grow deep
        i = len(shapes_now) - 1 - min(int(plan.geometric(0.6)) - 1, len(shapes_now) - 1)
        sa = shapes_now[i]
        partners = [j for j in range(len(shapes_now))
                    if any(ok(sa, shapes_now[j]) for _, ok, _ in BINARY)]
        if partners and plan.random() < 0.4:
            j = int(plan.choice(partners))
            names = [n for n, ok, _ in BINARY if ok(sa, shapes_now[j])]
            name = str(plan.choice(names))
            steps.append(("binary", name, i, j, 0))
            out_shape = _shape_of(BINARY_BY_NAME[name], sa, shapes_now[j])
        else:
            names = [n for n, ok, _ in UNARY if ok(sa)]
            name = str(plan.choice(names))
            k = int(plan.integers(0, 12))
            steps.append(("unary", name, i, None, k))
            out_shape = _shape_of(lambda lib, x, f=UNARY_BY_NAME[name], k=k: f(lib, x, k), sa)
        shapes_now.append(out_shape)
    second_order = plan.random() < 0.4
    return shapes, dtypes, seed, steps, second_order


def _shape_of(fn, *shapes):
    """The output shape of ``fn`` on zero arrays of these shapes (retrograd, no graph)."""
    with retrograd.no_grad():
        out = fn(retrograd, *[retrograd.zeros(s, dtype=retrograd.float64) for s in shapes])
    return tuple(out.shape)


def run_program(lib, inputs, steps):
    values = list(inputs)
    for kind, name, i, j, k in steps:
        if kind == "unary":
            values.append(UNARY_BY_NAME[name](lib, values[i], k))
        else:
            values.append(BINARY_BY_NAME[name](lib, values[i], values[j]))
    return values[-1]


# -- comparing ---------------------------------------------------------------------------------
def _np(t):
    return t.detach().numpy()


def _close(got, want, low_precision, what):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, what
    rtol = 2e-4 if low_precision else 1e-9
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=what)


def _grads(lib, out, inputs, grad_out, **kw):
    return lib.autograd.grad(out, inputs, grad_out, allow_unused=True, **kw)


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_random_op_chains_match_torch(program):
    shapes, dtypes, seed, steps, second_order = program
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-2, 2, size=s).astype(d) for s, d in zip(shapes, dtypes)]
    low = "float32" in dtypes
    rg_in = [retrograd.tensor(a, requires_grad=True) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = run_program(retrograd, rg_in, steps)
    ref = run_program(torch, t_in, steps)

    what = f"{steps} on {shapes} {dtypes}"
    assert tuple(out.shape) == tuple(ref.shape), what
    assert out.dtype.name == str(ref.dtype).replace("torch.", ""), what
    _close(_np(out), _np(ref), low, "forward: " + what)

    v = rng.standard_normal(tuple(ref.shape)).astype(str(ref.dtype).replace("torch.", ""))
    g = _grads(retrograd, out, rg_in, retrograd.tensor(v), create_graph=second_order)
    tg = _grads(torch, ref, t_in, torch.tensor(v), create_graph=second_order)
    for a, b in zip(g, tg):
        assert (a is None) == (b is None), "grad None: " + what
        if b is not None:
            assert a.dtype.name == str(b.dtype).replace("torch.", ""), what
            _close(_np(a), _np(b), low, "grad: " + what)
    if not second_order:
        return

    ws = [rng.standard_normal(x.shape) for x in arrays]
    rg_s = [(gi * retrograd.tensor(w)).sum() for gi, w in zip(g, ws) if gi is not None]
    t_s = [(gi * torch.tensor(w)).sum() for gi, w in zip(tg, ws) if gi is not None]
    rg_s = [s for s in rg_s if s.requires_grad]
    t_s = [s for s in t_s if s.requires_grad]
    assert len(rg_s) == len(t_s), "second order graph: " + what
    if not t_s:
        return
    g2 = retrograd.autograd.grad(sum(rg_s), rg_in, allow_unused=True)
    tg2 = torch.autograd.grad(sum(t_s), t_in, allow_unused=True)
    for a, b, x in zip(g2, tg2, arrays):
        a = np.zeros(x.shape) if a is None else _np(a)
        b = np.zeros(x.shape) if b is None else _np(b)
        _close(a, b, low, "second order: " + what)
