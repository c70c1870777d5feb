"""nn modules: loss."""

from __future__ import annotations

__all__: list = []
