"""Primitive ops behind nn.functional's normalisation, linear and embedding layers.

NOTE: each op here is a primitive (one node) rather than a composite for speed and to match
PyTorch's grad_fn names: ``linear`` on a matrix is one of linalg's ``AddmmBackward0``
(``MmBackward0`` without bias) of the input and ``w.t()`` (a ``TBackward0`` view, as PyTorch
records it; the weight's gradient is computed in that view's layout, so it comes out
contiguous); layer, batch and group
norm are ``NativeLayerNormBackward0``, ``NativeBatchNormBackward0`` and
``NativeGroupNormBackward0`` with the closed-form backward
``dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))``; ``embedding`` is
``EmbeddingBackward0`` with a sort-and-segment-sum backward (far faster than ``np.add.at``).

Every formula runs on arrays (first order, reusing the normalised input and ``rstd`` that the
forward computed) and on tensors (``create_graph=True``): there it recomputes the statistics
from the saved input with differentiable ops, so every higher derivative is right.

The functions are internal; ``nn.functional`` wraps them. The exceptions, public as in
PyTorch: ``_weight_norm`` (``nn.utils``' weight normalisation: the primitive
``_weight_norm_interface``, ``WeightNormInterfaceBackward0``, for a norm over all dims but the
first or the last, else PyTorch's composite over ``norm_except_dim``).
"""

from __future__ import annotations

import numpy as np

from .._dtypes import F32, FLOAT_CHARS, FROM_NP, REDUCED
from .._tensor import Tensor, make
from ..autograd.graph import Node
from . import _apply, _array, _norm_reduced
from ._apply import apply, apply_binary, needs_grad
from ._autocast import lower_precision
from ._core import arg_error
from .indexing import scatter_into
from .linalg import AddmmBackward0, MmBackward0, _expand_error
from .reduction import LinalgVectorNormBackward0, norm, vector_norm
from .shape import reshape, transpose

__all__: list = ["_weight_norm", "_weight_norm_interface", "norm_except_dim"]
XP: list = ["embedding_dense_backward", "norm_rows_sum", "norm_rows_dot", "norm_cols_sum",
            "norm_cols_dot", "norm_chan_sum", "norm_chan_dot"]
METHODS: dict = {}
INPLACE: dict = {}


def _const(xp, arr):
    """An array as a constant of the formula's namespace (a tensor without history)."""
    return make(arr) if xp.TENSORS else arr


class _NormNode(Node):
    _xhat = None
    _rstd = None
    _mean = None
    _red = False  # a float16/bfloat16 input: the array backward is PyTorch's reduced kernel's

    def release(self) -> None:
        super().release()
        self._xhat = None
        self._rstd = None
        self._mean = None


# -- linear ------------------------------------------------------------------------------------


def linear2d(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    """``x @ w.T + b`` for a matrix ``x`` and a matrix ``w``: one node."""
    xd, wd = x._data, w._data
    if xd.dtype != wd.dtype:
        if b is None:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                               f"{FROM_NP[xd.dtype].c_name} != {FROM_NP[wd.dtype].c_name}")
        if b._data.dtype == wd.dtype:  # PyTorch's addmm checks the bias against mat2 first
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                               f"{FROM_NP[xd.dtype].scalar_name} and "
                               f"{FROM_NP[wd.dtype].scalar_name}")
    if xd.shape[1] != wd.shape[1]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({xd.shape[0]}x"
                           f"{xd.shape[1]} and {wd.shape[1]}x{wd.shape[0]})")
    wt = w.t()  # TBackward0, as PyTorch records linear
    if b is None:
        return apply_binary(MmBackward0, MmBackward0.forward, x, wt, _mat2_t=True)
    bd = b._data
    if _apply.PEEK is not None:
        kept = _apply.PEEK(AddmmBackward0)
        if kept is not None:  # selective checkpointing's recomputation: apply takes the output
            # kept from the forward (checked then), so the product is not computed again
            return apply(AddmmBackward0, kept._data, b, x, wt,
                         save=(x if needs_grad(wt) else None, wt if needs_grad(x) else None),
                         _bias_vec=bd.shape == (kept._data.shape[1],), _mat2_t=True)
    # float16/bfloat16: float32 BLAS, the bias added in float32 and one rounding, as PyTorch.
    rd = xd.dtype if xd.dtype in REDUCED else None
    out = np.matmul(xd, wd.T) if rd is None else np.matmul(xd.astype(F32), wd.T.astype(F32))
    bias_vec = bd.shape == (out.shape[1],)
    if not bias_vec:
        try:
            ok = np.broadcast_shapes(bd.shape, out.shape) == out.shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(_expand_error(bd.shape, out.shape))
    if bd.dtype != wd.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{FROM_NP[bd.dtype].scalar_name} and {FROM_NP[wd.dtype].scalar_name}")
    if rd is None:
        out += bd
    else:
        out += bd.astype(F32)
        out = out.astype(rd)
    # Each factor is kept only for the other's gradient; a bias row's gradient is a column sum.
    return apply(AddmmBackward0, out, b, x, wt,
                 save=(x if needs_grad(wt) else None, wt if needs_grad(x) else None),
                 _bias_vec=bias_vec, _mat2_t=True)


@lower_precision
def linear(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    """``x @ w.T + b``: one node for a matrix ``w`` and a matrix input (or a contiguous input
    with a bias, its leading dims flattened and restored), else ``matmul`` and ``add`` (as
    PyTorch: a non-contiguous input's bias is added after the product, which rounds twice in
    float16/bfloat16)."""
    if w._data.ndim == 2:
        nd = x._data.ndim
        if nd == 2:
            return linear2d(x, w, b)
        if b is not None and nd != 0 and x.is_contiguous():
            shape = x._data.shape
            out = linear2d(x.reshape(-1, shape[-1]), w, b)
            return out.view(shape[:-1] + (w._data.shape[0],))
    out = x.matmul(w.t())
    return out if b is None else out + b


# -- pairwise_distance's norm -------------------------------------------------------------------


class NormBackward1(LinalgVectorNormBackward0):
    """``norm(x, p, dim)`` as PyTorch's ``pairwise_distance`` records it (ATen's
    ``norm.ScalarOpt_dim``): linalg.vector_norm's formula under that op's grad_fn name."""


def norm_last_dim(d: Tensor, p: float, keepdim: bool) -> Tensor:
    """The ``p``-norm of ``d`` over its last dim (all of a 0-d ``d``), one ``NormBackward1``.

    >>> import retrograd as torch
    >>> norm_last_dim(torch.tensor([[3., 4.]], requires_grad=True), 2.0, False)
    tensor([5.], grad_fn=<NormBackward1>)
    """
    a = d._data
    dims = (a.ndim - 1,) if a.ndim else None
    # vector_norm's forward and checks, on a history-free alias: it records nothing.
    out = vector_norm(make(a), p, dims, keepdim)._data
    keep = None if keepdim or dims is None else a.shape[:-1] + (1,)
    return apply(NormBackward1, out, d, save=(d,), save_out=True, _p=float(p), _dims=dims,
                 _keep=keep)


# -- reductions the formulas use (array twins run on BLAS: far faster than np.sum) ------------

_ONES: dict = {}


def _ones(n: int, dtype) -> np.ndarray:
    key = (n, dtype)
    v = _ONES.get(key)
    if v is None:
        if len(_ONES) > 256:
            _ONES.clear()
        v = _ONES[key] = np.ones(n, dtype)
        v.flags.writeable = False
    return v


def _np_norm_rows_sum(a):
    return np.matmul(a, _ones(a.shape[1], a.dtype))[:, None]


def _np_norm_rows_dot(a, b):
    return np.einsum("ij,ij->i", a, b)[:, None]


def _np_norm_cols_sum(a):
    if a.dtype in REDUCED:  # (a bias's gradient) float32 sums, rounded once, as PyTorch's sum
        return np.matmul(_ones(a.shape[0], F32), a.astype(F32)).astype(a.dtype)
    return np.matmul(_ones(a.shape[0], a.dtype), a)


def _np_norm_cols_dot(a, b):
    return np.einsum("ij,ij->j", a, b)


def _np_norm_chan_sum(a):
    return np.einsum("ncl->c", a)[None, :, None]


def _np_norm_chan_dot(a, b):
    return np.einsum("ncl,ncl->c", a, b)[None, :, None]


def norm_rows_sum(a):
    """Sums of the rows of a matrix, as a column (twin of the BLAS-backed array version)."""
    return a.sum(1, keepdim=True)


def norm_rows_dot(a, b):
    return (a * b).sum(1, keepdim=True)


def norm_cols_sum(a):
    return a.sum(0)


def norm_cols_dot(a, b):
    return (a * b).sum(0)


def norm_chan_sum(a):
    """Sums over dims 0 and 2 of an (N, C, L) tensor, kept as (1, C, 1)."""
    return a.sum((0, 2), keepdim=True)


def norm_chan_dot(a, b):
    return (a * b).sum((0, 2), keepdim=True)


_array.register(norm_rows_sum=_np_norm_rows_sum, norm_rows_dot=_np_norm_rows_dot,
                norm_cols_sum=_np_norm_cols_sum, norm_cols_dot=_np_norm_cols_dot,
                norm_chan_sum=_np_norm_chan_sum, norm_chan_dot=_np_norm_chan_dot)


# -- row normalisation shared by layer and group norm -----------------------------------------


def _rows_forward(x2: np.ndarray, eps: float):
    """``xhat``, ``rstd`` and the mean (both shape (M, 1)) of the rows of a 2-D array."""
    k = x2.shape[1]
    if k == 0:
        z = np.zeros((x2.shape[0], 1), x2.dtype)
        return x2.copy(), z, z
    mean = _np_norm_rows_sum(x2) / k
    xc = x2 - mean
    var = _np_norm_rows_dot(xc, xc) / k
    rstd = 1.0 / np.sqrt(var + eps)
    rstd = rstd.astype(x2.dtype, copy=False)
    np.multiply(xc, rstd, out=xc)
    return xc, rstd, mean


def _rows_stats(xp, x2, eps):
    """The same, recomputed with differentiable ops (for create_graph)."""
    k = x2.shape[1]
    xc = x2 - xp.norm_rows_sum(x2) / k
    rstd = xp.pow(xp.norm_rows_dot(xc, xc) / k + eps, -0.5)
    return xc * rstd, rstd


def _rows_grad(xp, gxh, xhat, rstd):
    """Gradient of the row normalisation: ``rstd * (gxh - mean(gxh) - xhat * mean(gxh xhat))``."""
    k = gxh.shape[1]
    mean_g = xp.norm_rows_sum(gxh) / k
    mean_gx = xp.norm_rows_dot(gxh, xhat) / k
    if xp.TENSORS:
        return rstd * (gxh - mean_g - xhat * mean_gx)
    # NOTE: the same formula, in place on one temporary (arrays only): fewer passes over memory.
    out = xhat * mean_gx
    np.subtract(gxh, out, out=out)
    out -= mean_g
    out *= rstd
    return out


# -- layer norm --------------------------------------------------------------------------------


class NativeLayerNormBackward0(_NormNode):
    """Keeps the input, weight and bias (the bias only version-checked), as PyTorch's node."""

    # What PyTorch's node saves, in its order (autograd/saved_hooks.py): its mean and rstd
    # outputs are the statistics this node keeps in its own form.
    _packs = (2, 0, 1, "=result1", "=result2")

    def backward(self, xp, g):
        x, w, _ = self.saved(xp.TENSORS)
        m, k = self._mk
        g2 = xp.reshape(g, (m, k))
        if self._red and not xp.TENSORS:
            gx, gw, gb = _norm_reduced.layer_norm_backward(
                g2, x.reshape(m, k), self._mean, self._rstd, None if w is None else w.reshape(k),
                (self._needs(0), self._needs(1), self._needs(2)))
            return (None if gx is None else gx.reshape(self._xshape),
                    None if gw is None else gw.reshape(self._wshape),
                    None if gb is None else gb.reshape(self._wshape))
        if xp.TENSORS:
            xhat, rstd = _rows_stats(xp, xp.reshape(x, (m, k)), self._eps)
        else:
            xhat, rstd = self._xhat, self._rstd
        gx = gw = gb = None
        if self._needs(0):
            gxh = g2 if w is None else g2 * xp.reshape(w, (k,))
            gx = xp.reshape(_rows_grad(xp, gxh, xhat, rstd), self._xshape)
        if self._needs(1):
            gw = xp.reshape(xp.norm_cols_dot(g2, xhat), self._wshape)
        if self._needs(2):
            gb = xp.reshape(xp.norm_cols_sum(g2), self._wshape)
        return gx, gw, gb


def native_layer_norm(x: Tensor, normalized_shape: tuple, w, b, eps: float) -> Tensor:
    """Layer norm over the trailing ``normalized_shape`` dims of ``x``: one node."""
    xd = x._data
    if xd.dtype.char not in FLOAT_CHARS:
        raise NotImplementedError(f"\"LayerNormKernelImpl\" not implemented for "
                                  f"'{FROM_NP[xd.dtype].scalar_name}'")
    k = int(np.prod(normalized_shape)) if normalized_shape else 1
    m = xd.size // k if k else 0
    # float16/bfloat16 (with weights of any float dtype, as under autocast): computed in
    # float32 and rounded once to the input's dtype, as PyTorch's kernel.
    rd = xd.dtype if xd.dtype in REDUCED else None
    xs = xd if rd is None else xd.astype(F32)
    xhat, rstd, mean = _rows_forward(np.ascontiguousarray(xs).reshape(m, k), eps)
    if rd is not None:  # the statistics the backward reads, as PyTorch stores them
        pdt = _norm_reduced.param_dtype(rd, *(p._data for p in (w, b) if p is not None))
        mean, rstd = _norm_reduced.rounded(mean, pdt), _norm_reduced.rounded(rstd, pdt)
    if w is not None:
        out = xhat * (w._data.reshape(k) if rd is None else w._data.reshape(k).astype(F32))
        if b is not None:
            out += b._data.reshape(k) if rd is None else b._data.reshape(k).astype(F32)
    elif b is not None:
        out = xhat + (b._data.reshape(k) if rd is None else b._data.reshape(k).astype(F32))
    else:
        out = xhat.copy()
    out = out.reshape(xd.shape) if rd is None else out.reshape(xd.shape).astype(rd)
    return apply(NativeLayerNormBackward0, out, x, w, b, save=(x, w, b), _mk=(m, k), _eps=eps,
                 _xshape=xd.shape, _wshape=tuple(normalized_shape),
                 _xhat=None if rd is not None else xhat, _rstd=rstd, _mean=mean,
                 _red=rd is not None)


# -- batch norm --------------------------------------------------------------------------------


def _channel_affine(xhat3, w, b, c: int):
    """``xhat * weight + bias`` per channel of an (N, C, L) array (a fresh array)."""
    if w is not None:
        out = xhat3 * w._data.reshape(1, c, 1)
        if b is not None:
            out += b._data.reshape(1, c, 1)
        return out
    if b is not None:
        return xhat3 + b._data.reshape(1, c, 1)
    return xhat3.copy()


class NativeBatchNormBackward0(_NormNode):
    _packs = (0, "=running_mean", "=running_var", 1, "=result1", "=result2")

    def backward(self, xp, g):
        x, w = self.saved(xp.TENSORS)
        n, c, length = self._ncl
        cnt = n * length
        g3 = xp.reshape(g, (n, c, length))
        training = self._training
        if self._red and not xp.TENSORS:
            rv = self._running[1]
            gx, gw, gb = _norm_reduced.batch_norm_backward(
                g3, x.reshape(n, c, length), w, self._mean, self._rstd,
                None if rv is None else rv._data, training, self._eps,
                (self._needs(0), self._needs(1), self._needs(2)))
            return None if gx is None else gx.reshape(self._xshape), gw, gb
        if xp.TENSORS:
            x3 = xp.reshape(x, (n, c, length))
            if training:
                xc = x3 - xp.norm_chan_sum(x3) / cnt
                rstd = xp.pow(xp.norm_chan_dot(xc, xc) / cnt + self._eps, -0.5)
                xhat = xc * rstd
            else:
                rstd = make(self._rstd)
                xhat = (x3 - make(self._mean)) * rstd
        else:
            xhat, rstd = self._xhat, self._rstd
        need_x, need_w, need_b = self._needs(0), self._needs(1), self._needs(2)
        scale = rstd if w is None else rstd * xp.reshape(w, (1, c, 1))
        gx = gw = gb = sg = sgx = None
        if need_b or (need_x and training):
            sg = xp.norm_chan_sum(g3)
        if need_w or (need_x and training):
            sgx = xp.norm_chan_dot(g3, xhat)
        if need_x:
            if training and xp.TENSORS:
                gx = scale * (g3 - sg / cnt - xhat * (sgx / cnt))
            elif training:
                # NOTE: the same formula, in place on one temporary (arrays only).
                gx = xhat * (sgx / cnt)
                np.subtract(g3, gx, out=gx)
                gx -= sg / cnt
                gx *= scale
            else:
                gx = g3 * scale
            gx = xp.reshape(gx, self._xshape)
        if need_w:
            gw = xp.reshape(sgx, (c,))
        if need_b:
            gb = xp.reshape(sg, (c,))
        return gx, gw, gb


def native_batch_norm(x: Tensor, w, b, running_mean, running_var, training: bool,
                      momentum: float, eps: float) -> Tensor:
    """Batch norm of ``x`` (N, C, *) per channel: one node. In training the batch statistics
    normalise and, when given, the running statistics are updated in place."""
    xd = x._data
    n, c = xd.shape[0], xd.shape[1]
    length = xd.size // (n * c) if n * c else 0
    x3 = np.ascontiguousarray(xd).reshape(n, c, length)
    if xd.dtype in REDUCED:  # float16/bfloat16: PyTorch's kernel, its roundings included
        rm, rv = (None if r is None else r._data for r in (running_mean, running_var))
        out, mean, rstd = _norm_reduced.batch_norm_forward(
            x3, None if w is None else w._data, None if b is None else b._data, rm,
            rv, training, momentum, eps)
        for r in (running_mean, running_var) if training else ():
            if r is not None:
                r._vc[0] += 1
        return apply(NativeBatchNormBackward0, out.reshape(xd.shape), x, w, b, save=(x, w),
                     _ncl=(n, c, length), _eps=eps, _training=training, _xshape=xd.shape,
                     _rstd=rstd, _mean=mean, _running=(running_mean, running_var), _red=True)
    dt = x3.dtype
    if training:
        cnt = n * length
        mean = _np_norm_chan_sum(x3) / cnt
        xc = x3 - mean
        var = _np_norm_chan_dot(xc, xc) / cnt
        rstd = (1.0 / np.sqrt(var + eps)).astype(dt, copy=False)
        xhat = np.multiply(xc, rstd, out=xc)
        if running_mean is not None:
            rm = running_mean._data
            rm *= 1 - momentum
            rm += momentum * mean.reshape(c)
            running_mean._vc[0] += 1
        if running_var is not None:
            rv = running_var._data
            rv *= 1 - momentum
            rv += (momentum * cnt / max(cnt - 1, 1)) * var.reshape(c)
            running_var._vc[0] += 1
    else:
        mean = running_mean._data.reshape(1, c, 1).astype(dt, copy=False)
        rstd = (1.0 / np.sqrt(running_var._data.reshape(1, c, 1) + eps)).astype(dt, copy=False)
        xhat = (x3 - mean) * rstd
    out = _channel_affine(xhat, w, b, c).reshape(xd.shape)
    return apply(NativeBatchNormBackward0, out, x, w, b, save=(x, w), _ncl=(n, c, length),
                 _eps=eps, _training=training, _xshape=xd.shape, _xhat=xhat, _rstd=rstd,
                 _mean=None if training else mean, _running=(running_mean, running_var))


# -- group norm --------------------------------------------------------------------------------


class NativeGroupNormBackward0(_NormNode):
    _packs = (0, 1, "=result1", "=result2")

    def backward(self, xp, g):
        x, w = self.saved(xp.TENSORS)
        n, c, length, groups = self._nclg
        rows = (n * groups, (c // groups) * length)
        g3 = xp.reshape(g, (n, c, length))
        if self._red and not xp.TENSORS:
            gx, gw, gb = _norm_reduced.group_norm_backward(
                g3, x.reshape(n, c, length), self._mean, self._rstd, w, groups,
                (self._needs(0), self._needs(1), self._needs(2)))
            return None if gx is None else gx.reshape(self._xshape), gw, gb
        if not xp.TENSORS and g3.dtype in REDUCED:
            g3 = g3.astype(F32)
        if xp.TENSORS:
            xhat2, rstd = _rows_stats(xp, xp.reshape(x, rows), self._eps)
        else:
            xhat2, rstd = self._xhat, self._rstd
        xhat3 = xp.reshape(xhat2, (n, c, length))
        gx = gw = gb = None
        if self._needs(0):
            gxh = g3 if w is None else g3 * xp.reshape(w, (1, c, 1))
            gx = xp.reshape(_rows_grad(xp, xp.reshape(gxh, rows), xhat2, rstd), self._xshape)
        if self._needs(1):
            gw = xp.reshape(xp.norm_chan_dot(g3, xhat3), (c,))
        if self._needs(2):
            gb = xp.reshape(xp.norm_chan_sum(g3), (c,))
        return gx, gw, gb


def native_group_norm(x: Tensor, num_groups: int, w, b, eps: float) -> Tensor:
    """Group norm of ``x`` (N, C, *) over groups of channels: one node."""
    xd = x._data
    n, c = xd.shape[0], xd.shape[1]
    length = xd.size // (n * c) if n * c else 0
    rows = (n * num_groups, (c // num_groups) * length)
    rd = xd.dtype if xd.dtype in REDUCED else None  # float32 inside, rounded once
    xs = xd if rd is None else xd.astype(F32)
    xhat2, rstd, mean = _rows_forward(np.ascontiguousarray(xs).reshape(rows), eps)
    xhat3 = xhat2.reshape(n, c, length)
    out = _channel_affine(xhat3, w, b, c).reshape(xd.shape)
    if rd is not None:
        out = out.astype(rd)
        # The statistics the backward reads, as PyTorch stores them (shape (N, G)).
        pdt = _norm_reduced.param_dtype(rd, *(p._data for p in (w, b) if p is not None))
        mean = _norm_reduced.rounded(mean, pdt).reshape(n, num_groups)
        rstd = _norm_reduced.rounded(rstd, pdt).reshape(n, num_groups)
        xhat2 = None
    return apply(NativeGroupNormBackward0, out, x, w, b, save=(x, w),
                 _nclg=(n, c, length, num_groups), _eps=eps, _xshape=xd.shape, _xhat=xhat2,
                 _rstd=rstd, _mean=mean, _red=rd is not None)


# -- embedding ---------------------------------------------------------------------------------


def _np_embedding_dense_backward(g, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The weight gradient of an embedding lookup: rows of ``g`` summed per index."""
    d = g.shape[-1]
    flat = indices.reshape(-1)
    g2 = g.reshape(-1, d)
    out = np.zeros((num_weights, d), g.dtype)
    if flat.size == 0:
        return out
    order = np.argsort(flat, kind="stable")
    s = flat[order]
    starts = np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1])))
    sums = np.add.reduceat(g2[order], starts, axis=0)
    if scale_grad_by_freq:
        counts = np.diff(np.append(starts, s.size))
        sums /= counts.astype(g.dtype)[:, None]
    out[s[starts]] = sums
    if padding_idx is not None and padding_idx >= 0:
        out[padding_idx] = 0
    return out


def embedding_dense_backward(g, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The differentiable twin (for create_graph): a scatter of scaled rows of ``g``."""
    d = g.shape[-1]
    flat = indices.reshape(-1)
    g2 = reshape(g, (-1, d))
    pad = padding_idx is not None and padding_idx >= 0
    if pad or scale_grad_by_freq:
        factor = np.ones(flat.size, g._data.dtype)
        if scale_grad_by_freq:
            counts = np.bincount(flat, minlength=num_weights)
            factor = factor / counts[flat].astype(factor.dtype)
        if pad:
            factor[flat == padding_idx] = 0
        g2 = g2 * make(factor[:, None])
    return scatter_into(g2, flat, (num_weights, d))


_array.register(embedding_dense_backward=_np_embedding_dense_backward)


class EmbeddingBackward0(Node):
    _packs = ("_indices",)  # what PyTorch's node saves (autograd/saved_hooks.py)

    def backward(self, xp, g):
        self.saved(False)  # raises once the graph is freed, as PyTorch (it keeps the indices)
        return xp.embedding_dense_backward(g, self._indices, self._num, self._pad, self._scale)

    def jvp(self, xp, t):
        # Forward mode reads rows as the forward does: padding_idx and scale_grad_by_freq
        # shape only the backward (the double-VJP rule would scale the tangent).
        if xp.TENSORS:
            return embedding(make(self._indices), t, None, False)
        return t.take(self._indices, axis=0)


def embedding_renorm_(weight: Tensor, indices: Tensor, max_norm: float,
                      norm_type: float) -> Tensor:
    """Scale down, in place, each row of ``weight`` named in ``indices`` whose
    ``norm_type``-norm exceeds ``max_norm`` (to ``max_norm``); not recorded in the graph."""
    rows = np.unique(indices._data)
    w = weight._data
    sub = w[rows]
    norms = np.linalg.norm(sub, ord=norm_type, axis=1) if sub.size else np.zeros(0)
    big = norms > max_norm
    if big.any():
        scale = (max_norm / (norms[big] + 1e-7)).astype(w.dtype)
        w[rows[big]] = sub[big] * scale[:, None]
        weight._vc[0] += 1
    return weight


def embedding(indices: Tensor, weight: Tensor, padding_idx, scale_grad_by_freq) -> Tensor:
    """Rows of ``weight`` at ``indices`` (an integer tensor): one node."""
    indices = indices._data
    wd = weight._data
    if indices.size and (indices.min() < 0 or indices.max() >= wd.shape[0]):
        raise IndexError("index out of range in self")
    out = wd.take(indices, axis=0)
    # Nothing is saved, but the (empty) save marks the graph as freed after backward.
    return apply(EmbeddingBackward0, out, weight, save=(), _indices=indices, _num=wd.shape[0],
                 _pad=padding_idx, _scale=scale_grad_by_freq)


# -- weight normalisation -------------------------------------------------------------------------

class WeightNormInterfaceBackward0(Node):
    """``w = v * g / ||v||``, the norm over every dim of ``v`` but ``dim`` (first or last):
    ``dg = sum(dw * v) / ||v||``, ``dv = g / ||v|| * (dw - v * sum(dw * v) / ||v||**2)``."""

    def backward(self, xp, gw):
        v, g = self.saved(xp.TENSORS)
        keep = self._keep
        gk = xp.reshape(g, keep)
        n = xp.sqrt(xp.sum_to(v * v, keep))
        a = xp.sum_to(gw * v, keep)
        gg = xp.reshape(a / n, self._gshape) if self._needs(1) else None
        gv = gk / n * (gw - v * (a / (n * n))) if self._needs(0) else None
        return gv, gg


def _check_vg(name: str, v, g=None) -> None:
    """PyTorch's TypeError for a ``v`` or ``g`` that is not a tensor."""
    for k, (arg, x) in enumerate((("v", v), ("g", g))[: 1 if g is None else 2]):
        if not isinstance(x, Tensor):
            raise arg_error(name, arg, k + 1, x)


def _wn_keep(shape: tuple, dim: int) -> tuple:
    return tuple(n if d == dim else 1 for d, n in enumerate(shape))


def _weight_norm_interface(v: Tensor, g: Tensor, dim: int = 0) -> tuple:
    """``(v * g / ||v||, ||v||)``, the norm over every dim of ``v`` but ``dim`` (0 or the
    last), kept as size 1: one node, ``WeightNormInterfaceBackward0`` (the norms need no grad).

    >>> import retrograd as torch
    >>> w, n = torch._weight_norm_interface(torch.tensor([[3., 4.], [0., 2.]]),
    ...                                      torch.tensor([[10.], [1.]]), 0)
    >>> w, n
    (tensor([[6., 8.],
            [0., 1.]]), tensor([[5.],
            [2.]]))
    """
    _check_vg("_weight_norm_interface", v, g)
    vd, gd = v._data, g._data
    d = dim % max(vd.ndim, 1)
    keep = _wn_keep(vd.shape, d)
    axes = tuple(k for k in range(vd.ndim) if k != d)
    if vd.dtype in REDUCED:  # float16/bfloat16: in float32, rounded once, as PyTorch's kernel
        vd, gd = vd.astype(F32), gd.astype(F32)
    norms = np.sqrt(np.sum(vd * vd, axis=axes, keepdims=True, dtype=vd.dtype))
    w = vd * (gd.reshape(keep) / norms)
    vd = v._data
    norms = norms.astype(vd.dtype, copy=False)
    out = apply(WeightNormInterfaceBackward0, w.astype(vd.dtype, copy=False), v, g, save=(v, g),
                _keep=keep, _gshape=g._data.shape, _dim=d, _norms=norms)
    return out, make(norms)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002
    """The ``pow``-norm of ``v`` over every dim but ``dim`` (kept; size 1 elsewhere), over all
    dims for ``dim=-1``, composed as PyTorch composes it.

    >>> import retrograd as torch
    >>> torch.norm_except_dim(torch.tensor([[3., 4.], [0., 2.]]), 2, 0)
    tensor([[5.],
            [2.]])
    """
    _check_vg("norm_except_dim", v)
    if dim == -1:
        return norm(v, pow)
    nd = v.dim()
    if dim == 0:
        return norm(reshape(v.contiguous(), (v.shape[0], -1)), pow, 1).view(
            (v.shape[0],) + (1,) * (nd - 1))
    if dim == nd - 1:
        return norm(reshape(v.contiguous(), (-1, v.shape[-1])), pow, 0).view(
            (1,) * (nd - 1) + (v.shape[-1],))
    return transpose(norm_except_dim(transpose(v, 0, dim), pow, 0), 0, dim)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """Weight normalisation, ``v * g / norm_except_dim(v, 2, dim)``, as PyTorch computes it:
    one ``WeightNormInterfaceBackward0`` node when ``dim`` is the first or the last dim, else
    the composite.

    >>> import retrograd as torch
    >>> v = torch.tensor([[3., 4.]], requires_grad=True)
    >>> torch._weight_norm(v, torch.tensor([[10.]]), 0)
    tensor([[6., 8.]], grad_fn=<WeightNormInterfaceBackward0>)
    """
    _check_vg("_weight_norm", v, g)
    v, g = v.contiguous(), g.contiguous()
    if dim == 0 or dim == v.dim() - 1:
        return _weight_norm_interface(v, g, dim)[0]
    return v * (g / norm_except_dim(v, 2, dim))
