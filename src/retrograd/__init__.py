"""retrograd: PyTorch's autograd rebuilt in Python on NumPy.

Use it as PyTorch::

    import retrograd as torch
    x = torch.tensor([2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad  # tensor([4., 6.])

The layers, bottom to top: ``_dtypes`` and ``_tensor`` (arrays plus autograd metadata),
``autograd.graph`` (nodes), ``ops`` (each op's forward beside its backward),
``autograd.engine`` (the backward walk), and ``autograd`` (Function, grad modes, gradcheck).
"""

from __future__ import annotations

import sys as _sys

# _allocator tunes malloc when imported (RETROGRAD_MALLOC=default opts out; see its docstring).
from . import (
    _allocator,
    _dtypes,
    accelerator,
    autograd,
    backends,
    cuda,
    linalg,
    ops,
    return_types,
    special,
)
from ._alias import as_torch
from ._creation import *  # noqa: F403
from ._creation import __all__ as _creation_all
from ._dtypes import (
    bfloat16,
    bool,
    can_cast,
    double,
    dtype,
    finfo,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    set_default_dtype,
    short,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._gamma import _dirichlet_grad, _sample_dirichlet, _standard_gamma, _standard_gamma_grad
from ._printing import get_printoptions, set_printoptions
from ._random import *  # noqa: F403
from ._random import __all__ as _random_all
from ._ranges import *  # noqa: F403
from ._ranges import __all__ as _ranges_all
from ._tensor import Size, Tensor, device
from .autograd.anomaly_mode import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .ops import *  # noqa: F403
from .ops import __all__ as _ops_all

__version__ = "0.1.0"



def result_type(tensor1, tensor2) -> dtype:
    """The dtype an op on these two operands (tensors or numbers) returns.

    >>> import retrograd as torch
    >>> torch.result_type(torch.tensor([1, 2]), 1.0)
    retrograd.float32
    """
    dims, zeros, scalars = [], [], []
    for x in (tensor1, tensor2):
        if isinstance(x, Tensor):
            (zeros if x._data.ndim == 0 else dims).append(x.dtype)
        else:
            scalars.append(x)
    return _dtypes.result_type_of(dims, zeros, scalars)


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a retrograd Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input) -> bool:  # noqa: A002
    return input.is_floating_point()


def numel(input) -> int:  # noqa: A002
    return input.numel()


def set_num_threads(n: int) -> None:
    """Accepted for compatibility; NumPy's BLAS decides its own threads."""


def get_num_threads() -> int:
    return 1


__all__ = list(_creation_all) + list(_ranges_all) + list(_random_all) + list(_ops_all) + [
    "Tensor", "Size", "device", "dtype", "autograd", "linalg", "ops", "no_grad", "enable_grad",
    "set_grad_enabled", "is_grad_enabled", "inference_mode", "is_inference_mode_enabled",
    "result_type", "promote_types", "can_cast", "get_default_dtype", "set_default_dtype",
    "is_tensor", "set_printoptions", "get_printoptions", "return_types",
]

# Added last: these modules read retrograd's public names when their functions run.
# (Importing distributed does not start MPI: init_process_group does.)
# optim.swa_utils lives in _swa_utils (its AveragedModel is an nn.Module; optim imports no nn).
from . import _swa_utils, distributed, func, futures, nn, optim, profiler, utils  # noqa: E402

optim.swa_utils = _swa_utils
_sys.modules[__name__ + ".optim.swa_utils"] = _swa_utils
from . import distributions  # noqa: E402 (after nn: it uses nn.functional)
from .autograd import forward_ad as _forward_ad  # noqa: E402, F401 (torch.autograd.forward_ad)
from .autograd import profiler as _autograd_profiler  # noqa: E402, F401
from .serialization import load, save  # noqa: E402

__all__ += ["save", "load", "nn", "optim", "utils", "profiler", "distributions"]
__all__ += ["as_torch"]
from . import random  # noqa: E402 (torch.random: seeding and fork_rng)

__all__ += ["distributed", "futures"]
# Mixed precision (torch.amp, torch.autocast, torch.cpu.amp).
from . import amp, cpu  # noqa: E402
from .amp import (  # noqa: E402
    GradScaler,
    autocast,
    get_autocast_dtype,
    is_autocast_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .amp.autocast_mode import (  # noqa: E402
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    is_autocast_cache_enabled,
    set_autocast_cache_enabled,
)
from .func import vmap  # noqa: E402

__all__ += ["amp", "cpu", "autocast", "is_autocast_enabled", "get_autocast_dtype",
            "set_autocast_enabled", "set_autocast_dtype", "bfloat16", "finfo", "GradScaler",
            "autocast_decrement_nesting", "autocast_increment_nesting", "clear_autocast_cache",
            "is_autocast_cache_enabled", "set_autocast_cache_enabled", "vmap"]
__all__ += ["is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled"]

# Top-level function forms: in-place (torch.relu_), ATen-level nn functions, old linalg names.
from . import _functions  # noqa: E402
from ._functions import *  # noqa: E402, F403

_functions.install()
__all__ += _functions.__all__
# Settings, flags, constants and data exchange; Tensor's queries and legacy methods.
from . import _settings, _tensor_extras, _windows  # noqa: E402
from ._settings import *  # noqa: E402, F403
from ._tensor_extras import *  # noqa: E402, F403
from ._windows import *  # noqa: E402, F403

_tensor_extras.install()
__all__ += _settings.__all__ + _tensor_extras.__all__ + _windows.__all__
from . import storage  # noqa: E402 (torch.storage: UntypedStorage, TypedStorage)
from .storage import TypedStorage, UntypedStorage  # noqa: E402

__all__ += ["TypedStorage", "UntypedStorage"]
from . import _functions_more  # noqa: E402
from ._functions_more import *  # noqa: E402, F403

_functions_more.install()

__all__ += _functions_more.__all__
from . import _legacy  # noqa: E402
from ._legacy import *  # noqa: E402, F403

_legacy.install()
__all__ += _legacy.__all__

# Functions that take tensors refuse anything else with PyTorch's TypeError.
from . import _argcheck  # noqa: E402

_argcheck.install()

# The pointwise and reduction functions take PyTorch's out= (after the argument checks).
from . import _out  # noqa: E402

_out.install()

# Last: a torch name retrograd lacks fails saying so (retrograd does not implement torch.fft ...).
from . import _missing  # noqa: E402

_missing.install()

import warnings as _warnings  # noqa: E402

# NumPy reports IEEE special values (log(0) = -inf, 0/0 = NaN, overflow to inf) as
# RuntimeWarnings raised from the frame that called the ufunc; PyTorch computes the same values
# silently. The filter matches only warnings raised from retrograd's own modules, so the user's
# NumPy code warns as before, and it costs nothing until a warning is raised.
_warnings.filterwarnings(
    "ignore", r"(divide by zero|overflow|underflow|invalid value) encountered",
    RuntimeWarning, r"retrograd(\.|\Z)")
