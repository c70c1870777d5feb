"""Primitive ops behind nn.functional (activation and loss): where stability or speed ask for one.

Each op is a Backward node (its formula written in ``xp``, so it runs on arrays for a plain
backward and on tensors for higher orders) next to the function computing its forward. The
public wrappers, with PyTorch's argument checks, live in ``nn.functional.activation`` and
``nn.functional.loss``.

# NOTE: these are primitives rather than composites for three reasons: numerical stability
# (softmax, log_softmax, softplus, logsigmoid, the BCE losses never overflow), speed (one
# NumPy pass per forward and backward instead of a chain of nodes, which matters for the
# training benchmarks' cross_entropy and activations), and PyTorch's grad_fn names
# (SoftmaxBackward0, NllLossBackward0, GeluBackward0, MseLossBackward0, ...).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _sleef
from .._dtypes import F32, FLOAT_CHARS, FROM_NP, REDUCED, bfloat16, to_reduced
from .._tensor import Tensor
from ..autograd.graph import Node
from . import _array
from ._apply import apply, recording
from ._core import (
    Signatures,
    arg_error,
    bf16_nans,
    c_order,
    like_layout,
    nan_bits,
    op_name_of,
    operands,
    put_tail,
    scalar_loop,
    unary_nans,
    wrap_dim,
)
from .compare import TiedGradBackward
from .special import _erf
from .unary import SigmoidBackward0, ThresholdBackwardBackward0, _sigmoid

# PyTorch's signatures, for its errors when arguments fit none (checked only after a failure).
_SOFTMAX = {name: Signatures(name, "Tensor input, int dim, torch.dtype? dtype = None")
            for name in ("softmax", "log_softmax")}


def _float_input(x: Tensor, kernel: str) -> np.ndarray:
    a = x._data
    if a.dtype.char not in FLOAT_CHARS:
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{FROM_NP[a.dtype].scalar_name}\'')
    return a


def check_not_differentiable(t, arg: str, fn: str) -> None:
    """PyTorch's error for an argument ``fn`` has no derivative for (a loss's ``weight``) when
    it requires grad in grad mode: raised before the kernel runs, as PyTorch's autograd layer
    does, rather than giving it a wrong (zero) gradient."""
    if t is not None and recording(t):
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument "
                           f"'{arg}'. This input cannot have requires_grad True.")


# -- helpers ------------------------------------------------------------------------------------


def _softplus_array(x, beta=1.0, threshold=20.0):
    bx = x * beta if beta != 1 else x
    # log1p(exp(bx)) without overflow: max(bx, 0) + log1p(exp(-|bx|)).
    sp = np.maximum(bx, 0) + np.log1p(np.exp(-np.abs(bx)))
    if beta != 1:
        sp = sp / beta
    return np.where(bx > threshold, x, sp).astype(x.dtype, copy=False)


def _unary(P, x: Tensor, kernel: str, *params, result: bool = False, **attrs) -> Tensor:
    """A float activation: ``P.forward(a, *params)`` on ``x``'s array, through ``apply``; the
    node saves the input, or the output for the variants in-place ops use (``result``)."""
    try:
        a = _float_input(x, kernel)
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error(op_name_of(P), "input", 1, x) from None
    if a.dtype in REDUCED:
        # PyTorch's kernels compute float16/bfloat16 in float32 and round once; ``P.reduced``
        # is the float32 formula where the kernel's differs from ``forward``'s (given the
        # elements its scalar loop computes, ``scalar_loop``, where that loop differs)
        f = getattr(P, "reduced", P.forward)
        if getattr(P, "reduced_loop", False):
            # The vector steps' result depends on the element alone: read from a table of the
            # dtype's 65,536 values; only the scalar loop's elements are computed, its way.
            out = put_tail(_sleef.lookup(_vector_form(f, params), a), scalar_loop(a.shape, a),
                           lambda x: f(x.astype(F32), *params, tail=slice(None)).astype(a.dtype),
                           a)
        else:
            out = f(a.astype(F32), *params).astype(a.dtype)
        out = unary_nans(P, out, a)
    else:
        out = P.forward(a, *params)
    if result:
        return apply(P, out, x, save_out=True, **attrs)
    return apply(P, out, x, save=(x,), **attrs)


_VECTOR_FORMS: dict = {}


def _vector_form(f, params: tuple):
    """``f(x, *params)`` with no scalar-loop elements, one function per (f, params), so that
    ``_sleef.lookup`` builds its table once."""
    g = _VECTOR_FORMS.get((f, params))
    if g is None:
        g = _VECTOR_FORMS[(f, params)] = lambda x: f(x, *params)
    return g


# -- unary activations -------------------------------------------------------------------------


def _elu_array(a, alpha, scale, input_scale):
    neg = np.expm1(np.where(a > 0, np.zeros((), a.dtype), a) * input_scale)  # elu(-0.) is -0.
    if alpha != 1:
        neg *= alpha
    out = np.where(a > 0, a, neg)
    if scale != 1:
        out *= scale
    return out.astype(a.dtype, copy=False)


class EluBackward0(Node):
    """elu and selu: ``scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1))``."""

    forward = staticmethod(_elu_array)

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        s, a, i = self._scale, self._alpha, self._input_scale
        neg = xp.exp(xp.where(x > 0, 0.0, x) * i)  # no overflow in the branch not taken
        return xp.where(x > 0, g * s, g * neg * (s * a * i))


class CeluBackward0(EluBackward0):
    pass


class EluBackward1(Node):
    """In-place elu_/selu_: the formula in terms of the saved output ``y``."""

    forward = staticmethod(_elu_array)

    def backward(self, xp, g):
        y = self.saved_output(xp.TENSORS)
        s, a, i = self._scale, self._alpha, self._input_scale
        return xp.where(y <= 0, g * (y + s * a) * i, g * s)


class CeluBackward1(EluBackward1):
    pass


def elu(input, alpha=1.0, scale=1.0, input_scale=1.0, *, celu=False,  # noqa: A002
        result=False) -> Tensor:
    """ELU (also SELU with its constants, and CELU when ``celu``): ``torch.nn.functional.elu``.

    ``result=True`` is the variant in-place ops use: its backward reads the output.

    >>> import retrograd as torch
    >>> torch.nn.functional.elu(torch.tensor([-1., 1.]))
    tensor([-0.6321,  1.0000])
    """
    if result:
        P = CeluBackward1 if celu else EluBackward1
    else:
        P = CeluBackward0 if celu else EluBackward0
    return _unary(P, input, "elu_cpu", alpha, scale, input_scale, result=result,
                  _scale=scale, _alpha=alpha, _input_scale=input_scale)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, result=False) -> Tensor:  # noqa: A002
    """SELU: ``scale * elu(x, alpha)`` with the self-normalising constants.

    >>> import retrograd as torch
    >>> torch.selu(torch.tensor([0., 1.]))
    tensor([0.0000, 1.0507])
    """
    return elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0, result=result)


def celu(input, alpha=1.0, result=False) -> Tensor:  # noqa: A002
    """CELU: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    >>> import retrograd as torch
    >>> torch.celu(torch.tensor([0., 1.]))
    tensor([0., 1.])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return elu(input, alpha, 1.0, 1.0 / alpha, celu=True, result=result)


def _leaky_relu_array(a, negative_slope):
    if a.dtype in REDUCED:  # float32 inside, the slope too, one rounding (as PyTorch)
        x = a.astype(F32)
        return np.where(x > 0, x, x * F32.type(negative_slope)).astype(a.dtype)
    return np.where(a > 0, a, a * np.asarray(negative_slope, a.dtype))


class LeakyReluBackward0(Node):
    forward = staticmethod(_leaky_relu_array)

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return xp.tie(LeakyReluBackwardBackward0, xp.where(x > 0, g, g * self._slope), x)


class LeakyReluBackwardBackward0(TiedGradBackward):
    """leaky_relu's first-order gradient, an op of the input too (``compare.tie``)."""


class LeakyReluBackward1(Node):
    """In-place leaky_relu_: the formula in terms of the saved output."""

    forward = staticmethod(_leaky_relu_array)

    def backward(self, xp, g):
        y = self.saved_output(xp.TENSORS)
        return xp.tie(LeakyReluBackwardBackward0, xp.where(y > 0, g, g * self._slope), y)


def leaky_relu(input, negative_slope=0.01, result=False) -> Tensor:  # noqa: A002
    """``x if x > 0 else negative_slope * x`` (``result``: the in-place variant's node).

    >>> import retrograd as torch
    >>> torch.nn.functional.leaky_relu(torch.tensor([-2., 3.]), 0.5)
    tensor([-1.,  3.])
    """
    P = LeakyReluBackward1 if result else LeakyReluBackward0
    return _unary(P, input, "leaky_relu_cpu", negative_slope, result=result,
                  _slope=negative_slope)


class HardtanhBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return xp.tie(HardtanhBackwardBackward0, xp.where((x > self._lo) & (x < self._hi), g, 0.0),
                      x)


class HardtanhBackwardBackward0(TiedGradBackward):
    """hardtanh's (and relu6's) first-order gradient, an op of the input too."""


def hardtanh(input, min_val=-1.0, max_val=1.0) -> Tensor:  # noqa: A002
    """``clamp(x, min_val, max_val)`` whose gradient is zero at and beyond the bounds.

    >>> import retrograd as torch
    >>> torch.nn.functional.hardtanh(torch.tensor([-2., 0.5]))
    tensor([-1.0000,  0.5000])
    """
    a = input._data
    if a.dtype.kind == "b":
        raise NotImplementedError("\"hardtanh_backward_cpu\" not implemented for 'Bool'")
    out = unary_nans(HardtanhBackward0, np.clip(a, min_val, max_val).astype(a.dtype, copy=False), a)
    return apply(HardtanhBackward0, out, input, save=(input,), _lo=min_val, _hi=max_val)


class ThresholdBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return xp.tie(ThresholdBackwardBackward0, xp.where(x > self._th, g, 0.0), x)


class ThresholdBackward1(ThresholdBackward0):
    """In-place threshold_ (the old value is saved: the in-place machinery hands the op a
    copy)."""


def threshold(input, threshold, value, result=False) -> Tensor:  # noqa: A002
    """``x if x > threshold else value``.

    >>> import retrograd as torch
    >>> torch.threshold(torch.tensor([0.5, 2.]), 1., 0.)
    tensor([0., 2.])
    """
    a = input._data
    if a.dtype in REDUCED:  # torch compares in float32: a NaN is not below, and passes
        fill = to_reduced(np.asarray(value, np.float64), a.dtype)
        out = np.where(a.astype(F32) <= F32.type(threshold), fill, a)
        nan = np.isnan(out)
        if nan.any():  # (its bits: through float32 in the vector steps)
            out = like_layout(nan_bits(np.array(out, order="C"), nan, scalar_loop(a.shape, a),
                                       None, None), out)
    else:
        out = np.where(a <= threshold, np.asarray(value).astype(a.dtype), a)
    return apply(ThresholdBackward1 if result else ThresholdBackward0, out, input,
                 save=(input,), _th=threshold)


def _gelu_array(a, tanh: bool = False):
    if a.dtype in REDUCED:  # float32 inside, one rounding (as PyTorch; and ml_dtypes is slow)
        return _gelu_array(a.astype(F32), tanh).astype(a.dtype)
    if tanh:
        k = np.asarray(math.sqrt(2.0 / math.pi), a.dtype)
        inner = np.tanh((a + np.asarray(0.044715, a.dtype) * (a * a * a)) * k)
        return np.asarray(0.5, a.dtype) * a * (1 + inner)
    return (a * np.asarray(0.5, a.dtype)) * (1 + _erf(a * np.asarray(1 / math.sqrt(2.0),
                                                                       a.dtype)))


def _gelu_reduced(a, tanh: bool = False, tail=None):
    """torch's float16/bfloat16 GELU in float32: ``x * 0.5 * (1 + erf(x / sqrt(2)))`` with its
    vectorised erf (``_sleef.erff``), libm's erf in its scalar loop (the flat indices ``tail``,
    ``scalar_loop``'s; the last n % 32 by default). The tanh form: ``0.5 * x * (1 + tanh(sqrt(2
    / pi) * (x + 0.044715 x^3)))`` with tanh rounded from double (SLEEF's, at every input of
    these dtypes), SLEEF's +-1 beyond |8.664339742|, in the vectorised steps; glibc's tanhf
    (``_sleef.tanhf_libm``) in the scalar loop."""
    if tail is None and a.size % 32:
        tail = slice(a.size - a.size % 32, a.size)
    if tanh:
        inner = np.ascontiguousarray(_GELU_BETA * (a + F32.type(0.044715) * (a * a * a)))
        t = np.tanh(inner.astype(np.float64)).astype(F32)
        vec = np.abs(inner) > F32.type(8.664339742)
        if tail is not None:
            vec.reshape(-1)[tail] = False
        t = put_tail(np.where(vec, np.copysign(F32.type(1), t), t), tail, _sleef.tanhf_libm,
                     inner)
        return F32.type(0.5) * a * (F32.type(1) + t)
    out = (a * F32.type(0.5)) * (F32.type(1) + _sleef.erff(a * F32.type(math.sqrt(0.5))))
    return put_tail(out, tail, _gelu_array, a)


_GELU_BETA = F32.type(math.sqrt(2) * (2 / math.sqrt(math.pi)) * 0.5)


class GeluBackward0(Node):
    forward = staticmethod(_gelu_array)
    reduced = staticmethod(_gelu_reduced)
    reduced_loop = True  # ``reduced`` takes the scalar loop's elements

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        if not xp.TENSORS and x.dtype in REDUCED:
            x, g = x.astype(F32), g.astype(F32)  # the engine rounds the result to x's dtype
        if self._tanh:
            k = math.sqrt(2.0 / math.pi)
            x2 = x * x
            t = xp.tanh((x + 0.044715 * (x2 * x)) * k)
            du = (1.0 + 0.134145 * x2) * k
            return g * (0.5 * (1.0 + t) + (0.5 * x) * (1.0 - t * t) * du)
        cdf = 0.5 * (1.0 + xp.erf(x * (1.0 / math.sqrt(2.0))))
        pdf = xp.exp(-0.5 * (x * x)) * (1.0 / math.sqrt(2.0 * math.pi))
        return g * (cdf + x * pdf)


def gelu(input, approximate: str = "none") -> Tensor:  # noqa: A002
    """GELU, exact (``x * Phi(x)``) or with the tanh approximation.

    >>> import retrograd as torch
    >>> torch.nn.functional.gelu(torch.tensor([0., 1.]))
    tensor([0.0000, 0.8413])
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    tanh = approximate == "tanh"
    return _unary(GeluBackward0, input, "GeluKernelImpl", tanh, _tanh=tanh)


class SiluBackward0(Node):
    forward = staticmethod(lambda a: a * _sigmoid(a))
    # float16/bfloat16: x / (1 + exp(-x)) in float32 with SLEEF's expf, as torch's kernel
    reduced = staticmethod(lambda a: a / (F32.type(1) + _sleef.expf(-a)))

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        if not xp.TENSORS and x.dtype in REDUCED:  # float32 inside, one rounding (torch)
            rd, x, g = x.dtype, x.astype(F32), g.astype(F32)
            s = F32.type(1) / (F32.type(1) + np.exp(-x))
            return (g * (s * (F32.type(1) + x * (F32.type(1) - s)))).astype(rd)
        s = xp.sigmoid(x)
        return g * (s * (1.0 + x * (1.0 - s)))


def silu(input) -> Tensor:  # noqa: A002
    """``x * sigmoid(x)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.silu(torch.tensor([0.]))
    tensor([0.])
    """
    return _unary(SiluBackward0, input, "silu_cpu")


def _mish_libm(x):
    return x * _sleef.tanhf_libm(np.log1p(np.exp(x)))


def _mish_reduced(a, tail=None):
    """torch's float16/bfloat16 mish in float32: ``x * tanh(log1p(exp(x)))``, SLEEF's expf, then
    log1p and tanh rounded from double (SLEEF's, at every input of these dtypes) in the
    vectorised steps; its scalar loop (the flat indices ``tail``, ``scalar_loop``'s; the last
    n % 32 by default) as the float32 formula with glibc's expf, log1pf and tanhf (NumPy's
    float32 tanh differs at x = -0.0004728 in float16)."""
    if tail is None and a.size % 32:
        tail = slice(a.size - a.size % 32, a.size)
    with np.errstate(over="ignore"):
        e = _sleef.expf(a).astype(np.float64)
    out = a * np.tanh(np.log1p(e).astype(F32).astype(np.float64)).astype(F32)
    with np.errstate(over="ignore"):
        return put_tail(out, tail, _mish_libm, a)


class MishBackward0(Node):
    forward = staticmethod(lambda a: a * np.tanh(_softplus_array(a)))
    reduced = staticmethod(_mish_reduced)
    reduced_loop = True  # ``reduced`` takes the scalar loop's elements

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        t = xp.tanh(xp.softplus(x))
        return g * (t + x * xp.sigmoid(x) * (1.0 - t * t))


def mish(input) -> Tensor:  # noqa: A002
    """``x * tanh(softplus(x))``.

    >>> import retrograd as torch
    >>> torch.nn.functional.mish(torch.tensor([0.]))
    tensor([0.])
    """
    return _unary(MishBackward0, input, "mish_cpu")


class SoftplusBackward0(Node):
    forward = staticmethod(_softplus_array)

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        b = self._beta
        bx = x * b if b != 1 else x
        return xp.where(bx > self._th, g, g * xp.sigmoid(bx))


def softplus(input, beta=1.0, threshold=20.0) -> Tensor:  # noqa: A002
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``.

    >>> import retrograd as torch
    >>> torch.nn.functional.softplus(torch.tensor([0.]))
    tensor([0.6931])
    """
    return _unary(SoftplusBackward0, input, "softplus_cpu", beta, threshold, _beta=beta,
                  _th=threshold)


def _log_sigmoid_f32(a):
    """torch's float16/bfloat16 log_sigmoid kernel, in float32: ``min(x, 0) - log1p(exp(-|x|))``
    with SLEEF's expf and log1pf (the argument of log1p is in [0, 1])."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.minimum(a, F32.type(0)) - _sleef._log1pf_unit(_sleef.expf(-np.abs(a)))


class LogSigmoidBackward0(Node):
    forward = staticmethod(lambda a: -_softplus_array(-a, 1.0, math.inf))
    reduced = staticmethod(_log_sigmoid_f32)
    _packs = (0, "=buffer")  # PyTorch saves its buffer too (autograd/saved_hooks.py)

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * xp.sigmoid(-x)


def logsigmoid(input) -> Tensor:  # noqa: A002
    """``log(sigmoid(x))``, stable for inputs of either sign.

    >>> import retrograd as torch
    >>> torch.nn.functional.logsigmoid(torch.tensor([0.]))
    tensor([-0.6931])
    """
    return _unary(LogSigmoidBackward0, input, "log_sigmoid_forward")


_ONE_SIXTH_F32 = float(np.float32(1.0 / 6.0))


class HardsigmoidBackward0(Node):
    forward = staticmethod(
        lambda a: (np.clip(a + 3, 0, 6) / np.asarray(6, a.dtype)).astype(a.dtype, copy=False))

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        # PyTorch's kernel uses 1/6 as a float32 constant, in double precision too.
        return xp.where((x > -3.0) & (x < 3.0), g * _ONE_SIXTH_F32, 0.0)


def hardsigmoid(input) -> Tensor:  # noqa: A002
    """``relu6(x + 3) / 6``.

    >>> import retrograd as torch
    >>> torch.nn.functional.hardsigmoid(torch.tensor([0.]))
    tensor([0.5000])
    """
    return _unary(HardsigmoidBackward0, input, "hardsigmoid_cpu")


class HardswishBackward0(Node):
    forward = staticmethod(lambda a: (a * np.clip(a + 3, 0, 6) / np.asarray(6, a.dtype))
                           .astype(a.dtype, copy=False))

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        mid = g * (x * (1.0 / 3.0) + 0.5)
        return xp.where(x <= -3.0, 0.0, xp.where(x < 3.0, mid, g))


def hardswish(input) -> Tensor:  # noqa: A002
    """``x * relu6(x + 3) / 6``.

    >>> import retrograd as torch
    >>> torch.nn.functional.hardswish(torch.tensor([3.]))
    tensor([3.])
    """
    return _unary(HardswishBackward0, input, "hardswish_cpu")


def _hardshrink_array(a, lambd):
    # NaN stays NaN, as in PyTorch (the test is for the zeroed band)
    return np.where((a >= -lambd) & (a <= lambd), np.zeros((), a.dtype), a)


def _softshrink_array(a, lambd):
    lo = np.asarray(lambd, a.dtype)
    zero = np.zeros((), a.dtype)
    return np.where(a > lo, a - lo, np.where(a < -lo, a + lo, np.where(a == a, zero, a)))


class HardshrinkBackward0(Node):
    forward = staticmethod(_hardshrink_array)

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return xp.tie(self._tied, xp.where((x > self._l) | (x < -self._l), g, 0.0), x)


class HardshrinkBackwardBackward0(TiedGradBackward):
    """hardshrink's first-order gradient, an op of the input too (``compare.tie``)."""


class SoftshrinkBackwardBackward0(TiedGradBackward):
    """softshrink's first-order gradient, an op of the input too (``compare.tie``)."""


class SoftshrinkBackward0(HardshrinkBackward0):
    forward = staticmethod(_softshrink_array)
    _tied = SoftshrinkBackwardBackward0


HardshrinkBackward0._tied = HardshrinkBackwardBackward0


def hardshrink(input, lambd=0.5) -> Tensor:  # noqa: A002
    """``x where |x| > lambd, else 0``.

    >>> import retrograd as torch
    >>> torch.hardshrink(torch.tensor([0.3, -1.]))
    tensor([ 0., -1.])
    """
    lo = lambd
    if isinstance(input, Tensor) and input._data.dtype in REDUCED:  # PyTorch: lambd in the dtype
        lo = float(np.asarray(lambd, F32).astype(input._data.dtype))
    return _unary(HardshrinkBackward0, input, "hardshrink_cpu", lo, _l=lambd)


def softshrink(input, lambd=0.5) -> Tensor:  # noqa: A002
    """Shrink towards zero by ``lambd``: ``x - lambd``, ``x + lambd`` or 0.

    >>> import retrograd as torch
    >>> torch.nn.functional.softshrink(torch.tensor([0.3, -1.]))
    tensor([ 0.0000, -0.5000])
    """
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return _unary(SoftshrinkBackward0, input, "softshrink_cpu", lambd, _l=lambd)


# -- prelu and glu -----------------------------------------------------------------------------


class PreluKernelBackward0(Node):
    def backward(self, xp, g):
        x, w = self.saved(xp.TENSORS)
        wb = xp.reshape(w, self._wshape) if self._wshape is not None else w
        pos = x > 0
        gx = xp.tie(PreluKernelBackwardBackward0, xp.where(pos, g, g * wb), x) \
            if self._needs(0) else None
        gw = None
        if self._needs(1):
            gw = xp.where(pos, 0.0, g * x)
            if self._wshape is not None:
                gw = xp.sum(gw, self._sum_dims)
            elif w.shape != gw.shape:
                gw = xp.reshape(xp.sum(gw), w.shape)
        return gx, gw


class PreluKernelBackwardBackward0(TiedGradBackward):
    """prelu's first-order gradient, an op of the input too (``compare.tie``)."""


def prelu(input, weight) -> Tensor:  # noqa: A002
    """``x if x > 0 else weight * x``, with one weight or one per channel (dim 1).

    >>> import retrograd as torch
    >>> torch.prelu(torch.tensor([-2., 3.]), torch.tensor([0.25]))
    tensor([-0.5000,  3.0000])
    """
    a, w = input._data, weight._data
    n = w.size
    ch = a.shape[1] if a.ndim >= 2 else 1
    if n != 1 and n != ch:
        raise RuntimeError(
            "Mismatch of parameter numbers and input channel size. Found parameter numbers = "
            f"{n} and channel size = {ch}."
        )
    if w.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {w.ndim}")
    wshape = None
    if a.ndim >= 2 and n != 1:
        wshape = (1, n) + (1,) * (a.ndim - 2)
        wb = w.reshape(wshape)
    else:
        wb = w.reshape(()) if a.ndim == 0 or n == 1 else w
    wb = wb.astype(a.dtype, copy=False) if a.dtype.char in FLOAT_CHARS else wb
    out = np.where(a > 0, a, a * wb)
    sum_dims = None if wshape is None else tuple(d for d in range(a.ndim) if d != 1)
    return apply(PreluKernelBackward0, out, input, weight, save=(input, weight), _wshape=wshape,
                 _sum_dims=sum_dims)


class GluBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        d, h = self._dim, self._half
        a = xp.slice_dim(x, d, 0, h, 1)
        s = xp.sigmoid(xp.slice_dim(x, d, h, 2 * h, 1))
        ga = g * s
        gb = ga * a * (1.0 - s)
        shape = tuple(x.shape)
        return xp.embed_slice(ga, shape, d, 0, h, 1) + xp.embed_slice(gb, shape, d, h, 2 * h, 1)


def glu(input, dim=-1) -> Tensor:  # noqa: A002
    """``a * sigmoid(b)`` where ``a`` and ``b`` are the two halves of ``input`` along ``dim``."""
    a = input._data
    if a.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, a.ndim)
    if a.shape[d] % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {d} is size {a.shape[d]}")
    _float_input(input, "glu_cpu")
    h = a.shape[d] // 2
    first = a[(slice(None),) * d + (slice(0, h),)]
    second = a[(slice(None),) * d + (slice(h, 2 * h),)]
    return apply(GluBackward0, first * _sigmoid(second), input, save=(input,), _dim=d, _half=h)


# -- softmax and log_softmax -------------------------------------------------------------------


class SoftmaxBackward0(Node):
    def backward(self, xp, g):
        y = self.saved_output(xp.TENSORS)
        if not xp.TENSORS and y.dtype in REDUCED:  # float32 inside, one rounding (torch)
            rd, y, g = y.dtype, y.astype(F32), g.astype(F32)
            return (y * (g - (g * y).sum(self._dim, keepdims=True))).astype(rd)
        gy = g * y
        return gy - y * xp.sum(gy, self._dim, True)


class LogSoftmaxBackward0(Node):
    def backward(self, xp, g):
        y = self.saved_output(xp.TENSORS)
        if not xp.TENSORS:  # the hot path of every cross_entropy: skip np.sum's wrapper
            if y.dtype in REDUCED:  # float32 inside, one rounding (torch's kernel)
                rd, y, g = y.dtype, y.astype(F32), g.astype(F32)
                with np.errstate(over="ignore", invalid="ignore"):
                    return (g - np.exp(y) * g.sum(self._dim, keepdims=True)).astype(rd)
            return g - np.exp(y) * g.sum(self._dim, keepdims=True)
        return g - xp.exp(y) * xp.sum(g, self._dim, True)


def _softmax_prep(input, dim, dtype, kernel):
    if dtype is not None:
        input = input.to(dtype)
    a = input._data
    d = wrap_dim(dim, a.ndim)
    if a.dtype.char not in FLOAT_CHARS:
        if d != max(a.ndim - 1, 0):
            kernel = kernel.replace("_lastdim", "")
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{FROM_NP[a.dtype].scalar_name}\'')
    if a.ndim == 0:
        a = a.reshape(1)
    if a.dtype in REDUCED:  # float32 inside, rounded once at the end (_finish_dim_op)
        a = a.astype(F32)
    return input, a, d


def _softmax_nans(out: np.ndarray, a: np.ndarray, m: np.ndarray, d: int) -> np.ndarray:
    """A float16/bfloat16 softmax ``out`` along the last dim (of float32 ``a``, row maxima
    ``m``) with the NaN bits of torch's last-dim kernel, which turns a row holding NaN or +inf
    (or only -inf) all NaN. Its 16-element vector steps: bfloat16 0xFFFF there, 0x7FC0 in the
    row's scalar tail; float16 0xFFFF where a NaN lies in the vector part (its max or-s in all
    ones; not the part's last element when the tail is under 8 long), else 0xFE00
    where +inf does or only -inf (inf - inf), else its NAN (0x7E00)."""
    bad = (m != m) | (np.abs(m) == np.inf)
    if d != a.ndim - 1 or not bad.any():
        return out
    n = a.shape[-1]
    vec = n - n % 16
    out = np.array(out, order="C")
    bits = out.view(np.uint16)
    rows = np.broadcast_to(bad, out.shape) & np.isnan(out)  # (_safe_softmax zeroes -inf rows)
    if out.dtype == np.float16:
        lim = vec if n % 16 >= 8 else max(vec - 1, 0)  # (measured: its reduction's lanes)
        nan_vec = np.isnan(a[..., :lim]).any(axis=-1, keepdims=True)
        inf = (a == np.inf).any(axis=-1, keepdims=True) | (m == -np.inf)
        fill = np.where(nan_vec, 0xFFFF, np.where(inf, 0xFE00, 0x7E00)).astype(np.uint16)
        bits[rows] = np.broadcast_to(fill, out.shape)[rows]
    else:
        in_vec = np.arange(n) < vec
        bits[rows] = np.where(in_vec, np.uint16(0xFFFF), np.uint16(0x7FC0))[
            np.nonzero(rows)[-1]]
    return out


def _finish_dim_op(P, out, input, d, scalar, given=None, rows=None):
    if out.dtype != input._data.dtype and input._data.dtype in REDUCED:
        out = out.astype(input._data.dtype)
        if rows is not None:  # softmax's (input, row maxima): the bits of its NaN rows
            out = _softmax_nans(out, *rows, d)
    if scalar:
        out = out.reshape(())
    # (contiguous whatever the input's layout, as PyTorch allocates softmax's output)
    return apply(P, c_order(out), input, save_out=True, _dim=None if scalar else d, _g=given)


def softmax(input, dim, dtype=None) -> Tensor:  # noqa: A002
    """``exp(x) / sum(exp(x))`` along ``dim``, computed without overflow.

    >>> import retrograd as torch
    >>> torch.softmax(torch.tensor([0., 0.]), 0)
    tensor([0.5000, 0.5000])
    """
    try:
        input, a, d = _softmax_prep(input, dim, dtype, "softmax_lastdim_kernel_impl")
        rd = input._data.dtype
        with np.errstate(invalid="ignore", over="ignore"):
            m = a.max(axis=d, keepdims=True) if a.size else None
            out = a - m if a.size else a.copy()
            np.exp(out, out=out)
            s = out.sum(axis=d, keepdims=True)
            inner = math.prod(a.shape[d + 1:])
            if rd in REDUCED and d != a.ndim - 1 and inner % 16:
                # PyTorch's kernel for 16-bit floats over an inner dim runs 16 inner positions
                # at a time (an AVX2 vector); the last inner % 16 positions take its scalar
                # tail, which stores exp(x - max) in the dtype before dividing
                tail = out.reshape(a.shape[:d + 1] + (inner,))[..., inner - inner % 16:]
                tail[...] = tail.astype(rd).astype(F32)
            out /= s
        return _finish_dim_op(SoftmaxBackward0, out, input, d, input._data.ndim == 0, dim,
                              None if m is None else (a, m))
    except (AttributeError, TypeError):
        _SOFTMAX["softmax"].check(input, dim, dtype)
        raise


class SafeSoftmaxBackward0(SoftmaxBackward0):
    """softmax whose rows of nothing but ``-inf`` give zeros (attention's math path); the
    gradient is softmax's, from the saved result (zero on those rows)."""


def _safe_softmax(input, dim, dtype=None) -> Tensor:  # noqa: A002
    """``softmax``, with zeros where every input along ``dim`` is ``-inf`` (PyTorch's
    ``_safe_softmax``, which its attention uses).

    >>> import retrograd as torch
    >>> torch._safe_softmax(torch.tensor([[float("-inf"), float("-inf")], [0., 0.]]), -1)
    tensor([[0.0000, 0.0000],
            [0.5000, 0.5000]])
    """
    input, a, d = _softmax_prep(input, dim, dtype, "softmax_lastdim_kernel_impl")
    with np.errstate(invalid="ignore", over="ignore"):
        m = a.max(axis=d, keepdims=True) if a.size else None
        out = a - m if a.size else a.copy()
        np.exp(out, out=out)
        out /= out.sum(axis=d, keepdims=True)
        if a.size:
            gone = m == -np.inf  # the row's maximum is -inf: every entry is
            if gone.any():
                np.copyto(out, out.dtype.type(0), where=gone)
    return _finish_dim_op(SafeSoftmaxBackward0, out, input, d, input._data.ndim == 0, dim,
                          None if m is None else (a, m))


def log_softmax(input, dim, dtype=None) -> Tensor:  # noqa: A002
    """``x - logsumexp(x)`` along ``dim``, computed without overflow.

    >>> import retrograd as torch
    >>> torch.log_softmax(torch.tensor([0., 0.]), 0)
    tensor([-0.6931, -0.6931])
    """
    try:
        input, a, d = _softmax_prep(input, dim, dtype, "log_softmax_lastdim_kernel_impl")
        rd = input._data.dtype
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            out = a - a.max(axis=d, keepdims=True) if a.size else a.copy()
            s = np.exp(out).sum(axis=d, keepdims=True)
            if rd in REDUCED and d == a.ndim - 1:
                # PyTorch's last-dim kernel keeps the row sums, then their logs, in the
                # input's dtype (two roundings before the float32 subtraction)
                out -= np.log(s.astype(rd).astype(F32)).astype(rd).astype(F32)
            else:
                out -= np.log(s)
        return _finish_dim_op(LogSoftmaxBackward0, out, input, d, input._data.ndim == 0, dim)
    except (AttributeError, TypeError):
        _SOFTMAX["log_softmax"].check(input, dim, dtype)
        raise


def _softmax_method(self, dim, dtype=None):
    return softmax(self, dim, dtype)


def _log_softmax_method(self, dim, dtype=None):
    return log_softmax(self, dim, dtype)


# -- nll_loss ----------------------------------------------------------------------------------


class NllLossBackward0(Node):
    """The gradient lands at each target's class: ``-weight[t] * g`` (over the total weight
    for a mean), zero elsewhere."""

    # PyTorch's saves, in its order (saved_hooks.py); its total weight is there for every
    # reduction (kept here only for a mean).
    _packs = (0, "_t", "_weight", "=total_weight")

    def backward(self, xp, g):
        self.saved(False)  # (version-checks the kept input, as PyTorch's node does)
        coef = self._coef  # -weight[t] per element (0 where ignored); None: all -1
        t = self._t  # (read once: under saved-tensor hooks this unpacks it)
        total = self._total
        self._weight  # noqa: B018 - (unpacked too, as PyTorch's node does; _coef holds it)
        if self._reduction == "mean":
            g = g / total
        c = -g if coef is None else g * coef
        ign = self._ignored
        if ign is not None and total is not None and not total:
            # A mean over no weight (every target ignored): PyTorch's kernel writes 0 at an
            # ignored target and never divides there (g / 0 times 0 would be NaN everywhere)
            c = xp.where(~ign, c, 0.0)
        shape = self._shape
        if xp.TENSORS:
            if tuple(c.shape) != t.shape:
                c = xp.expand(c, t.shape)
            out = xp.scatter_along(xp.unsqueeze(c, 1), np.expand_dims(t, 1), 1, shape)
        else:
            out = np.zeros(shape, dtype=self._dtype)
            if len(shape) == 2:
                out[_arange(shape[0]), t] = c
            else:
                c = np.broadcast_to(c, t.shape)
                np.put_along_axis(out, np.expand_dims(t, 1), np.expand_dims(c, 1), axis=1)
        if self._in_shape != shape:
            out = xp.reshape(out, self._in_shape)
        return out


_ARANGE: dict = {}


def _arange(n: int) -> np.ndarray:
    """``np.arange(n)``, cached: the row index of every nll_loss forward and backward."""
    r = _ARANGE.get(n)
    if r is None:
        if len(_ARANGE) > 64:
            _ARANGE.clear()
        r = _ARANGE[n] = np.arange(n)
        r.flags.writeable = False
    return r


class NllLoss2DBackward0(NllLossBackward0):
    """nll_loss on (N, C, H, W) inputs (PyTorch's nll_loss2d)."""


def _segment_sums(vals: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Sums of the runs of ``vals`` that end where ``ends`` is True (and the open run after
    the last end), each added element by element from 0 with a rounding to the dtype at every
    step, as a loop of scalars would: one NumPy step per element of the longest run."""
    n = vals.size
    seg = np.zeros(n, np.intp)
    np.cumsum(ends[:-1], out=seg[1:])
    starts = np.flatnonzero(np.concatenate(([True], ends[:-1])))
    pos = np.arange(n) - starts[seg]
    grid = np.zeros((starts.size, int(pos.max()) + 1), vals.dtype)
    grid[seg, pos] = vals  # padding adds zeros, which leave a sum unchanged
    acc = grid[:, 0].copy()  # 0 + v is v
    for k in range(1, grid.shape[1]):
        acc = acc + grid[:, k]
    return acc


def _cascade_sum(terms: np.ndarray, keep) -> np.ndarray:
    """PyTorch's nll_loss sum for float16/bfloat16 (its CPU kernel, checked bit for bit):
    eight partial sums in the dtype; element ``b`` (not ignored) adds to level 0, then each
    level ``j`` whose ``4 (j + 1)`` low bits of ``b`` are all 0 moves its sum up to ``j + 1``;
    the total adds the levels up in order. ``keep`` False marks ignored targets (skipped)."""
    dt = terms.dtype
    b = np.arange(terms.size)
    if keep is not None:
        terms, b = terms[keep], b[keep]
    parts = []
    vals, idx = terms, b
    for j in range(7):
        if vals.size == 0:
            parts.append(None)
            continue
        ends = (idx & ((1 << (4 * (j + 1))) - 1)) == 0  # this level moves up after b
        sums = _segment_sums(vals, ends)
        closed = int(ends.sum())
        parts.append(sums[closed] if sums.size > closed else None)  # the open run stays
        vals, idx = sums[:closed], idx[ends]
    parts.append(_segment_sums(vals, np.zeros(vals.size, bool))[0] if vals.size else None)
    total = np.zeros((), dt)
    for p in parts:
        if p is not None:
            total = total + p
    return np.asarray(total, dt)


def nll_loss_core(input, target, weight, ignore_index: int, reduction: str,
                  n_classes: int) -> Tensor:
    """nll_loss on a batched input (N, C, d1, ...) with integer targets (N, d1, ...) of checked
    shape and dtype; raises IndexError for a target out of range that is not ``ignore_index``."""
    x = input._data
    in_shape = x.shape
    if x.ndim == 1:  # one sample without a batch dimension
        x = x.reshape(1, -1)
    t = target._data
    ignored = None
    if t.size:
        tmin, tmax = t.min(), t.max()
        if tmin < 0 or tmax >= n_classes:
            ignored = t == ignore_index
            bad = (~ignored) & ((t < 0) | (t >= n_classes))
            if bad.any():
                raise IndexError(f"Target {int(t[bad].flat[0])} is out of bounds.")
            if not ignored.any():
                ignored = None
        elif ignore_index >= 0 and ignore_index < n_classes:
            ignored = t == ignore_index
            if not ignored.any():
                ignored = None
    if ignored is not None:
        t = np.where(ignored, 0, t)
    t = t.astype(np.intp, copy=False)
    if x.ndim == 2:
        picked = x[_arange(x.shape[0]), t]
    else:
        picked = np.take_along_axis(x, np.expand_dims(t, 1), axis=1).squeeze(1)
    dt = x.dtype
    w = coef = None
    if weight is not None:
        w = weight._data.astype(dt, copy=False)[t]
        if ignored is not None:
            w = np.where(ignored, np.zeros((), dt), w)
        coef = -w
    elif ignored is not None:
        coef = np.where(ignored, np.zeros((), dt), np.asarray(-1, dt))
    loss = -picked if coef is None else picked * coef
    if ignored is not None:
        loss[ignored] = 0  # (+0, as PyTorch writes it; picked * 0 may be -0)
    total = None
    cascade = dt in REDUCED and reduction != "none"
    if cascade:  # float16/bfloat16: PyTorch's kernels sum in the dtype, in a cascade over the
        # targets in order (nll_loss2d too)
        keep = None if ignored is None else ~ignored.ravel()
        lsum = _cascade_sum(loss.ravel(), keep)
    if reduction == "none":
        out = loss.reshape(()) if len(in_shape) == 1 else loss
    elif reduction == "sum":
        out = lsum if cascade else np.asarray(loss.sum(), dtype=dt)
    elif cascade:
        total = _cascade_sum(w.ravel(), keep) if w is not None else \
            np.asarray(t.size - (0 if ignored is None else int(ignored.sum())), dt)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = (lsum.astype(F32) / total.astype(F32)).astype(dt)
    else:
        if w is not None:
            total = w.sum(dtype=dt)
        elif ignored is not None:
            total = np.asarray(t.size - int(ignored.sum()), dt)
        else:
            total = np.asarray(t.size, dt)
        if total:
            out = np.asarray(loss.sum() / total, dtype=dt)
        else:  # every target ignored (or none): 0 / 0, as in PyTorch
            with np.errstate(invalid="ignore", divide="ignore"):
                out = np.asarray(loss.sum() / total, dtype=dt)
    return apply(NllLoss2DBackward0 if x.ndim == 4 else NllLossBackward0, out, input,
                 save=(input,), _coef=coef, _reduction=reduction, _total=total, _shape=x.shape,
                 _dtype=dt, _in_shape=in_shape, _t=t, _weight=weight, _ignore=ignore_index,
                 _ignored=ignored)


# -- pointwise losses --------------------------------------------------------------------------


def _reduce(loss, reduction, dt):
    if reduction == "none":
        return loss
    if dt in REDUCED:  # float16/bfloat16 losses accumulate in float32, as PyTorch's sum/mean
        with np.errstate(over="ignore", invalid="ignore"):
            f = np.sum(loss, dtype=F32) if reduction == "sum" else np.mean(loss, dtype=F32)
            return np.asarray(f).astype(dt)
    if reduction == "sum":
        return np.asarray(loss.sum(), dtype=dt)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(loss.sum() / np.asarray(loss.size, dt), dtype=dt)


def _scale(g, node):
    """The incoming gradient divided by the element count for a mean."""
    if node._reduction == "mean":
        return g / node._n
    return g


# Losses whose bfloat16 kernel (reduction="none") converts its NaNs in vector steps with a
# scalar tail (checked with torch): 0xFFFF and 0x7FC0, as ``bf16_nans``.
_LOOP_LOSSES = frozenset(("MseLossBackward0", "HuberLossBackward0"))


def _binary_loss(P, input, target, reduction, params=(), consts=(), **attrs):
    """An elementwise loss of (input, target): ``P.forward(a, b, *params)`` on the broadcast
    arrays, reduced, through ``apply``. ``consts`` (a loss's weights) are saved for the formula
    but get no edge: PyTorch has no derivative for them (see ``check_not_differentiable``)."""
    a, b = operands(input, target)
    if a.shape != b.shape:
        shape = np.broadcast_shapes(a.shape, b.shape)
        a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    dt = a.dtype
    loss = P.forward(a, b, *params)
    if reduction == "none" and dt == bfloat16.np and P.__name__ in _LOOP_LOSSES:
        loss = bf16_nans(np.asarray(loss, dtype=dt), a, b)  # (vector steps, a scalar tail)
    out = _reduce(np.asarray(loss, dtype=dt), reduction, dt)
    return apply(P, out, input, target, save=(input, target) + consts, _reduction=reduction,
                 _n=float(loss.size), **attrs)


def _mse_array(a, b):
    d = a - b
    return d * d


class MseLossBackward0(Node):
    forward = staticmethod(_mse_array)

    def backward(self, xp, g):
        x, y = self.saved(xp.TENSORS)
        if not xp.TENSORS and x.dtype in REDUCED and y.dtype == x.dtype:
            # torch's kernel: norm * (x - y) * g, each step in the dtype (norm = 2 / n rounded)
            norm = np.asarray(2.0 / self._n if self._reduction == "mean" else 2.0, F32)
            d = (norm.astype(x.dtype) * (x - y)) * g
        else:
            d = (x - y) * (_scale(g, self) * 2.0)
        return (d if self._needs(0) else None), (-d if self._needs(1) else None)


def mse_loss(input, target, reduction="mean") -> Tensor:  # noqa: A002
    """Mean squared error between ``input`` and ``target`` (broadcast).

    >>> import retrograd as torch
    >>> torch.nn.functional.mse_loss(torch.tensor([1., 3.]), torch.tensor([0., 0.]))
    tensor(5.)
    """
    return _binary_loss(MseLossBackward0, input, target, reduction)


def _huber_reduced(a, b, delta):
    """PyTorch's huber kernels for 16-bit floats: bfloat16 rounds every step (and delta) to
    the dtype, float16 computes in float32 (delta too) and rounds once."""
    rd = a.dtype
    x, y = a.astype(F32), b.astype(F32)
    half = F32.type(0.5)
    if rd == np.float16:
        z = np.abs(x - y)
        dl = F32.type(delta)
        return np.where(z < dl, half * z * z, dl * (z - half * dl)).astype(rd)

    def rnd(v):
        return v.astype(rd).astype(F32)

    dl = rnd(np.asarray(delta, F32))
    z = np.abs(rnd(x - y))
    return np.where(z < dl, rnd(rnd(half * z) * z), rnd(dl * rnd(z - rnd(half * dl)))).astype(rd)


def _smooth_l1_array(a, b, beta, huber):
    if huber and a.dtype in REDUCED:
        with np.errstate(over="ignore", invalid="ignore"):
            return _huber_reduced(a, b, beta)
    d = np.abs(a - b)
    if huber:
        return np.where(d < beta, 0.5 * d * d, beta * (d - 0.5 * beta))
    if beta == 0:
        return d
    return np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)


class SmoothL1LossBackward0(Node):
    """Also huber_loss (HuberLossBackward0): the quadratic zone is |x - y| < beta (delta)."""

    forward = staticmethod(_smooth_l1_array)

    def backward(self, xp, g):
        x, y = self.saved(xp.TENSORS)
        b = self._beta
        d = x - y
        g = _scale(g, self)
        if self._huber:
            inner = d
            outer = xp.sign(d) * b
        else:
            inner = d * (1.0 / b) if b != 0 else d * 0.0
            outer = xp.sign(d)
        gr = g * xp.where(xp.abs(d) < b, inner, outer)
        return (gr if self._needs(0) else None), (-gr if self._needs(1) else None)


class HuberLossBackward0(SmoothL1LossBackward0):
    pass


def smooth_l1_loss(input, target, reduction="mean", beta=1.0, huber=False) -> Tensor:  # noqa: A002
    """Smooth L1 (``huber=False``, divided by beta) or Huber loss (``beta`` is delta).

    >>> import retrograd as torch
    >>> torch.nn.functional.smooth_l1_loss(torch.tensor([0.5, 3.]), torch.tensor([0., 0.]))
    tensor(1.3125)
    """
    P = HuberLossBackward0 if huber else SmoothL1LossBackward0
    return _binary_loss(P, input, target, reduction, (beta, huber), _beta=beta, _huber=huber)


class SoftMarginLossBackward0(Node):
    forward = staticmethod(lambda a, b: _softplus_array(-(a * b), 1.0, math.inf))

    def backward(self, xp, g):
        x, y = self.saved(xp.TENSORS)
        s = xp.sigmoid(-(x * y)) * -_scale(g, self)
        return (s * y if self._needs(0) else None), (s * x if self._needs(1) else None)


def soft_margin_loss(input, target, reduction="mean") -> Tensor:  # noqa: A002
    """``log(1 + exp(-y * x))``, computed without overflow.

    >>> import retrograd as torch
    >>> torch.nn.functional.soft_margin_loss(torch.tensor([0.]), torch.tensor([1.]))
    tensor(0.6931)
    """
    return _binary_loss(SoftMarginLossBackward0, input, target, reduction)


def _bce_array(x, y, w):
    with np.errstate(divide="ignore"):
        lx = np.maximum(np.log(x), -100)
        l1x = np.maximum(np.log1p(-x), -100)
    loss = -(y * lx + (1 - y) * l1x)
    if w is not None:
        loss = loss * w
    return loss


class BinaryCrossEntropyBackward0(Node):
    """Edges (input, target); the weight is saved, as a constant (no derivative)."""

    forward = staticmethod(_bce_array)

    def backward(self, xp, g):
        x, y, w = self.saved(xp.TENSORS)
        g = _scale(g, self)
        if w is not None:
            g = g * w
        gx = gy = None
        if self._needs(0):
            eps = 1e-12
            den = (1.0 - x) * x
            den = xp.where(den > eps, den, eps)
            gx = g * (x - y) / den
        if self._needs(1):
            # unclamped, as in PyTorch: infinite at x = 0 or 1
            with np.errstate(divide="ignore"):
                gy = g * (xp.log(1.0 - x) - xp.log(x))
        return gx, gy


def binary_cross_entropy(input, target, weight=None, reduction="mean") -> Tensor:  # noqa: A002
    """``-w * (y * log(x) + (1 - y) * log(1 - x))`` with the logs clamped at -100; ``weight``
    must not require grad (``check_not_differentiable``).

    >>> import retrograd as torch
    >>> torch.nn.functional.binary_cross_entropy(torch.tensor([0.5]), torch.tensor([1.]))
    tensor(0.6931)
    """
    a = input._data
    if a.size and (np.any(a < 0) or np.any(a > 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    wd = None if weight is None else weight._data
    return _binary_loss(BinaryCrossEntropyBackward0, input, target, reduction, (wd,), (weight,))


def _bce_logits_array(x, y, w, pw):
    sp = _softplus_array(-x, 1.0, math.inf)  # log(1 + exp(-x)) = -log(sigmoid(x))
    if pw is None:
        loss = (1 - y) * x + sp
    else:
        loss = (1 - y) * x + (1 + (pw - 1) * y) * sp
    if w is not None:
        loss = loss * w
    return loss


class BinaryCrossEntropyWithLogitsBackward0(Node):
    """Edges (input, target); weight and pos_weight are saved, as constants (no derivative)."""

    forward = staticmethod(_bce_logits_array)

    def backward(self, xp, g):
        x, y, w, pw = self.saved(xp.TENSORS)
        g = _scale(g, self)
        if w is not None:
            g = g * w
        gx = gy = None
        if self._needs(0):
            s = xp.sigmoid(x)
            if pw is None:
                gx = g * (s - y)
            else:
                py = pw * y
                gx = g * (s * (py + 1.0 - y) - py)
        if self._needs(1):
            if pw is None:
                gy = g * -x
            else:
                gy = g * (pw * xp.softplus(-x) - xp.softplus(x))
        return gx, gy


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean",  # noqa: A002
                                     pos_weight=None) -> Tensor:
    """BCE on logits: ``(1 - y) x + (1 + (pw - 1) y) softplus(-x)``, stable for any x;
    ``weight`` and ``pos_weight`` must not require grad, as in PyTorch.

    >>> import retrograd as torch
    >>> torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor([0.]),
    ...                                                      torch.tensor([1.]))
    tensor(0.6931)
    """
    check_not_differentiable(weight, "weight", "binary_cross_entropy_with_logits")
    check_not_differentiable(pos_weight, "pos_weight", "binary_cross_entropy_with_logits")
    params = (None if weight is None else weight._data,
              None if pos_weight is None else pos_weight._data)
    return _binary_loss(BinaryCrossEntropyWithLogitsBackward0, input, target, reduction, params,
                        (weight, pos_weight))


_array.register(sigmoid=SigmoidBackward0.forward, softplus=SoftplusBackward0.forward)


__all__: list = ["softmax", "_safe_softmax", "log_softmax", "selu", "celu", "prelu", "threshold",
                 "hardshrink"]
XP: list = ["softplus"]
METHODS: dict = {"softmax": _softmax_method, "log_softmax": _log_softmax_method,
                 "prelu": prelu, "hardshrink": hardshrink}
INPLACE: dict = {}
