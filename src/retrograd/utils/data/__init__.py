"""Datasets, samplers, collation and the ``DataLoader``, as in ``torch.utils.data``.

The package mirrors PyTorch's layout: ``dataset`` (datasets and ``random_split``), ``sampler``
(the index orders) and ``dataloader`` (the ``DataLoader`` and ``get_worker_info``); collation
lives in ``_collate``. Everything is re-exported here, so ``retrograd.utils.data.X`` works for
each public ``X``.
"""

from __future__ import annotations

from ._collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "ChainDataset",
    "StackDataset", "random_split", "default_collate", "default_convert", "DataLoader",
    "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler",
    "WeightedRandomSampler", "get_worker_info", "DistributedSampler",
]
