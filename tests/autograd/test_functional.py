"""autograd.functional (vjp, jvp, jacobian, hessian, hvp, vhp) against torch.autograd.functional:
values, return structures, create_graph, strict mode and errors."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from ..oracle import compare, compare_error

RNG = np.random.default_rng(0)
A = RNG.standard_normal(3)
B = RNG.standard_normal((2, 3))
M = RNG.standard_normal((3, 3))


def F(lib):
    return lib.autograd.functional


def t(lib, a, **kw):
    return lib.tensor(np.asarray(a, dtype=np.float64), **kw)


def f_single(x):
    return (x.exp() * x).tanh()


def f_pair(x, y):
    return (x * y).sin(), (x ** 2 + y).sum()


def scalar(x):
    return (x ** 3).sum() + (x[0] * x[1]).sin()


def scalar2(x, y):
    return (x * y.exp()).sum() + (x ** 2).sum() * y.sum()


@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_single_and_tuple(torch, create_graph):
    compare(lambda lib: F(lib).vjp(f_single, t(lib, A), t(lib, A[::-1].copy()),
                                   create_graph=create_graph))
    compare(lambda lib: F(lib).vjp(f_pair, (t(lib, B), t(lib, B + 1)),
                                   (t(lib, B), t(lib, 2.0)), create_graph=create_graph))
    # v may be omitted for a single-element output
    compare(lambda lib: F(lib).vjp(lambda x: (x * x).sum(), t(lib, A)))


def test_jvp(torch):
    compare(lambda lib: F(lib).jvp(f_single, t(lib, A), t(lib, np.ones(3))))
    compare(lambda lib: F(lib).jvp(f_pair, (t(lib, B), t(lib, B + 1)),
                                   (t(lib, B), t(lib, -B))))
    compare(lambda lib: F(lib).jvp(lambda x: x * 3, t(lib, [2.0])))


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_structures(torch, vectorize):
    compare(lambda lib: F(lib).jacobian(f_single, t(lib, A), vectorize=vectorize))
    compare(lambda lib: F(lib).jacobian(f_pair, (t(lib, B), t(lib, B + 1)),
                                        vectorize=vectorize))
    compare(lambda lib: F(lib).jacobian(lambda x: (x.sin(),), t(lib, A), vectorize=vectorize))
    compare(lambda lib: F(lib).jacobian(lambda x, y: x @ y, (t(lib, M), t(lib, A))))


def test_jacobian_create_graph_and_unused_inputs(torch):
    def run(lib):
        x = t(lib, A, requires_grad=True)
        jac = F(lib).jacobian(lambda a, b: a.exp() * 2, (x, t(lib, A)), create_graph=True)
        assert jac[0].requires_grad and not jac[1].requires_grad
        (g,) = lib.autograd.grad(jac[0].sum(), x)
        return jac, g

    compare(run)


def test_forward_mode_strategies(torch):
    for f, inp in [(f_single, lambda lib: t(lib, A)),
                   (f_pair, lambda lib: (t(lib, B), t(lib, B + 1))),
                   (lambda x: x.sum(), lambda lib: t(lib, 2.0))]:
        compare(lambda lib, f=f, inp=inp: F(lib).jacobian(
            f, inp(lib), strategy="forward-mode", vectorize=True))
    # forward over reverse: the formulas read saved inputs (sin) and saved results (exp)
    compare(lambda lib: F(lib).hessian(scalar, t(lib, A), vectorize=True,
                                       outer_jacobian_strategy="forward-mode"))
    compare(lambda lib: F(lib).hessian(scalar2, (t(lib, A), t(lib, A * 2)), vectorize=True,
                                       outer_jacobian_strategy="forward-mode"))
    compare(lambda lib: F(lib).hessian(lambda x, y: (x * y.sin()).sum() * x.sum(),
                                       (t(lib, A), t(lib, A * 2)), vectorize=True,
                                       outer_jacobian_strategy="forward-mode"))


def test_forward_mode_structures_and_graph(torch):
    """PyTorch's forward-mode jacobian returns its nested lists as built (tuple inputs give
    lists) and keeps the tangents' graph (forward-over-reverse hessians require grad)."""

    def shape(o):
        if isinstance(o, (tuple, list)):
            return type(o).__name__, [shape(e) for e in o]
        return tuple(o.shape), o.requires_grad

    def run(lib):
        fm = {"vectorize": True, "strategy": "forward-mode"}
        return [shape(r) for r in (
            F(lib).jacobian(f_pair, (t(lib, B), t(lib, B + 1)), **fm),
            F(lib).jacobian(lambda x, y: x * y, (t(lib, A), t(lib, A)), **fm),
            F(lib).jacobian(lambda x: (x * x, x.sum()), t(lib, A), **fm),
            F(lib).jacobian(lambda x: x * x, t(lib, A, requires_grad=True), **fm),
            F(lib).hessian(scalar2, (t(lib, A), t(lib, A * 2)), vectorize=True,
                           outer_jacobian_strategy="forward-mode"))]

    assert run(retrograd) == run(torch)
    compare_error(lambda lib: F(lib).jacobian(lambda x: [x], t(lib, A), vectorize=True,
                                              strategy="forward-mode"))


def test_hessian(torch):
    compare(lambda lib: F(lib).hessian(scalar, t(lib, A)))
    compare(lambda lib: F(lib).hessian(scalar2, (t(lib, A), t(lib, A * 2))))
    compare(lambda lib: F(lib).hessian(scalar, t(lib, A), vectorize=True))


@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_hvp_vhp(torch, name):
    compare(lambda lib: getattr(F(lib), name)(scalar, t(lib, A), t(lib, A[::-1].copy())))
    compare(lambda lib: getattr(F(lib), name)(scalar2, (t(lib, A), t(lib, A * 2)),
                                              (t(lib, np.ones(3)), t(lib, A))))

    def graph(lib):
        x = t(lib, A, requires_grad=True)
        out, r = getattr(F(lib), name)(scalar, x, t(lib, np.ones(3)), create_graph=True)
        (g,) = lib.autograd.grad(r.sum(), x)
        return out, r, g

    compare(graph)


def test_hvp_of_tanh_network_matches_closed_form():
    # f(x) = sum(tanh(W x)): H v = W^T diag(-2 t (1 - t^2)) W v
    rng = np.random.default_rng(3)
    w = rng.standard_normal((5, 4))
    x = rng.standard_normal(4)
    v = rng.standard_normal(4)
    W = retrograd.tensor(w)
    out, hv = retrograd.autograd.functional.hvp(
        lambda z: (W @ z).tanh().sum(), retrograd.tensor(x), retrograd.tensor(v))
    th = np.tanh(w @ x)
    np.testing.assert_allclose(out.item(), th.sum())
    np.testing.assert_allclose(hv.numpy(), w.T @ (-2 * th * (1 - th ** 2) * (w @ v)))


def _net(lib, w):
    W = lib.tensor(w)
    return lambda z: (W @ z).tanh().sum()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hvp_reverse_over_forward_matches_torch(torch, dtype):
    # hvp runs reverse-over-forward; torch runs the double-backward trick: same values.
    rng = np.random.default_rng(5)
    w, x, v = (rng.standard_normal(s).astype(dtype) for s in ((6, 5), 5, 5))
    compare(lambda lib: F(lib).hvp(_net(lib, w), lib.tensor(x), lib.tensor(v)))
    # several inputs, v of another dtype (cast to the input's), v omitted for one element
    compare(lambda lib: F(lib).hvp(scalar2, (t(lib, A), t(lib, A * 2)),
                                   (lib.tensor(np.ones(3, "float32")), t(lib, A))))
    compare(lambda lib: F(lib).hvp(lambda z: (z ** 4).sum(), t(lib, [1.5])))
    # linear or constant functions: H v = 0
    compare(lambda lib: F(lib).hvp(lambda z: (z * 3).sum(), t(lib, A), t(lib, A)))
    compare(lambda lib: F(lib).hvp(lambda z: lib.tensor(1.0), t(lib, A), t(lib, A)))


_HVP_FNS = {
    "log_softmax": lambda L, x: L.nn.functional.log_softmax(x, 1)[:, 0].sum(),
    "cross_entropy": lambda L, x: L.nn.functional.cross_entropy(x, L.tensor([0, 3, 1])),
    "layer_norm": lambda L, x: (L.nn.functional.layer_norm(x, (4,)) ** 3).sum(),
    "max_pool": lambda L, x: L.nn.functional.max_pool2d(x.reshape(1, 1, 3, 4) ** 2, 2).sum(),
    "index_cumsum": lambda L, x: (x[1:, ::2] ** 3).sum() + (x.cumsum(1) ** 2).sum(),
    "where_var": lambda L, x: L.where(x > 0, x ** 2, x.sin()).sum() + x.var(1).sum(),
    "norm_prod": lambda L, x: x.norm() + x.prod(),
    "sort_gelu": lambda L, x: (L.sort(x, 1)[0] * x).sum() + L.nn.functional.gelu(x).sum(),
    "inplace": lambda L, x: (x * 1).mul_(2).add_(1).pow(3).sum(),
    "attention": lambda L, x: L.nn.functional.scaled_dot_product_attention(
        x.reshape(1, 3, 4), x.reshape(1, 3, 4), x.reshape(1, 3, 4)).pow(2).sum(),
}


@pytest.mark.parametrize("name", sorted(_HVP_FNS))
def test_hvp_through_many_ops_matches_torch(torch, name):
    # Reverse-over-forward needs every op's forward rule, differentiable once more.
    f = _HVP_FNS[name]
    x, v = np.random.default_rng(7).standard_normal((2, 3, 4))
    compare(lambda lib: F(lib).hvp(lambda z: f(lib, z), t(lib, x), t(lib, v)))


def test_hvp_create_graph_reaches_inputs_and_v(torch):
    def run(lib):
        x = t(lib, A, requires_grad=True)
        v = t(lib, A[::-1].copy(), requires_grad=True)
        out, hv = F(lib).hvp(scalar, x, v, create_graph=True)
        gx, gv = lib.autograd.grad((hv * hv).sum(), (x, v))
        return out, hv, gx, gv

    compare(run)


def test_hvp_falls_back_to_reverse_mode():
    # A custom Function (the replay has no rule for it once its call is over), and a call
    # inside a forward-AD level, take the double-backward route: same result, and func runs
    # once, as PyTorch's (the double backward runs on the graph already recorded).
    calls = []

    class Cube(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

    def f(z):
        calls.append(1)
        return Cube.apply(z).sum()

    x, v = retrograd.tensor(A), retrograd.tensor(np.ones(3))
    want = 6 * A
    _, hv = F(retrograd).hvp(f, x, v)
    np.testing.assert_allclose(hv.numpy(), want)
    assert len(calls) == 1
    with retrograd.autograd.forward_ad.dual_level():
        _, hv = F(retrograd).hvp(lambda z: (z ** 3).sum(), x, v)
    np.testing.assert_allclose(hv.numpy(), want)


def test_hvp_graph_dies_by_reference_counting():
    # Reverse-over-forward makes tanh's output tangent from tanh's saved output (a graph that
    # reaches tanh's node): nothing of it is left for the garbage collector.
    import gc

    W = retrograd.tensor(np.ones((3, 3)))
    x, v = retrograd.tensor(A), retrograd.tensor(np.ones(3))
    gc.collect()
    gc.disable()
    try:
        F(retrograd).hvp(lambda z: (W @ z).tanh().sum(), x, v)
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_hvp_replay_matches_torch_where_func_is_unusual(torch):
    # hvp pushes v through the graph func recorded (forward_ad.replay_tangent): what func
    # computed without grad is a constant, as for PyTorch's double backward; a custom Function
    # with a jvp takes the double-backward route too; a weight that requires grad (a branch
    # that ends at another leaf) keeps its .grad; views and several-output nodes replay.
    def run(lib):
        def no_grad_part(z):
            with lib.no_grad():
                c = z * 2
            return (z * c).sum() + (z ** 3).sum()

        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                ctx.save_for_forward(a)
                return a ** 3

            @staticmethod
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                return 3 * a * a * g

            @staticmethod
            def jvp(ctx, tan):
                (a,) = ctx.saved_tensors
                return 3 * a * a * tan

        w = t(lib, M, requires_grad=True)
        x, v = t(lib, A), t(lib, [1.0, -1.0, 0.5])
        res = [F(lib).hvp(f, x, v) for f in (
            no_grad_part,
            lambda z: Cube.apply(z.sin()).sum(),
            lambda z: (w @ z).tanh().sum(),
            lambda z: (z.view(3, 1).t().reshape(3)[1:] ** 3).sum() + z[0] * z[2],
            lambda z: (lib.sort(z * z)[0] * z).sum() + lib.max(z.exp(), 0)[0],
            lambda z: lib.max(z ** 3, 0)[0],  # the output: one of several of its node
            lambda z: (z ** 3).sum().view(1)[0],  # the output: a view
        )]
        return res, w.grad

    compare(run)


def test_hvp_prunes_only_where_a_branch_leads_elsewhere():
    # Every path from f's output ends at x: the backward of the tangent needs no pruning (the
    # engine is told so). With W requiring grad it does: W's branch is not walked.
    functional = F(retrograd)
    run = functional.run_backward
    seen = []

    def spy(*args, **kw):
        seen.append(kw.get("prune", True))
        return run(*args, **kw)

    x, v = retrograd.tensor(A), retrograd.tensor(np.ones(3))
    for rg in (False, True):
        W = retrograd.tensor(M, requires_grad=rg)
        functional.run_backward = spy
        try:
            _, hv = functional.hvp(lambda z, W=W: (W @ z).tanh().sum(), x, v)
        finally:
            functional.run_backward = run
        y = np.tanh(M @ A)
        np.testing.assert_allclose(hv.numpy(), M.T @ (-2 * y * (1 - y * y) * (M @ np.ones(3))))
        assert W.grad is None
    assert seen == [False, True]


def test_tanh_double_backward_is_one_node(torch):
    # tanh's backward recorded under create_graph is PyTorch's TanhBackwardBackward0.
    def run(lib):
        x = t(lib, A, requires_grad=True)
        (g,) = lib.autograd.grad(x.tanh().sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        return g, g.grad_fn.name(), [n is None for n, _ in g.grad_fn.next_functions], h

    compare(run)


ERRORS = [
    # wrong v: sizes, lengths, None for a non-scalar
    lambda lib: F(lib).vjp(f_single, t(lib, A), t(lib, B)),
    lambda lib: F(lib).vjp(f_pair, (t(lib, B), t(lib, B)), (t(lib, B),)),
    lambda lib: F(lib).vjp(f_pair, (t(lib, B), t(lib, B)), (t(lib, B), t(lib, A))),
    lambda lib: F(lib).vjp(f_single, t(lib, A), (t(lib, A), t(lib, A))),
    lambda lib: F(lib).vjp(f_single, t(lib, A)),
    lambda lib: F(lib).jvp(f_single, t(lib, A)),
    lambda lib: F(lib).jvp(f_single, t(lib, A), t(lib, B)),
    lambda lib: F(lib).hvp(scalar, t(lib, A)),
    lambda lib: F(lib).vhp(scalar, t(lib, A), t(lib, B)),
    # not tensors
    lambda lib: F(lib).vjp(f_single, [1.0, 2.0], t(lib, A)),
    lambda lib: F(lib).jacobian(f_pair, (t(lib, A), 3.0)),
    lambda lib: F(lib).jacobian(lambda x: 3.0, t(lib, A)),
    # not a scalar function
    lambda lib: F(lib).hessian(lambda x: x * 2, t(lib, A)),
    lambda lib: F(lib).hessian(lambda x: (x.sum(), x.sum()), t(lib, A)),
    lambda lib: F(lib).hvp(lambda x: x * 2, t(lib, A), t(lib, A)),
    lambda lib: F(lib).vhp(lambda x: (x.sum(),), t(lib, A), t(lib, A)),
    # strategies
    lambda lib: F(lib).jacobian(f_single, t(lib, A), strategy="sideways"),
    lambda lib: F(lib).hessian(scalar, t(lib, A), outer_jacobian_strategy="sideways"),
    lambda lib: F(lib).jacobian(f_single, t(lib, A), strategy="forward-mode", create_graph=True),
    lambda lib: F(lib).jacobian(f_single, t(lib, A), strategy="forward-mode", strict=True),
    lambda lib: F(lib).jacobian(f_single, t(lib, A), strategy="forward-mode"),
    lambda lib: F(lib).jacobian(f_single, t(lib, A), strict=True, vectorize=True),
    # strict mode: independent outputs and inputs, linear functions
    lambda lib: F(lib).vjp(lambda x: x.detach() * 2, t(lib, A), t(lib, A), strict=True),
    lambda lib: F(lib).vjp(lambda x, y: x * 2, (t(lib, A), t(lib, A)), t(lib, A), strict=True),
    lambda lib: F(lib).jvp(lambda x, y: x * 2, (t(lib, A), t(lib, A)),
                           (t(lib, A), t(lib, A)), strict=True),
    lambda lib: F(lib).jacobian(lambda x, y: x * 2, (t(lib, A), t(lib, A)), strict=True),
    lambda lib: F(lib).jacobian(lambda x: x * 2, t(lib, A), strict=True, create_graph=True),
    lambda lib: F(lib).hessian(lambda x: (x * 2).sum(), t(lib, A), strict=True),
    lambda lib: F(lib).hessian(lambda x, y: (x ** 2).sum(), (t(lib, A), t(lib, A)), strict=True),
    lambda lib: F(lib).hvp(lambda x: (x * 2).sum(), t(lib, A), t(lib, A), strict=True),
    lambda lib: F(lib).vhp(lambda x, y: (x ** 2).sum(), (t(lib, A), t(lib, A)),
                           (t(lib, A), t(lib, A)), strict=True),
    lambda lib: F(lib).hvp(lambda x: (x * x).sum(), t(lib, A), t(lib, A), strict=True,
                           create_graph=True),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(torch, i):
    compare_error(ERRORS[i])


def test_strict_passes_and_non_strict_fills_zeros(torch):
    compare(lambda lib: F(lib).jacobian(lambda x, y: x.exp() * y, (t(lib, A), t(lib, A)),
                                        strict=True, create_graph=True))
    compare(lambda lib: F(lib).vjp(lambda x, y: x * 2, (t(lib, A), t(lib, A)), t(lib, A)))
    compare(lambda lib: F(lib).hessian(lambda x, y: (x ** 2).sum(), (t(lib, A), t(lib, A))))
    compare(lambda lib: F(lib).hvp(lambda x: (x * 2).sum(), t(lib, A), t(lib, A)))


def test_grad_mode_is_respected(torch):
    def run(lib):
        with lib.no_grad():
            out, g = F(lib).vjp(f_single, t(lib, A, requires_grad=True), t(lib, A))
        return out.requires_grad, g.requires_grad

    compare(run)
