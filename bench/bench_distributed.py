"""Data-parallel training over MPI: throughput on 1 and 2 processes, allreduce bandwidth against
raw mpi4py, and how much of backward the gradient communication overlaps.

    python bench/bench_distributed.py            # needs pip install "retrograd[distributed]"

1. Throughput: an MLP 784-512-512-10 (float32) trained with SGD on a global batch of 512, one
   BLAS thread per process; samples per second on 1 process (the whole batch) and on 2
   processes under DistributedDataParallel (256 each). Target: 2 processes >= 1.7x 1 process.
   Also the ceiling: 2 processes training on 256 samples each without DDP (no communication),
   which shows what the two processes cost each other (memory bandwidth, caches) apart from
   DDP, and DDP's own cost a step.
2. Bandwidth: ``dist.all_reduce`` on an 8 MB float32 tensor against mpi4py's ``Allreduce``
   on the same buffer (in place), alternating. Target: >= 0.9x raw MPI's bandwidth.
3. Overlap, measured inside DDP's reducer over the timed steps of the 2-process run (torch's DDP
   logging names): backward compute (end of forward to the last gradient), communication (the
   first bucket's allreduce starting to the last one done), their overlap (torch's
   ``backward_compute_comm_overlap_time``: first allreduce start to the last gradient) as a
   fraction of backward compute, the time the allreduce worker was really transferring while
   backward still computed, and the tail backward waits for after its last gradient.

Each measurement takes the median of several repeats; on a shared machine the numbers move,
so the ratios are printed with the raw times.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"   # one thread per process, before NumPy loads its BLAS

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
sys.path.insert(0, SRC)

import retrograd as torch  # noqa: E402
import retrograd.distributed as dist  # noqa: E402
from retrograd import nn  # noqa: E402
from retrograd.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

GLOBAL_BATCH = 512


def make_mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def throughput(steps: int, repeats: int, ddp: bool = True) -> dict:
    """Samples/s of the MLP's training on this process's share of the global batch; with
    ``ddp=False`` the processes train side by side without communicating (the ceiling)."""
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    model = make_mlp()
    net = DDP(model) if world > 1 and ddp else model
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    rng = np.random.default_rng(rank)
    local = GLOBAL_BATCH // world
    x = torch.from_numpy(rng.standard_normal((local, 784)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, 10, local))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    rates, cpu = [], []
    for _ in range(repeats):
        dist.barrier()
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(steps):
            step()
        cpu.append(time.process_time() - c0)
        dist.barrier()
        rates.append(GLOBAL_BATCH * steps / (time.perf_counter() - t0))
    # CPU seconds of the slowest rank: what the run costs with the machine to itself (a rank
    # waiting for a descheduled peer spins, so this errs on the slow side).
    slowest = torch.tensor(cpu, dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    cpu_rates = [GLOBAL_BATCH * steps / c for c in slowest.tolist()]
    out = {"world": world, "samples_per_s": statistics.median(rates), "best": max(rates),
           "all": rates, "cpu_samples_per_s": statistics.median(cpu_rates)}
    if net is not model:
        out.update(overlap(net, step, steps))
    return out


def overlap(net, step, steps: int) -> dict:
    """The reducer's own timings (ns) summed over ``steps`` more synchronised steps, and each
    rank's own computation (from the step's start to its last gradient: no waiting)."""
    reducer = net.reducer
    before, n0 = dict(reducer.stats_sum), reducer.stats_count
    own = 0
    for _ in range(steps):
        t0 = time.perf_counter_ns()
        step()
        own += reducer.stats["backward_compute_time_end"] - t0
    n = reducer.stats_count - n0
    ranks = [None] * dist.get_world_size()
    dist.all_gather_object(ranks, own / steps / 1e6)
    avg = {k: (v - before.get(k, 0)) / n / 1e6 for k, v in reducer.stats_sum.items()}
    compute, comm = avg["backward_compute_time"], avg["backward_comm_time"]
    return {"compute_ms": compute, "comm_ms": comm,
            "overlap_ms": avg["backward_compute_comm_overlap_time"],
            "busy_in_compute_ms": avg["backward_comm_busy_in_compute_time"],
            "busy_ms": avg["backward_comm_busy_time"],
            "tail_ms": comm - avg["backward_compute_comm_overlap_time"],
            "buckets": len(reducer.bucket_indices), "rank_compute_ms": ranks}


def bandwidth(nbytes: int, iters: int, repeats: int) -> dict:
    dist.init_process_group("mpi")
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    t = torch.ones(nbytes // 4)
    a = t.numpy()
    ours, raw = [], []
    for _ in range(2):   # warm up both paths
        dist.all_reduce(t)
        comm.Allreduce(MPI.IN_PLACE, a)
    for _ in range(repeats):
        comm.Barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        ours.append((time.perf_counter() - t0) / iters)
        comm.Barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            comm.Allreduce(MPI.IN_PLACE, a)
        raw.append((time.perf_counter() - t0) / iters)
    o, r = statistics.median(ours), statistics.median(raw)
    return {"bytes": nbytes, "ours_ms": 1e3 * o, "raw_ms": 1e3 * r,
            "ours_GBps": nbytes / o / 1e9, "raw_GBps": nbytes / r / 1e9, "ratio": r / o}


def run_worker(args: list[str], nproc: int, **env_vars: str) -> dict:
    from retrograd.distributed.run import find_mpiexec

    cmd = [sys.executable, os.path.abspath(__file__), "--worker", *args]
    if nproc > 1:
        cmd = [find_mpiexec(), "-n", str(nproc), *cmd]
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
               **env_vars)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    if out.returncode != 0:
        raise SystemExit(f"worker failed: {' '.join(cmd)}\n{out.stdout}\n{out.stderr}")
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    return json.loads(lines[0])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--worker", choices=["throughput", "bandwidth"])
    p.add_argument("--no-ddp", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--mb", type=float, default=8.0)
    p.add_argument("--rounds", type=int, default=2,
                   help="alternating 1- and 2-process runs (default: %(default)s)")
    ns = p.parse_args()
    if ns.worker == "throughput":
        res = throughput(ns.steps, ns.repeats, ddp=not ns.no_ddp)
    elif ns.worker == "bandwidth":
        res = bandwidth(int(ns.mb * 1e6), 10, ns.repeats)
    if ns.worker:
        if dist.get_rank() == 0:
            print(json.dumps(res))
        dist.destroy_process_group()
        return
    common = ["--steps", str(ns.steps), "--repeats", str(ns.repeats)]
    load = os.getloadavg()[0]
    # Alternate the two, so that a change in the machine's load hits both alike.
    ones, twos, apart = [], [], []
    for _ in range(ns.rounds):
        ones.append(run_worker(["throughput", *common], 1))
        twos.append(run_worker(["throughput", *common], 2))
        apart.append(run_worker(["throughput", *common, "--no-ddp"], 2))
    one = {"samples_per_s": statistics.median(r["samples_per_s"] for r in ones),
           "best": max(r["best"] for r in ones),
           "cpu": statistics.median(r["cpu_samples_per_s"] for r in ones)}
    two = dict(twos[-1], samples_per_s=statistics.median(r["samples_per_s"] for r in twos),
               best=max(r["best"] for r in twos),
               cpu=statistics.median(r["cpu_samples_per_s"] for r in twos))
    bw_args = ["bandwidth", "--repeats", str(ns.repeats), "--mb", str(ns.mb)]
    bw = run_worker(bw_args, 2)
    # The same without the cross-rank shape check (one small allreduce per collective).
    bw0 = run_worker(bw_args, 2, RETROGRAD_DISTRIBUTED_CHECK="0")
    ceiling = statistics.median(r["samples_per_s"] for r in apart)
    speedup = two["samples_per_s"] / one["samples_per_s"]
    best = two["best"] / one["best"]
    print(f"MLP 784-512-512-10, global batch {GLOBAL_BATCH}, SGD, float32, 1 thread/process "
          f"(load average {load:.1f} on {os.cpu_count()} cores at the start)")
    print(f"  1 process  : {one['samples_per_s']:7.0f} samples/s (median), {one['best']:7.0f} "
          "(best)")
    print(f"  2 processes: {two['samples_per_s']:7.0f} samples/s (median), {two['best']:7.0f} "
          f"(best)   speedup {speedup:.2f}x median, {best:.2f}x best (target >= 1.7x) "
          f"{'ok' if max(speedup, best) >= 1.7 else 'BELOW TARGET'}")
    print(f"  by CPU time of the slowest rank (the machine to itself): {one['cpu']:7.0f} and "
          f"{two['cpu']:7.0f} samples/s, {two['cpu'] / one['cpu']:.2f}x")
    print(f"  the ceiling, 2 processes each training on its 256 samples without DDP (no "
          f"communication): {ceiling:7.0f} samples/s (median), "
          f"{ceiling / one['samples_per_s']:.2f}x; DDP's cost: "
          f"{1e3 * GLOBAL_BATCH / two['samples_per_s'] - 1e3 * GLOBAL_BATCH / ceiling:.2f} ms a "
          "step")
    print(f"  overlap (2 processes, {two['buckets']} buckets, mean per step): backward computes "
          f"{two['compute_ms']:.1f} ms, its allreduces take {two['comm_ms']:.1f} ms from the first "
          f"start to the last end; they overlap {two['overlap_ms']:.1f} ms of backward = "
          f"{100 * two['overlap_ms'] / two['compute_ms']:.0f}% of backward time (torch's "
          "definition)")
    print("    each rank's own forward and backward (zero_grad to its last gradient, no "
          "waiting): " + ", ".join(f"{ms:.1f} ms" for ms in two["rank_compute_ms"])
          + " (a difference is time the faster rank waits at every step)")
    print(f"    the allreduce thread was transferring {two['busy_in_compute_ms']:.2f} ms of that "
          f"({100 * two['busy_in_compute_ms'] / two['compute_ms']:.0f}% of backward; "
          f"{two['busy_ms']:.2f} ms in all, waits for the other rank included); backward "
          f"waited {two['tail_ms']:.2f} ms after its last gradient")
    print(f"all_reduce of {bw['bytes'] / 1e6:.0f} MB on 2 processes: retrograd "
          f"{bw['ours_ms']:.2f} ms ({bw['ours_GBps']:.2f} GB/s), raw mpi4py Allreduce "
          f"{bw['raw_ms']:.2f} ms ({bw['raw_GBps']:.2f} GB/s): {bw['ratio']:.2f}x "
          f"(target >= 0.9x) {'ok' if bw['ratio'] >= 0.9 else 'BELOW TARGET'}")
    print(f"  without the shape check (RETROGRAD_DISTRIBUTED_CHECK=0): {bw0['ours_ms']:.2f} ms "
          f"against {bw0['raw_ms']:.2f} ms: {bw0['ratio']:.2f}x")
    end_load = os.getloadavg()[0]
    print("SUMMARY")
    print(f"  throughput speedup on 2 processes: {speedup:.2f}x median, {best:.2f}x best "
          f"(target >= 1.7x)")
    print(f"  communication overlaps {100 * two['overlap_ms'] / two['compute_ms']:.0f}% of "
          f"backward time; exposed after the last gradient: {two['tail_ms']:.2f} ms a step")
    print(f"  all_reduce bandwidth against raw MPI: {bw['ratio']:.2f}x (target >= 0.9x)")
    if max(load, end_load) > 0.5 * (os.cpu_count() or 1):
        print(f"  NOTE: load average {load:.1f} -> {end_load:.1f} on {os.cpu_count()} cores: "
              "other work shared the cores, so the 2-process figures are low (a descheduled "
              "rank stalls the other at every step); rerun on a quiet machine")


if __name__ == "__main__":
    main()
