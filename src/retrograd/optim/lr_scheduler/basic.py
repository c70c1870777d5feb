"""The schedulers that follow a fixed formula of the epoch, and the two that combine others."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter

from ..optimizer import Optimizer
from .base import (
    LRScheduler,
    _group_values,
    _lambdas,
    _LambdaState,
    _set_group_value,
)
from .plateau import ReduceLROnPlateau

__all__ = [
    "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
    "ExponentialLR", "PolynomialLR", "CosineAnnealingLR", "SequentialLR", "ChainedScheduler",
]


class LambdaLR(_LambdaState, LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``, one lambda per group or one for all.

    >>> import retrograd as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda e: 1 / (e + 1))
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """``lr *= lr_lambda(epoch)`` at every step after the first.

    >>> import retrograd as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.MultiplicativeLR(opt, lambda e: 0.5)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * fn(self.last_epoch)
                for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` epochs.

    >>> import retrograd as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.1]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each milestone epoch.

    >>> import retrograd as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[2], gamma=0.5)
    >>> for _ in range(3):
    ...     opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, milestones, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self.last_epoch not in self.milestones:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma ** self.milestones[self.last_epoch]
                for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """Multiply the lr by ``factor`` until epoch ``total_iters``.

    >>> import retrograd as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=1)
    >>> first = sched.get_last_lr(); opt.step(); sched.step(); first, sched.get_last_lr()
    ([0.5], [1.0])
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * (1.0 / self.factor) for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the lr linearly from ``start_factor`` to ``end_factor`` over ``total_iters``.

    >>> import retrograd as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        delta = self.end_factor - self.start_factor
        ratio = 1.0 + delta / (self.total_iters * self.start_factor
                               + (self.last_epoch - 1) * delta)
        return [g["lr"] * ratio for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        delta = self.end_factor - self.start_factor
        return [base * (self.start_factor
                        + delta * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch.

    >>> import retrograd as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the lr as ``(1 - epoch / total_iters) ** power`` until ``total_iters``.

    >>> import retrograd as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=2)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        factor = ((1.0 - self.last_epoch / self.total_iters)
                  / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [g["lr"] * factor for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial lr to ``eta_min`` over ``T_max`` epochs (recursive form).

    >>> import retrograd as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
    >>> for _ in range(2):
    ...     opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.0]
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        groups = self.optimizer.param_groups
        e, t_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        if self._step_count == 1 and e > 0:
            return [eta_min + (base - eta_min) * (1 + math.cos(e * math.pi / t_max)) / 2
                    for base in self.base_lrs]
        if (e - 1 - t_max) % (2 * t_max) == 0:
            return [g["lr"] + (base - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                    for base, g in zip(self.base_lrs, groups)]
        ratio = (1 + math.cos(math.pi * e / t_max)) / (1 + math.cos(math.pi * (e - 1) / t_max))
        return [ratio * (g["lr"] - eta_min) + eta_min for g in groups]

    def _get_closed_form_lr(self) -> list:
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after another, switching at the ``milestones`` epochs.

    >>> import retrograd as torch
    >>> from retrograd.optim import lr_scheduler as S
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    >>> warm = S.LinearLR(opt, start_factor=0.5, total_iters=1)
    >>> decay = S.ExponentialLR(opt, gamma=0.5)
    >>> sched = S.SequentialLR(opt, [warm, decay], milestones=[1])
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.5, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer: Optimizer, schedulers: list, milestones: list,
                 last_epoch: int = -1) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        for i, s in enumerate(schedulers):
            if not hasattr(s, "optimizer"):
                raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
            if isinstance(s, ReduceLROnPlateau):
                raise ValueError(
                    f"{name} does not support `ReduceLROnPlateau` scheduler as it requires "
                    "additional kwargs to be specified when calling `step`, but got one at index "
                    f"{i} in the given schedulers sequence."
                )
            if optimizer != s.optimizer:
                raise ValueError(
                    f"{name} expects all schedulers to belong to the same optimizer, but got "
                    f"scheduler {type(s).__name__} at index {i} has {s.optimizer}, which is "
                    f"different from {type(optimizer).__name__}."
                )
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more than "
                f"the number of milestone points, but got number of schedulers {len(schedulers)} "
                f"and the number of milestones to be equal to {len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # undo the steps the schedulers took when they were built, then start the first one
        for group in optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self._undo(self)
        first = schedulers[bisect_right(milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def _undo(self, sched) -> None:
        if hasattr(sched, "_schedulers"):
            for s in sched._schedulers:
                self._undo(s)
        elif hasattr(sched, "last_epoch"):
            sched.last_epoch -= 1

    recursive_undo = _undo

    def step(self) -> None:
        """Step the scheduler in charge of the new epoch (restarting it at a milestone)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        sched = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            sched._update_lr(0)
        else:
            sched.step()
        self._last_lr = sched.get_last_lr()

    def state_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        out["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return out

    def load_state_dict(self, state_dict: dict) -> None:
        saved = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = saved
        for s, sd in zip(self._schedulers, saved):
            s.load_state_dict(sd)


class ChainedScheduler(LRScheduler):
    """Step several schedulers of one optimizer together, every ``step``.

    >>> import retrograd as torch
    >>> from retrograd.optim import lr_scheduler as S
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = S.ChainedScheduler([S.ExponentialLR(opt, 0.5), S.ExponentialLR(opt, 0.5)])
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.25]
    """

    def __init__(self, schedulers, optimizer: Optimizer | None = None) -> None:
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler to be "
                             "chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        for i, s in enumerate(schedulers):
            if not hasattr(s, "optimizer"):
                raise TypeError(f"{type(self).__name__} at index {i} should have `optimizer` as "
                                "its attribute.")
            if isinstance(s, ReduceLROnPlateau):
                raise ValueError(
                    f"{type(self).__name__} does not support `ReduceLROnPlateau` scheduler as it "
                    "requires additional kwargs to be specified when calling `step`, but got one "
                    f"at index {i} in the given schedulers sequence."
                )
            if optimizer != s.optimizer:
                raise ValueError(
                    f"{type(self).__name__} expects all schedulers to belong to the same "
                    f"optimizer, but got scheduler {type(s).__name__} at index {i} has "
                    f"{s.optimizer}, which is different from {type(optimizer).__name__}."
                )
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(schedulers[-1].optimizer, "lr")

    def step(self) -> None:
        """Step every scheduler."""
        for s in self._schedulers:
            s.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    state_dict = SequentialLR.state_dict
    load_state_dict = SequentialLR.load_state_dict

