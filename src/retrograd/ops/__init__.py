"""retrograd's differentiable ops, and the Tensor methods and operators that call them.

This package is also the namespace backward formulas use under ``create_graph=True`` (the twin
of ``_array``): every name ``_array`` defines is defined here with the same signature.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, make
from . import indexing, inplace, linalg, pointwise, reduction, shape
from .indexing import (
    embed_select,
    embed_slice,
    embed_view,
    getitem,
    index_put,
    index_zero,
    masked_fill,
    narrow,
    nonzero,
    scatter_along,
    scatter_into,
    select,
    slice_dim,
    take_along,
)
from .inplace import copy_, fill_, inplace_method, setitem, zero_
from .linalg import bmm, dot, matmul, mm, mv
from .pointwise import (
    abs,
    add,
    allclose,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    cast,
    clamp,
    clip,
    cos,
    div,
    eq,
    equal,
    exp,
    ge,
    greater,
    greater_equal,
    gt,
    isclose,
    isfinite,
    isinf,
    isnan,
    le,
    less,
    less_equal,
    log,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    mul,
    ne,
    neg,
    not_equal,
    pow,
    rdiv,
    reciprocal,
    relu,
    rsub,
    sigmoid,
    sign,
    sin,
    sqrt,
    sub,
    tanh,
    true_divide,
    where,
)
from .reduction import argmax, argmin, max, mean, min, norm, sum, vector_norm
from .shape import (
    alias,
    clone,
    contiguous,
    expand,
    expand_as,
    flatten,
    matrix_t,
    mT,
    permute,
    reshape,
    reshape_as,
    squeeze,
    sum_to,
    swapaxes,
    swapdims,
    t,
    to,
    transpose,
    type_as,
    unbind,
    unsqueeze,
    view,
    view_as,
)

TENSORS = True  # formulas get tensors from this namespace (see _array)

multiply = mul
divide = div
subtract = sub
negative = neg
absolute = abs
concat = None


def zeros_meta(meta) -> Tensor:
    shape_, np_dtype = meta
    return make(np.zeros(shape_, np_dtype))


def zeros_like_t(x: Tensor) -> Tensor:
    return make(np.zeros_like(x._data))


def _bind_methods() -> None:
    """Install the ops as Tensor methods and operators, as PyTorch exposes them."""
    T = Tensor
    methods = {
        "add": add, "sub": sub, "mul": mul, "div": div, "true_divide": true_divide,
        "multiply": mul, "divide": div, "subtract": sub,
        "pow": pow, "neg": neg, "negative": neg, "reciprocal": reciprocal,
        "exp": exp, "log": log, "sin": sin, "cos": cos, "tanh": tanh, "sigmoid": sigmoid,
        "relu": relu, "abs": abs, "absolute": abs, "sqrt": sqrt, "sign": sign,
        "clamp": clamp, "clip": clip, "where": lambda self, cond, other: where(cond, self, other),
        "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge, "greater": gt, "less": lt,
        "greater_equal": ge, "less_equal": le, "not_equal": ne,
        "logical_not": logical_not, "logical_and": logical_and, "logical_or": logical_or,
        "logical_xor": logical_xor, "bitwise_not": bitwise_not, "bitwise_and": bitwise_and,
        "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor,
        "isnan": isnan, "isinf": isinf, "isfinite": isfinite, "equal": equal,
        "allclose": allclose, "isclose": isclose,
        "sum": sum, "mean": mean, "max": max, "min": min, "argmax": argmax, "argmin": argmin,
        "norm": norm,
        "matmul": matmul, "mm": mm, "mv": mv, "dot": dot, "bmm": bmm,
        "view": view, "view_as": view_as, "reshape": reshape, "reshape_as": reshape_as,
        "flatten": flatten, "transpose": transpose, "swapaxes": swapaxes, "swapdims": swapdims,
        "t": t, "permute": permute, "expand": expand, "expand_as": expand_as,
        "squeeze": squeeze, "unsqueeze": unsqueeze, "clone": clone, "contiguous": contiguous,
        "unbind": unbind, "select": select, "narrow": narrow, "masked_fill": masked_fill,
        "nonzero": nonzero, "to": to, "type_as": type_as,
        "copy_": copy_, "fill_": fill_, "zero_": zero_,
    }
    for name, fn in methods.items():
        setattr(T, name, fn)
    T.T = property(matrix_t)
    T.mT = property(mT)
    T.H = property(matrix_t)
    T.mH = property(mT)

    # In place: the out-of-place op run through ops.inplace.
    fast = inplace._fast_ufunc
    T.add_ = fast(np.add, add, "add_")
    T.sub_ = fast(np.subtract, sub, "sub_")
    T.mul_ = fast(np.multiply, mul, "mul_")
    T.div_ = fast(np.true_divide, div, "div_")
    for name, fn in {
        "pow_": pow, "neg_": neg, "exp_": exp, "log_": log, "sin_": sin, "cos_": cos,
        "tanh_": tanh, "sigmoid_": sigmoid, "relu_": relu, "abs_": abs, "sqrt_": sqrt,
        "sign_": sign, "clamp_": clamp, "clip_": clamp, "masked_fill_": masked_fill,
        "reciprocal_": reciprocal, "true_divide_": div, "multiply_": mul, "divide_": div,
        "subtract_": sub, "negative_": neg, "absolute_": abs,
    }.items():
        setattr(T, name, inplace_method(fn, name))

    # Operators.
    T.__add__ = add
    T.__radd__ = add
    T.__sub__ = sub
    T.__rsub__ = rsub
    T.__mul__ = mul
    T.__rmul__ = mul
    T.__truediv__ = div
    T.__rtruediv__ = rdiv
    T.__pow__ = pow
    T.__rpow__ = lambda self, other: pow(other, self)
    T.__matmul__ = matmul
    T.__rmatmul__ = lambda self, other: matmul(other, self)
    T.__neg__ = neg
    T.__pos__ = lambda self: self
    T.__abs__ = abs
    T.__eq__ = eq
    T.__ne__ = ne
    T.__lt__ = lt
    T.__le__ = le
    T.__gt__ = gt
    T.__ge__ = ge
    T.__and__ = bitwise_and
    T.__or__ = bitwise_or
    T.__xor__ = bitwise_xor
    T.__rand__ = bitwise_and
    T.__ror__ = bitwise_or
    T.__rxor__ = bitwise_xor
    T.__invert__ = bitwise_not
    T.__floordiv__ = lambda self, other: div(self, other, rounding_mode="floor")
    T.__rfloordiv__ = lambda self, other: div(other, self, rounding_mode="floor")
    T.__getitem__ = getitem
    T.__setitem__ = setitem
    T.__iadd__ = T.add_
    T.__isub__ = T.sub_
    T.__imul__ = T.mul_
    T.__itruediv__ = T.div_
    T.__ipow__ = T.pow_
    T.__hash__ = object.__hash__

    def _cast(np_dtype):
        return lambda self: shape.to_dtype_op(self, np_dtype)

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
    T.cuda = _no_cuda


def _no_cuda(self, *args, **kwargs):
    raise RuntimeError("retrograd computes on the CPU only; CUDA is not supported")


_bind_methods()

zeros_like = zeros_like_t
__all__ = [n for n in dir() if not n.startswith("_")]
(indexing, linalg, pointwise, reduction, shape, index_put)  # noqa: B018
