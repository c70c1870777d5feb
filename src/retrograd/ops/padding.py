"""Padding: constant_pad_nd and ``nn.functional.pad`` (constant, reflect, replicate, circular).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..autograd.graph import Node
from . import _array
from ._apply import apply
from ._autocast import fp32
from ._autocast import state as autocast_state
from ._core import arg_error
from .copies import index_dims


def _pad_regions(shape, pad) -> tuple:
    """Output shape, destination and source slices of a constant pad (negative pads crop)."""
    out_shape, dst, src = list(shape), [slice(None)] * len(shape), [slice(None)] * len(shape)
    for k in range(len(pad) // 2):
        d = len(shape) - 1 - k
        lo, hi = int(pad[2 * k]), int(pad[2 * k + 1])
        n = shape[d]
        m = n + lo + hi
        if m < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        out_shape[d] = m
        dst[d] = slice(max(lo, 0), max(lo, 0) + max(n - max(-lo, 0) - max(-hi, 0), 0))
        src[d] = slice(max(-lo, 0), max(max(-lo, 0), n - max(-hi, 0)))
    return tuple(out_shape), tuple(dst), tuple(src)


def _array_constant_pad_nd(x, pad, value=0):
    out_shape, dst, src = _pad_regions(x.shape, pad)
    out = np.full(out_shape, value, x.dtype)
    out[dst] = x[src]
    return out


class ConstantPadNdBackward0(Node):
    forward = staticmethod(_array_constant_pad_nd)

    def backward(self, xp, g):
        return xp.constant_pad_nd(g, self._back, 0)


def constant_pad_nd(input, pad, value=0) -> Tensor:  # noqa: A002
    """``input`` padded with ``value``: ``pad`` lists (before, after) pairs from the last dim;
    negative amounts crop."""
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("constant_pad_nd", "input", 1, input) from None
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > a.ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {a.ndim}"
        )
    out = _array_constant_pad_nd(a, pad, 0 if value is None else value)
    return apply(ConstantPadNdBackward0, out, input, _back=tuple(-p for p in pad))


_PAD_HELP = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
)


def _pad_index(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """For each output position along a dim, the input position it copies."""
    j = np.arange(n + lo + hi)
    if mode == "circular":
        # Crop first (negative pads), then wrap around the cropped part.
        start = max(-lo, 0)
        m = n - start - max(-hi, 0)
        if m <= 0:
            return np.zeros(0, np.int64)
        return start + (np.arange(-max(lo, 0), m + max(hi, 0)) % m)
    if mode == "reflect":
        ip = np.where(j < lo, 2 * lo - j, np.where(j < n + lo, j, 2 * (n + lo - 1) - j))
    else:
        ip = np.where(j < lo, lo, np.where(j < n + lo, j, n + lo - 1))
    return ip - max(lo, 0) + max(-lo, 0)


def pad(input, pad, mode="constant", value=None) -> Tensor:  # noqa: A002
    """Pad the last ``len(pad) // 2`` dims: ``pad`` is (left, right) for the last dim, then the
    one before, ...; modes ``constant`` (with ``value``), ``reflect``, ``replicate`` and
    ``circular``. Negative amounts crop.

    >>> import retrograd as torch
    >>> torch.nn.functional.pad(torch.tensor([[1., 2., 3.]]), (2, 1), mode="reflect")
    tensor([[3., 2., 1., 2., 3., 2.]])
    """
    if mode == "constant":
        return constant_pad_nd(input, pad, value)
    if autocast_state.cpu and mode != "circular" and not (mode == "reflect" and len(pad) == 6):
        # reflection/replication pads are on the float32 list, except reflection_pad3d
        return _pad_fp32(input, pad, mode, value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    a = input._data
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    p = len(pad) // 2
    if p not in (1, 2, 3) or a.ndim not in (p + 1, p + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {a.ndim}D input tensor.\n" + _PAD_HELP
        )
    idxs = []
    for k in range(p):
        d = a.ndim - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        n = a.shape[d]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(
                f"Argument #{4 + 2 * k}: Padding size should be less than the corresponding "
                f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                f"{list(a.shape)}"
            )
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        idxs.append((d, _pad_index(n, lo, hi, mode)))
    if mode != "circular" and any(s == 0 for s in a.shape[a.ndim - p:]):
        raise RuntimeError(
            f"Expected {p + 1}D or {p + 2}D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {list(a.shape)}"
        )
    # NOTE: one gather per padded dim and one node; PyTorch names it per mode (its circular
    # pad is a chain of in-place copies, hence CopySlices).
    name = {"reflect": f"ReflectionPad{p}DBackward0", "replicate": f"ReplicationPad{p}DBackward0",
            "circular": "torch::autograd::CopySlices"}[mode]
    return index_dims(input, tuple(idxs), name, mode != "circular", _padding=pad)


_pad_fp32 = fp32(pad)


_array.register(constant_pad_nd=ConstantPadNdBackward0.forward)

__all__ = ["constant_pad_nd"]
XP = ["pad"]
METHODS: dict = {}
INPLACE: dict = {}
