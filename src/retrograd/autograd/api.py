"""The two fronts of the engine: ``backward`` (accumulate into leaves' ``.grad``) and ``grad``
(return the gradients). They check their arguments, make the roots' starting gradients and hand
one pass to ``engine.run_backward``.
"""

from __future__ import annotations

import numpy as np

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

def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


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
    run_backward(outputs, seeds, retain_graph, create_graph, inputs, accumulate=True)


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
    _check_inputs(inputs)
    grads = (None,) * len(outputs) if grad_outputs is None else _as_tuple(grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    seeds = _seed_grads(outputs, grads)
    result = run_backward(outputs, seeds, retain_graph, create_graph, inputs,
                          accumulate=False)
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
    return tuple(out)


_fused.GRAD = grad  # ops/fused.py runs a composite's backward through the engine (see there)
