"""retrograd.linalg: the linear-algebra functions PyTorch keeps under ``torch.linalg``."""

from .ops import decomp as _decomp
from .ops import linalg as _linalg
from .ops import linalg_composite as _composite
from .ops import reduction as _reduction
from .ops.decomp import LinAlgError
from .ops.reduction import vector_norm

__all__ = ["vector_norm", "LinAlgError"]

for _name, _fn in {**_decomp.LINALG, **_linalg.LINALG, **_composite.LINALG}.items():
    globals()[_name] = _fn
    __all__.append(_name)
del _name, _fn

# matrix_norm lives with the reductions, where its own family adds it.
if hasattr(_reduction, "matrix_norm"):
    matrix_norm = _reduction.matrix_norm
    __all__.append("matrix_norm")
