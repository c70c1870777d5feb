"""Making views, beneath the shape and indexing families: ``make_view`` (wraps a NumPy view of
a tensor as a view tensor that records its steps from its base), ``replay`` (re-applies such
steps in a namespace: arrays or tensors), and the positional views ``select``, ``slice_dim`` and
``narrow`` that both ``shape`` and ``indexing`` build on.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, make
from ..autograd.grad_mode import state
from ..autograd.graph import Node
from ._core import asarray, ndarray, record, wrap_dim


def make_view(out: np.ndarray, x: Tensor, step: tuple, node) -> Tensor:
    """Wrap ``out`` (a NumPy view of ``x``'s array) as a view of ``x``, recording ``step``."""
    if node is not None:
        t = record(node, out, x)
    else:
        if out.__class__ is not ndarray:
            out = asarray(out)
        t = make(out)
    t._vc = x._vc
    t._inference = x._inference
    if not state.grad_enabled and x._rg:
        t.__dict__["_no_grad_view"] = True
    v = x._view
    if v is None:
        t._view = (x, (step,), x._grad_fn)
    else:
        base = v[0]
        t._view = (base, v[1] + (step,), base._grad_fn)
    return t


def _recording(x: Tensor) -> bool:
    return state.grad_enabled and (x._rg or (x._view is not None and x.requires_grad))


def replay(xp, x, steps):
    """Apply a view's recorded ``(op name, args)`` steps to ``x``, with ``xp``'s functions."""
    for name, args in steps:
        x = getattr(xp, name)(x, *args)
    return x


class SelectBackward0(Node):
    def backward(self, xp, g):
        return xp.embed_select(g, self._in_shape, self._dim, self._index)


def select(input, dim, index) -> Tensor:  # noqa: A002
    """The slice at ``index`` along ``dim``, without that dim (a view).

    >>> import retrograd as torch
    >>> torch.arange(6).view(2, 3).select(1, 2)
    tensor([2, 5])
    """
    a = input._data
    if a.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, a.ndim)
    size = a.shape[d]
    index = int(index)
    if not -size <= index < size:
        raise IndexError(
            f"index {index} is out of bounds for dimension {d} with size {size}"
        )
    if index < 0:
        index += size
    key = (slice(None),) * d + (index,)
    out = a[key]
    if out.__class__ is not ndarray:
        out = a[key + (Ellipsis,)]
    node = None
    if _recording(input):
        node = SelectBackward0()
        node._in_shape, node._dim, node._index = a.shape, d, index
    return make_view(out, input, ("select", (d, index)), node)


class SliceBackward0(Node):
    def backward(self, xp, g):
        return xp.embed_slice(g, self._in_shape, self._dim, *self._range)


def slice_dim(input, dim, start, stop, step=1) -> Tensor:  # noqa: A002
    """``input[..., start:stop:step, ...]`` along ``dim`` (a view)."""
    a = input._data
    d = wrap_dim(dim, a.ndim)
    if step is not None and step <= 0:
        raise ValueError("step must be greater than zero")
    start, stop, step = slice(start, stop, step).indices(a.shape[d])
    stop = max(stop, start)
    out = a[(slice(None),) * d + (slice(start, stop, step),)]
    node = None
    if _recording(input):
        node = SliceBackward0()
        node._in_shape, node._dim, node._range = a.shape, d, (start, stop, step)
    return make_view(out, input, ("slice_dim", (d, start, stop, step)), node)


def narrow(input, dim, start, length) -> Tensor:  # noqa: A002
    """``length`` entries of ``dim`` from ``start`` on (a view).

    >>> import retrograd as torch
    >>> torch.arange(5).narrow(0, 1, 3)
    tensor([1, 2, 3])
    """
    return slice_dim(input, dim, start, int(start) + int(length), 1)
