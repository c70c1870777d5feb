"""Per-op overhead: a chain of small elementwise ops, forward and backward, against torch.

Two workloads, each run in retrograd, in torch (when installed) and, for the first, written by
hand in NumPy with no graph (the floor an engine on NumPy can approach) and in the leanest
engine that still records a graph in Python (``_floor_engine.py``: nodes, edges, saved arrays,
checked gradients and nothing else; the floor for any engine written in Python):

1. a chain of elementwise ops on 8-element float32 tensors, forward and backward, reported in
   microseconds per op;
2. a chain of 100,000 scalar ops: forward, backward and teardown (``del``), reported in
   seconds.

Run with one BLAS thread, outside the tests (timings are noisy; compare ratios from one run)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 python bench/bench_overhead.py
"""

from __future__ import annotations

import argparse
import gc
import time

import _floor_engine
import numpy as np
from _common import time_it

import retrograd

try:
    import torch
except ImportError:  # the benchmark still runs; it just has no peer to compare with
    torch = None

N_BLOCKS = 50  # each block is 4 ops: mul, add, sin, mul by a scalar
OPS = 4 * N_BLOCKS + 1  # + the final sum


def chain(lib, x, w, b):
    y = x
    for _ in range(N_BLOCKS):
        y = (y * w + b).sin() * 0.9
    return y.sum()


def numpy_chain(x, w, b):
    """The same arithmetic by hand: forward keeping what backward needs, then backward."""
    y = x
    tape = []
    for _ in range(N_BLOCKS):
        m = y * w
        a = m + b
        s = np.sin(a)
        tape.append((y, a))
        y = s * 0.9
    gx = np.ones_like(x)
    gw = np.zeros_like(w)
    gb = np.zeros_like(b)
    for y_in, a in reversed(tape):
        gs = gx * 0.9
        ga = gs * np.cos(a)
        gb += ga
        gw += ga * y_in
        gx = ga * w
    return gx, gw, gb



class _provenance:
    """Switch provenance recording on or off in the modules that read the flag."""

    def __init__(self, on: bool) -> None:
        from retrograd.ops import _apply, _base, inplace

        self.mods = (_apply, _base, inplace)
        self.on = on

    def __enter__(self):
        self.old = [m.PROVENANCE for m in self.mods]
        for m in self.mods:
            m.PROVENANCE = self.on

    def __exit__(self, *exc):
        for m, v in zip(self.mods, self.old):
            m.PROVENANCE = v


def bench_small(repeat: int, number: int) -> dict:
    rng = np.random.default_rng(0)
    xs, ws, bs = (rng.standard_normal(8).astype(np.float32) for _ in range(3))
    results = {}

    x = retrograd.tensor(xs, requires_grad=True)
    w = retrograd.tensor(ws, requires_grad=True)
    b = retrograd.tensor(bs, requires_grad=True)

    def rg_step():
        x.grad = w.grad = b.grad = None
        chain(retrograd, x, w, b).backward()

    # With provenance (each node recording the user's line that made it) on, as by default, and
    # off, as RETROGRAD_PROVENANCE=0 makes it: interleaved rounds, the best of each, so that
    # drift in the machine's speed does not land on one side.
    on, off = [], []
    for _ in range(3):
        on.append(time_it(rg_step, repeat, number))
        with _provenance(False):
            off.append(time_it(rg_step, repeat, number))
    results["retrograd"] = min(on) / OPS * 1e6
    results["retrograd (provenance off)"] = min(off) / OPS * 1e6

    if torch is not None:
        tx = torch.tensor(xs, requires_grad=True)
        tw = torch.tensor(ws, requires_grad=True)
        tb = torch.tensor(bs, requires_grad=True)

        def torch_step():
            tx.grad = tw.grad = tb.grad = None
            chain(torch, tx, tw, tb).backward()

        results["torch"] = time_it(torch_step, repeat, number) / OPS * 1e6
        rg_grads = (x.grad.numpy(), w.grad.numpy(), b.grad.numpy())
        t_grads = (tx.grad.numpy(), tw.grad.numpy(), tb.grad.numpy())
        for a, t in zip(rg_grads, t_grads):
            np.testing.assert_allclose(a, t, rtol=1e-4, atol=1e-5)

    results["numpy"] = time_it(lambda: numpy_chain(xs, ws, bs), repeat, number) / OPS * 1e6

    fx, fw, fb = (_floor_engine.leaf(a) for a in (xs, ws, bs))

    def floor_step():
        fx.grad = fw.grad = fb.grad = None
        _floor_engine.backward(chain(None, fx, fw, fb))

    results["python floor"] = time_it(floor_step, repeat, number) / OPS * 1e6
    for a, f in zip((x.grad.numpy(), w.grad.numpy(), b.grad.numpy()), (fx.grad, fw.grad, fb.grad)):
        np.testing.assert_allclose(a, f, rtol=1e-5, atol=1e-6)
    return results


def bench_long(n: int) -> dict:
    results = {}
    libs = [("retrograd", retrograd)] + ([("torch", torch)] if torch is not None else [])
    for name, lib in libs:
        x = lib.tensor(1.0, requires_grad=True)
        gc.collect()
        t0 = time.perf_counter()
        y = x
        for _ in range(n):
            y = y * 1.0000001
        t1 = time.perf_counter()
        y.backward()
        t2 = time.perf_counter()
        del y
        t3 = time.perf_counter()
        results[name] = (t1 - t0, t2 - t1, t3 - t2)
    return results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--number", type=int, default=200)
    p.add_argument("--long", type=int, default=100_000, help="length of the scalar chain")
    args = p.parse_args()
    if torch is not None:
        torch.set_num_threads(1)
        print(f"torch {torch.__version__}, numpy {np.__version__}")
    else:
        print("torch is not installed: retrograd and NumPy only")

    r = bench_small(args.repeat, args.number)
    print(f"\nelementwise chain, 8-element float32, forward + backward ({OPS} ops), us per op:")
    for k, v in r.items():
        print(f"  {k:10s} {v:7.2f}")
    if "torch" in r:
        print(f"  ratio retrograd / torch: {r['retrograd'] / r['torch']:.2f}  (target <= 0.45)")
    print(f"  ratio retrograd / numpy: {r['retrograd'] / r['numpy']:.2f}  "
          "(target <= 2.5, goal 2.0; the floor is 1)")
    print(f"  ratio python floor / numpy: {r['python floor'] / r['numpy']:.2f}  (the leanest "
          "graph-recording engine in Python: see _floor_engine.py)")
    off = r["retrograd (provenance off)"]
    print(f"  provenance cost: {100 * (r['retrograd'] / off - 1):+.1f}% (on vs off; "
          "target <= 5%)")

    r = bench_long(args.long)
    print(f"\nscalar chain of {args.long} muls, seconds (forward, backward, teardown):")
    for k, (f, b, d) in r.items():
        print(f"  {k:10s} {f:7.3f} {b:7.3f} {d:7.3f}   total {f + b + d:7.3f}")
    if "torch" in r:
        tot = {k: sum(v) for k, v in r.items()}
        print(f"  ratio retrograd / torch (total): {tot['retrograd'] / tot['torch']:.2f}  "
              "(target <= 0.6)")


if __name__ == "__main__":
    main()
