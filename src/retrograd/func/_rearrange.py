"""``rearrange``: ``torch.func.rearrange``, einops-style reordering of a tensor's dims.

``"b (h w) c -> b c h w"`` names each dim of the input (a parenthesised group is one dim made of
several, ``...`` any number, ``1`` or ``()`` a dim of size 1) and says in which order and grouping
they come out. PyTorch runs the pattern through first-class dims; here it is one reshape into
the elementary dims, one permute and one reshape into the output's groups (all views where the
layout allows), with PyTorch's parse errors. As PyTorch's, an anonymous ``1`` on the left is
summed over whatever its size.
"""

from __future__ import annotations

import keyword
import math
import warnings

from .._tensor import Tensor
from ..ops.join import stack

__all__ = ["rearrange", "DimensionBindError"]

_ELLIPSIS = "\u2026"  # "..." while parsing, as PyTorch's parser writes it


class DimensionBindError(Exception):
    """A pattern's dims that do not fit the tensor's sizes (``functorch.dim``'s class)."""


def _check_name(x: str) -> None:
    if not x.isidentifier():
        raise ValueError(f"Invalid axis identifier: {x}\nnot a valid python identifier")
    if x[0] == "_" or x[-1] == "_":
        raise ValueError(f"Invalid axis identifier: {x}\naxis name should should not start or "
                         "end with underscore")
    if keyword.iskeyword(x):
        warnings.warn(f"It is discouraged to use axes names that are keywords: {x}",
                      RuntimeWarning, stacklevel=5)
    if x == "axis":
        warnings.warn("It is discouraged to use 'axis' as an axis name and will raise an error "
                      "in future", FutureWarning, stacklevel=5)


class _Side:
    """One side of a pattern: ``composition`` lists, per dim, a group of names (``[]``: an
    anonymous size-1 dim) or the ellipsis."""

    def __init__(self, expression: str) -> None:
        self.has_ellipsis = False
        self.ellipsis_in_group = False
        self.identifiers: set = set()
        self.non_unit_anonymous = False
        self.composition: list = []
        if "." in expression:
            if "..." not in expression:
                raise ValueError("Expression may contain dots only inside ellipsis (...)")
            if expression.count("...") != 1 or expression.count(".") != 3:
                raise ValueError("Expression may contain dots only inside ellipsis (...); only "
                                 "one ellipsis for tensor ")
            expression = expression.replace("...", _ELLIPSIS)
            self.has_ellipsis = True
        group = None
        name = None
        for char in expression + " ":
            if char in "() ":
                if name is not None:
                    self._add(name, group)
                name = None
                if char == "(":
                    if group is not None:
                        raise ValueError(
                            "Axis composition is one-level (brackets inside brackets not allowed)")
                    group = []
                elif char == ")":
                    if group is None:
                        raise ValueError("Brackets are not balanced")
                    self.composition.append(group)
                    group = None
            elif char.isalnum() or char in ("_", _ELLIPSIS):
                name = char if name is None else name + char
            else:
                raise ValueError(f"Unknown character '{char}'")
        if group is not None:
            raise ValueError(f"Imbalanced parentheses in expression: '{expression}'")

    def _add(self, x: str, group) -> None:
        if x in self.identifiers:
            raise ValueError(f"Indexing expression contains duplicate dimension '{x}'")
        if x == _ELLIPSIS:
            self.identifiers.add(x)
            if group is None:
                self.composition.append(x)
            else:
                group.append(x)
                self.ellipsis_in_group = True
            return
        if x.isdecimal():
            if int(x) == 1:
                if group is None:
                    self.composition.append([])
                return
            self.non_unit_anonymous = True
            self.identifiers.add(object())  # (a distinct anonymous axis: always an error)
            return
        _check_name(x)
        self.identifiers.add(x)
        if group is None:
            self.composition.append([x])
        else:
            group.append(x)


def _parse(pattern: str, axes_lengths: dict) -> tuple[_Side, _Side]:
    try:
        left_str, right_str = pattern.split("->")
    except ValueError:
        raise ValueError("Pattern must contain a single '->' separator") from None
    if _ELLIPSIS in axes_lengths:
        raise ValueError(f"'{_ELLIPSIS}' is not an allowed axis identifier")
    left, right = _Side(left_str), _Side(right_str)
    if not left.has_ellipsis and right.has_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left.has_ellipsis and left.ellipsis_in_group:
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    for length in axes_lengths.values():
        if type(length) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(length)}")
    if left.non_unit_anonymous or right.non_unit_anonymous:
        raise ValueError("rearrange only supports unnamed axes of size 1")
    difference = left.identifiers ^ right.identifiers
    if difference:
        raise ValueError("Identifiers only on one side of rearrange expression (should be on "
                         f"both): {difference}")
    unmatched = axes_lengths.keys() - left.identifiers
    if unmatched:
        raise ValueError(f"Identifiers not found in rearrange expression: {unmatched}")
    return left, right


def rearrange(tensor, pattern: str, **axes_lengths: int) -> Tensor:
    """Reorder, split and merge the dims of ``tensor`` (or of a list of tensors, stacked first)
    as ``pattern`` says.

    >>> import retrograd as torch
    >>> images = torch.zeros(32, 30, 40, 3)
    >>> rearrange(images, "b h w c -> b c h w").shape
    retrograd.Size([32, 3, 30, 40])
    >>> rearrange(images, "b (h1 h) (w1 w) c -> (b h1 w1) h w c", h1=2, w1=2).shape
    retrograd.Size([128, 15, 20, 3])
    """
    if not isinstance(tensor, Tensor):
        tensor = stack(tensor)
    left, right = _parse(pattern, axes_lengths)
    shape = tuple(tensor.shape)
    n = len(shape)
    if left.has_ellipsis:
        n_ell = n - (len(left.composition) - 1)
        named = sum(1 for d in left.composition if d != _ELLIPSIS)
        if named > n:
            raise ValueError(f"Number of dimensions in pattern ({named}) must be less than or "
                             f"equal to the number of dimensions in the tensor ({n})")
    else:
        n_ell = 0
        if len(left.composition) != n:
            raise ValueError(f"Number of dimensions in pattern ({len(left.composition)}) must be "
                             f"equal to the number of dimensions in the tensor ({n})")
    # The elementary dims of the input, in order: (key, size); a left "1" is summed away.
    elems, summed, i = [], [], 0
    for d in left.composition:
        if d == _ELLIPSIS:
            for j in range(n_ell):
                elems.append(((_ELLIPSIS, j), shape[i]))
                i += 1
            continue
        size = shape[i]
        i += 1
        if not d:
            summed.append(len(elems))
            elems.append((None, size))
            continue
        sizes = [axes_lengths.get(name) for name in d]
        unknown = [k for k, s in enumerate(sizes) if s is None]
        known = math.prod(s for s in sizes if s is not None)
        # (PyTorch's first-class dims are d0, d1, ... in the order of the left side)
        dims = [f"d{len(elems) + k}" for k in range(len(d))]
        if len(unknown) > 1:
            raise DimensionBindError(f"cannot infer the sizes of two dimensions at once "
                                     f"{dims[unknown[0]]} and {dims[unknown[1]]}")
        if unknown:
            if known == 0 or size % known:
                shown = tuple("?" if s is None else s for s in sizes)
                raise DimensionBindError("inferred dimension does not evenly fit into larger "
                                         f"dimension: {size} vs {shown}")
            sizes[unknown[0]] = size // known
        elif known != size:
            pack = "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
            raise DimensionBindError(f"Dimension sizes to do not match ({size} != {known}) when "
                                     f"matching dimension pack {pack}")
        elems += [(name, s) for name, s in zip(d, sizes)]
    x = tensor.reshape(tuple(s for _, s in elems)) if len(elems) != n else tensor
    if summed:
        x = x.sum(tuple(summed))
        elems = [e for k, e in enumerate(elems) if k not in summed]
    where = {key: k for k, (key, _) in enumerate(elems)}
    order, out_shape = [], []
    for d in right.composition:
        if d == _ELLIPSIS:
            for j in range(n_ell):
                order.append(where[(_ELLIPSIS, j)])
                out_shape.append(elems[order[-1]][1])
            continue
        size = 1
        for name in d:
            for key in [(_ELLIPSIS, j) for j in range(n_ell)] if name == _ELLIPSIS else [name]:
                order.append(where[key])
                size *= elems[where[key]][1]
        out_shape.append(size)
    if order != list(range(len(order))):
        x = x.permute(order)
    return x.reshape(tuple(out_shape)) if tuple(out_shape) != tuple(x.shape) else x
