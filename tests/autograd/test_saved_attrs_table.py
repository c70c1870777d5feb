"""``grad_fn._saved_<name>`` over the op table: for every op (its first sample), each node of
retrograd's graph that has a torch twin (same grad_fn name, same count) holds torch's value
under each name of ``saved_attrs._FROM_TABLE`` (the names found by this comparison).

(The older names are checked by tests/autograd/test_saved_hooks.py on chosen cases: some keep
a wrapped dim where torch keeps the dim as given, or a float where torch keeps an int.)"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.autograd.saved_attrs import _FROM_TABLE

from ..ops.op_table import make_inputs
from ..ops.test_op_table import OPS


def _nodes(t):
    seen, stack = [], [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.append(n)
        stack += [m for m, _ in n.next_functions]
    return seen


def _same(torch, a, b) -> bool:
    if isinstance(b, torch.Tensor):
        return isinstance(a, retrograd.Tensor) and tuple(a.shape) == tuple(b.shape) and \
            np.allclose(a.detach().numpy().astype(float), b.detach().numpy().astype(float),
                        equal_nan=True)
    if b is None or isinstance(a, retrograd.Tensor):
        return a is None and b is None
    if isinstance(b, (list, tuple)):
        return isinstance(a, (list, tuple)) and len(a) == len(b) and \
            all(_same(torch, x, y) for x, y in zip(a, b))
    if isinstance(b, float):
        return isinstance(a, (int, float)) and (a == b or abs(a - b) <= 1e-9 * max(1.0, abs(b)))
    return type(a) is type(b) and a == b


def _signed(v):
    """torch's uint64 of a negative dim (alone or in a tuple) as the int it was given as."""
    if isinstance(v, int) and not isinstance(v, bool) and v >= 2 ** 63:
        return v - 2 ** 64
    if isinstance(v, tuple):
        return tuple(_signed(x) for x in v)
    return v


def _provided(node, attr) -> bool:
    try:
        return hasattr(node, attr)
    except RuntimeError:  # freed, or a version error: provided
        return True


CASES = [op for op in OPS if op.grad]


@pytest.mark.parametrize("op", CASES, ids=[op.name for op in CASES])
def test_saved_attributes_hold_torchs_values(torch, op):
    arrays = make_inputs(op, op.samples[0], np.random.default_rng(0))
    t_in = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    r_in = [retrograd.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    ref, out = op.fn(torch, *t_in), op.fn(retrograd, *r_in)
    if isinstance(ref, (tuple, list)):
        ref, out = ref[0], out[0]
    if getattr(ref, "grad_fn", None) is None or out.grad_fn is None:
        pytest.skip("no graph")
    ours: dict = {}
    for n in _nodes(out):
        ours.setdefault(n.name(), []).append(n)
    theirs: dict = {}
    for n in _nodes(ref):
        theirs.setdefault(n.name(), []).append(n)
    wrong = []
    for name, tnodes in theirs.items():
        rnodes = ours.get(name, [])
        if len(rnodes) != len(tnodes) or name not in _FROM_TABLE:
            continue
        for tn, rn in zip(tnodes, rnodes):
            for attr in ("_saved_" + a for a in _FROM_TABLE[name]):
                if not _provided(rn, attr):
                    wrong.append(f"{name}.{attr}: missing")
                    continue
                want = getattr(tn, attr)
                want = _signed(want)
                try:
                    got = getattr(rn, attr)
                except RuntimeError as e:
                    got = e
                if not _same(torch, got, want):
                    wrong.append(f"{name}.{attr}: {got!r} vs torch's {want!r}")
    assert not wrong, "\n".join(wrong)


def test_add_alpha(torch):
    for lib in (retrograd, torch):
        x = lib.tensor([1.0], requires_grad=True)
        assert lib.add(x, x, alpha=2.5).grad_fn._saved_alpha == 2.5
        assert lib.sub(x, x, alpha=2).grad_fn._saved_alpha == 2
