"""Collation: merging samples into batches (``default_collate``) and converting NumPy data
to tensors (``default_convert``), as in ``torch.utils.data._utils.collate``."""

from __future__ import annotations

import collections.abc
import copy
import re
from typing import Any

import numpy as np

import retrograd

from ..._tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_NP_STR_OBJ = re.compile(r"[SaUO]")
_COLLATE_ERR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


# -- collation -----------------------------------------------------------------------------------
def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _is_np_array_like(x: Any) -> bool:
    mod = type(x).__module__
    return mod == "numpy" and not isinstance(x, (np.str_, np.bytes_))


def _same_mapping(template, values: dict):
    """``values`` in a mapping of ``template``'s type where that can be built (as torch does),
    else a plain dict."""
    if isinstance(template, collections.abc.MutableMapping):
        try:
            clone = copy.copy(template)
            clone.update(values)
            return clone
        except TypeError:
            return values
    try:
        return type(template)(values)  # type: ignore[call-arg]
    except TypeError:
        return values


def _same_sequence(template, items: list):
    """``items`` in a sequence of ``template``'s type where that can be built (as torch does),
    else a plain list."""
    if isinstance(template, collections.abc.MutableSequence):
        try:
            clone = copy.copy(template)
            for i, d in enumerate(items):
                clone[i] = d
            return clone
        except TypeError:
            return items
    try:
        return type(template)(items)  # type: ignore[call-arg]
    except TypeError:
        return items


def default_convert(data: Any) -> Any:
    """Turn NumPy arrays and scalars inside ``data`` into tensors, leaving the rest.

    Used by ``DataLoader`` when ``batch_size=None``. Tuples become lists, as in PyTorch.

    >>> import numpy as np
    >>> import retrograd as torch
    >>> torch.utils.data.default_convert((np.array([1, 2]), 3, "x"))
    [tensor([1, 2]), 3, 'x']
    """
    if isinstance(data, Tensor):
        return data
    if _is_np_array_like(data):
        if isinstance(data, np.ndarray) and _NP_STR_OBJ.search(data.dtype.str):
            return data
        return retrograd.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _same_mapping(data, {k: default_convert(v) for k, v in data.items()})
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _same_sequence(data, [default_convert(d) for d in data])
    return data


def default_collate(batch: list) -> Any:
    """Merge a list of samples into a batch, the way PyTorch's DataLoader does by default.

    Tensors are stacked along a new first dimension; NumPy arrays and scalars become tensors
    first; Python floats become a ``float64`` tensor, ints ``int64`` and bools ``bool``; strings
    and bytes are kept as they are; dicts, namedtuples and sequences are collated field by field
    (tuples come back as lists).

    >>> import retrograd as torch
    >>> torch.utils.data.default_collate([(1, 0.5, "a"), (2, 1.5, "b")])
    [tensor([1, 2]), tensor([0.5000, 1.5000], dtype=retrograd.float64), ('a', 'b')]
    >>> torch.utils.data.default_collate([{"x": torch.zeros(2)}, {"x": torch.ones(2)}])
    {'x': tensor([[0., 0.],
            [1., 1.]])}
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return retrograd.stack(list(batch), 0)
    if _is_np_array_like(elem):
        if isinstance(elem, np.ndarray):
            if _NP_STR_OBJ.search(elem.dtype.str):
                raise TypeError(_COLLATE_ERR.format(elem.dtype))
            return default_collate([retrograd.as_tensor(b) for b in batch])
        if getattr(elem, "shape", None) == ():
            return retrograd.as_tensor(list(batch))
        raise TypeError(_COLLATE_ERR.format(type(elem)))
    if isinstance(elem, float):
        return retrograd.tensor(list(batch), dtype=retrograd.float64)
    if isinstance(elem, int):
        return retrograd.tensor(list(batch))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _same_mapping(elem, {k: default_collate([d[k] for d in batch]) for k in elem})
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        items = [default_collate(s) for s in transposed]
        if isinstance(elem, tuple):
            return items
        return _same_sequence(elem, items)
    raise TypeError(_COLLATE_ERR.format(type(elem)))
