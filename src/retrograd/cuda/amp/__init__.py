"""``torch.cuda.amp``: the deprecated CUDA spellings of ``torch.amp``. retrograd has no CUDA, so
as on PyTorch's CPU build each warns that it is deprecated, then that CUDA is not available,
and runs disabled: code written for a GPU still runs, in float32, on the CPU.

>>> import warnings, retrograd as torch
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     scaler = torch.cuda.amp.GradScaler()
...     with torch.cuda.amp.autocast():
...         y = torch.ones(1, 2) @ torch.ones(2, 1)
>>> scaler.is_enabled(), y.dtype
(False, retrograd.float32)
"""

from __future__ import annotations

import warnings

from ... import _dtypes
from ...amp import GradScaler as _GradScaler
from ...amp import autocast as _autocast
from ...amp import custom_bwd as _custom_bwd
from ...amp import custom_fwd as _custom_fwd

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd",
           "GradScaler"]


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"`torch.cuda.amp.{old}(args...)` is deprecated. Please use `{new}` instead.",
                  FutureWarning, stacklevel=3)


def amp_definitely_not_available() -> bool:
    """True: there is no CUDA."""
    return True


class autocast(_autocast):  # noqa: N801 - PyTorch's name
    """``retrograd.amp.autocast("cuda", ...)`` under its old name: disabled (no CUDA)."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        _deprecated("autocast", "torch.amp.autocast('cuda', args...)")
        super().__init__("cuda", dtype=_dtypes.float16 if dtype is None else dtype,
                         enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``retrograd.amp.GradScaler("cuda", ...)`` under its old name: disabled (no CUDA)."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        _deprecated("GradScaler", "torch.amp.GradScaler('cuda', args...)")
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``retrograd.amp.custom_fwd(..., device_type="cuda")`` under its old name."""
    _deprecated("custom_fwd", "torch.amp.custom_fwd(args..., device_type='cuda')")
    return _custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """``retrograd.amp.custom_bwd(..., device_type="cuda")`` under its old name."""
    _deprecated("custom_bwd", "torch.amp.custom_bwd(args..., device_type='cuda')")
    return _custom_bwd(bwd, device_type="cuda")
