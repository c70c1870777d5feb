"""The engine: one iterative walk over the graph, behind both ``backward`` and ``grad``.

1. Seed the roots' gradients into per-pass buffers and queue the roots' nodes.
2. Take the newest queued node (a heap ordered by creation). Every consumer of a node was made
   after it, so by then all of the node's gradients have arrived: no counting pass is needed.
3. Run its hooks, call its ``backward``, free its saved tensors (unless the graph is retained),
   check each gradient against its input's recorded shape and dtype (summing broadcast
   dimensions and casting; any other shape is the node's error, as PyTorch's
   ``validate_outputs`` says), and add the results into the next nodes' buffers.
4. AccumulateGrad nodes write ``.grad`` on leaves; for ``autograd.grad`` the wanted gradients are
   captured instead, and only nodes that lead to them run.

There is no recursion anywhere, so a chain of a million ops runs backward like a short one.
Without ``create_graph`` the formulas run on NumPy arrays (``ops._array``); with it they run on
tensors with grad mode on, so the backward is itself recorded.
"""

from __future__ import annotations

from heapq import heappop, heappush
from operator import itemgetter

import numpy as np

from .. import ops as _ops
from .._tensor import Tensor, edge, make
from ..ops import _array
from . import anomaly_mode  # a module reference: anomaly_mode imports ops (a cycle)
from .grad_mode import state
from .graph import AccumulateGrad
from .multi_hook import passes
from .prune import reaching_closed, runs
from .validate import check_grad, count_grads, materialize

__all__ = ["run_backward"]

ndarray = np.ndarray
_NP_SCALARS = frozenset((np.float16, np.float32, np.float64, np.int64, np.bool_))


def _root_edges(outputs) -> list:
    edges = []
    for i, out in enumerate(outputs):
        e = edge(out)
        if e[0] is None:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        edges.append(e)
    return edges


def run_backward(outputs, seeds, retain_graph: bool, create_graph: bool, inputs,
                 accumulate: bool, prune: bool = True) -> list:
    """One backward pass from ``outputs`` seeded with ``seeds``; the fronts (``backward`` and
    ``grad`` in ``autograd.api``) check the arguments first. ``prune=False``: the caller knows
    that every path from the outputs ends at a leaf among ``inputs`` (nothing to prune)."""
    p = _Pass(retain_graph, create_graph, inputs, accumulate)
    if not prune and inputs is not None:
        p.reach = False
    return p.run(outputs, seeds)


class _Pass:
    """The state of one backward pass: its options, buffers and what it captures."""

    # Set by ``run`` for a pass with inputs (class defaults: nothing to set per pass without).
    capture = None       # {edge: [input index, ...]} when non-leaves are captured
    leaf_capture = None  # the same, whenever there are inputs
    captured: list = []  # (replaced, never filled, when there are inputs)
    reach = None         # nodes from which a target can be reached (None: all)
    run_targets = ()

    def __init__(self, retain_graph: bool, create_graph: bool, inputs, accumulate: bool):
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        self.inputs = inputs
        self.accumulate = accumulate
        self.xp = _ops if create_graph else _array
        # Arrays that user code saw (hooks, roots, captures) or that a leaf took as its .grad:
        # a leaf must copy these rather than take them, so no two tensors share a gradient.
        self.given: set = set()
        self.anomaly = anomaly_mode.state.enabled  # once per pass: off, no node pays for it
        self.callbacks = []      # run when the walk is done (register_multi_grad_hook)

    def run(self, outputs, seeds) -> list:
        """The walk. Returns the captured gradients of ``inputs`` when not accumulating."""
        root_edges = self.root_edges = _root_edges(outputs)
        if self.inputs is not None:
            capture = {}
            targets = set()
            leaves = True
            for i, t in enumerate(self.inputs):
                e = edge(t)
                idx = capture.get(e)
                if idx is None:
                    capture[e] = [i]
                    targets.add(e[0])
                    leaves = leaves and e[0].__class__ is AccumulateGrad
                else:
                    idx.append(i)
            self.captured = [None] * len(self.inputs)
            if leaves and self.reach is False:
                # run_backward(prune=False): every path ends at an input, a leaf.
                self.reach = None
                self.leaf_capture = capture
            else:
                reach = self.reach = reaching_closed(root_edges, targets)[0]
                if leaves and all(map(reach.__contains__, map(itemgetter(0), root_edges))):
                    # Only leaves to capture, and every root leads to one: the pruned routing
                    # alone keeps the walk on course, and nodes take its fast path.
                    self.leaf_capture = capture
                else:
                    self.capture = self.leaf_capture = capture
                    # backward(inputs=) runs a non-leaf input's own node too (its outputs go
                    # nowhere), as PyTorch does; autograd.grad stops at it.
                    self.run_targets = targets if self.accumulate else ()
        prev_mode, prev_pass = state.grad_enabled, passes.current
        state.grad_enabled = self.create_graph
        passes.current = self
        try:
            _quiet_walk(self, root_edges, seeds)
        finally:
            state.grad_enabled, passes.current = prev_mode, prev_pass
            anomaly_mode.state.current = None
        for callback in self.callbacks:
            callback()
        return self.captured

    def _walk(self, root_edges, seeds) -> None:
        xp = self.xp
        create_graph = self.create_graph
        retain_graph = self.retain_graph
        special = self.capture is not None or self.anomaly
        reach = self.reach
        pruned = reach is not None
        run_targets = self.run_targets
        bufs: dict = {}
        heap: list = []
        for (fn, nr), g in zip(root_edges, seeds):
            g = g if create_graph else g._data
            self.given.add(id(g))
            _deliver(bufs, heap, fn, nr, g)

        while heap:
            fn = heappop(heap)[1]
            buf = bufs.pop(fn)

            if fn._plain and not special:
                # The common node: one output, no hooks, nothing but saved tensors to free.
                if buf is None:
                    continue
                grads = fn.backward(xp, buf)
                if grads.__class__ is not tuple:
                    grads = (grads,)
                if not retain_graph:
                    fn._saved = fn._out = None
            elif fn.__class__ is AccumulateGrad:
                self._leaf(fn, buf)
                continue
            else:
                grads = self._node(fn, buf, xp, special, pruned, reach, run_targets,
                                   retain_graph)
                if grads is None:
                    continue

            # Route each input's gradient to the next node, checked against the input's
            # recorded shape and dtype (no node opts out, as in PyTorch's validate_outputs).
            nf = fn.next_functions
            if len(grads) != len(nf):
                grads = count_grads(fn, grads, nf)
            meta = fn._meta
            if meta is None:  # every node is made by ops._apply (apply, wire), which records it
                raise RuntimeError(f"{fn.name()} has no recorded input metadata")
            for (nxt, nr), g, m in zip(nf, grads, meta):
                if nxt is not None and g is not None and (not pruned or nxt in reach):
                    a = g._data if create_graph and g.__class__ is Tensor else g
                    # (0-d results of NumPy ops are NumPy scalars: as good as arrays.)
                    if (a.__class__ is not ndarray and a.__class__ not in _NP_SCALARS) or \
                            (a.shape, a.dtype) != m:
                        g = check_grad(fn, grads, g, m, xp)
                    if nxt._n_out == 1:
                        old = bufs.get(nxt)
                        if old is None:
                            bufs[nxt] = g
                            heappush(heap, (-nxt._seq, nxt))
                        else:
                            bufs[nxt] = old + g
                    else:
                        _deliver(bufs, heap, nxt, nr, g)

    def _node(self, fn, buf, xp, special, pruned, reach, run_targets, retain_graph):
        """A node with hooks, several outputs, its own release, or in a pruned pass."""
        single = fn._n_out == 1
        if fn._hooked or special:
            # Hooks and captures work on the per-output list.
            buf = self._before_node(fn, [buf] if single else list(buf))
            if single:
                buf = buf[0]
        grads = None
        if buf is not None and (not pruned or runs(fn, reach) or fn in run_targets):
            if not single and fn._materialize and any(g is None for g in buf):
                buf = materialize(fn, buf, xp)
            args = (buf,) if single else buf
            grads = anomaly_mode.run_node(fn, xp, args) if self.anomaly else fn.backward(xp, *args)
            if grads.__class__ is not tuple:
                grads = (grads,)
            if not retain_graph:
                fn.release()
        if fn._post_hooks is not None:
            grads = self._post_hooks(fn, grads, [buf] if single else buf)
        return grads

    # -- what user code sees -------------------------------------------------------------------
    def _expose(self, g):
        """A gradient as the Tensor user code receives; its array may no longer be taken."""
        if self.create_graph:
            self.given.add(id(g))
            return g
        if g.__class__ is not np.ndarray:
            g = np.asarray(g)
        self.given.add(id(g))
        return make(g)

    def _unexpose(self, t):
        if self.create_graph:
            self.given.add(id(t))
            return t
        self.given.add(id(t._data))
        return t._data

    def _run_hooks(self, hooks, g):
        """Tensor hooks: each sees a Tensor and may return a replacement."""
        t = self._expose(g)
        for hook in tuple(hooks):
            r = hook(t)
            if r is not None:
                t = r
        return self._unexpose(t)

    def _before_node(self, fn, buf: list) -> list:
        """Tensor hooks on outputs, retain_grad, node pre-hooks, then captures."""
        th = fn._tensor_hooks
        if th:
            for nr, hooks in th.items():
                if hooks and buf[nr] is not None:
                    buf[nr] = self._run_hooks(hooks, buf[nr])
        rt = fn._retain
        if rt:
            for nr, ref in rt.items():
                t = ref()
                g = buf[nr]
                if t is None or g is None or t._grad_fn is not fn:
                    continue
                gt = self._expose(g)
                if t._grad is None:
                    t._grad = gt if self.create_graph else make(gt._data.copy())
                else:
                    t._grad = t._grad + gt
        if fn._pre_hooks is not None:
            gs = tuple(None if g is None else self._expose(g) for g in buf)
            for hook in tuple(fn._pre_hooks):
                r = hook(gs)
                if r is not None:
                    gs = tuple(r)
            buf = [None if g is None else self._unexpose(g) for g in gs]
        if self.capture is not None:
            for nr, g in enumerate(buf):
                idx = self.capture.get((fn, nr))
                if idx is not None and g is not None:
                    self._capture(idx, g)
        return buf

    def _post_hooks(self, fn, grads, buf):
        gi = tuple(None if g is None else self._expose(g) for g in (grads or ()))
        go = tuple(None if g is None else self._expose(g) for g in buf)
        for hook in tuple(fn._post_hooks):
            r = hook(gi, go)
            if r is not None:
                gi = tuple(r)
        return tuple(None if g is None else self._unexpose(g) for g in gi)

    def _capture(self, idx, g) -> None:
        if self.accumulate:
            # backward(inputs=...) on a non-leaf: it retains its grad (done in _before_node).
            return
        for i in idx:
            self.captured[i] = self._expose(g)

    # -- leaves --------------------------------------------------------------------------------
    def _leaf(self, fn, g) -> None:
        var = fn.variable
        if var is None:
            return  # the leaf is gone: nothing to accumulate into
        d = var.__dict__
        hooks = d.get("_hooks") if d else None
        if hooks:
            g = self._run_hooks(hooks, g)
        if self.leaf_capture is not None:
            idx = self.leaf_capture.get((fn, 0))
            if idx is None:
                return  # not one of the inputs: leave its .grad alone
            if not self.accumulate:
                self._capture(idx, g)
                return
        if not self.accumulate:
            return
        if fn._pre_hooks is not None:  # the node's own hooks (register_prehook/register_hook)
            g = self._before_node(fn, [g])[0]
        self._accumulate_into(var, g)
        if fn._post_hooks is not None:
            self._post_hooks(fn, (), [g])
        post = d.get("_post_acc_hooks") if d else None
        if post:
            for hook in tuple(post):
                hook(var)

    def _accumulate_into(self, var, g) -> None:
        """PyTorch's AccumulateGrad: take the first gradient, add later ones in place."""
        old = var._grad
        given = self.given
        if self.create_graph:
            if old is None:
                var._grad = g if id(g) not in given else g.clone()
                given.add(id(var._grad))
            else:
                var._grad = old + g
            return
        if g.__class__ is not np.ndarray:
            g = np.asarray(g)
        if g.dtype != var._data.dtype:
            g = g.astype(var._data.dtype)
        if old is None:
            # Take the array when nothing else can see it; copy otherwise.
            if not (g.flags.owndata and g.flags.writeable) or id(g) in given:
                g = g.copy()
            given.add(id(g))
            var._grad = make(g)
        elif old._rg:
            var._grad = make(old._data + g)
        else:
            old._data += g
            old._vc[0] += 1


# Backward formulas meet 0/0 and inf legitimately (PyTorch is silent about them). errstate as a
# decorator: entering a new errstate object per pass costs more than the whole decorated call.
_quiet_walk = np.errstate(all="ignore")(_Pass._walk)


def _deliver(bufs, heap, fn, nr, g) -> None:
    """Add ``g`` to output ``nr`` of ``fn``'s buffer, queueing ``fn`` on its first gradient."""
    if fn._n_out == 1:
        old = bufs.get(fn)
        if old is None:
            bufs[fn] = g
            heappush(heap, (-fn._seq, fn))
        else:
            bufs[fn] = old + g
        return
    buf = bufs.get(fn)
    if buf is None:
        buf = bufs[fn] = [None] * fn._n_out
        heappush(heap, (-fn._seq, fn))
    buf[nr] = g if buf[nr] is None else buf[nr] + g
