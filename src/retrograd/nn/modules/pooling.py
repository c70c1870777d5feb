"""Pooling and resampling layers: max, average and adaptive pooling (1-D to 3-D), max
unpooling, power-average and fractional max pooling, and ``Upsample``."""

from __future__ import annotations

from retrograd import Tensor

from .. import functional as F
from ..module import Module

__all__ = [
    "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Upsample", "UpsamplingNearest2d",
    "UpsamplingBilinear2d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d",
    "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d",
    "FractionalMaxPool2d", "FractionalMaxPool3d",
]


def _single(v) -> tuple:
    return tuple(v) if isinstance(v, (list, tuple)) else (v,)


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over ``(N, C, L)``; ``stride`` defaults to ``kernel_size``.

    >>> import retrograd as torch
    >>> torch.nn.MaxPool1d(2)(torch.tensor([[[1., 3., 2., 0.]]]))
    tensor([[[3., 2.]]])
    """

    def forward(self, input: Tensor):  # noqa: A002
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling over ``(N, C, H, W)``; ``stride`` defaults to ``kernel_size``.

    >>> import retrograd as torch
    >>> m = torch.nn.MaxPool2d(2)
    >>> m
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> m(torch.ones(1, 3, 4, 4)).shape
    retrograd.Size([1, 3, 2, 2])
    """

    def forward(self, input: Tensor):  # noqa: A002
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPoolNd(Module):
    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """1-D average pooling over ``(N, C, L)``.

    >>> import retrograd as torch
    >>> torch.nn.AvgPool1d(2)
    AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling over ``(N, C, H, W)``.

    >>> import retrograd as torch
    >>> torch.nn.AvgPool2d(2)(torch.arange(16.).reshape(1, 1, 4, 4))
    tensor([[[[ 2.5000,  4.5000],
              [10.5000, 12.5000]]]])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptivePool(Module):
    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Average pooling of ``(N, C, L)`` to a fixed length.

    >>> import retrograd as torch
    >>> torch.nn.AdaptiveAvgPool1d(2)(torch.tensor([[[1., 2., 3.]]]))
    tensor([[[1.5000, 2.5000]]])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptivePool):
    """Average pooling of ``(N, C, H, W)`` to a fixed size (``None`` keeps that dim).

    >>> import retrograd as torch
    >>> torch.nn.AdaptiveAvgPool2d((1, 1))(torch.ones(2, 3, 5, 5)).shape
    retrograd.Size([2, 3, 1, 1])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.adaptive_avg_pool2d(input, self.output_size)


class _AdaptiveMaxPool(_AdaptivePool):
    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """Max pooling of ``(N, C, L)`` to a fixed length.

    >>> import retrograd as torch
    >>> torch.nn.AdaptiveMaxPool1d(1)(torch.tensor([[[1., 3., 2.]]]))
    tensor([[[3.]]])
    """

    def forward(self, input: Tensor):  # noqa: A002
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """Max pooling of ``(N, C, H, W)`` to a fixed size.

    >>> import retrograd as torch
    >>> torch.nn.AdaptiveMaxPool2d(2)(torch.ones(1, 1, 5, 5)).shape
    retrograd.Size([1, 1, 2, 2])
    """

    def forward(self, input: Tensor):  # noqa: A002
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class Upsample(Module):
    """Resample by ``size`` or ``scale_factor`` (``F.interpolate``).

    >>> import retrograd as torch
    >>> m = torch.nn.Upsample(scale_factor=2, mode="nearest")
    >>> m
    Upsample(scale_factor=2.0, mode='nearest')
    >>> m(torch.ones(1, 1, 2, 2)).shape
    retrograd.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """2-D nearest-neighbour upsampling.

    >>> import retrograd as torch
    >>> torch.nn.UpsamplingNearest2d(scale_factor=2)(torch.ones(1, 1, 2, 2)).shape
    retrograd.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """2-D bilinear upsampling with ``align_corners=True``.

    >>> import retrograd as torch
    >>> torch.nn.UpsamplingBilinear2d(size=3)(torch.ones(1, 1, 2, 2)).shape
    retrograd.Size([1, 1, 3, 3])
    """

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over ``(N, C, D, H, W)``; ``stride`` defaults to ``kernel_size``.

    >>> import retrograd as torch
    >>> torch.nn.MaxPool3d(2)
    MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    def forward(self, input: Tensor):  # noqa: A002
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool3d(AvgPool2d):
    """3-D average pooling over ``(N, C, D, H, W)``.

    >>> import retrograd as torch
    >>> torch.nn.AvgPool3d(2)(torch.arange(8.).reshape(1, 1, 2, 2, 2)).flatten()
    tensor([3.5000])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(_AdaptivePool):
    """Average pooling of ``(N, C, D, H, W)`` to a fixed size.

    >>> import retrograd as torch
    >>> torch.nn.AdaptiveAvgPool3d((1, None, 2))(torch.ones(1, 1, 3, 4, 5)).shape
    retrograd.Size([1, 1, 1, 4, 2])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """Max pooling of ``(N, C, D, H, W)`` to a fixed size.

    >>> import retrograd as torch
    >>> torch.nn.AdaptiveMaxPool3d(1)(torch.arange(8.).reshape(1, 1, 2, 2, 2)).flatten()
    tensor([7.])
    """

    def forward(self, input: Tensor):  # noqa: A002
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


def _ntuple(v, n: int) -> tuple:
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


class _MaxUnpoolNd(Module):
    _nd = 1

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._nd)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._nd)
        self.padding = _ntuple(padding, self._nd)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:  # noqa: A002
        fn = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._nd - 1]
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool1d``: ``forward(input, indices, output_size=None)``.

    >>> import retrograd as torch
    >>> torch.nn.MaxUnpool1d(2)
    MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    """


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool2d``.

    >>> import retrograd as torch
    >>> v, i = torch.nn.MaxPool2d(2, return_indices=True)(torch.arange(4.).reshape(1, 1, 2, 2))
    >>> torch.nn.MaxUnpool2d(2)(v, i).flatten()
    tensor([0., 0., 0., 3.])
    """

    _nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool3d``.

    >>> import retrograd as torch
    >>> torch.nn.MaxUnpool3d(2)
    MaxUnpool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0))
    """

    _nd = 3


class _LPPoolNd(Module):
    _nd = 1

    def __init__(self, norm_type: float, kernel_size, stride=None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        fn = (F.lp_pool1d, F.lp_pool2d, F.lp_pool3d)[self._nd - 1]
        return fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling: ``(sum of x^p over each window)^(1/p)``.

    >>> import retrograd as torch
    >>> torch.nn.LPPool1d(2, 2)(torch.tensor([[[3., 4.]]]))
    tensor([[[5.]]])
    """


class LPPool2d(_LPPoolNd):
    """2-D power-average pooling.

    >>> import retrograd as torch
    >>> torch.nn.LPPool2d(2, 2)
    LPPool2d(norm_type=2, kernel_size=2, stride=None, ceil_mode=False)
    """

    _nd = 2


class LPPool3d(_LPPoolNd):
    """3-D power-average pooling.

    >>> import retrograd as torch
    >>> torch.nn.LPPool3d(1, 2)(torch.ones(1, 1, 2, 2, 2)).flatten()
    tensor([8.])
    """

    _nd = 3


class _FractionalMaxPoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices: bool = False, _random_samples=None) -> None:
        super().__init__()
        nd = self._nd
        self.kernel_size = _ntuple(kernel_size, nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, nd) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, nd) if output_ratio is not None else None
        name = type(self).__name__
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             f"ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor):  # noqa: A002
        fn = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                  self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Max pooling over pseudo-random windows (Graham, 2014): ``output_size`` or
    ``output_ratio``; the window starts are drawn with ``rand`` on every call, as in PyTorch.

    >>> import retrograd as torch
    >>> torch.nn.FractionalMaxPool2d(2, output_size=3)(torch.ones(1, 1, 5, 5)).shape
    retrograd.Size([1, 1, 3, 3])
    """


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling.

    >>> import retrograd as torch
    >>> torch.nn.FractionalMaxPool3d(2, output_ratio=0.5)(torch.ones(1, 1, 5, 5, 5)).shape
    retrograd.Size([1, 1, 2, 2, 2])
    """

    _nd = 3
