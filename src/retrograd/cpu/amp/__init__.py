"""``torch.cpu.amp``: the deprecated spellings of ``torch.amp.autocast("cpu", ...)``."""

from __future__ import annotations

import warnings

from ... import _dtypes
from ...amp import GradScaler as _GradScaler
from ...amp import autocast as _autocast

__all__ = ["autocast", "GradScaler"]


class autocast(_autocast):  # noqa: N801 - PyTorch's name
    """``retrograd.amp.autocast("cpu", ...)`` under its old name (with PyTorch's warning)."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", dtype=_dtypes.bfloat16 if dtype is None else dtype,
                         enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``retrograd.amp.GradScaler("cpu", ...)`` under its old name (with PyTorch's warning)."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)
