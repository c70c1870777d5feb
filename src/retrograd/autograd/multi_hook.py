"""``register_multi_grad_hook``: one hook over the gradients of several tensors, per backward.

Mode ``"all"`` calls ``fn(grads)`` once per backward pass, after the gradients of all the given
tensors that the pass reaches are computed (None for the others); mode ``"any"`` calls
``fn(grad)`` with the first of them. Built on tensor hooks and on the engine's end-of-pass
callbacks: the engine sets ``passes.current`` to the running pass, whose ``callbacks`` run when
its walk is done.
"""

from __future__ import annotations

import threading

from ..utils.hooks import RemovableHandle

__all__ = ["register_multi_grad_hook", "passes"]


class _Passes(threading.local):
    current = None  # the backward pass running in this thread (engine._Pass)


passes = _Passes()


class _MultiHandle(RemovableHandle):
    """Removes the tensor hooks of one multi-grad hook."""

    def __init__(self, handles) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def _expected(p, tensors) -> int:
    """How many of ``tensors`` the pass ``p`` will reach (their nodes run)."""
    if p is None:
        return len(tensors)
    seen = set()
    stack = [fn for fn, _ in p.root_edges]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(n for n, _ in fn.next_functions)
    reach = p.reach
    n = 0
    for t in tensors:
        node = t.grad_fn if t.grad_fn is not None else t._acc
        if node in seen and (reach is None or node in reach):
            n += 1
    return n


def register_multi_grad_hook(tensors, fn, *, mode: str = "all") -> RemovableHandle:
    """Call ``fn`` once per backward with the gradients of ``tensors`` (``mode="all"``) or the
    first of them (``mode="any"``).

    >>> import retrograd as torch
    >>> a = torch.tensor([1.0], requires_grad=True)
    >>> b = torch.tensor([2.0], requires_grad=True)
    >>> h = torch.autograd.graph.register_multi_grad_hook(
    ...     (a, b), lambda gs: print([g.tolist() for g in gs]))
    >>> (a * 3 + b * 4).sum().backward()
    [[3.0], [4.0]]
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    state: dict = {}  # per pass (by identity): the grads so far, and whether fn ran

    def for_pass():
        p = passes.current
        key = id(p)
        st = state.get(key)
        if st is None or st[0] is not p:
            st = state[key] = [p, [None] * len(tensors), 0, False, _expected(p, tensors)]
            if p is not None:
                p.callbacks.append(lambda: finish(key))
        return st

    def finish(key) -> None:
        st = state.pop(key, None)
        if st is not None and mode == "all" and not st[3]:
            fn(st[1])

    def make_hook(i):
        def hook(grad):
            st = for_pass()
            if st[3]:
                return None
            if mode == "any":
                st[3] = True
                fn(grad)
                return None
            if st[1][i] is None:
                st[2] += 1
            st[1][i] = grad
            if st[2] >= st[4]:
                st[3] = True
                fn(st[1])
            return None
        return hook

    handles = [t.register_hook(make_hook(i)) for i, t in enumerate(tensors)
               if t.requires_grad]
    return _MultiHandle(handles)
