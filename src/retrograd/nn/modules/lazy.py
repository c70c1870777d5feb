"""Lazy layers: ``LazyLinear``, ``LazyConv*``, ``LazyConvTranspose*``, ``LazyBatchNorm*`` and
``LazyInstanceNorm*`` infer their input size from the first input, then become the plain layer
(``cls_to_become``), as in PyTorch. Until then their parameters are ``UninitializedParameter``.
"""

from __future__ import annotations

import retrograd as torch
from retrograd import Tensor

from ..module import Module
from ..parameter import UninitializedBuffer, UninitializedParameter
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
)

__all__ = ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Runs ``initialize_parameters(*inputs)`` before the first forward, then turns the module
    into ``cls_to_become``."""

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _add_hook(self)

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer still waits for its shape."""
        return any(isinstance(t, (UninitializedParameter, UninitializedBuffer))
                   for t in list(self._parameters.values()) + list(self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")


def _add_hook(module: Module) -> None:
    module._initialize_hook = module.register_forward_pre_hook(_infer_parameters)


def _infer_parameters(module: Module, args) -> None:
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {type(module).__name__} has not been fully initialized")
    module._initialize_hook.remove()
    del module._initialize_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` comes from its first input.

    >>> import retrograd as torch
    >>> m = torch.nn.LazyLinear(4)
    >>> m
    LazyLinear(in_features=0, out_features=4, bias=True)
    >>> _ = m(torch.ones(2, 3))
    >>> m
    Linear(in_features=3, out_features=4, bias=True)
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:  # noqa: A002
        if self.has_uninitialized_params():
            with torch.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    _nd = 1
    transposed = False

    def _lazy_init(self, out_channels: int, bias: bool, dtype) -> None:
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args) -> None:  # noqa: A002
        if not self.has_uninitialized_params():
            return
        self.in_channels = input.shape[1] if input.dim() == self._nd + 2 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups)
        else:
            shape = (self.out_channels, self.in_channels // self.groups)
        with torch.no_grad():
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


def _lazy_conv(name: str, base: type, nd: int) -> type:
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False,
                      padding_mode)
        _add_hook(self)
        self._lazy_init(out_channels, bias, dtype)

    doc = (f"A ``{base.__name__}`` whose ``in_channels`` comes from its first input.\n\n"
           f"    >>> import retrograd as torch\n"
           f"    >>> torch.nn.{name}(4, 3).out_channels\n    4\n    ")
    return type(name, (_LazyConvMixin, base), {"__init__": __init__, "cls_to_become": base,
                                                "_nd": nd, "__doc__": doc,
                                                "__module__": __name__})


def _lazy_conv_t(name: str, base: type, nd: int) -> type:
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False,
                      dilation, padding_mode)
        _add_hook(self)
        self._lazy_init(out_channels, bias, dtype)

    doc = (f"A ``{base.__name__}`` whose ``in_channels`` comes from its first input.\n\n"
           f"    >>> import retrograd as torch\n"
           f"    >>> torch.nn.{name}(4, 3).out_channels\n    4\n    ")
    return type(name, (_LazyConvMixin, base), {"__init__": __init__, "cls_to_become": base,
                                                "_nd": nd, "transposed": True, "__doc__": doc,
                                                "__module__": __name__})


LazyConv1d = _lazy_conv("LazyConv1d", Conv1d, 1)
LazyConv2d = _lazy_conv("LazyConv2d", Conv2d, 2)
LazyConv3d = _lazy_conv("LazyConv3d", Conv3d, 3)
LazyConvTranspose1d = _lazy_conv_t("LazyConvTranspose1d", ConvTranspose1d, 1)
LazyConvTranspose2d = _lazy_conv_t("LazyConvTranspose2d", ConvTranspose2d, 2)
LazyConvTranspose3d = _lazy_conv_t("LazyConvTranspose3d", ConvTranspose3d, 3)


class _LazyNormMixin(LazyModuleMixin):
    def _lazy_init(self, affine: bool, track_running_stats: bool, dtype) -> None:
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = torch.tensor(0, dtype=torch.long)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:  # noqa: A002
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        with torch.no_grad():
            if self.affine:
                self.weight.materialize((self.num_features,))
                self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(name: str, base: type, affine_default: bool, track_default: bool) -> type:
    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = affine_default, track_running_stats: bool = track_default,
                 device=None, dtype=None) -> None:
        base.__init__(self, 0, eps, momentum, False, False)
        _add_hook(self)
        self._lazy_init(affine, track_running_stats, dtype)

    doc = (f"A ``{base.__name__}`` whose ``num_features`` comes from its first input.\n\n"
           f"    >>> import retrograd as torch\n"
           f"    >>> torch.nn.{name}().num_features\n    0\n    ")
    return type(name, (_LazyNormMixin, base), {"__init__": __init__, "cls_to_become": base,
                                                "__doc__": doc, "__module__": __name__})


LazyBatchNorm1d = _lazy_norm("LazyBatchNorm1d", BatchNorm1d, True, True)
LazyBatchNorm2d = _lazy_norm("LazyBatchNorm2d", BatchNorm2d, True, True)
LazyBatchNorm3d = _lazy_norm("LazyBatchNorm3d", BatchNorm3d, True, True)
LazyInstanceNorm1d = _lazy_norm("LazyInstanceNorm1d", InstanceNorm1d, True, True)
LazyInstanceNorm2d = _lazy_norm("LazyInstanceNorm2d", InstanceNorm2d, True, True)
LazyInstanceNorm3d = _lazy_norm("LazyInstanceNorm3d", InstanceNorm3d, True, True)
