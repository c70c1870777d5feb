"""``Adadelta`` and ``Adamax``: the two optimizers PyTorch's own examples reach for next."""

from __future__ import annotations

import retrograd as torch

from .optimizer import (
    Optimizer,
    _addcdiv_,
    _addcmul_,
    _call_closure,
    _check,
    _check_adam_args,
    _lerp_,
    _no_grad,
    _step_value,
)

__all__ = ["Adadelta", "Adamax"]


class Adadelta(Optimizer):
    """Adadelta, as PyTorch's: running averages of squared gradients and squared updates set a
    per-element step, scaled by ``lr``.

    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True)
    >>> opt = torch.optim.Adadelta([w])
    >>> (w * w).sum().backward(); opt.step(); w.detach().round(decimals=4)
    tensor([0.9968])
    """

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach=None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        _check("learning rate", 0.0 <= lr, lr)
        _check("rho value", 0.0 <= rho <= 1.0, rho)
        _check("epsilon value", 0.0 <= eps, eps)
        _check("weight_decay value", 0.0 <= weight_decay, weight_decay)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    @_no_grad
    def step(self, closure=None):
        """Perform one update; ``closure`` re-evaluates the loss and is called first if given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, rho, eps, wd = group["lr"], group["rho"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = -p.grad if group["maximize"] else p.grad
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    state["square_avg"] = torch.zeros_like(p)
                    state["acc_delta"] = torch.zeros_like(p)
                state["step"] += 1
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                _addcmul_(square_avg.mul_(rho), grad, grad, 1 - rho)
                std = square_avg.add(eps).sqrt_()
                delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
                _addcmul_(acc_delta.mul_(rho), delta, delta, 1 - rho)
                p.add_(delta, alpha=-lr)
        return loss


class Adamax(Optimizer):
    """Adamax, as PyTorch's: Adam with the infinity norm in place of the second moment.

    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True)
    >>> opt = torch.optim.Adamax([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); w
    tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_adam_args(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    @_no_grad
    def step(self, closure=None):
        """Perform one update; ``closure`` re-evaluates the loss and is called first if given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            wd = group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = -p.grad if group["maximize"] else p.grad
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_inf"] = torch.zeros_like(p)
                state["step"] += 1
                step = _step_value(state["step"])
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_inf.copy_(torch.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
                _addcdiv_(p, exp_avg, exp_inf, -lr / (1 - beta1 ** step))
        return loss
