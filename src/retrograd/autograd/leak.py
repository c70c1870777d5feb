"""Leak warnings: a training loop that keeps graphs alive across optimizer steps.

The most common autograd memory bug: ``total_loss += loss`` without ``.item()``, a list of
losses kept for plotting, an RNN hidden state carried to the next batch without ``.detach()``.
Each keeps every step's graph alive. retrograd watches the first few optimizer steps of a
program (the optimizer's step is the clock) and warns once, with ``GraphLeakWarning``:

- when the graphs of backward passes from two or more earlier steps are all still alive, and
- when the graph of a backward pass reaches back to nodes made two or more steps ago (the new
  graph extends an old one).

Gradient accumulation, two backward passes through one graph (``retain_graph=True``), one long
graph, and graphs built under ``no_grad`` or detached do neither. After the watched steps
nothing is recorded any more, so a long training run pays nothing.
"""

from __future__ import annotations

import gc
import os
import sys
import warnings
import weakref

from ..optim.optimizer import register_optimizer_step_post_hook
from . import api
from .graph import AccumulateGrad, next_seq
from .provenance import describe

__all__ = ["GraphLeakWarning", "note_backward", "reset", "WATCHED_STEPS"]

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
WATCHED_STEPS = 8  # optimizer steps watched after the first, then the watch stops
_MAX_ROOTS = 256  # remembered backward roots before the dead ones are dropped


class GraphLeakWarning(UserWarning):
    """A graph built before an earlier optimizer step is still alive, or being extended."""


class _Watch:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        api.on_backward = note_backward
        self.active = True
        self.warned = False
        self.step = 0            # optimizer steps seen
        self.bounds = [0]        # the node sequence number at each step
        self.roots: list = []    # (step, weakref to a backward root node)


_watch = _Watch.__new__(_Watch)


def reset() -> None:
    """Start watching again (tests; a new training run in the same process)."""
    _watch.reset()


def note_backward(outputs) -> None:
    """Called by ``backward`` with its output tensors: remember their nodes, weakly, and check
    that their graph does not reach back to nodes made two or more steps ago (a graph made one
    step ago may be legitimate: a GAN's generator output, used by both optimizers' steps)."""
    w = _watch
    if not w.active:
        return
    roots = []
    for t in outputs:
        fn = t.grad_fn
        if fn is not None:
            roots.append(fn)
            w.roots.append((w.step, weakref.ref(fn)))
    if len(w.roots) > _MAX_ROOTS:
        # Backward passes without optimizer steps (no clock tick prunes the list): only the
        # graphs still alive matter.
        w.roots = [(s, r) for s, r in w.roots if r() is not None]
    if w.step >= 2:
        old, newer = _old_node(roots, w.bounds[w.step - 1])
        if old is not None:
            _warn(
                f"this backward's graph reaches back to {old.name()}, made two or more optimizer "
                f"steps ago, so every step's graph stays alive: the old graph is extended at "
                f"{_where(newer)}. detach() what you carry to the next step (an RNN's hidden "
                "state, a running total)."
            )


def _old_node(roots, limit: int):
    """A node reachable from ``roots`` made before sequence number ``limit`` (a leaf's
    AccumulateGrad excepted), and the newer node whose edge reaches it."""
    seen = set()
    stack = [(r, None) for r in roots]
    while stack:
        node, parent = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.__class__ is not AccumulateGrad and 0 < node._seq < limit:
            return node, parent
        for fn, _ in node.next_functions:
            if fn is not None and id(fn) not in seen:
                stack.append((fn, node))
    return None, None


def _consumer(node):
    """A node whose edges point at ``node`` (found through the garbage collector: only ever
    run when about to warn)."""
    for edge in gc.get_referrers(node):
        if type(edge) is tuple and len(edge) == 2 and edge[0] is node:
            for nf in gc.get_referrers(edge):
                if type(nf) is not tuple:
                    continue
                for holder in gc.get_referrers(nf):
                    if getattr(holder, "next_functions", None) is nf:
                        return holder
                    if isinstance(holder, dict) and holder.get("next_functions") is nf:
                        for obj in gc.get_referrers(holder):
                            if getattr(obj, "__dict__", None) is holder:
                                return obj
    return None


def _where(node) -> str:
    site = node.__dict__.get("_site") if node is not None else None
    return describe(site) if site is not None else "(line unknown: provenance is off)"


def _stop() -> None:
    _watch.active = False
    _watch.roots = []
    api.on_backward = None


def _warn(text: str) -> None:
    _watch.warned = True
    _stop()
    # Attribute the warning to the user's line that called backward() or step().
    level, f = 2, sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        level, f = level + 1, f.f_back
    warnings.warn(GraphLeakWarning(text), stacklevel=level)


def _on_step(optimizer, args, kwargs) -> None:
    w = _watch
    if not w.active:
        return
    w.step += 1
    w.bounds.append(next_seq())
    k = w.step
    if k >= 3:
        # 1. Graphs of backward passes from two or more steps before the previous one are
        #    still alive (the current loss, and the previous one, may be legitimately held).
        alive = [(s, r()) for s, r in w.roots if s <= k - 3]
        alive = [(s, n) for s, n in alive if n is not None]
        if len({s for s, _ in alive}) >= 2:
            old = min(alive, key=lambda p: p[0])[1]
            user = _consumer(old)
            how = (f"it is extended at {_where(user)}" if user is not None
                   else f"it was made at {_where(old)} and is still referenced")
            _warn(
                f"the graphs of {len({s for s, _ in alive})} earlier training steps are still "
                f"alive ({old.name()} from step {min(s for s, _ in alive) + 1}): {how}. "
                "Keep numbers, not tensors, across steps (loss.item()), or detach() what you "
                "carry over."
            )
            return
    w.roots = [(s, r) for s, r in w.roots if s >= k - 3 and r() is not None]
    if k > WATCHED_STEPS:
        _stop()


_watch.reset()
_hook = register_optimizer_step_post_hook(_on_step)
