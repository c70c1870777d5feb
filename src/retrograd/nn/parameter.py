"""``Parameter`` and ``Buffer``: tensors a ``Module`` registers when they are assigned to it.

A Parameter is a leaf Tensor of its own class that shares its data's array (and version counter)
and requires grad by default; ops on it return plain Tensors, as in PyTorch.
"""

from __future__ import annotations

import retrograd as torch
from retrograd import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]


def _leaf_like(cls, data: Tensor) -> Tensor:
    """A leaf of class ``cls`` sharing ``data``'s array and version counter, outside the graph."""
    t = data.detach()  # a fresh leaf on the same array and version counter
    t.__class__ = cls  # what PyTorch's Tensor._make_subclass does: same tensor, new class
    return t


class Parameter(Tensor):
    """A Tensor that a Module lists among its parameters when assigned as an attribute.

    >>> import retrograd as torch
    >>> p = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    >>> p
    Parameter containing:
    tensor([1., 2.], requires_grad=True)
    >>> (p * 2).requires_grad, type(p * 2).__name__
    (True, 'Tensor')
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = torch.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}"
            )
        if requires_grad and not (data.is_floating_point() or data.is_complex()):
            # PyTorch's words from Tensor._make_subclass, not those of requires_grad_
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients")
        t = _leaf_like(cls, data)
        if requires_grad:
            t.requires_grad_(True)
        return t

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # everything happens in __new__

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        if self.grad is not None:
            result.grad = self.grad.clone()
        memo[id(self)] = result
        return result


class _BufferMeta(type):
    # ``Buffer(t)`` returns a plain Tensor marked as a buffer; isinstance checks the mark.
    def __instancecheck__(cls, obj) -> bool:
        if cls is Buffer:
            return isinstance(obj, Tensor) and obj.__dict__.get("_is_buffer", False)
        return super().__instancecheck__(obj)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a Tensor to be registered as a Module buffer when assigned as an attribute.

    >>> import retrograd as torch
    >>> m = torch.nn.Module()
    >>> m.running = torch.nn.Buffer(torch.zeros(2))
    >>> list(dict(m.named_buffers()))
    ['running']
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            data = torch.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.__dict__["persistent"] = persistent
        t.__dict__["_is_buffer"] = True
        return t


_UNINIT = ("Can't access the shape of an uninitialized parameter or buffer. This error usually "
           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
           "initialized one. Call `forward` to initialize the parameters before accessing their "
           "attributes.")


class _UninitializedMixin:
    """A placeholder tensor of the lazy modules: no shape until ``materialize`` gives it one
    (and turns it into ``cls_to_become``)."""

    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Allocate the data with ``shape`` (uninitialised values) and become a normal
        tensor of ``cls_to_become``."""
        if device is not None:
            torch.device(device)
        dtype = self.data.dtype if dtype is None else dtype
        self.data = torch.empty(shape, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(_UNINIT)

    def size(self, *args):
        raise RuntimeError(_UNINIT)

    def numel(self):
        raise RuntimeError(_UNINIT)

    def dim(self):
        raise RuntimeError(_UNINIT)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(requires_grad=self.requires_grad, dtype=self.data.dtype)
        memo[id(self)] = result
        return result


class UninitializedParameter(_UninitializedMixin, Parameter):
    """A parameter whose shape a lazy module sets on its first forward.

    >>> import retrograd as torch
    >>> torch.nn.UninitializedParameter()
    <UninitializedParameter>
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        return Parameter.__new__(cls, torch.empty(0, dtype=dtype), requires_grad)

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        pass


class UninitializedBuffer(_UninitializedMixin, Tensor):
    """A buffer whose shape a lazy module sets on its first forward.

    >>> import retrograd as torch
    >>> torch.nn.UninitializedBuffer()
    <UninitializedBuffer>
    """

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None,
                persistent: bool = True):
        t = _leaf_like(cls, torch.empty(0, dtype=dtype))
        if requires_grad:
            t.requires_grad_(True)
        return t

    def __init__(self, requires_grad: bool = False, device=None, dtype=None,
                 persistent: bool = True) -> None:
        pass
