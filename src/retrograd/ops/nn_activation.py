"""Primitive ops behind nn.functional (activation): the ones numerical stability or speed ask for."""

from __future__ import annotations

__all__: list = []
XP: list = []
METHODS: dict = {}
INPLACE: dict = {}
