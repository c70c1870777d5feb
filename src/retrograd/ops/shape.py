"""Shape ops and views: view/reshape, transpose, permute, expand, squeeze, unsqueeze, split,
diagonal, unfold, broadcasting, and the simple copies (clone, contiguous, to).

A view shares its base's memory and version counter. It also records how it was made, as
``(op name, args)`` steps from its base, so that an in-place op on it can rewrite the base's
history and a stale view can re-derive its grad_fn (``inplace.py``). Each step's name is a
function in both namespaces (``_array`` and ``ops``), so the same steps replay on arrays and on
tensors. Each view op hands its NumPy view to ``_apply.apply_view``, which links it to its base;
the positional views (select, slice) live beneath, in ``_views``; copies that rearrange elements
in ``copies``, padding in ``padding``. A view primitive's ``forward`` is its array twin.
"""

from __future__ import annotations

import warnings
from operator import index as _index

import numpy as np

from .. import _memory_format as _mf
from .._dtypes import F32, FLOAT_CHARS, REDUCED, bfloat16, to_dtype, to_reduced
from .._dtypes import dtype as _dt
from .._tensor import Size, Tensor, device, make
from ..autograd.graph import Node
from . import _array
from ._apply import apply, apply_multi, apply_view, link_view, recording
from ._base import _check_leaf, _check_writable, legacy
from ._core import Signatures, _c_type_name, arg_error, bf16_cast_nans, wrap_dim
from ._views import expand_array as _expand_array
from ._views import slice_dim

# PyTorch's signatures, for its errors when arguments fit none (checked only after a failure).
_TRANSPOSE = Signatures("transpose", "Tensor input, int dim0, int dim1")
_UNSQUEEZE = Signatures("unsqueeze", "Tensor input, int dim")
_FLATTEN = Signatures("flatten", "Tensor input, int start_dim = 0, int end_dim = -1")


def parse_shape(args, name: str = "", arg: str = "size") -> tuple:
    """``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` all mean the shape (2, 3). ``name`` (the
    op) and ``arg`` (PyTorch's name of the argument) word the error for a size that is no int.

    >>> parse_shape(((2, 3),))
    (2, 3)
    """
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    try:
        return tuple(_index(s) for s in args)
    except TypeError:
        # PyTorch refuses a float or a string where a size is expected (int() would take it).
        for i, s in enumerate(args):
            if not hasattr(s, "__index__"):
                raise _size_error(name, arg, args, i, type(s).__name__) from None
        raise


def _size_error(name: str, arg: str, args, i: int, got: str) -> TypeError:
    """PyTorch's wording for a size element that is no int, as its argument parser gives it."""
    if not name:
        return TypeError(f"argument '{arg}' must be tuple of ints, but found element of type "
                         f"{got} at pos {i}")
    if len(args) == 1:
        if name == "view":  # view(dtype) is the other overload
            return TypeError(
                f"view() received an invalid combination of arguments - got ({got}), but "
                f"expected one of:\n * (torch.dtype dtype)\n      didn't match because some of "
                f"the arguments have invalid types: (!{got}!)\n * (tuple of ints size)\n      "
                f"didn't match because some of the arguments have invalid types: (!{got}!)\n")
        return TypeError(f"{name}(): argument '{arg}' (position 1) must be tuple of ints, not "
                         f"{got}")
    return TypeError(f"{name}(): argument '{arg}' failed to unpack the object at pos {i + 1} "
                     f"with error \"type must be tuple of ints,but got {got}\"")


def _infer_shape(shape: tuple, numel: int) -> tuple:
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[: neg[0]] + (numel // known,) + shape[neg[0] + 1:]
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _reshape_array(x, shape):
    return np.reshape(x, shape)


class ViewBackward0(Node):
    forward = staticmethod(_reshape_array)

    def backward(self, xp, g):
        return xp.reshape(g, self._in_shape)


class UnsafeViewBackward0(ViewBackward0):
    pass


def _view_dtype(input: Tensor, dt: _dt) -> Tensor:  # noqa: A002
    """``input.view(dtype)``: the same bytes read as ``dt``, sharing memory and version counter
    but outside the graph (PyTorch's output does not require grad); a dtype of another size
    rescales the last dimension, which must then be contiguous."""
    a = input._data
    src = input.dtype
    if dt.np.itemsize != a.itemsize:
        what = f"to view {src.scalar_name} as {dt.scalar_name} (different element sizes)"
        if a.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if a.shape[-1] != 1 and a.strides[-1] != a.itemsize:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got "
                               f"{a.strides[-1] // a.itemsize}")
        ratio = dt.np.itemsize // a.itemsize
        if ratio > 1 and a.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got "
                               f"{a.shape[-1]}")
        if a.shape[-1] == 1 and a.strides[-1] != a.itemsize:
            a = np.lib.stride_tricks.as_strided(a, strides=a.strides[:-1] + (a.itemsize,))
    out = a.view(dt.np)
    t = Tensor._make(out)
    t._vc = input._vc
    t._inference = input._inference
    return t


def view(input, *shape, dtype=None) -> Tensor:  # noqa: A002
    """The same memory seen with another shape, or its bytes read as another dtype; raises if
    the memory layout does not allow it.

    >>> import retrograd as torch
    >>> torch.arange(6).view(2, 3)
    tensor([[0, 1, 2],
            [3, 4, 5]])
    >>> torch.tensor([1.0, -2.0], dtype=torch.bfloat16).view(torch.int16)
    tensor([ 16256, -16384], dtype=retrograd.int16)
    """
    if dtype is not None and not shape:
        shape = (dtype,)
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        if isinstance(shape[0], _dt):
            return _view_dtype(input, shape[0])
    a = input._data
    shape = _infer_shape(parse_shape(shape, "view"), a.size)
    try:
        out = np.reshape(a, shape, copy=False)
    except ValueError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    # A step's arguments are a tuple: replay calls reshape(x, shape) on arrays and tensors.
    return apply_view(ViewBackward0, out, input, ("reshape", (shape,)), _in_shape=a.shape)


class ReshapeAliasBackward0(ViewBackward0):
    """A view with a new shape, as PyTorch records ``reshape`` of a result whose strides
    ``view`` does not take (``linalg.tensorinv``'s)."""


def reshape_alias(input, shape) -> Tensor:  # noqa: A002
    """``view(shape)`` recorded as PyTorch's ``_reshape_alias``."""
    a = input._data
    out = np.reshape(a, shape)
    return apply_view(ReshapeAliasBackward0, out, input, ("reshape", (out.shape,)),
                      _in_shape=a.shape)


def reshape(input, *shape) -> Tensor:  # noqa: A002
    """``view`` when the memory allows it, otherwise a copy with the new shape.

    >>> import retrograd as torch
    >>> torch.arange(4).reshape(2, -1).shape
    retrograd.Size([2, 2])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("reshape", "input", 1, input) from None
    shape = _infer_shape(parse_shape(shape, "reshape", "shape"), a.size)
    try:
        out = np.reshape(a, shape, copy=False)
    except ValueError:
        # PyTorch copies (CloneBackward0) and then views the copy (UnsafeViewBackward0).
        c = apply(CloneBackward0, a.copy(), input)  # a contiguous clone, then a view of it
        return apply(UnsafeViewBackward0, np.reshape(c._data, shape), c, _in_shape=a.shape)
    # PyTorch views a contiguous input and records a strided one as ``_reshape_alias``.
    node = ViewBackward0 if a.flags.c_contiguous else ReshapeAliasBackward0
    return apply_view(node, out, input, ("reshape", (shape,)), _in_shape=a.shape)


def view_as(input, other) -> Tensor:  # noqa: A002
    return view(input, other._data.shape)


def reshape_as(input, other) -> Tensor:  # noqa: A002
    return reshape(input, other._data.shape)


def flatten(input, start_dim=0, end_dim=-1) -> Tensor:  # noqa: A002
    """Merge dims ``start_dim..end_dim`` into one.

    >>> import retrograd as torch
    >>> torch.zeros(2, 3, 4).flatten(1).shape
    retrograd.Size([2, 12])
    """
    try:
        shape = input._data.shape
        if not shape:
            return reshape(input, (1,))
        s = wrap_dim(start_dim, len(shape))
        e = wrap_dim(end_dim, len(shape))
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if s == e:
            return input
        n = 1
        for d in shape[s:e + 1]:
            n *= d
        return reshape(input, shape[:s] + (n,) + shape[e + 1:])
    except (AttributeError, TypeError):
        _FLATTEN.check(input, start_dim, end_dim)
        raise


def _transpose_array(x, d0, d1):
    return np.swapaxes(x, d0, d1)


class TransposeBackward0(Node):
    forward = staticmethod(_transpose_array)

    def backward(self, xp, g):
        return xp.transpose(g, self._d0, self._d1)


def transpose(input, dim0, dim1) -> Tensor:  # noqa: A002
    """Swap two dims (a view).

    >>> import retrograd as torch
    >>> torch.zeros(2, 3).transpose(0, 1).shape
    retrograd.Size([3, 2])
    """
    try:
        a = input._data
        n = a.ndim
        d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
        out = np.swapaxes(a, d0, d1) if n else a.view()
        return apply_view(TransposeBackward0, out, input, ("transpose", (d0, d1)), _d0=d0, _d1=d1,
                          _g=(dim0, dim1))
    except (AttributeError, TypeError):
        _TRANSPOSE.check(input, dim0, dim1)
        raise


swapaxes = transpose
swapdims = transpose


class TBackward0(Node):
    def backward(self, xp, g):
        return xp.transpose(g, 0, 1) if self._2d else g


def t(input) -> Tensor:  # noqa: A002
    """Transpose a matrix (0-D and 1-D tensors come back as they are).

    >>> import retrograd as torch
    >>> torch.zeros(2, 3).t().shape
    retrograd.Size([3, 2])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("t", "input", 1, input) from None
    n = a.ndim
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    out = a.T if n == 2 else a.view()
    return apply_view(TBackward0, out, input, ("transpose", (0, 1)) if n == 2 else ("alias", ()),
                      _2d=n == 2)


def _permute_array(x, dims):
    return np.transpose(x, dims)


class PermuteBackward0(Node):
    forward = staticmethod(_permute_array)

    def backward(self, xp, g):
        return xp.permute(g, self._inv)


def permute(input, *dims) -> Tensor:  # noqa: A002
    """Reorder dims (a view).

    >>> import retrograd as torch
    >>> torch.zeros(2, 3, 4).permute(2, 0, 1).shape
    retrograd.Size([4, 2, 3])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("permute", "input", 1, input) from None
    dims = parse_shape(dims)
    if len(dims) != a.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {a.ndim} is not "
            f"equal to len(dims) = {len(dims)}"
        )
    given, dims = dims, tuple(wrap_dim(d, a.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    out = np.transpose(a, dims)
    inv = tuple(sorted(range(len(dims)), key=dims.__getitem__))  # the inverse permutation
    return apply_view(PermuteBackward0, out, input, ("permute", (dims,)), _inv=inv, _g=given)


def matrix_t(input) -> Tensor:  # noqa: A002
    """``x.T``: all dims reversed."""
    n = input._data.ndim
    if n == 0:
        warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in "
                      "these cases.", UserWarning, stacklevel=2)
    elif n != 2:
        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to "
            "reverse the dimensions of a tensor.",
            UserWarning,
            stacklevel=2,
        )
    return permute(input, tuple(range(n - 1, -1, -1)))


def mT(input) -> Tensor:  # noqa: A002, N802
    n = input._data.ndim
    if n < 2:
        raise RuntimeError(
            f"tensor.mT is only supported on matrices or batches of matrices. Got {n}-D tensor."
        )
    return transpose(input, -2, -1)


class ExpandBackward0(Node):
    forward = staticmethod(_expand_array)

    def backward(self, xp, g):
        return xp.sum_to(g, self._in_shape)


def expand(input, *sizes) -> Tensor:  # noqa: A002
    """Broadcast to a larger shape without copying (-1 keeps a dim).

    >>> import retrograd as torch
    >>> torch.tensor([1., 2.]).expand(3, 2).shape
    retrograd.Size([3, 2])
    """
    a = input._data
    sizes = parse_shape(sizes)
    lead = len(sizes) - a.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand({_c_type_name(input.dtype)}{{{list(a.shape)}}}, size={list(sizes)}): the "
            f"number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({a.ndim})"
        )
    shape = []
    # From the last dimension, as PyTorch checks (its error names the rightmost mismatch).
    for i in range(len(sizes) - 1, -1, -1):
        s = sizes[i]
        if i < lead:
            if s < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            shape.append(s)
        else:
            cur = a.shape[i - lead]
            if s == -1:
                s = cur
            elif cur != 1 and s != cur:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) must match the existing size ({cur}) "
                    f"at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor "
                    f"sizes: {list(a.shape)}"
                )
            shape.append(s)
    shape = tuple(shape[::-1])
    try:
        out = _expand_array(a, shape)
    except ValueError:  # more elements than an int64 counts (NumPy: "iterator is too large")
        raise RuntimeError("numel: integer multiplication overflow") from None
    return apply_view(ExpandBackward0, out, input, ("expand", (shape,)), _in_shape=a.shape)


def expand_as(input, other) -> Tensor:  # noqa: A002
    return expand(input, other._data.shape)


def broadcast_to(input, shape) -> Tensor:  # noqa: A002
    """``input`` expanded to ``shape`` (a view), by broadcasting rules.

    >>> import retrograd as torch
    >>> torch.broadcast_to(torch.tensor([1, 2]), (2, 2))
    tensor([[1, 2],
            [1, 2]])
    """
    return expand(input, shape)


def _squeeze_array(x, dim=None):
    return np.squeeze(x, axis=dim)


class SqueezeBackward0(Node):
    forward = staticmethod(_squeeze_array)

    def backward(self, xp, g):
        return xp.reshape(g, self._in_shape)


class SqueezeBackward1(SqueezeBackward0):
    pass


class SqueezeBackward2(SqueezeBackward0):
    pass


def squeeze(input, dim=None) -> Tensor:  # noqa: A002
    """Drop dims of size 1 (all of them, or those in ``dim``).

    >>> import retrograd as torch
    >>> torch.zeros(1, 2, 1).squeeze().shape
    retrograd.Size([2])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("squeeze", "input", 1, input) from None
    if dim is None:
        axes = tuple(i for i, s in enumerate(a.shape) if s == 1)
        cls = SqueezeBackward0
    elif isinstance(dim, (tuple, list)):
        axes = tuple(d for d in (wrap_dim(d, a.ndim) for d in dim) if a.ndim and a.shape[d] == 1)
        cls = SqueezeBackward2
    else:
        d = wrap_dim(dim, a.ndim)
        axes = (d,) if a.ndim and a.shape[d] == 1 else ()
        cls = SqueezeBackward1
    out = np.squeeze(a, axis=axes) if axes else a.view()
    return apply_view(cls, out, input, ("reshape", (out.shape,)), _in_shape=a.shape, _g=dim)


class SqueezeBackward4(SqueezeBackward0):
    pass


def squeeze_dims_(input, dim) -> Tensor:  # noqa: A002
    """``squeeze`` as PyTorch's in-place ``squeeze_(dims)`` records it (inside matmul)."""
    a = input._data
    out = np.squeeze(a, axis=dim) if a.shape[dim] == 1 else a.view()
    return apply_view(SqueezeBackward4, out, input, ("reshape", (out.shape,)),
                      _in_shape=a.shape, _g=dim)


def unsafe_view(input, shape) -> Tensor:  # noqa: A002
    """A view of a fresh result (no view tracking), as PyTorch's ``_unsafe_view``."""
    a = input._data
    return apply(UnsafeViewBackward0, a.reshape(shape), input, _in_shape=a.shape)


def _unsqueeze_array(x, dim):
    return np.expand_dims(x, dim)


class UnsqueezeBackward0(Node):
    forward = staticmethod(_unsqueeze_array)

    def backward(self, xp, g):
        return xp.squeeze(g, self._dim)


def unsqueeze(input, dim) -> Tensor:  # noqa: A002
    """Insert a dim of size 1 at ``dim``.

    >>> import retrograd as torch
    >>> torch.zeros(2).unsqueeze(0).shape
    retrograd.Size([1, 2])
    """
    try:
        a = input._data
        d = wrap_dim(dim, a.ndim + 1)
        out = np.expand_dims(a, d)
        return apply_view(UnsqueezeBackward0, out, input, ("unsqueeze", (d,)), _dim=d, _g=dim)
    except (AttributeError, TypeError):
        _UNSQUEEZE.check(input, dim)
        raise


def _alias_array(x):
    return x


class AliasBackward0(Node):
    forward = staticmethod(_alias_array)

    def backward(self, xp, g):
        return g


def alias(input) -> Tensor:  # noqa: A002
    """A view of the whole tensor (what ``x[...]`` returns)."""
    return apply_view(AliasBackward0, input._data.view(), input, ("alias", ()))


class CloneBackward0(Node):
    def backward(self, xp, g):
        return g


def clone(input, *, memory_format=None) -> Tensor:  # noqa: A002
    """A copy with its own memory; gradients flow through it.

    >>> import retrograd as torch
    >>> torch.tensor([1., 2.]).clone()
    tensor([1., 2.])
    """
    # PyTorch's default, preserve_format, keeps a dense tensor's strides (a transposed tensor
    # clones transposed, and view(-1) of it fails as in PyTorch), and the order of dimensions
    # of a sliced one; an expanded one clones in its suggested format.
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("clone", "input", 1, input) from None
    name = None if memory_format is None else _mf.format_name(memory_format, "clone")
    if name is None:
        return apply(CloneBackward0, _mf.preserve_copy(a), input)
    return apply(CloneBackward0, a.copy() if name == "contiguous_format" else
                 _mf.copy_as(a, name), input)


def contiguous(input, memory_format=None) -> Tensor:  # noqa: A002
    """``input`` itself if laid out in ``memory_format`` (C-contiguous by default), else a copy
    so laid out."""
    if _mf.is_contiguous_as(input._data, memory_format, "contiguous"):
        return input
    if memory_format is _mf.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return clone(input, memory_format=memory_format or _mf.contiguous_format)  # (C order)


def _cast_array(x, np_dtype):
    x = np.asarray(x)
    if np_dtype in REDUCED:
        return to_reduced(x, np_dtype)
    return x.astype(np_dtype)


class ToCopyBackward0(Node):
    forward = staticmethod(_cast_array)

    def backward(self, xp, g):
        return xp.cast(g, self._src)


def to_dtype_op(input, np_dtype, fmt: str | None = None) -> Tensor:  # noqa: A002
    """``input`` converted to a NumPy dtype (and copied into memory format ``fmt`` if given);
    differentiable between floating dtypes."""
    a = out = input._data
    if a.dtype == np_dtype:
        if fmt is None:
            return input
    elif (np_dtype.itemsize < a.itemsize and not (np_dtype == bfloat16.np and a.dtype == F32)) or \
            (np_dtype.char not in FLOAT_CHARS and a.dtype.char in FLOAT_CHARS):
        # a cast that may overflow (to inf) or meet NaN (into an integer): PyTorch's result,
        # without NumPy's RuntimeWarning
        with np.errstate(over="ignore", invalid="ignore"):
            out = to_reduced(a, np_dtype) if np_dtype in REDUCED else a.astype(np_dtype)
    else:  # PyTorch converts to a reduced float through float32 (float64 rounds twice).
        out = to_reduced(a, np_dtype) if np_dtype in REDUCED else a.astype(np_dtype)
    if a.dtype == F32 and np_dtype == bfloat16.np:
        out = bf16_cast_nans(out, a)
    if fmt is not None:
        out = _mf.copy_as(out, fmt)
    if out.dtype.char not in FLOAT_CHARS:
        return make(out)  # not differentiable
    return apply(ToCopyBackward0, out, input, _src=a.dtype)


def cast(x: Tensor, np_dtype) -> Tensor:
    """``x`` converted to a NumPy dtype, differentiably (the engine's dtype fix-up)."""
    return to_dtype_op(x, np_dtype)


def to(input, *args, **kwargs) -> Tensor:  # noqa: A002
    """``to(dtype)``, ``to(other)``, ``to('cpu')``, ``to('cpu', dtype)``; copies only if needed.

    >>> import retrograd as torch
    >>> torch.tensor([1, 2]).to(torch.float32)
    tensor([1., 2.])
    """
    dt = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    fmt = _mf.format_name(kwargs.pop("memory_format", None), "to", args, kwargs)
    dev = kwargs.pop("device", None)
    for a in args:
        if isinstance(a, _mf.memory_format):  # (a keyword-only argument)
            raise _mf.to_args_error(args, kwargs)
        if isinstance(a, Tensor):
            dt = a.dtype
        elif isinstance(a, (str, device)):
            dev = a
        elif a is not None and not isinstance(a, bool):
            dt = a
    if dev is not None:
        device(dev)
    if fmt is not None:  # a copy unless already so laid out (PyTorch's suggested format)
        np_dt = input._data.dtype if dt is None else to_dtype(dt).np
        if copy or np_dt != input._data.dtype or _mf.suggest(input._data) != fmt:
            return to_dtype_op(input, np_dt, fmt)
    r = input if dt is None else to_dtype_op(input, to_dtype(dt).np)
    if copy and r is input:
        r = clone(input)
    return r


def type_as(input, other) -> Tensor:  # noqa: A002
    return to_dtype_op(input, other._data.dtype)


class UnbindBackward0(Node):
    """One node for all the slices; missing gradients count as zeros."""

    _multi_view = True

    _materialize = False

    def backward(self, xp, *grads):
        parts = [xp.zeros_meta(m) if g is None else g for g, m in zip(grads, self._out_meta)]
        return xp.stack(parts, self._dim)


def unbind(input, dim=0) -> tuple:  # noqa: A002
    """Split along ``dim`` into a tuple of views, one per index.

    >>> import retrograd as torch
    >>> torch.tensor([[1, 2], [3, 4]]).unbind(1)
    (tensor([1, 3]), tensor([2, 4]))
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("unbind", "input", 1, input) from None
    if a.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    lead = (slice(None),) * d
    outs = apply_multi(UnbindBackward0, [a[lead + (i, Ellipsis)] for i in range(n)], (input,),
                       differentiable=(True,) * n, _dim=d)
    for i, t_i in enumerate(outs):
        link_view(t_i, input, ("select", (d, i)))
    return outs


def unflatten(input, dim, sizes) -> Tensor:  # noqa: A002
    """Split dim ``dim`` into ``sizes`` (one of them may be -1); a view.

    >>> import retrograd as torch
    >>> torch.zeros(2, 6).unflatten(1, (3, -1)).shape
    retrograd.Size([2, 3, 2])
    """
    a = input._data
    d = wrap_dim(dim, a.ndim)
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = a.shape[d] if a.ndim else 1
    known = 1
    for s in sizes:
        if s != -1:
            known *= s
    if sizes.count(-1) == 1 and known and n % known == 0:
        sizes = tuple(n // known if s == -1 else s for s in sizes)
    elif known != n or -1 in sizes:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
            f"({n}) in the input tensor"
        )
    return view(input, a.shape[:d] + sizes + a.shape[d + 1:])


def ravel(input) -> Tensor:  # noqa: A002
    """The elements as a 1-D tensor: a view when the memory is contiguous, else of a copy.

    >>> import retrograd as torch
    >>> torch.tensor([[1, 2], [3, 4]]).ravel()
    tensor([1, 2, 3, 4])
    """
    return view(contiguous(input), -1)


def _dims_arg(dims, name: str) -> tuple:
    return (int(dims),) if isinstance(dims, (int, np.integer)) else tuple(int(d) for d in dims)


def movedim(input, source, destination) -> Tensor:  # noqa: A002
    """Move dims ``source`` to positions ``destination``; the others keep their order.

    >>> import retrograd as torch
    >>> torch.zeros(2, 3, 4).movedim(0, -1).shape
    retrograd.Size([3, 4, 2])
    """
    n = input._data.ndim
    src, dst = _dims_arg(source, "source"), _dims_arg(destination, "destination")
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)"
        )
    ws = tuple(wrap_dim(d, n) for d in src)
    wd = tuple(wrap_dim(d, n) for d in dst)
    if len(set(ws)) != len(ws):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(src)})")
    if len(set(wd)) != len(wd):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(dst)})")
    order = [k for k in range(n) if k not in ws]
    for d, s in sorted(zip(wd, ws)):
        order.insert(d, s)
    return permute(input, tuple(order))


moveaxis = movedim


def adjoint(input) -> Tensor:  # noqa: A002
    """The conjugate transpose of the last two dims (the transpose, for real tensors).

    >>> import retrograd as torch
    >>> torch.zeros(2, 3).adjoint().shape
    retrograd.Size([3, 2])
    """
    try:
        n = input._data.ndim
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("adjoint", "input", 1, input) from None
    if n < 2:
        raise RuntimeError(
            "tensor.adjoint() is only supported on matrices or batches of matrices. "
            f"Got {n}-D tensor."
        )
    return transpose(input, -2, -1)


def H(input) -> Tensor:  # noqa: A002, N802
    """``x.H``: the conjugate transpose of a matrix (its transpose, for real tensors)."""
    n = input._data.ndim
    if n != 2:
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor."
        )
    return transpose(input, -2, -1)  # (PyTorch's node shows these dims)


def mH(input) -> Tensor:  # noqa: A002, N802
    """``x.mH``: the conjugate transpose of the last two dims (``mT``, for real tensors)."""
    n = input._data.ndim
    if n < 2:
        raise RuntimeError(
            "tensor.mH is only supported on matrices or batches of matrices. "
            f"Got {n}-D tensor."
        )
    return transpose(input, -2, -1)


_as_strided = np.lib.stride_tricks.as_strided


def _diag_view(a: np.ndarray, offset: int, d1: int, d2: int) -> np.ndarray:
    """A writable NumPy view of a diagonal (``np.diagonal``'s view is read-only)."""
    sl = [slice(None)] * a.ndim
    if offset >= 0:
        sl[d2] = slice(offset, None)
    else:
        sl[d1] = slice(-offset, None)
    a = a[tuple(sl)]
    n = min(a.shape[d1], a.shape[d2])
    keep = [k for k in range(a.ndim) if k != d1 and k != d2]
    shape = tuple(a.shape[k] for k in keep) + (n,)
    strides = tuple(a.strides[k] for k in keep) + (a.strides[d1] + a.strides[d2],)
    return _as_strided(a, shape, strides, writeable=a.flags.writeable)


def _diag_dims(ndim: int, dim1: int, dim2: int) -> tuple:
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def _array_diagonal(x, offset=0, dim1=0, dim2=1):
    return _diag_view(x, offset, dim1 % x.ndim, dim2 % x.ndim)


class DiagonalBackward0(Node):
    forward = staticmethod(_array_diagonal)

    def backward(self, xp, g):
        return xp.embed_view(g, self._steps, self._in_shape)


class DiagonalBackward0_copy(DiagonalBackward0):  # noqa: N801 - PyTorch's name for diag(2-D)
    pass


def diagonal(input, offset=0, dim1=0, dim2=1) -> Tensor:  # noqa: A002
    """The diagonal of the (``dim1``, ``dim2``) planes, as a new last dim (a view).

    >>> import retrograd as torch
    >>> torch.arange(9).view(3, 3).diagonal(1)
    tensor([1, 5])
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("diagonal", "input", 1, input) from None
    d1, d2 = _diag_dims(a.ndim, dim1, dim2)
    offset = int(offset)
    out = _diag_view(a, offset, d1, d2)
    step = ("diagonal", (offset, d1, d2))
    return apply_view(DiagonalBackward0, out, input, step, _steps=(step,), _in_shape=a.shape,
                      _g=(offset, dim1, dim2))


def _unfold_view(a: np.ndarray, d: int, size: int, step: int, writeable: bool) -> np.ndarray:
    if a.ndim == 0:
        return _as_strided(a.reshape(1), (size,), (a.itemsize,), writeable=writeable)
    count = (a.shape[d] - size) // step + 1
    shape = a.shape[:d] + (count,) + a.shape[d + 1:] + (size,)
    st = a.strides
    strides = st[:d] + (st[d] * step,) + st[d + 1:] + (st[d],)
    return _as_strided(a, shape, strides, writeable=writeable)


def _array_unfold(x, dimension, size, step):
    return _unfold_view(x, dimension % max(x.ndim, 1), size, step, True)


class UnfoldBackward0(Node):
    forward = staticmethod(_array_unfold)

    def backward(self, xp, g):
        return xp.unfold_backward(g, self._in_shape, self._dim, self._size, self._step)


def unfold(input, dimension, size, step) -> Tensor:  # noqa: A002
    """All windows of ``size`` elements along ``dimension``, ``step`` apart, in a new last dim
    (a view: overlapping windows share memory).

    >>> import retrograd as torch
    >>> torch.arange(5).unfold(0, 2, 2)
    tensor([[0, 1],
            [2, 3]])
    """
    a = input._data
    d = wrap_dim(dimension, a.ndim)
    size, step = int(size), int(step)
    n = a.shape[d] if a.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    # Overlapping windows alias memory: refuse writes into them, as PyTorch does.
    overlap = size > step and (n - size) // step > 0
    out = _unfold_view(a, d, size, step, a.flags.writeable and not overlap)
    return apply_view(UnfoldBackward0, out, input, ("unfold", (d, size, step)),
                      _in_shape=a.shape, _dim=d, _size=size, _step=step, _g=dimension)


def _array_unfold_backward(g, shape, dim, size, step):
    out = np.zeros(shape, g.dtype)
    o = out.reshape(1) if out.ndim == 0 else out
    count = g.shape[dim] if out.ndim else 1
    lead = (slice(None),) * dim
    for k in range(size):
        o[lead + (slice(k, k + step * (count - 1) + 1, step),)] += g[..., k]
    return out


class UnfoldBackwardBackward0(Node):
    forward = staticmethod(_array_unfold_backward)

    def backward(self, xp, g):
        return xp.unfold(g, self._dim, self._size, self._step)


def unfold_backward(g, shape, dim, size, step) -> Tensor:
    """Sum the windows ``g`` back into a tensor of ``shape`` (unfold's backward)."""
    out = _array_unfold_backward(g._data, shape, dim, size, step)
    return apply(UnfoldBackwardBackward0, out, g, _dim=dim, _size=size, _step=step)


class UnsqueezeBackward1(UnsqueezeBackward0):
    pass


class SqueezeBackward3(SqueezeBackward0):
    pass


class SqueezeBackward5(SqueezeBackward0):
    pass


class TBackward1(TBackward0):
    pass


class TransposeBackward1(TransposeBackward0):
    pass


def _inplace_view(self: Tensor, r: Tensor, cls) -> Tensor:
    """Make ``self`` take the shape and history of ``r``, a view of it (``x.t_()`` and co)."""
    fn = r._grad_fn
    if fn is not None:
        fn.__class__ = cls
        self._grad_fn, self._nr, self._rg = fn, r._nr, True
    self._data = r._data
    if self._view is not None:
        self._view = r._view
    if r._fw is not None:  # forward AD: the tangent takes the same view
        self._fw = r._fw
    self._vc[0] += 1
    return self


def _check_inplace_view(self: Tensor) -> None:
    _check_writable(self)
    if recording(self):
        _check_leaf(self)


def squeeze_(self, dim=None) -> Tensor:
    """In-place ``squeeze``: changes the tensor's shape, returns it."""
    _check_inplace_view(self)
    cls = SqueezeBackward3 if dim is None else (
        SqueezeBackward5 if isinstance(dim, (tuple, list)) else SqueezeBackward4)
    return _inplace_view(self, squeeze(self, dim), cls)


def unsqueeze_(self, dim) -> Tensor:
    """In-place ``unsqueeze``: changes the tensor's shape, returns it."""
    _check_inplace_view(self)
    return _inplace_view(self, unsqueeze(self, dim), UnsqueezeBackward1)


def t_(self) -> Tensor:
    """In-place ``t``: changes the tensor's shape, returns it."""
    _check_inplace_view(self)
    return _inplace_view(self, t(self), TBackward1)


def transpose_(self, dim0, dim1) -> Tensor:
    """In-place ``transpose``: changes the tensor's shape, returns it."""
    _check_inplace_view(self)
    return _inplace_view(self, transpose(self, dim0, dim1), TransposeBackward1)


def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of these shapes broadcast to.

    >>> import retrograd as torch
    >>> torch.broadcast_shapes((3, 1), (4,))
    retrograd.Size([3, 4])
    """
    shapes = [(int(s),) if isinstance(s, (int, np.integer)) else tuple(int(k) for k in s)
              for s in shapes]
    n = max((len(s) for s in shapes), default=0)
    result = [1] * n
    for s in shapes:
        for k in range(1, len(s) + 1):
            if s[-k] < 0:
                raise RuntimeError(
                    f"Trying to create tensor with negative dimension {s[-k]}: {list(s)}"
                )
            if result[-k] == 1:
                result[-k] = s[-k]
    for i, s in enumerate(shapes):
        for k in range(1, len(s) + 1):
            if s[-k] != 1 and s[-k] != result[-k]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {s[-k]} at {-k}! Mismatching "
                    f"argument at index {i} had {s}; but expected shape should be broadcastable "
                    f"to {result}"
                )
    return Size(result)


def broadcast_tensors(*tensors) -> tuple:
    """The tensors expanded to their common shape (those already of that shape come back as they
    are).

    >>> import retrograd as torch
    >>> a, b = torch.broadcast_tensors(torch.zeros(3, 1), torch.zeros(4))
    >>> a.shape, b.shape
    (retrograd.Size([3, 4]), retrograd.Size([3, 4]))
    """
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    shape: tuple = ()
    for t_i in tensors:
        s = t_i._data.shape
        if len(s) > len(shape):
            shape = (1,) * (len(s) - len(shape)) + shape
        s = (1,) * (len(shape) - len(s)) + s
        merged = []
        for k, (p, q) in enumerate(zip(shape, s)):
            if p != q and p != 1 and q != 1:
                raise RuntimeError(
                    f"The size of tensor a ({p}) must match the size of tensor b ({q}) at "
                    f"non-singleton dimension {k}"
                )
            merged.append(q if p == 1 else p)
        shape = tuple(merged)
    return tuple(t_i if t_i._data.shape == shape else expand(t_i, shape) for t_i in tensors)


class SplitBackward0(Node):
    """One node for all the pieces; missing gradients count as zeros."""

    _materialize = False
    _multi_view = True

    def backward(self, xp, *grads):
        parts = [xp.zeros_meta(m) if g is None else g for g, m in zip(grads, self._out_meta)]
        return xp.cat(parts, self._dim)


class SplitWithSizesBackward0(SplitBackward0):
    pass


def _split_views(input, d: int, sizes, cls, given=None) -> tuple:
    a = input._data
    lead = (slice(None),) * d
    pieces, steps = [], []
    start = 0
    for size in sizes:
        stop = start + size
        pieces.append(a[lead + (slice(start, stop),)])
        steps.append(("slice_dim", (d, start, stop, 1)))
        start = stop
    outs = apply_multi(cls, pieces, (input,), differentiable=(True,) * len(pieces), _dim=d,
                       _g=given)
    for t_i, step in zip(outs, steps):
        link_view(t_i, input, step)
    return outs


def split(tensor, split_size_or_sections, dim=0) -> tuple:
    """Cut into pieces of ``split_size`` (the last may be smaller) or of the given sizes, along
    ``dim``; the pieces are views.

    >>> import retrograd as torch
    >>> torch.arange(5).split(2)
    (tensor([0, 1]), tensor([2, 3]), tensor([4]))
    >>> torch.arange(5).split([1, 4])
    (tensor([0]), tensor([1, 2, 3, 4]))
    """
    a = tensor._data
    if a.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    if isinstance(split_size_or_sections, (tuple, list)):
        sizes = [int(s) for s in split_size_or_sections]
        if any(s < 0 for s in sizes):
            raise RuntimeError(
                "split_with_sizes expects split_sizes have only non-negative entries, but got "
                f"split_sizes={sizes}"
            )
        if sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                f"size at dimension {dim}), but got split_sizes={sizes}"
            )
        return _split_views(tensor, d, sizes, SplitWithSizesBackward0, dim)
    s = int(split_size_or_sections)
    if s < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={s}")
    if s == 0 and n != 0:
        raise RuntimeError(
            f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
        )
    count = max(-(-n // s) if s else 1, 1)
    sizes = [s] * (count - 1) + [n - s * (count - 1)]
    return _split_views(tensor, d, sizes, SplitBackward0, dim)


def _split_method(self, split_size, dim=0) -> tuple:
    return split(self, split_size, dim)


_split_method.__name__ = "split"
_split_method.__doc__ = split.__doc__


def chunk(input, chunks, dim=0) -> tuple:  # noqa: A002
    """Split into ``chunks`` views of equal size (the last may be smaller, and there may be
    fewer).

    >>> import retrograd as torch
    >>> [c.tolist() for c in torch.arange(5).chunk(3)]
    [[0, 1], [2, 3], [4]]
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("chunk", "input", 1, input) from None
    if a.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if not hasattr(chunks, "__index__"):
        raise arg_error("chunk", "chunks", 1, chunks, "int")  # as x.chunk(...) says
    chunks = _index(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    s = -(-n // chunks)
    if s == 0 and n == 0:
        return _split_views(input, d, [0] * chunks, SplitWithSizesBackward0)
    return split(input, s, d)


def tensor_split(input, indices_or_sections, dim=0) -> tuple:  # noqa: A002
    """Split into ``sections`` near-equal views, or at the given indices, along ``dim``.

    >>> import retrograd as torch
    >>> [t.tolist() for t in torch.arange(5).tensor_split(2)]
    [[0, 1, 2], [3, 4]]
    >>> [t.tolist() for t in torch.arange(5).tensor_split([1, 3])]
    [[0], [1, 2], [3, 4]]
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("tensor_split", "input", 1, input) from None
    if a.ndim == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        td = ios._data
        if td.dtype != np.int64:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                f"{_legacy_name(td.dtype)}"
            )
        if td.ndim > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                f"one-dimensional tensor, but got a tensor with {td.ndim} dims"
            )
        ios = int(td) if td.ndim == 0 else td.tolist()
    if isinstance(ios, (tuple, list)):
        bounds = [0] + [int(i) for i in ios] + [n]
    else:
        sections = int(ios)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        q, r = divmod(n, sections)
        bounds = [0]
        for i in range(sections):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    outs = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        # (slice_dim clamps them as PyTorch's slice does; its node keeps them as given)
        outs.append(slice_dim(input, d, lo, hi, 1))
    return tuple(outs)


def _legacy_name(np_dtype) -> str:
    return legacy(np_dtype)


_array.register(
    reshape=ViewBackward0.forward, transpose=TransposeBackward0.forward,
    permute=PermuteBackward0.forward, expand=ExpandBackward0.forward,
    squeeze=SqueezeBackward0.forward, unsqueeze=UnsqueezeBackward0.forward,
    alias=AliasBackward0.forward, cast=ToCopyBackward0.forward,
    diagonal=DiagonalBackward0.forward, unfold=UnfoldBackward0.forward,
    unfold_backward=UnfoldBackwardBackward0.forward,
)

__all__ = [
    "view", "reshape", "flatten", "unflatten", "ravel", "transpose", "swapaxes", "swapdims", "t",
    "adjoint", "permute", "movedim", "moveaxis", "expand", "broadcast_to", "broadcast_tensors",
    "broadcast_shapes", "squeeze", "unsqueeze", "clone", "unbind", "split", "chunk",
    "tensor_split", "diagonal",
]
XP = ["alias", "cast", "expand_as", "view_as", "reshape_as", "contiguous", "to",
      "type_as", "to_dtype_op", "unsafe_view", "squeeze_dims_", "matrix_t", "mT", "H", "mH",
      "unfold", "unfold_backward"]
_NOT_METHODS = ("broadcast_tensors", "broadcast_shapes", "split")
METHODS = {name: globals()[name] for name in __all__ if name not in _NOT_METHODS}
METHODS.update(view_as=view_as, reshape_as=reshape_as, expand_as=expand_as,
               contiguous=contiguous, to=to, type_as=type_as, unfold=unfold,
               split=_split_method, squeeze_=squeeze_, unsqueeze_=unsqueeze_, t_=t_,
               transpose_=transpose_, swapaxes_=transpose_, swapdims_=transpose_)
INPLACE: dict = {}
