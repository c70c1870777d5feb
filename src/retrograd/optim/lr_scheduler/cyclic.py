"""The cyclical schedulers: ``OneCycleLR``, ``CyclicLR`` and ``CosineAnnealingWarmRestarts``,
which step every batch rather than every epoch."""

from __future__ import annotations

import math
import types

from ..optimizer import Optimizer
from .base import LRScheduler, _group_values, _per_group, _set_group_value

__all__ = ["OneCycleLR", "CyclicLR", "CosineAnnealingWarmRestarts"]


class OneCycleLR(LRScheduler):
    """The 1cycle policy: anneal the lr up to ``max_lr`` and down to a tiny minimum.

    Momentum (or Adam's ``beta1``) cycles inversely between ``max_momentum`` and
    ``base_momentum`` when ``cycle_momentum``. Call ``step`` after every batch.

    >>> import retrograd as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    >>> sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    >>> [round(lr, 6) for lr in sched.get_last_lr()]
    [0.04]
    """

    def __init__(self, optimizer: Optimizer, max_lr, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError("Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        n = self.total_steps

        def phase(end, lr0, lr1, m0, m1) -> dict:
            return {"end_step": end, "start_lr": lr0, "end_lr": lr1, "start_momentum": m0,
                    "end_momentum": m1}

        if three_phase:
            self._schedule_phases = [
                phase(float(pct_start * n) - 1, "initial_lr", "max_lr", "max_momentum",
                      "base_momentum"),
                phase(float(2 * pct_start * n) - 2, "max_lr", "initial_lr", "base_momentum",
                      "max_momentum"),
                phase(n - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                phase(float(pct_start * n) - 1, "initial_lr", "max_lr", "max_momentum",
                      "base_momentum"),
                phase(n - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                                 "option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            max_ms = _per_group("max_momentum", optimizer, max_momentum)
            base_ms = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m_max, m_base, group in zip(max_ms, base_ms, optimizer.param_groups):
                    if self.use_beta1:
                        group["betas"] = (m_max, *group["betas"][1:])
                    else:
                        group["momentum"] = m_max
                    group["max_momentum"] = m_max
                    group["base_momentum"] = m_base
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        return self._annealing_linear(start, end, pct)

    @staticmethod
    def _annealing_cos(start, end, pct):
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start, end, pct):
        return (end - start) * pct + start

    def get_lr(self) -> list:
        self._warn_outside_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps "
                             f"is {self.total_steps}")
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, ph in enumerate(self._schedule_phases):
                end = ph["end_step"]
                if step <= end or i == last:
                    pct = (step - start) / (end - start)
                    lr = self._anneal_func(group[ph["start_lr"]], group[ph["end_lr"]], pct)
                    if self.cycle_momentum:
                        mom = self._anneal_func(group[ph["start_momentum"]],
                                                group[ph["end_momentum"]], pct)
                    break
                start = ph["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (mom, *group["betas"][1:])
                else:
                    group["momentum"] = mom
        return lrs



class CyclicLR(LRScheduler):
    """The cyclical learning-rate policy: the lr rises from ``base_lr`` to ``max_lr`` over
    ``step_size_up`` steps and falls back over ``step_size_down``, the amplitude scaled per
    cycle (``triangular``, ``triangular2``) or per step (``exp_range``) or by ``scale_fn``.

    >>> import retrograd as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    >>> sched = torch.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, step_size_up=2)
    >>> lrs = []
    >>> for _ in range(4):
    ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [0.55, 1.0, 0.55, 0.1]
    """

    def __init__(self, optimizer: Optimizer, base_lr, max_lr, step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn=None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum=0.8, max_momentum=0.9,
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                                 "option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m_max, m_base, group in zip(self.max_momentums, self.base_momentums,
                                                optimizer.param_groups):
                    self._set_momentum(group, m_max)
                    group["max_momentum"] = m_max
                    group["base_momentum"] = m_base
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _set_momentum(self, group: dict, value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _init_scale_fn(self) -> None:
        # The built-in modes fix the scale mode, as in PyTorch; the function itself is not kept
        # as an attribute, so that state_dict holds no bound methods.
        if self._scale_fn_custom is None and self.mode in ("triangular", "triangular2"):
            self.scale_mode = "cycle"
        elif self._scale_fn_custom is None and self.mode == "exp_range":
            self.scale_mode = "iterations"

    def scale_fn(self, x) -> float:
        """The amplitude factor at cycle (or step) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self) -> list:
        self._warn_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale = x / self.step_ratio
        else:
            scale = (x - 1) / (self.step_ratio - 1)
        at = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * scale * at for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, m_base, m_max in zip(self.optimizer.param_groups, self.base_momentums,
                                            self.max_momentums):
                self._set_momentum(group, m_max - (m_max - m_base) * scale * at)
        return lrs

    def state_dict(self) -> dict:
        """Every attribute but the optimizer; a custom ``scale_fn`` is saved as its
        ``__dict__`` when it is a callable object, and not at all when it is a function."""
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore the attributes saved by ``state_dict`` (keeping this scheduler's scale_fn)."""
        fn = state_dict.pop("_scale_fn_custom")
        custom = self._scale_fn_custom
        super().load_state_dict(state_dict)
        state_dict["_scale_fn_custom"] = fn
        self._scale_fn_custom = custom
        if fn is not None and custom is not None:
            custom.__dict__.update(fn)
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from each group's initial lr down to ``eta_min`` over ``T_i`` epochs,
    restarting after each period; periods grow by ``T_mult``. ``step`` accepts a fractional
    epoch (``epoch + i / iters``) for restarts within an epoch.

    >>> import retrograd as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> lrs = []
    >>> for _ in range(4):
    ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.5, 1.0, 0.5, 1.0]
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1,  # noqa: N803
                 eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.T_cur
                                                                     / self.T_i)) / 2
                for base in self.base_lrs]

    def step(self, epoch=None) -> None:
        """Advance one epoch, or go to ``epoch`` (fractional epochs allowed)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult**n
        else:
            self.T_i = self.T_0
            self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")
