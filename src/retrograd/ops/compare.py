"""Comparisons, logic and bitwise ops (never differentiable), NaN and inf tests, and the ops
that select between two inputs: where, maximum, minimum, fmax and fmin.
"""

from __future__ import annotations

import numpy as np

from .._dtypes import F32, FLOAT_CHARS, FROM_NP, WIDE_CHARS, bfloat16, binary_result
from .._tensor import Tensor
from ..autograd.graph import Node
from . import _array
from ._apply import apply, apply_binary
from ._base import legacy, not_implemented
from ._core import (
    Signatures,
    arg_error,
    as_tensor_arg,
    broadcasting,
    called_by_operator,
    check_broadcast,
    check_wide,
    like_layout,
    nan_bits,
    operands,
    scalar_loop,
    scalar_value,
    wrap,
)
from .arithmetic import _tensor_other
from .indexing import nonzero

# PyTorch's signatures, for its errors when arguments fit none (checked only after a failure).
_MAXIMUM = Signatures("maximum", "Tensor input, Tensor other, *, Tensor? out = None")
_MINIMUM = Signatures("minimum", "Tensor input, Tensor other, *, Tensor? out = None")
_WHERE = Signatures("where", "Tensor condition",
                    "Tensor condition, Tensor input, Tensor other, *, Tensor? out = None",
                    "Tensor condition, Number self, Tensor other",
                    "Tensor condition, Tensor input, Number other",
                    "Tensor condition, Number self, Number other")


def _compare(fn):
    name = _COMPARE_NAMES[fn.__name__]
    sig = Signatures(name, "Tensor input, Tensor other, *, Tensor? out = None",
                     "Tensor input, Number other, *, Tensor? out = None")

    def op(input, other) -> Tensor:  # noqa: A002
        try:
            ad, bd = operands(input, other)
        except (AttributeError, TypeError):
            if isinstance(input, np.ndarray):  # (formulas compare arrays)
                return op(as_tensor_arg(input), other)
            if called_by_operator():
                return NotImplemented  # as torch's: ``t == [1.]`` is False, ``t < None`` raises
            sig.check(input, other)
            raise
        if ad.dtype.char in WIDE_CHARS:  # uint16/32/64: eq and ne only, as in PyTorch
            check_wide(fn.__name__, ad.dtype)
        try:
            return wrap(fn(ad, bd))
        except ValueError:
            check_broadcast(ad.shape, np.shape(bd))
            raise

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


def _integral(name, fn):
    """A bitwise op: integers and bools only."""

    def op(input, other) -> Tensor:  # noqa: A002
        if not isinstance(input, Tensor):
            input = as_tensor_arg(input)
        ad, bd = operands(input, other)
        if ad.shape != np.shape(bd):  # PyTorch checks shapes before dtypes
            check_broadcast(ad.shape, np.shape(bd))
        if ad.dtype.char in FLOAT_CHARS:
            raise not_implemented(f"{name}_cpu", ad.dtype)
        if bd.__class__ is float or (isinstance(bd, np.ndarray) and bd.dtype.char in FLOAT_CHARS):
            raise not_implemented(f"{name}_cpu", np.float32)
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


def _promoted_bool(input, other) -> bool:  # noqa: A002
    if isinstance(other, Tensor):
        od, oz = other.dtype, other._data.ndim == 0
    elif other.__class__ in (bool, int, float):
        od, oz = other.__class__, True
    else:
        return True
    return binary_result(input.dtype, input._data.ndim == 0, od, oz).scalar_name == "Bool"


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
        if d is not None and (d.char in WIDE_CHARS or (d.kind == "b" and _promoted_bool(
                input, other))):  # (bool with an integer other shifts in its dtype)
            raise not_implemented(f"{kernel}_cpu", d)
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
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("bitwise_not", "input", 1, input) from None
    if a.dtype.char in FLOAT_CHARS or a.dtype.char in WIDE_CHARS:
        raise not_implemented("bitwise_not_cpu", a.dtype)
    return wrap(np.invert(a))


def logical_not(input) -> Tensor:  # noqa: A002
    """True where ``input`` is zero.

    >>> import retrograd as torch
    >>> torch.logical_not(torch.tensor([0., 2.]))
    tensor([ True, False])
    """
    try:
        return wrap(np.logical_not(input._data))
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("logical_not", "input", 1, input) from None


def _no_wide(name: str, input) -> None:  # noqa: A002
    if not isinstance(input, Tensor):  # (no overload takes a number first)
        raise arg_error(name, "input", 1, input)
    if input._data.dtype.char in WIDE_CHARS:
        raise not_implemented(f"{name}_cpu", input._data.dtype)


def _not_tensors(name, input, other) -> TypeError:  # noqa: A002
    """PyTorch's TypeError for the first of ``input``, ``other`` that is not a tensor (ops
    with no overload taking a number)."""
    if not isinstance(input, Tensor):
        return arg_error(name, "input", 1, input)
    return arg_error(name, "other", 2, other)


def logical_and(input, other) -> Tensor:  # noqa: A002
    """True where both are nonzero.

    >>> import retrograd as torch
    >>> torch.logical_and(torch.tensor([0, 1, 2]), torch.tensor([1., 1., 0.]))
    tensor([False,  True, False])
    """
    _no_wide("logical_and", input)
    try:
        return wrap(broadcasting(np.logical_and, input._data, other._data))
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise _not_tensors("logical_and", input, other) from None


def logical_or(input, other) -> Tensor:  # noqa: A002
    """True where either is nonzero.

    >>> import retrograd as torch
    >>> torch.logical_or(torch.tensor([0, 1]), torch.tensor([0, 0]))
    tensor([False,  True])
    """
    _no_wide("logical_or", input)
    try:
        return wrap(broadcasting(np.logical_or, input._data, other._data))
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise _not_tensors("logical_or", input, other) from None


def logical_xor(input, other) -> Tensor:  # noqa: A002
    """True where exactly one is nonzero.

    >>> import retrograd as torch
    >>> torch.logical_xor(torch.tensor([0, 1, 1]), torch.tensor([1, 1, 0]))
    tensor([ True, False,  True])
    """
    _no_wide("logical_xor", input)
    try:
        return wrap(broadcasting(np.logical_xor, input._data, other._data))
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise _not_tensors("logical_xor", input, other) from None


def isnan(input) -> Tensor:  # noqa: A002
    """True where NaN.

    >>> import retrograd as torch
    >>> torch.isnan(torch.tensor([1., float('nan')]))
    tensor([False,  True])
    """
    try:
        return wrap(np.isnan(input._data))
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("isnan", "input", 1, input) from None


def isinf(input) -> Tensor:  # noqa: A002
    """True where +-inf.

    >>> import retrograd as torch
    >>> torch.isinf(torch.tensor([1., float('inf')]))
    tensor([False,  True])
    """
    try:
        return wrap(np.isinf(input._data))
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("isinf", "input", 1, input) from None


def isfinite(input) -> Tensor:  # noqa: A002
    """True where neither inf nor NaN.

    >>> import retrograd as torch
    >>> torch.isfinite(torch.tensor([1., float('inf')]))
    tensor([ True, False])
    """
    try:
        return wrap(np.isfinite(input._data))
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("isfinite", "input", 1, input) from None


def signbit(input) -> Tensor:  # noqa: A002
    """True where the sign bit is set (also for -0.0 and negative NaN).

    >>> import retrograd as torch
    >>> torch.signbit(torch.tensor([-0., 0., -2.]))
    tensor([ True, False,  True])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("signbit", "input", 1, input) from None
    if a.dtype.char in FLOAT_CHARS:
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
        raise RuntimeError(f"{legacy(a._data.dtype)} did not match {legacy(b._data.dtype)}")


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:  # noqa: A002
    """True if ``|input - other| <= atol + rtol * |other|`` everywhere.

    >>> import retrograd as torch
    >>> torch.allclose(torch.tensor([1.0]), torch.tensor([1.0 + 1e-9]))
    True
    """
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        raise _not_tensors("allclose", input, other)
    _check_same_dtype(input, other)
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol,
                            equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:  # noqa: A002
    """Elementwise ``|input - other| <= atol + rtol * |other|``.

    >>> import retrograd as torch
    >>> torch.isclose(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.1]))
    tensor([ True, False])
    """
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        raise _not_tensors("isclose", input, other)
    _check_same_dtype(input, other)
    return wrap(broadcasting(np.isclose, input._data, other._data, rtol=rtol,
                             atol=atol, equal_nan=equal_nan))


class TiedGradBackward(Node):
    """A gradient formula's result tied to an input it does not vary with (see ``tie``):
    the gradient passes through to the result's inputs; the input gets zeros."""

    def backward(self, xp, g):
        return g, xp.zeros_meta(self._meta[1])


def tie(P, r: Tensor, x: Tensor, **attrs) -> Tensor:
    """``r``, a backward formula's result, as a function of ``(r, x)`` with a zero derivative
    in ``x``; a ``P`` node (a ``TiedGradBackward`` subclass, named as PyTorch's double
    backward) records it. PyTorch's backward of a piecewise-linear op (``relu``'s
    ``threshold_backward``, ``hardtanh_backward``, ``max_pool2d``'s...) is an op of the input
    too, so under ``create_graph=True`` its first-order gradient requires grad and
    differentiating it again gives zeros, not an error. The array twin returns ``r``.

    >>> import retrograd as torch
    >>> x = torch.tensor([-1., 2.], requires_grad=True)
    >>> (g,) = torch.autograd.grad(torch.relu(x).sum(), x, create_graph=True)
    >>> g.grad_fn.name(), torch.autograd.grad(g.sum(), x)[0]
    ('ThresholdBackwardBackward0', tensor([0., 0.]))
    """
    return apply(P, r._data, r, x, **attrs)


class WhereBackward0(Node):
    _packs = ("_cond",)  # what PyTorch's node saves (autograd/saved_hooks.py)

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
    try:
        if input is None and other is None:
            return nonzero(condition, as_tuple=True)
        try:
            cond = condition._data
        except AttributeError:
            if not isinstance(condition, (np.ndarray, np.generic, bool)):  # (formulas pass
                raise                                                       # arrays, bools)
            cond = np.asarray(condition)
        if cond.dtype.kind != "b":
            raise RuntimeError(
                f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                f"{FROM_NP[cond.dtype].scalar_name}"
            )
        if not isinstance(input, Tensor):
            if scalar_value(input) is None and not isinstance(input, np.ndarray):
                raise TypeError("where: input is neither a tensor nor a number")
            if not isinstance(other, Tensor):
                input = as_tensor_arg(input)
            else:
                ad, bd = operands(other, input)
                out = _where_array(cond, bd, ad)
                return _where_finish(cond, out, input, other, bd, ad)
        ad, bd = operands(input, other)
        out = _where_array(cond, ad, bd)
        return _where_finish(cond, out, input, other, ad, bd)
    except (AttributeError, TypeError):
        if input is None and other is None:
            _WHERE.check(condition)
        _WHERE.check(condition, input, other)
        raise


def _where_array(cond, a, b):
    try:
        return np.where(cond, a, b)
    except ValueError:
        check_broadcast(cond.shape, np.shape(a), np.shape(b))
        raise


def _where_finish(cond, out, a, b, ad, bd):
    if out.dtype != np.result_type(ad, bd) and not isinstance(ad, (int, float)):
        out = out.astype(np.result_type(ad, bd))
    return apply(WhereBackward0, out, a, b, save=(), _cond=cond)


class _MaxMinBackward(Node):
    """maximum / minimum: ties split the gradient in half; NaN sends it to both. Both inputs
    are kept (either gradient reads both, as PyTorch's formula does); which side wins is found
    again from them, a constant of the forward: the backward only routes g."""

    saves = ((0, 1), (0, 1))
    _max = True

    def backward(self, xp, g):
        nf = self.next_functions
        ad, bd = operands(*self.saved(True))
        half = ad == bd
        ga = gb = None
        if nf[0][0] is not None:
            ga = xp.where(half, g * 0.5, xp.where(ad < bd if self._max else ad > bd, 0.0, g))
        if nf[1][0] is not None:
            gb = xp.where(half, g * 0.5, xp.where(ad > bd if self._max else ad < bd, 0.0, g))
        return ga, gb


# float16/bfloat16 maximum, minimum and clamp as torch's kernels select (bit for bit): the
# vector steps compare in float32 (``_mm256_max_ps(a, b)``: ``a > b ? a : b``, so a tie of
# +-0 gives the second operand) and make a NaN all ones (0xFFFF); the scalar loop's
# ``std::max(a, b)`` (``a < b ? b : a``) gives the first on a tie, and its NaN check a quiet
# NaN (0x7FC0, 0x7E00). Which elements take which loop: ``scalar_loop``.
_QUIET = {bfloat16.np: 0x7FC0, np.dtype(np.float16): 0x7E00}


def maxmin_reduced(a: np.ndarray, b: np.ndarray, is_max: bool = True) -> np.ndarray:
    """torch's float16/bfloat16 ``maximum`` (``is_max``) or ``minimum`` of two arrays of the
    dtype, loop by loop (see above)."""
    x, y = a.astype(F32), b.astype(F32)
    proto = np.where(x > y if is_max else x < y, a, b)
    out = np.array(proto, order="C")
    tail = scalar_loop(out.shape, a, b)
    if tail is not None:
        sca = np.where(x < y if is_max else y < x, b, a)
        out.reshape(-1)[tail] = np.broadcast_to(sca, out.shape).reshape(-1)[tail]
    nan = np.isnan(x) | np.isnan(y)
    if nan.any():
        nan_bits(out, nan, tail, 0xFFFF, _QUIET[a.dtype])
    return like_layout(out, proto)


def _fmaxmin_reduced(a: np.ndarray, b: np.ndarray, is_max: bool) -> np.ndarray:
    """torch's float16/bfloat16 ``fmax``/``fmin``: a scalar loop, ``std::fmax`` in float32;
    for float16 libm's (a tie of +-0 gives the first operand, two NaNs the second), for
    bfloat16 an inlined ``maxss`` (a tie gives the second)."""
    x, y = a.astype(F32), b.astype(F32)
    with np.errstate(invalid="ignore"):
        if a.dtype == bfloat16.np:
            out = (np.fmax if is_max else np.fmin)(x, y)
        else:
            first = ((x >= y) if is_max else (x <= y)) | (np.isnan(y) & ~np.isnan(x))
            out = np.where(first, x, y)
    out = out.astype(a.dtype)
    if a.dtype == bfloat16.np:
        nan = np.isnan(out)
        if nan.any():
            out = like_layout(nan_bits(np.array(out, order="C"), nan, slice(None), None, 0x7FC0),
                              out)
    return out


class MaximumBackward0(_MaxMinBackward):
    reduced = staticmethod(maxmin_reduced)


class MinimumBackward0(_MaxMinBackward):
    _max = False
    reduced = staticmethod(lambda a, b: maxmin_reduced(a, b, False))


class _FmaxFminBackward(Node):
    """fmax / fmin: the whole gradient to the chosen side; ties go to ``input`` (both inputs
    kept, as PyTorch's node keeps them; the side found again from them)."""

    saves = ((0, 1), (0, 1))
    _max = True

    def backward(self, xp, g):
        nf = self.next_functions
        ad, bd = operands(*self.saved(True))
        keep = (ad >= bd if self._max else ad <= bd) | np.isnan(bd)
        ga = xp.where(keep, g, 0.0) if nf[0][0] is not None else None
        gb = xp.where(keep, 0.0, g) if nf[1][0] is not None else None
        return ga, gb


class FmaxBackward0(_FmaxFminBackward):
    reduced = staticmethod(lambda a, b: _fmaxmin_reduced(a, b, True))


class FminBackward0(_FmaxFminBackward):
    _max = False
    reduced = staticmethod(lambda a, b: _fmaxmin_reduced(a, b, False))


def maximum(input, other) -> Tensor:  # noqa: A002
    """Elementwise maximum, NaN-propagating; a tie splits the gradient in half (as PyTorch).

    >>> import retrograd as torch
    >>> torch.maximum(torch.tensor([1., 5.]), torch.tensor([3., 2.]))
    tensor([3., 5.])
    """
    try:
        _tensor_other("maximum", other)
        return apply_binary(MaximumBackward0, np.maximum, input, other)
    except (AttributeError, TypeError):
        _MAXIMUM.check(input, other)
        raise


def minimum(input, other) -> Tensor:  # noqa: A002
    """Elementwise minimum, NaN-propagating; a tie splits the gradient in half (as PyTorch).

    >>> import retrograd as torch
    >>> torch.minimum(torch.tensor([1., 5.]), torch.tensor([3., 2.]))
    tensor([1., 2.])
    """
    try:
        _tensor_other("minimum", other)
        return apply_binary(MinimumBackward0, np.minimum, input, other)
    except (AttributeError, TypeError):
        _MINIMUM.check(input, other)
        raise


def fmax(input, other) -> Tensor:  # noqa: A002
    """Elementwise maximum that ignores NaN (NaN only where both are NaN).

    >>> import retrograd as torch
    >>> torch.fmax(torch.tensor([1., float('nan')]), torch.tensor([3., 2.]))
    tensor([3., 2.])
    """
    if not isinstance(input, Tensor):
        raise arg_error("fmax", "input", 1, input)
    _tensor_other("fmax", other)
    return apply_binary(FmaxBackward0, np.fmax, input, other)


def fmin(input, other) -> Tensor:  # noqa: A002
    """Elementwise minimum that ignores NaN (NaN only where both are NaN).

    >>> import retrograd as torch
    >>> torch.fmin(torch.tensor([1., float('nan')]), torch.tensor([3., 2.]))
    tensor([1., 2.])
    """
    if not isinstance(input, Tensor):
        raise arg_error("fmin", "input", 1, input)
    _tensor_other("fmin", other)
    return apply_binary(FminBackward0, np.fmin, input, other)

__all__ = [
    "where", "eq", "ne", "lt", "le", "gt", "ge", "greater", "less", "greater_equal", "less_equal",
    "not_equal", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "logical_not",
    "logical_and", "logical_or", "logical_xor", "isnan", "isinf", "isfinite", "signbit", "equal",
    "allclose", "isclose", "maximum", "minimum", "fmax", "fmin", "bitwise_left_shift",
    "bitwise_right_shift",
]
XP: list = ["tie"]
_array.register(tie=lambda P, r, x, **attrs: r)

METHODS = {name: globals()[name] for name in __all__ if name != "where"}
METHODS["where"] = lambda self, condition, other: where(condition, self, other)
METHODS.update({
    "__lshift__": bitwise_left_shift,
    "__rshift__": bitwise_right_shift,
    "__rlshift__": lambda self, other: bitwise_left_shift(as_tensor_arg(other), self),
    "__rrshift__": lambda self, other: bitwise_right_shift(as_tensor_arg(other), self),
})
_NO_INPLACE = {
    "where", "greater", "less", "greater_equal", "less_equal", "not_equal", "equal", "allclose",
    "isclose", "isnan", "isinf", "isfinite", "signbit", "maximum", "minimum", "fmax", "fmin",
}
INPLACE = {name + "_": globals()[name] for name in __all__ if name not in _NO_INPLACE}
INPLACE.update({
    "greater_": gt, "less_": lt, "greater_equal_": ge, "less_equal_": le, "not_equal_": ne,
    "__iand__": bitwise_and, "__ior__": bitwise_or, "__ixor__": bitwise_xor,
    "__ilshift__": bitwise_left_shift, "__irshift__": bitwise_right_shift,
})
