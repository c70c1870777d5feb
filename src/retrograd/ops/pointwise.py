"""Pointwise ops: arithmetic, unary math, activations, clamp, where and comparisons.

Each primitive is a Backward node class (its formula, in ``xp``: NumPy arrays or retrograd
tensors, see ``_array``) next to the function that computes the forward and attaches it.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, make
from ..autograd.grad_mode import state
from ..autograd.graph import Node
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
            return g * 0
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
        ea = edge(a)
        eb = edge(b) if b_tensor else NONE_EDGE
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
    if other.__class__ is Tensor or other.__class__ is float or other.__class__ is int:
        return mul(self, other)
    if isinstance(other, (str, list, tuple)):
        return NotImplemented
    return mul(self, other)


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
        node.save(input if nf[1][0] is not None else None,
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
    if mode == "trunc":
        r = np.trunc(np.true_divide(ad, bd)) if ad.dtype.kind == "f" else _int_trunc_div(ad, bd)
    elif mode == "floor":
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
    _name = "DivBackward3"

    def backward(self, xp, g):
        return g * 0, g * 0


def _int_trunc_div(a, b):
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (np.asarray(b) < 0))
    return q + fix


def true_divide(input, other) -> Tensor:  # noqa: A002
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
    # Stable for large |a|: exp never sees a large positive argument.
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1 / (1 + e), e / (1 + e)).astype(a.dtype, copy=False)


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
        raise RuntimeError('"clamp_min_cpu" not implemented for \'Bool\'')
    return _unary(ReluBackward0, lambda a: np.maximum(a, 0, dtype=a.dtype), input,
                  save_output=True, float_op=False)


def abs(input) -> Tensor:  # noqa: A001, A002
    """Absolute value; its gradient at 0 is 0, as in PyTorch.

    >>> import retrograd as torch
    >>> torch.abs(torch.tensor([-1., 2.]))
    tensor([1., 2.])
    """
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
    out = np.sign(input._data)
    if state.grad_enabled and input.requires_grad:
        return record(SignBackward0(), out, input)
    return wrap(out)


class SignBackward0(Node):
    def backward(self, xp, g):
        return g * 0


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
    out = a
    if lo_t is not None:
        out = np.maximum(out, lo_t._data)
    if hi_t is not None:
        out = np.minimum(out, hi_t._data)
    out = asarray(out).astype(a.dtype, copy=False)
    args = [t for t in (input, lo_t, hi_t) if t is not None]
    if state.grad_enabled and any(t.requires_grad for t in args):
        node = ClampBackward0()
        node.save(input, lo_t, hi_t)
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
    return op


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


def _logical(fn, name):
    def op(input, other) -> Tensor:  # noqa: A002
        if not isinstance(input, Tensor):
            input = as_tensor_arg(input)
        ad, bd = operands(input, other)
        if ad.dtype.kind == "f" or (getattr(bd, "dtype", None) is not None and
                                    bd.dtype.kind == "f") or bd.__class__ is float:
            raise RuntimeError(f'"{name}_cpu" not implemented for \'Float\'')
        return wrap(fn(ad, bd))

    return op


bitwise_and = _logical(np.bitwise_and, "bitwise_and")
bitwise_or = _logical(np.bitwise_or, "bitwise_or")
bitwise_xor = _logical(np.bitwise_xor, "bitwise_xor")


def bitwise_not(input) -> Tensor:  # noqa: A002
    if input._data.dtype.kind == "f":
        raise RuntimeError("\"bitwise_not_cpu\" not implemented for 'Float'")
    return wrap(np.invert(input._data))


def logical_not(input) -> Tensor:  # noqa: A002
    return wrap(np.logical_not(input._data))


def logical_and(input, other) -> Tensor:  # noqa: A002
    return wrap(np.logical_and(input._data, as_tensor_arg(other)._data))


def logical_or(input, other) -> Tensor:  # noqa: A002
    return wrap(np.logical_or(input._data, as_tensor_arg(other)._data))


def logical_xor(input, other) -> Tensor:  # noqa: A002
    return wrap(np.logical_xor(input._data, as_tensor_arg(other)._data))


def isnan(input) -> Tensor:  # noqa: A002
    return wrap(np.isnan(input._data))


def isinf(input) -> Tensor:  # noqa: A002
    return wrap(np.isinf(input._data))


def isfinite(input) -> Tensor:  # noqa: A002
    return wrap(np.isfinite(input._data))


def equal(input, other) -> bool:  # noqa: A002
    """True if both tensors have the same shape and values."""
    return input._data.shape == other._data.shape and bool(np.all(input._data == other._data))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:  # noqa: A002
    return bool(np.allclose(input._data, as_tensor_arg(other)._data, rtol=rtol, atol=atol,
                            equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:  # noqa: A002
    return wrap(np.isclose(input._data, as_tensor_arg(other)._data, rtol=rtol, atol=atol,
                           equal_nan=equal_nan))


def cast(x: Tensor, np_dtype) -> Tensor:
    """``x`` converted to a NumPy dtype, differentiably (the engine's dtype fix-up)."""
    from .shape import to_dtype_op

    return to_dtype_op(x, np_dtype)


__all__ = [
    "add", "sub", "rsub", "mul", "div", "true_divide", "neg", "reciprocal", "pow", "exp", "log",
    "sin", "cos", "tanh", "sigmoid", "relu", "abs", "sqrt", "sign", "clamp", "clip", "where",
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "less", "greater_equal", "less_equal",
    "not_equal", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "logical_not",
    "logical_and", "logical_or", "logical_xor", "isnan", "isinf", "isfinite", "equal",
    "allclose", "isclose", "multiply", "divide", "subtract", "negative", "absolute",
]
XP = ["cast", "rdiv"]  # used by backward formulas and operators, not public functions

multiply = mul
divide = div
subtract = sub
negative = neg
absolute = abs

METHODS = {name: globals()[name] for name in __all__ if name not in ("where",)}
METHODS["where"] = lambda self, condition, other: where(condition, self, other)
INPLACE = {
    "pow_": pow, "neg_": neg, "exp_": exp, "log_": log, "sin_": sin, "cos_": cos,
    "tanh_": tanh, "sigmoid_": sigmoid, "relu_": relu, "abs_": abs, "sqrt_": sqrt,
    "sign_": sign, "clamp_": clamp, "clip_": clamp, "reciprocal_": reciprocal,
    "true_divide_": div, "multiply_": mul, "divide_": div, "subtract_": sub, "negative_": neg,
    "absolute_": abs, "eq_": eq, "ne_": ne, "lt_": lt, "le_": le, "gt_": gt, "ge_": ge,
}
