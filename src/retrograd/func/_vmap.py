"""``vmap``, as in ``torch.func``: ``in_dims``, ``out_dims``, nesting, ``chunk_size`` and
``randomness``.

NOTE: this vmap runs the function once per sample and stacks the results (PyTorch's fallback
for ops without a batching rule, applied to the whole function): the semantics are
``torch.func.vmap``'s (tensors inside have their per-sample shape, every transform composes),
but not its speed. Batching rules declared with the primitives (the ``vmap`` slot of ``Node``)
are the planned fast path.
"""

from __future__ import annotations

import functools

from .. import _random
from .._tensor import Tensor
from ..ops._views import select
from ..ops.join import stack
from ..ops.shape import movedim
from ._pytree import flatten, unflatten

__all__ = ["vmap"]


def _dims_for(in_dims, args):
    """One in_dim (int or None) per leaf of ``args``."""
    if isinstance(in_dims, int) or in_dims is None:
        return [in_dims] * len(flatten(args)[0])
    if not isinstance(in_dims, tuple) or len(in_dims) != len(args):
        raise ValueError(
            f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
            "structure of `inputs`. in_dims has structure "
            f"{type(in_dims).__name__} but inputs has structure tuple of {len(args)}."
        )
    dims = []
    for d, a in zip(in_dims, args):
        n = len(flatten(a)[0])
        if isinstance(d, int) or d is None:
            dims += [d] * n
        else:
            fd = flatten(d)[0]
            if len(fd) != n:
                raise ValueError(
                    f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
                    "the structure of `inputs`."
                )
            dims += fd
    return dims


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """Map ``func`` over a dimension of its inputs: ``vmap(f)(x)[i] == f(x[i])``.

    >>> import retrograd as torch
    >>> vmap(torch.dot)(torch.ones(3, 2), torch.arange(6.0).view(3, 2))
    tensor([1., 5., 9.])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        flat, spec = flatten(args)
        dims = _dims_for(in_dims, args)
        sizes = set()
        for x, d in zip(flat, dims):
            if d is None:
                continue
            if not isinstance(x, Tensor):
                raise ValueError(
                    f"vmap({getattr(func, '__name__', 'f')}, in_dims={in_dims}, ...)(<inputs>): "
                    f"Got in_dim={d} for an input but the input is of type {type(x)}. We cannot "
                    "vmap over non-Tensor arguments, please use None as the respective in_dim"
                )
            n = x.dim()
            if not -n <= d < n:
                raise ValueError(
                    f"vmap({getattr(func, '__name__', 'f')}, in_dims={in_dims}, ...)(<inputs>): "
                    f"Got in_dim={d} for some input, but that input is a Tensor of "
                    f"dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim < {n}."
                )
            sizes.add(x.shape[d])
        if not sizes:
            raise ValueError(
                f"vmap({getattr(func, '__name__', 'f')}, in_dims={in_dims}, ...)(<inputs>): at "
                "least one input must be a Tensor mapped over a dimension (in_dim not None)."
            )
        if len(sizes) > 1:
            raise ValueError(
                "vmap: Expected all tensors to have the same size in the mapped dimension, got "
                "sizes "
                f"{sorted(sizes)} for the mapped dimension"
            )
        (B,) = sizes
        state = _random.get_rng_state() if randomness != "different" else None
        results = []
        for b in range(B):
            if randomness == "same":
                _random.set_rng_state(state)
            sample = [x if d is None else select(x, d, b) for x, d in zip(flat, dims)]
            out = func(*unflatten(sample, spec), **kwargs)
            if randomness == "error" and not _same_state(state, _random.get_rng_state()):
                raise RuntimeError(
                    "vmap: called random operation while in randomness error mode. Please "
                    "either use the 'same' or 'different' randomness flags on vmap or perform "
                    "the randomness operation out of vmap"
                )
            results.append(out)
        flat_outs = [flatten(r)[0] for r in results]
        out_spec = flatten(results[0])[1]
        n_out = len(flat_outs[0])
        ods = [out_dims] * n_out if isinstance(out_dims, int) or out_dims is None else \
            flatten(out_dims)[0]
        if len(ods) != n_out:
            raise ValueError(
                f"vmap({getattr(func, '__name__', 'f')}, ..., out_dims={out_dims})(<inputs>): "
                f"out_dims is not compatible with the structure of `outputs`."
            )
        stacked = []
        for i, od in enumerate(ods):
            leaves = [fo[i] for fo in flat_outs]
            if not isinstance(leaves[0], Tensor):
                raise ValueError(
                    f"vmap({getattr(func, '__name__', 'f')}, ...): "
                    f"`{getattr(func, '__name__', 'f')}` must only return Tensors, got type "
                    f"{type(leaves[0])}. Did you mean to set out_dims= to None for output?"
                )
            if od is None:
                stacked.append(leaves[0])
                continue
            s = stack(leaves)
            if od != 0:
                s = movedim(s, 0, od)
            stacked.append(s)
        return unflatten(stacked, out_spec)

    return wrapper


def _same_state(a, b) -> bool:
    return a is None or bool((a == b).all())
