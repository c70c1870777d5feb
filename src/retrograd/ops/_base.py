"""The base beneath the op families: what several families share, importing none of them.

PyTorch's legacy dtype names (``Float``, ``Long``...) and its "not implemented" error for a kernel
with no version for a dtype.
"""

from __future__ import annotations

import numpy as np

LEGACY = {
    "float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
    "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
}


def legacy(dtype) -> str:
    """PyTorch's legacy name of a dtype, as its error messages spell it (``Float``)."""
    return LEGACY[np.dtype(dtype).name]


def not_implemented(kernel: str, dtype):
    """PyTorch's error for a kernel that has no version for ``dtype``."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{legacy(dtype)}\'')
