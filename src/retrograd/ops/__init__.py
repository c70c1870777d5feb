"""retrograd's differentiable ops, and the Tensor methods and operators that call them.

Each family module (``arithmetic``, ``unary``, ``compare``, ``reduction``, ``shape``...) lists
its public functions in ``__all__``, the Tensor methods it provides in ``METHODS``, in-place
methods as ``INPLACE`` (name -> the out-of-place op), and in ``XP`` the functions backward
formulas call that are not public. This package gathers them: it is the namespace formulas use
under ``create_graph=True`` (the twin of ``_array``, which defines the same names for arrays).
"""

from __future__ import annotations

import numpy as np

from .. import _dtypes
from .._aten import aten, prim  # noqa: F401 - torch.ops.aten, torch.ops.prim
from .._tensor import Tensor, make
from . import (
    arithmetic,
    bessel,
    compare,
    composite,
    copies,
    counting,
    decomp,
    index_ops,
    indexing,
    inplace,
    join,
    linalg,
    nn_activation,
    nn_attention,
    nn_conv,
    nn_norm,
    padding,
    reduction,
    scatter_gather,
    shape,
    sorting,
    special,
    strided,
    unary,
)
from .inplace import copy_, fill_, inplace_method, setitem, zero_

TENSORS = True  # formulas get tensors from this namespace (see _array)

FAMILIES = (
    arithmetic, unary, compare, special, reduction, sorting, shape, copies, padding, join, indexing,
    scatter_gather, index_ops, linalg, decomp, nn_activation, nn_conv, nn_norm, nn_attention,
    composite, counting, bessel, strided,
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
    a, u, c = arithmetic, unary, compare
    T.add_ = fast(np.add, a.add, "add_")
    T.sub_ = fast(np.subtract, a.sub, "sub_")
    T.mul_ = fast(np.multiply, a.mul, "mul_")
    T.div_ = fast(np.true_divide, a.div, "div_")

    T.__add__ = a.add
    T.__radd__ = a.add
    T.__sub__ = a.sub
    T.__rsub__ = a.rsub
    T.__mul__ = a.mul_operator
    T.__rmul__ = a.mul_operator
    T.__truediv__ = a.div
    T.__rtruediv__ = a.rdiv
    T.__pow__ = a.pow
    T.__rpow__ = lambda self, other: a.pow(other, self)
    T.__matmul__ = linalg.matmul
    T.__rmatmul__ = lambda self, other: linalg.matmul(other, self)
    T.__neg__ = a.neg
    T.__pos__ = u.positive
    T.__abs__ = u.abs
    T.__eq__ = c.eq
    T.__ne__ = c.ne
    T.__lt__ = c.lt
    T.__le__ = c.le
    T.__gt__ = c.gt
    T.__ge__ = c.ge
    T.__and__ = c.bitwise_and
    T.__or__ = c.bitwise_or
    T.__xor__ = c.bitwise_xor
    T.__rand__ = c.bitwise_and
    T.__ror__ = c.bitwise_or
    T.__rxor__ = c.bitwise_xor
    T.__invert__ = c.bitwise_not
    T.__floordiv__ = a.floor_divide
    T.__rfloordiv__ = lambda self, other: a.floor_divide(other, self)
    for name in ("__radd__", "__rsub__", "__rtruediv__", "__rpow__", "__rmatmul__",
                 "__rfloordiv__"):
        setattr(T, name, _reflected(getattr(T, name)))
    T.__getitem__ = indexing.getitem
    T.__setitem__ = setitem
    T.__iadd__ = T.add_
    T.__isub__ = T.sub_
    T.__imul__ = T.mul_
    T.__itruediv__ = T.div_
    T.__ipow__ = T.pow_
    T.__hash__ = object.__hash__

    def _cast(np_dtype):
        def cast(self, memory_format=None):
            if memory_format is None:  # (the common case, straight to the conversion)
                return shape.to_dtype_op(self, np.dtype(np_dtype))
            return shape.to(self, np.dtype(np_dtype), memory_format=memory_format)
        return cast

    T.float = _cast(np.float32)
    T.double = _cast(np.float64)
    T.half = _cast(np.float16)
    T.bfloat16 = _cast(_dtypes.bfloat16.np)
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


def _reflected(fn):
    """``other OP tensor``: NotImplemented for a list, tuple, string or None, so that Python
    answers as for torch (``[1.] + t`` concatenates or says it cannot)."""

    def op(self, other):
        if other is None or isinstance(other, (list, tuple, str)):
            return NotImplemented
        return fn(self, other)

    op.__name__ = getattr(fn, "__name__", "op")
    return op


def _no_cuda(self, *args, **kwargs):
    raise AssertionError("Torch not compiled with CUDA enabled")  # PyTorch's CPU build says so


_bind_methods()
