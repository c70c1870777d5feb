"""Convolutions, pooling, fold/unfold and interpolation.

The convolution, max pooling, average pooling, im2col/col2im and the separable linear maps of
adaptive average pooling and bilinear resampling are primitives in ``ops.nn_conv`` (for speed and
PyTorch's grad_fn names); this module checks arguments as PyTorch does and lifts 1-D and
unbatched forms onto them.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ... import ops as _ops
from ..._tensor import Tensor
from ...ops import nn_conv as _nc
from ...ops._autocast import lower_precision
from ...ops.copies import index_dims
from ...ops.padding import constant_pad_nd

__all__ = [
    "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "max_pool1d", "max_pool2d",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d", "avg_pool2d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "unfold", "fold",
    "interpolate", "upsample", "upsample_nearest", "upsample_bilinear",
]


def _ntuple(v, n: int) -> tuple:
    if isinstance(v, (list, tuple)):
        if len(v) == 1 and n > 1:
            return tuple(int(v[0]) for _ in range(n))
        return tuple(int(e) for e in v)
    return (int(v),) * n


def _lift(t: tuple, fill: int) -> tuple:
    """A 1-D parameter as the 2-tuple the primitives take."""
    return (fill, t[0]) if len(t) == 1 else t


def _size(shape) -> str:
    return str(list(shape))


# -- convolution -----------------------------------------------------------------------------

_same_warned = False


def _conv(input, weight, bias, stride, padding, dilation, groups, nd):  # noqa: A002
    name = f"conv{nd}d"
    if input.ndim == nd + 1:
        out = _conv(_ops.unsqueeze(input, 0), weight, bias, stride, padding, dilation, groups,
                    nd)
        return _ops.squeeze(out, 0)
    stride = _ntuple(stride, nd)
    dilation = _ntuple(dilation, nd)
    pre_pad = None
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            ks = tuple(weight.shape)[2:]
            total = [dilation[i] * (ks[i] - 1) if i < len(ks) else 0 for i in range(nd)]
            padding = tuple(t // 2 for t in total)
            extra = [t - 2 * (t // 2) for t in total]
            if any(extra):
                global _same_warned
                if not _same_warned:
                    _same_warned = True
                    warnings.warn(
                        "Using padding='same' with even kernel lengths and odd dilation may "
                        "require a zero-padded copy of the input be created", stacklevel=3)
                pre_pad = []
                for e in reversed(extra):
                    pre_pad += [0, e]
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _ntuple(padding, nd)
    _nc.check_conv(input, weight, bias, stride, padding, dilation, groups, False, nd, name)
    if pre_pad is not None:
        input = constant_pad_nd(input, pre_pad)
    return _nc.conv_nd(input, weight, bias, _lift(stride, 1), _lift(padding, 0),
                       _lift(dilation, 1), groups, False)


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,  # noqa: A002
                    dilation, nd):
    name = f"conv_transpose{nd}d"
    if input.ndim == nd + 1:
        out = _conv_transpose(_ops.unsqueeze(input, 0), weight, bias, stride, padding,
                              output_padding, groups, dilation, nd)
        return _ops.squeeze(out, 0)
    if isinstance(padding, str):
        raise RuntimeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    stride, padding = _ntuple(stride, nd), _ntuple(padding, nd)
    output_padding, dilation = _ntuple(output_padding, nd), _ntuple(dilation, nd)
    _nc.check_conv(input, weight, bias, stride, padding, dilation, groups, True, nd, name)
    s2, p2, d2 = _lift(stride, 1), _lift(padding, 0), _lift(dilation, 1)
    op2 = _lift(output_padding, 0)
    if any(op >= s and op >= d for op, s, d in zip(op2, s2, d2)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_height: {op2[0]} output_padding_width: {op2[1]} stride_height: "
            f"{s2[0]} stride_width: {s2[1]} dilation_height: {d2[0]} dilation_width: {d2[1]}"
        )
    xs, ws = tuple(input.shape), tuple(weight.shape)
    in_hw = (1, xs[2]) if nd == 1 else xs[2:]
    k_hw = (1, ws[2]) if nd == 1 else ws[2:]
    out_hw = tuple((in_hw[i] - 1) * s2[i] - 2 * p2[i] + d2[i] * (k_hw[i] - 1) + op2[i] + 1
                   for i in range(2))
    if any(o <= 0 for o in out_hw):
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, xs[2:]))}). Calculated "
            f"output size per channel: ({' x '.join(map(str, out_hw[2 - nd:]))}). Output size "
            "is too small"
        )
    return _nc.conv_nd(input, weight, bias, s2, p2, d2, groups, True, out_hw)


@lower_precision
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,  # noqa: A002
           padding=0, dilation=1, groups: int = 1) -> Tensor:
    """1-D convolution (cross-correlation) of ``(N, C, L)`` or ``(C, L)`` input.

    >>> import retrograd as torch
    >>> x = torch.ones(1, 1, 5)
    >>> torch.nn.functional.conv1d(x, torch.ones(1, 1, 3), padding=1)
    tensor([[[2., 3., 3., 3., 2.]]])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


@lower_precision
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,  # noqa: A002
           padding=0, dilation=1, groups: int = 1) -> Tensor:
    """2-D convolution of ``(N, C, H, W)`` or ``(C, H, W)`` input; ``padding`` may be an int,
    a tuple, ``'valid'`` or ``'same'``.

    >>> import retrograd as torch
    >>> x = torch.arange(16.).reshape(1, 1, 4, 4)
    >>> torch.nn.functional.conv2d(x, torch.ones(1, 1, 2, 2), stride=2)
    tensor([[[[10., 18.],
              [42., 50.]]]])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


@lower_precision
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride=1, padding=0, output_padding=0, groups: int = 1,
                     dilation=1) -> Tensor:
    """1-D transposed convolution; ``weight`` is ``(C_in, C_out / groups, k)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.conv_transpose1d(torch.ones(1, 1, 2), torch.ones(1, 1, 2), stride=2)
    tensor([[[1., 1., 1., 1.]]])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1)


@lower_precision
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride=1, padding=0, output_padding=0, groups: int = 1,
                     dilation=1) -> Tensor:
    """2-D transposed convolution ("deconvolution"); ``weight`` is
    ``(C_in, C_out / groups, kh, kw)``.

    >>> import retrograd as torch
    >>> y = torch.nn.functional.conv_transpose2d(torch.ones(1, 1, 2, 2), torch.ones(1, 1, 2, 2))
    >>> y
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2)


# -- max pooling -----------------------------------------------------------------------------


def _pool_params(kernel_size, stride, padding, dilation, nd):
    k = _ntuple(kernel_size, nd)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) \
        else _ntuple(stride, nd)
    return k, s, _ntuple(padding, nd), _ntuple(dilation, nd)


def _check_pool(shape: tuple, k, s, p, d, ceil_mode, name, out_fn):
    if any(v == 0 for v in s):
        raise RuntimeError("stride should not be zero")
    if any(v < 0 for v in s):
        raise RuntimeError("stride should be greater than zero")
    if any(v <= 0 for v in k):
        raise RuntimeError("kernel size should be greater than zero")
    if any(v <= 0 for v in d):
        raise RuntimeError("dilation should be greater than zero")
    for kk, pp, dd in zip(k, p, d):
        if pp < 0:
            raise RuntimeError("pad must be non-negative")
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={pp}, "
                f"kernel_size={kk} and dilation={dd}"
            )
    hw = shape[-2:]
    out = [out_fn(hw[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(2)]
    if any(o <= 0 for o in out):
        c = shape[-3]
        raise RuntimeError(
            f"Given input size: ({c}x{hw[0]}x{hw[1]}). Calculated output size: "
            f"({c}x{out[0]}x{out[1]}). Output size is too small"
        )


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
                            dilation=1, ceil_mode: bool = False, return_indices: bool = True):
    """2-D max pooling that also returns the flat index of each maximum in its input plane.

    >>> import retrograd as torch
    >>> x = torch.tensor([[[[1., 5.], [3., 2.]]]])
    >>> torch.nn.functional.max_pool2d_with_indices(x, 2)[1]
    tensor([[[[1]]]])
    """
    shape = tuple(input.shape)
    if len(shape) not in (3, 4) or any(v == 0 for v in shape[-3:]):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    k, s, p, d = _pool_params(kernel_size, stride, padding, dilation, 2)
    _check_pool(shape, k, s, p, d, ceil_mode, "max_pool2d", _nc.pool_out_size)
    out, idx = _nc.max_pool2d_with_indices(input, k, s, p, d, bool(ceil_mode), return_indices,
                                           _no_stride(stride))
    return (out, idx) if return_indices else out


def _no_stride(stride) -> bool:
    """No stride given (the kernel size is taken): PyTorch's node keeps ``()`` then."""
    return stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False):
    """2-D max pooling over ``(N, C, H, W)`` or ``(C, H, W)``; ``stride`` defaults to the
    kernel size. The gradient goes to the first maximum of each window, as in PyTorch.

    >>> import retrograd as torch
    >>> x = torch.arange(16.).reshape(1, 1, 4, 4)
    >>> torch.nn.functional.max_pool2d(x, 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode,
                                   return_indices)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
                            dilation=1, ceil_mode: bool = False, return_indices: bool = True):
    """1-D max pooling returning (values, indices).

    >>> import retrograd as torch
    >>> torch.nn.functional.max_pool1d_with_indices(torch.tensor([[1., 3., 2., 0.]]), 2)[1]
    tensor([[1, 2]])
    """
    shape = tuple(input.shape)
    if len(shape) not in (2, 3):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{_size(shape)}"
        )
    k, s, p, d = _pool_params(kernel_size, stride, padding, dilation, 1)
    x = _ops.unsqueeze(input, -2)
    out, idx = max_pool2d_with_indices(x, (1, k[0]), (1, s[0]), (0, p[0]), (1, d[0]),
                                       ceil_mode, True)
    out = _ops.squeeze(out, -2)
    if return_indices:
        return out, _ops.squeeze(idx, -2)
    return out


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False):
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.max_pool1d(torch.tensor([[1., 3., 2., 0.]]), 2)
    tensor([[3., 2.]])
    """
    return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode,
                                   return_indices)


# -- average pooling -------------------------------------------------------------------------


def _avg_out(n, k, s, p, d, ceil_mode):
    return _nc.pool_out_size(n, k, s, p, 1, ceil_mode)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """2-D average pooling over ``(N, C, H, W)`` or ``(C, H, W)``.

    >>> import retrograd as torch
    >>> x = torch.arange(16.).reshape(1, 1, 4, 4)
    >>> torch.nn.functional.avg_pool2d(x, 2)
    tensor([[[[ 2.5000,  4.5000],
              [10.5000, 12.5000]]]])
    """
    shape = tuple(input.shape)
    if len(shape) not in (3, 4) or any(v == 0 for v in shape[-3:]):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    k, s, p, _ = _pool_params(kernel_size, stride, padding, 1, 2)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _check_pool(shape, k, s, p, (1, 1), ceil_mode, "avg_pool2d", _avg_out)
    params = (k, s, p, bool(ceil_mode), bool(count_include_pad), divisor_override)
    return _nc.avg_pool(input, params, _no_stride(stride))


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.avg_pool1d(torch.tensor([[1., 3., 2., 0.]]), 2)
    tensor([[2., 1.]])
    """
    shape = tuple(input.shape)
    if len(shape) not in (2, 3):
        raise RuntimeError(
            f"avg_pool1d() Expected 2D or 3D input tensor, but got {_size(shape)}")
    k, s, p, _ = _pool_params(kernel_size, stride, padding, 1, 1)
    out = avg_pool2d(_ops.unsqueeze(input, -2), (1, k[0]), (1, s[0]), (0, p[0]), ceil_mode,
                     count_include_pad)
    return _ops.squeeze(out, -2)


# -- adaptive pooling ------------------------------------------------------------------------


def _adaptive_bounds(n_in: int, n_out: int):
    i = np.arange(n_out)
    start = (i * n_in) // n_out
    end = -((-(i + 1) * n_in) // n_out)
    return start, end


def _adaptive_matrix(n_in: int, n_out: int, dtype):
    start, end = _adaptive_bounds(n_in, n_out)
    j = np.arange(n_in)
    mask = (j >= start[:, None]) & (j < end[:, None])
    return (mask / (end - start)[:, None]).astype(dtype)


def _out_size(output_size, in_hw, nd: int) -> tuple:
    if isinstance(output_size, (list, tuple)):
        sizes = tuple(output_size)
        if len(sizes) == 1 and nd > 1:
            sizes = sizes * nd
    else:
        sizes = (output_size,) * nd
    return tuple(in_hw[i] if v is None else int(v) for i, v in enumerate(sizes))


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    """Average pooling to a fixed output size; windows ``[floor(i*H/Oh), ceil((i+1)*H/Oh))``.

    >>> import retrograd as torch
    >>> torch.nn.functional.adaptive_avg_pool2d(torch.arange(9.).reshape(1, 3, 3), 2)
    tensor([[[2., 3.],
             [5., 6.]]])
    """
    shape = tuple(input.shape)
    if len(shape) not in (3, 4):
        raise RuntimeError(
            f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {_size(shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f'"adaptive_avg_pool2d" not implemented for \'{input.dtype.scalar_name}\'')
    oh, ow = _out_size(output_size, shape[-2:], 2)
    if (oh, ow) == (1, 1):
        return _ops.mean(input, (-2, -1), keepdim=True)
    dt = input.dtype.np
    ah = _adaptive_matrix(shape[-2], oh, dt)
    aw = _adaptive_matrix(shape[-1], ow, dt)
    return _nc.sep_linear(input, ah, aw, "AdaptiveAvgPool2DBackward0")


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    """1-D adaptive average pooling over ``(N, C, L)`` or ``(C, L)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.adaptive_avg_pool1d(torch.tensor([[1., 2., 3.]]), 2)
    tensor([[1.5000, 2.5000]])
    """
    shape = tuple(input.shape)
    if len(shape) not in (2, 3):
        raise RuntimeError(
            f"adaptive_avg_pool1d() argument 'input' (position 1) must be 2D or 3D, but got "
            f"{_size(shape)}")
    (o,) = _out_size(output_size, shape[-1:], 1)
    out = adaptive_avg_pool2d(_ops.unsqueeze(input, -2), (1, o))
    return _ops.squeeze(out, -2)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size,  # noqa: A002
                                     return_indices: bool = True):
    """Adaptive max pooling returning (values, flat indices into each input plane).

    >>> import retrograd as torch
    >>> torch.nn.functional.adaptive_max_pool2d_with_indices(torch.arange(4.).view(1, 2, 2), 1)[1]
    tensor([[[3]]])
    """
    shape = tuple(input.shape)
    if len(shape) not in (3, 4):
        raise RuntimeError(
            f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {_size(shape)}")
    h, w = shape[-2:]
    oh, ow = _out_size(output_size, (h, w), 2)
    idx_maps = []
    for n_in, n_out in ((h, oh), (w, ow)):
        start, end = _adaptive_bounds(n_in, n_out)
        kmax = int((end - start).max()) if n_out else 1
        pos = start[:, None] + np.arange(kmax)
        idx_maps.append(np.minimum(pos, end[:, None] - 1))  # repeat the last: no new maxima
    vals, idx = _nc.adaptive_max_pool2d(input, *idx_maps)
    return (vals, idx) if return_indices else vals


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):  # noqa: A002
    """Adaptive max pooling to a fixed output size.

    >>> import retrograd as torch
    >>> torch.nn.functional.adaptive_max_pool2d(torch.arange(16.).view(1, 4, 4), 2)
    tensor([[[ 5.,  7.],
             [13., 15.]]])
    """
    return adaptive_max_pool2d_with_indices(input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size,  # noqa: A002
                                     return_indices: bool = True):
    """1-D adaptive max pooling returning (values, indices).

    >>> import retrograd as torch
    >>> torch.nn.functional.adaptive_max_pool1d_with_indices(torch.tensor([[1., 3., 2.]]), 1)[1]
    tensor([[1]])
    """
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument "
            "#1 'self' (while checking arguments for adaptive_max_pool1d)")
    (o,) = _out_size(output_size, input.shape[-1:], 1)
    out, idx = adaptive_max_pool2d_with_indices(_ops.unsqueeze(input, -2), (1, o), True)
    out = _ops.squeeze(out, -2)
    return (out, _ops.squeeze(idx, -2)) if return_indices else out


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):  # noqa: A002
    """1-D adaptive max pooling.

    >>> import retrograd as torch
    >>> torch.nn.functional.adaptive_max_pool1d(torch.tensor([[1., 3., 2.]]), 1)
    tensor([[3.]])
    """
    return adaptive_max_pool1d_with_indices(input, output_size, return_indices)


# -- fold / unfold ---------------------------------------------------------------------------


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:  # noqa: A002
    """Extract sliding blocks (im2col): ``(N, C, H, W)`` -> ``(N, C * kh * kw, L)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.unfold(torch.arange(9.).reshape(1, 1, 3, 3), 2)
    tensor([[[0., 1., 3., 4.],
             [1., 2., 4., 5.],
             [3., 4., 6., 7.],
             [4., 5., 7., 8.]]])
    """
    shape = tuple(input.shape)
    if len(shape) not in (3, 4):
        raise RuntimeError(
            "Input Error: Only 3D or 4D input Tensors are supported (got "
            f"{len(shape)}D)")
    k, d = _ntuple(kernel_size, 2), _ntuple(dilation, 2)
    p, s = _ntuple(padding, 2), _ntuple(stride, 2)
    h, w = shape[-2:]
    oh = _nc.conv_out_size(h, k[0], s[0], p[0], d[0])
    ow = _nc.conv_out_size(w, k[1], s[1], p[1], d[1])
    if oh < 1 or ow < 1:
        raise RuntimeError(
            f"Given input with spatial size ({h}, {w}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of the "
            f"array of sliding blocks as ({oh}, {ow}), but its components must be at least "
            "one."
        )
    return _nc.im2col(input, k, d, p, s)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0,  # noqa: A002
         stride=1) -> Tensor:
    """Combine sliding blocks into an image, summing overlaps (col2im); the adjoint of
    ``unfold``.

    >>> import retrograd as torch
    >>> torch.nn.functional.fold(torch.ones(1, 4, 4), (3, 3), 2)
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    shape = tuple(input.shape)
    if len(shape) not in (2, 3):
        raise RuntimeError(
            "Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
            f"(got {len(shape)}D)")
    o = _ntuple(output_size, 2)
    k, d = _ntuple(kernel_size, 2), _ntuple(dilation, 2)
    p, s = _ntuple(padding, 2), _ntuple(stride, 2)
    kk = k[0] * k[1]
    shape = (1,) * (3 - len(shape)) + tuple(shape)
    if shape[1] % kk:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={shape[1]} and kernel_size=({k[0]}, {k[1]}).")
    bh = _nc.conv_out_size(o[0], k[0], s[0], p[0], d[0])
    bw = _nc.conv_out_size(o[1], k[1], s[1], p[1], d[1])
    if bh * bw != shape[2]:
        raise RuntimeError(
            f"Given output_size=({o[0]}, {o[1]}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
            "expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {bh} * {bw} = {bh * bw}, but got input.size(2)={shape[2]}.")
    return _nc.col2im(input, o, k, d, p, s)


# -- interpolation ---------------------------------------------------------------------------

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")


def _nearest_index(n_in: int, n_out: int, scale, exact: bool) -> np.ndarray:
    o = np.arange(n_out)
    if not exact and n_out == n_in:
        return o
    if not exact and n_out == 2 * n_in:
        return o >> 1
    sc = np.float32(1.0 / scale) if scale is not None and scale > 0 else \
        np.float32(n_in) / np.float32(n_out)
    if exact:
        src = np.floor((o + 0.5) * np.float64(sc))
    else:
        src = np.floor(o.astype(np.float32) * sc)
    return np.minimum(src.astype(np.int64), n_in - 1)


def _linear_matrix(n_in: int, n_out: int, scale, align_corners: bool, dtype) -> np.ndarray:
    t = np.dtype(dtype).type
    if align_corners:
        sc = t(n_in - 1) / t(n_out - 1) if n_out > 1 else t(0)
    else:
        sc = t(1.0 / scale) if scale is not None and scale > 0 else t(n_in) / t(n_out)
    o = np.arange(n_out).astype(dtype)
    if align_corners:
        src = sc * o
    else:
        src = np.maximum(sc * (o + t(0.5)) - t(0.5), t(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    lam1 = np.clip(src - i0.astype(dtype), 0, 1).astype(dtype)
    lam0 = (t(1) - lam1).astype(dtype)
    i1 = i0 + (i0 < n_in - 1)
    a = np.zeros((n_out, n_in), dtype)
    rows = np.arange(n_out)
    np.add.at(a, (rows, i0), lam0)
    np.add.at(a, (rows, i1), lam1)
    return a


def _cubic_matrix(n_in: int, n_out: int, scale, align_corners: bool, dtype) -> np.ndarray:
    """The ``(n_out, n_in)`` matrix of PyTorch's bicubic taps along one dim: Keys' cubic
    convolution (``A = -0.75``) on the 4 inputs around each source point, clamped at the
    borders (weights of clamped taps add up), computed in ``dtype`` as PyTorch's kernel."""
    t = np.dtype(dtype).type
    if align_corners:
        sc = t(n_in - 1) / t(n_out - 1) if n_out > 1 else t(0)
    else:
        sc = t(1.0 / scale) if scale is not None and scale > 0 else t(n_in) / t(n_out)
    o = np.arange(n_out).astype(dtype)
    src = sc * o if align_corners else sc * (o + t(0.5)) - t(0.5)  # no clamp at 0: cubic
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    lam = np.clip(src - i0.astype(dtype), 0, 1).astype(dtype)
    a_ = t(-0.75)

    def near(x):  # |x| <= 1
        return ((a_ + t(2)) * x - (a_ + t(3))) * x * x + t(1)

    def far(x):  # 1 < |x| < 2
        return ((a_ * x - t(5) * a_) * x + t(8) * a_) * x - t(4) * a_

    weights = (far(lam + t(1)), near(lam), near(t(1) - lam), far(t(1) - lam + t(1)))
    a = np.zeros((n_out, n_in), dtype)
    rows = np.arange(n_out)
    for j, w in enumerate(weights):
        np.add.at(a, (rows, np.clip(i0 - 1 + j, 0, n_in - 1)), w.astype(dtype))
    return a


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",  # noqa: A002
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize ``(N, C, L)`` or ``(N, C, H, W)`` input by ``size`` or ``scale_factor`` with
    modes ``nearest``, ``nearest-exact``, ``linear``, ``bilinear``, ``bicubic``
    (``align_corners``) and ``area``.

    >>> import retrograd as torch
    >>> torch.nn.functional.interpolate(torch.tensor([[[1., 2.]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    nd = input.dim() - 2
    if nd < 1:
        raise ValueError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
            "the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
            f"nearest-exact (got {mode})")
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    in_sp = tuple(input.shape[2:])
    scales = None
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != nd:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(in_sp)} and output size of "
                    f"{list(size)}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                    "format and output size in (o1, o2, ...,oK) format.")
            out_sp = tuple(int(v) for v in size)
        else:
            out_sp = (int(size),) * nd
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != nd:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(in_sp)} and scale_factor "
                    f"of shape {list(scale_factor)}. Please provide input tensor in (N, C, d1, "
                    "d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            sf = tuple(float(v) for v in scale_factor)
        else:
            sf = (float(scale_factor),) * nd
        out_sp = tuple(int(math.floor(float(n) * f)) for n, f in zip(in_sp, sf))
        scales = None if recompute_scale_factor else sf
    else:
        raise ValueError("either size or scale_factor should be defined")
    if scales is None:
        scales = (None,) * nd
    if antialias:
        raise NotImplementedError("retrograd's interpolate does not support antialias=True")
    dims = list(range(2, 2 + nd))
    if mode in ("nearest", "nearest-exact"):
        if nd > 2:
            raise NotImplementedError("retrograd's interpolate supports 3D and 4D input only")
        exact = mode == "nearest-exact"
        idxs = tuple((d, _nearest_index(in_sp[i], out_sp[i], scales[i], exact))
                     for i, d in enumerate(dims))
        name = f"Upsample{'NearestExact' if exact else 'Nearest'}{nd}DBackward0"
        return index_dims(input, idxs, name)
    if mode == "area":
        if nd == 1:
            return adaptive_avg_pool1d(input, out_sp)
        return adaptive_avg_pool2d(input, out_sp)
    if mode in ("linear", "bilinear"):
        want = 1 if mode == "linear" else 2
        if nd != want:
            raise NotImplementedError(
                f"Got {input.dim()}D input, but {mode} mode needs {want + 2}D input")
        dt = input.dtype
        if not dt.is_floating_point:
            raise NotImplementedError(
                f'"upsample_{mode}{nd}d_out_frame" not implemented for \'{dt.scalar_name}\'')
        mats = [_linear_matrix(in_sp[i], out_sp[i], scales[i], align_corners, dt.np)
                for i in range(nd)]
        if nd == 1:
            return _nc.sep_linear(input, None, mats[0], "UpsampleLinear1DBackward0")
        return _nc.sep_linear(input, mats[0], mats[1], "UpsampleBilinear2DBackward0")
    if mode == "bicubic":
        if nd != 2:
            raise NotImplementedError(f"Got {input.dim()}D input, but bicubic mode needs 4D input")
        dt = input.dtype
        if not dt.is_floating_point:
            raise NotImplementedError(
                f'"upsample_bicubic2d_out_frame" not implemented for \'{dt.scalar_name}\'')
        mats = [_cubic_matrix(in_sp[i], out_sp[i], scales[i], align_corners, dt.np)
                for i in range(2)]
        return _nc.sep_linear(input, mats[0], mats[1], "UpsampleBicubic2DBackward0")
    if mode in _MODES:
        raise NotImplementedError(f"retrograd's interpolate does not support mode {mode!r}")
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
        "modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
        f"nearest-exact (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest",  # noqa: A002
             align_corners=None) -> Tensor:
    """Deprecated alias of ``interpolate``.

    >>> import retrograd as torch
    >>> torch.nn.functional.upsample(torch.tensor([[[1., 2.]]]), size=3).shape
    retrograd.Size([1, 1, 3])
    """
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None) -> Tensor:  # noqa: A002
    """Deprecated: ``interpolate(..., mode='nearest')``.

    >>> import retrograd as torch
    >>> torch.nn.functional.upsample_nearest(torch.tensor([[[1., 2.]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    """
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None) -> Tensor:  # noqa: A002
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.upsample_bilinear(torch.ones(1, 1, 2, 2), size=3).shape
    retrograd.Size([1, 1, 3, 3])
    """
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
