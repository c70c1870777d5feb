"""retrograd.accelerator: PyTorch's device-generic accelerator API, reporting no accelerator.

Code written for PyTorch 2.6+ picks its device with
``torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"``;
retrograd computes on the CPU only, so there is none, and the calls that need a device raise
PyTorch's RuntimeError for a machine without one.

>>> import retrograd as torch
>>> torch.accelerator.is_available(), torch.accelerator.current_accelerator()
(False, None)
"""

from __future__ import annotations

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "set_device_index", "synchronize", "empty_cache"]

_NONE = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    """Always False: retrograd has no accelerator."""
    return False


def current_accelerator(check_available: bool = False):
    """None: there is no accelerator (PyTorch returns None on a CPU-only machine)."""
    return None


def device_count() -> int:
    """Always 0."""
    return 0


def current_device_index() -> int:
    raise RuntimeError(_NONE)


def set_device_index(device) -> None:
    raise RuntimeError(_NONE)


def synchronize(device=None) -> None:
    raise RuntimeError(_NONE)


def empty_cache() -> None:
    raise RuntimeError(_NONE)


current_device_idx = current_device_index
set_device_idx = set_device_index
