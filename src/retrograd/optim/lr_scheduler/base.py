"""The scheduler base class and the helpers every scheduler shares.

The chainable schedulers compute the next lr from the current one with PyTorch's recursive
formulas (so their floating-point sequences agree with PyTorch's exactly), and
``step(epoch)`` uses the closed form where one exists, as PyTorch does.
"""

from __future__ import annotations

import types
import warnings

from retrograd import Tensor

from ..optimizer import Optimizer

__all__ = ["LRScheduler"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)


def _group_values(optimizer: Optimizer, key: str) -> list:
    return [g[key].clone() if isinstance(g[key], Tensor) else g[key]
            for g in optimizer.param_groups]


def _set_group_value(group: dict, key: str, value) -> None:
    if isinstance(group[key], Tensor):
        group[key].fill_(float(value))
    else:
        group[key] = value


def _per_group(name: str, optimizer: Optimizer, value) -> list:
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
        return list(value)
    return [value] * len(optimizer.param_groups)


class LRScheduler:
    """Base class of the schedulers: subclasses implement ``get_lr``.

    Building a scheduler records each group's ``initial_lr`` and takes the first step (epoch 0).

    >>> import retrograd as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for _ in range(5):
    ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [1.0, 0.5, 0.5, 0.25, 0.25]
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                lr = group["lr"]
                group.setdefault("initial_lr", lr.clone() if isinstance(lr, Tensor) else lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        "scheduler with last_epoch >= 0.\nThis typically happens when:\n1. "
                        "You're trying to resume training from a checkpoint but haven't properly "
                        "loaded the optimizer state\n2. You're using last_epoch >= 0 for a fresh "
                        "training run (not recommended)"
                    )
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict:
        """Every attribute but the optimizer.

        >>> import retrograd as torch
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> torch.optim.lr_scheduler.ExponentialLR(opt, 0.9).state_dict()["last_epoch"]
        0
        """
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore the attributes saved by ``state_dict``."""
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list:
        """The learning rates the last ``step`` set, one per parameter group."""
        return self._last_lr

    def get_lr(self) -> list:
        """The learning rates for the current ``last_epoch`` (called by ``step``)."""
        raise NotImplementedError

    def _warn_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=3)

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to ``epoch``, deprecated) and update the groups' lr."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch "
                "1.1.0 and later, you should call them in the opposite order: "
                "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will "
                "result in PyTorch skipping the first value of the learning rate schedule. See "
                "more details at "
                "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                UserWarning,
                stacklevel=2,
            )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


_LRScheduler = LRScheduler


def _lambdas(optimizer: Optimizer, lr_lambda) -> list:
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                         f"{len(lr_lambda)}")
    return list(lr_lambda)


class _LambdaState:
    """State-dict handling shared by the schedulers that hold ``lr_lambdas``: functions and
    lambdas are not saved, callable objects are saved as their ``__dict__``."""

    def state_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        out["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                             for fn in self.lr_lambdas]
        return out

    def load_state_dict(self, state_dict: dict) -> None:
        lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lambdas
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)

