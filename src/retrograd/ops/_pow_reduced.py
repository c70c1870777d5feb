"""float16/bfloat16 pow as torch's CPU kernels compute it, NaN bits included: the sqrt and
rsqrt kernels behind ``x ** 0.5`` and ``x ** -0.5``, rsqrt's scalar loop, and where SLEEF's
``powf`` (float16's vector steps) or the float32 conversions (bfloat16's) leave a NaN."""

from __future__ import annotations

import numpy as np

from .._dtypes import F32, bfloat16
from ._core import bf16_nans, like_layout, nan_bits, put_tail, scalar_loop

_BF16 = bfloat16.np
_F16 = np.dtype(np.float16)


def _rsqrt_tail(a):
    """float16/bfloat16 rsqrt in torch's scalar loop: ``1 / std::sqrt(x)`` in ``c10::Half``
    (``c10::BFloat16``) arithmetic rounds the square root to the dtype before dividing (its
    vector loop divides in float32 and rounds once)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (F32.type(1) / np.sqrt(a.astype(F32)).astype(a.dtype).astype(F32)).astype(a.dtype)


def _pow_half(a, e):
    """``a ** e`` for e = 0.5 or -0.5 as PyTorch's pow: its sqrt and rsqrt kernels, except for
    float16, which takes ``std::pow`` (so (-0.) ** 0.5 is 0. and (-inf) ** 0.5 is inf)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if a.dtype == _F16:
            if e == -0.5:
                return np.power(a.astype(F32), F32.type(e)).astype(a.dtype)
            # (NumPy's power takes sqrt for 0.5: C's pow differs at -0. and -inf)
            return np.where(a == -np.inf, np.inf, np.sqrt(a) + 0).astype(a.dtype)
        if e == 0.5:
            return np.sqrt(a)
        if a.dtype != _BF16:
            return np.reciprocal(np.sqrt(a))
        out = (F32.type(1) / np.sqrt(a.astype(F32))).astype(a.dtype)
        return put_tail(out, scalar_loop(a.shape, a), _rsqrt_tail, a)  # rsqrt's scalar loop


def _pow_nans(out: np.ndarray, a: np.ndarray, e, base=None) -> np.ndarray:
    """The NaN bits of torch's float16/bfloat16 pow with a number: bfloat16's kernels (sqrt's
    vml map for 0.5, else a loop with a scalar tail) convert a float32 NaN to 0xFFFF in their
    vector steps, 0x7FC0 in the scalar loop; float16's SLEEF ``powf`` gives all ones for a NaN
    operand and 0x7FC00000 for a NaN it makes (a negative base) in its vector steps (its
    scalar ``std::pow`` as NumPy's). ``base``: the number of ``base ** a``."""
    if out.dtype == _BF16:
        return bf16_nans(out, vector=True) if e == 0.5 and base is None else bf16_nans(out, a)
    nan = np.isnan(out)
    if not nan.any():
        return out
    res = np.array(out, order="C")
    tail = scalar_loop(a.shape, a)
    nan_bits(res, nan, tail, 0x7E00, None)
    nan_bits(res, nan & (np.isnan(a) | (base is not None and base != base)), tail, 0xFFFF,
             None)
    return like_layout(res, out)


def _pow_reduced(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """float16/bfloat16 ``a ** b`` of two tensors, in float32 and rounded once; float16's NaNs
    as SLEEF's ``powf`` leaves them in torch's vector steps (see ``_pow_nans``)."""
    with np.errstate(all="ignore"):
        out = np.power(a.astype(F32), b.astype(F32)).astype(a.dtype)
    if a.dtype == _BF16:
        return out  # (reduced_binary gives its NaNs torch's bits)
    nan = np.isnan(out)
    if not nan.any():
        return out
    res = np.array(out, order="C")
    tail = scalar_loop(res.shape, a, b)
    nan_bits(res, nan, tail, 0x7E00, None)
    nan_bits(res, nan & (np.isnan(a) | np.isnan(b)), tail, 0xFFFF, None)
    one = np.broadcast_to(a == 1, res.shape) & nan  # 1 ** (signaling NaN) is 1 in torch
    if one.any():
        nan_bits(res, one, None, 0x3C00, None)
    return like_layout(res, out)
