"""Named result tuples of ops that return several tensors, printed as PyTorch prints them."""

from __future__ import annotations

__all__ = [
    "max", "min", "aminmax", "sort", "topk", "kthvalue", "median", "nanmedian", "mode",
    "cummax", "cummin", "histogram", "histogramdd", "frexp",
]


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
aminmax = _structseq("aminmax", ("min", "max"))
sort = _structseq("sort", ("values", "indices"))
topk = _structseq("topk", ("values", "indices"))
kthvalue = _structseq("kthvalue", ("values", "indices"))
median = _structseq("median", ("values", "indices"))
nanmedian = _structseq("nanmedian", ("values", "indices"))
mode = _structseq("mode", ("values", "indices"))
cummax = _structseq("cummax", ("values", "indices"))
cummin = _structseq("cummin", ("values", "indices"))
histogram = _structseq("histogram", ("hist", "bin_edges"))
histogramdd = _structseq("histogramdd", ("hist", "bin_edges"))
frexp = _structseq("frexp", ("mantissa", "exponent"))
