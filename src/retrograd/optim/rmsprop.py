"""``RMSprop``: gradients divided by a running root mean square (optionally centered)."""

from __future__ import annotations

import retrograd as torch

from .optimizer import Optimizer, _addcdiv_, _addcmul_, _call_closure, _lerp_, _no_grad

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, as PyTorch's: ``square_avg = alpha * square_avg + (1 - alpha) * grad**2``.

    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True)
    >>> opt = torch.optim.RMSprop([w], lr=0.01)
    >>> (w * w).sum().backward(); opt.step(); round(w.item(), 4)
    0.9
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    @_no_grad
    def step(self, closure=None):
        """Perform one update; ``closure`` re-evaluates the loss and is called first if given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, alpha, eps, wd = group["lr"], group["alpha"], group["eps"], group["weight_decay"]
            momentum, centered, maximize = group["momentum"], group["centered"], group["maximize"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = torch.zeros(())
                    state["square_avg"] = torch.zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = torch.zeros_like(p)
                    if centered:
                        state["grad_avg"] = torch.zeros_like(p)
                if maximize:
                    grad = -grad
                state["step"] += 1
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                square_avg = _addcmul_(state["square_avg"].mul_(alpha), grad, grad, 1 - alpha)
                if centered:
                    grad_avg = _lerp_(state["grad_avg"], grad, 1 - alpha)
                    avg = (square_avg - grad_avg * grad_avg).sqrt_()
                else:
                    avg = square_avg.sqrt()
                avg = avg.add_(eps)
                if momentum > 0:
                    buf = _addcdiv_(state["momentum_buffer"].mul_(momentum), grad, avg)
                    p.add_(buf, alpha=-lr)
                else:
                    _addcdiv_(p, grad, avg, -lr)
        return loss
