"""Op table entries for the ops the family tables leave out: comparisons and logic, a few
differentiable odds and ends, and the deterministic creation ops (compared by value with torch;
the random ones are checked for reproducibility and distribution in tests/test_random.py)."""

from __future__ import annotations

from .op_table import BINARY, UNARY, OpInfo

_SMALL = [((3, 4),), ((),), ((0, 3),)]
_NONE = [()]  # no tensor arguments: creation ops

OPS = [
    # differentiable odds and ends
    OpInfo("reciprocal", lambda lib, a: a.reciprocal(), UNARY, positive_gap=0.5),
    OpInfo("cat_dims", lambda lib, a, b: lib.cat([a, b * 2, a], dim=-1),
           [((2, 3), (2, 1)), ((0, 2), (0, 3))]),
    OpInfo("narrow", lambda lib, a: a.narrow(1, 1, 2), [((3, 4),)]),
    OpInfo("select_neg", lambda lib, a: lib.select(a, -1, -2), [((3, 4),), ((2, 3, 4),)]),
    OpInfo("contiguous_t", lambda lib, a: a.t().contiguous(), [((3, 4),)]),
    OpInfo("type_as", lambda lib, a, b: a.type_as(b), [((3, 4), (2,))]),
    # comparisons and logic (no gradient): values and dtypes against torch
    OpInfo("eq", lambda lib, a, b: lib.eq(a.round(), b.round()), BINARY, grad=False),
    OpInfo("gt", lambda lib, a, b: a > b, BINARY, grad=False),
    OpInfo("lt_scalar", lambda lib, a: a < 0.5, UNARY, grad=False),
    OpInfo("logical_and", lambda lib, a, b: lib.logical_and(a > 0, b > 0), BINARY, grad=False),
    OpInfo("logical_or", lambda lib, a, b: (a > 0).logical_or(b > 0), BINARY, grad=False),
    OpInfo("logical_xor", lambda lib, a, b: lib.logical_xor(a, b > 0), BINARY, grad=False),
    OpInfo("logical_not", lambda lib, a: lib.logical_not(a > 0), UNARY, grad=False),
    OpInfo("bitwise_and", lambda lib, a, b: (a > 0) & (b > 0), BINARY, grad=False),
    OpInfo("bitwise_or", lambda lib, a, b: lib.bitwise_or(a.long(), b.long()), BINARY,
           grad=False),
    OpInfo("bitwise_xor", lambda lib, a, b: (a * 3).long() ^ (b * 3).long(), BINARY,
           grad=False),
    OpInfo("isnan", lambda lib, a: lib.isnan(a.log()), _SMALL, grad=False),
    OpInfo("isinf", lambda lib, a: (a / a.round()).isinf(), _SMALL, grad=False),
    OpInfo("isfinite", lambda lib, a: lib.isfinite(a.log() / a.round()), _SMALL, grad=False),
    OpInfo("one_hot", lambda lib, a: lib.nn.functional.one_hot((a.abs() * 2).long(), 5),
           _SMALL, grad=False),
    # creation (deterministic)
    OpInfo("zeros", lambda lib: lib.zeros(2, 3), _NONE, grad=False),
    OpInfo("ones_int", lambda lib: lib.ones((2, 3), dtype=lib.int64), _NONE, grad=False),
    OpInfo("full", lambda lib: lib.full((2, 2), 7), _NONE, grad=False),
    OpInfo("full_float", lambda lib: lib.full((3,), 1.5), _NONE, grad=False),
    OpInfo("empty_shape", lambda lib: lib.tensor(list(lib.empty(2, 0, 3).shape)), _NONE,
           grad=False),
    OpInfo("arange", lambda lib: lib.arange(1, 10, 3), _NONE, grad=False),
    OpInfo("arange_float", lambda lib: lib.arange(0, 1, 0.25), _NONE, grad=False),
    OpInfo("linspace", lambda lib: lib.linspace(-1, 1, 5), _NONE, grad=False),
    OpInfo("logspace", lambda lib: lib.logspace(0, 2, 3), _NONE, grad=False),
    OpInfo("eye", lambda lib: lib.eye(3, 4), _NONE, grad=False),
    OpInfo("tril_indices", lambda lib: lib.tril_indices(3, 4, 1), _NONE, grad=False),
    OpInfo("triu_indices", lambda lib: lib.triu_indices(4, 3, -1), _NONE, grad=False),
    OpInfo("zeros_like", lambda lib, a: lib.zeros_like(a), _SMALL, grad=False),
    OpInfo("ones_like", lambda lib, a: lib.ones_like(a, dtype=lib.int32), _SMALL, grad=False),
    OpInfo("full_like", lambda lib, a: lib.full_like(a, 3), _SMALL, grad=False),
    OpInfo("empty_like_shape", lambda lib, a: lib.tensor(list(lib.empty_like(a).shape)),
           _SMALL, grad=False),
    OpInfo("new_zeros", lambda lib, a: a.new_zeros(2, 2), _SMALL, grad=False),
    OpInfo("new_ones", lambda lib, a: a.new_ones((3,)), _SMALL, grad=False),
    OpInfo("new_full", lambda lib, a: a.new_full((2,), 4), _SMALL, grad=False),
    OpInfo("new_tensor", lambda lib, a: a.new_tensor([1, 2]), _SMALL, grad=False),
    OpInfo("new_empty_shape", lambda lib, a: lib.tensor(list(a.new_empty(2, 5).shape)), _SMALL,
           grad=False),
]
