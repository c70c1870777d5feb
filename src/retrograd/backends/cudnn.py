"""retrograd.backends.cudnn: cuDNN's flags, settable as scripts set them; never available.

>>> import retrograd as torch
>>> torch.backends.cudnn.deterministic = True
>>> torch.backends.cudnn.is_available()
False
"""

from __future__ import annotations

__all__ = ["is_available", "version", "enabled", "benchmark", "deterministic"]

# Settable flags, as scripts assign torch.backends.cudnn.deterministic = True; they change nothing.
enabled = True
benchmark = False
deterministic = False


def is_available() -> bool:
    """Always False: retrograd has no cuDNN."""
    return False


def version() -> None:
    """None, as PyTorch reports without cuDNN."""
    return None
