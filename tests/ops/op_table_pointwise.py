"""Op table entries for the pointwise family: unary math, special functions, binary ops, lerp,
addcmul/addcdiv, clamp_min/clamp_max, rounding and the non-differentiable bool/int ops."""

from __future__ import annotations

import retrograd
from retrograd.ops.unary import tanh_backward

from .op_table import BINARY, UNARY, OpInfo, _sh

TERNARY = _sh(((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), (3, 1)), ((), (2, 3), ()),
              ((0, 2), (2,), ()))
SMALL = _sh(((3, 4),), ((),), ((2, 3, 2),))


def _tanh_backward(lib, g, y):
    """tanh's backward as its own primitive (``TanhBackwardBackward0``): what a recorded
    backward through tanh (create_graph, forward mode's rule) calls; torch's aten op."""
    return tanh_backward(g, y) if lib is retrograd else lib.ops.aten.tanh_backward(g, y)


KINKS = (-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0)

OPS = [
    OpInfo("tanh_backward", _tanh_backward, BINARY),
    # unary math
    OpInfo("exp2", lambda lib, a: lib.exp2(a), UNARY),
    OpInfo("deg2rad", lambda lib, a: lib.deg2rad(a), UNARY),
    OpInfo("rad2deg", lambda lib, a: a.rad2deg(), UNARY),
    OpInfo("expm1", lambda lib, a: a.expm1(), UNARY),
    OpInfo("log2", lambda lib, a: lib.log2(a), UNARY, low=0.2, high=3.0),
    OpInfo("log10", lambda lib, a: a.log10(), UNARY, low=0.2, high=3.0),
    OpInfo("log1p", lambda lib, a: lib.log1p(a), UNARY, low=-0.6, high=2.0),
    OpInfo("rsqrt", lambda lib, a: a.rsqrt(), UNARY, low=0.3, high=3.0),
    OpInfo("square", lambda lib, a: lib.square(a), UNARY),
    OpInfo("tan", lambda lib, a: lib.tan(a), UNARY, low=-1.2, high=1.2),
    OpInfo("asin", lambda lib, a: lib.asin(a), UNARY, low=-0.9, high=0.9),
    OpInfo("acos", lambda lib, a: a.acos(), UNARY, low=-0.9, high=0.9),
    OpInfo("atan", lambda lib, a: lib.arctan(a), UNARY),
    OpInfo("sinh", lambda lib, a: a.sinh(), UNARY),
    OpInfo("cosh", lambda lib, a: lib.cosh(a), UNARY),
    OpInfo("asinh", lambda lib, a: lib.asinh(a), UNARY),
    OpInfo("acosh", lambda lib, a: a.acosh(), UNARY, low=1.2, high=3.0),
    OpInfo("atanh", lambda lib, a: lib.atanh(a), UNARY, low=-0.9, high=0.9),
    OpInfo("logit", lambda lib, a: lib.logit(a), UNARY, low=0.1, high=0.9),
    OpInfo("logit_eps", lambda lib, a: a.logit(eps=0.2), SMALL, low=0.02, high=0.98,
           extra={"avoid": (0.2, 0.8)}),
    OpInfo("sgn", lambda lib, a: lib.sgn(a) * a, UNARY, positive_gap=0.1),
    OpInfo("floor", lambda lib, a: lib.floor(a * 2) + a, UNARY, extra={"avoid": KINKS}),
    OpInfo("ceil", lambda lib, a: a.ceil(), UNARY, extra={"avoid": KINKS}),
    OpInfo("trunc", lambda lib, a: lib.trunc(a), UNARY, extra={"avoid": KINKS}),
    OpInfo("round", lambda lib, a: lib.round(a), UNARY, extra={"avoid": KINKS}),
    OpInfo("round_decimals", lambda lib, a: lib.round(a * 3, decimals=1), SMALL),
    OpInfo("round_decimals_neg", lambda lib, a: (a * 100).round(decimals=-1), SMALL),
    OpInfo("frac", lambda lib, a: lib.frac(a * 2), UNARY, extra={"avoid": KINKS}),
    OpInfo("fix", lambda lib, a: lib.fix(a) + a, SMALL, extra={"avoid": KINKS}),
    OpInfo("nan_to_num", lambda lib, a: lib.nan_to_num(lib.log(a), nan=0.5, neginf=-3.0),
           UNARY, positive_gap=0.1),
    OpInfo("positive", lambda lib, a: lib.positive(a * 2), UNARY),
    OpInfo("signbit", lambda lib, a: lib.signbit(a), UNARY, grad=False),
    # special functions
    OpInfo("erf", lambda lib, a: lib.erf(a), UNARY),
    OpInfo("erfc", lambda lib, a: a.erfc(), UNARY),
    OpInfo("erfinv", lambda lib, a: lib.erfinv(a), UNARY, low=-0.9, high=0.9),
    OpInfo("lgamma", lambda lib, a: lib.lgamma(a), UNARY, low=0.2, high=4.0),
    OpInfo("lgamma_neg", lambda lib, a: a.lgamma(), SMALL, low=-0.9, high=-0.1),
    OpInfo("digamma", lambda lib, a: lib.digamma(a), UNARY, low=0.3, high=4.0),
    OpInfo("digamma_neg", lambda lib, a: a.digamma(), SMALL, low=-1.8, high=-1.2),
    OpInfo("polygamma1", lambda lib, a: lib.polygamma(1, a), SMALL, low=0.5, high=3.0),
    OpInfo("polygamma2", lambda lib, a: a.polygamma(2), SMALL, low=0.5, high=3.0),
    # binary
    OpInfo("atan2", lambda lib, a, b: lib.atan2(a, b), BINARY, positive_gap=0.2),
    OpInfo("arctan2_method", lambda lib, a, b: a.arctan2(b), BINARY[:2], positive_gap=0.2),
    OpInfo("maximum", lambda lib, a, b: lib.maximum(a, b), BINARY),
    OpInfo("minimum", lambda lib, a, b: a.minimum(b), BINARY),
    OpInfo("fmax", lambda lib, a, b: lib.fmax(a, b), BINARY),
    OpInfo("fmin", lambda lib, a, b: lib.fmin(a, b), BINARY),
    OpInfo("hypot", lambda lib, a, b: lib.hypot(a, b), BINARY, positive_gap=0.2),
    OpInfo("logaddexp", lambda lib, a, b: lib.logaddexp(a, b), BINARY),
    OpInfo("logaddexp2", lambda lib, a, b: a.logaddexp2(b), BINARY),
    OpInfo("xlogy", lambda lib, a, b: lib.xlogy(a, b), BINARY, low=0.2, high=2.0),
    OpInfo("xlogy_scalar", lambda lib, a: lib.xlogy(a, 2.5), UNARY),
    OpInfo("xlogy_rscalar", lambda lib, a: lib.xlogy(1.5, a), UNARY, low=0.2, high=2.0),
    OpInfo("remainder", lambda lib, a, b: lib.remainder(a * 3, b), BINARY, low=0.5, high=2.0),
    OpInfo("remainder_op", lambda lib, a, b: (a * 3) % -b, BINARY[:3], low=0.5, high=2.0),
    OpInfo("remainder_scalar", lambda lib, a: a % 0.7, UNARY),
    OpInfo("fmod", lambda lib, a, b: lib.fmod(a * 3, b), BINARY, positive_gap=0.5),
    OpInfo("fmod_scalar", lambda lib, a: a.fmod(-0.7), UNARY),
    OpInfo("div_trunc", lambda lib, a, b: lib.div(a * 3, b, rounding_mode="trunc") + a,
           BINARY, positive_gap=0.5),
    OpInfo("div_floor", lambda lib, a: a.div(0.3, rounding_mode="floor") * a, UNARY),
    OpInfo("div_mode_none", lambda lib, a, b: lib.div(a, b, rounding_mode=None), BINARY,
           positive_gap=0.5),
    OpInfo("true_divide", lambda lib, a, b: lib.true_divide(a, b), BINARY, positive_gap=0.5),
    OpInfo("float_power", lambda lib, a, b: lib.float_power(a, b), BINARY, low=0.5, high=2.0),
    OpInfo("float_power_scalar", lambda lib, a: a.float_power(3), UNARY),
    OpInfo("float_power_rscalar", lambda lib, a: lib.float_power(2, a), UNARY),
    OpInfo("lerp", lambda lib, a, b: lib.lerp(a, b, 0.3), BINARY),
    OpInfo("lerp_high", lambda lib, a, b: a.lerp(b, 0.8), BINARY[:3]),
    OpInfo("lerp_tensor", lambda lib, a, b, w: lib.lerp(a, b, w), TERNARY, low=-1.0, high=1.0),
    OpInfo("addcmul", lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.5), TERNARY),
    OpInfo("addcmul_method", lambda lib, a, b, c: a.addcmul(b, c), TERNARY[:2]),
    OpInfo("addcdiv", lambda lib, a, b, c: lib.addcdiv(a, b, c, value=-2), TERNARY,
           positive_gap=0.5),
    OpInfo("clamp_min_scalar", lambda lib, a: lib.clamp_min(a, 0.3), UNARY,
           extra={"avoid": (0.3,)}),
    OpInfo("clamp_max_scalar", lambda lib, a: a.clamp_max(-0.2), UNARY,
           extra={"avoid": (-0.2,)}),
    OpInfo("clamp_min_tensor", lambda lib, a, b: lib.clamp_min(a, b), BINARY),
    OpInfo("clamp_max_tensor", lambda lib, a, b: a.clamp_max(b), BINARY),
    OpInfo("clip_tensor", lambda lib, a, lo: lib.clip(a, lo, lo + 1), BINARY[:3]),
    # not differentiable: values, dtypes and shapes only
    OpInfo("floor_divide", lambda lib, a, b: lib.floor_divide(a * 3, b), BINARY, grad=False,
           positive_gap=0.5),
    OpInfo("floordiv_op", lambda lib, a: (a * 3) // 0.7, UNARY, grad=False),
    OpInfo("int_remainder", lambda lib, a, b: (a * 10).long() % ((b * 10).long() + 25),
           BINARY[:3], grad=False),
    OpInfo("int_fmod", lambda lib, a: lib.fmod((a * 10).long(), -3), UNARY, grad=False),
    OpInfo("int_div_trunc", lambda lib, a: lib.div((a * 10).long(), -3, rounding_mode="trunc"),
           UNARY, grad=False),
    OpInfo("int_square", lambda lib, a: lib.square((a * 10).int()), UNARY, grad=False),
    OpInfo("int_sgn", lambda lib, a: (a * 10).long().sgn(), UNARY, grad=False),
    OpInfo("int_float_op", lambda lib, a: lib.erf((a * 3).long()) + lib.exp2((a * 3).long()),
           UNARY, grad=False),
    OpInfo("bool_square", lambda lib, a: lib.square(a > 0), UNARY, grad=False),
    OpInfo("bitwise", lambda lib, a, b: ((a * 10).long() & (b * 10).long()) |
           ((a * 10).long() ^ 5), BINARY, grad=False),
    OpInfo("bitwise_not", lambda lib, a: ~(a * 10).long() + (~(a > 0)).long(), UNARY,
           grad=False),
    OpInfo("shifts", lambda lib, a, b: ((a * 10).long() << (b.abs() * 3).long()) +
           ((a * 50).long() >> (b.abs() * 3).long()), BINARY, grad=False),
    OpInfo("logical", lambda lib, a, b: lib.logical_and(a > 0, b) | lib.logical_xor(a, b < 0)
           | lib.logical_not(a), BINARY, grad=False),
    OpInfo("maximum_int", lambda lib, a, b: lib.maximum((a * 5).long(), (b * 5).int()),
           BINARY, grad=False),
    OpInfo("isclose", lambda lib, a, b: lib.isclose(a, a + b * 1e-6), BINARY, grad=False),
]
