"""Anomaly mode: find the forward line behind a failing backward, and stop at the first NaN.

While anomaly detection is on, an observer of ``ops._apply`` (which sees every primitive call)
stores on each new node the traceback of the forward call that made it, in
``node.metadata["traceback_"]`` as PyTorch does, and, for a node made by a backward formula
under ``create_graph``, the node whose backward made it (``"parent_"``). The engine then runs
every node through ``run_node``: an error in a node's backward is re-raised after PyTorch's
warning "Error detected in XBackward0. Traceback of forward call that caused the error: ...",
and with ``check_nan`` a gradient holding NaN raises "Function 'XBackward0' returned nan values
in its 0th output.".

Off, it costs nothing: no observer is registered, and the engine reads one flag per backward
pass, not per node.
"""

from __future__ import annotations

import os
import threading
import traceback
import warnings

import numpy as np

from .._tensor import Tensor
from ..ops._apply import add_observer, remove_observer

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_anomaly_enabled"]

# Frames from inside retrograd are left out of the stored traceback, so that it ends at the
# user's line (PyTorch's ops are C++ and leave no Python frames either).
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
TRACE_KEY = "traceback_"
PARENT_KEY = "parent_"


class _State(threading.local):
    enabled = False
    check_nan = True
    current = None  # the node whose backward is running (parent of the nodes it makes)


state = _State()
_observing = [False]


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on.

    >>> import retrograd as torch
    >>> torch.is_anomaly_enabled()
    False
    """
    return state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks backward results for NaN (True by default).

    >>> import retrograd as torch
    >>> torch.is_anomaly_check_nan_enabled()
    True
    """
    return state.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (``torch.set_anomaly_enabled``).

    >>> import retrograd as torch
    >>> torch.set_anomaly_enabled(False)
    """
    state.enabled = bool(enabled)
    state.check_nan = bool(check_nan)
    # The observer records forward tracebacks; it is registered only while some thread needs it.
    if state.enabled and not _observing[0]:
        add_observer(_record)
        _observing[0] = True
    elif not state.enabled and _observing[0]:
        remove_observer(_record)
        _observing[0] = False


def _record(P, inputs, attrs, run):
    """The observer: remember where each new node was made."""
    out = run()
    if not state.enabled:
        return out
    for t in (out if isinstance(out, tuple) else (out,)):
        if isinstance(t, Tensor) and t._grad_fn is not None:
            node = t._grad_fn
            meta = node.metadata
            if TRACE_KEY not in meta:
                meta[TRACE_KEY] = _forward_stack()
                if state.current is not None:
                    meta[PARENT_KEY] = state.current
            break
    return out


def _forward_stack() -> list:
    frames = [f for f in traceback.extract_stack()[:-1] if not f.filename.startswith(_PKG)]
    return traceback.format_list(frames)


def _warn_stack(fn) -> None:
    """PyTorch's warning for an error in ``fn``'s backward: where its forward was called."""
    meta = fn.__dict__.get("_metadata") or {}
    stack = meta.get(TRACE_KEY)
    if stack is None:
        msg = (f"Error detected in {fn.name()}. No forward pass information available. Enable "
               "detect anomaly during forward pass for more information.")
    else:
        msg = (f"Error detected in {fn.name()}. Traceback of forward call that caused the "
               "error:\n" + "".join(stack))
        parent = meta.get(PARENT_KEY)
        while parent is not None:
            pmeta = parent.__dict__.get("_metadata") or {}
            msg += (f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of "
                    "forward call that induced the previous calculation:\n"
                    + "".join(pmeta.get(TRACE_KEY, ())))
            parent = pmeta.get(PARENT_KEY)
    warnings.warn(msg, UserWarning, stacklevel=4)


def run_node(fn, xp, args) -> tuple:
    """``fn.backward(xp, *args)`` as the engine runs it in anomaly mode."""
    # The node stays current until the next one runs (the engine clears it after the pass):
    # the sums of gradients it delivers are made under it too, as in PyTorch.
    state.current = fn
    try:
        grads = fn.backward(xp, *args)
        if grads.__class__ is not tuple:
            grads = (grads,)
        if state.check_nan:
            for i, g in enumerate(grads):
                if g is None:
                    continue
                a = g._data if isinstance(g, Tensor) else np.asarray(g)
                if a.dtype.kind in "fc" and np.isnan(a).any():
                    raise RuntimeError(
                        f"Function '{fn.name()}' returned nan values in its {i}th output."
                    )
    except Exception:
        _warn_stack(fn)
        raise
    return grads


class detect_anomaly:  # noqa: N801 - PyTorch's name
    """Context manager turning anomaly detection on (``check_nan`` also checks for NaN).

    >>> import warnings
    >>> import retrograd as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with torch.autograd.detect_anomaly():
    ...         print(torch.is_anomaly_enabled())
    True
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = state.enabled
        self.check_nan = check_nan
        self.prev_check_nan = state.check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:  # noqa: N801 - PyTorch's name
    """Turn anomaly detection on or off now; as a context manager, restore it on exit.

    >>> import retrograd as torch
    >>> with torch.autograd.set_detect_anomaly(True, check_nan=False):
    ...     print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
    True False
    >>> torch.is_anomaly_enabled()
    False
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = state.enabled
        self.prev_check_nan = state.check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)
