"""Process groups and collectives, with ``torch.distributed``'s names and semantics, on MPI.

A process group wraps an MPI communicator (the default one a duplicate of ``COMM_WORLD``, so
retrograd's traffic never mixes with a script's own mpi4py calls). Collectives work in place on
each tensor's memory: a C-contiguous tensor is handed to MPI as it is, with no copy; only a
non-contiguous one goes through a contiguous copy and back. ``async_op=True`` starts MPI's
nonblocking operation and returns a :class:`Work`. Collectives are not differentiable and do
not touch autograd, as in torch (outside ``torch.distributed.nn``).

Before each tensor collective the ranks agree, in one small allreduce, that they are all making
the same call on the same shapes and dtypes (``_mpi.agree``): a mismatch raises a clear error on
every rank instead of MPI failing obscurely, hanging, or mixing unrelated data.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import numpy as np

from .._tensor import Tensor
from . import _mpi, _shm
from ._mpi import ReduceOp, Work, agree, array_of, buf, contiguous, describe

__all__ = [
    "Backend", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "P2POp", "group",
    "init_process_group", "destroy_process_group", "is_initialized", "is_available",
    "is_mpi_available", "is_gloo_available", "is_nccl_available", "is_torchelastic_launched",
    "is_backend_available", "get_node_local_rank",
    "get_rank", "get_world_size", "get_backend", "new_group", "get_global_rank",
    "get_group_rank", "get_process_group_ranks", "barrier", "monitored_barrier",
    "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
    "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter", "all_to_all",
    "all_to_all_single", "send", "recv", "isend", "irecv", "batch_isend_irecv",
    "all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list",
]

_SUM = ReduceOp.SUM


def is_available() -> bool:
    """Whether distributed training can run: mpi4py (the ``distributed`` extra) is installed.

    >>> import retrograd.distributed as dist
    >>> isinstance(dist.is_available(), bool)
    True
    """
    return _mpi.available()


def is_mpi_available() -> bool:
    return _mpi.available()


def is_gloo_available() -> bool:
    return False


def is_nccl_available() -> bool:
    return False


def is_backend_available(backend: str) -> bool:
    """Whether ``backend`` can run here: "mpi" and "gloo" (which runs on MPI) with mpi4py."""
    return str(backend).lower() in ("mpi", "gloo") and _mpi.available()


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """This process's rank on its node, from ``LOCAL_RANK`` (set by the launcher and by
    ``init_process_group``), else ``fallback_rank``."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
        "`get_node_local_rank` to work, assuming you are not running in a multi-device context "
        "and want the code to run locally instead."
    )


def is_torchelastic_launched() -> bool:
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


class Backend(str):
    """Backend names. retrograd runs every process group on MPI; ``"gloo"`` (torch's CPU
    backend) is accepted and runs on MPI too, so CPU scripts written for torch run unchanged."""

    UNDEFINED = "undefined"
    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"

    def __new__(cls, name: str):
        value = name.lower()
        if value not in ("mpi", "gloo", "nccl", "undefined"):
            raise ValueError(f"Invalid backend: '{name}'")
        return super().__new__(cls, value)


class ProcessGroup:
    """A set of ranks that communicate: an MPI communicator and its members' global ranks."""

    def __init__(self, comm, ranks: list[int], name: str) -> None:
        self._comm = comm
        self._ranks = list(ranks)
        self.group_name = name

    def rank(self) -> int:
        return self._comm.Get_rank()

    def size(self) -> int:
        return len(self._ranks)

    def name(self) -> str:
        return "mpi"

    def __repr__(self) -> str:
        return f"ProcessGroup(ranks={self._ranks}, name={self.group_name!r})"


class _WorldMeta(type):
    @property
    def WORLD(cls):  # noqa: N802 (torch's name)
        return _state.world


class GroupMember(metaclass=_WorldMeta):
    """``GroupMember.WORLD`` (the default group once initialised) and ``NON_GROUP_MEMBER``
    (what ``new_group`` returns on ranks outside the new group)."""

    NON_GROUP_MEMBER = -100


class group(metaclass=_WorldMeta):  # noqa: N801 (torch's name)
    """``group.WORLD``: the default process group."""


class _State:
    world: ProcessGroup | None = None
    groups: list = []
    count = 0


_state = _State()


def _default() -> ProcessGroup:
    pg = _state.world
    if pg is None:
        raise ValueError(
            "Default process group has not been initialized, please make sure to call "
            "init_process_group."
        )
    return pg


def _resolve(grp) -> ProcessGroup | None:
    """The ProcessGroup for a ``group=`` argument; None when this rank is not a member."""
    if grp is None:
        return _default()
    if isinstance(grp, ProcessGroup):
        _default()
        return grp
    if grp == GroupMember.NON_GROUP_MEMBER:
        return None
    raise TypeError(f"group must be a ProcessGroup or None, got {type(grp).__name__}")


def _enter(grp, name: str) -> ProcessGroup | None:
    pg = _resolve(grp)
    if pg is None:
        warnings.warn(
            f"Running {name} on global rank {get_rank()} which does not belong to the given "
            "group.", stacklevel=3,
        )
    return pg


def _check_tensor(t, name: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor "
            f"but got {type(t)} instead."
        )


def _check_list(ts, name: str) -> None:
    if not isinstance(ts, list) or not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type "
            f"List[torch.Tensor] but got {type(ts)} instead."
        )


# -- setting up ------------------------------------------------------------------------------
def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout=None, world_size: int = -1, rank: int = -1, store=None,
                       group_name: str = "", pg_options=None, device_id=None) -> None:
    """Join the job: rank and world size come from MPI (launch with ``mpiexec -n N``).

    ``backend`` may be ``"mpi"``, ``"gloo"`` or None (all run on MPI). ``rank``/``world_size``
    and the ``RANK``/``WORLD_SIZE`` variables of ``env://`` are checked against MPI's where
    given; ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` and ``LOCAL_WORLD_SIZE`` are set where
    missing. After this call an uncaught exception on any rank aborts the whole job.

    >>> import retrograd.distributed as dist
    >>> dist.is_initialized()
    False
    """
    if _state.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = str(backend or "mpi").lower()
    if name.startswith("cpu:"):
        name = name[4:]
    if name not in ("mpi", "gloo"):
        raise RuntimeError(
            f"retrograd.distributed runs on MPI only: backend {backend!r} is not available "
            "(use 'mpi', or 'gloo', which runs on MPI too)"
        )
    MPI = _mpi.load()
    world = MPI.COMM_WORLD
    r, n = world.Get_rank(), world.Get_size()
    checks = [("rank", rank, r), ("world_size", world_size, n)]
    if init_method is None or str(init_method).startswith("env://"):
        for var, got in (("RANK", r), ("WORLD_SIZE", n)):
            if os.environ.get(var, "").strip().lstrip("-").isdigit():
                checks.append((f"environment variable {var}", int(os.environ[var]), got))
    for what, given, actual in checks:
        if given is not None and given != -1 and given != actual:
            raise ValueError(
                f"{what} is {given} but MPI started this process as rank {r} of {n}: launch "
                "with mpiexec (or python -m retrograd.distributed.run) and leave rank and "
                "world_size to MPI"
            )
    local = world.Split_type(MPI.COMM_TYPE_SHARED, key=r)
    for var, value in (("RANK", r), ("WORLD_SIZE", n), ("LOCAL_RANK", local.Get_rank()),
                       ("LOCAL_WORLD_SIZE", local.Get_size())):
        os.environ.setdefault(var, str(value))
    local.Free()
    _mpi.checking = os.environ.get("RETROGRAD_DISTRIBUTED_CHECK", "1") != "0"
    _state.world = ProcessGroup(world.Dup(), list(range(n)), group_name or "0")
    _state.groups = [_state.world]
    _state.count = 1
    if n > 1:
        _mpi.install_excepthook()


def is_initialized() -> bool:
    """Whether ``init_process_group`` has run (and ``destroy_process_group`` has not)."""
    return _state.world is not None


def destroy_process_group(group=None) -> None:
    """Free ``group``'s communicator; with no argument, every group and the default one."""
    if group is None or group is _state.world:
        pg = _default()
        _shm.free_all()   # DDP's shared-memory windows (collective, as this call)
        for g in _state.groups:
            g._comm.Free()
        _state.world, _state.groups = None, []
        _mpi.remove_excepthook()
        del pg
        return
    pg = _resolve(group)
    if pg is not None and pg in _state.groups:
        _state.groups.remove(pg)
        pg._comm.Free()


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (the default group if None); -1 if not a member."""
    pg = _resolve(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None) -> int:
    """The number of ranks in ``group`` (the default group if None); -1 if not a member."""
    pg = _resolve(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None) -> str:
    _resolve(group)
    return Backend.MPI


def get_process_group_ranks(group) -> list[int]:
    """The global ranks of ``group``'s members, in group-rank order."""
    pg = _resolve(group)
    return list(pg._ranks) if pg is not None else []


def get_global_rank(group, group_rank: int) -> int:
    pg = _resolve(group)
    if pg is None or not 0 <= group_rank < pg.size():
        raise ValueError(f"Group {group} does not contain rank {group_rank}")
    return pg._ranks[group_rank]


def get_group_rank(group, global_rank: int) -> int:
    pg = _resolve(group)
    if pg is None or global_rank not in pg._ranks:
        raise ValueError(f"Group {group} does not contain rank {global_rank}")
    return pg._ranks.index(global_rank)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization: bool = False, group_desc=None, device_id=None,
              sort_ranks: bool = True):
    """A process group of ``ranks`` (global ranks; all if None). Every rank of the default
    group must call it; ranks outside get ``GroupMember.NON_GROUP_MEMBER``."""
    world = _default()
    n = world.size()
    ranks = list(range(n)) if ranks is None else [int(x) for x in ranks]
    if sort_ranks:
        ranks = sorted(ranks)
    for x in ranks:
        if not 0 <= x < n:
            raise ValueError(f"Rank {x} is out of range. Valid ranks are 0 to {n - 1} "
                             f"(world_size={n})")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: duplicate ranks in {ranks}")
    MPI = _mpi._MPI
    members = world._comm.Get_group().Incl(ranks)
    comm = world._comm.Create(members)
    members.Free()
    _state.count += 1
    if comm == MPI.COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, ranks, group_desc or str(_state.count - 1))
    _state.groups.append(pg)
    return pg


def _root(pg: ProcessGroup, global_rank, group_rank) -> int:
    """A ``src``/``dst`` (global) or ``group_src``/``group_dst`` as a rank within ``pg``."""
    if group_rank is not None:
        if global_rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
    else:
        if global_rank is None:
            raise ValueError("Must specify global_rank or group_rank")
        if global_rank not in pg._ranks:
            raise ValueError(f"Group {pg} does not contain rank {global_rank}")
        group_rank = pg._ranks.index(global_rank)
    if not 0 <= group_rank < pg.size():
        raise ValueError(f"Group {pg} does not contain rank {group_rank}")
    return group_rank


# -- running one operation -------------------------------------------------------------------
def _op(comm, name: str, nb: bool, *args, **kwargs) -> list:
    """MPI's operation ``name``: nonblocking (``I...``, its request returned) or blocking."""
    if nb:
        return [getattr(comm, "I" + name)(*args, **kwargs)]
    getattr(comm, name.capitalize())(*args, **kwargs)
    return []


def _run(async_op: bool, start, finish=None, result=None, keep=None):
    """With ``async_op``, start the nonblocking operation (``start(True)`` returns its
    requests) and return its Work; otherwise run the blocking one (``start(False)``), which
    MPI may do faster. ``finish`` runs once the operation completes."""
    if async_op:
        return Work(start(True), finish, result, keep)
    try:
        start(False)
    except _mpi._MPI.Exception as e:
        raise _mpi._error(e, None) from None
    Work((), finish, result)
    return None


def _copyback(pairs):
    """A finish step writing contiguous results back into the tensors' own arrays."""
    def finish(_work):
        for dst, src in pairs:
            np.copyto(dst, src.reshape(dst.shape))
    return finish


def _with(*steps):
    steps = [s for s in steps if s is not None]

    def finish(work):
        for s in steps:
            s(work)
    return finish


def _avg(arrays, n: int):
    def finish(_work):
        for a in arrays:
            _mpi.divide(a, n)
    return finish


# -- collectives -----------------------------------------------------------------------------
def all_reduce(tensor: Tensor, op=_SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` across the ranks, in place, on every rank (``ReduceOp.SUM`` etc.).

    In a job of 2 ranks (``mpiexec -n 2``; tests/distributed runs these):

    >>> t = torch.tensor([1.0, 2.0]) * (dist.get_rank() + 1)    # doctest: +SKIP
    >>> dist.all_reduce(t)                                       # doctest: +SKIP
    >>> t                                                        # doctest: +SKIP
    tensor([3., 6.])
    >>> work = dist.all_reduce(t, op=dist.ReduceOp.MAX, async_op=True)  # doctest: +SKIP
    >>> work.wait()                                              # doctest: +SKIP
    True
    """
    _check_tensor(tensor, "tensor")
    pg = _enter(group, "all_reduce")
    if pg is None:
        return None
    a = array_of(tensor)
    agree(pg._comm, describe("all_reduce", a, op=op.name, async_op=async_op))
    mop = _mpi.mpi_op(op, a.dtype)
    c, copied = contiguous(a)
    MPI = _mpi._MPI
    finish = _with(_avg([c], pg.size()) if op is ReduceOp.AVG else None,
                   _copyback([(a, c)]) if copied else None)
    return _run(async_op, lambda nb: _op(pg._comm, "allreduce", nb, MPI.IN_PLACE, buf(c), op=mop),
                finish, [tensor], c)


def broadcast(tensor: Tensor, src: int | None = None, group=None, async_op: bool = False,
              group_src: int | None = None):
    """Copy the source rank's ``tensor`` into ``tensor`` on every rank, in place.

    >>> t = torch.full((2,), float(dist.get_rank()))   # doctest: +SKIP
    >>> dist.broadcast(t, src=1)                        # doctest: +SKIP
    >>> t                                               # doctest: +SKIP
    tensor([1., 1.])
    """
    _check_tensor(tensor, "tensor")
    pg = _enter(group, "broadcast")
    if pg is None:
        return None
    root = _root(pg, src, group_src)
    a = array_of(tensor)
    agree(pg._comm, describe("broadcast", a, src=root, async_op=async_op))
    c, copied = contiguous(a)
    return _run(async_op, lambda nb: _op(pg._comm, "bcast", nb, buf(c), root=root),
                _copyback([(a, c)]) if copied else None, [tensor], c)


def reduce(tensor: Tensor, dst: int | None = None, op=_SUM, group=None, async_op: bool = False,
           group_dst: int | None = None):
    """Reduce ``tensor`` across the ranks into the destination's ``tensor`` (only there)."""
    _check_tensor(tensor, "tensor")
    pg = _enter(group, "reduce")
    if pg is None:
        return None
    root = _root(pg, dst, group_dst)
    a = array_of(tensor)
    agree(pg._comm, describe("reduce", a, op=op.name, dst=root, async_op=async_op))
    mop = _mpi.mpi_op(op, a.dtype)
    c, copied = contiguous(a)
    MPI = _mpi._MPI
    mine = pg.rank() == root
    finish = None
    if mine:
        finish = _with(_avg([c], pg.size()) if op is ReduceOp.AVG else None,
                       _copyback([(a, c)]) if copied else None)

    def start(nb):
        if mine:
            return _op(pg._comm, "reduce", nb, MPI.IN_PLACE, buf(c), op=mop, root=root)
        return _op(pg._comm, "reduce", nb, buf(c), None, op=mop, root=root)
    return _run(async_op, start, finish, [tensor], c)


def all_gather(tensor_list: list, tensor: Tensor, group=None, async_op: bool = False):
    """Every rank's ``tensor`` into ``tensor_list`` (one per rank), on every rank.

    >>> out = [torch.zeros(1) for _ in range(2)]                     # doctest: +SKIP
    >>> dist.all_gather(out, torch.tensor([float(dist.get_rank())]))  # doctest: +SKIP
    >>> out                                                           # doctest: +SKIP
    [tensor([0.]), tensor([1.])]
    """
    _check_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    pg = _enter(group, "all_gather")
    if pg is None:
        return None
    a = array_of(tensor)
    outs = [array_of(t) for t in tensor_list]
    n = pg.size()
    error = None
    if len(outs) != n:
        error = RuntimeError(f"all_gather: invalid output tensor list (expected length {n}, "
                             f"got {len(outs)})")
    else:
        for i, o in enumerate(outs):
            if o.shape != a.shape or o.dtype != a.dtype:
                error = RuntimeError(
                    f"all_gather: invalid tensor at index {i} of tensor_list (expected "
                    f"{list(a.shape)} {a.dtype}, got {list(o.shape)} {o.dtype})")
                break
    agree(pg._comm, describe("all_gather", a, async_op=async_op), error)
    src, _ = contiguous(a)
    out = np.empty((n,) + a.shape, dtype=a.dtype)
    return _run(async_op, lambda nb: _op(pg._comm, "allgather", nb, buf(src), buf(out)),
                _copyback([(o, out[i]) for i, o in enumerate(outs)]), tensor_list, (src, out))


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group=None,
                           async_op: bool = False):
    """Every rank's ``input_tensor``, concatenated (or stacked) in rank order into
    ``output_tensor``, whose size is the world size times the input's."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = _enter(group, "all_gather_into_tensor")
    if pg is None:
        return None
    a, o = array_of(input_tensor), array_of(output_tensor)
    n = pg.size()
    error = None
    if o.size != n * a.size or o.dtype != a.dtype:
        error = ValueError(
            "output tensor size must be equal to world_size times input tensor size (output "
            f"{list(o.shape)} {o.dtype}, input {list(a.shape)} {a.dtype}, world_size {n})")
    agree(pg._comm, describe("all_gather_into_tensor", a, async_op=async_op), error)
    src, _ = contiguous(a)
    out, copied = contiguous(o)
    return _run(async_op, lambda nb: _op(pg._comm, "allgather", nb, buf(src), buf(out)),
                _copyback([(o, out)]) if copied else None, [output_tensor], (src, out))


def reduce_scatter(output: Tensor, input_list: list, op=_SUM, group=None,
                   async_op: bool = False):
    """Reduce ``input_list[r]`` across the ranks into rank ``r``'s ``output``."""
    _check_tensor(output, "output")
    _check_list(input_list, "input_list")
    pg = _enter(group, "reduce_scatter")
    if pg is None:
        return None
    o = array_of(output)
    ins = [array_of(t) for t in input_list]
    n = pg.size()
    error = None
    if len(ins) != n:
        error = ValueError(f"reduce_scatter: input_list must have {n} tensors, got {len(ins)}")
    elif any(x.shape != o.shape or x.dtype != o.dtype for x in ins):
        error = ValueError("reduce_scatter: every input must have the output's shape and dtype")
    agree(pg._comm, describe("reduce_scatter", o, op=op.name, async_op=async_op), error)
    packed = np.stack(ins)
    return _reduce_scatter(pg, o, packed, op, async_op, [output])


def reduce_scatter_tensor(output: Tensor, input: Tensor, op=_SUM, group=None,
                          async_op: bool = False):
    """Reduce ``input`` (world size times ``output``'s size) across the ranks, and give rank
    ``r`` the ``r``-th block of the result in ``output``."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _enter(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    o, a = array_of(output), array_of(input)
    n = pg.size()
    error = None
    if a.size != n * o.size or o.dtype != a.dtype:
        error = ValueError(
            "input tensor must be the same size as output size times world size (input "
            f"{list(a.shape)} {a.dtype}, output {list(o.shape)} {o.dtype}, world_size {n})")
    agree(pg._comm, describe("reduce_scatter_tensor", o, a, op=op.name, async_op=async_op), error)
    packed, _ = contiguous(a)
    return _reduce_scatter(pg, o, packed, op, async_op, [output])


def _reduce_scatter(pg, o, packed, op, async_op, result):
    mop = _mpi.mpi_op(op, o.dtype)
    out, copied = contiguous(o)
    finish = _with(_avg([out], pg.size()) if op is ReduceOp.AVG else None,
                   _copyback([(o, out)]) if copied else None)
    return _run(async_op, lambda nb: _op(pg._comm, "reduce_scatter_block", nb,
                                                 buf(packed), buf(out), op=mop),
                finish, result, (packed, out))


def gather(tensor: Tensor, gather_list: list | None = None, dst: int | None = None,
           group=None, async_op: bool = False, group_dst: int | None = None):
    """Every rank's ``tensor`` into the destination's ``gather_list`` (one per rank)."""
    _check_tensor(tensor, "tensor")
    pg = _enter(group, "gather")
    if pg is None:
        return None
    root = _root(pg, 0 if dst is None and group_dst is None else dst, group_dst)
    a = array_of(tensor)
    n = pg.size()
    mine = pg.rank() == root
    error = None
    outs = []
    if mine:
        if not gather_list:
            error = ValueError("Argument ``gather_list`` must be specified on destination "
                               "rank.")
        else:
            _check_list(gather_list, "gather_list")
            outs = [array_of(t) for t in gather_list]
            if len(outs) != n or any(x.shape != a.shape or x.dtype != a.dtype for x in outs):
                error = ValueError(f"gather: gather_list must hold {n} tensors of the input's "
                                   f"shape {list(a.shape)} and dtype {a.dtype}")
    elif gather_list:
        error = ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                           "ranks.")
    agree(pg._comm, describe("gather", a, dst=root, async_op=async_op), error)
    src, _ = contiguous(a)
    out = np.empty((n,) + a.shape, dtype=a.dtype) if mine else None
    return _run(async_op,
                lambda nb: _op(pg._comm, "gather", nb, buf(src), buf(out) if mine else None,
                               root=root),
                _copyback([(x, out[i]) for i, x in enumerate(outs)]) if mine else None,
                list(gather_list or []), (src, out))


def scatter(tensor: Tensor, scatter_list: list | None = None, src: int | None = None,
            group=None, async_op: bool = False, group_src: int | None = None):
    """The source's ``scatter_list[r]`` into rank ``r``'s ``tensor``."""
    _check_tensor(tensor, "tensor")
    pg = _enter(group, "scatter")
    if pg is None:
        return None
    root = _root(pg, 0 if src is None and group_src is None else src, group_src)
    o = array_of(tensor)
    n = pg.size()
    mine = pg.rank() == root
    error = None
    packed = None
    if mine:
        if not scatter_list:
            error = ValueError("Argument ``scatter_list`` must be specified on source rank.")
        else:
            _check_list(scatter_list, "scatter_list")
            ins = [array_of(t) for t in scatter_list]
            if len(ins) != n or any(x.shape != o.shape or x.dtype != o.dtype for x in ins):
                error = ValueError(f"scatter: scatter_list must hold {n} tensors of the "
                                   f"output's shape {list(o.shape)} and dtype {o.dtype}")
            else:
                packed = np.stack(ins)
    elif scatter_list:
        error = ValueError("Argument ``scatter_list`` must NOT be specified on non-source "
                           "ranks.")
    agree(pg._comm, describe("scatter", o, src=root, async_op=async_op), error)
    out, copied = contiguous(o)
    return _run(async_op,
                lambda nb: _op(pg._comm, "scatter", nb, buf(packed) if mine else None,
                               buf(out), root=root),
                _copyback([(o, out)]) if copied else None, [tensor], (packed, out))


def _alltoallv(pg, send: np.ndarray, scounts, recv: np.ndarray, rcounts, async_op, finish,
               result, name: str):
    """Exchange the counts first (every rank learns what it will receive) and check them
    against what each rank expects, then the data."""
    comm = pg._comm
    n = pg.size()
    expect = np.asarray(rcounts, dtype=np.int64)
    got = np.empty(n, dtype=np.int64)
    comm.Alltoall(np.asarray(scounts, dtype=np.int64), got)
    bad = np.array([int((got != expect).any())], dtype=np.int64)
    comm.Allreduce(_mpi._MPI.IN_PLACE, bad, op=_mpi._MPI.MAX)
    if bad[0]:
        raise RuntimeError(
            f"{name}: sizes differ across ranks: rank {pg.rank()} expects "
            f"{expect.tolist()} elements from ranks 0..{n - 1} but they send {got.tolist()}")
    sdis = np.concatenate([[0], np.cumsum(scounts)[:-1]]).astype(np.int64)
    rdis = np.concatenate([[0], np.cumsum(rcounts)[:-1]]).astype(np.int64)
    if send.dtype.char in _mpi._NATIVE:
        smsg = [send, (list(scounts), sdis.tolist())]
        rmsg = [recv, (list(rcounts), rdis.tolist())]
    else:
        t = _mpi._user_type(send.dtype)
        smsg = [send.reshape(-1).view(np.uint8), (list(scounts), sdis.tolist()), t]
        rmsg = [recv.reshape(-1).view(np.uint8), (list(rcounts), rdis.tolist()), t]
    return _run(async_op, lambda nb: _op(comm, "alltoallv", nb, smsg, rmsg), finish, result,
                (send, recv))


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes=None,
                      input_split_sizes=None, group=None, async_op: bool = False):
    """Split ``input`` along dim 0 (evenly, or by ``input_split_sizes``), send piece ``r`` to
    rank ``r``, and concatenate what arrives into ``output``."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _enter(group, "all_to_all_single")
    if pg is None:
        return None
    o, a = array_of(output), array_of(input)
    n = pg.size()

    def counts(x, splits, what):
        rows = x.shape[0] if x.ndim else 1
        row = x.size // rows if rows else 0
        if splits is None:
            if rows % n:
                raise ValueError(f"all_to_all_single: {what} dim 0 ({rows}) must divide "
                                 f"evenly by the world size {n}")
            return [rows // n * row] * n
        splits = [int(s) for s in splits]
        if len(splits) != n or sum(splits) != rows:
            raise ValueError(f"all_to_all_single: {what}_split_sizes {splits} must have "
                             f"{n} entries summing to dim 0 ({rows})")
        return [s * row for s in splits]
    error = sc = rc = None
    try:
        sc = counts(a, input_split_sizes, "input")
        rc = counts(o, output_split_sizes, "output")
    except ValueError as e:
        error = e
    # (dim 0 may differ across ranks: the counts exchanged next are checked themselves)
    agree(pg._comm, describe("all_to_all_single", o[:0] if o.ndim else o,
                             a[:0] if a.ndim else a, async_op=async_op), error)
    send, _ = contiguous(a)
    recv, copied = contiguous(o)
    return _alltoallv(pg, send, sc, recv, rc, async_op,
                      _copyback([(o, recv)]) if copied else None, [output], "all_to_all_single")


def all_to_all(output_tensor_list: list, input_tensor_list: list, group=None,
               async_op: bool = False):
    """Send ``input_tensor_list[r]`` to rank ``r``; receive rank ``r``'s piece for this rank
    into ``output_tensor_list[r]``."""
    _check_list(output_tensor_list, "output_tensor_list")
    _check_list(input_tensor_list, "input_tensor_list")
    pg = _enter(group, "all_to_all")
    if pg is None:
        return None
    outs = [array_of(t) for t in output_tensor_list]
    ins = [array_of(t) for t in input_tensor_list]
    n = pg.size()
    error = None
    if len(outs) != n or len(ins) != n:
        error = ValueError(f"all_to_all: both tensor lists must have {n} tensors")
    elif len({x.dtype for x in outs + ins}) > 1:
        error = ValueError("all_to_all: all tensors must have the same dtype")
    dt = (outs + ins)[0].dtype if outs + ins else np.dtype(np.float32)
    agree(pg._comm, f"all_to_all {dt}" + (" async" if async_op else ""), error)
    send = np.concatenate([x.reshape(-1) for x in ins]) if ins else np.empty(0, dt)
    recv = np.empty(sum(x.size for x in outs), dtype=dt)
    offsets = np.concatenate([[0], np.cumsum([x.size for x in outs])]).astype(int)
    pairs = [(x, recv[offsets[i]:offsets[i + 1]]) for i, x in enumerate(outs)]
    return _alltoallv(pg, send, [x.size for x in ins], recv, [x.size for x in outs], async_op,
                      _copyback(pairs), output_tensor_list, "all_to_all")


def barrier(group=None, async_op: bool = False, device_ids=None, timeout=None):
    """Wait until every rank of ``group`` has reached the barrier."""
    pg = _enter(group, "barrier")
    if pg is None:
        return None
    return _run(async_op, lambda nb: _op(pg._comm, "barrier", nb))


def monitored_barrier(group=None, timeout=None, wait_all_ranks: bool = False) -> None:
    barrier(group)


# -- point to point --------------------------------------------------------------------------
def _p2p(tensor, peer, group_peer, group, name):
    _check_tensor(tensor, "tensor")
    pg = _enter(group, name)
    if pg is None:
        return None, None, None
    if peer is None and group_peer is None:
        r = None
    else:
        r = _root(pg, peer, group_peer)
    a = array_of(tensor)
    return pg, r, a


def isend(tensor: Tensor, dst: int | None = None, group=None, tag: int = 0,
          group_dst: int | None = None):
    """Start sending ``tensor`` to ``dst``; returns a :class:`Work`."""
    pg, peer, a = _p2p(tensor, dst, group_dst, group, "isend")
    if pg is None:
        return None
    if peer is None:
        raise ValueError("Must specify global_rank or group_rank")
    src, _ = contiguous(a)
    return _run(True, lambda nb: _op(pg._comm, "send", nb, buf(src), dest=peer, tag=tag),
                None, [tensor], src)


def send(tensor: Tensor, dst: int | None = None, group=None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` (which calls ``recv``)."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def irecv(tensor: Tensor, src: int | None = None, group=None, tag: int = 0,
          group_src: int | None = None):
    """Start receiving into ``tensor`` from ``src`` (any rank if None); returns a Work."""
    pg, peer, a = _p2p(tensor, src, group_src, group, "irecv")
    if pg is None:
        return None
    MPI = _mpi._MPI
    out, copied = contiguous(a)
    status = MPI.Status()

    def finish(work):
        # A larger message is MPI's truncation error (no byte lands past the buffer); a
        # smaller one only shows in the count received.
        count = status.Get_count(MPI.BYTE)
        if count != out.nbytes:
            raise RuntimeError(
                f"recv: the message from rank {pg._ranks[status.Get_source()]} has {count} "
                f"bytes but the tensor {list(a.shape)} {a.dtype} holds {out.nbytes}")
        work._source = pg._ranks[status.Get_source()]
        if copied:
            np.copyto(a, out)
    source = MPI.ANY_SOURCE if peer is None else peer
    return Work([pg._comm.Irecv(buf(out), source=source, tag=tag)], finish, [tensor], out,
                [status])


def recv(tensor: Tensor, src: int | None = None, group=None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into ``tensor`` from ``src`` (any rank if None); returns the sender's rank."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work._source


@dataclass
class P2POp:
    """One point-to-point operation for ``batch_isend_irecv``: ``op`` is isend or irecv."""

    op: object
    tensor: Tensor
    peer: int | None = None
    group: object = None
    tag: int = 0
    group_peer: int | None = None


def batch_isend_irecv(p2p_op_list: list) -> list:
    """Start every operation of the list; returns their work handles."""
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]


# -- objects (pickled, through mpi4py's object collectives) ---------------------------------
def all_gather_object(object_list: list, obj, group=None) -> None:
    """Every rank's picklable ``obj`` into ``object_list`` (one entry per rank)."""
    pg = _enter(group, "all_gather_object")
    if pg is None:
        return
    for i, x in enumerate(pg._comm.allgather(obj)):
        object_list[i] = x


def broadcast_object_list(object_list: list, src: int | None = None, group=None, device=None,
                          group_src: int | None = None) -> None:
    """The source's ``object_list`` entries into every rank's ``object_list``, in place."""
    pg = _enter(group, "broadcast_object_list")
    if pg is None:
        return
    root = _root(pg, src, group_src)
    got = pg._comm.bcast(list(object_list) if pg.rank() == root else None, root=root)
    if len(got) != len(object_list):
        raise RuntimeError(f"broadcast_object_list: the source sent {len(got)} objects into "
                           f"a list of {len(object_list)}")
    object_list[:] = got


def gather_object(obj, object_gather_list: list | None = None, dst: int | None = None,
                  group=None, group_dst: int | None = None) -> None:
    """Every rank's ``obj`` into the destination's ``object_gather_list``."""
    pg = _enter(group, "gather_object")
    if pg is None:
        return
    root = _root(pg, 0 if dst is None and group_dst is None else dst, group_dst)
    got = pg._comm.gather(obj, root=root)
    if pg.rank() == root:
        if object_gather_list is None:
            raise ValueError("Argument ``object_gather_list`` must be specified on destination "
                             "rank.")
        for i, x in enumerate(got):
            object_gather_list[i] = x


def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list=None,
                        src: int | None = None, group=None,
                        group_src: int | None = None) -> None:
    """The source's ``scatter_object_input_list[r]`` into rank ``r``'s
    ``scatter_object_output_list[0]``."""
    pg = _enter(group, "scatter_object_list")
    if pg is None:
        return
    root = _root(pg, 0 if src is None and group_src is None else src, group_src)
    items = list(scatter_object_input_list) if pg.rank() == root else None
    scatter_object_output_list[0] = pg._comm.scatter(items, root=root)
