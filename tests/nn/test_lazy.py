"""Lazy layers and uninitialized parameters against PyTorch: reprs and state_dict keys before
and after the first forward, the class they become, the inferred sizes, and the forward with
weights copied from torch once materialized."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rt

from ..oracle import compare_error, copy_state, run_both

TOL = dict(rtol=1e-7, atol=1e-9)
R = np.random.default_rng(0)

CASES = [
    ("LazyLinear", (4,), {}, (2, 3)),
    ("LazyLinear", (4,), dict(bias=False), (2, 5, 3)),
    ("LazyConv1d", (4, 3), dict(padding=1, groups=2), (2, 2, 6)),
    ("LazyConv2d", (4, 3), dict(bias=False), (3, 5, 5)),
    ("LazyConv3d", (2, 2), {}, (1, 2, 3, 3, 3)),
    ("LazyConvTranspose1d", (4, 3), dict(stride=2), (2, 2, 4)),
    ("LazyConvTranspose2d", (4, 2), dict(groups=2), (1, 2, 3, 3)),
    ("LazyConvTranspose3d", (2, 2), {}, (1, 2, 2, 2, 2)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm2d", (), dict(affine=False, momentum=None), (2, 3, 2, 2)),
    ("LazyBatchNorm3d", (), dict(track_running_stats=False), (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 4)),
    ("LazyInstanceNorm2d", (), dict(affine=False, track_running_stats=False), (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {}, (2, 3, 2, 2, 2)),
]


@pytest.mark.filterwarnings("ignore:input's size at dim=1 does not match num_features")
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_lazy_layer_matches_torch(torch, case):
    name, args, kw, shape = case
    tm = getattr(torch.nn, name)(*args, **kw)
    rm = getattr(rt.nn, name)(*args, **kw)
    assert repr(rm) == repr(tm)
    assert list(rm.state_dict()) == list(tm.state_dict())
    assert [type(p).__name__ for p in rm.parameters()] == \
        [type(p).__name__ for p in tm.parameters()]
    x = R.standard_normal(shape).astype(np.float32)
    tm(torch.tensor(x))
    rm(rt.tensor(x))
    assert type(rm).__name__ == type(tm).__name__
    assert repr(rm) == repr(tm)
    assert list(rm.state_dict()) == list(tm.state_dict())
    for (k, a), b in zip(tm.state_dict().items(), rm.state_dict().values()):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype)[6:] == b.dtype.name, k
    copy_state(tm, rm)
    run_both(torch, rm, tm, [x], tol=dict(rtol=1e-5, atol=1e-6), grad_fn=False,
             modules=(rm, tm))


def test_uninitialized_parameter(torch):
    for lib in (torch, rt):
        p = lib.nn.UninitializedParameter()
        assert repr(p) == "<UninitializedParameter>" and isinstance(p, lib.nn.Parameter)
        p.materialize((2, 3), dtype=lib.float64)
        assert type(p) is lib.nn.Parameter and tuple(p.shape) == (2, 3) and p.requires_grad
        b = lib.nn.UninitializedBuffer()
        assert repr(b) == "<UninitializedBuffer>"
        b.materialize((4,))
        assert type(b) is lib.Tensor and tuple(b.shape) == (4,)
    compare_error(lambda lib: lib.nn.UninitializedParameter().shape)
    compare_error(lambda lib: lib.nn.LazyConv2d(4, 3, groups=2)(lib.ones(1, 3, 4, 4)))
