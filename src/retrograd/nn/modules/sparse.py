"""nn modules: sparse."""

from __future__ import annotations

__all__: list = []
