"""DDP's gradient averaging through node shared memory, for process groups whose ranks all run
on one machine (up to ``MAX_RANKS`` of them): no MPI point-to-point copies.

Between processes of one node, MPICH's allreduce moves each message with a single-copy kernel
transfer (CMA, ``process_vm_readv``) that pins the pages of the peer on every call: on the MLP
of ``bench/bench_distributed.py`` (2.7 MB of float32 gradients in two buckets, 2 ranks) those
allreduces took 1.7 ms a step (profile: ``follow_page_pte`` the largest item), after a 0.3 ms
pass scaling the gradients in place. Here each rank has a slot in an MPI-3 shared-memory window
(``MPI_Win_allocate_shared`` on the group's communicator; no other channel) with room for every
gradient:

- the reducer's hook copies each gradient, scaled by 1/world_size, into this rank's slot (the
  copy is the scaling pass);
- per bucket, once every rank has written it (a barrier), every rank sums the bucket's entries
  of all slots, in rank order, straight into its own ``.grad`` arrays.

The sum is the same operations on the same values in the same order on every rank, so the
averages are bitwise equal across ranks; no result is copied back and one barrier per bucket
is the only synchronisation. (Each rank reads every slot, so the traffic grows with the number
of ranks: beyond ``MAX_RANKS`` MPI's allreduce is used.) There are two sets of slots, used in
turn by successive backward passes: a rank may write the next backward's gradients while a
slower one still sums this one's, and a slot is rewritten only two backward passes later, once
every rank has passed the first barrier of the one in between (so has finished reading it).

``RETROGRAD_DDP_SHM=0`` turns it off. The windows stay allocated until
``destroy_process_group``: freeing a window is collective, which the garbage collector of each
rank, running when it likes, cannot be.
"""

from __future__ import annotations

import os
import time

import numpy as np

from . import _mpi

__all__ = ["MAX_RANKS", "SharedGrads", "free_all"]

MAX_RANKS = 4
_ALIGN = 64
_live: list = []     # every SharedGrads of this process, freed together by free_all


def _up(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def free_all() -> None:
    """Free every window (``destroy_process_group`` calls this on every rank alike, and they
    were made in the same order on every rank)."""
    while _live:
        shm = _live.pop(0)
        shm.slots = [[], []]
        shm.freed = True
        shm._win.Unlock_all()
        shm._win.Free()


class SharedGrads:
    """Two sets of per-rank slots in one shared window of ``comm``'s node, each slot holding
    one entry per tensor (``slots[parity][rank][i]``, an array of tensor ``i``'s shape)."""

    @classmethod
    def create(cls, comm, arrays: list):
        """Slots for tensors like ``arrays``; collective over ``comm``. None where shared
        memory does not apply (ranks on several nodes, too many, turned off, or too little
        room in /dev/shm, where MPICH puts the window: at most half of what is free there, as
        a tmpfs that runs out while the window is filled kills the process)."""
        n = comm.Get_size()
        if os.environ.get("RETROGRAD_DDP_SHM", "1") == "0" or not 2 <= n <= MAX_RANKS:
            return None
        MPI = _mpi._MPI
        node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
        whole = node.Get_size() == n
        node.Free()
        need = 2 * n * sum(_up(a.nbytes) for a in arrays)
        ok = whole and need <= _free_shm() // 2
        return cls(comm, arrays) if comm.allreduce(ok, op=MPI.LAND) else None

    def __init__(self, comm, arrays: list) -> None:
        MPI = _mpi._MPI
        n, r = comm.Get_size(), comm.Get_rank()
        self._comm = comm
        offsets, stride = [], 0
        for a in arrays:
            offsets.append(stride)
            stride += _up(a.nbytes)
        # One segment, all of it on rank 0 (so that it is contiguous): 2 x n slots.
        self._win = MPI.Win.Allocate_shared(2 * n * stride if r == 0 else 0, 1, comm=comm)
        self._win.Lock_all(MPI.MODE_NOCHECK)
        seg = np.frombuffer(self._win.Shared_query(0)[0], dtype=np.uint8)
        self.slots = [[[seg[base + o:base + o + a.nbytes].view(a.dtype).reshape(a.shape)
                        for o, a in zip(offsets, arrays)]
                       for base in ((p * n + k) * stride for k in range(n))]
                      for p in (0, 1)]
        self.freed = False      # after destroy_process_group: its memory is gone
        _live.append(self)

    def reduce(self, parity: int, pairs: list, poll: bool) -> None:
        """One bucket: wait until every rank has written it (without spinning when ``poll``:
        see ``reducer._work``), then sum each ``(i, out)`` of ``pairs``: tensor ``i``'s
        entries of every slot, into ``out`` (None: nothing to keep, as on a joined rank)."""
        self._barrier(poll)
        slots = self.slots[parity]
        for i, out in pairs:
            if out is None:
                continue
            np.add(slots[0][i], slots[1][i], out=out, casting="unsafe")
            for k in range(2, len(slots)):
                np.add(out, slots[k][i], out=out, casting="unsafe")

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


def _free_shm() -> int:
    try:
        st = os.statvfs("/dev/shm")
    except OSError:
        return 0
    return st.f_bavail * st.f_frsize


_POLL_S = float(os.environ.get("RETROGRAD_DDP_POLL_US", "50")) * 1e-6
