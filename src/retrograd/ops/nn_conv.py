"""Primitive ops behind nn.functional's convolutions, pooling, fold/unfold and resampling.

Everything works on 2-D images (``N, C, H, W``); 1-D inputs are lifted to ``H = 1`` inside the
array code, so every op handles both. Parameters arrive as 2-tuples ``(h, w)``.

NOTE: these are primitives for speed and for PyTorch's grad_fn names. A convolution is im2col
(a strided window view, copied once) and one batched matmul; its backward is a transposed
convolution (a matmul and shifted adds, "col2im") for the input and a matmul against the same
columns for the weight. Stride 1 (the common case) uses "wide" columns and, for the transposed
convolution, one GEMM over column-shifted planes (see the notes at ``_wide_cols`` and
``_wide_transpose``): NumPy runs a pass over one contiguous run several times faster than the
same pass over the short rows of a strided view, so the array layouts are chosen to make the
passes contiguous. The formulas call ``xp.conv_nd`` and
``xp.conv_weight_grad``, which are closed under differentiation (each one's backward is written
with the other), so gradients of every order come from the same code:

- ``y = conv(x, w)``:         ``gx = conv_transpose(g, w)``, ``gw = weight_grad(x, g)``
- ``y = conv_transpose(x, w)``: ``gx = conv(g, w)``,         ``gw = weight_grad(g, x)``
- ``W = weight_grad(x, g)``:  ``gx = conv_transpose(g, G)``, ``gg = conv(x, G)``

Pooling and fold/unfold are built on the same window geometry (``_ranges``): a sum over kernel
offsets of strided slices, which NumPy runs as a handful of vectorised passes; the 2x2,
stride-2 max pool has a fast path of shifted maxima over the flat array (``_pool2x2_arrays``).
"""

from __future__ import annotations

import math

import numpy as np

from .._dtypes import F32, FLOAT_CHARS, FROM_NP, REDUCED
from .._tensor import Tensor
from ..autograd.graph import Node
from . import _array
from ._apply import apply, needs_grad, recording
from ._core import c_order, wrap
from .compare import TiedGradBackward

_strided = np.lib.stride_tricks.as_strided

# -- window geometry -------------------------------------------------------------------------


def _ranges(n_img: int, n_out: int, k: int, s: int, p: int, d: int):
    """For each kernel offset ``i``: (i, image slice, output slice) of the windows that read a
    real (not padding) pixel: output ``o`` reads image row ``o * s - p + i * d``."""
    out = []
    for i in range(k):
        start = i * d - p
        lo = 0 if start >= 0 else (-start + s - 1) // s
        last = n_img - 1 - start
        hi = min(n_out, last // s + 1) if last >= 0 else 0
        if lo < hi:
            out.append((i, slice(start + lo * s, start + (hi - 1) * s + 1, s), slice(lo, hi)))
    return out


def _geometry(img_hw, out_hw, k, s, p, d):
    """Pairs ((i, j), image slices, output slices) over the 2-D kernel offsets."""
    rh = _ranges(img_hw[0], out_hw[0], k[0], s[0], p[0], d[0])
    rw = _ranges(img_hw[1], out_hw[1], k[1], s[1], p[1], d[1])
    return [((i, j), (Ellipsis, hs, ws), (Ellipsis, ho, wo))
            for i, hs, ho in rh for j, ws, wo in rw]


def _as4(a):
    """A 3-D (N, C, L) array as (N, C, 1, L); 4-D unchanged."""
    return a[:, :, None, :] if a.ndim == 3 else a


def _pad4(x, ph: int, pw: int, value=0):
    if not ph and not pw:
        return x
    n, c, h, w = x.shape
    if value == 0:
        out = np.zeros((n, c, h + 2 * ph, w + 2 * pw), x.dtype)
    else:
        out = np.full((n, c, h + 2 * ph, w + 2 * pw), value, x.dtype)
    out[:, :, ph:ph + h, pw:pw + w] = x
    return out


def _windows(xp, k, s, d, out_hw):
    """The view (N, C, kh, kw, Ho, Wo) of a padded image's windows (no copy)."""
    n, c = xp.shape[:2]
    st = xp.strides
    return _strided(xp, (n, c, k[0], k[1], out_hw[0], out_hw[1]),
                    (st[0], st[1], st[2] * d[0], st[3] * d[1], st[2] * s[0], st[3] * s[1]),
                    writeable=False)


def conv_out_size(n: int, k: int, s: int, p: int, d: int) -> int:
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def _cols(x4, k, s, p, d, out_hw):
    """im2col: (N, C * kh * kw, Ho * Wo), channel-major like PyTorch's unfold."""
    n, c = x4.shape[:2]
    v = _windows(_pad4(x4, p[0], p[1]), k, s, d, out_hw)
    return v.reshape(n, c * k[0] * k[1], out_hw[0] * out_hw[1])


def _col2im(cols6, img_hw, s, p, d):
    """Sum columns (N, C, kh, kw, Ho, Wo) back into an image (N, C, H, W); padding dropped."""
    n, c, kh, kw, ho, wo = cols6.shape
    out = np.zeros((n, c) + tuple(img_hw), cols6.dtype)
    for (i, j), img, o in _geometry(img_hw, (ho, wo), (kh, kw), s, p, d):
        out[img] += cols6[:, :, i, j][o]
    return out


# -- convolution arrays ----------------------------------------------------------------------


def _flat_planes(x4, ph: int, pw: int, extra: int):
    """Zero-padded image planes flattened, with ``extra`` zeros after each: (N, C, Hp*Wp+extra)."""
    n, c, h, w = x4.shape
    hp, wp = h + 2 * ph, w + 2 * pw
    out = np.zeros((n, c, hp * wp + extra), x4.dtype)
    out[:, :, :hp * wp].reshape(n, c, hp, wp)[:, :, ph:ph + h, pw:pw + w] = x4
    return out


def _widen(a4, wp: int):
    """(N, C, H, W) -> (N, C, H * wp): rows zero-extended to ``wp`` columns."""
    n, c, h, w = a4.shape
    if w == wp:
        return a4.reshape(n, c, h * wp)
    out = np.zeros((n, c, h, wp), a4.dtype)
    out[..., :w] = a4
    return out.reshape(n, c, h * wp)


# NOTE: for stride 1 the columns are "wide": the window of output (oh, ow) starts at flat index
# oh * Wp + ow of the padded plane, so each kernel offset is one contiguous run of Ho * Wp
# values (Wp - Wo garbage columns per row, dropped after the matmul). The im2col copy and the
# col2im adds then move long contiguous runs instead of rows of Wo values, 2-3x faster.


def _wide_cols(x4, k, p, d, out_hw, ones: bool = False):
    """Wide columns (N, C * kh * kw, Ho * Wp) and Wp; ``ones`` appends a row of ones (the
    bias's column of the GEMM: the bias is added by the matmul, and the weight-gradient GEMM
    sums the bias gradient in the same pass)."""
    n, c, h, w = x4.shape
    wp = w + 2 * p[1]
    extra = d[1] * (k[1] - 1)
    xf = _flat_planes(x4, p[0], p[1], extra)
    st = xf.strides
    it = st[2]
    run = out_hw[0] * wp
    # (np.ndarray over the fresh buffer: as_strided's Python wrapper costs several microseconds)
    v = np.ndarray((n, c, k[0], k[1], run), xf.dtype, xf, 0,
                   (st[0], st[1], d[0] * wp * it, d[1] * it, it))
    ckk = c * k[0] * k[1]
    if not ones:
        return v.reshape(n, ckk, run), wp
    cols = np.empty((n, ckk + 1, run), x4.dtype)
    cols[:, :ckk].reshape(n, c, k[0], k[1], run)[...] = v
    cols[:, ckk] = 1
    return cols, wp


def _wide_col2im(cols5, img_hw, p, d, rows: int, wp: int):
    """Sum wide columns (N, C, kh, kw, rows * wp) back into the (N, C, H, W) image."""
    n, c, kh, kw, _ = cols5.shape
    hp = img_hw[0] + 2 * p[0]
    extra = d[1] * (kw - 1)
    flat = np.zeros((n, c, hp * wp + extra), cols5.dtype)
    run = rows * wp
    for i in range(kh):
        for j in range(kw):
            off = i * d[0] * wp + j * d[1]
            flat[:, :, off:off + run] += cols5[:, :, i, j]
    img = flat[:, :, :hp * wp].reshape(n, c, hp, wp)
    return img[:, :, p[0]:p[0] + img_hw[0], p[1]:p[1] + img_hw[1]]


def _channel_major(a4, wp: int):
    """(N, C, H, W) -> (C, N * H * wp): channels first, each row zero-extended to ``wp`` columns,
    so that one GEMM covers the whole batch and each channel's planes are one contiguous run."""
    n, c, h, w = a4.shape
    out = np.empty((c, n, h, wp), a4.dtype) if w == wp else np.zeros((c, n, h, wp), a4.dtype)
    out[..., :w] = a4.transpose(1, 0, 2, 3)
    return out.reshape(c, n * h * wp)


# NOTE: a stride-1 transposed convolution (the input gradient of a convolution) from channel-major
# wide planes, as one GEMM and kh shifted adds. The kw column shifts move into the GEMM's input:
# its rows (j, ci) are the planes shifted right by j * dilation along the flat array (what
# shifts in at the start of a plane is the zero padding at the end of the previous plane's last
# row), so the GEMM (rows (i, co)) sums the kernel columns itself, with K = kw * Ci instead of
# Ci and an output kw times smaller. The kh row shifts are then added plane by plane. NumPy's
# 1-D passes over contiguous runs are ~4x faster than passes over rows of a 2-D view, and this
# col2im was the costliest part of a small CNN's backward.


def _wide_transpose(xt, w4, b, n: int, rows: int, p, d, out_hw):
    """Transposed convolution, stride 1 and one group, of channel-major wide planes ``xt``
    (Ci, N * rows * wp) (``_channel_major``; wp = out width + 2 * padding): (N, Co, H, W)."""
    ci, co, kh, kw = w4.shape
    h, wd = out_hw
    hp, wp = h + 2 * p[0], wd + 2 * p[1]
    plane = rows * wp
    total = ci * n * plane
    xs = np.empty((kw, total), xt.dtype)
    xf = xt.reshape(-1)
    for j in range(kw):
        off = j * d[1]
        xs[j, :off] = 0
        xs[j, off:] = xf[:total - off]
    wt = w4.transpose(2, 1, 3, 0).reshape(kh * co, kw * ci)
    acc = _array.matmul(wt, xs.reshape(kw * ci, n * plane)).reshape(kh, co, n, plane)
    flat = np.zeros((co, n, hp * wp), acc.dtype)
    for i in range(kh):
        off = i * d[0] * wp
        flat[:, :, off:off + plane] += acc[i]
    img = flat.reshape(co, n, hp, wp)[:, :, p[0]:p[0] + h, p[1]:p[1] + wd].transpose(1, 0, 2, 3)
    out = np.empty((n, co, h, wd), acc.dtype)
    if b is None:
        np.copyto(out, img)
    else:
        np.add(img, b.reshape(-1, 1, 1), out=out)
    return out


def _conv_grads_wide(g, w, cols, need_x: bool, p, d, x_hw, w_shape):
    """Input and weight gradients of a stride-1, one-group convolution on arrays, from the
    forward's wide columns: the output gradient is laid out once (channel-major) for both."""
    g4 = _as4(g)
    n, o, ho, _ = g4.shape
    gt = _channel_major(g4, x_hw[1] + 2 * p[1])
    gx = None
    if need_x:
        gx = _wide_transpose(gt, _as4(w), None, n, ho, p, d, x_hw)
        if g.ndim == 3:
            gx = gx.reshape(n, gx.shape[1], x_hw[1])
    # per sample, columns (C*kh*kw, L) @ gradient (L, O), summed over the batch; a row of ones
    # in the columns (the forward's bias) gives the bias gradient as the last column
    gw = _array.matmul(cols, gt.reshape(o, n, -1).transpose(1, 2, 0)).sum(0).T
    gb = None
    if gw.shape[1] > math.prod(w_shape[1:]):
        gw, gb = gw[:, :-1], np.ascontiguousarray(gw[:, -1])
    return gx, np.ascontiguousarray(gw).reshape(w_shape), gb


def _conv_arrays(x, w, b, s, p, d, groups, out_hw=None):
    """Forward convolution of arrays; returns (output, columns for the weight gradient).

    float16/bfloat16: computed in float32, the bias inside the sums, and rounded once, as
    PyTorch's CPU kernels (the columns stay float32 for the weight gradient)."""
    rd = x.dtype if x.dtype in REDUCED else None
    if rd is not None:
        x, w = x.astype(F32), w.astype(F32)
        b = None if b is None else b.astype(F32)
        out, cols = _conv_arrays(x, w, b, s, p, d, groups, out_hw)
        return out.astype(rd), cols
    x4, w4 = _as4(x), _as4(w)
    n, c, h, wd = x4.shape
    o, cg, kh, kw = w4.shape
    k = (kh, kw)
    if out_hw is None:
        out_hw = (conv_out_size(h, kh, s[0], p[0], d[0]), conv_out_size(wd, kw, s[1], p[1], d[1]))
    wide = s[0] == 1 and s[1] == 1
    # the bias rides in the GEMM (a row of ones in the columns)
    ones = wide and groups == 1 and b is not None
    if wide:
        cols, wp = _wide_cols(x4, k, p, d, out_hw, ones)
    else:
        cols = _cols(x4, k, s, p, d, out_hw)
    if ones:
        out = _array.matmul(np.concatenate((w4.reshape(o, cg * kh * kw), b.reshape(o, 1)), 1),
                            cols)
        b = None
    elif groups == 1:
        out = _array.matmul(w4.reshape(o, cg * kh * kw), cols)
    else:
        out = _array.matmul(w4.reshape(groups, o // groups, cg * kh * kw),
                        cols.reshape(n, groups, cg * kh * kw, -1))
    if wide:
        out = out.reshape(n, o, out_hw[0], wp)[..., :out_hw[1]]
        out = np.ascontiguousarray(out) if b is None else np.add(out, b.reshape(o, 1, 1))
    else:
        out = out.reshape((n, o) + tuple(out_hw))
        if b is not None:
            out += b.reshape(o, 1, 1)
    return (out if x.ndim == 4 else out.reshape(n, o, out_hw[1])), cols


def _conv_transpose_arrays(x, w, b, s, p, d, groups, out_hw):
    """Transposed convolution of arrays: a matmul to columns, then col2im."""
    x4, w4 = _as4(x), _as4(w)
    n, ci, hi, wi = x4.shape
    _, cog, kh, kw = w4.shape
    kk = kh * kw
    wide = s[0] == 1 and s[1] == 1
    if wide and groups == 1:
        out = _wide_transpose(_channel_major(x4, out_hw[1] + 2 * p[1]), w4, b, n, hi, p, d,
                              out_hw)
        return out if x.ndim == 4 else out.reshape(n, out.shape[1], out_hw[1])
    if wide:
        wp = out_hw[1] + 2 * p[1]
        x3 = _widen(x4, wp)
    else:
        x3 = x4.reshape(n, ci, hi * wi)
    if groups == 1:
        cols = _array.matmul(w4.reshape(ci, cog * kk).T, x3)
    else:
        cig = ci // groups
        cols = _array.matmul(w4.reshape(groups, cig, cog * kk).transpose(0, 2, 1),
                         x3.reshape(n, groups, cig, -1))
    if wide:
        img = _wide_col2im(cols.reshape(n, groups * cog, kh, kw, -1), out_hw, p, d, hi, wp)
        out = np.ascontiguousarray(img) if b is None else np.add(img, b.reshape(-1, 1, 1))
    else:
        out = _col2im(cols.reshape(n, groups * cog, kh, kw, hi, wi), out_hw, s, p, d)
        if b is not None:
            out += b.reshape(-1, 1, 1)
    return out if x.ndim == 4 else out.reshape(out.shape[0], out.shape[1], out_hw[1])


def _weight_grad_arrays(x, g, w_shape, s, p, d, groups, cols=None):
    """d(sum(g * conv(x, w)))/dw for arrays; ``cols`` may be the forward's im2col of ``x``."""
    x4, g4 = _as4(x), _as4(g)
    n, o, ho, wo = g4.shape
    w4_shape = (w_shape[0], w_shape[1], 1, w_shape[2]) if len(w_shape) == 3 else tuple(w_shape)
    k = w4_shape[2:]
    if s[0] == 1 and s[1] == 1:
        if cols is None:
            cols, wp = _wide_cols(x4, k, p, d, (ho, wo))
        else:
            wp = x4.shape[3] + 2 * p[1]
        g3 = _widen(g4, wp)
    else:
        if cols is None:
            cols = _cols(x4, k, s, p, d, (ho, wo))
        g3 = g4.reshape(n, o, ho * wo)
    ckk = w4_shape[1] * k[0] * k[1]
    # (columns @ g^T) per sample, summed: BLAS runs this shape faster than g @ columns^T.
    if groups == 1:
        gw = _array.matmul(cols, g3.transpose(0, 2, 1)).sum(0).T
    else:
        cols = cols.reshape(n, groups, ckk, -1)
        gw = _array.matmul(cols, g3.reshape(n, groups, o // groups, -1).transpose(0, 1, 3, 2))
        gw = gw.sum(0).transpose(0, 2, 1)
    return np.ascontiguousarray(gw).reshape(w_shape)


def _reduced_grads(g, x, w, s, p, groups, need_x: bool, need_w: bool, w_shape, x_hw):
    """Input and weight gradients of an undilated convolution in float16/bfloat16 as PyTorch's
    CPU kernel for them (``slow_conv2d``, im2col) rounds: per sample, the input gradient's
    columns ``W^T g`` rounded, then summed into the image one kernel offset at a time (each
    add rounded); the weight gradient accumulated sample by sample (each partial sum rounded).
    """
    rd = g.dtype
    g4 = _as4(g)
    n, o, ho, wo = g4.shape
    cg, kh, kw = w_shape[1], (w_shape[2] if len(w_shape) == 4 else 1), w_shape[-1]
    gf = g4.astype(F32).reshape(n, groups, o // groups, ho * wo)
    gx = gw = None
    if need_x:
        wf = _as4(w).astype(F32).reshape(groups, o // groups, cg * kh * kw).transpose(0, 2, 1)
        cols = _array.matmul(wf, gf).astype(rd)  # (N, G, cg*kh*kw, L)
        img_hw = x_hw if len(x_hw) == 2 else (1, x_hw[-1])
        gx = _col2im(cols.reshape(n, groups * cg, kh, kw, ho, wo), img_hw, s, p, (1, 1))
        if g.ndim == 3:
            gx = gx.reshape(n, groups * cg, img_hw[1])
    if need_w:
        xc = _cols(_as4(x).astype(F32), (kh, kw), s, p, (1, 1), (ho, wo))
        per = _array.matmul(gf, xc.reshape(n, groups, cg * kh * kw, -1).transpose(0, 1, 3, 2))
        acc = np.zeros(per.shape[1:], rd)
        for t in range(n):
            np.add(acc, per[t], out=acc, casting="unsafe")
        gw = acc.reshape(w_shape)
    return gx, gw


def _array_conv_nd(x, w, b, s, p, d, groups, transposed, out_hw):
    if transposed:
        return _conv_transpose_arrays(x, w, b, s, p, d, groups, out_hw)
    return _conv_arrays(x, w, b, s, p, d, groups, out_hw)[0]


def _spatial(a):
    return (1, a.shape[2]) if a.ndim == 3 else a.shape[2:]


class ConvolutionBackward0(Node):
    """Backward of ``conv_nd`` (plain or transposed); see the module docstring."""

    forward = staticmethod(_array_conv_nd)
    _cols = None

    def backward(self, xp, g):
        x, w = self.saved(xp.TENSORS)
        s, p, d, groups, transposed = self._params
        gx = gw = gb = None
        if not xp.TENSORS and not transposed and g.dtype in REDUCED and g.ndim <= 4:
            gb = xp.sum(g.astype(F32), dim=(0, 2, 3) if g.ndim == 4 else (0, 2)) \
                if self._needs(2) else None
            if d[0] == 1 and d[1] == 1:
                gx, gw = _reduced_grads(g, x, w, s, p, groups, self._needs(0), self._needs(1),
                                        self._w_shape, self._x_hw)
                return gx, gw, gb
            # (dilated: float32 sums, each gradient rounded once by the engine)
            g, w, x = (None if a is None else a.astype(F32) for a in (g, w, x))
        if self._cols is not None and not xp.TENSORS and groups == 1 and s[0] == 1 and \
                s[1] == 1:  # (the columns are kept only for a plain convolution's weight)
            gx, gw, gb = _conv_grads_wide(g, w, self._cols, self._needs(0), p, d, self._x_hw,
                                          self._w_shape)
        else:
            if self._needs(0):
                gx = xp.conv_nd(g, w, None, s, p, d, groups, not transposed, self._x_hw)
            if self._needs(1):
                if transposed:
                    gw = xp.conv_weight_grad(g, x, self._w_shape, s, p, d, groups)
                elif not xp.TENSORS and self._cols is not None:
                    gw = _weight_grad_arrays(x, g, self._w_shape, s, p, d, groups, self._cols)
                else:
                    gw = xp.conv_weight_grad(x, g, self._w_shape, s, p, d, groups)
        if not self._needs(2):
            gb = None
        elif gb is None:
            gb = xp.sum(g, dim=(0, 2, 3) if g.ndim == 4 else (0, 2))
        return gx, gw, gb

    def release(self) -> None:
        super().release()
        self._cols = None


def _size(shape) -> str:
    return str(list(shape))


def check_conv(x, w, b, stride, padding, dilation, groups, transposed, nd, name) -> None:
    """PyTorch's checks of an ``nd``-d convolution's (or transposed convolution's) input,
    weight, bias and parameters, in its order and with its messages."""
    xs, ws = x._data.shape, w._data.shape
    if len(xs) != nd + 2:
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
            f"input of size: {_size(xs)}"
        )
    if len(ws) != nd + 2:
        raise RuntimeError(
            "weight should have at least three dimensions" if len(ws) < 3 else
            f"Expected {nd + 2}-dimensional weight for {nd + 2}-dimensional input "
            f"{_size(xs)}, but got {len(ws)}-dimensional weight of size {_size(ws)} instead"
        )
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    xdt, wdt = FROM_NP[x._data.dtype], FROM_NP[w._data.dtype]
    if b is not None and FROM_NP[b._data.dtype] is not xdt:  # the bias's dtype is checked first
        raise RuntimeError(f"Input type ({xdt.c_name}) and bias type "
                           f"({FROM_NP[b._data.dtype].c_name}) should be the same")
    if xdt is not wdt:
        # (PyTorch's oneDNN path words it otherwise, for a float32 input only)
        if xdt.is_floating_point and wdt.is_floating_point and xdt.itemsize < wdt.itemsize \
                and xdt.np not in REDUCED:
            raise RuntimeError(
                f"Input type (torch.{xdt.tensor_type}) and weight type (torch.{wdt.tensor_type}) "
                "should be the same or input should be a MKLDNN tensor and weight is a dense "
                "tensor"
            )
        raise RuntimeError(
            f"expected scalar type {xdt.scalar_name} but found {wdt.scalar_name}"
        )
    if not transposed:
        if ws[0] % groups:
            raise RuntimeError(
                f"Given groups={groups}, expected weight to be divisible by {groups} at "
                f"dimension 0, but got weight of size [{_size(ws)}] instead"
            )
        if xs[1] != ws[1] * groups:
            raise RuntimeError(
                f"Given groups={groups}, weight of size {_size(ws)}, expected input{_size(xs)} "
                f"to have {ws[1] * groups} channels, but got {xs[1]} channels instead"
            )
        out_ch = ws[0]
    else:
        if xs[1] != ws[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {_size(ws)}, expected input{_size(xs)} to "
                f"have {ws[0]} channels, but got {xs[1]} channels instead"
            )
        if ws[0] % groups:
            raise RuntimeError(
                f"Given groups={groups}, expected weight to be divisible by {groups} at "
                f"dimension 0, but got weight of size [{_size(ws)}] instead"
            )
        out_ch = ws[1] * groups
    if b is not None:
        bs = b._data.shape
        if len(bs) != 1 or bs[0] != out_ch:
            raise RuntimeError(
                f"Given weight of size {_size(ws)}, expected bias to be 1-dimensional with "
                f"{out_ch} elements, but got bias of size {_size(bs)} instead"
            )
        bdt = FROM_NP[b._data.dtype]
        if bdt is not xdt:
            raise RuntimeError(
                f"Input type ({xdt.c_name}) and bias type ({bdt.c_name}) should be the same"
            )
    if not transposed:
        padded = [xs[2 + i] + 2 * padding[i] for i in range(nd)]
        kern = [dilation[i] * (ws[2 + i] - 1) + 1 for i in range(nd)]
        if any(pp < kk for pp, kk in zip(padded, kern)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, kern))}). Kernel size can't be greater than "
                "actual input size"
            )


def conv_nd(input, weight, bias, stride, padding, dilation, groups, transposed,  # noqa: A002
            out_hw=None) -> Tensor:
    """Convolution (or transposed convolution) of a batched 1-D or 2-D input, one node.

    ``stride``, ``padding`` and ``dilation`` are 2-tuples (1-D inputs use ``(1, s)``,
    ``(0, p)``, ``(1, d)``); ``out_hw`` is the output's spatial size (required when
    ``transposed``).
    """
    x, w = input._data, weight._data
    bd = None if bias is None else bias._data
    if transposed:
        out = _conv_transpose_arrays(x, w, bd, stride, padding, dilation, groups, out_hw)
        cols = None
    else:
        out, cols = _conv_arrays(x, w, bd, stride, padding, dilation, groups, out_hw)
    # Each operand is kept only for the other's gradient; the columns, for the weight's. A
    # missing bias is an edge to nothing, as in PyTorch.
    need_w = needs_grad(weight)
    return apply(ConvolutionBackward0, out, input, weight, bias,
                 save=(input if need_w else None, weight if needs_grad(input) else None),
                 _params=(stride, padding, dilation, groups, transposed), _x_hw=_spatial(x),
                 _w_shape=w.shape, _cols=cols if need_w else None, _out_hw=out_hw)


class ConvolutionBackwardBackward0(Node):
    """Backward of ``conv_weight_grad`` (bilinear in the image and the output gradient)."""

    forward = staticmethod(_weight_grad_arrays)

    def backward(self, xp, gw):
        x, g = self.saved(xp.TENSORS)
        s, p, d, groups = self._params
        gx = gg = None
        if self._needs(0):
            gx = xp.conv_nd(g, gw, None, s, p, d, groups, True, self._x_hw)
        if self._needs(1):
            gg = xp.conv_nd(x, gw, None, s, p, d, groups, False, self._g_hw)
        return gx, gg


def conv_weight_grad(x, g, w_shape, stride, padding, dilation, groups) -> Tensor:
    """The weight gradient of ``conv_nd(x, w)`` for output gradient ``g`` (differentiable)."""
    out = _weight_grad_arrays(x._data, g._data, w_shape, stride, padding, dilation, groups)
    # gx needs g (wanted when x needs a grad); gg needs x (wanted when g does).
    return apply(ConvolutionBackwardBackward0, out, x, g,
                 save=(x if needs_grad(g) else None, g if needs_grad(x) else None),
                 _params=(stride, padding, dilation, groups), _x_hw=_spatial(x._data),
                 _g_hw=_spatial(g._data))


# -- im2col / col2im (F.unfold / F.fold) -------------------------------------------------------


def _array_im2col(x, k, d, p, s):
    if x.ndim == 3:
        return _array_im2col(x[None], k, d, p, s)[0]
    h, w = x.shape[2:]
    out_hw = (conv_out_size(h, k[0], s[0], p[0], d[0]), conv_out_size(w, k[1], s[1], p[1], d[1]))
    return _cols(x, k, s, p, d, out_hw)


def _array_col2im(cols, img_hw, k, d, p, s):
    if cols.ndim == 2:
        return _array_col2im(cols[None], img_hw, k, d, p, s)[0]
    n = cols.shape[0]
    out_hw = (conv_out_size(img_hw[0], k[0], s[0], p[0], d[0]),
              conv_out_size(img_hw[1], k[1], s[1], p[1], d[1]))
    c6 = cols.reshape(n, -1, k[0], k[1], out_hw[0], out_hw[1])
    return _col2im(c6, img_hw, s, p, d)


class Im2ColBackward0(Node):
    forward = staticmethod(_array_im2col)

    def backward(self, xp, g):
        return xp.col2im(g, self._img_hw, *self._params)


class Col2ImBackward0(Node):
    forward = staticmethod(_array_col2im)

    def backward(self, xp, g):
        return xp.im2col(g, *self._params)


def im2col(input, kernel_size, dilation, padding, stride) -> Tensor:  # noqa: A002
    """F.unfold: (N, C, H, W) -> (N, C * kh * kw, L) (or unbatched); parameters 2-tuples."""
    params = (kernel_size, dilation, padding, stride)
    return apply(Im2ColBackward0, c_order(_array_im2col(input._data, *params)), input,
                 _img_hw=input._data.shape[-2:], _params=params)


def col2im(input, output_size, kernel_size, dilation, padding, stride) -> Tensor:  # noqa: A002
    """F.fold: (N, C * kh * kw, L) -> (N, C, H, W) (or unbatched); parameters 2-tuples."""
    params = (kernel_size, dilation, padding, stride)
    return apply(Col2ImBackward0, _array_col2im(input._data, output_size, *params), input,
                 _params=params)


# -- max pooling -----------------------------------------------------------------------------


def pool_out_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output size (a last window starting in the right padding is
    dropped in ceil mode)."""
    eff = n + 2 * p - d * (k - 1) - 1
    out = (-((-eff) // s) if ceil_mode else eff // s) + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _lowest(dtype):
    return -np.inf if dtype.char in FLOAT_CHARS else np.iinfo(dtype).min


def _max_pool_arrays(x4, k, s, p, d, out_hw):
    """Max over windows and, per output, the position (0 .. kh*kw-1) of the first maximum
    in the window (PyTorch's rule; a NaN wins, the last one if several)."""
    n, c, h, w = x4.shape
    ho, wo = out_hw
    need_h = (ho - 1) * s[0] + d[0] * (k[0] - 1) + 1
    need_w = (wo - 1) * s[1] + d[1] * (k[1] - 1) + 1
    eh, ew = max(need_h - h - 2 * p[0], 0), max(need_w - w - 2 * p[1], 0)
    if p[0] or p[1] or eh or ew:
        xp = np.full((n, c, h + 2 * p[0] + eh, w + 2 * p[1] + ew), _lowest(x4.dtype), x4.dtype)
        xp[:, :, p[0]:p[0] + h, p[1]:p[1] + w] = x4
    else:
        xp = x4
    kk = k[0] * k[1]
    if k == (2, 2) and tuple(s) == (2, 2) and tuple(d) == (1, 1) and xp is x4 and \
            x4.flags.c_contiguous and h % 2 == 0 and w % 2 == 0 and (ho, wo) == (h // 2, w // 2):
        # NOTE: the common 2x2 pool as four strided views: pairwise maxima, and the first
        # maximum's position by arithmetic on "not the max" flags (0 if q0 is the max, else 1
        # + (0 if q1 is, else 1 + ...)); a reduction over a 5-D window view is much slower.
        a = x4.reshape(n, c, ho, 2, wo, 2)
        win = [a[:, :, :, 0, :, 0], a[:, :, :, 0, :, 1], a[:, :, :, 1, :, 0],
               a[:, :, :, 1, :, 1]]
        best = np.maximum(np.maximum(win[0], win[1]), np.maximum(win[2], win[3]))
        n0, n1, n2 = ((win[q] != best).view(np.uint8) for q in range(3))
        arg = n0 * (1 + n1 * (1 + n2))
        m = np.empty(best.shape, bool)
    else:
        st = xp.strides
        win = _strided(xp, (k[0], k[1], n, c, ho, wo),
                       (st[2] * d[0], st[3] * d[1], st[0], st[1], st[2] * s[0], st[3] * s[1]),
                       writeable=False).reshape(kk, n, c, ho, wo)
        best = win.max(0)
        if kk == 1:
            return best, np.zeros(best.shape, np.uint8)
        # The first maximum: encode each match as kk - q and keep the largest code.
        code_t = np.uint8 if kk < 255 else np.int32
        acc = np.zeros(best.shape, code_t)
        m = np.empty(best.shape, bool)
        e = np.empty(best.shape, code_t)
        for q in range(kk):
            np.equal(win[q], best, out=m)
            np.multiply(m, code_t(kk - q), out=e)
            np.maximum(acc, e, out=acc)
        arg = np.subtract(code_t(kk), acc, dtype=code_t)
    if x4.dtype.char in FLOAT_CHARS and np.isnan(best.max()):
        for q in range(kk):
            np.isnan(win[q], out=m)
            arg[m] = q
    return best, arg


# NOTE: the 2x2, stride-2 pool (the common one) by shifted maxima over the flat array: every pass
# is contiguous (NumPy's passes over strided views with short rows are ~4x slower). With
# ``y[i] = max(a[i], a[i + 1])`` and ``z[i] = max(y[i], y[i + W])``, a window's maximum is
# ``z`` at its top-left position. For the gradient it keeps, at the same positions, whether the
# right column beat the left one in each row (``pc``) and whether the bottom row beat the top
# (``pr``): strict comparisons pick the first maximum in row-major order, PyTorch's rule. A NaN
# (PyTorch: the last NaN wins) takes the general path.


def _pool2x2_arrays(x4, masks: bool):
    """(best, (pc, pr) or None) for a C-contiguous (N, C, H, W) array with even H and W."""
    n, c, h, w = x4.shape
    a = x4.reshape(-1)
    size = a.size
    y = np.empty(size, a.dtype)
    np.maximum(a[:-1], a[1:], out=y[:-1])
    y[-1] = a[-1]
    z = np.empty(size, a.dtype)
    np.maximum(y[:-w], y[w:], out=z[:-w])  # (the last row of z is never read)
    best = np.ascontiguousarray(z.reshape(n, c, h // 2, 2 * w)[..., :w:2])
    if not masks:
        return best, None
    pc = np.empty(size, bool)
    np.greater(a[1:], a[:-1], out=pc[:-1])
    pc[-1] = False
    pr = np.empty(size, bool)
    np.greater(y[w:], y[:-w], out=pr[:-w])
    pr[-w:] = False
    return best, (pc, pr)


def _pool2x2_backward(g4, pc, pr, shape4):
    """Route each window's gradient down to the row, then across to the column, that won, by
    the same shifts. ``x - x * 1`` is +0 and ``x - x * 0`` is x for finite x, so the result is
    PyTorch's ``0 + g`` bit for bit (the caller sends non-finite gradients elsewhere)."""
    n, c, h, w = shape4
    gv = np.zeros(n * c * h * w, g4.dtype)
    gv.reshape(n, c, h // 2, 2 * w)[..., :w:2] = g4
    t = np.multiply(gv, pr)
    hh = np.subtract(gv, t)
    hh[w:] += t[:-w]
    np.multiply(hh, pc, out=t)
    np.subtract(hh, t, out=hh)
    hh[1:] += t[:-1]
    return hh.reshape(shape4)


def _max_pool_indices(arg, in_hw, k, s, p, d):
    """Flat indices into each input plane, from window positions."""
    ho, wo = arg.shape[-2:]
    w = in_hw[1]
    rows = (np.arange(ho) * s[0] - p[0])[:, None] * w + (np.arange(wo) * s[1] - p[1])
    offs = np.array([i * d[0] * w + j * d[1] for i in range(k[0]) for j in range(k[1])])
    return rows + offs[arg]


def _max_pool_backward_arrays(g4, arg, in_shape4, k, s, p, d):
    """Each output's gradient to the window position ``arg`` points at."""
    h, w = in_shape4[2:]
    ho, wo = g4.shape[-2:]
    disjoint = all(s[i] >= (k[i] - 1) * d[i] + 1 for i in range(2))
    tiled = disjoint and p == (0, 0) and s == k and h == ho * k[0] and w == wo * k[1]
    gx = np.empty(in_shape4, g4.dtype) if tiled else np.zeros(in_shape4, g4.dtype)
    m = np.empty(g4.shape, bool)
    if not np.isfinite(np.add.reduce(g4, axis=None)):
        # inf * 0 would leave NaN where PyTorch's 0 + g leaves 0: add where selected (slow)
        gx[...] = 0
        for (i, j), img, o in _geometry((h, w), (ho, wo), k, s, p, d):
            np.equal(arg, i * k[1] + j, out=m)
            np.add(gx[img], g4[o], out=gx[img], where=m[o])
        return gx
    t = None if disjoint else np.empty(g4.shape, g4.dtype)
    for (i, j), img, o in _geometry((h, w), (ho, wo), k, s, p, d):
        np.equal(arg, i * k[1] + j, out=m)
        if disjoint:  # windows do not overlap: write, no accumulation
            np.multiply(g4[o], m[o], out=gx[img])
        else:
            np.multiply(g4, m, out=t)
            gx[img] += t[o]
    return gx


class MaxPool2DWithIndicesBackward0(Node):
    _arg = _masks = None
    _packs = (0, "=result1")  # PyTorch saves self and the indices (autograd/saved_hooks.py)

    def _window_arg(self, x):
        """Each output's window position of its maximum (kept by the general path; the 2x2
        fast path keeps comparison masks instead and finds it again when needed)."""
        if self._arg is None:
            x4 = x if x.ndim == 4 else x[None]
            k, s, p, d = self._params
            arg = _max_pool_arrays(x4, k, s, p, d, (x4.shape[2] // 2, x4.shape[3] // 2))[1]
            self._arg = arg if x.ndim == 4 else arg[0]
        return self._arg

    def release(self) -> None:
        super().release()
        self._masks = self._arg = None

    def backward(self, xp, g):
        # The input is saved as PyTorch saves it: an in-place change to it is an error, and
        # under create_graph the gradient is an op of it too (zero derivative: compare.tie).
        (x,) = self.saved(xp.TENSORS)
        in_shape = self._in_shape
        k, s, p, d = self._params
        if not xp.TENSORS:
            g4 = g if g.ndim == 4 else g[None]
            shape4 = in_shape if len(in_shape) == 4 else (1,) + tuple(in_shape)
            if self._masks is not None and np.isfinite(np.add.reduce(g4, axis=None)):
                return _pool2x2_backward(g4, *self._masks, shape4).reshape(in_shape)
            arg = self._window_arg(x)
            return _max_pool_backward_arrays(g4, arg, shape4, k, s, p, d).reshape(in_shape)
        # Under create_graph: a scatter of g at the flat indices (its own backward is a gather).
        idx = _max_pool_indices(self._window_arg(x._data), in_shape[-2:], k, s, p, d)
        lead = tuple(in_shape[:-2])
        plane = in_shape[-2] * in_shape[-1]
        g3 = xp.reshape(g, lead + (-1,))
        gx = xp.scatter_along(g3, idx.reshape(lead + (-1,)), len(lead), lead + (plane,))
        return xp.tie(MaxPool2DWithIndicesBackwardBackward0, xp.reshape(gx, in_shape), x)


class MaxPool2DWithIndicesBackwardBackward0(TiedGradBackward):
    """max_pool2d's first-order gradient, an op of the input too (``compare.tie``)."""


def max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,  # noqa: A002
                            ceil_mode, want_indices: bool, no_stride: bool = False):
    """Max pooling of a (C, H, W) or (N, C, H, W) tensor; returns (output, indices or None).
    ``no_stride``: the caller gave none (``grad_fn._saved_stride`` is ``()``, as PyTorch's)."""
    x = input._data
    x4 = x if x.ndim == 4 else x[None]
    h, w = x4.shape[2:]
    out_hw = (pool_out_size(h, kernel_size[0], stride[0], padding[0], dilation[0], ceil_mode),
              pool_out_size(w, kernel_size[1], stride[1], padding[1], dilation[1], ceil_mode))
    params = (kernel_size, stride, padding, dilation)
    if not want_indices and kernel_size == (2, 2) and stride == (2, 2) and padding == (0, 0) \
            and dilation == (1, 1) and out_hw == (h // 2, w // 2) and h % 2 == 0 and w % 2 == 0 \
            and x4.flags.c_contiguous and x4.dtype.kind in "fiu":
        best, masks = _pool2x2_arrays(x4, recording(input))
        if x4.dtype.kind != "f" or not np.isnan(best.max()):
            return apply(MaxPool2DWithIndicesBackward0, best if x.ndim == 4 else best[0], input,
                         save=(input,), _in_shape=x.shape, _params=params, _masks=masks,
                         _ceil_mode=ceil_mode, _no_stride=no_stride), None
    best, arg = _max_pool_arrays(x4, kernel_size, stride, padding, dilation, out_hw)
    if x.ndim == 3:
        best, arg = best[0], arg[0]
    indices = wrap(_max_pool_indices(arg, (h, w), *params)) if want_indices else None
    return apply(MaxPool2DWithIndicesBackward0, best, input, save=(input,), _in_shape=x.shape,
                 _params=params, _arg=arg, _ceil_mode=ceil_mode, _no_stride=no_stride), indices


class AdaptiveMaxPool2DBackward0(Node):
    """Each output's gradient goes to its window's maximum; windows may overlap (their
    gradients add up). ``_idx`` holds flat indices into each input plane."""

    _packs = (0, "_idx")  # PyTorch saves self and the indices (autograd/saved_hooks.py)

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)  # saved as PyTorch saves it (see max_pool2d's)
        in_shape = self._in_shape
        lead = tuple(in_shape[:-2])
        g3 = xp.reshape(g, lead + (-1,))
        gx = xp.scatter_along(g3, self._idx.reshape(lead + (-1,)), len(lead),
                              lead + (in_shape[-2] * in_shape[-1],))
        return xp.tie(AdaptiveMaxPool2DBackwardBackward0, xp.reshape(gx, in_shape), x)


class AdaptiveMaxPool2DBackwardBackward0(TiedGradBackward):
    """adaptive_max_pool2d's first-order gradient, an op of the input too."""


def adaptive_max_pool2d(input, rows, cols) -> tuple:  # noqa: A002
    """Adaptive max pooling of a (C, H, W) or (N, C, H, W) tensor, one node; output (i, j)'s
    window is rows ``rows[i]`` by columns ``cols[j]`` (integer arrays, one row per output, a
    short window padded by repeating its last position). Returns (values, int64 flat indices
    into each input plane).

    The first maximum of a window wins, or its last NaN, as in PyTorch's kernel.
    """
    x = input._data
    if x.dtype.char not in FLOAT_CHARS:
        raise NotImplementedError(
            f'"adaptive_max_pool2d" not implemented for \'{FROM_NP[x.dtype].scalar_name}\'')
    for i in range(1 if x.ndim == 4 else 0, x.ndim):
        if x.shape[i] == 0:
            raise RuntimeError(
                "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {list(x.shape)} with dimension {i} being empty")
    (oh, kh), (ow, kw) = rows.shape, cols.shape
    lead = x.shape[:-2]
    nl = len(lead)
    # (..., Oh * Kh, Ow * Kw) -> (..., Oh, Ow, Kh * Kw): each output's window, flattened last.
    win = x[..., rows.reshape(-1), :][..., cols.reshape(-1)].reshape(lead + (oh, kh, ow, kw))
    win = win.transpose(tuple(range(nl)) + (nl, nl + 2, nl + 1, nl + 3))
    win = win.reshape(lead + (oh, ow, kh * kw))
    arg = np.argmax(win, -1) if win.size else np.zeros(win.shape[:-1], np.intp)
    nan = np.isnan(win)
    if nan.any():
        arg = np.where(nan.any(-1), kh * kw - 1 - np.argmax(nan[..., ::-1], -1), arg)
    vals = np.take_along_axis(win, arg[..., None], -1)[..., 0]
    r = rows[np.arange(oh)[:, None], arg // kw]
    c = cols[np.arange(ow)[None, :], arg % kw]
    idx = (r * x.shape[-1] + c).astype(np.int64)
    return apply(AdaptiveMaxPool2DBackward0, vals, input, save=(input,), _in_shape=x.shape,
                 _idx=idx), wrap(idx)


# -- average pooling ---------------------------------------------------------------------------


def _avg_divisor(in_hw, out_hw, k, s, p, count_include_pad, divisor_override, dtype):
    if divisor_override is not None:
        return np.asarray(divisor_override, dtype)
    sizes = []
    for n, o, kk, ss, pp in zip(in_hw, out_hw, k, s, p):
        start = np.arange(o) * ss - pp
        end = np.minimum(start + kk, n + pp)
        if count_include_pad:
            sizes.append(end - start)
        else:
            sizes.append(np.minimum(end, n) - np.maximum(start, 0))
    return (sizes[0][:, None] * sizes[1][None, :]).astype(dtype)


def _array_avg_pool(x, params):
    k, s, p, ceil_mode, cip, div_override = params
    x4 = x if x.ndim == 4 else x[None]
    h, w = x4.shape[2:]
    out_hw = (pool_out_size(h, k[0], s[0], p[0], 1, ceil_mode),
              pool_out_size(w, k[1], s[1], p[1], 1, ceil_mode))
    acc_t = x4.dtype if x4.dtype.char in FLOAT_CHARS else np.float64
    if acc_t in REDUCED:  # float16/bfloat16 windows sum in float32, rounded once (as PyTorch)
        acc_t = F32
    out = np.zeros(x4.shape[:2] + out_hw, acc_t)
    for _, img, o in _geometry((h, w), out_hw, k, s, p, (1, 1)):
        out[o] += x4[img]
    div = _avg_divisor((h, w), out_hw, k, s, p, cip, div_override, acc_t)
    if x4.dtype.char in FLOAT_CHARS:
        out /= div
        if out.dtype != x4.dtype:
            out = out.astype(x4.dtype)
    else:
        out = np.trunc(out / div).astype(x4.dtype)
    return out if x.ndim == 4 else out[0]


def _array_avg_pool_backward(g, in_shape, params):
    k, s, p, ceil_mode, cip, div_override = params
    g4 = g if g.ndim == 4 else g[None]
    shape4 = tuple(in_shape) if len(in_shape) == 4 else (1,) + tuple(in_shape)
    out_hw = g4.shape[2:]
    gd = g4 / _avg_divisor(shape4[2:], out_hw, k, s, p, cip, div_override, g4.dtype)
    gx = np.zeros(shape4, g4.dtype)
    for _, img, o in _geometry(shape4[2:], out_hw, k, s, p, (1, 1)):
        gx[img] += gd[o]
    return gx.reshape(in_shape)


class AvgPool2DBackward0(Node):
    forward = staticmethod(_array_avg_pool)

    def backward(self, xp, g):
        self.saved(False)  # (version-checks the kept input, as PyTorch's node does)
        return xp.avg_pool_backward(g, self._in_shape, self._params)


class AvgPool2DBackwardBackward0(Node):
    forward = staticmethod(_array_avg_pool_backward)

    def backward(self, xp, gg):
        return xp.avg_pool(gg, self._params)


def avg_pool(input, params, no_stride: bool = False) -> Tensor:  # noqa: A002
    """2-D average pooling; ``params = (kernel, stride, padding, ceil_mode, count_include_pad,
    divisor_override)`` with 2-tuples; ``no_stride`` as for ``max_pool2d_with_indices``."""
    return apply(AvgPool2DBackward0, _array_avg_pool(input._data, params), input, save=(input,),
                 _in_shape=input._data.shape, _params=params, _no_stride=no_stride)


def avg_pool_backward(g, in_shape, params) -> Tensor:
    return apply(AvgPool2DBackwardBackward0, _array_avg_pool_backward(g._data, in_shape, params),
                 g, _params=params)


# -- separable linear maps (adaptive average pooling, bilinear resampling) ---------------------


def _array_sep_linear(x, ah, aw, name=None):
    out = _array.matmul(x, aw.T) if aw is not None else x
    return _array.matmul(ah, out) if ah is not None else out


class SepLinearBackward(Node):
    """``A_h @ x @ A_w.T`` over the last two dims; its backward is the transposed map. Its
    grad_fn name is the op's (``AdaptiveAvgPool2DBackward0``, ``UpsampleBilinear2DBackward0``,
    ...), set per call."""

    forward = staticmethod(_array_sep_linear)

    _keeps = False  # adaptive_avg_pool2d keeps its input, as PyTorch's node does

    def backward(self, xp, g):
        if self._keeps:
            self.saved(False)  # (version-checks it)
        ah, aw = self._mats
        return xp.sep_linear(g, None if ah is None else ah.T, None if aw is None else aw.T,
                             self._back_name)


def sep_linear(input, ah, aw, name: str = "SepLinearBackward") -> Tensor:  # noqa: A002
    """``ah @ input @ aw.T`` on the last two dims (``ah`` or ``aw`` None: identity), one node
    called ``name``."""
    keep = name == "AdaptiveAvgPool2DBackward0"
    return apply(SepLinearBackward, _array_sep_linear(input._data, ah, aw), input, _name=name,
                 _back_name=name.replace("Backward0", "BackwardBackward0"), _mats=(ah, aw),
                 save=(input,) if keep else None, _keeps=keep)


_array.register(
    conv_nd=ConvolutionBackward0.forward, conv_weight_grad=ConvolutionBackwardBackward0.forward,
    im2col=Im2ColBackward0.forward, col2im=Col2ImBackward0.forward,
    avg_pool=AvgPool2DBackward0.forward, avg_pool_backward=AvgPool2DBackwardBackward0.forward,
    sep_linear=SepLinearBackward.forward,
)

__all__: list = []
XP: list = ["conv_nd", "conv_weight_grad", "im2col", "col2im", "avg_pool", "avg_pool_backward",
            "sep_linear"]
METHODS: dict = {}
INPLACE: dict = {}
