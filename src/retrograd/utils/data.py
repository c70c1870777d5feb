"""Datasets, samplers, collation and the ``DataLoader``, as in ``torch.utils.data``.

Everything runs in the calling process: ``num_workers > 0`` is accepted for compatibility and
loads in the main process after a one-time warning (so ``get_worker_info()`` is always ``None``
and ``worker_init_fn`` is never called). Shuffling draws from retrograd's generators, so a seeded
``generator=`` (or ``retrograd.manual_seed``) gives the same order on every run, though not the
order PyTorch's generator would give.
"""

from __future__ import annotations

import bisect
import collections.abc
import copy
import itertools
import math
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import numpy as np

import retrograd

from .._tensor import Tensor

__all__ = [
    "Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "ChainDataset",
    "StackDataset", "random_split", "default_collate", "default_convert", "DataLoader",
    "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler",
    "WeightedRandomSampler", "get_worker_info",
]

T_co = TypeVar("T_co", covariant=True)

_NP_STR_OBJ = re.compile(r"[SaUO]")
_COLLATE_ERR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)
_CONVERT_ERR = "can't convert np.ndarray of type {} to a tensor"


# -- datasets ------------------------------------------------------------------------------------
class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define ``__getitem__`` (and usually ``__len__``).

    >>> import retrograd as torch
    >>> class Squares(torch.utils.data.Dataset):
    ...     def __len__(self):
    ...         return 4
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> [Squares()[i] for i in range(4)]
    [0, 1, 4, 9]
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A dataset that is a stream: subclasses define ``__iter__``.

    >>> import retrograd as torch
    >>> class Count(torch.utils.data.IterableDataset):
    ...     def __iter__(self):
    ...         return iter(range(5))
    >>> [b.tolist() for b in torch.utils.data.DataLoader(Count(), batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the ``i``-th rows of each tensor, as a tuple.

    >>> import retrograd as torch
    >>> ds = torch.utils.data.TensorDataset(torch.arange(3), torch.tensor([1.0, 2.0, 3.0]))
    >>> len(ds), ds[1]
    (3, (tensor(1), tensor(2.)))
    """

    def __init__(self, *tensors: Tensor) -> None:
        if any(t.size(0) != tensors[0].size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Zip datasets of equal length; samples are tuples (positional) or dicts (keywords).

    >>> import retrograd as torch
    >>> torch.utils.data.StackDataset(x=[1, 2], y=["a", "b"])[1]
    {'x': 2, 'y': 'b'}
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                "input/output, but both types are given."
            )
        parts = list(args) or list(kwargs.values())
        if not parts:
            raise ValueError("At least one dataset should be passed")
        self._length = len(parts[0])
        if any(self._length != len(d) for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets: Any = args if args else kwargs

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """Map-style datasets one after another; negative indices count from the end.

    >>> import retrograd as torch
    >>> ds = torch.utils.data.ConcatDataset([[1, 2], [3, 4, 5]])
    >>> len(ds), ds[2], ds[-1], ds.cumulative_sizes
    (5, 3, 5, [2, 5])
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> Any:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another.

    >>> import retrograd as torch
    >>> class R(torch.utils.data.IterableDataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n))
    >>> list(torch.utils.data.ChainDataset([R(2), R(3)]))
    [0, 1, 0, 1, 2]
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)  # type: ignore[arg-type]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order.

    >>> import retrograd as torch
    >>> s = torch.utils.data.Subset([10, 11, 12, 13], [3, 1])
    >>> len(s), s[0], s[1]
    (2, 13, 11)
    """

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list) -> list:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator: retrograd.Generator | None = None) -> list[Subset]:
    """Split a dataset into non-overlapping random subsets of the given lengths or fractions.

    Fractions that sum to 1 are turned into lengths by flooring, and the remainder is handed out
    one at a time from the first split on, as PyTorch does.

    >>> import retrograd as torch
    >>> a, b = torch.utils.data.random_split(range(10), [0.7, 0.3],
    ...                                      generator=torch.Generator().manual_seed(0))
    >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
    (7, 3, True)
    """
    lengths = list(lengths)
    n = len(dataset)  # type: ignore[arg-type]
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(int(math.floor(n * frac)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.",
                    UserWarning, stacklevel=2,
                )
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    if generator is None:
        generator = retrograd.default_generator
    perm = retrograd.randperm(sum(lengths), generator=generator).tolist()
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[start:start + length]))
        start += length
    return out


# -- samplers ------------------------------------------------------------------------------------
class Sampler(Generic[T_co]):
    """Base class of samplers: iterables of dataset indices (or of index lists for batches).

    >>> import retrograd as torch
    >>> class Evens(torch.utils.data.Sampler):
    ...     def __iter__(self):
    ...         return iter([0, 2, 4])
    >>> list(Evens())
    [0, 2, 4]
    """

    def __init__(self, data_source: Any = None) -> None:
        if data_source is not None:
            warnings.warn(
                "`data_source` argument is not used and will be removed in 2.2.0."
                "You may still have custom implementation that utilizes it.",
                UserWarning, stacklevel=2,
            )

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """Indices ``0 .. len(data_source) - 1`` in order.

    >>> import retrograd as torch
    >>> list(torch.utils.data.SequentialSampler("abc"))
    [0, 1, 2]
    """

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _fresh_generator(generator: retrograd.Generator | None) -> retrograd.Generator:
    """``generator`` itself, or a new one seeded from the default generator (so that
    ``retrograd.manual_seed`` makes the order reproducible)."""
    if generator is not None:
        return generator
    seed = int(retrograd.randint(0, 2**62, ()).item())
    return retrograd.Generator().manual_seed(seed)


class RandomSampler(Sampler[int]):
    """Indices in random order: a permutation, or ``num_samples`` draws with replacement.

    Without replacement and with ``num_samples`` larger than the dataset, whole permutations
    follow one another.

    >>> import retrograd as torch
    >>> g = torch.Generator().manual_seed(0)
    >>> sorted(torch.utils.data.RandomSampler(range(5), generator=g))
    [0, 1, 2, 3, 4]
    >>> len(list(torch.utils.data.RandomSampler(range(5), replacement=True, num_samples=8)))
    8
    """

    def __init__(self, data_source: Any, replacement: bool = False,
                 num_samples: int | None = None,
                 generator: retrograd.Generator | None = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        if not _is_int(self.num_samples) or self.num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        g = _fresh_generator(self.generator)
        if self.replacement:
            left = self.num_samples
            while left > 0:
                chunk = min(left, 32)
                yield from retrograd.randint(0, n, (chunk,), generator=g).tolist()
                left -= chunk
        else:
            for _ in range(self.num_samples // n):
                yield from retrograd.randperm(n, generator=g).tolist()
            yield from retrograd.randperm(n, generator=g).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in random order.

    >>> import retrograd as torch
    >>> sorted(torch.utils.data.SubsetRandomSampler([7, 3, 5]))
    [3, 5, 7]
    """

    def __init__(self, indices: Sequence[int],
                 generator: retrograd.Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        perm = retrograd.randperm(len(self.indices), generator=self.generator).tolist()
        for i in perm:
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``.

    >>> import retrograd as torch
    >>> list(torch.utils.data.WeightedRandomSampler([0.0, 0.0, 1.0], 3))
    [2, 2, 2]
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: retrograd.Generator | None = None) -> None:
        if not _is_int(num_samples) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got "
                f"num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        if isinstance(weights, Tensor):
            w = weights.detach().numpy().astype(np.float64)
        else:
            w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}"
            )
        self.weights = retrograd.from_numpy(w)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        draws = retrograd.multinomial(self.weights, self.num_samples, self.replacement,
                                      generator=self.generator)
        yield from draws.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Group another sampler's indices into lists of ``batch_size``.

    >>> import retrograd as torch
    >>> list(torch.utils.data.BatchSampler(range(5), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    >>> list(torch.utils.data.BatchSampler(range(5), batch_size=2, drop_last=True))
    [[0, 1], [2, 3]]
    """

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int,
                 drop_last: bool) -> None:
        if not _is_int(batch_size) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(
                f"drop_last should be a boolean value, but got drop_last={drop_last}"
            )
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        it = iter(self.sampler)
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size


# -- collation -----------------------------------------------------------------------------------
def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _is_np_array_like(x: Any) -> bool:
    mod = type(x).__module__
    return mod == "numpy" and not isinstance(x, (np.str_, np.bytes_))


def _same_mapping(template, values: dict):
    """``values`` in a mapping of ``template``'s type where that can be built (as torch does),
    else a plain dict."""
    if isinstance(template, collections.abc.MutableMapping):
        try:
            clone = copy.copy(template)
            clone.update(values)
            return clone
        except TypeError:
            return values
    try:
        return type(template)(values)  # type: ignore[call-arg]
    except TypeError:
        return values


def _same_sequence(template, items: list):
    """``items`` in a sequence of ``template``'s type where that can be built (as torch does),
    else a plain list."""
    if isinstance(template, collections.abc.MutableSequence):
        try:
            clone = copy.copy(template)
            for i, d in enumerate(items):
                clone[i] = d
            return clone
        except TypeError:
            return items
    try:
        return type(template)(items)  # type: ignore[call-arg]
    except TypeError:
        return items


def default_convert(data: Any) -> Any:
    """Turn NumPy arrays and scalars inside ``data`` into tensors, leaving the rest.

    Used by ``DataLoader`` when ``batch_size=None``. Tuples become lists, as in PyTorch.

    >>> import numpy as np
    >>> import retrograd as torch
    >>> torch.utils.data.default_convert((np.array([1, 2]), 3, "x"))
    [tensor([1, 2]), 3, 'x']
    """
    if isinstance(data, Tensor):
        return data
    if _is_np_array_like(data):
        if isinstance(data, np.ndarray) and _NP_STR_OBJ.search(data.dtype.str):
            return data
        return retrograd.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _same_mapping(data, {k: default_convert(v) for k, v in data.items()})
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _same_sequence(data, [default_convert(d) for d in data])
    return data


def default_collate(batch: list) -> Any:
    """Merge a list of samples into a batch, the way PyTorch's DataLoader does by default.

    Tensors are stacked along a new first dimension; NumPy arrays and scalars become tensors
    first; Python floats become a ``float64`` tensor, ints ``int64`` and bools ``bool``; strings
    and bytes are kept as they are; dicts, namedtuples and sequences are collated field by field
    (tuples come back as lists).

    >>> import retrograd as torch
    >>> torch.utils.data.default_collate([(1, 0.5, "a"), (2, 1.5, "b")])
    [tensor([1, 2]), tensor([0.5000, 1.5000], dtype=retrograd.float64), ('a', 'b')]
    >>> torch.utils.data.default_collate([{"x": torch.zeros(2)}, {"x": torch.ones(2)}])
    {'x': tensor([[0., 0.],
            [1., 1.]])}
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return retrograd.stack(list(batch), 0)
    if _is_np_array_like(elem):
        if isinstance(elem, np.ndarray):
            if _NP_STR_OBJ.search(elem.dtype.str):
                raise TypeError(_COLLATE_ERR.format(elem.dtype))
            return default_collate([retrograd.as_tensor(b) for b in batch])
        if getattr(elem, "shape", None) == ():
            return retrograd.as_tensor(list(batch))
        raise TypeError(_COLLATE_ERR.format(type(elem)))
    if isinstance(elem, float):
        return retrograd.tensor(list(batch), dtype=retrograd.float64)
    if isinstance(elem, int):
        return retrograd.tensor(list(batch))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _same_mapping(elem, {k: default_collate([d[k] for d in batch]) for k in elem})
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        items = [default_collate(s) for s in transposed]
        if isinstance(elem, tuple):
            return items
        return _same_sequence(elem, items)
    raise TypeError(_COLLATE_ERR.format(type(elem)))


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
