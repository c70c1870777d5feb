"""Stochastic weight averaging, as ``torch.optim.swa_utils``: ``AveragedModel`` keeps a
running (SWA) or exponential (EMA) average of a model's parameters, ``SWALR`` anneals the
learning rate to a constant SWA rate, and ``update_bn`` recomputes batch-norm statistics for
the averaged weights.

It lives beside ``optim`` rather than in it because ``AveragedModel`` is an ``nn.Module`` and
``optim`` does not import ``nn`` (optimizers know parameters, not modules); ``retrograd``'s
``__init__`` makes it ``retrograd.optim.swa_utils``.

>>> import retrograd as torch
>>> model = torch.nn.Linear(1, 1)
>>> swa = torch.optim.swa_utils.AveragedModel(model)
>>> swa.update_parameters(model); int(swa.n_averaged)
1
"""

from __future__ import annotations

import copy
import itertools
import math
import warnings

import retrograd as torch
from retrograd.nn import Module

from .optim.lr_scheduler import LRScheduler
from .optim.lr_scheduler.base import _per_group

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] "
                         "range.")


def get_ema_multi_avg_fn(decay: float = 0.999):
    """An in-place exponential moving average over lists of tensors."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _) -> None:
        with torch.no_grad():
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                if p_ema.is_floating_point():
                    p_ema.lerp_(p_model, 1 - decay)
                else:
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running average over lists of tensors."""
    def swa_update(averaged_param_list, current_param_list, num_averaged) -> None:
        with torch.no_grad():
            n = float(num_averaged)
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                if p_avg.is_floating_point():
                    p_avg.lerp_(p_model, 1 / (n + 1))
                else:
                    p_avg.add_((p_model - p_avg) / (n + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999):
    """The exponential moving average of one tensor: ``decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with torch.no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The running average of one tensor: ``avg + (current - avg) / (n + 1)``."""
    def swa_update(averaged_param, current_param, num_averaged):
        with torch.no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers, with ``use_buffers``) are the
    average of the models passed to ``update_parameters``."""

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        self.register_buffer("n_averaged", torch.tensor(0, dtype=torch.long))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters into the average."""
        if self.use_buffers:
            mine = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            theirs = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            mine, theirs = list(self.parameters()), list(model.parameters())
        mine = [p.detach() for p in mine]
        theirs = [p.detach() for p in theirs]
        first = int(self.n_averaged) == 0
        with torch.no_grad():
            if first:
                for p_avg, p_model in zip(mine, theirs):
                    p_avg.copy_(p_model)
            elif self.multi_avg_fn is not None:
                self.multi_avg_fn(mine, theirs, self.n_averaged)
            else:
                avg_fn = self.avg_fn or get_swa_avg_fn()
                for p_avg, p_model in zip(mine, theirs):
                    p_avg.copy_(avg_fn(p_avg, p_model, self.n_averaged))
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach())
            self.n_averaged += 1


def update_bn(loader, model: Module, device=None) -> None:
    """Recompute the running statistics of every batch norm in ``model`` with one pass over
    ``loader`` (cumulative averages: momentum None)."""
    momenta = {}
    for module in model.modules():
        if hasattr(module, "reset_running_stats") and hasattr(module, "momentum"):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with torch.no_grad():
        for input in loader:  # noqa: A001
            if isinstance(input, (list, tuple)):
                input = input[0]  # noqa: A001
            model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` (cosine or linear), then
    hold it.

    >>> import retrograd as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = torch.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=2,
    ...                                     anneal_strategy="linear")
    >>> lrs = []
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [0.55, 0.1, 0.1]
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_strategy = anneal_strategy
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t: float) -> float:
        """The annealing fraction at progress ``t`` in [0, 1]."""
        if self._anneal_strategy == "cos":
            return (1 - math.cos(math.pi * t)) / 2
        return t

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha)
                for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(self.optimizer.param_groups, prev)]
