"""``DistributedSampler``: each rank's share of a dataset, in exactly torch's index order.

With ``shuffle`` the order is ``randperm(len(dataset))`` from a generator seeded with
``seed + epoch`` (so every rank draws the same permutation, and ``set_epoch`` changes it);
without, ``0 .. len - 1``. The list is padded by wrapping around to a multiple of the number of
replicas (or truncated, with ``drop_last``), and rank ``r`` takes ``indices[r::num_replicas]``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import retrograd as torch
from retrograd import distributed as dist

from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices of ``dataset`` that rank ``rank`` of ``num_replicas`` loads.

    ``num_replicas`` and ``rank`` default to the default process group's. Call
    ``set_epoch(epoch)`` before each epoch to shuffle differently each time.

    >>> from retrograd.utils.data.distributed import DistributedSampler
    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
    [1, 3, 0]
    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False,
    ...                         drop_last=True))
    [1, 3]
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size()
        if rank is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        size = len(dataset)
        if drop_last and size % num_replicas != 0:
            # Only whole rounds: the tail that would need padding is left out.
            self.num_samples = math.ceil((size - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(size / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        size = len(self.dataset)
        if self.shuffle:
            g = torch.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = torch.randperm(size, generator=g).tolist()
        else:
            indices = list(range(size))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            short = self.total_size - len(indices)
            if short > 0:
                # Pad by wrapping around, as many times as needed (tiny datasets).
                indices += (indices * math.ceil(short / len(indices)))[:short]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose shuffle to use next (the generator is seeded ``seed + epoch``)."""
        self.epoch = epoch
