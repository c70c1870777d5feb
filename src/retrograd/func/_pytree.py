"""Flattening nested arguments (tuples, lists, dicts of tensors) for the ``func`` transforms,
as ``torch.utils._pytree`` does for them: ``flatten`` gives the leaves and a spec that
``unflatten`` rebuilds the same structure from."""

from __future__ import annotations

__all__ = ["flatten", "unflatten"]


def flatten(tree) -> tuple[list, object]:
    """``(leaves, spec)``: leaves in order, and how to put them back.

    >>> flatten({"a": 1, "b": (2, 3)})[0]
    [1, 2, 3]
    """
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    if isinstance(tree, (tuple, list)) and not hasattr(tree, "_fields"):
        return (type(tree), [_flatten(x, leaves) for x in tree])
    if isinstance(tree, tuple):  # a named tuple keeps its type
        return (type(tree), [_flatten(x, leaves) for x in tree])
    if isinstance(tree, dict):
        return (dict, [(k, _flatten(v, leaves)) for k, v in tree.items()])
    leaves.append(tree)
    return None


def unflatten(leaves, spec):
    """The structure ``spec`` (from ``flatten``) with ``leaves`` in place.

    >>> unflatten([4, 5, 6], flatten({"a": 1, "b": (2, 3)})[1])
    {'a': 4, 'b': (5, 6)}
    """
    it = iter(leaves)
    return _build(spec, it)


def _build(spec, it):
    if spec is None:
        return next(it)
    kind, children = spec
    if kind is dict:
        return {k: _build(c, it) for k, c in children}
    items = [_build(c, it) for c in children]
    if kind is list:
        return items
    if kind is tuple:
        return tuple(items)
    return kind(*items)
