"""``ASGD`` (averaged SGD) and ``Rprop`` (resilient backpropagation, sign-based steps)."""

from __future__ import annotations

import retrograd as torch

from .optimizer import Optimizer, _call_closure, _no_grad, _step_value

__all__ = ["ASGD", "Rprop"]


class ASGD(Optimizer):
    """Averaged SGD, as PyTorch's: SGD with a decaying step ``eta`` and a running average of the
    parameters (``state["ax"]``) that starts after ``t0`` steps.

    >>> import retrograd as torch
    >>> w = torch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = torch.optim.ASGD([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); w.detach().round(decimals=4)
    tensor([ 0.8000, -0.8000])
    """

    def __init__(self, params, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach=None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    @_no_grad
    def step(self, closure=None):
        """Perform one update; ``closure`` re-evaluates the loss and is called first if given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
            wd = group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = -p.grad if group["maximize"] else p.grad
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    state["eta"] = torch.tensor(float(lr))
                    state["mu"] = torch.tensor(1.0)
                    state["ax"] = torch.zeros_like(p)
                state["step"] += 1
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                eta = _step_value(state["eta"])
                p.mul_(1 - lambd * eta)
                p.add_(grad, alpha=-eta)
                ax = state["ax"]
                if _step_value(state["mu"]) != 1:
                    ax.add_(p.sub(ax).mul_(state["mu"]))
                else:
                    ax.copy_(p)
                step = _step_value(state["step"])
                state["eta"].fill_(lr / (1 + lambd * lr * step) ** alpha)
                state["mu"].fill_(1 / max(1, step - t0))
        return loss


class Rprop(Optimizer):
    """Rprop, as PyTorch's: each element's step size grows by ``etas[1]`` while its gradient
    keeps its sign and shrinks by ``etas[0]`` when it flips; the step follows the sign only.

    >>> import retrograd as torch
    >>> w = torch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = torch.optim.Rprop([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); w
    tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-2, etas: tuple = (0.5, 1.2),
                 step_sizes: tuple = (1e-6, 50), *, capturable: bool = False, foreach=None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    @_no_grad
    def step(self, closure=None):
        """Perform one update; ``closure`` re-evaluates the loss and is called first if given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            smin, smax = group["step_sizes"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = -p.grad if group["maximize"] else p.grad
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    state["prev"] = torch.zeros_like(p)
                    state["step_size"] = torch.full_like(grad, group["lr"])
                state["step"] += 1
                sign = grad.mul(state["prev"]).sign()
                # the factors in the gradient's dtype, as PyTorch writes them into ``sign``
                factor = torch.where(sign > 0, torch.full_like(grad, etaplus),
                                     torch.where(sign < 0, torch.full_like(grad, etaminus),
                                                 torch.ones_like(grad)))
                step_size = state["step_size"]
                step_size.copy_((step_size * factor).clamp(smin, smax))
                grad = torch.where(sign < 0, torch.zeros_like(grad), grad)
                p.add_(grad.sign() * step_size, alpha=-1)
                state["prev"].copy_(grad)
        return loss
