"""The two fronts of the engine: ``backward`` (accumulate into leaves' ``.grad``) and ``grad``
(return the gradients). They check their arguments, make the roots' starting gradients and hand
one pass to ``engine.run_backward``.
"""

from __future__ import annotations

import numpy as np

from .. import ops as _ops
from .._dtypes import FLOAT_CHARS
from .._tensor import Tensor, make
from ..ops import fused as _fused
from .engine import run_backward

__all__ = ["backward", "grad"]


def _start_leak_watch(outputs) -> None:
    # The leak watch (leak.py) needs the optimizers, which load after this module: it starts
    # on the first backward (before any optimizer step) and takes over ``on_backward``.
    from . import leak

    leak.note_backward(outputs)


# Sees each backward's roots while autograd/leak.py watches the first optimizer steps; None after.
on_backward = _start_leak_watch

# Per running pass, innermost last: whether it is a plain ``backward()`` (no ``inputs``), the
# only kind a reentrant checkpoint can run inside (``_is_checkpoint_valid``).
_PASSES: list = []


def _is_checkpoint_valid() -> bool:
    """Whether the running backward pass (if any) is a plain ``.backward()``: PyTorch's
    ``torch.autograd._is_checkpoint_valid``.

    >>> _is_checkpoint_valid()
    True
    """
    return not _PASSES or _PASSES[-1]


def _is_edge(x) -> bool:
    return getattr(x, "_fields", None) == ("node", "output_nr", "ownership_token")


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, Tensor) or _is_edge(x):
        return (x,)
    return tuple(x)


def _edges_to_tensors(xs, likes=None) -> tuple:
    """``autograd.grad`` takes graph edges (``graph.get_gradient_edge``) for tensors: a leaf's
    edge stands for the leaf; another, for a tensor of that node's output (shaped like the
    matching ``likes`` entry, its gradient, when given)."""
    out = []
    for i, x in enumerate(xs):
        if _is_edge(x):
            node, nr = x[0], x[1]
            leaf = getattr(node, "variable", None)
            if leaf is not None:
                x = leaf
            else:
                like = likes[i] if likes is not None and i < len(likes) else None
                x = make(np.zeros((0,), np.float32) if like is None else like._data)
                x._grad_fn, x._nr, x._rg = node, nr, True
        out.append(x)
    return tuple(out)


def _size_str(shape) -> str:
    return f"torch.Size({list(shape)})"


def _seed_grads(outputs, grad_outputs):
    """Validate the roots and make their starting gradients (ones for scalar outputs)."""
    if len(grad_outputs) < len(outputs):
        raise RuntimeError(
            f"got {len(outputs)} tensors and {len(grad_outputs)} gradients"
        )
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out.requires_grad:
                if out._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if out._data.dtype.char not in FLOAT_CHARS:
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{out.dtype!r}".replace("retrograd.", "torch.")
                    )
            a = out._data
            # (np.ones_like costs microseconds of Python; a 0-d root is the common case.)
            g = make(np.array(1, a.dtype) if a.ndim == 0 else np.ones_like(a))
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


def _check_inputs(inputs) -> None:
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad expects Tensors as inputs, got {type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")


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
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        _check_inputs(inputs)
        for t in inputs:
            if t.grad_fn is not None:
                t.retain_grad()  # PyTorch marks non-leaf inputs as retaining their grad
    seeds = _seed_grads(outputs, grads)
    if on_backward is not None:
        on_backward(outputs)
    _PASSES.append(inputs is None)
    try:
        run_backward(outputs, seeds, retain_graph, create_graph, inputs, accumulate=True)
    finally:
        _PASSES.pop()


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
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("grad requires non-empty inputs.")
    grads = (None,) * len(outputs) if grad_outputs is None else _as_tuple(grad_outputs)
    if not all(isinstance(t, Tensor) for t in inputs):
        inputs = _edges_to_tensors(inputs)
    if not all(isinstance(t, Tensor) for t in outputs):
        outputs = _edges_to_tensors(outputs, grads)
    _check_inputs(inputs)
    if retain_graph is None:
        retain_graph = create_graph
    _PASSES.append(False)
    try:
        if is_grads_batched:
            result = _batched(outputs, inputs, grads, retain_graph, create_graph)
        else:
            seeds = _seed_grads(outputs, grads)
            result = run_backward(outputs, seeds, retain_graph, create_graph, inputs,
                                  accumulate=False)
    finally:
        _PASSES.pop()
    out = []
    for i, (t, g) in enumerate(zip(inputs, result)):
        if g is None:
            if materialize_grads:
                # Not batched, even with is_grads_batched (as PyTorch's).
                g = make(np.zeros_like(t._data)).requires_grad_(create_graph)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
        out.append(g)
    return tuple(out)


_fused.GRAD = grad  # ops/fused.py runs a composite's backward through the engine (see there)


def _batched(outputs, inputs, grads, retain_graph: bool, create_graph: bool) -> list:
    """``is_grads_batched=True``: dim 0 of every grad_output is a batch of cotangents, and each
    result stacks one VJP per batch entry. PyTorch vmaps its engine over that dim; this runs
    one pass per entry (the graph retained until the last), with PyTorch's checks and errors.
    """
    seeds = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if isinstance(g, Tensor):
            first = g[0]  # PyTorch's IndexError for a 0-d or empty grad_output
            if first.shape != out.shape:
                # (PyTorch drops one more leading dim of grad_output when it prints the shape.)
                raise RuntimeError(
                    "If `is_grads_batched=True`, we interpret the first dimension of each "
                    "grad_output as the batch dimension. The sizes of the remaining dimensions "
                    "are expected to match the shape of corresponding output, but a mismatch "
                    f"was detected: grad_output[{i}] has a shape of "
                    f"{_size_str(first.shape[1:])} and output[{i}] has a shape of "
                    f"{_size_str(out.shape)}. If you only want some tensors in `grad_output` "
                    "to be considered batched, consider using vmap."
                )
        elif g is None:
            if out.requires_grad:  # the implicit ones, then batched over their dim 0 as well
                g = _seed_grads((out,), (None,))[0]
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        seeds.append(g)
    sizes = []
    for g in seeds:
        if g is not None:
            if g.dim() == 0:
                raise ValueError(
                    "vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but that "
                    "input is a Tensor of dimensionality 0 so expected in_dim to satisfy "
                    "0 <= in_dim < 0."
                )
            sizes.append(g.shape[0])
    if len(set(sizes)) > 1:
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    n = sizes[0] if sizes else 0
    per_entry = []
    for b in range(n):
        gb = [None if g is None else g[b] for g in seeds]
        for i, (out, g) in enumerate(zip(outputs, gb)):
            if g is not None and g.shape != out.shape:  # an implicit gradient, now one dim short
                raise RuntimeError(
                    f"invalid gradient at index {i} - got {list(g.shape)} but expected shape "
                    f"compatible with {list(out.shape)}"
                )
        gb = _seed_grads(outputs, gb)
        per_entry.append(run_backward(outputs, gb, retain_graph or b < n - 1, create_graph,
                                      inputs, accumulate=False))
    return [None if not per_entry or per_entry[0][k] is None else
            _ops.stack([r[k] for r in per_entry], 0) for k in range(len(inputs))]

