"""``python -m retrograd.distributed.run``: a ``torchrun``-like launcher that starts the
processes through ``mpiexec``.

    python -m retrograd.distributed.run --nproc-per-node 2 train.py --epochs 3

runs ``mpiexec -n 2 python -m retrograd.distributed.run --worker train.py --epochs 3``; each
worker sets torchrun's variables (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``) from what the MPI
launcher tells it, then runs the script as ``__main__``, so scripts written for torchrun that
read ``os.environ["LOCAL_RANK"]`` run unchanged. ``-m module`` runs a module instead of a file.
Across nodes, start the same command under the cluster's launcher (``srun``, or ``mpiexec`` with
a host file; see docs/distributed.md).
"""

from __future__ import annotations

import argparse
import os
import runpy
import shutil
import subprocess
import sys
import traceback
from collections.abc import Sequence

__all__ = ["find_mpiexec", "launcher_env", "main"]

# (rank, size, local rank, local size) as each MPI launcher names them.
_LAUNCHERS = (
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),                  # MPICH
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"),                                                  # Open MPI
    ("PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK", "PMIX_LOCAL_SIZE"),                # PMIx
    ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"),      # srun
)


def find_mpiexec() -> str:
    """The ``mpiexec`` to use: ``$MPIEXEC``, else the one beside this Python (where the
    ``mpich`` wheel installs it), else the first on ``PATH``.

    >>> isinstance(find_mpiexec.__doc__, str)
    True
    """
    env = os.environ.get("MPIEXEC")
    if env:
        return env
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(beside):
        return beside
    found = shutil.which("mpiexec")
    if found is None:
        raise RuntimeError('mpiexec not found: pip install "retrograd[distributed]" brings one '
                           "(the mpich wheel), or set MPIEXEC to your MPI's launcher")
    return found


def launcher_env(environ: dict | None = None) -> dict:
    """torchrun's variables derived from the MPI launcher's (only those not already set).

    >>> launcher_env({"PMI_RANK": "1", "PMI_SIZE": "2"})["RANK"]
    '1'
    """
    environ = os.environ if environ is None else environ
    out: dict = {}
    for rank, size, lrank, lsize in _LAUNCHERS:
        if rank in environ and size in environ:
            r, n = environ[rank], environ[size]
            lr = environ.get(lrank, r)
            ln = environ.get(lsize, n).split("(")[0].split(",")[0]
            values = {"RANK": r, "WORLD_SIZE": n, "LOCAL_RANK": lr, "LOCAL_WORLD_SIZE": ln}
            if ln.isdigit() and r.isdigit() and int(ln) > 0:
                values["GROUP_RANK"] = str(int(r) // int(ln))
            values["MASTER_ADDR"] = "127.0.0.1"
            values["MASTER_PORT"] = "29500"
            for k, v in values.items():
                if k not in environ:
                    out[k] = v
            break
    return out


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m retrograd.distributed.run",
        description="Start N copies of a training script through mpiexec, with torchrun's "
                    "environment variables set in each.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", dest="nproc", default="1",
                   help="processes to start (default: %(default)s); 'auto' means one per core")
    p.add_argument("--nnodes", default="1",
                   help="nodes; more than 1 needs --hostfile (default: %(default)s)")
    p.add_argument("--hostfile", default=None,
                   help="host file passed to mpiexec (-f) when running across nodes")
    p.add_argument("--standalone", action="store_true", help="accepted for torchrun's sake")
    p.add_argument("--mpiexec-arg", action="append", default=[],
                   help="one extra argument for mpiexec (repeatable)")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the target as a module (python -m), not a file")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    return p.parse_args(argv)


def _run_worker(ns: argparse.Namespace) -> int:
    for k, v in launcher_env().items():
        os.environ[k] = v
    sys.argv = [ns.script] + list(ns.args)
    try:
        if ns.module:
            runpy.run_module(ns.script, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(ns.script)))
            runpy.run_path(ns.script, run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            _abort(e.code if isinstance(e.code, int) else 1, e)
        raise
    except BaseException:
        # Failing before init_process_group (whose excepthook covers the rest) would leave
        # the other ranks waiting in MPI for ever: show the error, then end the whole job.
        traceback.print_exc()
        _abort(1)
    return 0


def _abort(code: int, exit_exc: SystemExit | None = None) -> None:
    sys.stdout.flush()
    if exit_exc is not None and not isinstance(exit_exc.code, int):
        print(exit_exc.code, file=sys.stderr)
    sys.stderr.flush()
    try:
        from mpi4py import MPI
    except Exception:  # no MPI to abort through: exit as the script did
        raise SystemExit(code) from None
    MPI.COMM_WORLD.Abort(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Launch (or, with ``--worker``, be one of the launched processes)."""
    ns = _parse(sys.argv[1:] if argv is None else argv)
    if ns.worker:
        return _run_worker(ns)
    nproc = (os.cpu_count() or 1) if ns.nproc == "auto" else int(ns.nproc)
    nnodes = int(ns.nnodes)
    cmd = [find_mpiexec(), "-n", str(nproc * nnodes)]
    if nnodes > 1:
        if ns.hostfile is None:
            raise SystemExit("--nnodes above 1 needs --hostfile (or run under srun/mpiexec "
                             "directly; see docs/distributed.md)")
        cmd += ["-f", ns.hostfile, "-ppn", str(nproc)]
    cmd += list(ns.mpiexec_arg)
    cmd += [sys.executable, "-m", "retrograd.distributed.run", "--worker"]
    cmd += (["-m"] if ns.module else []) + [ns.script] + list(ns.args)
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
