"""Storages, as ``torch.storage`` has them: ``x.untyped_storage()`` (the bytes a tensor's memory
lies in) and the deprecated ``x.storage()`` (the same memory as elements of the tensor's dtype).

A retrograd tensor's storage is the NumPy array that owns its memory (``ops.strided.storage_of``);
a storage object is a handle on it, made anew at each call as in PyTorch, so compare storages by
``data_ptr()``. ``Tensor.set_`` accepts one, to put a tensor over it.

>>> import retrograd as torch
>>> x = torch.arange(6.)
>>> s = x[2:].untyped_storage()
>>> s.nbytes(), s.data_ptr() == x.data_ptr()
(24, True)
>>> torch.empty(0).set_(s, 1, (2,), (2,))
tensor([1., 3.])
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import _dtypes
from ._tensor import Tensor, device
from .ops.strided import storage_of

__all__ = ["UntypedStorage", "TypedStorage"]

_warned = [False]


class UntypedStorage:
    """A tensor storage's bytes. ``UntypedStorage(n)``: a new one of ``n`` zero bytes."""

    def __init__(self, size: int = 0, *, device: Any = None) -> None:
        self._array = np.zeros(int(size), np.uint8)

    @classmethod
    def _of(cls, root: np.ndarray) -> UntypedStorage:
        s = cls.__new__(cls)
        s._array = root
        return s

    def _bytes(self) -> np.ndarray:
        return np.ndarray((self._array.nbytes,), np.uint8, buffer=self._array)

    def data_ptr(self) -> int:
        return self._array.ctypes.data

    def nbytes(self) -> int:
        return self._array.nbytes

    def size(self) -> int:
        return self._array.nbytes

    def __len__(self) -> int:
        return self._array.nbytes

    def element_size(self) -> int:
        return 1

    @property
    def device(self) -> device:
        return device("cpu")

    @property
    def is_cuda(self) -> bool:
        return False

    def __getitem__(self, i):
        return self._bytes()[i].tolist()

    def tolist(self) -> list:
        return self._bytes().tolist()

    def is_shared(self) -> bool:
        return False

    def is_pinned(self, device: Any = None) -> bool:
        return False

    def untyped(self) -> UntypedStorage:
        return self

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        return f"{body}\n[retrograd.storage.UntypedStorage(device=cpu) of size {len(self)}]"


class TypedStorage:
    """A tensor storage as elements of a dtype (deprecated in PyTorch, as here)."""

    def __init__(self, untyped: UntypedStorage, dtype: _dtypes.dtype) -> None:
        self._untyped = untyped
        self.dtype = dtype

    def _elements(self) -> np.ndarray:
        a = self._untyped._array
        isz = self.dtype.itemsize
        return np.ndarray((a.nbytes // isz,), self.dtype.np, buffer=a)

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    def size(self) -> int:
        return self._untyped.nbytes() // self.dtype.itemsize

    def __len__(self) -> int:
        return self.size()

    def nbytes(self) -> int:
        return self._untyped.nbytes()

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def device(self) -> device:
        return device("cpu")

    def __getitem__(self, i):
        return self._elements()[i].tolist()

    def tolist(self) -> list:
        return self._elements().tolist()

    def untyped(self) -> UntypedStorage:
        return self._untyped

    def is_shared(self) -> bool:
        return False

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        return (f"{body}\n[retrograd.storage.TypedStorage(dtype={self.dtype!r}, device=cpu) of "
                f"size {len(self)}]")


def untyped_storage(self: Tensor) -> UntypedStorage:
    """``x.untyped_storage()``: the storage ``x``'s memory lies in, as bytes."""
    return UntypedStorage._of(storage_of(self._data))


def typed_storage(self: Tensor) -> TypedStorage:
    """``x.storage()``: the storage as elements of ``x``'s dtype (deprecated, as in PyTorch)."""
    if not _warned[0]:
        _warned[0] = True
        warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will "
            "be the only storage class. This should only matter to you if you are using storages "
            "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead "
            "of tensor.storage()", UserWarning, stacklevel=2)
    return TypedStorage(untyped_storage(self), self.dtype)


def as_source(storage: Any, np_dtype) -> np.ndarray | None:
    """A storage given to ``set_``, as a flat array of ``np_dtype`` over its memory (None when
    ``storage`` is not one)."""
    if isinstance(storage, TypedStorage):
        storage = storage.untyped()
    if not isinstance(storage, UntypedStorage):
        return None
    a = storage._array
    return np.ndarray((a.nbytes // np.dtype(np_dtype).itemsize,), np_dtype, buffer=a)
