"""retrograd.cuda: what code written for PyTorch asks before choosing a device.

retrograd computes on the CPU only, so CUDA is never available; the seeding calls are accepted
and do nothing, as PyTorch's do on a machine without a GPU.

>>> import retrograd as torch
>>> torch.device("cuda" if torch.cuda.is_available() else "cpu")
device(type='cpu')
"""

from __future__ import annotations

from . import amp

__all__ = ["amp", "is_available", "device_count", "manual_seed", "manual_seed_all",
           "is_initialized", "synchronize", "empty_cache"]


def is_available() -> bool:
    """Always False: retrograd has no CUDA backend."""
    return False


def device_count() -> int:
    """Always 0."""
    return 0


def is_initialized() -> bool:
    return False


def manual_seed(seed: int) -> None:
    """Accepted and ignored (no CUDA generator exists), as on a machine without a GPU."""


def manual_seed_all(seed: int) -> None:
    """Accepted and ignored (no CUDA generator exists)."""


def synchronize(device=None) -> None:
    raise RuntimeError("retrograd computes on the CPU only; CUDA is not available")


def empty_cache() -> None:
    """Nothing to free: there is no CUDA cache."""
