"""Primitive ops behind nn.functional (activation): where stability or speed ask for one."""

from __future__ import annotations

__all__: list = []
XP: list = []
METHODS: dict = {}
INPLACE: dict = {}
