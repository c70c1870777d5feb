"""Making views, beneath the shape and indexing families: ``replay`` (re-applies a view's
recorded steps in a namespace: arrays or tensors) and the positional views ``select``,
``slice_dim`` and ``narrow`` that both ``shape`` and ``indexing`` build on. Views are wrapped and
linked to their base by ``_apply.apply_view``.
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from ..autograd.graph import Node
from . import _array
from ._apply import apply_view
from ._core import ndarray, wrap_dim


def replay(xp, x, steps):
    """Apply a view's recorded ``(op name, args)`` steps to ``x``, with ``xp``'s functions."""
    for name, args in steps:
        x = getattr(xp, name)(x, *args)
    return x


def _select_array(x, dim, index):
    # The trailing Ellipsis keeps a 0-d result a view (a plain int index returns a scalar).
    return x[(slice(None),) * dim + (index, Ellipsis)]


class SelectBackward0(Node):
    forward = staticmethod(_select_array)

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
    given = index = int(index)
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
    return apply_view(SelectBackward0, out, input, ("select", (d, index)),
                      _in_shape=a.shape, _dim=d, _index=index, _g=(dim, given))


def _slice_array(x, dim, start, stop, step):
    sl = [slice(None)] * x.ndim
    sl[dim] = slice(start, stop, step)
    return x[tuple(sl)]


class SliceBackward0(Node):
    forward = staticmethod(_slice_array)

    def backward(self, xp, g):
        return xp.embed_slice(g, self._in_shape, self._dim, *self._range)


def slice_dim(input, dim, start, stop, step=1) -> Tensor:  # noqa: A002
    """``input[..., start:stop:step, ...]`` along ``dim`` (a view); ``stop`` ``...``: to the
    end, as PyTorch's C++ ``slice(dim, start)`` (its node keeps no end: None)."""
    a = input._data
    d = wrap_dim(dim, a.ndim)
    if step is not None and step <= 0:
        raise ValueError("step must be greater than zero")
    given = (start, stop)  # (PyTorch's node keeps them as given: ``_saved_start``/``_end``)
    if stop is ...:
        stop = None
    start, stop, step = slice(start, stop, step).indices(a.shape[d])
    stop = max(stop, start)
    out = a[(slice(None),) * d + (slice(start, stop, step),)]
    return apply_view(SliceBackward0, out, input, ("slice_dim", (d, start, stop, step)),
                      _in_shape=a.shape, _dim=d, _range=(start, stop, step), _g=given, _gd=dim)


def narrow(input, dim, start, length) -> Tensor:  # noqa: A002
    """``length`` entries of ``dim`` from ``start`` on (a view).

    >>> import retrograd as torch
    >>> torch.arange(5).narrow(0, 1, 3)
    tensor([1, 2, 3])
    """
    try:
        nd = input._data.ndim
    except AttributeError:  # not a tensor: slice_dim raises PyTorch's TypeError
        nd = None
    if nd == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    start, length = int(start), int(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if nd is not None:
        size = input._data.shape[wrap_dim(dim, nd)]
        if not -size <= start <= size:
            raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                             f"but got {start})")
        start = start + size if start < 0 else start
        if start > size - length:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                               f"({size}).")
    return slice_dim(input, dim, start, start + length, 1)


_array.register(select=SelectBackward0.forward, slice_dim=SliceBackward0.forward)


def expand_array(x, shape):
    """``x`` expanded to ``shape`` with PyTorch's strides (inferExpandGeometry: an expanded
    dim has stride 0; a new leading dim of size 1 the stride a contiguous tensor would have).
    Writable unless elements really overlap (a dim of stride 0 and size above 1), so that an
    in-place op on a no-op expansion (or an empty one) is allowed, as in PyTorch."""
    shape = tuple(shape)
    if shape == x.shape:
        return x[...]
    if math.prod(shape) >= 1 << 63:
        raise ValueError("iterator is too large")
    lead = len(shape) - x.ndim
    strides = [0] * len(shape)
    overlap = False
    for i in range(len(shape) - 1, -1, -1):
        size, target = (x.shape[i - lead], shape[i]) if i >= lead else (1, shape[i])
        if i >= lead:
            stride = x.strides[i - lead]
        else:
            stride = shape[i + 1] * strides[i + 1] if i + 1 < len(shape) else x.itemsize
        if size != target:
            stride = 0
            overlap = overlap or target > 1
        strides[i] = stride
    if 0 in shape:
        overlap = False
    return np.lib.stride_tricks.as_strided(x, shape, tuple(strides),
                                           writeable=x.flags.writeable and not overlap)
