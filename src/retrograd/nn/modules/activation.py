"""nn modules: activation."""

from __future__ import annotations

__all__: list = []
