"""Mixed precision: a training step under ``autocast(bfloat16)`` against the float32 step.

Two workloads, the MLP (784-512-512-10, batch 256) and the transformer block (batch 8,
sequence 64, width 128, 4 heads) of ``bench_train.py``, each one training step (forward, loss,
backward, optimizer step) written as PyTorch code, run:

- in float32;
- under ``autocast(device_type="cpu", dtype=bfloat16)`` (parameters stay float32: the listed ops
  cast their inputs, matmuls run through float32 BLAS on bfloat16 values and round);

in retrograd and in torch (when installed). It prints milliseconds per step, the ratio
autocast/float32 (issue 10's target: at most 1.3 in retrograd) and retrograd/torch for the
autocast step, and the bytes the graph saves for backward (``autograd.graph.memory_report``):
activations saved in bfloat16 take about half the float32 bytes. Run on one thread::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 python bench/bench_amp.py
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

try:  # the script runs from a checkout without installing retrograd
    import retrograd as rt
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
    import retrograd as rt

from _common import time_it
from bench_train import make_block, make_mlp

try:
    import torch
except ImportError:
    torch = None


def _workloads(lib, quick: bool):
    """(name, model, step inputs, loss function, optimizer) for each workload."""
    rs = np.random.default_rng(0)
    F = lib.nn.functional
    batch = 64 if quick else 256
    mlp = make_mlp(lib)
    x = lib.tensor(rs.standard_normal((batch, 784)).astype(np.float32))
    y = lib.tensor(rs.integers(0, 10, batch))
    block = make_block(lib)
    xb = lib.tensor(rs.standard_normal((8, 64, 128)).astype(np.float32))
    tb = lib.tensor(rs.standard_normal((8, 64, 128)).astype(np.float32))
    return [
        ("MLP", mlp, (x, y), lambda out, t: F.cross_entropy(out, t),
         lib.optim.SGD(mlp.parameters(), lr=0.01, momentum=0.9)),
        ("transformer block", block, (xb, tb), lambda out, t: F.mse_loss(out, t),
         lib.optim.AdamW(block.parameters(), lr=1e-3)),
    ]


def _step(lib, model, inputs, loss_fn, opt, amp: bool):
    def step():
        opt.zero_grad()
        with lib.autocast(device_type="cpu", dtype=lib.bfloat16, enabled=amp):
            loss = loss_fn(model(inputs[0]), inputs[1])
        loss.backward()
        opt.step()
    return step


def _saved_bytes(model, inputs, loss_fn, amp: bool) -> int:
    from retrograd.autograd.graph_tools import memory_report

    with rt.autocast(device_type="cpu", dtype=rt.bfloat16, enabled=amp):
        loss = loss_fn(model(inputs[0]), inputs[1])
    n = memory_report(loss).total_bytes
    del loss
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer, smaller runs")
    args = ap.parse_args()
    repeat, number = (3, 2) if args.quick else (5, 5)
    libs = [rt] + ([torch] if torch is not None else [])
    if torch is not None:
        torch.set_num_threads(1)
    results = {}
    for lib in libs:
        for name, model, inputs, loss_fn, opt in _workloads(lib, args.quick):
            for amp in (False, True):
                step = _step(lib, model, inputs, loss_fn, opt, amp)
                step()  # warm up
                results[lib.__name__, name, amp] = time_it(step, repeat, number)
    print(f"retrograd {rt.__version__ if hasattr(rt, '__version__') else ''}"
          + (f", torch {torch.__version__}" if torch is not None else ""))
    for name, model, inputs, loss_fn, _ in _workloads(rt, args.quick):
        f32, amp = results["retrograd", name, False], results["retrograd", name, True]
        print(f"\n{name}: one training step, ms")
        print(f"  retrograd  float32 {f32 * 1e3:8.2f}   autocast(bf16) {amp * 1e3:8.2f}   "
              f"ratio {amp / f32:.2f}  (target <= 1.3)")
        if torch is not None:
            t32, tamp = results["torch", name, False], results["torch", name, True]
            print(f"  torch      float32 {t32 * 1e3:8.2f}   autocast(bf16) {tamp * 1e3:8.2f}   "
                  f"ratio {tamp / t32:.2f}")
            print(f"  retrograd / torch under autocast: {amp / tamp:.2f}")
        b32 = _saved_bytes(model, inputs, loss_fn, False)
        b16 = _saved_bytes(model, inputs, loss_fn, True)
        print(f"  saved for backward: float32 {b32 / 2**20:.2f} MiB, autocast "
              f"{b16 / 2**20:.2f} MiB (ratio {b16 / b32:.2f})")


if __name__ == "__main__":
    main()
