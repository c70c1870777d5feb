"""Tests for ``retrograd.optim.lr_scheduler``: each scheduler's learning-rate sequence (and the
momentum it cycles) must equal PyTorch's exactly, float for float."""

from __future__ import annotations

import warnings

import pytest

import retrograd as rg
import retrograd.optim  # noqa: F401 - binds rg.optim


def make_optimizer(lib, kind="sgd"):
    a, b = lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.3}]
    if kind == "adam":
        return lib.optim.Adam(groups, lr=0.1)
    return lib.optim.SGD(groups, lr=0.1, momentum=0.9)


def _sched(lib, opt, name, kwargs):
    S = lib.optim.lr_scheduler
    if name == "SequentialLR":
        first = S.LinearLR(opt, start_factor=0.1, total_iters=4)
        second = S.CosineAnnealingLR(opt, T_max=10, eta_min=0.001)
        third = S.ExponentialLR(opt, gamma=0.8)
        return S.SequentialLR(opt, [first, second, third], milestones=[5, 15])
    if name == "ChainedScheduler":
        return S.ChainedScheduler([S.StepLR(opt, 3, 0.5), S.ExponentialLR(opt, 0.95)])
    return getattr(S, name)(opt, **kwargs)


def lr_sequence(lib, name, kwargs, steps=40, kind="sgd"):
    opt = make_optimizer(lib, kind)
    sched = _sched(lib, opt, name, kwargs)
    seq = []
    for _ in range(steps):
        row = [sched.get_last_lr(), [g["lr"] for g in opt.param_groups]]
        if "momentum" in opt.defaults:
            row.append([g["momentum"] for g in opt.param_groups])
        else:
            row.append([g["betas"] for g in opt.param_groups])
        seq.append(row)
        opt.step()
        sched.step()
    return seq


def _half(epoch):
    return 0.5 ** (epoch // 3)


CASES = [
    ("StepLR", {"step_size": 3}),
    ("StepLR", {"step_size": 4, "gamma": 0.7}),
    ("MultiStepLR", {"milestones": [2, 5, 5, 11], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.93}),
    ("CosineAnnealingLR", {"T_max": 10}),
    ("CosineAnnealingLR", {"T_max": 7, "eta_min": 0.01}),
    ("LambdaLR", {"lr_lambda": _half}),
    ("LambdaLR", {"lr_lambda": [lambda e: 1.0 / (e + 1), lambda e: 0.9**e]}),
    ("MultiplicativeLR", {"lr_lambda": lambda e: 0.95}),
    ("LinearLR", {}),
    ("LinearLR", {"start_factor": 0.25, "end_factor": 0.5, "total_iters": 9}),
    ("ConstantLR", {"factor": 0.5, "total_iters": 4}),
    ("PolynomialLR", {"total_iters": 12, "power": 2.0}),
    ("OneCycleLR", {"max_lr": 1.0, "total_steps": 41}),
    ("OneCycleLR", {"max_lr": [1.0, 2.0], "epochs": 4, "steps_per_epoch": 11,
                    "anneal_strategy": "linear", "pct_start": 0.25}),
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": 45, "three_phase": True,
                    "base_momentum": 0.8, "max_momentum": 0.9, "div_factor": 10.0}),
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": 50, "cycle_momentum": False}),
    ("SequentialLR", {}),
    ("ChainedScheduler", {}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 4}),
    ("CyclicLR", {"base_lr": [0.01, 0.02], "max_lr": 0.2, "step_size_up": 3,
                  "step_size_down": 5, "mode": "triangular2", "base_momentum": 0.7}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 5, "mode": "exp_range",
                  "gamma": 0.97}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 5, "cycle_momentum": False,
                  "scale_fn": lambda x: 0.9**x, "scale_mode": "iterations"}),
    ("CosineAnnealingWarmRestarts", {"T_0": 5}),
    ("CosineAnnealingWarmRestarts", {"T_0": 3, "T_mult": 2, "eta_min": 0.01}),
]
CYCLIC = [c for c in CASES if c[0] in ("CyclicLR", "CosineAnnealingWarmRestarts")]


@pytest.mark.parametrize("name,kwargs", CASES)
def test_sequence_matches_torch_exactly(torch, name, kwargs):
    assert lr_sequence(rg, name, kwargs) == lr_sequence(torch, name, kwargs)


@pytest.mark.parametrize("name,kwargs", [c for c in CASES if c[0] == "OneCycleLR"])
def test_one_cycle_cycles_adam_betas(torch, name, kwargs):
    assert lr_sequence(rg, name, kwargs, kind="adam") == \
        lr_sequence(torch, name, kwargs, kind="adam")


def test_one_cycle_too_many_steps_and_errors(torch):
    for lib in (rg, torch):
        S = lib.optim.lr_scheduler
        opt = make_optimizer(lib)
        sched = S.OneCycleLR(opt, max_lr=1.0, total_steps=2)
        opt.step()
        sched.step()
        sched.step()
        with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of "
                                             "total steps is 2"):
            sched.step()
        with pytest.raises(ValueError, match="You must define either total_steps OR"):
            S.OneCycleLR(opt, max_lr=1.0)
        with pytest.raises(ValueError, match="anneal_strategy must be one of"):
            S.OneCycleLR(opt, max_lr=1.0, total_steps=5, anneal_strategy="x")
        with pytest.raises(ValueError, match="max_lr must have the same length"):
            S.OneCycleLR(opt, max_lr=[1.0], total_steps=5)
        plain = lib.optim.Adagrad([lib.zeros(1, requires_grad=True)])
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
            S.OneCycleLR(plain, max_lr=1.0, total_steps=5)


@pytest.mark.parametrize("kwargs,metrics", [
    ({}, [1.0] * 30),
    ({"patience": 2, "factor": 0.5}, [5, 4, 4, 4, 4, 3.9999, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2]),
    ({"mode": "max", "patience": 1, "threshold": 0.1, "threshold_mode": "abs", "cooldown": 2},
     [1, 1.05, 1.2, 1.25, 1.3, 1.31, 1.6, 1.6, 1.6, 1.6, 1.6, 1.6, 1.6, 1.6]),
    ({"patience": 0, "factor": 0.1, "min_lr": [0.002, 0.05], "eps": 1e-3},
     [3, 3, 3, 3, 3, 3, 3, 3]),
    ({"mode": "max", "threshold_mode": "rel", "patience": 1, "min_lr": 0.01},
     [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
])
def test_reduce_on_plateau_matches_torch(torch, kwargs, metrics):
    def run(lib):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        out = []
        for m in metrics:
            opt.step()
            sched.step(lib.tensor(float(m)) if m == 3 else m)
            out.append((sched.get_last_lr(), sched.num_bad_epochs, sched.cooldown_counter,
                        sched.best, sched.last_epoch))
        return out
    assert run(rg) == run(torch)


def test_reduce_on_plateau_errors(torch):
    for lib in (rg, torch):
        S = lib.optim.lr_scheduler
        opt = make_optimizer(lib)
        with pytest.raises(ValueError, match="Factor should be < 1.0."):
            S.ReduceLROnPlateau(opt, factor=1.0)
        with pytest.raises(ValueError, match="mode avg is unknown!"):
            S.ReduceLROnPlateau(opt, mode="avg")
        with pytest.raises(ValueError, match="expected 2 min_lrs, got 1"):
            S.ReduceLROnPlateau(opt, min_lr=[0.1])


@pytest.mark.parametrize("name,kwargs", [CASES[0], CASES[2], CASES[4], CASES[9], CASES[13],
                                         CASES[17], CASES[18]])
def test_state_dict_resume_matches_uninterrupted(name, kwargs):
    full = lr_sequence(rg, name, kwargs, steps=25)
    opt = make_optimizer(rg)
    sched = _sched(rg, opt, name, kwargs)
    for _ in range(10):
        opt.step()
        sched.step()
    saved_sched, saved_opt = sched.state_dict(), opt.state_dict()
    assert "optimizer" not in saved_sched
    opt2 = make_optimizer(rg)
    sched2 = _sched(rg, opt2, name, kwargs)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved_sched)
    rest = []
    for _ in range(15):
        rest.append(sched2.get_last_lr())
        opt2.step()
        sched2.step()
    assert rest == [row[0] for row in full[10:]]


def test_state_dict_matches_torch_keys(torch):
    for name, kwargs in CASES[:6] + CASES[9:14]:
        mine = _sched(rg, make_optimizer(rg), name, kwargs).state_dict()
        theirs = _sched(torch, make_optimizer(torch), name, kwargs).state_dict()
        assert sorted(mine) == sorted(theirs), name
        for key in ("base_lrs", "last_epoch", "_step_count", "_last_lr"):
            assert mine[key] == theirs[key], (name, key)


def test_lambda_state_dict_saves_callable_objects():
    class Decay:
        def __init__(self):
            self.rate = 0.5

        def __call__(self, epoch):
            return self.rate**epoch

    opt = make_optimizer(rg)
    sched = rg.optim.lr_scheduler.LambdaLR(opt, [Decay(), lambda e: 1.0])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [{"rate": 0.5}, None]
    sd["lr_lambdas"][0]["rate"] = 0.25
    other = rg.optim.lr_scheduler.LambdaLR(make_optimizer(rg), [Decay(), lambda e: 1.0])
    other.load_state_dict(sd)
    assert other.lr_lambdas[0].rate == 0.25


def test_initial_lr_and_resume_errors(torch):
    for lib in (rg, torch):
        opt = make_optimizer(lib)
        with pytest.raises(KeyError, match="param 'initial_lr' is not specified"):
            lib.optim.lr_scheduler.StepLR(opt, 2, last_epoch=3)
        lib.optim.lr_scheduler.StepLR(opt, 2)
        assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.3]
        with pytest.raises(TypeError, match="list is not an Optimizer"):
            lib.optim.lr_scheduler.StepLR([], 2)


@pytest.mark.parametrize("name,kwargs", [CASES[0], CASES[2], CASES[4], CASES[9], CASES[12]])
def test_step_with_epoch_uses_closed_form(torch, name, kwargs):
    def run(lib):
        opt = make_optimizer(lib)
        sched = _sched(lib, opt, name, kwargs)
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (3, 7, 2, 11):
                opt.step()
                sched.step(epoch)
                out.append(sched.get_last_lr())
        return out
    assert run(rg) == run(torch)
    opt = make_optimizer(rg)
    sched = rg.optim.lr_scheduler.StepLR(opt, 2)
    opt.step()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)`"):
        sched.step(4)


def test_warnings_for_misuse():
    opt = make_optimizer(rg)
    sched = rg.optim.lr_scheduler.ExponentialLR(opt, 0.5)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before"):
        sched.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()


def test_sequential_lr_errors(torch):
    for lib in (rg, torch):
        S = lib.optim.lr_scheduler
        opt = make_optimizer(lib)
        a = S.StepLR(opt, 2)
        with pytest.raises(ValueError, match="expects number of schedulers provided to be one"):
            S.SequentialLR(opt, [a], milestones=[3])
        with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
            S.SequentialLR(opt, [a, S.ReduceLROnPlateau(opt)], milestones=[3])
        with pytest.raises(ValueError, match="expects at least one scheduler"):
            S.SequentialLR(opt, [], milestones=[])


@pytest.mark.parametrize("name,kwargs", CYCLIC[:3])
def test_cyclic_lr_cycles_adam_betas(torch, name, kwargs):
    assert lr_sequence(rg, name, kwargs, kind="adam") == \
        lr_sequence(torch, name, kwargs, kind="adam")


@pytest.mark.parametrize("name,kwargs", CYCLIC[:2] + CYCLIC[4:])
def test_cyclic_state_dicts_match_torch_and_resume(torch, name, kwargs):
    for steps in (0, 7):
        mine, theirs = (_sched(lib, make_optimizer(lib), name, kwargs) for lib in (rg, torch))
        for s in (mine, theirs):
            for _ in range(steps):
                s.optimizer.step()
                s.step()
        a, b = mine.state_dict(), theirs.state_dict()
        assert sorted(a) == sorted(b)
        assert {k: v for k, v in a.items()} == {k: v for k, v in b.items()}
    full = lr_sequence(rg, name, kwargs, steps=20)
    opt = make_optimizer(rg)
    sched = _sched(rg, opt, name, kwargs)
    for _ in range(8):
        opt.step()
        sched.step()
    saved = sched.state_dict()
    sched2 = _sched(rg, opt, name, kwargs)
    sched2.load_state_dict(saved)
    rest = []
    for _ in range(12):
        rest.append(sched2.get_last_lr())
        opt.step()
        sched2.step()
    assert rest == [row[0] for row in full[8:]]


def test_warm_restarts_fractional_epochs_and_errors(torch):
    def run(lib):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (0.5, 1.25, 2.9, 3.0, 7.5, 9.0, 22.0, 1.0):
                opt.step()
                sched.step(epoch)
                out.append((sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch))
        return out

    assert run(rg) == run(torch)
    S = rg.optim.lr_scheduler
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        S.CosineAnnealingWarmRestarts(make_optimizer(rg), T_0=0)
    with pytest.raises(ValueError, match="Expected integer T_mult >= 1, but got 0"):
        S.CosineAnnealingWarmRestarts(make_optimizer(rg), T_0=2, T_mult=0)
    with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
        S.CosineAnnealingWarmRestarts(make_optimizer(rg), T_0=2).step(-1)
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        S.CyclicLR(make_optimizer(rg), 0.1, 1.0, mode="sine")
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        S.CyclicLR(rg.optim.Adagrad([rg.zeros(1, requires_grad=True)]), 0.1, 1.0)
