"""Reductions: sum, mean, max/min, norm.

A reduction's backward spreads the gradient back over the reduced dimensions: ``keep_shape`` is
the output's shape with the reduced dimensions kept as 1, so ``expand(reshape(g, keep_shape),
input_shape)`` undoes it in either namespace.
"""

from __future__ import annotations

import numpy as np

from .. import return_types
from .._dtypes import F32, FLOAT_CHARS, FROM_NP, REDUCED, WIDE_CHARS, to_dtype, to_reduced
from .._tensor import Tensor
from ..autograd.graph import Node
from . import _array, decomp
from ._apply import apply, apply_multi, recording
from ._autocast import fp32
from ._base import check_grad_dtype, norm_dtype, not_implemented
from ._core import Signatures, arg_error, c_order, float_array, wrap, wrap_dim, wrap_dims
from .arithmetic import div
from .compare import maximum, minimum
from .shape import cast, permute, reshape, to_dtype_op, unsqueeze

# PyTorch's signatures, for its errors when arguments fit none (checked only after a failure).
_SUM = Signatures("sum", "Tensor input, *, torch.dtype? dtype = None",
                  "Tensor input, tuple of ints? dim, bool keepdim = False, *, torch.dtype? dtype "
                  "= None, Tensor? out = None")
_MEAN = Signatures("mean", "Tensor input, *, torch.dtype? dtype = None, Tensor? out = None",
                   "Tensor input, tuple of ints? dim, bool keepdim = False, *, torch.dtype? dtype "
                   "= None, Tensor? out = None")
_ARGMAX = Signatures("argmax", "Tensor input, int? dim = None, bool keepdim = False")
_ARGMIN = Signatures("argmin", "Tensor input, int? dim = None, bool keepdim = False")


def _keep_shape(shape, dims):
    if dims is None:
        return (1,) * len(shape)
    dims = (dims,) if isinstance(dims, int) else dims
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def numpy_names(dim, keepdim, axis, keepdims) -> tuple:
    """``(dim, keepdim)`` from NumPy's names ``axis=``/``keepdims=``, which PyTorch accepts
    too; the reductions call this only when one of them is given.

    >>> numpy_names(None, False, 1, True)
    (1, True)
    """
    return (axis if axis is not None else dim), (keepdims if keepdims is not None else keepdim)


def _norm_dims(dim, ndim):
    """``dim`` as a tuple of non-negative ints, or None for all (an empty tuple means all too)."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        d = wrap_dims(tuple(dim), ndim)
        if len(set(d)) != len(d):
            raise RuntimeError(f"dim {d[0]} appears multiple times in the list of dims")
        return d if ndim else ()  # a 0-d tensor takes dim 0 or -1, as PyTorch: nothing to reduce
    d = wrap_dims(dim, ndim)
    return (d,) if ndim else ()


_add_reduce = np.add.reduce


def _sum_array(x, dim=None, keepdim=False):
    return np.sum(x, axis=dim, keepdims=keepdim)


def _spread(xp, g, shape):
    """The 0-d gradient ``g`` broadcast to ``shape`` (a read-only view, as ``expand``'s). On
    arrays the view is made directly: ``np.broadcast_to`` costs several microseconds of Python
    per call, more than the rest of a small backward step."""
    if xp.TENSORS or not isinstance(g, (np.ndarray, np.generic)) or g.ndim:
        return xp.expand(g, shape)
    v = np.ndarray(shape, g.dtype, g, 0, (0,) * len(shape))
    v.flags.writeable = False
    return v


class SumBackward0(Node):
    """sum(): ``g`` (a scalar) spread over the input."""

    forward = staticmethod(np.sum)

    def backward(self, xp, g):
        return _spread(xp, g, self._in_shape)

    def jvp(self, xp, t):
        # Linear: the tangent is summed the same way (not forward mode's generic double-VJP,
        # which runs two small backward passes per call).
        return xp.sum(t)


class SumBackward1(Node):
    """sum over ``_dims`` (None: all): ``g`` with the reduced dims put back as 1, spread."""

    forward = staticmethod(_sum_array)

    def backward(self, xp, g):
        shape = self._in_shape
        return xp.expand(xp.reshape(g, _keep_shape(shape, self._dims)), shape)


_array.register(sum=SumBackward1.forward)


def sum(input, dim=None, keepdim=False,
        *, dtype=None, axis=None, keepdims=None) -> Tensor:  # noqa: A001, A002
    """Sum of all elements, or over ``dim``; bools and integers sum to int64.

    >>> import retrograd as torch
    >>> torch.tensor([[1., 2.], [3., 4.]]).sum(0)
    tensor([4., 6.])
    """
    try:
        if axis is not None or keepdims is not None:
            dim, keepdim = numpy_names(dim, keepdim, axis, keepdims)
        a = input._data
        if dtype is not None:
            check_grad_dtype(input, dtype)
            a = a.astype(to_dtype(dtype).np)
        elif a.dtype.kind in "biu":
            a = a.astype(np.int64)
        if a.dtype in REDUCED:  # float16/bfloat16 accumulate in float32, as PyTorch's kernels
            out = np.sum(a, axis=_norm_dims(dim, a.ndim), keepdims=keepdim, dtype=F32)
            with np.errstate(over="ignore"):  # float16 overflows to inf, as in PyTorch
                out = np.asarray(out).astype(a.dtype, order="C")
            if dim is None and not keepdim:
                return apply(SumBackward0, out, input, _in_shape=a.shape)
            return apply(SumBackward1, out, input, _in_shape=a.shape, _dims=_norm_dims(dim, a.ndim),
                         _g=(dim, keepdim))
        # np.add.reduce: the call np.sum makes on an array, without its Python wrappers (a few
        # microseconds, as much as a small reduction itself).
        # (in a's dtype: NumPy would sum bool and int8..int32 in int64; dtype= is exact)
        if dim is None and not keepdim:
            return apply(SumBackward0, _add_reduce(a, None, a.dtype), input, _in_shape=a.shape)
        dims = _norm_dims(dim, a.ndim)
        out = c_order(_add_reduce(a, dims, a.dtype, None, keepdim))  # (PyTorch's layout)
        return apply(SumBackward1, out, input, _in_shape=a.shape, _dims=dims, _g=(dim, keepdim))
    except (AttributeError, TypeError):
        _SUM.check(input, dim, keepdim, dtype=dtype)
        raise


class MeanBackward0(Node):
    def backward(self, xp, g):
        return _spread(xp, g / self._n, self._in_shape)


class MeanBackward1(Node):
    def backward(self, xp, g):
        shape = self._in_shape
        return xp.expand(xp.reshape(g / self._n, _keep_shape(shape, self._dims)), shape)


def mean(input, dim=None, keepdim=False,
         *, dtype=None, axis=None, keepdims=None) -> Tensor:  # noqa: A002
    """Mean of all elements, or over ``dim``.

    >>> import retrograd as torch
    >>> torch.tensor([1., 2., 3., 6.]).mean()
    tensor(3.)
    """
    try:
        if axis is not None or keepdims is not None:
            dim, keepdim = numpy_names(dim, keepdim, axis, keepdims)
        a = input._data
        if dtype is not None:
            a = a.astype(to_dtype(dtype).np)
        if a.dtype.char not in FLOAT_CHARS:
            raise RuntimeError(
                f"mean(): could not infer output dtype. {'Input' if dtype is None else 'Optional'}"
                " dtype must be either a floating point or complex dtype. Got: "
                f"{FROM_NP[a.dtype].scalar_name}"
            )
        dims = _norm_dims(dim, a.ndim)
        if a.size == 0:
            # NaN where nothing is averaged, as PyTorch (NumPy would warn).
            n = 1
            for d in (dims if dims is not None else range(a.ndim)):
                n *= a.shape[d]
            with np.errstate(invalid="ignore", divide="ignore"):
                out = np.asarray(np.sum(a, axis=dims, keepdims=keepdim) / a.dtype.type(n), a.dtype)
        elif a.dtype in REDUCED:  # accumulated in float32, as PyTorch's kernels
            out = np.asarray(np.mean(a, axis=dims, keepdims=keepdim, dtype=F32)).astype(a.dtype)
            n = 1
            for d in (dims if dims is not None else range(a.ndim)):
                n *= a.shape[d]
        elif dim is None and not keepdim:
            out = np.mean(a, dtype=a.dtype)
            n = a.size
        else:
            out = np.mean(a, axis=dims, keepdims=keepdim, dtype=a.dtype)
            n = 1
            for d in (dims if dims is not None else range(a.ndim)):
                n *= a.shape[d]
        if dim is None and not keepdim:
            return apply(MeanBackward0, c_order(out), input, _in_shape=a.shape, _n=n)
        return apply(MeanBackward1, c_order(out), input, _in_shape=a.shape, _n=n, _dims=dims,
                     _g=(dim, keepdim))
    except (AttributeError, TypeError):
        _MEAN.check(input, dim, keepdim, dtype=dtype)
        raise


def count_like(xp, mask, dims, g):
    """How many elements of ``mask`` hold over ``dims`` (kept), in ``g``'s float dtype."""
    if xp.TENSORS:
        # The mask is not differentiable: its count is a constant of g's dtype.
        return np.sum(mask._data, axis=dims, keepdims=True).astype(g._data.dtype)
    return np.sum(mask, axis=dims, keepdims=True).astype(g.dtype)


class _EvenlyDistributed(Node):
    """max()/min()/amax/amin/median(): the gradient is shared evenly among the tied elements.

    ``_keep`` (the output's shape with reduced dims kept as 1, or None when no reshape is
    needed) and ``_dims`` (all reduced dims) describe the reduction.
    """

    _keep = None
    _dims = None

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        y = self.saved_output(xp.TENSORS)
        if self._keep is not None:
            g = xp.reshape(g, self._keep)
            y = xp.reshape(y, self._keep)
        mask = x == y
        dims = self._dims if self._dims is not None else tuple(range(len(x.shape)))
        return xp.where(mask, g / count_like(xp, mask, dims, g), 0.0)


class MaxBackward1(_EvenlyDistributed):
    pass


class MinBackward1(_EvenlyDistributed):
    pass


class AmaxBackward0(_EvenlyDistributed):
    pass


class AminBackward0(_EvenlyDistributed):
    pass


class _ValueSelecting(Node):
    """max/min with a dim: the gradient goes to the selected index only.

    Its outputs are ``(values, indices)`` (``_VALUES`` says which are differentiable); the
    indices never get a gradient, and none is made up for them."""

    _materialize = False
    _keeps = False
    # PyTorch saves the indices output (squeezed where keepdim is False): saved_hooks.py
    _packs = (("_idx", lambda n, i: i if n._keepdim or not i.ndim else np.squeeze(i, n._dim),
               lambda n, i: i if n._keepdim or not n._in_shape else np.expand_dims(i, n._dim)),)

    def backward(self, xp, g, g_idx=None):
        if self._keeps:  # (cummax/cummin keep their input: version-checked, as PyTorch's)
            self.saved(False)
        idx = self._idx  # (read first: under saved-tensor hooks this unpacks it, as PyTorch's)
        if len(self._in_shape) == 0:
            return g
        if not self._keepdim:
            g = xp.unsqueeze(g, self._dim)
        return xp.scatter_along(g, idx, self._dim, self._in_shape)


_VALUES = (True, False)


class MaxBackward0(_ValueSelecting):
    pass


class MinBackward0(_ValueSelecting):
    pass


def _max_min(input, dim, keepdim, is_max, other=None):
    if other is not None:
        return maximum(input, other) if is_max else minimum(input, other)
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("max" if is_max else "min", "input", 1, input) from None
    name = "max" if is_max else "min"
    if dim is None:
        if a.size == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        out = np.max(a) if is_max else np.min(a)
        return apply(MaxBackward1 if is_max else MinBackward1, c_order(out), input, save=(input,),
                     save_out=True)
    d = wrap_dims(dim, a.ndim)
    if a.ndim == 0:
        idx = np.zeros((), np.int64)
        vals = a.copy()
    else:
        if a.shape[d] == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim {d} to have non-zero size."
            )
        idx = (np.argmax(a, axis=d, keepdims=True) if is_max
               else np.argmin(a, axis=d, keepdims=True))
        vals = c_order(np.take_along_axis(a, idx, axis=d))
        if not keepdim:
            vals = np.squeeze(vals, axis=d)
    indices = c_order(idx if keepdim or a.ndim == 0 else np.squeeze(idx, axis=d))
    res = apply_multi(MaxBackward0 if is_max else MinBackward0, (vals, indices), (input,),
                      differentiable=_VALUES, save=(), _idx=idx if a.ndim else idx.reshape(()),
                      _dim=d,
                      _keepdim=keepdim or a.ndim == 0, _in_shape=a.shape, _g=(dim, keepdim))
    return (return_types.max if is_max else return_types.min)(res)


def max(input, dim=None, keepdim=False,
        *, other=None, axis=None, keepdims=None):  # noqa: A001, A002
    """The largest element, or ``(values, indices)`` along ``dim``.

    >>> import retrograd as torch
    >>> torch.tensor([[1., 5.], [7., 2.]]).max(1)
    retrograd.return_types.max(
    values=tensor([5., 7.]),
    indices=tensor([1, 0]))
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("max_all" if dim is None else "max_cpu",
                              input._data.dtype)  # uint16/32/64
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(dim, keepdim, axis, keepdims)
    if isinstance(dim, Tensor):
        return _max_min(input, None, keepdim, True, other=dim)
    return _max_min(input, dim, keepdim, True, other)


def min(input, dim=None, keepdim=False,
        *, other=None, axis=None, keepdims=None):  # noqa: A001, A002
    """The smallest element, or ``(values, indices)`` along ``dim``.

    >>> import retrograd as torch
    >>> torch.tensor([3., 1., 2.]).min()
    tensor(1.)
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("min_all" if dim is None else "min_cpu",
                              input._data.dtype)  # uint16/32/64
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(dim, keepdim, axis, keepdims)
    if isinstance(dim, Tensor):
        return _max_min(input, None, keepdim, False, other=dim)
    return _max_min(input, dim, keepdim, False, other)


def dtype_name(dt) -> str:
    """PyTorch's scalar-type name of a NumPy dtype, as its error messages print it."""
    return FROM_NP[dt].scalar_name


def _reduced_dims(dims, ndim):
    return tuple(range(ndim)) if dims is None else dims


def _check_nonempty(name, a, dims, given=None):
    """PyTorch's errors for a reduction over an empty dim; it names the dim as given."""
    if dims is not None and given is not None:
        for g in (given if isinstance(given, (tuple, list)) else (given,)):
            if a.shape[g % (a.ndim or 1)] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {g} to have non-zero size.")
        return
    if dims is None:
        if a.size == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        return
    for d in dims:
        if a.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def argmax(input, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:  # noqa: A002
    """Index of the largest element (of the flattened tensor, or along ``dim``).

    >>> import retrograd as torch
    >>> torch.tensor([[1., 5.], [7., 2.]]).argmax(1)
    tensor([1, 0])
    """
    return _arg_op(input, dim, keepdim, axis, keepdims, np.argmax, _ARGMAX)


def argmin(input, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:  # noqa: A002
    """Index of the smallest element (of the flattened tensor, or along ``dim``).

    >>> import retrograd as torch
    >>> torch.tensor([3., 1., 2.]).argmin()
    tensor(1)
    """
    return _arg_op(input, dim, keepdim, axis, keepdims, np.argmin, _ARGMIN)


def _arg_op(input, dim, keepdim, axis, keepdims, fn, sig):  # noqa: A002
    """argmax/argmin: PyTorch's checks and NumPy's argument names, then ``_arg``."""
    name = sig.name
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented(f"{name}_cpu", input._data.dtype)  # uint16/32/64
    if input.__class__ is Tensor and input._data.dtype == np.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    try:
        if axis is not None or keepdims is not None:
            dim, keepdim = numpy_names(dim, keepdim, axis, keepdims)
        return _arg(input, dim, keepdim, fn, name)
    except (AttributeError, TypeError):
        sig.check(input, dim, keepdim)
        raise


def _arg(input, dim, keepdim, fn, name):  # noqa: A002
    a = input._data
    if dim is None:
        if a.size == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
            )
        out = np.asarray(fn(a), dtype=np.int64)
        if keepdim:
            out = out.reshape((1,) * a.ndim)
        return wrap(c_order(out))
    d = wrap_dims(dim, a.ndim)
    if a.ndim == 0:
        return wrap(np.zeros((), np.int64))
    if a.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return wrap(c_order(fn(a, axis=d, keepdims=keepdim).astype(np.int64)))


# -- amax / amin / aminmax ---------------------------------------------------------------------


def _amax_amin(input, dim, keepdim, is_max):  # noqa: A002
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("amax" if is_max else "amin", "input", 1, input) from None
    name = "amax" if is_max else "amin"
    dims = _norm_dims(dim, a.ndim)
    if a.ndim == 0:
        dims = None
    _check_nonempty(name, a, dims, dim)
    fn = np.max if is_max else np.min
    out = np.asarray(fn(a, axis=dims, keepdims=keepdim))
    rdims = _reduced_dims(dims, a.ndim)
    return apply(AmaxBackward0 if is_max else AminBackward0, c_order(out), input, save=(input,),
                 save_out=True, _dims=rdims, _g=dim,
                 _keep=None if keepdim else _keep_shape(a.shape, rdims))


def amax(input, dim=(), keepdim=False, *, axis=None, keepdims=None) -> Tensor:  # noqa: A002
    """The largest values over ``dim`` (all dims by default); ties share the gradient evenly.

    >>> import retrograd as torch
    >>> torch.tensor([[1., 5.], [7., 2.]]).amax(0)
    tensor([7., 5.])
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("max_values_cpu", input._data.dtype)  # uint16/32/64
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(dim, keepdim, axis, keepdims)
    return _amax_amin(input, dim, keepdim, True)


def amin(input, dim=(), keepdim=False, *, axis=None, keepdims=None) -> Tensor:  # noqa: A002
    """The smallest values over ``dim`` (all dims by default); ties share the gradient evenly.

    >>> import retrograd as torch
    >>> torch.tensor([[1., 5.], [7., 2.]]).amin(1)
    tensor([1., 2.])
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("min_values_cpu", input._data.dtype)  # uint16/32/64
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(dim, keepdim, axis, keepdims)
    return _amax_amin(input, dim, keepdim, False)


class AminmaxBackward0(decomp._MultiOut):
    """Both outputs' gradients, each shared evenly among its tied elements (masks fixed at
    forward time: they do not depend differentiably on the input). Keeps its input and both
    outputs, as PyTorch's node does (version-checked here; its formula reads the masks)."""

    _n_out = 2
    _packs = (0, "=min", "=max")  # PyTorch's saves, in its order (saved_hooks.py)

    def backward(self, xp, g_min, g_max):
        self.saved(False)
        self.outputs(xp)
        keep = self._keep
        out = None
        for g, mask, cnt in ((g_min, self._mask_min, self._cnt_min),
                             (g_max, self._mask_max, self._cnt_max)):
            if g is None:
                continue
            if keep is not None:
                g = xp.reshape(g, keep)
            part = xp.where(mask, g / cnt, 0.0)
            out = part if out is None else out + part
        return out


def aminmax(input, *, dim=None, keepdim=False):  # noqa: A002
    """``(min, max)`` of the tensor, or over ``dim``.

    >>> import retrograd as torch
    >>> torch.aminmax(torch.tensor([3., 1., 2.]))
    retrograd.return_types.aminmax(
    min=tensor(1.),
    max=tensor(3.))
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("aminmax_cpu", input._data.dtype)  # uint16/32/64
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("aminmax", "input", 1, input) from None
    if dim is not None and not isinstance(dim, int):
        raise arg_error("aminmax", "dim", None, dim, "int")
    if dim is None or a.ndim == 0:
        dims = None
        if a.size == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation "
                "has no identity."
            )
    else:
        dims = (wrap_dim(dim, a.ndim),)
        if a.shape[dims[0]] == 0:
            raise IndexError(
                f"aminmax: Expected reduction dim {dims[0]} to have non-zero size."
            )
    lo = c_order(np.asarray(np.min(a, axis=dims, keepdims=keepdim)))
    hi = c_order(np.asarray(np.max(a, axis=dims, keepdims=keepdim)))
    attrs = {}
    if recording(input):
        # The masks and counts are made only for a backward that will read them.
        rdims = _reduced_dims(dims, a.ndim)
        keep = _keep_shape(a.shape, rdims)
        mask_min = a == lo.reshape(keep)
        mask_max = a == hi.reshape(keep)
        attrs = {
            "_keep": None if keepdim else keep, "_mask_min": mask_min, "_mask_max": mask_max,
            "_cnt_min": np.sum(mask_min, axis=rdims, keepdims=True).astype(a.dtype),
            "_cnt_max": np.sum(mask_max, axis=rdims, keepdims=True).astype(a.dtype),
        }
    res = apply_multi(AminmaxBackward0, (lo, hi), (input,), differentiable=(True, True),
                      _g=(dim, keepdim), save=(input,), **attrs)
    node = res[0]._grad_fn
    if node is not None:
        node.keep([t._data for t in res], [t._vc for t in res])
    return return_types.aminmax(res)


# -- nansum / nanmean / prod -------------------------------------------------------------------


class NansumBackward0(Node):
    def backward(self, xp, g):
        self.saved(False)  # (version-checks the kept input, as PyTorch's node does)
        if self._keep is not None:
            g = xp.reshape(g, self._keep)
        return xp.where(self._nan, 0.0, xp.expand(g, self._in_shape))


def _sum_dtype(input, dtype):  # noqa: A002
    a = input._data
    check_grad_dtype(input, dtype)
    if dtype is not None:
        return a.astype(to_dtype(dtype).np)
    if a.dtype.kind in "biu":
        return a.astype(np.int64)
    return a


def nansum(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:  # noqa: A002
    """Sum treating NaN as zero.

    >>> import retrograd as torch
    >>> torch.tensor([1., float('nan'), 2.]).nansum()
    tensor(3.)
    """
    a = _sum_dtype(input, dtype)
    dims = _norm_dims(dim, a.ndim)
    nan = np.isnan(a) if a.dtype.char in FLOAT_CHARS else np.zeros(a.shape, bool)
    acc = F32 if a.dtype in REDUCED else None  # float16/bfloat16 accumulate in float32, as sum
    with np.errstate(over="ignore"):
        out = np.asarray(np.sum(np.where(nan, 0, a), axis=dims, keepdims=keepdim, dtype=acc),
                         dtype=a.dtype, order="C")
    return apply(NansumBackward0, out, input, save=(input,), _nan=nan, _in_shape=a.shape, _g=dim,
                 _keep=None if keepdim else _keep_shape(a.shape, _reduced_dims(dims, a.ndim)))


def nanmean(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:  # noqa: A002
    """Mean of the non-NaN elements.

    >>> import retrograd as torch
    >>> torch.tensor([1., float('nan'), 2.]).nanmean()
    tensor(1.5000)
    """
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("nanmean", "input", 1, input) from None
    if a.dtype.char not in FLOAT_CHARS:  # (also with a dtype=, as PyTorch checks first)
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{dtype_name(a.dtype)}"
        )
    if dtype is not None and to_dtype(dtype).np.char not in FLOAT_CHARS:
        raise RuntimeError(
            "nanmean(): could not infer output dtype. Optional dtype must be either a floating "
            f"point or complex dtype. Got: {to_dtype(dtype).scalar_name}")
    count = wrap(np.sum(~np.isnan(a), axis=_norm_dims(dim, a.ndim), keepdims=keepdim))
    # NOTE: a composite, as PyTorch's (its grad_fn is DivBackward0).
    return div(nansum(input, dim, keepdim, dtype=dtype), count)


def _prod_others_np(x, out_keep, d):
    """The product of all other elements along ``d``, exact where ``x`` has zeros."""
    zero = x == 0
    if not zero.any():
        return out_keep / x
    cnt = np.sum(zero, axis=d, keepdims=True)
    safe = np.where(zero, 1, x)
    nz_prod = np.prod(safe, axis=d, keepdims=True)
    return np.where(cnt == 0, out_keep / safe, np.where((cnt == 1) & zero, nz_prod, 0))


def _prod_others_tensor(xp, x, d):
    """The same, differentiably, with zeros present: the product along ``d`` of ``x`` with
    each position in turn replaced by one (n x n; only second and higher orders get here)."""
    n = x.shape[d]
    xt = xp.transpose(x, d, -1)
    rows = xp.where(np.eye(n, dtype=bool), 1.0, xp.unsqueeze(xt, -2))
    return xp.transpose(xp.prod(rows, -1), d, -1)


def _prod_array(x, dim=None, keepdim=False):
    return np.prod(x, axis=dim, keepdims=keepdim)


class _ProdBackward(Node):
    forward = staticmethod(_prod_array)

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        out = self.saved_output(xp.TENSORS)
        d = self._dim
        shape = x.shape
        if d is None:
            if len(shape) == 0:
                return g
            x = xp.reshape(x, (-1,))
            d = 0
        else:
            if len(shape) == 0:
                return g
            if not self._keepdim:
                g = xp.unsqueeze(g, d)
                out = xp.unsqueeze(out, d)
        if not xp.TENSORS:
            if out.ndim < x.ndim:
                out = np.reshape(out, (1,) * x.ndim)
            r = g * _prod_others_np(x, out, d)
        elif not (x._data == 0).any():
            r = g * (out / x)
        else:
            r = g * _prod_others_tensor(xp, x, d)
        return xp.reshape(r, shape) if self._dim is None else r


class ProdBackward0(_ProdBackward):
    pass


class ProdBackward1(_ProdBackward):
    pass


@fp32
def prod(input, dim=None, keepdim=False,
         *, dtype=None, axis=None, keepdims=None) -> Tensor:  # noqa: A002
    """Product of all elements, or along ``dim``; bools and integers give int64.

    >>> import retrograd as torch
    >>> torch.tensor([[1., 2.], [3., 4.]]).prod(1)
    tensor([ 2., 12.])
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(dim, keepdim, axis, keepdims)
    check_grad_dtype(input, dtype)
    if dtype is not None and input.requires_grad and input._data.dtype != to_dtype(dtype).np:
        # Cast differentiably first: the saved input must lead back to ``input``.
        input = cast(input, to_dtype(dtype).np)  # noqa: A001
    a = _sum_dtype(input, dtype)
    if dim is None:
        out = np.asarray(np.prod(a), dtype=a.dtype)  # (NumPy's is int64 for small ints)
        node_cls = ProdBackward0
        d = None
    else:
        if not isinstance(dim, int):
            raise TypeError(
                f"prod(): argument 'dim' must be int, not {type(dim).__name__}"
            )
        d = wrap_dim(dim, a.ndim)
        if a.ndim == 0:
            out = a.copy()
        else:
            out = np.asarray(np.prod(a, axis=d, keepdims=keepdim)).astype(a.dtype, copy=False)
        node_cls = ProdBackward1
    # Recording needs a float input, and then ``a`` is ``input``'s own array (a ``dtype`` was
    # applied differentiably above), so the formula reads ``input``.
    return apply(node_cls, c_order(out), input, save=(input,), save_out=True, _dim=d,
                 _keepdim=keepdim, _g=dim)


_array.register(prod=_ProdBackward.forward)


# -- var / std ---------------------------------------------------------------------------------


def _var_args(name, a, dim, unbiased, keepdim, correction):
    if a.dtype.char not in FLOAT_CHARS:
        raise RuntimeError(f"{name if name.endswith('_mean') else 'std and var'} only support "
                           "floating point and complex dtypes")
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    elif unbiased is not None:
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got both 'unbiased' "
            "and 'correction'"
        )
    dims = _norm_dims(dim, a.ndim)
    if a.ndim == 0:
        dims = None
    rdims = _reduced_dims(dims, a.ndim)
    n = 1
    for d in rdims:
        n *= a.shape[d]
    return dims, rdims, n, correction


def _var_np(a, dims, keepdim, correction, n):
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.mean(a, axis=dims, keepdims=True) if a.size else np.full(  # (NaN: no elements)
            _keep_shape(a.shape, _reduced_dims(dims, a.ndim)), np.nan, a.dtype)
        dev = a - m
        ss = np.sum(dev * dev, axis=dims, keepdims=keepdim)
        var = np.asarray(ss / a.dtype.type(n - correction if n > correction else 0), dtype=a.dtype)
        mean = m if keepdim else np.asarray(m.reshape(var.shape))
    return c_order(var), c_order(mean.astype(a.dtype, copy=False))


def _var_grad(xp, x, g_var, rdims, n, correction):
    if not xp.TENSORS and x.dtype in REDUCED:
        # PyTorch's var_backward step by step: (2 / dof) * grad (the number kept in float32),
        # times (x - mean(x)), each op rounded to the dtype
        rd = x.dtype
        centered = x - np.mean(x, axis=rdims, keepdims=True, dtype=F32).astype(rd)
        coef = F32.type(2.0 / (n - correction)) if n - correction > 0 else F32.type(np.inf)
        with np.errstate(invalid="ignore", over="ignore"):
            return (coef * np.asarray(g_var).astype(F32)).astype(rd) * centered
    centered = x - xp.sum(x, rdims, True) / n
    return g_var * centered * (2.0 / (n - correction) if n - correction > 0 else float("inf"))


class _VarStdBackward(Node):
    """var, std, var_mean, std_mean: the gradient of the (first) output, plus the mean's."""

    _n_out = 1
    _materialize = False
    _std = False

    def backward(self, xp, g, g_mean=None):
        (x,) = self.saved(xp.TENSORS)
        keep = self._keep
        total = None
        if g is not None:
            if keep is not None:
                g = xp.reshape(g, keep)
            if self._std:
                s = self.saved_output(xp.TENSORS)
                if keep is not None:
                    s = xp.reshape(s, keep)
                if not xp.TENSORS and s.dtype in REDUCED:  # grad / (result * 2) in the dtype
                    with np.errstate(divide="ignore", invalid="ignore"):
                        g = np.where(s == 0, np.zeros((), s.dtype), g / (s + s))
                else:
                    g = xp.where(s == 0, 0.0, g / (2.0 * xp.where(s == 0, 1.0, s)))
            total = _var_grad(xp, x, g, self._rdims, self._n, self._correction)
        if g_mean is not None:
            if keep is not None:
                g_mean = xp.reshape(g_mean, keep)
            gm = xp.expand(g_mean / self._n, x.shape)
            total = gm if total is None else total + gm
        return total


class VarBackward0(_VarStdBackward):
    pass


class StdBackward0(_VarStdBackward):
    _std = True


class VarMeanBackward0(_VarStdBackward):
    _n_out = 2


class StdMeanBackward0(_VarStdBackward):
    _n_out = 2
    _std = True


def _var_std(name, input, dim, unbiased, keepdim, correction, std, with_mean):  # noqa: A002
    a = input._data
    # (what PyTorch's node keeps: the correction as given, None when nothing was)
    given = (dim, correction if correction is not None else None if unbiased is None and dim
             is None else int(unbiased is not False))
    dims, rdims, n, correction = _var_args(name, a, dim, unbiased, keepdim, correction)
    if a.dtype in REDUCED:  # float16/bfloat16: computed wide and rounded once, as PyTorch's
        var, mean = _var_np(a.astype(np.float64), dims, keepdim, correction, n)
        out = to_reduced(np.sqrt(var) if std else var, a.dtype)
        mean = to_reduced(mean, a.dtype)
    else:
        var, mean = _var_np(a, dims, keepdim, correction, n)
        out = np.sqrt(var) if std else var
    keep = None if keepdim else _keep_shape(a.shape, rdims)
    if not with_mean:
        return apply(StdBackward0 if std else VarBackward0, c_order(out), input, save=(input,),
                     save_out=std, _rdims=rdims, _n=n, _correction=correction, _keep=keep,
                     _g=given)
    r, m = apply_multi(StdMeanBackward0 if std else VarMeanBackward0, (out, mean), (input,),
                       differentiable=(True, True), save=(input,), _rdims=rdims, _n=n,
                       _correction=correction, _keep=keep, _g=given)
    if std and r.grad_fn is not None:
        r.grad_fn.save_output(r)  # std's formula reads it (apply_multi saves no output)
    return r, m


def var(input, dim=None, unbiased=None, keepdim=False,
        *, correction=None, axis=None, keepdims=None) -> Tensor:  # noqa: A002
    """Variance over ``dim`` with Bessel's ``correction`` (1 unless ``unbiased=False``).

    >>> import retrograd as torch
    >>> torch.tensor([1., 2., 3., 4.]).var()
    tensor(1.6667)
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(dim, keepdim, axis, keepdims)
    return _var_std("var", input, dim, unbiased, keepdim, correction, False, False)


def std(input, dim=None, unbiased=None, keepdim=False,
        *, correction=None, axis=None, keepdims=None) -> Tensor:  # noqa: A002
    """Standard deviation over ``dim`` with Bessel's ``correction``.

    >>> import retrograd as torch
    >>> torch.tensor([1., 3.]).std()
    tensor(1.4142)
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(dim, keepdim, axis, keepdims)
    return _var_std("std", input, dim, unbiased, keepdim, correction, True, False)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    """``(var, mean)`` over ``dim``.

    >>> import retrograd as torch
    >>> torch.var_mean(torch.tensor([1., 3.]))
    (tensor(2.), tensor(2.))
    """
    return _var_std("var_mean", input, dim, unbiased, keepdim, correction, False, True)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    """``(std, mean)`` over ``dim``.

    >>> import retrograd as torch
    >>> torch.std_mean(torch.tensor([1., 3.]), correction=0)
    (tensor(1.), tensor(2.))
    """
    return _var_std("std_mean", input, dim, unbiased, keepdim, correction, True, True)


# -- logsumexp ---------------------------------------------------------------------------------


class LogsumexpBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        out = self.saved_output(xp.TENSORS)
        if self._keep is not None:
            g = xp.reshape(g, self._keep)
            out = xp.reshape(out, self._keep)
        return g * xp.exp(x - out)


def logsumexp(input, dim, keepdim=False) -> Tensor:  # noqa: A002
    """``log(sum(exp(x)))`` over ``dim``, computed without overflow.

    >>> import retrograd as torch
    >>> torch.tensor([0., 0.]).logsumexp(0)
    tensor(0.6931)
    """
    a = float_array(input)
    dims = _norm_dims(dim, a.ndim)
    if a.ndim == 0:
        dims = None
    rdims = _reduced_dims(dims, a.ndim)
    if a.size:
        m = np.max(a, axis=dims, keepdims=True)
        m = np.where(np.isfinite(m), m, 0).astype(a.dtype, copy=False)
    else:
        m = np.zeros(_keep_shape(a.shape, rdims), a.dtype)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - m), axis=dims, keepdims=True)) + m
    if not keepdim:
        out = out.reshape(tuple(s for i, s in enumerate(a.shape) if i not in rdims))
    out = np.asarray(out, dtype=a.dtype)
    return apply(LogsumexpBackward0, c_order(out), input, save=(input,), save_out=True, _g=dim,
                 _keep=None if keepdim else _keep_shape(a.shape, rdims))


# -- all / any / count_nonzero -----------------------------------------------------------------


def _logical_reduce(fn, input, dim, keepdim):  # noqa: A002
    a = input._data
    dims = _norm_dims(dim, a.ndim)
    if a.ndim == 0:
        dims = None
    out = np.asarray(fn(a, axis=dims, keepdims=keepdim))
    # PyTorch keeps uint8 for uint8 inputs; everything else gives bool.
    return wrap(c_order(out.astype(np.uint8) if a.dtype == np.uint8 else out))


def all(input, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:  # noqa: A001, A002
    """Whether all elements (over ``dim``) are nonzero.

    >>> import retrograd as torch
    >>> torch.tensor([1, 0]).all()
    tensor(False)
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(dim, keepdim, axis, keepdims)
    return _logical_reduce(np.all, input, dim, keepdim)


def any(input, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:  # noqa: A001, A002
    """Whether any element (over ``dim``) is nonzero.

    >>> import retrograd as torch
    >>> torch.tensor([[0, 0], [0, 1]]).any(1)
    tensor([False,  True])
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(dim, keepdim, axis, keepdims)
    return _logical_reduce(np.any, input, dim, keepdim)


def count_nonzero(input, dim=None) -> Tensor:  # noqa: A002
    """How many elements (over ``dim``) are nonzero, as int64.

    >>> import retrograd as torch
    >>> torch.tensor([[0., 1.], [2., 3.]]).count_nonzero(0)
    tensor([1, 2])
    """
    if input.__class__ is Tensor and input._data.dtype.char in WIDE_CHARS:
        raise not_implemented("nonzero_count_cpu", input._data.dtype)  # uint16/32/64
    try:
        a = input._data
    except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
        raise arg_error("count_nonzero", "input", 1, input) from None
    dims = _norm_dims(dim, a.ndim)
    if a.ndim == 0:
        dims = None
    return wrap(c_order(np.asarray(np.count_nonzero(a, axis=dims), dtype=np.int64)))


# -- norms -------------------------------------------------------------------------------------


class LinalgVectorNormBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        n = self.saved_output(xp.TENSORS)
        p = self._p
        keep = self._keep
        if keep is not None:
            g = xp.reshape(g, keep)
            n = xp.reshape(n, keep)
        if p == 0:
            return g * (x * 0)
        if p == 1:
            return g * xp.sign(x)
        if p == 2:
            # x / ||x||, and 0 where the norm is 0 (PyTorch's subgradient).
            return g * xp.where(n == 0, 0.0, x / xp.where(n == 0, 1.0, n))
        if p == INF or p == -INF:
            mask = xp.abs(x) == n
            dims = self._dims if self._dims is not None else tuple(range(len(x.shape)))
            return xp.sign(x) * xp.where(mask, g / count_like(xp, mask, dims, g), 0.0)
        ax = xp.abs(x)
        if p < 1:
            # |x|^(p-1) is infinite at 0; PyTorch takes 0 there.
            zero = x == 0
            scaled = xp.sign(x) * xp.where(zero, 0.0, xp.pow(xp.where(zero, 1.0, ax), p - 1))
            return scaled * g * xp.pow(n, 1 - p)
        scale = xp.where(n == 0, 0.0, g / xp.pow(xp.where(n == 0, 1.0, n), p - 1))
        if p < 2:
            return xp.sign(x) * xp.pow(ax, p - 1) * scale
        return x * xp.pow(ax, p - 2) * scale


INF = float("inf")



def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None) -> Tensor:  # noqa: A002
    """The ``ord``-norm of ``x`` flattened, or over ``dim`` (an int or a tuple of ints).

    >>> import retrograd as torch
    >>> torch.linalg.vector_norm(torch.tensor([3., 4.]))
    tensor(5.)
    """
    a = x._data
    if isinstance(ord, str) or not isinstance(ord, (int, float, np.number)):
        raise TypeError(
            "linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
            f"{type(ord).__name__}"
        )
    if a.dtype.char not in FLOAT_CHARS:
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            + dtype_name(a.dtype)
        )
    if dtype is not None and a.dtype != to_dtype(dtype).np:
        # Computed in ``dtype``, recorded on ``x`` itself as PyTorch's (no cast node; the
        # saved input is ``x``, the gradient is rounded to its dtype by the engine).
        a = a.astype(norm_dtype(a.dtype, dtype).np)
    dims = _norm_dims(dim, a.ndim)
    if a.ndim == 0:
        dims = None
    p = float(ord)
    if p < 0 or p == INF:
        if a.size == 0 and (dims is None or np.any([a.shape[d] == 0 for d in dims])):
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because "
                "the operation does not have an identity"
            )
    # float16/bfloat16 norms are computed in float32 and rounded once, as PyTorch's kernels
    # (a float16 sum of squares overflows long before the norm does)
    ax = np.abs(a if a.dtype not in REDUCED else a.astype(F32))
    with np.errstate(divide="ignore", over="ignore"):
        if p == 2:
            out = np.sqrt(np.sum(ax * ax, axis=dims, keepdims=keepdim))
        elif p == INF:
            out = np.max(ax, axis=dims, keepdims=keepdim)
        elif p == -INF:
            out = np.min(ax, axis=dims, keepdims=keepdim)
        elif p == 0:
            out = np.sum(ax != 0, axis=dims, keepdims=keepdim)
        elif p == 1:
            out = np.sum(ax, axis=dims, keepdims=keepdim)
        else:
            out = np.power(np.sum(np.power(ax, p), axis=dims, keepdims=keepdim), 1.0 / p)
    out = c_order(np.asarray(out).astype(a.dtype, copy=False))
    return apply(LinalgVectorNormBackward0, out, x, save=(x,), save_out=True, _p=p, _dims=dims,
                 _g=(dim, ord),
                 _keep=None if keepdim or dims is None else _keep_shape(a.shape, dims))


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None) -> Tensor:  # noqa: A002, N803
    """A matrix norm over the two dims ``dim``: 'fro', 'nuc', 1, -1, 2, -2, inf or -inf.

    >>> import retrograd as torch
    >>> torch.linalg.matrix_norm(torch.tensor([[1., -2.], [3., 4.]]), 1)
    tensor(6.)
    """
    a = A._data
    if a.ndim < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    if a.dtype.char not in FLOAT_CHARS:
        raise RuntimeError(
            "linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
            + dtype_name(a.dtype)
        )
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        got = " ".join(map(str, dim)) if isinstance(dim, (tuple, list)) else str(dim)
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {got}")
    d0, d1 = wrap_dim(dim[0], a.ndim), wrap_dim(dim[1], a.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    # PyTorch's composite (LinearAlgebra.cpp), op for op, so the graph is PyTorch's.
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
    if ord == "nuc" or ord in (2, -2):
        if dtype is not None:
            A = to_dtype_op(A, to_dtype(dtype).np)
        perm = [i for i in range(a.ndim) if i not in (d0, d1)] + [d0, d1]
        s = decomp.linalg_svdvals(permute(A, perm))
        r = sum(s, -1, keepdim) if ord == "nuc" else \
            (amax(s, -1, keepdim) if ord == 2 else amin(s, -1, keepdim))
        if keepdim:
            r = permute(unsqueeze(r, -1), tuple(np.argsort(perm).tolist()))
        return r
    if ord in (1, -1, INF, -INF):
        # 1: the largest column sum of |A| (the 1-norms of the columns); inf: of the rows.
        inner, outer = (d0, d1) if ord in (1, -1) else (d1, d0)
        col = vector_norm(A, 1.0, (inner,), keepdim, dtype=dtype)
        if not keepdim and outer > inner:
            outer -= 1
        return amax(col, outer, keepdim) if ord > 0 else amin(col, outer, keepdim)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(input, p="fro", dim=None, keepdim=False, dtype=None) -> Tensor:  # noqa: A002
    """``torch.norm``: the 2-norm by default ('fro'), the ``p``-norm, or 'nuc', over ``dim``.

    >>> import retrograd as torch
    >>> torch.tensor([3., 4.]).norm()
    tensor(5.)
    """
    if isinstance(dim, int):
        dim = (dim,)
    if p == "nuc":
        if dim is None:
            dim = tuple(range(input.ndim))
        return matrix_norm(input, "nuc", dim, keepdim, dtype=dtype)
    if p == "fro" or p is None:
        if dim is not None and len(dim) > 2:
            raise RuntimeError(
                f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}"
            )
        p = 2
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


def sum_to(g: Tensor, shape) -> Tensor:
    """Sum ``g`` down to ``shape`` (undoes broadcasting), differentiably."""
    gshape = g._data.shape
    if gshape == tuple(shape):
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + k for k, s in enumerate(shape) if s == 1 and gshape[lead + k] != 1
    )
    r = sum(g, axes, True) if axes else g
    if lead:
        r = reshape(r, tuple(shape))
    return r


__all__ = [
    "sum", "mean", "max", "min", "argmax", "argmin", "amax", "amin", "aminmax", "nansum",
    "nanmean", "prod", "var", "std", "var_mean", "std_mean", "logsumexp", "all", "any",
    "count_nonzero", "norm",
]
XP = ["vector_norm", "matrix_norm", "sum_to"]
METHODS = {name: globals()[name] for name in __all__ if name not in ("var_mean", "std_mean")}
INPLACE: dict = {}
