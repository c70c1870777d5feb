"""Unary math ops: exp, log, powers and roots, trigonometric and hyperbolic functions,
sigmoid and relu, abs and sign, rounding, clamp, logit and nan_to_num.

Each primitive is a Backward node class (its formula, in ``xp``: NumPy arrays or retrograd
tensors, see ``_array``) next to the function that computes the forward and attaches it;
``_unary`` is their shared forward.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, make
from ..autograd.grad_mode import state
from ..autograd.graph import Node
from . import _array
from ._apply import apply, apply_binary
from ._base import not_implemented
from ._core import (
    as_tensor_arg,
    asarray,
    default_float,
    float_array,
    ndarray,
    operands,
    record,
    scalar_value,
    wrap,
)
from .arithmetic import _LN2, _result_dtype, pow


class ExpBackward0(Node):
    def backward(self, xp, g):
        return g * self.saved_output(xp.TENSORS)


class LogBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / x


class SinBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * xp.cos(x)


class CosBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * -xp.sin(x)


class TanhBackward0(Node):
    def backward(self, xp, g):
        y = self.saved_output(xp.TENSORS)
        return g - (g * y) * y  # g * (1 - y²) without a slow scalar-array op


class SigmoidBackward0(Node):
    def backward(self, xp, g):
        y = self.saved_output(xp.TENSORS)
        return g * (y - y * y)


class ReluBackward0(Node):
    def backward(self, xp, g):
        y = self.saved_output(xp.TENSORS)
        return xp.where(y > 0, g, 0.0)


class AbsBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * xp.sign(x)


class SqrtBackward0(Node):
    def backward(self, xp, g):
        y = self.saved_output(xp.TENSORS)
        return g / (2 * y)


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


def _unary(cls, fn, x, save_input=False, save_output=False, float_op=True):
    """Forward of a unary op; attaches ``cls`` when recording."""
    a = float_array(x) if float_op else x._data
    out = fn(a)
    if out.__class__ is not ndarray:
        out = asarray(out)
    if state.grad_enabled and (x._rg or (x._view is not None and x.requires_grad)):
        node = cls()
        if a.dtype != x._data.dtype:
            node._dtypes = (x._data.dtype,)
        if save_input:
            node.save(x)
        r = record(node, out, x)
        if save_output:
            node.save_output(r)
        return r
    return make(out)


def exp(input) -> Tensor:  # noqa: A002
    """Elementwise ``e ** input``.

    >>> import retrograd as torch
    >>> torch.exp(torch.tensor([0.]))
    tensor([1.])
    """
    return _unary(ExpBackward0, np.exp, input, save_output=True)


def log(input) -> Tensor:  # noqa: A002
    """Natural logarithm.

    >>> import retrograd as torch
    >>> torch.log(torch.tensor([1.]))
    tensor([0.])
    """
    return _unary(LogBackward0, np.log, input, save_input=True)


def sin(input) -> Tensor:  # noqa: A002
    """Sine.

    >>> import retrograd as torch
    >>> torch.sin(torch.tensor([0.]))
    tensor([0.])
    """
    return _unary(SinBackward0, np.sin, input, save_input=True)


def cos(input) -> Tensor:  # noqa: A002
    """Cosine.

    >>> import retrograd as torch
    >>> torch.cos(torch.tensor([0.]))
    tensor([1.])
    """
    return _unary(CosBackward0, np.cos, input, save_input=True)


def tanh(input) -> Tensor:  # noqa: A002
    """Hyperbolic tangent.

    >>> import retrograd as torch
    >>> torch.tanh(torch.tensor([0.]))
    tensor([0.])
    """
    return _unary(TanhBackward0, np.tanh, input, save_output=True)


def sigmoid(input) -> Tensor:  # noqa: A002
    """Logistic sigmoid, stable for large inputs of either sign.

    >>> import retrograd as torch
    >>> torch.sigmoid(torch.tensor([0.]))
    tensor([0.5000])
    """
    return _unary(SigmoidBackward0, _sigmoid, input, save_output=True)


def relu(input) -> Tensor:  # noqa: A002
    """``max(input, 0)``; its gradient at 0 is 0, as in PyTorch.

    >>> import retrograd as torch
    >>> torch.relu(torch.tensor([-1., 2.]))
    tensor([0., 2.])
    """
    if input._data.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    return _unary(ReluBackward0, lambda a: np.maximum(a, 0, dtype=a.dtype), input,
                  save_output=True, float_op=False)


def abs(input) -> Tensor:  # noqa: A001, A002
    """Absolute value; its gradient at 0 is 0, as in PyTorch.

    >>> import retrograd as torch
    >>> torch.abs(torch.tensor([-1., 2.]))
    tensor([1., 2.])
    """
    if input._data.dtype.kind == "b":
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return _unary(AbsBackward0, np.abs, input, save_input=True, float_op=False)


def sqrt(input) -> Tensor:  # noqa: A002
    """Square root.

    >>> import retrograd as torch
    >>> torch.sqrt(torch.tensor([4.]))
    tensor([2.])
    """
    return _unary(SqrtBackward0, np.sqrt, input, save_output=True)


def sign(input) -> Tensor:  # noqa: A002
    """-1, 0 or 1 by sign; its gradient is zero.

    >>> import retrograd as torch
    >>> torch.sign(torch.tensor([-2., 0., 3.]))
    tensor([-1.,  0.,  1.])
    """
    a = input._data
    out = a.copy() if a.dtype.kind == "b" else _sign(a)
    if state.grad_enabled and input.requires_grad:
        return record(SignBackward0(), out, input)
    return wrap(out)


def _sign(a):
    r = np.sign(a)
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        if nan.any():
            r = np.where(nan, 0, r).astype(a.dtype)  # PyTorch: the sign of NaN is 0
    return r


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


def clamp(input, min=None, max=None) -> Tensor:  # noqa: A001, A002
    """Clip values into ``[min, max]``; bounds are numbers or tensors.

    >>> import retrograd as torch
    >>> torch.clamp(torch.tensor([-1., 0.5, 2.]), 0, 1)
    tensor([0.0000, 0.5000, 1.0000])
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor(input, min, max)
    a = input._data
    lo = scalar_value(min) if min is not None else None
    hi = scalar_value(max) if max is not None else None
    if a.dtype.kind != "f" and (lo.__class__ is float or hi.__class__ is float):
        a = a.astype(default_float())
    out = a
    if lo is not None:
        out = np.maximum(out, lo, dtype=a.dtype)
    if hi is not None:
        out = np.minimum(out, hi, dtype=a.dtype)
    if out is a:
        out = a.copy()
    # PyTorch propagates NaN through clamp.
    if state.grad_enabled and input.requires_grad:
        node = ClampBackward1()
        node._lo, node._hi = lo, hi
        node.save(input)
        return record(node, out, input)
    return wrap(out)


clip = clamp


def _clamp_tensor(input, lo, hi):
    lo_t = as_tensor_arg(lo) if lo is not None else None
    hi_t = as_tensor_arg(hi) if hi is not None else None
    a = input._data
    rt = _result_dtype(input, lo_t, hi_t)
    out = a.astype(rt, copy=False)
    if lo_t is not None:
        out = np.maximum(out, lo_t._data.astype(rt, copy=False))
    if hi_t is not None:
        out = np.minimum(out, hi_t._data.astype(rt, copy=False))
    out = asarray(out).astype(rt, copy=False)
    args = [t for t in (input, lo_t, hi_t) if t is not None]
    if state.grad_enabled and any(t.requires_grad for t in args):
        node = ClampBackward0()
        node.save(input, lo_t, hi_t)
        dts = tuple(t._data.dtype if t is not None else rt for t in (input, lo_t, hi_t))
        if any(d != rt for d in dts):
            node._dtypes = dts
        shapes = tuple(t._data.shape if t is not None else () for t in (input, lo_t, hi_t))
        if any(s != out.shape for s, t in zip(shapes, (input, lo_t, hi_t)) if t is not None):
            node._shapes = shapes
        r = record(node, out, input, lo_t, hi_t)
        return r
    return wrap(out)


_LN10 = float(np.log(10.0))


class Exp2Backward0(Node):
    def backward(self, xp, g):
        return g * (self.saved_output(xp.TENSORS) * _LN2)


class Expm1Backward0(Node):
    def backward(self, xp, g):
        return g * (self.saved_output(xp.TENSORS) + 1)


class Log2Backward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / (x * _LN2)


class Log10Backward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / (x * _LN10)


class Log1PBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / (x + 1)


class RsqrtBackward0(Node):
    def backward(self, xp, g):
        y = self.saved_output(xp.TENSORS)
        return g * (y * y * y * -0.5)


class TanBackward0(Node):
    def backward(self, xp, g):
        y = self.saved_output(xp.TENSORS)
        return g * (y * y + 1)


class AsinBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / xp.sqrt(1 - x * x)


class AcosBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return -g / xp.sqrt(1 - x * x)


class AtanBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / (x * x + 1)


class SinhBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * xp.cosh(x)


class CoshBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * xp.sinh(x)


class AsinhBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / xp.sqrt(x * x + 1)


class AcoshBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g / xp.sqrt(x * x - 1)


class AtanhBackward0(Node):
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
    def backward(self, xp, g):
        return g


class _ZeroGrad(Node):
    """Piecewise-constant ops: the gradient is zero almost everywhere, and PyTorch says 0."""

    def backward(self, xp, g):
        return xp.zeros_like(g)


class FloorBackward0(_ZeroGrad):
    pass


class CeilBackward0(_ZeroGrad):
    pass


class TruncBackward0(_ZeroGrad):
    pass


class RoundBackward0(_ZeroGrad):
    pass


class RoundBackward1(_ZeroGrad):
    """round with ``decimals``."""


class SgnBackward0(_ZeroGrad):
    pass


class NanToNumBackward0(Node):
    def backward(self, xp, g):
        return xp.where(self._finite, g, 0.0)


def exp2(input) -> Tensor:  # noqa: A002
    """``2 ** input``.

    >>> import retrograd as torch
    >>> torch.exp2(torch.tensor([0., 3.]))
    tensor([1., 8.])
    """
    return _unary(Exp2Backward0, np.exp2, input, save_output=True)


def expm1(input) -> Tensor:  # noqa: A002
    """``exp(input) - 1``, accurate near 0.

    >>> import retrograd as torch
    >>> torch.expm1(torch.tensor([0.]))
    tensor([0.])
    """
    return _unary(Expm1Backward0, np.expm1, input, save_output=True)


def log2(input) -> Tensor:  # noqa: A002
    """Base-2 logarithm.

    >>> import retrograd as torch
    >>> torch.log2(torch.tensor([8.]))
    tensor([3.])
    """
    return _unary(Log2Backward0, _quiet(np.log2), input, save_input=True)


def log10(input) -> Tensor:  # noqa: A002
    """Base-10 logarithm.

    >>> import retrograd as torch
    >>> torch.log10(torch.tensor([100.]))
    tensor([2.])
    """
    return _unary(Log10Backward0, _log10, input, save_input=True)


def _log10(a):
    with np.errstate(invalid="ignore", divide="ignore"):
        if a.dtype == np.float64:
            return np.log10(a)
        # NumPy's float32 log10 is off by an ulp at exact powers of ten (log10(100) > 2).
        return np.log10(a, dtype=np.float64).astype(a.dtype)


def log1p(input) -> Tensor:  # noqa: A002
    """``log(1 + input)``, accurate near 0.

    >>> import retrograd as torch
    >>> torch.log1p(torch.tensor([0.]))
    tensor([0.])
    """
    return _unary(Log1PBackward0, _quiet(np.log1p), input, save_input=True)


def _rsqrt(a):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.reciprocal(np.sqrt(a))


def rsqrt(input) -> Tensor:  # noqa: A002
    """``1 / sqrt(input)``.

    >>> import retrograd as torch
    >>> torch.rsqrt(torch.tensor([4.]))
    tensor([0.5000])
    """
    return _unary(RsqrtBackward0, _rsqrt, input, save_output=True)


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


def _make_unary(name, cls, fn, save, desc, arg, res):
    save_input = save == "input"
    save_output = save == "output"

    def op(input) -> Tensor:  # noqa: A002
        return _unary(cls, fn, input, save_input=save_input, save_output=save_output)

    op.__name__ = name
    op.__qualname__ = name
    op.__doc__ = _unary_doc(name, desc, arg, res)
    return op


def _quiet(ufunc):
    def fn(a):
        with np.errstate(invalid="ignore", divide="ignore"):
            return ufunc(a)

    return fn


tan = _make_unary("tan", TanBackward0, np.tan, "output", "Tangent.", "0.", "0.")
asin = _make_unary("asin", AsinBackward0, _quiet(np.arcsin), "input", "Inverse sine.", "0.",
                   "0.")
acos = _make_unary("acos", AcosBackward0, _quiet(np.arccos), "input", "Inverse cosine.", "1.",
                   "0.")
atan = _make_unary("atan", AtanBackward0, np.arctan, "input", "Inverse tangent.", "0.", "0.")
sinh = _make_unary("sinh", SinhBackward0, np.sinh, "input", "Hyperbolic sine.", "0.", "0.")
cosh = _make_unary("cosh", CoshBackward0, np.cosh, "input", "Hyperbolic cosine.", "0.", "1.")
asinh = _make_unary("asinh", AsinhBackward0, np.arcsinh, "input", "Inverse hyperbolic sine.",
                    "0.", "0.")
acosh = _make_unary("acosh", AcoshBackward0, _quiet(np.arccosh), "input",
                    "Inverse hyperbolic cosine (NaN below 1).", "1.", "0.")
atanh = _make_unary("atanh", AtanhBackward0, _quiet(np.arctanh), "input",
                    "Inverse hyperbolic tangent.", "0.", "0.")


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
    if state.grad_enabled and input.requires_grad:
        node = LogitBackward0()
        if eps is None:
            node._outside, node._fill = (a < 0) | (a > 1), float("nan")
        else:
            node._outside, node._fill = (a < eps) | (a > 1 - eps), 0.0
        if a.dtype != input._data.dtype:
            node._dtypes = (input._data.dtype,)
        node.save(input)
        return record(node, out, input)
    return wrap(out)


def _rounding(name, cls, ufunc, kernel):
    def op(input) -> Tensor:  # noqa: A002
        a = input._data
        kind = a.dtype.kind
        if kind == "b":
            raise not_implemented(kernel, a.dtype)
        if kind != "f":
            return wrap(a.copy())  # integers are already whole
        return _unary(cls, ufunc, input)

    op.__name__ = name
    op.__qualname__ = name
    return op


floor = _rounding("floor", FloorBackward0, np.floor, "floor_vml_cpu")
ceil = _rounding("ceil", CeilBackward0, np.ceil, "ceil_vml_cpu")
trunc = _rounding("trunc", TruncBackward0, np.trunc, "trunc_vml_cpu")
_round0 = _rounding("round", RoundBackward0, np.rint, "round_vml_cpu")
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
    if a.dtype.kind != "f":
        raise not_implemented("round_cpu", a.dtype)
    ten = np.array(10.0 ** (decimals if decimals > 0 else -decimals), dtype=a.dtype)
    # PyTorch scales in the tensor's own dtype: x * 10**d, rint, / 10**d (or the reverse).
    out = np.rint(a * ten) / ten if decimals > 0 else np.rint(a / ten) * ten
    if state.grad_enabled and input.requires_grad:
        return record(RoundBackward1(), out, input)
    return wrap(out)


def frac(input) -> Tensor:  # noqa: A002
    """``input - trunc(input)``, keeping the sign.

    >>> import retrograd as torch
    >>> torch.frac(torch.tensor([-1.5, 2.25]))
    tensor([-0.5000,  0.2500])
    """
    a = input._data
    if a.dtype.kind != "f":
        raise not_implemented("frac_cpu", a.dtype)
    return _unary(FracBackward0, _frac, input)


def _frac(v):
    with np.errstate(invalid="ignore"):
        return v - np.trunc(v)


def sgn(input) -> Tensor:  # noqa: A002
    """The sign, for real tensors the same as ``sign`` (its own grad_fn, ``SgnBackward0``).

    >>> import retrograd as torch
    >>> torch.sgn(torch.tensor([-2., 0., 3.]))
    tensor([-1.,  0.,  1.])
    """
    a = input._data
    if a.dtype.kind == "b":
        return wrap(a.copy())
    return _unary(SgnBackward0, _sign, input, float_op=False)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None) -> Tensor:  # noqa: A002
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0 and the
    dtype's largest and lowest finite values).

    >>> import retrograd as torch
    >>> torch.nan_to_num(torch.tensor([float('nan'), 1.]), nan=-1.)
    tensor([-1.,  1.])
    """
    a = input._data
    if a.dtype.kind != "f":
        return wrap(a.copy())
    out = np.nan_to_num(a, copy=True, nan=nan, posinf=posinf, neginf=neginf)
    if state.grad_enabled and input.requires_grad:
        node = NanToNumBackward0()
        node._finite = np.isfinite(a)
        return record(node, out, input)
    return wrap(out)


def positive(input) -> Tensor:  # noqa: A002
    """``+input``: the tensor itself.

    >>> import retrograd as torch
    >>> torch.positive(torch.tensor([-1.]))
    tensor([-1.])
    """
    if input._data.dtype.kind == "b":
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

    def backward(self, xp, g):
        x, b = self.saved(xp.TENSORS)
        nf = self.next_functions
        keep = x >= b
        gx = xp.where(keep, g, 0.0) if nf[0][0] is not None else None
        gb = xp.where(keep, 0.0, g) if nf[1][0] is not None else None
        return gx, gb


class ClampMaxBackward1(Node):
    saves = ((0, 1), (0, 1))

    def backward(self, xp, g):
        x, b = self.saved(xp.TENSORS)
        nf = self.next_functions
        keep = x <= b
        gx = xp.where(keep, g, 0.0) if nf[0][0] is not None else None
        gb = xp.where(keep, 0.0, g) if nf[1][0] is not None else None
        return gx, gb


def _clamp_side(input, bound, ufunc, cls0, cls1):
    if isinstance(bound, Tensor):
        return apply_binary(cls1, ufunc, input, bound)
    ad, bd = operands(input, bound)
    out = asarray(ufunc(ad, bd)).astype(ad.dtype, copy=False)
    return apply(cls0, out, input, save=(input,), _bound=bd)


def clamp_min(input, min) -> Tensor:  # noqa: A001, A002
    """``max(input, min)``; the gradient flows where ``input >= min``.

    >>> import retrograd as torch
    >>> torch.clamp_min(torch.tensor([-1., 2.]), 0.5)
    tensor([0.5000, 2.0000])
    """
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


def _inplace_no_grad(name, fn):
    cls = type(f"{name.capitalize()}Backward1", (_InplaceNotDifferentiable,), {"_op": name})

    def op(input) -> Tensor:  # noqa: A002
        out = fn(input)
        if out._grad_fn is None:
            return out
        return record(cls(), out._data, input)

    op.__name__ = name + "_"
    return op

# Array twins the backward formulas above call (their tensor versions are the ops here).
_array.register(sinh=np.sinh, cosh=np.cosh)

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
    "frac", "nan_to_num", "positive", "clamp_min", "clamp_max",
]
XP: list = []

METHODS = {name: globals()[name] for name in __all__}
INPLACE = {name + "_": globals()[name] for name in __all__ if name != "positive"}
INPLACE.update({
    "acosh_": _inplace_no_grad("acosh", acosh), "asinh_": _inplace_no_grad("asinh", asinh),
    "atanh_": _inplace_no_grad("atanh", atanh),
    "arccosh_": _inplace_no_grad("acosh", acosh), "arcsinh_": _inplace_no_grad("asinh", asinh),
    "arctanh_": _inplace_no_grad("atanh", atanh),
})
