"""Weight memory-format conversion (``torch.nn.utils.memory_format``): retrograd keeps every
tensor in one (contiguous) layout, so converting leaves the module's values unchanged."""

from __future__ import annotations

from ..module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def convert_conv2d_weight_memory_format(module: Module, memory_format) -> Module:
    """Returns ``module`` (the layout request has no effect on values).

    >>> import retrograd as torch
    >>> m = torch.nn.Conv2d(1, 1, 1)
    >>> convert_conv2d_weight_memory_format(m, torch.channels_last) is m
    True
    """
    return module


def convert_conv3d_weight_memory_format(module: Module, memory_format) -> Module:
    """Returns ``module`` (the layout request has no effect on values).

    >>> import retrograd as torch
    >>> m = torch.nn.Conv3d(1, 1, 1)
    >>> convert_conv3d_weight_memory_format(m, torch.channels_last_3d) is m
    True
    """
    return module
