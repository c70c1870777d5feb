"""retrograd.backends: the flags PyTorch code sets or reads; no GPU backend is ever available.

``cudnn`` and ``mps`` are submodules, as in PyTorch, so ``import torch.backends.cudnn as cudnn``
works under ``retrograd.as_torch()`` too.

>>> import retrograd as torch
>>> torch.backends.mps.is_available(), torch.backends.cudnn.is_available()
(False, False)
"""

from __future__ import annotations

from . import cudnn, mps

__all__ = ["cudnn", "mps"]
