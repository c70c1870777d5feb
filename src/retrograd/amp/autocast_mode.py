"""``autocast``: mixed precision on the CPU, as ``torch.amp.autocast``.

Inside ``with retrograd.autocast("cpu"):`` the ops on PyTorch 2.13's CPU lower-precision list
(matmul, mm, bmm, addmm, baddbmm, addbmm, linear, convolutions, prelu,
scaled_dot_product_attention, einsum, tensordot, vecdot) run in bfloat16 (or float16), those on
its float32 list (the losses, ``prod``, ``cdist``, ``trace``, ...) in float32, and every other
op follows its inputs. The casts are differentiable: parameters stay float32 and their gradients
come back float32. The state lives in ``ops/_autocast.py``, read by the listed ops only.
"""

from __future__ import annotations

import collections.abc
import functools
import warnings

import numpy as np

from .. import _dtypes
from .._tensor import Tensor
from ..ops._autocast import state

__all__ = ["is_autocast_cache_enabled", "set_autocast_cache_enabled",
           "autocast_increment_nesting", "autocast_decrement_nesting", "clear_autocast_cache",
           "autocast", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype",
           "set_autocast_enabled", "set_autocast_dtype", "custom_fwd", "custom_bwd"]

_DEVICES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
            "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
            "privateuseone")


def _check_device(device_type: str) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    base = device_type.split(":")[0]
    if base not in _DEVICES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICES)} device type at start of "
                           f"device string: {device_type}")
    return base


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast knows ``device_type``: every device but ``meta``, as PyTorch's CPU
    build answers (an autocast region on another device than the CPU changes nothing here).

    >>> import retrograd
    >>> retrograd.amp.is_autocast_available("cpu"), retrograd.amp.is_autocast_available("meta")
    (True, False)
    """
    return _check_device(device_type) != "meta"


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type``; without one, for CUDA (as PyTorch).

    >>> import retrograd
    >>> with retrograd.autocast("cpu"):
    ...     retrograd.is_autocast_enabled("cpu"), retrograd.is_autocast_enabled()
    (True, False)
    """
    if device_type is None:
        return False
    return _check_device(device_type) == "cpu" and state.cpu


def get_autocast_dtype(device_type: str):
    """The dtype autocast casts to on ``device_type`` (bfloat16 on the CPU by default).

    >>> import retrograd
    >>> retrograd.get_autocast_dtype("cpu")
    retrograd.bfloat16
    """
    if _check_device(device_type) == "cpu":
        return state.dtype
    return _dtypes.float16


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Switch autocast on or off for ``device_type`` without a region."""
    if _check_device(device_type) == "cpu":
        state.cpu = bool(enabled)


def set_autocast_dtype(device_type: str, dtype) -> None:
    """Set the dtype autocast casts to on ``device_type``."""
    if _check_device(device_type) == "cpu":
        state.dtype = _dtypes.to_dtype(dtype)


def clear_autocast_cache() -> None:
    """Drop the cached casts of parameters."""
    state.cache.clear()


def is_autocast_cache_enabled() -> bool:
    """Whether casts of parameters are cached inside autocast regions.

    >>> import retrograd as torch
    >>> torch.is_autocast_cache_enabled()
    True
    """
    return state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Turn the cast cache on or off (``autocast(cache_enabled=...)`` sets it per region)."""
    state.cache_enabled = bool(enabled)


def autocast_increment_nesting() -> int:
    """Enter one more autocast level by hand (as ``autocast`` does); returns the new depth."""
    state.depth += 1
    return state.depth


def autocast_decrement_nesting() -> int:
    """Leave an autocast level entered by hand; returns the new depth (the cache is cleared
    when it reaches 0, as leaving the outermost ``autocast`` does)."""
    state.depth -= 1
    if state.depth == 0:
        state.cache.clear()
    return state.depth


class autocast:  # noqa: N801 - PyTorch's name
    """Run a region (or a function, as a decorator) in mixed precision on the CPU.

    >>> import retrograd as torch
    >>> w = torch.ones(2, 2, requires_grad=True)
    >>> with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    ...     y = torch.ones(1, 2) @ w
    ...     loss = torch.nn.functional.mse_loss(y, torch.zeros(1, 2))
    >>> y.dtype, loss.dtype
    (retrograd.bfloat16, retrograd.float32)
    >>> loss.backward(); w.grad.dtype
    retrograd.float32
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else \
            _dtypes.to_dtype(dtype)
        self.device = _check_device(device_type)
        if not is_autocast_available(self.device):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'")
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else \
            bool(cache_enabled)
        self._enabled = bool(enabled)
        if self._enabled:  # PyTorch's checks and warnings, in its order
            if self.device == "cuda":
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                              "autocast.", stacklevel=2)
                self._enabled = False
            elif self.fast_dtype not in (_dtypes.bfloat16, _dtypes.float16):
                name = self.device.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                              f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                              "torch.bfloat16, torch.float16 currently.", stacklevel=2)
                self._enabled = False

    def __enter__(self):
        if self.device != "cpu":
            self._prev = None
            return self
        self._prev = (state.cpu, state.dtype, state.cache_enabled)
        state.cpu = self._enabled
        state.dtype = self.fast_dtype  # set even when disabled, as PyTorch does
        state.cache_enabled = self._cache_enabled
        state.depth += 1
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self._prev is None:
            return False
        state.depth -= 1
        if state.depth == 0:
            state.cache.clear()  # as PyTorch: casts live for the outermost region only
        state.cpu, state.dtype, state.cache_enabled = self._prev
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)

        return decorate_autocast


def _cast(value, device_type: str, dtype):
    """``value`` with its floating tensors (float64 aside) cast to ``dtype``, through lists,
    tuples and mappings, as ``custom_fwd(cast_inputs=...)`` casts a Function's inputs."""
    if isinstance(value, Tensor):
        eligible = value.is_floating_point() and value.device.type == device_type and \
            value.dtype is not _dtypes.float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        items = (_cast(v, device_type, dtype) for v in value)
        return list(items) if isinstance(value, list) else tuple(items)
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorate a custom Function's ``forward``: inside an autocast region it runs with
    autocast as it found it, or, given ``cast_inputs``, with autocast off and its floating
    inputs cast to that dtype; ``custom_bwd`` then runs ``backward`` in the same state.

    >>> import retrograd as torch
    >>> class Double(torch.autograd.Function):
    ...     @staticmethod
    ...     @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
    ...     def forward(ctx, x):
    ...         return x * 2
    ...     @staticmethod
    ...     @torch.amp.custom_bwd(device_type="cpu")
    ...     def backward(ctx, g):
    ...         return g * 2
    >>> with torch.autocast("cpu"):
    ...     Double.apply(torch.ones(2, dtype=torch.bfloat16)).dtype
    retrograd.float32
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        inside = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if not inside:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs),
                       **_cast(kwargs, device_type, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorate a custom Function's ``backward`` to run in the autocast state its
    ``custom_fwd`` forward ran in (see ``custom_fwd``)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
