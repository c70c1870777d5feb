"""``NAdam`` (Adam with Nesterov momentum) and ``RAdam`` (Adam with a rectified variance)."""

from __future__ import annotations

import retrograd as torch

from .optimizer import (
    Optimizer,
    _addcdiv_,
    _addcmul_,
    _call_closure,
    _check_adam_args,
    _lerp_,
    _no_grad,
    _step_value,
)

__all__ = ["NAdam", "RAdam"]


def _decay(p, grad, lr: float, wd: float, decoupled: bool):
    """L2 weight decay added to the gradient, or (decoupled) applied to the parameter."""
    if wd == 0:
        return grad
    if decoupled:
        p.mul_(1 - lr * wd)
        return grad
    return grad.add(p, alpha=wd)


def _moments(state, p) -> None:
    state["exp_avg"] = torch.zeros_like(p)
    state["exp_avg_sq"] = torch.zeros_like(p)


class NAdam(Optimizer):
    """NAdam, as PyTorch's: Adam whose momentum looks ahead with a decaying schedule ``mu_t``.

    >>> import retrograd as torch
    >>> w = torch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = torch.optim.NAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); w.detach().round(decimals=4)
    tensor([ 0.8944, -0.8944])
    """

    def __init__(self, params, lr: float = 2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check_adam_args(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "differentiable": differentiable}
        super().__init__(params, defaults)

    @_no_grad
    def step(self, closure=None):
        """Perform one update; ``closure`` re-evaluates the loss and is called first if given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            beta1, beta2 = group["betas"]
            psi = group["momentum_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = -p.grad if group["maximize"] else p.grad
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    state["mu_product"] = torch.tensor(1.0)
                    _moments(state, p)
                state["step"] += 1
                step = _step_value(state["step"])
                grad = _decay(p, grad, lr, wd, group["decoupled_weight_decay"])
                mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * psi))
                mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * psi))
                state["mu_product"] *= mu
                mu_product = _step_value(state["mu_product"])
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                _lerp_(exp_avg, grad, 1 - beta1)
                _addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
                denom = exp_avg_sq.div(1 - beta2**step).sqrt().add_(eps)
                _addcdiv_(p, grad, denom, -lr * (1.0 - mu) / (1.0 - mu_product))
                _addcdiv_(p, exp_avg, denom, -lr * mu_next / (1.0 - mu_product * mu_next))
        return loss


class RAdam(Optimizer):
    """RAdam, as PyTorch's: plain momentum SGD until the variance estimate is trustworthy
    (``rho_t > 5``), then Adam's step scaled by the rectification term.

    >>> import retrograd as torch
    >>> w = torch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = torch.optim.RAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); w
    tensor([ 0.8000, -0.8000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam_args(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    @_no_grad
    def step(self, closure=None):
        """Perform one update; ``closure`` re-evaluates the loss and is called first if given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            beta1, beta2 = group["betas"]
            rho_inf = 2 / (1 - beta2) - 1
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = -p.grad if group["maximize"] else p.grad
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    _moments(state, p)
                state["step"] += 1
                step = _step_value(state["step"])
                grad = _decay(p, grad, lr, wd, group["decoupled_weight_decay"])
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                _lerp_(exp_avg, grad, 1 - beta1)
                _addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
                bias2 = 1 - beta2**step
                corrected = exp_avg / (1 - beta1**step)
                rho_t = rho_inf - 2 * step * beta2**step / bias2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    adaptive = bias2**0.5 / exp_avg_sq.sqrt().add_(eps)
                    p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
                else:
                    p.add_(corrected * lr, alpha=-1.0)
        return loss
