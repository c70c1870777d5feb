"""nn modules: rnn."""

from __future__ import annotations

__all__: list = []
