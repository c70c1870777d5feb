"""PyTorch's TypeError when a top-level function that takes tensors is given something else.

The hot ops check their arguments on their own error path (``ops._core.arg_error``,
``Signatures``), at no cost to a correct call. The functions listed here are the rest of the
namespace whose first argument must be a tensor (or a sequence of tensors): without a check
they would fail with an AttributeError from deep inside (``'list' object has no attribute
'_data'``) or, worse, accept a list that PyTorch refuses. ``install()`` replaces each of them
in the ``retrograd`` namespace by a thin wrapper that checks first and raises PyTorch's
TypeError; the Tensor methods of the same names are untouched (their ``self`` is a tensor).
``tests/test_bad_input.py`` probes every public function against torch and keeps this list
complete.

>>> import retrograd as torch
>>> torch.nansum([1.0, 2.0])
Traceback (most recent call last):
...
TypeError: nansum(): argument 'input' (position 1) must be Tensor, not list
"""

from __future__ import annotations

import functools
import numbers
import sys

from ._dtypes import dtype
from ._tensor import Tensor
from .ops._core import Signatures
from .ops.unary import _CLAMP

__all__ = ["install"]

# name -> PyTorch's name of the first argument, which must be a tensor.
TENSOR_FIRST = dict.fromkeys((
    "all", "angle", "any", "celu_", "cholesky_inverse", "combinations",
    "conj", "conj_physical_", "corrcoef", "cov", "detach", "geqrf", "get_device", "gradient",
    "histogramdd", "i0", "i0_", "is_complex", "is_conj", "is_distributed", "is_floating_point",
    "is_inference", "is_neg", "logit", "lu", "matrix_exp", "nansum", "numel", "pdist",
    "pinverse", "prod", "ravel", "real", "resolve_conj", "resolve_neg", "rrelu_", "selu_",
    "sinc", "std", "std_mean", "var", "var_mean",
), "input") | {"repeat_interleave": "repeats", "to_dlpack": "data", "trapezoid": "y",
               "trapz": "y", "vander": "x", "cumulative_trapezoid": "y"}
# Functions with several signatures: PyTorch's "invalid combination of arguments" text.
OVERLOADED = {"clamp": _CLAMP, "clip": Signatures("clip", *_CLAMP.overloads)}
# Functions taking one sequence of tensors, and functions taking tensors as *args.
TENSOR_SEQUENCE = ("column_stack", "dstack", "hstack", "row_stack", "stack", "vstack", "cat",
                   "concat", "concatenate")
TENSOR_VARARGS = ("atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_tensors",
                  "chain_matmul")


def _is_bool(v) -> bool:
    return v.__class__ is bool


def _is_dtype(v) -> bool:
    return isinstance(v, dtype)


def _is_str(v) -> bool:
    return isinstance(v, str)


# Settings and queries whose first argument has a type: (test, PyTorch's message; {t} is the
# type name given).
TYPED_FIRST = {
    "set_anomaly_enabled": (_is_bool, "set_anomaly_enabled(): argument 'enabled' (position 1) "
                                      "must be bool, not {t}"),
    "set_autocast_cache_enabled": (_is_bool, "enabled must be a bool (got {t})"),
    "set_autocast_cpu_enabled": (_is_bool, "enabled must be a bool (got {t})"),
    "set_autocast_cpu_dtype": (_is_dtype, "dtype must be a torch.dtype (got {t})"),
    "set_default_dtype": (_is_dtype, "invalid dtype object: only floating-point types are "
                                     "supported as the default type"),
    "scalar_tensor": (lambda v: isinstance(v, (numbers.Number, Tensor)),
                      "scalar_tensor(): argument 's' (position 1) must be Number, not {t}"),
    "get_autocast_dtype": (_is_str, "get_autocast_dtype(): argument 'device_type' (position 1) "
                                    "must be str, not {t}"),
    "is_autocast_enabled": (_is_str, "is_autocast_enabled(): argument 'device_type' "
                                     "(position 1) must be str, not {t}"),
    "finfo": (_is_dtype, "finfo(): argument 'type' (position 1) must be torch.dtype, not {t}"),
    "iinfo": (_is_dtype, "iinfo(): argument 'type' (position 1) must be torch.dtype, not {t}"),
    "manual_seed": (lambda v: isinstance(v, (str, bytes, numbers.Real)) or hasattr(v, "__int__"),
                    "int() argument must be a string, a bytes-like object or a real number, "
                    "not '{t}'"),
    "set_deterministic_debug_mode": (lambda v: isinstance(v, (str, int)),
                                     "debug_mode must be str or int, but got <class '{t}'>"),
}


def _not_tensor(value) -> bool:
    return value.__class__ is not Tensor and not isinstance(value, Tensor)


def _element_error(args) -> TypeError | None:
    for i, t in enumerate(args):
        if _not_tensor(t):
            return TypeError(f"expected Tensor as element {i} in argument 0, but got "
                             f"{type(t).__name__}")
    return None


def _first(fn, name: str, arg: str):
    @functools.wraps(fn)
    def checked(*args, **kwargs):
        if args and _not_tensor(args[0]):
            raise TypeError(f"{name}(): argument '{arg}' (position 1) must be Tensor, not "
                            f"{type(args[0]).__name__}")
        return fn(*args, **kwargs)
    return checked


def _overloaded(fn, sig: Signatures):
    @functools.wraps(fn)
    def checked(*args, **kwargs):
        if args and _not_tensor(args[0]):
            sig.check(*args, **kwargs)  # raises: no signature takes a non-tensor input
        return fn(*args, **kwargs)
    return checked


def _typed(fn, test, message: str):
    @functools.wraps(fn)
    def checked(*args, **kwargs):
        if args and not test(args[0]):
            raise TypeError(message.format(t=type(args[0]).__name__))
        return fn(*args, **kwargs)
    return checked


def _sequence(fn, name: str):
    @functools.wraps(fn)
    def checked(tensors, *args, **kwargs):
        if not isinstance(tensors, (list, tuple)):
            raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of "
                            f"Tensors, not {type(tensors).__name__}")
        err = _element_error(tensors)
        if err is not None:
            raise err
        return fn(tensors, *args, **kwargs)
    return checked


def _varargs(fn):
    @functools.wraps(fn)
    def checked(*args, **kwargs):
        # atleast_*d also take one list or tuple of tensors.
        seq = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
        err = _element_error(seq)
        if err is not None:
            raise err
        return fn(*args, **kwargs)
    return checked


def install() -> None:
    """Wrap the listed functions of the ``retrograd`` namespace (once, at import)."""
    ns = sys.modules["retrograd"]
    if getattr(ns, "_argcheck_installed", False):
        return
    for name, arg in TENSOR_FIRST.items():
        setattr(ns, name, _first(getattr(ns, name), name, arg))
    for name, sig in OVERLOADED.items():
        setattr(ns, name, _overloaded(getattr(ns, name), sig))
    for name, (test, message) in TYPED_FIRST.items():
        setattr(ns, name, _typed(getattr(ns, name), test, message))
    for name in TENSOR_SEQUENCE:
        setattr(ns, name, _sequence(getattr(ns, name), name))
    for name in TENSOR_VARARGS:
        setattr(ns, name, _varargs(getattr(ns, name)))
    ns._argcheck_installed = True
