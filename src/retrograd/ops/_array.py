"""The NumPy namespace backward formulas use when the backward is not recorded.

Every function here has a twin of the same name and signature among retrograd's differentiable
ops (the ``ops`` package, which formulas get as ``xp`` under ``create_graph=True``). A formula
written as ``g * xp.cos(x)`` therefore runs on plain arrays for a first-order backward, at
NumPy's speed, and on tensors, recording a graph, for higher orders.
"""

from __future__ import annotations

import numpy as np

from .._dtypes import F32, FLOAT_CHARS, REDUCED, bfloat16

TENSORS = False  # formulas get arrays, not tensors, from this namespace


def add_at(out, index, values) -> None:
    """``np.add.at(out, index, values)``, fast: repeated indices add up.

    np.add.at handles each element in Python-speed C loops; for float arrays a weighted
    bincount over the flat positions the index selects does the same sums in one pass.
    Indexing an arange with the same index reproduces NumPy's indexing rules exactly.
    """
    values = np.asarray(values)
    if out.dtype.char not in FLOAT_CHARS or out.size > 64 * max(values.size, 1) or out.size == 0:
        np.add.at(out, index, values)
        return
    pos = np.arange(out.size).reshape(out.shape)[index]
    w = np.broadcast_to(values, pos.shape).astype(np.float64, copy=False).ravel()
    sums = np.bincount(pos.ravel(), weights=w, minlength=out.size)
    out += sums.reshape(out.shape).astype(out.dtype, copy=False)


def register(**fns) -> None:
    """Add array twins from an op family module: ``_array.register(cumsum=...)``.

    Each name must also be reachable in the ``ops`` namespace (through the family's ``__all__``
    or ``XP``), with the same signature, so formulas can call ``xp.<name>`` in both modes.
    """
    g = globals()
    for name, fn in fns.items():
        if name in g and g[name] is not fn:
            raise RuntimeError(f"array twin {name!r} is defined twice")
        g[name] = fn


_BF16 = bfloat16.np

# Twins that are no primitive's forward (the rest come from the declarations, via register).
sign = np.sign


def matmul(a, b):
    """``np.matmul``; float16/bfloat16 through float32 BLAS and rounded once, as PyTorch's CPU
    kernels accumulate (NumPy's own loops for them are slow and accumulate in the dtype)."""
    if a.dtype in REDUCED or b.dtype in REDUCED:
        rd = a.dtype if a.dtype == b.dtype else np.result_type(a.dtype, b.dtype)
        out = np.matmul(a.astype(F32), b.astype(F32))
        return out.astype(rd) if out.dtype != rd else out
    if a.ndim > 2 and b.ndim > 1 and a.shape[-1] == 1 and b.shape[-2] == 1 and \
            a.dtype == b.dtype and a.dtype.kind in "fc":
        # Stacked outer products (an inner dim of 1: per-sample weight gradients under vmap):
        # NumPy's matmul runs them through its slow loop, not BLAS. Each entry is one product
        # added to 0 (a -0.0 product gives +0.0): einsum's sum of products computes the same
        # numbers, 4-10x faster (and faster than a broadcast multiply).
        return np.einsum("...ik,...kj->...ij", a, b)
    return np.matmul(a, b)


def sum_to(g, shape):
    """Sum ``g`` over the dimensions broadcasting added or stretched, down to ``shape``."""
    gshape = g.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + k for k, s in enumerate(shape) if s == 1 and gshape[lead + k] != 1
    )
    if not axes:
        r = g
    elif g.dtype in REDUCED:  # float32 sums, rounded once (PyTorch's sum of 16-bit floats)
        r = np.sum(g, axis=axes, keepdims=True, dtype=F32).astype(g.dtype)
    else:
        r = np.sum(g, axis=axes, keepdims=True)
    if lead:
        r = r.reshape(shape)
    return r


def where(cond, a, b):
    # NOTE: np.where with a float array and a bool mask runs ~10x slower than a multiply. The
    # common formula shape, where(mask, g, 0) (or where(mask, 0, g)), becomes g * mask when g
    # is finite, which gives the same values; inf or nan in g takes the exact path.
    if b.__class__ is float and b == 0.0 and a.__class__ is np.ndarray and \
            cond.__class__ is np.ndarray and cond.dtype == np.bool_:
        if a.dtype in REDUCED and a.shape == np.broadcast_shapes(a.shape, cond.shape):
            # Selecting 16-bit floats is exact on their bits (0 bits: +0.0), and fast.
            return (a.view(np.uint16) * cond).view(a.dtype)
        r = a * cond
        if np.isfinite(r).all():
            r += 0.0  # -0.0 * False is -0.0; where() gives +0.0 there
            return r
    elif a.__class__ is float and a == 0.0 and b.__class__ is np.ndarray and \
            cond.__class__ is np.ndarray and cond.dtype == np.bool_:
        if b.dtype in REDUCED and b.shape == np.broadcast_shapes(b.shape, cond.shape):
            return (b.view(np.uint16) * ~cond).view(b.dtype)  # as above: exact on the bits
        r = b * ~cond
        if np.isfinite(r).all():
            r += 0.0
            return r
    # A number beside a bfloat16 array keeps its dtype, as in PyTorch (NumPy makes it float64).
    if a.__class__ is float and b.__class__ is np.ndarray and b.dtype is _BF16:
        a = np.asarray(a, _BF16)
    elif b.__class__ is float and a.__class__ is np.ndarray and a.dtype is _BF16:
        b = np.asarray(b, _BF16)
    return np.where(cond, a, b)


def zeros_meta(meta):
    shape, np_dtype = meta
    return np.zeros(shape, np_dtype)


def zeros_like(x):
    return np.zeros_like(x)


def pow(x, e):  # noqa: A001
    return np.power(x, e)


def getitem(x, index):
    return x[index]


def replay(x, steps):
    """Apply a view's recorded steps to ``x`` (see ``ops._apply.apply_view``)."""
    ns = globals()
    for name, args in steps:
        x = ns[name](x, *args)
    return x
