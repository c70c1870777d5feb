"""Named result tuples of ops that return several tensors, printed as PyTorch prints them."""

from __future__ import annotations

__all__ = ["max", "min"]


def _structseq(name: str, fields: tuple):
    """A tuple subclass with named fields and PyTorch's multi-line repr."""

    def __new__(cls, values):
        return tuple.__new__(cls, values)

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"retrograd.return_types.{name}(\n{body})"

    ns = {"__new__": __new__, "__repr__": __repr__, "__slots__": (), "_fields": fields}
    for i, f in enumerate(fields):
        ns[f] = property(lambda self, i=i: self[i])
    return type(name, (tuple,), ns)


max = _structseq("max", ("values", "indices"))  # noqa: A001
min = _structseq("min", ("values", "indices"))  # noqa: A001
