"""Activations and softmax-like functions."""

from __future__ import annotations

__all__: list = []
