"""Joining tensors: cat and stack.

Their backward cuts the gradient back into the inputs' pieces with ``slice_dim`` (cat) or
``select`` (stack), views that exist in both namespaces.
"""

from __future__ import annotations

import numpy as np

from .._dtypes import FROM_NP, promote_types
from .._tensor import Tensor
from ..autograd.graph import Node
from . import _array
from ._apply import apply
from ._autocast import promote
from ._core import as_tensor_arg, c_order, wrap_dim
from .shape import reshape, unsqueeze


def _tensors(tensors, name: str) -> list:
    if isinstance(tensors, Tensor):
        raise TypeError(
            f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor"
        )
    ts = [t if isinstance(t, Tensor) else as_tensor_arg(t) for t in tensors]
    if not ts:  # PyTorch's own words: cat's Python binding checks, stack's kernel
        if name == "cat":
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return ts


def _common(ts) -> np.dtype:
    dt = ts[0]._data.dtype
    for t in ts[1:]:
        if t._data.dtype != dt:  # PyTorch's promotion (not NumPy's: float16 with int64 is
            r = FROM_NP[dt]      # float16; uint16/32/64 mix with no other integer)
            for u in ts[1:]:
                r = promote_types(r, FROM_NP[u._data.dtype])
            return r.np
    return dt


def _cat_array(arrays, dim=0):
    return np.concatenate(arrays, axis=dim)


def _stack_array(arrays, dim=0):
    return c_order(np.stack(arrays, axis=dim))


class CatBackward0(Node):
    """Each input's gradient is its slice of ``g`` along ``_dim`` (None for the 1-D empty
    inputs cat skips)."""

    forward = staticmethod(_cat_array)

    def backward(self, xp, g):
        dim = self._dim
        out = []
        start = 0
        for size in self._sizes:
            out.append(None if size is None else xp.slice_dim(g, dim, start, start + size, 1))
            start += size or 0
        return tuple(out)


@promote  # on PyTorch's CPU autocast promote list (float16 with bfloat16 raises there)
def cat(tensors, dim=0) -> Tensor:
    """Concatenate along an existing ``dim``.

    >>> import retrograd as torch
    >>> torch.cat([torch.zeros(1, 2), torch.ones(2, 2)]).shape
    retrograd.Size([3, 2])
    """
    ts = _tensors(tensors, "cat")
    # PyTorch skips 1-D empty tensors (legacy behaviour) when joining.
    parts = [t for t in ts if not (t._data.ndim == 1 and t._data.shape[0] == 0)] or ts[:1]
    ndim = parts[0]._data.ndim
    if ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = wrap_dim(dim, ndim)
    ref = parts[0]._data.shape
    for i, t in enumerate(parts):
        s = t._data.shape
        if len(s) != ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {ndim} and {len(s)}"
            )
        for k in range(ndim):
            if k != d and s[k] != ref[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref[k]} but got size {s[k]} for tensor number {i} in the list."
                )
    dt = _common(parts)
    out = c_order(np.concatenate([t._data for t in parts], axis=d, dtype=dt))
    kept = {id(t) for t in parts}
    sizes = [t._data.shape[d] if id(t) in kept else None for t in ts]
    return apply(CatBackward0, out, *ts, _dim=d, _sizes=sizes, _g=dim)


concat = cat
concatenate = cat


class StackBackward0(Node):
    forward = staticmethod(_stack_array)

    def backward(self, xp, g):
        return tuple(xp.select(g, self._dim, i) for i in range(self._n))


@promote
def stack(tensors, dim=0) -> Tensor:
    """Join along a new ``dim``.

    >>> import retrograd as torch
    >>> torch.stack([torch.zeros(2), torch.ones(2)], dim=1).shape
    retrograd.Size([2, 2])
    """
    ts = _tensors(tensors, "stack")
    shape = ts[0]._data.shape
    for i, t in enumerate(ts):
        if t._data.shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(t._data.shape)} at entry {i}"
            )
    d = wrap_dim(dim, len(shape) + 1)
    dt = _common(ts)  # (NumPy has no common type of float16 and bfloat16: cast first)
    out = _stack_array([t._data.astype(dt, copy=False) for t in ts], d)
    return apply(StackBackward0, out, *ts, _dim=d, _n=len(ts), _g=dim)


def _atleast(t: Tensor, n: int) -> Tensor:
    """``t`` with dims of size 1 added as ``atleast_1d/2d/3d`` add them."""
    nd = t._data.ndim
    if nd >= n:
        return t
    if nd == 0:
        return reshape(t, (1,) * n)
    if n == 2 or nd == 2:
        return unsqueeze(t, 0 if n == 2 else -1)
    return unsqueeze(unsqueeze(t, 0), -1)  # 1-D to 3-D: (1, n, 1)


def _nonempty(tensors, name: str) -> list:
    ts = list(tensors) if not isinstance(tensors, Tensor) else _tensors(tensors, name)
    if not ts:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return [t if isinstance(t, Tensor) else as_tensor_arg(t) for t in ts]


def hstack(tensors) -> Tensor:
    """Join along dim 1 (dim 0 for 1-D tensors).

    >>> import retrograd as torch
    >>> torch.hstack([torch.tensor([1, 2]), torch.tensor([3])])
    tensor([1, 2, 3])
    """
    ts = [_atleast(t, 1) for t in _nonempty(tensors, "hstack")]
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """Join along dim 0, 1-D tensors taken as rows.

    >>> import retrograd as torch
    >>> torch.vstack([torch.tensor([1, 2]), torch.tensor([3, 4])])
    tensor([[1, 2],
            [3, 4]])
    """
    return cat([_atleast(t, 2) for t in _nonempty(tensors, "vstack")], 0)


def row_stack(tensors) -> Tensor:
    """``vstack``."""
    return cat([_atleast(t, 2) for t in _nonempty(tensors, "vstack")], 0)


def dstack(tensors) -> Tensor:
    """Join along dim 2 (depth), after making every tensor at least 3-D.

    >>> import retrograd as torch
    >>> torch.dstack([torch.tensor([1, 2]), torch.tensor([3, 4])]).shape
    retrograd.Size([1, 2, 2])
    """
    return cat([_atleast(t, 3) for t in _nonempty(tensors, "dstack")], 2)


def column_stack(tensors) -> Tensor:
    """Join along dim 1, 0-D and 1-D tensors taken as columns.

    >>> import retrograd as torch
    >>> torch.column_stack([torch.tensor([1, 2]), torch.tensor([3, 4])])
    tensor([[1, 3],
            [2, 4]])
    """
    ts = _nonempty(tensors, "column_stack")
    ts = [reshape(t, (t._data.size, 1)) if t._data.ndim <= 1 else t for t in ts]
    return hstack(ts)


_array.register(cat=CatBackward0.forward, stack=StackBackward0.forward)

__all__ = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "dstack",
           "column_stack"]
XP: list = []
METHODS: dict = {}
INPLACE: dict = {}
