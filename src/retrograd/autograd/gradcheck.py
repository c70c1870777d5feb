"""gradcheck and gradgradcheck: compare analytic gradients with finite differences.

The numerical Jacobian perturbs each input element by ``±eps`` (central differences); the
analytical one is built row by row from vector-Jacobian products, one per output element, which
is exactly what the engine computes. ``gradgradcheck`` applies the same test to the function
``(inputs, v) -> VJP(v)``, built with ``create_graph=True``.
"""

from __future__ import annotations

import numpy as np

from .._dtypes import FLOAT_CHARS
from .._tensor import Tensor, make
from .grad_mode import enable_grad, no_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the analytical and numerical Jacobians differ."""


def _as_tuple(x) -> tuple:
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _outputs(fn, inputs) -> tuple:
    out = fn(*inputs)
    return _as_tuple(out)


def _numerical(fn, inputs, wrt, eps):
    """Jacobians d out_j / d inputs[i], each shaped (in numel, out numel), in float64."""
    with no_grad():
        outs = [o for o in _outputs(fn, inputs)]
    jac = {}
    for i in wrt:
        x = inputs[i]
        flat = x._data.reshape(-1)
        if flat.size and not np.shares_memory(flat, x._data):
            raise ValueError("gradcheck needs contiguous inputs")
        for j, o in enumerate(outs):
            jac[i, j] = np.zeros((flat.size, o._data.size))
        for k in range(flat.size):
            orig = flat[k].copy()
            flat[k] = orig + eps
            with no_grad():
                plus = [o._data.astype(np.float64).reshape(-1) for o in _outputs(fn, inputs)]
            flat[k] = orig - eps
            with no_grad():
                minus = [o._data.astype(np.float64).reshape(-1) for o in _outputs(fn, inputs)]
            flat[k] = orig
            for j in range(len(outs)):
                jac[i, j][k] = (plus[j] - minus[j]) / (2 * eps)
    return jac, outs


def _analytical(fn, inputs, wrt, outs_shape_only):
    from .api import grad as _grad

    outs = _outputs(fn, inputs)
    jac = {}
    for j, o in enumerate(outs):
        for i in wrt:
            jac[i, j] = np.zeros((inputs[i]._data.size, o._data.size))
        if not o.requires_grad:
            continue
        for m in range(o._data.size):
            v = np.zeros(o._data.size, dtype=o._data.dtype)
            v[m] = 1
            gs = _grad(o, [inputs[i] for i in wrt], make(v.reshape(o._data.shape)),
                       retain_graph=True, allow_unused=True)
            for i, g in zip(wrt, gs):
                if g is not None:
                    jac[i, j][:, m] = g._data.reshape(-1)
    return jac


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad=True,
              check_grad_dtypes=False, check_batched_grad=False, fast_mode=False,
              masked=None, check_forward_ad: bool = False,
              check_backward_ad: bool = True) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against central finite differences.

    Inputs that require grad should be float64 for the check to be meaningful.

    >>> import retrograd as torch
    >>> x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradcheck(torch.sin, (x,))
    True
    """
    inputs = _as_tuple(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not wrt:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them "
            "have requires_grad=True."
        )
    for i in wrt:
        if inputs[i]._data.dtype != np.float64:
            import warnings

            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ",
                UserWarning,
                stacklevel=2,
            )
    num, outs = _numerical(func, inputs, wrt, eps)
    checks = []
    if check_backward_ad:
        checks.append(("Jacobian", _analytical(func, inputs, wrt, outs)))
    if check_forward_ad:
        checks.append(("Jacobian computed with forward mode", _forward(func, inputs, wrt, outs)))
    for what, ana in checks:
        for (i, j), n in num.items():
            a = ana[i, j]
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                if raise_exception:
                    raise GradcheckError(_mismatch(what, i, j, n, a, rtol, atol))
                return False
    return True


def _mismatch(what, i, j, n, a, rtol, atol) -> str:
    bad = np.argwhere(~np.isclose(a, n, rtol=rtol, atol=atol, equal_nan=True))
    lines = [
        f"  d output[{j}] flat[{m}] / d input[{i}] flat[{k}]: analytical {a[k, m]:.6g}, "
        f"numerical {n[k, m]:.6g}"
        for k, m in bad[:10]
    ]
    return (
        f"{what} mismatch for output {j} with respect to input {i},\n"
        f"numerical:{_fmt(n)}\nanalytical:{_fmt(a)}\n"
        f"{len(bad)} mismatching entries (input element, output element):\n" + "\n".join(lines)
    )


def _forward(fn, inputs, wrt, outs):
    """Jacobians from forward mode: one JVP per input element (a one-hot tangent)."""
    from . import forward_ad as fwad

    jac = {(i, j): np.zeros((inputs[i]._data.size, o._data.size))
           for i in wrt for j, o in enumerate(outs)}
    primals = [x.detach() if isinstance(x, Tensor) else x for x in inputs]
    with no_grad(), fwad.dual_level():
        for i in wrt:
            x = primals[i]
            for k in range(x._data.size):
                e = np.zeros(x._data.size, x._data.dtype)
                e[k] = 1
                args = list(primals)
                args[i] = fwad.make_dual(x, make(e.reshape(x._data.shape)))
                for j, o in enumerate(_outputs(fn, args)):
                    t = fwad.unpack_dual(o).tangent if isinstance(o, Tensor) else None
                    if t is not None:
                        jac[i, j][k] = t._data.astype(np.float64).reshape(-1)
    return jac

def _fmt(m) -> str:
    return "\n" + np.array2string(m, precision=6, max_line_width=100, threshold=200)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True,
                  fast_mode=False, masked=False) -> bool:
    """Check second derivatives: gradcheck of the vector-Jacobian product of ``func``.

    >>> import retrograd as torch
    >>> x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradgradcheck(torch.tanh, (x,))
    True
    """
    from .api import grad as _grad

    inputs = _as_tuple(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    with no_grad():
        outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            make(rng.standard_normal(o._data.shape).astype(o._data.dtype))
            for o in outs
        )
        for g in grad_outputs:
            g.requires_grad_(g._data.dtype.char in FLOAT_CHARS)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def vjp(*args):
        # The numerical side evaluates this under no_grad; the VJP itself needs the graph.
        with enable_grad():
            xs, vs = list(args[:n_in]), args[n_in:]
            for i in wrt:  # duals of the forward-over-reverse check arrive without grad
                if not xs[i].requires_grad:
                    xs[i] = xs[i].view_as(xs[i]).requires_grad_()
            os = _outputs(func, xs)
            diff = [(o, v) for o, v in zip(os, vs) if o.requires_grad]
            gs = _grad([o for o, _ in diff], [xs[i] for i in wrt], [v for _, v in diff],
                       create_graph=True, allow_unused=True)
            return tuple(g if g is not None else make(np.zeros_like(xs[i]._data))
                         for i, g in zip(wrt, gs))

    # Forward mode over this reverse-mode VJP is PyTorch's forward-over-reverse check.
    return gradcheck(vjp, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev)
