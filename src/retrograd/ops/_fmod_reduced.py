"""float16/bfloat16 fmod and remainder as torch's CPU loop computes them, NaN bits included:
SLEEF's ``fmodf`` in the 32-element vector steps, glibc's ``fmodf`` in the scalar loop."""

from __future__ import annotations

import numpy as np

from .. import _sleef
from .._dtypes import F32, bfloat16, to_reduced
from ._core import bf16_nans, put_tail, scalar_loop

__all__ = ["floor_div_reduced", "fmod_reduced", "remainder_reduced"]


def fmod_reduced(a: np.ndarray, b, dtype=None, src=None) -> np.ndarray:
    """float16/bfloat16 fmod as torch's loop: SLEEF's fmodf (NaN for a quotient beyond float32)
    on the vectorised part, glibc's ``fmodf`` on the scalar tail (``scalar_loop``: the elements
    32-element vector steps leave), in float32, rounded to ``dtype`` as torch converts (NaN
    bits too) unless None; ``src``: the operands as laid out, where ``a`` and ``b`` are copies.
    (torch splits tensors of over 32768 elements among threads, each chunk with its own tail:
    the single-chunk rule is kept.)

    >>> inf = [np.full(n, np.inf, np.float16) for n in (32, 2)]  # vector steps, scalar tail
    >>> [hex(fmod_reduced(x, 2.0, np.float16).view(np.uint16)[0]) for x in inf]
    ['0xffff', '0xfe00']
    """
    b = np.asarray(b)
    src = src or (a, b)
    tail = scalar_loop(np.broadcast_shapes(a.shape, b.shape), *src)
    a, b = np.broadcast_arrays(a.astype(F32), b.astype(F32))
    out = put_tail(_sleef.fmodf(a, b), tail, _libm_fmodf, a, b)
    return out if dtype is None else _rounded(out, dtype, src)


def remainder_reduced(a: np.ndarray, b) -> np.ndarray:
    """float16/bfloat16 remainder as torch's kernel: fmod (``fmod_reduced``), then shifted by
    ``b`` where the signs of the result and ``b`` differ (keeps -0.0), in float32, one rounding.
    """
    src = (a, np.asarray(b))
    a, b = a.astype(F32), np.asarray(b).astype(F32)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = fmod_reduced(a, b, None, src)
        fix = (m != 0) & ((m < 0) != (b < 0))
        return _rounded(np.where(fix, m + b, m), src[0].dtype, src)


def floor_div_reduced(x: np.ndarray, y: np.ndarray, steps: bool = True) -> np.ndarray:
    """float16/bfloat16 floor division as PyTorch's kernel (``div_floor_floating_vec``, the
    scalar ``div_floor_floating`` in the tail) with ``fmod_reduced``'s fmod: every step an op
    of the dtype, rounded to it (``steps``: two tensors), or float32 throughout, rounded once
    (by a number, ``y`` a float32 0-d array)."""
    rd, src = x.dtype, (x, y)
    x = x.astype(F32)
    y = y.astype(F32)

    def rnd(v):  # (a NaN quieted, as torch converts)
        return to_reduced(v, rd).astype(F32) if steps else v

    q = rnd(x / y)
    mod = rnd(fmod_reduced(x, y, None, src))
    div = rnd(np.where((np.abs(q) == np.inf) & (np.abs(x) != np.inf), x, rnd(x - mod)) / y)
    div = np.where((mod != 0) & ((y < 0) != (mod < 0)), rnd(div - 1), div)
    fl = np.floor(div)
    fl = np.where(rnd(div - fl) > 0.5, rnd(fl + 1), fl)
    fl = np.where(div == 0, np.copysign(F32.type(0), q), fl)
    return to_reduced(np.where(y == 0, q, fl), rd)


def _rounded(out, dtype, src):
    out = to_reduced(out, dtype)  # (quiets a NaN as torch's conversion)
    return bf16_nans(out, *src) if out.dtype == bfloat16.np else out


def _libm_fmodf(a, b):
    # glibc's fmodf (x87 fprem): of two NaNs the one with the larger payload, quieted
    out = np.fmod(a, b)
    both = (a != a) & (b != b)
    if both.any():
        ab, bb = a.view(np.int32), b.view(np.int32)
        big = (bb & 0x3FFFFF) > (ab & 0x3FFFFF)
        out = np.where(both, (np.where(big, bb, ab) | 0x400000).view(F32), out)
    return out
