"""In-place ops: ``x.add_(y)``, ``x += y``, ``x[i] = v``, ``copy_``, ``fill_``, ...

Without a graph to record, an in-place op writes into the tensor's array (so every view sees it)
and bumps the shared version counter. With one, it runs the out-of-place op on a snapshot of the
old value and then takes over the result's history:

- on a plain tensor, its grad_fn becomes the op's node (``MulBackward0`` for ``mul_``);
- on a view, the *base* gets a ``CopySlices`` node that routes the view's part of the gradient
  through the op and the rest to the base's old history. Other views of that base notice that
  the base's grad_fn changed and re-derive their own (``_tensor._sync_view``).
"""

from __future__ import annotations

import re
import weakref
from functools import partial

import numpy as np

from .._creation import tensor
from .._dtypes import FROM_NP, NATIVE_FLOAT_CHARS, REDUCED, binary_result, can_cast, to_reduced
from .._tensor import Tensor, edge, make
from ..autograd.grad_mode import state
from ..autograd.graph import Node, next_seq, unpacked_output
from ..autograd.provenance import ENABLED as PROVENANCE
from ..autograd.provenance import record_inplace, site
from . import _apply, _array
from . import indexing as _indexing
from ._apply import apply, needs_grad
from ._base import _check_leaf, _check_writable, legacy
from ._core import arg_error, check_broadcast, checked_scalar, expand_error, scalar_value
from ._views import replay


def write(self: Tensor, arr) -> None:
    """Write a result into ``self``'s memory, with PyTorch's dtype and shape checks."""
    dst = self._data
    arr = np.asarray(arr)
    # PyTorch's order: the written-to tensor's overlap, the shapes, then the cast
    if not dst.flags.writeable:
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )
    if arr.shape != dst.shape:
        try:
            np.broadcast_shapes(arr.shape, dst.shape)
            ok = np.broadcast_shapes(arr.shape, dst.shape) == dst.shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(
                f"output with shape {list(dst.shape)} doesn't match the broadcast shape "
                f"{list(np.broadcast_shapes(arr.shape, dst.shape)) if _bc(arr, dst) else []}"
            )
    if arr.dtype != dst.dtype and not can_cast(FROM_NP[arr.dtype], FROM_NP[dst.dtype]):
        raise RuntimeError(
            f"result type {legacy(arr.dtype)} can't be cast to the desired output type "
            f"{legacy(dst.dtype)}"
        )
    np.copyto(dst, arr, casting="unsafe")
    self._vc[0] += 1
    if PROVENANCE:
        record_inplace(self._vc)


def _bc(a, b) -> bool:
    try:
        np.broadcast_shapes(a.shape, b.shape)
        return True
    except ValueError:
        return False


def _snapshot(self: Tensor) -> Tensor:
    """The old value of ``self``, with its history, for the out-of-place op to consume."""
    fn, nr = edge(self)
    old = make(self._data.copy())
    if self._fw is not None:  # forward AD: the op sees the old value's tangent (a copy:
        # self's is updated in place after the op, and the node may read the old one)
        old._fw = (self._fw[0], self._fw[1].clone())
    if fn is not None:
        old._grad_fn, old._nr, old._rg = fn, nr, True
    return old


class CopySlices(Node):
    """The base's new history after an in-place op on one of its views.

    As in PyTorch it wraps the op's node ``fn``: its edges are the base's old history and
    ``fn``'s other inputs. The view's part of the gradient goes through ``fn``; what ``fn``
    returns for its first input (the view's old value) lands back in the view's region.
    """

    _name = "torch::autograd::CopySlices"

    _mask = None

    def backward(self, xp, g):
        fn, steps = self._fn, self._steps
        res = fn.backward(xp, replay(xp, g, steps))
        if not isinstance(res, tuple):
            res = (res,)
        mask = self._mask
        if mask is None:
            mask = np.zeros(self._base_shape, bool)
            dst = _array.replay(mask, steps)
            if dst.flags.writeable:
                dst[...] = True
            else:  # (a view that is not one of the mask's memory: its positions)
                pos = _array.replay(np.arange(mask.size).reshape(mask.shape), steps)
                mask.reshape(-1)[pos[pos >= 0]] = True
            self._mask = mask
        gb = xp.where(mask, 0.0, g)
        if res[0] is not None:
            gb = gb + xp.embed_view(res[0], steps, self._base_shape)
        return (gb,) + tuple(res[1:])

    def release(self) -> None:
        self._fn.release()


class AsStridedBackward0(Node):
    """A view's history re-derived from its base after an in-place op rewrote the base's."""

    def backward(self, xp, g):
        return xp.embed_view(g, self._steps, self._base_shape)


# While view replay is on (autograd._force_original_view_tracking), the function that
# re-derives a view's history by replaying its view ops on the base instead.
REPLAY_VIEW = None


def as_strided_node(base: Tensor, steps):
    """The grad_fn a view takes after its base's history changed (PyTorch's AsStrided)."""
    if REPLAY_VIEW is not None:
        return REPLAY_VIEW(base, steps)
    e = edge(base)
    if e[0] is None:
        return None
    node = AsStridedBackward0()
    node._steps, node._base_shape = steps, base._data.shape
    node.next_functions = (e,)
    node._meta = ((base._data.shape, base._data.dtype),)
    node._seq = next_seq()
    return node


def _adopt_saved_output(fn, r: Tensor, self: Tensor) -> None:
    """An op that saved its output (relu_, exp_, ...) now saves ``self``, the tensor that holds
    it, so that later in-place changes to ``self`` or its base are caught as in PyTorch."""
    out = fn._out
    if out.__class__ is tuple and out[0] is r._data:  # (not when packed by a saved-tensor hook)
        fn._out = (self._data, self._vc, self._vc[0])


def commit(self: Tensor, r: Tensor) -> Tensor:
    """Make ``self`` hold the result ``r`` of an out-of-place op on its old value."""
    if r._grad_fn is None:
        write(self, r._data)
        return self
    v = self._view
    if v is None:
        write(self, r._data)
        self._grad_fn, self._nr, self._rg = r._grad_fn, r._nr, True
        _adopt_saved_output(r._grad_fn, r, self)
        return self
    base, steps, _ = v
    fn = r._grad_fn
    node = CopySlices()
    if PROVENANCE:
        node._site = site()
    node._fn = fn
    node._steps = steps
    node._base_shape = base._data.shape
    # The base takes the view's place as input 0; the op's other inputs keep their metadata.
    d = base._data
    node._meta = ((d.shape, d.dtype),) + tuple(fn._meta[1:])
    node.next_functions = (edge(base),) + tuple(fn.next_functions[1:])
    write(self, r._data)
    _adopt_saved_output(fn, r, self)
    node._seq = next_seq()
    base._grad_fn, base._nr, base._rg = node, 0, True
    if fn._out is not None:
        # Weakly: the node is reached from fn through CopySlices, which holds fn (no cycle).
        fn._out_unpack = partial(_view_output, weakref.ref(node), steps, d.shape, d.dtype)
    return self


def _view_output(ref, steps, base_shape, base_dtype, arr, vc):
    """The saved output of an op applied in place on a view, unpacked under create_graph: a
    view (through CopySlices) of the base, or None once CopySlices is gone."""
    node = ref()
    if node is None:
        return None
    v = AsStridedBackward0()
    v._steps, v._base_shape = steps, base_shape
    v.next_functions = ((node, 0),)
    v._meta = ((base_shape, base_dtype),)
    v._seq = next_seq()
    return unpacked_output(arr, vc, v, 0)


def apply_inplace(self: Tensor, fn, *args, **kwargs) -> Tensor:
    """Run ``fn(self, *args)`` in place on ``self``: PyTorch's in-place semantics."""
    _check_writable(self)
    if self._view is not None and state.grad_enabled and self.__dict__.get("_no_grad_view"):
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode "
            "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You "
            "can clarify your code by moving both the view and the inplace either both inside "
            "the no_grad block (if you don't want the inplace to be tracked) or both outside (if "
            "you want the inplace to be tracked)."
        )
    if state.grad_enabled and (needs_grad(self) or any(needs_grad(a) for a in args)
                               or any(needs_grad(a) for a in kwargs.values())):
        _check_leaf(self)
        r = fn(_snapshot(self), *args, **kwargs)
        commit(self, r)
    else:
        r = fn(self, *args, **kwargs)
        write(self, r._data)
    if r._fw is not None:
        _take_tangent(self, r)
    return self


def _take_tangent(self: Tensor, r: Tensor) -> None:
    """Forward AD: ``self`` takes the tangent of the result ``r`` written into it; in place
    when it has one at the same level (views of it share that tangent), as PyTorch does."""
    fw, cur = r._fw, self._fw
    if cur is not None and cur[0] is fw[0]:
        if cur[1] is not fw[1]:
            cur[1].copy_(fw[1])
    else:
        v = self._view
        if v is not None:
            # A view takes its part of the base's tangent (made zero first if need be), so
            # that the base's tangent sees the write, as PyTorch's views of duals do.
            base = v[0]
            bfw = base._fw
            if bfw is None or bfw[0] is not fw[0]:
                bfw = base._fw = (fw[0], make(np.zeros_like(base._data)))
            part = _array.replay(bfw[1]._data, v[1])
            np.copyto(part, fw[1]._data)
            fw = (fw[0], make(part))
        self._fw = fw


_C_TYPE_NAMED = frozenset(("clamp_", "clamp_min_", "clamp_max_", "clip_"))
_POSITION = re.compile(r"\(position ([2-9])\)")


def _cast_first(self: Tensor, args) -> None:
    """PyTorch's TensorIterator refuses a result type it cannot write into ``self`` before it
    looks for a kernel (``x.bitwise_and_(1.5)`` on integers: the cast error, not "not
    implemented for 'Float'"); only the error path asks."""
    if not args:
        return
    o = args[0]
    if isinstance(o, Tensor):
        rt = binary_result(self.dtype, self._data.ndim == 0, o.dtype, o._data.ndim == 0)
    elif o.__class__ in (bool, int, float):
        rt = binary_result(self.dtype, self._data.ndim == 0, o.__class__, True)
    else:
        return
    if not can_cast(rt, self.dtype):
        raise RuntimeError(f"result type {rt.scalar_name} can't be cast to the desired output "
                           f"type {self.dtype.scalar_name}") from None


def inplace_method(fn, name: str):
    """``x.name_(...)``: the in-place form of the out-of-place op ``fn``."""

    def method(self, *args, **kwargs):
        try:
            return apply_inplace(self, fn, *args, **kwargs)
        except AttributeError:  # torch.exp_([1.]): PyTorch's TypeError (free when all is well)
            if not isinstance(self, Tensor):
                raise arg_error(name, "input", 1, self) from None
            raise
        except NotImplementedError:
            _cast_first(self, args)
            raise
        except RuntimeError as e:
            msg = str(e)
            if name in _C_TYPE_NAMED and msg.startswith("result type ") and \
                    isinstance(self, Tensor) and not any(isinstance(a, Tensor) for a in args):
                # clamp's in-place kernels name the output type as C++ does
                raise RuntimeError(msg.rsplit(" ", 1)[0] + " " + self.dtype.c_name) from None
            raise
        except TypeError as e:
            # the out-of-place op's argument error, under the in-place method's name
            # (a method: positions count after self)
            msg, base = str(e), name[:-1]
            if msg.startswith(base + "(): argument "):
                msg = _POSITION.sub(lambda m: f"(position {int(m[1]) - 1})", msg, count=1)
                raise TypeError(name + msg[len(base):]) from None
            raise

    method.__name__ = name
    method.__doc__ = f"In-place form of ``{fn.__name__}``: writes into the tensor and returns it."
    return method


def _into(src: tuple, dst: tuple) -> bool:
    """Whether shape ``src`` broadcasts into ``dst`` (if not, the general path raises
    PyTorch's error)."""
    if src == dst:
        return True
    try:
        return np.broadcast_shapes(src, dst) == dst
    except ValueError:
        return False


def _fast_ufunc(ufunc, fn, name):
    """An in-place method with a no-graph fast path straight into the array (optimizer steps)."""

    def method(self, other, *, alpha=None, **kwargs):
        if kwargs:  # e.g. div_(rounding_mode=...): the general path
            if alpha is not None:
                kwargs["alpha"] = alpha
            return apply_inplace(self, fn, other, **kwargs)
        if (not state.grad_enabled or not (self._rg or needs_grad(other) or
                                           self._view is not None)) and not _apply.OBSERVED:
            d = self._data
            # float32/float64 only: float16/bfloat16 take the general path, which computes in
            # float32 and keeps a number in float32 for * and / as PyTorch's kernels do.
            if d.dtype.char in NATIVE_FLOAT_CHARS and d.flags.writeable:
                o = other._data if isinstance(other, Tensor) else scalar_value(other)
                if o is not None and (o.__class__ in (int, float, bool) or
                                      (o.dtype == d.dtype and _into(o.shape, d.shape))):
                    _check_writable(self)
                    if alpha is not None and alpha != 1:
                        o = o * alpha
                    ufunc(d, o, out=d)
                    self._vc[0] += 1
                    if PROVENANCE:
                        record_inplace(self._vc)
                    return self
        if alpha is not None:
            return apply_inplace(self, fn, other, alpha=alpha)
        return apply_inplace(self, fn, other)

    method.__name__ = name
    method.__doc__ = f"In-place form of ``{fn.__name__}``."
    return method


# -- ops that exist to be applied in place -----------------------------------------------------


class CopyBackwards(Node):
    _name = "torch::autograd::CopyBackwards"

    def backward(self, xp, g):
        nf = self.next_functions
        return (xp.zeros_like(g) if nf[0][0] is not None else None), g


def _copy(self: Tensor, src) -> Tensor:
    """What ``self.copy_(src)`` computes: ``src`` cast to ``self``'s dtype and broadcast."""
    if not isinstance(src, Tensor):
        src = tensor(src)
    s = src._data
    try:
        out = np.broadcast_to(s, self._data.shape)
        dt = self._data.dtype
        # (a reduced float through float32, as PyTorch converts: float64 rounds twice)
        out = to_reduced(out, dt) if dt in REDUCED else out.astype(dt)
    except ValueError:
        check_broadcast(self._data.shape, s.shape)
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the "
                           f"broadcast shape {list(np.broadcast_shapes(self._data.shape, s.shape))}"
                           ) from None
    return apply(CopyBackwards, out, self, src)


def copy_(self: Tensor, src, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast, cast) into ``self``.

    >>> import retrograd as torch
    >>> torch.zeros(2).copy_(torch.tensor([1, 2]))
    tensor([1., 2.])
    """
    return apply_inplace(self, _copy, src)


class FillBackward2(Node):
    """fill_ with a number."""

    def backward(self, xp, g):
        return xp.zeros_like(g)


class FillBackward3(Node):
    """fill_ with a 0-dim tensor."""

    def backward(self, xp, g):
        return xp.zeros_like(g), xp.sum(g)


class ZeroBackward0(FillBackward2):
    pass


def _fill(self: Tensor, value) -> Tensor:
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions."
            )
        out = np.full(self._data.shape, value._data, dtype=self._data.dtype)
        return apply(FillBackward3, out, self, value)
    return apply(FillBackward2, np.full(self._data.shape, value, dtype=self._data.dtype), self)


def _zero(self: Tensor) -> Tensor:
    return apply(ZeroBackward0, np.zeros_like(self._data), self)


def fill_(self: Tensor, value) -> Tensor:
    """Set every element to ``value``.

    >>> import retrograd as torch
    >>> torch.zeros(2).fill_(3)
    tensor([3., 3.])
    """
    if value.__class__ is int or value.__class__ is float:
        value = checked_scalar(value, self._data.dtype)
    if not state.grad_enabled or not (self.requires_grad or needs_grad(value)):
        _check_writable(self)
        v = value._data if isinstance(value, Tensor) else value
        write(self, np.full(self._data.shape, v, dtype=self._data.dtype))
        return self
    return apply_inplace(self, _fill, value)


def zero_(self: Tensor) -> Tensor:
    """Set every element to zero.

    >>> import retrograd as torch
    >>> torch.ones(2).zero_()
    tensor([0., 0.])
    """
    if not state.grad_enabled or not self.requires_grad:
        _check_writable(self)
        if not self._data.flags.writeable:
            write(self, np.zeros_like(self._data))
            return self
        self._data[...] = 0
        self._vc[0] += 1
        if PROVENANCE:
            record_inplace(self._vc)
        return self
    return apply_inplace(self, _zero)


def setitem(self: Tensor, index, value) -> None:
    """``self[index] = value``: a copy into a view (basic index) or an index_put (advanced)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        value = tensor(value, dtype=self.dtype)
    elif value.__class__ is int or value.__class__ is float:
        value = checked_scalar(value, self._data.dtype)
    elif isinstance(value, Tensor) and isinstance(index, Tensor) and \
            index._data.dtype == np.bool_ and value._data.size == 1 and \
            value._data.dtype != self._data.dtype and self._data.ndim:
        value = value.to(self.dtype)  # x[mask] = one value: PyTorch casts it
    ix = _indexing
    if ix.is_basic_index(index):
        view = ix.getitem(self, index)
        if isinstance(value, Tensor) and value._data.shape != view._data.shape:
            # PyTorch drops the value's leading 1s and expands it: its errors are expand's.
            vs = value._data.shape
            k = 0
            while k < len(vs) and vs[k] == 1:
                k += 1
            e = expand_error(vs[k:], view._data.shape, value._data.dtype)
            if e is not None:
                raise e
            if k:
                value = value.reshape(vs[k:])
        copy_(view, value)
        return
    apply_inplace(self, ix.index_put, ix.np_index(index), value)
