"""The layers added for breadth, each against PyTorch from one table: construction defaults and
attributes, repr, state_dict keys, forward values and gradients (weights copied from torch)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rt

from ..oracle import compare_error, copy_state, run_both

TOL = dict(rtol=1e-6, atol=1e-8)

# (class name, constructor args, constructor kwargs, input shapes, attributes to compare)
LAYERS = [
    ("PixelShuffle", (2,), {}, [(2, 8, 2, 3)], ("upscale_factor",)),
    ("PixelShuffle", (3,), {}, [(9, 1, 2)], ()),
    ("PixelUnshuffle", (2,), {}, [(2, 2, 4, 6)], ("downscale_factor",)),
    ("ChannelShuffle", (3,), {}, [(2, 6, 2, 2)], ("groups",)),
    ("ChannelShuffle", (2,), {}, [(2, 4, 3)], ()),
    ("CosineSimilarity", (), {}, [(3, 4), (3, 4)], ("dim", "eps")),
    ("CosineSimilarity", (), dict(dim=0, eps=1e-3), [(3, 4), (1, 4)], ()),
    ("PairwiseDistance", (), {}, [(3, 4), (3, 4)], ("norm", "eps", "keepdim")),
    ("PairwiseDistance", (1.0,), dict(keepdim=True), [(3, 4), (3, 4)], ()),
    ("LocalResponseNorm", (3,), {}, [(2, 5, 3)], ("size", "alpha", "beta", "k")),
    ("LocalResponseNorm", (2,), dict(alpha=0.5, beta=0.5, k=2.0), [(2, 4, 3, 2)], ()),
    ("LocalResponseNorm", (4,), dict(alpha=0.3), [(1, 5, 2, 2, 2)], ()),
    ("CrossMapLRN2d", (3,), dict(alpha=0.5), [(2, 6, 2, 2)], ("size", "alpha", "beta", "k")),
    ("CrossMapLRN2d", (5,), dict(alpha=0.9, k=2), [(1, 3, 2, 2)], ()),
    ("InstanceNorm3d", (2,), dict(affine=True), [(2, 2, 2, 3, 3)], ("eps", "momentum")),
]


def _ids(case):
    return f"{case[0]}-{'x'.join(map(str, case[3][0]))}"


@pytest.mark.parametrize("case", LAYERS, ids=[_ids(c) for c in LAYERS])
def test_layer_matches_torch(torch, case):
    name, args, kwargs, shapes, attrs = case
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(*args, **kwargs).double()
    rm = getattr(rt.nn, name)(*args, **kwargs).double()
    assert repr(rm) == repr(tm)
    assert list(rm.state_dict()) == list(tm.state_dict())
    for a in attrs:
        assert getattr(rm, a) == getattr(tm, a), a
    copy_state(tm, rm)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s) for s in shapes]
    # CrossMapLRN2d's torch backward is Lua Torch's (not the derivative of its own forward):
    # values only there.
    grads = name != "CrossMapLRN2d"
    run_both(torch, rm, tm, xs, tol=TOL, grad_fn=False, requires_grad=grads,
             modules=(rm, tm) if grads else None)


def test_layer_errors_match_torch():
    compare_error(lambda lib: lib.nn.PixelShuffle(2)(lib.ones(3, 2, 2)))
    compare_error(lambda lib: lib.nn.PixelShuffle(2)(lib.ones(2, 2)))
    compare_error(lambda lib: lib.nn.PixelUnshuffle(2)(lib.ones(1, 3, 4)))
    compare_error(lambda lib: lib.nn.PixelUnshuffle(2)(lib.ones(1, 4, 3)))
    compare_error(lambda lib: lib.nn.PixelUnshuffle(0)(lib.ones(1, 4, 3)))
    compare_error(lambda lib: lib.nn.ChannelShuffle(3)(lib.ones(2, 4, 3)))
    compare_error(lambda lib: lib.nn.ChannelShuffle(2)(lib.ones(2, 4)))
    compare_error(lambda lib: lib.nn.LocalResponseNorm(2)(lib.ones(2, 4)))
    compare_error(lambda lib: lib.nn.CrossMapLRN2d(2)(lib.ones(2, 4, 2)))
    compare_error(lambda lib: lib.nn.InstanceNorm3d(2)(lib.ones(2, 4, 2)))


def test_adaptive_log_softmax_matches_torch(torch):
    for kw in (dict(div_value=2.0), dict(div_value=1.5, head_bias=True)):
        torch.manual_seed(0)
        tm = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], **kw).double()
        rm = rt.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], **kw).double()
        assert repr(rm) == repr(tm)
        assert list(rm.state_dict()) == list(tm.state_dict())
        copy_state(tm, rm)
        rng = np.random.default_rng(1)
        x = rng.standard_normal((5, 8))
        fns = [lambda a, m=m, lib=lib: tuple(m(a, lib.tensor([0, 4, 9, 2, 7]))) + (m.log_prob(a),)
               for m, lib in ((rm, rt), (tm, torch))]
        run_both(torch, fns[0], fns[1], [x], tol=TOL, grad_fn=False, modules=(rm, tm))
        fns = [lambda a, m=m, lib=lib: m(a, lib.tensor(3)) for m, lib in ((rm, rt), (tm, torch))]
        run_both(torch, fns[0], fns[1], [x[0]], tol=TOL, grad_fn=False)
        np.testing.assert_array_equal(rm.predict(rt.tensor(x)).numpy(),
                                      tm.predict(torch.tensor(x)).numpy())
    compare_error(lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 3]))
    compare_error(lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])(
        lib.ones(2, 8), lib.tensor([1, 10])))


def test_container_and_sync_batch_norm_match_torch(torch):
    import warnings

    msgs = []
    for lib in (torch, rt):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            c = lib.nn.Container(fc=lib.nn.Linear(2, 3))
        msgs.append(([str(m.message) for m in w], [m.category.__name__ for m in w], repr(c),
                     list(c.state_dict())))
    assert msgs[0] == msgs[1]
    torch.manual_seed(0)
    tm = torch.nn.SyncBatchNorm(3, momentum=0.3).double()
    rm = rt.nn.SyncBatchNorm(3, momentum=0.3).double()
    assert repr(rm) == repr(tm) and list(rm.state_dict()) == list(tm.state_dict())
    x = np.random.default_rng(2).standard_normal((4, 3, 2))
    run_both(torch, rm, tm, [x], tol=TOL, grad_fn=False, modules=(rm, tm))
    np.testing.assert_allclose(rm.running_var.numpy(), tm.running_var.numpy())
    nets = [lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3)) for lib in (torch, rt)]
    conv = [lib.nn.SyncBatchNorm.convert_sync_batchnorm(n) for lib, n in zip((torch, rt), nets)]
    assert repr(conv[1]) == repr(conv[0]) and conv[1][1].weight is nets[1][1].weight
    compare_error(lambda lib: lib.nn.SyncBatchNorm(3)(lib.ones(3)))


def test_conv_tbc_and_linear_cross_entropy_match_torch(torch):
    rng = np.random.default_rng(3)
    fns = [lambda x, w, b, lib=lib: lib.nn.functional.conv_tbc(x, w, b, 1) for lib in (rt, torch)]
    run_both(torch, fns[0], fns[1], [rng.standard_normal(s) for s in ((5, 2, 3), (2, 3, 4), (4,))],
             tol=TOL, grad_fn=False)
    tgt = rng.integers(0, 5, (4, 2))
    for kw in (dict(label_smoothing=0.1), dict(reduction="none", ignore_index=2)):
        fns = [lambda x, w, b, lib=lib, kw=kw: lib.nn.functional.linear_cross_entropy(
            x, w, lib.tensor(tgt), linear_bias=b, **kw) for lib in (rt, torch)]
        run_both(torch, fns[0], fns[1],
                 [rng.standard_normal(s) for s in ((4, 3), (5, 2, 3), (5, 2))], tol=TOL,
                 grad_fn=False)
    for kw in (dict(), dict(out_features=(2,), bias=True, label_smoothing=0.2,
                            options=None)):
        torch.manual_seed(0)
        tm = torch.nn.LinearCrossEntropyLoss(3, 5, **kw).double()
        rm = rt.nn.LinearCrossEntropyLoss(3, 5, **kw).double()
        assert repr(rm) == repr(tm) and list(rm.state_dict()) == list(tm.state_dict())
        copy_state(tm, rm)
        t = tgt if kw else tgt[:, 0]
        fns = [lambda x, m=m, lib=lib, t=t: m(x, lib.tensor(t)) for m, lib in ((rm, rt),
                                                                             (tm, torch))]
        run_both(torch, fns[0], fns[1], [rng.standard_normal((4, 3))], tol=TOL, grad_fn=False,
                 modules=(rm, tm))
    assert repr(rt.nn.LinearCrossEntropyOptions()) == repr(torch.nn.LinearCrossEntropyOptions())
