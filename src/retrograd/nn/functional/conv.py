"""Convolutions, pooling, fold/unfold and interpolation."""

from __future__ import annotations

__all__: list = []
