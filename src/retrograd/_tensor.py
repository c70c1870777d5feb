"""Tensor: a NumPy array plus the autograd metadata PyTorch keeps beside it.

The fields, in reading order:

- ``_data``: the ndarray holding the values (views share it with their base).
- ``_rg``: requires_grad; ``_grad_fn`` and ``_nr``: the node that made it and which of that
  node's outputs it is (None and 0 on leaves).
- ``_grad``: the accumulated gradient of a leaf (or of a tensor that retains its grad).
- ``_vc``: the version counter, a one-element list shared with every view of the same memory;
  every in-place op bumps it, and saved tensors compare against it.
- ``_view``: for a differentiable view, ``(base, view_ops, base grad_fn when last synced)``, so
  an in-place op on the view can rewrite its base's history (``ops/inplace.py``).
- ``_acc``: the leaf's AccumulateGrad node (which holds the leaf only weakly).
- ``_inference``: made under ``inference_mode``.

Ops and most methods are installed on the class by the ``ops`` package (``x * y`` runs
``ops.arithmetic.mul_operator``); this module holds what concerns the tensor itself and autograd.
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np

from . import _dtypes
from . import _memory_format as _mf
from ._dtypes import FLOAT_CHARS, FROM_NP, dtype
from ._printing import format_tensor
from .autograd import graph
from .autograd import saved as _saved
from .autograd.grad_mode import state
from .autograd.graph import next_seq

_BF16 = _dtypes.bfloat16.np

__all__ = ["Tensor", "Size"]


class Size(tuple):
    """A tensor's shape: a tuple printed as ``retrograd.Size([3, 2])``.

    >>> import retrograd as torch
    >>> torch.zeros(3, 2).shape
    retrograd.Size([3, 2])
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"retrograd.Size({list(self)})"

    __str__ = __repr__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))


class device:  # noqa: N801 - PyTorch's name
    """The only device retrograd computes on: ``cpu``."""

    __slots__ = ("type", "index")

    def __init__(self, type: str = "cpu", index=None) -> None:  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index
        if not isinstance(type, str) or type.split(":")[0] != "cpu":
            raise RuntimeError(
                f"retrograd computes on the CPU only; device {type!r} is not supported"
            )
        self.type = "cpu"
        self.index = index

    def __repr__(self) -> str:
        return "device(type='cpu')"

    def __str__(self) -> str:
        return "cpu"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            return other.split(":")[0] == "cpu"
        return isinstance(other, device)

    def __hash__(self) -> int:
        return hash("cpu")


CPU = device("cpu")
_NONE_EDGE = (None, 0)
_NON_LEAF_RG = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
)


def _from_pickle(cls, arr, requires_grad: bool, state: dict):
    """A tensor back from ``pickle`` (``Tensor.__reduce_ex__``)."""
    t = cls._make(arr)
    t._rg = bool(requires_grad)
    t.__dict__.update(state)
    return t


class Tensor:
    """An n-dimensional array that can record the operations applied to it.

    >>> import retrograd as torch
    >>> x = torch.tensor([2.0, 3.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([4., 6.])
    """

    __slots__ = (
        "_data", "_rg", "_grad_fn", "_nr", "_grad", "_vc", "_view", "_acc", "_inference",
        "__weakref__", "__dict__",
    )
    __array_priority__ = 1000  # so that ndarray <op> Tensor defers to Tensor's reflected op
    _fw = None  # forward AD: (level, tangent) on a dual tensor (autograd/forward_ad.py)

    def __init__(self, *args, **kwargs) -> None:
        # PyTorch's legacy constructor: Tensor([1, 2]) copies data, Tensor(2, 3) is uninitialised.
        dt = _dtypes.get_default_dtype().np
        if not args:
            arr = np.zeros((0,), dtype=dt)
        elif len(args) == 1 and not isinstance(args[0], (int, Size)):
            data = args[0]
            if isinstance(data, (float, bool, complex)):
                raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
            arr = np.array(data._data if isinstance(data, Tensor) else data, dtype=dt)
        else:
            shape = args[0] if len(args) == 1 and isinstance(args[0], Size) else args
            arr = np.zeros(tuple(shape), dtype=dt)
        _init(self, arr)

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def _make(cls, arr, grad_fn=None, nr: int = 0) -> Tensor:
        """The one fast constructor every op uses: wrap ``arr``, optionally with a grad_fn."""
        t = object.__new__(cls)
        t._data = arr
        t._vc = [0]
        t._grad = None
        t._view = None
        t._acc = None
        if grad_fn is None:
            t._rg = False
            t._grad_fn = None
            t._nr = 0
            t._inference = state.inference
        else:
            t._rg = True
            t._grad_fn = grad_fn
            t._nr = nr
            t._inference = False
        return t

    # -- metadata ------------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return Size(self._data.shape)
        if self._data.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def dtype(self) -> dtype:
        return FROM_NP[self._data.dtype]

    @property
    def device(self) -> device:
        return CPU

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def is_floating_point(self) -> bool:
        return self._data.dtype.char in FLOAT_CHARS

    def is_complex(self) -> bool:
        return False

    def is_contiguous(self, memory_format=None) -> bool:
        if memory_format is None:
            return self._data.flags.c_contiguous
        return _mf.is_contiguous_as(self._data, memory_format)  # channels-last checks

    def stride(self, dim: int | None = None):
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim)]

    def data_ptr(self) -> int:
        return self._data.ctypes.data

    def is_inference(self) -> bool:
        return self._inference

    @property
    def _version(self) -> int:
        return self._vc[0]

    @property
    def _base(self):
        return self._view[0] if self._view is not None else None

    def _is_view(self) -> bool:
        return self._view is not None

    # -- autograd metadata ---------------------------------------------------------------------
    @property
    def grad_fn(self):
        if self._view is not None:
            _sync_view(self)
        return self._grad_fn

    @property
    def requires_grad(self) -> bool:
        if self._view is not None:
            _sync_view(self)
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        value = bool(value)
        if self.grad_fn is not None:
            if value:
                raise RuntimeError("you can only change requires_grad flags of leaf variables.")
            raise RuntimeError(_NON_LEAF_RG)
        if value and self._data.dtype.char not in FLOAT_CHARS:
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients"
            )
        if value and self._inference and not state.inference:
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed."
            )
        self._rg = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place (on leaves) and return the tensor."""
        if self.grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(_NON_LEAF_RG)
        if requires_grad and self._data.dtype.char not in FLOAT_CHARS:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self):
        if self._grad_fn is not None and not self.__dict__.get("_retains_grad", False):
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed "
                "want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() "
                "on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
                "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 "
                "for more information.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a "
                    f"tensor of size '{list(self._data.shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size"
                )
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype "
                    f"'{FROM_NP[value._data.dtype].c_name}' to a tensor with grad_dtype "
                    f"'{FROM_NP[self._data.dtype].scalar_name}'. The gradient must match the "
                    "tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
                    "tensor's grad_dtype attribute with a specific dtype, or None to allow any "
                    "dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its "
                    "gradient may break downstream systems that assume they match."
                )
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        return self.__dict__.get("_retains_grad", False)

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` during backward."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self.retains_grad:
            return
        self.__dict__["_retains_grad"] = True
        fn = self._grad_fn
        if fn._retain is None:
            fn._retain = {}
        fn._retain[self._nr] = weakref.ref(self)
        fn._hooked = True
        fn._plain = False

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new one.

        >>> import retrograd as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2)
        >>> x.sum().backward(); x.grad
        tensor([2., 2.])
        """
        if not self.requires_grad:
            raise RuntimeError(
                "cannot register a hook on a tensor that doesn't require gradient"
            )
        fn = self.grad_fn
        if fn is not None:
            return fn._add_tensor_hook(self._nr, hook)
        hooks = self.__dict__.setdefault("_hooks", [])
        hooks.append(hook)
        return graph.RemovableHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` after a gradient has been accumulated into this leaf's grad."""
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        if not self._rg:
            raise RuntimeError(
                "cannot register a hook on a tensor that doesn't require gradient"
            )
        hooks = self.__dict__.setdefault("_post_acc_hooks", [])
        hooks.append(hook)
        return graph.RemovableHandle(hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        """Compute the gradient of this tensor with respect to the graph's leaves.

        >>> import retrograd as torch
        >>> x = torch.tensor(3.0, requires_grad=True)
        >>> (x ** 2 + 2 * x + 1).backward(); x.grad
        tensor(8.)
        """
        from .autograd import api

        api.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """A tensor sharing this one's memory and version counter, outside the graph."""
        t = Tensor._make(self._data)
        t._vc = self._vc
        t._inference = self._inference
        return t

    def detach_(self) -> Tensor:
        if self._view is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
            )
        self._grad_fn = None
        self._nr = 0
        self._rg = False
        return self

    @property
    def data(self) -> Tensor:
        t = Tensor._make(self._data)
        t._inference = self._inference
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(
                f"Variable data has to be a tensor, but got {type(value).__name__}"
            )
        self._data = value._data

    # -- conversions ---------------------------------------------------------------------------
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self.requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        if self._data.dtype is _BF16:
            raise TypeError("Got unsupported ScalarType BFloat16")  # NumPy has no bfloat16
        return self._data

    def __array__(self, dtype=None, copy=None):
        if self.requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        arr = self._data
        if arr.dtype is _BF16:
            raise TypeError("Got unsupported ScalarType BFloat16")
        if dtype is not None and arr.dtype != dtype:
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        # unbind, as PyTorch does, so each row is a differentiable view.
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous"
                if self._data.size > 1
                else "Boolean value of Tensor with no values is ambiguous"
            )
        return bool(self._data.reshape(()).item())

    def __float__(self) -> float:
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if self._rg:
            warnings.warn(
                "Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                "behavior.\nConsider using tensor.detach() first.",
                UserWarning,
                stacklevel=2,
            )
        return float(self._data.reshape(()).item())

    def __int__(self) -> int:
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(self._data.reshape(()).item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError(
                "only integer tensors of a single element can be converted to an index"
            )
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __reduce_ex__(self, protocol):
        # As PyTorch's pickling: the values (NumPy's pickle keeps C or Fortran order), the
        # class (Parameter) and requires_grad, never the graph or ``.grad``. Unpickling runs
        # code by nature; retrograd.load is the safe reader for files from others.
        state = {k: v for k, v in self.__dict__.items() if not k.startswith("_")}
        return _from_pickle, (type(self), self._data, self.requires_grad, state)

    def __copy__(self):
        # copy.copy: PyTorch's shallow copy shares the data (as a detached view does)
        t = type(self)._make(self._data)
        t._vc = self._vc
        t._rg = self.requires_grad
        t.__dict__.update(self.__dict__)
        return t

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may "
                "be because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001"
            )
        t = type(self)._make(self._data.copy())
        t._rg = self._rg
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        for k, v in self.__dict__.items():
            if k not in ("_hooks", "_post_acc_hooks", "_retains_grad"):
                t.__dict__[k] = v
        memo[id(self)] = t
        return t

    # -- printing ------------------------------------------------------------------------------
    def __repr__(self, prefix: str = "tensor(") -> str:
        arr = self._data
        suffixes = []
        dt = FROM_NP[arr.dtype]
        default = _dtypes.get_default_dtype()
        if arr.size == 0:
            show_dtype = dt is not default
        else:
            show_dtype = dt not in (default, _dtypes.int64, _dtypes.bool)
        if show_dtype:
            suffixes.append(f"dtype={dt!r}")
        fn = self.grad_fn
        if fn is not None:
            # (PyTorch shows a C++ node by its last name: CopySlices)
            suffixes.append(f"grad_fn=<{fn.name().rsplit('::', 1)[-1]}>")
        elif self._rg:
            suffixes.append("requires_grad=True")
        return format_tensor(
            arr, is_float=dt.is_floating_point, is_bool=dt is _dtypes.bool, suffixes=suffixes,
            prefix=prefix,
        )

    def __format__(self, spec: str) -> str:
        # As PyTorch: a plain 0-d tensor formats as its number (f"{loss}" prints 0.25), any
        # other takes only the empty spec (its str).
        if self._data.ndim == 0 and type(self) is Tensor:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    __str__ = __repr__


def _init(t: Tensor, arr: np.ndarray) -> None:
    t._data = arr
    t._vc = [0]
    t._grad = None
    t._view = None
    t._acc = None
    t._rg = False
    t._grad_fn = None
    t._nr = 0
    t._inference = state.inference


def _wrap_dim(dim: int, ndim: int) -> int:
    """A dim index in range, PyTorch's IndexError otherwise."""
    if ndim == 0 and dim not in (0, -1):
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def edge(t: Tensor) -> tuple:
    """The graph edge a new node takes to ``t``: its grad_fn, its AccumulateGrad, or nothing."""
    if t._view is not None:
        _sync_view(t)
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._nr)
    if t._rg:
        acc = t._acc
        return (acc if acc is not None else graph.accumulate_node(t), 0)
    return _NONE_EDGE


def _sync_view(t: Tensor) -> None:
    """Re-derive a view's grad_fn when an in-place op has rewritten its base's history."""
    base, steps, synced_fn = t._view
    if base._grad_fn is synced_fn:
        return
    from .ops.inplace import as_strided_node

    t._grad_fn = as_strided_node(base, steps)
    t._nr = 0
    t._rg = t._grad_fn is not None
    t._view = (base, steps, base._grad_fn)


def make(arr: np.ndarray, grad_fn=None, nr: int = 0) -> Tensor:
    """The one fast constructor every op uses: wrap ``arr``, optionally with a grad_fn."""
    t = _new(Tensor)
    t._data = arr
    t._vc = [0]
    t._grad = None
    t._view = None
    t._acc = None
    if grad_fn is None:
        t._rg = False
        t._grad_fn = None
        t._nr = 0
        t._inference = state.inference
    else:
        t._rg = True
        t._grad_fn = grad_fn
        t._nr = nr
        t._inference = False
        grad_fn._seq = next_seq()
    return t


_new = object.__new__
_saved.make_tensor = make
