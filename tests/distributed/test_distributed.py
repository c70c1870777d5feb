"""retrograd.distributed, DistributedDataParallel and DistributedSampler.

The collectives and DDP run in real MPI jobs of 2 processes over loopback, each launch bounded
by a timeout: one job runs every check of ``mpi_checks.py`` (through the launcher, ``python -m
retrograd.distributed.run``), one shows that a raising rank ends the job, one runs the demo
data-parallel. Tests that need MPI skip without mpi4py (the ``distributed`` extra). The
sampler's order and DDP's bucket assignment are compared with torch in this process.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import pytest

import retrograd
import retrograd.distributed as dist
from retrograd.distributed import _mpi
from retrograd.distributed.run import find_mpiexec, launcher_env
from retrograd.nn.parallel.distributed import bucket_assignment
from retrograd.utils.data.distributed import DistributedSampler

HERE = pathlib.Path(__file__).resolve().parent
SRC = str(pathlib.Path(retrograd.__file__).resolve().parents[1])
HAS_MPI = importlib.util.find_spec("mpi4py") is not None
needs_mpi = pytest.mark.skipif(not HAS_MPI, reason='needs pip install "retrograd[distributed]"')


def launch(cmd: list, timeout: float = 60, cwd=None) -> tuple[int, str, str, float]:
    """Run an MPI job; on timeout kill its whole process group (mpiexec and the ranks)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env["OMP_NUM_THREADS"] = env["OPENBLAS_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
        env.pop(var, None)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True, text=True,
                            cwd=cwd)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"MPI job timed out after {timeout} s:\n{out}\n{err}")
    return proc.returncode, out, err, time.perf_counter() - t0


@needs_mpi
def test_collectives_ddp_sampler_and_the_docs_page_on_two_ranks(tmp_path):
    page = HERE.parent.parent / "docs" / "distributed.md"
    rc, out, err, _ = launch([sys.executable, "-m", "retrograd.distributed.run",
                              "--nproc-per-node", "2", str(HERE / "mpi_checks.py"),
                              "--docs", str(page)], cwd=tmp_path)
    assert rc == 0 and "ALL CHECKS PASSED" in out, out + err
    # docs/distributed.md's training script ran on both ranks, and rank 0 saved the model.
    m = re.search(r"^accuracy (\d\.\d\d) on 2 processes$", out, re.M)
    assert m and float(m.group(1)) > 0.9, out + err
    state = retrograd.load(tmp_path / "model.pt")
    assert list(state) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    check_hooks_against_torch(tmp_path)


def check_hooks_against_torch(where) -> None:
    """The gradients DDP gave under each communication hook (saved by mpi_checks.py on each
    rank, with the rank's local ones) against torch's arithmetic for that hook."""
    if importlib.util.find_spec("torch") is None:
        return   # the oracle is not installed
    import numpy as np
    import torch

    ranks = [np.load(where / f"hooks_rank{r}.npz") for r in (0, 1)]

    def grads(r, key):
        return [torch.from_numpy(ranks[r][f"{key}__{j}"]) for j in range(4)]

    for i in range(3):
        local = [grads(0, f"local_{i}"), grads(1, f"local_{i}")]

        def averaged(dtype, local=local):
            return [(a.to(dtype).div(2) + b.to(dtype).div(2)).float() for a, b in zip(*local)]

        want = {"default": [a * 0.5 + b * 0.5 for a, b in zip(*local)],
                "fp16": averaged(torch.float16), "bf16": averaged(torch.bfloat16)}
        want["allreduce"] = [a.div(2) + b.div(2) for a, b in zip(*local)]
        want["fp16_wrapper"] = want["fp16"]
        for r in (0, 1):
            for name, expected in want.items():
                for got, w in zip(grads(r, f"{name}_{i}"), expected):
                    assert torch.equal(got, w), (name, i, r, got, w)
            # a hook that returns the bucket as it is leaves the local sum, undivided
            for got, w in zip(grads(r, f"noop_{i}"), local[r]):
                assert torch.equal(got, w)
        # compression did round: fp16 and bf16 differ from the full-precision average
        assert not all(torch.equal(a, b) for a, b in zip(want["bf16"], want["default"]))


FAILING = """
import os
import retrograd as torch
import retrograd.distributed as dist
if os.environ.get("FAIL_EARLY") and os.environ["RANK"] == "1":
    raise ValueError("rank 1 fails on purpose")   # before init_process_group
dist.init_process_group()
if dist.get_rank() == 1:
    raise ValueError("rank 1 fails on purpose")
dist.all_reduce(torch.ones(3))   # rank 0 would wait here for ever
"""


@needs_mpi
@pytest.mark.parametrize("how", ["mpiexec", "launcher"])
def test_a_raising_rank_ends_the_job(tmp_path, how, monkeypatch):
    """After init_process_group the excepthook aborts the job; under the launcher, a rank
    failing even before init does."""
    script = tmp_path / "failing.py"
    script.write_text(FAILING)
    if how == "mpiexec":
        cmd = [find_mpiexec(), "-n", "2", sys.executable, str(script)]
    else:
        monkeypatch.setenv("FAIL_EARLY", "1")
        cmd = [sys.executable, "-m", "retrograd.distributed.run", "--nproc-per-node", "2",
               str(script)]
    rc, out, err, seconds = launch(cmd)
    assert rc != 0
    assert "ValueError: rank 1 fails on purpose" in err
    assert seconds < 30


ACCURACY = re.compile(r"^accuracy: (\d+(?:\.\d+)?)% on (\d+) held-out points", re.M)


@needs_mpi
def test_demo_runs_data_parallel_with_the_same_accuracy(tmp_path):
    args = ["-m", "retrograd", "--epochs", "2", "--points", "100", "--quiet"]
    rc, out, err, _ = launch([find_mpiexec(), "-n", "2", sys.executable, *args,
                              "--distributed", "--out", str(tmp_path / "ddp")])
    assert rc == 0, out + err
    rc1, out1, err1, _ = launch([sys.executable, *args, "--out", str(tmp_path / "one")])
    assert rc1 == 0, out1 + err1
    assert ACCURACY.findall(out) == ACCURACY.findall(out1) != []
    assert "2 processes" in out


def test_without_init_errors_are_torchs():
    assert dist.is_available() == HAS_MPI
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.all_reduce(retrograd.ones(2))
    with pytest.raises(RuntimeError, match="runs on MPI only"):
        dist.init_process_group("nccl")
    assert str(dist.ReduceOp.AVG) == "RedOpType.AVG"
    assert dist.ReduceOp(dist.ReduceOp.MAX) is dist.ReduceOp.MAX


def test_without_mpi4py_init_names_the_extra(monkeypatch):
    monkeypatch.setattr(_mpi, "available", lambda: False)
    monkeypatch.setattr(_mpi, "_MPI", None)
    assert dist.is_available() is False
    with pytest.raises(RuntimeError, match=re.escape('pip install "retrograd[distributed]"')):
        dist.init_process_group()
    with pytest.raises(RuntimeError, match="Requires distributed package to be available"):
        DistributedSampler(range(4))


def test_launcher_env_maps_mpi_launchers():
    env = launcher_env({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4",
                        "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2"})
    assert (env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"], env["GROUP_RANK"]) == \
        ("3", "4", "1", "1")
    assert launcher_env({"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "RANK": "0"}).get("RANK") \
        is None   # already set: left alone
    assert launcher_env({}) == {}


def test_bucket_assignment_matches_torch(torch):
    import numpy as np

    rng = np.random.default_rng(0)
    tdist = torch.distributed
    for trial in range(20):
        k = int(rng.integers(1, 12))
        numels = rng.integers(1, 400_000, k).tolist()
        kinds = [[torch.float32, torch.float64][int(i)] for i in rng.integers(0, 2, k)]
        limits = [[1 << 20], [1 << 20, 1 << 22], [5_000, 800_000]][trial % 3]
        tensors = [torch.empty(n, dtype=d) for n, d in zip(numels, kinds)]
        want, _ = tdist._compute_bucket_assignment_by_size(tensors, limits)
        sizes = [t.numel() * t.element_size() for t in tensors]
        assert bucket_assignment(sizes, [str(d) for d in kinds], limits) == want
        # re-bucketing: the tensors in gradient order, buckets left in the order they formed
        want, _ = tdist._compute_bucket_assignment_by_size(tensors, limits, [False] * k,
                                                           list(range(k)))
        assert bucket_assignment(sizes, [str(d) for d in kinds], limits,
                                 ready_order=True) == want, (numels, kinds, limits)


CASES = [(10, 3, r, sh, d) for r in range(3) for sh in (False, True) for d in (False, True)]
CASES += [(2, 4, 3, True, False), (7, 2, 1, True, True), (1, 3, 2, False, False)]


@pytest.mark.parametrize("size,replicas,rank,shuffle,drop_last", CASES)
def test_sampler_indices_equal_torchs(torch, size, replicas, rank, shuffle, drop_last):
    for seed, epoch in ((0, 0), (7, 3)):
        ours = DistributedSampler(range(size), num_replicas=replicas, rank=rank,
                                  shuffle=shuffle, seed=seed, drop_last=drop_last)
        theirs = torch.utils.data.distributed.DistributedSampler(
            range(size), num_replicas=replicas, rank=rank, shuffle=shuffle, seed=seed,
            drop_last=drop_last)
        ours.set_epoch(epoch)
        theirs.set_epoch(epoch)
        assert list(ours) == list(theirs)
        assert len(ours) == len(theirs)


def test_sampler_rejects_a_bad_rank():
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval "
                                         r"\[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
