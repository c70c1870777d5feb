"""Hessian-vector product of f(x) = sum(tanh(W x)), x in R^1000: ``autograd.functional.hvp``.

Three contenders compute ``H v`` at one point:

- retrograd's ``autograd.functional.hvp``: reverse-over-forward, ``v`` pushed through ``f`` as a
  forward tangent (``W x`` and ``W v``) and one reverse pass over the tangent's program
  (``W^T (...)``): the same three matrix-vector products as NumPy's;
- torch's ``autograd.functional.hvp`` (when torch is installed; PyTorch uses the double-backward
  trick, one pass more);
- the same HVP written by hand in NumPy: ``t = tanh(W x)``, ``H v = W^T (-2 t (1 - t^2) * W v)``
  (three matrix-vector products: the floor).

For scale, ``grad`` is retrograd's plain ``f(x)`` plus one backward (``autograd.grad``): the
fixed cost of one recorded forward and one backward pass, which any autograd HVP pays at least.
The target is retrograd <= 1.5x the NumPy time. Run with one BLAS thread, outside the tests::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 python bench/bench_hvp.py
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import time_interleaved

import retrograd

try:
    import torch
except ImportError:  # the benchmark still runs; it just has no peer to compare with
    torch = None

N = 1000


def numpy_hvp(w, x, v):
    """f(x) and H v by hand: the Hessian of sum(tanh(W x)) is W^T diag(-2 t (1 - t^2)) W."""
    t = np.tanh(w @ x)
    return t.sum(), w.T @ (-2.0 * t * (1.0 - t * t) * (w @ v))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--number", type=int, default=20)
    p.add_argument("--dtype", default="float32")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((N, N)) / np.sqrt(N)).astype(args.dtype)
    x = rng.standard_normal(N).astype(args.dtype)
    v = rng.standard_normal(N).astype(args.dtype)
    if torch is not None:
        torch.set_num_threads(1)
        print(f"torch {torch.__version__}, numpy {np.__version__}, {args.dtype}, n = {N}")

    ref = numpy_hvp(w, x, v)[1]
    W, X, V = (retrograd.tensor(a) for a in (w, x, v))

    def f_rg(z):
        return (W @ z).tanh().sum()

    hv = retrograd.autograd.functional.hvp(f_rg, X, V)[1]
    np.testing.assert_allclose(hv.numpy(), ref, rtol=1e-3, atol=1e-4)
    XG = X.detach().requires_grad_()
    fns = {
        "numpy": lambda: numpy_hvp(w, x, v),
        "retrograd": lambda: retrograd.autograd.functional.hvp(f_rg, X, V),
        "grad": lambda: retrograd.autograd.grad(f_rg(XG), XG),
    }

    if torch is not None:
        tW, tX, tV = (torch.tensor(a) for a in (w, x, v))

        def f_t(z):
            return (tW @ z).tanh().sum()

        hv = torch.autograd.functional.hvp(f_t, tX, tV)[1]
        np.testing.assert_allclose(hv.numpy(), ref, rtol=1e-3, atol=1e-4)
        fns["torch"] = lambda: torch.autograd.functional.hvp(f_t, tX, tV)

    # The contenders take turns in each round (the mat-vecs' speed drifts with the machine's
    # load and caches): the best round of each.
    results = time_interleaved(fns, args.repeat, args.number)

    print("\nhvp of sum(tanh(W x)), ms per call:")
    for k, t in results.items():
        print(f"  {k:10s} {t * 1e3:8.3f}")
    print(f"  ratio retrograd / numpy: {results['retrograd'] / results['numpy']:.2f}"
          "  (target <= 1.5)")
    print(f"  ratio grad / numpy:      {results['grad'] / results['numpy']:.2f}"
          "  (one forward and one backward pass, no HVP)")
    if "torch" in results:
        print(f"  ratio retrograd / torch: {results['retrograd'] / results['torch']:.2f}")


if __name__ == "__main__":
    main()
