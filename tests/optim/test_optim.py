"""Tests for ``retrograd.optim``: every optimizer's parameter trajectory against torch.optim's
(20 steps, float64, identical initial values), state dicts, param groups, errors and reprs."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn  # noqa: F401 - binds rg.nn
import retrograd.optim  # noqa: F401

RNG = np.random.default_rng(1234)
INIT = {"w": RNG.standard_normal((3, 4)), "b": RNG.standard_normal(3),
        "s": RNG.standard_normal(2)}
X = RNG.standard_normal((8, 4))
Y = RNG.standard_normal((8, 3))


def make_params(lib):
    return {k: lib.tensor(v.copy(), dtype=lib.float64, requires_grad=True)
            for k, v in INIT.items()}


def loss_fn(lib, p):
    """A least-squares loss plus a quartic term, so that curvature changes along the way."""
    x, y = lib.tensor(X, dtype=lib.float64), lib.tensor(Y, dtype=lib.float64)
    pred = x.matmul(p["w"].t()) + p["b"]
    return ((pred - y) ** 2).mean() + 0.1 * (p["s"] ** 4).sum() + (p["s"] * p["b"][:2]).sum()


def groups(p, split):
    if not split:
        return [p["w"], p["b"], p["s"]]
    return [{"params": [p["w"], p["b"]]}, {"params": [p["s"]], "lr": 0.03, "weight_decay": 0.1}]


def trajectory(lib, name, kwargs, split=False, steps=20, negate=False):
    p = make_params(lib)
    opt = getattr(lib.optim, name)(groups(p, split), **kwargs)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(lib, p)
        (-loss if negate else loss).backward()
        opt.step()
        out.append(np.concatenate([t.detach().numpy().ravel() for t in p.values()]))
    return np.array(out), opt


CASES = [
    ("SGD", {"lr": 0.05}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.02}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.05}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.01}),
    ("Adam", {"lr": 0.05, "maximize": True}),
    ("Adam", {"lr": 0.05, "decoupled_weight_decay": True, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.2, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "weight_decay": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.05}),
    ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5, "eps": 1e-6}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.05, "maximize": True}),
    ("Adamax", {"lr": 0.05}),
    ("Adamax", {"lr": 0.05, "betas": (0.8, 0.9), "weight_decay": 0.02, "maximize": True}),
    ("NAdam", {"lr": 0.05}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.05, "momentum_decay": 0.01, "maximize": True}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05}),
    ("RAdam", {"lr": 0.05, "betas": (0.5, 0.6), "weight_decay": 0.05, "maximize": True}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("ASGD", {"lr": 0.05}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 5, "weight_decay": 0.02}),
    ("ASGD", {"lr": 0.05, "t0": 3, "maximize": True}),
    ("Rprop", {"lr": 0.01}),
    ("Rprop", {"lr": 0.02, "etas": (0.3, 1.5), "step_sizes": (1e-4, 0.05), "maximize": True}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-20, 1e-2), "d": 2.0,
                   "weight_decay": 0.1, "maximize": True}),
]


@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("name,kwargs", CASES)
def test_trajectory_matches_torch(torch, name, kwargs, split):
    negate = kwargs.get("maximize", False)
    mine, _ = trajectory(rg, name, kwargs, split, negate=negate)
    theirs, _ = trajectory(torch, name, kwargs, split, negate=negate)
    assert np.abs(theirs[-1] - theirs[0]).max() > 1e-3  # the parameters really moved
    np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-6)
    np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name,kwargs", CASES[1:2] + CASES[7:8] + CASES[15:16] + CASES[18:])
def test_state_dict_matches_torch(torch, name, kwargs):
    _, mine = trajectory(rg, name, kwargs, split=True, steps=3)
    _, theirs = trajectory(torch, name, kwargs, split=True, steps=3)
    a, b = mine.state_dict(), theirs.state_dict()
    assert a["param_groups"] == b["param_groups"]
    assert list(a["state"]) == list(b["state"])
    for k in a["state"]:
        assert list(a["state"][k]) == list(b["state"][k])
        for key, v in a["state"][k].items():
            w = b["state"][k][key]
            if isinstance(v, rg.Tensor):
                assert v.dtype.is_floating_point and str(v.dtype)[-7:] == str(w.dtype)[-7:]
                np.testing.assert_allclose(v.numpy(), w.numpy(), rtol=1e-9, atol=1e-12)
            else:
                assert v == w


@pytest.mark.parametrize("name,kwargs", [CASES[2], CASES[7], CASES[15], CASES[17]])
def test_state_dict_round_trip_resumes_exactly(name, kwargs):
    full, _ = trajectory(rg, name, kwargs, split=True, steps=10)
    p = make_params(rg)
    opt = getattr(rg.optim, name)(groups(p, True), **kwargs)
    for step in range(10):
        if step == 5:  # rebuild everything from the saved states
            saved_params = {k: v.detach().clone() for k, v in p.items()}
            saved = opt.state_dict()
            p = {k: v.clone().requires_grad_() for k, v in saved_params.items()}
            opt = getattr(rg.optim, name)(groups(p, True), lr=123.0)
            opt.load_state_dict(saved)
            assert opt.param_groups[0]["lr"] == kwargs["lr"]
        opt.zero_grad()
        loss_fn(rg, p).backward()
        opt.step()
    final = np.concatenate([t.detach().numpy().ravel() for t in p.values()])
    np.testing.assert_allclose(final, full[-1], rtol=1e-12, atol=1e-12)


def test_load_state_dict_casts_state_to_param_dtype():
    w32 = rg.zeros(2, requires_grad=True)
    opt = rg.optim.Adam([w32])
    w32.grad = rg.ones(2)
    opt.step()
    sd = opt.state_dict()
    w64 = rg.zeros(2, dtype=rg.float64, requires_grad=True)
    other = rg.optim.Adam([w64])
    other.load_state_dict(sd)
    assert other.state[w64]["exp_avg"].dtype == rg.float64
    assert other.state[w64]["step"].dtype == rg.float32  # step is kept as saved


def test_load_state_dict_errors(torch):
    for lib in (rg, torch):
        a, b = lib.zeros(1, requires_grad=True), lib.zeros(1, requires_grad=True)
        one = lib.optim.SGD([a], lr=0.1)
        two = lib.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1)
        with pytest.raises(ValueError, match="different number of parameter groups"):
            one.load_state_dict(two.state_dict())
        with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
            one.load_state_dict(lib.optim.SGD([a, b], lr=0.1).state_dict())


def test_repr_matches_torch(torch):
    for name, kwargs in CASES[:1] + CASES[5:6] + CASES[10:11] + CASES[12:13] + CASES[16:17]:
        _, mine = trajectory(rg, name, kwargs, split=True, steps=1)
        _, theirs = trajectory(torch, name, kwargs, split=True, steps=1)
        assert repr(mine) == repr(theirs)
    assert repr(rg.optim.LBFGS([rg.zeros(1, requires_grad=True)])) == repr(
        torch.optim.LBFGS([torch.zeros(1, requires_grad=True)]))


def test_param_group_errors_match_torch(torch):
    def errors(lib):
        a, b = lib.zeros(1, requires_grad=True), lib.zeros(2, requires_grad=True)
        nonleaf = a * 2
        cases = [
            lambda: lib.optim.SGD([], lr=0.1),
            lambda: lib.optim.SGD(a, lr=0.1),
            lambda: lib.optim.SGD({a}, lr=0.1),
            lambda: lib.optim.SGD([nonleaf], lr=0.1),
            lambda: lib.optim.SGD([1.0], lr=0.1),
            lambda: lib.optim.SGD([{"params": [a]}, {"params": [a, b]}], lr=0.1),
            lambda: lib.optim.SGD([a], lr=0.1).add_param_group([b]),
            lambda: lib.optim.SGD([a], lr=-1.0),
            lambda: lib.optim.SGD([a], momentum=-1.0),
            lambda: lib.optim.SGD([a], nesterov=True),
            lambda: lib.optim.Adam([a], betas=(1.0, 0.9)),
            lambda: lib.optim.Adam([a], betas=(0, 0.9)),
            lambda: lib.optim.Adam([a], eps=-1.0),
            lambda: lib.optim.RMSprop([a], alpha=-1.0),
            lambda: lib.optim.Adagrad([a], lr_decay=-1.0),
            lambda: lib.optim.LBFGS([{"params": [a]}, {"params": [b]}]),
            lambda: lib.optim.SGD([("x", a), b], lr=0.1),
        ]
        out = []
        for case in cases:
            try:
                case()
                out.append(None)
            except Exception as e:  # noqa: BLE001
                out.append((type(e).__name__, str(e)))
        return out
    for got, want in zip(errors(rg), errors(torch)):
        assert got == want


def test_duplicate_params_warn():
    a = rg.zeros(1, requires_grad=True)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        rg.optim.SGD([a, a], lr=0.1)


def test_add_param_group_defaults_and_named_params(torch):
    for lib in (rg, torch):
        a, b = lib.zeros(1, requires_grad=True), lib.zeros(1, requires_grad=True)
        opt = lib.optim.SGD([a], lr=0.1, momentum=0.5)
        opt.add_param_group({"params": b, "lr": 0.01})
        assert opt.param_groups[1]["lr"] == 0.01 and opt.param_groups[1]["momentum"] == 0.5
        named = lib.optim.Adam([("first", a), ("second", b)])
        assert named.param_groups[0]["param_names"] == ["first", "second"]
        assert named.state_dict()["param_groups"][0]["param_names"] == ["first", "second"]


def test_zero_grad_and_state_defaultdict():
    a = rg.ones(2, requires_grad=True)
    opt = rg.optim.SGD([a], lr=0.1)
    (a * a).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert a.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert a.grad is None
    assert opt.state[a] == {}


def test_params_without_grad_are_skipped():
    a, b = rg.ones(2, requires_grad=True), rg.ones(2, requires_grad=True)
    opt = rg.optim.Adam([a, b], lr=0.1)
    (a * a).sum().backward()
    opt.step()
    assert b.tolist() == [1.0, 1.0] and b not in opt.state
    assert a.tolist() != [1.0, 1.0]


def test_step_with_closure_and_no_graph():
    a = rg.tensor([3.0], requires_grad=True)
    opt = rg.optim.SGD([a], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 9.0 and a.tolist() == [1.5]
    assert a.grad_fn is None and a.is_leaf


def test_step_hooks_and_custom_optimizer():
    class Halve(rg.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.5})

        def step(self, closure=None):
            with rg.no_grad():
                for g in self.param_groups:
                    for p in g["params"]:
                        p.mul_(g["lr"])

    a = rg.tensor([4.0], requires_grad=True)
    opt = Halve([a])
    seen = []
    h = opt.register_step_pre_hook(lambda o, args, kwargs: seen.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: seen.append("post"))
    opt.step()
    h.remove()
    opt.step()
    assert a.tolist() == [1.0] and seen == ["pre", "post", "post"]


@pytest.mark.parametrize("kwargs", [
    {}, {"line_search_fn": "strong_wolfe"}, {"history_size": 3, "max_iter": 5},
    {"history_size": 2, "max_iter": 6, "line_search_fn": "strong_wolfe", "lr": 0.5},
    {"tolerance_grad": 1e-3, "tolerance_change": 1e-4, "max_eval": 7},
])
def test_lbfgs_matches_torch(torch, kwargs):
    def run(lib):
        p = make_params(lib)
        opt = lib.optim.LBFGS(list(p.values()), **kwargs)
        losses, traj = [], []

        def closure():
            opt.zero_grad()
            loss = loss_fn(lib, p)
            loss.backward()
            return loss

        for _ in range(4):
            losses.append(opt.step(closure).item())
            traj.append(np.concatenate([t.detach().numpy().ravel() for t in p.values()]))
        state = opt.state[p["w"]]
        return np.array(losses), np.array(traj), state["func_evals"], state["n_iter"]

    l1, t1, fe1, it1 = run(rg)
    l2, t2, fe2, it2 = run(torch)
    assert (fe1, it1) == (fe2, it2)
    np.testing.assert_allclose(l1, l2, rtol=1e-9)
    np.testing.assert_allclose(t1, t2, rtol=1e-8, atol=1e-10)


def test_lbfgs_keeps_torch_scalar_types_in_float32(torch):
    # PyTorch keeps the recursion's and the line search's scalars as 0-dim float32 tensors
    # (their rounding decides branches and evaluation counts), the losses as Python floats.
    def run(lib):
        x = lib.tensor([3.0, -2.0, 0.5], requires_grad=True)
        opt = lib.optim.LBFGS([x], line_search_fn="strong_wolfe", max_iter=4)

        def closure():
            opt.zero_grad()
            loss = ((x - 1) ** 2).sum() + (x[0] * x[1] - x[2]) ** 2
            loss.backward()
            return loss

        opt.step(closure)
        opt.step(closure)
        st = opt.state[x]
        kinds = [(type(st[k]).__name__, getattr(st[k], "dtype", None))
                 for k in ("t", "H_diag", "prev_loss")]
        return [(k, str(d).split(".")[-1]) for k, d in kinds], type(st["ro"][0]).__name__
    assert run(rg) == run(torch)


def test_lbfgs_converges_float32_and_rejects_other_line_search():
    x = rg.tensor([3.0, -2.0], requires_grad=True)
    opt = rg.optim.LBFGS([x], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((x - 1) ** 2).sum() + (x[0] - x[1]) ** 2
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 1.0], atol=1e-4)
    bad = rg.optim.LBFGS([x], line_search_fn="armijo")
    with rg.no_grad():
        x.fill_(5.0)
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        bad.step(closure)


def test_optimizers_train_float32_model():
    rg.manual_seed(0)
    for make in (lambda ps: rg.optim.SGD(ps, lr=0.1, momentum=0.9),
                 lambda ps: rg.optim.Adam(ps, lr=0.05), lambda ps: rg.optim.AdamW(ps, lr=0.05),
                 lambda ps: rg.optim.RMSprop(ps, lr=0.03),
                 lambda ps: rg.optim.Adagrad(ps, lr=0.3)):
        net = rg.nn.Linear(3, 1)
        x = rg.randn(64, 3)
        y = x.matmul(rg.tensor([[1.0], [-2.0], [0.5]])) + 0.3
        opt = make(net.parameters())
        for _ in range(100):
            opt.zero_grad()
            loss = ((net(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
        assert loss.item() < 0.05, type(opt).__name__
        assert net.weight.dtype == rg.float32


def test_no_warnings_during_step():
    a = rg.ones(3, requires_grad=True)
    opt = rg.optim.Adam([a], amsgrad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            opt.zero_grad()
            (a * a).sum().backward()
            opt.step()
    assert math.isfinite(a.sum().item())


@pytest.mark.parametrize("kwargs", [{"lr": 0.02}, {"lr": 0.02, "nesterov": False,
                                    "adjust_lr_fn": "match_rms_adamw", "weight_decay": 0.0}])
def test_muon_matches_torch(torch, kwargs):
    # Muon orthogonalises in bfloat16 as PyTorch does, so the two agree to bfloat16's precision.
    def run(lib):
        w = lib.tensor(INIT["w"].copy(), dtype=lib.float64, requires_grad=True)
        v = lib.tensor(INIT["w"][:2].T.copy(), dtype=lib.float64, requires_grad=True)
        opt = lib.optim.Muon([w, v], **kwargs)
        x = lib.tensor(X, dtype=lib.float64)
        for _ in range(5):
            opt.zero_grad()
            ((x.matmul(w.t()) - lib.tensor(Y, dtype=lib.float64)) ** 2).mean().backward()
            (v ** 2).sum().backward()
            opt.step()
        assert list(opt.state_dict()["state"][0]) == ["momentum_buffer"]
        return w.detach().numpy(), v.detach().numpy()

    for a, b in zip(run(rg), run(torch)):
        np.testing.assert_allclose(a, b, rtol=0, atol=2e-3)
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        rg.optim.Muon([rg.zeros(3, requires_grad=True)])
