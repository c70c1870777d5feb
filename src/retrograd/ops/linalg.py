"""Matrix products: matmul (``@``) in its shape cases, mm, mv, dot, vdot, bmm, the fused
``add*`` products (addmm, addmv, addr, addbmm, baddbmm), inner, outer, kron, tensordot, einsum,
trace and cross.

The primitives dot, vdot, mv, mm and bmm share one formula: 1-D operands are lifted to
matrices (a row on the left, a column on the right), then ``ga = g @ b^T`` and ``gb = a^T @ g``.
``matmul``, ``tensordot``, ``inner``, ``outer`` and ``kron`` compose them with views exactly as
PyTorch does, so their graphs match; so does ``einsum`` (diagonals, unsqueezes and permutes, then
``bmm`` a pair at a time, as PyTorch's composite).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._dtypes import F32, FROM_NP, REDUCED, WIDE_CHARS, promote_types
from .._tensor import Tensor
from ..autograd.graph import Node
from . import _array
from . import shape as _shape
from ._apply import apply, apply_binary, needs_grad, save_plan
from ._autocast import fp32, lower_precision
from ._base import not_implemented
from ._core import arg_error, as_tensor_arg, broadcast_error, tensor_arg, wrap_dim
from .arithmetic import mul
from .reduction import sum as _sum


def _matmul_arrays(a, b):
    try:
        return _array.matmul(a, b)
    except ValueError:
        raise RuntimeError(_shape_error(a, b)) from None


def _mv(a, b):
    """A matrix times a vector: ``ndarray.dot``, the same BLAS product as ``np.matmul`` for
    float32/float64 (bitwise) at half its fixed cost; other dtypes take ``matmul``'s path."""
    if a.dtype.char in "fd" and b.dtype is a.dtype:
        return a.dot(b)
    return _array.matmul(a, b)


def _mv_arrays(a, b):
    try:
        return _mv(a, b)
    except ValueError:
        raise RuntimeError(_shape_error(a, b)) from None


def _mat2_grad(xp, m1, g, transposed: bool):
    """``m1^T @ g``, the gradient of ``m2`` in ``m1 @ m2``. When ``m2`` is a transposed view
    (``linear``'s ``w.t()``: ``_mat2_t``) it is computed in that layout, as PyTorch's
    ``mm_mat2_backward`` does, so that after the transpose node the weight's gradient is
    contiguous."""
    if transposed and not xp.TENSORS:
        return xp.transpose(xp.matmul(xp.transpose(g, -1, -2), m1), -1, -2)
    return xp.matmul(xp.transpose(m1, -1, -2), g)


def _vec_grads(a, b, g, a_vec: bool) -> tuple:
    """The gradients of ``mv`` (``a`` a matrix) or ``dot``/``vdot`` (``a`` a vector; ``g`` 0-d)
    on arrays: the same products as the matrix formula, written on the vectors directly (no
    lifting to matrices and back, which costs more than the product on small operands)."""
    ga = gb = None
    if a_vec:  # dot: g * b and a * g (matmul with an inner dim of 1, as the matrix formula)
        g2 = g.reshape(1, 1)
        if b is not None:
            ga = _array.matmul(g2, b[None])[0]
        if a is not None:
            gb = _array.matmul(a[:, None], g2)[:, 0]
        return ga, gb
    if b is not None:  # the outer product g b^T
        ga = _array.matmul(g[:, None], b[None])
    if a is not None:  # a^T g: a matrix-vector product
        gb = _mv(a.T, g)
    return ga, gb


class MmBackward0(Node):
    """Also the formula of every other matmul case (see the module docstring). ``_vecs`` says
    which operands are vectors; ``_mat2_t`` that ``b`` is a transposed view (``linear``)."""

    forward = staticmethod(_matmul_arrays)
    _packs = (1, 0)  # PyTorch saves mat2, then self (autograd/saved_hooks.py)
    saves = ((1,), (0,))  # d/da reads b, d/db reads a
    _vecs = (False, False)
    _mat2_t = False

    def backward(self, xp, g):
        a, b = self.saved(xp.TENSORS)
        a_vec, b_vec = self._vecs
        if b_vec and not xp.TENSORS:
            return _vec_grads(a, b, g, a_vec)
        if b_vec:
            g = xp.unsqueeze(g, -1)
        if a_vec:
            g = xp.unsqueeze(g, -2)
        ga = gb = None
        if b is not None:
            b2 = xp.unsqueeze(b, -1) if b_vec else b
            ga = xp.matmul(g, xp.transpose(b2, -1, -2))
            if a_vec:
                ga = xp.squeeze(ga, -2)
        if a is not None:
            a2 = xp.unsqueeze(a, -2) if a_vec else a
            gb = _mat2_grad(xp, a2, g, self._mat2_t)
            if b_vec:
                gb = xp.squeeze(gb, -1)
        return ga, gb

    def jvp(self, xp, ta, tb):
        # Bilinear: (a b)' = a' b + a b'. Each operand is saved exactly when the other has a
        # tangent (the same plan as for gradients); matmul handles the vector cases.
        a, b = self.saved(xp.TENSORS)
        r = None
        if ta is not None:
            r = xp.matmul(ta, b)
        if tb is not None:
            s = _mv(a, tb) if self._vecs == (False, True) and not xp.TENSORS else \
                xp.matmul(a, tb)
            r = s if r is None else r + s
        return r


class MvBackward0(MmBackward0):
    _vecs = (False, True)
    _packs = (0, 1)


class DotBackward0(MmBackward0):
    _vecs = (True, True)
    _packs = (0, 1)


class BmmBackward0(MmBackward0):
    pass


class VdotBackward0(MmBackward0):
    _vecs = (True, True)


for _P in (MmBackward0, MvBackward0, DotBackward0, BmmBackward0, VdotBackward0):
    save_plan(_P)


# PyTorch's products require one dtype (no promotion); each kernel words its error its own way.
_SAME_DTYPE = {
    "MmBackward0": lambda a, b: "expected m1 and m2 to have the same dtype, but got: "
                                f"{a.c_name} != {b.c_name}",
    "BmmBackward0": lambda a, b: f"expected scalar type {a.scalar_name} but found "
                                 f"{b.scalar_name}",
    "DotBackward0": lambda a, b: "dot : expected both vectors to have same dtype, but found "
                                 f"{a.scalar_name} and {b.scalar_name}",
    "MvBackward0": lambda a, b: "addmv input tensors must have the same dtype, but got "
                                f"{b.scalar_name}, {a.scalar_name}, and {b.scalar_name}",
}


def _product(P, a: Tensor, b: Tensor) -> Tensor:
    """One primitive product (dot, mv, mm or bmm) of two tensors of one dtype, each saved only
    for the other's gradient."""
    da, db = a._data.dtype, b._data.dtype
    if da is not db and da != db and P._name in _SAME_DTYPE:
        sa, sb = a._data.shape, b._data.shape
        # PyTorch checks the shapes first: a shape mismatch keeps its own error (below);
        # except dot, which checks the dtypes first.
        if P is DotBackward0 or (sa and sb and sa[-1] == sb[-2 if len(sb) > 1 else 0]):
            raise RuntimeError(_SAME_DTYPE[P._name](FROM_NP[da], FROM_NP[db]))
    return apply_binary(P, _mv_arrays if P is MvBackward0 else _matmul_arrays, a, b)


@lower_precision
def matmul(input, other) -> Tensor:  # noqa: A002
    """Matrix product with PyTorch's rules for 1-D and batched operands.

    Like PyTorch, it is built from dot, mv, mm and bmm with views around them, so gradients and
    graphs (``UnsafeViewBackward0`` over ``BmmBackward0``, ...) come out the same.

    >>> import retrograd as torch
    >>> torch.tensor([[1., 2.], [3., 4.]]) @ torch.tensor([1., 1.])
    tensor([3., 7.])
    """
    a = input if isinstance(input, Tensor) else tensor_arg("matmul", "input", 1, input)
    b = other if isinstance(other, Tensor) else tensor_arg("matmul", "other", 2, other)
    da, db = a._data.ndim, b._data.ndim
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    if da == 1 and db == 1:
        return _product(DotBackward0, a, b)
    if da == 2 and db == 1:
        return _product(MvBackward0, a, b)
    if da == 1 and db == 2:
        return _shape.squeeze_dims_(_product(MmBackward0, _shape.unsqueeze(a, 0), b), 0)
    if da == 2 and db == 2:
        return _product(MmBackward0, a, b)
    if _should_fold(a, b):
        if da >= 3:
            # Fold the batch dims of ``a`` into its rows: one mm (or mv) and a view back.
            rows = _shape.reshape(a, (-1, a._data.shape[-1]))
            if db == 1:
                return _shape.unsafe_view(_product(MvBackward0, rows, b), a._data.shape[:-1])
            return _shape.unsafe_view(_product(MmBackward0, rows, b),
                                      a._data.shape[:-1] + (b._data.shape[-1],))
        # The same fold on the transposed problem: (b^T @ a^T)^T.
        bt = _shape.mT(b)
        rows = _shape.reshape(bt, (-1, bt._data.shape[-1]))
        if da == 1:
            return _shape.unsafe_view(_product(MvBackward0, rows, a), bt._data.shape[:-1])
        out = _shape.unsafe_view(_product(MmBackward0, rows, _shape.t(a)),
                                 bt._data.shape[:-1] + (a._data.shape[0],))
        return _shape.contiguous(_shape.mT(out))
    # Broadcast the batch dims, flatten them, one bmm, view back (a vector as a 1-row or
    # 1-column matrix).
    sa, sb = a._data.shape, b._data.shape
    n, m = (sa[-2] if da > 1 else 1), sa[-1]
    m2, p = (sb[-2], sb[-1]) if db > 1 else (sb[0], 1)
    batch_a, batch_b = sa[:-2], sb[:-2]
    e = broadcast_error(batch_a, batch_b)
    if e is not None:
        raise e
    batch = tuple(np.broadcast_shapes(batch_a, batch_b))
    size = int(np.prod(batch)) if batch else 1
    a3 = _shape.reshape(_shape.expand(a, batch + (n, m)), (size, n, m))
    if db == 1:
        b3 = _shape.unsqueeze(_shape.reshape(_shape.expand(b, batch + (m2,)), (size, m2)), 2)
    else:
        b3 = _shape.reshape(_shape.expand(b, batch + (m2, p)), (size, m2, p))
    out_shape = batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ())
    return _shape.unsafe_view(_product(BmmBackward0, a3, b3), out_shape)


def _should_fold(a, b) -> bool:
    """PyTorch's ``should_fold``: whether ``matmul`` of a batched tensor with a vector or a matrix
    folds the batch into one mm/mv (when that costs no copy, or when the smaller operand needs a
    gradient, which a bmm would make a batch-sized tensor for) rather than broadcasting to bmm."""
    da, db = a._data.ndim, b._data.ndim
    big, small = (a, b) if da >= db else (b, a)
    if not (big._data.ndim >= 3 and small._data.ndim <= 2):
        return False
    if small.requires_grad:
        return True
    if da == 2:  # folding b^T would need a copy of the result
        return False
    x = big._data
    if x.size == 0:
        return True
    shape, strides = list(x.shape), [st // x.itemsize for st in x.strides]
    if big is b:  # the fold reads b^T
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _shape_error(a, b) -> str:
    if a.ndim == 2 and b.ndim == 1:
        return (f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), "
                f"vec ({b.shape[0]})")
    if a.ndim == 1 and b.ndim == 1:
        return (f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
                f"[{b.shape[0]}] to have the same number of elements, but got {a.shape[0]} and "
                f"{b.shape[0]} elements respectively")
    if a.ndim == 2 and b.ndim == 2:
        return (f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                f"{b.shape[0]}x{b.shape[1]})")
    return (f"Expected size for first two dimensions of batch2 tensor to be: "
            f"{list(a.shape[:-2]) + [a.shape[-1]]} but got: {list(b.shape[:-2]) + [b.shape[-2]]}."
            if a.ndim == b.ndim == 3 else
            f"matmul: shapes {list(a.shape)} and {list(b.shape)} cannot be multiplied")


@lower_precision
def mm(input, mat2) -> Tensor:  # noqa: A002
    """Product of two matrices.

    >>> import retrograd as torch
    >>> torch.mm(torch.eye(2), torch.ones(2, 3)).shape
    retrograd.Size([2, 3])
    """
    if not isinstance(input, Tensor) or not isinstance(mat2, Tensor):
        raise arg_error("mm", *(("input", 1, input) if not isinstance(input, Tensor)
                                else ("mat2", 2, mat2)))
    if input.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    return _product(MmBackward0, input, mat2)


def mv(input, vec) -> Tensor:  # noqa: A002
    """Matrix times vector.

    >>> import retrograd as torch
    >>> torch.mv(torch.eye(2), torch.tensor([1., 2.]))
    tensor([1., 2.])
    """
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {input.dim()}, {vec.dim()}"
        )
    return _product(MvBackward0, input, vec)


def dot(input, other) -> Tensor:  # noqa: A002
    """The inner product of two 1-D tensors.

    >>> import retrograd as torch
    >>> torch.dot(torch.tensor([1., 2.]), torch.tensor([3., 4.]))
    tensor(11.)
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("dot", input._data.dtype)  # uint16/32/64
    return _dot(DotBackward0, input, other)


def vdot(input, other) -> Tensor:  # noqa: A002
    """``dot`` with the first argument conjugated; the same for real tensors.

    >>> import retrograd as torch
    >>> torch.vdot(torch.tensor([1., 2.]), torch.tensor([3., 4.]))
    tensor(11.)
    """
    return _dot(VdotBackward0, input, other)


def _dot(cls, input, other) -> Tensor:  # noqa: A002
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors"
        )
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{FROM_NP[input._data.dtype].scalar_name} and {FROM_NP[other._data.dtype].scalar_name}"
        )
    return _product(cls, input, other)


@lower_precision
def bmm(input, mat2) -> Tensor:  # noqa: A002
    """Batched matrix product of two 3-D tensors.

    >>> import retrograd as torch
    >>> torch.bmm(torch.ones(2, 1, 3), torch.ones(2, 3, 1)).flatten()
    tensor([3., 3.])
    """
    if input.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    return _product(BmmBackward0, input, mat2)


# -- the fused products: beta * input + alpha * (product) ---------------------------------------

def _scaled(g, factor):
    return g if factor == 1 else g * factor


class _AddProductBackward(Node):
    """``beta * input + alpha * product(m1, m2)``; ``_kind`` says which product. ``linear``
    records ``AddmmBackward0`` for ``bias + x @ w.t()`` with ``_bias_vec`` (a bias row: its
    gradient is a column sum)."""

    _beta = 1
    _alpha = 1
    _bias_vec = False
    _mat2_t = False

    def backward(self, xp, g):
        m1, m2 = self.saved(xp.TENSORS)
        beta, alpha, kind = self._beta, self._alpha, self._kind
        gi = g1 = g2 = None
        if self._needs(0):
            gi = g * 0 if beta == 0 else _scaled(g, beta)  # PyTorch multiplies: -0.0 stays
            if self._bias_vec:
                gi = xp.norm_cols_sum(gi)
        g = _scaled(g, alpha)
        if kind == "mv":            # m1: matrix, m2: vector
            if m2 is not None:
                g1 = xp.unsqueeze(g, -1) * xp.unsqueeze(m2, -2)
            if m1 is not None:
                g2 = xp.matmul(xp.transpose(m1, -1, -2), g)
        elif kind == "r":           # m1, m2: vectors
            if m2 is not None:
                g1 = xp.matmul(g, m2)
            if m1 is not None:
                g2 = xp.matmul(xp.transpose(g, -1, -2), m1)
        else:                       # mm, bmm, and addbmm (g broadcasts over the batch)
            if m2 is not None:
                g1 = xp.matmul(g, xp.transpose(m2, -1, -2))
            if m1 is not None:
                g2 = _mat2_grad(xp, m1, g, self._mat2_t)
        return gi, g1, g2


class AddmmBackward0(_AddProductBackward):
    _kind = "mm"


class AddmvBackward0(_AddProductBackward):
    _kind = "mv"


class AddrBackward0(_AddProductBackward):
    _kind = "r"


class BaddbmmBackward0(_AddProductBackward):
    _kind = "bmm"


class AddbmmBackward0(_AddProductBackward):
    _kind = "addbmm"


def _add_product(cls, input, m1, m2, beta, alpha, prod, promote=False) -> Tensor:  # noqa: A002
    """Forward of the fused products: ``prod`` (the arrays' product) scaled and added;
    ``promote``: mixed dtypes compute in their common dtype (``addr``, a pointwise kernel in
    PyTorch) instead of raising as the matrix products do."""
    x = input if isinstance(input, Tensor) else as_tensor_arg(input)
    xa, a1, a2 = x._data, m1._data, m2._data
    dts = (xa.dtype, a1.dtype, a2.dtype)
    if promote and not dts[0] == dts[1] == dts[2]:
        rt = promote_types(promote_types(FROM_NP[dts[0]], FROM_NP[dts[1]]), FROM_NP[dts[2]])
        xa, a1, a2 = (a.astype(rt.np) for a in (xa, a1, a2))
        dts = (rt.np,) * 3
    if dts[1] != dts[2]:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{FROM_NP[dts[1]].scalar_name} and {FROM_NP[dts[2]].scalar_name}")
    if dts[0] != dts[1]:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{FROM_NP[dts[0]].scalar_name} and {FROM_NP[dts[1]].scalar_name}")
    red = dts[1] in REDUCED  # float16/bfloat16: all in float32, rounded once (PyTorch's gemm)
    p = prod(a1.astype(F32), a2.astype(F32)) if red else prod(a1, a2)
    shape = p.shape
    xs = xa.shape
    if xs != shape:
        try:
            ok = np.broadcast_shapes(xs, shape) == shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(_expand_error(xs, shape))
    xd = xa.astype(F32) if red else xa
    out = p if alpha == 1 else p * (F32.type(alpha) if red else alpha)
    if beta != 0:
        out = out + (xd if beta == 1 else xd * (F32.type(beta) if red else beta))
    elif xs != shape:
        out = np.array(out, copy=True)
    out = np.asarray(out).astype(dts[1], copy=False)
    # Each factor is kept only for the other's gradient, as PyTorch keeps them.
    return apply(cls, out, x, m1, m2,
                 save=(m1 if needs_grad(m2) else None, m2 if needs_grad(m1) else None),
                 _beta=beta, _alpha=alpha)


def _expand_error(src, target) -> str:
    lead = len(target) - len(src)
    for i in range(len(src) - 1, -1, -1):
        if src[i] != 1 and src[i] != target[lead + i]:
            return (f"The expanded size of the tensor ({target[lead + i]}) must match the "
                    f"existing size ({src[i]}) at non-singleton dimension {lead + i}.  Target "
                    f"sizes: {list(target)}.  Tensor sizes: {list(src)}")
    return f"expand: the shape {list(src)} does not broadcast to {list(target)}"


def _check_matrix(t, name) -> None:
    if t.dim() != 2:
        raise RuntimeError(f"{name} must be a matrix, got {t.dim()}-D tensor")


def _mm_arrays(a, b):
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(_shape_error(a, b))
    return _array.matmul(a, b)


@lower_precision
def addmm(input, mat1, mat2, *, beta=1, alpha=1) -> Tensor:  # noqa: A002
    """``beta * input + alpha * (mat1 @ mat2)``; ``input`` broadcasts to the product's shape.

    >>> import retrograd as torch
    >>> torch.addmm(torch.ones(2), torch.eye(2), torch.eye(2), alpha=2)
    tensor([[3., 1.],
            [1., 3.]])
    """
    _check_matrix(mat1, "mat1")
    _check_matrix(mat2, "mat2")
    return _add_product(AddmmBackward0, input, mat1, mat2, beta, alpha, _mm_arrays)


def addmv(input, mat, vec, *, beta=1, alpha=1) -> Tensor:  # noqa: A002
    """``beta * input + alpha * (mat @ vec)``.

    >>> import retrograd as torch
    >>> torch.addmv(torch.ones(2), torch.eye(2), torch.tensor([1., 2.]))
    tensor([2., 3.])
    """
    if mat.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {input.dim()}, {mat.dim()}, {vec.dim()}"
        )

    def prod(a, b):
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x"
                               f"{a.shape[1]}), vec ({b.shape[0]})")
        return _array.matmul(a, b)

    return _add_product(AddmvBackward0, input, mat, vec, beta, alpha, prod)


def addr(input, vec1, vec2, *, beta=1, alpha=1) -> Tensor:  # noqa: A002
    """``beta * input + alpha * outer(vec1, vec2)``.

    >>> import retrograd as torch
    >>> torch.addr(torch.zeros(2, 2), torch.tensor([1., 2.]), torch.tensor([1., 1.]))
    tensor([[1., 1.],
            [2., 2.]])
    """
    if vec1.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D")
    if vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    return _add_product(AddrBackward0, input, vec1, vec2, beta, alpha, np.multiply.outer,
                        promote=True)


def _check_batches(b1, b2) -> None:
    if b1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    s1, s2 = b1._data.shape, b2._data.shape
    if s1[0] != s2[0] or s1[2] != s2[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{s1[0]}, {s1[2]}] but got: [{s2[0]}, {s2[1]}].")


@lower_precision
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:  # noqa: A002
    """``beta * input + alpha * bmm(batch1, batch2)``.

    >>> import retrograd as torch
    >>> torch.baddbmm(torch.zeros(1), torch.ones(2, 1, 3), torch.ones(2, 3, 1)).flatten()
    tensor([3., 3.])
    """
    _check_batches(batch1, batch2)
    return _add_product(BaddbmmBackward0, input, batch1, batch2, beta, alpha, _array.matmul)


@lower_precision
def addbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:  # noqa: A002
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``.

    >>> import retrograd as torch
    >>> torch.addbmm(torch.zeros(1, 1), torch.ones(2, 1, 3), torch.ones(2, 3, 1))
    tensor([[6.]])
    """
    _check_batches(batch1, batch2)
    return _add_product(AddbmmBackward0, input, batch1, batch2, beta, alpha,
                        lambda a, b: _array.matmul(a, b).sum(axis=0))


# -- inner, outer, kron, tensordot --------------------------------------------------------------


def outer(input, vec2) -> Tensor:  # noqa: A002
    """The outer product of two vectors (PyTorch: a column times a row, ``MulBackward0``).

    >>> import retrograd as torch
    >>> torch.outer(torch.tensor([1., 2.]), torch.tensor([1., 10.]))
    tensor([[ 1., 10.],
            [ 2., 20.]])
    """
    if input.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.dim()}-D")
    if vec2.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    return mul(_shape.reshape(input, (input._data.shape[0], 1)), vec2)


ger = outer


def tensordot(a, b, dims=2, out=None) -> Tensor:
    """Contract the ``dims`` last dims of ``a`` with the first of ``b``, or the listed pairs.

    >>> import retrograd as torch
    >>> torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), dims=1).shape
    retrograd.Size([2, 4])
    """
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim():
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        dims_a, dims_b = dims
        dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
        dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError("both inputs should have same dtype")
    sa, sb = a._data.shape, b._data.shape
    da = [wrap_dim(d, len(sa)) for d in dims_a]
    db = [wrap_dim(d, len(sb)) for d in dims_b]
    # PyTorch's composite, op for op: a contracted dim of size 1 on one side is summed away on
    # the other; the dims are permuted as given (a negative dim stays negative in the graph).
    csize = 1
    for given_a, given_b, i, j in zip(dims_a, dims_b, da, db):
        if sb[j] == 1:
            a = _sum(a, given_a, True)
        elif sa[i] == 1:
            b = _sum(b, given_b, True)
        elif sa[i] != sb[j]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {sa[i]} in dim "
                f"{given_a} and second has size {sb[j]} in dim {given_b}"
            )
        else:
            csize *= sa[i]
    for wrapped in (da, db):
        for k, d in enumerate(wrapped):
            if d in wrapped[:k]:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    free_a = [i for i in range(len(sa)) if i not in da]
    free_b = [j for j in range(len(sb)) if j not in db]
    rsizes = tuple(a._data.shape[i] for i in free_a) + tuple(b._data.shape[j] for j in free_b)
    size_a = int(np.prod([a._data.shape[i] for i in free_a]))
    size_b = int(np.prod([b._data.shape[j] for j in free_b]))
    ta = _shape.permute(a, free_a + dims_a)
    tb = _shape.permute(b, dims_b + free_b)
    if size_a == 1 and size_b == 1:  # a full contraction: PyTorch's dot (or mul and sum)
        if ta._data.flags.c_contiguous and tb._data.flags.c_contiguous:
            return _shape.reshape(dot(_shape.flatten(ta), _shape.flatten(tb)), rsizes)
        prod_ = mul(_shape.squeeze(ta), _shape.squeeze(tb))
        return _shape.reshape(_sum(prod_, dtype=FROM_NP[ta._data.dtype]), rsizes)
    ta = _shape.reshape(ta, (size_a, csize))
    tb = _shape.reshape(tb, (csize, size_b))
    return _shape.reshape(mm(ta, tb), rsizes)


def inner(input, other) -> Tensor:  # noqa: A002
    """Sum of products over the last dims (a scalar times a tensor when one is 0-dim).

    >>> import retrograd as torch
    >>> torch.inner(torch.tensor([1., 2.]), torch.tensor([3., 4.]))
    tensor(11.)
    """
    if input.dim() == 0 or other.dim() == 0:
        return mul(input, other)
    sa, sb = input._data.shape, other._data.shape
    if sa[-1] != sb[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(sa)} and {list(sb)}")
    return tensordot(input, other, ([-1], [-1]))


def kron(input, other) -> Tensor:  # noqa: A002
    """The Kronecker product.

    >>> import retrograd as torch
    >>> torch.kron(torch.eye(2), torch.tensor([[1., 2.]]))
    tensor([[1., 2., 0., 0.],
            [0., 0., 1., 2.]])
    """
    try:
        sa, sb = input._data.shape, other._data.shape
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("kron", "input", 1, input) from None
    nd = max(len(sa), len(sb))
    sa = (1,) * (nd - len(sa)) + sa
    sb = (1,) * (nd - len(sb)) + sb
    ra, rb, res = [], [], []
    for x, y in zip(sa, sb):
        ra += [x, 1]
        rb += [1, y]
        res.append(x * y)
    prod = mul(_shape.reshape(input, tuple(ra)), _shape.reshape(other, tuple(rb)))
    return _shape.unsafe_view(prod, tuple(res))


# -- trace and cross ----------------------------------------------------------------------------


class TraceBackward0(Node):
    def backward(self, xp, g):
        (n, m), dt = self._meta[0]
        eye = np.eye(n, m, dtype=dt)
        # Expanded first: a product with a constant array would not sum back to ``g``'s shape.
        return xp.expand(g, eye.shape) * eye


@fp32
def trace(input) -> Tensor:  # noqa: A002
    """The sum of the main diagonal of a matrix.

    >>> import retrograd as torch
    >>> torch.tensor([[1., 2.], [3., 4.]]).trace()
    tensor(5.)
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("trace", "input", 1, input) from None
    if a.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {a.ndim}")
    if a.dtype.kind == "b":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    out = np.trace(a)
    if a.dtype.kind in "iu":
        out = np.asarray(out, np.int64)
    return apply(TraceBackward0, out, input)


def _cross_arrays(a, b, *, dim=-1):
    return np.cross(a, b, axis=dim)


class LinalgCrossBackward0(Node):
    forward = staticmethod(_cross_arrays)
    saves = ((1,), (0,))
    pointwise = False  # binary, but not elementwise: forward mode takes the general rule

    def backward(self, xp, g):
        a, b = self.saved(xp.TENSORS)
        d = self._dim
        ga = xp.linalg_cross(b, g, dim=d) if b is not None else None
        gb = xp.linalg_cross(g, a, dim=d) if a is not None else None
        return ga, gb


def linalg_cross(input, other, *, dim=-1) -> Tensor:  # noqa: A002
    """The cross product of 3-vectors along ``dim``; the other dims broadcast.

    >>> import retrograd as torch
    >>> torch.linalg.cross(torch.tensor([1., 0., 0.]), torch.tensor([0., 1., 0.]))
    tensor([0., 0., 1.])
    """
    other = other if isinstance(other, Tensor) else as_tensor_arg(other)
    sa, sb = input._data.shape, other._data.shape
    if len(sa) != len(sb):
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, len(sa))
    if sa[d] != 3 or sb[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{sa[d]} and {sb[d]}")
    return apply_binary(LinalgCrossBackward0, lambda a, b: _cross_arrays(a, b, dim=d), input,
                        other, _dim=d, _g=dim)


def cross(input, other, dim=None) -> Tensor:  # noqa: A002
    """``torch.cross``: ``linalg.cross``, but without ``dim`` the first dim of size 3.

    >>> import retrograd as torch
    >>> torch.cross(torch.tensor([[0., 1., 0.]]), torch.tensor([[0., 0., 1.]]), dim=1)
    tensor([[1., 0., 0.]])
    """
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
            "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value of "
            "dim will change to agree with that of linalg.cross in a future release.",
            UserWarning, stacklevel=2,
        )
        other_t = other if isinstance(other, Tensor) else as_tensor_arg(other)
        try:
            shape = np.broadcast_shapes(input._data.shape, other_t._data.shape)
        except ValueError:
            shape = input._data.shape
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)


save_plan(LinalgCrossBackward0)


@lower_precision
def vecdot(x, y, *, dim=-1) -> Tensor:
    """The dot product of vectors along ``dim``, broadcasting the rest.

    >>> import retrograd as torch
    >>> torch.linalg.vecdot(torch.tensor([[1., 2.]]), torch.tensor([3., 4.]))
    tensor([11.])
    """
    return _sum(mul(x, y), dim)


# -- einsum -------------------------------------------------------------------------------------


def _label(c: str) -> int:
    if not c.isalpha() or not c.isascii():
        raise RuntimeError(f"einsum(): invalid subscript given at index {c!r} in the equation "
                           "string, subscripts must be in [a-zA-Z]")
    return ord(c)


_ELL = 1000  # ellipsis dims get the labels _ELL + k


def _parse_einsum(equation: str, shapes: list):
    """Integer subscripts per operand and for the output, with ``...`` spelled out."""
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->", 1)
    else:
        lhs, rhs = eq, None
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    n_ell = 0
    parsed = []
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        if "..." in term:
            head, tail = term.split("...", 1)
            k = len(head) + len(tail)
            if k > len(shape):
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({k}) is more than the "
                    f"number of dimensions ({len(shape)}) for operand {i}"
                )
            e = len(shape) - k
            n_ell = max(n_ell, e)
            parsed.append(([_label(c) for c in head], e, [_label(c) for c in tail]))
        else:
            if len(term) != len(shape):
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({len(term)}) does not "
                    f"match the number of dimensions ({len(shape)}) for operand {i} and no "
                    "ellipsis was given"
                )
            parsed.append(([_label(c) for c in term], None, []))
    subs = []
    for head, e, tail in parsed:
        ell = [] if e is None else [_ELL + n_ell - e + k for k in range(e)]
        subs.append(tuple(head + ell + tail))
    ell_all = [_ELL + k for k in range(n_ell)]
    if rhs is None:
        counts: dict = {}
        for sub in subs:
            for lab in sub:
                counts[lab] = counts.get(lab, 0) + 1
        out = ell_all + sorted(lab for lab, c in counts.items() if c == 1 and lab < _ELL)
    else:
        if "..." in rhs:
            head, tail = rhs.split("...", 1)
            out = [_label(c) for c in head] + ell_all + [_label(c) for c in tail]
        else:
            out = [_label(c) for c in rhs]
        seen = set()
        present = {lab for sub in subs for lab in sub}
        for lab in out:
            if lab in seen:
                raise RuntimeError(f"einsum(): output subscript {chr(lab)} appears more than "
                                   "once in the output")
            if lab not in present and lab < _ELL:
                raise RuntimeError(f"einsum(): output subscript {chr(lab)} does not appear in "
                                   "the equation for any input operand")
            seen.add(lab)
    return subs, tuple(out)


def _label_sizes(shapes, subs) -> dict:
    sizes: dict = {}
    for i, (shape, sub) in enumerate(zip(shapes, subs)):
        own: dict = {}
        for lab, s in zip(sub, shape):
            if lab in own and own[lab] != s:
                raise RuntimeError(f"einsum(): subscript {_name(lab)} is repeated for operand "
                                   f"{i} but the sizes don't match, {own[lab]} != {s}")
            own[lab] = s
            cur = sizes.get(lab)
            if cur is None or cur == 1:
                sizes[lab] = s
            elif s != 1 and s != cur:
                raise RuntimeError(f"einsum(): subscript {_name(lab)} has size {s} for operand "
                                   f"{i} which does not broadcast with previously seen size "
                                   f"{cur}")
    return sizes


def _name(lab: int) -> str:
    return chr(lab) if lab < _ELL else "..."


def _sublist_equation(args) -> tuple:
    """``einsum(op0, sublist0, op1, sublist1, ..., [out])`` as an equation and operands."""
    def letters(sub):
        s = ""
        for lab in sub:
            if lab is Ellipsis:
                s += "..."
            elif not 0 <= lab < 52:
                raise ValueError("einsum(): subscript in subscript list is not within the valid "
                                 "range [0, 52)")
            else:
                s += chr(ord("A") + lab) if lab < 26 else chr(ord("a") + lab - 26)
        return s

    ops = list(args[0::2][: len(args) // 2])
    terms = [letters(s) for s in args[1::2][: len(args) // 2]]
    eq = ",".join(terms)
    if len(args) % 2:
        eq += "->" + letters(args[-1])
    return eq, ops


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list) -> Tensor:
    """``(left * right).sum(sum_dims, keepdim=True)`` by permutes, reshapes and one ``bmm``, as
    PyTorch's einsum contracts a pair (same ops, same order, so the same graph). Both operands
    have the same number of dims; a size-1 dim broadcasts."""
    if not sum_dims:
        return mul(left, right)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left._data.ndim):
        sl, sr = left._data.shape[i] != 1, right._data.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                sum_size *= left._data.shape[i]
            elif sl:  # in one operand only: summed right away
                left = _sum(left, i, True)
            elif sr:
                right = _sum(right, i, True)
        elif sl and sr:
            lro.append(i)
            lro_size *= left._data.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left._data.shape[i]
        else:
            ro.append(i)
            ro_size *= right._data.shape[i]
    if lo and ro and ro[-1] < lo[0]:  # bmm then writes the result in its final order
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size
    out_size = [left._data.shape[d] for d in lro + lo] + [1] * len(sum_dims) + \
        [right._data.shape[d] for d in ro]
    operm = [0] * len(out_size)
    for k, d in enumerate(lro + lo + sum_dims + ro):
        operm[d] = k
    left = _shape.reshape(_shape.permute(left, lro + lo + sum_dims + ro),
                          (lro_size, lo_size, sum_size))
    right = _shape.reshape(_shape.permute(right, lro + sum_dims + ro + lo),
                           (lro_size, sum_size, ro_size))
    return _shape.permute(_shape.view(bmm(left, right), tuple(out_size)), operm)


def einsum(equation, *operands) -> Tensor:
    """Sums of products by subscripts (``"ij,jk->ik"``); ``...`` broadcasts, a repeated
    subscript takes a diagonal, and without ``->`` the output has the subscripts that appear once,
    sorted.

    Built as PyTorch's composite: each operand's diagonals are taken, its missing subscripts
    unsqueezed and its dims permuted to (output, contracted) order; then operands are
    contracted left to right, a pair at a time, by ``bmm`` (or ``mul`` where nothing is summed),
    and the contracted dims viewed away. The graph (node names, saved tensors) is PyTorch's.

    >>> import retrograd as torch
    >>> torch.einsum("ij,j->i", torch.eye(2), torch.tensor([1., 2.]))
    tensor([1., 2.])
    """
    if isinstance(equation, Tensor):
        equation, operands = _sublist_equation((equation,) + operands)
    elif len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    operands = [o if isinstance(o, Tensor) else as_tensor_arg(o) for o in operands]
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    shapes = [o._data.shape for o in operands]
    subs, out = _parse_einsum(equation, shapes)
    _label_sizes(shapes, subs)  # PyTorch's size errors, before any op runs
    # Dims in PyTorch's order: the output's, the ellipsis (when the output lacks it), then the
    # contracted subscripts in label order (A-Z before a-z).
    n_ell = max([lab - _ELL + 1 for sub in subs for lab in sub if lab >= _ELL], default=0)
    order = list(out) + [_ELL + k for k in range(n_ell) if _ELL + k not in out]
    order += sorted({lab for sub in subs for lab in sub} - set(order))
    pos = {lab: k for k, lab in enumerate(order)}
    n_out, n_all = len(out), len(order)
    counts = [0] * n_all
    ops = []
    for op, sub in zip(operands, subs):
        perm = [-1] * n_all
        dim = 0
        for lab in sub:
            p = pos[lab]
            if perm[p] == -1:
                if op._data.shape[dim] != 1:
                    counts[p] += 1
                perm[p] = dim
                dim += 1
            else:  # a repeated subscript: its diagonal, moved to the first one's place
                op = _shape.movedim(_shape.diagonal(op, 0, perm[p], dim), -1, perm[p])
        for p in range(n_all):
            if perm[p] == -1:
                op = _shape.unsqueeze(op, dim)
                perm[p] = dim
                dim += 1
        ops.append(_shape.permute(op, perm))
    while len(ops) > 1:
        a, b = ops.pop(0), ops.pop(0)
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(n_out, n_all):
            sa, sb = a._data.shape[d] != 1, b._data.shape[d] != 1
            if sa and sb:
                counts[d] -= 1
                if counts[d] == 1:
                    sum_dims.append(d)
                    counts[d] = 0
            elif counts[d] == 1:
                if sa:
                    a_sum.append(d)
                    counts[d] = 0
                elif sb:
                    b_sum.append(d)
                    counts[d] = 0
        if a_sum:
            a = _sum(a, a_sum, True)
        if b_sum:
            b = _sum(b, b_sum, True)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))
    if n_all > n_out:
        if len(operands) > 1:
            return _shape.view(ops[0], ops[0]._data.shape[:n_out])
        return _sum(ops[0], list(range(n_out, n_all)))
    return ops[0]


_array.register(linalg_cross=LinalgCrossBackward0.forward)

__all__ = ["matmul", "mm", "mv", "dot", "vdot", "bmm", "addmm", "addmv", "addr", "addbmm",
           "baddbmm", "outer", "ger", "inner", "kron", "tensordot", "trace", "cross", "einsum"]
XP = ["linalg_cross"]
LINALG = {"cross": linalg_cross, "vecdot": vecdot, "matmul": matmul}
METHODS = {name: globals()[name] for name in __all__ if name not in ("tensordot", "einsum")}
INPLACE = {name + "_": globals()[name] for name in ("addmm", "addmv", "addr", "addbmm",
                                                     "baddbmm")}
