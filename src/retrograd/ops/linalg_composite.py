"""``torch.linalg`` functions composed from the linear-algebra primitives (no nodes of their
own, so gradients of every order come from the primitives): diagonal, multi_dot, norm, cond,
solve_ex, solve_triangular, tensorinv, tensorsolve, vander, matrix_exp, lstsq, and the LU
family (lu_factor, lu_factor_ex, lu, lu_solve, lu_unpack).

The LU factorization picks its row pivots on the values (LAPACK's partial pivoting), then
runs the Doolittle recurrences on the permuted matrix as tensor ops, so ``L`` and ``U`` are
differentiable functions of ``A`` for fixed pivots, as PyTorch's are.
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from ._apply import recording
from ._autocast import fp32, outside
from ._core import wrap, wrap_dim
from ._views import narrow
from .copies import diag_embed, tril, triu
from .decomp import _structseq as _named
from .decomp import linalg_inv, linalg_pinv, linalg_solve, linalg_svdvals
from .fused import fused
from .join import cat, stack
from .linalg import matmul
from .reduction import matrix_norm, vector_norm
from .scatter_gather import gather
from .shape import diagonal as _diagonal
from .shape import reshape, reshape_alias

__all__: list = []
XP: list = []
METHODS: dict = {}
INPLACE: dict = {}

_lstsq = _named("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
_lu_factor = _named("linalg_lu_factor", ("LU", "pivots"))
_lu_factor_ex = _named("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_lu = _named("linalg_lu", ("P", "L", "U"))
_solve_ex = _named("linalg_solve_ex", ("result", "info"))


def diagonal(A, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: N803
    """The diagonals of a (batch of) matrices: ``torch.diagonal`` over the last two dims.

    >>> import retrograd as torch
    >>> torch.linalg.diagonal(torch.tensor([[1., 2.], [3., 4.]]))
    tensor([1., 4.])
    """
    return _diagonal(A, offset, dim1, dim2)


def _chain(ts: list) -> Tensor:
    """The product of matrices in PyTorch's order: the cheaper of the two for three, the
    optimal parenthesization (first split on ties) for more."""
    if len(ts) == 3:
        a, b = ts[0].shape[0], ts[1].shape[0]
        c, d = ts[2].shape
        if a * c * (b + d) > b * d * (a + c):
            return matmul(ts[0], matmul(ts[1], ts[2]))
        return matmul(matmul(ts[0], ts[1]), ts[2])
    if len(ts) < 3:
        return matmul(ts[0], ts[1])
    n = len(ts)
    p = [t.shape[0] for t in ts] + [ts[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for span in range(1, n):
        for i in range(n - span):
            j = i + span
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k

    def product(i, j):
        if i == j:
            return ts[i]
        k = split[i][j]
        return matmul(product(i, k), product(k + 1, j))

    return product(0, n - 1)


def multi_dot(tensors) -> Tensor:
    """The product of a chain of matrices (the first and last may be vectors).

    >>> import retrograd as torch
    >>> torch.linalg.multi_dot([torch.ones(3), torch.eye(3), torch.ones(3)])
    tensor(3.)
    """
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    first_vec, last_vec = ts[0].dim() == 1, ts[-1].dim() == 1
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(-1)
    out = _chain(ts)
    shape = tuple(out.shape)
    if first_vec:
        shape = shape[:-2] + shape[-1:]
    if last_vec:
        shape = shape[:-1]
    return out.view(shape)  # as PyTorch, a view of the product (ViewBackward0)


def norm(A, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002, N803
    """A vector norm (``dim`` an int, or a 1-D input) or a matrix norm (``dim`` a pair, or a
    2-D input); with neither ``ord`` nor ``dim`` the 2-norm of all elements.

    >>> import retrograd as torch
    >>> torch.linalg.norm(torch.tensor([[3., 4.], [0., 0.]]))
    tensor(5.)
    """
    if dim is not None and not isinstance(dim, int) and len(dim) == 2 or \
            (dim is None and ord is not None and A.dim() == 2):
        return matrix_norm(A, "fro" if ord is None else ord, dim if dim is not None else (-2, -1),
                           keepdim, dtype=dtype)
    if ord is None:
        ord = 2  # noqa: A001
    if dim is None and ord is not None and A.dim() != 1 and ord != 2:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {A.dim()}D.")
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


def cond(A, p=None) -> Tensor:  # noqa: N803
    """The condition number: the ratio of the extreme singular values (``p`` None or 2), or
    ``norm(A, p) * norm(inv(A), p)``.

    >>> import retrograd as torch
    >>> torch.linalg.cond(torch.tensor([[2., 0.], [0., 0.5]]))
    tensor(4.)
    """
    if p in (None, 2, -2):
        s = linalg_svdvals(A)
        big, small = narrow(s, -1, 0, 1), narrow(s, -1, -1, 1)  # (as PyTorch's: its slices)
        return (big / small if p in (None, 2) else small / big).squeeze(-1)
    return matrix_norm(A, p) * matrix_norm(linalg_inv(A), p)


def solve_ex(A, B, *, left: bool = True, check_errors: bool = False):  # noqa: N803
    """``(solve(A, B), info)`` with ``info`` 0 where ``A`` was invertible.

    >>> import retrograd as torch
    >>> torch.linalg.solve_ex(torch.eye(2) * 2, torch.ones(2)).result
    tensor([0.5000, 0.5000])
    """
    out = linalg_solve(A, B, left=left)
    return _solve_ex((out, wrap(np.zeros(A.shape[:-2], np.int32))))


def _triangle(A, upper: bool, unitriangular: bool):  # noqa: N803
    T = triu(A) if upper else tril(A)
    if unitriangular:
        n = A.shape[-1]
        eye = wrap(np.eye(n, dtype=A.detach().numpy().dtype))
        T = T - diag_embed(_diagonal(T, 0, -2, -1)) + eye
    return T


def solve_triangular(A, B, *, upper: bool, left: bool = True,  # noqa: N803
                     unitriangular: bool = False) -> Tensor:
    """Solve ``A X = B`` (or ``X A = B`` with ``left=False``) for triangular ``A``: only the
    triangle ``upper`` names is read (with a unit diagonal if ``unitriangular``).

    >>> import retrograd as torch
    >>> torch.linalg.solve_triangular(torch.tensor([[2., 1.], [0., 1.]]),
    ...                               torch.tensor([[3.], [1.]]), upper=True)
    tensor([[1.],
            [1.]])
    """
    return fused("LinalgSolveTriangularBackward0",
                 lambda A, B: linalg_solve(_triangle(A, upper, unitriangular), B, left=left),
                 A, B, _upper=upper, _left=left, _unitriangular=unitriangular)


def tensorinv(A, ind: int = 2) -> Tensor:  # noqa: N803
    """The inverse of a tensor for ``tensordot`` over its first ``ind`` dims.

    >>> import retrograd as torch
    >>> torch.linalg.tensorinv(torch.eye(4).reshape(4, 2, 2), ind=1).shape == (2, 2, 4)
    True
    """
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    left, right = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if math.prod(left) != math.prod(right):
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           "prod(self.shape[:ind]), but got " + str(math.prod(right)) + " != "
                           + str(math.prod(left)))
    inv = linalg_inv(reshape(A, (math.prod(left), -1)))
    return reshape_alias(inv, right + left)


def tensorsolve(A, B, dims=None) -> Tensor:  # noqa: N803
    """The ``X`` with ``tensordot(A, X, X.ndim) == B``.

    >>> import retrograd as torch
    >>> tuple(torch.linalg.tensorsolve(torch.eye(4).reshape(2, 2, 4), torch.ones(2, 2)).shape)
    (4,)
    """
    if dims is not None:
        nd = A.dim()
        src = [wrap_dim(d, nd) for d in dims]
        order = [d for d in range(nd) if d not in src] + src
        A = A.permute(*order)
    rest = tuple(A.shape[B.dim():])
    flat = reshape(A, (B.numel(), -1))
    return reshape(linalg_solve(flat, reshape(B, (-1,))), rest)


def vander(x, *, N: int | None = None) -> Tensor:  # noqa: N803
    """The Vandermonde matrix with increasing powers ``x**0 ... x**(N-1)`` (batched).

    >>> import retrograd as torch
    >>> torch.linalg.vander(torch.tensor([1., 2., 3.]))
    tensor([[1., 1., 1.],
            [1., 2., 4.],
            [1., 3., 9.]])
    """
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension.")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        if n < 1:
            raise RuntimeError("N must be greater than 1.")
        return x.new_ones(tuple(x.shape) + (1,))
    base = x if x.is_floating_point() else x.long()
    powers = base.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(dim=-1)
    return cat([base.new_ones(tuple(x.shape) + (1,)), powers], -1)


@outside  # off autocast's lists: its products stay in the input's dtype
def matrix_exp(A) -> Tensor:  # noqa: N803
    """The matrix exponential, by scaling and squaring of a Taylor polynomial.

    >>> import retrograd as torch
    >>> torch.linalg.matrix_exp(torch.zeros(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_exp: A must be batches of square matrices, but they "
                           f"are {A.shape[-2]} by {A.shape[-1]} matrices")
    return fused("LinalgMatrixExpBackward0", _matrix_exp, A)


def _matrix_exp(A) -> Tensor:  # noqa: N803
    if A.dtype.name in ("bfloat16", "float16"):
        # float32 inside, rounded once: within a few units of the dtype of PyTorch's result
        # (whose every product rounds to the dtype), and closer to the true value.
        return _matrix_exp(A.float()).to(A.dtype)
    n = A.shape[-1]
    norm1 = float(np.abs(A.detach().numpy()).sum(-2).max()) if A.numel() else 0.0
    squarings = max(0, int(math.ceil(math.log2(norm1 / 0.5)))) if norm1 > 0.5 else 0
    X = A / (2.0**squarings)
    eye = wrap(np.broadcast_to(np.eye(n, dtype=A.detach().numpy().dtype), A.shape).copy())
    out, term = eye, eye
    terms = 18 if A.dtype.name == "float64" else 10
    for k in range(1, terms + 1):
        term = matmul(term, X) / k
        out = out + term
    for _ in range(squarings):
        out = matmul(out, out)
    return out


@fp32
def lstsq(A, B, rcond=None, *, driver=None):  # noqa: N803
    """The least-squares solution of ``A X = B`` (minimum norm), as ``(solution, residuals,
    rank, singular_values)``; the last three are empty, as for PyTorch's default driver.

    >>> import retrograd as torch
    >>> torch.linalg.lstsq(torch.tensor([[1.], [1.]]), torch.tensor([[1.], [3.]])).solution
    tensor([[2.0000]])
    """
    vec = B.dim() == A.dim() - 1

    def solution(A, B) -> Tensor:  # noqa: N803
        x = matmul(linalg_pinv(A), B.unsqueeze(-1) if vec else B)
        return x.squeeze(-1) if vec else x

    x = fused("LinalgLstsqBackward0", solution, A, B, _packs=(1, 0, "=solution"))
    empty = A.new_zeros((0,))
    return _lstsq((x, empty, wrap(np.zeros((0,), np.int64)), empty))


def _pivots(a: np.ndarray) -> tuple:
    """LAPACK's partial pivoting on the values: 1-based ``ipiv`` per batch, the row order it
    makes, and ``info`` (first zero pivot, 1-based, or 0)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    w = a.reshape((-1, m, n)).astype(np.float64, copy=True)
    ipiv = np.zeros((w.shape[0], k), np.int32)
    perm = np.tile(np.arange(m), (w.shape[0], 1))
    info = np.zeros(w.shape[0], np.int32)
    rows = np.arange(w.shape[0])
    for j in range(k):
        p = j + np.argmax(np.abs(w[:, j:, j]), axis=1)
        ipiv[:, j] = p + 1
        wj, wp = w[rows, j].copy(), w[rows, p].copy()
        w[rows, j], w[rows, p] = wp, wj
        pj, pp = perm[rows, j].copy(), perm[rows, p].copy()
        perm[rows, j], perm[rows, p] = pp, pj
        piv = w[:, j, j]
        zero = piv == 0
        info = np.where(zero & (info == 0), j + 1, info)
        safe = np.where(zero, 1.0, piv)
        f = w[:, j + 1:, j] / safe[:, None]
        f[zero] = 0.0
        w[:, j + 1:, j] = f
        w[:, j + 1:, j + 1:] -= f[:, :, None] * w[:, j, None, j + 1:]
    return (ipiv.reshape(batch + (k,)), perm.reshape(batch + (m,)), info.reshape(batch))


def _doolittle(PA):  # noqa: N803
    """``L`` (unit lower, m x k) and ``U`` (upper, k x n) of a matrix needing no pivoting."""
    m, n = PA.shape[-2:]
    k = min(m, n)
    lead = tuple(PA.shape[:-2])
    l_cols, u_rows = [], []
    for i in range(k):
        row = PA[..., i, i:]
        if i:
            lsofar = stack(l_cols, -1)[..., i, :]          # L[i, :i]
            usofar = stack(u_rows, -2)[..., :, i:]         # U[:i, i:]
            row = row - matmul(lsofar.unsqueeze(-2), usofar).squeeze(-2)
        u_rows.append(cat([PA.new_zeros(lead + (i,)), row], -1))
        col = PA[..., i + 1:, i]
        if i:
            lrest = stack(l_cols, -1)[..., i + 1:, :]      # L[i+1:, :i]
            ucol = stack(u_rows[:i], -2)[..., :, i]        # U[:i, i]
            col = col - matmul(lrest, ucol.unsqueeze(-1)).squeeze(-1)
        col = col / row[..., :1]
        l_cols.append(cat([PA.new_zeros(lead + (i,)), PA.new_ones(lead + (1,)), col], -1))
    return stack(l_cols, -1), stack(u_rows, -2)


def _lu_parts(A, pivot: bool = True):  # noqa: N803
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    if A.dim() < 2:
        raise RuntimeError(f"linalg.lu_factor: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(A.shape)} instead")
    ipiv, perm, info = _pivots(A.detach().numpy())
    m = A.shape[-2]
    idx = wrap(np.broadcast_to(perm[..., None], perm.shape + (A.shape[-1],)).copy())
    PA = gather(A, -2, idx) if m else A
    L, U = _doolittle(PA)
    eye = np.eye(m, dtype=A.detach().numpy().dtype)
    P = np.swapaxes(eye[perm], -1, -2) if perm.size else np.zeros(A.shape[:-2] + (m, m))
    return ipiv, info, wrap(np.ascontiguousarray(P.astype(eye.dtype))), L, U


def _packed(L, U):  # noqa: N803
    m, k = L.shape[-2:]
    n = U.shape[-1]
    if m >= n:
        return tril(L, -1) + cat([U, U.new_zeros(tuple(U.shape[:-2]) + (m - k, n))], -2)
    return cat([tril(L, -1), L.new_zeros(tuple(L.shape[:-2]) + (m, n - k))], -1) + U


def _packed_of(A, pivot: bool, L, U, ipiv=None) -> Tensor:  # noqa: N803
    """The packed ``LU`` as PyTorch records it: one ``LinalgLuFactorExBackward0`` node (which
    shows ``pivot`` and the ``pivots``)."""
    if not recording(A):
        return _packed(L, U)
    return fused("LinalgLuFactorExBackward0", lambda A: _packed(*_lu_parts(A, pivot)[3:]), A,
                 _pivot=pivot, _pivots=ipiv, _packs=("=LU", "=pivots"))


def lu_factor_ex(A, *, pivot: bool = True, check_errors: bool = False):  # noqa: N803
    """``(LU, pivots, info)``: the LU factorization packed in one matrix, LAPACK's 1-based
    pivots, and ``info`` (the first zero pivot, or 0).

    >>> import retrograd as torch
    >>> torch.linalg.lu_factor_ex(torch.tensor([[1., 2.], [3., 4.]])).pivots.tolist()
    [2, 2]
    """
    ipiv, info, _, L, U = _lu_parts(A.detach(), pivot)
    return _lu_factor_ex((_packed_of(A, pivot, L, U, ipiv), wrap(ipiv), wrap(info)))


def lu_factor(A, *, pivot: bool = True):  # noqa: N803
    """``(LU, pivots)`` of ``lu_factor_ex``; a singular matrix is an error.

    >>> import retrograd as torch
    >>> torch.linalg.lu_factor(torch.tensor([[1., 2.], [3., 4.]])).LU
    tensor([[3.0000, 4.0000],
            [0.3333, 0.6667]])
    """
    ipiv, info, _, L, U = _lu_parts(A.detach(), pivot)
    if info.size and info.max() > 0:
        bad = int(info.reshape(-1)[np.flatnonzero(info.reshape(-1))[0]])
        raise RuntimeError(f"torch.linalg.lu_factor: U[{bad},{bad}] is zero and using it on "
                           "lu_solve would result in a division by zero. If you still want to "
                           "perform the factorization, consider calling linalg.lu(A, pivot) or "
                           "linalg.lu_factor_ex(A, pivot)")
    return _lu_factor((_packed_of(A, pivot, L, U, ipiv), wrap(ipiv)))


def lu(A, *, pivot: bool = True):  # noqa: N803
    """``(P, L, U)`` with ``A = P @ L @ U``.

    >>> import retrograd as torch
    >>> P, L, U = torch.linalg.lu(torch.tensor([[1., 2.], [3., 4.]]))
    >>> (P @ L @ U).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    if not recording(A):
        return _lu(tuple(_lu_parts(A, pivot)[2:]))
    return _lu(fused("LinalgLuBackward0", lambda A: tuple(_lu_parts(A, pivot)[2:]), A,
                     differentiable=[False, True, True], _pivot=pivot,
                     _packs=("=L", "=P", "=U")))


def _perm_of(pivots: np.ndarray, m: int) -> np.ndarray:
    piv = pivots.reshape((-1, pivots.shape[-1])) - 1
    perm = np.tile(np.arange(m), (piv.shape[0], 1))
    rows = np.arange(piv.shape[0])
    for j in range(piv.shape[1]):
        p = piv[:, j]
        a, b = perm[rows, j].copy(), perm[rows, p].copy()
        perm[rows, j], perm[rows, p] = b, a
    return perm.reshape(pivots.shape[:-1] + (m,))


def lu_unpack(LU_data, LU_pivots, unpack_data: bool = True, unpack_pivots: bool = True):  # noqa: N803
    """``(P, L, U)`` from the packed factorization of ``lu_factor``.

    >>> import retrograd as torch
    >>> LU, piv = torch.linalg.lu_factor(torch.tensor([[1., 2.], [3., 4.]]))
    >>> P, L, U = torch.lu_unpack(LU, piv)
    >>> (P @ L @ U).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    eye_k = wrap(np.eye(m, k, dtype=LU_data.detach().numpy().dtype))
    perm = _perm_of(LU_pivots.numpy(), m)
    eye = np.eye(m, dtype=LU_data.detach().numpy().dtype)
    P = wrap(np.ascontiguousarray(np.swapaxes(eye[perm], -1, -2)))

    def unpack(LU) -> tuple:  # noqa: N803
        return P, tril(LU[..., :, :k], -1) + eye_k, triu(LU[..., :k, :])

    return return_types_lu_unpack(fused("LuUnpackBackward0", unpack, LU_data,
                                        differentiable=[False, True, True], _packs=()))


return_types_lu_unpack = _named("lu_unpack", ("P", "L", "U"))


def lu_solve(LU, pivots, B, *, left: bool = True, adjoint: bool = False) -> Tensor:  # noqa: N803
    """Solve ``A X = B`` from ``A``'s ``lu_factor``.

    >>> import retrograd as torch
    >>> A = torch.tensor([[1., 2.], [3., 4.]])
    >>> torch.linalg.lu_solve(*torch.linalg.lu_factor(A), torch.tensor([[5.], [11.]]))
    tensor([[1.],
            [2.]])
    """
    def solve(LU, B) -> Tensor:  # noqa: N803
        P, L, U = lu_unpack(LU, pivots)
        A = matmul(P, matmul(L, U))
        return linalg_solve(A.mT if adjoint else A, B, left=left)

    return fused("LinalgLuSolveBackward0", solve, LU, B, _left=left, _adjoint=adjoint,
                 _pivots=pivots, _packs=(0, "=pivots", "=result"))


def _apply_reflectors(A, tau, X):  # noqa: N803
    """``H_1 ... H_k X`` for the reflectors ``H_i = I - tau_i v_i v_i^T`` stored below the
    diagonal of ``A`` (``v_i`` has a 1 at ``i``)."""
    m = A.shape[-2]
    lead = tuple(A.shape[:-2])
    for i in reversed(range(tau.shape[-1])):
        v = cat([A.new_zeros(lead + (i,)), A.new_ones(lead + (1,)), A[..., i + 1:, i]], -1)
        w = matmul(v.unsqueeze(-2), X)                        # v^T X
        X = X - tau[..., i, None, None] * (v.unsqueeze(-1) * w)
    del m
    return X


@fp32
def householder_product(A, tau) -> Tensor:  # noqa: N803
    """The first ``n`` columns of the product of the Householder reflectors that ``geqrf``
    stores in ``A`` and ``tau`` (``torch.orgqr``).

    >>> import retrograd as torch
    >>> a, tau = torch.geqrf(torch.tensor([[3., 1.], [4., 2.]]))
    >>> torch.linalg.householder_product(a, tau).abs()
    tensor([[0.6000, 0.8000],
            [0.8000, 0.6000]])
    """
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater "
                           "than or equal to input.shape[-1]")
    if tau.shape[-1] > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater "
                           "than or equal to tau.shape[-1]")
    eye = wrap(np.broadcast_to(np.eye(m, n, dtype=A.detach().numpy().dtype),
                               tuple(A.shape)).copy())
    return fused("LinalgHouseholderProductBackward0",
                 lambda A, tau: _apply_reflectors(A, tau, eye), A, tau, _packs=(0, 1, "=result"))


def _geqrf_np(a: np.ndarray):
    m, n = a.shape[-2:]
    k = min(m, n)
    r = a.astype(np.float64).reshape((-1, m, n)).copy()
    tau = np.zeros((r.shape[0], k))
    for b in range(r.shape[0]):
        for j in range(k):
            x = r[b, j:, j]
            alpha, xnorm = x[0], np.linalg.norm(x[1:])
            if xnorm == 0:
                continue
            beta = -math.copysign(math.hypot(alpha, xnorm), alpha)
            tau[b, j] = (beta - alpha) / beta
            v = np.concatenate([[1.0], x[1:] / (alpha - beta)])
            r[b, j, j] = beta
            r[b, j + 1:, j] = v[1:]
            w = r[b, j:, j + 1:]
            w -= tau[b, j] * np.outer(v, v @ w)
    return r.reshape(a.shape).astype(a.dtype), tau.reshape(a.shape[:-2] + (k,)).astype(a.dtype)


@fp32
def geqrf(input):  # noqa: A002
    """LAPACK's QR representation ``(a, tau)``: ``R`` on and above the diagonal of ``a``,
    the Householder vectors below it (no gradient, as in PyTorch).

    >>> import retrograd as torch
    >>> torch.geqrf(torch.tensor([[3., 1.], [4., 2.]])).a
    tensor([[-5.0000, -2.2000],
            [ 0.5000,  0.4000]])
    """
    a, tau = _geqrf_np(input.detach().numpy())
    return _geqrf((wrap(a), wrap(tau)))


_geqrf = _named("geqrf", ("a", "tau"))


@fp32
def ormqr(input, tau, other, left: bool = True, transpose: bool = False) -> Tensor:  # noqa: A002
    """``Q @ other`` (or ``Q^T``, or from the right) for the ``Q`` of ``geqrf``'s ``(input,
    tau)``.

    >>> import retrograd as torch
    >>> a, tau = torch.geqrf(torch.tensor([[3., 1.], [4., 2.]]))
    >>> torch.ormqr(a, tau, torch.eye(2)).abs()
    tensor([[0.6000, 0.8000],
            [0.8000, 0.6000]])
    """
    m = input.shape[-2]
    eye = np.broadcast_to(np.eye(m, dtype=input.detach().numpy().dtype),
                          tuple(input.shape[:-2]) + (m, m))
    eye = wrap(eye.copy())

    def product(input, tau, other) -> Tensor:  # noqa: A002
        Q = _apply_reflectors(input, tau, eye)
        if transpose:
            Q = Q.mT
        return matmul(Q, other) if left else matmul(other, Q)

    return fused("OrmqrBackward0", product, input, tau, other, _left=left, _transpose=transpose,
                 _packs=(1, 2, 0, "=result"))


_ALPHA = (1 + math.sqrt(17)) / 8  # Bunch-Kaufman's pivoting threshold


def _ldl_np(a: np.ndarray):
    """LAPACK's ``sytf2`` (lower) on one symmetric matrix: ``(LD, ipiv, info)``."""
    A = a.astype(np.float64).copy()
    n = A.shape[0]
    ipiv = np.zeros(n, np.int32)
    info, k = 0, 0
    while k < n:
        kstep = 1
        absakk = abs(A[k, k])
        imax, colmax = k, 0.0
        if k < n - 1:
            imax = k + 1 + int(np.argmax(np.abs(A[k + 1:, k])))
            colmax = abs(A[imax, k])
        if max(absakk, colmax) == 0:
            info = info or k + 1
            kp = k
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                row = np.abs(A[imax, k:]).copy()
                row[imax - k] = 0
                rowmax = row.max()
                if absakk * rowmax >= _ALPHA * colmax * colmax:
                    kp = k
                elif abs(A[imax, imax]) >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:  # swap rows and columns kk, kp of the trailing matrix only
                idx = np.arange(k, n)
                idx[[kk - k, kp - k]] = idx[[kp - k, kk - k]]
                A[k:, k:] = A[np.ix_(idx, idx)]
            if kstep == 1 and k < n - 1:
                col = A[k + 1:, k].copy()
                A[k + 1:, k + 1:] -= np.outer(col / A[k, k], col)
                A[k + 1:, k] = col / A[k, k]
            elif kstep == 2 and k < n - 2:
                C = A[k + 2:, k:k + 2].copy()
                L = C @ np.linalg.inv(A[k:k + 2, k:k + 2])
                A[k + 2:, k + 2:] -= L @ C.T
                A[k + 2:, k:k + 2] = L
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return np.tril(A), ipiv, info


_ldl = _named("linalg_ldl_factor", ("LD", "pivots"))
_ldl_ex = _named("linalg_ldl_factor_ex", ("LD", "pivots", "info"))


def ldl_factor_ex(A, *, hermitian: bool = False, check_errors: bool = False):  # noqa: N803
    """``(LD, pivots, info)``: the Bunch-Kaufman ``L D L^T`` factorization of a symmetric
    matrix as LAPACK stores it (no gradient, as in PyTorch).

    >>> import retrograd as torch
    >>> torch.linalg.ldl_factor_ex(torch.tensor([[4., 2.], [2., 3.]])).LD
    tensor([[4.0000, 0.0000],
            [0.5000, 2.0000]])
    """
    a = A.detach().numpy()
    batch = a.shape[:-2]
    flat = a.reshape((-1,) + a.shape[-2:])
    parts = [_ldl_np(m) for m in flat]
    n = a.shape[-1]
    ld = np.stack([p[0] for p in parts]).reshape(a.shape).astype(a.dtype) if parts else \
        np.zeros(a.shape, a.dtype)
    piv = np.stack([p[1] for p in parts]).reshape(batch + (n,)) if parts else \
        np.zeros(batch + (n,), np.int32)
    info = np.array([p[2] for p in parts], np.int32).reshape(batch)
    return _ldl_ex((wrap(ld), wrap(piv), wrap(info)))


def ldl_factor(A, *, hermitian: bool = False):  # noqa: N803
    """``(LD, pivots)`` of ``ldl_factor_ex``.

    >>> import retrograd as torch
    >>> torch.linalg.ldl_factor(torch.tensor([[0., 1.], [1., 0.]])).pivots.tolist()
    [-2, -2]
    """
    LD, pivots, _ = ldl_factor_ex(A, hermitian=hermitian)
    return _ldl((LD, pivots))


def _ldl_solve_np(A: np.ndarray, ipiv: np.ndarray, B: np.ndarray) -> np.ndarray:
    """LAPACK's ``sytrs`` (lower) for one factorization."""
    B = B.astype(np.float64).copy()
    n = A.shape[0]
    k = 0
    while k < n:  # L D Y = B
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            B[[k, kp]] = B[[kp, k]]
            B[k + 1:] -= np.outer(A[k + 1:, k], B[k])
            B[k] /= A[k, k]
            k += 1
        else:
            kp = -ipiv[k] - 1
            B[[k + 1, kp]] = B[[kp, k + 1]]
            B[k + 2:] -= np.outer(A[k + 2:, k], B[k]) + np.outer(A[k + 2:, k + 1], B[k + 1])
            D = np.array([[A[k, k], A[k + 1, k]], [A[k + 1, k], A[k + 1, k + 1]]])
            B[k:k + 2] = np.linalg.solve(D, B[k:k + 2])
            k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y
        if ipiv[k] > 0:
            B[k] -= A[k + 1:, k] @ B[k + 1:]
            kp = ipiv[k] - 1
            B[[k, kp]] = B[[kp, k]]
            k -= 1
        else:
            B[k] -= A[k + 1:, k] @ B[k + 1:]
            B[k - 1] -= A[k + 1:, k - 1] @ B[k + 1:]
            kp = -ipiv[k] - 1
            B[[k, kp]] = B[[kp, k]]
            k -= 2
    return B


def ldl_solve(LD, pivots, B, *, hermitian: bool = False) -> Tensor:  # noqa: N803
    """Solve ``A X = B`` from ``A``'s ``ldl_factor`` (no gradient, as in PyTorch).

    >>> import retrograd as torch
    >>> A = torch.tensor([[4., 2.], [2., 3.]])
    >>> torch.linalg.ldl_solve(*torch.linalg.ldl_factor(A), torch.tensor([[6.], [5.]]))
    tensor([[1.],
            [1.]])
    """
    ld, piv, b = LD.detach().numpy(), pivots.numpy(), B.detach().numpy()
    lead = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    ld = np.broadcast_to(ld, lead + ld.shape[-2:]).reshape((-1,) + ld.shape[-2:])
    piv = np.broadcast_to(piv, lead + piv.shape[-1:]).reshape((-1,) + piv.shape[-1:])
    bb = np.broadcast_to(b, lead + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    out = np.stack([_ldl_solve_np(m, p, r) for m, p, r in zip(ld, piv, bb)]) if bb.size else bb
    return wrap(out.reshape(lead + b.shape[-2:]).astype(np.result_type(ld.dtype, b.dtype)))


LINALG = {
    "diagonal": diagonal, "multi_dot": multi_dot, "norm": norm, "cond": cond,
    "solve_ex": solve_ex, "solve_triangular": solve_triangular, "tensorinv": tensorinv,
    "tensorsolve": tensorsolve, "vander": vander, "matrix_exp": matrix_exp, "lstsq": lstsq,
    "lu_factor": lu_factor, "lu_factor_ex": lu_factor_ex, "lu": lu, "lu_solve": lu_solve,
    "householder_product": householder_product, "ldl_factor": ldl_factor,
    "ldl_factor_ex": ldl_factor_ex, "ldl_solve": ldl_solve,
}
