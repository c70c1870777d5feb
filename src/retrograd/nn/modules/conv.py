"""Convolution layers: ``Conv1d``, ``Conv2d``, ``ConvTranspose1d``, ``ConvTranspose2d``, and
``Unfold``/``Fold``."""

from __future__ import annotations

import math

import retrograd as torch
from retrograd import Tensor

from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "Unfold", "Fold"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(v, n: int) -> tuple:
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


class _ConvNd(Module):
    """What the convolution layers share: parameters, initialisation and ``extra_repr``."""

    _nd = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride, padding,
                 dilation, transposed: bool, output_padding, groups: int, bias: bool,
                 padding_mode: str, device=None, dtype=None) -> None:
        super().__init__()
        if device is not None:
            torch.device(device)
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, nd)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            modes = ", ".join(map(repr, _PADDING_MODES))
            raise ValueError(
                f"padding_mode must be one of {{{modes}}}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, nd)
        self.stride = _ntuple(stride, nd)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, nd)
        self.dilation = _ntuple(dilation, nd)
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, nd)
        self.groups = groups
        self.padding_mode = padding_mode
        # What F.pad takes for the non-zero padding modes: (left, right) from the last dim.
        if isinstance(self.padding, str):
            rev = [0, 0] * nd
            if padding == "same":
                for d, k, i in zip(self.dilation, self.kernel_size, range(nd - 1, -1, -1)):
                    total = d * (k - 1)
                    rev[2 * i] = total // 2
                    rev[2 * i + 1] = total - total // 2
        else:
            rev = []
            for p in reversed(self.padding):
                rev += [p, p]
        self._reversed_padding_repeated_twice = rev
        if transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(torch.empty(shape, dtype=dtype))
        if bias:
            self.bias = Parameter(torch.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw weight and bias from PyTorch's default distributions."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        nd = len(self.kernel_size)
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias) -> Tensor:  # noqa: A002
        fn = (F.conv1d, F.conv2d, F.conv3d)[self._nd - 1]
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution layer over ``(N, C_in, L)``; weight ``(C_out, C_in / groups, k)``.

    >>> import retrograd as torch
    >>> m = torch.nn.Conv1d(2, 4, 3, padding=1)
    >>> m
    Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=(1,))
    >>> m(torch.ones(5, 2, 7)).shape
    retrograd.Size([5, 4, 7])
    """

    _nd = 1


class Conv2d(_Conv):
    """2-D convolution layer over ``(N, C_in, H, W)``; ``padding`` may be ``'same'`` or
    ``'valid'``, ``padding_mode`` one of zeros, reflect, replicate, circular.

    >>> import retrograd as torch
    >>> m = torch.nn.Conv2d(3, 8, 3, stride=2, bias=False)
    >>> m
    Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), bias=False)
    >>> m(torch.ones(1, 3, 9, 9)).shape
    retrograd.Size([1, 8, 4, 4])
    """

    _nd = 2


class Conv3d(_Conv):
    """3-D convolution layer over ``(N, C_in, D, H, W)``.

    >>> import retrograd as torch
    >>> m = torch.nn.Conv3d(2, 4, 3, padding=1)
    >>> m
    Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1))
    >>> m(torch.ones(1, 2, 3, 4, 5)).shape
    retrograd.Size([1, 4, 3, 4, 5])
    """

    _nd = 3


class _ConvTranspose(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input: Tensor, output_size) -> tuple:
        if output_size is None:
            return self.output_padding
        nd = self._nd
        output_size = list(output_size)
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        elif len(output_size) == nd + 1 and input.dim() == nd + 1:
            output_size = output_size[1:]
        if len(output_size) != nd:
            raise ValueError(
                f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must have {nd} or "
                f"{nd + 2} elements (got {len(output_size) + 0})")
        res = []
        for d in range(nd):
            dim_size = input.shape[input.dim() - nd + d]
            min_size = ((dim_size - 1) * self.stride[d] - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            max_size = min_size + self.stride[d] - 1
            if not min_size <= output_size[d] <= max_size:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{[min_size]} to {[max_size]} (for an input of {list(input.shape[2:])})")
            res.append(output_size[d] - min_size)
        return tuple(res)

    def forward(self, input: Tensor, output_size=None) -> Tensor:  # noqa: A002
        op = self._output_padding(input, output_size)
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._nd - 1]
        return fn(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                  self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """1-D transposed convolution layer; weight ``(C_in, C_out / groups, k)``.

    >>> import retrograd as torch
    >>> m = torch.nn.ConvTranspose1d(2, 3, 2, stride=2)
    >>> m(torch.ones(1, 2, 4)).shape
    retrograd.Size([1, 3, 8])
    """

    _nd = 1


class ConvTranspose2d(_ConvTranspose):
    """2-D transposed convolution layer; ``forward(input, output_size=None)``.

    >>> import retrograd as torch
    >>> m = torch.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)
    >>> m
    ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), output_padding=(1, 1))
    >>> m(torch.ones(1, 4, 5, 5)).shape
    retrograd.Size([1, 2, 10, 10])
    """

    _nd = 2


class ConvTranspose3d(_ConvTranspose):
    """3-D transposed convolution layer; weight ``(C_in, C_out / groups, kD, kH, kW)``.

    >>> import retrograd as torch
    >>> m = torch.nn.ConvTranspose3d(2, 3, 2, stride=2)
    >>> m(torch.ones(1, 2, 2, 3, 4)).shape
    retrograd.Size([1, 3, 4, 6, 8])
    """

    _nd = 3


class Unfold(Module):
    """Extract sliding local blocks (``F.unfold``).

    >>> import retrograd as torch
    >>> torch.nn.Unfold(kernel_size=2)(torch.ones(1, 3, 4, 4)).shape
    retrograd.Size([1, 12, 9])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """Combine sliding local blocks into an image (``F.fold``).

    >>> import retrograd as torch
    >>> torch.nn.Fold(output_size=(3, 3), kernel_size=2)(torch.ones(1, 4, 4)).shape
    retrograd.Size([1, 1, 3, 3])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")
