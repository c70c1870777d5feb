"""``Adafactor`` (factored second moments) and ``Muon`` (orthogonalised momentum for matrices)."""

from __future__ import annotations

import math

import retrograd as torch

from .optimizer import Optimizer, _call_closure, _lerp_, _no_grad, _step_value

__all__ = ["Adafactor", "Muon"]

# The machine epsilon Adafactor uses for eps[0]=None, per parameter dtype.
_EPS = {"float64": 2.0**-52, "float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}


class Adafactor(Optimizer):
    """Adafactor, as PyTorch's: a matrix keeps only row and column means of its squared
    gradients; the step is relative to the parameter's RMS and clipped by ``d``.

    >>> import retrograd as torch
    >>> w = torch.tensor([[1.0, -1.0], [2.0, 0.5]], requires_grad=True)
    >>> opt = torch.optim.Adafactor([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); w.detach().round(decimals=4)
    tensor([[ 0.9078, -0.8156],
            [ 1.8735,  0.4368]])
    """

    def __init__(self, params, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach=None, maximize: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    @_no_grad
    def step(self, closure=None):
        """Perform one update; ``closure`` re-evaluates the loss and is called first if given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, d, wd = group["lr"], group["d"], group["weight_decay"]
            eps1, eps2 = group["eps"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = -p.grad if group["maximize"] else p.grad
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    if grad.dim() > 1:
                        state["row_var"] = grad.new_zeros(grad.shape[:-1] + (1,))
                        state["col_var"] = grad.new_zeros(
                            grad.shape[:-2] + (1,) + grad.shape[-1:])
                    else:
                        state["variance"] = torch.zeros_like(grad)
                e1 = _EPS[str(p.dtype).rpartition(".")[2]] if eps1 is None else eps1
                state["step"] += 1
                step = _step_value(state["step"])
                beta2_t = step ** group["beta2_decay"]
                rho = min(lr, 1 / step**0.5)
                alpha = max(eps2, p.norm(2).item() / p.numel() ** 0.5) * rho
                if wd != 0:
                    p.mul_(1 - lr * wd)
                if grad.dim() > 1:
                    row_var, col_var = state["row_var"], state["col_var"]
                    _lerp_(row_var, grad.norm(dim=-1, keepdim=True).square() / grad.size(-1),
                           beta2_t)
                    _lerp_(col_var, grad.norm(dim=-2, keepdim=True).square() / grad.size(-2),
                           beta2_t)
                    var = (row_var @ col_var) / row_var.mean(dim=-2, keepdim=True).clamp(min=e1)
                else:
                    var = _lerp_(state["variance"], grad * grad, beta2_t).clone()
                update = var.clamp(min=e1 * e1).rsqrt() * grad
                denom = max(1.0, update.norm(2).item() / (update.numel() ** 0.5 * d))
                p.add_(update, alpha=-alpha / denom)
        return loss


def _orthogonalise(g, coefficients: tuple, steps: int, eps: float):
    """The quintic Newton-Schulz iteration PyTorch's Muon runs (in bfloat16, as PyTorch)."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(g.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    x = g.bfloat16()
    tall = g.size(0) > g.size(1)
    if tall:
        x = x.T
    x = x / max(x.norm().item(), eps)
    for _ in range(steps):
        gram = x @ x.T
        x = torch.addmm(x, torch.addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    return x.T if tall else x


class Muon(Optimizer):
    """Muon, as PyTorch's: momentum SGD for 2-D parameters whose update is orthogonalised by a
    Newton-Schulz iteration (run in bfloat16, as PyTorch does).

    >>> import retrograd as torch
    >>> w = torch.tensor([[1.0, 0.0], [0.0, 2.0]], requires_grad=True)
    >>> opt = torch.optim.Muon([w], lr=0.1, weight_decay=0.0)
    >>> (w * w).sum().backward(); opt.step(); w.detach().round(decimals=1)
    tensor([[0.9000, 0.0000],
            [0.0000, 1.9000]])
    """

    def __init__(self, params, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple = (3.4445, -4.7750, 2.0315), eps: float = 1e-7,
                 ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn not in (None, "original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    @_no_grad
    def step(self, closure=None):
        """Perform one update; ``closure`` re-evaluates the loss and is called first if given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, momentum = group["lr"], group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(grad)
                buf = _lerp_(state["momentum_buffer"], grad, 1 - momentum)
                update = _lerp_(grad.clone(), buf, momentum) if group["nesterov"] else buf
                update = _orthogonalise(update, group["ns_coefficients"], group["ns_steps"],
                                        group["eps"])
                rows, cols = p.shape[:2]
                fn = group["adjust_lr_fn"]
                if fn in (None, "original"):
                    ratio = math.sqrt(max(1, rows / cols))
                else:
                    ratio = 0.2 * math.sqrt(max(rows, cols))
                p.mul_(1 - lr * group["weight_decay"])
                p.add_(update.to(p.dtype), alpha=-lr * ratio)
        return loss
