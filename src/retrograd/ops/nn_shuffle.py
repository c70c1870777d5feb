"""Primitives behind ``nn.functional.pixel_shuffle``, ``pixel_unshuffle`` and
``channel_shuffle``.

NOTE: each is a reshape-transpose-reshape that could be composed from views; it is one primitive
so that the result carries PyTorch's grad_fn (``PixelShuffleBackward0``, ...) and is one
contiguous copy, as in PyTorch. Each backward is the inverse rearrangement, written with
``xp.reshape``/``xp.permute`` so it runs on arrays and, under ``create_graph``, on tensors.

The functions are internal (``__all__`` is empty); ``nn.functional`` wraps them.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..autograd.graph import Node
from . import _array
from ._apply import apply

__all__: list = []
XP: list = []
METHODS: dict = {}
INPLACE: dict = {}


def _shuffle(xp, x, r: int):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    *lead, c, h, w = x.shape
    n = len(lead)
    y = xp.reshape(x, (*lead, c // (r * r), r, r, h, w))
    y = xp.permute(y, (*range(n), n, n + 3, n + 1, n + 4, n + 2))
    return xp.reshape(y, (*lead, c // (r * r), h * r, w * r))


def _unshuffle(xp, x, r: int):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    *lead, c, h, w = x.shape
    n = len(lead)
    y = xp.reshape(x, (*lead, c, h // r, r, w // r, r))
    y = xp.permute(y, (*range(n), n, n + 2, n + 4, n + 1, n + 3))
    return xp.reshape(y, (*lead, c * r * r, h // r, w // r))


def _channel(xp, x, groups: int):
    """(N, C, *) -> (N, C, *) with the channels of each of ``groups`` groups interleaved."""
    n, c, *rest = x.shape
    y = xp.reshape(x, (n, groups, c // groups, *rest))
    y = xp.permute(y, (0, 2, 1, *range(3, y.ndim)))
    return xp.reshape(y, (n, c, *rest))


class PixelShuffleBackward0(Node):
    def backward(self, xp, g):
        return _unshuffle(xp, g, self._r)


class PixelUnshuffleBackward0(Node):
    def backward(self, xp, g):
        return _shuffle(xp, g, self._r)


class ChannelShuffleBackward0(Node):
    def backward(self, xp, g):
        return _channel(xp, g, g.shape[1] // self._groups)


def pixel_shuffle(input: Tensor, r: int) -> Tensor:  # noqa: A002
    """(*, C r^2, H, W) -> (*, C, H r, W r); ``r`` already checked."""
    out = np.ascontiguousarray(_shuffle(_array, input._data, r))
    return apply(PixelShuffleBackward0, out, input, _r=r)


def pixel_unshuffle(input: Tensor, r: int) -> Tensor:  # noqa: A002
    """(*, C, H r, W r) -> (*, C r^2, H, W); ``r`` already checked."""
    out = np.ascontiguousarray(_unshuffle(_array, input._data, r))
    return apply(PixelUnshuffleBackward0, out, input, _r=r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    """(N, C, *) with ``groups`` dividing C; ``groups`` already checked."""
    out = np.ascontiguousarray(_channel(_array, input._data, groups))
    return apply(ChannelShuffleBackward0, out, input, _groups=groups)
