"""``Adagrad``: per-element learning rates from the accumulated squared gradients."""

from __future__ import annotations

import retrograd as torch

from .optimizer import Optimizer, _addcdiv_, _addcmul_, _call_closure, _no_grad, _step_value

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, as PyTorch's: ``sum += grad**2``; ``p -= clr * grad / (sqrt(sum) + eps)``.

    Its state (``step`` and ``sum``) is created for every parameter at construction.

    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True)
    >>> opt = torch.optim.Adagrad([w], lr=0.5)
    >>> (w * w).sum().backward(); opt.step(); w
    tensor([0.5000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach=None, *,
                 maximize: bool = False, differentiable: bool = False, fused=None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, initial_accumulator_value)

    def _init_state(self, p, value: float) -> None:
        state = self.state[p]
        state["step"] = torch.tensor(0.0)
        state["sum"] = torch.full_like(p, value)

    @_no_grad
    def step(self, closure=None):
        """Perform one update; ``closure`` re-evaluates the loss and is called first if given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, lr_decay, wd, eps = group["lr"], group["lr_decay"], group["weight_decay"], group[
                "eps"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                state = self.state[p]
                if not state:
                    self._init_state(p, self.defaults["initial_accumulator_value"])
                state["step"] += 1
                step = _step_value(state["step"])
                if group["maximize"]:
                    grad = -grad
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                clr = lr / (1 + (step - 1) * lr_decay)
                std = _addcmul_(state["sum"], grad, grad, 1).sqrt().add_(eps)
                _addcdiv_(p, grad, std, -clr)
        return loss
