"""The rest of nn.functional: linear, bilinear, embedding, one_hot, pad, normalize, ..."""

from __future__ import annotations

from ...ops.indexing import one_hot
from ...ops.shape import pad

__all__: list = ["one_hot", "pad"]
