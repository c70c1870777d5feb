"""Everyday ops on mid-sized tensors, forward and backward, against torch in the same run.

Workloads (float32): an elementwise chain on 256x256, a reduction over a dim, a batched matmul,
and advanced indexing with a gather. Each prints milliseconds per forward+backward for retrograd
and torch (when installed) and their ratio (< 1 means retrograd is faster).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 python bench/bench_ops.py
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import time_it

import retrograd

try:
    import torch
except ImportError:
    torch = None


def elementwise(lib, x, w):
    y = (x * w + 0.5).tanh()
    y = y * y.sigmoid() - x.exp() * 0.1
    return (y / (w.abs() + 1.0)).sum()


def reduction(lib, x, w):
    return (x.sum(1) * w.mean(0) + x.max(dim=1).values).sum() + (x * w).mean(0).sum()


def batched_matmul(lib, a, b):
    return (a @ b).tanh().sum()


def gather(lib, x, w, idx):
    return (x.gather(1, idx) * w.index_select(0, idx[:, 0])[:, :idx.shape[1]]).sum()



def run(name, f, arrays, ints=(), repeat=5, number=20):
    res = {}
    libs = [("retrograd", retrograd)] + ([("torch", torch)] if torch is not None else [])
    grads = {}
    for lib_name, lib in libs:
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        extra = [lib.tensor(i) for i in ints]

        def step(lib=lib, ts=ts, extra=extra):
            for t in ts:
                t.grad = None
            f(lib, *ts, *extra).backward()

        res[lib_name] = time_it(step, repeat, number) * 1e3
        grads[lib_name] = [t.grad.numpy() for t in ts]
    if "torch" in grads:
        for a, b in zip(grads["retrograd"], grads["torch"]):
            np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)
    line = f"  {name:16s} retrograd {res['retrograd']:8.3f} ms"
    if "torch" in res:
        line += f"   torch {res['torch']:8.3f} ms   ratio {res['retrograd'] / res['torch']:.2f}"
    print(line)
    return res


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--number", type=int, default=20)
    args = p.parse_args()
    if torch is not None:
        torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    f32 = np.float32
    x = rng.standard_normal((256, 256)).astype(f32)
    w = rng.standard_normal((256, 256)).astype(f32)
    a = rng.standard_normal((16, 64, 64)).astype(f32)
    b = rng.standard_normal((16, 64, 64)).astype(f32)
    idx = rng.integers(0, 256, size=(256, 32)).astype(np.int64)
    print("forward + backward, float32, ms per step (best of runs):")
    kw = dict(repeat=args.repeat, number=args.number)
    run("elementwise", elementwise, [x, w], **kw)
    run("reduction", reduction, [x, w], **kw)
    run("batched matmul", batched_matmul, [a, b], **kw)
    run("gather", gather, [x, w], ints=[idx], **kw)


if __name__ == "__main__":
    main()
