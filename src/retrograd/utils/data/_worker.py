"""The DataLoader's worker processes, as in ``torch.utils.data._utils.worker``.

Each worker process seeds itself from the loader's base seed as PyTorch's does (``random`` and
retrograd with ``base_seed + worker_id``, NumPy's legacy global generator with the same
hash of both that PyTorch computes), publishes its ``WorkerInfo`` for ``get_worker_info()``,
runs ``worker_init_fn(worker_id)``, then fetches the batches whose indices arrive on its index
queue and puts them on the shared result queue. An exception in a worker travels back as an
``ExceptionWrapper`` and is raised again in the main process, naming the worker.

Tensors cross the process boundary through multiprocessing's own pickler only (registered here):
plain ``pickle`` still refuses them, as ``retrograd.save`` is the way to store tensors.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import queue
import random
import sys
import traceback
from multiprocessing.reduction import ForkingPickler
from typing import Any

import numpy as np

import retrograd

from ..._tensor import Tensor, make

MP_STATUS_CHECK_INTERVAL = 5.0  # seconds between liveness checks while waiting on a queue


# -- tensors through multiprocessing queues ----------------------------------------------------
def _rebuild_tensor(arr: np.ndarray, requires_grad: bool) -> Tensor:
    t = make(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _reduce_tensor(t: Tensor):
    if t.grad_fn is not None and t.requires_grad:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
            "autograd does not support crossing process boundaries.  If you just want to "
            "transfer the data, call detach() on the tensor before serializing (e.g., putting "
            "it on the queue)."
        )
    return _rebuild_tensor, (np.ascontiguousarray(t._data), t.requires_grad)


ForkingPickler.register(Tensor, _reduce_tensor)


# -- worker information ------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: ``id``, ``num_workers``, ``seed``,
    ``dataset`` (the worker's copy), ``rng`` (None) and ``worker_method``. It is frozen."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """Inside a DataLoader worker process, its ``WorkerInfo`` (``id``, ``num_workers``,
    ``seed``, ``dataset``); in the main process ``None``.

    >>> import retrograd as torch
    >>> torch.utils.data.get_worker_info() is None
    True
    """
    return _worker_info


# -- exceptions from workers -------------------------------------------------------------------
class ExceptionWrapper:
    """An exception caught in a worker, with its traceback as text, to raise again elsewhere."""

    def __init__(self, exc_info: tuple | None = None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self) -> None:
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    """KeyError quotes its message; this keeps the traceback readable."""

    def __repr__(self) -> str:
        return self


class _IterableDatasetStopIteration:
    """A worker's iterable dataset is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at the start of a new pass."""


# -- fetching ----------------------------------------------------------------------------------
class Fetcher:
    """Turns a sampler's index (or list of indices) into a collated batch."""

    def __init__(self, iterable: bool, dataset: Any, auto_collation: bool, collate_fn: Any,
                 drop_last: bool) -> None:
        self.iterable = iterable
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.dataset_iter = iter(dataset) if iterable else None

    def fetch(self, index: Any) -> Any:
        if self.iterable:
            if self.auto_collation:
                data = list(itertools.islice(self.dataset_iter, len(index)))
                if not data or (self.drop_last and len(data) < len(index)):
                    raise StopIteration
                return self.collate_fn(data)
            return self.collate_fn(next(self.dataset_iter))
        ds = self.dataset
        if self.auto_collation:
            getitems = getattr(ds, "__getitems__", None)
            data = getitems(index) if callable(getitems) else [ds[i] for i in index]
        else:
            data = ds[index]
        return self.collate_fn(data)


# -- seeding -----------------------------------------------------------------------------------
_M32 = 0xFFFFFFFF


def numpy_seed(base_seed: int, worker_id: int) -> list[int]:
    """The NumPy seed PyTorch gives worker ``worker_id``: four 32-bit words hashed from the
    worker id and the two halves of the base seed (after NumPy's SeedSequence mixing)."""
    mult_a, mult_b = 0x931E8875, 0x58F38DED
    hash_a = [0x43B0D7E5]

    def hashed(value: int) -> int:
        value = (value ^ hash_a[0]) & _M32
        hash_a[0] = (hash_a[0] * mult_a) & _M32
        value = (value * hash_a[0]) & _M32
        return (value ^ (value >> 16)) & _M32

    def mix(x: int, y: int) -> int:
        r = ((0xCA01F9DD * x) - (0x4973F715 * y)) & _M32
        return (r ^ (r >> 16)) & _M32

    pool = [hashed(v) for v in (worker_id, base_seed & _M32, base_seed >> 32, 0)]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], hashed(pool[src]))
    hash_b = 0x8B51F9DD
    state = []
    for v in pool:
        v = (v ^ hash_b) & _M32
        hash_b = (hash_b * mult_b) & _M32
        v = (v * hash_b) & _M32
        state.append((v ^ (v >> 16)) & _M32)
    return state


# -- the worker's loop -------------------------------------------------------------------------
def worker_loop(iterable: bool, dataset: Any, index_queue: Any, data_queue: Any, done_event: Any,
                auto_collation: bool, collate_fn: Any, drop_last: bool, base_seed: int,
                init_fn: Any, worker_id: int, num_workers: int) -> None:
    """The body of worker process ``worker_id``."""
    global _worker_info
    # the process that started this one (the main process, or the fork server): when it is
    # gone, the worker stops
    parent_pid = os.getppid()
    try:
        seed = base_seed + worker_id
        random.seed(seed)
        retrograd.manual_seed(seed)
        np.random.seed(numpy_seed(base_seed, worker_id))
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = Fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        while os.getppid() == parent_pid:  # stop when the main process is gone
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                fetcher = Fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data: Any = init_exception
                init_exception = None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}"
                        )
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
