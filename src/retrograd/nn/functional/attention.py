"""Attention: scaled_dot_product_attention and multi-head attention's functional core."""

from __future__ import annotations

__all__: list = []
