"""Normalisation functions and dropout."""

from __future__ import annotations

__all__: list = []
