"""Tensor factories: ``tensor``, ``as_tensor``, ``from_numpy``, ``zeros``, ``full``, ...
(ranges and grids, ``arange`` to ``cartesian_prod``, are in ``_ranges``).

Each function follows PyTorch's signature and dtype rules: Python floats take the default dtype,
Python ints ``int64``, bools ``bool``, nested lists promote (bool < int < float), NumPy data keeps
its dtype. Every factory returns a fresh leaf built with ``_tensor.make``; ``requires_grad=True``
goes through the Tensor's own setter so that the usual checks apply.

The private helpers here (size parsing, ``out=`` handling, dtype names for error messages) are
shared with ``_ranges`` and ``_random``.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _dtypes
from . import _memory_format as _mf
from ._dtypes import FROM_NP, dtype, get_default_dtype, to_dtype
from ._tensor import Tensor, make
from ._tensor import device as _device
from .ops._apply import recording
from .ops._base import _check_writable

__all__ = [
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "zeros_like",
    "ones_like", "empty_like", "full_like",
]

_SUPPORTED = ("float64, float32, float16, int64, int32, int16, int8, uint64, uint32, uint16, "
              "uint8, and bool")
_COPY_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than "
    "retrograd.tensor(sourceTensor)."
)
_NOT_WRITABLE_WARNING = (
    "The given NumPy array is not writable, and retrograd does not support non-writable tensors: "
    "writing to this tensor will fail. You may want to copy the array to protect its data or "
    "make it writable before converting it to a tensor. This type of warning will be suppressed "
    "for the rest of this program."
)
_warned_not_writable = [False]
_MAX_DIMS = 64


# -- shared helpers ----------------------------------------------------------------------------
def check_device(dev: Any) -> None:
    """Accept None, 'cpu' (or 'cpu:N') and device objects; anything else is RuntimeError."""
    if dev is not None and dev.__class__ is not _device:
        _device(dev)  # raises RuntimeError for every non-CPU device


def fmt_number(x: Any) -> str:
    """A number as PyTorch's C++ messages print it (``-1``, ``1.5``, ``3e+38``, ``nan``)."""
    if isinstance(x, (bool, np.bool_)):
        return str(int(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return f"{float(x):g}"


def type_name(x: Any) -> str:
    """The type name PyTorch's argument errors print: ``numpy.ndarray``, ``list``, ``Tensor``."""
    t = type(x)
    return f"numpy.{t.__name__}" if t.__module__ == "numpy" else t.__name__


def _as_index(x: Any) -> int:
    # bool is an int subclass, but PyTorch refuses it where a size is expected.
    if isinstance(x, (bool, np.bool_)):
        raise TypeError
    return operator.index(x)


_MISSING = object()


def _unpack_error(name: str, i: int, x: Any) -> TypeError:
    # PyTorch reads the first element of a size strictly and the rest leniently (a bool or
    # anything with __index__ passes), with a different message for each.
    return TypeError(
        f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
        f'"type must be tuple of ints,but got {type_name(x)}"'
    )


def parse_size(args: tuple, kwargs: dict, name: str, varargs: bool = True, pos: int = 1) -> tuple:
    """The shape from ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` or ``f(size=(2, 3))``.

    ``kwargs`` holds what the factory did not name itself: only ``size`` is allowed there.
    ``pos`` is the size argument's position, for error messages.
    """
    size = kwargs.pop("size", _MISSING)
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    keyword = size is not _MISSING
    label = "argument 'size'" if keyword else f"argument 'size' (position {pos})"
    if keyword:
        if args:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        seq = size
    elif not args:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    elif len(args) == 1:
        seq = args[0]
    elif varargs:
        try:
            _as_index(args[0])
        except TypeError:
            # PyTorch then matches no signature: a lone size was expected.
            raise TypeError(
                f"{name}() takes 1 positional argument but {len(args)} were given"
            ) from None
        seq = args
    else:
        raise TypeError(f"{name}() takes 1 positional argument but {len(args)} were given")
    if not isinstance(seq, (tuple, list)):
        if varargs and not keyword:
            try:
                seq = (_as_index(seq),)
            except TypeError:
                raise TypeError(
                    f"{name}(): {label} must be tuple of ints, not {type_name(seq)}"
                ) from None
        else:
            raise TypeError(f"{name}(): {label} must be tuple of ints, not {type_name(seq)}")
    shape = []
    for i, s in enumerate(seq):
        try:
            shape.append(_as_index(s) if i == 0 else operator.index(s))
        except TypeError:
            if i:
                raise _unpack_error(name, i, s) from None
            if keyword:
                raise TypeError(
                    f"{name}(): {label} must be tuple of ints, not {type_name(seq)}"
                ) from None
            raise TypeError(
                f"{name}(): {label} must be tuple of ints, but found element of type "
                f"{type_name(s)} at pos {i}"
            ) from None
    shape = tuple(shape)
    for s in shape:
        if s < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {list(shape)}"
            )
    numel = 1
    for s in shape:
        numel *= s
    if numel * 8 >= 2**63:  # the storage's size in bytes must fit PyTorch's int64
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    return shape


def resolve_dtype(dt: Any, out: Tensor | None, default: dtype, name: str = "") -> dtype:
    """The dtype a factory produces: ``dtype=`` if given, else ``out``'s, else ``default``.
    ``name``, the factory, prefixes PyTorch's error for a dtype that is no dtype."""
    if isinstance(dt, str):
        prefix = f"{name}(): " if name else ""
        raise TypeError(f"{prefix}argument 'dtype' must be torch.dtype, not {type_name(dt)}")
    if dt is not None:
        dt = to_dtype(dt)
        if out is not None and isinstance(out, Tensor) and out.dtype is not dt:
            raise RuntimeError(
                f"dtype {dt.scalar_name} does not match dtype of out parameter "
                f"({out.dtype.scalar_name})"
            )
        return dt
    if out is not None and isinstance(out, Tensor):
        return out.dtype
    return default


def _check_factory_args(name: str, dt: Any, requires_grad: Any) -> None:
    """PyTorch's TypeErrors for a factory's ``dtype`` that is no dtype (``"float32"``) and a
    ``requires_grad`` that is no bool (``1``)."""
    if isinstance(dt, str):
        raise TypeError(f"{name}(): argument 'dtype' must be torch.dtype, not str")
    if requires_grad.__class__ is not bool:
        raise TypeError(f"{name}(): argument 'requires_grad' must be bool, not "
                        f"{type_name(requires_grad)}")


def finish(arr: np.ndarray, requires_grad: bool, out: Tensor | None = None,
           name: str = "") -> Tensor:
    """Wrap a freshly made array as a leaf, or write it into ``out``."""
    if name and requires_grad.__class__ is not bool:
        _check_factory_args(name, None, requires_grad)
    if out is not None:
        return _write_out(out, arr, name)
    t = make(arr)
    if requires_grad:
        if arr.dtype.char not in _dtypes.FLOAT_CHARS:
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        t.requires_grad = True
    return t


def _write_out(out: Any, arr: np.ndarray, name: str) -> Tensor:
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type_name(out)}")
    if recording(out):
        raise RuntimeError(
            f"aten::{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    _check_writable(out)
    if out._data.shape == arr.shape:
        np.copyto(out._data, arr, casting="unsafe")
    else:
        # A shape mismatch resizes ``out`` as PyTorch does: it gets new memory.
        out._data = arr.astype(out._data.dtype, copy=False)
    out._vc[0] += 1
    return out


def check_tensor_arg(x: Any, name: str, arg: str = "input") -> None:
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{name}(): argument '{arg}' (position 1) must be Tensor, not {type_name(x)}"
        )


def number(x: Any, name: str, arg: str) -> int | float:
    """A Python int or float from a number-like argument (numpy scalar, 1-element tensor)."""
    if isinstance(x, Tensor):
        if x._data.ndim != 0:
            raise TypeError(f"{name}(): argument '{arg}' must be Number, not Tensor")
        x = x._data.item()
    elif isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, (int, float)):
        return x
    if isinstance(x, complex):
        raise TypeError(f"{name}(): retrograd has no complex dtypes; got complex for '{arg}'")
    raise TypeError(f"{name}(): argument '{arg}' must be Number, not {type_name(x)}")


# -- numpy interop -----------------------------------------------------------------------------
def _np_dtype_check(arr: np.ndarray) -> dtype:
    d = FROM_NP.get(arr.dtype)
    if d is None:
        if not arr.dtype.isnative and FROM_NP.get(arr.dtype.newbyteorder("=")) is not None:
            raise ValueError(
                "given numpy array has byte order different from the native byte order. "
                "Conversion between byte orders is currently not supported."
            )
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{arr.dtype.type.__name__}. The only "
            f"supported types are: {_SUPPORTED}."
        )
    return d


def _warn_not_writable(arr: np.ndarray) -> None:
    if not arr.flags.writeable and not _warned_not_writable[0]:
        _warned_not_writable[0] = True
        warnings.warn(_NOT_WRITABLE_WARNING, UserWarning, stacklevel=3)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array: writes to either show in the other.

    >>> import numpy as np
    >>> import retrograd as torch
    >>> a = np.array([1, 2, 3])
    >>> t = torch.from_numpy(a)
    >>> a[0] = 7
    >>> t
    tensor([7, 2, 3])
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type_name(ndarray)})")
    _np_dtype_check(ndarray)
    _warn_not_writable(ndarray)
    if type(ndarray) is not np.ndarray:
        ndarray = ndarray.view(np.ndarray)  # a subclass (np.matrix, ...) as a plain view
    return make(ndarray)


# -- data to array: PyTorch's inference over nested sequences ----------------------------------
def _is_sequence(obj: Any) -> bool:
    return isinstance(obj, Sequence) and not isinstance(obj, str)


def _compute_sizes(data: Any) -> list:
    """The shape, read off the first element at each level as PyTorch does."""
    sizes: list = []
    obj = data
    while True:
        if isinstance(obj, Tensor):
            break  # a tensor inside a list stands for one element
        if isinstance(obj, np.ndarray):
            if obj.ndim == 0 and sizes:
                raise TypeError("len() of unsized object")
            sizes.extend(obj.shape)
            break
        if isinstance(obj, str):
            raise ValueError("too many dimensions 'str'")
        if not _is_sequence(obj):
            break
        n = len(obj)
        sizes.append(n)
        if len(sizes) > _MAX_DIMS:
            raise ValueError(f"too many dimensions '{type(obj).__name__}'")
        if n == 0:
            break
        obj = obj[0]
    return sizes


_PY_SCALARS = frozenset((float, int, bool))


class _Walk:
    """One pass over nested data: checks it is rectangular, infers the dtype, flattens it."""

    __slots__ = ("sizes", "ndim", "flat", "has_float", "misplaced")

    def __init__(self, sizes: list) -> None:
        self.sizes = sizes
        self.ndim = len(sizes)
        self.flat: list = []
        self.has_float = False
        self.misplaced = None  # type name of a sequence found where a number belongs

    def seq(self, obj: Any, dim: int) -> dtype:
        if isinstance(obj, (np.ndarray, Tensor)):
            return self.block(obj, dim)
        if not _is_sequence(obj):
            raise TypeError("not a sequence")
        n = len(obj)
        want = self.sizes[dim]
        if n != want:
            raise ValueError(f"expected sequence of length {want} at dim {dim} (got {n})")
        if n == 0:
            return get_default_dtype()
        if dim + 1 == self.ndim:
            types = set(map(type, obj))
            if types <= _PY_SCALARS:
                # the common case, a list of Python numbers, in one step
                self.flat.extend(obj)
                if float in types:
                    self.has_float = True
                    return get_default_dtype()
                return _dtypes.int64 if int in types else _dtypes.bool
            result = None
            for item in obj:
                d = self.leaf(item)
                result = d if result is None else _dtypes.promote_types(result, d)
            return result
        result = None
        for item in obj:
            d = self.seq(item, dim + 1)
            result = d if result is None else _dtypes.promote_types(result, d)
        return result

    def block(self, obj: Any, dim: int) -> dtype:
        """An ndarray (or a tensor) standing where a sequence is expected."""
        arr = obj._data if isinstance(obj, Tensor) else obj
        d = _np_dtype_check(arr)
        want = tuple(self.sizes[dim:])
        if arr.shape != want:
            for i, (got, exp) in enumerate(zip(arr.shape, want)):
                if got != exp:
                    raise ValueError(
                        f"expected sequence of length {exp} at dim {dim + i} (got {got})"
                    )
            if arr.ndim < len(want):
                raise TypeError("not a sequence")
            self.misplaced = type_name(obj)
            return d
        self.flat.extend(arr.ravel().tolist())
        if d.is_floating_point:
            self.has_float = True
        return d

    def leaf(self, obj: Any) -> dtype:
        t = type(obj)
        if t is float:
            self.flat.append(obj)
            self.has_float = True
            return get_default_dtype()
        if t is bool:
            self.flat.append(obj)
            return _dtypes.bool
        if t is int:
            self.flat.append(obj)
            return _dtypes.int64
        if isinstance(obj, Tensor):
            if obj._data.size != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
            d = obj.dtype
            self.flat.append(obj._data.reshape(()).item())
            self.has_float |= d.is_floating_point
            return d
        if isinstance(obj, np.generic):
            d = FROM_NP.get(obj.dtype)
            if d is None:
                raise TypeError(
                    f"can't convert np.ndarray of type numpy.{type(obj).__name__}. The only "
                    f"supported types are: {_SUPPORTED}."
                )
            self.flat.append(obj.item())
            self.has_float |= d.is_floating_point
            return d
        if isinstance(obj, bool):
            self.flat.append(bool(obj))
            return _dtypes.bool
        if isinstance(obj, int):
            self.flat.append(int(obj))
            return _dtypes.int64
        if isinstance(obj, float):
            self.flat.append(float(obj))
            self.has_float = True
            return get_default_dtype()
        if isinstance(obj, complex):
            raise TypeError("retrograd has no complex dtypes; can't convert complex data")
        if isinstance(obj, str):
            raise TypeError("new(): invalid data type 'str'")
        if isinstance(obj, np.ndarray) or _is_sequence(obj):
            # PyTorch fails on this while storing, with a message that depends on the dtype;
            # note it and keep inferring.
            self.misplaced = type_name(obj)
            return _infer_only(obj)
        raise RuntimeError(f"Could not infer dtype of {type_name(obj)}")


def _infer_only(obj: Any) -> dtype:
    if isinstance(obj, np.ndarray):
        return _np_dtype_check(obj)
    if isinstance(obj, Tensor):
        return obj.dtype
    if _is_sequence(obj):
        result = None
        for item in obj:
            d = _infer_only(item)
            result = d if result is None else _dtypes.promote_types(result, d)
        return result if result is not None else get_default_dtype()
    return _Walk([]).leaf(obj)


def _overflow(target: dtype) -> RuntimeError:
    return RuntimeError(f"value cannot be converted to type {target.name} without overflow")


def _cast_flat(flat: list, has_float: bool, target: dtype) -> np.ndarray:
    """The flat values as a 1-D array of ``target``, with PyTorch's overflow checks."""
    np_t = target.np
    if target.is_floating_point:
        a = np.array(flat, dtype=np.float64)
        with np.errstate(over="ignore"):
            if np_t in _dtypes.REDUCED:  # PyTorch rounds through float32
                return _dtypes.to_reduced(a, np_t)
            return a.astype(np_t, copy=False)
    if target is _dtypes.bool:
        return np.array([bool(v) for v in flat], dtype=np.bool_)
    if not has_float:
        return _ints_to(flat, target)
    # Each element is checked by its own kind, so split the floats from the integers.
    is_float = np.fromiter((isinstance(v, float) for v in flat), bool, len(flat))
    out = np.empty(len(flat), np_t)
    out[~is_float] = _ints_to([v for v, f in zip(flat, is_float) if not f], target)
    a = np.array([v for v, f in zip(flat, is_float) if f], dtype=np.float64)
    if a.size:
        info = np.iinfo(np_t)
        hi_bad = a >= 2.0**63 if np_t == np.int64 else a > info.max
        if not np.isfinite(a).all() or (a < info.min).any() or hi_bad.any():
            raise _overflow(target)
    out[is_float] = a.astype(np_t)
    return out


def _ints_to(ints: list, target: dtype) -> np.ndarray:
    """Python ints as ``target`` (an integer dtype); they may wrap into an unsigned type
    (-1 -> 255) as in PyTorch, but must otherwise fit."""
    if target is _dtypes.uint64:  # beyond int64: Python's own unsigned conversion, and errors
        for v in ints:
            if v < 0:
                raise OverflowError("can't convert negative int to unsigned")
            if v >= 2**64:
                raise OverflowError("int too big to convert")
        return np.array(ints, dtype=np.uint64)
    try:
        a = np.array(ints, dtype=np.int64)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    info = np.iinfo(target.np)
    lo = -int(info.max) if info.min == 0 else int(info.min)
    if a.size and (a.min() < lo or a.max() > info.max):
        raise _overflow(target)
    return a.astype(target.np)


def _data_to_array(data: Any, dt: dtype | None) -> np.ndarray:
    """A new array holding ``data`` (not a Tensor), converted as PyTorch's ``tensor`` would."""
    if isinstance(data, np.ndarray):
        _np_dtype_check(data)
        if dt is None or dt.np == data.dtype:
            return np.array(data, order="C", copy=True)
        with np.errstate(all="ignore"):
            if dt.np in _dtypes.REDUCED:  # through float32, as PyTorch converts
                return np.ascontiguousarray(_dtypes.to_reduced(data, dt.np))
            return np.array(data, dtype=dt.np, order="C", copy=True)
    if isinstance(data, str):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    sizes = _compute_sizes(data)
    walk = _Walk(sizes)
    inferred = walk.seq(data, 0) if sizes else walk.leaf(data)
    target = dt if dt is not None else inferred
    if walk.misplaced is not None:
        if target.is_floating_point:
            raise TypeError(f"must be real number, not {walk.misplaced}")
        raise TypeError(f"'{walk.misplaced}' object cannot be interpreted as an integer")
    return _cast_flat(walk.flat, walk.has_float, target).reshape(sizes)


# -- tensor, as_tensor -------------------------------------------------------------------------
def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (a number, nested sequence, array or tensor).

    The dtype is inferred as PyTorch does: floats take the default dtype, ints ``int64``,
    bools ``bool``, and NumPy data keeps its own.

    >>> import retrograd as torch
    >>> torch.tensor([[1, 2], [3, 4]])
    tensor([[1, 2],
            [3, 4]])
    >>> torch.tensor([1, 2.5]).dtype, torch.tensor(True).dtype
    (retrograd.float32, retrograd.bool)
    """
    check_device(device)
    _check_factory_args("tensor", dtype, requires_grad)
    dt = None if dtype is None else to_dtype(dtype)
    if isinstance(data, Tensor):
        warnings.warn(_COPY_WARNING, UserWarning, stacklevel=2)
        with np.errstate(all="ignore"):
            arr = np.array(data._data, dtype=None if dt is None else dt.np, order="C", copy=True)
    else:
        arr = _data_to_array(data, dt)
    return finish(arr, requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``data`` as a tensor, sharing memory with it when no conversion is needed.

    A tensor of the right dtype comes back as is; a NumPy array of a supported dtype is shared.

    >>> import numpy as np
    >>> import retrograd as torch
    >>> a = np.array([1.0, 2.0])
    >>> t = torch.as_tensor(a)
    >>> a[0] = -1.0
    >>> t
    tensor([-1.,  2.], dtype=retrograd.float64)
    """
    check_device(device)
    dt = None if dtype is None else to_dtype(dtype)
    if isinstance(data, Tensor):
        if dt is None or data.dtype is dt:
            return data
        return data.to(dt)
    if isinstance(data, np.ndarray):
        d = _np_dtype_check(data)
        if dt is None or dt is d:
            _warn_not_writable(data)
            return make(data if type(data) is np.ndarray else data.view(np.ndarray))
        with np.errstate(all="ignore"):
            if dt.np in _dtypes.REDUCED:
                return make(_dtypes.to_reduced(data, dt.np))
            return make(data.astype(dt.np))
    return make(_data_to_array(data, dt))


# -- filled tensors ----------------------------------------------------------------------------
def zeros(*size: Any, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
          device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
          **kwargs: Any) -> Tensor:
    """A tensor of zeros: ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``.

    >>> import retrograd as torch
    >>> torch.zeros(2, 3)
    tensor([[0., 0., 0.],
            [0., 0., 0.]])
    """
    check_device(device)
    shape = parse_size(size, kwargs, "zeros")
    dt = resolve_dtype(dtype, out, get_default_dtype(), "zeros")
    return finish(np.zeros(shape, dt.np), requires_grad, out, "zeros")


def ones(*size: Any, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
         device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
         **kwargs: Any) -> Tensor:
    """A tensor of ones.

    >>> import retrograd as torch
    >>> torch.ones(2, dtype=torch.int64)
    tensor([1, 1])
    """
    check_device(device)
    shape = parse_size(size, kwargs, "ones")
    dt = resolve_dtype(dtype, out, get_default_dtype(), "ones")
    return finish(np.ones(shape, dt.np), requires_grad, out, "ones")


def empty(*size: Any, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
          device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
          memory_format: Any = None, **kwargs: Any) -> Tensor:
    """An uninitialised tensor: its values are whatever the memory held.

    >>> import retrograd as torch
    >>> torch.empty(2, 3).shape
    retrograd.Size([2, 3])
    """
    check_device(device)
    shape = parse_size(size, kwargs, "empty")
    dt = resolve_dtype(dtype, out, get_default_dtype(), "empty")
    return finish(np.empty(shape, dt.np), requires_grad, out, "empty")


def _fill_scalar(value: Any, name: str) -> tuple:
    """``(python value, dtype PyTorch infers for it)`` for ``full``'s ``fill_value``."""
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise TypeError(
                f"{name}(): argument 'fill_value' (position 2) must be Number, not Tensor"
            )
        value = value._data.reshape(()).item()
    elif isinstance(value, np.generic) and not isinstance(value, (np.str_, np.bytes_)):
        value = value.item()
    if isinstance(value, bool):
        return value, _dtypes.bool
    if isinstance(value, int):
        return value, _dtypes.int64
    if isinstance(value, float):
        return value, get_default_dtype()
    if isinstance(value, complex):
        raise TypeError(f"{name}(): retrograd has no complex dtypes; got a complex fill_value")
    raise TypeError(
        f"{name}(): argument 'fill_value' (position 2) must be Number, not {type_name(value)}"
    )


def scalar_to(value: int | float | bool, target: dtype) -> Any:
    """``value`` as a ``target`` NumPy scalar, failing on overflow as PyTorch's ``full`` does."""
    np_t = target.np
    if target is _dtypes.bool:
        return np.bool_(value)
    overflow = RuntimeError(
        f"value cannot be converted to type {target.cpp_name} without overflow"
    )
    if target.is_floating_point:
        v = float(value)
        if math.isfinite(v) and abs(v) > _dtypes.finfo(target).max:
            raise overflow
        if np_t in _dtypes.REDUCED:  # through float32, as PyTorch converts
            return np_t.type(np.float32(v))
        return np_t.type(v)
    info = np.iinfo(np_t)
    if isinstance(value, float):
        if not math.isfinite(value) or value < info.min or value > info.max:
            raise overflow
        return np_t.type(int(value))
    value = int(value)
    lo = -int(info.max) if info.min == 0 else int(info.min)
    if not lo <= value <= info.max:
        raise overflow
    return np.array(value).astype(np_t)[()]  # wraps a negative into an unsigned type


def full(size: Any, fill_value: Any, *, out: Tensor | None = None, dtype: Any = None,
         layout: Any = None, device: Any = None, requires_grad: bool = False,
         pin_memory: bool = False) -> Tensor:
    """A tensor filled with ``fill_value``; the dtype follows the value unless given.

    >>> import retrograd as torch
    >>> torch.full((2,), 7)
    tensor([7, 7])
    >>> torch.full((2,), 1.5).dtype, torch.full((2,), True).dtype
    (retrograd.float32, retrograd.bool)
    """
    check_device(device)
    shape = parse_size((size,), {}, "full", varargs=False)
    value, inferred = _fill_scalar(fill_value, "full")
    dt = resolve_dtype(dtype, out, inferred, "full")
    return finish(np.full(shape, scalar_to(value, dt), dt.np), requires_grad, out, "full")


def _like_dtype(input: Tensor, dt: Any, name: str) -> dtype:  # noqa: A002
    return input.dtype if dt is None else resolve_dtype(dt, None, input.dtype, name)


def _like(input: Tensor, maker, np_dtype, memory_format: Any,  # noqa: A002
          fname: str) -> np.ndarray:
    """``maker(shape, np_dtype)``, laid out as ``memory_format`` says: by default (PyTorch's
    ``preserve_format``) as ``input`` is, so that a transposed input gives a transposed
    result."""
    a = input._data
    order = _mf.like_order(a, memory_format, fname)
    if order is None:
        return maker(a.shape, np_dtype)
    return maker(tuple(a.shape[d] for d in order), np_dtype).transpose(np.argsort(order))


def zeros_like(input: Tensor, *, dtype: Any = None, layout: Any = None,  # noqa: A002
               device: Any = None, requires_grad: bool = False,
               memory_format: Any = None) -> Tensor:
    """Zeros with the shape (and, unless given, the dtype) of ``input``.

    >>> import retrograd as torch
    >>> torch.zeros_like(torch.tensor([1, 2, 3]))
    tensor([0, 0, 0])
    """
    check_tensor_arg(input, "zeros_like")
    check_device(device)
    dt = _like_dtype(input, dtype, "zeros_like")
    return finish(_like(input, np.zeros, dt.np, memory_format, "zeros_like"), requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, layout: Any = None,  # noqa: A002
              device: Any = None, requires_grad: bool = False,
              memory_format: Any = None) -> Tensor:
    """Ones with the shape (and, unless given, the dtype) of ``input``.

    >>> import retrograd as torch
    >>> torch.ones_like(torch.zeros(2, 2))
    tensor([[1., 1.],
            [1., 1.]])
    """
    check_tensor_arg(input, "ones_like")
    check_device(device)
    dt = _like_dtype(input, dtype, "ones_like")
    return finish(_like(input, np.ones, dt.np, memory_format, "ones_like"), requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, layout: Any = None,  # noqa: A002
               device: Any = None, requires_grad: bool = False,
               memory_format: Any = None) -> Tensor:
    """An uninitialised tensor with the shape (and, unless given, the dtype) of ``input``.

    >>> import retrograd as torch
    >>> torch.empty_like(torch.zeros(2, 3, dtype=torch.int32)).dtype
    retrograd.int32
    """
    check_tensor_arg(input, "empty_like")
    check_device(device)
    dt = _like_dtype(input, dtype, "empty_like")
    return finish(_like(input, np.empty, dt.np, memory_format, "empty_like"), requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None,  # noqa: A002
              layout: Any = None, device: Any = None, requires_grad: bool = False,
              memory_format: Any = None) -> Tensor:
    """``fill_value`` in the shape (and, unless given, the dtype) of ``input``.

    >>> import retrograd as torch
    >>> torch.full_like(torch.zeros(3, dtype=torch.int32), 1.7)
    tensor([1, 1, 1], dtype=retrograd.int32)
    """
    check_tensor_arg(input, "full_like")
    check_device(device)
    value, _ = _fill_scalar(fill_value, "full_like")
    dt = _like_dtype(input, dtype, "full_like")
    fill = scalar_to(value, dt)
    arr = _like(input, lambda shape, npd: np.full(shape, fill, npd), dt.np, memory_format,
                "full_like")
    return finish(arr, requires_grad)


# -- Tensor.new_* ------------------------------------------------------------------------------
_NEW_TENSOR_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than "
    "tensor.new_tensor(sourceTensor)."
)


def _new_dtype(self: Tensor, dt: Any) -> dtype:
    return self.dtype if dt is None else to_dtype(dt)


def new_zeros(self: Tensor, *size: Any, dtype: Any = None, layout: Any = None,
              device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
              **kwargs: Any) -> Tensor:
    """Zeros of the given size with this tensor's dtype (unless ``dtype`` is given).

    >>> import retrograd as torch
    >>> torch.tensor([1, 2], dtype=torch.int32).new_zeros(2, 3).dtype
    retrograd.int32
    """
    check_device(device)
    shape = parse_size(size, kwargs, "new_zeros")
    return finish(np.zeros(shape, _new_dtype(self, dtype).np), requires_grad)


def new_ones(self: Tensor, *size: Any, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
             **kwargs: Any) -> Tensor:
    """Ones of the given size with this tensor's dtype (unless ``dtype`` is given).

    >>> import retrograd as torch
    >>> torch.zeros(1, dtype=torch.float64).new_ones(2)
    tensor([1., 1.], dtype=retrograd.float64)
    """
    check_device(device)
    shape = parse_size(size, kwargs, "new_ones")
    return finish(np.ones(shape, _new_dtype(self, dtype).np), requires_grad)


def new_empty(self: Tensor, *size: Any, dtype: Any = None, layout: Any = None,
              device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
              **kwargs: Any) -> Tensor:
    """An uninitialised tensor of the given size with this tensor's dtype (unless given).

    >>> import retrograd as torch
    >>> torch.zeros(1, dtype=torch.int16).new_empty((2, 2)).dtype
    retrograd.int16
    """
    check_device(device)
    shape = parse_size(size, kwargs, "new_empty")
    return finish(np.empty(shape, _new_dtype(self, dtype).np), requires_grad)


def new_full(self: Tensor, size: Any = _MISSING, fill_value: Any = _MISSING, *,
             dtype: Any = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """``fill_value`` in the given size, with this tensor's dtype (unless ``dtype`` is given;
    the value's own type does not count).

    >>> import retrograd as torch
    >>> torch.zeros(1, dtype=torch.int32).new_full((2,), 1.7)
    tensor([1, 1], dtype=retrograd.int32)
    """
    check_device(device)
    if size is _MISSING:
        raise TypeError('new_full() missing 1 required positional arguments: "size"')
    if fill_value is _MISSING:
        raise TypeError('new_full() missing 1 required positional arguments: "fill_value"')
    shape = parse_size((size,), {}, "new_full", varargs=False)
    value, _ = _fill_scalar(fill_value, "new_full")
    dt = _new_dtype(self, dtype)
    return finish(np.full(shape, scalar_to(value, dt), dt.np), requires_grad)


def new_tensor(self: Tensor, data: Any = _MISSING, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, layout: Any = None,
               pin_memory: bool = False) -> Tensor:
    """A new leaf holding a copy of ``data``, with this tensor's dtype unless ``dtype`` is given
    (the data's own type does not count).

    >>> import retrograd as torch
    >>> torch.zeros(1, dtype=torch.float64).new_tensor([1, 2])
    tensor([1., 2.], dtype=retrograd.float64)
    """
    check_device(device)
    if data is _MISSING:
        raise TypeError('new_tensor() missing 1 required positional arguments: "data"')
    dt = _new_dtype(self, dtype)
    if isinstance(data, Tensor):
        warnings.warn(_NEW_TENSOR_WARNING, UserWarning, stacklevel=2)
        with np.errstate(all="ignore"):
            arr = np.array(data._data, dtype=dt.np, order="C", copy=True)
    else:
        arr = _data_to_array(data, dt)
    return finish(arr, requires_grad)


TENSOR_METHODS = {
    "new_zeros": new_zeros, "new_ones": new_ones, "new_empty": new_empty,
    "new_full": new_full, "new_tensor": new_tensor,
}
"""The functions here that PyTorch has as Tensor methods, by method name."""
