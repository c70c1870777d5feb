"""retrograd.linalg: the linear-algebra functions PyTorch keeps under ``torch.linalg``."""

from .ops.reduction import vector_norm

__all__ = ["vector_norm"]
