"""PyTorch's ``out=`` keyword on the top-level pointwise and reduction functions.

``torch.add(a, b, out=o)`` computes the result, checks that its dtype can be written to
``o`` (``result type Float can't be cast to the desired output type Long``; the ops that keep
their input's dtype (abs, floor, ...) want ``o`` of exactly that dtype), resizes ``o`` to
the result's shape (with PyTorch's deprecation warning when ``o`` was not empty), writes the
result in place and returns ``o``. No argument may require grad (``out=`` functions are not
differentiable); the reductions that take a ``dtype`` compute in ``o``'s dtype, as PyTorch's
``*_out`` kernels do. ``install()`` wraps each listed function of the ``retrograd`` namespace
once, at import; the call without ``out`` goes straight through.

>>> import retrograd as torch
>>> o = torch.empty(0, dtype=torch.float64)
>>> torch.add(torch.tensor([1, 2]), 1, out=o) is o, o
(True, tensor([2., 3.], dtype=retrograd.float64))
>>> torch.sqrt(torch.tensor([4.0]), out=torch.empty(1, dtype=torch.int64))
Traceback (most recent call last):
...
RuntimeError: result type Float can't be cast to the desired output type Long
"""

from __future__ import annotations

import functools
import inspect
import sys
import warnings

import numpy as np

from ._dtypes import can_cast
from ._tensor import Tensor
from .autograd.grad_mode import is_grad_enabled

__all__ = ["install"]

# Results castable to ``out`` (TensorIterator's common-dtype rule).
PROMOTING = (
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "remainder", "fmod", "pow", "atan2", "arctan2", "maximum", "minimum",
    "fmax", "fmin", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "hypot", "copysign", "nextafter", "xlogy", "gcd", "lcm",
    "logaddexp", "logaddexp2", "ldexp", "clamp_min", "clamp_max", "where", "lerp", "addcmul",
    "addcdiv", "sqrt", "rsqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin",
    "cos", "tan", "tanh", "sigmoid", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
    "atanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "erf", "erfc",
    "erfinv", "reciprocal", "square", "lgamma", "digamma", "deg2rad", "rad2deg", "angle",
    "i0", "sinc", "logit", "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal",
    "less", "less_equal", "not_equal", "logical_and", "logical_or", "logical_xor",
    "logical_not",
)
# Ops whose result keeps the input's dtype: ``out`` must have exactly that dtype.
SAME = ("abs", "absolute", "neg", "negative", "sign", "sgn", "ceil", "floor", "round",
        "trunc", "fix", "frac", "bitwise_not", "clamp", "clip")
# Results that carry no gradient: out= takes inputs that require grad.
NO_GRAD = frozenset(("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
                     "less_equal", "not_equal", "logical_and", "logical_or", "logical_xor",
                     "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
                     "bitwise_left_shift", "bitwise_right_shift", "bitwise_not", "gcd", "lcm",
                     "floor_divide", "signbit", "isposinf", "isneginf"))
# Boolean-only results.
BOOL_ONLY = ("signbit", "isposinf", "isneginf")
# Reductions computing in ``out``'s dtype.
REDUCING = ("sum", "prod", "nansum", "cumsum", "cumprod")
# ... and those whose result must be castable to ``out`` (mean of a dim).
AVERAGING = ("mean", "nanmean")

# PyTorch names the aten op in the autograd error.
_ALIAS = {"true_divide": "div", "divide": "div", "multiply": "mul", "subtract": "sub",
          "absolute": "abs", "negative": "neg", "arctan2": "atan2", "fix": "trunc",
          "clip": "clamp", "greater": "gt", "greater_equal": "ge", "less": "lt",
          "less_equal": "le", "not_equal": "ne"}

_RESIZED = ("An output with one or more elements was resized since it had shape {}, which "
            "does not match the required output shape {}. This behavior is deprecated, and in "
            "a future PyTorch release outputs will not be resized unless they have zero "
            "elements. You can explicitly reuse an out tensor t by resizing it, inplace, to "
            "zero elements with t.resize_(0).")


def _requires_grad(args, kwargs) -> bool:
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor) and a.requires_grad:
            return True
        if isinstance(a, (list, tuple)) and any(
                isinstance(e, Tensor) and e.requires_grad for e in a):
            return True
    return False


def write_out(out: Tensor, result: Tensor) -> Tensor:
    """Resize ``out`` to ``result``'s shape (warning when it held elements) and copy
    ``result`` into it, cast to ``out``'s dtype."""
    shape = tuple(result.shape)
    if tuple(out.shape) != shape:
        if out.numel() != 0:
            warnings.warn(_RESIZED.format(list(out.shape), list(shape)), UserWarning,
                          stacklevel=3)
        out._data = np.empty(shape, dtype=out._data.dtype)
    out.copy_(result.detach())
    return out


def _wrap(fn, name: str, kind: str):
    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if not isinstance(out, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not "
                            f"{type(out).__name__}")
        if name not in NO_GRAD and is_grad_enabled() and (
                out.requires_grad or _requires_grad(args, kwargs)):
            raise RuntimeError(
                f"{_ALIAS.get(name, name)}(): functions with out=... arguments don't support "
                "automatic differentiation, but one of the arguments requires grad.")
        if name in AVERAGING and len(args) < 2 and "dim" not in kwargs:
            if not out.dtype.is_floating_point:  # (the full reduction's overload)
                raise RuntimeError(f"{name}.dtype_out(): input types can't be cast to the "
                                   f"desired output type {out.dtype.scalar_name}")
        if kind == "reducing":
            if kwargs.get("dtype") is None:
                kwargs["dtype"] = out.dtype
            result = fn(*args, **kwargs)
        else:
            try:
                result = fn(*args, **kwargs)
            except (RuntimeError, NotImplementedError):
                # PyTorch checks the cast before the kernel (not implemented for 'Float')
                _check_cast(args, out, kind)
                raise
            rt, ot = result.dtype, out.dtype
            if kind == "same" and rt != ot:
                raise RuntimeError(f"Found dtype {ot.scalar_name} but expected "
                                   f"{rt.scalar_name}")
            if kind == "double" and ot is not rt:
                raise RuntimeError(f"the output given to float_power has dtype "
                                   f"{ot.scalar_name} but the operation's result requires "
                                   f"dtype {rt.scalar_name}")
            if kind == "bool" and ot.scalar_name != "Bool":
                raise RuntimeError(f"{name} does not support non-boolean outputs.")
            if not can_cast(rt, ot):
                raise RuntimeError(f"result type {rt.scalar_name} can't be cast to the "
                                   f"desired output type {ot.scalar_name}")
        return write_out(out, result)
    return with_out


def _check_cast(args, out, kind) -> None:
    if kind != "promoting" or len(args) < 2:
        return
    try:
        rt = sys.modules["retrograd"].result_type(args[0], args[1])
    except Exception:  # noqa: BLE001 - the op's own error stands
        return
    if not can_cast(rt, out.dtype):
        raise RuntimeError(f"result type {rt.scalar_name} can't be cast to the "
                           f"desired output type {out.dtype.scalar_name}")


def _takes_out(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "out" in params


def install() -> None:
    """Give the listed functions of the ``retrograd`` namespace an ``out=`` (once)."""
    ns = sys.modules["retrograd"]
    if getattr(ns, "_out_installed", False):
        return
    for names, kind in ((PROMOTING, "promoting"), (SAME, "same"), (BOOL_ONLY, "bool"),
                        (REDUCING, "reducing"), (AVERAGING, "promoting"),
                        (("float_power",), "double")):
        for name in names:
            fn = getattr(ns, name, None)
            if fn is not None and not _takes_out(fn):
                setattr(ns, name, _wrap(fn, name, kind))
    ns._out_installed = True
