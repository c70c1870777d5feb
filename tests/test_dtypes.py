"""Tests for dtype objects, the default dtype and PyTorch's type promotion (``retrograd._dtypes``).

The promotion tests run every pair of the nine dtypes through retrograd and PyTorch (the oracle)
and compare the resulting dtypes; they are skipped when PyTorch is not installed. Each test
collects every mismatching pair so that one failure reports the whole table.
"""

from __future__ import annotations

import copy
import itertools
import pickle
import warnings

import numpy as np
import pytest

import retrograd as rg

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
PAIRS = list(itertools.product(NAMES, NAMES))

# How each operand is built: a dimensioned tensor, a 0-dim tensor, or a Python scalar.
SCALARS = {"int": 2, "float": 1.5, "bool": True}


@pytest.fixture
def default_dtype(request):
    """Restore the default dtype of retrograd (and of torch, if installed) after the test."""
    saved = rg.get_default_dtype()
    try:
        import torch as _torch
    except ImportError:  # pragma: no cover - torch is optional
        _torch = None
    saved_t = _torch.get_default_dtype() if _torch is not None else None
    yield
    rg.set_default_dtype(saved)
    if _torch is not None:
        _torch.set_default_dtype(saved_t)


def name(d) -> str:
    return str(d).split(".")[-1]


def dt(lib, n):
    return getattr(lib, n)


def operand(lib, kind: str, n: str | None):
    """An operand of the given kind: ``dim`` (shape (2,)), ``zero`` (0-dim) or a scalar key."""
    if kind == "dim":
        return lib.tensor([1, 1], dtype=dt(lib, n))
    if kind == "zero":
        return lib.tensor(1, dtype=dt(lib, n))
    return SCALARS[kind]


def outcome(fn):
    """``('ok', dtype name, values)`` or ``('err', exception type name, message)``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn()
    except Exception as e:  # noqa: BLE001 - the exception is the subject under test
        return ("err", type(e).__name__, str(e))
    if hasattr(r, "dtype") and not isinstance(r, np.ndarray):
        vals = np.asarray(r.detach().numpy(), dtype=np.float64).tolist()
        return ("ok", name(r.dtype), vals)
    return ("ok", name(r), None)


# ------------------------------------------------------------------------------------------------
# dtype objects


def test_dtype_objects_exist_and_are_dtypes():
    for n in NAMES:
        d = getattr(rg, n)
        assert isinstance(d, rg.dtype)
        assert repr(d) == f"retrograd.{n}"
        assert str(d) == f"retrograd.{n}"


@pytest.mark.parametrize(
    "alias, target",
    [("float", "float32"), ("double", "float64"), ("half", "float16"), ("long", "int64"),
     ("int", "int32"), ("short", "int16")],
)
def test_aliases_are_the_same_object(alias, target):
    assert getattr(rg, alias) is getattr(rg, target)
    assert repr(getattr(rg, alias)) == f"retrograd.{target}"


def test_bool_dtype_is_not_python_bool():
    assert rg.bool is not bool
    assert isinstance(rg.bool, rg.dtype)
    assert repr(rg.bool) == "retrograd.bool"


@pytest.mark.parametrize("n", NAMES)
def test_dtype_attributes_match_torch(torch, n):
    r, t = getattr(rg, n), getattr(torch, n)
    assert r.is_floating_point == t.is_floating_point
    assert r.is_signed == t.is_signed
    assert r.itemsize == t.itemsize
    assert r.is_complex == t.is_complex
    assert repr(r) == repr(t).replace("torch.", "retrograd.")


def test_dtype_attribute_values():
    assert rg.float32.is_floating_point and rg.float16.is_floating_point
    assert not rg.int64.is_floating_point and not rg.bool.is_floating_point
    assert [getattr(rg, n).itemsize for n in NAMES] == [1, 1, 1, 2, 4, 8, 2, 4, 8]


def test_dtypes_hashable_and_comparable():
    table = {rg.float32: "f", rg.int64: "i"}
    assert table[rg.float] == "f" and table[rg.long] == "i"
    assert rg.float32 == rg.float and rg.float32 != rg.float64
    assert len({getattr(rg, n) for n in NAMES}) == 9


def test_dtype_copy_and_pickle_preserve_identity():
    assert copy.copy(rg.float32) is rg.float32
    assert copy.deepcopy(rg.int16) is rg.int16
    assert pickle.loads(pickle.dumps(rg.float64)) is rg.float64


def test_tensor_dtype_attribute_is_dtype_object():
    assert rg.tensor([1.0]).dtype is rg.float32
    assert rg.tensor([1]).dtype is rg.int64
    assert rg.tensor([True]).dtype is rg.bool
    assert rg.tensor([1], dtype=rg.uint8).dtype is rg.uint8


@pytest.mark.parametrize("n", NAMES)
def test_is_floating_point_function(torch, n):
    r = rg.is_floating_point(rg.tensor([1], dtype=getattr(rg, n)))
    t = torch.is_floating_point(torch.tensor([1], dtype=getattr(torch, n)))
    assert r is t
    assert rg.tensor([1], dtype=getattr(rg, n)).is_floating_point() is t


# ------------------------------------------------------------------------------------------------
# default dtype


def test_default_dtype_is_float32():
    assert rg.get_default_dtype() is rg.float32
    assert rg.tensor([1.5]).dtype is rg.float32
    assert rg.tensor(1.5).dtype is rg.float32


def test_set_default_dtype_float64(default_dtype):
    rg.set_default_dtype(rg.float64)
    assert rg.get_default_dtype() is rg.float64
    assert rg.tensor([1.5]).dtype is rg.float64
    assert rg.zeros(2).dtype is rg.float64
    assert rg.tensor([1, 2]).dtype is rg.int64
    rg.set_default_dtype(rg.float32)
    assert rg.tensor([1.5]).dtype is rg.float32


def test_default_dtype_fixture_restores():
    assert rg.get_default_dtype() is rg.float32


@pytest.mark.parametrize("n", ["int64", "int32", "bool", "uint8"])
def test_set_default_dtype_rejects_non_float(torch, default_dtype, n):
    with pytest.raises(TypeError) as t_err:
        torch.set_default_dtype(getattr(torch, n))
    with pytest.raises(TypeError) as r_err:
        rg.set_default_dtype(getattr(rg, n))
    assert str(r_err.value) == str(t_err.value)
    assert rg.get_default_dtype() is rg.float32


def test_set_default_dtype_float16_like_torch(torch, default_dtype):
    torch.set_default_dtype(torch.float16)
    rg.set_default_dtype(rg.float16)
    assert name(rg.get_default_dtype()) == name(torch.get_default_dtype()) == "float16"
    assert name(rg.tensor([1.5]).dtype) == name(torch.tensor([1.5]).dtype)
    assert name((rg.tensor([1]) / rg.tensor([2])).dtype) == name(
        (torch.tensor([1]) / torch.tensor([2])).dtype
    )


# ------------------------------------------------------------------------------------------------
# promote_types / can_cast / result_type against torch


def test_promote_types_all_pairs(torch):
    bad = []
    for a, b in PAIRS:
        r = name(rg.promote_types(dt(rg, a), dt(rg, b)))
        t = name(torch.promote_types(dt(torch, a), dt(torch, b)))
        if r != t:
            bad.append((a, b, r, t))
    assert bad == []


def test_promote_types_is_symmetric():
    for a, b in PAIRS:
        assert rg.promote_types(dt(rg, a), dt(rg, b)) is rg.promote_types(dt(rg, b), dt(rg, a))


def test_promote_types_examples():
    assert rg.promote_types(rg.uint8, rg.int8) is rg.int16
    assert rg.promote_types(rg.int64, rg.float16) is rg.float16
    assert rg.promote_types(rg.bool, rg.uint8) is rg.uint8
    assert rg.promote_types(rg.float16, rg.float32) is rg.float32


def test_can_cast_all_pairs(torch):
    bad = []
    for a, b in PAIRS:
        r = rg.can_cast(dt(rg, a), dt(rg, b))
        t = torch.can_cast(dt(torch, a), dt(torch, b))
        if r is not t:
            bad.append((a, b, r, t))
    assert bad == []


TENSOR_KINDS = [("dim", "dim"), ("dim", "zero"), ("zero", "dim"), ("zero", "zero")]


@pytest.mark.parametrize("ka, kb", TENSOR_KINDS)
def test_result_type_tensor_tensor(torch, ka, kb):
    bad = []
    for a, b in PAIRS:
        r = name(rg.result_type(operand(rg, ka, a), operand(rg, kb, b)))
        t = name(torch.result_type(operand(torch, ka, a), operand(torch, kb, b)))
        if r != t:
            bad.append((a, b, r, t))
    assert bad == []


@pytest.mark.parametrize("kt", ["dim", "zero"])
@pytest.mark.parametrize("ks", list(SCALARS))
@pytest.mark.parametrize("scalar_first", [False, True])
def test_result_type_tensor_scalar(torch, kt, ks, scalar_first):
    bad = []
    for a in NAMES:
        args_r = [operand(rg, kt, a), SCALARS[ks]]
        args_t = [operand(torch, kt, a), SCALARS[ks]]
        if scalar_first:
            args_r.reverse()
            args_t.reverse()
        r = name(rg.result_type(*args_r))
        t = name(torch.result_type(*args_t))
        if r != t:
            bad.append((a, ks, r, t))
    assert bad == []


def test_result_type_examples():
    assert rg.result_type(rg.tensor([1, 2]), 1.0) is rg.float32
    assert rg.result_type(rg.tensor([1, 2], dtype=rg.int8), rg.tensor(5)) is rg.int8
    assert rg.result_type(rg.tensor([1], dtype=rg.int8), rg.tensor(5.0)) is rg.float32
    assert rg.result_type(rg.tensor([1.0], dtype=rg.float16), rg.tensor(5.0)) is rg.float16
    assert rg.result_type(rg.tensor([True]), 3) is rg.int64
    assert rg.result_type(rg.tensor(1, dtype=rg.int8), rg.tensor(1, dtype=rg.int32)) is rg.int32


# ------------------------------------------------------------------------------------------------
# the dtype (and values) actual binary ops produce

OPS = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "sub": lambda a, b: a - b,
}


def compare_op(torch, op, ka, kb):
    """All dtype pairs of ``op(ka operand, kb operand)``; returns the mismatches."""
    fn = OPS[op]
    names_a = NAMES if ka in ("dim", "zero") else [None]
    names_b = NAMES if kb in ("dim", "zero") else [None]
    bad = []
    for a, b in itertools.product(names_a, names_b):
        r = outcome(lambda a=a, b=b: fn(operand(rg, ka, a), operand(rg, kb, b)))
        t = outcome(lambda a=a, b=b: fn(operand(torch, ka, a), operand(torch, kb, b)))
        if r[0] != t[0] or r[1] != t[1]:
            bad.append((a, b, r, t))
        elif r[0] == "ok" and not np.allclose(r[2], t[2], rtol=1e-3):
            bad.append((a, b, r, t))
        elif r[0] == "err" and r[2] != t[2]:
            bad.append((a, b, r, t))
    return bad


KINDS = TENSOR_KINDS + [
    (t, s) for t in ("dim", "zero") for s in SCALARS
] + [
    (s, t) for t in ("dim", "zero") for s in SCALARS
]


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("ka, kb", KINDS)
def test_binary_op_dtype_matches_torch(torch, op, ka, kb):
    assert compare_op(torch, op, ka, kb) == []


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("ka, kb", [("dim", "dim"), ("dim", "float"), ("zero", "int"),
                                    ("int", "dim"), ("dim", "zero")])
def test_binary_op_dtype_default_float64(torch, default_dtype, op, ka, kb):
    torch.set_default_dtype(torch.float64)
    rg.set_default_dtype(rg.float64)
    assert compare_op(torch, op, ka, kb) == []


def test_int_true_division_gives_default_float(default_dtype):
    a, b = rg.tensor([1, 2]), rg.tensor([2, 4])
    assert (a / b).dtype is rg.float32
    assert (a / 2).dtype is rg.float32
    assert (3 / a).dtype is rg.float32
    np.testing.assert_allclose((a / b).numpy(), [0.5, 0.5])
    rg.set_default_dtype(rg.float64)
    try:
        assert (a / b).dtype is rg.float64
        assert (a / 2).dtype is rg.float64
        assert (rg.tensor([1], dtype=rg.uint8) / rg.tensor(2, dtype=rg.int8)).dtype is rg.float64
        assert (rg.tensor([True]) / True).dtype is rg.float64
    finally:
        rg.set_default_dtype(rg.float32)


def test_weak_scalars_and_zero_dim_examples():
    i8 = rg.tensor([1, 2], dtype=rg.int8)
    assert (i8 + 100).dtype is rg.int8
    assert (i8 + rg.tensor(1000)).dtype is rg.int8
    assert (i8 + 1.5).dtype is rg.float32
    assert (i8 + rg.tensor(1.5, dtype=rg.float64)).dtype is rg.float64
    assert (rg.tensor([1.0]) + rg.tensor(1.5, dtype=rg.float64)).dtype is rg.float32
    assert (rg.tensor([1.0], dtype=rg.float16) * 2.5).dtype is rg.float16
    assert (rg.tensor([True]) + True).dtype is rg.bool
    assert (rg.tensor([True]) + 1).dtype is rg.int64
    assert (rg.tensor(1, dtype=rg.int8) + rg.tensor(1, dtype=rg.int16)).dtype is rg.int16


def test_float64_default_result_type_and_scalars(torch, default_dtype):
    torch.set_default_dtype(torch.float64)
    rg.set_default_dtype(rg.float64)
    cases = [
        lambda m: m.result_type(m.tensor([1, 2]), 1.0),
        lambda m: m.result_type(m.tensor([1.0], dtype=m.float32), 1.0),
        lambda m: m.result_type(m.tensor(1), 2.5),
        lambda m: m.tensor([1, 2]) * 0.5,
        lambda m: m.tensor([1.0], dtype=m.float16) + 2.0,
        lambda m: m.tensor([1.5]),
        lambda m: m.tensor(2) / 4,
    ]
    for case in cases:
        assert outcome(lambda c=case: c(rg))[:2] == outcome(lambda c=case: c(torch))[:2]


@pytest.mark.parametrize("ka, kb", [("dim", "dim"), ("zero", "zero"), ("dim", "zero"),
                                    ("dim", "bool"), ("bool", "dim"), ("zero", "bool")])
def test_bool_subtraction_error(torch, ka, kb):
    r = outcome(lambda: operand(rg, ka, "bool") - operand(rg, kb, "bool"))
    t = outcome(lambda: operand(torch, ka, "bool") - operand(torch, kb, "bool"))
    assert t[0] == "err"
    assert r[:2] == t[:2]
    assert r[2] == t[2]


@pytest.mark.parametrize(
    "case",
    [
        lambda m: m.tensor([1, 2], dtype=m.int8) + 1000,
        lambda m: m.tensor([1, 2], dtype=m.uint8) + -1,
        lambda m: m.tensor([1, 2], dtype=m.uint8) * 300,
        lambda m: m.tensor([1, 2], dtype=m.int16) - 70000,
        lambda m: m.tensor(3, dtype=m.int8) + 200,
    ],
    ids=["int8+1000", "uint8+-1", "uint8*300", "int16-70000", "int8_0dim+200"],
)
def test_out_of_range_python_int_wraps_like_torch(torch, case):
    """A Python int too big for the tensor's dtype is still weak: torch keeps the dtype (and
    wraps the values) rather than raising."""
    r, t = outcome(lambda: case(rg)), outcome(lambda: case(torch))
    assert r == t


def test_signed_zero_and_nan_scalars_keep_their_value():
    # Numbers become cached 0-d arrays on the hot path: -0.0 must not reuse 0.0's entry.
    import retrograd as rg

    x = rg.tensor([1.0, -2.0])
    assert [str(v) for v in (x * 0.0).tolist()] == ["0.0", "-0.0"]
    assert [str(v) for v in (x * -0.0).tolist()] == ["-0.0", "0.0"]
    assert all(v != v for v in (x + float("nan")).tolist())
