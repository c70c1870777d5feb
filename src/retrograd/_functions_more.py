"""More top-level functions PyTorch programs call: ``gradient``, ``pdist``, ``as_strided_``
and ``as_strided_scatter``, ``range``, ``asarray``, ``empty_strided``/``empty_permuted``, ``fill``,
``iinfo``, the queries ``is_complex``/``is_inference``/``get_device``, the ATen-level RNN cells
(``lstm_cell``, ``gru_cell``, ``rnn_tanh_cell``, ``rnn_relu_cell``), ``convolution``,
``ctc_loss`` and the low-rank decompositions ``svd_lowrank``/``pca_lowrank``. Each is composed
from retrograd's differentiable ops.

>>> import retrograd as torch
>>> torch.gradient(torch.tensor([1., 4., 9., 16.]))
(tensor([3., 4., 6., 7.]),)
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from . import _creation, _dtypes, linalg
from ._functions import _REDUCTION
from ._settings import contiguous_format
from ._tensor import Tensor, make
from .autograd.graph import Node
from .nn import functional as F
from .ops._apply import apply
from .ops.join import cat, stack
from .ops.shape import _check_inplace_view, _inplace_view
from .ops.strided import empty_strided_array

__all__ = [
    "gradient", "pdist", "as_strided_", "as_strided_scatter", "range", "asarray",
    "empty_strided", "empty_permuted", "fill", "iinfo", "is_complex", "is_inference",
    "get_device", "conj_physical_", "i0_", "lstm_cell", "gru_cell", "rnn_tanh_cell",
    "rnn_relu_cell", "convolution", "ctc_loss", "svd_lowrank", "pca_lowrank",
    "legacy_contiguous_format", "lstm", "gru", "rnn_tanh", "rnn_relu", "OutOfMemoryError",
    "is_distributed", "is_autocast_cpu_enabled", "set_autocast_cpu_enabled",
    "get_autocast_cpu_dtype", "set_autocast_cpu_dtype", "get_device_module",
]

_builtin_range = range


def _edge_diff(f, d, h, edge_order):
    n = f.shape[d]
    nar = f.narrow
    if n < edge_order + 1:
        raise RuntimeError("torch.gradient expected each dimension size to be at least "
                           "edge_order+1")
    if h is None or not isinstance(h, Tensor):
        step = 1.0 if h is None else float(h)
        inner = (nar(d, 2, n - 2) - nar(d, 0, n - 2)) / (2 * step)
        if edge_order == 1:
            first = (nar(d, 1, 1) - nar(d, 0, 1)) / step
            last = (nar(d, n - 1, 1) - nar(d, n - 2, 1)) / step
        else:
            first = (-1.5 * nar(d, 0, 1) + 2 * nar(d, 1, 1) - 0.5 * nar(d, 2, 1)) / step
            last = (0.5 * nar(d, n - 3, 1) - 2 * nar(d, n - 2, 1) + 1.5 * nar(d, n - 1, 1)) / step
        return cat([first, inner, last], d)
    x = h.to(f.dtype)
    dx = x[1:] - x[:-1]
    shape = [1] * f.dim()
    shape[d] = -1
    h1, h2 = dx[:-1].reshape(shape), dx[1:].reshape(shape)
    inner = (-h2 / (h1 * (h1 + h2)) * nar(d, 0, n - 2) + (h2 - h1) / (h1 * h2) * nar(d, 1, n - 2)
             + h1 / (h2 * (h1 + h2)) * nar(d, 2, n - 2))
    if edge_order != 1:
        raise RuntimeError("torch.gradient with coordinates supports edge_order=1 here")
    first = (nar(d, 1, 1) - nar(d, 0, 1)) / dx[0]
    last = (nar(d, n - 1, 1) - nar(d, n - 2, 1)) / dx[-1]
    return cat([first, inner, last], d)


def gradient(input: Tensor, *, spacing=1, dim=None, edge_order: int = 1) -> tuple:  # noqa: A002
    """The gradient of a sampled function by central differences (one-sided at the edges,
    first or second order), along each dim or those in ``dim``; ``spacing`` is a step, one
    step per dim, or one coordinate tensor per dim.
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(_builtin_range(input.dim())) if dim is None else \
        ([dim] if isinstance(dim, int) else list(dim))
    dims = [d % input.dim() for d in dims]
    if isinstance(spacing, (int, float)) or (isinstance(spacing, Tensor) and spacing.dim() == 0):
        steps = [spacing] * len(dims)
    else:
        steps = list(spacing)
        if len(steps) == 1 and len(dims) > 1:
            steps = steps * len(dims)
    f = input if input.is_floating_point() else input.float()
    return tuple(_edge_diff(f, d, h, edge_order) for d, h in zip(dims, steps))


def pdist(input: Tensor, p: float = 2) -> Tensor:  # noqa: A002
    """The ``p``-norm distances between each pair of rows (the upper triangle of ``cdist``).

    >>> import retrograd as torch
    >>> torch.pdist(torch.tensor([[0., 0.], [3., 4.], [1., 0.]]))
    tensor([5.0000, 1.0000, 4.4721])
    """
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if input.dtype.np in _dtypes.REDUCED:  # PyTorch has no float16/bfloat16 kernel
        raise NotImplementedError(f"\"pdist\" not implemented for '{input.dtype.scalar_name}'")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    if i.size == 0:
        return input.new_zeros((0,))
    diff = input[make(i.astype(np.int64))] - input[make(j.astype(np.int64))]
    return diff.norm(p, dim=1)


def _strided_index(size, stride, offset: int) -> np.ndarray:
    idx = np.full(tuple(size), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        idx = idx + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return idx


class AsStridedBackward1(Node):
    """``as_strided_``'s backward: each element's gradient goes back to the position it was
    read from (added up where positions repeat), in the tensor's old shape."""

    def backward(self, xp, g):
        flat = xp.scatter_into(g, (self._index,), (self._numel,))
        return xp.reshape(flat, self._in_shape)


def as_strided_(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:  # noqa: A002
    """In-place ``as_strided``: the tensor itself takes the new size and strides over its
    (contiguous) memory, which it keeps sharing with its views.

    >>> import retrograd as torch
    >>> x = torch.arange(6.)
    >>> x.as_strided_((2, 2), (1, 2), 1)
    tensor([[1., 3.],
            [2., 4.]])
    """
    _check_inplace_view(input)
    size, stride = tuple(int(v) for v in size), tuple(int(v) for v in stride)
    offset = int(storage_offset or 0)
    idx = _strided_index(size, stride, offset)
    n = input.numel()
    if idx.size and (idx.max() >= n or idx.min() < 0):
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset} out of bounds for storage of {n} elements")
    old = input._data
    arr = (old if old.flags.c_contiguous else np.ascontiguousarray(old)).reshape(-1)
    view = np.lib.stride_tricks.as_strided(arr[offset:], size, tuple(
        v * arr.itemsize for v in stride)) if idx.size else arr[:0].reshape(size)
    r = apply(AsStridedBackward1, view, input, _index=idx, _numel=n, _in_shape=old.shape)
    return _inplace_view(input, r, AsStridedBackward1)


def as_strided_scatter(input: Tensor, src: Tensor, size, stride,  # noqa: A002
                       storage_offset: int | None = None) -> Tensor:
    """A copy of ``input`` with the elements ``as_strided`` would pick replaced by ``src``.

    >>> import retrograd as torch
    >>> torch.as_strided_scatter(torch.zeros(4), torch.ones(2), (2,), (2,))
    tensor([1., 0., 1., 0.])
    """
    idx = _strided_index(size, stride, storage_offset or 0)
    flat = input.reshape(-1).clone()
    flat[make(idx.reshape(-1))] = src.reshape(-1)
    return flat.reshape(tuple(input.shape))


def range(start=0, end=None, step=1, *, dtype=None, requires_grad: bool = False,  # noqa: A001
          **kwargs) -> Tensor:
    """Deprecated in PyTorch: ``[start, end]`` with ``end`` included, in the default float
    dtype.
    """
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:  # (PyTorch's range has no one-argument form)
        raise TypeError('range() missing 1 required positional arguments: "end"')
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    dt = dtype or _dtypes.get_default_dtype()
    if dt.scalar_name == "Bool":
        raise NotImplementedError("\"range_cpu\" not implemented for 'Bool'")
    np_dtype = np.dtype(dt.np)
    n = int(np.floor((end - start) / step)) + 1
    t = make((start + np.arange(max(n, 0)) * step).astype(np_dtype))
    return t.requires_grad_(True) if requires_grad else t


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad: bool = False) -> Tensor:
    """A tensor from ``obj``, sharing memory where it can (a tensor of the same dtype comes
    back as is, a NumPy array is shared).

    >>> import retrograd as torch
    >>> x = torch.tensor([1., 2.]); torch.asarray(x) is x
    True
    """
    if isinstance(obj, Tensor):
        if (dtype is None or dtype == obj.dtype) and not copy:
            return obj
        out = obj.to(dtype) if dtype is not None else obj
        return out.clone() if copy and out is obj else out
    if isinstance(obj, np.ndarray) and not copy and dtype is None:
        t = make(obj)
    else:
        t = _creation.tensor(obj, dtype=dtype)
    return t.requires_grad_(True) if requires_grad else t


def empty_strided(size, stride, *, dtype=None, layout=None, device=None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` with the given strides, over a storage just large
    enough (zeros here).

    >>> import retrograd as torch
    >>> torch.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    np_dtype = _creation.empty((), dtype=dtype)._data.dtype  # (the dtype's checks and default)
    out = make(empty_strided_array(size, stride, np_dtype))
    return out.requires_grad_(True) if requires_grad else out


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` laid out in memory in ``physical_layout`` order.

    >>> import retrograd as torch
    >>> torch.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
    (12, 1, 3)
    """
    phys = tuple(size[d] for d in physical_layout)
    base = _creation.empty(phys, dtype=dtype)
    inverse = np.argsort(physical_layout)
    out = base.permute(*[int(i) for i in inverse])
    return out.requires_grad_(True) if requires_grad else out


def fill(input: Tensor, value) -> Tensor:  # noqa: A002
    """A new tensor like ``input`` filled with ``value`` (differentiable in a tensor value)."""
    return input.clone().fill_(value)


class iinfo:  # noqa: N801 - PyTorch's name
    """Machine limits of an integer dtype: ``bits``, ``min``, ``max``, ``dtype``.

    >>> import retrograd as torch
    >>> torch.iinfo(torch.int8)
    iinfo(min=-128, max=127, dtype=int8)
    """

    def __init__(self, type) -> None:  # noqa: A002
        np_t = np.dtype(type.np)
        if np_t.kind == "b":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if np_t.kind not in "iu":
            # (PyTorch's message names its own class where it means the dtype)
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        info = np.iinfo(np_t)
        self.bits, self.min, self.max = info.bits, int(info.min), int(info.max)
        self.dtype = type.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def is_complex(input: Tensor) -> bool:  # noqa: A002
    """False: retrograd has no complex dtypes."""
    return False


def is_inference(input: Tensor) -> bool:  # noqa: A002
    """Whether the tensor was made in inference mode."""
    return input.is_inference()


def get_device(input: Tensor) -> int:  # noqa: A002
    """-1: the CPU."""
    return -1


def conj_physical_(input: Tensor) -> Tensor:  # noqa: A002
    """In place conjugate: nothing to do without complex dtypes."""
    return input


def i0_(input: Tensor) -> Tensor:  # noqa: A002
    """``input.i0_()``."""
    return input.i0_()


def _linear(x, w, b):
    out = x.matmul(w.t())
    return out if b is None else out + b


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    """``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    return (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    """``relu(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    return (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).relu()


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    """One LSTM step: ``hx = (h, c)``, returns ``(h', c')`` (gates i, f, g, o)."""
    h, c = hx
    gates = _linear(input, w_ih, b_ih) + _linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c2 = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c2.tanh(), c2


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    """One GRU step (gates r, z, n as PyTorch orders them)."""
    gi, gh = _linear(input, w_ih, b_ih), _linear(hx, w_hh, b_hh)
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r, z = (i_r + h_r).sigmoid(), (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return n + z * (hx - n)


def _rnn(cell, n_states: int, input, hx, params, has_biases, num_layers, dropout, train,  # noqa: A002
         bidirectional, batch_first):
    """The multi-layer, optionally bidirectional recurrence of the ATen RNN functions."""
    dirs = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    x = input.transpose(0, 1) if batch_first else input
    states = [list(h.unbind(0)) for h in (hx if n_states == 2 else [hx])]
    finals = [[] for _ in _builtin_range(n_states)]
    for layer in _builtin_range(num_layers):
        outs = []
        for d in _builtin_range(dirs):
            i = layer * dirs + d
            w = params[i * per:(i + 1) * per]
            args = (w[0], w[1], w[2], w[3]) if has_biases else (w[0], w[1])
            state = tuple(s[i] for s in states)
            steps = _builtin_range(x.shape[0] - 1, -1, -1) if d else _builtin_range(x.shape[0])
            ys = [None] * x.shape[0]
            for t in steps:
                if n_states == 2:
                    state = cell(x[t], state, *args)
                    ys[t] = state[0]
                else:
                    state = (cell(x[t], state[0], *args),)
                    ys[t] = state[0]
            outs.append(stack(ys, 0))
            for j in _builtin_range(n_states):
                finals[j].append(state[j])
        x = cat(outs, -1) if dirs == 2 else outs[0]
        if dropout and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    out = x.transpose(0, 1) if batch_first else x
    return (out,) + tuple(stack(f, 0) for f in finals)


def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,  # noqa: A002
         batch_first):
    """The ATen LSTM: ``(output, h_n, c_n)`` from ``hx = (h_0, c_0)`` and the flat ``params``
    (per layer and direction: ``w_ih, w_hh[, b_ih, b_hh]``)."""
    return _rnn(lstm_cell, 2, input, hx, params, has_biases, num_layers, dropout, train,
                bidirectional, batch_first)


def gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,  # noqa: A002
        batch_first):
    """The ATen GRU: ``(output, h_n)``."""
    return _rnn(gru_cell, 1, input, hx, params, has_biases, num_layers, dropout, train,
                bidirectional, batch_first)


def rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,  # noqa: A002
             batch_first):
    """The ATen Elman RNN with tanh: ``(output, h_n)``."""
    return _rnn(rnn_tanh_cell, 1, input, hx, params, has_biases, num_layers, dropout, train,
                bidirectional, batch_first)


def rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,  # noqa: A002
             batch_first):
    """The ATen Elman RNN with ReLU: ``(output, h_n)``."""
    return _rnn(rnn_relu_cell, 1, input, hx, params, has_biases, num_layers, dropout, train,
                bidirectional, batch_first)


class OutOfMemoryError(RuntimeError):
    """PyTorch's out-of-memory error (raised by accelerators; retrograd's arrays raise
    NumPy's ``MemoryError``)."""


def is_distributed(input: Tensor) -> bool:  # noqa: A002
    """False: a tensor is never a distributed one."""
    return False


def _deprecated_autocast(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled() -> bool:
    """Deprecated in PyTorch: ``is_autocast_enabled("cpu")``."""
    _deprecated_autocast("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return _root().is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated in PyTorch: ``set_autocast_enabled("cpu", enabled)``."""
    _deprecated_autocast("set_autocast_cpu_enabled(enabled)",
                         "set_autocast_enabled('cpu', enabled)")
    _root().set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    """Deprecated in PyTorch: ``get_autocast_dtype("cpu")``."""
    _deprecated_autocast("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _root().get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype) -> None:
    """Deprecated in PyTorch: ``set_autocast_dtype("cpu", dtype)``."""
    _deprecated_autocast("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _root().set_autocast_dtype("cpu", dtype)


def _root():
    return sys.modules["retrograd"]


def get_device_module(device=None):
    """The module of a device type: ``retrograd.cpu`` (the only device).

    >>> import retrograd as torch
    >>> torch.get_device_module("cpu").__name__
    'retrograd.cpu'
    """
    kind = "cpu" if device is None else getattr(device, "type", str(device).split(":")[0])
    module = getattr(_root(), kind, None) if kind == "cpu" else None
    if module is None:
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered "
                           f"as 'torch.{kind}'.")
    return module


def convolution(input, weight, bias, stride, padding, dilation, transposed: bool,  # noqa: A002
                output_padding, groups: int):
    """The ATen convolution: ``conv{1,2,3}d`` or their transposes by the weight's rank."""
    nd = weight.dim() - 2
    if transposed:
        fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[nd]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    return fn(input, weight, bias, stride, padding, dilation, groups)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0,
             reduction: int = 1, zero_infinity: bool = False):
    """``nn.functional.ctc_loss`` (integer ``reduction``, as the ATen form)."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _REDUCTION[reduction], zero_infinity)


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int = 2, M=None):  # noqa: N803
    """``(U, S, V)`` of rank ``q`` with ``A - M ~ U diag(S) V^T``: the leading singular
    triplets (computed exactly here, where PyTorch iterates a randomized subspace).
    """
    X = A if M is None else A - M
    q = min(6 if q is None else q, *X.shape[-2:])
    U, S, Vh = linalg.svd(X, full_matrices=False)
    return U[..., :q], S[..., :q], Vh[..., :q, :].mT


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2):  # noqa: N803
    """``svd_lowrank`` of ``A`` with its column means removed (``q`` up to 6)."""
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    X = A - A.mean(dim=-2, keepdim=True) if center else A
    return svd_lowrank(X, q, niter)


legacy_contiguous_format = contiguous_format  # PyTorch's alias


def install() -> None:
    """Bind ``Tensor.as_strided_`` and ``Tensor.as_strided_scatter`` (``as_strided`` is an op:
    ``ops.strided``)."""
    for name, fn in (("as_strided_", as_strided_),
                     ("as_strided_scatter", as_strided_scatter)):
        if name not in Tensor.__dict__:
            setattr(Tensor, name, fn)
