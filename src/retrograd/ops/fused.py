"""A composite recorded as one node, named as PyTorch's kernel (``fused``).

Some ops PyTorch runs as one kernel with one grad_fn (``conv3d``'s ``ConvolutionBackward0``,
``cdist``'s ``CdistBackward0``, ``embedding_bag``'s ``EmbeddingBagBackward0``, ...) are written
here from differentiable primitives. ``fused(Backward, fn, *inputs)`` runs such a composite
``fn`` and records one ``Backward`` node for it: the result's ``grad_fn`` and
``next_functions`` are PyTorch's, and the backward is the composite's own vector-Jacobian
product, so every order of derivative still comes from the primitives it is made of.

NOTE: how the backward runs. The forward builds ``fn``'s graph on detached copies of the
inputs and the node keeps it: a plain backward is one inner pass over it (the composite's cost,
no recomputation). Under ``create_graph`` (and for forward-mode AD, which differentiates the
backward) the formula must be an op of the real inputs, so it runs ``fn`` again on the saved
inputs and differentiates that with ``create_graph=True``. Each name is one ``Node`` subclass
(``node_class``), declared once.
"""

from __future__ import annotations

import numpy as np

from .._dtypes import FLOAT_CHARS
from .._tensor import Tensor, make
from ..autograd import saved as _saved
from ..autograd.grad_mode import state
from ..autograd.graph import Node
from ..autograd.saved_hooks import paused
from ._apply import apply, apply_multi, needs_grad, recording

__all__: list = []
XP: list = []
METHODS: dict = {}
INPLACE: dict = {}

# ``autograd.grad``: the engine imports the ops, so autograd/api.py hands its ``grad`` in here
# when it loads (ops cannot import it without a cycle).
GRAD = None


class FusedBackward(Node):
    """The backward of a composite recorded as one node (see the module docstring)."""

    _fn = None       # the composite, a function of the tensor inputs
    _inner = None    # (outputs, leaves) of its graph on detached inputs, for a plain backward

    def backward(self, xp, *grads):
        saved = self.saved(xp.TENSORS)  # checks the inputs' versions first, with this name
        needs = [self._needs(i) for i in range(len(self.next_functions))]
        if not xp.TENSORS and self._inner is not None:
            outs, leaves = self._inner
            wrt = [x for x, n in zip(leaves, needs) if n]
            res = _vjp(outs, wrt, grads, make, retain=True)
            return self._grads(xp, needs, res)
        prev = state.grad_enabled
        state.grad_enabled = True
        try:
            xs = []
            for x, n in zip(saved, needs):
                if not xp.TENSORS and isinstance(x, np.ndarray):
                    x = make(x).requires_grad_(n)
                elif n and not x.requires_grad:
                    x = x.detach().requires_grad_()  # forward AD's unrecorded input
                xs.append(x)
            outs = self._fn(*xs)
            wrt = [x for x, n in zip(xs, needs) if n]
            res = _vjp(outs, wrt, grads, _tensor_grad, retain=False, graph=xp.TENSORS)
        finally:
            state.grad_enabled = prev
        return self._grads(xp, needs, res)

    def _grads(self, xp, needs, res) -> tuple:
        # One gradient per input that needs one: a kernel's backward gives zeros (not none)
        # for an input the composite does not differentiate through (copysign's sign).
        it = iter(res)
        out = []
        for n, meta in zip(needs, self._meta):
            r = next(it) if n else None
            if n and r is None:
                r = xp.zeros_meta(meta)
            out.append(r if r is None or xp.TENSORS or not isinstance(r, Tensor) else r._data)
        return tuple(out)

    def release(self) -> None:
        super().release()
        self._inner = None


def _tensor_grad(g):
    return g if isinstance(g, Tensor) else make(np.asarray(g))


def _vjp(outs, wrt, grads, as_tensor, retain: bool, graph: bool = False) -> list:
    """The gradients of ``outs`` (a tensor or a tuple) with respect to ``wrt`` for the output
    gradients ``grads`` (zeros in place of the missing ones); None where unused."""
    if not wrt:
        return []
    outs = outs if isinstance(outs, tuple) else (outs,)
    roots, seeds = [], []
    for o, g in zip(outs, grads):
        if g is not None and isinstance(o, Tensor) and o.requires_grad:
            roots.append(o)
            seeds.append(as_tensor(g))
    if not roots:
        return [None] * len(wrt)
    res = GRAD(roots, wrt, seeds, retain_graph=retain or graph, create_graph=graph,
               allow_unused=True)
    return list(res)


_CLASSES: dict = {}


def node_class(name: str) -> type:
    """The ``FusedBackward`` subclass called ``name`` (made once per name).

    >>> node_class("CdistBackward0") is node_class("CdistBackward0")
    True
    """
    cls = _CLASSES.get(name)
    if cls is None:
        cls = _CLASSES[name] = type(name, (FusedBackward,), {"__doc__": FusedBackward.__doc__})
    return cls


def fused(name: str, fn, *inputs, differentiable=None, **attrs):
    """``fn(*inputs)`` (a composite of differentiable ops) recorded as one node named ``name``.

    ``inputs`` are the tensors (or None) the node has edges to, in PyTorch's order; everything
    else ``fn`` needs it closes over. ``fn`` returns a tensor or a tuple of tensors (the
    floating ones take the node unless ``differentiable`` says which do). Keyword ``attrs``
    become node attributes, as with ``apply`` (what PyTorch's node shows as ``_saved_<name>``:
    strides, modes, flags).

    >>> import retrograd as torch
    >>> x = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> y = fused("NormBackward1", lambda t: (t * t).sum().sqrt(), x)
    >>> y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()
    ('NormBackward1', 'torch::autograd::AccumulateGrad')
    """
    if not recording(*[x for x in inputs if x is not None]):
        return fn(*inputs)
    P = node_class(name)
    packs = attrs.pop("_packs", None)
    if packs is not None and "_packs" not in P.__dict__:
        # What PyTorch's node saves, in its order (autograd/saved_hooks.py); the inputs kept
        # here for the recomputation are not among them unless it names them.
        P._packs, P._pack_rest = packs, False
    inner = None
    if state.grad_enabled:
        leaves = [x if x is None else x.detach().requires_grad_(needs_grad(x)) for x in inputs]
        if _saved.HOOKS_ON:  # PyTorch's one node saves what it saves, not fn's ops
            with paused():
                outs = fn(*leaves)
        else:
            outs = fn(*leaves)
        inner = (outs, leaves)
    else:  # only forward AD records here: its rule recomputes from the saved inputs
        outs = fn(*[x if x is None else x.detach() for x in inputs])
    if isinstance(outs, tuple):
        arrays = [_own(o) for o in outs]
        if differentiable is None:
            differentiable = [a.dtype.char in FLOAT_CHARS for a in arrays]
        res = apply_multi(P, arrays, inputs, differentiable=differentiable, save=inputs,
                          _fn=fn, _inner=inner, **attrs)
        for r, o in zip(res, outs):
            _tie(r, o)
        return res
    res = apply(P, _own(outs), *inputs, save=inputs, _fn=fn, _inner=inner, **attrs)
    _tie(res, outs)
    return res


def _own(o: Tensor):
    """The result's array: the inner output's, unless that is a view (of an input)."""
    return o._data.copy() if o._view is not None else o._data


def _tie(r: Tensor, o: Tensor) -> None:
    # The result shares its array with the inner graph's output, which that graph may have
    # saved: one version counter, so an in-place change to the result is caught there.
    if o._view is None and r._data is o._data:
        r._vc = o._vc
