"""The gradient reducer under ``nn.parallel.DistributedDataParallel`` (torch's ``dist.Reducer``).

Parameters are grouped into buckets, each one flat array. During backward, each parameter's
post-accumulate-grad hook copies its gradient, scaled by ``1 / world_size``, into its place in
its bucket; when a bucket's last gradient is in, its nonblocking allreduce (SUM) starts, so
communication overlaps the rest of backward. Buckets start strictly in bucket order, whatever
order the hooks fire in, so every rank issues the same collectives in the same order. The hook
that completes the last bucket waits for all of them and writes the averaged gradients back
into ``.grad`` (torch queues this as an engine callback at the end of backward; here it runs in
that last hook, after which backward reaches no parameter).

With ``find_unused_parameters``, the graph behind the forward's outputs is walked to find the
parameters it cannot reach; they count as ready at the first hook (their slots hold their
current gradient, or zeros), and a bitmap of which parameters each rank used is reduced (MAX)
after the buckets: a parameter no rank used keeps its ``.grad`` untouched (None stays None), one
used on some rank gets the average on every rank.

MPI moves a nonblocking operation on only when called, so each hook also polls the pending
requests (one ``Testall``), which lets a bucket's transfer advance while backward runs.
"""

from __future__ import annotations

import functools
import weakref

import numpy as np

from .._creation import from_numpy
from .._tensor import Tensor
from . import _mpi
from ._mpi import array_of, buf
from .distributed_c10d import _resolve

__all__ = ["Reducer"]

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


class Reducer:
    """Averages the gradients of ``parameters`` over ``process_group`` in ``bucket_indices``
    (lists of parameter indices, in the order their allreduces start) during backward. With
    ``gradient_as_bucket_view`` each ``.grad`` is left as a view of its bucket slot.

    Call ``prepare_for_backward(outputs)`` after each forward whose backward should be
    synchronised; other backward passes only accumulate locally (``no_sync``).
    """

    def __init__(self, parameters, bucket_indices, process_group=None,
                 find_unused_parameters: bool = False,
                 gradient_as_bucket_view: bool = False) -> None:
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
        self._index = {id(p): i for i, p in enumerate(self._params)}
        ref = weakref.ref(self)
        self._handles = [p.register_post_accumulate_grad_hook(functools.partial(_on_grad, ref, i))
                         for i, p in enumerate(self._params)]
        self._expect = False
        self._ready: list = []

    def __del__(self) -> None:
        for h in getattr(self, "_handles", ()):
            h.remove()

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

    # -- one iteration -------------------------------------------------------------------------
    def prepare_for_backward(self, outputs=()) -> None:
        """Expect a synchronised backward next; with ``find_unused_parameters``, ``outputs``
        (the forward's tensors) tell which parameters it can reach."""
        if self._expect:
            missing = [i for i, r in enumerate(self._ready) if not r]
            self._expect = False
            raise RuntimeError(_UNFINISHED.format(rank=self._pg.rank(),
                                                  indices=" ".join(map(str, missing))))
        n = len(self._params)
        self._ready = [False] * n
        self._pending = [len(ix) for _, ix in self._buckets]
        self._next = 0
        self._requests: list = []
        self._first = True
        if self._find_unused:
            reached = _reachable_leaves(outputs)
            self._unused = [i for i, p in enumerate(self._params) if id(p) not in reached]
            self._used = np.zeros(n, dtype=np.int32)
        self._expect = True

    def _on_grad(self, i: int) -> None:
        if self._find_unused:
            self._used[i] = 1
            if self._first:
                self._first = False
                for j in self._unused:
                    self._mark_ready(j)
        self._mark_ready(i)
        if self._expect and self._requests:
            _mpi._MPI.Request.Testall(self._requests)   # moves the transfers on

    def _mark_ready(self, i: int) -> None:
        if self._ready[i]:
            raise RuntimeError(_TWICE.format(index=i))
        self._ready[i] = True
        b, view = self._slot[i]
        g = self._params[i].grad
        if g is None:
            view.fill(0)
        else:
            # The 1/world_size scaling happens on the way into the bucket, as torch does it.
            np.multiply(array_of(g), self._scale, out=view, casting="unsafe")
        self._pending[b] -= 1
        if self._pending[b] == 0 and b == self._next:
            self._launch()

    def _launch(self) -> None:
        """Start every ready bucket from the next one on, in order; after the last, finish."""
        MPI = _mpi._MPI
        buckets = self._buckets
        while self._next < len(buckets) and self._pending[self._next] == 0:
            flat = buckets[self._next][0]
            self._requests.append(self._comm.Iallreduce(MPI.IN_PLACE, buf(flat), op=MPI.SUM))
            self._next += 1
        if self._next == len(buckets):
            if self._find_unused:
                self._requests.append(self._comm.Iallreduce(MPI.IN_PLACE, self._used,
                                                            op=MPI.MAX))
            self._finalize()

    def _finalize(self) -> None:
        _mpi._MPI.Request.Waitall(self._requests)
        self._requests = []
        self._expect = False
        used = self._used if self._find_unused else None
        for i, p in enumerate(self._params):
            if used is not None and not used[i]:
                continue  # no rank used it: its .grad stays as it was
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
