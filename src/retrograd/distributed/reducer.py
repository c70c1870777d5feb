"""The gradient reducer under ``nn.parallel.DistributedDataParallel`` (torch's ``dist.Reducer``).

Parameters are grouped into buckets. During backward, each parameter's post-accumulate-grad
hook scales its gradient by ``1 / world_size`` (as torch does on the way into its bucket);
when a bucket's last gradient is in, its allreduces (SUM) start. Buckets start strictly in
bucket order, whatever order the hooks fire in, so every rank issues the same collectives in
the same order. The hook that completes the last bucket waits for all of them (torch queues
this as an engine callback at the end of backward; here it runs in that last hook, after which
backward reaches no parameter).

Where the gradients travel. When every rank of the group is on this machine (the usual
single-node job, up to ``_shm.MAX_RANKS`` ranks), through node shared memory (``_shm``): each
hook copies its gradient, scaled by 1/world_size, into this rank's slot, and once every rank
has written a bucket each rank sums the bucket's slots straight into its own ``.grad`` (on the
bench's MLP, 2.7 MB of gradients: 1.6 ms from the first bucket's start to the end, where MPI's
allreduce took 1.7 ms for the transfers alone after a 0.3 ms scaling pass; MPI moves data
between processes of one node with kernel copies that pin the peer's pages on every call).
Otherwise (ranks on several nodes, or ``RETROGRAD_DDP_SHM=0``) each gradient is scaled and
reduced in place in its own ``.grad`` array, one MPI allreduce per parameter within its
bucket's turn, so no bucket copy is made on the way in or out. Either way, a gradient that
must stay as it is until the end (a parameter this rank did not use), or that MPI cannot take
as it is, is reduced in a new array and copied back at the end. With
``gradient_as_bucket_view`` or a communication hook the bucket is one flat private array, as
in torch: the gradients are copied (scaled, without a hook) into their slots, the bucket is
reduced as a whole through MPI, and the results go back into ``.grad`` (or ``.grad`` stays a
view of its slot). (So on the in-place path a ``.grad`` read during backward, after its hook,
holds a value in transit; torch's holds the local gradient until the end. After backward both
hold the average.)

Overlap. MPI moves a nonblocking collective on only inside MPI calls: an ``Iallreduce`` started
from a hook sits still while NumPy computes the rest of backward, and polling it from the later
hooks (there are few: one per parameter) moved little of it (mpich, 2 ranks: 0% hidden).
``MPICH_ASYNC_PROGRESS=1`` gives each process a progress thread that spins, which on a machine
with one core per rank took a core's worth of compute from each (2.5x fewer samples/s). So, as
torch's ProcessGroupMPI and ProcessGroupGloo do, the allreduces run on a worker thread of the
reducer, in MPI's blocking ``Allreduce`` on a communicator of its own: the hook only queues the
bucket; MPI releases the GIL while it transfers and NumPy while it computes, so the transfer
proceeds during the rest of backward.

A communication hook (``register_comm_hook(state, hook)``) is called on the main thread with
each ready bucket as a :class:`GradBucket` and returns a ``retrograd.futures.Future`` of the
reduced buffer; later gradient hooks poll the pending futures (which moves their collectives
on), the last waits for them and copies each result into its bucket.

Re-bucketing (torch's ``_rebuild_buckets``): with ``record_ready_order``, the order in which
gradients arrive during the first synchronised backward is kept in ``ready_order``;
``rebuild(bucket_indices)`` (DDP's next forward) then replaces the buckets with rank 0's choice.

With ``find_unused_parameters``, the graph behind the forward's outputs is walked to find the
parameters it cannot reach; they count as ready at the first hook (reducing a scaled copy of
their current gradient, or zeros), and a bitmap of which parameters each rank used is reduced (MAX)
after the buckets: a parameter no rank used keeps its ``.grad`` untouched (None stays None), one
used on some rank gets the average on every rank.

Each synchronised backward's timings are kept as torch's DDP logging data names them
(``stats``): the backward's compute (from the end of forward to the last gradient), its
communication (from the first allreduce to the end of the last), and their overlap.
"""

from __future__ import annotations

import functools
import os
import queue
import threading
import time
import weakref

import numpy as np

from .._creation import from_numpy
from .._tensor import Tensor
from ..futures import Future
from . import _mpi
from ._mpi import array_of, buf
from ._shm import SharedGrads
from .distributed_c10d import _resolve

__all__ = ["GradBucket", "Reducer"]

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \n"
    "If you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` "
    "function. Please include the loss function and the structure of the return value of "
    "`forward` of your module when reporting this issue (e.g. list, dict, iterable).\n"
    "Parameter indices which did not receive grad for rank {rank}: {indices}"
)

_TWICE = (
    "Expected to mark a variable ready only once. This error is caused by one of the "
    "following reasons: 1) Use of a module parameter outside the `forward` function. Please "
    "make sure model parameters are not shared across multiple concurrent forward-backward "
    "passes. or try to use _set_static_graph() as a workaround if this module graph does not "
    "change during training loop.2) Reused parameters in multiple reentrant backward passes. "
    "For example, if you use multiple `checkpoint` functions to wrap the same part of your "
    "model, it would result in the same set of parameters been used by different reentrant "
    "backward passes multiple times, and hence marking a variable ready multiple times. DDP "
    "does not support such use cases in default. Parameter at index {index} has been marked "
    "as ready twice."
)


def _on_grad(ref, index: int, param) -> None:
    reducer = ref()
    if reducer is not None and reducer._expect:
        reducer._on_grad(index)


_IN_PLACE, _FRESH, _COPY = "in place", "fresh", "copy"
_POLL_US = float(os.environ.get("RETROGRAD_DDP_POLL_US", "50"))
_SUMMED = ("backward_compute_time", "backward_comm_time", "backward_compute_comm_overlap_time",
           "backward_comm_busy_in_compute_time", "backward_comm_busy_time")


def _now() -> int:
    return time.perf_counter_ns()


class GradBucket:
    """One bucket of gradients, as a communication hook gets it (torch's ``dist.GradBucket``):
    the flat ``buffer()``, the ``gradients()`` (views of it, one per parameter) and their
    ``parameters()``, in the bucket's order."""

    def __init__(self, index: int, buffer: Tensor, gradients: list, parameters: list,
                 is_last: bool) -> None:
        self._index = index
        self._buffer = buffer
        self._gradients = gradients
        self._parameters = parameters
        self._is_last = is_last

    def index(self) -> int:
        """The bucket's index (0 is the first to be reduced)."""
        return self._index

    def buffer(self) -> Tensor:
        """The bucket's gradients, flattened into one 1-D tensor."""
        return self._buffer

    def gradients(self) -> list:
        """Each parameter's gradient: views of ``buffer()``."""
        return list(self._gradients)

    def parameters(self) -> list:
        """The parameters whose gradients the bucket holds."""
        return list(self._parameters)

    def is_last(self) -> bool:
        """Whether this is the last bucket of the iteration."""
        return self._is_last

    def set_buffer(self, buffer: Tensor) -> None:
        """Replace the bucket's buffer (for hooks that wrap others, as fp16_compress_wrapper)."""
        self._buffer = buffer


def _work(todo, done) -> None:
    """The reducer's worker thread: runs each queued bucket reduction (``_reduce`` with MPI's
    blocking Allreduce, or ``SharedGrads.reduce``; both release the GIL while they move or
    add data), in queue order; ``done`` gets, per bucket, its (start, end) times or the error.

    MPI waits by spinning, and a rank's worker often gets there before the other rank's
    backward does: spinning then would take a core from this rank's backward and, with one core
    per rank, from the other rank too. So the worker first waits for every rank in a
    nonblocking barrier, polled between short sleeps (``RETROGRAD_DDP_POLL_US``, 50 by
    default; 0 spins), and starts the allreduce once all are there. Not for the last bucket:
    backward has nothing left to compute then, and spinning answers sooner.
    """
    while True:
        job = todo.get()
        if job is None:
            return
        _run(job, done)


def _run(job, done) -> None:
    """Run one bucket's reduction; put its (start, end) times or its error on ``done``."""
    t0 = _now()
    try:
        job()
    except Exception as e:  # noqa: BLE001 - handed to the main thread, raised there
        done.put(e)
    else:
        done.put((t0, _now()))


def _reduce(comm, arrays, op, poll) -> None:
    """One bucket through MPI: wait for every rank (if ``poll``; see ``_work``), then
    allreduce each buffer in place."""
    MPI = _mpi._MPI
    pause = _POLL_US * 1e-6
    if poll and pause > 0:
        arrived = comm.Ibarrier()
        while not arrived.Test():
            time.sleep(pause)
    for a in arrays:
        comm.Allreduce(MPI.IN_PLACE, a, op=op)


class Reducer:
    """Averages the gradients of ``parameters`` over ``process_group`` in ``bucket_indices``
    (lists of parameter indices, in the order their allreduces start) during backward. With
    ``gradient_as_bucket_view`` each ``.grad`` is left as a view of its bucket slot.

    Call ``prepare_for_backward(outputs)`` after each forward whose backward should be
    synchronised; other backward passes only accumulate locally (``no_sync``).
    """

    def __init__(self, parameters, bucket_indices, process_group=None,
                 find_unused_parameters: bool = False,
                 gradient_as_bucket_view: bool = False,
                 record_ready_order: bool = False) -> None:
        pg = _resolve(process_group)
        if pg is None:
            raise RuntimeError("Reducer: this rank is not a member of the process group")
        self._pg = pg
        self._comm = pg._comm
        self._params = list(parameters)
        self._find_unused = bool(find_unused_parameters)
        self._as_view = bool(gradient_as_bucket_view)
        self._scale = 1.0 / pg.size()
        self._verify()
        # The worker's own communicator: its allreduces never meet the main thread's
        # collectives. Dup is collective; every rank builds its DDP module at the same point.
        self._wcomm = self._comm.Dup()
        # Averaging through node shared memory where every rank is on this node (see _shm);
        # not with bucket views or a communication hook, whose buckets are flat arrays.
        self._shm = None if self._as_view else SharedGrads.create(
            self._wcomm, [array_of(p) for p in self._params])
        self._parity = 0          # which set of shared slots the next backward writes
        self._set_buckets(bucket_indices)
        ref = weakref.ref(self)
        self._handles = [p.register_post_accumulate_grad_hook(functools.partial(_on_grad, ref, i))
                         for i, p in enumerate(self._params)]
        self._expect = False
        self._ready: list = []
        self._hook = None
        # The gradient order of the first synchronised backward, for rebuild (None: not kept).
        self.ready_order: list | None = [] if record_ready_order else None
        # The last synchronised backward's timings (torch's names, in ns), and their sums.
        self.stats: dict = {}
        self.stats_sum: dict = {}
        self.stats_count = 0
        self._todo: queue.SimpleQueue = queue.SimpleQueue()
        self._done: queue.SimpleQueue = queue.SimpleQueue()
        self._worker = None

    def __del__(self) -> None:
        for h in getattr(self, "_handles", ()):
            h.remove()
        if getattr(self, "_worker", None) is not None:
            self._todo.put(None)
        comm = getattr(self, "_wcomm", None)
        MPI = _mpi._MPI
        try:
            if comm is not None and MPI is not None and not MPI.Is_finalized():
                comm.Free()   # a program that builds many DDP modules must not run out of them
        except (TypeError, AttributeError):
            pass   # at interpreter exit, with mpi4py's module already torn down

    def _set_buckets(self, bucket_indices) -> None:
        seen = sorted(i for ix in bucket_indices for i in ix)
        if seen != list(range(len(self._params))):
            raise ValueError("bucket_indices must name every parameter exactly once")
        self._buckets = []       # (flat array, [param index, ...])
        self._slot = [None] * len(self._params)   # param index -> (bucket, view of its slot)
        for b, ix in enumerate(bucket_indices):
            arrays = [array_of(self._params[i]) for i in ix]
            if len({a.dtype for a in arrays}) > 1:
                raise ValueError("a bucket's parameters must share one dtype")
            flat = np.empty(sum(a.size for a in arrays), dtype=arrays[0].dtype if arrays
                            else np.float32)
            off = 0
            for i, a in zip(ix, arrays):
                self._slot[i] = (b, flat[off:off + a.size].reshape(a.shape))
                off += a.size
            self._buckets.append((flat, list(ix)))

    @property
    def bucket_indices(self) -> list:
        """The parameter indices of each bucket, in launch order."""
        return [list(ix) for _, ix in self._buckets]

    def _verify(self) -> None:
        """Every rank must hold the same parameters (count, shapes, dtypes), as torch checks
        before syncing the model: a mismatch would make the buckets disagree."""
        mine = [(tuple(p.shape), str(p.dtype)) for p in self._params]
        everyone = self._comm.allgather(mine)
        first = everyone[0]
        for r, theirs in enumerate(everyone):
            if len(theirs) != len(first):
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank {r} has {len(theirs)} "
                    f"params, while rank 0 has inconsistent {len(first)} params.")
            for i, (a, b) in enumerate(zip(theirs, first)):
                if a != b:
                    raise RuntimeError(
                        f"DDP expects same model across all ranks, but parameter {i} has "
                        f"shape {list(a[0])} {a[1]} on rank {r} and {list(b[0])} {b[1]} on "
                        "rank 0.")

    def register_comm_hook(self, state, hook) -> None:
        """Reduce each bucket with ``hook(state, bucket) -> Future[Tensor]`` instead."""
        if self._hook is not None:
            raise RuntimeError(
                "register_comm_hook or register_builtin_comm_hook can only be called once.")
        self._hook = (hook, state)

    def set_divisor(self, n: int) -> None:
        """Divide the next backward's gradient sums by ``n`` (the world size unless DDP's
        ``join`` says fewer ranks train)."""
        self._scale = 1.0 / n

    def match_backward(self) -> None:
        """A joined rank's side of one synchronised backward of the others (torch's
        ``_match_all_reduce_for_bwd_pass``): the same collectives in the same order, with zero
        gradients; its own ``.grad`` is left alone."""
        MPI = _mpi._MPI
        self._queued = 0
        futures = []
        for b, (flat, ix) in enumerate(self._buckets):
            if self._hook is not None:
                zeros = np.zeros_like(flat)
                views, off = [], 0
                for i in ix:
                    shape = self._slot[i][1].shape
                    size = self._slot[i][1].size
                    views.append(from_numpy(zeros[off:off + size].reshape(shape)))
                    off += size
                hook, state = self._hook
                futures.append(hook(state, GradBucket(b, from_numpy(zeros), views,
                                                      [self._params[i] for i in ix],
                                                      b == len(self._buckets) - 1)))
            elif self._shm is not None:   # (as the others' _launch: the same calls)
                slots = self._shm.slots[self._parity][self._pg.rank()]
                for i in ix:
                    slots[i].fill(0)
                self._queue_shm(b, [(i, None) for i in ix])
            elif self._as_view:
                self._queue([buf(np.zeros_like(flat))], self._sum(b), b < len(self._buckets) - 1)
            else:
                self._queue([buf(np.zeros_like(self._slot[i][1])) for i in ix], self._sum(b),
                            b < len(self._buckets) - 1)
        if self._find_unused:
            self._queue([np.zeros(len(self._params), dtype=np.int32)], MPI.MAX, False)
        self._parity ^= 1 if self._shm is not None else 0
        errors = [r for r in (self._done.get() for _ in range(self._queued))
                  if isinstance(r, BaseException)]
        for fut in futures:
            fut.wait()
        if errors:
            raise RuntimeError(f"DDP allreduce failed: {errors[0]}") from errors[0]

    def rebuild(self, bucket_indices) -> None:
        """Replace the buckets with ``bucket_indices`` as rank 0 gives them (every rank then
        reduces the same buckets, whatever order its own gradients arrived in)."""
        self.ensure_prior_reduction_finished()
        self._set_buckets(self._comm.bcast([list(ix) for ix in bucket_indices], root=0))
        self.ready_order = None

    # -- one iteration -------------------------------------------------------------------------
    def ensure_prior_reduction_finished(self) -> None:
        """torch's error when the previous synchronised backward left parameters unreduced."""
        if self._expect:
            missing = [i for i, r in enumerate(self._ready) if not r]
            self._expect = False
            raise RuntimeError(_UNFINISHED.format(rank=self._pg.rank(),
                                                  indices=" ".join(map(str, missing))))

    def prepare_for_backward(self, outputs=()) -> None:
        """Expect a synchronised backward next; with ``find_unused_parameters``, ``outputs``
        (the forward's tensors) tell which parameters it can reach."""
        self.ensure_prior_reduction_finished()
        if self._shm is not None and self._shm.freed:
            raise RuntimeError("DistributedDataParallel used after destroy_process_group(): "
                               "its process group is gone")
        n = len(self._params)
        self._ready = [False] * n
        self._pending = [len(ix) for _, ix in self._buckets]
        self._next = 0
        self._futures: list = []
        self._queued = 0
        self._first = True
        self._t = {"backward_compute_time_start": _now()}
        # Without a hook or bucket views, each gradient is reduced where it is (no bucket):
        # (array, how it gets back into .grad) per parameter.
        self._direct = self._hook is None and not self._as_view
        self._shared = self._direct and self._shm is not None
        self._own: list = [None] * n
        self._unused_set: set = set()
        if self._find_unused:
            reached = _reachable_leaves(outputs)
            self._unused = [i for i, p in enumerate(self._params) if id(p) not in reached]
            self._unused_set = set(self._unused)
            self._used = np.zeros(n, dtype=np.int32)
        self._expect = True

    def _on_grad(self, i: int) -> None:
        if self.ready_order is not None:
            self.ready_order.append(i)
        if self._find_unused:
            self._used[i] = 1
            if self._first:
                self._first = False
                for j in self._unused:
                    self._mark_ready(j)
        self._mark_ready(i)
        for fut in self._futures:
            fut.done()    # polls a hook's collective, which moves it on

    def _mark_ready(self, i: int) -> None:
        if self._ready[i]:
            raise RuntimeError(_TWICE.format(index=i))
        self._ready[i] = True
        b, view = self._slot[i]
        g = self._params[i].grad
        if self._direct:
            self._own[i] = self._take(i, g, view)
        elif g is None:
            view.fill(0)
        elif self._hook is None:
            # The 1/world_size scaling happens on the way into the bucket, as torch does it.
            np.multiply(array_of(g), self._scale, out=view, casting="unsafe")
        else:
            np.copyto(view, array_of(g), casting="unsafe")
        self._pending[b] -= 1
        if self._pending[b] == 0 and b == self._next:
            self._launch()

    def _take(self, i: int, g, view) -> tuple:
        """The array to reduce for parameter ``i`` and how it returns into ``.grad``: its own
        gradient, scaled in place by 1/world_size (as torch scales on the way into the bucket),
        or a scaled copy where the gradient must stay as it is until the end (a parameter this
        rank did not use: no rank may have) or cannot go to MPI as it is. In shared memory,
        the scaled gradient goes into this rank's slot, and the array is where the average
        will be summed: the gradient itself, or a new array in those cases."""
        a = None if g is None else array_of(g)
        if self._shared:
            slot = self._shm.slots[self._parity][self._pg.rank()][i]
            if a is None:
                slot.fill(0)
                return np.empty(view.shape, view.dtype), _FRESH
            np.multiply(a, self._scale, out=slot, casting="unsafe")
            if i in self._unused_set or not (a.flags.c_contiguous and a.flags.writeable):
                return np.empty(view.shape, view.dtype), _COPY
            return a, _IN_PLACE
        if a is None:
            return np.zeros(view.shape, view.dtype), _FRESH
        if i in self._unused_set or not (a.flags.c_contiguous and a.flags.writeable):
            return np.multiply(a, self._scale, out=np.empty(view.shape, view.dtype),
                               casting="unsafe"), _COPY
        np.multiply(a, self._scale, out=a, casting="unsafe")
        return a, _IN_PLACE

    def _sum(self, b: int):
        """MPI's sum for bucket ``b``'s dtype (NumPy's, run by MPI, for bfloat16)."""
        return _mpi.mpi_op(_mpi.ReduceOp.SUM, self._buckets[b][0].dtype)

    def _queue(self, array, op, poll: bool = True) -> None:
        """Hand a bucket's buffers to the worker for MPI's allreduce. ``poll=False`` for the
        last ones of the backward: nothing is left to compute then, so MPI may as well spin."""
        self._submit(functools.partial(_reduce, self._wcomm, array, op, poll),
                     functools.partial(_reduce, self._wcomm, array, op, False))

    def _queue_shm(self, b: int, pairs: list) -> None:
        """Hand bucket ``b`` to the worker for the shared-memory sums into ``pairs``'
        (parameter index, output array)."""
        last = b == len(self._buckets) - 1
        self._submit(functools.partial(self._shm.reduce, self._parity, pairs, not last),
                     functools.partial(self._shm.reduce, self._parity, pairs, False))

    def _submit(self, job, inline) -> None:
        self._queued += 1
        if _mpi._MPI.Query_thread() != _mpi._MPI.THREAD_MULTIPLE:
            # MPI allows calls from one thread at a time only: reduce here, without overlap.
            _run(inline, self._done)
            return
        if self._worker is None:
            self._worker = threading.Thread(target=_work, args=(self._todo, self._done),
                                            name="retrograd-ddp-allreduce", daemon=True)
            self._worker.start()
        self._todo.put(job)

    def _launch(self) -> None:
        """Start every ready bucket from the next one on, in order; after the last, finish."""
        MPI = _mpi._MPI
        buckets = self._buckets
        while self._next < len(buckets) and self._pending[self._next] == 0:
            if self._next == 0:
                self._t["backward_comm_time_start"] = _now()
            last = self._next == len(buckets) - 1
            if self._shared:
                self._queue_shm(self._next, [(i, self._own[i][0])
                                             for i in buckets[self._next][1]])
            elif self._direct:
                self._queue([buf(self._own[i][0]) for i in buckets[self._next][1]],
                            self._sum(self._next), not last)
            elif self._hook is None:
                self._queue([buf(buckets[self._next][0])], self._sum(self._next), not last)
            else:
                self._futures.append(self._call_hook(self._next))
            self._next += 1
        if self._next == len(buckets):
            self._t["backward_compute_time_end"] = _now()
            if self._shared:
                self._parity ^= 1
            if self._find_unused:
                self._queue([self._used], MPI.MAX, False)
            self._finalize()

    def _call_hook(self, b: int):
        flat, ix = self._buckets[b]
        bucket = GradBucket(b, from_numpy(flat), [from_numpy(self._slot[i][1]) for i in ix],
                            [self._params[i] for i in ix], b == len(self._buckets) - 1)
        hook, state = self._hook
        fut = hook(state, bucket)
        if not isinstance(fut, Future):
            self._expect = False
            raise RuntimeError("DDP communication hook's callback must return a "
                               "torch.futures.Future object, but got "
                               f"{type(fut).__module__}.{type(fut).__qualname__}")
        return fut

    def _finalize(self) -> None:
        self._expect = False
        error = None
        spans = []
        for _ in range(self._queued):
            r = self._done.get()
            if isinstance(r, BaseException):
                error = error or r
            else:
                spans.append(r)
        if error is not None:
            raise RuntimeError(f"DDP allreduce failed: {error}") from error
        for b, fut in enumerate(self._futures):
            self._take_result(b, fut.wait())
        t = self._t
        t["backward_comm_time_end"] = _now()
        self._record(t, spans)
        used = self._used if self._find_unused else None
        own, self._own = self._own, []
        for i, p in enumerate(self._params):
            if used is not None and not used[i]:
                continue  # no rank used it: its .grad stays as it was
            if self._direct:
                arr, how = own[i]
                if how is _FRESH:
                    p.grad = from_numpy(arr)
                elif how is _COPY:
                    np.copyto(array_of(p.grad), arr)
                continue
            view = self._slot[i][1]
            g = p.grad
            if self._as_view:
                # .grad becomes (or stays) a view of its bucket slot: no copy back, and the
                # next backward accumulates straight into the bucket.
                if g is None or not np.shares_memory(array_of(g), view):
                    p.grad = from_numpy(view)
            elif g is None:
                p.grad = from_numpy(view.copy())
            else:
                np.copyto(array_of(g), view)

    def _take_result(self, b: int, result) -> None:
        """A hook's reduced buffer into bucket ``b`` (nothing to do when it is the bucket)."""
        flat = self._buckets[b][0]
        if not isinstance(result, Tensor):
            raise RuntimeError("DDP communication hook's Future must hold a tensor, got "
                               f"{type(result).__name__}")
        r = array_of(result)
        if r.size != flat.size:
            raise RuntimeError(f"DDP communication hook returned {r.size} elements for a "
                               f"bucket of {flat.size}")
        if not np.shares_memory(r, flat):
            np.copyto(flat, r.reshape(-1), casting="unsafe")

    def _record(self, t: dict, spans: list) -> None:
        c0, c1 = t["backward_compute_time_start"], t["backward_compute_time_end"]
        m0, m1 = t["backward_comm_time_start"], t["backward_comm_time_end"]
        t["backward_compute_time"] = c1 - c0
        t["backward_comm_time"] = m1 - m0
        t["backward_compute_comm_overlap_time"] = max(0, c1 - m0)
        # How long the worker was actually transferring while backward still computed.
        t["backward_comm_busy_in_compute_time"] = sum(max(0, min(e, c1) - max(s, c0))
                                                     for s, e in spans)
        t["backward_comm_busy_time"] = sum(e - s for s, e in spans)
        t["num_buckets_reduced"] = len(self._buckets)
        self.stats = t
        for k in _SUMMED:
            self.stats_sum[k] = self.stats_sum.get(k, 0) + t[k]
        self.stats_count += 1


def _reachable_leaves(outputs) -> set:
    """ids of the leaf tensors the graph behind ``outputs`` reaches (through public
    ``grad_fn``/``next_functions`` and ``AccumulateGrad.variable``)."""
    found: set = set()
    stack = []
    for t in outputs:
        if isinstance(t, Tensor):
            if t.grad_fn is not None:
                stack.append(t.grad_fn)
            elif t.requires_grad:
                found.add(id(t))
    seen = set(stack)
    while stack:
        fn = stack.pop()
        var = getattr(fn, "variable", None)
        if var is not None:
            found.add(id(var))
        for nxt, _ in fn.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return found
