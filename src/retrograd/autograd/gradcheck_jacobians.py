"""The Jacobian helpers ``torch.autograd.gradcheck`` still exports for old code:
``get_numerical_jacobian``, ``get_analytical_jacobian`` (both deprecated, with PyTorch's
FutureWarning) and ``get_numerical_jacobian_wrt_specific_input``.

Their Jacobians are laid out as PyTorch's: one row per input element, one column per output
element (``J[i, j] = d out_j / d in_i``). Numerical ones are central differences of the outputs,
in the outputs' dtype; analytical ones stack vector-Jacobian products, in the inputs' dtype.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._dtypes import FLOAT_CHARS
from .._tensor import Tensor, make
from .api import grad as _grad
from .grad_mode import no_grad

__all__ = ["get_numerical_jacobian", "get_analytical_jacobian",
           "get_numerical_jacobian_wrt_specific_input"]


def _deprecated(name: str) -> None:
    warnings.warn(
        f"`{name}` was part of PyTorch's private API and not meant to be exposed. We are "
        "deprecating it and it will be removed in a future version of PyTorch. If you have a "
        "specific use for this or feature request for this to be a stable API, please file us "
        "an issue at https://github.com/pytorch/pytorch/issues/new",
        FutureWarning, stacklevel=3,
    )


def _as_tuple(x) -> tuple:
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _is_float(t) -> bool:
    return isinstance(t, Tensor) and t._data.dtype.char in FLOAT_CHARS


def _numerical_columns(fn, x: Tensor, outputs: tuple, eps: float) -> tuple:
    """For each floating output, the (x.numel(), output.numel()) Jacobian by central
    differences, perturbing ``x`` in place (it may be a tensor ``fn`` reads from a closure)."""
    outs = [o for o in outputs if _is_float(o)]
    jacs = [np.zeros((x._data.size, o._data.size), o._data.dtype) for o in outs]
    flat = x._data.reshape(-1)
    if flat.size and not np.shares_memory(flat, x._data):
        raise ValueError("the Jacobian needs a contiguous input")
    for k in range(flat.size):
        orig = flat[k].copy()
        with no_grad():
            flat[k] = orig - eps
            minus = [o._data.copy() for o in _as_tuple(fn()) if _is_float(o)]
            flat[k] = orig + eps
            plus = [o._data.copy() for o in _as_tuple(fn()) if _is_float(o)]
            flat[k] = orig
        for jac, a, b in zip(jacs, minus, plus):
            jac[k] = ((b - a) / (2 * eps)).reshape(-1)
    return tuple(make(j) for j in jacs)


def get_numerical_jacobian(fn, inputs, target=None, eps: float = 1e-3, grad_out=1.0) -> tuple:
    """The Jacobians of ``fn(inputs)``'s first output with respect to each tensor of ``target``
    (default ``inputs``) that requires grad, by central differences. Deprecated, as in PyTorch.

    >>> import retrograd as torch
    >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     jac = get_numerical_jacobian(lambda inp: inp[0] * 3, (x,))
    >>> jac[0].round(decimals=6).tolist()
    [[3.0, 0.0], [0.0, 3.0]]
    """
    _deprecated("get_numerical_jacobian")
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_numerical_jacobian no longer supports "
                         "values of grad_out != 1.0.")
    inputs = _as_tuple(inputs)
    outputs = _as_tuple(fn(inputs))
    target = inputs if target is None else _as_tuple(target)
    return tuple(_numerical_columns(lambda: fn(inputs), t, outputs, eps)[0]
                 for t in target if isinstance(t, Tensor) and t.requires_grad)


def get_numerical_jacobian_wrt_specific_input(fn, input_idx: int, inputs, outputs, eps: float,
                                              input=None, is_forward_ad: bool = False) -> tuple:
    """The Jacobians of each floating output of ``fn(*inputs)`` with respect to
    ``inputs[input_idx]`` (or ``input``), by central differences.

    >>> import retrograd as torch
    >>> x = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
    >>> jac = get_numerical_jacobian_wrt_specific_input(lambda a: a * a, 0, (x,), (x * x,), 1e-3)
    >>> round(jac[0].item(), 9)
    4.0
    """
    inputs = _as_tuple(inputs)
    x = inputs[input_idx] if input is None else input
    if not x.requires_grad:
        raise AssertionError("Expected input to have requires_grad=True")
    return _numerical_columns(lambda: fn(*inputs), x, _as_tuple(outputs), eps)


def get_analytical_jacobian(inputs, output, nondet_tol: float = 0.0, grad_out=1.0):
    """``(jacobians, reentrant, correct_grad_sizes, correct_grad_types)``: the Jacobians of
    ``output`` with respect to each input that requires grad, from vector-Jacobian products
    (computed twice: ``reentrant`` says they agree within ``nondet_tol``). Deprecated.

    >>> import retrograd as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     get_analytical_jacobian((x,), x * x)
    ((tensor([[2., 0.],
            [0., 4.]]),), True, True, True)
    """
    _deprecated("get_analytical_jacobian")
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_analytical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    diff = [t for t in _as_tuple(inputs) if _is_float(t) and t.requires_grad]
    n = output._data.size
    runs = []
    sizes_ok = types_ok = True
    for _ in range(2):  # twice: a nondeterministic backward shows as a difference
        jacs = [np.zeros((t._data.size, n), t._data.dtype) for t in diff]
        for m in range(n):
            v = np.zeros(n, output._data.dtype)
            v[m] = 1
            gs = _grad(output, diff, make(v.reshape(output._data.shape)), retain_graph=True,
                       allow_unused=True)
            for jac, t, g in zip(jacs, diff, gs):
                if g is None:
                    continue
                if g._data.shape != t._data.shape:
                    sizes_ok = False
                    continue
                if g._data.dtype != t._data.dtype:
                    types_ok = False
                if g._data.size:
                    jac[:, m] = g._data.reshape(-1)
        runs.append(jacs)
    reentrant = all(a.size == 0 or np.abs(a - b).max() <= nondet_tol
                    for a, b in zip(runs[0], runs[1]))
    return tuple(make(j) for j in runs[0]), reentrant, sizes_ok, types_ok
