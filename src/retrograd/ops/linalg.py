"""Matrix products: matmul (``@``) in its shape cases, mm, mv, dot, bmm.

The primitives are dot, mv, mm and bmm, sharing one formula: 1-D operands are lifted to
matrices (a row on the left, a column on the right), then ``ga = g @ b^T`` and ``gb = a^T @ g``.
``matmul`` composes them with views exactly as PyTorch does, so its graphs match.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import state
from ..autograd.graph import Node
from ._core import as_tensor_arg, operands, record, wrap


class MmBackward0(Node):
    """Also the formula of every other matmul case (see the module docstring)."""

    def backward(self, xp, g):
        a, b = self.saved(xp.TENSORS)
        a_vec, b_vec = self._vecs
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
            gb = xp.matmul(xp.transpose(a2, -1, -2), g)
            if b_vec:
                gb = xp.squeeze(gb, -1)
        return ga, gb


class MvBackward0(MmBackward0):
    pass


class DotBackward0(MmBackward0):
    pass


class BmmBackward0(MmBackward0):
    pass


def _product(cls, a: Tensor, b: Tensor) -> Tensor:
    """One primitive product (dot, mv, mm or bmm) and its node."""
    ad, bd = operands(a, b)
    try:
        out = np.matmul(ad, bd)
    except ValueError:
        raise RuntimeError(_shape_error(ad, bd)) from None
    if state.grad_enabled and (a.requires_grad or b.requires_grad):
        node = cls()
        node._vecs = (ad.ndim == 1, bd.ndim == 1)
        ra, rb = a.requires_grad, b.requires_grad
        node.save(a if rb else None, b if ra else None)
        if ad.dtype != a._data.dtype or bd.dtype != b._data.dtype:
            node._dtypes = (a._data.dtype, b._data.dtype)
        return record(node, out, a, b)
    return wrap(out)


def matmul(input, other) -> Tensor:  # noqa: A002
    """Matrix product with PyTorch's rules for 1-D and batched operands.

    Like PyTorch, it is built from dot, mv, mm and bmm with views around them, so gradients and
    graphs (``UnsafeViewBackward0`` over ``BmmBackward0``, ...) come out the same.

    >>> import retrograd as torch
    >>> torch.tensor([[1., 2.], [3., 4.]]) @ torch.tensor([1., 1.])
    tensor([3., 7.])
    """
    from .shape import contiguous, expand, mT, reshape, squeeze_dims_, t, unsafe_view, unsqueeze

    a = input if isinstance(input, Tensor) else as_tensor_arg(input)
    b = other if isinstance(other, Tensor) else as_tensor_arg(other)
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
        return squeeze_dims_(_product(MmBackward0, unsqueeze(a, 0), b), 0)
    if da == 2 and db == 2:
        return _product(MmBackward0, a, b)
    if da >= 3 and db <= 2:
        # Fold the batch dims of ``a`` into its rows: one mm (or mv) and a view back.
        _check_inner(a, b)
        rows = reshape(a, (-1, a._data.shape[-1]))
        if db == 1:
            return unsafe_view(_product(MvBackward0, rows, b), a._data.shape[:-1])
        return unsafe_view(_product(MmBackward0, rows, b),
                           a._data.shape[:-1] + (b._data.shape[-1],))
    if da <= 2 and db >= 3:
        # The same fold on the transposed problem: (b^T @ a^T)^T.
        _check_inner(a, b)
        bt = mT(b)
        rows = reshape(bt, (-1, bt._data.shape[-1]))
        if da == 1:
            return unsafe_view(_product(MvBackward0, rows, a), bt._data.shape[:-1])
        out = unsafe_view(_product(MmBackward0, rows, t(a)),
                          bt._data.shape[:-1] + (a._data.shape[0],))
        return contiguous(mT(out))
    # Both batched: broadcast the batch dims, flatten them, one bmm, view back.
    _check_inner(a, b)
    try:
        batch = np.broadcast_shapes(a._data.shape[:-2], b._data.shape[:-2])
    except ValueError:
        raise RuntimeError(_shape_error(a._data, b._data)) from None
    n, m = a._data.shape[-2:]
    p = b._data.shape[-1]
    size = int(np.prod(batch)) if batch else 1
    a3 = reshape(expand(a, batch + (n, m)), (size, n, m))
    b3 = reshape(expand(b, batch + (m, p)), (size, m, p))
    return unsafe_view(_product(BmmBackward0, a3, b3), batch + (n, p))


def _check_inner(a, b) -> None:
    ka = a._data.shape[-1]
    kb = b._data.shape[-2] if b._data.ndim > 1 else b._data.shape[0]
    if ka != kb:
        raise RuntimeError(_shape_error(a._data, b._data))


def _shape_error(a, b) -> str:
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


def mm(input, mat2) -> Tensor:  # noqa: A002
    """Product of two matrices.

    >>> import retrograd as torch
    >>> torch.mm(torch.eye(2), torch.ones(2, 3)).shape
    retrograd.Size([2, 3])
    """
    if input.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    return _product(MmBackward0, input, mat2)


def mv(input, vec) -> Tensor:  # noqa: A002
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {input.dim()}, {vec.dim()}"
        )
    return _product(MvBackward0, input, vec)


def dot(input, other) -> Tensor:  # noqa: A002
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors"
        )
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{input.dtype!r} and {other.dtype!r}".replace("retrograd.", "").title()
        )
    return _product(DotBackward0, input, other)


def bmm(input, mat2) -> Tensor:  # noqa: A002
    if input.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    return _product(BmmBackward0, input, mat2)


__all__ = ["matmul", "mm", "mv", "dot", "bmm"]
XP: list = []
METHODS = {name: globals()[name] for name in __all__}
INPLACE: dict = {}
