"""PyTorch's legacy typed tensor classes (``torch.FloatTensor``, ``torch.LongTensor``, ...),
``Tensor.type``, ``set_default_tensor_type`` and the default device.

``torch.FloatTensor([1, 2])`` builds a float32 tensor, ``torch.FloatTensor(2, 3)`` an
uninitialised one, and ``isinstance(x, torch.FloatTensor)`` asks for ``x``'s dtype, as in
PyTorch. retrograd computes on the CPU only, so the default device is always the CPU.

>>> import retrograd as torch
>>> x = torch.LongTensor([1, 2])
>>> x.dtype == torch.int64, isinstance(x, torch.LongTensor), isinstance(x, torch.FloatTensor)
(True, True, False)
"""

from __future__ import annotations

import warnings

from . import _creation, _dtypes
from ._tensor import Size, Tensor, device

_TYPES = {
    "FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
    "BFloat16Tensor": "bfloat16", "ByteTensor": "uint8", "CharTensor": "int8",
    "ShortTensor": "int16", "IntTensor": "int32", "LongTensor": "int64", "BoolTensor": "bool",
}

__all__ = list(_TYPES) + ["set_default_tensor_type", "get_default_device",
                          "set_default_device"]


class _LegacyType(type):
    """The metaclass of the typed classes: an instance is any tensor of the class's dtype."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


def _construct(cls, *args, **kwargs):
    dt = cls.dtype
    if not args:
        return _creation.empty(0, dtype=dt)
    if len(args) == 1 and isinstance(args[0], (float, bool, complex)):
        raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
    if all(isinstance(a, int) for a in args):
        return _creation.empty(*args, dtype=dt)
    if len(args) == 1 and isinstance(args[0], Size):
        return _creation.empty(tuple(args[0]), dtype=dt)
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].to(dt)
    return _creation.tensor(args[0], dtype=dt)


def _make_type(name: str, dtype_name: str):
    dt = getattr(_dtypes, dtype_name, None)
    ns = {"__new__": _construct, "dtype": dt, "__module__": "torch",
          "__doc__": f"Legacy constructor of {dtype_name} tensors; ``isinstance`` checks the "
                     f"dtype."}
    return _LegacyType(name, (), ns)


for _name, _dt in _TYPES.items():
    globals()[_name] = _make_type(_name, _dt)
del _name, _dt

_BY_NAME = {f"torch.{name}": globals()[name] for name in _TYPES}


def _type(self: Tensor, dtype=None, non_blocking: bool = False, **kwargs):
    """With no argument, the legacy type name (``'torch.FloatTensor'``); otherwise this tensor
    cast to a dtype, a typed class or its name."""
    if dtype is None:
        return f"torch.{self.dtype.tensor_type}"
    if isinstance(dtype, str):
        if dtype not in _BY_NAME:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = _BY_NAME[dtype]
    if isinstance(dtype, _LegacyType):
        dtype = dtype.dtype
    return self if dtype == self.dtype else self.to(dtype)


def set_default_tensor_type(t) -> None:
    """Set the default floating dtype from a typed class or its name (deprecated in PyTorch
    for ``set_default_dtype``)."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    cls = _BY_NAME.get(t) if isinstance(t, str) else t
    if not isinstance(cls, _LegacyType):
        raise TypeError(f"invalid type: '{t}'")
    if not cls.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dtypes.set_default_dtype(cls.dtype)


def get_default_device() -> device:
    """The device new tensors go to: always the CPU.

    >>> import retrograd as torch
    >>> torch.get_default_device()
    device(type='cpu')
    """
    return device("cpu")


def set_default_device(dev) -> None:
    """Accept the CPU (or None) as the default device; any other device is not supported."""
    if dev is None:
        return
    kind = dev.type if isinstance(dev, device) else str(dev).split(":")[0]
    if kind != "cpu":
        raise RuntimeError(f"retrograd computes on the CPU only; device {dev!r} is not "
                           "supported")


def install() -> None:
    """Bind ``Tensor.type``."""
    if "type" not in Tensor.__dict__:
        Tensor.type = _type
