"""The multi-class margin, triplet and CTC losses (functional and modules) against PyTorch:
values in every reduction, gradients, reprs, state_dict keys and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as rt

from ..oracle import compare_error, run_both

TOL = dict(rtol=1e-7, atol=1e-9)
REDUCTIONS = ["none", "mean", "sum"]
R = np.random.default_rng(0)


def _long(lib, a):
    return lib.tensor(np.asarray(a), dtype=lib.int64)


def _f(lib):
    return lib.nn.functional


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_losses_match_torch(torch, reduction):
    x, y = R.standard_normal((4, 5)), R.standard_normal((4, 5))
    w = np.array([0.5, 1.0, 2.0, 1.5, 0.7])
    cls = [1, 0, 4, 2]
    labels = [[1, 0, -1, 3, 3], [4, -1, 0, 0, 0], [0, 1, 2, 3, 4], [-1, 2, 2, 2, 2]]
    cases = [
        lambda lib, a: _f(lib).multi_margin_loss(a, _long(lib, cls), reduction=reduction),
        lambda lib, a: _f(lib).multi_margin_loss(a, _long(lib, cls), p=2, margin=0.7,
                                                 weight=lib.tensor(w), reduction=reduction),
        lambda lib, a: _f(lib).multi_margin_loss(a[0], _long(lib, 3), reduction=reduction),
        lambda lib, a: _f(lib).multilabel_margin_loss(a, _long(lib, labels), reduction=reduction),
        lambda lib, a: _f(lib).multilabel_margin_loss(a[1], _long(lib, labels[0]),
                                                      reduction=reduction),
        lambda lib, a: _f(lib).multilabel_soft_margin_loss(a, lib.tensor(y).sigmoid(),
                                                           reduction=reduction),
        lambda lib, a: _f(lib).multilabel_soft_margin_loss(a, lib.tensor(y).sigmoid(),
                                                           weight=lib.tensor(w),
                                                           reduction=reduction),
    ]
    for case in cases:
        run_both(torch, lambda a, c=case: c(rt, a), lambda a, c=case: c(torch, a), [x], tol=TOL,
                 grad_fn=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_triplet_losses_match_torch(torch, reduction):
    a, p, n = (R.standard_normal((4, 3)) for _ in range(3))

    def l1(u, v):
        return (u - v).abs().sum(-1)

    cases = [
        lambda lib, *t: _f(lib).triplet_margin_loss(*t, reduction=reduction),
        lambda lib, *t: _f(lib).triplet_margin_loss(*t, margin=2.0, p=1, swap=True,
                                                    reduction=reduction),
        lambda lib, *t: _f(lib).triplet_margin_loss(*(x[0] for x in t), reduction=reduction),
        lambda lib, *t: _f(lib).triplet_margin_with_distance_loss(*t, reduction=reduction),
        lambda lib, *t: _f(lib).triplet_margin_with_distance_loss(
            *t, distance_function=l1, margin=3.0, swap=True, reduction=reduction),
    ]
    for case in cases:
        run_both(torch, lambda *t, c=case: c(rt, *t), lambda *t, c=case: c(torch, *t),
                 [a, p, n], tol=TOL)


CTC = [  # (T, N, C, S, target lengths, input lengths, zero_infinity)
    (6, 2, 4, 3, [3, 2], [6, 5], False),
    (6, 2, 4, 3, [3, 0], [6, 4], False),
    (2, 2, 4, 3, [3, 2], [2, 2], True),
    (7, 3, 5, 4, [4, 1, 2], [7, 3, 6], False),
]


CTC_CASES = [(c, r, "float64") for c in CTC for r in REDUCTIONS] + [(CTC[3], "mean", "float32")]


@pytest.mark.parametrize("case,reduction,dtype", CTC_CASES,
                         ids=[f"{i}" for i in range(len(CTC_CASES))])
def test_ctc_loss_matches_torch(torch, case, reduction, dtype):
    t, n, c, s, tl, il, zi = case
    x = R.standard_normal((t, n, c)).astype(dtype)
    tg = R.integers(1, c, (n, s))
    tg[-1, :2] = 1  # a repeated label needs a blank between
    tol = TOL if dtype == "float64" else dict(rtol=1e-5, atol=1e-5)

    def call(lib, concat=False, as_tensor=False):
        def f(lp):
            tgt = (_long(lib, np.concatenate([tg[i, :tl[i]] for i in range(n)])) if concat
                   else _long(lib, tg))
            lens = (_long(lib, il), _long(lib, tl)) if as_tensor else (il, tuple(tl))
            return _f(lib).ctc_loss(lp.log_softmax(2), tgt, *lens, reduction=reduction,
                                    zero_infinity=zi)
        return f

    run_both(torch, call(rt), call(torch), [x], tol=tol)
    run_both(torch, call(rt, True, True), call(torch, True, True), [x], tol=tol)
    # the raw gradient with respect to the log-probabilities is PyTorch's too
    raw = [lambda lp, lib=lib: _f(lib).ctc_loss(lp, _long(lib, tg), il, tl, reduction=reduction,
                                                zero_infinity=zi) for lib in (rt, torch)]
    run_both(torch, raw[0], raw[1], [x], tol=tol)


def test_ctc_loss_unbatched_matches_torch(torch):
    x = R.standard_normal((5, 4))
    fns = [lambda a, lib=lib: _f(lib).ctc_loss(a.log_softmax(1), _long(lib, [1, 2, 2]),
                                               _long(lib, 5), _long(lib, 3), reduction="none")
           for lib in (rt, torch)]
    run_both(torch, fns[0], fns[1], [x], tol=TOL)


MODULES = [
    ("MultiMarginLoss", {}, ("p", "margin", "reduction")),
    ("MultiMarginLoss", dict(p=2, margin=0.5, weight=[1.0, 2.0], reduction="sum"), ()),
    ("MultiLabelMarginLoss", dict(reduction="none"), ("reduction",)),
    ("MultiLabelSoftMarginLoss", dict(weight=[1.0, 0.5]), ("reduction",)),
    ("TripletMarginLoss", dict(margin=2.0, p=1.0, swap=True), ("margin", "p", "eps", "swap")),
    ("TripletMarginWithDistanceLoss", dict(margin=0.5), ("margin", "swap", "reduction")),
    ("CTCLoss", dict(blank=2, zero_infinity=True), ("blank", "zero_infinity", "reduction")),
    ("NLLLoss2d", dict(ignore_index=1), ("ignore_index", "reduction")),
]


@pytest.mark.parametrize("case", MODULES, ids=[m[0] for m in MODULES])
def test_loss_modules_match_torch(torch, case):
    name, kw, attrs = case
    ms = []
    for lib in (torch, rt):
        k = {a: lib.tensor(v) if a == "weight" else v for a, v in kw.items()}
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ms.append(getattr(lib.nn, name)(**k))
        ms.append([str(m.message) for m in w])
    tm, tw, rm, rw = ms
    assert rw == tw
    assert repr(rm) == repr(tm)
    assert list(rm.state_dict()) == list(tm.state_dict())
    for a in attrs:
        assert getattr(rm, a) == getattr(tm, a), a


def test_loss_modules_forward_match_torch(torch):
    x, y = R.standard_normal((3, 2)), R.standard_normal((3, 2))
    pairs = [
        (lambda lib: lib.nn.MultiMarginLoss(weight=lib.tensor([1.0, 2.0], dtype=lib.float64)),
         lambda lib, m, a: m(a, _long(lib, [1, 0, 1]))),
        (lambda lib: lib.nn.MultiLabelMarginLoss(),
         lambda lib, m, a: m(a, _long(lib, [[1, -1], [0, 1], [1, 0]]))),
        (lambda lib: lib.nn.MultiLabelSoftMarginLoss(reduction="sum"),
         lambda lib, m, a: m(a, lib.tensor(y).sigmoid())),
        (lambda lib: lib.nn.TripletMarginLoss(swap=True),
         lambda lib, m, a: m(a, a * 2 + 1, lib.tensor(y))),
        (lambda lib: lib.nn.TripletMarginWithDistanceLoss(
            distance_function=lib.nn.PairwiseDistance(p=1.0)),
         lambda lib, m, a: m(a, a.flip(0), lib.tensor(y))),
        (lambda lib: lib.nn.CTCLoss(blank=1),
         lambda lib, m, a: m(a.reshape(3, 1, 2).log_softmax(2), _long(lib, [[0]]), [3], [1])),
    ]
    for make, call in pairs:
        rm, tm = make(rt), make(torch)
        run_both(torch, lambda a, m=rm, c=call: c(rt, m, a), lambda a, m=tm, c=call: c(torch, m, a),
                 [x], tol=TOL, grad_fn=False)  # the multi-margin kernels are composites here


def test_loss_errors_match_torch():
    x = lambda lib: lib.ones(3, 4)  # noqa: E731
    cases = [
        lambda lib: _f(lib).multi_margin_loss(x(lib), _long(lib, [1, 0, 4])),
        lambda lib: _f(lib).multi_margin_loss(x(lib), _long(lib, [1, 0])),
        lambda lib: _f(lib).multi_margin_loss(x(lib), _long(lib, [1, 0, 1]), p=3),
        lambda lib: _f(lib).multi_margin_loss(x(lib), _long(lib, [1, 0, 1]),
                                              weight=lib.ones(4, dtype=lib.float64)),
        lambda lib: _f(lib).multi_margin_loss(x(lib), lib.tensor([1.0, 0.0, 1.0])),
        lambda lib: _f(lib).multi_margin_loss(x(lib).unsqueeze(0), _long(lib, [1, 0, 1])),
        lambda lib: _f(lib).multilabel_margin_loss(x(lib), _long(lib, [[1, 0, -1, 2]] * 2)),
        lambda lib: _f(lib).multilabel_margin_loss(x(lib), _long(lib, [[1, 0, -1, 4]] * 3)),
        lambda lib: _f(lib).multilabel_soft_margin_loss(x(lib), x(lib), reduction="bad"),
        lambda lib: _f(lib).triplet_margin_loss(x(lib), x(lib), x(lib)[0]),
        lambda lib: _f(lib).triplet_margin_with_distance_loss(x(lib), x(lib), x(lib), margin=0),
        lambda lib: lib.nn.TripletMarginLoss(margin=-1.0),
        lambda lib: lib.nn.MultiMarginLoss(weight=lib.ones(2, 2)),
        lambda lib: _f(lib).ctc_loss(lib.ones(6, 2, 4), _long(lib, [[1, 2]] * 2), [7, 5], [2, 2]),
        lambda lib: _f(lib).ctc_loss(lib.ones(6, 2, 4), _long(lib, [[1, 2]] * 2), [6, 5], [3, 2]),
        lambda lib: _f(lib).ctc_loss(lib.ones(6, 2, 4), _long(lib, [[1, 2]] * 2), [6], [2, 2]),
        lambda lib: _f(lib).ctc_loss(lib.ones(6, 2, 4), _long(lib, [[1, 2]] * 2), [6, 6], [2, 2],
                                     blank=4),
    ]
    for case in cases:
        compare_error(case)
