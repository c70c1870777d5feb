"""Leak warnings: a training loop that keeps graphs alive across optimizer steps."""

from __future__ import annotations

__all__ = ["GraphLeakWarning"]


class GraphLeakWarning(UserWarning):
    """A graph built before an earlier optimizer step is still alive and being extended."""
