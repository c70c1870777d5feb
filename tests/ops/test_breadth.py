"""The breadth ops the op table cannot take: vander (PyTorch's cannot be differentiated under
create_graph), the top-level function forms (in place, ATen-level nn functions, removed
names), multi-output results, and errors, each against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as rg


def _both(torch, fn, *arrays):
    outs = []
    for lib in (rg, torch):
        ts = [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
        out = fn(lib, *ts)
        outs.append((out, ts))
    return outs


def test_vander_values_and_gradients(torch):
    # PyTorch's vander cannot be differentiated at all (an in-place cumprod); retrograd's is a
    # composite, so its gradient is checked by finite differences.
    x = np.array([0.5, -1.5, 2.0])
    for kw in ({}, {"N": 4}, {"increasing": True}):
        a, b = rg.vander(rg.tensor(x), **kw), torch.vander(torch.tensor(x), **kw)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
        t = rg.tensor(x, requires_grad=True)
        assert rg.autograd.gradcheck(lambda t, kw=kw: rg.vander(t, **kw), (t,))
        assert rg.autograd.gradgradcheck(lambda t, kw=kw: rg.vander(t, **kw), (t,))
    assert rg.vander(rg.tensor([1, 2])).tolist() == torch.vander(torch.tensor([1, 2])).tolist()


def test_inplace_function_forms(torch):
    for name in ("relu_", "sigmoid_", "exp_", "tanh_", "abs_", "floor_", "neg_", "sqrt_",
                 "clamp_", "sinc_", "zero_"):
        a, b = rg.tensor([0.25, 1.5, 2.0]), torch.tensor([0.25, 1.5, 2.0])
        args = (0.5, 1.0) if name == "clamp_" else ()
        ra, tb = getattr(rg, name)(a, *args), getattr(torch, name)(b, *args)
        assert ra is a
        np.testing.assert_allclose(a.numpy(), tb.numpy(), rtol=1e-6)


def test_aten_nn_functions_match_torch(torch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 8))
    w = rng.standard_normal((4, 3, 3))
    cases = [
        lambda lib, x, w: lib.conv1d(x, w, None, 1, 1),
        lambda lib, x, w: lib.max_pool1d(x, 2),
        lambda lib, x, w: lib.avg_pool1d(x, 3, 1),
        lambda lib, x, w: lib.adaptive_max_pool1d(x, 4)[0],
        lambda lib, x, w: lib.dropout(x, 0.5, False),
        lambda lib, x, w: lib.layer_norm(x, [8]),
        lambda lib, x, w: lib.group_norm(x, 1),
        lambda lib, x, w: lib.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False),
        lambda lib, x, w: lib.kl_div(x, x.exp(), 2),
        lambda lib, x, w: lib.cosine_similarity(x, x * 2),
        lambda lib, x, w: lib.embedding(w.reshape(12, 3), lib.tensor([[1, 5], [11, 0]])),
    ]
    for fn in cases:
        (a, ta), (b, tb) = _both(torch, fn, x, w)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_removed_functions_say_so(torch):
    for name in ("eig", "symeig", "matrix_rank"):
        with pytest.raises(RuntimeError) as mine:
            getattr(rg, name)(rg.eye(2))
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch, name)(torch.eye(2))
        assert str(mine.value)[:60] == str(theirs.value)[:60]


def test_multi_output_results(torch):
    x = np.array([[4.0, 3.0], [6.0, 3.0]])
    m, t = rg.frexp(rg.tensor(x)), torch.frexp(torch.tensor(x))
    assert m.exponent.tolist() == t.exponent.tolist()
    assert m.mantissa.tolist() == t.mantissa.tolist()
    h, th = rg.histogram(rg.tensor(x), bins=3), torch.histogram(torch.tensor(x), bins=3)
    np.testing.assert_allclose(h.bin_edges.numpy(), th.bin_edges.numpy())
    u = rg.unique_consecutive(rg.tensor([[1, 1], [1, 1], [2, 3]]), return_inverse=True,
                              return_counts=True, dim=0)
    tu = torch.unique_consecutive(torch.tensor([[1, 1], [1, 1], [2, 3]]), return_inverse=True,
                                  return_counts=True, dim=0)
    assert [v.tolist() for v in u] == [v.tolist() for v in tu]
    assert [v.tolist() for v in rg.unravel_index(rg.tensor([-1, 3]), (2, 3))] == \
        [v.tolist() for v in torch.unravel_index(torch.tensor([-1, 3]), (2, 3))]
    P, L, U = rg.lu_unpack(*rg.linalg.lu_factor(rg.tensor(x)))
    tP, tL, tU = torch.lu_unpack(*torch.linalg.lu_factor(torch.tensor(x)))
    for a, b in ((P, tP), (L, tL), (U, tU)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-12)
    c = rg.linalg.cond(rg.tensor(x), "fro")
    np.testing.assert_allclose(c.numpy(), torch.linalg.cond(torch.tensor(x), "fro").numpy())


def test_tensor_methods_and_predicates(torch):
    x = np.array([[1.0, -2.0], [0.5, 3.0]])
    a, b = rg.tensor(x), torch.tensor(x)
    for name in ("msort", "diagflat", "corrcoef", "cov", "isposinf", "isreal", "resolve_conj"):
        np.testing.assert_allclose(getattr(a, name)().numpy(), getattr(b, name)().numpy(),
                                   rtol=1e-6)
    assert a.is_signed() and not rg.tensor([1], dtype=rg.uint8).is_signed()
    assert a.is_same_size(a) and rg.is_nonzero(rg.tensor([2]))
    assert a.quantile(0.5).item() == pytest.approx(b.quantile(0.5).item())
    assert [t.shape[1] for t in a.hsplit(2)] == [1, 1]


def test_errors_match_torch(torch):
    for fn in (lambda lib: lib.bincount(lib.tensor([-1, 2])),
               lambda lib: lib.block_diag(lib.ones(1, 1, 1)),
               lambda lib: lib.combinations(lib.ones(2, 2)),
               lambda lib: lib.quantile(lib.ones(3), 1.5),
               lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 4))):
        with pytest.raises(RuntimeError) as mine:
            fn(rg)
        with pytest.raises(RuntimeError) as theirs:
            fn(torch)
        assert str(mine.value).split(".")[0] == str(theirs.value).split(".")[0]


def test_ldl_factor_and_solve_match_torch(torch):
    rng = np.random.default_rng(7)
    for t in range(24):
        n = int(rng.integers(1, 6))
        m = rng.standard_normal((n, n))
        m = m + m.T
        if t % 3 == 0:
            m[np.diag_indices(n)] *= 0.01  # forces 2x2 pivots
        b = rng.standard_normal((n, 2))
        mine = rg.linalg.ldl_factor_ex(rg.tensor(m))
        theirs = torch.linalg.ldl_factor_ex(torch.tensor(m))
        np.testing.assert_allclose(mine.LD.numpy(), theirs.LD.numpy(), atol=1e-10)
        assert mine.pivots.tolist() == theirs.pivots.tolist()
        assert mine.info.tolist() == theirs.info.tolist()
        x = rg.linalg.ldl_solve(mine.LD, mine.pivots, rg.tensor(b))
        y = torch.linalg.ldl_solve(theirs.LD, theirs.pivots, torch.tensor(b))
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-8, atol=1e-10)


def test_geqrf_family_matches_torch(torch):
    a = np.random.default_rng(2).standard_normal((2, 5, 3))
    mine, theirs = rg.geqrf(rg.tensor(a)), torch.geqrf(torch.tensor(a))
    np.testing.assert_allclose(mine.a.numpy(), theirs.a.numpy(), atol=1e-12)
    np.testing.assert_allclose(mine.tau.numpy(), theirs.tau.numpy(), atol=1e-12)
    np.testing.assert_allclose(rg.orgqr(*mine).numpy(), torch.orgqr(*theirs).numpy(), atol=1e-12)
    c = np.random.default_rng(3).standard_normal((2, 3, 5))
    np.testing.assert_allclose(rg.ormqr(*mine, rg.tensor(c), False, True).numpy(),
                               torch.ormqr(*theirs, torch.tensor(c), False, True).numpy(),
                               atol=1e-12)


@pytest.mark.parametrize("name", ["i1", "i1e"])
def test_bessel_i1_small_arguments(torch, name):
    """float64 i1/i1e near 0 to the last bits (x / 2 for a subnormal; the trapezoid rule the
    larger arguments take cancels there) and across the rest of the range."""
    x = np.concatenate([[9.18e-41, 1e-30, -1e-10, 1e-5, 0.5, 1.999, 2.0, 2.5, 0.0],
                        np.random.default_rng(0).uniform(-40, 40, 200)])
    out = getattr(rg.special, name)(rg.tensor(x)).numpy()
    ref = getattr(torch.special, name)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(out, ref, rtol=4e-15, atol=0)


def _names(t) -> list:
    """Node names with their edge counts (a number operand has no edge in a Scalar overload:
    MulBackward1, DivBackward1), depth first."""
    out, stack = [], [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is not None:
            out.append((n.name().replace("torch::autograd::", ""), len(n.next_functions)))
            stack += [m for m, _ in n.next_functions if m is not None]
    return out


@pytest.mark.parametrize("op, kw", [
    ("trapezoid", {}), ("trapezoid", {"dx": 0.5}), ("trapezoid", {"x": True}),
    ("cumulative_trapezoid", {}), ("cumulative_trapezoid", {"dx": 2.0})])
def test_trapezoid_builds_torchs_graph(torch, op, kw):
    """trapezoid's composite scales by a number through the Scalar overloads (MulBackward1,
    DivBackward1: one edge each, as PyTorch's): the same nodes, edges, values, gradients."""
    y = np.random.default_rng(0).standard_normal((3, 4))
    res = []
    for lib in (rg, torch):
        k = dict(kw)
        if "x" in k:
            k["x"] = lib.tensor([0.0, 1.0, 3.0, 4.0], dtype=lib.float64)
        yt = lib.tensor(y, requires_grad=True)
        out = getattr(lib, op)(yt, **k)
        res.append((out, lib.autograd.grad(out.sum(), yt)[0], _names(out)))
    (o, g, n), (ot, gt, nt) = res
    assert n == nt
    np.testing.assert_allclose(o.detach().numpy(), ot.detach().numpy(), rtol=1e-14)
    np.testing.assert_allclose(g.numpy(), gt.numpy(), rtol=1e-14)


@pytest.mark.parametrize("kw", [{}, {"correction": 0}, {"fweights": [1, 2, 0, 3, 1]},
                                {"fweights": [1, 2, 0, 3, 1], "aweights": True},
                                {"aweights": True, "correction": 0}, {"correction": 7}])
def test_cov_builds_torchs_graph(torch, kw):
    """cov as PyTorch's composite: sum / weight sum (an int64 count without weights), the
    centred input times its transpose, divided by the degrees of freedom (zeroed, with a
    warning, when not positive): the same nodes, values and gradients."""
    x = np.random.default_rng(0).standard_normal((3, 5))
    aw = np.abs(np.random.default_rng(1).standard_normal(5)) + 0.5
    res = []
    for lib in (rg, torch):
        k = {"correction": kw.get("correction", 1)}
        if "fweights" in kw:
            k["fweights"] = lib.tensor(kw["fweights"])
        if "aweights" in kw:
            k["aweights"] = lib.tensor(aw, requires_grad=True)
        xt = lib.tensor(x, requires_grad=True)
        with pytest.warns(UserWarning, match="degrees of freedom") if k["correction"] == 7 \
                else warnings.catch_warnings():
            y = lib.cov(xt, **k)
        ins = [xt] + ([k["aweights"]] if "aweights" in k else [])
        res.append((y, lib.autograd.grad(y.sum(), ins)))
    (y, g), (yt, gt) = res
    assert _names(y) == _names(yt)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    for a, b in zip(g, gt):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def test_cov_weight_errors_and_corner_case(torch):
    for lib in (rg, torch):
        for kw, msg in (({"fweights": lib.ones(3)}, "fweights to have integral dtype"),
                        ({"aweights": -lib.ones(3)}, "aweights cannot be negative"),
                        ({"fweights": lib.zeros(3, dtype=lib.int64)}, "weights sum to zero"),
                        ({"fweights": lib.ones(2, dtype=lib.int64)}, "but got 2 != 3")):
            with pytest.raises(RuntimeError, match=msg):
                lib.cov(lib.ones(3), **kw)
        # one observation and one kind of weights: PyTorch zeroes the input itself
        y = lib.tensor([[3.0], [2.0]])
        assert lib.cov(y, fweights=lib.tensor([2])).tolist() == [[0.0, 0.0], [0.0, 0.0]]
        assert y.flatten().tolist() == [0.0, 0.0]


@pytest.mark.parametrize("r, rep", [(1, False), (2, False), (3, True), (4, False)])
def test_combinations_builds_torchs_graph(torch, r, rep):
    """combinations as PyTorch's composite: meshgrid views/expands, masked_select of each grid
    where its indices increase, stacked as columns."""
    x = np.random.default_rng(2).standard_normal(4)
    res = []
    for lib in (rg, torch):
        t = lib.tensor(x, requires_grad=True)
        y = lib.combinations(t, r, with_replacement=rep)
        res.append((y.detach().numpy(), lib.autograd.grad(y.sum(), t)[0].numpy(), _names(y)))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
    assert res[0][2] == res[1][2]


@pytest.mark.parametrize("shape, dim, keepdim", [((3, 4), None, False), ((3, 4), None, True),
                                                 ((3, 4), 0, False), ((3, 4), -1, True),
                                                 ((2, 3, 4), 1, False), ((), 0, True)])
def test_quantile_builds_torchs_graph(torch, shape, dim, keepdim):
    """quantile sorts what PyTorch sorts (flattened, as is with dim last, else dim moved last)
    and views the sorted values as (*out_shape, n): same nodes, values and gradients."""
    x = np.random.default_rng(4).standard_normal(shape)
    res = []
    for lib in (rg, torch):
        t = lib.tensor(x, requires_grad=True)
        y = lib.quantile(t, lib.tensor([0.25, 0.8], dtype=t.dtype), dim=dim, keepdim=keepdim)
        res.append((y.detach().numpy(), lib.autograd.grad(y.sum(), t)[0].numpy(), _names(y)))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-12)
    assert res[0][2] == res[1][2]
