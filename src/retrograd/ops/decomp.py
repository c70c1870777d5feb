"""Matrix decompositions and solvers: inv, det, slogdet, solve, cholesky, qr, eigh, svd,
svdvals, pinv, matrix_power, matrix_rank.

Each factorization is one primitive node named as PyTorch names it (``LinalgSvdBackward0``, ...),
with every output attached to it. The backward formulas are the standard ones (inv:
``-A^-T g A^-T``; det: ``g det(A) A^-T``; cholesky: Murray's; qr, eigh and svd: the gap-matrix
formulas) written with matmuls, solves and products with constant masks (identity, lower
triangle), so the same line runs on arrays and, recorded, on tensors: every order of derivative
comes from it. Outputs the formula needs are kept without a reference to the output tensors
(``_MultiOut``) and come back, when the backward is recorded, as tensors whose grad_fn is the
node itself, as PyTorch unpacks saved outputs.
"""

from __future__ import annotations

import numpy as np

from .. import return_types
from .._dtypes import FLOAT_CHARS, FROM_NP
from .._tensor import Tensor, make
from ..autograd import saved as _saved
from ..autograd.graph import Node, unpacked_output
from ..autograd.saved import freed_msg, output_modified_msg
from . import _array
from ._apply import apply, apply_multi
from ._autocast import fp32
from ._core import as_tensor_arg, wrap
from .compare import where
from .inplace import CopyBackwards  # before shape: inplace loads indexing, which loads shape
from .shape import clone, mT


class LinAlgError(RuntimeError):
    """Raised when a matrix is singular or not positive-definite (``torch.linalg.LinAlgError``).

    >>> import retrograd as torch
    >>> try:
    ...     torch.linalg.inv(torch.zeros(2, 2))
    ... except torch.linalg.LinAlgError as e:
    ...     print(e)
    linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because the input matrix is singular.
    """  # noqa: E501


# -- named result tuples ------------------------------------------------------------------------


def _structseq(name: str, fields: tuple):
    """A tuple with named fields, printed as PyTorch prints ``torch.return_types``."""
    shared = getattr(return_types, name, None)
    if shared is not None:
        return shared

    def __new__(cls, values):
        return tuple.__new__(cls, values)

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"retrograd.return_types.{name}(\n{body})"

    ns = {"__new__": __new__, "__repr__": __repr__, "__slots__": (), "_fields": fields,
          "__module__": "retrograd.return_types"}
    for i, f in enumerate(fields):
        ns[f] = property(lambda self, i=i: self[i])
    return type(name, (tuple,), ns)


_SLOGDET = _structseq("linalg_slogdet", ("sign", "logabsdet"))
_SLOGDET_OLD = _structseq("slogdet", ("sign", "logabsdet"))
_QR = _structseq("linalg_qr", ("Q", "R"))
_QR_OLD = _structseq("qr", ("Q", "R"))
_EIGH = _structseq("linalg_eigh", ("eigenvalues", "eigenvectors"))
_SVD = _structseq("linalg_svd", ("U", "S", "Vh"))
_SVD_OLD = _structseq("svd", ("U", "S", "V"))
_INV_EX = _structseq("linalg_inv_ex", ("inverse", "info"))
_CHOLESKY_EX = _structseq("linalg_cholesky_ex", ("L", "info"))

# -- checks -------------------------------------------------------------------------------------

def _matrix_arg(x, fname: str, square: bool = True) -> np.ndarray:
    """The array of a (batch of) matrices that a decomposition accepts, as PyTorch checks it."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument 'A' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    a = x._data
    if a.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if a.dtype.char not in FLOAT_CHARS or a.dtype == np.float16:
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. Got "
                           f"{FROM_NP[a.dtype].scalar_name}")
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{fname}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    return a


def _batch_prefix(a: np.ndarray, i: int) -> str:
    return f"(Batch element {i}): " if a.ndim > 2 else ""


def _first_zero_pivot(m: np.ndarray) -> int:
    """1-based index of the first zero pivot of LU with partial pivoting (LAPACK's ``info``)."""
    m = np.array(m, dtype=m.dtype, copy=True)
    n = m.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(m[k:, k])))
        if m[p, k] == 0:
            return k + 1
        if p != k:
            m[[k, p]] = m[[p, k]]
        m[k + 1:, k] /= m[k, k]
        m[k + 1:, k + 1:] -= np.outer(m[k + 1:, k], m[k, k + 1:])
    return n


def _singular_error(a: np.ndarray, fname: str) -> LinAlgError:
    """The error PyTorch raises for the first singular matrix of the batch ``a``."""
    flat = a.reshape((-1,) + a.shape[-2:])
    for i, m in enumerate(flat):
        try:
            np.linalg.inv(m)
        except np.linalg.LinAlgError:
            where = _batch_prefix(a, i)
            if fname == "linalg.solve":
                return LinAlgError(f"torch.linalg.solve: {where}The solver failed because the "
                                   "input matrix is singular.")
            return LinAlgError(
                f"{fname}: {where}The diagonal element {_first_zero_pivot(m)} is zero, the "
                "inversion could not be completed because the input matrix is singular."
            )
    return LinAlgError(f"{fname}: The input matrix is singular.")


def _not_pd_error(a: np.ndarray, fname: str, upper: bool) -> LinAlgError:
    flat = a.reshape((-1,) + a.shape[-2:])
    for i, m in enumerate(flat):
        for k in range(1, m.shape[-1] + 1):
            try:
                np.linalg.cholesky(m[:k, :k], upper=upper)
            except np.linalg.LinAlgError:
                return LinAlgError(
                    f"{fname}: {_batch_prefix(a, i)}The factorization could not be completed "
                    f"because the input is not positive-definite (the leading minor of order "
                    f"{k} is not positive-definite)."
                )
    return LinAlgError(f"{fname}: The factorization could not be completed because the input "
                       "is not positive-definite.")


# -- constants the formulas multiply by ---------------------------------------------------------

_CONSTS: dict = {}


def _const(kind: str, n: int, dtype, m: int | None = None) -> np.ndarray:
    """A read-only constant matrix: ``eye``, ``tril_half`` (lower triangle, diagonal halved),
    ``tril`` or ``eye_cols`` (the first ``m`` columns of the identity of size ``n``)."""
    key = (kind, n, m, np.dtype(dtype))
    c = _CONSTS.get(key)
    if c is None:
        if kind == "eye":
            c = np.eye(n, dtype=dtype)
        elif kind == "tril_half":
            c = np.tril(np.ones((n, n), dtype)) - 0.5 * np.eye(n, dtype=dtype)
        elif kind == "tril":
            c = np.tril(np.ones((n, n), dtype))
        else:  # eye_cols: n x m, the first m columns of the identity
            c = np.eye(n, m, dtype=dtype)
        c = c.astype(dtype)
        c.flags.writeable = False
        if len(_CONSTS) > 1024:
            _CONSTS.clear()
        _CONSTS[key] = c
    return c


def _mT(xp, x):
    return xp.transpose(x, -1, -2)


def _col(xp, v):
    """``v[..., None, :]``: scales the columns of a matrix it multiplies."""
    return xp.unsqueeze(v, -2)


def _row(xp, v):
    """``v[..., :, None]``: scales the rows of a matrix it multiplies."""
    return xp.unsqueeze(v, -1)


def _diag_embed(xp, v, eye):
    """Matrices with ``v`` on the diagonal. The row is expanded before the product with the
    constant ``eye`` so the product's own gradient keeps ``v``'s shape."""
    return xp.expand(_col(xp, v), tuple(v.shape[:-1]) + eye.shape) * eye


# -- nodes with several outputs -----------------------------------------------------------------


class _MultiOut(Node):
    """A factorization's node: several outputs, kept as arrays for its formula."""

    _materialize = False
    _outs = None

    def keep(self, arrays, vcs) -> None:
        self._outs = [(a, vc, vc[0]) for a, vc in zip(arrays, vcs)]
        if _saved.HOOKS_ON:  # the outputs PyTorch saves are here now (autograd/saved_hooks.py)
            _saved.PACK_NODE(self)

    def outputs(self, xp) -> list:
        outs = self._outs
        if outs is None:
            raise RuntimeError(freed_msg(self))
        res = []
        for i, (arr, vc, version) in enumerate(outs):
            if vc[0] != version:
                raise RuntimeError(output_modified_msg(arr, vc, version, self, i))
            res.append(unpacked_output(arr, vc, self, i) if xp.TENSORS else arr)
        return res

    def release(self) -> None:
        super().release()
        self._outs = None


def _attach(P, x: Tensor, arrays: list, visible, save=None, **attrs) -> list:
    """The outputs ``visible`` (indices) of factorization ``P`` on ``x``; the rest stay hidden,
    kept (with every output) only for the formula."""
    outs = apply_multi(P, arrays, (x,), save=save, **attrs)
    node = outs[0]._grad_fn
    if node is not None:
        node.keep(arrays, [t._vc for t in outs])
    return [outs[i] for i in visible]


# -- inv ----------------------------------------------------------------------------------------


class LinalgInvExBackward0(Node):
    def backward(self, xp, g):
        inv_t = _mT(xp, self.saved_output(xp.TENSORS))
        return -xp.matmul(xp.matmul(inv_t, g), inv_t)


def _inv_array(a: np.ndarray, fname: str) -> np.ndarray:
    if a.size == 0:
        return a.copy()
    try:
        inv = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise _singular_error(a, fname) from None
    return _colmajor(inv)


def _colmajor(a: np.ndarray) -> np.ndarray:
    """``a`` with LAPACK's layout, as PyTorch returns its factors: each matrix column-major
    (strides (1, rows)), a batch of them one after another."""
    return np.swapaxes(np.swapaxes(a, -1, -2).copy(), -1, -2)


@fp32
def linalg_inv(A: Tensor) -> Tensor:  # noqa: N803
    """The inverse of a square matrix (or of each in a batch).

    >>> import retrograd as torch
    >>> torch.linalg.inv(torch.tensor([[2., 0.], [0., 4.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    a = _matrix_arg(A, "linalg.inv")
    return apply(LinalgInvExBackward0, _inv_array(a, "linalg.inv"), A, save_out=True)


@fp32
def inverse(input: Tensor) -> Tensor:  # noqa: A002
    """``torch.inverse``: the same as ``linalg.inv``.

    >>> import retrograd as torch
    >>> torch.tensor([[4.]]).inverse()
    tensor([[0.2500]])
    """
    return linalg_inv(input)


@fp32
def linalg_inv_ex(A: Tensor, *, check_errors: bool = False):  # noqa: N803
    """``(inverse, info)``; ``info`` is 0 where the matrix was invertible.

    >>> import retrograd as torch
    >>> torch.linalg.inv_ex(torch.tensor([[2.]])).info.item()
    0
    """
    a = _matrix_arg(A, "linalg.inv_ex")
    try:
        return _INV_EX((linalg_inv(A), make(np.zeros(a.shape[:-2], np.int32))))
    except LinAlgError:
        if check_errors:
            raise _singular_error(a, "linalg.inv_ex") from None
    # Some matrix is singular: its info is LAPACK's (the first zero pivot), its inverse nan.
    flat = a.reshape((-1,) + a.shape[-2:])
    info = np.zeros(flat.shape[0], np.int32)
    out = np.empty_like(flat)
    for i, m in enumerate(flat):
        try:
            out[i] = np.linalg.inv(m)
        except np.linalg.LinAlgError:
            info[i] = _first_zero_pivot(m)
            out[i] = np.nan
    return _INV_EX((wrap(out.reshape(a.shape)), make(info.reshape(a.shape[:-2]))))


# -- det, slogdet, logdet -----------------------------------------------------------------------


class LinalgDetBackward0(Node):
    """``g det(A) A^-T``. Where the determinant is exactly 0 PyTorch's gradient is 0 (not the
    adjugate): those matrices are swapped for the identity before inverting, and ``det = 0``
    zeroes their term."""

    _singular = None
    _packs = (0, "=LU", "=pivots", "out")  # PyTorch's saves, in its order (saved_hooks.py)

    def backward(self, xp, g):
        (a,) = self.saved(xp.TENSORS)
        d = self.saved_output(xp.TENSORS)
        if self._singular is not None:
            a = xp.where(self._singular, self._eye, a)
        return _row(xp, _row(xp, g * d)) * _mT(xp, xp.linalg_inv(a))


def linalg_det(A: Tensor) -> Tensor:  # noqa: N803
    """The determinant of a square matrix (or of each in a batch).

    >>> import retrograd as torch
    >>> torch.linalg.det(torch.tensor([[1., 2.], [3., 4.]]))
    tensor(-2.)
    """
    a = _matrix_arg(A, "linalg.det")
    out = np.asarray(np.linalg.det(a), dtype=a.dtype) if a.shape[-1] else \
        np.ones(a.shape[:-2], a.dtype)
    singular = {}
    if a.size and not np.all(out):
        singular = {"_singular": (out == 0)[..., None, None],
                    "_eye": _const("eye", a.shape[-1], a.dtype)}
    return apply(LinalgDetBackward0, out, A, save=(A,), save_out=True, **singular)


def det(input: Tensor) -> Tensor:  # noqa: A002
    """``torch.det``: the same as ``linalg.det``.

    >>> import retrograd as torch
    >>> torch.det(torch.eye(3))
    tensor(1.)
    """
    return linalg_det(input)


class LinalgSlogdetBackward0(_MultiOut):
    """Only ``logabsdet`` carries a gradient: ``g A^-T``."""

    _packs = (0, "=LU", "=pivots", "=sign")  # PyTorch's saves, in its order (saved_hooks.py)

    def backward(self, xp, g_sign, g_logabs):
        if g_logabs is None:
            return None
        (a,) = self.saved(xp.TENSORS)
        return _row(xp, _row(xp, g_logabs)) * _mT(xp, xp.linalg_inv(a))


def _slogdet(A, fname, cls):
    a = _matrix_arg(A, fname)
    if a.shape[-1]:
        sign, logabs = np.linalg.slogdet(a)
        sign = np.asarray(sign, a.dtype)
        logabs = np.asarray(logabs, a.dtype)
    else:
        sign = np.ones(a.shape[:-2], a.dtype)
        logabs = np.zeros(a.shape[:-2], a.dtype)
    return cls(_attach(LinalgSlogdetBackward0, A, [sign, logabs], (0, 1), save=(A,)))


def linalg_slogdet(A: Tensor):  # noqa: N803
    """``(sign, logabsdet)`` of the determinant; stable where ``det`` over- or underflows.

    >>> import retrograd as torch
    >>> torch.linalg.slogdet(torch.tensor([[-2., 0.], [0., 3.]])).logabsdet
    tensor(1.7918)
    """
    return _slogdet(A, "linalg.slogdet", _SLOGDET)


def slogdet(input: Tensor):  # noqa: A002
    """``torch.slogdet``: the same as ``linalg.slogdet``.

    >>> import retrograd as torch
    >>> torch.slogdet(torch.eye(2)).sign
    tensor(1.)
    """
    return _slogdet(input, "linalg.slogdet", _SLOGDET_OLD)


def logdet(input: Tensor) -> Tensor:  # noqa: A002
    """The log of the determinant: nan where the determinant is negative.

    >>> import retrograd as torch
    >>> torch.logdet(torch.tensor([[2., 0.], [0., 3.]]))
    tensor(1.7918)
    """
    sign, logabs = _slogdet(input, "logdet", _SLOGDET_OLD)
    return where(sign < 0, float("nan"), logabs)


# -- solve --------------------------------------------------------------------------------------


class LinalgSolveExBackward0(Node):
    _packs = (0, "=LU", "=pivots", "out")  # PyTorch's saves, in its order (saved_hooks.py)

    def backward(self, xp, g):
        (a,) = self.saved(xp.TENSORS)
        x = self.saved_output(xp.TENSORS)
        if self._vector:
            g = xp.unsqueeze(g, -1)
            x = xp.unsqueeze(x, -1)
        if self._left:
            gb = xp.linalg_solve_mat(_mT(xp, a), g)            # A^-T g
            ga = -xp.matmul(gb, _mT(xp, x)) if self._needs(0) else None
        else:
            gb = _mT(xp, xp.linalg_solve_mat(a, _mT(xp, g)))   # g A^-T
            ga = -xp.matmul(_mT(xp, x), gb) if self._needs(0) else None
        if self._vector:
            gb = xp.squeeze(gb, -1)
        return ga, (gb if self._needs(1) else None)


def _solve(A, B, left: bool, vector: bool | None, fname: str = "linalg.solve") -> Tensor:
    a = _matrix_arg(A, fname)
    B = B if isinstance(B, Tensor) else as_tensor_arg(B)
    b = B._data
    if b.dtype != a.dtype:
        raise RuntimeError(
            f"{fname}: Expected A and B to have the same dtype, but found A of type "
            f"{FROM_NP[a.dtype].scalar_name} and B of type {FROM_NP[b.dtype].scalar_name} "
            "instead"
        )
    if vector is None:
        vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    bm = b[..., None] if vector else b
    n = a.shape[-1]
    if bm.ndim < 2 or bm.shape[-2 if left else -1] != n:
        shape = (f"{bm.shape[-2]}x{bm.shape[-1]}" if bm.ndim >= 2 else f"{bm.shape[-1]}")
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{fname}: Incompatible shapes of A and B for the equation {eq} "
                           f"({a.shape[-2]}x{a.shape[-1]} and {shape})")
    try:
        batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    except ValueError:
        raise RuntimeError(
            f"The size of tensor a ({a.shape[-3] if a.ndim > 2 else 1}) must match the size of "
            f"tensor b ({bm.shape[-3] if bm.ndim > 2 else 1}) at non-singleton dimension 0"
        ) from None
    ab = np.broadcast_to(a, batch + a.shape[-2:])
    bb = np.broadcast_to(bm, batch + bm.shape[-2:])
    try:
        if left:
            out = np.linalg.solve(ab, bb) if bb.size and ab.size else np.zeros(bb.shape, a.dtype)
        else:
            out = (np.swapaxes(np.linalg.solve(np.swapaxes(ab, -1, -2), np.swapaxes(bb, -1, -2)),
                               -1, -2) if bb.size and ab.size else np.zeros(bb.shape, a.dtype))
    except np.linalg.LinAlgError:
        raise _singular_error(ab, "linalg.solve") from None
    if vector:
        out = out[..., 0]
    return apply(LinalgSolveExBackward0, out, A, B, save=(A,), save_out=True, _vector=vector,
                 _left=left)


@fp32
def linalg_solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:  # noqa: N803
    """The solution ``X`` of ``A X = B`` (``X A = B`` with ``left=False``); ``B`` may be a vector.

    >>> import retrograd as torch
    >>> torch.linalg.solve(torch.tensor([[2., 0.], [0., 4.]]), torch.tensor([2., 2.]))
    tensor([1.0000, 0.5000])
    """
    return _solve(A, B, left, None)


def linalg_solve_mat(A: Tensor, B: Tensor) -> Tensor:  # noqa: N803
    """``A^-1 B`` for a matrix right-hand side (never a vector): formulas' solve."""
    return _solve(A, B, True, False)


def _solve_mat_array(a, b):
    return np.linalg.solve(a, b)


# -- cholesky -----------------------------------------------------------------------------------


class LinalgCholeskyExBackward0(Node):
    """Murray's formula: ``gA = L^-T Phi(L^T gL) L^-1``, symmetrized, where ``Phi`` takes the
    lower triangle and halves the diagonal."""

    _upper = False

    def backward(self, xp, g):
        f = self.saved_output(xp.TENSORS)
        if self._upper:
            f, g = _mT(xp, f), _mT(xp, g)
        lt = _mT(xp, f)
        shape, dt = self._meta[0]
        phi = xp.matmul(lt, g) * _const("tril_half", shape[-1], dt)
        x = xp.linalg_solve_mat(lt, phi)                        # L^-T phi
        ga = _mT(xp, xp.linalg_solve_mat(lt, _mT(xp, x)))       # L^-T phi L^-1
        return (ga + _mT(xp, ga)) * 0.5


def _cholesky_array(a, upper, fname):
    if a.size == 0:
        return a.copy()
    try:
        return np.linalg.cholesky(a, upper=upper)
    except np.linalg.LinAlgError:
        raise _not_pd_error(a, fname, upper) from None


@fp32
def linalg_cholesky(A: Tensor, *, upper: bool = False) -> Tensor:  # noqa: N803
    """The Cholesky factor ``L`` of a symmetric positive-definite ``A = L L^T`` (``U`` with
    ``A = U^T U`` when ``upper``).

    >>> import retrograd as torch
    >>> torch.linalg.cholesky(torch.tensor([[4., 2.], [2., 5.]]))
    tensor([[2., 0.],
            [1., 2.]])
    """
    a = _matrix_arg(A, "linalg.cholesky")
    out = _cholesky_array(a, upper, "linalg.cholesky")
    return apply(LinalgCholeskyExBackward0, out, A, save_out=True, _upper=upper)


@fp32
def linalg_cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False):  # noqa: N803
    """``(L, info)``; ``info`` is the order of the first leading minor that is not
    positive-definite, 0 when the factorization succeeded.

    >>> import retrograd as torch
    >>> torch.linalg.cholesky_ex(torch.tensor([[1., 2.], [2., 1.]])).info.item()
    2
    """
    a = _matrix_arg(A, "linalg.cholesky_ex")
    try:
        L = linalg_cholesky(A, upper=upper)
        info = np.zeros(a.shape[:-2], np.int32)
    except LinAlgError:
        if check_errors:
            raise
        flat = a.reshape((-1,) + a.shape[-2:])
        info = np.zeros(flat.shape[0], np.int32)
        out = np.zeros_like(flat)
        for i, m in enumerate(flat):
            try:
                out[i] = np.linalg.cholesky(m, upper=upper)
            except np.linalg.LinAlgError:
                for k in range(1, m.shape[-1] + 1):
                    try:
                        np.linalg.cholesky(m[:k, :k], upper=upper)
                    except np.linalg.LinAlgError:
                        info[i] = k
                        break
        info = info.reshape(a.shape[:-2])
        L = wrap(out.reshape(a.shape))
    return _CHOLESKY_EX((L, make(info)))


# -- qr -----------------------------------------------------------------------------------------


def _copyltu(xp, m, tril, eye):
    """The symmetric matrix whose lower triangle is that of ``m``."""
    low = m * tril
    return low + _mT(xp, low) - m * eye


class LinalgQrBackward0(_MultiOut):
    """For ``m >= n``: ``gA = (gQ + Q copyltu(M)) R^-T`` with ``M = R gR^T - gQ^T Q``; for
    ``m < n`` the square formula on the first ``m`` columns and ``Q gV`` on the rest."""

    _packs = ("=Q", "=R")

    def backward(self, xp, gq, gr):
        if self._mode == "r":
            raise RuntimeError(
                "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                "through linalg.qr."
            )
        shape, dt = self._meta[0]
        m, n = shape[-2:]
        if self._mode == "complete" and m > n:
            raise RuntimeError(
                "The QR decomposition is not differentiable when mode='complete' and "
                "nrows > ncols."
            )
        q, r = self.outputs(xp)
        if m >= n:
            return self._square(xp, q, r, gq, gr, dt)
        # A = Q [U | V]: X = Q U is square, Y = Q V; n x m and n x (n - m) column selectors.
        left = _const("eye_cols", n, dt, m)
        right = np.ascontiguousarray(np.eye(n, dtype=dt)[:, m:])
        u = xp.matmul(r, left)
        v = xp.matmul(r, right)
        gu = None if gr is None else xp.matmul(gr, left)
        gv = None if gr is None else xp.matmul(gr, right)
        gq2 = gq
        if gv is not None:
            y = xp.matmul(q, v)
            extra = xp.matmul(y, _mT(xp, gv))
            gq2 = extra if gq2 is None else gq2 + extra
        gx = self._square(xp, q, u, gq2, gu, dt)
        ga = xp.matmul(gx, np.ascontiguousarray(left.T))
        if gv is not None:
            ga = ga + xp.matmul(xp.matmul(q, gv), np.ascontiguousarray(right.T))
        return ga

    def _square(self, xp, q, r, gq, gr, dt):
        k = r.shape[-1]
        tril, eye = _const("tril", k, dt), _const("eye", k, dt)
        mm = None
        if gr is not None:
            mm = xp.matmul(r, _mT(xp, gr))
        if gq is not None:
            t = xp.matmul(_mT(xp, gq), q)
            mm = -t if mm is None else mm - t
        b = xp.matmul(q, _copyltu(xp, mm, tril, eye))
        if gq is not None:
            b = gq + b
        return _mT(xp, xp.linalg_solve_mat(r, _mT(xp, b)))


def _qr(A, mode: str, cls):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    a = _matrix_arg(A, "linalg.qr", square=False)
    m, n = a.shape[-2:]
    k = min(m, n)
    if a.size == 0:
        qcols = m if mode == "complete" else k
        q = np.zeros(a.shape[:-2] + (m, qcols), a.dtype)
        q[..., np.arange(min(m, qcols)), np.arange(min(m, qcols))] = 1
        r = np.zeros(a.shape[:-2] + ((m if mode == "complete" else k), n), a.dtype)
    else:
        q, r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        q = np.zeros((0,), a.dtype)
    return cls(_attach(LinalgQrBackward0, A, [q, r], (0, 1), _mode=mode))


@fp32
def linalg_qr(A: Tensor, mode: str = "reduced"):  # noqa: N803
    """``(Q, R)`` with ``A = Q R``, ``Q`` orthonormal columns and ``R`` upper triangular.

    >>> import retrograd as torch
    >>> Q, R = torch.linalg.qr(torch.tensor([[3., 0.], [4., 5.]]))
    >>> R
    tensor([[-5., -4.],
            [ 0.,  3.]])
    """
    return _qr(A, mode, _QR)


@fp32
def qr(input: Tensor, some: bool = True):  # noqa: A002
    """``torch.qr``: ``linalg.qr`` with ``some=False`` for the complete mode.

    >>> import retrograd as torch
    >>> torch.qr(torch.eye(2)).R
    tensor([[1., 0.],
            [0., 1.]])
    """
    return _qr(input, "reduced" if some else "complete", _QR_OLD)


# -- eigh ---------------------------------------------------------------------------------------


class LinalgEighBackward0(_MultiOut):
    """``gA = V (diag(gL) + skew(V^T gV) / E) V^T``, ``E_ij = L_j - L_i`` off the diagonal."""

    _packs = ("=eigenvalues", "=eigenvectors")

    def backward(self, xp, gl, gv):
        lam, v = self.outputs(xp)
        shape, dt = self._meta[0]
        eye = _const("eye", shape[-1], dt)
        inner = None
        if gv is not None:
            vgv = xp.matmul(_mT(xp, v), gv)
            skew = (vgv - _mT(xp, vgv)) * 0.5
            gap = _col(xp, lam) - _row(xp, lam) + eye
            inner = skew / gap
        if gl is not None:
            d = _diag_embed(xp, gl, eye)
            inner = d if inner is None else inner + d
        if inner is None:
            return None
        return xp.matmul(xp.matmul(v, inner), _mT(xp, v))


def _eigh(A, UPLO, visible):  # noqa: N803
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    fname = "linalg.eigh" if len(visible) == 2 else "linalg.eigvalsh"
    a = _matrix_arg(A, fname)
    if a.size == 0:
        lam = np.zeros(a.shape[:-1], a.dtype)
        v = np.zeros(a.shape, a.dtype)
    else:
        try:
            lam, v = np.linalg.eigh(a, UPLO=UPLO)
        except np.linalg.LinAlgError:
            raise LinAlgError(f"{fname}: The algorithm failed to converge because the input "
                              "matrix is ill-conditioned or has too many repeated eigenvalues."
                              ) from None
    return _attach(LinalgEighBackward0, A, [lam, v], visible)


@fp32
def linalg_eigh(A: Tensor, UPLO: str = "L"):  # noqa: N803
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix, read from the ``UPLO``
    triangle.

    >>> import retrograd as torch
    >>> torch.linalg.eigh(torch.tensor([[2., 0.], [0., 1.]])).eigenvalues
    tensor([1., 2.])
    """
    return _EIGH(_eigh(A, UPLO, (0, 1)))


@fp32
def linalg_eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    """The eigenvalues of a symmetric matrix, ascending.

    >>> import retrograd as torch
    >>> torch.linalg.eigvalsh(torch.tensor([[2., 1.], [1., 2.]]))
    tensor([1., 3.])
    """
    return _eigh(A, UPLO, (0,))[0]


# -- svd ----------------------------------------------------------------------------------------


class LinalgSvdBackward0(_MultiOut):
    """``gA = U [(skew(U^T gU) / E) S + S (skew(V^T gV) / E) + diag(gS)] V^T`` with
    ``E_jk = S_k^2 - S_j^2``, plus the terms for the columns outside ``U`` (``m > k``) and the rows
    outside ``V^T`` (``n > k``). With ``full_matrices`` only the first ``k`` vectors count."""

    _packs = ("=S", "=U", "=Vh")

    def backward(self, xp, gu, gs, gvh):
        u, s, vh = self.outputs(xp)
        shape, dt = self._meta[0]
        m, n = shape[-2:]
        k = min(m, n)
        if self._full:
            if m > k:
                cu = _const("eye_cols", m, dt, k)
                u = xp.matmul(u, cu)
                gu = None if gu is None else xp.matmul(gu, cu)
            if n > k:
                cvt = _const("eye_cols", k, dt, n)
                vh = xp.matmul(cvt, vh)
                gvh = None if gvh is None else xp.matmul(cvt, gvh)
        eye = _const("eye", k, dt)
        if gu is None and gvh is None:
            if gs is None:
                return None
            return xp.matmul(u * _col(xp, gs), vh)
        sc, sr = _col(xp, s), _row(xp, s)
        gap = sc * sc - sr * sr + eye
        inner = None
        if gu is not None:
            ugu = xp.matmul(_mT(xp, u), gu)
            inner = (ugu - _mT(xp, ugu)) / gap * sc
        if gvh is not None:
            vgv = xp.matmul(vh, _mT(xp, gvh))
            t = sr * ((vgv - _mT(xp, vgv)) / gap)
            inner = t if inner is None else inner + t
        if gs is not None:
            inner = inner + _diag_embed(xp, gs, eye)
        ga = xp.matmul(xp.matmul(u, inner), vh)
        if m > k and gu is not None:
            proj = gu - xp.matmul(u, xp.matmul(_mT(xp, u), gu))
            ga = ga + xp.matmul(proj / sc, vh)
        if n > k and gvh is not None:
            proj = gvh - xp.matmul(xp.matmul(gvh, _mT(xp, vh)), vh)
            ga = ga + xp.matmul(u, proj / sr)
        return ga


def _svd_arrays(a, full_matrices, fname):
    m, n = a.shape[-2:]
    k = min(m, n)
    if a.size == 0:
        ucols, vrows = (m, n) if full_matrices else (k, k)
        u = np.zeros(a.shape[:-2] + (m, ucols), a.dtype)
        vh = np.zeros(a.shape[:-2] + (vrows, n), a.dtype)
        if full_matrices:
            u[..., np.arange(m), np.arange(m)] = 1
            vh[..., np.arange(n), np.arange(n)] = 1
        return u, np.zeros(a.shape[:-2] + (k,), a.dtype), vh
    try:
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
        return _colmajor(u), s, _colmajor(vh)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"{fname}: The algorithm failed to converge because the input matrix "
                          "is ill-conditioned or has too many repeated singular values.") from None


def _svd(A, full_matrices, visible, fname="linalg.svd"):  # noqa: N803
    a = _matrix_arg(A, fname, square=False)
    u, s, vh = _svd_arrays(a, full_matrices, fname)
    return _attach(LinalgSvdBackward0, A, [u, s, vh], visible, _full=full_matrices)


@fp32
def linalg_svd(A: Tensor, full_matrices: bool = True, *, driver=None):  # noqa: N803
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, singular values descending.

    >>> import retrograd as torch
    >>> torch.linalg.svd(torch.tensor([[3., 0.], [0., -4.]])).S
    tensor([4., 3.])
    """
    return _SVD(_svd(A, full_matrices, (0, 1, 2)))


@fp32
def linalg_svdvals(A: Tensor, *, driver=None) -> Tensor:  # noqa: N803
    """The singular values, descending.

    >>> import retrograd as torch
    >>> torch.linalg.svdvals(torch.tensor([[0., 2.], [1., 0.]]))
    tensor([2., 1.])
    """
    return _svd(A, False, (1,), "linalg.svdvals")[0]


@fp32
def svd(input: Tensor, some: bool = True, compute_uv: bool = True):  # noqa: A002
    """``torch.svd``: ``(U, S, V)`` with ``A = U diag(S) V^T`` (``V``, not ``Vh``).

    >>> import retrograd as torch
    >>> torch.svd(torch.tensor([[2., 0.], [0., 1.]])).S
    tensor([2., 1.])
    """
    if not compute_uv:
        s = _svd(input, False, (1,), "linalg.svdvals")[0]
        m, n = input._data.shape[-2:]
        batch = input._data.shape[:-2]
        dt = input._data.dtype
        return _SVD_OLD((wrap(np.zeros(batch + (m, m), dt)), s,
                         wrap(np.zeros(batch + (n, n), dt))))
    u, s, vh = _svd(input, not some, (0, 1, 2))
    return _SVD_OLD((u, s, mT(vh)))


# -- pinv ---------------------------------------------------------------------------------------


class LinalgPinvBackward0(Node):
    """The derivative of the pseudoinverse at constant rank:
    ``gA = -P^T g P^T + (I - A P) g^T P P^T + P^T P g^T (I - P A)``."""

    def backward(self, xp, g):
        (a,) = self.saved(xp.TENSORS)
        p = self.saved_output(xp.TENSORS)
        pt, gt = _mT(xp, p), _mT(xp, g)
        ga = -xp.matmul(xp.matmul(pt, g), pt)
        # (I - A P) g^T P P^T, with the products ordered to keep the matrices small.
        gtp = xp.matmul(gt, xp.matmul(p, pt))                      # m x n
        ga = ga + gtp - xp.matmul(a, xp.matmul(p, gtp))
        ptp = xp.matmul(pt, p)                                     # m x m
        ptpgt = xp.matmul(ptp, gt)                                 # m x n
        ga = ga + ptpgt - xp.matmul(xp.matmul(ptpgt, p), a)
        return ga


def _tolerances(s: np.ndarray, m: int, n: int, atol, rtol, dtype):
    """PyTorch's cutoff: ``max(atol, rtol * s_max)``; ``rtol`` defaults to ``eps * max(m, n)``
    unless only ``atol`` is given."""
    atol_v = 0.0 if atol is None else atol
    if rtol is None:
        rtol_v = np.finfo(dtype).eps * max(m, n) if atol is None or (
            not isinstance(atol, Tensor) and atol <= 0) else 0.0
    else:
        rtol_v = rtol
    atol_v = atol_v._data if isinstance(atol_v, Tensor) else atol_v
    rtol_v = rtol_v._data if isinstance(rtol_v, Tensor) else rtol_v
    smax = s[..., :1] if s.shape[-1] else np.zeros(s.shape[:-1] + (1,), s.dtype)
    return np.maximum(np.asarray(atol_v)[..., None] if np.ndim(atol_v) else atol_v,
                      (np.asarray(rtol_v)[..., None] if np.ndim(rtol_v) else rtol_v) * smax)


def linalg_pinv(A: Tensor, rcond=None, hermitian: bool = False, *, atol=None,  # noqa: N803
                rtol=None) -> Tensor:
    """The Moore-Penrose pseudoinverse, from the SVD with singular values at or below
    ``max(atol, rtol * s_max)`` dropped.

    >>> import retrograd as torch
    >>> torch.linalg.pinv(torch.tensor([[2., 0.], [0., 0.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.0000]])
    """
    if not isinstance(A, Tensor) or A._data.ndim < 2 or A._data.dtype.char not in FLOAT_CHARS:
        a = A._data if isinstance(A, Tensor) else np.asarray(A)
        d = FROM_NP.get(a.dtype)
        raise RuntimeError(
            f"linalg.pinv({d.scalar_name if d else a.dtype.name}{{{list(a.shape)}}}): "
            "expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble "
            "types"
        )
    if rcond is not None:
        rtol = rcond
    a = A._data
    m, n = a.shape[-2:]
    u, s, vh = _svd_arrays(a, False, "linalg.pinv")
    tol = _tolerances(s, m, n, atol, rtol, a.dtype)
    with np.errstate(divide="ignore"):
        s_inv = np.where(s > tol, 1 / np.where(s > tol, s, 1), 0).astype(a.dtype)
    out = np.matmul(np.swapaxes(vh, -1, -2) * s_inv[..., None, :], np.swapaxes(u, -1, -2))
    return apply(LinalgPinvBackward0, out, A, save=(A,), save_out=True)


@fp32
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:  # noqa: A002
    """``torch.pinverse``: ``linalg.pinv`` with ``rcond`` as the relative tolerance.

    >>> import retrograd as torch
    >>> torch.tensor([[4.]]).pinverse()
    tensor([[0.2500]])
    """
    return linalg_pinv(input, rtol=rcond)


@fp32
def linalg_matrix_rank(A: Tensor, tol=None, hermitian: bool = False, *, atol=None,  # noqa: N803
                       rtol=None) -> Tensor:
    """The number of singular values above ``max(atol, rtol * s_max)``.

    >>> import retrograd as torch
    >>> torch.linalg.matrix_rank(torch.tensor([[1., 2.], [2., 4.]]))
    tensor(1)
    """
    a = _matrix_arg(A, "linalg.matrix_rank", square=False)
    if tol is not None:
        atol, rtol = tol, 0.0
    m, n = a.shape[-2:]
    s = np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(
        a.shape[:-2] + (min(m, n),), a.dtype)
    tol_v = _tolerances(s, m, n, atol, rtol, a.dtype)
    return wrap(np.sum(s > tol_v, axis=-1).astype(np.int64))


# -- matrix_power -------------------------------------------------------------------------------


def linalg_matrix_power(A: Tensor, n: int) -> Tensor:  # noqa: N803
    """``A`` to the integer power ``n`` by repeated squaring; negative ``n`` inverts first.

    >>> import retrograd as torch
    >>> torch.linalg.matrix_power(torch.tensor([[1., 1.], [0., 1.]]), 3)
    tensor([[1., 3.],
            [0., 1.]])
    """
    if not isinstance(A, Tensor):
        raise TypeError("matrix_power(): argument 'input' must be Tensor")
    a = A._data
    if a.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {a.shape[-2]} by {a.shape[-1]} matrices")
    if n == 0:
        # PyTorch copies the identity into a clone of A: no gradient reaches A.
        out = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape).copy()
        return apply(CopyBackwards, out, clone(A), None)
    if n < 0:
        if a.dtype.char not in FLOAT_CHARS:
            raise RuntimeError("linalg.inv: Expected a floating point or complex tensor as "
                               f"input. Got {FROM_NP[a.dtype].scalar_name}")
        A = linalg_inv(A)
        n = -n
        if n == 1:
            return A
    if n == 1:
        return clone(A)
    # ``@`` is linalg's matmul (this family sits below reduction, which imports it; linalg
    # imports reduction, so no import of linalg here).
    if n == 2:
        return A @ A
    if n == 3:
        return (A @ A) @ A
    result = z = None
    while n > 0:
        z = A if z is None else z @ z
        if n & 1:
            result = z if result is None else result @ z
        n >>= 1
    return result


def matrix_power(input: Tensor, n: int) -> Tensor:  # noqa: A002
    """``torch.matrix_power``: the same as ``linalg.matrix_power``.

    >>> import retrograd as torch
    >>> torch.eye(2).matrix_power(5)
    tensor([[1., 0.],
            [0., 1.]])
    """
    return linalg_matrix_power(input, n)


_array.register(linalg_inv=np.linalg.inv, linalg_solve_mat=_solve_mat_array)

__all__ = ["det", "logdet", "slogdet", "inverse", "svd", "qr", "pinverse", "matrix_power"]
# The functions PyTorch keeps under torch.linalg, by their names there.
LINALG = {
    "inv": linalg_inv, "inv_ex": linalg_inv_ex, "det": linalg_det, "slogdet": linalg_slogdet,
    "solve": linalg_solve, "cholesky": linalg_cholesky, "cholesky_ex": linalg_cholesky_ex,
    "qr": linalg_qr, "eigh": linalg_eigh, "eigvalsh": linalg_eigvalsh, "svd": linalg_svd,
    "svdvals": linalg_svdvals, "pinv": linalg_pinv, "matrix_power": linalg_matrix_power,
    "matrix_rank": linalg_matrix_rank,
}
XP = ["linalg_inv", "linalg_solve_mat"]
METHODS = {name: globals()[name] for name in __all__}
INPLACE: dict = {}


