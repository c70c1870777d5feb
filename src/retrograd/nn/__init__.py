"""``retrograd.nn``: modules, parameters, initialisation and utilities, as in ``torch.nn``."""

from . import functional, init, parallel, utils
from .module import Module
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["Module", "Parameter", "Buffer", "functional", "init", "parallel", "utils"]
__all__ += ["UninitializedParameter", "UninitializedBuffer"]
__all__ += list(_modules_all)
