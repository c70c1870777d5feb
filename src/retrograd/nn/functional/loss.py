"""Loss functions, as ``torch.nn.functional`` has them, with ``reduction`` ('mean', 'sum',
'none') and PyTorch's checks and warnings.

``cross_entropy`` is ``nll_loss`` over ``log_softmax`` (grad_fn NllLossBackward0 over
LogSoftmaxBackward0, as in PyTorch); the elementwise losses with their own grad_fn in PyTorch
(mse, smooth L1, Huber, BCE, BCE with logits, soft margin) are primitives in
``ops.nn_activation``; the rest are written on retrograd's ops.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

import retrograd as torch
from retrograd import Tensor

from ...ops import nn_activation as _A
from ...ops._autocast import fp32
from ...ops.arithmetic import add_scalar, div_scalar, sub_scalar

__all__ = [
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "cosine_embedding_loss", "margin_ranking_loss", "soft_margin_loss", "hinge_embedding_loss",
    "poisson_nll_loss", "gaussian_nll_loss",
]

_REDUCTIONS = ("none", "mean", "sum")


def legacy_reduction(size_average, reduce, emit_warning: bool = True) -> str:
    """The ``reduction`` string for the deprecated ``size_average``/``reduce`` arguments."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(
            f"size_average and reduce args will be deprecated, please use reduction='{ret}' "
            "instead.",
            stacklevel=3,
        )
    return ret


def _reduction(reduction: str, size_average=None, reduce=None) -> str:
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _size(shape) -> str:
    return f"torch.Size({list(shape)})"


def _warn_size(input: Tensor, target: Tensor) -> None:  # noqa: A002
    if target.size() != input.size():  # (in PyTorch's order: its error names a list's .size)
        warnings.warn(
            f"Using a target size ({_size(target.shape)}) that is different to the input size "
            f"({_size(input.shape)}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def _check_broadcast(a: Tensor, b: Tensor) -> None:
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        sa, sb = tuple(a.shape), tuple(b.shape)
        for k in range(1, max(len(sa), len(sb)) + 1):
            x = sa[-k] if k <= len(sa) else 1
            y = sb[-k] if k <= len(sb) else 1
            if x != y and x != 1 and y != 1:
                n = max(len(sa), len(sb)) - k
                raise RuntimeError(
                    f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                    f"non-singleton dimension {n}"
                ) from None


def _weighted(loss: Tensor, input: Tensor, weight, reduction: str, mean_by_weight: bool):  # noqa: A002
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / weight.sum() if mean_by_weight else loss.mean()


@fp32
def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean squared error; ``weight`` weighs each element (the mean is over the weights).

    >>> import retrograd as torch
    >>> torch.nn.functional.mse_loss(torch.tensor([1., 2.]), torch.tensor([0., 0.]))
    tensor(2.5000)
    """
    _warn_size(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    _check_broadcast(input, target)
    if weight is not None:
        return _weighted(_A.mse_loss(input, target, "none"), input, weight, reduction, True)
    return _A.mse_loss(input, target, reduction)


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


@fp32
def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean absolute error (composite: MeanBackward0 over AbsBackward0, as in PyTorch).

    >>> import retrograd as torch
    >>> torch.nn.functional.l1_loss(torch.tensor([1., -3.]), torch.tensor([0., 0.]))
    tensor(2.)
    """
    _warn_size(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    _check_broadcast(input, target)
    loss = (input - target).abs()
    if weight is not None:
        return _weighted(loss, input, weight, reduction, True)
    return _reduce(loss, reduction)


@fp32
def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """``0.5 d² / beta`` where ``|d| < beta``, else ``|d| - beta / 2``.

    >>> import retrograd as torch
    >>> torch.nn.functional.smooth_l1_loss(torch.tensor([0.5, 3.]), torch.tensor([0., 0.]))
    tensor(1.3125)
    """
    _warn_size(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    _check_broadcast(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    return _A.smooth_l1_loss(input, target, reduction, beta)


@fp32
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",  # noqa: A002
               delta: float = 1.0, weight: Tensor | None = None) -> Tensor:
    """``0.5 d²`` where ``|d| < delta``, else ``delta (|d| - delta / 2)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.huber_loss(torch.tensor([0.5, 3.]), torch.tensor([0., 0.]))
    tensor(1.3125)
    """
    _warn_size(input, target)
    reduction = _reduction(reduction)
    _check_broadcast(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is not None:
        return _weighted(_A.smooth_l1_loss(input, target, "none", delta, True), input, weight,
                         reduction, False)
    return _A.smooth_l1_loss(input, target, reduction, delta, True)


# -- nll_loss and cross_entropy ----------------------------------------------------------------


def _nll_checks(input: Tensor, target: Tensor, weight) -> tuple:  # noqa: A002
    """PyTorch's checks, in its order; returns the number of classes."""
    dim = input.dim()
    if dim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {dim})")
    tshape = tuple(target.shape)
    if dim != 1 and input.shape[0] != (tshape[0] if tshape else 0):
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({tshape[0] if tshape else 0})."
        )
    ishape = tuple(input.shape)
    c = ishape[1] if dim >= 2 else ishape[0]
    if (dim == 3 or dim > 4) and tshape[1:] != ishape[2:]:
        raise RuntimeError(f"Expected target size {list((ishape[0],) + ishape[2:])}, got "
                           f"{list(tshape)}")
    # PyTorch's autograd layer refuses a weight that requires grad before its kernel checks.
    _A.check_not_differentiable(weight, "weight",
                                "nll_loss_forward" if dim <= 2 else "nll_loss2d_forward")
    if dim <= 2:
        if len(tshape) > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if dim == 1 and tshape not in ((), (1,)):
            raise RuntimeError(f"size mismatch (got input: {list(ishape)}, target: "
                               f"{list(tshape)})")
    elif dim == 4:
        if len(tshape) != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {len(tshape)}")
        if tshape[1:] != ishape[2:]:
            raise RuntimeError(f"size mismatch (got input: {list(ishape)} , target: "
                               f"{list(tshape)}")
    tdt, dt = target.dtype, input.dtype
    if tdt is not torch.int64 and tdt is not torch.uint8:
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {tdt.scalar_name}")
    if weight is not None:
        if weight.numel() != c:
            if dim == 4:
                raise RuntimeError("weight tensor should be defined either for all or no classes")
            raise RuntimeError(
                f"weight tensor should be defined either for all {c} classes or no classes but "
                f"got weight tensor of shape: {list(weight.shape)}"
            )
        if weight.dtype is not dt:
            raise RuntimeError(f"expected scalar type {dt.scalar_name} but found "
                               f"{weight.dtype.scalar_name}")
    if not dt.is_floating_point:
        raise NotImplementedError(
            f"\"nll_loss_out_frame\" not implemented for '{dt.scalar_name}'")
    return c


@fp32
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
             size_average=None, ignore_index: int = -100, reduce=None,
             reduction: str = "mean") -> Tensor:
    """Negative log likelihood of the target classes, given log-probabilities (N, C, d1, ...).

    >>> import retrograd as torch
    >>> logp = torch.tensor([[-0.5, -1.0], [-2.0, -0.1]])
    >>> torch.nn.functional.nll_loss(logp, torch.tensor([0, 1]))
    tensor(0.3000)
    """
    reduction = _reduction(reduction, size_average, reduce)
    c = _nll_checks(input, target, weight)
    t = target
    dim = input.dim()
    if dim == 1:
        t = t.reshape(1)
    elif dim == 3 or dim > 4:
        # As PyTorch: viewed as (N, C, 1, -1) for its 2-D kernel, the result viewed back.
        n = input.shape[0]
        out_size = (n,) + tuple(input.shape[2:])
        flat = input.reshape(n, c, 1, -1) if input.numel() else input.reshape(n, c, 0, 0)
        t = t.reshape(n, 1, -1) if t.numel() else t.reshape(n, 0, 0)
        out = _A.nll_loss_core(flat, t, weight, ignore_index, reduction, c)
        return out.reshape(out_size) if reduction == "none" else out
    return _A.nll_loss_core(input, t, weight, ignore_index, reduction, c)


@fp32
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                  size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of logits (N, C, d1, ...) against class indices or class probabilities.

    >>> import retrograd as torch
    >>> torch.nn.functional.cross_entropy(torch.tensor([[0., 0.]]), torch.tensor([1]))
    tensor(0.6931)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(
            f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
    class_dim = 0 if input.dim() == 1 else 1
    if input.shape == target.shape:
        return _cross_entropy_probs(input, target, weight, ignore_index, reduction,
                                    label_smoothing, class_dim)
    logp = _A.log_softmax(input, class_dim)
    if label_smoothing <= 0.0:
        return nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    c = input.shape[class_dim]
    if weight is not None:
        wshape = [1] * input.dim()
        wshape[class_dim] = c
        smooth = -(logp * weight.reshape(wshape)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    # (the ops of PyTorch's composite, so that its graph and saved tensors are PyTorch's)
    ignore = target == ignore_index
    smooth = smooth.masked_fill(ignore, 0.0)
    if reduction == "mean":
        if weight is not None:
            kept = target.masked_select(~ignore).flatten()
            smooth = smooth.sum() / weight.gather(0, kept).sum()
        else:
            smooth = smooth.sum() / (~ignore).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1.0 - label_smoothing) + smooth * (label_smoothing / c)


def _cross_entropy_probs(input, target, weight, ignore_index, reduction, label_smoothing,  # noqa: A002
                         class_dim):
    if target.dtype.is_floating_point is False:
        raise RuntimeError("Expected floating point type for target with class probabilities, "
                           f"got {target.dtype.scalar_name}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    c = input.shape[class_dim]
    logp = _A.log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        target = target * (1.0 - label_smoothing) + label_smoothing / c
    prod = logp * target
    if weight is not None:
        wshape = [1] * input.dim()
        wshape[class_dim] = c
        prod = prod * weight.reshape(wshape)
    if reduction == "none":
        return -prod.sum(class_dim)
    if reduction == "sum":
        return -prod.sum()
    if input.numel() == 0:  # NaN, as PyTorch makes it
        return -prod.sum().fill_(float("nan"))
    # ATen divides by the count as a Scalar: DivBackward1, as PyTorch's graph shows
    return div_scalar(-prod.sum(), input.numel() // c)


# -- binary cross entropy ----------------------------------------------------------------------


def _expand_weight(weight: Tensor, target: Tensor) -> Tensor:
    try:
        shape = np.broadcast_shapes(tuple(weight.shape), tuple(target.shape))
    except ValueError:
        shape = None
    if shape != tuple(target.shape):
        ws, ts = tuple(weight.shape), tuple(target.shape)
        for k in range(1, len(ws) + 1):
            if k > len(ts) or (ws[-k] != 1 and ws[-k] != ts[-k]):
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {ws[-k]} at -{k}! "
                    f"Mismatching argument at index 1 had {_size(ws)}; but expected shape "
                    f"should be broadcastable to {list(ts)}"
                )
    return weight.expand(shape)  # as PyTorch's Python does: its node saves the expanded weight


@fp32
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``-w (y log x + (1 - y) log(1 - x))`` for probabilities ``x``; logs clamped at -100.

    >>> import retrograd as torch
    >>> torch.nn.functional.binary_cross_entropy(torch.tensor([0.5]), torch.tensor([1.]))
    tensor(0.6931)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({_size(target.shape)}) that is different to the input size "
            f"({_size(input.shape)}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        weight = _expand_weight(weight, target)
    _A.check_not_differentiable(weight, "weight", "binary_cross_entropy")
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {target.dtype.scalar_name} but expected "
                           f"{input.dtype.scalar_name}")
    return _A.binary_cross_entropy(input, target, weight, reduction)


@fp32
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,  # noqa: A002
                                     weight: Tensor | None = None, size_average=None,
                                     reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid and binary cross entropy in one stable step; ``pos_weight`` weighs positives.

    >>> import retrograd as torch
    >>> torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor([0.]),
    ...                                                      torch.tensor([1.]))
    tensor(0.6931)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({_size(target.shape)}) must be the same as input size "
                         f"({_size(input.shape)})")
    return _A.binary_cross_entropy_with_logits(input, target, weight, reduction, pos_weight)


# -- the rest ----------------------------------------------------------------------------------


@fp32
def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL divergence ``target * (log target - input)`` for log-probabilities ``input``.

    >>> import retrograd as torch
    >>> torch.nn.functional.kl_div(torch.tensor([[0., 0.]]), torch.tensor([[1., 0.]]),
    ...                            reduction='batchmean')
    tensor(0.)
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            stacklevel=2,
        )
    if reduction not in _REDUCTIONS and reduction != "batchmean":
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = torch.exp(target) * (target - input)
    else:
        loss = torch.xlogy(target, target) - target * input
    if reduction == "batchmean":
        loss = loss.sum()
        if input.dim() != 0:
            loss = loss / input.shape[0]
        return loss
    return _reduce(loss, reduction)


@fp32
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos - margin)`` where it is -1.

    >>> import retrograd as torch
    >>> x = torch.tensor([[1., 0.]])
    >>> torch.nn.functional.cosine_embedding_loss(x, x, torch.tensor([1]))
    tensor(0.)
    """
    reduction = _reduction(reduction, size_average, reduce)
    td = target.dim()
    if td not in (0, 1):
        raise RuntimeError(f"{td}D target tensor expected, multi-target not supported")
    if td == 1 and (input1.dim() != 2 or input2.dim() != 2):
        raise RuntimeError(
            f"1D target tensor expects 2D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}.")
    if td == 0 and (input1.dim() != 1 or input2.dim() != 1):
        raise RuntimeError(
            f"0D target tensor expects 1D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}.")
    d = 1 if input1.dim() == 2 else 0
    eps = 1e-12
    prod = (input1 * input2).sum(d)
    # ATen's composite: the numbers through the Scalar overloads (one-edge AddBackward1,
    # SubBackward1), and 1 - cos as a filled tensor minus cos (SubBackward0).
    m1 = add_scalar((input1 * input1).sum(d), eps)
    m2 = add_scalar((input2 * input2).sum(d), eps)
    cos = prod / (m1 * m2).sqrt()
    zeros = torch.zeros_like(cos)
    pos = torch.where(target == 1, torch.ones_like(cos) - cos, zeros)
    neg = torch.where(target == -1, sub_scalar(cos, margin).clamp_min(0), zeros)
    return _reduce(pos + neg, reduction)


@fp32
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.margin_ranking_loss(torch.tensor([1.]), torch.tensor([2.]),
    ...                                         torch.tensor([1.]))
    tensor(1.)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {_size(input1.shape)}, input2: {_size(input2.shape)}, "
            f"target: {_size(target.shape)} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


@fp32
def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
                     reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))``, stable.

    >>> import retrograd as torch
    >>> torch.nn.functional.soft_margin_loss(torch.tensor([0.]), torch.tensor([1.]))
    tensor(0.6931)
    """
    _warn_size(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    return _A.soft_margin_loss(input, target, reduction)


@fp32
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,  # noqa: A002
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``x`` where ``target == 1``, ``max(0, margin - x)`` where it is -1.

    >>> import retrograd as torch
    >>> torch.nn.functional.hinge_embedding_loss(torch.tensor([0.3, 0.3]),
    ...                                          torch.tensor([1., -1.]))
    tensor(0.5000)
    """
    reduction = _reduction(reduction, size_average, reduce)
    zeros = torch.zeros_like(input)
    out_margin = torch.where(target != 1, (margin - input).clamp_min(0), zeros)
    out_self = torch.where(target != -1, input, zeros)
    return _reduce(out_margin + out_self, reduction)


@fp32
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True,  # noqa: A002
                     full: bool = False, size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """Poisson negative log likelihood: ``exp(x) - y x`` (``log_input``) or
    ``x - y log(x + eps)``, plus Stirling's term when ``full``.

    >>> import retrograd as torch
    >>> torch.nn.functional.poisson_nll_loss(torch.tensor([0.]), torch.tensor([1.]))
    tensor(1.)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if log_input:
        loss = torch.exp(input) - target * input
    else:
        loss = input - target * torch.log(input + eps)
    if full:
        stirling = (target * torch.log(target) - target
                    + 0.5 * torch.log(2 * math.pi * target))
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False,  # noqa: A002
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """Gaussian negative log likelihood ``0.5 (log var + (x - y)² / var)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.gaussian_nll_loss(torch.tensor([1.]), torch.tensor([1.]),
    ...                                       torch.tensor([1.]))
    tensor(0.)
    """
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * torch.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(
                y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with torch.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (torch.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
