"""Generic checks of every op's forms, over the op table's samples.

For each table entry whose name is also a retrograd function with a Tensor method of the same
name (``exp``, ``add``, ``cumsum`` ...), called plainly on the entry's sample tensors: where
torch accepts that plain call, retrograd's function form, method form and (where torch has one)
in-place form ``x.<name>_()`` must all give torch's result, and the in-place form returns the
same tensor with its version counter bumped by one.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .op_table import make_inputs
from .test_op_table import OPS, _rng


def _forms(op):
    name = op.name
    fn = getattr(retrograd, name, None)
    method = getattr(retrograd.Tensor, name, None)
    if not callable(fn) or not callable(method):
        return None
    return fn, method, getattr(retrograd.Tensor, name + "_", None)


CASES = [(op, op.samples[0]) for op in OPS if _forms(op) is not None]


def test_the_forms_table_is_not_empty():
    names = {op.name for op, _ in CASES}
    assert len(names) >= 60, sorted(names)
    assert {"exp", "add", "mul", "sum", "cumsum", "matmul", "gather"} & names


@pytest.mark.parametrize("op,shapes", CASES, ids=[op.name for op, _ in CASES])
def test_function_method_and_inplace_forms_agree(torch, op, shapes):
    fn, method, inplace = _forms(op)
    arrays = make_inputs(op, shapes, _rng(op, shapes))
    try:
        ref = getattr(torch, op.name)(*[torch.tensor(a) for a in arrays])
    except Exception as e:  # noqa: BLE001 - torch decides what a plain call may be
        pytest.skip(f"torch.{op.name} refuses the plain call: {type(e).__name__}")
    if not isinstance(ref, torch.Tensor):
        pytest.skip(f"torch.{op.name} returns {type(ref).__name__}, not one tensor")
    ref = ref.numpy()
    xs = [retrograd.tensor(a) for a in arrays]
    np.testing.assert_allclose(fn(*xs).numpy(), ref, rtol=1e-12, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(method(*xs).numpy(), ref, rtol=1e-12, atol=1e-12,
                               equal_nan=True)
    t_inplace = getattr(torch.Tensor, op.name + "_", None)
    if t_inplace is None:
        return
    t_target = torch.tensor(arrays[0])
    try:
        t_inplace(t_target, *[torch.tensor(a) for a in arrays[1:]])
    except Exception:  # noqa: BLE001 - e.g. a result that cannot be written in place
        return
    assert inplace is not None, f"retrograd has no Tensor.{op.name}_"
    target = xs[0].clone()
    v0 = target._version
    out = inplace(target, *xs[1:])
    assert out is target
    assert target._version == v0 + 1
    np.testing.assert_allclose(target.numpy(), t_target.numpy(), rtol=1e-12, atol=1e-12,
                               equal_nan=True)
