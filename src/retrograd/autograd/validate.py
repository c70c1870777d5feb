"""The engine's checks of what a node returns (PyTorch's ``validate_outputs``).

Every gradient a node returns is fitted to the recorded metadata of the input it flows to:
broadcast dimensions are summed away here, and only here, and dtypes are cast; any other shape
is the node's bug and raises PyTorch's error naming the node and the index.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, make
from .provenance import with_site

__all__ = ["count_grads", "check_grad", "materialize"]


def count_grads(fn, grads, nf) -> tuple:
    """A node must return one gradient per input; trailing Nones beyond that are allowed."""
    n = len(nf)
    if len(grads) > n and all(g is None for g in grads[n:]):
        return grads[:n]
    raise RuntimeError(with_site(
        f"function {fn.name()} returned an incorrect number of gradients (expected {n}, "
        f"got {len(grads)})", fn))


def check_grad(fn, grads, g, meta, xp):
    """Fit ``g`` to its input's recorded metadata: sum broadcast dimensions away (the one
    place this happens) and cast to the input's dtype; any other shape is the node's bug."""
    i = next(k for k, x in enumerate(grads) if x is g)
    shape, dtype = meta
    if xp.TENSORS:
        if not isinstance(g, Tensor):
            g = make(np.asarray(g))
        a = g._data
    else:
        g = a = np.asarray(g)
    gshape = a.shape
    if gshape != shape:
        lead = len(gshape) - len(shape)
        if lead < 0 or any(s != 1 and s != gshape[lead + k] for k, s in enumerate(shape)):
            raise RuntimeError(with_site(
                f"Function {fn.name()} returned an invalid gradient at index {i} - got "
                f"{list(gshape)} but expected shape compatible with {list(shape)}", fn))
        g = xp.sum_to(g, shape)
    if a.dtype != dtype:
        g = xp.cast(g, dtype)
    return g


def materialize(fn, buf, xp):
    """Zeros in place of the missing gradients of a node that wants every output's gradient
    (``_out_meta`` set: multi-output primitives and user Functions)."""
    metas = getattr(fn, "_out_meta", None)
    if metas is None:
        return buf
    return [xp.zeros_meta(m) if g is None else g for g, m in zip(buf, metas)]
