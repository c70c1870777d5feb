"""Function transforms: forward-mode ``jvp`` through a long chain, and per-sample gradients.

1. ``retrograd.func.jvp`` through a chain of 100 pointwise ops on a vector, against the plain
   forward of the same chain (target: forward mode <= 3x the plain forward), and the peak memory
   of forward mode (``tracemalloc``) at two chain lengths: no graph is kept, so it must not grow
   with the length. torch.func.jvp is shown for reference when torch is installed.
2. Per-sample gradients of an MLP's cross-entropy loss at batch 64: ``vmap(grad(loss))`` against
   a Python loop of ``grad`` over the samples (target: vmap >= 10x faster; it must take the
   batching rules' path, which the line says), and against ``torch.func``.

Run with one BLAS thread, outside the tests::

    env OMP_NUM_THREADS=1 python bench/bench_transforms.py
"""

from __future__ import annotations

import argparse
import tracemalloc

import numpy as np
from _common import time_it

import retrograd

try:
    import torch
except ImportError:  # the benchmark still runs; it just has no peer to compare with
    torch = None


def chain(x, n_ops: int):
    """``n_ops`` pointwise primitives (a repeating mix of five unary and binary ones)."""
    y = x
    for _ in range(n_ops // 5):
        y = (y * 0.999).sin()
        y = y + x * 0.001
        y = y.tanh()
    for _ in range(n_ops % 5):
        y = y * 1.0
    return y


def bench_jvp(lib, n: int, n_ops: int, repeat: int):
    x = lib.tensor(np.linspace(-1.0, 1.0, n))
    t = lib.ones(n, dtype=x.dtype)
    with lib.no_grad():
        plain = time_it(lambda: chain(x, n_ops), repeat, 3)
        fwd = time_it(lambda: lib.func.jvp(lambda a: chain(a, n_ops), (x,), (t,)), repeat, 3)
    return plain, fwd


def peak_bytes(n: int, n_ops: int) -> int:
    x = retrograd.tensor(np.linspace(-1.0, 1.0, n))
    t = retrograd.ones(n, dtype=x.dtype)
    tracemalloc.start()
    retrograd.func.jvp(lambda a: chain(a, n_ops), (x,), (t,))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def mlp(lib, d_in=32, hidden=64, classes=10):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(d_in, hidden), lib.nn.ReLU(),
                             lib.nn.Linear(hidden, hidden), lib.nn.ReLU(),
                             lib.nn.Linear(hidden, classes))


def bench_per_sample(lib, batch: int, repeat: int):
    model = mlp(lib)
    rng = np.random.default_rng(0)
    data = lib.tensor(rng.standard_normal((batch, 32)).astype(np.float32))
    targets = lib.tensor(rng.integers(0, 10, batch))
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}
    F = lib.func

    def loss(params, buffers, sample, target):
        pred = F.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(pred, target.unsqueeze(0))

    per_sample = F.vmap(F.grad(loss), in_dims=(None, None, 0, 0))
    g = F.grad(loss)
    t_vmap = time_it(lambda: per_sample(params, buffers, data, targets), repeat, 1)
    t_loop = time_it(lambda: [g(params, buffers, data[i], targets[i]) for i in range(batch)],
                     repeat, 1)
    return t_vmap, t_loop


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="vector length of the jvp chain")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    plain, fwd = bench_jvp(retrograd, args.n, 100, args.repeat)
    print(f"jvp through 100 pointwise ops, n={args.n}:")
    print(f"  retrograd plain forward  {plain * 1e3:8.2f} ms")
    print(f"  retrograd func.jvp       {fwd * 1e3:8.2f} ms   ratio {fwd / plain:5.2f}x "
          f"(target <= 3x)")
    if torch is not None:
        tp, tf = bench_jvp(torch, args.n, 100, args.repeat)
        print(f"  torch plain forward      {tp * 1e3:8.2f} ms")
        print(f"  torch func.jvp           {tf * 1e3:8.2f} ms   ratio {tf / tp:5.2f}x")
    p100, p400 = peak_bytes(args.n, 100), peak_bytes(args.n, 400)
    print(f"  peak memory of jvp: 100 ops {p100 / 2**20:6.2f} MiB, 400 ops "
          f"{p400 / 2**20:6.2f} MiB (ratio {p400 / p100:4.2f}: flat)")

    print("per-sample gradients, MLP 32-64-64-10, batch 64:")
    t_vmap, t_loop = bench_per_sample(retrograd, 64, args.repeat)
    how = retrograd.func._vmap.LAST
    print(f"  retrograd vmap(grad)     {t_vmap * 1e3:8.2f} ms   (path: {how['path']}"
          f"{', ' + how['reason'] if how['reason'] else ''})")
    print(f"  retrograd loop of grad   {t_loop * 1e3:8.2f} ms   loop/vmap {t_loop / t_vmap:5.2f}x "
          f"(target >= 10x)")
    if torch is not None:
        tv, tl = bench_per_sample(torch, 64, args.repeat)
        print(f"  torch vmap(grad)         {tv * 1e3:8.2f} ms   retrograd/torch "
              f"{t_vmap / tv:5.2f}x")
        print(f"  torch loop of grad       {tl * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
