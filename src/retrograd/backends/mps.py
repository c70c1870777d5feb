"""retrograd.backends.mps: Apple's Metal backend, never available.

>>> import retrograd as torch
>>> torch.backends.mps.is_available(), torch.backends.mps.is_built()
(False, False)
"""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """Always False."""
    return False


def is_built() -> bool:
    """Always False."""
    return False
