"""Op table entries for linear algebra: products, einsum, tensordot, kron, trace, cross and the
decompositions.

Decompositions get well-conditioned inputs built inside the lambda from lib ops (a diagonally
dominant ``0.3 * a + 2 * I``, a symmetric positive-definite ``a a^T + n I``). Eigenvectors and
singular vectors are defined up to sign, so they are compared through sign-free expressions
(``V * V``, ``U @ Vh``) that still differentiate through them.
"""

from __future__ import annotations

from .op_table import OpInfo, _sh


def _eye(lib, a):
    return lib.eye(a.shape[-1], dtype=a.dtype)


def _wc(lib, a):
    """Diagonally dominant, hence invertible and well conditioned."""
    return a * 0.3 + 2 * _eye(lib, a)


def _wcr(lib, a):
    """Rectangular and well conditioned."""
    return a * 0.3 + 2 * lib.eye(a.shape[-2], a.shape[-1], dtype=a.dtype)


def _spd(lib, a):
    return a @ a.mT + a.shape[-1] * _eye(lib, a)


def _sym(a):
    return a + a.mT


SQ = _sh(((3, 3),), ((2, 3, 3),))

OPS = [
    # products
    OpInfo("dot", lambda lib, a, b: lib.dot(a, b), _sh(((4,), (4,)))),
    OpInfo("vdot", lambda lib, a, b: lib.vdot(a, b), _sh(((4,), (4,)), ((0,), (0,)))),
    OpInfo("mv", lambda lib, a, b: a.mv(b), _sh(((3, 4), (4,)))),
    OpInfo("bmm", lambda lib, a, b: lib.bmm(a, b), _sh(((2, 3, 4), (2, 4, 2)))),
    OpInfo("matmul_batched_both", lambda lib, a, b: lib.matmul(a, b),
           _sh(((2, 1, 2, 3), (3, 3, 2)), ((3, 2), (2, 2, 3)), ((0, 2, 3), (3, 2)))),
    OpInfo("inner", lambda lib, a, b: lib.inner(a, b),
           _sh(((3,), (3,)), ((2, 3), (4, 3)), ((), (2, 3)), ((2, 2, 3), (3,)))),
    OpInfo("outer", lambda lib, a, b: lib.outer(a, b), _sh(((3,), (4,)), ((0,), (2,)))),
    OpInfo("ger", lambda lib, a, b: a.ger(b), _sh(((3,), (2,)))),
    OpInfo("addmm", lambda lib, c, a, b: lib.addmm(c, a, b),
           _sh(((3, 2), (3, 4), (4, 2)), ((2,), (3, 4), (4, 2)), ((), (3, 4), (4, 2)))),
    OpInfo("addmm_scaled", lambda lib, c, a, b: c.addmm(a, b, beta=0.5, alpha=-2),
           _sh(((3, 2), (3, 4), (4, 2)), ((3, 1), (3, 4), (4, 2)))),
    OpInfo("addmm_beta0", lambda lib, c, a, b: lib.addmm(c, a, b, beta=0),
           _sh(((3, 2), (3, 4), (4, 2)))),
    OpInfo("addmv", lambda lib, c, a, b: lib.addmv(c, a, b, alpha=1.5),
           _sh(((3,), (3, 4), (4,)), ((), (3, 4), (4,)))),
    OpInfo("addr", lambda lib, c, a, b: c.addr(a, b, beta=2),
           _sh(((3, 2), (3,), (2,)), ((2,), (3,), (2,)))),
    OpInfo("baddbmm", lambda lib, c, a, b: lib.baddbmm(c, a, b, beta=0.5, alpha=2),
           _sh(((2, 3, 2), (2, 3, 4), (2, 4, 2)), ((3, 2), (2, 3, 4), (2, 4, 2)))),
    OpInfo("addbmm", lambda lib, c, a, b: lib.addbmm(c, a, b, alpha=0.5),
           _sh(((3, 2), (2, 3, 4), (2, 4, 2)), ((2,), (2, 3, 4), (2, 4, 2)))),
    # einsum
    OpInfo("einsum_mm", lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), _sh(((3, 4), (4, 2)))),
    OpInfo("einsum_implicit", lambda lib, a, b: lib.einsum("ij,kj", a, b),
           _sh(((3, 4), (2, 4)))),
    OpInfo("einsum_batch", lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b),
           _sh(((2, 3, 4), (2, 4, 2)))),
    OpInfo("einsum_ellipsis", lambda lib, a, b: lib.einsum("...ij,...jk", a, b),
           _sh(((2, 1, 3, 2), (3, 2, 2)), ((2, 3, 4), (4, 2)))),
    OpInfo("einsum_diag", lambda lib, a: lib.einsum("ii->i", a), _sh(((3, 3),))),
    OpInfo("einsum_trace", lambda lib, a: lib.einsum("ii", a), _sh(((3, 3),))),
    OpInfo("einsum_diag3", lambda lib, a: lib.einsum("iij->ji", a), _sh(((3, 3, 2),))),
    OpInfo("einsum_transpose", lambda lib, a: lib.einsum("ij->ji", a), _sh(((3, 4),))),
    OpInfo("einsum_sum", lambda lib, a: lib.einsum("ij->j", a), _sh(((3, 4),))),
    OpInfo("einsum_outer", lambda lib, a, b: lib.einsum("i,j->ij", a, b), _sh(((3,), (4,)))),
    OpInfo("einsum_rowdot", lambda lib, a, b: lib.einsum("ij,ij->i", a, b),
           _sh(((3, 4), (3, 4)))),
    OpInfo("einsum_chain", lambda lib, a, b, c: lib.einsum("ij,jk,kl->il", a, b, c),
           _sh(((2, 3), (3, 4), (4, 2)))),
    OpInfo("einsum_diag_mul", lambda lib, a, b: lib.einsum("ii,i->i", a, b),
           _sh(((3, 3), (3,)))),
    OpInfo("einsum_lonely", lambda lib, a, b: lib.einsum("ij,k->i", a, b), _sh(((3, 4), (2,)))),
    OpInfo("einsum_broadcast", lambda lib, a, b: lib.einsum("ab,bc->ac", a, b),
           _sh(((3, 1), (4, 2)))),
    OpInfo("einsum_list", lambda lib, a, b: lib.einsum("i,i", [a, b]), _sh(((4,), (4,)))),
    OpInfo("einsum_sublist", lambda lib, a, b: lib.einsum(a, [0, 1], b, [1, 2], [0, 2]),
           _sh(((3, 4), (4, 2)))),
    # tensordot, kron, trace, cross
    OpInfo("tensordot", lambda lib, a, b: lib.tensordot(a, b),
           _sh(((2, 3, 4), (3, 4, 2)))),
    OpInfo("tensordot_1", lambda lib, a, b: lib.tensordot(a, b, dims=1),
           _sh(((3, 4), (4, 2)), ((2, 3, 4), (4,)))),
    OpInfo("tensordot_lists", lambda lib, a, b: lib.tensordot(a, b, dims=([0, 2], [1, 0])),
           _sh(((2, 3, 4), (4, 2, 2)))),
    OpInfo("tensordot_0", lambda lib, a, b: lib.tensordot(a, b, dims=0), _sh(((2, 3), (3,)))),
    OpInfo("kron", lambda lib, a, b: lib.kron(a, b),
           _sh(((2, 3), (3, 2)), ((2,), (2, 3)), ((2, 1, 2), (2, 2)))),
    OpInfo("trace", lambda lib, a: a.trace(), _sh(((3, 4),), ((3, 3),), ((0, 2),))),
    OpInfo("linalg_cross", lambda lib, a, b: lib.linalg.cross(a, b),
           _sh(((4, 3), (4, 3)), ((4, 3), (1, 3)), ((3,), (3,)))),
    OpInfo("cross_dim", lambda lib, a, b: lib.cross(a, b, dim=0), _sh(((3, 2), (3, 2)))),
    OpInfo("cross_method", lambda lib, a, b: a.cross(b, dim=-1), _sh(((2, 3), (2, 3)))),
    OpInfo("vecdot", lambda lib, a, b: lib.linalg.vecdot(a, b), _sh(((3, 4), (4,)))),
    # inverse, determinant, solve
    OpInfo("inv", lambda lib, a: lib.linalg.inv(_wc(lib, a)), SQ),
    OpInfo("inverse", lambda lib, a: _wc(lib, a).inverse(), _sh(((3, 3),))),
    OpInfo("inv_empty", lambda lib, a: lib.linalg.inv(a), _sh(((0, 0),), ((2, 0, 0),))),
    OpInfo("det", lambda lib, a: lib.linalg.det(_wc(lib, a)), SQ + _sh(((2, 2),))),
    OpInfo("det_method", lambda lib, a: a.det(), _sh(((3, 3),))),
    OpInfo("det_top", lambda lib, a: lib.det(_wc(lib, a)), _sh(((3, 3),))),
    OpInfo("slogdet", lambda lib, a: lib.linalg.slogdet(a).logabsdet, SQ),
    OpInfo("slogdet_sign", lambda lib, a: lib.linalg.slogdet(a)[0] * 1, SQ, gradgrad=False),
    OpInfo("slogdet_top", lambda lib, a: lib.slogdet(_wc(lib, a))[1], _sh(((3, 3),))),
    OpInfo("logdet", lambda lib, a: lib.logdet(_spd(lib, a)), SQ),
    OpInfo("solve", lambda lib, a, b: lib.linalg.solve(_wc(lib, a), b),
           _sh(((3, 3), (3, 2)), ((3, 3), (3,)), ((2, 3, 3), (3, 2)), ((2, 3, 3), (2, 3)),
               ((3, 3), (2, 3, 1)))),
    OpInfo("solve_right", lambda lib, a, b: lib.linalg.solve(_wc(lib, a), b, left=False),
           _sh(((3, 3), (2, 3)), ((2, 3, 3), (1, 3)))),
    # factorizations
    OpInfo("cholesky", lambda lib, a: lib.linalg.cholesky(_spd(lib, a)), SQ),
    OpInfo("cholesky_upper", lambda lib, a: lib.linalg.cholesky(_spd(lib, a), upper=True),
           _sh(((3, 3),))),
    OpInfo("qr_Q", lambda lib, a: lib.linalg.qr(a).Q,
           _sh(((4, 3),), ((3, 3),), ((2, 3, 2),), ((2, 3),))),
    OpInfo("qr_R", lambda lib, a: lib.linalg.qr(a)[1],
           _sh(((4, 3),), ((3, 3),), ((2, 3, 2),), ((2, 3),))),
    OpInfo("qr_complete", lambda lib, a: lib.linalg.qr(a, mode="complete").Q, _sh(((3, 3),))),
    OpInfo("qr_both", lambda lib, a: (lambda q, r: q.sum() + r.sum(-2))(*lib.linalg.qr(a)),
           _sh(((3, 3),), ((2, 4),))),
    OpInfo("qr_top", lambda lib, a: lib.qr(a)[0], _sh(((4, 3),))),
    OpInfo("eigh_values", lambda lib, a: lib.linalg.eigh(_sym(a)).eigenvalues, SQ),
    OpInfo("eigh_vectors", lambda lib, a: (lambda v: v * v)(lib.linalg.eigh(_sym(a))[1]), SQ),
    OpInfo("eigh_both", lambda lib, a: (lambda r: r[1] * r[1] * r[0])(
        lib.linalg.eigh(_sym(a), UPLO="U")), _sh(((3, 3),))),
    OpInfo("eigvalsh", lambda lib, a: lib.linalg.eigvalsh(_sym(a)), SQ),
    OpInfo("svd_S", lambda lib, a: lib.linalg.svd(a, full_matrices=False).S,
           _sh(((3, 4),), ((4, 3),), ((2, 3, 3),))),
    OpInfo("svd_polar", lambda lib, a: (lambda r: r.U @ r.Vh)(
        lib.linalg.svd(a, full_matrices=False)), _sh(((3, 4),), ((4, 3),), ((2, 3, 3),))),
    OpInfo("svd_UU", lambda lib, a: (lambda r: r.U * r.U)(
        lib.linalg.svd(a, full_matrices=False)), _sh(((4, 3),), ((3, 3),))),
    OpInfo("svd_VV", lambda lib, a: (lambda r: r.Vh * r.Vh)(
        lib.linalg.svd(a, full_matrices=False)), _sh(((3, 4),),)),
    OpInfo("svd_full", lambda lib, a: (lambda r: r.U[:, :3] ** 2 * r.S + (r.Vh * r.Vh).sum())(
        lib.linalg.svd(a)), _sh(((4, 3),))),
    OpInfo("svdvals", lambda lib, a: lib.linalg.svdvals(a), _sh(((3, 4),), ((2, 3, 2),))),
    OpInfo("svd_old", lambda lib, a: (lambda r: r[0] @ r[2].mT * r[1].sum())(lib.svd(a)),
           _sh(((3, 4),), ((4, 3),))),
    OpInfo("pinv", lambda lib, a: lib.linalg.pinv(_wcr(lib, a)),
           _sh(((3, 4),), ((4, 3),), ((2, 3, 3),))),
    OpInfo("pinverse", lambda lib, a: a.pinverse(), _sh(((3, 2),))),
    OpInfo("matrix_power", lambda lib, a: lib.linalg.matrix_power(a, 3), SQ),
    OpInfo("matrix_power_2", lambda lib, a: a.matrix_power(2), SQ),
    OpInfo("matrix_power_5", lambda lib, a: lib.matrix_power(a * 0.5, 5), _sh(((3, 3),))),
    OpInfo("matrix_power_0", lambda lib, a: lib.linalg.matrix_power(a, 0), _sh(((3, 3),))),
    OpInfo("matrix_power_1", lambda lib, a: lib.linalg.matrix_power(a, 1), _sh(((3, 3),))),
    OpInfo("matrix_power_neg1", lambda lib, a: lib.linalg.matrix_power(_wc(lib, a), -1), SQ),
    OpInfo("matrix_power_neg2", lambda lib, a: lib.linalg.matrix_power(_wc(lib, a), -2),
           _sh(((3, 3),))),
    OpInfo("matrix_rank", lambda lib, a: lib.linalg.matrix_rank(a), _sh(((3, 4),), ((2, 3, 3),)),
           grad=False),
]
