"""Flattening nested arguments (tuples, lists, dicts of tensors) for the ``func`` transforms,
as ``torch.utils._pytree`` does for them: ``flatten`` gives the leaves and a spec that
``unflatten`` rebuilds the same structure from."""

from __future__ import annotations

__all__ = ["flatten", "unflatten", "spec_repr", "spec_pprint", "broadcast_to_and_flatten"]


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
    # a namedtuple takes its fields one by one; a return type (``max``: values, indices), as
    # PyTorch's structseqs, takes one sequence
    return kind._make(items) if hasattr(kind, "_make") else kind(items)


def _context(spec):
    kind, children = spec
    if kind is dict:
        return [k for k, _ in children], [c for _, c in children]
    if hasattr(kind, "_make"):  # a namedtuple: PyTorch's context is its class
        return kind, children
    return None, children


def spec_repr(spec, indent: int = 0) -> str:
    """``spec`` as PyTorch prints a ``TreeSpec`` in its errors.

    >>> print(spec_repr(flatten((1, [2]))[1]))
    TreeSpec(tuple, None, [*,
      TreeSpec(list, None, [*])])
    """
    if spec is None:
        return "*"
    kind = spec[0]
    context, children = _context(spec)
    name = "namedtuple" if hasattr(kind, "_make") else kind.__name__
    indent += 2
    parts = [spec_repr(c, indent) for c in children]
    # PyTorch's layout: "[*,\n  *]", each child after the first on its own indented line
    body = (parts[0] + ("," if len(parts) > 1 else "") +
            ",".join("\n" + " " * indent + p for p in parts[1:])) if parts else ""
    return f"TreeSpec({name}, {context}, [{body}])"


def spec_pprint(spec) -> str:
    """``spec`` as PyTorch's ``treespec_pprint`` writes it: ``(*, [*])``.

    >>> spec_pprint(flatten({"a": 1, "b": (2,)})[1])
    "{'a': *, 'b': (*,)}"
    """
    if spec is None:
        return "*"
    kind, children = spec
    if kind is dict:
        return "{" + ", ".join(f"{k!r}: {spec_pprint(c)}" for k, c in children) + "}"
    inner = ", ".join(spec_pprint(c) for c in children)
    if kind is list:
        return f"[{inner}]"
    if kind is tuple:
        return f"({inner},)" if len(children) == 1 else f"({inner})"
    return f"{kind.__name__}({inner})"


def broadcast_to_and_flatten(tree, spec):
    """``tree`` (a prefix of the structure ``spec``: a leaf stands for the whole subtree under
    it) as one leaf per leaf of ``spec``, or None if it does not fit, as PyTorch's
    ``_broadcast_to_and_flatten``.

    >>> broadcast_to_and_flatten((0, None), flatten((1, {"a": 2, "b": 3}))[1])
    [0, None, None]
    """
    out: list = []
    return out if _broadcast(tree, spec, out) else None


def _broadcast(tree, spec, out) -> bool:
    if spec is None:  # a leaf of the structure: the tree must be a leaf there too
        if isinstance(tree, (tuple, list, dict)):
            return False
        out.append(tree)
        return True
    if not isinstance(tree, (tuple, list, dict)):  # a leaf covers the whole subtree
        out.extend([tree] * _count(spec))
        return True
    kind, children = spec
    if kind is dict:
        if not isinstance(tree, dict) or sorted(tree) != sorted(k for k, _ in children):
            return False
        return all(_broadcast(tree[k], c, out) for k, c in children)
    if type(tree) is not kind and not (isinstance(tree, tuple) and issubclass(kind, tuple)
                                       and type(tree) is tuple):
        return False
    if len(tree) != len(children):
        return False
    return all(_broadcast(t, c, out) for t, c in zip(tree, children))


def _count(spec) -> int:
    if spec is None:
        return 1
    kind, children = spec
    return sum(_count(c if kind is not dict else c[1]) for c in children)
