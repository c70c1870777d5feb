"""``retrograd.func`` against ``torch.func``: values, Jacobians, Hessians, errors, module calls,
vmap, and the per-sample-gradient and model-ensembling recipes of PyTorch's tutorials run
unchanged."""

import numpy as np
import pytest

import retrograd

RNG = np.random.default_rng(0)
X = RNG.standard_normal(4)
Y = RNG.standard_normal(4)


def _np(t):
    return t.detach().numpy()


def _both(torch, fn):
    """``fn(lib)`` under retrograd and torch; results flattened to arrays."""
    out = []
    for lib in (retrograd, torch):
        r = fn(lib)
        flat = []

        def walk(x, flat=flat):
            if isinstance(x, (tuple, list)):
                for y in x:
                    walk(y)
            elif isinstance(x, dict):
                for k in sorted(x):
                    walk(x[k])
            else:
                flat.append(_np(x))

        walk(r)
        out.append(flat)
    assert len(out[0]) == len(out[1])
    for a, b in zip(*out):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _f(lib, x, y):
    return (x.sin() * y + x * x * y.exp()).sum()


@pytest.mark.parametrize("case", ["grad", "grad_argnums", "grad_aux", "grad_and_value",
                                  "vjp", "jvp", "jacrev", "jacrev_multi", "jacfwd",
                                  "jacfwd_argnums", "hessian", "grad_grad", "jacrev_dict",
                                  "jvp_of_grad", "grad_of_jvp", "hessian_saved_outputs"])
def test_transforms_match_torch(torch, case):
    def run(lib):
        F = lib.func
        x, y = lib.tensor(X), lib.tensor(Y)
        if case == "grad":
            return F.grad(lambda a: _f(lib, a, y))(x)
        if case == "grad_argnums":
            return F.grad(lambda a, b: _f(lib, a, b), argnums=(0, 1))(x, y)
        if case == "grad_aux":
            return F.grad(lambda a: (_f(lib, a, y), a * 2), has_aux=True)(x)
        if case == "grad_and_value":
            return F.grad_and_value(lambda a, b: _f(lib, a, b), argnums=1)(x, y)
        if case == "vjp":
            out, fn = F.vjp(lambda a, b: (a * b, a.exp()), x, y)
            return out, fn((lib.ones(4), lib.tensor(Y)))
        if case == "jvp":
            return F.jvp(lambda a, b: a.sin() * b, (x, y), (lib.tensor(Y), lib.ones(4)))
        if case == "jacrev":
            return F.jacrev(lambda a: a.sin() * a.sum())(x)
        if case == "jacrev_multi":
            return F.jacrev(lambda a, b: (a * b, (a @ b).tanh()), argnums=(0, 1))(x, y)
        if case == "jacfwd":
            return F.jacfwd(lambda a: a.sin() * a.sum())(x)
        if case == "jacfwd_argnums":
            return F.jacfwd(lambda a, b: (a * b).cumsum(0), argnums=(0, 1))(x, y)
        if case == "hessian":
            return F.hessian(lambda a: _f(lib, a, y))(x)
        if case == "grad_grad":
            return F.grad(lambda a: F.grad(lambda b: _f(lib, b, y))(a).sum())(x)
        if case == "jacrev_dict":
            return F.jacrev(lambda p: p["w"] * p["b"].sum())({"w": x, "b": y})
        if case == "jvp_of_grad":
            return F.jvp(F.grad(lambda a: _f(lib, a, y)), (x,), (lib.tensor(Y),))
        if case == "hessian_saved_outputs":  # tanh, exp, softmax read their saved outputs
            return F.hessian(lambda a: (a.tanh() * a.exp()).softmax(0)[0] * y.sum())(x)
        if case == "grad_of_jvp":
            return F.grad(lambda a: F.jvp(lambda b: _f(lib, b, y), (a,), (lib.ones(4),))[1])(x)

    _both(torch, run)


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - comparing with torch's
        return type(e).__name__, str(e).split("Got primals with structure")[0]
    return None


@pytest.mark.parametrize("case", ["nonscalar", "argnum", "tuple_out", "aux_shape", "jvp_tuple",
                                  "jvp_struct", "jvp_empty", "vjp_int", "not_tensor",
                                  "vmap_sizes", "vmap_random", "stack_none", "stack_mode",
                                  "fc_dup", "fc_strict", "fc_tied"])
def test_errors_match_torch(torch, case):
    def run(lib):
        F = lib.func
        x = lib.ones(3)
        calls = {
            "nonscalar": lambda: F.grad(lambda a: a * 2)(x),
            "argnum": lambda: F.grad(lambda a: a.sum(), argnums=1)(x),
            "tuple_out": lambda: F.grad(lambda a: (a.sum(), 1))(x),
            "aux_shape": lambda: F.grad(lambda a: a.sum(), has_aux=True)(x),
            "jvp_tuple": lambda: F.jvp(lambda a: a, x, x),
            "jvp_struct": lambda: F.jvp(lambda a: a, (x,), (x, x)),
            "jvp_empty": lambda: F.jvp(lambda: x, (), ()),
            "vjp_int": lambda: F.vjp(lambda a: 3, x),
            "not_tensor": lambda: F.grad(lambda a: a.sum())(3.0),
            "vmap_sizes": lambda: F.vmap(lambda a, b: a + b)(lib.ones(2), lib.ones(3)),
            "vmap_random": lambda: F.vmap(lambda a: a + lib.rand(1))(lib.ones(2)),
            "stack_none": lambda: F.stack_module_state([]),
            "stack_mode": lambda: F.stack_module_state([lib.nn.Linear(2, 2),
                                                        lib.nn.Linear(2, 2).eval()]),
            "fc_dup": lambda: F.functional_call(lib.nn.Linear(2, 2), ({"weight": x},
                                                                       {"weight": x}), (x,)),
            "fc_strict": lambda: F.functional_call(lib.nn.Linear(2, 2), {"weight": x, "foo": x},
                                                   (x,), strict=True),
            "fc_tied": lambda: F.functional_call(_tied(lib), {"a.weight": lib.ones(2, 2),
                                                              "b.weight": lib.zeros(2, 2)},
                                                 (lib.ones(2),)),
        }
        return _err(calls[case])

    assert run(retrograd) == run(torch)


def _tied(lib):
    class Tied(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Linear(2, 2)
            self.b = lib.nn.Linear(2, 2)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.a(x) + self.b(x)

    m = Tied()
    with lib.no_grad():
        m.a.weight.copy_(lib.tensor([[0.5, -1.0], [2.0, 0.25]]))
        m.a.bias.copy_(lib.tensor([0.1, -0.2]))
        m.b.bias.copy_(lib.tensor([0.3, 0.4]))
    return m


def test_functional_call_tied_weights_and_buffers(torch):
    wa = RNG.standard_normal((2, 2))
    xa = RNG.standard_normal((3, 2))

    def run(lib):
        m = _tied(lib)
        x = lib.tensor(X[:2]).float()
        w = lib.tensor(wa).float()
        bn = lib.nn.BatchNorm1d(2)
        bstate = {"running_mean": lib.ones(2), "running_var": lib.ones(2) * 4}
        xb = lib.tensor(xa).float()
        bn.eval()
        return (lib.func.functional_call(m, {"a.weight": w}, (x,)),
                lib.func.functional_call(m, {"a.weight": w}, (x,), tie_weights=False),
                lib.func.functional_call(bn, bstate, (xb,)),
                m.a.weight)  # the module is left as it was

    rg, th = run(retrograd), run(torch)
    for a, b in zip(rg[:3], th[:3]):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6)


def test_vmap_dims_nesting_and_randomness(torch):
    A = RNG.standard_normal((3, 4, 2))
    B = RNG.standard_normal((2, 3))

    def run(lib):
        F = lib.func
        a, b = lib.tensor(A), lib.tensor(B)
        r1 = F.vmap(lambda x, y: x @ y, in_dims=(0, None))(a, b)
        r2 = F.vmap(lambda x, y: x @ y, in_dims=(1, None), out_dims=1)(a, b)
        r3 = F.vmap(F.vmap(lambda x: x.sum() * x))(a)
        r4 = F.vmap(lambda d: d["p"] * d["q"], in_dims=({"p": 0, "q": None},))(
            {"p": a, "q": lib.tensor(B[:, 0])})
        r5 = F.vmap(lambda x: (x.sum(0), x.max()), chunk_size=2)(a)
        r6 = F.vmap(F.jacrev(lambda x: (x @ b).tanh() * x.sum()))(a)  # per-sample Jacobians
        if lib is retrograd:
            assert retrograd.func._vmap.LAST["path"] == "rules"
        return r1, r2, r3, r4, r5, r6

    _both(torch, lambda lib: run(lib))
    x = retrograd.ones(3)
    same = retrograd.func.vmap(lambda a: a + retrograd.rand(()), randomness="same")(x)
    diff = retrograd.func.vmap(lambda a: a + retrograd.rand(()), randomness="different")(x)
    assert len(set(same.tolist())) == 1 and len(set(diff.tolist())) == 3


def test_per_sample_gradients_recipe(torch):
    """PyTorch's tutorial, unchanged but for the library."""
    data = RNG.standard_normal((8, 10)).astype(np.float32)
    labels = RNG.integers(0, 3, 8)

    def run(lib):
        F = lib.nn.functional

        class SimpleMLP(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = lib.nn.Linear(10, 16)
                self.fc2 = lib.nn.Linear(16, 3)

            def forward(self, x):
                return self.fc2(F.relu(self.fc1(x)))

        lib.manual_seed(0)
        model = SimpleMLP()
        for p, v in zip(model.parameters(), _weights):
            with lib.no_grad():
                p.copy_(lib.tensor(v))
        from_func = lib.func

        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def compute_loss(params, buffers, sample, target):
            batch = sample.unsqueeze(0)
            targets = target.unsqueeze(0)
            predictions = from_func.functional_call(model, (params, buffers), (batch,))
            return F.cross_entropy(predictions, targets)

        ft_compute_grad = from_func.grad(compute_loss)
        ft_compute_sample_grad = from_func.vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
        out = ft_compute_sample_grad(params, buffers, lib.tensor(data), lib.tensor(labels))
        if lib is retrograd:  # through the batching rules, not the per-sample loop
            assert retrograd.func._vmap.LAST == {"path": "rules", "reason": None}
        return out

    _both(torch, run)


def test_per_sample_losses_ignored_and_weighted_targets(torch):
    """Per-sample cross_entropy through the nll rule: one target a sample, some ignored (their
    mean is 0/0) or class-weighted, as torch.func computes them. (An ignored sample's gradient
    is NaN, not torch's 0, with or without vmap: nll_loss's backward, left out here.)"""
    x = RNG.standard_normal((4, 3))
    tg = np.array([0, 2, 1, 2])

    def run(lib):
        F, w = lib.nn.functional, lib.tensor([0.5, 2.0, 1.5], dtype=lib.float64)
        cases = [dict(ignore_index=2), dict(weight=w), dict(weight=w, reduction="sum"), {}]
        out = []
        for kw in cases:
            def loss(a, t, kw=kw):
                return F.cross_entropy(a.unsqueeze(0), t.unsqueeze(0), **kw)
            xs, ts = lib.tensor(x), lib.tensor(tg)
            out.append(lib.func.vmap(loss)(xs, ts))
            if "ignore_index" not in kw:
                out.append(lib.func.vmap(lib.func.grad(loss))(xs, ts))
            if lib is retrograd:
                assert retrograd.func._vmap.LAST["path"] == "rules"
        return out

    _both(torch, run)


def test_vmap_nodes_name_the_functions_line():
    """The nodes the batched run makes name the line of the function that made the traced
    call (as when the function runs on the batch), not the line that called vmap."""
    from retrograd.autograd.provenance import describe

    def f(x):
        return x.exp() * 2  # this line

    y = retrograd.func.vmap(f)(retrograd.randn(3, 2, requires_grad=True))
    line = f.__code__.co_firstlineno + 1
    for node in (y.grad_fn, y.grad_fn.next_functions[0][0]):
        assert describe(node._site).endswith(f"line {line}, in f")


_W = np.random.default_rng(3)
_weights = [_W.standard_normal(s).astype(np.float32) * 0.3
            for s in ((16, 10), (16,), (3, 16), (3,))]


def test_model_ensembling_recipe(torch):
    data = RNG.standard_normal((5, 10)).astype(np.float32)

    def run(lib):
        import copy

        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = lib.nn.Linear(10, 16)
                self.fc2 = lib.nn.Linear(16, 3)

            def forward(self, x):
                return self.fc2(lib.nn.functional.relu(self.fc1(x)))

        models = []
        for i in range(4):
            m = Net()
            for p, v in zip(m.parameters(), _weights):
                with lib.no_grad():
                    p.copy_(lib.tensor(v * (i + 1)))
            models.append(m)
        params, buffers = lib.func.stack_module_state(models)
        base_model = copy.deepcopy(models[0]).to("meta") if lib is not retrograd else \
            copy.deepcopy(models[0])

        def fmodel(params, buffers, x):
            return lib.func.functional_call(base_model, (params, buffers), (x,))

        minibatches = lib.tensor(data).expand(4, 5, 10)
        out = (lib.func.vmap(fmodel)(params, buffers, minibatches),
               lib.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, lib.tensor(data)))
        if lib is retrograd:  # through the batching rules, not the per-sample loop
            assert retrograd.func._vmap.LAST == {"path": "rules", "reason": None}
        return out

    _both(torch, run)


def test_custom_function_under_transforms(torch):
    """A setup_context Function with jvp and generate_vmap_rule, as torch.func requires."""
    x = RNG.standard_normal((3, 2))

    def run(lib):
        class Cube(lib.autograd.Function):
            generate_vmap_rule = True

            @staticmethod
            def forward(a):
                return a ** 3

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])
                ctx.save_for_forward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                return 3 * a * a * g

            @staticmethod
            def jvp(ctx, t):
                (a,) = ctx.saved_tensors
                return 3 * a * a * t

        F = lib.func
        t = lib.tensor(x)
        return (F.vmap(F.grad(lambda a: Cube.apply(a).sum()))(t),
                F.jvp(Cube.apply, (t,), (lib.ones(3, 2, dtype=t.dtype),)),
                F.vmap(Cube.apply)(t))

    _both(torch, run)


def _vmap_path(fn, *args, **kw):
    import warnings

    from retrograd.func import _vmap

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = retrograd.func.vmap(fn, **kw)(*args)
    return out, dict(_vmap.LAST), [str(m.message) for m in w]


def test_vmap_batches_by_rules_or_loops_faithfully():
    """Each case equals the per-sample loop; the path says whether the rules could do it."""
    # samples 0 and 3 (the two vmap traces) have one sign pattern, sample 1 another
    x = retrograd.tensor(np.array([[1.0, -2.0], [-1.0, -3.0], [1.0, -2.0], [2.0, -0.5]]))
    w = retrograd.tensor(np.array([0.5, -1.5]), requires_grad=True)

    def loop(fn):
        return np.stack([fn(x[i]).detach().numpy() for i in range(4)])

    cases = {
        # (function, path): rules where the tape is the program, loop where it is not
        "rules": (lambda a: (a * w).tanh().sum() + a.exp().mean(), "rules"),
        "chunks": (lambda a: (a @ w) * a.sum(), "rules"),
        "closure_constant": (lambda a: a * w.detach(), "rules"),
        # a comparison operator is recorded: its mask is batched
        "mask": (lambda a: retrograd.where(a > 0, a, a * 2), "rules"),
        # gt() records nothing: its mask, equal for samples 0 and 3 but not 1, makes it loop
        "mask_unrecorded": (lambda a: retrograd.where(retrograd.gt(a, 0), a, a * 2), "loop"),
        # Python reads a value that is the same for every sample: the loop
        "item_unbatched": (lambda a: a * 2 if w.sum().item() > 0 else a * 3, "loop"),
        "inplace": (lambda a: (a * 1).mul_(2), "loop"),
        "made_inside": (lambda a: a + retrograd.ones(2) * retrograd.tensor([1.0, 3.0]), "rules"),
        "made_from_data": (lambda a: a * retrograd.tensor(a.detach()), "loop"),
    }
    for name, (fn, path) in cases.items():
        kw = {"chunk_size": 3} if name == "chunks" else {}
        got, how, _ = _vmap_path(fn, x, **kw)
        assert how["path"] == path, (name, how)
        np.testing.assert_allclose(got.detach().numpy(), loop(fn), rtol=1e-12, err_msg=name)

    # in place, PyTorch's errors where per-sample values would go into an unbatched tensor
    for fn in (lambda a: retrograd.zeros(2).add_(a) * 2, lambda a: _ACC.add_(a) * 1):
        with pytest.raises(RuntimeError, match=r"output with shape \[2\] doesn't match the "
                                               r"broadcast shape \[4, 2\]"):
            retrograd.func.vmap(fn)(x)
    with pytest.raises(RuntimeError, match=r"vmap: inplace arithmetic\(self, \*extra_args\) is "
                                           "not possible"):
        retrograd.func.vmap(lambda a: retrograd.zeros(2).copy_(a))(x)
    with pytest.raises(RuntimeError, match=r"vmap: index_put_\(self"):
        retrograd.func.vmap(lambda a: retrograd.zeros(3, dtype=a.dtype).index_put_(
            (retrograd.tensor([0, 1]),), a))(x)
    # ... but not into what PyTorch batches (zeros_like of a batched tensor); and a write into
    # an input happens once per sample, the traced one too
    got, how, _ = _vmap_path(lambda a: retrograd.zeros_like(a).add_(a), x)
    np.testing.assert_array_equal(got.numpy(), x.numpy())
    y = x.clone()
    got, how, _ = _vmap_path(lambda a, b: a.add_(b), y, retrograd.ones(2), in_dims=(0, None))
    assert how["path"] == "loop"
    np.testing.assert_array_equal(y.numpy(), x.numpy() + 1)

    # grad mode as traced: vmap(grad) under no_grad, and no_grad inside the function
    with retrograd.no_grad():
        got, how, _ = _vmap_path(retrograd.func.grad(lambda a: a.sin().sum()), x)
    assert how["path"] == "rules"
    np.testing.assert_allclose(got.numpy(), x.cos().numpy(), rtol=1e-12)

    def detached_twice(a):
        with retrograd.no_grad():
            b = a * 2
        return (b * a).sum()

    got, how, _ = _vmap_path(retrograd.func.grad(detached_twice), x)
    assert how["path"] == "rules"
    np.testing.assert_allclose(got.numpy(), 2 * x.numpy(), rtol=1e-12)

    # Python reading a per-sample value, backward() of one: PyTorch's errors
    for fn, msg in [(lambda a: a * 2 if a.sum().item() > 0 else a, r"calling \.item\(\)"),
                    (lambda a: a * 2 if a.sum() > 0 else a, "data-dependent control flow"),
                    (lambda a: a * float(a[0]), r"calling \.item\(\)"),
                    (lambda a: retrograd.tensor(a.tolist()), "doesn't have storage"),
                    (lambda a: _backward_sum(a, w), r"backward\(\) called inside a functorch")]:
        with pytest.raises(RuntimeError, match=msg):
            retrograd.func.vmap(fn)(x)
    # ... not where the library reads one (an op written on arrays): the loop
    got, how, _ = _vmap_path(lambda a: retrograd.quantile(a, 0.5), x)
    assert how["path"] == "loop"
    np.testing.assert_allclose(got.numpy(), np.quantile(x.numpy(), 0.5, axis=1))

    # an op without a rule: PyTorch's performance warning, and the loop's values
    got, how, warned = _vmap_path(lambda a: retrograd.roll(a, 1, 0), x)
    assert how["path"] == "loop" and how["reason"].startswith("no batching rule")
    assert any("There is a performance drop because we have not yet implemented the batching "
               "rule for RollBackward0." in m for m in warned), warned
    np.testing.assert_allclose(got.numpy(), np.roll(x.numpy(), 1, 1))


_ACC = retrograd.zeros(2)


def _backward_sum(a, w):
    y = (a * w).sum()
    y.backward()
    return y.detach()
