"""torch.distributed.algorithms.join: training with uneven inputs across ranks.

A rank whose inputs run out leaves the ``with Join([...]):`` block (for DDP:
``with ddp.join():``) and, instead of leaving the others waiting in their next collective,
keeps shadowing them: each round it learns, in one allreduce, how many ranks still train (each
of those contributes a one at the start of its forward, ``notify_join_context``), and while
some do, every joinable's ``JoinHook.main_hook`` issues the collectives of one of their
iterations (DDP: its bucket allreduces, with zero gradients). When none is left, every rank
runs ``post_hook(is_last_joiner)`` (DDP: every rank takes the model of the last rank to join).
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from typing import Any, NamedTuple

import retrograd as torch
import retrograd.distributed as dist

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """What a joined rank runs: ``main_hook`` while some rank still trains (shadowing one of
    its iterations), ``post_hook(is_last_joiner)`` once all have joined."""

    def main_hook(self) -> None:
        """Shadow the collectives of one training iteration of the ranks still training."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Run once every rank has joined; ``is_last_joiner`` if this rank was among the last."""


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False,
                           is_first_joinable=False)


class Joinable(ABC):
    """A class that can take part in ``Join``: ``join_hook()``, ``join_device`` and
    ``join_process_group``."""

    @abstractmethod
    def __init__(self) -> None:
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs) -> JoinHook:
        """The ``JoinHook`` of this joinable."""

    @property
    @abstractmethod
    def join_device(self) -> Any:
        """The device of the join context manager's collectives."""

    @property
    @abstractmethod
    def join_process_group(self) -> Any:
        """The process group of the join context manager's collectives."""


class Join:
    """The join context manager: ranks may run out of inputs at different iterations.

    >>> with Join([ddp_model]):                 # doctest: +SKIP
    ...     for x, y in this_ranks_batches:     # fewer on some ranks
    ...         loss_fn(ddp_model(x), y).backward()
    ...         opt.step(); opt.zero_grad()
    """

    def __init__(self, joinables: list, enable: bool = True,
                 throw_on_early_termination: bool = False, **kwargs) -> None:
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [joinable.join_hook(**kwargs) for joinable in self._joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        first = True
        for joinable in self._joinables:
            joinable._join_config = _JoinConfig(enable=enable,
                                                throw_on_early_termination=(
                                                    throw_on_early_termination),
                                                is_first_joinable=first)
            first = False
        process_group = None
        for joinable in self._joinables:
            if process_group is None:
                process_group = joinable.join_process_group
            elif process_group != joinable.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
        self._process_group = process_group
        self._rank = dist.get_rank(self._process_group)

    def __enter__(self):
        return None

    def __exit__(self, type, value, traceback):
        """Shadow the ranks still training until all have joined (an exception propagates)."""
        if not self._enable or type:
            return
        all_joined, is_last_joiner, i = False, True, 0
        while not all_joined:
            if i > 1000:
                warnings.warn(
                    "Detected uneven input skew of greater than 1000. This means that rank "
                    f"{self._rank} has at least 1000 fewer inputs than other currently-active "
                    "ranks. This level of skew could lead to performance degradation during "
                    "training.", stacklevel=2)
            if self._get_num_nonjoined_procs() == 0:
                all_joined = True
            else:
                if self._throw_on_early_termination:
                    self._notify_procs_to_terminate()
                for hook in self._join_hooks:
                    hook.main_hook()
                is_last_joiner = False
            i += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)

    def _get_num_nonjoined_procs(self) -> int:
        # async, as the ones of notify_join_context it meets: MPI matches no blocking
        # collective with a nonblocking one
        count = torch.zeros(1)
        dist.all_reduce(count, group=self._process_group, async_op=True).wait()
        return int(count.item())

    def _notify_procs_to_terminate(self) -> None:
        dist.all_reduce(torch.ones(1), group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable: Joinable):
        """Called by a joinable at the start of each iteration of a rank still training: its
        one in the joined ranks' count (the first joinable of the context does it). Returns
        the count's work handle, or None."""
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        work = dist.all_reduce(torch.ones(1), group=joinable.join_process_group,
                               async_op=True)
        if config.throw_on_early_termination:
            zeros = torch.zeros(1)
            dist.all_reduce(zeros, group=joinable.join_process_group)
            if zeros.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. "
                                   "Throwing across all ranks.")
        return work
