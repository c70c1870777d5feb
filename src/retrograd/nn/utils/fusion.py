"""Folding an eval-mode batch norm into the convolution or linear layer before it
(``torch.nn.utils.fusion``): the fused layer computes ``bn(layer(x))`` in one step."""

from __future__ import annotations

import copy

import retrograd as torch
from retrograd import Tensor

from ..module import Module
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor,
                         bn_eps: float, bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple:
    """The weight and bias of a convolution followed by a batch norm with these statistics:
    each output channel scaled by ``bn_w / sqrt(var + eps)`` and shifted.

    >>> import retrograd as torch
    >>> w, b = fuse_conv_bn_weights(torch.ones(2, 1, 1), None, torch.zeros(2), torch.ones(2),
    ...                             0.0, None, torch.ones(2))
    >>> b.detach()
    tensor([1., 1.])
    """
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    conv_b = torch.zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = torch.ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = torch.zeros_like(bn_rm) if bn_b is None else bn_b
    scale = bn_w * torch.rsqrt(bn_rv + bn_eps)
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.dim() - 2)
    w = (conv_w * scale.reshape(shape)).to(dtype=w_dtype)
    b = ((conv_b - bn_rm) * scale + bn_b).to(dtype=b_dtype)
    return Parameter(w.detach(), conv_w.requires_grad), Parameter(b.detach(), conv_b.requires_grad)


def fuse_conv_bn_eval(conv: Module, bn: Module, transpose: bool = False) -> Module:
    """A copy of ``conv`` with ``bn`` (both in eval mode) folded in.

    >>> import retrograd as torch
    >>> conv, bn = torch.nn.Conv2d(1, 2, 1).eval(), torch.nn.BatchNorm2d(2).eval()
    >>> type(fuse_conv_bn_eval(conv, bn)).__name__
    'Conv2d'
    """
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean,
                                                    bn.running_var, bn.eps, bn.weight, bn.bias,
                                                    transpose)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor,
                           bn_rv: Tensor, bn_eps: float, bn_w: Tensor, bn_b: Tensor) -> tuple:
    """The weight and bias of a linear layer followed by a batch norm with these statistics.

    >>> import retrograd as torch
    >>> w, b = fuse_linear_bn_weights(torch.ones(2, 3), None, torch.zeros(2), torch.ones(2),
    ...                               0.0, torch.full((2,), 2.0), torch.zeros(2))
    >>> w.sum().item()
    12.0
    """
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    linear_b = torch.zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * torch.rsqrt(bn_rv + bn_eps)
    w = linear_w * scale.unsqueeze(-1).to(dtype=w_dtype)
    b = ((linear_b - bn_rm) * scale + bn_b).to(dtype=b_dtype)
    return (Parameter(w.detach(), linear_w.requires_grad),
            Parameter(b.detach(), linear_b.requires_grad))


def fuse_linear_bn_eval(linear: Module, bn: Module) -> Module:
    """A copy of ``linear`` with ``bn`` (both in eval mode) folded in.

    >>> import retrograd as torch
    >>> lin, bn = torch.nn.Linear(3, 2).eval(), torch.nn.BatchNorm1d(2).eval()
    >>> type(fuse_linear_bn_eval(lin, bn)).__name__
    'Linear'
    """
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(f"To fuse, linear.out_features == bn.num_features or "
                             f"bn.num_features == 1, got linear.out_features="
                             f"{linear.out_features} and bn.num_features={bn.num_features}")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean,
                                                      bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused
