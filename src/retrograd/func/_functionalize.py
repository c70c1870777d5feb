"""``functionalize`` and ``debug_unwrap``, as in ``torch.func``.

PyTorch's ``functionalize(f)`` runs ``f`` with its in-place and ``out=`` ops (and, with
``remove="mutations_and_views"``, its views) replaced by out-of-place ones, copying the final
values back into mutated inputs: the results, and the inputs afterwards, are those of ``f``
itself. It exists so that graph compilers see programs without mutation; retrograd runs eagerly
and has none, so the transform is ``f`` itself, with PyTorch's argument check. ``debug_unwrap``
returns a tensor under its transform wrappers: retrograd's transforms wrap no tensors.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor

__all__ = ["functionalize", "debug_unwrap"]


def functionalize(func: Callable[..., Any], *, remove: str = "mutations") -> Callable[..., Any]:
    """``func`` with mutations (and with ``remove="mutations_and_views"``, views) removed: the
    same results and the same effect on its inputs.

    >>> import retrograd as torch
    >>> def f(a):
    ...     b = a.clone()
    ...     b.add_(1)
    ...     return b
    >>> functionalize(f)(torch.ones(2))
    tensor([2., 2.])
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}."
            " Valid options are:\n"
            "     remove='mutations': all inplace and out= operators will be removed from the "
            "program, and replaced with their out-of-place equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all aliasing operators "
            "{view} will be replaced with their non-aliasing counterparts, {view}_copy.\n"
        )

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapped


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """The tensor under ``tensor``'s transform wrappers: ``tensor`` itself here.

    >>> import retrograd as torch
    >>> x = torch.ones(1)
    >>> debug_unwrap(x) is x
    True
    """
    return tensor
