"""Gradient clipping: ``clip_grad_norm_`` (by total norm) and ``clip_grad_value_`` (elementwise)."""

from __future__ import annotations

import types
import warnings

import numpy as np

import retrograd as torch
from retrograd import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _as_list(tensors) -> list:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The norm of the norms of ``tensors`` (the norm of their concatenation).

    >>> import retrograd as torch
    >>> torch.nn.utils.get_total_norm([torch.tensor([3.0]), torch.tensor([4.0])])
    tensor(5.)
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return torch.tensor(0.0)
    with torch.no_grad():
        norms = [torch.linalg.vector_norm(t, norm_type) for t in tensors]
        total = torch.linalg.vector_norm(torch.stack(norms), norm_type)
    if error_if_nonfinite and bool(total.isnan() | total.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor,
                          foreach=None) -> None:
    """Scale the gradients by ``max_norm / (total_norm + 1e-6)`` when that is below 1.

    >>> import retrograd as torch
    >>> p = torch.ones(4, requires_grad=True); p.grad = torch.full((4,), 2.0)
    >>> torch.nn.utils.clip_grads_with_norm_([p], 1.0, torch.tensor(4.0))
    >>> p.grad
    tensor([0.5000, 0.5000, 0.5000, 0.5000])
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    # After a float16 overflow (GradScaler's ordinary case) the norm is inf and inf * 0 gives
    # NaN gradients, as PyTorch's do, without NumPy's RuntimeWarning.
    with torch.no_grad(), np.errstate(invalid="ignore", over="ignore"):
        coef = torch.clamp(float(max_norm) / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Rescale gradients in place so that their total norm is at most ``max_norm``.

    Returns the total norm before clipping. ``norm_type`` may be ``float('inf')``.

    >>> import retrograd as torch
    >>> p = torch.zeros(2, requires_grad=True); p.grad = torch.tensor([3.0, 4.0])
    >>> torch.nn.utils.clip_grad_norm_([p], max_norm=1.0)
    tensor(5.)
    >>> p.grad
    tensor([0.6000, 0.8000])
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        was_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if was_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Deprecated alias of ``clip_grad_norm_``."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]`` in place.

    >>> import retrograd as torch
    >>> p = torch.zeros(3, requires_grad=True); p.grad = torch.tensor([-5.0, 0.5, 5.0])
    >>> torch.nn.utils.clip_grad_value_(p, 1.0); p.grad
    tensor([-1.0000,  0.5000,  1.0000])
    """
    clip_value = float(clip_value)
    with torch.no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
