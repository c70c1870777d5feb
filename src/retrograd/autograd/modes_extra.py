"""The rest of ``torch.autograd``'s switches and legacy classes.

- ``set_multithreading_enabled`` / ``is_multithreading_enabled``: whether the engine may run
  backward on worker threads. retrograd's engine is one iterative walk on the calling thread, so
  the flag changes nothing but is kept and restored as PyTorch's (global, not per thread).
- ``is_view_replay_enabled`` and ``_force_original_view_tracking``: when on, a view whose base
  was changed in place re-derives its history by replaying its view ops on the base
  (``SliceBackward0``, ``UnsqueezeBackward0``, ...) instead of one ``AsStridedBackward0``
  (``ops.inplace.as_strided_node`` calls ``_replayed_node`` then).
- ``InplaceFunction``, ``NestedIOFunction`` and ``FunctionMeta`` of ``torch.autograd.function``,
  kept by PyTorch for old code.
- ``graph.region_activation_memory_budget``: a hint for ``torch.compile``'s partitioner, which
  PyTorch refuses outside a compiled region; retrograd has no compiler, so it always refuses.
"""

from __future__ import annotations

from .. import ops as _ops
from .._tensor import edge, make
from ..ops import _apply
from ..ops import inplace as _inplace
from ..ops._views import replay
from .function import Function, _FunctionMeta
from .grad_mode import _Mode, state

__all__ = ["set_multithreading_enabled", "is_multithreading_enabled", "is_view_replay_enabled",
           "_force_original_view_tracking", "InplaceFunction", "NestedIOFunction", "FunctionMeta",
           "region_activation_memory_budget"]

FunctionMeta = _FunctionMeta  # the metaclass of Function (each subclass gets its node class)

_MULTITHREADING = [True]


def is_multithreading_enabled() -> bool:
    """Whether multithreaded backward is allowed (True by default).

    >>> is_multithreading_enabled()
    True
    """
    return _MULTITHREADING[0]


class set_multithreading_enabled(_Mode):  # noqa: N801 - PyTorch's name
    """Allow or forbid multithreaded backward; takes effect at once, and as a context manager
    restores the previous setting on exit.

    >>> with set_multithreading_enabled(False):
    ...     is_multithreading_enabled()
    False
    >>> is_multithreading_enabled()
    True
    """

    def __init__(self, mode: bool) -> None:
        self.prev = _MULTITHREADING[0]
        _MULTITHREADING[0] = bool(mode)
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _MULTITHREADING[0] = self.prev

    def clone(self) -> set_multithreading_enabled:
        return self.__class__(self.mode)

    _clone = clone


def is_view_replay_enabled() -> bool:
    """Whether views re-derive their history by replaying their view ops (False by default).

    >>> is_view_replay_enabled()
    False
    """
    return _inplace.REPLAY_VIEW is not None


def _replayed_node(base, steps):
    """The grad_fn of ``base``'s view ``steps`` made again on the base's current history."""
    e = edge(base)
    if e[0] is None:
        return None
    alias = make(base._data)  # the base's values and place in the graph (its node keeps its
    alias._grad_fn, alias._nr, alias._rg = e[0], e[1], True  # creation order: no make(, fn))
    prev, observed = state.grad_enabled, _apply.OBSERVED
    state.grad_enabled, _apply.OBSERVED = True, False
    try:
        return replay(_ops, alias, steps)._grad_fn
    finally:
        state.grad_enabled, _apply.OBSERVED = prev, observed


def _set_replay(mode: bool) -> None:
    _inplace.REPLAY_VIEW = _replayed_node if mode else None


class _force_original_view_tracking(_Mode):  # noqa: N801 - PyTorch's name
    """Turn view replay on or off (see the module docstring); takes effect at once, and as a
    context manager restores the previous setting on exit.

    >>> with _force_original_view_tracking(True):
    ...     is_view_replay_enabled()
    True
    """

    def __init__(self, mode: bool) -> None:
        self.prev = is_view_replay_enabled()
        _set_replay(bool(mode))
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _set_replay(self.prev)

    def clone(self) -> _force_original_view_tracking:
        return self.__class__(self.mode)

    _clone = clone


class InplaceFunction(Function):
    """A ``Function`` that takes an ``inplace`` flag (PyTorch keeps it for old code).

    >>> InplaceFunction(inplace=True).inplace
    True
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """PyTorch's legacy Function with nested inputs and outputs (``forward_extended``,
    ``backward_extended``). Its instance call rests on the legacy Function API, which PyTorch
    removed: calling one raises PyTorch's AttributeError, here as there."""

    def __call__(self, *input):
        raise AttributeError("'super' object has no attribute '_do_forward'")

    def save_for_backward(self, *args) -> None:
        self.to_save = tuple(args)
        self._to_save_nested = args

    def mark_dirty(self, *args, **kwargs) -> None:
        self.dirty_tensors = tuple(args) + tuple(kwargs.values())

    def mark_non_differentiable(self, *args, **kwargs) -> None:
        self.non_differentiable = tuple(args) + tuple(kwargs.values())

    def forward_extended(self, *input) -> None:
        """User defined forward."""
        raise NotImplementedError

    def backward_extended(self, *grad_output) -> None:
        """User defined backward."""
        raise NotImplementedError


def region_activation_memory_budget(budget: float):
    """PyTorch's checks of ``budget``, then its RuntimeError: the budget is read by
    ``torch.compile`` only, and there is no compiled region here.

    >>> region_activation_memory_budget(0.5)
    Traceback (most recent call last):
    ...
    RuntimeError: torch.autograd.graph.region_activation_memory_budget can only be used inside a torch.compile region; it has no effect in eager mode.
    """  # noqa: E501
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        raise TypeError("torch.autograd.graph.region_activation_memory_budget: expects a float, "
                        f"got {type(budget).__name__}")
    if not 0.0 <= budget <= 1.0:
        raise ValueError("torch.autograd.graph.region_activation_memory_budget: must be in "
                         f"[0, 1], got {budget}")
    raise RuntimeError(
        "torch.autograd.graph.region_activation_memory_budget can only be used inside a "
        "torch.compile region; it has no effect in eager mode."
    )
