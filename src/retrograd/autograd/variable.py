"""``torch.autograd.Variable``: the pre-0.4 wrapper, today an alias of tensors, kept because old
programs still write ``Variable(x, requires_grad=True)`` and ``isinstance(x, Variable)``."""

from __future__ import annotations

from .._tensor import Tensor

__all__ = ["Variable", "VariableMeta"]


class VariableMeta(type):
    """Variable's metaclass: every tensor is an instance of ``Variable``."""

    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=VariableMeta):
    """``Variable(data, requires_grad=False)``: ``data`` detached (sharing its memory), as a
    leaf with the given ``requires_grad``; every tensor is an instance.

    >>> import retrograd as torch
    >>> v = Variable(torch.ones(2), requires_grad=True)
    >>> v.requires_grad, isinstance(torch.ones(1), Variable)
    (True, True)
    """

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            if not (out.is_floating_point() or out.is_complex()):
                raise RuntimeError(
                    "Only Tensors of floating point and complex dtype can require gradients")
            out.requires_grad_()
        return out
