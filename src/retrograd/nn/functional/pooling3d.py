"""3-D convolution and pooling, max unpooling, power-average and fractional max pooling.

NOTE: composed from differentiable ops (no backward to write): every window is gathered from
the flattened input with one ``index_select`` (its positions, and which of them fall in the
padding, are computed once in NumPy), then reduced (``max``, a masked sum, an ``einsum`` with
the weight). A transposed convolution is the convolution of the virtually zero-upsampled input
with the flipped kernel: the gather reads only the real input positions. So every derivative
order comes from the ops used. Each composite is recorded as one node with the name of
PyTorch's kernel (``ConvolutionBackward0``, ``MaxPool3DWithIndicesBackward0``, ...; see
``ops/fused.py``).
"""

from __future__ import annotations

import math

import numpy as np

import retrograd as torch
from retrograd import Tensor

from ...ops._autocast import fp32, lower_precision
from ...ops.fused import fused
from ...ops.nn_conv import pool_out_size
from .conv import _adaptive_bounds, _out_size, avg_pool1d, avg_pool2d

__all__ = [
    "conv3d", "conv_transpose3d", "max_pool3d", "max_pool3d_with_indices", "avg_pool3d",
    "adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
    "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d",
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices", "conv_tbc",
]


def _tuple(v, n: int) -> tuple:
    if isinstance(v, (list, tuple)):
        return tuple(int(x) for x in v) if len(v) != 1 else (int(v[0]),) * n
    return (int(v),) * n


def _shape(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


# -- gathering windows ---------------------------------------------------------------------


def _dim_windows(n_out: int, start: np.ndarray, k: int, d: int, n_in: int, up: int = 1):
    """Positions (n_out, k) read along one dim and whether each is a real input position.
    ``up`` > 1 reads a virtually zero-upsampled input (positions not divisible by it are 0)."""
    v = start[:, None] + np.arange(k)[None, :] * d
    real = (v >= 0) & (v % up == 0) & (v // up < n_in)
    return np.where(real, v // up, 0), real


def _gather(x: Tensor, dims: list) -> tuple:
    """Windows of ``x`` (N, C, *spatial): ``dims`` holds (positions, real) per spatial dim;
    returns the windows (N, C, *out, K), the real-position mask (*out, K) and the flat input
    index of every window position (*out, K)."""
    spatial = tuple(x.shape[2:])
    nd = len(spatial)
    flat = np.zeros((), np.int64)
    mask = np.ones((), bool)
    for i, (pos, real) in enumerate(dims):
        # axes: out dims first (i-th at axis i), then kernel dims (i-th at axis nd + i)
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = pos.shape
        step = int(np.prod(spatial[i + 1:], dtype=np.int64))
        flat = flat + pos.reshape(shape) * step
        mask = mask & real.reshape(shape)
    out = flat.shape[:nd]
    flat = flat.reshape(*out, -1)
    mask = np.broadcast_to(mask, flat.shape[:nd] + mask.shape[nd:]).reshape(*out, -1)
    xf = x.reshape(x.shape[0], x.shape[1], -1)
    win = xf.index_select(2, torch.tensor(flat.reshape(-1)))
    return win.reshape(x.shape[0], x.shape[1], *flat.shape), mask, flat


def _batched(input: Tensor, nd: int, name: str) -> tuple:  # noqa: A002
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(name)
    return (input.unsqueeze(0), True) if input.dim() == nd + 1 else (input, False)


def _batch(input: Tensor, unbatched: bool) -> Tensor:  # noqa: A002
    return input.unsqueeze(0) if unbatched else input


def _unbatched(outs: tuple, unbatched: bool) -> tuple:
    return tuple(o.squeeze(0) for o in outs) if unbatched else outs


# -- convolution ---------------------------------------------------------------------------


def _conv_windows(x: Tensor, k, s, p, d, up=(1, 1, 1), out=None) -> tuple:
    dims = []
    for i in range(len(k)):
        n = x.shape[2 + i]
        n_out = out[i] if out is not None else (n + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1
        dims.append(_dim_windows(n_out, np.arange(n_out) * s[i] - p[i], k[i], d[i], n, up[i]))
    return _gather(x, dims)


def _conv_core(x: Tensor, weight: Tensor, bias, k, s, p, d, groups, up=(1, 1, 1), out=None):
    win, mask, _ = _conv_windows(x, k, s, p, d, up, out)
    n, c = x.shape[:2]
    o_sp = win.shape[2:-1]
    win = win * torch.tensor(mask, dtype=x.dtype)
    win = win.reshape(n, groups, c // groups, -1, win.shape[-1])
    w = weight.reshape(groups, weight.shape[0] // groups, weight.shape[1], -1)
    y = torch.einsum("ngcok,gfck->ngfo", win, w).reshape(n, weight.shape[0], *o_sp)
    if bias is not None:
        y = y + bias.reshape(1, -1, *([1] * len(o_sp)))
    return y


@lower_precision
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,  # noqa: A002
           padding=0, dilation=1, groups: int = 1) -> Tensor:
    """3-D convolution over ``(N, C, D, H, W)`` (or unbatched ``(C, D, H, W)``);
    ``padding`` may be ``"same"`` or ``"valid"``.

    >>> import retrograd as torch
    >>> torch.nn.functional.conv3d(torch.ones(1, 1, 3, 3, 3), torch.ones(1, 1, 2, 2, 2)).shape
    retrograd.Size([1, 1, 2, 2, 2])
    """
    x, unbatched = _batched(input, 3, f"Expected 4D (unbatched) or 5D (batched) input to "
                                      f"conv3d, but got input of size: {_shape(input.shape)}")
    k = tuple(weight.shape[2:])
    s, d = _tuple(stride, 3), _tuple(dilation, 3)
    if isinstance(padding, str):
        if padding == "valid":
            p = (0, 0, 0)
        elif padding == "same":
            if any(v != 1 for v in s):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [d[i] * (k[i] - 1) for i in range(3)]
            extra = []
            for i in (2, 1, 0):
                extra += [total[i] // 2, total[i] - total[i] // 2]
            x = torch.nn.functional.pad(x, extra)
            p = (0, 0, 0)
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of "
                             f"{{'valid', 'same'}}")
    else:
        p = _tuple(padding, 3)
    if weight.dim() != 5:
        raise RuntimeError(f"Expected 5-dimensional input for 5-dimensional weight "
                           f"{_shape(weight.shape)}, but got {x.dim()}-dimensional input of "
                           f"size {_shape(x.shape)} instead")
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {_shape(weight.shape)}, "
                           f"expected input{_shape(x.shape)} to have {weight.shape[1] * groups} "
                           f"channels, but got {x.shape[1]} channels instead")
    y = fused("ConvolutionBackward0",
              lambda x, weight, bias: _conv_core(x, weight, bias, k, s, p, d, groups),
              x, weight, bias, _params=(s, p, d, groups, False), _packs=(0, 1))
    return y.squeeze(0) if unbatched else y


@lower_precision
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride=1, padding=0, output_padding=0, groups: int = 1,
                     dilation=1) -> Tensor:
    """3-D transposed convolution (the gradient of ``conv3d`` with respect to its input);
    ``weight`` is ``(C_in, C_out / groups, kD, kH, kW)``.

    >>> import retrograd as torch
    >>> w = torch.ones(1, 1, 2, 2, 2)
    >>> torch.nn.functional.conv_transpose3d(torch.ones(1, 1, 2, 2, 2), w, stride=2).shape
    retrograd.Size([1, 1, 4, 4, 4])
    """
    x, unbatched = _batched(input, 3, f"Expected 4D (unbatched) or 5D (batched) input to "
                                      f"conv_transpose3d, but got input of size: "
                                      f"{_shape(input.shape)}")
    s, p, d = _tuple(stride, 3), _tuple(padding, 3), _tuple(dilation, 3)
    op = _tuple(output_padding, 3)
    k = tuple(weight.shape[2:])
    cin = weight.shape[0]
    if x.shape[1] != cin:
        raise RuntimeError(f"Given transposed=1, weight of size {_shape(weight.shape)}, expected "
                           f"input{_shape(x.shape)} to have {cin} channels, but got "
                           f"{x.shape[1]} channels instead")
    for i in range(3):
        if op[i] >= max(s[i], d[i]):
            raise RuntimeError("output padding must be smaller than either stride or dilation, "
                               f"but got output_padding_depth: {op[0]} output_padding_height: "
                               f"{op[1]} output_padding_width: {op[2]} stride_depth: {s[0]} "
                               f"stride_height: {s[1]} stride_width: {s[2]} dilation_depth: "
                               f"{d[0]} dilation_height: {d[1]} dilation_width: {d[2]}")
    out = tuple((x.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1
                for i in range(3))
    g = groups
    pad = tuple(d[i] * (k[i] - 1) - p[i] for i in range(3))

    def conv(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        # (C_in, C_out/g, k) -> (C_out, C_in/g, k), flipped: a plain convolution's weight
        w = weight.reshape(g, cin // g, weight.shape[1], *k).transpose(1, 2)
        w = w.reshape(g * weight.shape[1], cin // g, *k).flip(2, 3, 4)
        return _conv_core(x, w, bias, k, (1, 1, 1), pad, d, g, up=s, out=out)

    y = fused("ConvolutionBackward0", conv, x, weight, bias, _params=(s, p, d, groups, True),
              _output_padding=op, _packs=(0, 1))
    return y.squeeze(0) if unbatched else y


# -- pooling -------------------------------------------------------------------------------


def _pool_dims(x: Tensor, k, s, p, d, ceil_mode: bool, name: str) -> list:
    for kk, pp, dd in zip(k, p, d):
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation={dd}")
    dims = []
    sp = tuple(x.shape[2:])
    outs = [pool_out_size(sp[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(len(k))]
    if any(o <= 0 for o in outs):
        raise RuntimeError(f"Given input size: ({x.shape[1]}x{'x'.join(map(str, sp))}). "
                           f"Calculated output size: ({x.shape[1]}x{'x'.join(map(str, outs))})."
                           f" Output size is too small")
    for i in range(len(k)):
        dims.append(_dim_windows(outs[i], np.arange(outs[i]) * s[i] - p[i], k[i], d[i], sp[i]))
    return dims


def _max_windows(x: Tensor, dims: list) -> tuple:
    win, mask, flat = _gather(x, dims)
    win = win.masked_fill(torch.tensor(~mask), float("-inf"))
    vals, arg = win.max(-1)
    idx = np.take_along_axis(np.broadcast_to(flat, win.shape), arg.numpy()[..., None], -1)
    return vals, torch.tensor(idx[..., 0], dtype=torch.int64)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
                            dilation=1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple:
    """``max_pool3d`` returning ``(values, flat indices into each D*H*W volume)``.

    >>> import retrograd as torch
    >>> v, i = torch.nn.functional.max_pool3d_with_indices(torch.arange(8.).reshape(1, 2, 2, 2),
    ...                                                    2)
    >>> v.flatten(), i.flatten()
    (tensor([7.]), tensor([7]))
    """
    x, unbatched = _batched(input, 3, "non-empty 4D or 5D (batch mode) tensor expected for "
                                      "input")
    k = _tuple(kernel_size, 3)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        _tuple(stride, 3)
    p, d = _tuple(padding, 3), _tuple(dilation, 3)
    dims = _pool_dims(x, k, s, p, d, ceil_mode, "max_pool3d")
    return fused("MaxPool3DWithIndicesBackward0",
                 lambda input: _unbatched(_max_windows(_batch(input, unbatched), dims), unbatched),
                 input, _params=(k, s, p, d), _ceil_mode=ceil_mode, _packs=(0, "=result1"))


@fp32
def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False):
    """3-D max pooling over ``(N, C, D, H, W)``; ``stride`` defaults to ``kernel_size``.

    >>> import retrograd as torch
    >>> torch.nn.functional.max_pool3d(torch.arange(8.).reshape(1, 1, 2, 2, 2), 2).flatten()
    tensor([7.])
    """
    out = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


@fp32
def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """3-D average pooling; ``count_include_pad`` counts the zero padding in the average.

    >>> import retrograd as torch
    >>> torch.nn.functional.avg_pool3d(torch.arange(8.).reshape(1, 1, 2, 2, 2), 2).flatten()
    tensor([3.5000])
    """
    x, unbatched = _batched(input, 3, "non-empty 4D or 5D (batch mode) tensor expected for "
                                      "input")
    k = _tuple(kernel_size, 3)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        _tuple(stride, 3)
    p = _tuple(padding, 3)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    dims = _pool_dims(x, k, s, p, (1, 1, 1), ceil_mode, "avg_pool3d")
    if divisor_override is not None:
        div = divisor_override
    else:
        div = np.ones((), np.float64)
        for i, (pos, _real) in enumerate(dims):
            n = x.shape[2 + i]
            start = np.arange(pos.shape[0]) * s[i] - p[i]
            end = np.minimum(start + k[i], n + p[i])
            size = (end - start) if count_include_pad else \
                (np.minimum(end, n) - np.maximum(start, 0))
            div = div[..., None] * size
        div = torch.tensor(div, dtype=x.dtype)

    def pool(input: Tensor) -> Tensor:  # noqa: A002
        win, mask, _ = _gather(_batch(input, unbatched), dims)
        y = (win * torch.tensor(mask, dtype=x.dtype)).sum(-1) / div
        return y.squeeze(0) if unbatched else y

    return fused("AvgPool3DBackward0", pool, input,
                 _params=(k, s, p, ceil_mode, count_include_pad, divisor_override))


def _adaptive_dims(x: Tensor, output_size, nd: int) -> list:
    sizes = _out_size(output_size, tuple(x.shape[2:]), nd)
    dims = []
    for i, n_out in enumerate(sizes):
        start, end = _adaptive_bounds(x.shape[2 + i], n_out)
        k = int((end - start).max(initial=1))
        pos = start[:, None] + np.arange(k)[None, :]
        dims.append((np.minimum(pos, x.shape[2 + i] - 1), pos < end[:, None]))
    return dims


@fp32
def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    """Averages over ``output_size`` adaptive windows (sizes may be None: keep that dim).

    >>> import retrograd as torch
    >>> torch.nn.functional.adaptive_avg_pool3d(torch.arange(8.).reshape(1, 2, 2, 2), 1)
    tensor([[[[3.5000]]]])
    """
    x, unbatched = _batched(input, 3, "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got "
                                      f"{_shape(input.shape)}")
    if _out_size(output_size, tuple(x.shape[2:]), 3) == (1, 1, 1):
        return input.mean((-3, -2, -1), keepdim=True)  # as PyTorch computes it
    dims = _adaptive_dims(x, output_size, 3)

    def pool(input: Tensor) -> Tensor:  # noqa: A002
        win, mask, _ = _gather(_batch(input, unbatched), dims)
        m = torch.tensor(mask, dtype=x.dtype)
        y = (win * m).sum(-1) / m.sum(-1)
        return y.squeeze(0) if unbatched else y

    return fused("AdaptiveAvgPool3DBackward0", pool, input)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size,  # noqa: A002
                                     return_indices: bool = False) -> tuple:
    """``adaptive_max_pool3d`` returning ``(values, flat indices)``.

    >>> import retrograd as torch
    >>> x = torch.arange(8.).reshape(1, 2, 2, 2)
    >>> torch.nn.functional.adaptive_max_pool3d_with_indices(x, 1)[1]
    tensor([[[[7]]]])
    """
    x, unbatched = _batched(input, 3, "adaptive_max_pool3d(): Expected 4D or 5D tensor, but got "
                                      f"{_shape(input.shape)}")
    dims = _adaptive_dims(x, output_size, 3)
    return fused("AdaptiveMaxPool3DBackward0",
                 lambda input: _unbatched(_max_windows(_batch(input, unbatched), dims), unbatched),
                 input, _packs=(0, "=result1"))


@fp32
def adaptive_max_pool3d(input: Tensor, output_size,  # noqa: A002
                        return_indices: bool = False):
    """The maximum over ``output_size`` adaptive windows.

    >>> import retrograd as torch
    >>> torch.nn.functional.adaptive_max_pool3d(torch.arange(8.).reshape(1, 2, 2, 2), 1)
    tensor([[[[7.]]]])
    """
    out = adaptive_max_pool3d_with_indices(input, output_size)
    return out if return_indices else out[0]


# -- unpooling -----------------------------------------------------------------------------


def _unpool_size(input: Tensor, k, s, p, output_size) -> list:
    nd = len(k)
    default = [(input.shape[-nd + i] - 1) * s[i] + k[i] - 2 * p[i] for i in range(nd)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for i in range(nd):
        lo, hi = default[i] - s[i], default[i] + s[i]
        if not lo < output_size[i] < hi:
            raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {i} must be '
                             f'between {lo} and {hi})')
    return [int(v) for v in output_size]


def _max_unpool(input: Tensor, indices: Tensor, nd: int, kernel_size, stride, padding,  # noqa: A002
                output_size) -> Tensor:
    k = _tuple(kernel_size, nd)
    s = k if stride is None else _tuple(stride, nd)
    size = _unpool_size(input, k, s, _tuple(padding, nd), output_size)
    lead = tuple(input.shape[:-nd])
    total = math.prod(size)
    idx = indices.reshape(*lead, -1)
    if idx.numel() and (int(idx.max()) >= total or int(idx.min()) < 0):
        bad = int(idx.max()) if int(idx.max()) >= total else int(idx.min())
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, size))})")

    def unpool(x: Tensor) -> Tensor:
        out = torch.zeros(*lead, total, dtype=x.dtype).scatter(-1, idx, x.reshape(*lead, -1))
        return out.reshape(*lead, *size)

    if nd == 1:  # as PyTorch: a 2-D unpooling of a width-1 image
        return fused("MaxUnpool2DBackward0", lambda x: unpool(x.squeeze(-1)).unsqueeze(-1),
                     input.unsqueeze(-1), _indices=indices.unsqueeze(-1),
                     _packs=("=indices",)).squeeze(-1)
    return fused(f"MaxUnpool{nd}DBackward0", unpool, input, _indices=indices,
                 _packs=("=indices",))


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None,  # noqa: A002
                 padding=0, output_size=None) -> Tensor:
    """The partial inverse of ``max_pool1d``: each value goes back to its index; zeros
    elsewhere.

    >>> import retrograd as torch
    >>> x = torch.tensor([[[1., 3., 2., 0.]]])
    >>> torch.nn.functional.max_unpool1d(*torch.nn.functional.max_pool1d(
    ...     x, 2, return_indices=True), 2)
    tensor([[[0., 3., 2., 0.]]])
    """
    return _max_unpool(input, indices, 1, kernel_size, stride, padding, output_size)


@fp32
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None,  # noqa: A002
                 padding=0, output_size=None) -> Tensor:
    """The partial inverse of ``max_pool2d``.

    >>> import retrograd as torch
    >>> v, i = torch.nn.functional.max_pool2d(torch.arange(4.).reshape(1, 1, 2, 2), 2,
    ...                                       return_indices=True)
    >>> torch.nn.functional.max_unpool2d(v, i, 2)
    tensor([[[[0., 0.],
              [0., 3.]]]])
    """
    return _max_unpool(input, indices, 2, kernel_size, stride, padding, output_size)


@fp32
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None,  # noqa: A002
                 padding=0, output_size=None) -> Tensor:
    """The partial inverse of ``max_pool3d``.

    >>> import retrograd as torch
    >>> v, i = torch.nn.functional.max_pool3d(torch.arange(8.).reshape(1, 2, 2, 2), 2,
    ...                                       return_indices=True)
    >>> torch.nn.functional.max_unpool3d(v, i, 2).flatten()
    tensor([0., 0., 0., 0., 0., 0., 0., 7.])
    """
    return _max_unpool(input, indices, 3, kernel_size, stride, padding, output_size)


# -- power-average pooling -----------------------------------------------------------------


def _lp_finish(out: Tensor, norm_type: float, n: int) -> Tensor:
    return (torch.sign(out) * torch.relu(torch.abs(out))).mul(n).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride=None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """``(sum over each window of x^p)^(1/p)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.lp_pool1d(torch.tensor([[[3., 4.]]]), 2, 2)
    tensor([[[5.]]])
    """
    k = _tuple(kernel_size, 1)
    out = avg_pool1d(input.pow(norm_type), k, stride if stride is not None else k, 0, ceil_mode)
    return _lp_finish(out, norm_type, k[0])


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """2-D power-average pooling.

    >>> import retrograd as torch
    >>> torch.nn.functional.lp_pool2d(torch.ones(1, 1, 2, 2), 1, 2)
    tensor([[[[4.]]]])
    """
    k = _tuple(kernel_size, 2)
    out = avg_pool2d(input.pow(norm_type), k, stride if stride is not None else k, 0, ceil_mode)
    return _lp_finish(out, norm_type, k[0] * k[1])


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """3-D power-average pooling.

    >>> import retrograd as torch
    >>> torch.nn.functional.lp_pool3d(torch.ones(1, 1, 2, 2, 2), 1, 2).flatten()
    tensor([8.])
    """
    k = _tuple(kernel_size, 3)
    out = avg_pool3d(input.pow(norm_type), k, stride if stride is not None else k, 0, ceil_mode)
    return _lp_finish(out, norm_type, k[0] * k[1] * k[2])


# -- fractional max pooling ----------------------------------------------------------------


def _intervals(sample: Tensor, n_in: int, n_out: int, k: int) -> np.ndarray:
    """PyTorch's pseudo-random window starts (n_planes, n_out) from one uniform per plane,
    computed in the samples' dtype (each step rounded to it, as PyTorch's kernel)."""
    seq = np.empty(tuple(sample.shape) + (n_out,), np.int64)
    if n_out > 1:
        dt = sample.dtype
        alpha = torch.tensor(float(n_in - k), dtype=dt) / torch.tensor(float(n_out - 1), dtype=dt)
        i = torch.arange(n_out - 1, dtype=dt)
        seq[..., :-1] = (((i + sample[..., None]) * alpha).long() -
                         (sample * alpha).long()[..., None]).numpy()
    seq[..., -1] = n_in - k
    return seq


def _fractional(input: Tensor, nd: int, kernel_size, output_size, output_ratio,  # noqa: A002
                samples, name: str) -> tuple:
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{_shape(input.shape)}")
    sp = tuple(input.shape[-nd:])
    if output_size is None:
        ratio = output_ratio if isinstance(output_ratio, (list, tuple)) else (output_ratio,) * nd
        output_size = [int(sp[i] * ratio[i]) for i in range(nd)]
    out = _tuple(output_size, nd)
    k = _tuple(kernel_size, nd)
    x = input if input.dim() == nd + 2 else input.unsqueeze(0)
    n, c = x.shape[:2]
    for i in range(nd):
        # PyTorch's limits: out + k - 1 <= in in 2-D, out + k <= in (stricter) in 3-D.
        if out[i] + k[i] - (1 if nd == 2 else 0) > sp[i]:
            what = ("height", "width") if nd == 2 else ("time", "height", "width")
            where = name + ("()" if nd == 2 else "_out()")
            raise RuntimeError(f"{where}: pool {what[i]} {k[i]} too large relative to "
                               f"input {what[i]} {sp[i]}")
    if samples is None:
        samples = torch.rand(n, c, nd, dtype=x.dtype)
    u = samples.detach()
    # PyTorch reads the samples in reverse dim order for 2-D (w, h) and in order for 3-D.
    order = list(range(nd))[::-1] if nd == 2 else list(range(nd))
    flat = np.zeros((n, c) + (1,) * (2 * nd), np.int64)
    for i in range(nd):
        start = _intervals(u[:, :, order[i]], sp[i], out[i], k[i])      # (N, C, out_i)
        pos = start[..., None] + np.arange(k[i])                         # (N, C, out_i, k_i)
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + i], shape[2 + nd + i] = out[i], k[i]
        flat = flat + pos.reshape(shape) * int(np.prod(sp[i + 1:], dtype=np.int64))
    flat = np.broadcast_to(flat, (n, c) + out + k).reshape(n, c, *out, -1)
    unbatched = input.dim() == nd + 1

    def pool(input: Tensor) -> tuple:  # noqa: A002
        xf = _batch(input, unbatched).reshape(n, c, -1)
        win = xf.gather(2, torch.tensor(flat.reshape(n, c, -1))).reshape(n, c, *out, -1)
        vals, arg = win.max(-1)
        idx = torch.tensor(np.take_along_axis(flat, arg.numpy()[..., None], -1)[..., 0])
        return _unbatched((vals, idx), unbatched)

    return fused(f"FractionalMaxPool{nd}DBackward0", pool, input, _kernel_size=k,
                 _output_size=out, _packs=(0, "=result1"))  # PyTorch saves self, indices


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None,  # noqa: A002
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple:
    """``fractional_max_pool2d`` returning ``(values, indices)``.

    >>> import retrograd as torch
    >>> x = torch.arange(16.).reshape(1, 1, 4, 4)
    >>> torch.nn.functional.fractional_max_pool2d_with_indices(
    ...     x, 2, output_size=1, _random_samples=torch.zeros(1, 1, 2))[1]
    tensor([[[[15]]]])
    """
    return _fractional(input, 2, kernel_size, output_size, output_ratio, _random_samples,
                       "fractional_max_pool2d")


@fp32
def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None,  # noqa: A002
                          output_ratio=None, return_indices: bool = False,
                          _random_samples: Tensor | None = None):
    """Max pooling over pseudo-random overlapping windows (Graham, 2014); the window starts
    come from one uniform sample per plane, drawn with ``rand`` as PyTorch draws them.

    >>> import retrograd as torch
    >>> torch.nn.functional.fractional_max_pool2d(torch.ones(1, 1, 5, 5), 2,
    ...                                           output_size=3).shape
    retrograd.Size([1, 1, 3, 3])
    """
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None,  # noqa: A002
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple:
    """``fractional_max_pool3d`` returning ``(values, indices)``.

    >>> import retrograd as torch
    >>> x = torch.arange(27.).reshape(1, 3, 3, 3)
    >>> torch.nn.functional.fractional_max_pool3d_with_indices(
    ...     x, 2, output_size=1, _random_samples=torch.zeros(1, 1, 3))[1]
    tensor([[[[26]]]])
    """
    return _fractional(input, 3, kernel_size, output_size, output_ratio, _random_samples,
                       "fractional_max_pool3d")


@fp32
def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None,  # noqa: A002
                          output_ratio=None, return_indices: bool = False,
                          _random_samples: Tensor | None = None):
    """3-D fractional max pooling.

    >>> import retrograd as torch
    >>> torch.nn.functional.fractional_max_pool3d(torch.ones(1, 1, 5, 5, 5), 2,
    ...                                           output_ratio=0.5).shape
    retrograd.Size([1, 1, 2, 2, 2])
    """
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return out if return_indices else out[0]


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:  # noqa: A002
    """1-D convolution of a time-batch-channel input ``(T, B, C_in)`` with ``weight``
    ``(k, C_in, C_out)``: ``(T + 2 pad - k + 1, B, C_out)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.conv_tbc(torch.ones(5, 2, 3), torch.ones(2, 3, 4), torch.zeros(4),
    ...                              1).shape
    retrograd.Size([6, 2, 4])
    """
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    def conv(input: Tensor, weight: Tensor, bias: Tensor) -> Tensor:  # noqa: A002
        y = torch.nn.functional.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias,
                                       padding=pad)
        return y.permute(2, 0, 1)

    return fused("ConvTbcBackward0", conv, input, weight, bias, _pad=pad, _packs=(2, 0, 1))
