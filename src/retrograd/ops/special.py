"""Special functions (erf, erfinv, lgamma, digamma, ...) on NumPy alone, and their ops."""

from __future__ import annotations

__all__: list = []
XP: list = []
METHODS: dict = {}
INPLACE: dict = {}
