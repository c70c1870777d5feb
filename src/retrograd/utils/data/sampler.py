"""Samplers: the orders in which a ``DataLoader`` visits a dataset, as in
``torch.utils.data.sampler``."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import numpy as np

import retrograd

from ..._tensor import Tensor
from .dataset import _is_int

__all__ = [
    "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler",
    "WeightedRandomSampler",
]

T_co = TypeVar("T_co", covariant=True)


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
        if self.generator is None:
            # as PyTorch: a fresh generator seeded by one draw of the default generator
            seed = int(retrograd.empty((), dtype=retrograd.int64).random_().item())
            g = retrograd.Generator().manual_seed(seed)
        else:
            g = self.generator
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from retrograd.randint(high=n, size=(32,), generator=g).tolist()
            yield from retrograd.randint(high=n, size=(self.num_samples % 32,),
                                         generator=g).tolist()
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
