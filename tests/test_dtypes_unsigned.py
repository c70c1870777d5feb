"""uint16, uint32 and uint64: PyTorch's "shell" unsigned dtypes, against torch.

PyTorch creates, casts and prints them, promotes them only with themselves and the floating
dtypes, and has kernels for a few ops (mul, true division, eq/ne, the bitwise and/or/xor, sum,
cumsum, sort, cat, float functions); the rest raise its NotImplementedError naming the kernel.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg

WIDE = ["uint16", "uint32", "uint64"]


def outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the error is the subject under test
        return (type(e).__name__, str(e))
    if hasattr(r, "dtype") and not isinstance(r, np.ndarray):
        return (str(r.dtype).split(".")[-1], r.tolist())
    return r


def both(torch, fn):
    return outcome(lambda: fn(rg)), outcome(lambda: fn(torch))


@pytest.mark.parametrize("n", WIDE)
def test_dtype_objects(torch, n):
    r, t = getattr(rg, n), getattr(torch, n)
    assert (r.is_floating_point, r.is_signed, r.itemsize) == \
        (t.is_floating_point, t.is_signed, t.itemsize)
    assert repr(r) == repr(t).replace("torch.", "retrograd.")
    ri, ti = rg.iinfo(r), torch.iinfo(t)
    assert (ri.min, ri.max, ri.bits) == (ti.min, ti.max, ti.bits)


CREATION = {
    "tensor": lambda lib, d: lib.tensor([1, 2, 3], dtype=d),
    "wraps": lambda lib, d: lib.tensor([-1], dtype=d),
    "zeros": lambda lib, d: lib.zeros(2, 2, dtype=d),
    "ones": lambda lib, d: lib.ones(2, dtype=d),
    "full": lambda lib, d: lib.full((2,), 7, dtype=d),
    "cast": lambda lib, d: lib.tensor([1.7, 300.2]).to(d),
    "to_float": lambda lib, d: lib.tensor([3, 1], dtype=d).float(),
    "to_long": lambda lib, d: lib.tensor([3, 1], dtype=d).long(),
    "numpy": lambda lib, d: lib.from_numpy(np.array([5, 6], dtype=str(d).split(".")[-1])),
    "arange": lambda lib, d: lib.arange(3, dtype=d),
    "linspace": lambda lib, d: lib.linspace(0, 3, 4, dtype=d),
    "eye": lambda lib, d: lib.eye(2, dtype=d),
    "randperm": lambda lib, d: lib.randperm(3, dtype=d),
    "requires_grad": lambda lib, d: lib.tensor([1], dtype=d, requires_grad=True),
    "type": lambda lib, d: lib.tensor([1], dtype=d).type(),
    "item": lambda lib, d: lib.tensor([9], dtype=d)[0].item(),
}


@pytest.mark.parametrize("case", sorted(CREATION))
@pytest.mark.parametrize("n", WIDE)
def test_creation_and_casts(torch, n, case):
    r, t = both(torch, lambda lib: CREATION[case](lib, getattr(lib, n)))
    assert r == t


def test_uint64_range_and_printing(torch):
    big = [2**63 + 5, 7]
    r, t = rg.tensor(big, dtype=rg.uint64), torch.tensor(big, dtype=torch.uint64)
    assert r.tolist() == t.tolist() == big
    assert repr(r) == repr(t).replace("torch.", "retrograd.")
    for bad in ([2**64], [-1]):
        assert both(torch, lambda lib, bad=bad: lib.tensor(bad, dtype=lib.uint64))[0][0] == \
            "OverflowError"
    assert repr(rg.tensor([1, 2], dtype=rg.uint16)) == "tensor([1, 2], dtype=retrograd.uint16)"


@pytest.mark.parametrize("n", WIDE)
def test_promotion(torch, n):
    for other in ("uint8", "int32", "int64", "bool", "float16", "float32", "uint16", "uint64"):
        r, t = both(torch, lambda lib, o=other: lib.promote_types(getattr(lib, n),
                                                                  getattr(lib, o)))
        assert str(r).split(".")[-1] == str(t).split(".")[-1]


OPS = {
    # what PyTorch computes
    "mul": lambda lib, a: a * a, "mul_scalar": lambda lib, a: a * 3,
    "div": lambda lib, a: a / a, "add_float": lambda lib, a: a + 1.5,
    "add_float_tensor": lambda lib, a: a + lib.tensor([1.0, 2.0, 3.0]),
    "eq": lambda lib, a: a == 2, "ne": lambda lib, a: a != a,
    "and": lambda lib, a: a & a, "or": lambda lib, a: a | a,
    "sum": lambda lib, a: a.sum(), "cumsum": lambda lib, a: a.cumsum(0),
    "sort": lambda lib, a: a.sort().values, "cat": lambda lib, a: lib.cat([a, a]),
    "sqrt": lambda lib, a: a.sqrt(), "index": lambda lib, a: a[1:],
    "mean": lambda lib, a: a.mean(),
    # what it refuses
    "add": lambda lib, a: a + a, "add_scalar": lambda lib, a: a + 1,
    "sub": lambda lib, a: a - a, "rsub": lambda lib, a: 1 - a,
    "add_int64": lambda lib, a: a + lib.tensor([1, 2, 3]),
    "floor_divide": lambda lib, a: a // a, "remainder": lambda lib, a: a % a,
    "fmod": lambda lib, a: lib.fmod(a, a), "pow": lambda lib, a: a ** 2,
    "pow_tensor": lambda lib, a: a ** a,
    "lt": lambda lib, a: a < 2, "ge": lambda lib, a: a >= a,
    "maximum": lambda lib, a: lib.maximum(a, a), "neg": lambda lib, a: -a,
    "abs": lambda lib, a: a.abs(), "sign": lambda lib, a: a.sign(),
    "not": lambda lib, a: ~a, "lshift": lambda lib, a: a << 1,
    "logical_and": lambda lib, a: lib.logical_and(a, a),
    "max": lambda lib, a: a.max(), "min_dim": lambda lib, a: a.min(0).values,
    "amax": lambda lib, a: a.amax(), "argmax": lambda lib, a: a.argmax(),
    "clamp": lambda lib, a: a.clamp(0, 2), "clamp_max": lambda lib, a: a.clamp(max=2),
    "relu": lambda lib, a: lib.relu(a), "flip": lambda lib, a: a.flip(0),
    "nonzero": lambda lib, a: a.nonzero(), "topk": lambda lib, a: a.topk(1).values,
    "gather": lambda lib, a: a.gather(0, lib.tensor([0])),
    "scatter_value": lambda lib, a: a.scatter(0, lib.tensor([0]), 5),
    "masked_fill": lambda lib, a: a.masked_fill(lib.tensor([True, False, True]), 0),
    "dot": lambda lib, a: lib.dot(a, a), "cummax": lambda lib, a: a.cummax(0).values,
    "index_select": lambda lib, a: a.index_select(0, lib.tensor([1])),
    "tril": lambda lib, a: a.reshape(1, 3).tril(), "bincount": lambda lib, a: lib.bincount(a),
    "median": lambda lib, a: a.median(), "kthvalue": lambda lib, a: a.kthvalue(1).values,
    "sgn": lambda lib, a: a.sgn(), "matmul_mv": lambda lib, a: a.reshape(1, 3) @ a,
    "mm": lambda lib, a: a.reshape(3, 1) @ a.reshape(1, 3),
    "bmm": lambda lib, a: lib.bmm(a.reshape(1, 3, 1), a.reshape(1, 1, 3)),
    "searchsorted": lambda lib, a: lib.searchsorted(a, a), "isin": lambda lib, a: lib.isin(a, a),
    # and what it keeps
    "sort_desc": lambda lib, a: a.sort(descending=True).values, "unique": lambda lib, a: a.unique(),
    "prod": lambda lib, a: a.prod(), "any": lambda lib, a: a.any(),
    "where": lambda lib, a: lib.where(lib.tensor([True, False, True]), a, a),
}


@pytest.mark.parametrize("case", sorted(OPS))
@pytest.mark.parametrize("n", WIDE)
def test_ops_and_their_errors(torch, n, case):
    r, t = both(torch, lambda lib: OPS[case](lib, lib.tensor([1, 2, 3], dtype=getattr(lib, n))))
    assert r == t


@pytest.mark.parametrize("n", WIDE)
def test_checkpoints_exchange_with_torch(torch, n, tmp_path):
    # PyTorch writes these over an untyped storage with _rebuild_tensor_v3; so does retrograd
    import io

    from retrograd._torch_zip import save_torch_zip
    from retrograd.serialization import load_safetensors, save_safetensors

    hi = int(np.iinfo(n).max)
    vals = [[1, hi], [3, 4]]
    path = tmp_path / "t.pt"
    torch.save({"a": torch.tensor(vals, dtype=getattr(torch, n)).T, "f": torch.ones(2)}, path)
    got = rg.load(path)
    assert got["a"].dtype is getattr(rg, n) and got["a"].tolist() == [[1, 3], [hi, 4]]
    raw = save_torch_zip({"a": rg.tensor(vals, dtype=getattr(rg, n)).T})
    back = torch.load(io.BytesIO(raw))
    assert back["a"].dtype == getattr(torch, n) and back["a"].tolist() == [[1, 3], [hi, 4]]
    buf = io.BytesIO()
    rg.save({"a": rg.tensor(vals, dtype=getattr(rg, n))}, buf)
    buf.seek(0)
    assert rg.load(buf)["a"].tolist() == vals
    buf = io.BytesIO()
    save_safetensors({"a": rg.tensor(vals, dtype=getattr(rg, n))}, buf)
    buf.seek(0)
    assert load_safetensors(buf)["a"].tolist() == vals


def test_cat_promotes_as_torch(torch):
    # cat takes PyTorch's promotion over all pairs (NumPy's would make float16 + int64 float64)
    import itertools

    names = ["bool", "uint8", "int8", "int16", "int64", "float16", "bfloat16", "float32",
             "uint16", "uint32", "uint64"]
    for a, b in itertools.product(names, names):
        r, t = both(torch, lambda lib, a=a, b=b: lib.cat([lib.ones(2, dtype=getattr(lib, a)),
                                                          lib.ones(1, dtype=getattr(lib, b))]))
        assert r == t, (a, b)
