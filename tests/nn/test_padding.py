"""The padding layers (``ZeroPad*``, ``ConstantPad*``, ``ReflectionPad*``, ``ReplicationPad*``,
``CircularPad*``) against PyTorch: reprs, attributes, values, gradients and grad_fn names."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rt

from ..oracle import compare_error, run_both

TOL = dict(rtol=1e-6, atol=1e-7)
KINDS = ["ZeroPad", "ConstantPad", "ReflectionPad", "ReplicationPad", "CircularPad"]
PADS = {1: [2, (1, 0)], 2: [1, (1, 2, 0, 1)], 3: [1, (1, 0, 2, 1, 0, 1)]}


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("kind", KINDS)
def test_pad_layer_matches_torch(torch, kind, nd):
    name = f"{kind}{nd}d"
    rng = np.random.default_rng(nd)
    for padding in PADS[nd]:
        extra = (1.5,) if kind == "ConstantPad" else ()
        tm = getattr(torch.nn, name)(padding, *extra)
        rm = getattr(rt.nn, name)(padding, *extra)
        assert repr(rm) == repr(tm)
        assert rm.padding == tm.padding and getattr(rm, "value", None) == getattr(tm, "value",
                                                                                   None)
        assert list(rm.state_dict()) == []
        for batch in ((2,), ()):
            x = rng.standard_normal(batch + (2,) + (3,) * nd)
            run_both(torch, rm, tm, [x], tol=TOL)


def test_pad_layer_errors_match_torch():
    compare_error(lambda lib: lib.nn.CircularPad2d(1)(lib.ones(3, 3)))
    compare_error(lambda lib: lib.nn.CircularPad1d(1)(lib.ones(1, 1, 3, 3)))
    compare_error(lambda lib: lib.nn.ReflectionPad1d(3)(lib.ones(1, 3)))
