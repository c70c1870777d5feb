"""Tests for ``retrograd.nn.module``, ``parameter``, ``modules.container`` and ``modules.linear``.

Most tests build the same model in retrograd and in PyTorch (the oracle; skipped without it) and
compare reprs, names and orders, state dicts, error messages and hook behaviour.
"""

from __future__ import annotations

import copy
import re
from collections import OrderedDict

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn  # noqa: F401 - binds rg.nn
import retrograd.optim  # noqa: F401


def build(lib):
    """A small tree with a shared submodule, a shared parameter, buffers and a None parameter."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc = nn.Linear(n, n)
            self.scale = nn.Parameter(lib.ones(n))
            self.register_buffer("running", lib.zeros(n))
            self.register_buffer("scratch", lib.zeros(1), persistent=False)
            self.register_parameter("unused", None)

        def forward(self, x):
            return self.fc(x) * self.scale

        def extra_repr(self):
            return f"n={self.scale.shape[0]}"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            shared = Block(3)
            self.a = shared
            self.seq = nn.Sequential(OrderedDict([("b", shared), ("act", nn.Identity()),
                                                  ("c", Block(3))]))
            self.heads = nn.ModuleList([nn.Linear(3, 2), nn.Linear(3, 2), nn.Linear(3, 4)])
            self.table = nn.ModuleDict({"z": nn.Identity(), "y": nn.Linear(2, 2, bias=False)})
            self.extra = nn.ParameterList([nn.Parameter(lib.zeros(2)), lib.ones(2, 2)])
            self.pd = nn.ParameterDict({"w": lib.zeros(1), "v": lib.ones(3)})
            self.tied = self.heads[0].weight

        def forward(self, x):
            return self.seq(self.a(x))

    return Net()


def copy_weights(src_torch, dst_rg):
    sd = {k: rg.tensor(v.detach().numpy().copy()) for k, v in src_torch.state_dict().items()}
    dst_rg.load_state_dict(sd)


def rg_text(text: str) -> str:
    """PyTorch's text with its module name replaced where retrograd prints its own."""
    return text.replace("torch.Size", "retrograd.Size").replace("torch.float", "retrograd.float")


# -- Parameter -----------------------------------------------------------------------------------
def test_parameter_repr_and_class(torch):
    data = [[1.5, -2.0], [0.25, 3.0]]
    p, tp = rg.nn.Parameter(rg.tensor(data)), torch.nn.Parameter(torch.tensor(data))
    assert repr(p) == repr(tp)
    assert isinstance(p, rg.Tensor) and p.requires_grad and p.is_leaf
    assert type(p * 2) is rg.Tensor and type(p.detach()) is rg.Tensor
    q = rg.nn.Parameter(rg.tensor([1, 2]), requires_grad=False)
    assert repr(q) == repr(torch.nn.Parameter(torch.tensor([1, 2]), requires_grad=False))
    assert repr(rg.nn.Parameter()) == repr(torch.nn.Parameter())


def test_parameter_shares_memory_and_version():
    t = rg.zeros(3)
    p = rg.nn.Parameter(t)
    with rg.no_grad():
        p.add_(1.0)
    assert t.tolist() == [1.0, 1.0, 1.0]
    assert t._version == p._version == 1


def test_parameter_from_non_leaf_is_leaf():
    x = rg.ones(2, requires_grad=True)
    p = rg.nn.Parameter(x * 2)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad


def test_parameter_int_requires_grad_raises():
    with pytest.raises(RuntimeError, match="floating point"):
        rg.nn.Parameter(rg.tensor([1, 2]))


def test_parameter_deepcopy():
    p = rg.nn.Parameter(rg.tensor([1.0, 2.0]))
    p.grad = rg.tensor([0.5, 0.5])
    q = copy.deepcopy(p)
    assert type(q) is rg.nn.Parameter and q.requires_grad
    assert q.tolist() == [1.0, 2.0] and q.grad.tolist() == [0.5, 0.5]
    with rg.no_grad():
        q.add_(1.0)
    assert p.tolist() == [1.0, 2.0]


def test_buffer_assignment(torch):
    for lib in (rg, torch):
        m = lib.nn.Module()
        m.keep = lib.nn.Buffer(lib.zeros(1))
        m.drop = lib.nn.Buffer(lib.zeros(1), persistent=False)
        assert [n for n, _ in m.named_buffers()] == ["keep", "drop"]
        assert list(m.state_dict()) == ["keep"]
        assert type(m.keep) is lib.Tensor


# -- registration and attributes -----------------------------------------------------------------
def test_nested_repr_matches_torch(torch):
    assert rg_text(repr(build(torch))) == repr(build(rg)).replace(
        "retrograd.FloatTensor", "torch.FloatTensor")


def test_repr_of_empty_and_single_line(torch):
    for name in ("Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"):
        assert repr(getattr(rg.nn, name)()) == repr(getattr(torch.nn, name)())
    pd = lambda lib: lib.nn.ParameterDict({"a": lib.zeros(2)})  # noqa: E731
    assert repr(pd(rg)) == repr(pd(torch))


def test_modulelist_repr_groups_repeats(torch):
    def make(lib):
        nn = lib.nn
        return nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.Identity(), nn.Linear(2, 2),
                              nn.Sequential(nn.Identity()), nn.Sequential(nn.Identity())])
    assert repr(make(rg)) == repr(make(torch))


@pytest.mark.parametrize("kwargs", [{}, {"prefix": "model"}, {"recurse": False},
                                    {"remove_duplicate": False}])
def test_named_parameters_order(torch, kwargs):
    names = lambda m: [n for n, _ in m.named_parameters(**kwargs)]  # noqa: E731
    assert names(build(rg)) == names(build(torch))


@pytest.mark.parametrize("kwargs", [{}, {"prefix": "m"}, {"recurse": False},
                                    {"remove_duplicate": False}])
def test_named_buffers_order(torch, kwargs):
    names = lambda m: [n for n, _ in m.named_buffers(**kwargs)]  # noqa: E731
    assert names(build(rg)) == names(build(torch))


@pytest.mark.parametrize("kwargs", [{}, {"prefix": "root"}, {"remove_duplicate": False}])
def test_named_modules_order(torch, kwargs):
    names = lambda m: [(n, type(x).__name__) for n, x in m.named_modules(**kwargs)]  # noqa: E731
    assert names(build(rg)) == names(build(torch))


def test_children_and_counts(torch):
    r, t = build(rg), build(torch)
    assert [n for n, _ in r.named_children()] == [n for n, _ in t.named_children()]
    assert len(list(r.children())) == len(list(t.children()))
    assert len(list(r.modules())) == len(list(t.modules()))
    assert len(list(r.parameters())) == len(list(t.parameters()))
    assert len(list(r.parameters(recurse=False))) == len(list(t.parameters(recurse=False)))
    assert len(list(r.buffers())) == len(list(t.buffers()))


def test_shared_parameter_listed_once():
    net = build(rg)
    ids = [id(p) for p in net.parameters()]
    assert len(ids) == len(set(ids))
    assert net.tied is net.heads[0].weight


def test_dir_lists_members(torch):
    r, t = build(rg), build(torch)
    for name in ("a", "seq", "tied", "heads", "forward"):
        assert name in dir(r)
    mine = set(dir(r.seq)) & set(dir(t.seq))
    assert {"b", "act", "c"} <= mine
    assert not any(k.isdigit() for k in dir(rg.nn.Sequential(rg.nn.Identity())))


def test_getattr_error_message(torch):
    for lib in (rg, torch):
        with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
            _ = lib.nn.Linear(1, 1).nope


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - we compare the type and text
        return type(e), str(e)
    return None


@pytest.mark.parametrize("case", [
    "tensor_to_param", "module_to_param", "tensor_to_module", "int_to_buffer",
    "param_dot", "param_empty", "param_exists", "param_not_param", "param_nonleaf",
    "buffer_dot", "buffer_exists", "buffer_not_tensor", "buffer_name_type",
    "module_not_module", "module_dot", "module_empty", "module_exists", "before_init",
    "buffer_before_init", "module_before_init", "init_kwargs", "init_args",
])
def test_registration_errors_match_torch(torch, case):
    def run(lib):
        nn = lib.nn
        m = nn.Linear(2, 2)
        m.plain = 1
        m.register_buffer("buf", lib.zeros(1))
        m.add_module("sub", nn.Identity())
        x = lib.ones(2, requires_grad=True)
        actions = {
            "tensor_to_param": lambda: setattr(m, "weight", lib.zeros(2, 2)),
            "module_to_param": lambda: setattr(m, "bias", 3),
            "tensor_to_module": lambda: setattr(m, "sub", lib.zeros(1)),
            "int_to_buffer": lambda: setattr(m, "buf", 5),
            "param_dot": lambda: m.register_parameter("a.b", None),
            "param_empty": lambda: m.register_parameter("", None),
            "param_exists": lambda: m.register_parameter("plain", None),
            "param_not_param": lambda: m.register_parameter("p", lib.zeros(1)),
            "param_nonleaf": lambda: m.register_parameter("p", nn.Parameter(x) * 2),
            "buffer_dot": lambda: m.register_buffer("a.b", None),
            "buffer_exists": lambda: m.register_buffer("weight", lib.zeros(1)),
            "buffer_not_tensor": lambda: m.register_buffer("b2", [1.0]),
            "buffer_name_type": lambda: m.register_buffer(3, None),
            "module_not_module": lambda: m.add_module("x", 4),
            "module_dot": lambda: m.add_module("a.b", nn.Identity()),
            "module_empty": lambda: m.add_module("", nn.Identity()),
            "module_exists": lambda: m.add_module("plain", nn.Identity()),
            "before_init": lambda: _half(nn).__setattr__("p", nn.Parameter(lib.zeros(1))),
            "buffer_before_init": lambda: _half(nn).register_buffer("b", lib.zeros(1)),
            "module_before_init": lambda: _half(nn).__setattr__("s", nn.Identity()),
            "init_kwargs": lambda: nn.Module(foo=1),
            "init_args": lambda: nn.Module(1),
        }
        return _error(actions[case])

    def _half(nn):
        return nn.Module.__new__(nn.Module)

    got, want = run(rg), run(torch)
    assert got is not None and want is not None
    assert got[0] is want[0]
    assert got[1] == want[1]


def test_setattr_moves_between_kinds():
    m = rg.nn.Module()
    m.x = rg.nn.Parameter(rg.zeros(1))
    assert "x" in m._parameters
    m.y = 3
    with pytest.raises(KeyError):
        m.register_buffer("y", rg.zeros(1))
    m.bias = None
    m.register_parameter("p", None)
    m.p = None
    assert m.p is None and "p" in m._parameters
    del m.x
    assert "x" not in m._parameters
    with pytest.raises(AttributeError):
        _ = m.x
    m.register_buffer("b", rg.zeros(1), persistent=False)
    m.b = rg.ones(1)  # reassigning keeps it non-persistent
    assert "b" in m._non_persistent_buffers_set and m.b.tolist() == [1.0]
    del m.b
    assert "b" not in m._non_persistent_buffers_set


def test_get_submodule_parameter_buffer(torch):
    for lib in (rg, torch):
        net = build(lib)
        assert net.get_submodule("seq.c.fc") is net.seq.c.fc
        assert net.get_submodule("") is net
        assert net.get_parameter("seq.c.fc.bias") is net.seq.c.fc.bias
        assert net.get_buffer("a.running") is net.a.running
    for target in ("seq.nope", "seq.b.scale", "heads.5"):
        assert _error(lambda t=target: build(rg).get_submodule(t)) == \
            _error(lambda t=target: build(torch).get_submodule(t))
    for target in ("seq.b.running", "seq.b.nope"):
        assert _error(lambda t=target: build(rg).get_parameter(t)) == \
            _error(lambda t=target: build(torch).get_parameter(t))
    assert _error(lambda: build(rg).get_buffer("a.scale")) == \
        _error(lambda: build(torch).get_buffer("a.scale"))


# -- modes and conversions -----------------------------------------------------------------------
def test_train_eval_requires_grad_apply():
    net = build(rg)
    assert net.training
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train(0)
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    seen = []
    rg.nn.Sequential(rg.nn.Sequential(rg.nn.Identity()), rg.nn.Linear(1, 1)).apply(
        lambda m: seen.append(type(m).__name__))
    assert seen == ["Identity", "Sequential", "Linear", "Sequential"]


def test_zero_grad():
    lin = rg.nn.Linear(2, 1)
    lin(rg.ones(3, 2)).sum().backward()
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad.tolist() == [[0.0, 0.0]]
    lin.zero_grad()
    assert lin.weight.grad is None and lin.bias.grad is None


def test_dtype_conversions_keep_parameter_objects():
    net = build(rg)
    w = net.seq.c.fc.weight
    net(rg.ones(1, 3)).sum().backward()
    assert net.double() is net
    assert w is net.seq.c.fc.weight and isinstance(w, rg.nn.Parameter)
    assert w.dtype == rg.float64 and w.grad.dtype == rg.float64 and w.requires_grad
    assert all(b.dtype == rg.float64 for b in net.buffers())
    net.float()
    assert w.dtype == rg.float32 and w.grad.dtype == rg.float32
    net.to(rg.float64)
    assert w.dtype == rg.float64
    net.to("cpu", dtype=rg.float32)
    assert w.dtype == rg.float32
    net.to(rg.zeros(1, dtype=rg.float64))
    assert w.dtype == rg.float64
    assert net.half().a.scale.dtype == rg.float16
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        net.to(rg.int64)


def test_int_buffers_are_not_cast():
    m = rg.nn.Module()
    m.register_buffer("count", rg.tensor([3]))
    m.double()
    assert m.count.dtype == rg.int64


def test_deepcopy_module():
    net = build(rg)
    other = copy.deepcopy(net)
    assert other.tied is other.heads[0].weight and other.a is other.seq.b
    with rg.no_grad():
        other.a.scale.add_(1.0)
    assert net.a.scale.tolist() == [1.0, 1.0, 1.0]


# -- state dict ----------------------------------------------------------------------------------
def test_state_dict_keys_order_and_metadata(torch):
    r, t = build(rg), build(torch)
    assert list(r.state_dict()) == list(t.state_dict())
    assert list(r.state_dict(prefix="p.")) == list(t.state_dict(prefix="p."))
    assert list(r.state_dict()._metadata) == list(t.state_dict()._metadata)
    assert r.state_dict()._metadata["seq.b"] == {"version": 1}


def test_state_dict_values_detached_and_shared():
    net = build(rg)
    sd = net.state_dict()
    assert isinstance(sd, OrderedDict)
    w = sd["seq.c.fc.weight"]
    assert not w.requires_grad and type(w) is rg.Tensor
    with rg.no_grad():
        w.fill_(7.0)
    assert float(net.seq.c.fc.weight.detach().sum()) == 7.0 * 9
    kept = net.state_dict(keep_vars=True)
    assert kept["seq.c.fc.weight"] is net.seq.c.fc.weight


def test_load_state_dict_round_trip_and_forward_matches_torch(torch):
    r, t = build(rg), build(torch)
    copy_weights(t, r)
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(r(rg.tensor(x)).detach().numpy(),
                               t(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    other = build(rg)
    res = other.load_state_dict(r.state_dict())
    assert repr(res) == "<All keys matched successfully>"
    assert res.missing_keys == [] and res.unexpected_keys == []
    for (k, a), (_, b) in zip(r.state_dict().items(), other.state_dict().items()):
        assert a.tolist() == b.tolist(), k


def _mismatched(lib):
    net = build(lib)
    sd = net.state_dict()
    del sd["seq.c.fc.bias"]
    del sd["pd.v"]
    sd["seq.c.ghost"] = lib.zeros(1)
    sd["nothere.x"] = lib.zeros(1)
    sd["a.stray"] = lib.zeros(1)
    return net, sd


def test_load_state_dict_strict_error_matches_torch(torch):
    (rn, rsd), (tn, tsd) = _mismatched(rg), _mismatched(torch)
    got, want = _error(lambda: rn.load_state_dict(rsd)), _error(lambda: tn.load_state_dict(tsd))
    assert got == want


def test_load_state_dict_non_strict_matches_torch(torch):
    (rn, rsd), (tn, tsd) = _mismatched(rg), _mismatched(torch)
    got, want = rn.load_state_dict(rsd, strict=False), tn.load_state_dict(tsd, strict=False)
    assert got.missing_keys == want.missing_keys == ["seq.c.fc.bias", "pd.v"]
    assert got.unexpected_keys == want.unexpected_keys
    assert repr(got) == repr(want)


def test_load_state_dict_size_mismatch_matches_torch(torch):
    def run(lib):
        net = build(lib)
        sd = net.state_dict()
        sd["a.fc.weight"] = lib.zeros(2, 3)
        sd["heads.2.bias"] = lib.zeros(5)
        return _error(lambda: net.load_state_dict(sd, strict=False))
    got, want = run(rg), run(torch)
    assert got[0] is want[0] and got[1] == rg_text(want[1])


def test_load_state_dict_other_errors(torch):
    for lib in (rg, torch):
        with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
            lib.nn.Linear(1, 1).load_state_dict([1])
    got = _error(lambda: rg.nn.Linear(1, 1).load_state_dict({"weight": [[1.0]],
                                                              "bias": rg.zeros(1)}))
    want = _error(lambda: torch.nn.Linear(1, 1).load_state_dict({"weight": [[1.0]],
                                                                  "bias": torch.zeros(1)}))
    assert got == want


def test_load_state_dict_assign():
    m = rg.nn.Linear(2, 1)
    w = rg.ones(1, 2)
    m.load_state_dict({"weight": w, "bias": rg.zeros(1)}, assign=True)
    assert isinstance(m.weight, rg.nn.Parameter) and m.weight.requires_grad
    assert m.weight.tolist() == [[1.0, 1.0]]


def test_state_dict_hooks_and_extra_state():
    class WithExtra(rg.nn.Module):
        def __init__(self):
            super().__init__()
            self.value = 1

        def get_extra_state(self):
            return {"value": self.value}

        def set_extra_state(self, state):
            self.value = state["value"]

    a, b = WithExtra(), WithExtra()
    a.value = 5
    sd = a.state_dict()
    assert list(sd) == ["_extra_state"]
    b.load_state_dict(sd)
    assert b.value == 5
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        b.load_state_dict({})
    seen = []
    lin = rg.nn.Linear(1, 1)
    lin.register_load_state_dict_post_hook(lambda mod, keys: seen.append(list(keys.missing_keys)))
    lin.load_state_dict({"weight": rg.zeros(1, 1)}, strict=False)
    assert seen == [["bias"]]


# -- hooks ---------------------------------------------------------------------------------------
def test_forward_hooks_match_torch(torch):
    def run(lib):
        log = []
        m = lib.nn.Linear(2, 2)
        with lib.no_grad():
            m.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
            m.bias.fill_(0.5)
        h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        m.register_forward_pre_hook(lambda mod, args: log.append(("pre", args[0].tolist())))
        m.register_forward_pre_hook(lambda mod, args: log.append(("first", args[0].tolist())),
                                    prepend=True)
        m.register_forward_hook(lambda mod, args, out: out + 1)
        m.register_forward_hook(lambda mod, args, out: log.append(("post", out.tolist())))
        m.register_forward_pre_hook(
            lambda mod, args, kwargs: ((args[0] + 1,), kwargs), with_kwargs=True)
        m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("kw", sorted(kwargs))),
                                with_kwargs=True)
        out1 = m(lib.tensor([1.0, 1.0])).tolist()
        h1.remove()
        out2 = m(lib.tensor([1.0, 1.0])).tolist()
        return log, out1, out2
    assert run(rg) == run(torch)


def test_pre_hook_single_value_and_bad_kwargs_hook(torch):
    for lib in (rg, torch):
        m = lib.nn.Identity()
        m.register_forward_pre_hook(lambda mod, args: args[0] * 3)
        assert m(lib.tensor(2.0)).item() == 6.0
        bad = lib.nn.Identity()
        bad.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
        with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
            bad(lib.tensor(1.0))


def test_always_call_hook_runs_when_forward_raises():
    class Boom(rg.nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    seen = []
    m = Boom()
    m.register_forward_hook(lambda mod, args, out: seen.append("always"), always_call=True)
    m.register_forward_hook(lambda mod, args, out: seen.append("normal"))
    with pytest.raises(ValueError, match="boom"):
        m(rg.ones(1))
    assert seen == ["always"]


def test_handle_context_manager_and_global_hook():
    m = rg.nn.Identity()
    with m.register_forward_hook(lambda mod, a, o: o * 10):
        assert m(rg.tensor(1.0)).item() == 10.0
    assert m(rg.tensor(1.0)).item() == 1.0
    seen = []
    h = rg.nn.modules.module.register_module_forward_hook(lambda mod, a, o: seen.append(1))
    try:
        rg.nn.Sequential(rg.nn.Identity())(rg.ones(1))
    finally:
        h.remove()
    assert seen == [1, 1]


def test_missing_forward_raises(torch):
    assert _error(lambda: rg.nn.Module()(1)) == _error(lambda: torch.nn.Module()(1))


# -- containers ----------------------------------------------------------------------------------
def test_sequential_indexing_and_editing(torch):
    def run(lib):
        nn = lib.nn
        mods = [nn.Linear(1, 1), nn.Identity(), nn.Linear(1, 2), nn.Linear(2, 2)]
        s = nn.Sequential(*mods)
        out = [type(s[-1]).__name__, len(s), repr(s[1:3]), type(s[1:3]).__name__,
               [type(m).__name__ for m in s], repr(s[::2])]
        del s[1]
        out.append(list(s._modules))
        s.append(nn.Identity()).insert(0, nn.Identity()).extend([nn.Identity()])
        out.append(repr(s))
        del s[1:3]
        out.append(repr(s))
        out.append(type(s.pop(0)).__name__)
        s[0] = nn.Linear(3, 3)
        out.append(repr(s))
        out.append(repr(s + nn.Sequential(nn.Identity())))
        out.append(repr(nn.Sequential(nn.Identity()) * 2))
        out.append(_error(lambda: s[10]))
        out.append(_error(lambda: s.insert(10, nn.Identity())))
        return out
    assert run(rg) == run(torch)


def test_sequential_from_ordered_dict_and_forward(torch):
    def run(lib):
        nn = lib.nn
        s = nn.Sequential(OrderedDict([("first", nn.Linear(2, 3)), ("last", nn.Linear(3, 1))]))
        return list(s.state_dict()), repr(s), repr(s[1:])
    assert run(rg) == run(torch)
    r = rg.nn.Sequential(rg.nn.Linear(2, 3), rg.nn.Linear(3, 1))
    t = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Linear(3, 1))
    copy_weights(t, r)
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_allclose(r(rg.tensor(x)).detach().numpy(),
                               t(torch.tensor(x)).detach().numpy(), rtol=1e-5)


def test_modulelist_operations(torch):
    def run(lib):
        nn = lib.nn
        ml = nn.ModuleList([nn.Linear(1, 1), nn.Identity()])
        ml.append(nn.Linear(1, 2))
        ml.extend([nn.Identity(), nn.Linear(2, 2)])
        ml.insert(1, nn.Identity())
        out = [repr(ml), len(ml), type(ml[-1]).__name__, repr(ml[1:4])]
        del ml[0]
        out.append(list(ml._modules))
        del ml[::2]
        out.append(repr(ml))
        ml[0] = nn.Linear(4, 4)
        ml += [nn.Identity()]
        out.append(repr(ml))
        out.append(repr(ml + nn.ModuleList([nn.Identity()])))
        out.append(type(ml.pop(-1)).__name__)
        out.append(_error(lambda: ml[7]))
        out.append(_error(lambda: ml.extend(3)))
        out.append(_error(lambda: ml(1)))
        return out
    assert run(rg) == run(torch)


def test_moduledict_operations(torch):
    def run(lib):
        nn = lib.nn
        md = nn.ModuleDict({"b": nn.Identity(), "a": nn.Linear(1, 1)})
        md["c"] = nn.Linear(1, 2)
        md.update([("d", nn.Identity())])
        md.update(OrderedDict([("e", nn.Identity())]))
        out = [list(md), list(md.keys()), "a" in md, len(md), repr(md)]
        out.append(type(md.pop("a")).__name__)
        del md["b"]
        out.append([k for k, _ in md.items()])
        out.append(len(list(md.values())))
        out.append(_error(lambda: md.update(3)))
        out.append(_error(lambda: md.update([("x",)])))
        md.clear()
        out.append(len(md))
        return out
    assert run(rg) == run(torch)


def test_parameterlist_operations(torch):
    def run(lib):
        nn = lib.nn
        pl = nn.ParameterList([lib.zeros(2), nn.Parameter(lib.ones(3), requires_grad=False)])
        pl.append(lib.zeros(1, 2))
        pl.extend([lib.zeros(4)])
        pl.append("not a tensor")
        out = [rg_text(repr(pl)), len(pl), [n for n, _ in pl.named_parameters()]]
        out.append(type(pl[0]).__name__)
        out.append(repr(pl[1:3]) and len(pl[1:3]))
        out.append(pl[-1])
        pl[0] = lib.ones(5)
        out.append(tuple(pl[0].shape))
        out.append(_error(lambda: pl.extend(lib.zeros(2))))
        out.append(_error(lambda: pl[9]))
        out.append(_error(lambda: pl()))
        return out
    got, want = run(rg), run(torch)
    got[0] = rg_text(got[0])
    assert got == want


def test_parameterdict_operations(torch):
    def run(lib):
        nn = lib.nn
        pd = nn.ParameterDict({"z": lib.zeros(2), "a": lib.ones(1)})  # dict: sorted keys
        pd.update(OrderedDict([("y", lib.zeros(1)), ("b", lib.zeros(1))]))  # kept in order
        pd["c"] = nn.Parameter(lib.zeros(3))
        out = [list(pd), [n for n, _ in pd.named_parameters()], "a" in pd, len(pd), repr(pd)]
        out.append(type(pd["a"]).__name__)
        out.append(type(pd.pop("a")).__name__)
        out.append(pd.get("missing", 3))
        out.append(list(pd.setdefault("d", lib.zeros(1)).shape))
        out.append(pd.popitem()[0])
        out.append(list(reversed(pd)))
        out.append(list((pd | nn.ParameterDict({"q": lib.zeros(1)})).keys()))
        out.append(_error(lambda: pd[3]))
        out.append(_error(lambda: pd.update([("x", 1, 2)])))
        out.append(_error(lambda: pd(1)))
        pd.clear()
        out.append(len(pd))
        return out
    assert run(rg) == run(torch)


# -- Linear and Identity -------------------------------------------------------------------------
def test_linear_forward_backward_match_torch(torch):
    r, t = rg.nn.Linear(4, 3), torch.nn.Linear(4, 3)
    copy_weights(t, r)
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    ro, to = r(rg.tensor(x)), t(torch.tensor(x))
    np.testing.assert_allclose(ro.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-6)
    (ro * ro).sum().backward()
    (to * to).sum().backward()
    np.testing.assert_allclose(r.weight.grad.numpy(), t.weight.grad.numpy(), rtol=1e-4)
    np.testing.assert_allclose(r.bias.grad.numpy(), t.bias.grad.numpy(), rtol=1e-4)
    one = np.ones(4, dtype=np.float32)
    np.testing.assert_allclose(r(rg.tensor(one)).detach().numpy(),
                               t(torch.tensor(one)).detach().numpy(), rtol=1e-5)


def test_linear_default_init_bounds_and_options(torch):
    rg.manual_seed(0)
    lin = rg.nn.Linear(50, 40)
    bound = 1 / np.sqrt(50)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.9 * bound
    assert w.std() == pytest.approx(bound / np.sqrt(3), rel=0.1)
    nb = rg.nn.Linear(2, 3, bias=False, dtype=rg.float64)
    assert nb.bias is None and nb.weight.dtype == rg.float64
    assert repr(nb) == repr(torch.nn.Linear(2, 3, bias=False))
    assert [n for n, _ in nb.named_parameters()] == ["weight"]
    assert list(nb.state_dict()) == ["weight"]


def test_identity_ignores_arguments(torch):
    assert repr(rg.nn.Identity(3, a=1)) == repr(torch.nn.Identity(3, a=1))
    x = rg.ones(2)
    assert rg.nn.Identity()(x) is x


def test_module_trains_with_optimizer():
    rg.manual_seed(0)
    net = rg.nn.Sequential(rg.nn.Linear(2, 8), rg.nn.Linear(8, 1))
    x = rg.randn(32, 2)
    y = x.sum(1, keepdim=True) * 0.5
    opt = rg.optim.SGD(net.parameters(), lr=0.05)
    first = None
    for _ in range(50):
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < 0.01 * first


def test_custom_module_regex_repr():
    class Net(rg.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = rg.nn.Sequential(rg.nn.Linear(1, 1))

        def extra_repr(self):
            return "depth=1\nwidth=1"

    text = repr(Net())
    assert re.fullmatch(r"Net\(\n  depth=1\n  width=1\n  \(body\): Sequential\(\n    \(0\): "
                        r"Linear\(in_features=1, out_features=1, bias=True\)\n  \)\n\)", text)


def test_backward_hooks_fire_once_per_backward():
    # Full coverage against torch is in test_backward_hooks.py.
    m = rg.nn.Linear(1, 1)
    calls = []
    m.register_full_backward_hook(lambda mod, gi, go: calls.append((len(gi), len(go))))
    m(rg.ones(2, 1, requires_grad=True)).sum().backward()
    assert calls == [(1, 1)]


def test_parameter_of_integer_tensor_error_matches_torch(torch):
    def f(lib):
        try:
            lib.nn.Parameter(lib.tensor([1, 2]))
        except RuntimeError as e:
            return str(e)
    assert f(rg) == f(torch)
    assert rg.nn.Parameter(rg.tensor([1, 2]), requires_grad=False).requires_grad is False
