"""DDP's buckets in node shared memory: gradient averaging without MPI's point-to-point copies
when every rank of the process group runs on one machine.

Between processes of one node, MPICH's allreduce moves each message with a single-copy kernel
transfer (CMA, ``process_vm_readv``) that pins the pages of the peer on every call: on the MLP
of ``bench/bench_distributed.py`` (2.7 MB of float32 gradients in two buckets, 2 ranks) those
allreduces took 1.7 ms a step (profile: ``follow_page_pte`` the largest item), after a 0.3 ms
pass scaling the gradients, against about 1.0 ms for the scheme here, scaling included. The
buckets live in an MPI-3 shared-memory window (``MPI_Win_allocate_shared`` on the group's
communicator; no other channel):

- each rank's slot holds its buckets; the reducer's hooks write the scaled gradients there, as
  they write them into a private bucket otherwise (the copy is the scaling pass);
- per bucket, once every rank has written it (a barrier), rank ``k`` sums chunk ``k`` of every
  rank's slot, in rank order, into the shared result; after the last bucket a second barrier,
  and every rank copies the result back into its ``.grad``.

Each element is summed once, by one rank, so the result is bitwise the same on every rank.
Every rank issues the same barriers in the same order (one per bucket, one at the end).
Nothing is written before it is safe: a slot is rewritten only after the end barrier of the
previous backward (so no rank is still summing from it), the result only after the first
barrier of the next one (so no rank is still copying from it).

``RETROGRAD_DDP_SHM=0`` turns it off (then each bucket goes through MPI's allreduce). The
windows stay allocated until ``destroy_process_group``: freeing a window is collective, which
the garbage collector of each rank, running when it likes, cannot be.
"""

from __future__ import annotations

import os
import time

import numpy as np

from . import _mpi

__all__ = ["SharedBuckets", "free_all"]

_ALIGN = 64
_live: list = []     # every SharedBuckets of this process, freed together by free_all


def _up(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def free_all() -> None:
    """Free every window (``destroy_process_group`` calls this on every rank alike, and they
    were made in the same order on every rank)."""
    while _live:
        shm = _live.pop(0)
        shm._buckets, shm._seg = [], None
        shm.freed = True
        shm._win.Unlock_all()
        shm._win.Free()


class SharedBuckets:
    """Each rank's bucket slots and the shared result, in one window of ``comm``'s node."""

    @classmethod
    def create(cls, comm, nbytes: int, count: int):
        """For buckets of ``count`` tensors of ``nbytes`` in all; collective over ``comm``.
        None where shared memory does not apply (ranks on several nodes, or turned off)."""
        if os.environ.get("RETROGRAD_DDP_SHM", "1") == "0" or comm.Get_size() < 2:
            return None
        MPI = _mpi._MPI
        node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
        whole = node.Get_size() == comm.Get_size()
        node.Free()
        return cls(comm, _up(nbytes) + _ALIGN * count) if whole else None

    def __init__(self, comm, stride: int) -> None:
        MPI = _mpi._MPI
        n, r = comm.Get_size(), comm.Get_rank()
        self._comm, self._n, self._r = comm, n, r
        self._stride = stride     # bytes of one slot: enough for any bucketing of the tensors
        # One segment, all of it on rank 0 (so that it is contiguous): n slots, then the result.
        self._win = MPI.Win.Allocate_shared(stride * (n + 1) if r == 0 else 0, 1, comm=comm)
        self._win.Lock_all(MPI.MODE_NOCHECK)
        self._seg = np.frombuffer(self._win.Shared_query(0)[0], dtype=np.uint8)
        self._buckets: list = []
        self.freed = False      # after destroy_process_group: its memory is gone
        _live.append(self)

    def layout(self, buckets: list) -> list:
        """Place buckets given as (dtype, element count); returns each one's (this rank's
        slot, the result), flat arrays of that dtype."""
        if self.freed:
            raise RuntimeError("DistributedDataParallel used after destroy_process_group(): "
                               "its process group is gone")
        out, self._buckets, off = [], [], 0
        for dtype, m in buckets:
            dtype = np.dtype(dtype)
            nb = m * dtype.itemsize

            def at(base, off=off, nb=nb, dtype=dtype):
                return self._seg[base + off:base + off + nb].view(dtype)

            slots = [at(k * self._stride) for k in range(self._n)]
            result = at(self._n * self._stride)
            self._buckets.append((slots, result))
            out.append((slots[self._r], result))
            off += _up(nb)
        if off > self._stride:
            raise RuntimeError("DDP: buckets larger than their shared-memory window")
        return out

    def reduce(self, b: int, poll: bool, last: bool) -> None:
        """Bucket ``b``: wait until every rank has written it (without spinning when ``poll``:
        see ``reducer._work``), sum this rank's chunk, and after the last bucket wait until
        every rank has summed its own."""
        slots, result = self._buckets[b]
        self._barrier(poll)
        m, n, r = result.size, self._n, self._r
        lo, hi = r * m // n, (r + 1) * m // n
        np.add(slots[0][lo:hi], slots[1][lo:hi], out=result[lo:hi])
        for k in range(2, n):
            np.add(result[lo:hi], slots[k][lo:hi], out=result[lo:hi])
        if last:
            self._barrier(False)

    def _barrier(self, poll: bool) -> None:
        # Win_sync on both sides of the barrier: what a rank wrote before is seen after
        # (MPI's rule for load/store access to a shared window).
        self._win.Sync()
        pause = _POLL_S if poll else 0.0
        if pause > 0:
            arrived = self._comm.Ibarrier()
            while not arrived.Test():
                time.sleep(pause)
        else:
            self._comm.Barrier()
        self._win.Sync()


_POLL_S = float(os.environ.get("RETROGRAD_DDP_POLL_US", "50")) * 1e-6
