"""Normalisation functions and dropout.

``batch_norm``, ``layer_norm`` and ``group_norm`` are primitives (``ops.nn_norm``) for speed
and PyTorch's grad_fn names; ``rms_norm``, ``instance_norm`` and the dropouts are composites of
retrograd ops, as PyTorch builds them (dropout is ``input * mask``: a ``MulBackward0``).
"""

from __future__ import annotations

import math
import numbers
import warnings

import retrograd as torch

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops import nn_norm

__all__ = [
    "batch_norm", "layer_norm", "group_norm", "rms_norm", "instance_norm", "dropout",
    "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
]


def _shape_list(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _as_shape(normalized_shape) -> tuple:
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(s) for s in normalized_shape)


def _check_mixed(input: Tensor, *params) -> None:  # noqa: A002
    """PyTorch's CPU rule for normalization parameters of another dtype than the input: only
    float32 parameters with a float16/bfloat16 input."""
    dt = input.dtype
    if all(p is None or p.dtype == dt for p in params):
        return
    if any(p is not None and p.dtype != torch.float32 for p in params):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if dt not in (torch.float16, torch.bfloat16):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Batch normalisation over dim 1 of ``input`` (N, C, *).

    In training the batch's statistics normalise and the running statistics (when given) move
    towards them by ``momentum``, in place (the running variance is the unbiased one).

    >>> import retrograd as torch
    >>> x = torch.tensor([[1.0, 2.0], [3.0, 6.0]])
    >>> rm, rv = torch.zeros(2), torch.ones(2)
    >>> torch.nn.functional.batch_norm(x, rm, rv, training=True)
    tensor([[-1.0000, -1.0000],
            [ 1.0000,  1.0000]])
    >>> rm
    tensor([0.2000, 0.4000])
    """
    if momentum is None:
        raise TypeError("batch_norm(): argument 'momentum' (position 7) must be float, not "
                        "NoneType")
    shape = input.shape
    if len(shape) < 2:
        raise ValueError(f"Expected 2D or higher input to batch_norm (got {len(shape)}D input)")
    c = shape[1]
    if training:
        n = shape[0] * math.prod(shape[2:])
        if n == 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {shape}")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be "
                         "None")
    if running_mean is None:
        if not training:
            raise RuntimeError("running_mean must be defined in evaluation mode")
    else:
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t.numel() != c:
                raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    _check_mixed(input, weight, bias, running_mean, running_var)
    return nn_norm.native_batch_norm(input, weight, bias, running_mean, running_var,
                                     bool(training), float(momentum), float(eps))


def instance_norm(input: Tensor, running_mean: Tensor | None = None,  # noqa: A002
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample on its own (batch norm of a (1, N*C, *) view).

    >>> import retrograd as torch
    >>> torch.nn.functional.instance_norm(torch.tensor([[[1.0, 3.0]]]))
    tensor([[[-1.0000,  1.0000]]])
    """
    shape = tuple(input.shape)
    if use_input_stats and math.prod(shape[2:]) == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         f"{input.shape}")
    n, c = shape[0], shape[1]
    x = input.reshape((1, n * c) + shape[2:])
    rm = running_mean.repeat(n) if running_mean is not None else None
    rv = running_var.repeat(n) if running_var is not None else None
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    out = nn_norm.native_batch_norm(x, w, b, rm, rv, bool(use_input_stats), float(momentum),
                                    float(eps))
    if use_input_stats and running_mean is not None:
        with no_grad():
            running_mean.copy_(rm.reshape(n, c).mean(0))
            running_var.copy_(rv.reshape(n, c).mean(0))
    return out.view(shape)


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dims, then scale and shift.

    >>> import retrograd as torch
    >>> torch.nn.functional.layer_norm(torch.tensor([[1.0, 3.0]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    ns = _as_shape(normalized_shape)
    shape = tuple(input.shape)
    k = len(ns)
    if k == 0 or len(shape) < k or shape[len(shape) - k:] != ns:
        raise RuntimeError(f"Given normalized_shape={_shape_list(ns)}, expected input with shape "
                           f"[*, {_shape_list(ns)[1:]}, but got input of size"
                           f"{_shape_list(shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {_shape_list(t.shape)} and normalized_shape = "
                               f"{_shape_list(ns)}")
    _check_mixed(input, weight, bias)
    return nn_norm.native_layer_norm(input, ns, weight, bias, float(eps))


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise groups of channels of ``input`` (N, C, *), then scale and shift per channel.

    >>> import retrograd as torch
    >>> torch.nn.functional.group_norm(torch.tensor([[1.0, 3.0]]), 1)
    tensor([[-1.0000,  1.0000]])
    """
    shape = tuple(input.shape)
    if len(shape) < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{len(shape)}")
    c = shape[1]
    if c % num_groups != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {_shape_list(shape)} and num_groups="
                           f"{num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape "
                               f"{_shape_list(t.shape)} and input of shape {_shape_list(shape)}")
    _check_mixed(input, weight, bias)
    return nn_norm.native_group_norm(input, int(num_groups), weight, bias, float(eps))


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,  # noqa: A002
             eps: float | None = None) -> Tensor:
    """``input * rsqrt(mean(input**2) + eps) * weight`` over the trailing dims; ``eps=None``
    takes the machine epsilon of ``input``'s dtype.

    >>> import retrograd as torch
    >>> torch.nn.functional.rms_norm(torch.tensor([[3.0, 4.0]]), (2,), eps=0.0)
    tensor([[0.8485, 1.1314]])
    """
    ns = _as_shape(normalized_shape)
    shape = tuple(input.shape)
    k = len(ns)
    if k == 0 or len(shape) < k or shape[len(shape) - k:] != ns:
        raise RuntimeError(f"Given normalized_shape={_shape_list(ns)}, expected input with shape "
                           f"[*{_shape_list(ns)[1:]}, but got input of size{_shape_list(shape)}")
    dt = input.dtype
    low = dt in (torch.float16, torch.bfloat16)
    if low:  # PyTorch normalizes float16/bfloat16 in float32 and rounds once (weight aside)
        input = input.float()  # noqa: A001
    if eps is None:
        eps = float(torch.finfo(input.dtype).eps) if input.is_floating_point() else 1e-7
    dims = tuple(len(shape) - i - 1 for i in range(k))  # (PyTorch's order: grad_fn._saved_dim)
    out = input * (input.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:
        out = out * weight
    return out.to(dt) if low else out


# -- dropout -----------------------------------------------------------------------------------


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(input: Tensor, p: float, feature: bool) -> Tensor:  # noqa: A002
    """PyTorch's dropout noise: Bernoulli(1 - p) draws into a tensor like ``input`` (or, for
    feature dropout, of shape ``(N, C, 1, ...)``), drawn as its kernel draws them."""
    dt = input.dtype if input.dtype.is_floating_point else torch.float32
    if feature:
        noise = torch.empty(tuple(input.shape[:2]) + (1,) * (input.dim() - 2), dtype=dt)
    else:
        # like empty_like: the input's memory layout, so that the draws follow its storage
        order = sorted(range(input.dim()), key=lambda d: -input.stride(d))
        noise = torch.empty([input.shape[d] for d in order], dtype=dt)
        noise = noise.permute([order.index(d) for d in range(input.dim())])
    return noise.bernoulli_(1 - p)


def _dropout_impl(input: Tensor, p: float, training: bool, inplace: bool,  # noqa: A002
                  feature: bool = False, alpha: bool = False) -> Tensor:
    """ATen's ``_dropout_impl``: ``input * noise`` (and, for alpha dropout, ``+ b``)."""
    _check_p(p)
    if not training or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        zero = torch.zeros((), dtype=input.dtype)
        return input.mul_(zero) if inplace else input * zero
    noise = _noise(input, p, feature)
    if alpha:
        a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
        b = noise.add(-1).mul_(_SELU_ALPHA * a).add_(_SELU_ALPHA * a * p)
        noise.mul_(a)
        out = input.mul_(noise) if inplace else input * noise
        return out.add_(b)
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


def dropout(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    The mask comes from the default generator (``retrograd.manual_seed``); outside training, or
    with ``p=0``, ``input`` itself is returned.

    >>> import retrograd as torch
    >>> y = torch.nn.functional.dropout(torch.ones(1000), 0.5)
    >>> sorted(set(y.tolist()))
    [0.0, 2.0]
    """
    return _dropout_impl(input, p, training, inplace)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool,  # noqa: A002
                     unbatched: bool, alpha: bool = False) -> Tensor:
    """Feature dropout; an unbatched input gets a batch dimension of 1 for it, as in PyTorch."""
    if not unbatched:
        return _dropout_impl(input, p, training, inplace, feature=True, alpha=alpha)
    if inplace:
        input.unsqueeze_(0)
        return _dropout_impl(input, p, training, True, True, alpha).squeeze_(0)
    return _dropout_impl(input.unsqueeze(0), p, training, False, True, alpha).squeeze(0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) input with probability ``p``.

    >>> import retrograd as torch
    >>> torch.nn.functional.dropout1d(torch.ones(2, 3), 0.5, training=False)
    tensor([[1., 1., 1.],
            [1., 1., 1.]])
    """
    d = input.dim()
    if d not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {d}D input. Note that dropout1d "
            "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
            "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, d == 2)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels (dim 1) of (N, C, H, W) input with probability ``p``.

    >>> import retrograd as torch
    >>> y = torch.nn.functional.dropout2d(torch.ones(2, 8, 3, 3), 0.5)
    >>> bool(((y == 0).all((2, 3)) | (y == 2).all((2, 3))).all())
    True
    """
    d = input.dim()
    if d not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {d}-D input to dropout2d, which is deprecated and will result "
            "in an error in a future release. To retain the behavior and silence this warning, "
            "please use dropout instead. Note that dropout2d exists to provide channel-wise "
            "dropout on inputs with 2 spatial dimensions, a channel dimension, and an optional "
            "batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if d == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _feature_dropout(input, p, training, inplace, False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability ``p``.

    >>> import retrograd as torch
    >>> torch.nn.functional.dropout3d(torch.ones(1, 1, 1, 1), training=False).shape
    retrograd.Size([1, 1, 1, 1])
    """
    d = input.dim()
    if d not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {d}-D input to dropout3d, which is deprecated and will result "
            "in an error in a future release. To retain the behavior and silence this warning, "
            "please use dropout instead. Note that dropout3d exists to provide channel-wise "
            "dropout on inputs with 3 spatial dimensions, a channel dimension, and an optional "
            "batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _feature_dropout(input, p, training, inplace, d == 4)


_SELU_ALPHA = 1.7580993408473766  # -scale * alpha of SELU: where a dropped unit sits


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,  # noqa: A002
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps a SELU network's mean and variance: dropped units go to the SELU
    saturation value, then an affine map restores the statistics.

    >>> import retrograd as torch
    >>> torch.nn.functional.alpha_dropout(torch.ones(2), 0.5)
    tensor([1., 1.])
    """
    return _dropout_impl(input, p, training, inplace, alpha=True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,  # noqa: A002
                          inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels (dim 1): every element of a dropped channel goes to the
    SELU saturation value, then the same affine map as ``alpha_dropout``.

    >>> import retrograd as torch
    >>> torch.nn.functional.feature_alpha_dropout(torch.ones(1, 2, 2), 0.5)
    tensor([[[1., 1.],
             [1., 1.]]])
    """
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=True)
