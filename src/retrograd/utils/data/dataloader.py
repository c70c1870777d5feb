"""The ``DataLoader``, as in ``torch.utils.data.dataloader``.

With ``num_workers=0`` batches are loaded in the calling process. With ``num_workers > 0`` that
many worker processes (``multiprocessing``, or the given ``multiprocessing_context``) load them,
each with its own copy of the dataset, as PyTorch's do: batches are handed out round-robin,
``prefetch_factor`` per worker ahead, and come back in order (``in_order``). Workers are seeded
from a base seed drawn from the loader's generator (``_worker``), run ``worker_init_fn``, see
their ``get_worker_info()``, and stop at the end of each pass unless ``persistent_workers``. A
worker's exception is raised again in the main process, naming the worker; a worker that dies
is reported by pid. ``pin_memory`` has nothing to pin on the CPU: it warns as PyTorch does and
changes nothing.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import queue
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

import retrograd

from . import _worker
from ._collate import default_collate, default_convert
from ._worker import get_worker_info
from .dataset import Dataset, IterableDataset, _is_int
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

T_co = TypeVar("T_co", covariant=True)


class _InfiniteConstantSampler(Sampler[None]):
    """The sampler of an iterable dataset: ``None`` forever (the dataset decides the end)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


class _BaseIter:
    """What every pass shares: the index stream and the base seed of the workers."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        self._iterable = loader._iterable
        if loader.pin_memory:
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then device "
                "pinned memory won't be used.", UserWarning, stacklevel=3,
            )
        self._index_iter = iter(loader._index_sampler)
        # PyTorch draws the base seed for every pass, workers or not, so the generators' states
        # stay in step with it
        self._base_seed = int(
            retrograd.empty((), dtype=retrograd.int64).random_(generator=loader.generator).item()
        )
        self._yielded = 0

    def __iter__(self) -> _BaseIter:
        return self

    def __len__(self) -> int:
        return len(self._loader)

    def _fetcher(self) -> _worker.Fetcher:
        loader = self._loader
        return _worker.Fetcher(self._iterable, loader.dataset, loader._auto_collation,
                               loader.collate_fn, loader.drop_last)


class _SingleProcessIter(_BaseIter):
    """One pass in the calling process."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._fetch = self._fetcher()
        self._done = False

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        try:
            data = self._fetch.fetch(next(self._index_iter))
        except StopIteration:
            self._done = True
            raise
        self._yielded += 1
        return data


class _MultiProcessIter(_BaseIter):
    """Passes over the data with worker processes (kept between passes when persistent)."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._n = loader.num_workers
        self._prefetch = loader.prefetch_factor
        self._in_order = loader.in_order
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        self._result_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._shutdown = False
        self._index_queues = []
        self._workers = []
        for i in range(self._n):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            w = ctx.Process(
                target=_worker.worker_loop,
                args=(self._iterable, loader.dataset, index_queue, self._result_queue,
                      self._done_event, loader._auto_collation, loader.collate_fn,
                      loader.drop_last, self._base_seed, loader.worker_init_fn, i, self._n),
                daemon=True,
            )
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._reset(first=True)

    def _reset(self, first: bool = False) -> None:
        if not first:
            self._index_iter = iter(self._loader._index_sampler)
            self._yielded = 0
        self._send_idx = 0  # the next task to hand out
        self._rcvd_idx = 0  # the next task to return
        self._task_info: dict = {}  # task -> (worker,) while pending, (worker, data) when early
        self._outstanding = 0
        self._active = [True] * self._n
        self._tasks = [0] * self._n
        self._cycle = itertools.cycle(range(self._n))
        if not first:
            for q in self._index_queues:
                q.put(_worker._ResumeIteration())
            waiting = self._n
            while waiting:
                idx, _ = self._get()
                if isinstance(idx, _worker._ResumeIteration):
                    waiting -= 1
        for _ in range(self._prefetch * self._n):
            self._put_index()

    def _put_index(self) -> None:
        try:
            index = next(self._index_iter)
        except StopIteration:
            return
        most = self._prefetch * self._n
        for _ in range(self._n):  # the next active worker, if any
            wid = next(self._cycle)
            if self._active[wid] and (
                    self._in_order or self._tasks[wid] < most // sum(self._active)):
                break
        else:
            return
        self._index_queues[wid].put((self._send_idx, index))
        self._task_info[self._send_idx] = (wid,)
        self._tasks[wid] += 1
        self._outstanding += 1
        self._send_idx += 1

    def _try_get(self, timeout: float) -> tuple:
        try:
            return True, self._result_queue.get(timeout=timeout)
        except queue.Empty as e:
            dead = [w for i, w in enumerate(self._workers)
                    if self._active[i] and not w.is_alive()]
            for i, w in enumerate(self._workers):
                if w in dead:
                    self._stop_worker(i)
            if dead:
                pids = ", ".join(str(w.pid) for w in dead)
                raise RuntimeError(
                    f"DataLoader worker (pid(s) {pids}) exited unexpectedly"
                ) from e
            return False, None

    def _get(self) -> Any:
        if self._timeout > 0:
            ok, data = self._try_get(self._timeout)
            if not ok:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._try_get(_worker.MP_STATUS_CHECK_INTERVAL)
            if ok:
                return data

    def __next__(self) -> Any:
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info and (len(info) == 2 or self._active[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                wid, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process(data, wid)
            idx, data = self._get()
            self._outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                if self._persistent:
                    self._active[data.worker_id] = False
                else:
                    self._stop_worker(data.worker_id)
                self._put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    return self._process(data, self._task_info.pop(idx)[0])
                self._task_info[idx] += (data,)
            else:
                wid = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process(data, wid)

    def _process(self, data: Any, wid: int) -> Any:
        self._tasks[wid] -= 1
        self._put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        self._yielded += 1
        return data

    def _stop_worker(self, wid: int) -> None:
        self._index_queues[wid].put(None)
        self._active[wid] = False

    def _shutdown_workers(self) -> None:
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._done_event.set()
            for i in range(self._n):
                if self._persistent or self._active[i]:
                    self._stop_worker(i)
            for w in self._workers:
                w.join(timeout=_worker.MP_STATUS_CHECK_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=_worker.MP_STATUS_CHECK_INTERVAL)

    def __del__(self) -> None:
        if hasattr(self, "_workers"):
            self._shutdown_workers()


class DataLoader(Generic[T_co]):
    """Iterate over a dataset in (optionally shuffled) batches.

    ``batch_size=None`` turns batching off (samples come through ``default_convert``). For an
    ``IterableDataset`` the dataset decides the order and no sampler may be given (each worker
    iterates its own copy: use ``get_worker_info()`` to split the stream). ``num_workers > 0``
    loads in worker processes (see the module's docstring); ``timeout`` bounds the wait for a
    worker's batch.

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
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let "
                "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = _mp_context(multiprocessing_context, num_workers)
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
        self._iterator: _MultiProcessIter | None = None
        _check_worker_number(num_workers)  # PyTorch checks here and at each new iterator

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _BaseIter:
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        _check_worker_number(self.num_workers)
        if not self.persistent_workers:
            return _MultiProcessIter(self)
        # persistent workers serve every pass of this loader
        if self._iterator is None:
            self._iterator = _MultiProcessIter(self)
        else:
            self._iterator._reset()
        return self._iterator

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)


def _mp_context(ctx: Any, num_workers: int) -> Any:
    """A multiprocessing context from a context or a start method's name, as PyTorch checks."""
    if ctx is None:
        return None
    if num_workers == 0:
        raise ValueError(
            "multiprocessing_context can only be used with multi-process loading (num_workers "
            f"> 0), but got num_workers={num_workers}"
        )
    if isinstance(ctx, str):
        methods = multiprocessing.get_all_start_methods()
        if ctx not in methods:
            raise ValueError(
                f"multiprocessing_context option should specify a valid start method in "
                f"{methods!r}, but got multiprocessing_context={ctx!r}"
            )
        ctx = multiprocessing.get_context(ctx)
    if not isinstance(ctx, multiprocessing.context.BaseContext):
        raise TypeError(
            "multiprocessing_context option should be a valid context object or a string "
            f"specifying the start method, but got multiprocessing_context={ctx}"
        )
    return ctx


def _check_worker_number(num_workers: int) -> None:
    """PyTorch's warning when more workers are asked for than the process may use CPUs."""
    if not num_workers:
        return
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if usable is not None and num_workers <= usable:
        return
    cpuset = "" if hasattr(os, "sched_getaffinity") else " (`cpuset` is not taken into account)"
    hint = (
        f"Our suggested max number of worker in current system is {usable}{cpuset}, which is "
        "smaller than what this DataLoader is going to create."
        if usable is not None else
        "DataLoader is not able to compute a suggested max number of worker in current system."
    )
    warnings.warn(
        f"This DataLoader will create {num_workers} worker processes in total. {hint} Please be "
        "aware that excessive worker creation might get DataLoader running slow or even freeze, "
        "lower the worker number to avoid potential slowness/freeze if necessary.",
        UserWarning, stacklevel=3,
    )
