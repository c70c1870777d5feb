"""add and sub's ``alpha``: PyTorch's alpha_check on the result dtype, and the kernel of
``x + alpha * y`` (fused in float32 as PyTorch's CPU add kernel; its scalar tail for
float16/bfloat16 results). Split from ``arithmetic`` (its size), which imports these.
"""

from __future__ import annotations

import numpy as np

from .._dtypes import F32, FROM_NP, REDUCED, binary_result
from .._rng_math import fma32
from .._tensor import Tensor
from ._core import put_tail, scalar_loop


def _check_alpha(input, other, alpha):  # noqa: A002
    """PyTorch's alpha_check on the result dtype; an integer alpha for an integer result
    in that dtype, wrapping as its arithmetic does (``sub`` of uint8 with alpha 2)."""
    if isinstance(other, Tensor):
        rt = binary_result(input.dtype, input._data.ndim == 0, other.dtype, other._data.ndim == 0)
    elif other.__class__ in (bool, int, float):
        rt = binary_result(input.dtype, input._data.ndim == 0, other.__class__, True)
    else:
        return alpha
    if alpha.__class__ is bool or isinstance(alpha, np.bool_):
        if rt.scalar_name != "Bool":
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif not rt.is_floating_point and isinstance(alpha, (float, np.floating)):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number.")
    if not rt.is_floating_point and alpha.__class__ is int:
        return np.asarray(alpha).astype(rt.np)  # (a bool result: alpha as a bool)
    return alpha


def _alpha_fwd(a, b, alpha):
    """``x + alpha * y``; with a float16/bfloat16 result, as PyTorch's kernel (``_fused``).
    A Python number ``y`` (a wrapped scalar) is no exception: PyTorch converts it to the
    tensor's dtype before the kernel, which then runs as for two tensors of that dtype."""
    ad = a._data
    if isinstance(b, Tensor):
        bd = b._data
        if ad.dtype not in REDUCED and bd.dtype not in REDUCED:
            return lambda x, y: x + alpha * y
        rd = ad.dtype if ad.dtype == bd.dtype else \
            binary_result(FROM_NP[ad.dtype], ad.ndim == 0, FROM_NP[bd.dtype], bd.ndim == 0).np
    elif ad.dtype not in REDUCED:
        return lambda x, y: x + alpha * y
    else:
        rd = ad.dtype if b.__class__ in (int, float, bool) else None
    if rd in REDUCED:
        w = _reduced_alpha(alpha, rd)
    else:  # a float32 result of a float16/bfloat16 operand: fused in float32, no tail
        w, rd = F32.type(alpha), None

    src = (ad, bd if isinstance(b, Tensor) else np.zeros(()))  # the layouts torch's loop sees

    def fwd(x, y):
        if x.dtype != F32 or np.asarray(y).dtype != F32:
            return x + alpha * y
        return _fused(x, y, w, rd, src)

    return fwd


def _reduced_alpha(alpha, rd) -> np.float32:
    """``alpha`` as PyTorch's add kernel holds it for dtype ``rd``: ``alpha.to<scalar_t>()``
    (through float32), then widened to float32 for the arithmetic."""
    return F32.type(np.asarray(alpha, F32).astype(rd))


def _fused(x, y, w, rd, src=None):
    """``x + w * y`` on float32 arrays as PyTorch's CPU add kernel computes it for dtype
    ``rd`` (aten/src/ATen/native/ufunc/add.h): the vectorised part is ``fmadd(y, w, x)``, one
    rounding in float32 (which also keeps ``w * y`` from overflowing on its own); for a
    float16/bfloat16 ``rd`` the scalar tail of torch's loop (``scalar_loop``: the last
    ``n % 32`` elements, of each row where operands broadcast; all of them for operands
    strided otherwise, ``src`` being the operands as laid out) rounds ``w * y`` to the dtype
    before the sum, as ``c10::Half``/``c10::BFloat16`` arithmetic does. The caller rounds the
    result to ``rd``."""
    with np.errstate(over="ignore"):  # inf, as in PyTorch, without NumPy's warning
        out = fma32(y, w, x)
        if rd is not None:
            tail = scalar_loop(out.shape, *(src or (x, y)))
            out = put_tail(out, tail, lambda xs, ys: xs + (w * ys).astype(rd).astype(F32), x, y)
    return out
