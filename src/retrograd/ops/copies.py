"""Copies that rearrange elements: repeat, tile, repeat_interleave, flip, roll, rot90, the
diagonal and triangle ops (diag, diag_embed, tril, triu), and index_dims (a gather along dims,
shared with padding).
"""

from __future__ import annotations

import numpy as np

from .._dtypes import WIDE_CHARS
from .._tensor import Tensor, make
from ..autograd.graph import Node
from . import _array
from ._apply import apply
from ._array import add_at
from ._base import not_implemented
from ._core import arg_error, c_order, wrap_dim
from ._views import narrow
from .index_ops import IndexSelectBackward0, index_select
from .shape import (
    DiagonalBackward0_copy,
    _diag_dims,
    _diag_view,
    _dims_arg,
    _legacy_name,
    clone,
    expand,
    flatten,
    parse_shape,
    reshape,
    unsqueeze,
    view,
)


def _repeat_array(x, reps):
    padded = (1,) * (len(reps) - x.ndim) + x.shape
    return np.tile(x.reshape(padded), reps) if reps else x.copy()


class RepeatBackward0(Node):
    forward = staticmethod(_repeat_array)

    def backward(self, xp, g):
        # Viewed as (r0, s0, r1, s1, ...), the repeats are the even axes: sum them away.
        inter = ()
        for r, s in zip(self._reps, self._padded):
            inter += (r, s)
        g = xp.reshape(g, inter)
        if inter:
            g = xp.sum(g, tuple(range(0, len(inter), 2)))
        return xp.reshape(g, self._in_shape)


def repeat(input, *sizes) -> Tensor:  # noqa: A002
    """Tile the tensor ``sizes`` times along each dim (leading sizes add dims); a copy.

    >>> import retrograd as torch
    >>> torch.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    a = input._data
    reps = parse_shape(sizes)
    if len(reps) < a.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    padded = (1,) * (len(reps) - a.ndim) + a.shape
    out_shape = [r * s for r, s in zip(reps, padded)]
    for s in out_shape:
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {out_shape}"
            )
    return apply(RepeatBackward0, _repeat_array(a, reps), input, _reps=reps, _padded=padded,
                 _in_shape=a.shape)


def tile(input, dims) -> Tensor:  # noqa: A002
    """``repeat``, where missing leading ``dims`` count as 1.

    >>> import retrograd as torch
    >>> torch.tensor([[1, 2]]).tile((2,))
    tensor([[1, 2, 1, 2]])
    """
    reps = parse_shape((dims,))
    try:
        n = input._data.ndim
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("tile", "input", 1, input) from None
    if len(reps) < n:
        reps = (1,) * (n - len(reps)) + reps
    return repeat(input, reps)


def _array_index_dims(x, idxs):
    for d, idx in idxs:
        x = np.take(x, idx, axis=d)
    return x


def _array_index_dims_backward(g, idxs, shape):
    for k in range(len(idxs) - 1, -1, -1):
        d, idx = idxs[k]
        before = tuple(shape) if k == 0 else _array_index_dims(np.zeros(shape, bool),
                                                               idxs[:k]).shape
        out = np.zeros(before, g.dtype)
        add_at(out, (slice(None),) * d + (idx,), g)
        g = out
    return g


def index_dims(input, idxs, name: str = "IndexSelectBackward0", keep: bool = False,  # noqa: A002
               **attrs) -> Tensor:
    """Gather ``input`` at NumPy index arrays along dims, ``idxs = ((dim, idx), ...)``,
    recording an ``IndexSelectBackward0`` node called ``name`` (the name PyTorch gives the op:
    repeat_interleave, the non-constant pads, nearest upsampling) with node ``attrs``;
    ``keep``: the node keeps ``input`` (PyTorch's reflection and replication pads do)."""
    if keep:
        attrs["_keeps"] = True
    return apply(IndexSelectBackward0, _array_index_dims(input._data, idxs), input, _idxs=idxs,
                 _name=name, save=(input,) if keep else None, **attrs)


class IndexDimsBackwardBackward0(Node):
    forward = staticmethod(_array_index_dims_backward)

    def backward(self, xp, g):
        return xp.index_dims(g, self._idxs)


def index_dims_backward(g, idxs, shape) -> Tensor:
    """Zeros of ``shape`` with ``g`` added back at the gathered positions (``index_dims``'
    backward)."""
    return apply(IndexDimsBackwardBackward0, _array_index_dims_backward(g._data, idxs, shape), g,
                 _idxs=idxs)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None) -> Tensor:  # noqa: A002
    """Repeat each element (or slice along ``dim``) ``repeats`` times, in place order.

    >>> import retrograd as torch
    >>> torch.tensor([1, 2]).repeat_interleave(2)
    tensor([1, 1, 2, 2])
    >>> torch.repeat_interleave(torch.tensor([2, 1]))
    tensor([0, 0, 1])
    """
    if repeats is None:
        # torch.repeat_interleave(repeats): the indices each repeated by its count.
        r = input._data
        if r.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        _check_repeats(r)
        return make(np.repeat(np.arange(r.shape[0] if r.ndim else 1), r.reshape(-1)))
    dim_given = dim is not None
    if dim is None:
        input = flatten(input)  # noqa: A001
        dim = 0
    a = input._data
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d] if a.ndim else 1
    if not isinstance(repeats, Tensor):
        r = int(repeats)
        if r < 0:
            raise RuntimeError("Repeats must be non-negative")
        if output_size is not None and output_size != n * r:
            raise RuntimeError(
                f"repeat_interleave: Invalid output_size, expected {n * r} but got {output_size}"
            )
        if a.ndim == 0:
            input = reshape(input, (1,))  # noqa: A001
            a = input._data
        # PyTorch's decomposition: unsqueeze, expand, clone, view.
        shape = a.shape
        u = unsqueeze(input, d + 1)
        e = expand(u, shape[:d + 1] + (r,) + shape[d + 1:])
        return view(clone(e), shape[:d] + (shape[d] * r,) + shape[d + 1:])
    rd = repeats._data
    if rd.dtype.kind not in "iu":
        raise NotImplementedError(
            f"\"repeat_interleave_cpu\" not implemented for '{_legacy_name(rd.dtype)}'"
        )
    if rd.ndim > 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    rd = rd.reshape(-1)
    if rd.size == 1:
        rd = np.broadcast_to(rd, (n,))
    elif rd.size != n:
        raise RuntimeError(
            f"repeats must have the same size as input along dim, but got repeats.size(0) = "
            f"{rd.size} and input.size({d}) = {n}"
        )
    _check_repeats(rd)
    idx = np.repeat(np.arange(n), rd)
    if output_size is not None and output_size != idx.size:
        raise RuntimeError(
            f"repeat_interleave: Invalid output_size, expected {idx.size} but got {output_size}"
        )
    if a.ndim == 0:
        if dim_given:  # index_select on the 0-d input itself
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        input = reshape(input, (1,))  # noqa: A001
    # PyTorch's composite: index_select with the repeated indices (its node saves them)
    return index_select(input, dim, make(idx))


def _check_repeats(r: np.ndarray) -> None:
    if r.dtype.kind not in "iu":
        raise RuntimeError("repeat_interleave only accept integer repeats")
    if r.size and r.min() < 0:
        raise RuntimeError("repeats can not be negative")


def _array_flip(x, dims):
    return np.flip(x, dims) if dims else x


class FlipBackward0(Node):
    forward = staticmethod(_array_flip)

    def backward(self, xp, g):
        return xp.flip(g, self._dims)


def flip(input, *dims, **kwargs) -> Tensor:  # noqa: A002
    """Reverse the order of elements along ``dims``; a copy.

    >>> import retrograd as torch
    >>> torch.tensor([[1, 2], [3, 4]]).flip(0)
    tensor([[3, 4],
            [1, 2]])
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("flip_cpu", input._data.dtype)  # uint16/32/64
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("flip", "input", 1, input) from None
    if kwargs:  # flip(x, dims=(0,)): PyTorch's keyword name
        if dims or set(kwargs) != {"dims"}:
            raise TypeError(f"flip() got an unexpected keyword argument "
                            f"'{next(k for k in kwargs if k != 'dims' or dims)}'")
        dims = (kwargs["dims"],)
    dims = parse_shape(dims)
    wd = tuple(wrap_dim(d, a.ndim) for d in dims)
    for k in wd:
        if wd.count(k) > 1:
            raise RuntimeError(f"dim {k} appears multiple times in the list of dims")
    if a.ndim == 0:
        wd = ()
    out = np.flip(a, wd).copy() if wd else a.copy()
    return apply(FlipBackward0, out, input, _dims=wd, _g=dims)


def fliplr(input) -> Tensor:  # noqa: A002
    """Reverse dim 1 (columns).

    >>> import retrograd as torch
    >>> torch.tensor([[1, 2], [3, 4]]).fliplr()
    tensor([[2, 1],
            [4, 3]])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("fliplr", "input", 1, input) from None
    if a.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input) -> Tensor:  # noqa: A002
    """Reverse dim 0 (rows).

    >>> import retrograd as torch
    >>> torch.tensor([1, 2, 3]).flipud()
    tensor([3, 2, 1])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("flipud", "input", 1, input) from None
    if a.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def _array_roll(x, shifts, dims=None):
    return np.roll(x, shifts, dims)


class RollBackward0(Node):
    forward = staticmethod(_array_roll)

    def backward(self, xp, g):
        return xp.roll(g, self._back, self._dims)


def roll(input, shifts, dims=None) -> Tensor:  # noqa: A002
    """Shift elements cyclically along ``dims`` (the flattened tensor when ``dims`` is None).

    >>> import retrograd as torch
    >>> torch.tensor([1, 2, 3, 4]).roll(1)
    tensor([4, 1, 2, 3])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("roll", "input", 1, input) from None
    sh = _dims_arg(shifts, "shifts")
    if dims is None:
        if len(sh) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:0")
        wd = None
        sh_arg = sh[0]
    else:
        dd = _dims_arg(dims, "dims")
        if not sh:
            raise RuntimeError("`shifts` required")
        if len(sh) != len(dd):
            raise RuntimeError(
                f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(dd)}"
            )
        if a.ndim == 0:  # (no dim to name, unlike wrap_dim's rule for 0-dim tensors)
            raise IndexError(f"Dimension specified as {dd[0]} but tensor has no dimensions")
        wd = tuple(wrap_dim(d, a.ndim) for d in dd)
        sh_arg = sh
    back = -sh_arg if wd is None else tuple(-s for s in sh_arg)
    return apply(RollBackward0, c_order(np.roll(a, sh_arg, wd)), input, _dims=wd, _back=back,
                 _g=dims)


def _array_rot90(x, k=1, dims=(0, 1)):
    return np.rot90(x, k, tuple(dims))


class Rot90Backward0(Node):
    forward = staticmethod(_array_rot90)

    def backward(self, xp, g):
        return xp.rot90(g, -self._k, self._dims)


def rot90(input, k=1, dims=(0, 1)) -> Tensor:  # noqa: A002
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first dim towards the
    second.

    >>> import retrograd as torch
    >>> torch.tensor([[1, 2], [3, 4]]).rot90()
    tensor([[2, 4],
            [1, 3]])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("rot90", "input", 1, input) from None
    dims = tuple(int(d) for d in dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if a.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {a.ndim}")
    d0, d1 = wrap_dim(dims[0], a.ndim), wrap_dim(dims[1], a.ndim)
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    given, k = (int(k), dims), int(k) % 4
    return apply(Rot90Backward0, np.rot90(a, k, (d0, d1)).copy(), input, _k=k, _dims=(d0, d1),
                 _g=given)


# -- diagonals and triangles --------------------------------------------------------------------


class DiagEmbedBackward0(Node):
    def backward(self, xp, g):
        return xp.diagonal(g, self._offset, self._d1, self._d2)


def diag_embed(input, offset=0, dim1=-2, dim2=-1) -> Tensor:  # noqa: A002
    """Matrices (in dims ``dim1``, ``dim2``) whose ``offset`` diagonal holds the last dim.

    >>> import retrograd as torch
    >>> torch.diag_embed(torch.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("diag_embed", "input", 1, input) from None
    n = a.ndim + 1
    d1, d2 = _diag_dims(n, dim1, dim2)
    offset = int(offset)
    m = (a.shape[-1] if a.ndim else 1) + abs(offset)
    rest = list(a.shape[:-1])
    for d in sorted((d1, d2)):
        rest.insert(d, m)
    out = np.zeros(rest, a.dtype)
    _diag_view(out, offset, d1, d2)[...] = a
    return apply(DiagEmbedBackward0, out, input, _offset=offset, _d1=d1, _d2=d2,
                 _g=(offset, dim1, dim2))


def diag(input, diagonal=0) -> Tensor:  # noqa: A002
    """A 1-D tensor as the ``diagonal``-th diagonal of a square matrix, or a matrix's diagonal
    as a 1-D tensor (a copy).

    >>> import retrograd as torch
    >>> torch.diag(torch.tensor([[1, 2], [3, 4]]))
    tensor([1, 4])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("diag", "input", 1, input) from None
    if a.ndim == 1:
        return diag_embed(input, diagonal, -2, -1)  # (as PyTorch's decomposition calls it)
    if a.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {a.ndim}D")
    offset = int(diagonal)
    return apply(DiagonalBackward0_copy, _diag_view(a, offset, 0, 1).copy(), input,
                 _steps=(("diagonal", (offset, 0, 1)),), _in_shape=a.shape)


class TrilBackward0(Node):
    forward = staticmethod(lambda x, diagonal=0: np.tril(x, diagonal))

    def backward(self, xp, g):
        return xp.tril(g, self._k)


class TriuBackward0(Node):
    forward = staticmethod(lambda x, diagonal=0: np.triu(x, diagonal))

    def backward(self, xp, g):
        return xp.triu(g, self._k)


def _tri(input, diagonal, cls, name) -> Tensor:  # noqa: A002
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error(name, "input", 1, input) from None
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    k = int(diagonal)
    return apply(cls, cls.forward(a, k), input, _k=k)


def tril(input, diagonal=0) -> Tensor:  # noqa: A002
    """The lower triangle of the last two dims (below and on the ``diagonal``-th diagonal);
    zeros elsewhere.

    >>> import retrograd as torch
    >>> torch.ones(2, 2).tril()
    tensor([[1., 0.],
            [1., 1.]])
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("tril", input._data.dtype)  # uint16/32/64
    return _tri(input, diagonal, TrilBackward0, "tril")


def triu(input, diagonal=0) -> Tensor:  # noqa: A002
    """The upper triangle of the last two dims (above and on the ``diagonal``-th diagonal);
    zeros elsewhere.

    >>> import retrograd as torch
    >>> torch.ones(2, 2).triu()
    tensor([[1., 1.],
            [0., 1.]])
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("triu", input._data.dtype)  # uint16/32/64
    return _tri(input, diagonal, TriuBackward0, "triu")


_array.register(
    repeat=RepeatBackward0.forward, index_dims=_array_index_dims,
    index_dims_backward=IndexDimsBackwardBackward0.forward, flip=FlipBackward0.forward,
    roll=RollBackward0.forward, rot90=Rot90Backward0.forward, tril=TrilBackward0.forward,
    triu=TriuBackward0.forward,
)

class NarrowCopyBackward0(Node):
    """``narrow_copy``'s backward: the gradient in the narrowed range, zeros elsewhere."""

    def backward(self, xp, g):
        return xp.embed_slice(g, self._in_shape, self._dim, self._start,
                              self._start + self._length, 1)


def narrow_copy(input, dim, start, length) -> Tensor:  # noqa: A002
    """A contiguous copy of ``input.narrow(dim, start, length)``.

    >>> import retrograd as torch
    >>> torch.arange(6).view(2, 3).narrow_copy(1, 1, 2)
    tensor([[1, 2],
            [4, 5]])
    """
    view = narrow(input.detach() if isinstance(input, Tensor) else input, dim, start, length)
    a = input._data
    d = wrap_dim(dim, a.ndim)
    given = int(start)
    start = given + (a.shape[d] if given < 0 else 0)
    return apply(NarrowCopyBackward0, view._data.copy(order="C"), input, _dim=d, _start=start,
                 _length=int(length), _in_shape=a.shape, _given_start=given)


__all__ = ["tile", "repeat_interleave", "flip", "fliplr", "flipud", "roll", "rot90", "diag",
           "diag_embed", "tril", "triu", "narrow_copy"]
XP = ["repeat", "index_dims", "index_dims_backward"]
METHODS = {name: globals()[name] for name in __all__}
METHODS.update(repeat=repeat)
INPLACE: dict = {"tril_": tril, "triu_": triu}
