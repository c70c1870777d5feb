"""``autograd.Function``: user-defined ops with a hand-written backward.

A Function subclass gets a node class of its own, named ``<Name>Backward``; calling ``apply``
runs ``forward`` without recording, then attaches an instance of that node exactly as built-in
ops attach theirs. The node *is* the ``ctx`` the user's methods receive, as in PyTorch.
"""

from __future__ import annotations

import functools

import numpy as np

from .._tensor import Tensor, make
from ..ops._apply import apply_function
from ..ops._core import wire
from .grad_mode import state
from .graph import Node, unpacked_output
from .saved import freed_msg, modified_msg, output_modified_msg

__all__ = ["Function", "FunctionCtx", "once_differentiable", "BackwardCFunction"]


class FunctionCtx:
    """The methods a ``ctx`` offers; the node classes built for Functions inherit them."""

    def save_for_backward(self, *tensors) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type "
                    f"{type(t).__name__}"
                )
        self.to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors) -> None:
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_diff = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The node of a user Function call; also its ``ctx``."""

    _forward_cls = None
    _dirty = ()
    _non_diff = ()
    to_save = ()
    _saved_kinds = ()  # per saved entry: "in" (input tensor), "out" (output index) or None

    @property
    def saved_tensors(self) -> tuple:
        saved = self._saved
        if saved is None:
            raise RuntimeError(freed_msg(self))
        if self._packed:  # saved under saved-tensor hooks
            return tuple(self.saved(True))
        out = []
        for kind, t, v in zip(self._saved_kinds, saved, self._versions):
            if t is None:
                out.append(None)
                continue
            if kind == "out":
                arr, vc, version = t
                if vc[0] != version:
                    raise RuntimeError(output_modified_msg(arr, vc, version, self,
                                                           self._saved_out_nr(arr)))
                nr = self._saved_out_nr(arr)
                if self._out_rg[nr]:
                    r = unpacked_output(arr, vc, self, nr)
                else:
                    r = make(arr)
                    r._vc = vc
                out.append(r)
            else:
                if t._vc[0] != v:
                    raise RuntimeError(modified_msg(t, v, self))
                out.append(t)
        return tuple(out)

    saved_variables = saved_tensors

    def _saved_out_nr(self, arr) -> int:
        for i, a in enumerate(self._out_arrays):
            if a is arr:
                return i
        return 0

    @property
    def needs_input_grad(self) -> tuple:
        return self._needs_input_grad

    def backward(self, xp, *grads):
        as_tensors = xp.TENSORS
        if not as_tensors:
            grads = tuple(None if g is None else make(np.asarray(g)) for g in grads)
        cls = self._forward_cls
        res = cls.backward(self, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        n_args = len(self._arg_is_tensor)
        if len(res) != n_args:
            if len(res) > n_args and all(r is None for r in res[n_args:]):
                res = res[:n_args]
            else:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients "
                    f"(expected {n_args}, got {len(res)})"
                )
        out = []
        for pos, (is_t, g) in enumerate(zip(self._arg_is_tensor, res)):
            if not is_t:
                if g is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at "
                        f"position {pos + 1}, but the corresponding forward input was not a "
                        "Variable"
                    )
                continue
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            out.append(g if g is None or as_tensors else g._data)
        return tuple(out)

    def release(self) -> None:
        self._saved = None

    def __repr__(self) -> str:
        return f"<retrograd.autograd.function.{self.name()} object at {hex(id(self))}>"


class _FunctionMeta(type):
    """Gives each Function subclass its own node class, named ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        node_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        cls._backward_cls = node_cls
        super().__init__(name, bases, attrs)


class Function(metaclass=_FunctionMeta):
    """Define an op by its forward and backward.

    >>> import retrograd as torch
    >>> class Square(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * g
    >>> x = torch.tensor(3.0, requires_grad=True)
    >>> Square.apply(x).backward(); x.grad
    tensor(6.)
    """

    def __init__(self, *args, **kwargs) -> None:
        pass

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        node = cls._backward_cls()
        is_tensor = tuple(isinstance(a, Tensor) for a in args)
        node._arg_is_tensor = is_tensor
        node._needs_input_grad = tuple(
            t and a.requires_grad for t, a in zip(is_tensor, args)
        )
        uses_setup = cls.setup_context is not Function.setup_context
        return apply_function(cls, node, args, kwargs, uses_setup)


class _DelayedError(Node):
    def backward(self, xp, *grads):
        raise RuntimeError(self._msg)


def once_differentiable(fn):
    """Mark a Function's backward as not differentiable: it runs without recording, and a
    second-order backward through it raises."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = state.grad_enabled
        state.grad_enabled = False
        try:
            outputs = fn(ctx, *args)
        finally:
            state.grad_enabled = prev
        if not prev:
            return outputs
        requires = any(isinstance(a, Tensor) and a.requires_grad for a in args)
        if not requires:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        res = []
        for o in outs:
            if isinstance(o, Tensor):
                node = _DelayedError()
                node._msg = (
                    "trying to differentiate twice a function that was marked with "
                    "@once_differentiable"
                )
                wire(node, [a for a in args if isinstance(a, Tensor)])
                o = make(o._data, node, 0)
            res.append(o)
        return res[0] if single else tuple(res)

    return wrapper
