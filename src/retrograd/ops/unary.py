"""Unary math ops: exp, log, powers and roots, trigonometric and hyperbolic functions,
sigmoid and relu, abs and sign, rounding, clamp, logit and nan_to_num.

Each primitive is a Backward node class (its formula, in ``xp``: NumPy arrays or retrograd
tensors, see ``_array``) next to the function that computes the forward and attaches it;
``_unary`` is their shared forward.
"""

from __future__ import annotations

import numpy as np

from .. import _sleef
from .._dtypes import F32, FLOAT_CHARS, REDUCED, WIDE_CHARS, bfloat16, finfo, to_reduced
from .._tensor import Tensor
from ..autograd.graph import Node
from . import _array
from ._apply import apply, apply_binary, apply_unary, recording, unary_op
from ._base import not_implemented
from ._core import (
    Signatures,
    arg_error,
    as_tensor_arg,
    asarray,
    bf16_nans,
    check_broadcast,
    default_float,
    float_array,
    like_layout,
    nan_bits,
    operands,
    quiet_tail,
    scalar_loop,
    scalar_value,
    unit_rows,
    wrap,
)
from ._pow_reduced import _rsqrt_tail
from .arithmetic import _LN2, _result_dtype, pow
from .compare import TiedGradBackward, maxmin_reduced

# PyTorch's signatures, for its errors when arguments fit none (checked only after a failure).
_ABS = Signatures("abs", "Tensor input, *, Tensor? out = None")
_RELU = Signatures("relu", "Tensor input")
_CLAMP = Signatures("clamp", "Tensor input, Tensor? min = None, Tensor? max = None, *, Tensor? out "
                    "= None", "Tensor input, Number? min = None, Number? max = None, *, Tensor? "
                    "out = None")

# -- array kernels the declarations below use as their forward -------------------------------


def _sigmoid(a):
    # Stable for large |a|: exp never sees a large positive argument. With e = exp(-|a|) and
    # q = 1 / (1 + e), sigmoid is q for a >= 0 and e * q below. The choice is a blend,
    # q * [a >= 0] + e * q * [a < 0], exact because both terms are finite, and far faster than
    # np.where on float arrays.
    if a.ndim == 0:
        return _sigmoid(a.reshape(1)).reshape(())
    e = np.exp(-np.abs(a))
    q = np.add(e, 1, dtype=a.dtype)
    np.reciprocal(q, out=q)
    neg = a < 0
    e *= q
    e *= neg
    q *= ~neg
    q += e  # nan propagates through both terms
    return q


def _quiet(ufunc):
    def fn(a):
        with np.errstate(invalid="ignore", divide="ignore"):
            return ufunc(a)

    return fn


def _log10(a):
    with np.errstate(invalid="ignore", divide="ignore"):
        if a.dtype == np.float64:
            return np.log10(a)
        # NumPy's float32 log10 is off by an ulp at exact powers of ten (log10(100) > 2).
        return np.log10(a, dtype=np.float64).astype(a.dtype)


def _rsqrt(a):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.reciprocal(np.sqrt(a))


def _frac(v):
    with np.errstate(invalid="ignore"):
        return v - np.trunc(v)


def _sign(a):
    if a.dtype in REDUCED:  # in float32, as PyTorch (ml_dtypes' bfloat16 sign keeps -0.)
        return _sign(a.astype(F32)).astype(a.dtype)
    r = np.sign(a)
    if a.dtype.char in FLOAT_CHARS:
        nan = np.isnan(a)
        if nan.any():
            r = np.where(nan, 0, r).astype(a.dtype)  # PyTorch: the sign of NaN is 0
    return r


# -- primitives ----------------------------------------------------------------------------------


class ExpBackward0(Node):
    forward = np.exp
    reduced = staticmethod(_sleef.expf)  # float16/bfloat16: SLEEF's float32, as torch
    saves = "result"

    def backward(self, xp, g):
        return g * self.saved_output(xp.TENSORS)


class LogBackward0(Node):
    forward = np.log
    reduced = staticmethod(_sleef.logf)  # float16/bfloat16: SLEEF's float32, as torch
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / x


class SinBackward0(Node):
    forward = np.sin
    reduced = staticmethod(_sleef.sinf)  # float16/bfloat16: SLEEF's float32, as torch
    f16_nans = (0xFFFF, 0xFFFF)  # SLEEF ors in all ones (NaN or infinite input)
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * xp.cos(x)


class CosBackward0(Node):
    forward = np.cos
    f16_nans = (0xFFFF, 0xFFFF)  # float16 NaN bits (_core.reduced_unary): SLEEF's, as sin's
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * -xp.sin(x)


def _tanh_backward(g, y):
    return g - (g * y) * y  # g * (1 - y²) without a slow scalar-array op


def _tanh_backward_reduced(g, y):
    """float16/bfloat16 as torch's kernel: ``g * (1 - y * y)`` in float32, rounded once."""
    y = y.astype(F32)
    with np.errstate(over="ignore", invalid="ignore"):
        return (g.astype(F32) * (F32.type(1) - y * y)).astype(g.dtype)


def _tanh_backward_array(g, y):
    """The array twin a first-order backward calls: float16/bfloat16 as torch's kernel."""
    if g.dtype in REDUCED:
        return _tanh_backward_reduced(g, y)
    return g - (g * y) * y


class TanhBackward0(Node):
    forward = np.tanh
    f16_nans = (0xFFFF, None)  # as sin's
    saves = "result"

    def backward(self, xp, g):
        return xp.tanh_backward(g, self.saved_output(xp.TENSORS))


class TanhBackwardBackward0(Node):
    """tanh's backward ``g * (1 - y²)`` as one primitive (PyTorch's ``tanh_backward``), so that
    a recorded backward (``create_graph``, or forward mode's tangent rule for tanh, which is the
    same formula) is one node, as PyTorch's, rather than three (two products and a difference),
    each a pass over the data and a node to walk in the next backward."""

    forward = staticmethod(_tanh_backward)
    reduced = staticmethod(_tanh_backward_reduced)
    saves = ((1,), (0, 1))  # d/dg reads y; d/dy reads g and y

    def backward(self, xp, gg):
        g, y = self.saved(xp.TENSORS)  # g is saved only when y needs a gradient
        gg_g = xp.tanh_backward(gg, y) if self.next_functions[0][0] is not None else None
        gg_y = None if g is None else (gg * g) * (y * -2.0)
        return gg_g, gg_y


def tanh_backward(g: Tensor, y: Tensor) -> Tensor:
    """``g * (1 - y²)``: the gradient through tanh of ``g``, given tanh's result ``y``."""
    return apply_binary(TanhBackwardBackward0, _tanh_backward, g, y)


class SigmoidBackward0(Node):
    forward = staticmethod(_sigmoid)
    reduced = staticmethod(_sleef.sigmoidf)  # float16/bfloat16: SLEEF's float32, as torch
    saves = "result"

    def backward(self, xp, g):
        y = self.saved_output(xp.TENSORS)
        if not xp.TENSORS and y.dtype in REDUCED:  # torch's sigmoid_backward kernels:
            if y.dtype == bfloat16.np:  # bfloat16 in float32, rounded once;
                y = y.astype(F32)
                return (g.astype(F32) * (F32.type(1) - y) * y).astype(bfloat16.np)
            return (g * (1 - y)) * y  # float16 in its own arithmetic, step by step
        return g * (y - y * y)


_ZERO_ROWS: dict = {}


def _relu_array(a):
    # NOTE: np.maximum against a scalar runs an unvectorised loop, about twice as slow as against
    # an array; a large contiguous float array is compared, 1024 elements a row, with a cached
    # row of zeros.
    if a.size >= 4096 and a.dtype.kind == "f" and a.flags.c_contiguous:
        z = _ZERO_ROWS.get(a.dtype)
        if z is None:
            z = _ZERO_ROWS[a.dtype] = np.zeros(1024, a.dtype)
        out = np.empty_like(a)
        af, of = a.reshape(-1), out.reshape(-1)
        m = af.size - af.size % 1024
        np.maximum(af[:m].reshape(-1, 1024), z, out=of[:m].reshape(-1, 1024))
        if m < af.size:
            np.maximum(af[m:], z[:af.size - m], out=of[m:])
        return out
    return np.maximum(a, 0, dtype=a.dtype)


class ReluBackward0(Node):
    forward = staticmethod(_relu_array)
    # float16/bfloat16: ``x < 0 ? 0 : x``, as torch (-0.0 stays -0.0)
    reduced = staticmethod(lambda a: np.where(a < 0, F32.type(0), a))
    saves = "result"

    def backward(self, xp, g):
        y = self.saved_output(xp.TENSORS)
        # PyTorch's threshold_backward: ``y <= 0 ? 0 : g`` (a NaN passes the gradient)
        return xp.tie(ThresholdBackwardBackward0, xp.where(y <= 0, 0.0, g), y)


class ThresholdBackwardBackward0(TiedGradBackward):
    """relu's and threshold's first-order gradient, an op of the input too (``compare.tie``)."""


class AbsBackward0(Node):
    forward = np.abs
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * xp.sign(x)


class SqrtBackward0(Node):
    forward = np.sqrt
    saves = "result"

    def backward(self, xp, g):
        y = self.saved_output(xp.TENSORS)
        return g / (2 * y)



def exp(input) -> Tensor:  # noqa: A002
    """Elementwise ``e ** input``.

    >>> import retrograd as torch
    >>> torch.exp(torch.tensor([0.]))
    tensor([1.])
    """
    return apply_unary(ExpBackward0, input)


def log(input) -> Tensor:  # noqa: A002
    """Natural logarithm.

    >>> import retrograd as torch
    >>> torch.log(torch.tensor([1.]))
    tensor([0.])
    """
    return apply_unary(LogBackward0, input)


def sin(input) -> Tensor:  # noqa: A002
    """Sine.

    >>> import retrograd as torch
    >>> torch.sin(torch.tensor([0.]))
    tensor([0.])
    """
    return apply_unary(SinBackward0, input)


def cos(input) -> Tensor:  # noqa: A002
    """Cosine.

    >>> import retrograd as torch
    >>> torch.cos(torch.tensor([0.]))
    tensor([1.])
    """
    return apply_unary(CosBackward0, input)


def tanh(input) -> Tensor:  # noqa: A002
    """Hyperbolic tangent.

    >>> import retrograd as torch
    >>> torch.tanh(torch.tensor([0.]))
    tensor([0.])
    """
    return apply_unary(TanhBackward0, input)


def sigmoid(input) -> Tensor:  # noqa: A002
    """Logistic sigmoid, stable for large inputs of either sign.

    >>> import retrograd as torch
    >>> torch.sigmoid(torch.tensor([0.]))
    tensor([0.5000])
    """
    return apply_unary(SigmoidBackward0, input)


def relu(input) -> Tensor:  # noqa: A002
    """``max(input, 0)``; its gradient at 0 is 0, as in PyTorch.

    >>> import retrograd as torch
    >>> torch.relu(torch.tensor([-1., 2.]))
    tensor([0., 2.])
    """
    try:
        d = input._data
        if d.dtype.kind in "bu":  # (one test on the hot path) bool, and uint16/32/64
            if d.dtype.kind == "b":
                raise RuntimeError("Boolean inputs not supported for relu")
            if d.dtype.itemsize > 1:
                raise not_implemented("clamp_min_scalar_cpu", d.dtype)
        # float16/bfloat16 through the reduced path (ReluBackward0.reduced keeps -0.0)
        return apply_unary(ReluBackward0, input, None if d.dtype in REDUCED else d)
    except (AttributeError, TypeError):
        _RELU.check(input)
        raise


def abs(input) -> Tensor:  # noqa: A001, A002
    """Absolute value; its gradient at 0 is 0, as in PyTorch.

    >>> import retrograd as torch
    >>> torch.abs(torch.tensor([-1., 2.]))
    tensor([1., 2.])
    """
    try:
        d = input._data.dtype
        if d.kind in "bu" and (d.kind == "b" or d.itemsize > 1):  # bool, uint16/32/64
            raise not_implemented("abs_cpu", d)
        if d in REDUCED:  # (a NaN's bits: its kernels')
            return apply(AbsBackward0, quiet_tail(np.abs(input._data), input._data), input,
                         save=(input,))
        return apply_unary(AbsBackward0, input, input._data)
    except (AttributeError, TypeError):
        _ABS.check(input)
        raise


def sqrt(input) -> Tensor:  # noqa: A002
    """Square root.

    >>> import retrograd as torch
    >>> torch.sqrt(torch.tensor([4.]))
    tensor([2.])
    """
    return apply_unary(SqrtBackward0, input)


def sign(input) -> Tensor:  # noqa: A002
    """-1, 0 or 1 by sign; its gradient is zero.

    >>> import retrograd as torch
    >>> torch.sign(torch.tensor([-2., 0., 3.]))
    tensor([-1.,  0.,  1.])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("sign", "input", 1, input) from None
    if a.dtype.kind == "u" and a.dtype.itemsize > 1:
        raise not_implemented("sign_cpu", a.dtype)
    out = a.copy() if a.dtype.kind == "b" else _sign(a)
    return apply(SignBackward0, out, input)



class SignBackward0(Node):
    def backward(self, xp, g):
        return xp.zeros_like(g)


class ClampBackward1(Node):
    """clamp with number bounds."""

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        lo, hi = self._lo, self._hi
        if lo is not None and hi is not None:
            mask = (x >= lo) & (x <= hi)
        elif lo is not None:
            mask = x >= lo
        else:
            mask = x <= hi
        return xp.where(mask, g, 0.0)


class ClampBackward0(Node):
    """clamp with tensor bounds."""

    def backward(self, xp, g):
        x, lo, hi = self.saved(xp.TENSORS)
        nf = self.next_functions
        in_range = None
        below = above = None
        if lo is not None:
            below = x < lo
        if hi is not None:
            above = x > hi
            if lo is not None:
                # Where the bounds cross, PyTorch's result is max, and so its gradient.
                above = above | (lo > hi)
                below = below & ~(lo > hi)
        if below is not None and above is not None:
            in_range = ~(below | above)
        elif below is not None:
            in_range = ~below
        else:
            in_range = ~above
        gx = xp.where(in_range, g, 0.0) if nf[0][0] is not None else None
        glo = xp.where(below, g, 0.0) if lo is not None and nf[1][0] is not None else None
        ghi = xp.where(above, g, 0.0) if hi is not None and nf[2][0] is not None else None
        return gx, glo, ghi


def _clamp_kernel(lo, hi) -> str:
    """The clamp kernel PyTorch names for a dtype it lacks one for."""
    if isinstance(lo, Tensor) or isinstance(hi, Tensor):
        return "clamp_cpu"
    if lo is not None and hi is not None:
        return "clamp_scalar_cpu"
    return "clamp_min_scalar_cpu" if hi is None else "clamp_max_scalar_cpu"


def clamp(input, min=None, max=None) -> Tensor:  # noqa: A001, A002
    """Clip values into ``[min, max]``; bounds are numbers or tensors.

    >>> import retrograd as torch
    >>> torch.clamp(torch.tensor([-1., 0.5, 2.]), 0, 1)
    tensor([0.0000, 0.5000, 1.0000])
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented(_clamp_kernel(min, max), input._data.dtype)  # uint16/32/64
    try:
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        if isinstance(min, Tensor) or isinstance(max, Tensor):
            if not isinstance(min, (Tensor, type(None))) or \
                    not isinstance(max, (Tensor, type(None))):
                # a tensor and a number: the number overload, if the tensor is 0-dim (PyTorch
                # reads it as a number); else no overload takes both
                if any(isinstance(b, Tensor) and b._data.ndim for b in (min, max)):
                    raise TypeError("clamp: one bound a tensor, the other a number")
                min, max = (b.item() if isinstance(b, Tensor) else b for b in (min, max))
            else:
                return _clamp_tensor(input, min, max)
        a = input._data
        lo = scalar_value(min) if min is not None else None
        hi = scalar_value(max) if max is not None else None
        if (lo is None and min is not None) or (hi is None and max is not None):
            # A bound that is neither a number nor a tensor (clamp(min="0")): no signature matches.
            raise TypeError("clamp: a bound is neither a number nor a tensor")
        if a.dtype.char not in FLOAT_CHARS and (lo.__class__ is float or hi.__class__ is float):
            a = a.astype(default_float())
        out = a
        if a.dtype in REDUCED:  # the bounds round to the tensor's dtype, as in PyTorch
            lo = None if lo is None else np.asarray(lo, F32).astype(a.dtype)
            hi = None if hi is None else np.asarray(hi, F32).astype(a.dtype)
            out = _clamp_reduced(a, lo, hi)
            lo = None if lo is None else float(lo)
            hi = None if hi is None else float(hi)
        else:  # (the bound first: NumPy gives the second operand on a tie of +-0, as torch)
            if lo is not None:
                out = np.maximum(lo, out, dtype=a.dtype)
            if hi is not None:
                out = np.minimum(hi, out, dtype=a.dtype)
        if out is a:
            out = a.copy()
        # PyTorch propagates NaN through clamp.
        return apply(ClampBackward1, out, input, save=(input,), _lo=lo, _hi=hi)
    except (AttributeError, TypeError):
        _CLAMP.check(input, min, max)
        raise


clip = clamp


def _clamp_reduced(a: np.ndarray, lo, hi) -> np.ndarray:
    """torch's float16/bfloat16 clamp to number bounds (0-d arrays of the dtype, or None):
    both loops keep ``a`` unless it lies strictly outside (so -0. stays -0. at a bound of 0.,
    and NaN passes); a NaN keeps its bits in the scalar loop and goes through float32 in the
    vector steps (bfloat16: 0xFFFF)."""
    x = a.astype(F32)
    out = a
    if lo is not None:
        out = np.where(x < lo.astype(F32), lo, out)
    if hi is not None:
        out = np.where(hi.astype(F32) < out.astype(F32), hi, out)
    if out is a:
        return a.copy(order="K")
    nan = np.isnan(x)
    if nan.any():
        out = like_layout(nan_bits(np.array(out, order="C"), nan, scalar_loop(a.shape, a), None,
                                   None), out)
    return out


def _clamp_tensor(input, lo, hi):
    lo_t = as_tensor_arg(lo) if lo is not None else None
    hi_t = as_tensor_arg(hi) if hi is not None else None
    a = input._data
    rt = _result_dtype(input, lo_t, hi_t)
    out = a.astype(rt, copy=False)
    if rt in REDUCED:
        bounds = [t._data if t._data.dtype == rt else to_reduced(t._data, rt)
                  for t in (lo_t, hi_t) if t is not None]
        try:
            if len(bounds) == 2:
                res = _clamp2_reduced(out, *bounds)
            else:  # one bound: torch's maximum (minimum) kernel
                res = maxmin_reduced(out, bounds[0], hi_t is None)
        except ValueError:
            check_broadcast(*[t._data.shape for t in (input, lo_t, hi_t) if t is not None])
            raise
        return apply(ClampBackward0, res, input, lo_t, hi_t, save=(input, lo_t, hi_t))
    try:
        if lo_t is not None:
            out = np.maximum(out, lo_t._data.astype(rt, copy=False))
        if hi_t is not None:
            out = np.minimum(out, hi_t._data.astype(rt, copy=False))
    except ValueError:
        check_broadcast(*[t._data.shape for t in (input, lo_t, hi_t) if t is not None])
        raise
    out = asarray(out).astype(rt, copy=False)
    return apply(ClampBackward0, out, input, lo_t, hi_t, save=(input, lo_t, hi_t))


def _clamp2_reduced(a: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """torch's float16/bfloat16 clamp to two tensor bounds: ``minimum(maximum(a, lo), hi)`` in
    the vector steps (a tie gives the bound, a NaN all ones); in the scalar loop a quiet NaN
    where a bound is NaN, else ``a`` unless strictly outside (a NaN ``a`` keeps its bits)."""
    x, l32, h32 = a.astype(F32), lo.astype(F32), hi.astype(F32)
    with np.errstate(invalid="ignore"):
        t = np.where(np.isnan(x) | np.isnan(l32), np.nan, np.where(x > l32, x, l32))
        t = np.where(np.isnan(t) | np.isnan(h32), np.nan, np.where(t < h32, t, h32))
    proto = t
    out = np.array(t.astype(a.dtype), order="C")
    nan_bits(out, np.isnan(t), None, 0xFFFF, None)
    tail = scalar_loop(out.shape, a, lo, hi)
    if tail is not None:
        shape = out.shape
        v, lv, hv = (np.broadcast_to(u, shape).reshape(-1)[tail] for u in (a, lo, hi))
        r = np.where(v.astype(F32) < lv.astype(F32), lv, v)
        r = np.where(hv.astype(F32) < r.astype(F32), hv, r)
        bad = np.isnan(lv.astype(F32)) | np.isnan(hv.astype(F32))
        r.view(np.uint16)[bad] = 0x7FC0 if a.dtype == bfloat16.np else 0x7E00
        out.reshape(-1)[tail] = r
    return like_layout(out, proto)


_LN10 = float(np.log(10.0))


class Exp2Backward0(Node):
    forward = np.exp2
    saves = "result"

    def backward(self, xp, g):
        return g * (self.saved_output(xp.TENSORS) * _LN2)


class Expm1Backward0(Node):
    forward = np.expm1
    saves = "result"

    def backward(self, xp, g):
        return g * (self.saved_output(xp.TENSORS) + 1)


class Log2Backward0(Node):
    forward = staticmethod(_quiet(np.log2))
    f16_nans = (0x7E00, 0x7E00)  # SLEEF's log2f returns its NAN constant, a NaN input's too
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / (x * _LN2)


class Log10Backward0(Node):
    forward = staticmethod(_log10)
    f16_nans = (0x7E00, 0x7E00)  # as log2's
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / (x * _LN10)


class Log1PBackward0(Node):
    forward = staticmethod(_quiet(np.log1p))
    f16_nans = (0x7E00, 0xFFFF)  # SLEEF's NAN for a NaN input, all ones below -1
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / (x + 1)


class RsqrtBackward0(Node):
    forward = staticmethod(_rsqrt)
    reduced_tail = staticmethod(_rsqrt_tail)
    saves = "result"

    def backward(self, xp, g):
        y = self.saved_output(xp.TENSORS)
        return g * (y * y * y * -0.5)


class TanBackward0(Node):
    forward = np.tan
    f16_nans = (0xFFFF, 0xFFFF)  # as sin's
    saves = "result"

    def backward(self, xp, g):
        y = self.saved_output(xp.TENSORS)
        return g * (y * y + 1)


def _nan_signs(out: np.ndarray, x: np.ndarray, made: np.ndarray, keep_sign: bool) -> np.ndarray:
    """float32 ``out`` of ``x`` with torch's float16 NaN bits (its kernels' for asin, acos):
    a NaN made from a number (out of the domain) as ``made`` (each value's sign bit), a NaN
    input passed on quieted (its sign cleared unless ``keep_sign``)."""
    bits = out.view(np.uint32)
    new = np.isnan(out) & ~np.isnan(x)
    bits[new] = np.where(np.broadcast_to(made, x.shape)[new], 0xFFC00000, 0x7FC00000)
    nan = np.isnan(x)
    xb = x.view(np.uint32)[nan] | 0x00400000
    bits[nan] = xb if keep_sign else xb & 0x7FFFFFFF
    return out


def _asin_reduced(x: np.ndarray) -> np.ndarray:
    """SLEEF's float32 asin (torch's float16/bfloat16 kernel); asin(2) is -NaN there."""
    return _nan_signs(np.asarray(_sleef.asinf(x), F32).copy(), x, ~np.signbit(x), True)


def _acos_reduced(x: np.ndarray) -> np.ndarray:
    """float32 acos (torch's float16/bfloat16 kernel): -NaN out of the domain."""
    with np.errstate(invalid="ignore"):
        return _nan_signs(np.arccos(x), x, np.True_, False)


class AsinBackward0(Node):
    forward = staticmethod(_quiet(np.arcsin))
    reduced = staticmethod(_asin_reduced)  # float16/bfloat16: SLEEF's float32, as torch
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / xp.sqrt(1 - x * x)


class AcosBackward0(Node):
    forward = staticmethod(_quiet(np.arccos))
    reduced = staticmethod(_acos_reduced)
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return -g / xp.sqrt(1 - x * x)


class AtanBackward0(Node):
    forward = np.arctan
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / (x * x + 1)


def _libm_sinh(v):
    with np.errstate(over="ignore"):
        return np.sinh(v)


def _libm_cosh(v):
    with np.errstate(over="ignore"):
        return np.cosh(v)


class SinhBackward0(Node):
    forward = np.sinh
    reduced = staticmethod(_sleef.sinhf)  # float16/bfloat16: SLEEF's float32, as torch
    # its scalar tail: libm's sinhf, finite at bfloat16's +-89 where SLEEF's overflows
    reduced_tail = staticmethod(lambda a: _sleef.lookup(_libm_sinh, a))
    f16_nans = (0xFFFF, None)  # SLEEF's vector steps (the tail passes a NaN on, quieted)
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * xp.cosh(x)


class CoshBackward0(Node):
    forward = np.cosh
    reduced = staticmethod(_sleef.coshf)  # float16/bfloat16: SLEEF's float32, as torch
    reduced_tail = staticmethod(lambda a: _sleef.lookup(_libm_cosh, a))  # as SinhBackward0's
    f16_nans = (0xFFFF, None)
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * xp.sinh(x)


class AsinhBackward0(Node):
    forward = np.arcsinh
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / xp.sqrt(x * x + 1)


class AcoshBackward0(Node):
    forward = staticmethod(_quiet(np.arccosh))
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / xp.sqrt(x * x - 1)


class AtanhBackward0(Node):
    forward = staticmethod(_quiet(np.arctanh))
    # SLEEF's all ones, its sign flipped by a negative input out of the domain (vmulsign);
    # the scalar tail: libm's, as NumPy's (a NaN passed on quieted, -NaN out of the domain)
    f16_nans = (0xFFFF, (0xFFFF, 0x7FFF))
    reduced_tail = staticmethod(lambda a: _sleef.lookup(AtanhBackward0.forward, a))
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / (1 - x * x)


class LogitBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        r = g / (x * (1 - x))
        # Outside [eps, 1 - eps] the clamped input does not move: 0; without eps, outside
        # [0, 1] the function is undefined: NaN (PyTorch's choices).
        return xp.where(self._outside, self._fill, r)


class FracBackward0(Node):
    forward = staticmethod(_frac)

    def backward(self, xp, g):
        return g


class _ZeroGrad(Node):
    """Piecewise-constant ops (and samplers, ``_random``): the gradient is zero almost
    everywhere, and PyTorch says 0: one zero per input, of its recorded shape and dtype."""

    def backward(self, xp, g):
        if len(self._meta) == 1:
            return xp.zeros_meta(self._meta[0])
        return tuple(
            None if e[0] is None else xp.zeros_meta(m)
            for e, m in zip(self.next_functions, self._meta)
        )


class FloorBackward0(_ZeroGrad):
    forward = np.floor


class CeilBackward0(_ZeroGrad):
    forward = np.ceil


class TruncBackward0(_ZeroGrad):
    forward = np.trunc


class RoundBackward0(_ZeroGrad):
    forward = np.rint


class RoundBackward1(_ZeroGrad):
    """round with ``decimals``."""


class SgnBackward0(_ZeroGrad):
    """Keeps its input and result, as PyTorch's node does (its complex formula reads them;
    they are version-checked in backward all the same)."""

    forward = staticmethod(_sign)

    def backward(self, xp, g):
        self.saved(False)
        self.saved_output(False)
        return xp.zeros_meta(self._meta[0])


class NanToNumBackward0(Node):
    def backward(self, xp, g):
        self.saved(False)  # (version-checks the kept input, as PyTorch's node does)
        return xp.where(self._finite, g, 0.0)


def exp2(input) -> Tensor:  # noqa: A002
    """``2 ** input``.

    >>> import retrograd as torch
    >>> torch.exp2(torch.tensor([0., 3.]))
    tensor([1., 8.])
    """
    return apply_unary(Exp2Backward0, input)


def expm1(input) -> Tensor:  # noqa: A002
    """``exp(input) - 1``, accurate near 0.

    >>> import retrograd as torch
    >>> torch.expm1(torch.tensor([0.]))
    tensor([0.])
    """
    return apply_unary(Expm1Backward0, input)


def log2(input) -> Tensor:  # noqa: A002
    """Base-2 logarithm.

    >>> import retrograd as torch
    >>> torch.log2(torch.tensor([8.]))
    tensor([3.])
    """
    return apply_unary(Log2Backward0, input)


def log10(input) -> Tensor:  # noqa: A002
    """Base-10 logarithm.

    >>> import retrograd as torch
    >>> torch.log10(torch.tensor([100.]))
    tensor([2.])
    """
    return apply_unary(Log10Backward0, input)



def log1p(input) -> Tensor:  # noqa: A002
    """``log(1 + input)``, accurate near 0.

    >>> import retrograd as torch
    >>> torch.log1p(torch.tensor([0.]))
    tensor([0.])
    """
    return apply_unary(Log1PBackward0, input)



def rsqrt(input) -> Tensor:  # noqa: A002
    """``1 / sqrt(input)``.

    >>> import retrograd as torch
    >>> torch.rsqrt(torch.tensor([4.]))
    tensor([0.5000])
    """
    return apply_unary(RsqrtBackward0, input)


def square(input) -> Tensor:  # noqa: A002
    """``input ** 2`` (PyTorch records it as a pow: ``PowBackward0``; bools square to int64).

    >>> import retrograd as torch
    >>> torch.square(torch.tensor([3., -2.]))
    tensor([9., 4.])
    """
    return pow(input, 2)


def _unary_doc(name, desc, arg, res):
    return f"""{desc}

    >>> import retrograd as torch
    >>> torch.{name}(torch.tensor([{arg}]))
    tensor([{res}])
    """


tan = unary_op(TanBackward0, "tan", _unary_doc("tan", "Tangent.", "0.", "0."))
asin = unary_op(AsinBackward0, "asin", _unary_doc("asin", "Inverse sine.", "0.", "0."))
acos = unary_op(AcosBackward0, "acos", _unary_doc("acos", "Inverse cosine.", "1.", "0."))
atan = unary_op(AtanBackward0, "atan", _unary_doc("atan", "Inverse tangent.", "0.", "0."))
sinh = unary_op(SinhBackward0, "sinh", _unary_doc("sinh", "Hyperbolic sine.", "0.", "0."))
cosh = unary_op(CoshBackward0, "cosh", _unary_doc("cosh", "Hyperbolic cosine.", "0.", "1."))
asinh = unary_op(AsinhBackward0, "asinh",
                 _unary_doc("asinh", "Inverse hyperbolic sine.", "0.", "0."))
acosh = unary_op(AcoshBackward0, "acosh",
                 _unary_doc("acosh", "Inverse hyperbolic cosine (NaN below 1).", "1.", "0."))
atanh = unary_op(AtanhBackward0, "atanh",
                 _unary_doc("atanh", "Inverse hyperbolic tangent.", "0.", "0."))
# Made in _apply, so doctest finds their examples through this table.
__test__ = {f.__name__: f for f in (tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh)}


_DEG2RAD = float(np.pi / 180.0)


class Deg2RadBackward0(Node):
    """deg2rad(x) = x * pi / 180: the gradient is the same constant factor."""

    forward = staticmethod(lambda a: a * _DEG2RAD)

    def backward(self, xp, g):
        return g * _DEG2RAD


deg2rad = unary_op(Deg2RadBackward0, "deg2rad", """Degrees to radians.

    >>> import retrograd as torch
    >>> torch.deg2rad(torch.tensor([180., 90.]))
    tensor([3.1416, 1.5708])
    """)


class Rad2DegBackward0(Node):
    """rad2deg(x) = x * 180 / pi."""

    forward = staticmethod(lambda a: a * (1.0 / _DEG2RAD))

    def backward(self, xp, g):
        return g * (1.0 / _DEG2RAD)


rad2deg = unary_op(Rad2DegBackward0, "rad2deg", """Radians to degrees.

    >>> import retrograd as torch
    >>> torch.rad2deg(torch.tensor([3.141592653589793]))
    tensor([180.])
    """)


def _logit_nans(out: np.ndarray, a: np.ndarray) -> np.ndarray:
    """float16/bfloat16 logit's NaN bits as torch's kernel leaves them: where the input's rows
    step by one element, vector steps throughout, tails included (bfloat16: 0xFFFF; float16:
    SLEEF's logf, 0x7FC00000); otherwise its scalar loop (0x7FC0; float16: libm's, as
    NumPy's)."""
    nan = np.isnan(out)
    if not nan.any():
        return out
    vector = unit_rows(a)
    if out.dtype == bfloat16.np:
        return bf16_nans(out, vector=True) if vector else bf16_nans(out)
    if not vector:
        return out
    return like_layout(nan_bits(np.array(out, order="C"), nan, None, 0x7E00, None), out)


def logit(input, eps=None) -> Tensor:  # noqa: A002
    """``log(p / (1 - p))``; with ``eps``, ``p`` is first clamped to ``[eps, 1 - eps]``.

    >>> import retrograd as torch
    >>> torch.logit(torch.tensor([0.5, 0.]), eps=0.25)
    tensor([ 0.0000, -1.0986])
    """
    a = float_array(input)
    if eps is None:
        z = a
    else:
        z = np.clip(a, eps, 1 - eps).astype(a.dtype, copy=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(z / (1 - z))
    if out.dtype in REDUCED:
        out = _logit_nans(out, a)
    if not recording(input):
        return apply(LogitBackward0, out, input)
    if eps is None:
        outside, fill = (a < 0) | (a > 1), float("nan")
    else:
        outside, fill = (a < eps) | (a > 1 - eps), 0.0
    return apply(LogitBackward0, out, input, save=(input,), _outside=outside, _fill=fill,
                 _eps=eps)


def _rounding(name, cls, kernel):
    def op(input) -> Tensor:  # noqa: A002
        try:
            a = input._data
        except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
            raise arg_error(name, "input", 1, input) from None
        kind = a.dtype.kind
        if kind == "b":
            raise not_implemented(kernel, a.dtype)
        if a.dtype.char not in FLOAT_CHARS:
            return wrap(a.copy())  # integers are already whole
        return apply_unary(cls, input)

    op.__name__ = name
    op.__qualname__ = name
    return op


floor = _rounding("floor", FloorBackward0, "floor_vml_cpu")
ceil = _rounding("ceil", CeilBackward0, "ceil_vml_cpu")
trunc = _rounding("trunc", TruncBackward0, "trunc_vml_cpu")
_round0 = _rounding("round", RoundBackward0, "round_vml_cpu")
floor.__doc__ = _unary_doc("floor", "Round down; the gradient is zero.", "-1.5, 1.5",
                           "-2.,  1.")
ceil.__doc__ = _unary_doc("ceil", "Round up; the gradient is zero.", "-1.5, 1.5", "-1.,  2.")
trunc.__doc__ = _unary_doc("trunc", "Round toward zero; the gradient is zero.", "-1.5, 1.5",
                           "-1.,  1.")
fix = trunc


def round(input, *, decimals: int | None = None) -> Tensor:  # noqa: A001, A002
    """Round half to even; with ``decimals``, to that many decimal places.

    >>> import retrograd as torch
    >>> torch.round(torch.tensor([0.5, 1.5, 1.26]), decimals=1)
    tensor([0.5000, 1.5000, 1.3000])
    """
    if decimals is None:
        return _round0(input)  # PyTorch's round.decimals overload is another op: RoundBackward1
    if not isinstance(decimals, int):
        raise TypeError(f"round(): argument 'decimals' must be int, not {type(decimals).__name__}")
    return _round_decimals(input, decimals)


def _round_decimals(input, decimals):
    a = input._data
    if a.dtype.char not in FLOAT_CHARS:
        raise not_implemented("round_cpu", a.dtype)
    # PyTorch scales in the op's math dtype (float32 for float16/bfloat16, rounded once):
    # x * 10**d, rint, / 10**d (or the reverse).
    rd = a.dtype if a.dtype in REDUCED else None
    if rd is not None:
        a = a.astype(F32)
    ten = np.array(10.0 ** (decimals if decimals > 0 else -decimals), dtype=a.dtype)
    out = np.rint(a * ten) / ten if decimals > 0 else np.rint(a / ten) * ten
    if rd is not None:
        out = out.astype(rd)
        if rd == bfloat16.np:
            out = bf16_nans(out)  # (a scalar kernel: 0x7FC0)
    return apply(RoundBackward1, out, input)


def frac(input) -> Tensor:  # noqa: A002
    """``input - trunc(input)``, keeping the sign.

    >>> import retrograd as torch
    >>> torch.frac(torch.tensor([-1.5, 2.25]))
    tensor([-0.5000,  0.2500])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("frac", "input", 1, input) from None
    if a.dtype.char not in FLOAT_CHARS:
        raise not_implemented("frac_cpu", a.dtype)
    return apply_unary(FracBackward0, input)



def sgn(input) -> Tensor:  # noqa: A002
    """The sign, for real tensors the same as ``sign`` (its own grad_fn, ``SgnBackward0``).

    >>> import retrograd as torch
    >>> torch.sgn(torch.tensor([-2., 0., 3.]))
    tensor([-1.,  0.,  1.])
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("sign_cpu", input._data.dtype)  # uint16/32/64
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("sgn", "input", 1, input) from None
    if a.dtype.kind == "b":
        return wrap(a.copy())
    return apply(SgnBackward0, None, input, save=(input,), save_out=True)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None) -> Tensor:  # noqa: A002
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0 and the
    dtype's largest and lowest finite values).

    >>> import retrograd as torch
    >>> torch.nan_to_num(torch.tensor([float('nan'), 1.]), nan=-1.)
    tensor([-1.,  1.])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("nan_to_num", "input", 1, input) from None
    if a.dtype.char not in FLOAT_CHARS:
        return wrap(a.copy())
    if a.dtype in REDUCED:  # NumPy's nan_to_num does not know 16-bit floats: through float32
        from_max = finfo(a.dtype).max
        out = np.nan_to_num(a.astype(F32), copy=False, nan=nan,
                            posinf=from_max if posinf is None else posinf,
                            neginf=-from_max if neginf is None else neginf)
        out = to_reduced(out, a.dtype)
    else:
        out = np.nan_to_num(a, copy=True, nan=nan, posinf=posinf, neginf=neginf)
    return apply(NanToNumBackward0, out, input, save=(input,),
                 _finite=np.isfinite(a) if recording(input) else None)


def positive(input) -> Tensor:  # noqa: A002
    """``+input``: the tensor itself.

    >>> import retrograd as torch
    >>> torch.positive(torch.tensor([-1.]))
    tensor([-1.])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("positive", "input", 1, input) from None
    if a.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


class ClampMinBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return xp.where(x >= self._bound, g, 0.0)


class ClampMaxBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return xp.where(x <= self._bound, g, 0.0)


class ClampMinBackward1(Node):
    saves = ((0, 1), (0, 1))
    reduced = staticmethod(maxmin_reduced)  # torch's maximum kernel

    def backward(self, xp, g):
        x, b = self.saved(xp.TENSORS)
        nf = self.next_functions
        keep = x >= b
        gx = xp.where(keep, g, 0.0) if nf[0][0] is not None else None
        gb = xp.where(keep, 0.0, g) if nf[1][0] is not None else None
        return gx, gb


class ClampMaxBackward1(Node):
    saves = ((0, 1), (0, 1))
    reduced = staticmethod(lambda a, b: maxmin_reduced(a, b, False))  # torch's minimum

    def backward(self, xp, g):
        x, b = self.saved(xp.TENSORS)
        nf = self.next_functions
        keep = x <= b
        gx = xp.where(keep, g, 0.0) if nf[0][0] is not None else None
        gb = xp.where(keep, 0.0, g) if nf[1][0] is not None else None
        return gx, gb


_CLAMP_SIDE = {
    np.maximum: Signatures("clamp_min", "Tensor input, Tensor min, *, Tensor? out = None",
                           "Tensor input, Number min, *, Tensor? out = None"),
    np.minimum: Signatures("clamp_max", "Tensor input, Tensor max, *, Tensor? out = None",
                           "Tensor input, Number max, *, Tensor? out = None"),
}


def _clamp_side(input, bound, ufunc, cls0, cls1):
    if not isinstance(input, Tensor):  # (a number first fits no signature)
        _CLAMP_SIDE[ufunc].check(input, bound)
    if isinstance(bound, Tensor):
        return apply_binary(cls1, ufunc, input, bound)
    ad, bd = operands(input, bound)
    if ad.dtype in REDUCED:
        lo, hi = (bd, None) if ufunc is np.maximum else (None, bd)
        out = _clamp_reduced(ad, lo, hi)
    else:  # (the bound first: NumPy gives the second operand on a tie of +-0, as torch)
        out = asarray(ufunc(bd, ad)).astype(ad.dtype, copy=False)
    return apply(cls0, out, input, save=(input,), _bound=bd, _g=bound)


def clamp_min(input, min) -> Tensor:  # noqa: A001, A002
    """``max(input, min)``; the gradient flows where ``input >= min``.

    >>> import retrograd as torch
    >>> torch.clamp_min(torch.tensor([-1., 2.]), 0.5)
    tensor([0.5000, 2.0000])
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("clamp_min_scalar_cpu", input._data.dtype)  # uint16/32/64
    return _clamp_side(input, min, np.maximum, ClampMinBackward0, ClampMinBackward1)


def clamp_max(input, max) -> Tensor:  # noqa: A001, A002
    """``min(input, max)``; the gradient flows where ``input <= max``.

    >>> import retrograd as torch
    >>> torch.clamp_max(torch.tensor([-1., 2.]), 0.5)
    tensor([-1.0000,  0.5000])
    """
    return _clamp_side(input, max, np.minimum, ClampMaxBackward0, ClampMaxBackward1)


class _InplaceNotDifferentiable(Node):
    """PyTorch's in-place acosh_/asinh_/atanh_: recorded, but with no derivative."""

    def backward(self, xp, g):
        raise NotImplementedError(
            f"the derivative for 'inplace version of {self._op}' is not implemented."
        )


class AcoshBackward1(_InplaceNotDifferentiable):
    _op = "acosh"


class AsinhBackward1(_InplaceNotDifferentiable):
    _op = "asinh"


class AtanhBackward1(_InplaceNotDifferentiable):
    _op = "atanh"


def _inplace_no_grad(cls, fn):
    name = cls._op

    def op(input) -> Tensor:  # noqa: A002
        out = fn(input)
        if out._grad_fn is None:
            return out
        return apply(cls, out._data, input)

    op.__name__ = name + "_"
    return op

# Array twins the backward formulas call: the primitives' forwards.
_array.register(exp=ExpBackward0.forward, log=LogBackward0.forward, sin=SinBackward0.forward,
                cos=CosBackward0.forward, tanh=TanhBackward0.forward, sqrt=SqrtBackward0.forward,
                abs=AbsBackward0.forward, tanh_backward=_tanh_backward_array)

absolute = abs
arcsin = asin
arccos = acos
arctan = atan
arcsinh = asinh
arccosh = acosh
arctanh = atanh

__all__ = [
    "exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "absolute", "sqrt", "sign",
    "clamp", "clip", "sgn", "exp2", "expm1", "log2", "log10", "log1p", "rsqrt", "square", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin", "arccos",
    "arctan", "arcsinh", "arccosh", "arctanh", "logit", "floor", "ceil", "round", "trunc", "fix",
    "frac", "nan_to_num", "positive", "clamp_min", "clamp_max", "deg2rad", "rad2deg",
]
XP = ["tanh_backward"]

METHODS = {name: globals()[name] for name in __all__}
INPLACE = {name + "_": globals()[name] for name in __all__ if name != "positive"}
__test__.update(deg2rad=deg2rad, rad2deg=rad2deg)
INPLACE.update({
    "acosh_": _inplace_no_grad(AcoshBackward1, acosh),
    "asinh_": _inplace_no_grad(AsinhBackward1, asinh),
    "atanh_": _inplace_no_grad(AtanhBackward1, atanh),
    "arccosh_": _inplace_no_grad(AcoshBackward1, acosh),
    "arcsinh_": _inplace_no_grad(AsinhBackward1, asinh),
    "arctanh_": _inplace_no_grad(AtanhBackward1, atanh),
})
