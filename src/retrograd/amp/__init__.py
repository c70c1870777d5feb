"""Mixed precision, as ``torch.amp``: ``autocast`` and ``GradScaler`` on the CPU."""

from .autocast_mode import (
    autocast,
    clear_autocast_cache,
    custom_bwd,
    custom_fwd,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "is_autocast_available", "is_autocast_enabled",
           "get_autocast_dtype", "set_autocast_enabled", "set_autocast_dtype",
           "clear_autocast_cache", "custom_fwd", "custom_bwd"]
