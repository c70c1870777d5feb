"""The base beneath the op families: what several families share, importing none of them.

PyTorch's legacy dtype names (``Float``, ``Long``...) and its "not implemented" error for a kernel
with no version for a dtype; the checks an in-place op (or an in-place view op) makes first.
"""

from __future__ import annotations

import numpy as np

from .._dtypes import FROM_NP, promote_types, to_dtype
from .._tensor import Tensor, edge
from ..autograd.grad_mode import state
from ..autograd.graph import AccumulateGrad
from ..autograd.provenance import ENABLED as PROVENANCE
from ..autograd.provenance import site, with_site


def legacy(dtype) -> str:
    """PyTorch's legacy name of a dtype, as its error messages spell it (``Float``)."""
    return FROM_NP[np.dtype(dtype)].scalar_name


def not_implemented(kernel: str, dtype):
    """PyTorch's error for a kernel that has no version for ``dtype``."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{legacy(dtype)}\'')


def check_grad_dtype(input, dtype) -> None:  # noqa: A002
    """PyTorch's refusal to record a reduction whose ``dtype=`` cannot carry a gradient
    (``x.sum(dtype=torch.int64)`` for an ``x`` that requires grad)."""
    if dtype is not None and state.grad_enabled and getattr(input, "requires_grad", False):
        dt = to_dtype(dtype)
        if not dt.is_floating_point:
            raise RuntimeError(f"Autograd not support dtype: {dt.scalar_name}")


def norm_dtype(have, dtype):
    """``linalg.vector_norm``'s ``dtype=`` (for an input of NumPy dtype ``have``), checked as
    PyTorch checks it: a floating dtype the input's promotes to.

    >>> import retrograd as torch
    >>> norm_dtype(np.dtype("float32"), torch.float64)
    retrograd.float64
    """
    dt = to_dtype(dtype)
    if not dt.is_floating_point:
        msg = f"dtype should be floating point or complex, but got {dt.scalar_name}"
    elif promote_types(FROM_NP[have], dt) != dt:
        msg = (f"the dtype of the input ({FROM_NP[have].scalar_name}) should be convertible "
               f"without narrowing to the specified dtype ({dt.scalar_name})")
    else:
        return dt
    raise RuntimeError("linalg.vector_norm: " + msg)


# Called with the target of every in-place write before anything is written, while set
# (autograd.saved_mutation: allow_mutation_on_saved_tensors clones saved tensors there).
BEFORE_WRITE = None


def _check_writable(self: Tensor) -> None:
    if BEFORE_WRITE is not None:
        BEFORE_WRITE(self)
    if self._inference and not state.inference:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
            "make a clone to get a normal tensor before doing inplace update.See "
            "https://github.com/pytorch/rfcs/pull/17 for more details."
        )


def _check_leaf(self: Tensor) -> None:
    fn, _ = edge(self)
    if fn.__class__ is AccumulateGrad:
        raise RuntimeError(with_site(
            "a leaf Variable that requires grad is being used in an in-place operation.",
            label="The in-place op was called", s=site(2) if PROVENANCE else None))
    v = self._view
    if v is not None and v[0]._grad_fn is None and v[0]._rg:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )
    if v is not None and fn is not None and (fn._n_out > 1 or fn._multi_view):
        raise RuntimeError(
            f"Output {self._nr} of {fn.name().replace('Backward0', '')} is a view and is being "
            "modified inplace. This view is the output of a function that returns multiple "
            "views. Such functions do not allow the output views to be modified inplace. You "
            "should replace the inplace operation by an out-of-place one."
        )


def kept_if_grad(t):
    """``t`` where it requires grad, else None: what PyTorch's nodes keep of an operand that
    only its own gradient reads (``put``'s, ``index_add``'s ``source``; ``fmod``'s ``other``).

    >>> import retrograd as torch
    >>> kept_if_grad(torch.ones(1)) is None
    True
    """
    return t if isinstance(t, Tensor) and t.requires_grad else None
