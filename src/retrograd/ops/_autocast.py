"""Autocast's state and casts: how an op on PyTorch's CPU autocast lists changes its inputs.

``retrograd.autocast`` (``amp/autocast_mode.py``) switches the state; the op functions on
PyTorch's CPU lists carry a decorator from here. ``lower_precision`` ops (matmul, linear,
convolutions, ...) cast their floating inputs to the autocast dtype, ``fp32`` ops (the losses,
``prod``, ...) cast reduced-precision inputs to float32; every other op follows its inputs, so
nothing else pays for autocast. While a decorated op runs, autocast is off, as PyTorch's
dispatcher excludes its autocast key: a composite op casts once, at its top.

Casts of float32 leaves that require grad (the parameters) are cached within the outermost
autocast region (``cache_enabled``), so that a weight used twice is cast once.
"""

from __future__ import annotations

import functools
import threading
import weakref

import numpy as np

from .._dtypes import F32, FLOAT_CHARS, bfloat16
from .._tensor import Tensor
from ._apply import recording
from .shape import to_dtype_op

_F64 = np.dtype(np.float64)


class _State(threading.local):
    """Per thread, as PyTorch's: whether CPU autocast is on, its dtype, its cache switch."""

    def __init__(self) -> None:
        self.cpu = False
        self.dtype = bfloat16
        self.cache_enabled = True
        self.depth = 0  # nesting of autocast regions (the cache is cleared leaving the last)
        self.cache: dict = {}


state = _State()


def _cast(t, np_dtype, cache: bool):
    """``t`` cast to ``np_dtype`` if autocast casts it: a floating tensor other than float64
    (PyTorch leaves double alone) not already of that dtype."""
    if t.__class__ is not Tensor and not isinstance(t, Tensor):
        if isinstance(t, (list, tuple)) and t and isinstance(t[0], Tensor):
            return type(t)(_cast(x, np_dtype, cache) for x in t)
        return t
    d = t._data.dtype
    if d == np_dtype or d.char not in FLOAT_CHARS or d == _F64:
        return t
    if cache and state.cache_enabled and d == F32 and t._grad_fn is None and t._rg and \
            t._view is None and recording(t):
        # (a cast made under no_grad has no history: it is not cached, as in PyTorch, or a
        # later product would not reach the parameter)
        hit = state.cache.get(id(t))
        if hit is not None and hit[0]() is t:
            return hit[1]
        r = to_dtype_op(t, np_dtype)
        state.cache[id(t)] = (weakref.ref(t), r)
        return r
    return to_dtype_op(t, np_dtype)


def _run(fn, np_dtype, cache, args, kwargs):
    args = tuple(_cast(a, np_dtype, cache) for a in args)
    if kwargs:
        kwargs = {k: _cast(v, np_dtype, cache) for k, v in kwargs.items()}
    state.cpu = False  # the op's own calls do not autocast again
    try:
        return fn(*args, **kwargs)
    finally:
        state.cpu = True


def lower_precision(fn):
    """Mark ``fn`` as on PyTorch's CPU lower-precision list: under autocast its floating
    inputs are cast to the autocast dtype (parameters through the cast cache)."""

    @functools.wraps(fn)
    def op(*args, **kwargs):
        if state.cpu:
            return _run(fn, state.dtype.np, True, args, kwargs)
        return fn(*args, **kwargs)

    return op


def fp32(fn):
    """Mark ``fn`` as on PyTorch's CPU float32 list: under autocast its float16/bfloat16
    inputs are cast to float32."""

    @functools.wraps(fn)
    def op(*args, **kwargs):
        if state.cpu:
            return _run(fn, F32, False, args, kwargs)
        return fn(*args, **kwargs)

    return op


def _widest(args, lower):
    """PyTorch's ``autocast::prioritize`` over the floating tensors of ``args``: float32 if
    any is float32, else the autocast dtype; float64 tensors are ignored; a reduced dtype
    other than the autocast one is PyTorch's error."""
    out = lower
    for t in args:
        if isinstance(t, (list, tuple)):
            out = F32 if _widest(t, lower) == F32 else out
            continue
        if not isinstance(t, Tensor):
            continue
        d = t._data.dtype
        if d.char not in FLOAT_CHARS or d == _F64:
            continue
        if d == F32 or out == F32:
            out = F32
        elif d != lower:
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return out


def promote(fn):
    """Mark ``fn`` as on PyTorch's CPU promote list (``index_copy``): under autocast its
    floating inputs (float64 aside) are cast to the widest of them."""

    @functools.wraps(fn)
    def op(*args, **kwargs):
        if state.cpu:
            to = _widest(tuple(args) + tuple(kwargs.values()), state.dtype.np)
            return _run(fn, to, False, args, kwargs)
        return fn(*args, **kwargs)

    return op


def outside(fn):
    """Mark a composite that PyTorch runs as one kernel, off autocast's lists (``bilinear``,
    ``embedding_bag``, ``matrix_exp``): the listed ops it is written with do not autocast."""

    @functools.wraps(fn)
    def op(*args, **kwargs):
        if state.cpu:
            state.cpu = False
            try:
                return fn(*args, **kwargs)
            finally:
                state.cpu = True
        return fn(*args, **kwargs)

    return op
