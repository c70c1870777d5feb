"""``as_strided``: a view of a tensor's *storage* by explicit sizes, strides and storage offset.

A retrograd tensor's storage is the NumPy array that owns its memory (``storage_of``); a
tensor's geometry is where its elements lie in that storage, in elements (``geometry``). As in
PyTorch, ``x.as_strided(size, stride, offset)`` reads the storage, not ``x``'s elements in
order: on a transposed ``x`` it sees the untransposed memory, and its result shares that memory
(an in-place op on it changes ``x``).

The view's recorded step (``as_strided_view``, see ``_views.replay``) carries the geometry of
the array it was taken from, so that replaying it on another array of the same shape (a
gradient, the zeros a backward embeds into) picks the same elements: through the other array's
memory when it has the same layout, else by the element map the geometry defines.
"""

from __future__ import annotations

import numpy as np

from .._dtypes import FLOAT_CHARS
from .._tensor import Tensor, make
from . import _array
from ._apply import apply_view
from ._core import ndarray
from .inplace import AsStridedBackward0
from .join import cat

__all__ = ["as_strided"]


def storage_of(a: np.ndarray) -> np.ndarray:
    """The array that owns ``a``'s memory: its storage (``a`` itself when it owns it)."""
    while True:
        b = a.base
        if b.__class__ is ndarray or isinstance(b, ndarray):
            a = b
            continue
        # NumPy's as_strided wraps its input in a DummyArray: look through it.
        bb = getattr(b, "base", None)
        if b is not None and isinstance(bb, ndarray) and type(b).__name__ == "DummyArray":
            a = bb
            continue
        return a


def geometry(a: np.ndarray):
    """``(storage, strides, offset)``: ``a``'s storage and where ``a`` lies in it, in elements
    of ``a``'s dtype; None where that cannot be said (negative or fractional strides, or a
    storage that is not one contiguous block)."""
    root = storage_of(a)
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        return None
    isz = a.itemsize
    off, rem = divmod(a.ctypes.data - root.ctypes.data, isz)
    if rem or off < 0:
        return None
    strides = []
    for n, s in zip(a.shape, a.strides):
        q, r = divmod(s, isz)
        if (r or q < 0) and n > 1:
            return None
        strides.append(q if n > 1 else max(q, 0))
    return root, tuple(strides), off


def positions(size, stride, offset: int) -> np.ndarray:
    """The storage position of each element of a ``size``/``stride`` view at ``offset``."""
    idx = np.full(tuple(size), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        idx = idx + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return idx


def overlaps(size, stride) -> bool:
    """Whether some storage element is reached twice (PyTorch's test: sort the dims by stride;
    each stride must reach past everything the smaller ones span)."""
    span = 0
    for n, s in sorted(((n, s) for n, s in zip(size, stride) if n > 1), key=lambda p: p[1]):
        if s <= span:
            return True
        span += (n - 1) * s
    return False


def _storage_view(root: np.ndarray, dtype, size, stride, offset: int, writeable: bool):
    isz = dtype.itemsize
    if 0 in size:
        return np.empty(size, dtype)
    out = np.ndarray(size, dtype, buffer=root, offset=offset * isz,
                     strides=tuple(s * isz for s in stride))
    if out.flags.writeable and not writeable:
        out.flags.writeable = False
    return out


def empty_strided_array(size, stride, np_dtype) -> np.ndarray:
    """An array of ``size`` with the given strides (in elements), over a fresh storage just
    large enough (zeros): ``empty_strided``'s memory."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    return _storage_view(np.zeros(extent, np_dtype), np.dtype(np_dtype), size, stride, 0, True)


def _element_map(shape, size, stride, offset, in_strides, in_off) -> np.ndarray:
    """For each element of the view, the flat (C order) index of the element of an array of
    ``shape`` laid out by ``in_strides``/``in_off`` at the same storage position; -1 where the
    view reads storage that array does not cover."""
    q = positions(size, stride, offset)
    p = positions(shape, in_strides, in_off).reshape(-1)
    if q.size == 0:
        return q
    lo = min(int(q.min()), int(p.min()) if p.size else 0)
    hi = max(int(q.max()), int(p.max()) if p.size else 0)
    inv = np.full(hi - lo + 1, -1, np.int64)
    inv[p - lo] = np.arange(p.size, dtype=np.int64)
    return inv[q - lo]


def _array_as_strided_view(x, size, stride, offset, in_strides, in_off, numel):
    """The twin of a recorded ``as_strided`` step, on an array ``x`` of the input's shape. The
    input was ``in_strides``/``in_off`` into a storage of ``numel`` elements: an array laid out
    the same way gives a view of its memory (read-only where elements overlap, so that writes
    through it are scatter-adds, see ``indexing._embed_view``); any other, a read-only copy of
    the same elements (0, or -1 for integers, where the view reads past the input's storage)."""
    geo = geometry(x)
    if geo is not None and geo[1:] == (in_strides, in_off) and \
            geo[0].nbytes == numel * x.itemsize:
        return _storage_view(geo[0], x.dtype, size, stride, offset,
                             geo[0].flags.writeable and not overlaps(size, stride))
    idx = _element_map(x.shape, size, stride, offset, in_strides, in_off)
    flat = x.reshape(-1)
    if idx.size and idx.min() < 0:
        fill = 0 if x.dtype.char in FLOAT_CHARS or x.dtype == np.bool_ else -1
        flat = np.concatenate([flat, np.full(1, fill, x.dtype)])
        idx = np.where(idx < 0, x.size, idx)
    out = flat[idx]
    out.flags.writeable = False
    return out


def as_strided_view(x: Tensor, size, stride, offset, in_strides, in_off, numel) -> Tensor:
    """``as_strided_view`` on tensors (backward formulas under ``create_graph``, forward-mode
    tangents): a view of ``x``'s memory where it is laid out as the input was (so that a
    tangent written through the view reaches the base's), else a differentiable gather."""
    geo = geometry(x._data)
    if geo is not None and geo[1:] == (in_strides, in_off) and \
            geo[0].nbytes == numel * x._data.itemsize:
        return as_strided(x, size, stride, offset)
    idx = _element_map(tuple(x.shape), size, stride, offset, in_strides, in_off)
    flat = x.reshape(-1)
    if idx.size and idx.min() < 0:
        flat = cat([flat, flat.new_zeros(1)])
        idx = np.where(idx < 0, flat.shape[0] - 1, idx)
    return flat[make(idx)]


def _bounds_error(size, stride, offset, isz, nbytes) -> RuntimeError:
    need = (offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1) * isz
    return RuntimeError(
        f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
        f"itemsize {isz} requiring a storage size of {need} are out of bounds for storage of "
        f"size {nbytes}")


def as_strided(input, size, stride, storage_offset=None) -> Tensor:  # noqa: A002
    """A view of ``input``'s storage with the given sizes and strides, starting at
    ``storage_offset`` (by default, ``input``'s own): it shares memory with ``input``.

    >>> import retrograd as torch
    >>> x = torch.arange(6.)
    >>> y = torch.as_strided(x, (2, 2), (1, 2), 1)
    >>> y
    tensor([[1., 3.],
            [2., 4.]])
    >>> _ = y.mul_(10)
    >>> x
    tensor([ 0., 10., 20., 30., 40.,  5.])
    """
    a = input._data
    size = tuple(int(n) for n in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: "
                           f"{list(size)}")
    geo = geometry(a)
    if geo is None:  # (a NumPy layout PyTorch has no strides for: over a copy)
        geo = geometry(a.copy())
    root, in_strides, in_off = geo
    offset = in_off if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    isz = a.itemsize
    numel = root.nbytes // isz
    if 0 not in size and offset + sum((n - 1) * s for n, s in zip(size, stride)) >= numel:
        raise _bounds_error(size, stride, offset, isz, root.nbytes)
    out = _storage_view(root, a.dtype, size, stride, offset,
                        root.flags.writeable and not overlaps(size, stride))
    step = ("as_strided_view", (size, stride, offset, in_strides, in_off, numel))
    t = apply_view(AsStridedBackward0, out, input, step, _steps=(step,), _base_shape=a.shape,
                   _size=size, _stride=stride,
                   _offset=None if storage_offset is None else offset)  # (as given)
    v = input._view
    if v is not None:
        # The view's steps start from its base (PyTorch's _base is always the root): one step,
        # over the base's layout, replaces the chain that made ``input``.
        bgeo = geometry(v[0]._data)
        if bgeo is not None and bgeo[0] is root:
            bstep = ("as_strided_view", (size, stride, offset, bgeo[1], bgeo[2], numel))
            t._view = (t._view[0], (bstep,), t._view[2])
    return t


_array.register(as_strided_view=_array_as_strided_view)

XP = ["as_strided_view"]
METHODS = {"as_strided": as_strided}
INPLACE: dict = {}
