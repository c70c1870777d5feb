"""Reductions: sum, mean, max/min, norm.

A reduction's backward spreads the gradient back over the reduced dimensions: ``keep_shape`` is
the output's shape with the reduced dimensions kept as 1, so ``expand(reshape(g, keep_shape),
input_shape)`` undoes it in either namespace.
"""

from __future__ import annotations

import numpy as np

from .._dtypes import to_dtype
from .._tensor import Tensor, make
from ..autograd.grad_mode import state
from ..autograd.graph import Node
from ._core import record, wrap, wrap_dims


def _keep_shape(shape, dims):
    if dims is None:
        return (1,) * len(shape)
    dims = (dims,) if isinstance(dims, int) else dims
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _norm_dims(dim, ndim):
    """``dim`` as a tuple of non-negative ints, or None for all (an empty tuple means all too)."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        d = wrap_dims(tuple(dim), ndim)
        if len(set(d)) != len(d):
            raise RuntimeError(f"dim {d[0]} appears multiple times in the list of dims")
        return d
    return (wrap_dims(dim, ndim),)


class SumBackward0(Node):
    def backward(self, xp, g):
        return xp.expand(g, self._in_shape)


class SumBackward1(Node):
    def backward(self, xp, g):
        return xp.expand(xp.reshape(g, self._keep), self._in_shape)


def sum(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:  # noqa: A001, A002
    """Sum of all elements, or over ``dim``; bools and integers sum to int64.

    >>> import retrograd as torch
    >>> torch.tensor([[1., 2.], [3., 4.]]).sum(0)
    tensor([4., 6.])
    """
    a = input._data
    if dtype is not None:
        a = a.astype(to_dtype(dtype).np)
    elif a.dtype.kind in "biu":
        a = a.astype(np.int64)
    dims = _norm_dims(dim, a.ndim)
    if dim is None:
        out = np.sum(a)
    else:
        out = np.sum(a, axis=dims, keepdims=keepdim)
    if state.grad_enabled and input.requires_grad:
        if dim is None:
            node = SumBackward0()
        else:
            node = SumBackward1()
            node._keep = _keep_shape(a.shape, dims if dims is not None else range(a.ndim))
        node._in_shape = a.shape
        if a.dtype != input._data.dtype:
            node._dtypes = (input._data.dtype,)
        return record(node, out, input)
    return wrap(out)


class MeanBackward0(Node):
    def backward(self, xp, g):
        return xp.expand(g / self._n, self._in_shape)


class MeanBackward1(Node):
    def backward(self, xp, g):
        return xp.expand(xp.reshape(g / self._n, self._keep), self._in_shape)


def mean(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:  # noqa: A002
    """Mean of all elements, or over ``dim``.

    >>> import retrograd as torch
    >>> torch.tensor([1., 2., 3., 6.]).mean()
    tensor(3.)
    """
    a = input._data
    if dtype is not None:
        a = a.astype(to_dtype(dtype).np)
    if a.dtype.kind != "f":
        name = {"b": "Bool", "i": "Long", "u": "Byte"}[a.dtype.kind]
        if a.dtype.kind == "i":
            name = {1: "Char", 2: "Short", 4: "Int", 8: "Long"}[a.dtype.itemsize]
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {name}"
        )
    dims = _norm_dims(dim, a.ndim)
    if dim is None:
        out = np.mean(a, dtype=a.dtype)
        n = a.size
    else:
        out = np.mean(a, axis=dims, keepdims=keepdim, dtype=a.dtype)
        n = 1
        for d in (dims if dims is not None else range(a.ndim)):
            n *= a.shape[d]
    if state.grad_enabled and input.requires_grad:
        if dim is None:
            node = MeanBackward0()
        else:
            node = MeanBackward1()
            node._keep = _keep_shape(a.shape, dims if dims is not None else range(a.ndim))
        node._in_shape = a.shape
        node._n = n
        if a.dtype != input._data.dtype:
            node._dtypes = (input._data.dtype,)
        return record(node, out, input)
    return wrap(out)


class _EvenlyDistributed(Node):
    """max()/min() of a whole tensor: the gradient is shared evenly among the tied elements."""

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        y = self.saved_output(xp.TENSORS)
        mask = x == y
        count = xp.sum(mask * 1.0) if xp.TENSORS else np.sum(mask)
        return xp.where(mask, g / count, 0.0)


class MaxBackward1(_EvenlyDistributed):
    pass


class MinBackward1(_EvenlyDistributed):
    pass


class _ValueSelecting(Node):
    """max/min with a dim: the gradient goes to the selected index only."""

    _n_out = 2

    def backward(self, xp, g, g_idx=None):
        idx = self._idx
        if not self._keepdim:
            g = xp.unsqueeze(g, self._dim)
        return xp.scatter_along(g, idx, self._dim, self._in_shape)


class MaxBackward0(_ValueSelecting):
    pass


class MinBackward0(_ValueSelecting):
    pass


def _max_min(input, dim, keepdim, is_max, other=None):
    from .. import return_types

    if other is not None:
        from .pointwise import maximum, minimum

        return maximum(input, other) if is_max else minimum(input, other)
    a = input._data
    name = "max" if is_max else "min"
    if dim is None:
        if a.size == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        out = np.max(a) if is_max else np.min(a)
        if state.grad_enabled and input.requires_grad:
            node = MaxBackward1() if is_max else MinBackward1()
            node.save(input)
            r = record(node, out, input)
            node.save_output(r)
            return r
        return wrap(out)
    d = wrap_dims(dim, a.ndim)
    if a.ndim == 0:
        idx = np.zeros((), np.int64)
        vals = a.copy()
    else:
        if a.shape[d] == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim {d} to have non-zero size."
            )
        idx = (np.argmax(a, axis=d, keepdims=True) if is_max
               else np.argmin(a, axis=d, keepdims=True))
        vals = np.take_along_axis(a, idx, axis=d)
        if not keepdim:
            vals = np.squeeze(vals, axis=d)
    indices = make(idx if keepdim or a.ndim == 0 else np.squeeze(idx, axis=d))
    if state.grad_enabled and input.requires_grad:
        node = MaxBackward0() if is_max else MinBackward0()
        node._idx = idx if a.ndim else idx.reshape(())
        node._dim = d
        node._keepdim = keepdim or a.ndim == 0
        node._in_shape = a.shape
        values = record(node, vals, input)
    else:
        values = wrap(vals)
    cls = return_types.max if is_max else return_types.min
    return cls((values, indices))


def max(input, dim=None, keepdim=False, *, other=None):  # noqa: A001, A002
    """The largest element, or ``(values, indices)`` along ``dim``.

    >>> import retrograd as torch
    >>> torch.tensor([[1., 5.], [7., 2.]]).max(1)
    retrograd.return_types.max(
    values=tensor([5., 7.]),
    indices=tensor([1, 0]))
    """
    if isinstance(dim, Tensor):
        return _max_min(input, None, keepdim, True, other=dim)
    return _max_min(input, dim, keepdim, True, other)


def min(input, dim=None, keepdim=False, *, other=None):  # noqa: A001, A002
    """The smallest element, or ``(values, indices)`` along ``dim``.

    >>> import retrograd as torch
    >>> torch.tensor([3., 1., 2.]).min()
    tensor(1.)
    """
    if isinstance(dim, Tensor):
        return _max_min(input, None, keepdim, False, other=dim)
    return _max_min(input, dim, keepdim, False, other)


def argmax(input, dim=None, keepdim=False) -> Tensor:  # noqa: A002
    a = input._data
    if dim is None:
        return wrap(np.asarray(np.argmax(a), dtype=np.int64))
    return wrap(np.argmax(a, axis=wrap_dims(dim, a.ndim), keepdims=keepdim).astype(np.int64))


def argmin(input, dim=None, keepdim=False) -> Tensor:  # noqa: A002
    a = input._data
    if dim is None:
        return wrap(np.asarray(np.argmin(a), dtype=np.int64))
    return wrap(np.argmin(a, axis=wrap_dims(dim, a.ndim), keepdims=keepdim).astype(np.int64))


class LinalgVectorNormBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        n = self.saved_output(xp.TENSORS)
        p = self._p
        keep = self._keep
        if keep is not None:
            g = xp.reshape(g, keep)
            n = xp.reshape(n, keep)
        if p == 2:
            # x / ||x||, and 0 where the norm is 0 (PyTorch's subgradient).
            return g * xp.where(n == 0, 0.0, x / xp.where(n == 0, 1.0, n))
        if p == 1:
            return g * xp.sign(x)
        if p == 0:
            return g * (x * 0)
        if p == float("inf") or p == -float("inf"):
            ax = xp.abs(x)
            mask = ax == n
            cnt = xp.sum(mask * 1.0, self._dims, True) if self._dims is not None else \
                xp.sum(mask * 1.0)
            return g * xp.where(mask, xp.sign(x) / cnt, 0.0)
        ax = xp.abs(x)
        scale = xp.where(n == 0, 0.0, 1.0 / xp.pow(xp.where(n == 0, 1.0, n), p - 1))
        return g * (xp.sign(x) * xp.pow(ax, p - 1) * scale)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None) -> Tensor:  # noqa: A002
    """The ``ord``-norm of ``x`` flattened, or over ``dim``.

    >>> import retrograd as torch
    >>> torch.linalg.vector_norm(torch.tensor([3., 4.]))
    tensor(5.)
    """
    a = x._data
    if a.dtype.kind != "f":
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            + {"i": "Long", "b": "Bool", "u": "Byte"}.get(a.dtype.kind, str(a.dtype))
        )
    dims = _norm_dims(dim, a.ndim)
    ax = np.abs(a)
    p = float(ord) if not isinstance(ord, str) else ord
    if p == 2:
        out = np.sqrt(np.sum(ax * ax, axis=dims, keepdims=keepdim))
    elif p == float("inf"):
        out = np.max(ax, axis=dims, keepdims=keepdim)
    elif p == -float("inf"):
        out = np.min(ax, axis=dims, keepdims=keepdim)
    elif p == 0:
        out = np.sum(ax != 0, axis=dims, keepdims=keepdim).astype(a.dtype)
    elif p == 1:
        out = np.sum(ax, axis=dims, keepdims=keepdim)
    else:
        out = np.power(np.sum(np.power(ax, p), axis=dims, keepdims=keepdim), 1.0 / p)
    out = np.asarray(out).astype(a.dtype, copy=False)
    if state.grad_enabled and x.requires_grad:
        node = LinalgVectorNormBackward0()
        node._p = p
        node._dims = dims
        node._keep = None if keepdim or dims is None else _keep_shape(a.shape, dims)
        if dims is None and not keepdim:
            node._keep = None
        node.save(x)
        r = record(node, out, x)
        node.save_output(r)
        return r
    return wrap(out)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None) -> Tensor:  # noqa: A002
    """``Tensor.norm``: the 2-norm by default ('fro'), or the ``p``-norm, over ``dim``.

    >>> import retrograd as torch
    >>> torch.tensor([3., 4.]).norm()
    tensor(5.)
    """
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        raise NotImplementedError("retrograd does not implement the nuclear norm yet")
    return vector_norm(input, p, dim, keepdim, dtype=dtype)



__all__ = ["sum", "mean", "max", "min", "argmax", "argmin", "norm"]
XP = ["vector_norm"]
METHODS = {name: globals()[name] for name in __all__}
INPLACE: dict = {}
