"""The ``DataLoader``, as in ``torch.utils.data.dataloader``.

Everything runs in the calling process: ``num_workers > 0`` is accepted for compatibility and
loads in the main process after a one-time warning (so ``get_worker_info()`` is always ``None``
and ``worker_init_fn`` is never called).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

import retrograd

from ._collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset, _is_int
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

T_co = TypeVar("T_co", covariant=True)


def get_worker_info() -> None:
    """Always ``None``: retrograd loads every batch in the main process.

    >>> import retrograd as torch
    >>> torch.utils.data.get_worker_info() is None
    True
    """
    return None


# -- DataLoader ----------------------------------------------------------------------------------
_warned_workers = [False]


class _InfiniteConstantSampler(Sampler[None]):
    """The sampler of an iterable dataset: ``None`` forever (the dataset decides the end)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


class _LoaderIter:
    """One pass over a ``DataLoader``."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        self._index_iter = iter(loader._index_sampler)
        # PyTorch draws the workers' base seed for every pass, workers or not, so that the
        # generators' states stay in step with it
        self._base_seed = int(
            retrograd.empty((), dtype=retrograd.int64).random_(generator=loader.generator).item()
        )
        self._dataset_iter = iter(loader.dataset) if loader._iterable else None
        self._done = False
        self._yielded = 0

    def __iter__(self) -> _LoaderIter:
        return self

    def __len__(self) -> int:
        return len(self._loader)

    def _fetch_iterable(self, index: Any) -> Any:
        loader = self._loader
        if loader._auto_collation:
            data = list(itertools.islice(self._dataset_iter, len(index)))
            if not data or (loader.drop_last and len(data) < len(index)):
                raise StopIteration
            return loader.collate_fn(data)
        return loader.collate_fn(next(self._dataset_iter))

    def _fetch_map(self, index: Any) -> Any:
        loader = self._loader
        ds = loader.dataset
        if loader._auto_collation:
            getitems = getattr(ds, "__getitems__", None)
            data = getitems(index) if callable(getitems) else [ds[i] for i in index]
        else:
            data = ds[index]
        return loader.collate_fn(data)

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        try:
            index = next(self._index_iter)
            if self._loader._iterable:
                data = self._fetch_iterable(index)
            else:
                data = self._fetch_map(index)
        except StopIteration:
            self._done = True
            raise
        self._yielded += 1
        return data


class DataLoader(Generic[T_co]):
    """Iterate over a dataset in (optionally shuffled) batches.

    ``batch_size=None`` turns batching off (samples come through ``default_convert``). For an
    ``IterableDataset`` the dataset decides the order and no sampler may be given.
    ``num_workers``, ``pin_memory``, ``timeout``, ``worker_init_fn``, ``prefetch_factor`` and
    ``persistent_workers`` are accepted for compatibility; loading always happens in the calling
    process.

    >>> import retrograd as torch
    >>> ds = torch.utils.data.TensorDataset(torch.arange(5), torch.arange(5) * 10)
    >>> [x.tolist() for x, y in torch.utils.data.DataLoader(ds, batch_size=2)]
    [[0, 1], [2, 3], [4]]
    >>> g = torch.Generator().manual_seed(0)
    >>> loader = torch.utils.data.DataLoader(ds, batch_size=2, shuffle=True, drop_last=True,
    ...                                      generator=g)
    >>> len(loader), [len(x) for x, _ in loader]
    (2, [2, 2])
    """

    def __init__(self, dataset: Dataset[T_co], batch_size: int | None = 1,
                 shuffle: bool | None = None, sampler: Sampler | Iterable | None = None,
                 batch_sampler: Sampler[list] | Iterable[list] | None = None,
                 num_workers: int = 0, collate_fn: Callable[[list], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None,
                 generator: retrograd.Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if not _is_int(num_workers) or num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers > 0 and not _warned_workers[0]:
            _warned_workers[0] = True
            warnings.warn(
                f"retrograd's DataLoader loads in the main process: num_workers={num_workers} "
                "is accepted but no worker processes are started (worker_init_fn is not "
                "called)", UserWarning, stacklevel=2,
            )
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.pin_memory_device = pin_memory_device
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)

        if self._iterable:
            if shuffle not in (False, None):
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, but "
                    f"got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, but "
                    f"got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler "
                    f"option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)  # type: ignore[arg-type]

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _LoaderIter:
        return _LoaderIter(self)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)
