"""``Adam`` (with AMSGrad and L2 or decoupled weight decay) and ``AdamW``."""

from __future__ import annotations

import retrograd as torch

from .optimizer import (
    Optimizer,
    _addcdiv_,
    _addcmul_,
    _call_closure,
    _check_adam_args,
    _lerp_,
    _maximum_,
    _no_grad,
    _step_value,
)

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam, as PyTorch's: bias-corrected moment estimates, optional AMSGrad.

    With ``decoupled_weight_decay=True`` (AdamW) the decay shrinks the parameters directly
    instead of being added to the gradient.

    >>> import retrograd as torch
    >>> w = torch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = torch.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); w
    tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused=None, decoupled_weight_decay: bool = False) -> None:
        _check_adam_args(lr, eps, betas, weight_decay)
        if not (isinstance(betas[0], float) and isinstance(betas[1], float)):
            raise ValueError("betas must be either both floats or both Tensors")
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("decoupled_weight_decay", False)
            for p in group["params"]:
                s = self.state.get(p, {})
                if s and not isinstance(s["step"], torch.Tensor):
                    s["step"] = torch.tensor(float(s["step"]))

    @_no_grad
    def step(self, closure=None):
        """Perform one update; ``closure`` re-evaluates the loss and is called first if given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            beta1, beta2 = group["betas"]
            amsgrad, maximize = group["amsgrad"], group["maximize"]
            decoupled = group["decoupled_weight_decay"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = torch.zeros_like(p)
                if maximize:
                    grad = -grad
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                state["step"] += 1
                if wd != 0:
                    if decoupled:
                        p.mul_(1 - lr * wd)
                    else:
                        grad = grad.add(p, alpha=wd)
                _lerp_(exp_avg, grad, 1 - beta1)
                _addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
                step = _step_value(state["step"])
                bias1 = 1 - beta1**step
                bias2_sqrt = (1 - beta2**step) ** 0.5
                if amsgrad:
                    second = _maximum_(state["max_exp_avg_sq"], exp_avg_sq)
                else:
                    second = exp_avg_sq
                denom = (second.sqrt() / bias2_sqrt).add_(eps)
                _addcdiv_(p, exp_avg, denom, -(lr / bias1))
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (default 0.01): ``p *= 1 - lr * weight_decay``.

    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True)
    >>> opt = torch.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> w.grad = torch.zeros(1); opt.step(); w
    tensor([0.9500], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach=None, capturable: bool = False, differentiable: bool = False,
                 fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
