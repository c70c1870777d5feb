"""retrograd's differentiable ops, and the Tensor methods and operators that call them.

Each family module (``pointwise``, ``reduction``, ``shape``, ``indexing``, ``linalg``) lists
its public functions in ``__all__``, the Tensor methods it provides in ``METHODS``, in-place
methods as ``INPLACE`` (name -> the out-of-place op), and in ``XP`` the functions backward
formulas call that are not public. This package gathers them: it is the namespace formulas use
under ``create_graph=True`` (the twin of ``_array``, which defines the same names for arrays).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, make
from . import (
    decomp,
    indexing,
    inplace,
    join,
    linalg,
    nn_activation,
    nn_attention,
    nn_conv,
    nn_norm,
    pointwise,
    reduction,
    shape,
    sorting,
    special,
)
from .inplace import copy_, fill_, inplace_method, setitem, zero_

TENSORS = True  # formulas get tensors from this namespace (see _array)

FAMILIES = (
    pointwise, special, reduction, sorting, shape, join, indexing, linalg, decomp, nn_activation,
    nn_conv, nn_norm, nn_attention,
)

__all__: list = []
for _mod in FAMILIES:
    for _name in list(_mod.__all__) + list(_mod.XP):
        globals()[_name] = getattr(_mod, _name)
    __all__ += _mod.__all__


def zeros_meta(meta) -> Tensor:
    shape_, np_dtype = meta
    return make(np.zeros(shape_, np_dtype))


def zeros_like(x: Tensor) -> Tensor:
    return make(np.zeros_like(x._data))


def _bind_methods() -> None:
    """Install the ops as Tensor methods and operators, as PyTorch exposes them."""
    T = Tensor
    for mod in FAMILIES:
        for name, fn in mod.METHODS.items():
            setattr(T, name, fn)
        for name, fn in mod.INPLACE.items():
            setattr(T, name, inplace_method(fn, name))
    T.copy_ = copy_
    T.fill_ = fill_
    T.zero_ = zero_
    T.T = property(shape.matrix_t)
    T.mT = property(shape.mT)
    T.H = property(shape.H)
    T.mH = property(shape.mH)

    # In place with a no-graph fast path (optimizer steps use these).
    fast = inplace._fast_ufunc
    T.add_ = fast(np.add, pointwise.add, "add_")
    T.sub_ = fast(np.subtract, pointwise.sub, "sub_")
    T.mul_ = fast(np.multiply, pointwise.mul, "mul_")
    T.div_ = fast(np.true_divide, pointwise.div, "div_")

    p = pointwise
    T.__add__ = p.add
    T.__radd__ = p.add
    T.__sub__ = p.sub
    T.__rsub__ = p.rsub
    T.__mul__ = p.mul_operator
    T.__rmul__ = p.mul_operator
    T.__truediv__ = p.div
    T.__rtruediv__ = p.rdiv
    T.__pow__ = p.pow
    T.__rpow__ = lambda self, other: p.pow(other, self)
    T.__matmul__ = linalg.matmul
    T.__rmatmul__ = lambda self, other: linalg.matmul(other, self)
    T.__neg__ = p.neg
    T.__pos__ = p.positive
    T.__abs__ = p.abs
    T.__eq__ = p.eq
    T.__ne__ = p.ne
    T.__lt__ = p.lt
    T.__le__ = p.le
    T.__gt__ = p.gt
    T.__ge__ = p.ge
    T.__and__ = p.bitwise_and
    T.__or__ = p.bitwise_or
    T.__xor__ = p.bitwise_xor
    T.__rand__ = p.bitwise_and
    T.__ror__ = p.bitwise_or
    T.__rxor__ = p.bitwise_xor
    T.__invert__ = p.bitwise_not
    T.__floordiv__ = p.floor_divide
    T.__rfloordiv__ = lambda self, other: p.floor_divide(other, self)
    T.__getitem__ = indexing.getitem
    T.__setitem__ = setitem
    T.__iadd__ = T.add_
    T.__isub__ = T.sub_
    T.__imul__ = T.mul_
    T.__itruediv__ = T.div_
    T.__ipow__ = T.pow_
    T.__hash__ = object.__hash__

    def _cast(np_dtype):
        return lambda self, memory_format=None: shape.to_dtype_op(self, np.dtype(np_dtype))

    T.float = _cast(np.float32)
    T.double = _cast(np.float64)
    T.half = _cast(np.float16)
    T.long = _cast(np.int64)
    T.int = _cast(np.int32)
    T.short = _cast(np.int16)
    T.char = _cast(np.int8)
    T.byte = _cast(np.uint8)
    T.bool = _cast(np.bool_)
    T.cpu = lambda self, memory_format=None: self
    from .. import _creation, _random

    for mod in (_creation, _random):
        for name, fn in getattr(mod, "TENSOR_METHODS", {}).items():
            setattr(T, name, fn)
    T.cuda = _no_cuda


def _no_cuda(self, *args, **kwargs):
    raise RuntimeError("retrograd computes on the CPU only; CUDA is not supported")


_bind_methods()
