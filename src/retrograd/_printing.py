"""Tensor repr/str formatting for retrograd.

This module turns a tensor's NumPy data into exactly the text PyTorch would print for the
equivalent ``torch.Tensor`` (the behaviour of ``torch/_tensor_str.py``), so that users can
compare retrograd and PyTorch output by eye or with plain string equality.  It also owns the
global print options (``set_printoptions`` / ``get_printoptions``).

Only NumPy and the standard library are used.  Complex, sparse, quantized and nested tensors
are out of scope.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

__all__ = ["format_tensor", "get_printoptions", "set_printoptions"]


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


_OPTS = _PrintOptions()

# (precision, threshold, edgeitems, linewidth) for each named profile, as torch defines them.
_PROFILES: dict[str, tuple[int, float, int, int]] = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set the global options used when printing tensors (same semantics as torch).

    ``profile`` ("default", "short" or "full") is applied first and the explicit arguments
    override it.  Unlike the other options, ``sci_mode`` is always assigned, so omitting it
    restores automatic choice of scientific notation, exactly as in torch.
    """
    if profile in _PROFILES:
        (_OPTS.precision, _OPTS.threshold, _OPTS.edgeitems, _OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        _OPTS.precision = precision
    if threshold is not None:
        _OPTS.threshold = threshold
    if edgeitems is not None:
        _OPTS.edgeitems = edgeitems
    if linewidth is not None:
        _OPTS.linewidth = linewidth
    _OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Return the current print options as a dict accepted by ``set_printoptions(**opts)``."""
    return dataclasses.asdict(_OPTS)


class _Formatter:
    """Decides how every element of one tensor is rendered, so all share one width.

    The decision is made once from (possibly summarized) data: floats are printed either as
    integers with a trailing dot, in fixed point or in scientific notation.  Only finite
    nonzero values take part in the decision and in the width, which is why torch's output
    (and ours) can leave e.g. ``-0.0000`` or ``nan`` wider than their neighbours.
    """

    def __init__(self, data: np.ndarray, is_float: bool) -> None:
        self.is_float = is_float
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        precision = _OPTS.precision

        if not is_float:
            for value in data.reshape(-1).tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return

        # float64 holds every float16/32/64 value exactly, so abs, ceil and the range checks
        # below give the same answers torch gets in the original dtype or in double.
        flat = data.reshape(-1).astype(np.float64)
        finite_nonzero = flat[np.isfinite(flat) & (flat != 0)]
        if finite_nonzero.size == 0:
            return

        magnitudes = np.abs(finite_nonzero)
        smallest = magnitudes.min()
        largest = magnitudes.max()
        self.int_mode = bool(np.all(finite_nonzero == np.ceil(finite_nonzero)))

        if _OPTS.sci_mode is None:
            with np.errstate(over="ignore"):
                ratio = largest / smallest
            self.sci_mode = bool(ratio > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4)
        else:
            self.sci_mode = bool(_OPTS.sci_mode)

        values = finite_nonzero.tolist()
        if self.sci_mode:
            widths = (len(f"{v:.{precision}e}") for v in values)
        elif self.int_mode:
            # The "+ 1" reserves room for the trailing "." that marks a float.
            widths = (len(f"{v:.0f}") + 1 for v in values)
        else:
            widths = (len(f"{v:.{precision}f}") for v in values)
        self.max_width = max(self.max_width, max(widths))

    def format(self, value: Any) -> str:
        precision = _OPTS.precision
        if not self.is_float:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{precision}f}"
        return text.rjust(self.max_width)


def _summarized_data(data: np.ndarray) -> np.ndarray:
    """Keep only the elements that will be shown when the tensor is summarized."""
    edge = _OPTS.edgeitems
    if data.ndim == 0:
        return data
    if data.ndim == 1:
        if data.shape[0] > 2 * edge:
            # With edge == 0, data[-0:] is the whole vector; torch behaves the same way.
            return np.concatenate((data[:edge], data[-edge:]))
        return data
    if not edge:
        return np.empty((0,) * data.ndim, dtype=data.dtype)
    rows = [i for i in _shown_indices(data.shape[0], summarize=True) if i is not None]
    return np.stack([_summarized_data(data[i]) for i in rows])


def _shown_indices(length: int, summarize: bool) -> list[int | None]:
    """Indices along a leading axis to print, with None standing for the '...' gap."""
    edge = _OPTS.edgeitems
    if summarize and length > 2 * edge:
        return [*range(edge), None, *range(length - edge, length)]
    return list(range(length))


def _vector_str(data: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    edge = _OPTS.edgeitems
    # Each element also needs room for the ", " that separates it from the next one.
    element_length = formatter.max_width + 2
    per_line = max(1, math.floor((_OPTS.linewidth - indent) / element_length))

    if summarize and not edge:
        items = ["..."]
    elif summarize and data.shape[0] > 2 * edge:
        items = (
            [formatter.format(v) for v in data[:edge].tolist()]
            + [" ..."]
            + [formatter.format(v) for v in data[-edge:].tolist()]
        )
    else:
        items = [formatter.format(v) for v in data.tolist()]

    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(data: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    if data.ndim == 0:
        return formatter.format(data.item())
    if data.ndim == 1:
        return _vector_str(data, indent, summarize, formatter)

    slices = [
        "..." if i is None else _tensor_str(data[i], indent + 1, summarize, formatter)
        for i in _shown_indices(data.shape[0], summarize)
    ]
    # Higher-dimensional blocks are separated by blank lines, one per extra dimension.
    separator = "," + "\n" * (data.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(slices) + "]"


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    # torch measures the last line two characters longer than it is (it counts from the
    # newline itself and adds one); keep that so wrapping decisions agree with it.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > _OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def format_tensor(
    data: np.ndarray,
    *,
    is_float: bool,
    is_bool: bool,
    suffixes: list[str],
    prefix: str = "tensor(",
) -> str:
    """Return the full repr of a tensor holding ``data``, e.g. ``'tensor([2., 3.])'``.

    ``is_float`` / ``is_bool`` say how the values are to be shown (the tensor's dtype class).
    ``suffixes`` are the caller's trailing items (dtype, grad_fn, requires_grad, ...) in
    order; the ``size=...`` item torch adds for empty tensors (and when ``edgeitems`` is 0)
    is added here, before them.  Continuation lines are indented to line up after the last
    line of ``prefix``.
    """
    data = np.asarray(data)
    if is_bool:
        data = data.astype(bool, copy=False)
    indent = len(prefix.rsplit("\n", 1)[-1])
    shape_text = "size=" + str(tuple(int(n) for n in data.shape))

    all_suffixes = []
    if data.size == 0:
        # Only a 1-D empty tensor is unambiguous from "[]" alone, so others state their shape.
        if data.ndim != 1:
            all_suffixes.append(shape_text)
        body = "[]"
    else:
        if not _OPTS.edgeitems:
            # Nothing but "..." is printed, so the shape is the only information left.
            all_suffixes.append(shape_text)
        summarize = data.size > _OPTS.threshold
        shown = _summarized_data(data) if summarize else data
        formatter = _Formatter(shown, is_float and not is_bool)
        body = _tensor_str(data, indent, summarize, formatter)
    all_suffixes.extend(suffixes)
    return _add_suffixes(prefix + body, all_suffixes, indent)
