"""``retrograd.func``'s errors and return structures against ``torch.func``'s: argument checks
(argnums, chunk_size, in_dims, out_dims, pytree structures), the messages naming the function,
return types kept through ``vmap``, empty batches, ``linearize``."""

import numpy as np
import pytest

import retrograd

from .oracle import compare, compare_error

A = np.arange(6.0).reshape(3, 2) / 5 - 0.4


def t(lib, a=A):
    return lib.tensor(np.asarray(a))


ERRORS = [
    lambda lib: lib.func.grad(lambda a, b: (a * b).sum(), argnums=(0, -2))(t(lib), t(lib)),
    lambda lib: lib.func.grad(lambda a: ((a * a).sum(), 3), has_aux=True)(t(lib)),
    lambda lib: lib.func.jacrev(lambda a: a.sin(), chunk_size=0)(t(lib)),
    lambda lib: lib.func.jacfwd(lambda a: a * lib.rand(2))(t(lib)[0]),
    lambda lib: lib.func.vjp(lambda a: a.sin(), t(lib))[1]((t(lib),)),
    lambda lib: lib.func.jvp(lambda a, b: a, (t(lib), t(lib)), (t(lib),)),
    lambda lib: lib.func.vmap(lambda a, b: a + b, in_dims=(0,))(t(lib), t(lib)),
    lambda lib: lib.func.vmap(lambda a: a, in_dims="0")(t(lib)),
    lambda lib: lib.func.vmap(lambda a: a, in_dims=[0])(t(lib)),
    lambda lib: lib.func.vmap(lambda a: a, in_dims=None)(t(lib)),
    lambda lib: lib.func.vmap(lambda a: a, in_dims=(None,))(t(lib)),
    lambda lib: lib.func.vmap(lambda a, b: a + b)(t(lib), lib.ones(2, 3)),
    lambda lib: lib.func.vmap(lambda a: a * 2, out_dims=None)(t(lib)),
    lambda lib: lib.func.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(t(lib)),
    lambda lib: lib.func.vmap(lambda a: 3.0)(t(lib)),
    lambda lib: lib.func.vmap(lambda a: a + lib.rand(()))(t(lib)),
    # (the second scalar normal only takes the one the first cached: no draw from the twister)
    lambda lib: (lib.randn(()), lib.func.vmap(lambda a: a + lib.randn(()))(t(lib))),
    lambda lib: (lib.randn((), dtype=lib.float64),
                 lib.func.vmap(lambda a: a + lib.randn((), dtype=lib.float64))(t(lib))),
    lambda lib: lib.func.jvp(lambda a: a * 2, (1.0,), (1.0,)),
    lambda lib: lib.func.jvp(lambda a: a * 2, (t(lib),), (1.0,)),
    lambda lib: _in_level(lib, lambda fw: fw.make_dual(t(lib), t(lib), level=1)),
    lambda lib: _in_level(lib, lambda fw: fw.unpack_dual(fw.make_dual(t(lib), t(lib)), level=2)),
    lambda lib: lib.autograd.forward_ad.make_dual(t(lib), t(lib), level=0),
]


def _in_level(lib, fn):
    with lib.autograd.forward_ad.dual_level():
        return fn(lib.autograd.forward_ad)


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(torch, i):
    compare_error(ERRORS[i])


def test_structures(torch):
    def run(lib):
        x = t(lib)
        mx = lib.func.vmap(lambda a: a.max(0))(x)
        srt = lib.func.vmap(lambda a: a.sort())(x)
        nested = lib.func.vmap(lambda d: d["a"] * d["b"][0],
                               in_dims=({"a": 0, "b": None},))({"a": x, "b": [x[0], x[1]]})
        empty = lib.func.vmap(lambda a: a.sum(0), out_dims=1)(lib.ones(0, 2, 3))
        unbatched = lib.func.vmap(lambda a: (a * 2, lib.ones(2)), out_dims=(0, None))(x)
        out, fn = lib.func.linearize(lambda a: a.sin() * a, x)
        return (type(mx).__name__, mx.values, mx.indices, type(srt).__name__, srt.indices,
                nested, empty, unbatched, out, fn(lib.ones(3, 2, dtype=x.dtype)))

    ours, ref = run(retrograd), run(torch)
    assert ours[0] == ref[0] and ours[3] == ref[3]
    compare(lambda lib: run(lib)[1:3] + run(lib)[4:])
    assert tuple(ours[6].shape) == (3, 0) and ours[6].dtype == retrograd.float32


def test_linearize_errors(torch):
    compare_error(lambda lib: lib.func.linearize(lambda a: a * 2, t(lib))[1](t(lib), t(lib)),
                  exact=False)
    compare_error(lambda lib: lib.func.linearize(lambda a: a * 2, t(lib))[1](lib.ones(2)))
    compare_error(lambda lib: lib.func.linearize(lambda a: a * 2, t(lib))[1](
        lib.ones(3, 2, dtype=lib.float32)))


def test_vmap_rules_of_split_unbind_logsumexp_einsum(torch):
    """These batch by rules (no per-sample loop, no performance warning, as in PyTorch)."""
    import warnings

    from retrograd.func import _vmap

    fns = [lambda lib, a: a.split(1, 1), lambda lib, a: a.chunk(2, -1),
           lambda lib, a: a.split([1, 1], 0), lambda lib, a: a.unbind(1),
           lambda lib, a: a.logsumexp(1), lambda lib, a: a.logsumexp((0, 1), keepdim=True),
           lambda lib, a: lib.einsum("ij,kj->ik", a, a), lambda lib, a: lib.einsum("ii->", a)]
    x = np.arange(12.0).reshape(3, 2, 2) / 7
    for f in fns:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            compare(lambda lib, f=f: lib.func.vmap(lambda a: f(lib, a))(t(lib, x)))
        assert _vmap.LAST["path"] == "rules"
        compare(lambda lib, f=f: lib.func.vmap(lib.func.grad(
            lambda a: sum(o.sin().sum() for o in (f(lib, a) if isinstance(f(lib, a), tuple)
                                                  else (f(lib, a),)))))(t(lib, x)))


_NETS: dict = {}


def _cnn(lib, seed):
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3)
            self.conv2 = nn.Conv2d(4, 6, 3, groups=2)
            self.fc = nn.Linear(6 * 2 * 2, 5)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
            return F.log_softmax(self.fc(x.flatten(1)), dim=1)

    net = _NETS.setdefault(lib.__name__, Net)()  # one class: stack_module_state wants it
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)) * 0.3))
    return net.double()


def test_cnn_recipes_batch_by_rules(torch):
    """Per-sample gradients and model ensembling over a CNN (conv, max_pool2d): the batch folds
    into the convolutions (per-sample weights become groups), no per-sample loop."""
    from retrograd.func import _vmap

    rng = np.random.default_rng(3)
    xs, ys = rng.standard_normal((5, 1, 8, 8)), rng.integers(0, 5, 5)

    def per_sample(lib):
        model, fc = _cnn(lib, 0), lib.func
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, s, t):
            out = fc.functional_call(model, p, (s.unsqueeze(0),))
            return lib.nn.functional.nll_loss(out, t.unsqueeze(0))

        return fc.vmap(fc.grad(loss), in_dims=(None, 0, 0))(params, t(lib, xs), lib.tensor(ys))

    compare(per_sample)
    assert _vmap.LAST["path"] == "rules"

    def ensemble(lib):
        models = [_cnn(lib, s) for s in range(3)]
        params, buffers = lib.func.stack_module_state(models)

        def f(p, b, x):
            return lib.func.functional_call(models[0], (p, b), (x,))

        out = lib.func.vmap(f, in_dims=(0, 0, None))(params, buffers, t(lib, xs))
        return out, lib.autograd.grad(out.sum(), [params["conv1.weight"], params["fc.bias"]])

    compare(ensemble)
    assert _vmap.LAST["path"] == "rules"


def test_norm_and_embedding_rules(torch):
    """layer_norm (shared or per-sample affine), eval batch_norm and embedding (shared or
    per-sample tables, as a per-sample gradient's leaf) batch by rules."""
    from retrograd.func import _vmap

    rng = np.random.default_rng(0)
    xb, ib = rng.standard_normal((4, 2, 3, 5)), rng.integers(0, 10, (4, 3))
    w5, b5, rm, rv = (rng.standard_normal(5), rng.standard_normal(5), rng.standard_normal(3),
                      rng.random(3) + 0.5)
    table, ws = rng.standard_normal((10, 4)), rng.standard_normal((3, 5))
    F = lambda lib: lib.nn.functional  # noqa: E731
    cases = [
        lambda lib: lib.func.vmap(lambda a: F(lib).layer_norm(a, (5,), t(lib, w5), t(lib, b5)))(
            t(lib, xb)),
        lambda lib: lib.func.vmap(lambda a: F(lib).layer_norm(a, (3, 5)))(t(lib, xb)),
        lambda lib: lib.func.vmap(lambda w, a: F(lib).layer_norm(a, (5,), w), in_dims=(0, None))(
            t(lib, ws), t(lib, xb[0])),
        lambda lib: (lambda s: lib.func.vmap(lambda a: F(lib).batch_norm(  # module buffers
            a, s[0], s[1], s[0], s[1], training=False))(t(lib, xb[..., 0])))(
            (t(lib, rm), t(lib, rv))),
        lambda lib: lib.func.vmap(lambda i: F(lib).embedding(i, t(lib, table)))(lib.tensor(ib)),
        lambda lib: lib.func.vmap(lib.func.grad(
            lambda w, i: F(lib).embedding(i, w).sin().sum()), in_dims=(None, 0))(
            t(lib, table), lib.tensor(ib)),
        lambda lib: lib.func.vmap(lib.func.grad(
            lambda w, a: F(lib).layer_norm(a, (5,), w).sin().sum()), in_dims=(None, 0))(
            t(lib, w5), t(lib, xb)),
    ]
    cases.append(lambda lib: lib.func.vmap(lambda a: F(lib).avg_pool2d(a, 2, ceil_mode=True))(
        t(lib, xb)))
    cases.append(lambda lib: (lambda s: lib.func.vmap(lib.func.grad(  # per-sample BN weights
        lambda w, a: F(lib).batch_norm(a, s[0], s[1], w, s[0], training=False).sin().sum()),
        in_dims=(None, 0))(t(lib, rm), t(lib, xb[..., 0])))((t(lib, rm), t(lib, rv))))
    for case in cases:
        compare(case)
        assert _vmap.LAST["path"] == "rules"


def test_results_stay_in_the_graph_of_closure_tensors(torch):
    """A tensor that requires grad read from a closure (a module's parameter) keeps the
    transforms' results in its graph, as PyTorch's levels do: a loss of per-sample input
    gradients (a physics-informed network) trains the parameter; without one, results are
    plain tensors."""

    def run(lib):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        x = lib.tensor([[0.5, -1.0], [0.2, 0.1]])
        F = lib.func
        flags = [F.grad(lambda a: (a.sin() * w).sum())(x[0]).requires_grad,
                 F.vjp(lambda a: a.sin() * w, x[0])[0].requires_grad,
                 F.jacrev(lambda a: a.sin() * w)(x[0]).requires_grad,
                 F.jacfwd(lambda a: a.sin() * w)(x[0]).requires_grad,
                 F.hessian(lambda a: (a.sin() * w).sum())(x[0]).requires_grad,
                 F.hessian(lambda a: a.sin().sum())(x[0]).requires_grad,
                 F.grad_and_value(lambda a: (a * a).sum())(x[0])[1].requires_grad]
        du = F.vmap(F.grad(lambda a: (a.sin() * w).sum()))(x)
        du.pow(2).sum().backward()
        return flags, w.grad

    ours, ref = run(retrograd), run(torch)
    assert ours[0] == ref[0]
    np.testing.assert_allclose(ours[1].numpy(), ref[1].numpy(), rtol=1e-6)


def test_small_apis(torch):
    """autograd.Variable, func.replace_all_batch_norm_modules_, checkpoint's helpers."""

    def run(lib):
        V = lib.autograd.Variable
        t = lib.ones(2)
        v = V(t, requires_grad=True)
        net = lib.func.replace_all_batch_norm_modules_(lib.nn.Sequential(lib.nn.BatchNorm1d(2)))
        d = lib.utils.checkpoint.detach_variable((lib.ones(1, requires_grad=True) * 2, 3))
        return (v is t, v.requires_grad, t.requires_grad, isinstance(t, V), v.is_leaf,
                V(lib.ones(1, requires_grad=True) * 2).grad_fn, net[0].running_mean,
                net[0].track_running_stats, d[0].is_leaf, d[0].requires_grad, d[1])

    assert run(retrograd) == run(torch)
    compare_error(lambda lib: lib.autograd.Variable([1.0]))
    compare_error(lambda lib: lib.autograd.Variable(lib.tensor([1]), requires_grad=True))
    compare_error(lambda lib: lib.utils.checkpoint.detach_variable([lib.ones(1)]))
    with retrograd.utils.checkpoint.set_checkpoint_early_stop(False):
        pass


def test_functions_without_vmap_support(torch):
    """A custom Function under vmap needs setup_context and a vmap rule (or
    generate_vmap_rule=True), as in PyTorch, even on unbatched inputs."""

    def classes(lib):
        class Old(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g

        class NoRule(lib.autograd.Function):
            @staticmethod
            def forward(a):
                return a * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g

        return Old, NoRule

    for k in range(2):
        compare_error(lambda lib, k=k: lib.func.vmap(lambda a: classes(lib)[k].apply(a))(
            lib.ones(3, 2)))
        compare_error(lambda lib, k=k: lib.func.vmap(lambda a: a * classes(lib)[k].apply(
            lib.ones(2)))(lib.ones(3, 2)))


def test_vjp_of_no_primals(torch):
    compare(lambda lib: lib.func.vjp(lambda: lib.ones(2) * 3)[0])
    assert retrograd.func.vjp(lambda: retrograd.ones(2))[1](retrograd.ones(2)) == ()


def test_attention_rule(torch):
    """scaled_dot_product_attention batches by rule (float and boolean masks, per-sample
    gradients of queries, keys and values)."""
    from retrograd.func import _vmap

    rng = np.random.default_rng(0)
    q, k, fm = (rng.standard_normal(s) for s in ((3, 2, 4, 5), (3, 2, 6, 5), (3, 4, 6)))
    bm = rng.random((4, 6)) > 0.3

    def sdpa(lib):
        return lib.nn.functional.scaled_dot_product_attention

    cases = [
        lambda lib: lib.func.vmap(lambda a, b, f: sdpa(lib)(a, b, b, attn_mask=f))(
            t(lib, q), t(lib, k), t(lib, fm)),
        lambda lib: (lambda m: lib.func.vmap(lambda a: sdpa(lib)(a, a, a, attn_mask=m))(
            t(lib, q)))(lib.tensor(bm[:, :4])),
        lambda lib: lib.func.vmap(lib.func.grad(
            lambda a, b: sdpa(lib)(a, b, b).sin().sum(), argnums=(0, 1)))(t(lib, q), t(lib, k)),
    ]
    for case in cases:
        compare(case)
        assert _vmap.LAST["path"] == "rules"
