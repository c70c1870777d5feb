"""nn modules: pooling."""

from __future__ import annotations

__all__: list = []
