"""The MPI layer under ``retrograd.distributed``: mpi4py loaded on demand, each tensor's memory
as an MPI buffer, the reduction ops, work handles over nonblocking requests, the cross-rank
agreement check, and the excepthook that aborts the job.

Nothing here imports ``mpi4py.MPI`` at import time: importing ``mpi4py.MPI`` initialises MPI,
which only ``init_process_group`` should do, and without the ``distributed`` extra the rest of
retrograd must import and run as before.
"""

from __future__ import annotations

import enum
import importlib.util
import sys
import zlib

import numpy as np

from .. import _dtypes
from ..futures import Future

__all__ = ["ReduceOp", "Work", "available", "load"]

EXTRA = 'pip install "retrograd[distributed]"'

_MPI = None
checking = True   # the cross-rank check of each collective (see agree)


def available() -> bool:
    """Whether mpi4py can be imported (the ``distributed`` extra is installed)."""
    return importlib.util.find_spec("mpi4py") is not None


def load():
    """``mpi4py.MPI``, imported (and MPI initialised) on first use."""
    global _MPI
    if _MPI is None:
        if not available():
            raise RuntimeError(
                "retrograd.distributed needs mpi4py and an MPI library, which the "
                f"'distributed' extra brings: {EXTRA}"
            )
        try:
            from mpi4py import MPI
        except (ImportError, RuntimeError, OSError) as e:  # mpi4py found no libmpi it can load
            raise RuntimeError(
                f"mpi4py could not load an MPI library ({e}); {EXTRA} installs one, or see "
                "docs/distributed.md to use a cluster's own MPI"
            ) from e
        _MPI = MPI
    return _MPI


class ReduceOp:
    """The reduction of ``all_reduce``, ``reduce`` and ``reduce_scatter``, as in torch.

    >>> from retrograd.distributed import ReduceOp
    >>> ReduceOp.SUM, ReduceOp.AVG.value
    (<RedOpType.SUM: 0>, 1)
    """

    class RedOpType(enum.Enum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

        def __repr__(self) -> str:
            return f"<RedOpType.{self.name}: {self.value}>"

        def __str__(self) -> str:
            return f"RedOpType.{self.name}"

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM

    def __new__(cls, op):
        # ReduceOp(ReduceOp.SUM) is ReduceOp.SUM, as torch's constructor accepts a RedOpType.
        if isinstance(op, ReduceOp.RedOpType):
            return op
        raise TypeError(f"ReduceOp expects a ReduceOp.RedOpType, got {type(op).__name__}")


_R = ReduceOp.RedOpType
_BITWISE = (_R.BAND, _R.BOR, _R.BXOR)


def mpi_op(op, dtype: np.dtype):
    """The MPI reduction for ``op`` on arrays of ``dtype`` (AVG sums; the caller divides)."""
    MPI = _MPI
    if not isinstance(op, ReduceOp.RedOpType):
        raise TypeError(f"op must be a ReduceOp, got {type(op).__name__}")
    kind = dtype.kind
    if op in _BITWISE and kind not in "iub":
        raise RuntimeError(f"Cannot use {op} with non-integral dtype")
    if op in (_R.MIN, _R.MAX) and kind == "c":
        raise RuntimeError(f"Cannot use {op} with complex inputs")
    if op is _R.PREMUL_SUM:
        raise RuntimeError("ReduceOp.PREMUL_SUM is not supported by retrograd's MPI backend")
    if kind == "b":  # MPI sums no booleans: sum/max are a logical or, product/min an and
        if op is _R.AVG:
            raise RuntimeError("Cannot use ReduceOp.AVG with bool tensors")
        return {_R.SUM: MPI.LOR, _R.MAX: MPI.LOR, _R.BOR: MPI.LOR, _R.PRODUCT: MPI.LAND,
                _R.MIN: MPI.LAND, _R.BAND: MPI.LAND, _R.BXOR: MPI.LXOR}[op]
    if dtype.char not in _NATIVE:
        return _user_op(op, dtype)
    return {_R.SUM: MPI.SUM, _R.AVG: MPI.SUM, _R.PRODUCT: MPI.PROD, _R.MIN: MPI.MIN,
            _R.MAX: MPI.MAX, _R.BAND: MPI.BAND, _R.BOR: MPI.BOR, _R.BXOR: MPI.BXOR}[op]


# NumPy type codes that mpi4py maps to an MPI datatype itself (float16 included).
_NATIVE = frozenset("?bBhHiIlLqQefdgFDG")
_user_types: dict = {}
_user_ops: dict = {}
_NP_REDUCE = {_R.SUM: np.add, _R.AVG: np.add, _R.PRODUCT: np.multiply, _R.MIN: np.minimum,
              _R.MAX: np.maximum}


def _user_type(dtype: np.dtype):
    """An MPI datatype of one element's bytes, for dtypes MPI lacks (bfloat16): whole elements,
    so that a reduction never sees half of one."""
    t = _user_types.get(dtype)
    if t is None:
        t = _user_types[dtype] = _MPI.BYTE.Create_contiguous(dtype.itemsize).Commit()
    return t


def _user_op(op, dtype: np.dtype):
    """A reduction MPI runs through NumPy, for dtypes it has no arithmetic for (bfloat16)."""
    key = (op, dtype)
    mop = _user_ops.get(key)
    if mop is None:
        fn = _NP_REDUCE[op]

        def reduce(inbuf, inoutbuf, datatype, fn=fn, dtype=dtype):
            a = np.frombuffer(inbuf, dtype=dtype)
            b = np.frombuffer(inoutbuf, dtype=dtype)
            fn(a, b, out=b)

        mop = _user_ops[key] = _MPI.Op.Create(reduce, commute=True)
    return mop


def array_of(t) -> np.ndarray:
    """A tensor's values as the ndarray that holds them (shared memory, no copy)."""
    if t.dtype is _dtypes.bfloat16:
        return t._data  # NumPy has no bfloat16, so Tensor.numpy() refuses it
    return t.detach().numpy()


def buf(a: np.ndarray):
    """``a`` (C-contiguous) as an mpi4py buffer specification."""
    if a.dtype.char in _NATIVE:
        return a
    return [a.reshape(-1).view(np.uint8), a.size, _user_type(a.dtype)]


def contiguous(a: np.ndarray) -> tuple[np.ndarray, bool]:
    """``a`` itself when C-contiguous, else a contiguous copy (and True: copy it back)."""
    if a.flags.c_contiguous:
        return a, False
    return np.ascontiguousarray(a), True


def divide(a: np.ndarray, n: int) -> None:
    """AVG: the sum divided by the number of ranks, in place (integers truncate, as NCCL)."""
    if a.dtype.kind in "iu":
        np.copyto(a, np.trunc(a / n).astype(a.dtype))
    else:
        np.divide(a, n, out=a, casting="unsafe")


class Work:
    """The handle an ``async_op=True`` collective returns: ``wait()`` until it is done,
    ``is_completed()`` to poll. Steps that follow the transfer (copying into non-contiguous
    tensors, dividing for AVG) run once, when it completes."""

    def __init__(self, requests=(), finish=None, result=None, keep=None,
                 statuses=None) -> None:
        self._requests = list(requests)
        self._statuses = statuses
        self._finish = finish
        self._result = result if result is not None else []
        self._keep = keep            # buffers MPI reads or writes until completion
        self._done = not self._requests
        self._source = -1
        self._futures: list = []
        if self._done:
            self._complete()

    def _complete(self) -> None:
        self._done = True
        finish, self._finish = self._finish, None
        self._keep = None
        if finish is not None:
            finish(self)
        futures, self._futures = self._futures, []
        for fut in futures:
            fut.set_result(list(self._result))

    def get_future(self):
        """A ``retrograd.futures.Future`` whose value is the list of tensors the operation
        wrote, complete when the operation is (``done()`` polls it, ``wait()`` waits)."""
        fut = Future()
        if self._done:
            fut.set_result(list(self._result))
        else:
            fut._source = (self.is_completed, self.wait)
            self._futures.append(fut)
        return fut

    def is_completed(self) -> bool:
        """Whether the operation has finished (polls MPI, which also moves it on)."""
        if not self._done:
            try:
                done = _MPI.Request.Testall(self._requests, self._statuses)
            except _MPI.Exception as e:
                raise _error(e, self._statuses) from None
            if done:
                self._complete()
        return self._done

    def wait(self, timeout=None) -> bool:
        """Block until the operation has finished; returns True."""
        if not self._done:
            try:
                _MPI.Request.Waitall(self._requests, self._statuses)
            except _MPI.Exception as e:
                raise _error(e, self._statuses) from None
            self._complete()
        return True

    synchronize = wait

    def is_success(self) -> bool:
        return self._done

    def exception(self):
        return None

    def result(self) -> list:
        """The tensors the operation wrote."""
        self.wait()
        return list(self._result)

    def _source_rank(self) -> int:
        return self._source


def _error(e, statuses) -> RuntimeError:
    codes = [e.Get_error_class()]
    if codes[0] == _MPI.ERR_IN_STATUS:
        codes = [_MPI.Get_error_class(st.Get_error()) for st in statuses or ()]
    if _MPI.ERR_TRUNCATE in codes:
        return RuntimeError("recv: the message is larger than the receiving tensor")
    return RuntimeError(f"MPI error: {e.Get_error_string()}")


def agree(comm, desc: str, error: BaseException | None = None) -> None:
    """Check that every rank of ``comm`` calls the same collective on the same shapes.

    One small allreduce of a checksum of ``desc`` (the call, shapes, dtypes, roots) and its
    negation under MAX: all equal exactly when max == -max(-x) == own. Otherwise, or when a
    rank's own arguments were invalid (``error``, raised on that rank), every rank learns
    every description and raises, rather than MPI failing obscurely, hanging, or mixing
    unrelated data. ``RETROGRAD_DISTRIBUTED_CHECK=0`` (read by ``init_process_group``) skips
    it, for programs known to be consistent.
    """
    if not checking:
        if error is not None:
            raise error
        return
    MPI = _MPI
    sig = zlib.crc32(desc.encode())
    v = np.array([sig, -sig, error is not None], dtype=np.int64)
    comm.Allreduce(MPI.IN_PLACE, v, op=MPI.MAX)
    if v[0] == sig and -v[1] == sig and not v[2]:
        return
    descs = comm.allgather(desc if error is None else f"{desc} (invalid: {error})")
    if error is not None:
        raise error
    lines = "; ".join(f"rank {r}: {d}" for r, d in enumerate(descs))
    raise RuntimeError(f"collective calls differ across ranks ({lines})")


def describe(name: str, *arrays, async_op: bool = False, **extra) -> str:
    """What ``agree`` compares: the call, its arrays' shapes and dtypes, its arguments, and
    whether it is asynchronous (MPI matches no blocking collective with a nonblocking one:
    mixing them would hang, where torch's backends accept it)."""
    parts = [name] + [f"{list(a.shape)} {a.dtype}" for a in arrays]
    parts += [f"{k}={v}" for k, v in extra.items()]
    if async_op:
        parts.append("async")
    return " ".join(parts)


_saved_hook = None


def install_excepthook() -> None:
    """After ``init_process_group``: an uncaught exception prints its traceback, then aborts
    every rank (``MPI_Abort``), so a failing rank ends the job instead of leaving the others
    waiting in a collective (as ``python -m mpi4py`` does)."""
    global _saved_hook
    if _saved_hook is not None:
        return
    _saved_hook = prev = sys.excepthook

    def hook(tp, value, tb):
        try:
            prev(tp, value, tb)
            sys.stderr.flush()
            sys.stdout.flush()
        finally:
            _MPI.COMM_WORLD.Abort(1)

    sys.excepthook = hook


def remove_excepthook() -> None:
    global _saved_hook
    if _saved_hook is not None:
        sys.excepthook = _saved_hook
        _saved_hook = None
