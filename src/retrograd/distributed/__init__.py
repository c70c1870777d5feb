"""``retrograd.distributed``: torch.distributed's API for data-parallel training, on MPI.

Launch ``N`` processes with ``mpiexec -n N python train.py`` (or ``python -m
retrograd.distributed.run --nproc-per-node N train.py``), call ``init_process_group()`` in each,
then use the collectives (``all_reduce``, ``broadcast``, ...) or wrap the model in
``nn.parallel.DistributedDataParallel``. MPI comes from mpi4py, which the ``distributed`` extra
installs (``pip install "retrograd[distributed]"``, with an MPI library from the ``mpich``
wheel); without it ``is_available()`` is False and ``init_process_group`` says what to install.
Importing this package does not start MPI: ``init_process_group`` does.

>>> import retrograd.distributed as dist
>>> dist.ReduceOp.SUM
<RedOpType.SUM: 0>
"""

from __future__ import annotations

from . import distributed_c10d
from .distributed_c10d import *  # noqa: F403
from .distributed_c10d import __all__ as _c10d_all
from .reducer import GradBucket, Reducer

__all__ = list(_c10d_all) + ["GradBucket", "Reducer"]
