"""retrograd.backends: the flags PyTorch code sets or reads; no GPU backend is ever available.

>>> import retrograd as torch
>>> torch.backends.mps.is_available(), torch.backends.cudnn.is_available()
(False, False)
"""

from __future__ import annotations

import types

__all__ = ["cudnn", "mps"]


def _unavailable() -> bool:
    return False


mps = types.SimpleNamespace(is_available=_unavailable, is_built=_unavailable)
# Settable flags, as scripts assign torch.backends.cudnn.deterministic = True.
cudnn = types.SimpleNamespace(is_available=_unavailable, enabled=True, benchmark=False,
                              deterministic=False)
