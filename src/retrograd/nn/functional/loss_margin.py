"""Multi-class margin losses, the triplet losses and the CTC loss of ``nn.functional``.

All are composed from differentiable ops. PyTorch's multi-margin and multilabel-margin losses are
kernels of their own: their compositions here are recorded as one node with PyTorch's name
(``MultiMarginLossBackward0``, ``MultilabelMarginLossBackward0``; see ``ops/fused.py``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import retrograd as torch
from retrograd import Tensor

from ...ops import nn_ctc as _ctc
from ...ops._autocast import fp32
from ...ops.fused import fused
from .loss import _reduce, _reduction
from .misc import pairwise_distance

__all__ = ["multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
           "triplet_margin_loss", "triplet_margin_with_distance_loss", "ctc_loss",
           "linear_cross_entropy"]


def _shape(t: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _scalar_name(dtype) -> str:
    return {torch.float32: "Float", torch.float64: "Double", torch.int32: "Int",
            torch.int64: "Long", torch.float16: "Half"}.get(dtype, str(dtype))


def _check_long(target: Tensor) -> None:
    if target.dtype != torch.int64:
        raise RuntimeError(f"expected scalar type Long but found {_scalar_name(target.dtype)}")


def _as_batch(input: Tensor, name: str) -> Tensor:  # noqa: A002
    if input.dim() > 2 or (input.dim() == 2 and input.shape[1] == 0) or (
            input.dim() < 2 and input.numel() == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {_shape(input)}")
    return input.reshape(1, -1) if input.dim() <= 1 else input


@fp32
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1,  # noqa: A002
                      margin: float = 1.0, weight: Tensor | None = None, size_average=None,
                      reduce=None, reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss: ``sum_{i != y} max(0, margin - x[y] + x[i])^p * w[y] / C`` per
    sample.

    >>> import retrograd as torch
    >>> torch.nn.functional.multi_margin_loss(torch.tensor([[0.1, 0.2, 0.4, 0.8]]),
    ...                                       torch.tensor([3]))
    tensor(0.3250)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _check_long(target)
    x = _as_batch(input, "multi_margin_loss")
    n, c = x.shape
    if x.dtype in (torch.float16, torch.bfloat16):  # PyTorch has no kernel for them
        name = "Half" if x.dtype == torch.float16 else "BFloat16"
        raise NotImplementedError(f"\"multi_margin_loss_cpu_kernel\" not implemented for "
                                  f"'{name}'")
    if target.numel() != n or (target.dim() > 1):
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{n}], but got {_shape(target)}. Input has shape {_shape(input)}.")
    t = target.reshape(-1)
    tn = t.numpy()
    if ((tn < 0) | (tn >= c)).any():
        raise RuntimeError("target out of range")
    if weight is not None and weight.dtype != x.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(x.dtype)} but found "
                           f"{_scalar_name(weight.dtype)}")
    if weight is not None and weight.requires_grad and torch.is_grad_enabled():
        raise RuntimeError("The function 'multi_margin_loss' is not differentiable with respect "
                           "to argument 'weight'. This input cannot have requires_grad True.")
    wy = None if weight is None else weight[t].unsqueeze(1)
    others = torch.tensor(np.arange(c)[None, :] != tn[:, None], dtype=x.dtype)
    scalar = input.dim() <= 1 and target.dim() == 0

    def loss_of(input: Tensor) -> Tensor:  # noqa: A002
        x = _as_batch(input, "multi_margin_loss")
        z = (margin - x.gather(1, t.unsqueeze(1)) + x).clamp_min(0)
        if p == 2:
            z = z * z
        if wy is not None:
            z = z * wy
        loss = (z * others).sum(1) / c
        return _reduce(loss.reshape(()) if scalar else loss, reduction)

    return fused("MultiMarginLossBackward0", loss_of, input, _margin=margin, _p=p,
                 _reduction=reduction, _target=target, _weight=weight,
                 _packs=(0, "=target", "=weight"))


@fp32
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None,  # noqa: A002
                           reduce=None, reduction: str = "mean") -> Tensor:
    """Multi-label hinge loss: ``target`` lists each sample's classes, ended by -1; the loss sums
    ``max(0, 1 - (x[j] - x[i]))`` over its classes j and the other classes i, divided by C.

    >>> import retrograd as torch
    >>> torch.nn.functional.multilabel_margin_loss(torch.tensor([[0.1, 0.2, 0.4, 0.8]]),
    ...                                            torch.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    reduction = _reduction(reduction, size_average, reduce)
    _check_long(target)
    x = _as_batch(input, "multilabel_margin_loss")
    n, c = x.shape
    if tuple(target.shape) != tuple(input.shape) and not (
            input.dim() <= 1 and target.numel() == c and target.dim() <= 1):
        raise RuntimeError(f"inconsistent target size: {_shape(target)} for input of size: "
                           f"{_shape(input)}")
    tn = target.numpy().reshape(n, c)
    if ((tn < -1) | (tn >= c)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    # How often each class is listed before the first -1, and which classes are listed.
    valid = np.cumprod(tn >= 0, axis=1).astype(bool)
    counts = np.zeros((n, c))
    rows = np.broadcast_to(np.arange(n)[:, None], (n, c))
    np.add.at(counts, (rows[valid], tn[valid]), 1.0)
    pair = torch.tensor(counts[:, :, None] * (counts == 0)[:, None, :], dtype=x.dtype)

    def loss_of(input: Tensor) -> Tensor:  # noqa: A002
        x = _as_batch(input, "multilabel_margin_loss")
        hinge = (1 - x.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)
        loss = (hinge * pair).sum((1, 2)) / c
        return _reduce(loss.reshape(()) if input.dim() <= 1 else loss, reduction)

    return fused("MultilabelMarginLossBackward0", loss_of, input, _reduction=reduction,
                 _target=target, _packs=(0, "=target", "=is_target"))


def multilabel_soft_margin_loss(input: Tensor, target: Tensor,  # noqa: A002
                                weight: Tensor | None = None, size_average=None, reduce=None,
                                reduction: str = "mean") -> Tensor:
    """Per-class logistic loss averaged over classes:
    ``-mean_c(y log sigmoid(x) + (1 - y) log sigmoid(-x))``.

    >>> import retrograd as torch
    >>> torch.nn.functional.multilabel_soft_margin_loss(torch.zeros(1, 2), torch.ones(1, 2))
    tensor(0.6931)
    """
    if size_average is not None or reduce is not None:
        reduction = _reduction(reduction, size_average, reduce)
    logsig = torch.nn.functional.logsigmoid
    loss = -(target * logsig(input) + (1 - target) * logsig(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.shape[class_dim]
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def _check_triplet(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {p}D, and "
                           f"negative {n}D inputs")


@fp32
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` with the p-norm pairwise distance ``d``;
    ``swap`` uses ``min(d(a, n), d(p, n))`` for the negative distance.

    >>> import retrograd as torch
    >>> torch.nn.functional.triplet_margin_loss(torch.zeros(1, 2), torch.ones(1, 2),
    ...                                         torch.zeros(1, 2), eps=0.0)
    tensor(2.4142)
    """
    reduction = _reduction(reduction, size_average, reduce)
    _check_triplet(anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = torch.min(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable | None = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """``triplet_margin_loss`` with any ``distance_function`` (default: pairwise distance).

    >>> import retrograd as torch
    >>> torch.nn.functional.triplet_margin_with_distance_loss(
    ...     torch.zeros(1, 2), torch.ones(1, 2), torch.zeros(1, 2),
    ...     distance_function=lambda a, b: (a - b).abs().sum(-1))
    tensor(3.)
    """
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check_triplet(anchor, positive, negative)
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = torch.minimum(d_neg, dist(positive, negative))
    return _reduce(torch.clamp_min(margin + d_pos - d_neg, 0), reduction)


def _lengths(v) -> np.ndarray:
    if isinstance(v, Tensor):
        return v.numpy().astype(np.int64).reshape(-1)
    return np.asarray(v, np.int64).reshape(-1)


@fp32
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification loss: ``-log p(target | log_probs)`` summed over
    every alignment. ``log_probs`` is ``(T, N, C)`` (or ``(T, C)``), ``targets`` ``(N, S)``
    padded or the concatenated targets; ``mean`` divides each loss by its target length first.

    >>> import retrograd as torch
    >>> lp = torch.tensor([[[0.5, 0.5]], [[0.5, 0.5]]]).log()
    >>> torch.nn.functional.ctc_loss(lp, torch.tensor([[1]]), [2], [1], reduction="sum")
    tensor(0.2877)
    """
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    t_max, n, c = lp.shape
    tgt = targets.numpy() if batched else targets.numpy().reshape(1, -1)
    in_len, tg_len = _lengths(input_lengths), _lengths(target_lengths)
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    if in_len.size != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tg_len.size != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    if (in_len > t_max).any():
        raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value "
                           f"{in_len.max()} (while checking arguments for "
                           f"ctc_loss_allocate_outputs)")
    if tgt.ndim == 1:  # concatenated targets
        starts = np.concatenate([[0], np.cumsum(tg_len)[:-1]])
        padded = np.zeros((n, max(int(tg_len.max(initial=0)), 1)), np.int64)
        for i in range(n):
            padded[i, :tg_len[i]] = tgt[starts[i]:starts[i] + tg_len[i]]
        tgt = padded
    elif tgt.shape[1] < tg_len.max(initial=0):
        raise RuntimeError(f"Expected tensor to have size at least {tg_len.max()} at dimension 1, "
                           f"but got size {tgt.shape[1]} for argument #2 'targets' (while "
                           f"checking arguments for ctc_loss_allocate_outputs)")
    tgt = tgt[:, :max(int(tg_len.max(initial=0)), 1)].astype(np.int64)
    loss = _ctc.ctc_loss(lp, tgt, in_len, tg_len, blank, zero_infinity)
    if zero_infinity:
        loss = torch.where(loss == float("inf"), torch.zeros((), dtype=loss.dtype), loss)
    if reduction == "mean":
        loss = (loss / torch.tensor(np.maximum(tg_len, 1), dtype=loss.dtype)).mean()
    elif reduction == "sum":
        loss = loss.sum()
    elif not batched:
        loss = loss.squeeze(0)
    return loss


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,  # noqa: A002
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options=None) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``; a
    ``linear_weight`` of shape ``(C, d_1, ..., d_K, in)`` gives K-dimensional logits. (PyTorch's
    ``options`` select a chunked computation of the same numbers; here they are accepted and the
    reference computation runs.)

    >>> import retrograd as torch
    >>> torch.nn.functional.linear_cross_entropy(torch.ones(1, 2), torch.zeros(3, 2),
    ...                                          torch.tensor([0]))
    tensor(1.0986)
    """
    out_shape = tuple(linear_weight.shape[:-1])
    w2 = linear_weight.reshape(-1, linear_weight.shape[-1])
    b = None if linear_bias is None else linear_bias.reshape(-1)
    logits = torch.nn.functional.linear(input, w2, b)
    if len(out_shape) > 1:
        logits = logits.reshape(*logits.shape[:-1], *out_shape)
        if input.dim() > 1:
            # (N, C, d_1, ...): the class dim right after the batch dim
            logits = logits.movedim(input.dim() - 1, 1) if input.dim() > 2 else logits
    return torch.nn.functional.cross_entropy(
        logits, target, weight=weight, reduction=reduction,
        ignore_index=-100 if ignore_index is None else ignore_index,
        label_smoothing=label_smoothing)
