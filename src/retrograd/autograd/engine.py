"""The engine: one iterative walk over the graph, behind both ``backward`` and ``grad``.

1. Discover the graph from the roots and count, for each node, how many edges lead into it.
2. Seed the roots' gradients; a node runs once every consumer has delivered its gradient.
3. Run the node's pre-hooks, call its ``backward``, free its saved tensors (unless the graph is
   retained), then undo broadcasting (``sum_to``) and dtype promotion for each input, and add the
   result into the next node's buffer. Buffers live only for the pass.
4. AccumulateGrad nodes write ``.grad`` on leaves; for ``autograd.grad`` the wanted gradients are
   captured instead and nothing is accumulated.

There is no recursion anywhere, so a chain of a million ops runs backward like a short one.
Without ``create_graph`` the formulas run on NumPy arrays (``ops._array``); with it they run on
tensors with grad mode on, so the backward is itself recorded.
"""

from __future__ import annotations

from heapq import heappop, heappush

import numpy as np

from .. import ops as _ops
from .._tensor import Tensor, edge, make
from ..ops import _array
from .grad_mode import state
from .graph import AccumulateGrad

__all__ = ["backward", "grad"]


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _size_str(shape) -> str:
    return f"torch.Size({list(shape)})"


def _seed_grads(outputs, grad_outputs, create_graph: bool, is_grads_batched=False):
    """Validate the roots and make their starting gradients (ones for scalar outputs)."""
    grads = []
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(
            f"grad_tensors/grad_outputs should be a sequence of length {len(outputs)} "
            f"(got {len(grad_outputs)})" if grad_outputs else
            f"got {len(grad_outputs)} tensors and {len(outputs)} gradients"
        )
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out.requires_grad:
                if out._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if out._data.dtype.kind != "f":
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{out.dtype!r}".replace("retrograd.", "torch.")
                    )
            g = make(np.ones_like(out._data))
        elif not isinstance(g, Tensor):
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(g).__name__}"
            )
        elif g._data.shape != out._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {_size_str(g._data.shape)} "
                f"and output[{i}] has a shape of {_size_str(out._data.shape)}."
            )
        elif g._data.dtype != out._data.dtype:
            g = make(g._data.astype(out._data.dtype))
        grads.append(g)
    return grads


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


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None) -> None:
    """Accumulate into the leaves' ``.grad`` the gradient of ``tensors``.

    >>> import retrograd as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> torch.autograd.backward((x * x).sum()); x.grad
    tensor([2., 4.])
    """
    outputs = _as_tuple(tensors)
    if grad_tensors is None and grad_variables is not None:
        grad_tensors = grad_variables
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    if isinstance(grad_tensors, Tensor):
        grads = (grad_tensors,)
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _as_tuple(inputs)
    if inputs:
        for t in inputs:
            if not isinstance(t, Tensor):
                raise TypeError("inputs to backward() must be Tensors")
            if not t.requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
    else:
        inputs = None
    seeds = _seed_grads(outputs, grads, create_graph)
    _run(outputs, seeds, retain_graph, create_graph, inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return the gradients of ``outputs`` with respect to ``inputs``, leaving ``.grad`` alone.

    >>> import retrograd as torch
    >>> x = torch.tensor(2.0, requires_grad=True)
    >>> torch.autograd.grad(x ** 3, x)
    (tensor(12.),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
            "allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    single_input = isinstance(inputs, Tensor)
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("grad requires non-empty inputs.")
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad expects Tensors as inputs, got {type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if grad_outputs is None:
        grads = (None,) * len(outputs)
    else:
        grads = _as_tuple(grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    seeds = _seed_grads(outputs, grads, create_graph)
    result = _run(outputs, seeds, retain_graph, create_graph, inputs, accumulate=False)
    out = []
    for i, (t, g) in enumerate(zip(inputs, result)):
        if g is None:
            if materialize_grads:
                g = make(np.zeros_like(t._data))
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
        out.append(g)
    del single_input
    return tuple(out)


def _tensor_grad(g, create_graph: bool):
    """A gradient from the walk as a Tensor (in array mode the walk carries plain arrays)."""
    if create_graph:
        return g
    if g.__class__ is not np.ndarray:
        g = np.asarray(g)
    return make(g)


def _run_hooks(hooks, g, create_graph: bool):
    """Tensor hooks: each sees a Tensor and may return a replacement."""
    t = _tensor_grad(g, create_graph)
    for hook in tuple(hooks):
        r = hook(t)
        if r is not None:
            t = r
    return t if create_graph else t._data


def _run(outputs, seeds, retain_graph: bool, create_graph: bool, inputs, accumulate: bool):
    """The walk. Returns the captured gradients of ``inputs`` when not accumulating."""
    xp = _ops if create_graph else _array
    root_edges = _root_edges(outputs)

    # Targets: where to capture (grad) or to which tensors to limit accumulation (inputs=);
    # then only nodes from which a target can be reached run.
    capture = None
    needed = None
    if inputs is not None:
        capture = {}
        for i, t in enumerate(inputs):
            capture.setdefault(edge(t), []).append(i)
        needed = _needed_nodes(root_edges, {fn for fn, _ in capture})
    captured = [None] * (len(inputs) if inputs is not None else 0)
    pruned = needed is not None

    prev_mode = state.grad_enabled
    state.grad_enabled = create_graph
    try:
        # Nodes wait in a heap ordered by creation, newest first. Every consumer of a node was
        # created after it, so when a node comes out all gradients for it are in: a valid
        # order with no separate pass to count dependencies.
        bufs: dict = {}
        heap: list = []
        given = set()  # arrays a leaf took as its .grad in this pass: never give one twice
        for (fn, nr), g in zip(root_edges, seeds):
            g = g if create_graph else g._data
            given.add(id(g))
            _deliver(bufs, heap, fn, nr, g)

        while heap:
            fn = heappop(heap)[1]
            buf = bufs.pop(fn)

            if fn.__class__ is AccumulateGrad:
                _accumulate(fn, buf, create_graph, capture, captured, accumulate, inputs, given)
                continue

            single = fn._n_out == 1
            if fn._hooked or capture is not None:
                # Hooks and captures work on the per-output list.
                buf = [buf] if single else buf
                if fn._hooked:
                    buf = _before_node(fn, buf, create_graph, accumulate, inputs)
                if capture is not None:
                    for nr, g in enumerate(buf):
                        idx = capture.get((fn, nr))
                        if idx is not None:
                            _capture(captured, idx, g, create_graph, accumulate, inputs)
                if single:
                    buf = buf[0]

            grads = None
            if buf is not None and (not pruned or fn in needed):
                if single:
                    grads = fn.backward(xp, buf)
                else:
                    if fn._materialize and any(g is None for g in buf):
                        buf = _materialize(fn, buf, xp)
                    grads = fn.backward(xp, *buf)
                if grads.__class__ is not tuple:
                    grads = (grads,)
            if not retain_graph:
                fn.release()
            if fn._post_hooks is not None:
                grads = _node_post_hooks(fn, grads, [buf] if single else buf, create_graph)
            if grads is None:
                continue

            # Route each input's gradient to the next node, fixing shape and dtype.
            if fn._shapes or fn._dtypes is not None:
                grads = _fix_meta(fn, grads, xp)
            for (nxt, nr), g in zip(fn.next_functions, grads):
                if nxt is not None and g is not None and (not pruned or nxt in needed):
                    if nxt._n_out == 1:
                        old = bufs.get(nxt)
                        if old is None:
                            bufs[nxt] = g
                            heappush(heap, (-nxt._seq, nxt))
                        else:
                            bufs[nxt] = old + g
                    else:
                        _deliver(bufs, heap, nxt, nr, g)
    finally:
        state.grad_enabled = prev_mode
    return captured


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


def _fix_meta(fn, grads, xp) -> tuple:
    """Undo broadcasting and dtype promotion for the inputs that need it."""
    shapes, dtypes = fn._shapes, fn._dtypes
    out = list(grads)
    for i, g in enumerate(out):
        if g is None:
            continue
        if shapes and i < len(shapes) and shapes[i] is not None and g.shape != shapes[i]:
            g = _sum_to(fn, i, g, shapes[i], xp)
        if dtypes is not None and i < len(dtypes) and dtypes[i] is not None and \
                g.dtype != dtypes[i]:
            g = xp.cast(g, dtypes[i])
        out[i] = g
    return tuple(out)


def _needed_nodes(root_edges, target_fns) -> set:
    """Nodes from which some target can be reached: only those run for ``inputs=``/``grad``."""
    needed = set()
    # Iterative post-order: a node is needed if it is a target or any successor is needed.
    state_of: dict = {}
    for root, _ in root_edges:
        if root in state_of:
            continue
        stack = [(root, iter(root.next_functions))]
        state_of[root] = 1
        while stack:
            fn, it = stack[-1]
            advanced = False
            for nxt, _ in it:
                if nxt is not None and nxt not in state_of:
                    state_of[nxt] = 1
                    stack.append((nxt, iter(nxt.next_functions)))
                    advanced = True
                    break
            if advanced:
                continue
            stack.pop()
            if fn in target_fns or any(
                n is not None and n in needed for n, _ in fn.next_functions
            ):
                needed.add(fn)
    return needed


def _accumulate(fn, g, create_graph, capture, captured, accumulate, inputs, given) -> None:
    var = fn.variable
    if g is None:
        return
    hooks = var.__dict__.get("_hooks") if var.__dict__ else None
    if hooks:
        g = _run_hooks(hooks, g, create_graph)
    if capture is not None:
        idx = capture.get((fn, 0))
        if idx is not None:
            _capture(captured, idx, g, create_graph, accumulate, inputs)
            if not accumulate:
                return
        elif inputs is not None:
            return
    if not accumulate:
        return
    _accumulate_into(var, g, create_graph, given)
    post = var.__dict__.get("_post_acc_hooks") if var.__dict__ else None
    if post:
        for hook in tuple(post):
            hook(var)


def _accumulate_into(var, g, create_graph: bool, given) -> None:
    """PyTorch's AccumulateGrad: take the first gradient, add later ones in place."""
    old = var._grad
    if create_graph:
        if old is None:
            var._grad = g if id(g) not in given else g.clone()
            given.add(id(var._grad))
        else:
            var._grad = old + g
        return
    if g.__class__ is not np.ndarray:
        g = np.asarray(g)
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


def _capture(captured, idx, g, create_graph, accumulate, inputs) -> None:
    if g is None:
        return
    if accumulate:
        # backward(inputs=...) on a non-leaf: treat like retain_grad.
        for i in idx:
            t = inputs[i]
            if t.grad_fn is not None:
                gt = _tensor_grad(g, create_graph)
                t._grad = gt.clone() if t._grad is None else t._grad + gt
        return
    for i in idx:
        captured[i] = _tensor_grad(g, create_graph)


def _before_node(fn, buf, create_graph, accumulate, inputs):
    """Hooks that run before a node: tensor hooks, retain_grad, then node pre-hooks."""
    buf = list(buf)
    if fn._tensor_hooks is not None or fn._retain is not None:
        _output_hooks(fn, buf, create_graph, accumulate, inputs)
    if fn._pre_hooks is not None:
        buf = _node_pre_hooks(fn, buf, create_graph)
    return buf


def _output_hooks(fn, buf, create_graph, accumulate, inputs) -> None:
    """Tensor.register_hook on non-leaves, then retain_grad, as PyTorch orders them."""
    th = fn._tensor_hooks
    if th:
        for nr, hooks in th.items():
            if hooks and buf[nr] is not None:
                buf[nr] = _run_hooks(hooks, buf[nr], create_graph)
    rt = fn._retain
    if rt and accumulate:
        for nr, ref in rt.items():
            t = ref()
            g = buf[nr]
            if t is None or g is None or t._grad_fn is not fn:
                continue
            if inputs is not None and not any(t is i for i in inputs):
                continue
            gt = _tensor_grad(g, create_graph)
            if t._grad is None:
                t._grad = gt.clone() if not create_graph else gt
            else:
                t._grad = t._grad + gt


def _node_pre_hooks(fn, buf, create_graph):
    gs = tuple(None if g is None else _tensor_grad(g, create_graph) for g in buf)
    for hook in tuple(fn._pre_hooks):
        r = hook(gs)
        if r is not None:
            gs = tuple(r)
    return [None if g is None else (g if create_graph else g._data) for g in gs]


def _node_post_hooks(fn, grads, buf, create_graph):
    gi = tuple(None if g is None else _tensor_grad(g, create_graph) for g in (grads or ()))
    go = tuple(None if g is None else _tensor_grad(g, create_graph) for g in buf)
    for hook in tuple(fn._post_hooks):
        r = hook(gi, go)
        if r is not None:
            gi = tuple(r)
    return tuple(None if g is None else (g if create_graph else g._data) for g in gi)


def _materialize(fn, buf, xp):
    metas = getattr(fn, "_out_meta", None)
    if metas is None:
        return buf
    return [xp.zeros_meta(m) if g is None else g for g, m in zip(buf, metas)]


def _sum_to(fn, i, g, shape, xp):
    """Undo broadcasting: sum ``g`` down to the input's shape (the one place this happens)."""
    gshape = g.shape
    lead = len(gshape) - len(shape)
    ok = lead >= 0 and all(s == 1 or s == gshape[lead + k] for k, s in enumerate(shape))
    if not ok:
        raise RuntimeError(
            f"Function {fn.name()} returned an invalid gradient at index {i} - got "
            f"{list(gshape)} but expected shape compatible with {list(shape)}"
        )
    return xp.sum_to(g, shape)

