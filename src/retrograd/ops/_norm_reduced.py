"""Layer, group and batch norm of float16/bfloat16 inputs as PyTorch's CPU kernels compute them.

PyTorch's reduced-precision norm kernels (``layer_norm_kernel.cpp``, ``group_norm_kernel.cpp``,
``batch_norm_kernel.cpp``) work in float32 but round at fixed points, and those roundings show
at the dtype's precision (tens of ulps near zero), so the closed-form float32 formulas of
``nn_norm`` do not reproduce them. What they round:

- the statistics they keep (mean, rstd) are stored in the *parameter* dtype: float32 when the
  weight and bias are float32 ("mixed type", as under autocast), else the input's dtype (also
  without weight), and the backward reads those rounded values;
- layer norm accumulates the weight and bias gradients row by row in a buffer of the input's
  dtype (each row's sum rounded);
- batch norm's training statistics round the variance sum, divide it by the count in the
  reduced dtype (the count rounded too) and update the running statistics with reduced-dtype
  arithmetic; its output is one fused multiply-add ``x * alpha + beta`` per element.

Everything here is arrays only (the first-order backward); ``create_graph`` keeps the
differentiable formulas of ``nn_norm``. PyTorch splits its loops over threads; these follow its
single-threaded order (``torch.set_num_threads(1)``), which is what retrograd's
``get_num_threads()`` reports.

The functions are internal (``__all__`` is empty).
"""

from __future__ import annotations

import numpy as np

from .._dtypes import F32

__all__: list = []

F64 = np.float64


def rounded(a: np.ndarray, dt) -> np.ndarray:
    """``a`` (float32) rounded to ``dt`` and back: a value PyTorch stores in ``dt``."""
    return a if dt == F32 else a.astype(dt).astype(F32)


def param_dtype(xdt, *params) -> np.dtype:
    """The dtype PyTorch keeps statistics and parameter gradients in: float32 when a float32
    parameter meets a reduced input (``is_mixed_type``), else the input's dtype."""
    for p in params:
        if p is not None and p.dtype == F32:
            return F32
    return xdt


def _fma(x: np.ndarray, a, b) -> np.ndarray:
    """``x * a + b`` with one float32 rounding, as the fused multiply-add of the kernels."""
    return (x.astype(F64) * a + b).astype(F32)


def _row_accumulate(t: np.ndarray, dt) -> np.ndarray:
    """The rows of float32 ``t`` summed into a buffer of ``dt``, rounded after every row."""
    acc = np.zeros(t.shape[1], dt)
    for row in t:
        np.add(acc, row, out=acc, casting="unsafe")
    return acc


# -- layer norm --------------------------------------------------------------------------------


def layer_norm_backward(g2, x2, mean, rstd, w, needs):
    """Gradients of layer norm over the rows of ``x2`` (M, K) for a reduced-precision input.

    ``mean``/``rstd`` (M, 1) are float32 copies of the stored (rounded) statistics, ``w`` the
    weight array (K,) or None. Returns (dx, dw, db) arrays; dw/db in the input's dtype (the
    engine casts them to a float32 weight's dtype exactly).
    """
    xdt = x2.dtype
    gf, xf = g2.astype(F32), x2.astype(F32)
    k = x2.shape[1]
    gx = gw = gb = None
    if needs[1] and needs[2]:  # one pass over the rows for both (the loop is the cost)
        both = _row_accumulate(np.concatenate((gf * (rstd * xf + (-rstd * mean)), gf), 1), xdt)
        gw, gb = both[:k], both[k:]
    elif needs[1]:
        gw = _row_accumulate(gf * (rstd * xf + (-rstd * mean)), xdt)
    elif needs[2]:
        gb = _row_accumulate(gf, xdt)
    if needs[0]:
        gam = None if w is None else w.astype(F32)
        dyg = gf if gam is None else gf * gam
        ds = np.einsum("ij,ij->i", dyg, xf)[:, None]
        db = dyg.sum(1, keepdims=True)
        scale = np.float32(1) / np.float32(k)
        b = (db * mean - ds) * rstd * rstd * rstd * scale
        c = -b * mean - db * rstd * scale
        gx = rstd * gf
        if gam is not None:
            gx *= gam
        gx += b * xf
        gx += c
        gx = gx.astype(xdt)
    return gx, gw, gb


# -- group norm --------------------------------------------------------------------------------


def group_norm_backward(g3, x3, mean, rstd, w, groups, needs):
    """Gradients of group norm of ``x3`` (N, C, L) in a reduced dtype; ``mean``/``rstd`` (N, G)
    float32 copies of the stored statistics. The weight and bias gradients are float32 (the
    engine rounds them to the parameter's dtype once, as the kernel stores them)."""
    n, c, length = x3.shape
    d = c // groups
    gf, xf = g3.astype(F32), x3.astype(F32)
    ds = np.einsum("ncl,ncl->nc", gf, xf)
    db = gf.sum(2)
    gam = np.ones(c, F32) if w is None else w.astype(F32)
    gx = gw = gb = None
    if needs[0]:
        s = np.float32(1) / np.float32(d * length)
        ds_val = (ds * gam).reshape(n, groups, d).sum(2)
        db_val = (db * gam).reshape(n, groups, d).sum(2)
        c2 = (db_val * mean - ds_val) * rstd * rstd * rstd * s
        c3 = -c2 * mean - db_val * rstd * s
        c1 = (rstd[:, :, None] * gam.reshape(groups, d)).reshape(n, c, 1)
        gx = c1 * gf
        gx += np.repeat(c2, d, axis=1)[:, :, None] * xf
        gx += np.repeat(c3, d, axis=1)[:, :, None]
        gx = gx.astype(x3.dtype)
    if needs[1]:
        gw = ((ds - db * np.repeat(mean, d, axis=1)) * np.repeat(rstd, d, axis=1)).sum(0)
    if needs[2]:
        gb = db.sum(0)
    return gx, gw, gb


# -- batch norm --------------------------------------------------------------------------------


def _div_count(v: np.ndarray, count: int, pdt) -> np.ndarray:
    """``v / count`` as the kernel writes it for a statistic of dtype ``pdt``: a reduced dtype
    divides by the count rounded to that dtype and rounds the quotient."""
    if pdt == F32:
        return v / np.float32(count)
    return rounded(v / rounded(np.array(count, F32), pdt), pdt)


def batch_norm_forward(x3, w, b, rm, rv, training: bool, momentum: float, eps: float):
    """Batch norm of a reduced-precision ``x3`` (N, C, L): the output (input's dtype) and the
    float32 copies of the statistics the backward reads (mean, invstd, shape (1, C, 1)). In
    training the running statistics (arrays, updated in place) follow the kernel's rounding."""
    n, c, length = x3.shape
    xdt = x3.dtype
    pdt = param_dtype(xdt, w, b, rm, rv)
    xf = x3.astype(F32)
    if training:
        cnt = n * length
        # bfloat16 statistics round where their kernel stores them; float16's (measured against
        # PyTorch 2.13) stay float32 until the saved mean and invstd are stored.
        sdt = pdt if xdt != np.float16 else F32
        mean_f = xf.sum((0, 2)) / np.float32(cnt)
        mean = rounded(mean_f, sdt)
        # One row per sample: the channels-last kernel, which centres on the stored mean.
        centre = mean if length == 1 else mean_f
        xc = xf - centre[None, :, None]
        var_sum = rounded(np.einsum("ncl,ncl->c", xc, xc), sdt)
        var = _div_count(var_sum, cnt, sdt)
        invstd = rounded((1.0 / np.sqrt(var.astype(F64) + eps)).astype(F32), pdt)
        mom = rounded(np.array(momentum, F32), sdt)
        keep = rounded(np.float32(1) - mom, sdt)
        if rm is not None:
            new = rounded(rounded(mom * mean, sdt) + rounded(keep * rm.astype(F32), sdt), sdt)
            rm[...] = new
        if rv is not None:
            unbiased = _div_count(var_sum, cnt - 1, sdt)
            rv[...] = mom * unbiased + rounded(keep * rv.astype(F32), sdt)
        mean = rounded(mean, pdt)
    else:
        mean = rm.astype(F32)
        invstd = np.float32(1) / np.sqrt(rv.astype(F32) + np.float32(eps))
    alpha = invstd if w is None else invstd * w.astype(F32)
    beta = -(mean * alpha) if b is None else b.astype(F32) - mean * alpha
    out = _fma(xf, alpha[None, :, None], beta[None, :, None]).astype(xdt)
    return out, mean.reshape(1, c, 1), invstd.reshape(1, c, 1)


def batch_norm_backward(g3, x3, w, mean, invstd, rv, training: bool, eps: float, needs):
    """Gradients of batch norm of a reduced ``x3`` (N, C, L). ``mean``/``invstd`` (1, C, 1):
    the saved statistics in training; in evaluation ``invstd`` is recomputed from the running
    variance ``rv`` in double, as the backward kernel does."""
    n, c, length = x3.shape
    cnt = n * length
    gf, xf = g3.astype(F32), x3.astype(F32)
    if not training:
        invstd = (1.0 / np.sqrt(rv.astype(F64) + eps)).astype(F32).reshape(1, c, 1)
    wf = np.float32(1) if w is None else w.astype(F32).reshape(1, c, 1)
    xc = xf - mean
    sg = gf.sum((0, 2), keepdims=True)
    dotp = np.einsum("ncl,ncl->c", xc, gf).reshape(1, c, 1)
    gx = gw = gb = None
    if needs[0]:
        if training:
            k = dotp * invstd * invstd / np.float32(cnt)
            gx = (gf - sg / np.float32(cnt) - xc * k) * invstd * wf
        else:
            gx = gf * invstd * wf
        gx = gx.astype(x3.dtype)
    if needs[1]:
        gw = (dotp * invstd).reshape(c)
    if needs[2]:
        gb = sg.reshape(c)
    return gx, gw, gb
