"""Pointwise ops: arithmetic, unary math, activations, clamp, where and comparisons.

Each primitive is a Backward node class (its formula, in ``xp``: NumPy arrays or retrograd
tensors, see ``_array``) next to the function that computes the forward and attaches it.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, make
from ..autograd.grad_mode import state
from ..autograd.graph import Node
from . import _array
from ._core import (
    NONE_EDGE,
    as_tensor_arg,
    asarray,
    broadcast_meta,
    default_float,
    edge,
    float_array,
    ndarray,
    operands,
    record,
    scalar_value,
    wrap,
)

# -- arithmetic --------------------------------------------------------------------------------


class AddBackward0(Node):
    def backward(self, xp, g):
        alpha = self._alpha
        return g, (g if alpha == 1 else g * alpha)


class SubBackward0(Node):
    def backward(self, xp, g):
        alpha = self._alpha
        return g, (-g if alpha == 1 else g * -alpha)


class RsubBackward1(Node):
    def backward(self, xp, g):
        return -g if self._alpha == 1 else g * -self._alpha


class MulBackward0(Node):
    def backward(self, xp, g):
        a, b = self.saved(xp.TENSORS)  # each saved only if the other input needs a grad
        return (None if b is None else g * b), (None if a is None else g * a)


class DivBackward0(Node):
    def backward(self, xp, g):
        a, b = self.saved(xp.TENSORS)
        ga = g / b if self.next_functions[0][0] is not None else None
        gb = None
        if a is not None:
            gb = -g * a / (b * b)
        return ga, gb


class NegBackward0(Node):
    def backward(self, xp, g):
        return -g


class ReciprocalBackward0(Node):
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


class PowBackward1(Node):
    """x ** y for two tensors."""

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
        r = self.saved_output(xp.TENSORS)
        b = self._base
        if b == 0:
            (y,) = self.saved(xp.TENSORS)
            return g * xp.where(y >= 0, 0.0, r * float(np.log(b)))
        return g * (r * float(np.log(b)))


def _binary(cls, fn, a, b):
    """Forward of a binary arithmetic op and its node (the caller saves what it needs).

    The common case, two tensors of one dtype, takes the fewest steps: this is the hot path.
    """
    b_tensor = b.__class__ is Tensor or isinstance(b, Tensor)
    if not b_tensor and b.__class__ is not float and b.__class__ is not int and \
            scalar_value(b) is None:
        # An array or list operand is a constant tensor, with its own shape to sum back to.
        b = as_tensor_arg(b)
        b_tensor = True
    ad = a._data
    if b_tensor and ad.dtype is b._data.dtype:
        bd = b._data
    else:
        ad, bd = operands(a, b)
    out = fn(ad, bd)
    if out.__class__ is not ndarray:
        out = asarray(out)
    if (a._rg or (b_tensor and b._rg) or a._view is not None or
            (b_tensor and b._view is not None)) and state.grad_enabled:
        # edge() inlined for the common case: a non-view tensor with a history.
        fn = a._grad_fn
        ea = (fn, a._nr) if fn is not None and a._view is None else edge(a)
        if b_tensor:
            fn = b._grad_fn
            eb = (fn, b._nr) if fn is not None and b._view is None else edge(b)
        else:
            eb = NONE_EDGE
        if ea[0] is not None or eb[0] is not None:
            node = cls()
            node.next_functions = (ea, eb)
            if b_tensor and ad.shape != bd.shape or ad.dtype is not a._data.dtype or \
                    (b_tensor and bd.dtype is not b._data.dtype):
                broadcast_meta(node, a, b, ad, bd)
            node._other = b if b_tensor else bd  # a number stays a 0-d array for backward
            return node, make(out, node)
    return None, make(out)


def add(input, other, *, alpha=1) -> Tensor:  # noqa: A002
    """``input + alpha * other``, broadcasting.

    >>> import retrograd as torch
    >>> torch.add(torch.tensor([1., 2.]), torch.tensor([3., 4.]), alpha=2)
    tensor([ 7., 10.])
    """
    if not isinstance(input, Tensor):
        input = as_tensor_arg(input)
    if alpha != 1:
        node, out = _binary(AddBackward0, lambda x, y: x + alpha * y, input, other)
    else:
        node, out = _binary(AddBackward0, np.add, input, other)
    if node is not None:
        node._alpha = alpha
    return out


def sub(input, other, *, alpha=1) -> Tensor:  # noqa: A002
    """``input - alpha * other``, broadcasting.

    >>> import retrograd as torch
    >>> torch.sub(torch.tensor([5., 5.]), torch.tensor([1., 2.]))
    tensor([4., 3.])
    """
    if not isinstance(input, Tensor):
        input = as_tensor_arg(input)
    _check_bool_sub(input, other)
    if alpha != 1:
        node, out = _binary(SubBackward0, lambda x, y: x - alpha * y, input, other)
    else:
        node, out = _binary(SubBackward0, np.subtract, input, other)
    if node is not None:
        node._alpha = alpha
    return out


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
    out = b - alpha * ad if alpha != 1 else b - ad
    if out.__class__ is not ndarray:
        out = asarray(out)
    if state.grad_enabled and input.requires_grad:
        node = RsubBackward1()
        node._alpha = alpha
        if ad.dtype != input._data.dtype:
            node._dtypes = (input._data.dtype,)
        return record(node, out, input)
    return make(out)


def mul_operator(self, other):
    """``self * other``; a Python sequence is repeated instead, as Python does with ints."""
    if other.__class__ is not Tensor and isinstance(other, (str, list, tuple)):
        return NotImplemented
    # mul's body, inline: this is the hottest operator.
    node, out = _binary(MulBackward0, np.multiply, self, other)
    if node is not None:
        nf = node.next_functions
        node.save2(self if nf[1][0] is not None else None,
                   node._other if nf[0][0] is not None else None)
    return out


def mul(input, other) -> Tensor:  # noqa: A002
    """Elementwise product, broadcasting.

    >>> import retrograd as torch
    >>> torch.tensor([1., 2.]) * 3
    tensor([3., 6.])
    """
    if not isinstance(input, Tensor):
        input = as_tensor_arg(input)
    node, out = _binary(MulBackward0, np.multiply, input, other)
    if node is not None:
        nf = node.next_functions
        node.save2(input if nf[1][0] is not None else None,
                   node._other if nf[0][0] is not None else None)
    return out


def _true_div(x, y):
    if x.dtype.kind != "f" and (y.__class__ is not float and
                                (y.__class__ is int or y.__class__ is bool or
                                 y.dtype.kind != "f")):
        # Integer / integer is true division into the default float dtype.
        dt = default_float()
        return np.true_divide(x, y, dtype=dt)
    return np.true_divide(x, y)


def div(input, other, *, rounding_mode=None) -> Tensor:  # noqa: A002
    """Elementwise division; integers divide into the default float dtype.

    >>> import retrograd as torch
    >>> torch.tensor([1, 2]) / 2
    tensor([0.5000, 1.0000])
    """
    if not isinstance(input, Tensor):
        input = as_tensor_arg(input)
    if rounding_mode is not None:
        return _div_rounding(input, other, rounding_mode)
    node, out = _binary(DivBackward0, _true_div, input, other)
    if node is not None:
        need_b = node.next_functions[1][0] is not None
        node.save(input if need_b else None, node._other)
    return out


def _div_rounding(a, b, mode):
    ad, bd = operands(a, b)
    _check_int_zero(ad, bd)
    if mode == "trunc":
        r = np.trunc(np.true_divide(ad, bd)) if ad.dtype.kind == "f" else _int_trunc_div(ad, bd)
    elif mode == "floor":
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.floor_divide(ad, bd)
    else:
        raise RuntimeError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{mode}'"
        )
    r = asarray(r).astype(ad.dtype if isinstance(b, Tensor) or ad.dtype.kind == "f"
                          else ad.dtype, copy=False)
    if state.grad_enabled and (a.requires_grad or (isinstance(b, Tensor) and b.requires_grad)):
        # Rounded division is piecewise constant: its gradient is zero.
        node = DivRoundingBackward()
        if isinstance(b, Tensor):
            node._shapes = (a._data.shape, b._data.shape)
            return record(node, r, a, b)
        return record(node, r, a, None)
    return make(r)


class DivRoundingBackward(Node):
    _name = "DivBackward2"

    def backward(self, xp, g):
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
    if input._data.dtype.kind == "b":
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )
    out = np.negative(input._data)
    if state.grad_enabled and (input._rg or input._view is not None) and input.requires_grad:
        return record(NegBackward0(), out, input)
    return wrap(out)


def reciprocal(input) -> Tensor:  # noqa: A002
    """``1 / input``.

    >>> import retrograd as torch
    >>> torch.reciprocal(torch.tensor([2., 4.]))
    tensor([0.5000, 0.2500])
    """
    out = np.reciprocal(float_array(input))
    if state.grad_enabled and input.requires_grad:
        node = ReciprocalBackward0()
        r = record(node, out, input)
        node.save_output(r)
        return r
    return wrap(out)


def pow(input, exponent) -> Tensor:  # noqa: A001, A002
    """``input ** exponent``: tensor or number on either side.

    >>> import retrograd as torch
    >>> torch.tensor([2., 3.]) ** 2
    tensor([4., 9.])
    """
    if not isinstance(input, Tensor):
        return _rpow(as_tensor_arg(exponent), input)
    e = scalar_value(exponent)
    if e is not None:
        ad, e = operands(input, e)
        if ad.dtype.kind in "iu" and e.__class__ is int and e < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if e == 2:
            out = np.multiply(ad, ad)
        elif e == 0.5:
            out = np.sqrt(ad)
        else:
            out = np.power(ad, e)
        if state.grad_enabled and input.requires_grad:
            node = PowBackward0()
            node._e = e
            node.save(input)
            if ad.dtype != input._data.dtype:
                node._dtypes = (input._data.dtype,)
            return record(node, out, input)
        return wrap(out)
    node, out = _binary(PowBackward1, np.power, input, exponent)
    if node is not None:
        node.save(input, exponent)
    return out


def _rpow(exponent: Tensor, base) -> Tensor:
    """``base ** exponent`` for a number ``base``."""
    b = scalar_value(base)
    ed, b = operands(exponent, b)
    out = np.power(b, ed)
    if out.__class__ is not ndarray:
        out = asarray(out)
    if out.dtype != ed.dtype:
        out = out.astype(ed.dtype)
    if state.grad_enabled and exponent.requires_grad:
        node = PowBackward2()
        node._base = b
        node.save(exponent)
        r = record(node, out, exponent)
        node.save_output(r)
        return r
    return make(out)


# -- unary math --------------------------------------------------------------------------------


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


# -- clamp and where ---------------------------------------------------------------------------


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


class WhereBackward0(Node):
    def backward(self, xp, g):
        cond = self._cond
        nf = self.next_functions
        ga = xp.where(cond, g, 0.0) if nf[0][0] is not None else None
        gb = xp.where(cond, 0.0, g) if nf[1][0] is not None else None
        return ga, gb


def where(condition, input=None, other=None) -> Tensor:  # noqa: A002
    """``input`` where ``condition`` holds, else ``other``; with one argument, ``nonzero``.

    >>> import retrograd as torch
    >>> x = torch.tensor([-1., 2.])
    >>> torch.where(x > 0, x, 0.)
    tensor([0., 2.])
    """
    if input is None and other is None:
        from .indexing import nonzero

        return nonzero(condition, as_tuple=True)
    cond = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype.kind != "b":
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{str(cond.dtype).capitalize()}"
        )
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            input = as_tensor_arg(input)
        else:
            ad, bd = operands(other, input)
            out = np.where(cond, bd, ad)
            return _where_finish(cond, out, input, other, bd, ad)
    ad, bd = operands(input, other)
    out = np.where(cond, ad, bd)
    return _where_finish(cond, out, input, other, ad, bd)


def _where_finish(cond, out, a, b, ad, bd):
    if out.dtype != np.result_type(ad, bd) and not isinstance(ad, (int, float)):
        out = out.astype(np.result_type(ad, bd))
    ra = isinstance(a, Tensor) and a.requires_grad
    rb = isinstance(b, Tensor) and b.requires_grad
    if state.grad_enabled and (ra or rb):
        node = WhereBackward0()
        node._cond = cond
        shapes = tuple(t._data.shape if isinstance(t, Tensor) else () for t in (a, b))
        if shapes[0] != out.shape or shapes[1] != out.shape:
            node._shapes = shapes
        dts = tuple(t._data.dtype if isinstance(t, Tensor) else out.dtype for t in (a, b))
        if dts[0] != out.dtype or dts[1] != out.dtype:
            node._dtypes = dts
        return record(node, out, a, b)
    return wrap(out)


# -- comparisons and logic (never differentiable) ----------------------------------------------


def _compare(fn):
    def op(input, other) -> Tensor:  # noqa: A002
        if not isinstance(input, Tensor):
            input = as_tensor_arg(input)
        ad, bd = operands(input, other)
        return wrap(fn(ad, bd))

    op.__name__ = fn.__name__
    op.__doc__ = f"""Elementwise ``{fn.__name__}`` comparison, broadcasting; a bool tensor.

    >>> import retrograd as torch
    >>> torch.{_COMPARE_NAMES[fn.__name__]}(torch.tensor([1, 2]), 2)
    tensor({_COMPARE_EXAMPLES[fn.__name__]})
    """
    return op


_COMPARE_NAMES = {"equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le",
                  "greater": "gt", "greater_equal": "ge"}
_COMPARE_EXAMPLES = {"equal": "[False,  True]", "not_equal": "[ True, False]",
                     "less": "[ True, False]", "less_equal": "[True, True]",
                     "greater": "[False, False]", "greater_equal": "[False,  True]"}

eq = _compare(np.equal)
ne = _compare(np.not_equal)
lt = _compare(np.less)
le = _compare(np.less_equal)
gt = _compare(np.greater)
ge = _compare(np.greater_equal)
greater = gt
less = lt
greater_equal = ge
less_equal = le
not_equal = ne

_LEGACY = {
    "float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
    "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
}


def _legacy(dtype) -> str:
    return _LEGACY[np.dtype(dtype).name]


def _not_implemented(kernel: str, dtype):
    return NotImplementedError(f'"{kernel}" not implemented for \'{_legacy(dtype)}\'')


def _integral(name, fn):
    """A bitwise op: integers and bools only."""

    def op(input, other) -> Tensor:  # noqa: A002
        if not isinstance(input, Tensor):
            input = as_tensor_arg(input)
        ad, bd = operands(input, other)
        if ad.dtype.kind == "f":
            raise _not_implemented(f"{name}_cpu", ad.dtype)
        if bd.__class__ is float or (isinstance(bd, np.ndarray) and bd.dtype.kind == "f"):
            raise _not_implemented(f"{name}_cpu", np.float32)
        return wrap(fn(ad, bd))

    op.__name__ = name
    return op


bitwise_and = _integral("bitwise_and", np.bitwise_and)
bitwise_or = _integral("bitwise_or", np.bitwise_or)
bitwise_xor = _integral("bitwise_xor", np.bitwise_xor)
bitwise_and.__doc__ = """Bitwise AND of integers, logical AND of bools (``a & b``).

    >>> import retrograd as torch
    >>> torch.tensor([12, 10]) & 6
    tensor([4, 2])
    """
bitwise_or.__doc__ = """Bitwise OR (``a | b``).

    >>> import retrograd as torch
    >>> torch.tensor([12, 10]) | 1
    tensor([13, 11])
    """
bitwise_xor.__doc__ = """Bitwise XOR (``a ^ b``).

    >>> import retrograd as torch
    >>> torch.tensor([12, 10]) ^ 6
    tensor([10, 12])
    """


def _shift(kernel, left):
    def fn(a, s):
        bits = a.dtype.itemsize * 8
        s_arr = np.asarray(s)
        big = (s_arr < 0) | (s_arr >= bits)
        safe = np.where(big, 0, s_arr).astype(a.dtype, copy=False)
        with np.errstate(over="ignore"):
            r = np.left_shift(a, safe) if left else np.right_shift(a, safe)
        if big.any():
            # PyTorch: shifting by the width or more (or by a negative count) leaves 0, or -1
            # for a right shift of a negative number.
            fill = 0 if left else np.where(a < 0, -1, 0)
            r = np.where(big, fill, r).astype(a.dtype, copy=False)
        return r

    op = _integral(kernel, fn)

    def checked(input, other) -> Tensor:  # noqa: A002
        d = input._data.dtype if isinstance(input, Tensor) else None
        if d is not None and d.kind == "b":
            raise _not_implemented(f"{kernel}_cpu", d)
        return op(input, other)

    checked.__name__ = "bitwise_left_shift" if left else "bitwise_right_shift"
    return checked


bitwise_left_shift = _shift("lshift", True)
bitwise_right_shift = _shift("rshift", False)
bitwise_left_shift.__doc__ = """``input << other``: zero once the count reaches the width.

    >>> import retrograd as torch
    >>> torch.tensor([1, -3]) << 2
    tensor([  4, -12])
    """
bitwise_right_shift.__doc__ = """``input >> other``: arithmetic shift of signed integers.

    >>> import retrograd as torch
    >>> torch.tensor([8, -8]) >> 2
    tensor([ 2, -2])
    """


def bitwise_not(input) -> Tensor:  # noqa: A002
    """Bitwise NOT of integers, logical NOT of bools (``~a``).

    >>> import retrograd as torch
    >>> ~torch.tensor([0, 5])
    tensor([-1, -6])
    """
    if input._data.dtype.kind == "f":
        raise _not_implemented("bitwise_not_cpu", input._data.dtype)
    return wrap(np.invert(input._data))


def logical_not(input) -> Tensor:  # noqa: A002
    """True where ``input`` is zero.

    >>> import retrograd as torch
    >>> torch.logical_not(torch.tensor([0., 2.]))
    tensor([ True, False])
    """
    return wrap(np.logical_not(input._data))


def logical_and(input, other) -> Tensor:  # noqa: A002
    """True where both are nonzero.

    >>> import retrograd as torch
    >>> torch.logical_and(torch.tensor([0, 1, 2]), torch.tensor([1., 1., 0.]))
    tensor([False,  True, False])
    """
    return wrap(np.logical_and(input._data, as_tensor_arg(other)._data))


def logical_or(input, other) -> Tensor:  # noqa: A002
    """True where either is nonzero.

    >>> import retrograd as torch
    >>> torch.logical_or(torch.tensor([0, 1]), torch.tensor([0, 0]))
    tensor([False,  True])
    """
    return wrap(np.logical_or(input._data, as_tensor_arg(other)._data))


def logical_xor(input, other) -> Tensor:  # noqa: A002
    """True where exactly one is nonzero.

    >>> import retrograd as torch
    >>> torch.logical_xor(torch.tensor([0, 1, 1]), torch.tensor([1, 1, 0]))
    tensor([ True, False,  True])
    """
    return wrap(np.logical_xor(input._data, as_tensor_arg(other)._data))


def isnan(input) -> Tensor:  # noqa: A002
    """True where NaN.

    >>> import retrograd as torch
    >>> torch.isnan(torch.tensor([1., float('nan')]))
    tensor([False,  True])
    """
    return wrap(np.isnan(input._data))


def isinf(input) -> Tensor:  # noqa: A002
    """True where +-inf.

    >>> import retrograd as torch
    >>> torch.isinf(torch.tensor([1., float('inf')]))
    tensor([False,  True])
    """
    return wrap(np.isinf(input._data))


def isfinite(input) -> Tensor:  # noqa: A002
    """True where neither inf nor NaN.

    >>> import retrograd as torch
    >>> torch.isfinite(torch.tensor([1., float('inf')]))
    tensor([ True, False])
    """
    return wrap(np.isfinite(input._data))


def signbit(input) -> Tensor:  # noqa: A002
    """True where the sign bit is set (also for -0.0 and negative NaN).

    >>> import retrograd as torch
    >>> torch.signbit(torch.tensor([-0., 0., -2.]))
    tensor([ True, False,  True])
    """
    a = input._data
    if a.dtype.kind == "f":
        return wrap(np.signbit(a))
    if a.dtype.kind == "b":
        return wrap(np.zeros(a.shape, bool))
    return wrap(a < 0)


def equal(input, other) -> bool:  # noqa: A002
    """True if both tensors have the same shape and values.

    >>> import retrograd as torch
    >>> torch.equal(torch.tensor([1, 2]), torch.tensor([1, 2]))
    True
    """
    return input._data.shape == other._data.shape and bool(np.all(input._data == other._data))


def _check_same_dtype(a, b) -> None:
    if isinstance(b, Tensor) and a._data.dtype != b._data.dtype:
        raise RuntimeError(f"{_legacy(a._data.dtype)} did not match {_legacy(b._data.dtype)}")


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:  # noqa: A002
    """True if ``|input - other| <= atol + rtol * |other|`` everywhere.

    >>> import retrograd as torch
    >>> torch.allclose(torch.tensor([1.0]), torch.tensor([1.0 + 1e-9]))
    True
    """
    _check_same_dtype(input, other)
    return bool(np.allclose(input._data, as_tensor_arg(other)._data, rtol=rtol, atol=atol,
                            equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:  # noqa: A002
    """Elementwise ``|input - other| <= atol + rtol * |other|``.

    >>> import retrograd as torch
    >>> torch.isclose(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.1]))
    tensor([ True, False])
    """
    _check_same_dtype(input, other)
    return wrap(np.isclose(input._data, as_tensor_arg(other)._data, rtol=rtol, atol=atol,
                           equal_nan=equal_nan))


def cast(x: Tensor, np_dtype) -> Tensor:
    """``x`` converted to a NumPy dtype, differentiably (the engine's dtype fix-up)."""
    from .shape import to_dtype_op

    return to_dtype_op(x, np_dtype)


# -- more unary math ---------------------------------------------------------------------------

_LN2 = float(np.log(2.0))
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
            raise _not_implemented(kernel, a.dtype)
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
        raise _not_implemented("round_cpu", a.dtype)
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
        raise _not_implemented("frac_cpu", a.dtype)
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


# -- more binary ops ---------------------------------------------------------------------------


def _check_int_zero(ad, bd) -> None:
    if ad.dtype.kind in "iub" and np.asarray(bd).dtype.kind in "iub" and np.any(bd == 0):
        raise RuntimeError("ZeroDivisionError")


def _float_ufunc(ufunc):
    """A binary NumPy function that computes in floats: integer operands take the default
    float dtype (as PyTorch's float ops do)."""

    def fn(x, y):
        if x.dtype.kind != "f":
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
        if isinstance(t, Tensor) and t._data.dtype.kind != "f":
            other = b if t is a else a
            if not (isinstance(other, Tensor) and other._data.dtype.kind == "f") and \
                    other.__class__ is not float:
                raise _not_implemented(f"{name}_cpu", t._data.dtype)


def _tensor_other(name, other) -> None:
    if not isinstance(other, Tensor):
        raise TypeError(
            f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}"
        )


class Atan2Backward0(Node):
    def backward(self, xp, g):
        a, b = self.saved(xp.TENSORS)
        d = a * a + b * b
        nf = self.next_functions
        ga = g * b / d if nf[0][0] is not None else None
        gb = -g * a / d if nf[1][0] is not None else None
        return ga, gb


class HypotBackward0(Node):
    def backward(self, xp, g):
        a, b = self.saved(xp.TENSORS)
        y = self.saved_output(xp.TENSORS)
        nf = self.next_functions
        ga = g * a / y if nf[0][0] is not None else None
        gb = g * b / y if nf[1][0] is not None else None
        return ga, gb


class LogaddexpBackward0(Node):
    def backward(self, xp, g):
        a, b = self.saved(xp.TENSORS)
        nf = self.next_functions
        ga = g / (xp.exp(b - a) + 1) if nf[0][0] is not None else None
        gb = g / (xp.exp(a - b) + 1) if nf[1][0] is not None else None
        return ga, gb


class Logaddexp2Backward0(Node):
    def backward(self, xp, g):
        a, b = self.saved(xp.TENSORS)
        nf = self.next_functions
        ga = g / (xp.exp((b - a) * _LN2) + 1) if nf[0][0] is not None else None
        gb = g / (xp.exp((a - b) * _LN2) + 1) if nf[1][0] is not None else None
        return ga, gb


class _MaxMinBackward(Node):
    """maximum / minimum: ties split the gradient in half; NaN sends it to both."""

    def backward(self, xp, g):
        nf = self.next_functions
        half = self._tie
        ga = gb = None
        if nf[0][0] is not None:
            ga = xp.where(half, g * 0.5, xp.where(self._a_loses, 0.0, g))
        if nf[1][0] is not None:
            gb = xp.where(half, g * 0.5, xp.where(self._b_loses, 0.0, g))
        return ga, gb


class MaximumBackward0(_MaxMinBackward):
    pass


class MinimumBackward0(_MaxMinBackward):
    pass


class _FmaxFminBackward(Node):
    """fmax / fmin: the whole gradient to the chosen side; ties go to ``input``."""

    def backward(self, xp, g):
        nf = self.next_functions
        keep = self._keep_a
        ga = xp.where(keep, g, 0.0) if nf[0][0] is not None else None
        gb = xp.where(keep, 0.0, g) if nf[1][0] is not None else None
        return ga, gb


class FmaxBackward0(_FmaxFminBackward):
    pass


class FminBackward0(_FmaxFminBackward):
    pass


def atan2(input, other) -> Tensor:  # noqa: A002
    """The angle of the point ``(other, input)``: ``atan(input / other)`` in the right quadrant.

    >>> import retrograd as torch
    >>> torch.atan2(torch.tensor([1.]), torch.tensor([1.]))
    tensor([0.7854])
    """
    _tensor_other("atan2", other)
    node, out = _binary(Atan2Backward0, _float_ufunc(np.arctan2), input, other)
    if node is not None:
        node.save(input, other)
    return out


arctan2 = atan2


def hypot(input, other) -> Tensor:  # noqa: A002
    """``sqrt(input**2 + other**2)`` without overflow.

    >>> import retrograd as torch
    >>> torch.hypot(torch.tensor([3.]), torch.tensor([4.]))
    tensor([5.])
    """
    _tensor_other("hypot", other)
    _float_only("hypot", input, other)
    node, out = _binary(HypotBackward0, np.hypot, input, other)
    if node is not None:
        node.save(input, other)
        node.save_output(out)
    return out


def logaddexp(input, other) -> Tensor:  # noqa: A002
    """``log(exp(input) + exp(other))`` without overflow.

    >>> import retrograd as torch
    >>> torch.logaddexp(torch.tensor([0.]), torch.tensor([0.]))
    tensor([0.6931])
    """
    _tensor_other("logaddexp", other)
    _float_only("logaddexp", input, other)
    node, out = _binary(LogaddexpBackward0, np.logaddexp, input, other)
    if node is not None:
        node.save(input, other)
    return out


def logaddexp2(input, other) -> Tensor:  # noqa: A002
    """``log2(2**input + 2**other)`` without overflow.

    >>> import retrograd as torch
    >>> torch.logaddexp2(torch.tensor([1.]), torch.tensor([1.]))
    tensor([2.])
    """
    _tensor_other("logaddexp2", other)
    _float_only("logaddexp2", input, other)
    node, out = _binary(Logaddexp2Backward0, np.logaddexp2, input, other)
    if node is not None:
        node.save(input, other)
    return out


def _maxmin(cls, ufunc, input, other, maximum_):
    node, out = _binary(cls, ufunc, input, other)
    if node is not None:
        ad, bd = operands(input, other)
        node._tie = ad == bd
        if maximum_:
            node._a_loses, node._b_loses = ad < bd, ad > bd
        else:
            node._a_loses, node._b_loses = ad > bd, ad < bd
    return out


def maximum(input, other) -> Tensor:  # noqa: A002
    """Elementwise maximum, NaN-propagating; a tie splits the gradient in half (as PyTorch).

    >>> import retrograd as torch
    >>> torch.maximum(torch.tensor([1., 5.]), torch.tensor([3., 2.]))
    tensor([3., 5.])
    """
    _tensor_other("maximum", other)
    return _maxmin(MaximumBackward0, np.maximum, input, other, True)


def minimum(input, other) -> Tensor:  # noqa: A002
    """Elementwise minimum, NaN-propagating; a tie splits the gradient in half (as PyTorch).

    >>> import retrograd as torch
    >>> torch.minimum(torch.tensor([1., 5.]), torch.tensor([3., 2.]))
    tensor([1., 2.])
    """
    _tensor_other("minimum", other)
    return _maxmin(MinimumBackward0, np.minimum, input, other, False)


def _fmaxmin(cls, ufunc, input, other, maximum_):
    node, out = _binary(cls, ufunc, input, other)
    if node is not None:
        ad, bd = operands(input, other)
        node._keep_a = ((ad >= bd) if maximum_ else (ad <= bd)) | np.isnan(bd)
    return out


def fmax(input, other) -> Tensor:  # noqa: A002
    """Elementwise maximum that ignores NaN (NaN only where both are NaN).

    >>> import retrograd as torch
    >>> torch.fmax(torch.tensor([1., float('nan')]), torch.tensor([3., 2.]))
    tensor([3., 2.])
    """
    _tensor_other("fmax", other)
    return _fmaxmin(FmaxBackward0, np.fmax, input, other, True)


def fmin(input, other) -> Tensor:  # noqa: A002
    """Elementwise minimum that ignores NaN (NaN only where both are NaN).

    >>> import retrograd as torch
    >>> torch.fmin(torch.tensor([1., float('nan')]), torch.tensor([3., 2.]))
    tensor([1., 2.])
    """
    _tensor_other("fmin", other)
    return _fmaxmin(FminBackward0, np.fmin, input, other, False)


class XlogyBackward0(Node):
    """xlogy of two tensors."""

    def backward(self, xp, g):
        x, y = self.saved(xp.TENSORS)
        nf = self.next_functions
        # d/dx is log(y) where x != 0 and 0 where x == 0 (PyTorch: xlogy(x != 0, y)).
        gx = g * xp.xlogy(self._nonzero, y) if nf[0][0] is not None else None
        gy = g * x / y if nf[1][0] is not None else None
        return gx, gy


class XlogyBackward1(Node):
    """xlogy of a number and a tensor."""

    def backward(self, xp, g):
        (y,) = self.saved(xp.TENSORS)
        return None, g * self._x / y


class XlogyBackward2(Node):
    """xlogy of a tensor and a number."""

    def backward(self, xp, g):
        return g * self._dx, None  # log(other) where input != 0: a constant


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
        out = _xlogy_array(xd, yd)
        if state.grad_enabled and y.requires_grad:
            node = XlogyBackward1()
            node._x = xd
            node.save(y)
            if out.shape != y._data.shape:
                node._shapes = (np.shape(xd), y._data.shape)
            if yd.dtype != y._data.dtype:
                node._dtypes = (None, y._data.dtype)
            return record(node, out, None, y)
        return wrap(out)
    if isinstance(other, Tensor):
        node, out = _binary(XlogyBackward0, _float_binary(_xlogy_array), input, other)
        if node is not None:
            ad, bd = operands(input, other)
            node._nonzero = (ad != 0).astype(out._data.dtype)
            node.save(input, other)
        return out
    xd, yd = operands(input, other)
    xd, yd = _float_pair(xd, yd)
    out = _xlogy_array(xd, yd)
    if state.grad_enabled and input.requires_grad:
        node = XlogyBackward2()
        node._dx = _xlogy_array((xd != 0).astype(out.dtype), yd)
        if xd.dtype != input._data.dtype:
            node._dtypes = (input._data.dtype, None)
        return record(node, out, input, None)
    return wrap(out)


def _float_pair(x, y):
    if x.dtype.kind != "f":
        dt = default_float()
        x = x.astype(dt)
        if y.__class__ is ndarray:
            y = y.astype(dt)
    if y.__class__ is not ndarray:
        y = np.asarray(y, dtype=x.dtype)
    return x, y


def _float_binary(fn):
    def f(x, y):
        x, y = _float_pair(x, y) if x.dtype.kind != "f" else (x, y)
        return fn(x, y)

    return f


class RemainderBackward0(Node):
    """remainder by a number."""

    def backward(self, xp, g):
        return g, None


class RemainderBackward1(Node):
    def backward(self, xp, g):
        nf = self.next_functions
        ga = g if nf[0][0] is not None else None
        # d/db (a - b * floor(a / b)) = -floor(a / b), a constant of the forward.
        gb = g * self._negq if nf[1][0] is not None else None
        return ga, gb


class FmodBackward0(RemainderBackward0):
    """fmod by a number."""


class FmodBackward1(RemainderBackward1):
    pass


class NotImplementedBackward(Node):
    """An op PyTorch computes but cannot differentiate: backward raises PyTorch's error."""

    _name = "torch::autograd::NotImplemented"

    def backward(self, xp, g):
        raise RuntimeError(f"derivative for aten::{self._op} is not implemented")


def _not_differentiable(op, out, *inputs):
    if state.grad_enabled and any(isinstance(t, Tensor) and t.requires_grad for t in inputs):
        node = NotImplementedBackward()
        node._op = op
        return record(node, out, *inputs)
    return wrap(out)


def _fmod_array(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.fmod(a, b)


def _remainder_array(a, b):
    # PyTorch: fmod, then shifted by b where the signs of the result and b differ (keeps -0.0).
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.fmod(a, b)
        fix = (m != 0) & ((m < 0) != (np.asarray(b) < 0))
        return np.where(fix, m + b, m).astype(m.dtype, copy=False)


def _mod_op(name, fn, cls0, cls1, quotient):
    def op(input, other) -> Tensor:  # noqa: A002
        if not isinstance(input, Tensor):
            # A number by a tensor: computed, but PyTorch has no derivative for it.
            ot = as_tensor_arg(other)
            od, idd = operands(ot, input)
            _check_int_zero(idd if isinstance(idd, ndarray) else np.asarray(idd), od)
            out = asarray(fn(np.asarray(idd, dtype=od.dtype), od))
            return _not_differentiable(name, out, None, ot)
        ad, bd = operands(input, other)
        _check_int_zero(ad, bd)
        out = asarray(fn(ad, bd))
        if out.dtype != ad.dtype:
            out = out.astype(ad.dtype)
        b_tensor = isinstance(other, Tensor)
        if not (state.grad_enabled and (input.requires_grad or
                                        (b_tensor and other.requires_grad))):
            return wrap(out)
        if not b_tensor:
            node = cls0()
            if ad.dtype != input._data.dtype:
                node._dtypes = (input._data.dtype, None)
            return record(node, out, input, None)
        node = cls1()
        with np.errstate(divide="ignore", invalid="ignore"):
            node._negq = -quotient(ad / bd)
        broadcast_meta(node, input, other, ad, bd)
        return record(node, out, input, other)

    op.__name__ = name
    return op


remainder = _mod_op("remainder", _remainder_array, RemainderBackward0, RemainderBackward1,
                    np.floor)
fmod = _mod_op("fmod", _fmod_array, FmodBackward0, FmodBackward1, np.trunc)
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


class state_no_grad:  # noqa: N801 - a context manager used like a function
    __slots__ = ("prev",)

    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = False

    def __exit__(self, *exc):
        state.grad_enabled = self.prev


def floor_divide(input, other) -> Tensor:  # noqa: A002
    """``input // other`` rounded toward -inf; PyTorch has no derivative for it.

    >>> import retrograd as torch
    >>> torch.floor_divide(torch.tensor([7, -7]), 2)
    tensor([ 3, -4])
    """
    if not isinstance(input, Tensor):
        input = as_tensor_arg(input)
    with state_no_grad():
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
            f"the base given to float_power_ has dtype {_legacy(self._data.dtype)} but the "
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
    """lerp with a tensor weight."""

    def backward(self, xp, g):
        s, e, w = self.saved(xp.TENSORS)
        nf = self.next_functions
        gs = g * (1 - w) if nf[0][0] is not None else None
        ge = g * w if nf[1][0] is not None else None
        gw = g * (e - s) if nf[2][0] is not None else None
        return gs, ge, gw


def _dtype_name(d) -> str:
    return {"float32": "float", "float64": "double", "float16": "half", "int64": "long",
            "int32": "int", "int16": "short", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}[np.dtype(d).name]


def lerp(input, end, weight) -> Tensor:  # noqa: A002
    """``input + weight * (end - input)``; ``weight`` a number or a tensor.

    >>> import retrograd as torch
    >>> torch.lerp(torch.tensor([0., 10.]), torch.tensor([10., 20.]), 0.5)
    tensor([ 5., 15.])
    """
    s = input._data
    e = end._data
    if e.dtype != s.dtype:
        raise RuntimeError(
            f"expected dtype {_dtype_name(s.dtype)} for `end` but got dtype "
            f"{_dtype_name(e.dtype)}"
        )
    w_tensor = isinstance(weight, Tensor)
    if s.dtype.kind != "f":
        raise _not_implemented("lerp_kernel_tensor" if w_tensor else "lerp_kernel_scalar",
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
        wd = np.asarray(scalar_value(weight), dtype=s.dtype)
    d = e - s
    out = np.where(np.abs(wd) < 0.5, s + wd * d, e - d * (1 - wd)).astype(s.dtype, copy=False)
    rec = state.grad_enabled and (input.requires_grad or end.requires_grad or
                                  (w_tensor and weight.requires_grad))
    if not rec:
        return wrap(out)
    if w_tensor:
        node = LerpBackward1()
        node.save(input, end, weight)
        shapes = (s.shape, e.shape, weight._data.shape)
        if any(sh != out.shape for sh in shapes):
            node._shapes = shapes
        if weight._data.dtype != s.dtype:
            node._dtypes = (s.dtype, e.dtype, weight._data.dtype)
        return record(node, out, input, end, weight)
    node = LerpBackward0()
    node._w = wd
    if s.shape != out.shape or e.shape != out.shape:
        node._shapes = (s.shape, e.shape)
    return record(node, out, input, end)


def _result_dtype(*tensors):
    """PyTorch's promotion over several tensors (None entries skipped)."""
    from .._dtypes import FROM_NP, binary_result

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
    if divide and tensor1._data.dtype.kind != "f" and tensor2._data.dtype.kind != "f":
        raise RuntimeError(_ADDCDIV_INT)
    rt = _result_dtype(input, tensor1, tensor2)
    a = input._data.astype(rt, copy=False)
    b = tensor1._data.astype(rt, copy=False)
    c = tensor2._data.astype(rt, copy=False)
    v = scalar_value(value)
    if rt.kind != "f":
        v = int(v)
    vv = np.asarray(v, dtype=rt)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = a + vv * (b / c if divide else b * c)
    out = asarray(out).astype(rt, copy=False)
    ts = (input, tensor1, tensor2)
    if not (state.grad_enabled and any(t.requires_grad for t in ts)):
        return wrap(out)
    node = cls()
    node._value = v
    node.save(tensor1, tensor2)
    shapes = tuple(t._data.shape for t in ts)
    if any(sh != out.shape for sh in shapes):
        node._shapes = shapes
    if any(t._data.dtype != rt for t in ts):
        node._dtypes = tuple(t._data.dtype for t in ts)
    return record(node, out, *ts)


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


class ClampMinBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return xp.where(x >= self._bound, g, 0.0)


class ClampMaxBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return xp.where(x <= self._bound, g, 0.0)


class ClampMinBackward1(Node):
    def backward(self, xp, g):
        x, b = self.saved(xp.TENSORS)
        nf = self.next_functions
        keep = x >= b
        gx = xp.where(keep, g, 0.0) if nf[0][0] is not None else None
        gb = xp.where(keep, 0.0, g) if nf[1][0] is not None else None
        return gx, gb


class ClampMaxBackward1(Node):
    def backward(self, xp, g):
        x, b = self.saved(xp.TENSORS)
        nf = self.next_functions
        keep = x <= b
        gx = xp.where(keep, g, 0.0) if nf[0][0] is not None else None
        gb = xp.where(keep, 0.0, g) if nf[1][0] is not None else None
        return gx, gb


def _clamp_side(input, bound, ufunc, cls0, cls1):
    if isinstance(bound, Tensor):
        node, out = _binary(cls1, ufunc, input, bound)
        if node is not None:
            node.save(input, bound)
        return out
    ad, bd = operands(input, bound)
    out = asarray(ufunc(ad, bd)).astype(ad.dtype, copy=False)
    if state.grad_enabled and input.requires_grad:
        node = cls0()
        node._bound = bd
        node.save(input)
        if ad.dtype != input._data.dtype:
            node._dtypes = (input._data.dtype,)
        return record(node, out, input)
    return wrap(out)


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
_array.register(sinh=np.sinh, cosh=np.cosh, xlogy=_xlogy_array)

__all__ = [
    "add", "sub", "rsub", "mul", "div", "true_divide", "neg", "reciprocal", "pow", "exp", "log",
    "sin", "cos", "tanh", "sigmoid", "relu", "abs", "sqrt", "sign", "clamp", "clip", "where",
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "less", "greater_equal", "less_equal",
    "not_equal", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "logical_not",
    "logical_and", "logical_or", "logical_xor", "isnan", "isinf", "isfinite", "equal",
    "allclose", "isclose", "multiply", "divide", "subtract", "negative", "absolute",
    # unary math
    "sgn", "exp2", "expm1", "log2", "log10", "log1p", "rsqrt", "square", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan", "arcsinh",
    "arccosh", "arctanh", "logit", "floor", "ceil", "round", "trunc", "fix", "frac",
    "nan_to_num", "positive", "signbit",
    # binary and more
    "floor_divide", "remainder", "fmod", "float_power", "atan2", "arctan2", "maximum",
    "minimum", "fmax", "fmin", "hypot", "logaddexp", "logaddexp2", "xlogy", "lerp", "addcmul",
    "addcdiv", "clamp_min", "clamp_max", "bitwise_left_shift", "bitwise_right_shift",
]
XP = ["cast", "rdiv"]  # used by backward formulas and operators, not public functions

multiply = mul
divide = div
subtract = sub
negative = neg
absolute = abs
arcsin = asin
arccos = acos
arctan = atan
arcsinh = asinh
arccosh = acosh
arctanh = atanh

METHODS = {name: globals()[name] for name in __all__ if name not in ("where", "rsub")}
METHODS["where"] = lambda self, condition, other: where(condition, self, other)
METHODS.update({
    "__mod__": remainder,
    "__rmod__": lambda self, other: remainder(other, self),
    "__lshift__": bitwise_left_shift,
    "__rshift__": bitwise_right_shift,
    "__rlshift__": lambda self, other: bitwise_left_shift(as_tensor_arg(other), self),
    "__rrshift__": lambda self, other: bitwise_right_shift(as_tensor_arg(other), self),
})
_NO_INPLACE = {
    "where", "rsub", "greater", "less", "greater_equal", "less_equal", "not_equal", "equal",
    "allclose", "isclose", "isnan", "isinf", "isfinite", "signbit", "positive", "maximum",
    "minimum", "fmax", "fmin", "logaddexp", "logaddexp2", "float_power", "add", "sub", "mul",
    "div",
}
INPLACE = {name + "_": globals()[name] for name in __all__ if name not in _NO_INPLACE}
INPLACE.update({
    "greater_": gt, "less_": lt, "greater_equal_": ge, "less_equal_": le, "not_equal_": ne,
    "float_power_": _float_power_inplace,
    "acosh_": _inplace_no_grad("acosh", acosh), "asinh_": _inplace_no_grad("asinh", asinh),
    "atanh_": _inplace_no_grad("atanh", atanh),
    "arccosh_": _inplace_no_grad("acosh", acosh), "arcsinh_": _inplace_no_grad("asinh", asinh),
    "arctanh_": _inplace_no_grad("atanh", atanh),
    "__imod__": remainder, "__ifloordiv__": floor_divide, "__iand__": bitwise_and,
    "__ior__": bitwise_or, "__ixor__": bitwise_xor, "__ilshift__": bitwise_left_shift,
    "__irshift__": bitwise_right_shift,
})
