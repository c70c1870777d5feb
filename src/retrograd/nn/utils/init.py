"""``skip_init``: build a module without running its parameter initialisation."""

from __future__ import annotations

import inspect

from ..module import Module

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args, **kwargs) -> Module:
    """``module_cls(*args, **kwargs)`` with uninitialised parameters (their values are
    unspecified, as in PyTorch); the class must accept a ``device`` argument.

    >>> import retrograd as torch
    >>> skip_init(torch.nn.Linear, 5, 1).weight.shape
    retrograd.Size([1, 5])
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)
