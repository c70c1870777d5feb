"""``torch.autograd.graph.allow_mutation_on_saved_tensors``: in-place ops on saved tensors.

Normally an in-place op on a tensor that the graph saved makes the backward fail ("one of the
variables needed for gradient computation has been modified by an inplace operation"). Inside
this context manager every tensor saved for backward goes through saved-tensor hooks that keep
a handle to it, and every in-place write (``ops._base.BEFORE_WRITE``, called where each in-place
op checks its target, before anything is written) first clones the saved tensors whose memory it
is about to change: the backward reads the clone, with the values the forward saw.

PyTorch finds the saved tensors a write reaches by their data pointer and version, so a write
through a view that starts at another offset (``b[1:].mul_(2)`` with ``b`` saved) goes unseen
there and the backward silently reads the new values. Here a write reaches every saved tensor
sharing its memory (the same NumPy buffer, overlapping bounds), so the gradient is always the
one the forward defined.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Generator

import numpy as np

from ..ops import _base
from .saved_hooks import saved_tensors_hooks

__all__ = ["allow_mutation_on_saved_tensors"]

_ENABLED = [False]

_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
            "in which the graph was originally recorded.")  # (PyTorch's text, its missing space)


class _Handle:
    """What the graph keeps for one saved tensor (weakly referenced by the context's maps, so
    that an entry goes when the graph that saved it goes)."""


def _root(a):
    """The array that owns ``a``'s memory (NumPy's ``base`` chain)."""
    while getattr(a, "base", None) is not None:
        a = a.base
    return a


class _AllowMutationOnSavedContext:
    """The state of one ``allow_mutation_on_saved_tensors`` block: ``original`` maps each
    handle to its saved tensor until a write clones it into ``cloned``."""

    def __init__(self) -> None:
        self.cloned: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.original: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._by_memory: dict = {}  # id(owning array) -> [weakref to handle]

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self._by_memory.clear()

    def pack(self, t) -> _Handle:
        tid = (id(t), t._vc[0])
        handle = self.tid_to_weakhandle.get(tid)
        if handle is None:  # the same tensor at the same version, saved twice: one handle
            handle = self.tid_to_weakhandle[tid] = _Handle()
            self.original[handle] = t
            self._by_memory.setdefault(id(_root(t._data)), []).append(weakref.ref(handle))
        return handle

    def unpack(self, handle: _Handle):
        if not _ENABLED[0]:
            raise AssertionError(_OUTSIDE)
        t = self.cloned.get(handle)
        if t is None:
            t = self.original.get(handle)
            if t is None:
                raise AssertionError(_OUTSIDE)
        return t

    def before_write(self, t) -> None:
        """Clone each saved tensor whose memory the in-place write into ``t`` would change."""
        a = t._data
        refs = self._by_memory.get(id(_root(a)))
        if not refs:
            return
        live = []
        for ref in refs:
            handle = ref()
            if handle is None or handle in self.cloned:
                continue  # its graph is gone, or it has its clone already
            s = self.original[handle]
            if a.size and s._data.size and _overlap(a, s._data):
                self.cloned[handle] = s.detach().clone()
                del self.original[handle]
            else:
                live.append(ref)
        refs[:] = live


def _overlap(a, b) -> bool:
    """Whether two arrays on one buffer may touch the same bytes (their address bounds)."""
    return bool(np.may_share_memory(a, b))


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Generator[_AllowMutationOnSavedContext, None, None]:
    """Context manager under which tensors saved for backward may be changed in place: each is
    cloned before its first change, and the backward (run inside the same block) uses the
    clone. Nesting it raises PyTorch's RuntimeError; a backward outside it, its AssertionError.

    >>> import retrograd as torch
    >>> with torch.autograd.graph.allow_mutation_on_saved_tensors():
    ...     a = torch.ones(2, 3, requires_grad=True)
    ...     b = a.clone()
    ...     out = (b**2).sum()
    ...     _ = b.sin_()
    ...     out.sum().backward()
    >>> a.grad
    tensor([[2., 2., 2.],
            [2., 2., 2.]])
    """
    ctx = _AllowMutationOnSavedContext()
    with saved_tensors_hooks(ctx.pack, ctx.unpack), _writes_seen_by(ctx):
        try:
            if _ENABLED[0]:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _ENABLED[0] = True
            yield ctx
        finally:
            ctx.clear()
            _ENABLED[0] = False


@contextlib.contextmanager
def _writes_seen_by(ctx: _AllowMutationOnSavedContext):
    prev = _base.BEFORE_WRITE
    _base.BEFORE_WRITE = ctx.before_write
    try:
        yield
    finally:
        _base.BEFORE_WRITE = prev
