"""Shape ops and views: view/reshape, transpose, permute, expand, squeeze, unsqueeze, and copies.

A view shares its base's memory and version counter. It also records how it was made, as
``(op name, args)`` steps from its base, so that an in-place op on it can rewrite the base's
history and a stale view can re-derive its grad_fn (``inplace.py``). Each step's name is a
function in both namespaces (``_array`` and ``ops``), so the same steps replay on arrays and on
tensors.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._dtypes import to_dtype
from .._tensor import Tensor, edge, make
from ..autograd.grad_mode import state
from ..autograd.graph import Node, next_seq
from ._core import asarray, ndarray, record, wrap_dim


def make_view(out: np.ndarray, x: Tensor, step: tuple, node) -> Tensor:
    """Wrap ``out`` (a NumPy view of ``x``'s array) as a view of ``x``, recording ``step``."""
    if node is not None:
        t = record(node, out, x)
    else:
        if out.__class__ is not ndarray:
            out = asarray(out)
        t = make(out)
    t._vc = x._vc
    t._inference = x._inference
    if not state.grad_enabled and x._rg:
        t.__dict__["_no_grad_view"] = True
    v = x._view
    if v is None:
        t._view = (x, (step,), x._grad_fn)
    else:
        base = v[0]
        t._view = (base, v[1] + (step,), base._grad_fn)
    return t


def _recording(x: Tensor) -> bool:
    return state.grad_enabled and (x._rg or (x._view is not None and x.requires_grad))


def parse_shape(args) -> tuple:
    """``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` all mean the shape (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    return tuple(int(s) for s in args)


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


class ViewBackward0(Node):
    def backward(self, xp, g):
        return xp.reshape(g, self._in_shape)


class UnsafeViewBackward0(ViewBackward0):
    pass


def view(input, *shape) -> Tensor:  # noqa: A002
    """The same memory seen with another shape; raises if the memory layout does not allow it.

    >>> import retrograd as torch
    >>> torch.arange(6).view(2, 3)
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        from .._dtypes import dtype as _dt

        if isinstance(shape[0], _dt):
            raise NotImplementedError("retrograd does not implement view(dtype)")
    a = input._data
    shape = _infer_shape(parse_shape(shape), a.size)
    try:
        out = np.reshape(a, shape, copy=False)
    except ValueError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    node = None
    if _recording(input):
        node = ViewBackward0()
        node._in_shape = a.shape
    return make_view(out, input, ("reshape", shape), node)


def reshape(input, *shape) -> Tensor:  # noqa: A002
    """``view`` when the memory allows it, otherwise a copy with the new shape.

    >>> import retrograd as torch
    >>> torch.arange(4).reshape(2, -1).shape
    retrograd.Size([2, 2])
    """
    a = input._data
    shape = _infer_shape(parse_shape(shape), a.size)
    try:
        out = np.reshape(a, shape, copy=False)
    except ValueError:
        # PyTorch copies (CloneBackward0) and then views the copy (UnsafeViewBackward0).
        c = clone(input)
        out = np.reshape(c._data, shape)
        if _recording(c):
            node = UnsafeViewBackward0()
            node._in_shape = a.shape
            return record(node, out, c)
        return make(out)
    node = None
    if _recording(input):
        node = ViewBackward0()
        node._in_shape = a.shape
    return make_view(out, input, ("reshape", shape), node)


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


class TransposeBackward0(Node):
    def backward(self, xp, g):
        return xp.transpose(g, self._d0, self._d1)


def transpose(input, dim0, dim1) -> Tensor:  # noqa: A002
    """Swap two dims (a view).

    >>> import retrograd as torch
    >>> torch.zeros(2, 3).transpose(0, 1).shape
    retrograd.Size([3, 2])
    """
    a = input._data
    n = a.ndim
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    out = np.swapaxes(a, d0, d1) if n else a.view()
    node = None
    if _recording(input):
        node = TransposeBackward0()
        node._d0, node._d1 = d0, d1
    return make_view(out, input, ("transpose", (d0, d1)), node)


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
    a = input._data
    n = a.ndim
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    node = None
    if _recording(input):
        node = TBackward0()
        node._2d = n == 2
    out = a.T if n == 2 else a.view()
    return make_view(out, input, ("transpose", (0, 1)) if n == 2 else ("alias", ()), node)


class PermuteBackward0(Node):
    def backward(self, xp, g):
        return xp.permute(g, self._inv)


def permute(input, *dims) -> Tensor:  # noqa: A002
    """Reorder dims (a view).

    >>> import retrograd as torch
    >>> torch.zeros(2, 3, 4).permute(2, 0, 1).shape
    retrograd.Size([4, 2, 3])
    """
    a = input._data
    dims = parse_shape(dims)
    if len(dims) != a.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {a.ndim} is not "
            f"equal to len(dims) = {len(dims)}"
        )
    dims = tuple(wrap_dim(d, a.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    out = np.transpose(a, dims)
    node = None
    if _recording(input):
        node = PermuteBackward0()
        node._inv = tuple(np.argsort(dims).tolist())
    return make_view(out, input, ("permute", (dims,)), node)


def matrix_t(input) -> Tensor:  # noqa: A002
    """``x.T``: all dims reversed."""
    n = input._data.ndim
    if n != 2:
        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to "
            "reverse the dimensions of a tensor.",
            UserWarning,
            stacklevel=2,
        )
    if n < 2:
        return input if n == 0 else permute(input, (0,))
    return permute(input, tuple(range(n - 1, -1, -1)))


def mT(input) -> Tensor:  # noqa: A002, N802
    n = input._data.ndim
    if n < 2:
        raise RuntimeError(
            f"tensor.mT is only supported on matrices or batches of matrices. Got {n}-D tensor."
        )
    return transpose(input, -2, -1)


class ExpandBackward0(Node):
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
            f"expand(torch.FloatTensor{{{list(a.shape)}}}, size={list(sizes)}): the number of "
            f"sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions "
            f"in the tensor ({a.ndim})"
        )
    shape = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                    "non-existing dimension 0"
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
    shape = tuple(shape)
    out = np.broadcast_to(a, shape)
    node = None
    if _recording(input):
        node = ExpandBackward0()
        node._in_shape = a.shape
    return make_view(out, input, ("expand", (shape,)), node)


def expand_as(input, other) -> Tensor:  # noqa: A002
    return expand(input, other._data.shape)


def broadcast_to(input, shape) -> Tensor:  # noqa: A002
    return expand(input, shape)


class SqueezeBackward0(Node):
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
    a = input._data
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
    node = None
    if _recording(input):
        node = cls()
        node._in_shape = a.shape
    return make_view(out, input, ("reshape", out.shape), node)


class SqueezeBackward4(SqueezeBackward0):
    pass


def squeeze_dims_(input, dim) -> Tensor:  # noqa: A002
    """``squeeze`` as PyTorch's in-place ``squeeze_(dims)`` records it (inside matmul)."""
    a = input._data
    out = np.squeeze(a, axis=dim) if a.shape[dim] == 1 else a.view()
    node = None
    if _recording(input):
        node = SqueezeBackward4()
        node._in_shape = a.shape
    return make_view(out, input, ("reshape", out.shape), node)


def unsafe_view(input, shape) -> Tensor:  # noqa: A002
    """A view of a fresh result (no view tracking), as PyTorch's ``_unsafe_view``."""
    out = input._data.reshape(shape)
    if _recording(input):
        node = UnsafeViewBackward0()
        node._in_shape = input._data.shape
        return record(node, out, input)
    return make(out)


class UnsqueezeBackward0(Node):
    def backward(self, xp, g):
        return xp.squeeze(g, self._dim)


def unsqueeze(input, dim) -> Tensor:  # noqa: A002
    """Insert a dim of size 1 at ``dim``.

    >>> import retrograd as torch
    >>> torch.zeros(2).unsqueeze(0).shape
    retrograd.Size([1, 2])
    """
    a = input._data
    d = wrap_dim(dim, a.ndim + 1)
    out = np.expand_dims(a, d)
    node = None
    if _recording(input):
        node = UnsqueezeBackward0()
        node._dim = d
    return make_view(out, input, ("unsqueeze", (d,)), node)


class AliasBackward0(Node):
    def backward(self, xp, g):
        return g


def alias(input) -> Tensor:  # noqa: A002
    """A view of the whole tensor (what ``x[...]`` returns)."""
    node = AliasBackward0() if _recording(input) else None
    return make_view(input._data.view(), input, ("alias", ()), node)


# -- copies ------------------------------------------------------------------------------------


class CloneBackward0(Node):
    def backward(self, xp, g):
        return g


def clone(input, *, memory_format=None) -> Tensor:  # noqa: A002
    """A copy with its own memory; gradients flow through it.

    >>> import retrograd as torch
    >>> torch.tensor([1., 2.]).clone()
    tensor([1., 2.])
    """
    out = input._data.copy()
    if _recording(input):
        return record(CloneBackward0(), out, input)
    return make(out)


def contiguous(input, memory_format=None) -> Tensor:  # noqa: A002
    """``input`` itself if its memory is C-contiguous, else a contiguous copy."""
    if input._data.flags.c_contiguous:
        return input
    return clone(input)


class ToCopyBackward0(Node):
    def backward(self, xp, g):
        return xp.cast(g, self._src)


def to_dtype_op(input, np_dtype) -> Tensor:  # noqa: A002
    """``input`` converted to a NumPy dtype; differentiable between floating dtypes."""
    a = input._data
    if a.dtype == np_dtype:
        return input
    out = a.astype(np_dtype)
    if _recording(input) and out.dtype.kind == "f":
        node = ToCopyBackward0()
        node._src = a.dtype
        return record(node, out, input)
    return make(out)


def to(input, *args, **kwargs) -> Tensor:  # noqa: A002
    """``to(dtype)``, ``to(other)``, ``to('cpu')``, ``to('cpu', dtype)``; copies only if needed.

    >>> import retrograd as torch
    >>> torch.tensor([1, 2]).to(torch.float32)
    tensor([1., 2.])
    """
    from .._tensor import device

    dt = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    dev = kwargs.pop("device", None)
    for a in args:
        if isinstance(a, Tensor):
            dt = a.dtype
        elif isinstance(a, (str, device)):
            dev = a
        elif a is not None and not isinstance(a, bool):
            dt = a
    if dev is not None:
        device(dev)
    r = input if dt is None else to_dtype_op(input, to_dtype(dt).np)
    if copy and r is input:
        r = clone(input)
    return r


def type_as(input, other) -> Tensor:  # noqa: A002
    return to_dtype_op(input, other._data.dtype)


class UnbindBackward0(Node):
    """One node for all the slices; missing gradients count as zeros."""

    _materialize = False

    def backward(self, xp, *grads):
        dim, shape = self._dim, self._in_shape
        first = next(g for g in grads if g is not None)
        parts = [xp.zeros_meta((shape[:dim] + shape[dim + 1:], first.dtype)) if g is None else g
                 for g in grads]
        return xp.stack(parts, dim)


def unbind(input, dim=0) -> tuple:  # noqa: A002
    """Split along ``dim`` into a tuple of views, one per index.

    >>> import retrograd as torch
    >>> torch.tensor([[1, 2], [3, 4]]).unbind(1)
    (tensor([1, 3]), tensor([2, 4]))
    """
    a = input._data
    if a.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    node = None
    if _recording(input):
        node = UnbindBackward0()
        node._dim, node._in_shape, node._n_out = d, a.shape, n
        node.next_functions = (edge(input),)
    outs = []
    lead = (slice(None),) * d
    for i in range(n):
        t = make_view(a[lead + (i, Ellipsis)], input, ("select", (d, i)), None)
        if node is not None:
            t._grad_fn, t._nr, t._rg = node, i, True
        outs.append(t)
    if node is not None:
        node._seq = next_seq()
    return tuple(outs)


def sum_to(g: Tensor, shape) -> Tensor:
    """Sum ``g`` down to ``shape`` (undoes broadcasting), differentiably."""
    from .reduction import sum as _sum

    gshape = g._data.shape
    if gshape == tuple(shape):
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + k for k, s in enumerate(shape) if s == 1 and gshape[lead + k] != 1
    )
    r = _sum(g, axes, True) if axes else g
    if lead:
        r = reshape(r, tuple(shape))
    return r


__all__ = [
    "view", "reshape", "flatten", "transpose", "swapaxes", "swapdims", "t", "permute",
    "expand", "broadcast_to", "squeeze", "unsqueeze", "clone", "unbind",
]
XP = ["alias", "sum_to", "expand_as", "view_as", "reshape_as", "contiguous", "to",
      "type_as", "to_dtype_op", "unsafe_view", "squeeze_dims_", "matrix_t", "mT"]
METHODS = {name: globals()[name] for name in __all__ if name != "broadcast_to"}
METHODS.update(view_as=view_as, reshape_as=reshape_as, expand_as=expand_as,
               contiguous=contiguous, to=to, type_as=type_as)
INPLACE: dict = {}
