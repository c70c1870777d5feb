"""Arithmetic ops: add, sub, mul, div, pow, and their kin (remainder, fmod, floor_divide,
float_power, lerp, addcmul, addcdiv) with the binary math functions atan2, hypot, logaddexp, xlogy.

Each primitive is declared once, as a Backward node class: ``forward`` on arrays, ``saves``
(what each input's gradient formula reads) and ``backward``, its formula in ``xp`` (NumPy arrays
or retrograd tensors, see ``_array``). The functions hand the forward's result to
``_apply.apply`` or, for the binary ones, ``_apply.apply_binary``, the hot path of every
arithmetic operator.
"""

from __future__ import annotations

import numpy as np

from .. import _sleef
from .._dtypes import F32, FLOAT_CHARS, FROM_NP, REDUCED, WIDE_CHARS, bfloat16, binary_result
from .._rng_math import fma32
from .._sleef import lookup
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..autograd.graph import Node
from . import _array
from ._alpha import _alpha_fwd, _check_alpha, _fused, _reduced_alpha
from ._apply import apply, apply_binary, apply_unary, binary_op, needs_grad, recording
from ._base import legacy, not_implemented
from ._core import (
    Signatures,
    arg_error,
    as_tensor_arg,
    asarray,
    bf16_nans,
    broadcasting,
    c_order,
    called_by_operator,
    check_broadcast,
    default_float,
    f16_xlogy_nans,
    ndarray,
    operands,
    put_tail,
    quiet_tail,
    scalar_loop,
    scalar_value,
    tensor_arg,
)
from ._fmod_reduced import floor_div_reduced, fmod_reduced, remainder_reduced
from ._pow_reduced import _pow_half, _pow_nans, _pow_reduced
from .shape import cast

# PyTorch's signatures, for its errors when arguments fit none (checked only after a failure).
_NEG = Signatures("neg", "Tensor input, *, Tensor? out = None")
_ATAN2 = Signatures("atan2", "Tensor input, Tensor other, *, Tensor? out = None")
_LERP = Signatures("lerp", "Tensor input, Tensor end, Tensor weight, *, Tensor? out = None",
                   "Tensor input, Tensor end, Number weight, *, Tensor? out = None")
_POW = Signatures("pow", "Tensor input, Tensor exponent, *, Tensor? out = None",
                  "Number self, Tensor exponent, *, Tensor? out = None",
                  "Tensor input, Number exponent, *, Tensor? out = None")

_BF16 = bfloat16.np
_F16 = np.dtype(np.float16)


class AddBackward0(Node):
    forward = np.add
    saves = ((), ())
    _alpha = 1

    def backward(self, xp, g):
        alpha = self._alpha
        return g, (g if alpha == 1 else g * alpha)


class SubBackward0(Node):
    forward = np.subtract
    saves = ((), ())
    _alpha = 1

    def backward(self, xp, g):
        alpha = self._alpha
        return g, (-g if alpha == 1 else g * -alpha)


class RsubBackward1(Node):
    _alpha = 1

    def backward(self, xp, g):
        return -g if self._alpha == 1 else g * -self._alpha


class MulBackward0(Node):
    forward = np.multiply
    saves = ((1,), (0,))  # d/da reads b, d/db reads a

    def backward(self, xp, g):
        a, b = self.saved(xp.TENSORS)  # each saved only if the other input needs a grad
        return (None if b is None else g * b), (None if a is None else g * a)


class DivBackward0(Node):
    saves = ((1,), (0, 1))

    def backward(self, xp, g):
        a, b = self.saved(xp.TENSORS)
        ga = g / b if self.next_functions[0][0] is not None else None
        gb = None
        if a is not None:
            gb = -g * ((a / b) / b)  # PyTorch's order of operations (div_tensor_other_backward)
        return ga, gb


class NegBackward0(Node):
    forward = np.negative

    def backward(self, xp, g):
        return -g


class ReciprocalBackward0(Node):
    forward = np.reciprocal
    saves = "result"

    def backward(self, xp, g):
        r = self.saved_output(xp.TENSORS)
        return -g * (r * r)


class PowBackward0(Node):
    """x ** e for a number e."""

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        e = self._e
        if e == 0:
            return xp.zeros_like(g)
        return g * (e * xp.pow(x, e - 1))


def _power(a, b):
    """``a ** b`` elementwise; for integers as PyTorch's kernel: a negative exponent gives 1
    for base 1, +-1 for base -1 and 0 otherwise (NumPy refuses it); bool has no kernel."""
    kind = a.dtype.kind
    if kind not in "iub":  # (bfloat16's kind is "V")
        return np.power(a, b)
    if kind == "b":
        raise not_implemented("pow", a.dtype)
    neg = np.asarray(b) < 0
    if not neg.any():
        return np.power(a, b)
    r = np.power(a, np.where(neg, 0, b).astype(a.dtype, copy=False))
    odd = np.asarray(b) % 2 != 0
    alt = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
    return np.where(neg, alt, r).astype(r.dtype, copy=False)


class PowBackward1(Node):
    """x ** y for two tensors."""

    forward = staticmethod(_power)
    reduced = staticmethod(lambda a, b: _pow_reduced(a, b))
    saves = ((0, 1), (0, 1))
    _packs = (1, 0, "=result")  # PyTorch keeps the result too (autograd/saved_hooks.py)

    def backward(self, xp, g):
        x, y = self.saved(xp.TENSORS)
        ga = gb = None
        if self.next_functions[0][0] is not None:
            # d/dx is 0 where y == 0, even at x == 0 where x ** (y - 1) is infinite.
            ga = g * xp.where(y == 0, 0.0, y * xp.pow(x, y - 1))
        if self.next_functions[1][0] is not None:
            r = xp.pow(x, y)
            gb = g * xp.where((x == 0) & (y >= 0), 0.0, r * xp.log(x))
        return ga, gb


class PowBackward2(Node):
    """b ** y for a number b."""

    def backward(self, xp, g):
        (y,) = self.saved(xp.TENSORS)  # (unpacked and version-checked, as PyTorch's node)
        r = self.saved_output(xp.TENSORS)
        b = self._base
        if b == 0:
            return g * xp.where(y >= 0, 0.0, r * float(np.log(b)))
        return g * (r * float(np.log(b)))


def add(input, other, *, alpha=1) -> Tensor:  # noqa: A002
    """``input + alpha * other``, broadcasting.

    >>> import retrograd as torch
    >>> torch.add(torch.tensor([1., 2.]), torch.tensor([3., 4.]), alpha=2)
    tensor([ 7., 10.])
    """
    if not isinstance(input, Tensor):
        input = tensor_arg("add", "input", 1, input)
    if alpha != 1 or alpha.__class__ is not int:
        k = _check_alpha(input, other, alpha)
        return apply_binary(AddBackward0, _alpha_fwd(input, other, k), input, other,
                            _alpha=alpha)
    return apply_binary(AddBackward0, np.add, input, other)


def sub(input, other, *, alpha=1) -> Tensor:  # noqa: A002
    """``input - alpha * other``, broadcasting.

    >>> import retrograd as torch
    >>> torch.sub(torch.tensor([5., 5.]), torch.tensor([1., 2.]))
    tensor([4., 3.])
    """
    if not isinstance(input, Tensor):
        input = tensor_arg("sub", "input", 1, input)
    _check_bool_sub(input, other)
    if alpha != 1 or alpha.__class__ is not int:
        k = _check_alpha(input, other, -alpha if alpha.__class__ is not bool else alpha)
        return apply_binary(SubBackward0, _alpha_fwd(input, other, k), input, other,
                            _alpha=alpha)
    return apply_binary(SubBackward0, np.subtract, input, other)


def _check_bool_sub(a, b) -> None:
    a_bool = a._data.dtype.kind == "b"
    b_bool = b._data.dtype.kind == "b" if isinstance(b, Tensor) else b.__class__ is bool
    if a_bool and b_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead."
        )
    if a_bool or b_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def rsub(input, other, *, alpha=1) -> Tensor:  # noqa: A002
    """``other - alpha * input`` (what ``2 - x`` runs)."""
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    _check_bool_sub(input, other)
    ad, b = operands(input, other)
    if ad.dtype.char in WIDE_CHARS:
        raise not_implemented("add_stub", ad.dtype)
    if alpha != 1 or alpha.__class__ is not int:
        _check_alpha(input, other, alpha)
    if alpha != 1 and ad.dtype in REDUCED:
        # PyTorch's sub(other, input, alpha): its add kernel with the number as ``self``
        out = _fused(b.astype(F32), ad.astype(F32), _reduced_alpha(-alpha, ad.dtype), ad.dtype,
                     (np.asarray(b), ad))
        with np.errstate(over="ignore"):
            out = out.astype(ad.dtype)
    else:
        out = b - alpha * ad if alpha != 1 else b - ad
    if out.dtype == _BF16:
        out = bf16_nans(out, ad)  # (torch's add kernel: vector steps and a scalar tail)
    if alpha != 1:
        return apply(RsubBackward1, out, input, _alpha=alpha)
    return apply(RsubBackward1, out, input)


def mul_operator(self, other):
    """``self * other``; a Python sequence is repeated instead, as Python does with ints."""
    cls = other.__class__
    if cls is not Tensor and cls is not float and isinstance(other, (str, list, tuple)):
        return NotImplemented
    return apply_binary(MulBackward0, np.multiply, self, other)


def mul(input, other) -> Tensor:  # noqa: A002
    """Elementwise product, broadcasting.

    >>> import retrograd as torch
    >>> torch.tensor([1., 2.]) * 3
    tensor([3., 6.])
    """
    if not isinstance(input, Tensor):
        input = tensor_arg("mul", "input", 1, input)
    return apply_binary(MulBackward0, np.multiply, input, other)


class MulBackward1(MulBackward0):
    """``mul`` by a number as PyTorch's composites record it (``Tensor.mul(Scalar)``)."""


class DivBackward1(DivBackward0):
    """``div`` by a number as PyTorch's composites record it (``Tensor.div(Scalar)``)."""


class AddBackward1(AddBackward0):
    """``add`` of a number as PyTorch's composites record it (``Tensor.add(Scalar)``)."""

    def backward(self, xp, g):
        # One edge (the input's) once _one_edge trimmed it; a replay that
        # rebuilds the two-input call keeps the number's edge, which takes no gradient.
        return g if len(self.next_functions) == 1 else (g, None)


class SubBackward1(SubBackward0):
    """``sub`` of a number as PyTorch's composites record it (``Tensor.sub(Scalar)``)."""

    def backward(self, xp, g):
        # (as AddBackward1's)
        return g if len(self.next_functions) == 1 else (g, None)


def _one_edge(t: Tensor, P) -> Tensor:
    """Drop the number's edge from ``t``'s ``P`` node: PyTorch's Scalar overloads have one
    input, so next_functions has one entry. (Recorded by ``apply_binary``, whose forward AD,
    vmap, save plan and saved-tensor packing stay the two-input pointwise call's; the engine
    and the replay read one edge and one metadata entry, and ``backward``'s trailing None for
    the number is dropped.)"""
    fn = t._grad_fn
    if fn is not None and fn.__class__ is P and len(fn.next_functions) == 2:
        fn.next_functions = fn.next_functions[:1]
        fn._meta = fn._meta[:1]
    return t


def mul_scalar(input: Tensor, other: float) -> Tensor:  # noqa: A002
    """``input * other`` recorded as ``MulBackward1`` (for composites that mirror PyTorch's),
    with one edge as PyTorch's.

    >>> import retrograd as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> len(mul_scalar(x, 2.0).grad_fn.next_functions)
    1
    """
    return _one_edge(apply_binary(MulBackward1, np.multiply, input, other), MulBackward1)


def div_scalar(input: Tensor, other: float) -> Tensor:  # noqa: A002
    """``input / other`` recorded as ``DivBackward1``, with one edge as PyTorch's.

    >>> import retrograd as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> len(div_scalar(x, 2.0).grad_fn.next_functions)
    1
    """
    return _one_edge(apply_binary(DivBackward1, _true_div, input, other), DivBackward1)


def add_scalar(input: Tensor, other: float) -> Tensor:  # noqa: A002
    """``input + other`` recorded as ``AddBackward1``, with one edge as PyTorch's.

    >>> import retrograd as torch
    >>> len(add_scalar(torch.ones(2, requires_grad=True), 1e-12).grad_fn.next_functions)
    1
    """
    return _one_edge(apply_binary(AddBackward1, np.add, input, other), AddBackward1)


def sub_scalar(input: Tensor, other: float) -> Tensor:  # noqa: A002
    """``input - other`` recorded as ``SubBackward1``, with one edge as PyTorch's."""
    return _one_edge(apply_binary(SubBackward1, np.subtract, input, other), SubBackward1)


def _true_div(x, y):
    if x.dtype.char not in FLOAT_CHARS and (y.__class__ is not float and
                                (y.__class__ is int or y.__class__ is bool or
                                 y.dtype.char not in FLOAT_CHARS)):
        # Integer / integer is true division into the default float dtype.
        dt = default_float()
        if dt in REDUCED:  # both cast to float16/bfloat16, divided in float32, rounded once
            y = np.asarray(y).astype(dt)
            return np.true_divide(x.astype(dt).astype(F32), y.astype(F32)).astype(dt)
        return np.true_divide(x, y, dtype=dt)
    return np.true_divide(x, y)


class DivModeBackward(DivBackward0):
    """True division through ``div``'s rounding_mode overload (``rounding_mode=None`` given):
    PyTorch records it as DivBackward2."""

    _name = "DivBackward2"


_NO_MODE = object()  # rounding_mode not given (None given picks PyTorch's other overload)


def div(input, other, *, rounding_mode=_NO_MODE) -> Tensor:  # noqa: A002
    """Elementwise division; integers divide into the default float dtype.

    >>> import retrograd as torch
    >>> torch.tensor([1, 2]) / 2
    tensor([0.5000, 1.0000])
    """
    if not isinstance(input, Tensor):
        input = tensor_arg("div", "input", 1, input)
    if rounding_mode is _NO_MODE:
        return apply_binary(DivBackward0, _true_div, input, other)
    if rounding_mode is not None:
        return _div_rounding(input, other, rounding_mode)
    return apply_binary(DivModeBackward, _true_div, input, other, _rounding_mode=None,
                        _g=other)


def _div_rounding(a, b, mode):
    ad, bd = operands(a, b)
    if ad.dtype.char in WIDE_CHARS or ad.dtype.kind == "b":
        raise not_implemented("div_floor_cpu" if mode == "floor" else "div_trunc_cpu", ad.dtype)
    _check_int_zero(ad, bd)
    if mode == "trunc" and ad.dtype in REDUCED and not isinstance(b, Tensor):
        # by a number: float32 inside (the number too), truncated, rounded once (by a tensor,
        # torch divides in the dtype's arithmetic: rounded, then truncated)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            r = np.trunc(ad.astype(F32) / F32.type(scalar_value(b))).astype(ad.dtype)
    elif mode == "trunc":
        r = (np.trunc(broadcasting(np.true_divide, ad, bd)) if ad.dtype.char in FLOAT_CHARS
             else broadcasting(_int_trunc_div, ad, bd))
    elif mode == "floor":
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if ad.dtype not in REDUCED:
                r = broadcasting(np.floor_divide, ad, bd)
            elif isinstance(b, Tensor):
                r = broadcasting(floor_div_reduced, ad, bd)
            else:  # by a number: float32 inside (the number too), one rounding
                r = floor_div_reduced(ad, np.asarray(scalar_value(b), F32), False)
    else:
        raise RuntimeError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{mode}'"
        )
    if ad.dtype == _BF16 and (mode == "trunc" or mode == "floor"):
        r = bf16_nans(asarray(r), ad, np.asarray(bd))  # (vector steps and a scalar tail)
    r = asarray(r).astype(ad.dtype if isinstance(b, Tensor) or ad.dtype.char in FLOAT_CHARS
                          else ad.dtype, copy=False)
    # Rounded division is piecewise constant: its gradient is zero. PyTorch's node keeps
    # ``other``, and ``input`` where ``other`` requires grad: kept (version-checked) the same.
    bt = b if isinstance(b, Tensor) else None
    return apply(DivRoundingBackward, r, a, bt, save=(a if needs_grad(bt) else None, bt),
                 _rounding_mode=mode, _g=b)


class DivRoundingBackward(Node):
    _name = "DivBackward2"

    def backward(self, xp, g):
        self.saved(False)
        return xp.zeros_like(g), xp.zeros_like(g)


def _int_trunc_div(a, b):
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (np.asarray(b) < 0))
    return q + fix


def true_divide(input, other) -> Tensor:  # noqa: A002
    """``div`` without rounding (PyTorch's alias).

    >>> import retrograd as torch
    >>> torch.true_divide(torch.tensor([3]), 2)
    tensor([1.5000])
    """
    return div(input, other)


def rdiv(input, other) -> Tensor:  # noqa: A002
    """``other / input`` for a number ``other``: PyTorch computes ``reciprocal(input) * other``."""
    if isinstance(other, Tensor):
        return div(other, input)
    return mul(reciprocal(input), other)


def neg(input) -> Tensor:  # noqa: A002
    """``-input``.

    >>> import retrograd as torch
    >>> -torch.tensor([1., -2.])
    tensor([-1.,  2.])
    """
    try:
        if input._data.dtype.kind == "b":
            raise RuntimeError(
                "Negation, the `-` operator, on a bool tensor is not supported. If you are "
                "trying to invert a mask, use the `~` or `logical_not()` operator instead."
            )
        if input._data.dtype.char in WIDE_CHARS:
            raise not_implemented("neg_cpu", input._data.dtype)
        if input._data.dtype in REDUCED:  # (a NaN's bits: its kernels')
            return apply(NegBackward0, quiet_tail(np.negative(input._data), input._data), input)
        return apply_unary(NegBackward0, input, input._data)
    except (AttributeError, TypeError):
        _NEG.check(input)
        raise


def reciprocal(input) -> Tensor:  # noqa: A002
    """``1 / input``.

    >>> import retrograd as torch
    >>> torch.reciprocal(torch.tensor([2., 4.]))
    tensor([0.5000, 0.2500])
    """
    return apply_unary(ReciprocalBackward0, input)


def pow(input, exponent) -> Tensor:  # noqa: A001, A002
    """``input ** exponent``: tensor or number on either side.

    >>> import retrograd as torch
    >>> torch.tensor([2., 3.]) ** 2
    tensor([4., 9.])
    """
    try:
        if not isinstance(input, Tensor):
            return _rpow(as_tensor_arg(exponent), input)
        e = scalar_value(exponent)
        if e is not None:
            ad, e = operands(input, e)
            if ad.dtype.char in WIDE_CHARS:
                raise not_implemented("pow", ad.dtype)
            if ad.dtype.kind in "iu" and e.__class__ is int and e < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            if (e == 0 or e == 1) and ad.dtype in REDUCED:
                # torch fills ones (NaN ** 0 is 1) or copies (a NaN keeps its bits)
                out = np.ones_like(ad) if e == 0 else ad.copy()
                if e == 1 and ad.dtype == _F16:
                    out = quiet_tail(out, ad)  # (float16's copy quiets a NaN)
            elif e == 2:
                out = np.multiply(ad, ad)
            elif (e == 0.5 or e == -0.5) and ad.dtype.char in FLOAT_CHARS:
                out = _pow_half(ad, float(e))
            elif e == 0.5:
                out = np.sqrt(ad)
            elif (e == 3 or e == -2) and ad.dtype is _BF16:
                # PyTorch's bfloat16 kernel rounds after each step: x*x*x, 1/(x*x).
                out = np.multiply(ad, ad)
                out = np.multiply(out, ad) if e == 3 else np.reciprocal(out)
            else:
                out = np.power(ad, e)
            if ad.dtype in REDUCED and e != 0 and e != 1:
                out = _pow_nans(out, ad, e)
            # (``_g``: the exponent as given, PyTorch's ``_saved_exponent``: 2 stays an int)
            return apply(PowBackward0, out, input, save=(input,), _e=e, _g=exponent)
        return apply_binary(PowBackward1, _power, input, exponent)
    except (AttributeError, TypeError):
        if not called_by_operator():
            _POW.check(input, exponent)
        raise


def _rpow(exponent: Tensor, base) -> Tensor:
    """``base ** exponent`` for a number ``base``."""
    b = scalar_value(base)
    ed, b = operands(exponent, b)
    out = np.power(b, ed) if ed.dtype.kind not in "iub" else _power(np.asarray(b, ed.dtype), ed)
    # (contiguous whatever the exponent's layout: PyTorch's number ** tensor result is)
    out = c_order(out) if out.__class__ is ndarray else asarray(out)
    if out.dtype != ed.dtype:
        out = out.astype(ed.dtype)
    if out.dtype in REDUCED:
        out = _pow_nans(out, ed, None, b)
    return apply(PowBackward2, out, exponent, save=(exponent,), save_out=True, _base=b,
                 _g=base)


def _check_int_zero(ad, bd) -> None:
    if ad.dtype.kind in "iub" and np.asarray(bd).dtype.kind in "iub" and np.any(bd == 0):
        raise RuntimeError("ZeroDivisionError")


def _float_ufunc(ufunc):
    """A binary NumPy function that computes in floats: integer operands take the default
    float dtype (as PyTorch's float ops do)."""

    def fn(x, y):
        if x.dtype.char not in FLOAT_CHARS:
            dt = default_float()
            x = x.astype(dt)
            if y.__class__ is ndarray:
                y = y.astype(dt)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return ufunc(x, y)

    return fn


def _float_only(name, a, b=None) -> None:
    """Ops with no integer kernel in PyTorch."""
    for t in (a, b):
        if isinstance(t, Tensor) and t._data.dtype.char not in FLOAT_CHARS:
            other = b if t is a else a
            if not (isinstance(other, Tensor) and other._data.dtype.char in FLOAT_CHARS) and \
                    other.__class__ is not float:
                dt = t._data.dtype
                if isinstance(other, Tensor):  # the kernel of the promoted dtype is missing
                    dt = binary_result(a.dtype, a._data.ndim == 0, b.dtype,
                                       b._data.ndim == 0).np
                raise not_implemented(f"{name}_cpu", dt)


def _tensor_other(name, other) -> None:
    if not isinstance(other, Tensor):  # (a method call counts from its first argument)
        raise arg_error(name, "other", 2, other)


def _atan2_reduced(a, b):
    """atan2 of two float16/bfloat16 arrays as torch's loop: SLEEF's float32 atan2 on the
    vectorised part, libm's ``atan2f`` (NumPy's float32 arctan2) on the scalar tail
    (``scalar_loop``), as ``fmod_reduced``."""
    rd = a.dtype
    tail = scalar_loop(np.broadcast_shapes(a.shape, b.shape), a, b)
    a, b = np.broadcast_arrays(a.astype(F32), b.astype(F32))
    with np.errstate(invalid="ignore"):
        return put_tail(_sleef.atan2f(a, b), tail, np.arctan2, a, b).astype(rd)


class Atan2Backward0(Node):
    reduced = staticmethod(_atan2_reduced)  # float16/bfloat16 as torch's kernel
    f16_nans = (0xFFFF, None)  # (_core.f16_binary_nans: SLEEF's all ones; libm's tail)
    saves = ((0, 1), (0, 1))

    def backward(self, xp, g):
        a, b = self.saved(xp.TENSORS)
        d = a * a + b * b
        nf = self.next_functions
        ga = g * b / d if nf[0][0] is not None else None
        gb = -g * a / d if nf[1][0] is not None else None
        return ga, gb


class HypotBackward0(Node):
    forward = np.hypot
    f16_nans = (0x7E00, None)  # (the vector kernel's NAN)
    saves = ((0, 1, "result"), (0, 1, "result"))

    def backward(self, xp, g):
        a, b = self.saved(xp.TENSORS)
        y = self.saved_output(xp.TENSORS)
        nf = self.next_functions
        ga = g * a / y if nf[0][0] is not None else None
        gb = g * b / y if nf[1][0] is not None else None
        return ga, gb


class LogaddexpBackward0(Node):
    forward = np.logaddexp
    f16_nans = (0x7E00, "first_neg")  # (the scalar loop's -abs(a - b) sets the sign)
    saves = ((0, 1), (0, 1))

    def backward(self, xp, g):
        a, b = self.saved(xp.TENSORS)
        nf = self.next_functions
        ga = g / (xp.exp(b - a) + 1) if nf[0][0] is not None else None
        gb = g / (xp.exp(a - b) + 1) if nf[1][0] is not None else None
        return ga, gb


_LN2 = float(np.log(2.0))


def _logaddexp2_reduced(a, b):
    """logaddexp2 of two float16/bfloat16 arrays as torch's kernel (SLEEF's exp2, log1p)."""
    return _sleef.logaddexp2f(a.astype(F32), b.astype(F32)).astype(a.dtype)


class Logaddexp2Backward0(Node):
    forward = np.logaddexp2
    reduced = staticmethod(_logaddexp2_reduced)  # float16/bfloat16 as torch's kernel
    f16_nans = (0x7E00, None)
    saves = ((0, 1), (0, 1))

    def backward(self, xp, g):
        a, b = self.saved(xp.TENSORS)
        nf = self.next_functions
        ga = g / (xp.exp((b - a) * _LN2) + 1) if nf[0][0] is not None else None
        gb = g / (xp.exp((a - b) * _LN2) + 1) if nf[1][0] is not None else None
        return ga, gb


def atan2(input, other) -> Tensor:  # noqa: A002
    """The angle of the point ``(other, input)``: ``atan(input / other)`` in the right quadrant.

    >>> import retrograd as torch
    >>> torch.atan2(torch.tensor([1.]), torch.tensor([1.]))
    tensor([0.7854])
    """
    try:
        _tensor_other("atan2", other)
        return apply_binary(Atan2Backward0, _float_ufunc(np.arctan2), input, other)
    except (AttributeError, TypeError):
        _ATAN2.check(input, other)
        raise


arctan2 = atan2


def hypot(input, other) -> Tensor:  # noqa: A002
    """``sqrt(input**2 + other**2)`` without overflow.

    >>> import retrograd as torch
    >>> torch.hypot(torch.tensor([3.]), torch.tensor([4.]))
    tensor([5.])
    """
    if not isinstance(input, Tensor):
        raise arg_error("hypot", "input", 1, input)
    _tensor_other("hypot", other)
    _float_only("hypot", input, other)
    return apply_binary(HypotBackward0, np.hypot, input, other)


def _check_logaddexp(name):
    def check(input, other) -> None:
        _tensor_other(name, other)
        _float_only(name, input, other)

    return check


logaddexp = binary_op(LogaddexpBackward0, "logaddexp", """``log(exp(input) + exp(other))``
    without overflow.

    >>> import retrograd as torch
    >>> torch.logaddexp(torch.tensor([0.]), torch.tensor([0.]))
    tensor([0.6931])
    """, prepare=_check_logaddexp("logaddexp"))


logaddexp2 = binary_op(Logaddexp2Backward0, "logaddexp2", """``log2(2**input + 2**other)``
    without overflow.

    >>> import retrograd as torch
    >>> torch.logaddexp2(torch.tensor([1.]), torch.tensor([1.]))
    tensor([2.])
    """, prepare=_check_logaddexp("logaddexp2"))
# Made in _apply, so doctest finds their examples through this table.
__test__ = {"logaddexp": logaddexp, "logaddexp2": logaddexp2}


def _xlogy_reduced(x, y):
    """xlogy of two float16/bfloat16 arrays as PyTorch's scalar kernel: ``log(y)`` is rounded
    to the dtype before the product (one more rounding)."""
    rd = x.dtype
    logy = lookup(_sleef.logf, y).astype(F32)
    x = x.astype(F32)
    with np.errstate(invalid="ignore", over="ignore"):
        r = x * logy
    return np.where((x == 0) & ~np.isnan(y.astype(F32)), F32.type(0), r).astype(rd)


class XlogyBackward0(Node):
    """xlogy of two tensors."""

    reduced = staticmethod(_xlogy_reduced)  # float16/bfloat16 as torch's kernel

    saves = ((0, 1), (0, 1))

    def backward(self, xp, g):
        x, y = self.saved(xp.TENSORS)
        nf = self.next_functions
        # d/dx is log(y), but 0 where x == 0 and y <= 0 (the mask _nonzero, made in xlogy).
        gx = g * xp.xlogy(self._nonzero, y) if nf[0][0] is not None else None
        gy = g * x / y if nf[1][0] is not None else None
        return gx, gy


class XlogyBackward1(Node):
    """xlogy of a number and a tensor."""

    def backward(self, xp, g):
        (y,) = self.saved(xp.TENSORS)
        return None, g * self._x / y


class XlogyBackward2(Node):
    """xlogy of a tensor and a number (both kept, as PyTorch's node keeps them)."""

    def backward(self, xp, g):
        self.saved(False)  # (version-checks the input)
        return g * self._dx, None  # log(other) (0 where input == 0 >= other): a constant


def _xlogy_array(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = x * np.log(y)
    return np.where((x == 0) & ~np.isnan(y), 0.0, r).astype(r.dtype, copy=False)


def xlogy(input, other) -> Tensor:  # noqa: A002
    """``input * log(other)``, and 0 where ``input`` is 0 (unless ``other`` is NaN).

    >>> import retrograd as torch
    >>> torch.xlogy(torch.tensor([0., 2.]), torch.tensor([0., 1.]))
    tensor([0., 0.])
    """
    if not isinstance(input, Tensor):
        # A number times the log of a tensor.
        y = other
        yd, xd = operands(y, input)
        yd, xd = _float_pair(yd, xd)
        out = f16_xlogy_nans(_xlogy_array(xd, yd), xd, yd)
        if out.dtype == _BF16:
            out = bf16_nans(out)  # (a kernel with scalar code only: 0x7FC0)
        return apply(XlogyBackward1, out, None, y, save=(y,), _x=xd, _self=input)
    if isinstance(other, Tensor):
        attrs = {}
        if recording(input, other):
            ad, bd = operands(input, other)
            # PyTorch 2.13: d/dx is log(y) except where x == 0 and y <= 0 (there 0)
            attrs["_nonzero"] = ((ad != 0) | (bd > 0)).astype(
                ad.dtype if ad.dtype.char in FLOAT_CHARS else default_float())
        return apply_binary(XlogyBackward0, _float_binary(_xlogy_array), input, other, **attrs)
    xd, yd = operands(input, other)
    xd, yd = _float_pair(xd, yd)
    out = f16_xlogy_nans(_xlogy_array(xd, yd), xd, yd)
    if out.dtype == _BF16:
        out = bf16_nans(out)  # (a kernel with scalar code only: 0x7FC0)
    dx = None
    if recording(input):  # log(other), but 0 where input == 0 and other is not > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            dx = np.where((xd != 0) | (yd > 0), np.log(yd), 0).astype(out.dtype)
    other = other.item() if isinstance(other, np.generic) else other  # (kept as a number)
    return apply(XlogyBackward2, out, input, None, save=(input, other), _dx=dx)


def _float_pair(x, y):
    if x.dtype.char not in FLOAT_CHARS:
        dt = default_float()
        x = x.astype(dt)
        if y.__class__ is ndarray:
            y = y.astype(dt)
    if y.__class__ is not ndarray:
        y = np.asarray(y, dtype=x.dtype)
    return x, y


def _float_binary(fn):
    def f(x, y):
        x, y = _float_pair(x, y) if x.dtype.char not in FLOAT_CHARS else (x, y)
        return fn(x, y)

    return f


class RemainderBackward0(Node):
    """remainder by a number."""

    def backward(self, xp, g):
        return g, None


class RemainderBackward1(Node):
    """Keeps both operands where ``other`` requires grad (only its gradient reads them), as
    PyTorch's node does."""

    _quotient = staticmethod(np.floor)

    def backward(self, xp, g):
        nf = self.next_functions
        ga = g if nf[0][0] is not None else None
        gb = None
        if nf[1][0] is not None:
            # d/db (a - b * floor(a / b)) = -floor(a / b), a constant of the forward.
            ad, bd = operands(*self.saved(True))
            with np.errstate(divide="ignore", invalid="ignore"):
                gb = g * -self._quotient(ad / bd)
        return ga, gb


class FmodBackward0(RemainderBackward0):
    """fmod by a number."""


class FmodBackward1(RemainderBackward1):
    _quotient = staticmethod(np.trunc)


class NotImplementedBackward(Node):
    """An op PyTorch computes but cannot differentiate: backward raises PyTorch's error."""

    _name = "torch::autograd::NotImplemented"

    def backward(self, xp, g):
        raise RuntimeError(f"derivative for aten::{self._op} is not implemented")


def _not_differentiable(op, out, *inputs):
    return apply(NotImplementedBackward, out, *inputs, _op=op)


def _fmod_array(a, b):
    if a.dtype in REDUCED:
        return fmod_reduced(a, b, a.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.fmod(a, b)


def _remainder_array(a, b):
    if a.dtype in REDUCED:
        return remainder_reduced(a, b)
    # PyTorch: fmod, then shifted by b where the signs of the result and b differ (keeps -0.0).
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.fmod(a, b)
        fix = (m != 0) & ((m < 0) != (np.asarray(b) < 0))
        return np.where(fix, m + b, m).astype(m.dtype, copy=False)


def _mod_op(name, fn, cls0, cls1):
    def op(input, other) -> Tensor:  # noqa: A002
        if not isinstance(input, Tensor):
            # A number by a tensor: computed, but PyTorch has no derivative for it.
            ot = as_tensor_arg(other)
            od, idd = operands(ot, input)
            if od.dtype.kind == "b":
                raise not_implemented(f"{name}_cpu", od.dtype)
            _check_int_zero(idd if isinstance(idd, ndarray) else np.asarray(idd), od)
            out = asarray(fn(np.asarray(idd, dtype=od.dtype), od))
            return _not_differentiable(name, out, None, ot)
        ad, bd = operands(input, other)
        if ad.dtype.char in WIDE_CHARS or ad.dtype.kind == "b":
            raise not_implemented(f"{name}_cpu", ad.dtype)
        try:
            _check_int_zero(ad, bd)
            out = asarray(fn(ad, bd))
        except ValueError:
            check_broadcast(ad.shape, np.shape(bd))
            raise
        if out.dtype != ad.dtype:
            out = out.astype(ad.dtype)
        if not isinstance(other, Tensor):
            return apply(cls0, out, input, None)
        return apply(cls1, out, input, other,
                     save=(input, other) if needs_grad(other) else None)

    op.__name__ = name
    return op


remainder = _mod_op("remainder", _remainder_array, RemainderBackward0, RemainderBackward1)
fmod = _mod_op("fmod", _fmod_array, FmodBackward0, FmodBackward1)
remainder.__doc__ = """The remainder with the sign of the divisor (Python's ``%``).

    >>> import retrograd as torch
    >>> torch.tensor([5., -5.]) % 3
    tensor([2., 1.])
    """
fmod.__doc__ = """The remainder with the sign of the dividend (C's ``fmod``).

    >>> import retrograd as torch
    >>> torch.fmod(torch.tensor([5., -5.]), 3)
    tensor([ 2., -2.])
    """


def floor_divide(input, other) -> Tensor:  # noqa: A002
    """``input // other`` rounded toward -inf; PyTorch has no derivative for it.

    >>> import retrograd as torch
    >>> torch.floor_divide(torch.tensor([7, -7]), 2)
    tensor([ 3, -4])
    """
    if not isinstance(input, Tensor):
        input = as_tensor_arg(input)
    with no_grad():
        r = _div_rounding(input, other, "floor")
    return _not_differentiable("floor_divide", r._data, input,
                               other if isinstance(other, Tensor) else None)


def float_power(input, exponent) -> Tensor:  # noqa: A002
    """``input ** exponent`` computed in float64 (PyTorch's composite: casts, then ``pow``).

    >>> import retrograd as torch
    >>> torch.float_power(torch.tensor([2]), 3).tolist()
    [8.0]
    """
    if isinstance(exponent, Tensor):
        exponent = cast(exponent, np.dtype(np.float64))
    else:
        exponent = float(exponent)
    if isinstance(input, Tensor):
        return pow(cast(input, np.dtype(np.float64)), exponent)
    return pow(float(input), exponent)


def _float_power_inplace(self, exponent) -> Tensor:
    if self._data.dtype != np.float64:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {legacy(self._data.dtype)} but the "
            "operation's result requires dtype Double"
        )
    return float_power(self, exponent)


class LerpBackward0(Node):
    """lerp with a number weight."""

    def backward(self, xp, g):
        w = self._w
        nf = self.next_functions
        gs = g * (1 - w) if nf[0][0] is not None else None
        ge = g * w if nf[1][0] is not None else None
        return gs, ge


class LerpBackward1(Node):
    """lerp with a tensor weight. Keeps ``input`` and ``end`` only where ``weight`` requires
    grad (only its gradient reads them), as PyTorch's node does."""

    def backward(self, xp, g):
        s, e, w = self.saved(xp.TENSORS)
        nf = self.next_functions
        gs = g * (1 - w) if nf[0][0] is not None else None
        ge = g * w if nf[1][0] is not None else None
        gw = g * (e - s) if nf[2][0] is not None else None
        return gs, ge, gw


def _dtype_name(d) -> str:
    return FROM_NP[np.dtype(d)].c_name


def lerp(input, end, weight) -> Tensor:  # noqa: A002
    """``input + weight * (end - input)``; ``weight`` a number or a tensor.

    >>> import retrograd as torch
    >>> torch.lerp(torch.tensor([0., 10.]), torch.tensor([10., 20.]), 0.5)
    tensor([ 5., 15.])
    """
    try:
        s = input._data
        e = end._data
        if e.dtype != s.dtype:
            raise RuntimeError(
                f"expected dtype {_dtype_name(s.dtype)} for `end` but got dtype "
                f"{_dtype_name(e.dtype)}"
            )
        w_tensor = isinstance(weight, Tensor)
        if s.dtype.char not in FLOAT_CHARS:
            raise not_implemented("lerp_kernel_tensor" if w_tensor else "lerp_kernel_scalar",
                                   s.dtype)
        if w_tensor:
            wd = weight._data
            if wd.dtype != s.dtype and wd.ndim != 0:
                raise RuntimeError(
                    f"expected dtype {_dtype_name(s.dtype)} for `weight` but got dtype "
                    f"{_dtype_name(wd.dtype)}"
                )
            wd = wd.astype(s.dtype, copy=False)
        else:
            w = scalar_value(weight)
            if w is None:
                raise TypeError("lerp: weight is neither a tensor nor a number")
            wd = np.asarray(w, dtype=F32 if s.dtype in REDUCED else s.dtype)
        try:
            rs, re_, rw = s, e, wd
            if s.dtype in REDUCED:  # float32 inside, one rounding, as PyTorch's kernel
                rs, re_, rw = s.astype(F32), e.astype(F32), wd.astype(F32)
            d = re_ - rs
            if s.dtype in REDUCED:  # PyTorch's kernel fuses the multiply-adds
                # ((w - 1) * d + end, as torch's: a NaN's sign survives)
                out = np.where(np.abs(rw) < 0.5, fma32(rw, d, rs), fma32(rw - 1, d, re_))
            else:
                out = np.where(np.abs(rw) < 0.5, rs + rw * d, re_ - d * (1 - rw))
            out = out.astype(s.dtype, copy=False)
            if out.dtype == _BF16:
                out = bf16_nans(out, s, e, *((wd,) if w_tensor else ()))
        except ValueError:
            check_broadcast(s.shape, e.shape, wd.shape)
            raise
        if w_tensor:
            both = needs_grad(weight)
            return apply(LerpBackward1, out, input, end, weight,
                         save=(input if both else None, end if both else None, weight))
        return apply(LerpBackward0, out, input, end, _w=wd)
    except (AttributeError, TypeError):
        _LERP.check(input, end, weight)
        raise


def _result_dtype(*tensors):
    """PyTorch's promotion over several tensors (None entries skipped)."""
    rt = None
    zero_dim = True
    for t in tensors:
        if t is None:
            continue
        d = t._data
        if rt is None:
            rt, zero_dim = FROM_NP[d.dtype], d.ndim == 0
            continue
        new = binary_result(rt, zero_dim, FROM_NP[d.dtype], d.ndim == 0)
        zero_dim = zero_dim and d.ndim == 0
        rt = new
    return rt.np


class AddcmulBackward0(Node):
    def backward(self, xp, g):
        t1, t2 = self.saved(xp.TENSORS)
        v = self._value
        nf = self.next_functions
        g1 = g * (t2 * v) if nf[1][0] is not None else None
        g2 = g * (t1 * v) if nf[2][0] is not None else None
        return (g if nf[0][0] is not None else None), g1, g2


class AddcdivBackward0(Node):
    def backward(self, xp, g):
        t1, t2 = self.saved(xp.TENSORS)
        v = self._value
        nf = self.next_functions
        g1 = g * v / t2 if nf[1][0] is not None else None
        g2 = -g * v * t1 / (t2 * t2) if nf[2][0] is not None else None
        return (g if nf[0][0] is not None else None), g1, g2


_ADDCDIV_INT = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
    "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
    "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
    "dtypes."
)


def _addc(cls, input, tensor1, tensor2, value, divide):
    if divide and tensor1._data.dtype.char not in FLOAT_CHARS and \
            tensor2._data.dtype.char not in FLOAT_CHARS:
        raise RuntimeError(_ADDCDIV_INT)
    rt = _result_dtype(input, tensor1, tensor2)
    a = input._data.astype(rt, copy=False)
    b = tensor1._data.astype(rt, copy=False)
    c = tensor2._data.astype(rt, copy=False)
    v = scalar_value(value)
    if rt.char not in FLOAT_CHARS:
        v = int(v)
    red = rt in REDUCED  # float16/bfloat16: float32 inside (the number too), one rounding
    if red:
        a, b, c = a.astype(F32), b.astype(F32), c.astype(F32)
    vv = np.asarray(v, dtype=F32 if red else rt)
    try:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if red:  # torch's kernel: value * t1 first; addcmul's product fused with the sum
                out = a + (vv * b) / c if divide else fma32(vv * b, c, a)
            else:
                out = a + vv * (b / c if divide else b * c)
    except ValueError:
        check_broadcast(a.shape, b.shape, c.shape)
        raise
    out = asarray(out).astype(rt, copy=False)
    if rt == _BF16:  # (vector steps and a scalar tail)
        out = bf16_nans(out, input._data, tensor1._data, tensor2._data)
    return apply(cls, out, input, tensor1, tensor2, save=(tensor1, tensor2), _value=v)


def addcmul(input, tensor1, tensor2, *, value=1) -> Tensor:  # noqa: A002
    """``input + value * tensor1 * tensor2``, broadcasting.

    >>> import retrograd as torch
    >>> torch.addcmul(torch.tensor([1.]), torch.tensor([2.]), torch.tensor([3.]), value=2)
    tensor([13.])
    """
    return _addc(AddcmulBackward0, input, tensor1, tensor2, value, False)


def addcdiv(input, tensor1, tensor2, *, value=1) -> Tensor:  # noqa: A002
    """``input + value * tensor1 / tensor2``, broadcasting.

    >>> import retrograd as torch
    >>> torch.addcdiv(torch.tensor([1.]), torch.tensor([3.]), torch.tensor([2.]), value=2)
    tensor([4.])
    """
    return _addc(AddcdivBackward0, input, tensor1, tensor2, value, True)

# Array twins the backward formulas above call (their tensor versions are the ops here).
_array.register(xlogy=_xlogy_array, reciprocal=ReciprocalBackward0.forward)

multiply = mul
divide = div
subtract = sub
negative = neg

__all__ = [
    "add", "sub", "rsub", "mul", "div", "true_divide", "neg", "reciprocal", "pow", "multiply",
    "divide", "subtract", "negative", "floor_divide", "remainder", "fmod", "float_power", "atan2",
    "arctan2", "hypot", "logaddexp", "logaddexp2", "xlogy", "lerp", "addcmul", "addcdiv",
]
XP = ["rdiv", "mul_scalar", "div_scalar"]  # used by formulas, operators and composites

METHODS = {name: globals()[name] for name in __all__ if name != "rsub"}
METHODS.update({
    "__mod__": remainder,
    "__rmod__": lambda self, other: remainder(other, self),
})
# add_, sub_, mul_ and div_ are bound with a no-graph fast path in the package's __init__.
_NO_INPLACE = {"rsub", "logaddexp", "logaddexp2", "float_power", "add", "sub", "mul", "div"}
INPLACE = {name + "_": globals()[name] for name in __all__ if name not in _NO_INPLACE}
INPLACE.update({
    "float_power_": _float_power_inplace, "__imod__": remainder, "__ifloordiv__": floor_divide,
})
