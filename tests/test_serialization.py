"""Tests for ``retrograd.serialization``: save/load round trips, malformed files, safetensors, and
reading ``torch.save`` checkpoints through the restricted unpickler (never running their code).
"""

from __future__ import annotations

import collections
import io
import json
import math
import os
import pathlib
import pickle
import struct
import zipfile
import zlib

import numpy as np
import pytest

import retrograd as rg
from retrograd import serialization as ser
from retrograd.serialization import CheckpointError

DTYPES = ["float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _array(dtype: str, shape=(2, 3), seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return np.asarray(rng.random(shape) > 0.5)
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)


def _roundtrip(obj, **kw):
    buf = io.BytesIO()
    ser.save(obj, buf)
    buf.seek(0)
    return ser.load(buf, **kw)


def _same(a, b):
    """Deep equality that checks container types, tensor dtypes, shapes and values."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, rg.Tensor):
        assert a.dtype is b.dtype and a.shape == b.shape
        assert a.requires_grad == b.requires_grad
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


# -- retrograd's own format ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (5,), (2, 3, 4)])
def test_roundtrip_every_dtype_and_shape(dtype, shape):
    t = rg.from_numpy(_array(dtype, shape))
    out = _roundtrip(t)
    _same(t, out)
    assert out._data.flags.writeable and out._data.flags.c_contiguous


def test_roundtrip_nested_state_dict():
    sd = collections.OrderedDict()
    sd["layer.weight"] = rg.randn(4, 3)
    sd["layer.bias"] = rg.zeros(4, dtype=rg.float64)
    sd["bn.num_batches_tracked"] = rg.tensor(7)
    sd["mask"] = rg.tensor([True, False])
    obj = {
        "model": sd,
        "optimizer": {
            "state": {0: {"step": rg.tensor(3.0), "exp_avg": rg.ones(4, 3)}, 1: {}},
            "param_groups": [{"params": [0, 1], "lr": 1e-3, "betas": (0.9, 0.999),
                              "amsgrad": False, "foreach": None, "name": "ümlaut ✓"}],
        },
        "epoch": 12,
        "big": 2**70,
        "neg": -5,
        "specials": [float("nan"), float("inf"), -float("inf"), -0.0, 1e-300],
        "nested": [[], (), {}, [(1,)], ((2, 3), [4])],
        "raw": b"\x00\xffbytes",
        "dtype": rg.float16,
        "device": rg.device("cpu"),
        "size": rg.Size([2, 3]),
        "np": np.arange(6, dtype=np.int16).reshape(2, 3),
        "np_scalar": np.float32(2.5),
        None: "none key",
        (1, "a"): "tuple key",
        2.5: "float key",
        True: "bool key",
    }
    out = _roundtrip(obj)
    _same(obj, out)
    assert isinstance(out["model"], collections.OrderedDict)
    assert math.copysign(1.0, out["specials"][3]) == -1.0
    assert isinstance(out["size"], rg.Size) and out["dtype"] is rg.float16
    assert isinstance(out["np_scalar"], np.float32)


def _views_program(lib, roundtrip):
    """Views saved together load sharing one storage, with torch.save's strides and offsets."""
    base = lib.arange(24, dtype=lib.float32).reshape(4, 6)
    views = {"base": base, "t": base.t(), "step": base[:, ::2], "slice": base[1:3, 2:],
             "row": base[2], "exp": base[0].expand(3, 6), "i": lib.arange(6).view(2, 3).t()}
    out = roundtrip(views)
    seen = [(k, out[k].tolist(), out[k].stride(), out[k].storage_offset(), out[k].dtype.is_signed)
            for k in views]
    out["base"].mul_(-1)  # one storage: every view sees it
    seen.append([out[k].tolist() for k in ("t", "step", "slice", "row", "exp")])
    alone = roundtrip({"s": lib.arange(12.).view(3, 4)[1:, 1:]})["s"]  # its whole storage
    seen.append((alone.stride(), alone.storage_offset(), alone.tolist()))
    return seen


def _roundtrip_in(lib):
    def rt(obj):
        buf = io.BytesIO()
        lib.save(obj, buf)
        buf.seek(0)
        return lib.load(buf)
    return rt


def test_views_share_storage_and_keep_strides_as_torch(torch):
    assert _views_program(rg, _roundtrip_in(rg)) == _views_program(torch, _roundtrip_in(torch))


def test_zip_checkpoints_keep_views_both_ways(torch):
    """torch.save's views load into retrograd as views of one storage; retrograd's zip writer
    (what a pickled object is saved as) writes them so that torch loads them the same way."""
    def rt_torch_to_rg(obj):
        buf = io.BytesIO()
        torch.save(obj, buf)
        buf.seek(0)
        return rg.load(buf)
    t_out = _views_program(torch, _roundtrip_in(torch))
    assert _views_program(torch, rt_torch_to_rg) == t_out
    from retrograd._torch_zip import save_torch_zip

    def rt_rg_to_torch(obj):
        return torch.load(io.BytesIO(save_torch_zip(obj)))
    assert _views_program(rg, rt_rg_to_torch) == t_out
    wide = rg.arange(6).to(rg.uint16).view(2, 3)
    got = torch.load(io.BytesIO(save_torch_zip({"a": wide.t(), "b": wide[1]})))
    assert (got["a"].stride(), got["b"].storage_offset()) == ((1, 3), 3)
    assert got["a"].tolist() == [[0, 3], [1, 4], [2, 5]]


def test_version_1_files_still_load():
    w = np.arange(6, dtype="<f4")
    header = {"format": "retrograd.save", "version": 1, "data_nbytes": 24, "tensors": [
        {"dtype": "float32", "shape": [2, 3], "offset": 0, "nbytes": 24,
         "crc32": zlib.crc32(w.tobytes()), "requires_grad": True, "kind": "parameter"}],
        "root": {"$dict": [["w", {"$tensor": 0}]]}}
    raw = json.dumps(header).encode()
    head = ser.MAGIC + struct.pack("<Q", len(raw)) + raw
    out = _load_bytes(head + b"\0" * (-len(head) % 64) + w.tobytes())
    assert type(out["w"]).__name__ == "Parameter" and out["w"].requires_grad
    assert out["w"].tolist() == [[0, 1, 2], [3, 4, 5]]


def test_same_tensor_object_loads_as_one_object():
    w = rg.ones(3)
    out = _roundtrip({"a": w, "b": [w], "c": w.clone()})
    assert out["a"] is out["b"][0]
    assert out["c"] is not out["a"]


def test_requires_grad_is_kept():
    w = rg.randn(3, requires_grad=True)
    out = _roundtrip([w, w.detach()])
    assert out[0].requires_grad and out[0].is_leaf and not out[1].requires_grad


def test_paths_and_file_objects(tmp_path):
    obj = {"w": rg.arange(5, dtype=rg.float64)}
    p = tmp_path / "ckpt.pt"
    ser.save(obj, str(p))
    _same(obj, ser.load(str(p)))
    ser.save(obj, p)
    _same(obj, ser.load(p))
    with open(p, "wb") as fh:
        ser.save(obj, fh)
    with open(p, "rb") as fh:
        _same(obj, ser.load(fh))
    assert p.read_bytes().startswith(ser.MAGIC)


def test_file_layout_is_aligned_json_plus_bytes():
    buf = io.BytesIO()
    ser.save({"a": rg.ones(3, dtype=rg.int8), "b": rg.ones(2)}, buf)
    raw = buf.getvalue()
    (n,) = struct.unpack("<Q", raw[16:24])
    header = json.loads(raw[24:24 + n])
    start = -(-(24 + n) // 64) * 64
    assert header["format"] == "retrograd.save" and header["version"] == 2
    assert len(raw) == start + header["data_nbytes"]
    for e in header["storages"]:
        assert e["offset"] % 64 == 0
    e = header["tensors"][1]
    assert (e["shape"], e["stride"], e["storage_offset"]) == ([2], [1], 0)
    st = header["storages"][e["storage"]]
    assert np.frombuffer(raw, "<f4", 2, start + st["offset"]).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("loc", [None, "cpu", rg.device("cpu"), {"cuda:0": "cpu"}])
def test_map_location_accepted(loc):
    _same(rg.ones(2), _roundtrip(rg.ones(2), map_location=loc))


def test_map_location_callable_and_rejected():
    seen = []

    def fn(t, loc):
        seen.append(loc)
        return t * 2

    out = _roundtrip({"a": rg.ones(2), "b": [rg.ones(1)]}, map_location=fn)
    assert out["a"].tolist() == [2.0, 2.0] and out["b"][0].tolist() == [2.0]
    assert seen == ["cpu", "cpu"]
    with pytest.raises(RuntimeError, match="CPU only"):
        _roundtrip(rg.ones(2), map_location="cuda")


_UNSAFE = r"^Weights only load failed\. This file can still be loaded"


@pytest.mark.parametrize("obj, name", [
    (object(), "object"),
    ({"a": [1, {2}, print]}, "print"),
    (np.array(["a"]), "numpy._core.multiarray._reconstruct"),
])
def test_objects_beyond_the_format_are_pickled_and_refused_by_default(obj, name):
    """What the JSON format cannot hold is pickled as torch.save does; a default load refuses
    its globals with PyTorch's message, and weights_only=False loads it."""
    buf = io.BytesIO()
    ser.save(obj, buf)
    assert buf.getvalue().startswith(b"PK\x03\x04")
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match=_UNSAFE) as info:
        ser.load(buf)
    assert (f"WeightsUnpickler error: Unsupported global: GLOBAL {name} was not an allowed "
            f"global by default. Please use `torch.serialization.add_safe_globals([{name}])` or "
            f"the `torch.serialization.safe_globals([{name}])` context manager") in str(info.value)
    buf.seek(0)
    out = ser.load(buf, weights_only=False)
    assert type(out) is type(obj)


def test_save_unpicklable_object_raises_picklingerror():
    with pytest.raises(pickle.PicklingError, match="^Can.t pickle <function .*<lambda>"):
        ser.save({"f": lambda: 0}, io.BytesIO())


def test_save_rejects_cycles():
    a: list = [1]
    a.append(a)
    with pytest.raises(ValueError, match="reference cycle"):
        ser.save(a, io.BytesIO())
    shared = [1]
    _same([shared, shared], _roundtrip([shared, shared]))  # repeated, not cyclic: fine


# -- malformed files -----------------------------------------------------------------------------
def _saved(obj=None) -> bytes:
    buf = io.BytesIO()
    ser.save({"w": rg.arange(6, dtype=rg.float32), "n": 1} if obj is None else obj, buf)
    return buf.getvalue()


def _rewrite(raw: bytes, edit) -> bytes:
    """Re-encode the header after ``edit(header)``, keeping the data section in place."""
    (n,) = struct.unpack("<Q", raw[16:24])
    header = json.loads(raw[24:24 + n])
    data = raw[-(-(24 + n) // 64) * 64:]
    edit(header)
    new = json.dumps(header).encode()
    head = ser.MAGIC + struct.pack("<Q", len(new)) + new
    return head + b"\0" * (-len(head) % 64) + data


def _load_bytes(raw: bytes):
    return ser.load(io.BytesIO(raw))


@pytest.mark.parametrize("cut", [0, 5, 16, 20, 30, -1, -10])
def test_truncated_files(cut):
    raw = _saved()
    with pytest.raises(CheckpointError, match="truncated|empty|unrecognised"):
        _load_bytes(raw[:cut])


def _set(path, value):
    def edit(h):
        node = h
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = value
    return edit


@pytest.mark.parametrize("edit, match", [
    (_set(["tensors", 0, "shape"], [7]), "reaches past the 24 bytes of storage 0"),
    (_set(["tensors", 0, "stride"], [2]), "reaches past the 24 bytes of storage 0"),
    (_set(["tensors", 0, "storage_offset"], 1), "reaches past the 24 bytes of storage 0"),
    (_set(["tensors", 0, "stride"], [1, 1]), "invalid stride"),
    (_set(["tensors", 0, "stride"], [-1]), "invalid stride"),
    (_set(["tensors", 0, "storage"], 3), "refers to storage 3"),
    (_set(["tensors", 0, "storage_offset"], -1), "invalid storage_offset"),
    (_set(["storages", 0, "offset"], 64), "outside the 24-byte data section"),
    (_set(["storages", 0, "nbytes"], 20), "reaches past the 20 bytes of storage 0"),
    (_set(["storages", 0, "crc32"], 1), "checksum"),
    (_set(["storages", 0, "extra"], 1), "has fields"),
    (_set(["storages"], {}), "'storages' must be a list"),
    (_set(["version"], 1), "unexpected header fields"),
    (_set(["tensors", 0, "shape"], [-6]), "invalid shape"),
    (_set(["tensors", 0, "shape"], [6.0]), "invalid shape"),
    (_set(["tensors", 0, "dtype"], "complex64"), "unknown dtype"),
    (_set(["tensors", 0, "kind"], "module"), "unknown kind"),
    (_set(["tensors", 0, "requires_grad"], 1), "non-boolean requires_grad"),
    (_set(["tensors", 0, "extra"], 1), "has fields"),
    (_set(["tensors"], {}), "'tensors' must be a list"),
    (_set(["data_nbytes"], 30), "should hold 30 bytes"),
    (_set(["version"], 3), "unsupported checkpoint version 3"),
    (_set(["format"], "pickle"), "does not describe a retrograd checkpoint"),
    (_set(["root"], {"$tensor": 5}), "reference to tensor 5"),
    (_set(["root"], {"$tensor": "0"}), "reference to tensor '0'"),
    (_set(["root"], {"$eval": "os.system('x')"}), "unknown tag '\\$eval'"),
    (_set(["root"], {"$tuple": [], "$dict": []}), "malformed object node"),
    (_set(["root"], {"$dict": [[[1], 2]]}), "unhashable dict key"),
    (_set(["root"], {"$dict": [[1]]}), "pairs"),
    (_set(["root"], {"$float": "1e5"}), "bad \\$float"),
    (_set(["root"], {"$bytes": "!!"}), "invalid base64"),
    (_set(["root"], {"$dtype": "object"}), "unknown dtype"),
    (_set(["root"], {"$size": [1.5]}), "\\$size must hold integers"),
])
def test_malformed_headers(edit, match):
    with pytest.raises(CheckpointError, match=match):
        _load_bytes(_rewrite(_saved(), edit))


def test_bad_json_and_bad_bool_bytes_and_deep_nesting():
    raw = _saved()
    with pytest.raises(CheckpointError, match="not valid JSON"):
        _load_bytes(raw[:24] + b"[[[" + raw[27:])
    with pytest.raises(CheckpointError, match="not valid JSON"):
        _load_bytes(raw[:24] + b"\xff" + raw[25:])
    # A NaN literal (not valid JSON) is refused.
    bad = _rewrite(raw, _set(["root"], {"$odict": [["n", 12345]]})).replace(b"12345", b"NaN  ")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        _load_bytes(bad)
    bools = bytearray(_saved(rg.tensor([True, False, True])))
    bools[-2] = 7
    with pytest.raises(CheckpointError, match="checksum|other than 0 and 1"):
        _load_bytes(bytes(bools))
    deep = _rewrite(raw, _set(["root"], None)).replace(
        b'"root": null', b'"root": ' + b"[" * 100000 + b"]" * 100000)
    with pytest.raises(CheckpointError, match="not valid JSON|nested too deeply"):
        _load_bytes(deep)
    with pytest.raises(CheckpointError, match="header length"):
        _load_bytes(ser.MAGIC + struct.pack("<Q", 2**40) + b"{}")
    with pytest.raises(CheckpointError, match="trailing bytes"):
        _load_bytes(raw + b"\0")


def test_unrecognised_and_pickle_files():
    with pytest.raises(CheckpointError, match="unrecognised"):
        _load_bytes(b"hello world, not a checkpoint")
    with pytest.raises(CheckpointError, match="empty"):
        _load_bytes(b"")
    with pytest.raises(CheckpointError, match="plain pickle"):
        _load_bytes(pickle.dumps({"a": 1}, protocol=2))
    with pytest.raises(TypeError, match="binary mode"):
        ser.load(io.StringIO("text"))
    with pytest.raises(CheckpointError, match="not a valid zip"):
        _load_bytes(b"PK\x03\x04garbage")


# -- safetensors ---------------------------------------------------------------------------------
def test_safetensors_roundtrip(tmp_path):
    tensors = {f"t.{d}": rg.from_numpy(_array(d, (3, 2), seed=i)) for i, d in enumerate(DTYPES)}
    tensors["empty"] = rg.zeros(0, 4)
    tensors["scalar"] = rg.tensor(2.5, dtype=rg.float64)
    tensors["strided"] = rg.arange(12, dtype=rg.int32).reshape(3, 4).t()
    p = tmp_path / "m.safetensors"
    ser.save_safetensors(tensors, p, metadata={"format": "pt"})
    out = ser.load_safetensors(p)
    assert sorted(out) == sorted(tensors)
    for k in tensors:
        _same(tensors[k], out[k])
    raw = p.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    assert header["__metadata__"] == {"format": "pt"} and (8 + n) % 8 == 0
    assert header["t.float32"]["dtype"] == "F32" and header["t.bool"]["dtype"] == "BOOL"
    for k, v in header.items():
        if k != "__metadata__":
            start = v["data_offsets"][0]
            assert start % np.dtype(tensors[k].dtype.np).itemsize == 0
    # load() recognises safetensors files too
    _same(tensors["t.int64"], ser.load(str(p))["t.int64"])


def _st_file(header: dict, body: bytes) -> io.BytesIO:
    h = json.dumps(header).encode()
    return io.BytesIO(struct.pack("<Q", len(h)) + h + body)


def test_safetensors_bf16_and_errors():
    bf16 = np.array([1.0, -2.5, 3.140625], np.float32).view(np.uint32) >> 16
    f = _st_file({"x": {"dtype": "BF16", "shape": [3], "data_offsets": [0, 6]}},
                 bf16.astype("<u2").tobytes())
    out = ser.load_safetensors(f)
    assert out["x"].dtype is rg.bfloat16 and out["x"].tolist() == [1.0, -2.5, 3.140625]
    good = {"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    cases = [
        (good, b"\0" * 7, "truncated or has trailing bytes"),
        (good, b"\0" * 9, "truncated or has trailing bytes"),
        ({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8, "needs 12"),
        ({"x": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8, "C64"),
        ({"x": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8, "gap"),
        ({"x": {"dtype": "F32", "shape": [1]}}, b"", "exactly dtype"),
        ({"x": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 0]}}, b"", "invalid shape"),
        ({"x": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}}, b"", "invalid data_off"),
        ({"__metadata__": {"a": 1}}, b"", "__metadata__"),
        ({"x": {"dtype": "BOOL", "shape": [1], "data_offsets": [0, 1]}}, b"\x05", "0 and 1"),
    ]
    for header, body, match in cases:
        with pytest.raises(CheckpointError, match=match):
            ser.load_safetensors(_st_file(header, body))
    with pytest.raises(CheckpointError, match="exceeds the file size"):
        ser.load_safetensors(io.BytesIO(struct.pack("<Q", 50) + b"{}"))
    with pytest.raises(CheckpointError, match="not valid JSON"):
        ser.load_safetensors(io.BytesIO(struct.pack("<Q", 2) + b"{x"))
    with pytest.raises(TypeError, match="not a tensor"):
        ser.save_safetensors({"a": [1]}, io.BytesIO())


def test_safetensors_package_interop(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    arrays = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1, 2], np.int64)}
    p = tmp_path / "pkg.safetensors"
    st.save_file(arrays, str(p))
    out = ser.load_safetensors(p)
    for k, v in arrays.items():
        np.testing.assert_array_equal(out[k].numpy(), v)
    q = tmp_path / "ours.safetensors"
    ser.save_safetensors({k: rg.from_numpy(v) for k, v in arrays.items()}, q)
    back = st.load_file(str(q))
    for k, v in arrays.items():
        np.testing.assert_array_equal(back[k], v)


# -- checkpoints written by torch.save -----------------------------------------------------------
def _torch_file(obj, torch) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def _check_like(ours, theirs, torch):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, rg.Tensor)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert ours.requires_grad == theirs.requires_grad
        want = theirs.detach()
        if want.dtype == torch.bfloat16:
            assert ours.dtype is rg.bfloat16
            ours, want = ours.float(), want.float()
        assert ours.dtype.name == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(ours.detach().numpy(), want.numpy())
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and list(ours) == list(theirs)
        for k in theirs:
            _check_like(ours[k], theirs[k], torch)
    elif isinstance(theirs, torch.Size):
        assert isinstance(ours, rg.Size) and tuple(ours) == tuple(theirs)
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _check_like(a, b, torch)
    elif isinstance(theirs, torch.device):
        assert isinstance(ours, rg.device) and str(ours) == str(theirs)
    elif isinstance(theirs, torch.dtype):
        assert ours is getattr(rg, str(theirs).split(".")[-1])
    else:
        assert ours == theirs


def test_load_torch_state_dicts(torch):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3),
                                torch.nn.Linear(3, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model(torch.randn(5, 4)).sum().backward()
    opt.step()
    ckpt = {"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3, "best": 0.5,
            "tag": "run-1", "flags": [True, None], "raw": b"\x00\x01"}
    out = ser.load(io.BytesIO(_torch_file(ckpt, torch)))
    _check_like(out, ckpt, torch)
    assert isinstance(out["model"], collections.OrderedDict)
    assert out["model"]._metadata is not None  # PyTorch's state_dict metadata is kept
    assert out["optim"]["param_groups"][0]["betas"] == (0.9, 0.999)


@pytest.mark.parametrize("dtype", DTYPES + ["bfloat16"])
def test_load_torch_dtypes(dtype, torch):
    t = torch.from_numpy(_array("float32" if dtype == "bfloat16" else dtype, (3, 4)))
    if dtype == "bfloat16":
        t = t.to(torch.bfloat16)
    obj = {"x": t, "zero_d": t[1, 2].clone(), "empty": t[:0], "dt": t.dtype}
    _check_like(ser.load(io.BytesIO(_torch_file(obj, torch))), obj, torch)


def test_load_torch_views_offsets_and_shared_storage(torch, tmp_path):
    base = torch.arange(24, dtype=torch.float64).reshape(4, 6)
    obj = {
        "base": base, "t": base.t(), "cols": base[:, 1::2], "off": base[2:, 3:],
        "row": base[3], "flat": base.view(-1)[5:17], "expand": torch.ones(3, 1).expand(3, 4),
        "param": torch.nn.Parameter(torch.ones(2, 2)),
        "frozen": torch.nn.Parameter(torch.zeros(1), requires_grad=False),
        "size": torch.Size([2, 3]), "dev": torch.device("cpu"), "set": {1, 2},
    }
    p = tmp_path / "views.pt"
    torch.save(obj, p)
    out = ser.load(p)
    _check_like(out, obj, torch)
    assert str(out["dev"]) == "cpu"
    # tensors that shared a storage in torch share memory here too
    for k in ("t", "cols", "off", "row", "flat"):
        assert np.shares_memory(out[k]._data, out["base"]._data), k
    out["base"]._data[3, 1] = -1.0
    assert out["row"]._data[1] == -1.0 and out["t"]._data[1, 3] == -1.0
    assert out["param"].requires_grad and not out["frozen"].requires_grad


def test_load_torch_with_map_location(torch):
    raw = _torch_file({"w": torch.ones(2)}, torch)
    for loc in ("cpu", rg.device("cpu"), {"cuda:0": "cpu"}, lambda s, loc: s):
        assert ser.load(io.BytesIO(raw), map_location=loc)["w"].tolist() == [1.0, 1.0]


# -- the restricted unpickler refuses everything else --------------------------------------------
class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _zip_with_pickle(payload: bytes, storages: dict | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", payload)
        zf.writestr("archive/byteorder", "little")
        for k, v in (storages or {}).items():
            zf.writestr(f"archive/data/{k}", v)
        zf.writestr("archive/version", "3\n")
    return buf.getvalue()


def test_malicious_pickle_in_torch_save_is_refused(torch, tmp_path):
    marker = tmp_path / "pwned"
    p = tmp_path / "evil.pt"
    torch.save({"w": torch.ones(2), "evil": _Evil(marker)}, p)
    with pytest.raises(pickle.UnpicklingError, match=r"Unsupported global: GLOBAL (posix|os)\."
                                                     r"system was not an allowed global"):
        ser.load(p)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        ser.load(p, weights_only=True)
    assert not marker.exists()


def test_malicious_pickles_without_torch(tmp_path):
    marker = tmp_path / "pwned"
    payloads = {
        "reduce": pickle.dumps(_Evil(marker), protocol=2),
        "reduce_p4": pickle.dumps({"x": _Evil(marker)}, protocol=4),
        "builtins_eval": b"\x80\x02cbuiltins\neval\nX\x05\x00\x00\x001 + 1\x85R.",
        "getattr": b"\x80\x02cbuiltins\ngetattr\n.",
        "torch_load": b"\x80\x02ctorch\nload\n.",
        "subprocess": b"\x80\x02csubprocess\nPopen\n.",
        "builtin_import": b"\x80\x02c__builtin__\n__import__\n.",
    }
    for name, payload in payloads.items():
        with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL "):
            ser.load(io.BytesIO(_zip_with_pickle(payload)))
        assert not marker.exists(), name
    # opcodes that build objects are refused even for allowed classes
    newobj = b"\x80\x02ccollections\nOrderedDict\n)\x81."
    with pytest.raises(pickle.UnpicklingError, match="Can only create new object for "
                                                     "nn.Parameter or classes allowlisted"):
        ser.load(io.BytesIO(_zip_with_pickle(newobj)))
    build = b"\x80\x02ctorch\nSize\n)R}X\x01\x00\x00\x00aK\x01sb."
    with pytest.raises(pickle.UnpicklingError, match="Can only build Tensor, Parameter, "
                                                     "OrderedDict or types allowlisted via "
                                                     "`add_safe_globals`, but got <class "
                                                     "'retrograd.*Size'>"):
        ser.load(io.BytesIO(_zip_with_pickle(build)))
    dunder = b"\x80\x02ccollections\nOrderedDict\n)R}X\x09\x00\x00\x00__class__K\x01sb."
    with pytest.raises(pickle.UnpicklingError, match="refusing to set attribute '__class__'"):
        ser.load(io.BytesIO(_zip_with_pickle(dunder)))
    assert not marker.exists()


def _tensor_pickle(torch, size, stride, offset=0, numel=4, key="0", stype=None, rg_flag=False):
    """A pickle of one ``_rebuild_tensor_v2`` call over storage ``key``, crafted by hand."""
    sentinel = object()
    stype = stype or torch.FloatStorage

    class R:
        def __reduce__(self):
            return (torch._utils._rebuild_tensor_v2,
                    (sentinel, offset, size, stride, rg_flag, collections.OrderedDict()))

    class P(pickle.Pickler):
        def persistent_id(self, o):
            return ("storage", stype, key, "cpu", numel) if o is sentinel else None

    buf = io.BytesIO()
    P(buf, protocol=2).dump({"w": R()})
    return buf.getvalue()


def test_crafted_torch_files_are_validated(torch):
    data = np.arange(4, dtype="<f4").tobytes()
    ok = _tensor_pickle(torch, (2,), (2,), offset=1)
    out = ser.load(io.BytesIO(_zip_with_pickle(ok, {"0": data})))
    assert out["w"].tolist() == [1.0, 3.0]
    cases = [
        (_tensor_pickle(torch, (3,), (2,)), {"0": data}, "reaches element 4"),
        (_tensor_pickle(torch, (2,), (1,), offset=3), {"0": data}, "reaches element 4"),
        (_tensor_pickle(torch, (2,), (1,), offset=-1), {"0": data}, "bad storage offset"),
        (_tensor_pickle(torch, (2,), (1, 1)), {"0": data}, "differ in length"),
        (_tensor_pickle(torch, (2,), (-1,)), {"0": data}, "non-negative ints"),
        (ok, {"0": data[:12]}, "should hold 4 elements"),
        (ok, {}, "missing from the archive"),
        (_tensor_pickle(torch, (2,), (1,), key="../0"), {"0": data}, "bad storage key"),
        (_tensor_pickle(torch, (2,), (1,), stype=torch.LongStorage, rg_flag=True),
         {"0": data * 2}, "can't require grad"),
        (ok[:-5], {"0": data}, "malformed pickle"),
    ]
    for payload, storages, match in cases:
        with pytest.raises(pickle.UnpicklingError, match=match):
            ser.load(io.BytesIO(_zip_with_pickle(payload, storages)))
    with pytest.raises(CheckpointError, match="no single"):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("other.txt", "x")
        ser.load(io.BytesIO(buf.getvalue()))


def test_torch_tensor_with_python_attributes_is_refused(torch):
    t = torch.ones(2)
    t.note = "extra"
    with pytest.raises(pickle.UnpicklingError, match="extra state"):
        ser.load(io.BytesIO(_torch_file({"t": t}, torch)))


def test_save_then_torch_roundtrip_values_match(torch):
    """What torch saves and what retrograd re-saves after loading it hold the same values."""
    sd = torch.nn.Linear(3, 2).state_dict()
    ours = ser.load(io.BytesIO(_torch_file(sd, torch)))
    again = _roundtrip(ours)
    _check_like(again, sd, torch)


def test_pathlib_and_str_for_torch_files(torch, tmp_path):
    p = tmp_path / "x.pt"
    torch.save([torch.ones(1)], str(p))
    assert ser.load(pathlib.Path(p))[0].tolist() == [1.0]
    assert ser.load(str(p))[0].tolist() == [1.0]


def test_parameters_come_back_as_parameters(torch):
    nn = pytest.importorskip("retrograd.nn")
    if not hasattr(nn, "Parameter"):
        pytest.skip("retrograd.nn.Parameter is not available yet")
    out = _roundtrip({"p": nn.Parameter(rg.ones(2)),
                      "f": nn.Parameter(rg.zeros(1), requires_grad=False)})
    assert isinstance(out["p"], nn.Parameter) and out["p"].requires_grad
    assert isinstance(out["f"], nn.Parameter) and not out["f"].requires_grad
    theirs = ser.load(io.BytesIO(_torch_file({"p": torch.nn.Parameter(torch.ones(2))}, torch)))
    assert isinstance(theirs["p"], nn.Parameter) and theirs["p"].requires_grad


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_reduced_precision_round_trips(dtype, torch, tmp_path):
    """bfloat16/float16 tensors keep their dtype and bits: retrograd's format, safetensors
    (``BF16``, ``F16``, read by torch's own reader too where installed) and torch.save files."""
    v = [1.5, -0.1, 3.0e-3, 65504.0 if dtype == "float16" else 1e30]
    x = rg.tensor(v).to(getattr(rg, dtype))
    rg.save({"x": x}, tmp_path / "a.pt")
    y = rg.load(tmp_path / "a.pt")["x"]
    assert y.dtype is x.dtype and y.float().tolist() == x.float().tolist()
    ser.save_safetensors({"x": x}, tmp_path / "a.safetensors")
    raw = (tmp_path / "a.safetensors").read_bytes()
    assert (b'"BF16"' if dtype == "bfloat16" else b'"F16"') in raw
    y = ser.load_safetensors(tmp_path / "a.safetensors")["x"]
    assert y.dtype is x.dtype and y.float().tolist() == x.float().tolist()
    t = torch.tensor(v).to(getattr(torch, dtype))
    torch.save({"t": t}, tmp_path / "t.pt")
    y = rg.load(tmp_path / "t.pt")["t"]
    assert y.dtype is x.dtype and y.float().tolist() == t.float().tolist()


# -- whole models: torch.save(model) and torch.load(..., weights_only=False) ----------------------
class _Net(rg.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = rg.nn.Linear(3, 2)
        self.act = rg.nn.Tanh()
        self.tied = self.fc.weight  # the same parameter twice loads as one object

    def forward(self, x):
        return self.act(self.fc(x))


def _saved_model():
    rg.manual_seed(0)
    m = _Net()
    buf = io.BytesIO()
    rg.save(m, buf)
    buf.seek(0)
    return m, buf


def test_whole_model_round_trip_with_weights_only_false():
    m, buf = _saved_model()
    out = rg.load(buf, weights_only=False)
    x = rg.arange(6.0).reshape(2, 3)
    assert type(out) is _Net and type(out.fc.weight).__name__ == "Parameter"
    assert out.tied is out.fc.weight and out.fc.weight.requires_grad
    np.testing.assert_array_equal(out(x).detach().numpy(), m(x).detach().numpy())
    assert out.state_dict().keys() == m.state_dict().keys()


def test_whole_model_refused_by_default_as_torch_refuses():
    _, buf = _saved_model()
    name = f"{__name__}._Net"
    with pytest.raises(pickle.UnpicklingError, match=_UNSAFE) as info:
        rg.load(buf)
    msg = str(info.value)
    assert f"GLOBAL {name} was not an allowed global by default" in msg
    assert msg.endswith("https://pytorch.org/docs/stable/generated/torch.load.html.")
    buf.seek(0)
    with rg.serialization.safe_globals([_Net]):  # Linear is still missing
        with pytest.raises(pickle.UnpicklingError, match="GLOBAL retrograd.nn.modules.linear"):
            rg.load(buf)


def test_safe_globals_allow_a_weights_only_load():
    m, buf = _saved_model()
    ser_ = rg.serialization
    assert ser_.get_safe_globals() == []
    with ser_.safe_globals([_Net, rg.nn.Linear, rg.nn.Tanh]):
        assert ser_.get_safe_globals() == [_Net, rg.nn.Linear, rg.nn.Tanh]
        out = rg.load(buf, weights_only=True)
    assert ser_.get_safe_globals() == []
    assert type(out) is _Net and out.tied is out.fc.weight
    np.testing.assert_array_equal(out.fc.bias.detach().numpy(), m.fc.bias.detach().numpy())
    # add_safe_globals, with an explicit path for one entry; clear_safe_globals forgets them
    ser_.add_safe_globals([(_Net, f"{__name__}._Net"), rg.nn.Linear, rg.nn.Tanh])
    try:
        buf.seek(0)
        assert type(rg.load(buf)) is _Net
    finally:
        ser_.clear_safe_globals()
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        rg.load(buf)
    with pytest.raises(ValueError, match="Expected tuple of length 2"):
        ser_.add_safe_globals([(_Net,)])


def test_allowlisted_class_cannot_smuggle_other_globals(tmp_path):
    """Allowlisting a class allows that class only: its state may not name other code."""
    marker = tmp_path / "pwned"

    payload = pickle.dumps(_Holder(_Evil(marker)), protocol=2)
    with rg.serialization.safe_globals([_Holder]):
        with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL (posix|os)"):
            ser.load(io.BytesIO(_zip_with_pickle(payload)))
    assert not marker.exists()


class _Holder:
    def __init__(self, x):
        self.x = x


def test_torch_reads_what_retrograd_pickles(torch):
    """Objects beyond the JSON format are written in torch.save's own layout and names: torch
    reads them with weights_only=True when they hold only tensors and plain containers."""
    obj = {"w": rg.arange(6.0).reshape(2, 3).t(), "s": {1, 2}, "size": rg.Size([2, 3]),
           "p": rg.nn.Parameter(rg.ones(2)), "h": rg.ones(2, dtype=rg.bfloat16),
           "dt": rg.float16}
    buf = io.BytesIO()
    rg.save(obj, buf)
    buf.seek(0)
    out = torch.load(buf)
    assert out["w"].tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert out["s"] == {1, 2} and out["size"] == torch.Size([2, 3])
    assert isinstance(out["p"], torch.nn.Parameter) and out["p"].requires_grad
    assert out["h"].dtype is torch.bfloat16 and out["dt"] is torch.float16
    buf.seek(0)
    back = rg.load(buf)
    assert back["w"].tolist() == out["w"].tolist() and back["dt"] is rg.float16


def test_refusal_matches_torch_message(torch, tmp_path):
    """The same object saved by each library is refused with the same message by each."""
    msgs = []
    for lib in (torch, rg):
        buf = io.BytesIO()
        lib.save({"a": [1, print]}, buf)
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError) as info:
            lib.load(buf)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_torch_model_file_is_refused_without_importing_torch_modules(torch):
    buf = io.BytesIO()
    torch.save(torch.nn.Linear(2, 2), buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.linear.Linear"):
        rg.load(buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="retrograd does not provide"):
        rg.load(buf, weights_only=False)


def _pickled(lib):
    import copy
    import pickle

    t = lib.arange(3.0).requires_grad_()
    t.grad = lib.ones(3)
    m = lib.nn.Linear(2, 2)
    out = {"leaf": pickle.loads(pickle.dumps(t)), "nonleaf": pickle.loads(pickle.dumps(t * 2)),
           "param": pickle.loads(pickle.dumps(lib.nn.Parameter(lib.ones(2)))),
           "t": pickle.loads(pickle.dumps(lib.arange(6.0).reshape(2, 3).t())),
           "model": pickle.loads(pickle.dumps(m)), "state": pickle.loads(pickle.dumps(
               m.state_dict()))}
    for dt in (lib.float16, lib.bfloat16, lib.int64, lib.bool):
        out[str(dt).split(".")[-1]] = pickle.loads(pickle.dumps(lib.arange(3.0).to(dt)))
    c = copy.copy(t)
    with lib.no_grad():
        c[0] = 7.0
    out["copy"], out["shared"] = c, t
    return out


def test_pickle_and_copy_as_torch(torch):
    ours, theirs = _pickled(rg), _pickled(torch)
    for k, r in ours.items():
        e = theirs[k]
        if k == "model":
            assert type(r.weight).__name__ == type(e.weight).__name__ == "Parameter"
            r, e = r.weight, e.weight
            assert r.shape == e.shape and r.requires_grad
            continue
        if k == "state":
            assert list(r) == list(e) and r["bias"].shape == e["bias"].shape
            continue
        assert type(r).__name__ == type(e).__name__, k
        assert r.tolist() == e.tolist(), k
        assert str(r.dtype).split(".")[-1] == str(e.dtype).split(".")[-1], k
        assert (r.requires_grad, r.is_leaf, r.stride()) == (e.requires_grad, e.is_leaf, e.stride())
        assert (r.grad is None) == (e.grad is None), k
