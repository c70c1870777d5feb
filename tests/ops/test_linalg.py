"""Focused tests for linear algebra: in-place forms, method/function forms, integer dtypes,
named results, non-differentiable cases and errors, against torch where installed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
from retrograd.autograd import gradcheck, gradgradcheck


def _t(a, lib=retrograd, rg=False):
    return lib.tensor(np.asarray(a, dtype=np.float64), requires_grad=rg)


RNG = np.random.default_rng(7)
A33 = RNG.standard_normal((3, 3))
SPD = A33 @ A33.T + 3 * np.eye(3)


# -- torch-free checks ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["addmm", "addmv", "addr", "baddbmm", "addbmm"])
def test_inplace_matches_out_of_place(name):
    shapes = {"addmm": ((3, 2), (3, 4), (4, 2)), "addmv": ((3,), (3, 4), (4,)),
              "addr": ((3, 2), (3,), (2,)), "baddbmm": ((2, 3, 2), (2, 3, 4), (2, 4, 2)),
              "addbmm": ((3, 2), (2, 3, 4), (2, 4, 2))}[name]
    arrays = [RNG.standard_normal(s) for s in shapes]
    leaves = [_t(a, rg=True) for a in arrays]
    ref = getattr(retrograd, name)(*leaves, beta=0.5, alpha=2.0)
    y = leaves[0] * 1
    v0 = y._version
    out = getattr(y, name + "_")(leaves[1], leaves[2], beta=0.5, alpha=2.0)
    assert out is y and y._version == v0 + 1
    np.testing.assert_allclose(y.detach().numpy(), ref.detach().numpy())
    g_ref = retrograd.autograd.grad(ref.sum(), leaves)
    g_in = retrograd.autograd.grad(y.sum(), leaves)
    for a, b in zip(g_ref, g_in):
        np.testing.assert_allclose(a.numpy(), b.numpy())


def test_method_function_forms_agree():
    a = _t(SPD)
    for x, y in [(a.det(), retrograd.linalg.det(a)), (retrograd.det(a), a.det()),
                 (a.inverse(), retrograd.linalg.inv(a)), (a.trace(), retrograd.trace(a)),
                 (a.matrix_power(3), retrograd.linalg.matrix_power(a, 3)),
                 (a.logdet(), retrograd.linalg.slogdet(a).logabsdet),
                 (a.slogdet()[1], retrograd.slogdet(a).logabsdet),
                 (a.pinverse(), retrograd.linalg.pinv(a)),
                 (a @ a, retrograd.linalg.matmul(a, a)), (a.mm(a), retrograd.mm(a, a))]:
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-12)
    v = _t([1.0, 2.0, 3.0])
    np.testing.assert_allclose(v.outer(v).numpy(), retrograd.ger(v, v).numpy())
    np.testing.assert_allclose(v.cross(v * 2 + 1, dim=0).numpy(),
                               retrograd.linalg.cross(v, v * 2 + 1).numpy())
    np.testing.assert_allclose(v.inner(v).numpy(), v.dot(v).numpy())
    np.testing.assert_allclose(v.vdot(v).numpy(), 14.0)


def test_integer_dtypes():
    m = retrograd.tensor([[1, 2], [3, 4]])
    assert (m @ m).dtype == retrograd.int64
    assert m.trace().dtype == retrograd.int64 and m.trace().item() == 5
    assert retrograd.tensor([[1, 2], [3, 4]], dtype=retrograd.int32).trace().dtype == \
        retrograd.int64
    assert m.matrix_power(2).tolist() == [[7, 10], [15, 22]]
    assert m.matrix_power(0).tolist() == [[1, 0], [0, 1]]
    assert retrograd.einsum("ij,jk->ik", m, m).tolist() == [[7, 10], [15, 22]]
    assert retrograd.kron(m, m).dtype == retrograd.int64
    assert retrograd.outer(retrograd.tensor([1, 2]), retrograd.tensor([1.5])).dtype == \
        retrograd.float32


def test_named_results():
    a = _t(SPD)
    r = retrograd.linalg.slogdet(a)
    assert r.sign.item() == 1.0 and r.logabsdet is r[1]
    assert repr(r).startswith("retrograd.return_types.linalg_slogdet(\nsign=")
    q, r_ = retrograd.linalg.qr(a)
    assert retrograd.linalg.qr(a).R.shape == r_.shape
    e = retrograd.linalg.eigh(a)
    np.testing.assert_allclose((e.eigenvectors * e.eigenvalues @ e.eigenvectors.mT).numpy(),
                               SPD, atol=1e-12)
    u, s, vh = retrograd.linalg.svd(a)
    np.testing.assert_allclose((u * s @ vh).numpy(), SPD, atol=1e-12)
    u, s, v = retrograd.svd(a)
    np.testing.assert_allclose((u * s @ v.mT).numpy(), SPD, atol=1e-12)
    u, s, v = retrograd.svd(_t(np.ones((3, 2))), compute_uv=False)
    assert u.shape == (3, 3) and v.shape == (2, 2) and not u.numpy().any()


def test_ex_variants_and_rank():
    sing = _t([[1.0, 2.0], [2.0, 4.0]])
    assert retrograd.linalg.inv_ex(sing).info.item() == 2
    assert retrograd.linalg.inv_ex(_t(SPD)).info.item() == 0
    assert retrograd.linalg.cholesky_ex(_t(-np.eye(2))).info.item() == 1
    with pytest.raises(retrograd.linalg.LinAlgError):
        retrograd.linalg.inv_ex(sing, check_errors=True)
    assert retrograd.linalg.matrix_rank(sing).item() == 1
    assert retrograd.linalg.matrix_rank(sing).dtype == retrograd.int64
    assert retrograd.linalg.matrix_rank(_t(SPD)).item() == 3


def test_linalg_error_is_runtime_error():
    assert issubclass(retrograd.linalg.LinAlgError, RuntimeError)
    with pytest.raises(RuntimeError, match="input matrix is singular"):
        retrograd.linalg.inv(_t(np.zeros((2, 2))))


def test_einsum_third_order():
    a = _t(RNG.standard_normal((3, 3)), rg=True)
    b = _t(RNG.standard_normal((3,)), rg=True)

    def f(x, y):
        return retrograd.einsum("ii,i,j->j", x, y, y)

    assert gradcheck(f, [a, b])
    assert gradgradcheck(f, [a, b])
    g = retrograd.autograd.grad(f(a, b).sum(), a, create_graph=True)[0]
    gg = retrograd.autograd.grad(g.sum(), b, create_graph=True)[0]
    ggg = retrograd.autograd.grad(gg.sum(), b)[0]
    np.testing.assert_allclose(ggg.numpy(), 6 * np.ones(3))


def _graph(t) -> list:
    """Node names and saved dims of a graph, depth first, as both libraries print them."""
    out, stack = [], [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is not None:
            dims = getattr(n, "_saved_dims", None) if "Permute" in n.name() else None
            if dims is not None:  # torch shows a negative dim as its uint64
                dims = tuple(d - 2 ** 64 if d >= 2 ** 63 else d for d in dims)
            out.append((n.name().replace("torch::autograd::", ""), dims))
            stack += [m for m, _ in n.next_functions]
    return out


@pytest.mark.parametrize("eq, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ("bij,bjk", [(2, 3, 4), (1, 4, 5)]), ("ab,cd,bc->ad", [(2, 3), (4, 5), (3, 4)]),
    ("iji->j", [(3, 2, 3)]), ("a...,...b", [(2, 3, 1), (4, 3)]), ("ij,kl->", [(2, 3), (4, 5)]),
    ("Ab,ba->Aa", [(2, 3), (3, 4)])])
def test_einsum_builds_torchs_graph(torch, eq, shapes):
    """einsum is PyTorch's composite: the same nodes (diagonal, unsqueeze, permute, sum, bmm,
    view, mul) with the same dims, the same values and gradients."""
    arrays = [RNG.standard_normal(s) for s in shapes]
    got = [_t(a, rg=True) for a in arrays]
    want = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, yt = retrograd.einsum(eq, *got), torch.einsum(eq, *want)
    assert _graph(y) == _graph(yt)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    y.sum().backward()
    yt.sum().backward()
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("sa, sb, dims", [
    ((3,), (3,), ([-1], [-1])), ((2, 3), (2, 3), 2), ((2, 3, 4), (4, 3, 2), ([1, -1], [1, 0])),
    ((2, 1, 4), (4, 3, 2), ([1, 2], [1, 0])), ((3, 4), (4,), 1), ((2, 3), (3,), 0)])
def test_tensordot_builds_torchs_graph(torch, sa, sb, dims):
    """tensordot as PyTorch's: dims permuted as given, size-1 contractions summed first, a full
    contraction through dot; inner (its 1-d case) too."""
    arrays = [RNG.standard_normal(sa), RNG.standard_normal(sb)]
    got = [_t(a, rg=True) for a in arrays]
    want = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, yt = retrograd.tensordot(*got, dims=dims), torch.tensordot(*want, dims=dims)
    assert _graph(y) == _graph(yt)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    y.sum().backward()
    yt.sum().backward()
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        retrograd.tensordot(_t(np.ones((1, 3))), _t(np.ones((3, 5))), dims=([0, 1], [0, 0]))


def test_stacked_outer_products_match_numpy():
    # An inner dim of 1 (per-sample weight gradients under vmap) takes einsum, not matmul's
    # slow loop: the same numbers, a -0.0 product +0.0 as matmul's sum gives.
    from retrograd.ops import _array
    a = np.array([[[-1.0], [0.0], [np.inf]], [[3.0], [-0.0], [np.nan]]], dtype=np.float32)
    b = np.array([[[0.0, -2.0]], [[-1.0, 1e-30]]], dtype=np.float32)
    for x, y in ((a, b), (a.astype(np.complex64), b.astype(np.complex64)), (a[0], b[0])):
        with np.errstate(invalid="ignore"):  # inf * 0
            got, want = _array.matmul(x, y), np.matmul(x, y)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()
    x = _t(RNG.standard_normal((4, 3, 2)), rg=True)
    w = _t(RNG.standard_normal((4, 2, 5)), rg=True)
    gx, gw = retrograd.autograd.grad(retrograd.bmm(x[:, :, :1], w[:, :1]).sum(), [x, w])
    np.testing.assert_allclose(gx.numpy()[:, :, 0], w.detach().numpy()[:, 0].sum(-1)[:, None]
                               .repeat(3, 1))
    np.testing.assert_allclose(gw.numpy()[:, 0], x.detach().numpy()[:, :, 0].sum(1)[:, None]
                               .repeat(5, 1))


def test_matmul_power_negative():
    a = _t(SPD)
    np.testing.assert_allclose(retrograd.linalg.matrix_power(a, -2).numpy(),
                               np.linalg.matrix_power(np.linalg.inv(SPD), 2), rtol=1e-10)


def test_saved_output_modified():
    a = _t(SPD, rg=True)
    vals, vecs = retrograd.linalg.eigh(a)
    vecs.mul_(2)
    with pytest.raises(RuntimeError, match="output 1 of LinalgEigh, is at version 1"):
        vecs.sum().backward()


# -- against torch -----------------------------------------------------------------------------

def _same_error(torch, fn):
    """fn(lib) raises the same type (by name) and message under retrograd and torch."""
    with pytest.raises(Exception) as t_exc:
        fn(torch)
    with pytest.raises(Exception) as r_exc:
        fn(retrograd)
    te, re_ = t_exc.value, r_exc.value
    if isinstance(te, torch.linalg.LinAlgError):
        assert isinstance(re_, retrograd.linalg.LinAlgError)
    else:
        assert type(re_).__name__ == type(te).__name__, (re_, te)
    assert str(re_).split("\n")[0] == str(te).split("\n")[0]


SING = [[1.0, 2.0], [2.0, 4.0]]
NOT_PD = [[1.0, 2.0], [2.0, 1.0]]

ERRORS = {
    "inv_singular": lambda L: L.linalg.inv(L.tensor(SING)),
    "inv_zero": lambda L: L.linalg.inv(L.zeros(3, 3)),
    "inv_batch": lambda L: L.linalg.inv(L.stack([L.eye(2), L.tensor(SING)])),
    "inv_int": lambda L: L.linalg.inv(L.ones(3, 3, dtype=L.long)),
    "inv_rect": lambda L: L.linalg.inv(L.ones(3, 2)),
    "inv_1d": lambda L: L.linalg.inv(L.ones(3)),
    "det_rect": lambda L: L.linalg.det(L.ones(3, 2)),
    "solve_singular": lambda L: L.linalg.solve(L.tensor(SING), L.ones(2)),
    "solve_batch": lambda L: L.linalg.solve(L.stack([L.eye(2), L.tensor(SING)]), L.ones(2)),
    "solve_shapes": lambda L: L.linalg.solve(L.eye(3), L.ones(2)),
    "cholesky_neg": lambda L: L.linalg.cholesky(-L.eye(3)),
    "cholesky_minor": lambda L: L.linalg.cholesky(L.tensor(NOT_PD)),
    "cholesky_batch": lambda L: L.linalg.cholesky(L.stack([L.eye(2), L.tensor(NOT_PD)])),
    "qr_mode": lambda L: L.linalg.qr(L.ones(3, 4), mode="foo"),
    "eigh_uplo": lambda L: L.linalg.eigh(L.eye(3), UPLO="X"),
    "matrix_power_rect": lambda L: L.linalg.matrix_power(L.ones(3, 2), 2),
    "matrix_power_int_neg": lambda L: L.linalg.matrix_power(L.ones(3, 3, dtype=L.long), -1),
    "trace_3d": lambda L: L.trace(L.ones(3, 3, 3)),
    "trace_bool": lambda L: L.trace(L.ones(3, 3, dtype=L.bool)),
    "cross_len": lambda L: L.linalg.cross(L.ones(4, 2), L.ones(4, 2)),
    "cross_ndim": lambda L: L.linalg.cross(L.ones(4, 3), L.ones(3)),
    "cross_dim0": lambda L: L.linalg.cross(L.ones(4, 3), L.ones(4, 3), dim=0),
    "einsum_size": lambda L: L.einsum("ij,jk->ik", L.ones(2, 3), L.ones(4, 2)),
    "einsum_out_twice": lambda L: L.einsum("ij,jk->iik", L.ones(2, 3), L.ones(3, 2)),
    "einsum_out_unknown": lambda L: L.einsum("ij,jk->ix", L.ones(2, 3), L.ones(3, 2)),
    "einsum_few": lambda L: L.einsum("ij,jk", L.ones(2, 3)),
    "einsum_ndim": lambda L: L.einsum("ijk", L.ones(2, 3)),
    "einsum_dtype": lambda L: L.einsum("ij,jk->ik", L.ones(2, 3), L.ones(3, 2, dtype=L.float64)),
    "tensordot_size": lambda L: L.tensordot(L.ones(2, 3), L.ones(4, 2), dims=1),
    "tensordot_neg": lambda L: L.tensordot(L.ones(2, 3), L.ones(3, 2), dims=-1),
    "outer_2d": lambda L: L.outer(L.ones(2, 3), L.ones(3)),
    "vdot_dtype": lambda L: L.vdot(L.ones(2, dtype=L.long), L.ones(2)),
    "vdot_2d": lambda L: L.vdot(L.ones(2, 3), L.ones(2)),
    "addmm_shapes": lambda L: L.addmm(L.ones(2), L.ones(2, 3), L.ones(4, 2)),
    "addmm_expand": lambda L: L.addmm(L.ones(3), L.ones(2, 3), L.ones(3, 2)),
    "addmm_dtype": lambda L: L.addmm(L.ones(2, 2), L.ones(2, 3), L.ones(3, 2, dtype=L.float64)),
    "bmm_2d": lambda L: L.bmm(L.ones(2, 3), L.ones(3, 2)),
    "matmul_0d": lambda L: L.matmul(L.ones(()), L.ones(3)),
    "mm_shapes": lambda L: L.mm(L.ones(2, 3), L.ones(2, 3)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(torch, name):
    _same_error(torch, ERRORS[name])


def test_qr_backward_errors(torch):
    def r_mode(L):
        a = L.ones(4, 3, requires_grad=True)
        L.linalg.qr(a, mode="r")[1].sum().backward()

    def complete_tall(L):
        a = L.tensor(np.random.default_rng(0).standard_normal((4, 3)), requires_grad=True)
        L.linalg.qr(a, mode="complete")[0].sum().backward()

    _same_error(torch, r_mode)
    _same_error(torch, complete_tall)


def test_cross_without_dim_warns(torch):
    a = RNG.standard_normal((4, 3))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = retrograd.cross(_t(a), _t(a[::-1].copy()))
    assert any("torch.cross without specifying the dim" in str(x.message) for x in w)
    ref = torch.cross(torch.tensor(a), torch.tensor(a[::-1].copy()), dim=1)
    np.testing.assert_allclose(out.numpy(), ref.numpy())


def test_grad_fn_names_of_outputs(torch):
    pairs = [
        (lambda L, a: L.linalg.slogdet(a)[0], "sign"),
        (lambda L, a: L.linalg.eigh(a)[1], "eigenvectors"),
        (lambda L, a: L.svd(a)[2], "V"),
        (lambda L, a: L.linalg.inv_ex(a)[0], "inv_ex"),
        (lambda L, a: L.linalg.cholesky_ex(a)[0], "cholesky_ex"),
        (lambda L, a: L.einsum("ii->i", a), "einsum diag"),
        (lambda L, a: L.einsum("ij,jk,k->ik", a, a, a[0]), "einsum chain"),
    ]
    for fn, what in pairs:
        r = fn(retrograd, _t(SPD, rg=True))
        t = fn(torch, _t(SPD, torch, rg=True))
        assert r.grad_fn.name() == t.grad_fn.name(), what


def test_det_singular_gradient_matches_torch(torch):
    a = np.stack([np.array(SING), np.array([[1.0, 2.0], [3.0, 4.0]])])
    r = _t(a, rg=True)
    t = _t(a, torch, rg=True)
    retrograd.linalg.det(r).sum().backward()
    torch.linalg.det(t).sum().backward()
    np.testing.assert_allclose(r.grad.numpy(), t.grad.numpy())


def test_eigh_gradient_unsymmetrized_input(torch):
    # PyTorch's formula makes the gradient symmetric even when the input is not.
    for uplo in ("L", "U"):
        r = _t(A33, rg=True)
        t = _t(A33, torch, rg=True)
        v = np.arange(3.0)
        (retrograd.linalg.eigh(r, UPLO=uplo).eigenvalues * _t(v)).sum().backward()
        (torch.linalg.eigh(t, UPLO=uplo).eigenvalues * _t(v, torch)).sum().backward()
        np.testing.assert_allclose(r.grad.numpy(), t.grad.numpy(), atol=1e-10)


def test_pinv_tolerances_and_rank_match_torch(torch):
    a = np.diag([3.0, 1e-3, 1e-9])
    for kw in ({}, {"atol": 1e-2}, {"rtol": 1e-2}, {"atol": 1e-12, "rtol": 0.0}):
        np.testing.assert_allclose(retrograd.linalg.pinv(_t(a), **kw).numpy(),
                                   torch.linalg.pinv(_t(a, torch), **kw).numpy(), rtol=1e-6)
        assert retrograd.linalg.matrix_rank(_t(a), **kw).item() == \
            torch.linalg.matrix_rank(_t(a, torch), **kw).item()


def test_empty_inputs_match_torch(torch):
    for fn in (lambda L, x: L.linalg.inv(x), lambda L, x: L.linalg.det(x),
               lambda L, x: L.linalg.svdvals(x), lambda L, x: L.linalg.eigvalsh(x),
               lambda L, x: L.linalg.cholesky(x), lambda L, x: L.linalg.qr(x)[1]):
        for shape in ((0, 0), (2, 0, 0)):
            r = fn(retrograd, retrograd.zeros(shape))
            t = fn(torch, torch.zeros(shape))
            assert tuple(r.shape) == tuple(t.shape)
            np.testing.assert_allclose(r.numpy(), t.numpy())


def test_saved_strides_are_the_arrays(torch):
    """MmBackward0's _saved_*_sym_strides are the saved inputs' own: a transposed view keeps
    (1, n), and an inverse and svd's U and Vh are column-major, as LAPACK leaves them and
    PyTorch returns them."""
    a = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
    x = RNG.standard_normal((3, 5))
    for lib in (retrograd, torch):
        y = lib.linalg.matrix_power(lib.tensor(a, requires_grad=True), -2)
        assert y.grad_fn._saved_self_sym_strides == (1, 3)
        assert y.grad_fn._saved_mat2_sym_strides == (1, 3)
        assert lib.linalg.inv(lib.tensor(a)).stride() == (1, 3)
        u, s, vh = lib.linalg.svd(lib.tensor(x), full_matrices=False)
        assert (u.stride(), vh.stride()) == ((1, 3), (1, 3))
        assert lib.linalg.svd(lib.tensor(np.ones((2, 3, 4)))).U.stride() == (9, 1, 3)
        c = lib.cov(lib.tensor(x, requires_grad=True)).grad_fn.next_functions[0][0]
        mm = c.next_functions[0][0]
        assert (mm._saved_self_sym_strides, mm._saved_mat2_sym_strides) == ((5, 1), (1, 5))
