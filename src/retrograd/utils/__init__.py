"""Utilities that PyTorch keeps under ``torch.utils``: ``data`` (datasets and the DataLoader) and
``hooks`` (the handle every ``register_*hook`` returns); and retrograd's own ``summary`` (a
model's layers, shapes, parameters and saved bytes)."""

from __future__ import annotations

import importlib

from . import hooks

__all__ = ["data", "hooks", "summary", "checkpoint"]


def __getattr__(name: str):
    # ``data`` loads on first use: it needs the Tensor class, while ``hooks`` is imported by the
    # autograd graph before that class exists.
    if name in ("data", "checkpoint"):
        return importlib.import_module("." + name, __name__)
    if name == "summary":
        return importlib.import_module("._summary", __name__).summary
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
