"""Checkpoints: ``save``/``load`` in a format that cannot run code, safetensors, and reading
files written by PyTorch's ``torch.save``.

retrograd's own format (what ``save`` writes) is one file::

    magic    16 bytes  b"\\x89RETROGRAD-CKPT\\n"
    length    8 bytes  unsigned little-endian length of the header
    header            UTF-8 JSON: {"format", "version", "data_nbytes", "storages", "tensors",
                      "root"}
    padding           zero bytes up to a multiple of 64
    data              each storage's bytes, little-endian, at a 64-byte aligned offset

``root`` describes the saved object: JSON ``null``/``true``/``false``/numbers/strings/arrays
stand for ``None``/bools/ints and finite floats/str/lists, and a one-key object tags everything
else: ``{"$tensor": i}`` (entry ``i`` of ``tensors``), ``{"$tuple": [...]}``,
``{"$size": [...]}``, ``{"$dict": [[k, v], ...]}``, ``{"$odict": [[k, v], ...]}``,
``{"$float": "nan" | "inf" | "-inf"}``, ``{"$bytes": base64}``, ``{"$dtype": name}`` and
``{"$device": "cpu"}``. Each entry of ``storages`` gives ``offset`` and ``nbytes`` (relative to
the data section) and ``crc32``; each entry of ``tensors`` gives ``dtype``, ``shape``,
``stride``, ``storage`` (an index) and ``storage_offset`` (in elements), ``requires_grad`` and
``kind`` (``tensor``, ``parameter``, ``ndarray`` or ``npscalar``). Loading only decodes JSON and
copies bytes into NumPy arrays, and checks every field, size, offset and checksum first. (Files
of version 1, where each tensor entry held its own bytes in C order, still load.)

As ``torch.save`` does, a tensor is saved with its whole storage (the array that owns its
memory), once for all the tensors saved together that share it: views load sharing one
storage, with their strides and storage offsets (a transposed tensor loads transposed), and
saving a small view of a large tensor writes the large tensor's bytes (``clone()`` it first to
save only the view). The same tensor object saved twice loads as one object.

An object this format cannot hold (a whole ``nn.Module``, an instance of a user's class) is
saved as ``torch.save`` saves it: a pickle in PyTorch's zip layout (``_torch_zip``).

``load`` also reads safetensors files and PyTorch's zip checkpoints. By default
(``weights_only=True``) their pickle is read by an unpickler that resolves only a fixed list of
globals (tensor and parameter rebuilding, storage types, dtypes, ``torch.Size``,
``torch.device``, ``OrderedDict``, ``set``), each mapped to retrograd's own code, and the globals
allowlisted with ``add_safe_globals``/``safe_globals``; it refuses everything else with
PyTorch's ``pickle.UnpicklingError``. Only ``weights_only=False`` runs pickle's full machinery,
which can run arbitrary code. PyTorch's code is never imported.
"""

from __future__ import annotations

import base64
import collections
import json
import math
import os
import struct
import sys
import zlib
from typing import IO, Any

import numpy as np

from . import _dtypes
from ._tensor import Size, Tensor, device
from ._torch_zip import (
    CheckpointError,
    _bf16_to_f32,
    _bytes_of,
    _fail,
    _le_contiguous,
    _load_torch_zip,
    _map,
    _map_all,
    _tensor_of,
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
    save_torch_zip,
)
from .ops.strided import geometry

__all__ = ["save", "load", "save_safetensors", "load_safetensors", "add_safe_globals",
           "safe_globals", "get_safe_globals", "clear_safe_globals", "CheckpointError"]

FileLike = str | os.PathLike | IO[bytes]

MAGIC = b"\x89RETROGRAD-CKPT\n"
FORMAT = "retrograd.save"
VERSION = 2
_VERSIONS = (1, 2)  # version 1: each tensor's own bytes, C order (still read)
_ALIGN = 64
_MAX_HEADER = 1 << 30
_SAFETENSORS_MAX_HEADER = 100_000_000

_DTYPES = {d.name: d for d in _dtypes.ALL}


# -- reading and writing bytes -------------------------------------------------------------------
def _read_all(f: FileLike) -> bytes:
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return fh.read()
    if not hasattr(f, "read"):
        raise TypeError(f"expected a path or a binary file object, but got {type(f).__name__}")
    data = f.read()
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("the file object must be opened in binary mode")
    return bytes(data)


def _write_all(f: FileLike, chunks: list) -> None:
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            for c in chunks:
                fh.write(c)
        return
    if not hasattr(f, "write"):
        raise TypeError(f"expected a path or a binary file object, but got {type(f).__name__}")
    for c in chunks:
        f.write(c)


def _np_le(name: str) -> np.dtype:
    return _DTYPES[name].np.newbyteorder("<")


def _memory_of(root: np.ndarray) -> np.ndarray:
    """The bytes of a storage (a C- or Fortran-contiguous array), in memory order, uncopied."""
    return np.ndarray((root.nbytes,), np.uint8, buffer=root)


# -- save ----------------------------------------------------------------------------------------
class _Encoder:
    def __init__(self) -> None:
        self.entries: list = []
        self.storages: list = []  # (array whose memory is written, its storage entry)
        self.by_root: dict = {}  # id(storage array) -> storage index
        self.index: dict = {}  # id(tensor or ndarray) -> entry index
        self.keep: list = []  # keep saved objects alive so that ids stay unique
        self.active: set = set()
        self.nbytes = 0

    def storage(self, mem: np.ndarray) -> int:
        """The index of the storage entry writing ``mem``'s memory (once per array)."""
        j = self.by_root.get(id(mem))
        if j is None:
            offset = -(-self.nbytes // _ALIGN) * _ALIGN
            raw = _memory_of(mem)
            self.storages.append((raw, {"offset": offset, "nbytes": raw.nbytes,
                                        "crc32": zlib.crc32(raw)}))
            self.nbytes = offset + raw.nbytes
            j = self.by_root[id(mem)] = len(self.storages) - 1
            self.keep.append(mem)
        return j

    def add_array(self, obj: Any, arr: np.ndarray, kind: str, requires_grad: bool) -> int:
        key = id(obj)
        if key in self.index:
            return self.index[key]
        dt = _dtypes.FROM_NP.get(arr.dtype.newbyteorder("="))
        if dt is None:
            raise TypeError(f"retrograd.save: arrays of dtype {arr.dtype} are not supported")
        # As torch.save: the whole storage, once, and each tensor's place in it, so that views
        # load as views of one storage, with their strides.
        geo = geometry(arr) if arr.dtype.byteorder != ">" and sys.byteorder == "little" \
            else None
        if geo is None:
            root = _le_contiguous(arr)
            geo = (root, tuple(s // root.itemsize for s in root.strides), 0)
        root, strides, off = geo
        self.entries.append({
            "dtype": dt.name, "shape": list(arr.shape), "stride": list(strides),
            "storage": self.storage(root), "storage_offset": off,
            "requires_grad": bool(requires_grad), "kind": kind,
        })
        self.index[key] = len(self.entries) - 1
        self.keep.append(obj)
        return self.index[key]

    def encode(self, obj: Any, where: str) -> Any:
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return int(obj)
        if isinstance(obj, float):
            if math.isfinite(obj):
                return float(obj)
            return {"$float": "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")}
        if isinstance(obj, Tensor):
            kind = "parameter" if type(obj).__name__ == "Parameter" else "tensor"
            return {"$tensor": self.add_array(obj, obj._data, kind, obj.requires_grad)}
        if isinstance(obj, np.ndarray):
            return {"$tensor": self.add_array(obj, obj, "ndarray", False)}
        if isinstance(obj, np.generic) and not isinstance(obj, (np.str_, np.bytes_)):
            return {"$tensor": self.add_array(obj, np.asarray(obj), "npscalar", False)}
        if isinstance(obj, (bytes, bytearray)):
            return {"$bytes": base64.b64encode(bytes(obj)).decode("ascii")}
        if isinstance(obj, _dtypes.dtype):
            return {"$dtype": obj.name}
        if isinstance(obj, device):
            return {"$device": "cpu"}
        if isinstance(obj, (list, tuple, dict)):
            if id(obj) in self.active:
                raise ValueError(f"retrograd.save: {where} contains itself (a reference cycle)")
            self.active.add(id(obj))
            try:
                if isinstance(obj, dict):
                    tag = "$odict" if isinstance(obj, collections.OrderedDict) else "$dict"
                    return {tag: [
                        [self.encode(k, f"a key of {where}"), self.encode(v, f"{where}[{k!r}]")]
                        for k, v in obj.items()
                    ]}
                items = [self.encode(v, f"{where}[{i}]") for i, v in enumerate(obj)]
                if isinstance(obj, Size):
                    return {"$size": items}
                return {"$tuple": items} if isinstance(obj, tuple) else items
            finally:
                self.active.discard(id(obj))
        raise TypeError(
            f"retrograd.save: can't save {where} of type {type(obj).__name__}; checkpoints hold "
            "tensors, NumPy arrays, dtypes, None, bool, int, float, str, bytes, and lists, "
            "tuples and dicts of them"
        )


def save(obj: Any, f: FileLike, pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Save ``obj`` to ``f`` (a path or a binary file object).

    Tensors, NumPy arrays and plain values, in lists, tuples and dicts, are saved as a JSON
    description plus raw tensor bytes (see the module docstring), which loading never runs code
    for. Anything else (a whole ``nn.Module``) is pickled as ``torch.save`` does, in PyTorch's
    zip layout; loading it back needs ``load(f, weights_only=False)``, or its classes
    allowlisted with ``add_safe_globals``. ``pickle_module`` is ignored; ``pickle_protocol`` is
    the pickle's protocol.

    >>> import io
    >>> import retrograd as torch
    >>> buf = io.BytesIO()
    >>> torch.save({"w": torch.ones(2, 2), "step": 3}, buf)
    >>> _ = buf.seek(0)
    >>> torch.load(buf)
    {'w': tensor([[1., 1.],
            [1., 1.]]), 'step': 3}
    """
    enc = _Encoder()
    try:
        root = enc.encode(obj, "the object")
    except TypeError:
        # Not tensors and plain values: a pickle, as torch.save writes it.
        _write_all(f, [save_torch_zip(obj, pickle_protocol)])
        return
    header = {
        "format": FORMAT, "version": VERSION, "data_nbytes": enc.nbytes,
        "storages": [e for _, e in enc.storages], "tensors": enc.entries, "root": root,
    }
    raw = json.dumps(header, allow_nan=False, separators=(",", ":")).encode("utf-8")
    start = len(MAGIC) + 8 + len(raw)
    pad = -start % _ALIGN
    chunks: list = [MAGIC, struct.pack("<Q", len(raw)), raw, b"\0" * pad]
    pos = 0
    for raw, e in enc.storages:
        if e["offset"] > pos:
            chunks.append(b"\0" * (e["offset"] - pos))
        chunks.append(raw)
        pos = e["offset"] + raw.nbytes
    _write_all(f, chunks)


# -- load: retrograd's format --------------------------------------------------------------------
def _is_count(x: Any) -> bool:
    return type(x) is int and x >= 0


def _check_fields(what: str, e: Any, need: set) -> None:
    if not isinstance(e, dict):
        raise _fail(f"{what} is not an object")
    if set(e) != need:
        raise _fail(f"{what} has fields {sorted(e)}, expected {sorted(need)}")


def _check_bytes(what: str, e: dict, data_len: int) -> None:
    """``offset``/``nbytes``/``crc32`` of a block of the data section."""
    if not (_is_count(e["offset"]) and _is_count(e["nbytes"]) and _is_count(e["crc32"])):
        raise _fail(f"{what} has an invalid offset, nbytes or crc32")
    if e["offset"] + e["nbytes"] > data_len:
        raise _fail(
            f"{what} (bytes {e['offset']}..{e['offset'] + e['nbytes']}) lies outside "
            f"the {data_len}-byte data section; the file is truncated or corrupt"
        )


def _check_entry(i: int, e: Any, data_len: int, storages: list | None) -> None:
    """A tensor entry: of version 1 (its own bytes) when ``storages`` is None, else of
    version 2 (a place in one of ``storages``)."""
    if storages is None:
        _check_fields(f"tensor entry {i}", e, {"dtype", "shape", "offset", "nbytes", "crc32",
                                               "requires_grad", "kind"})
    else:
        _check_fields(f"tensor entry {i}", e, {"dtype", "shape", "stride", "storage",
                                               "storage_offset", "requires_grad", "kind"})
    if e["dtype"] not in _DTYPES:
        raise _fail(f"tensor entry {i} has unknown dtype {e['dtype']!r}")
    shape = e["shape"]
    if not isinstance(shape, list) or not all(_is_count(s) for s in shape) or len(shape) > 64:
        raise _fail(f"tensor entry {i} has an invalid shape {shape!r}")
    isz = _DTYPES[e["dtype"]].itemsize
    if storages is None:
        _check_bytes(f"tensor entry {i}", e, data_len)
        expect = math.prod(shape) * isz
        if e["nbytes"] != expect:
            raise _fail(
                f"tensor entry {i}: nbytes is {e['nbytes']} but shape {shape} of {e['dtype']} "
                f"needs {expect}"
            )
    else:
        stride = e["stride"]
        if not isinstance(stride, list) or not all(_is_count(s) for s in stride) or \
                len(stride) != len(shape):
            raise _fail(f"tensor entry {i} has an invalid stride {stride!r} for shape {shape}")
        j = e["storage"]
        if type(j) is not int or not 0 <= j < len(storages):
            raise _fail(f"tensor entry {i} refers to storage {j!r}, but the file has "
                        f"{len(storages)}")
        if not _is_count(e["storage_offset"]):
            raise _fail(f"tensor entry {i} has an invalid storage_offset")
        if 0 not in shape:
            end = (e["storage_offset"] + sum((n - 1) * st for n, st in zip(shape, stride)) + 1)
            if end * isz > storages[j]["nbytes"]:
                raise _fail(
                    f"tensor entry {i} (shape {shape}, stride {stride}, storage_offset "
                    f"{e['storage_offset']}) reaches past the {storages[j]['nbytes']} bytes of "
                    f"storage {j}"
                )
    if not isinstance(e["requires_grad"], bool):
        raise _fail(f"tensor entry {i} has a non-boolean requires_grad")
    if e["kind"] not in ("tensor", "parameter", "ndarray", "npscalar"):
        raise _fail(f"tensor entry {i} has unknown kind {e['kind']!r}")
    if e["requires_grad"] and not _DTYPES[e["dtype"]].is_floating_point:
        raise _fail(f"tensor entry {i} of dtype {e['dtype']} can't require grad")
    if e["kind"] == "npscalar" and shape:
        raise _fail(f"tensor entry {i} is a NumPy scalar with shape {shape}")


class _Decoder:
    def __init__(self, entries: list, data: memoryview, map_location: Any,
                 storages: list | None = None) -> None:
        self.entries = entries
        self.storages = storages
        self.data = data
        self.map_location = map_location
        self.made: dict = {}
        self.loaded: dict = {}  # storage index -> its bytes, loaded once

    def _block(self, e: dict, what: str) -> memoryview:
        raw = self.data[e["offset"]:e["offset"] + e["nbytes"]]
        if zlib.crc32(raw) != e["crc32"]:
            raise _fail(f"{what} fails its checksum; the file is corrupt")
        return raw

    def _array(self, i: int, e: dict) -> np.ndarray:
        if self.storages is None:  # version 1
            raw = self._block(e, f"tensor entry {i}")
            if e["dtype"] == "bool" and bytes(raw).translate(None, b"\0\1"):
                raise _fail(f"tensor entry {i} is bool but holds bytes other than 0 and 1")
            arr = np.frombuffer(raw, dtype=_np_le(e["dtype"])).reshape(e["shape"]).copy()
            return arr.astype(arr.dtype.newbyteorder("="), copy=False)
        j = e["storage"]
        mem = self.loaded.get(j)
        if mem is None:
            mem = self.loaded[j] = np.frombuffer(
                self._block(self.storages[j], f"storage {j}"), np.uint8).copy()
        shape, dt = tuple(e["shape"]), _np_le(e["dtype"])
        if 0 in shape:
            return np.empty(shape, dt.newbyteorder("="))

        def at(dtype):
            return np.ndarray(shape, dtype, buffer=mem, offset=e["storage_offset"] * dt.itemsize,
                              strides=tuple(st * dt.itemsize for st in e["stride"]))

        # (the bytes the view spans: bounded by the storage, whatever the shape claims)
        end = e["storage_offset"] + sum((n - 1) * st for n, st in zip(shape, e["stride"])) + 1
        if e["dtype"] == "bool" and mem[e["storage_offset"]:end].max(initial=0) > 1:
            raise _fail(f"tensor entry {i} is bool but holds bytes other than 0 and 1")
        if dt.byteorder == "<" and sys.byteorder != "little":  # (a copy, natively ordered)
            return at(dt).astype(dt.newbyteorder("="))
        return at(dt.newbyteorder("="))

    def tensor(self, i: Any) -> Any:
        if type(i) is not int or not 0 <= i < len(self.entries):
            raise _fail(f"reference to tensor {i!r}, but the file has {len(self.entries)}")
        if i in self.made:
            return self.made[i]
        e = self.entries[i]
        arr = self._array(i, e)
        if e["kind"] == "ndarray":
            out: Any = arr
        elif e["kind"] == "npscalar":
            out = arr[()]
        else:
            out = _map(_tensor_of(arr, e["requires_grad"], e["kind"] == "parameter"),
                       self.map_location)
        self.made[i] = out
        return out

    def items(self, v: Any, tag: str) -> list:
        if not isinstance(v, list):
            raise _fail(f"{tag} must hold a JSON array")
        return v

    def decode(self, node: Any) -> Any:
        if node is None or isinstance(node, (bool, str, int)):
            return node
        if isinstance(node, float):
            if not math.isfinite(node):
                raise _fail("non-finite floats must be tagged with $float")
            return node
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict) or len(node) != 1:
            raise _fail(f"malformed object node {str(node)[:80]!r}")
        (tag, v), = node.items()
        if tag == "$tensor":
            return self.tensor(v)
        if tag == "$tuple":
            return tuple(self.decode(x) for x in self.items(v, tag))
        if tag == "$size":
            dims = [self.decode(x) for x in self.items(v, tag)]
            if not all(type(d) is int for d in dims):
                raise _fail("$size must hold integers")
            return Size(dims)
        if tag in ("$dict", "$odict"):
            out = {} if tag == "$dict" else collections.OrderedDict()
            for pair in self.items(v, tag):
                if not isinstance(pair, list) or len(pair) != 2:
                    raise _fail(f"{tag} items must be [key, value] pairs")
                key = self.decode(pair[0])
                try:
                    out[key] = self.decode(pair[1])
                except TypeError:
                    raise _fail(f"unhashable dict key of type {type(key).__name__}") from None
            return out
        if tag == "$float":
            if v not in ("nan", "inf", "-inf"):
                raise _fail(f"bad $float value {v!r}")
            return float(v)
        if tag == "$bytes":
            if not isinstance(v, str):
                raise _fail("$bytes must hold a base64 string")
            try:
                return base64.b64decode(v.encode("ascii"), validate=True)
            except (ValueError, UnicodeEncodeError):
                raise _fail("$bytes holds invalid base64") from None
        if tag == "$dtype":
            if v not in _DTYPES:
                raise _fail(f"unknown dtype {v!r}")
            return _DTYPES[v]
        if tag == "$device":
            if v != "cpu":
                raise _fail(f"unknown device {v!r}")
            return device("cpu")
        raise _fail(f"unknown tag {tag!r}")


def _reject_constant(name: str) -> None:
    raise ValueError(f"invalid JSON constant {name}")


def _load_retrograd(data: bytes, map_location: Any) -> Any:
    head = len(MAGIC) + 8
    if len(data) < head:
        raise _fail("the file is truncated (no header length)")
    (hlen,) = struct.unpack("<Q", data[len(MAGIC):head])
    if hlen > _MAX_HEADER or head + hlen > len(data):
        raise _fail(f"header length {hlen} exceeds the file size {len(data)}; truncated or corrupt")
    try:
        header = json.loads(data[head:head + hlen].decode("utf-8"),
                            parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise _fail(f"the header is not valid JSON ({e})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise _fail("the header does not describe a retrograd checkpoint")
    version = header.get("version")
    if version not in _VERSIONS:
        raise _fail(f"unsupported checkpoint version {version!r} (this retrograd reads versions "
                    f"{', '.join(map(str, _VERSIONS))})")
    fields = {"format", "version", "data_nbytes", "tensors", "root"}
    if version >= 2:
        fields.add("storages")
    if set(header) != fields:
        raise _fail(f"unexpected header fields {sorted(header)}")
    start = head + hlen + (-(head + hlen) % _ALIGN)
    nbytes = header["data_nbytes"]
    if not _is_count(nbytes):
        raise _fail("data_nbytes must be a non-negative integer")
    if start + nbytes != len(data):
        raise _fail(
            f"the data section should hold {nbytes} bytes but the file has "
            f"{max(len(data) - start, 0)}; the file is truncated or has trailing bytes"
        )
    entries = header["tensors"]
    if not isinstance(entries, list):
        raise _fail("'tensors' must be a list")
    storages = None
    if version >= 2:
        storages = header["storages"]
        if not isinstance(storages, list):
            raise _fail("'storages' must be a list")
        for j, e in enumerate(storages):
            _check_fields(f"storage {j}", e, {"offset", "nbytes", "crc32"})
            _check_bytes(f"storage {j}", e, nbytes)
    for i, e in enumerate(entries):
        _check_entry(i, e, nbytes, storages)
    dec = _Decoder(entries, memoryview(data)[start:], map_location, storages)
    try:
        return dec.decode(header["root"])
    except RecursionError:
        raise _fail("the object is nested too deeply") from None


# -- map_location --------------------------------------------------------------------------------
def _check_location(loc: Any) -> None:
    if isinstance(loc, device):
        return
    if not isinstance(loc, str) or loc.split(":")[0] != "cpu":
        raise RuntimeError(
            f"retrograd.load: map_location={loc!r} is not supported; retrograd computes on the "
            "CPU only, so tensors always load to 'cpu'"
        )


def _check_map_location(map_location: Any) -> None:
    if map_location is None or callable(map_location):
        return
    if isinstance(map_location, dict):
        for v in map_location.values():
            _check_location(v)
        return
    _check_location(map_location)


# -- load ----------------------------------------------------------------------------------------
def _looks_like_safetensors(data: bytes) -> bool:
    if len(data) < 10:
        return False
    (n,) = struct.unpack("<Q", data[:8])
    return n <= _SAFETENSORS_MAX_HEADER and 8 + n <= len(data) and data[8:9] == b"{"


def load(f: FileLike, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Load what ``save`` wrote, a safetensors file, or a ``torch.save`` zip checkpoint.

    retrograd's format and safetensors are JSON plus raw bytes: loading them never runs code.
    A pickle (``torch.save``'s zip format) is read, by default (``weights_only=True`` or
    ``None``), by a reader that accepts only tensors, plain containers and the globals
    allowlisted with ``add_safe_globals``/``safe_globals``, and raises PyTorch's
    ``pickle.UnpicklingError`` naming anything else. ``weights_only=False`` unpickles with
    pickle's full machinery, as ``torch.load`` does: **this can run arbitrary code**, so use it
    only for files from a trusted source (a whole model you saved yourself).

    ``map_location`` may be ``None``, ``'cpu'``, a ``device``, a dict whose targets are
    CPU, or a callable ``fn(tensor, 'cpu')`` applied to each tensor. Malformed files raise
    ``CheckpointError`` (a ``RuntimeError``) saying what is wrong.

    >>> import io
    >>> import retrograd as torch
    >>> buf = io.BytesIO()
    >>> torch.save([torch.arange(3), (1.5, None, "x")], buf)
    >>> _ = buf.seek(0)
    >>> torch.load(buf, map_location="cpu", weights_only=True)
    [tensor([0, 1, 2]), (1.5, None, 'x')]
    """
    _check_map_location(map_location)
    data = _read_all(f)
    if data.startswith(MAGIC):
        return _load_retrograd(data, map_location)
    if data.startswith(b"PK\x03\x04") or data.startswith(b"PK\x05\x06"):
        return _load_torch_zip(data, map_location, weights_only is not False)
    if _looks_like_safetensors(data):
        return _map_all(_load_safetensors_bytes(data), map_location)
    if data[:1] == b"\x80":
        raise _fail(
            "this looks like a plain pickle (PyTorch's legacy format, or pickle.dump); retrograd "
            "does not unpickle such files. Re-save it with a current torch.save (zip format)"
        )
    if not data:
        raise _fail("the file is empty")
    raise _fail(
        "unrecognised file: not a retrograd checkpoint, a safetensors file or a torch.save zip"
    )


# -- safetensors ---------------------------------------------------------------------------------
_ST_CODES = {
    "float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16", "int64": "I64",
    "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8", "uint16": "U16", "uint32": "U32",
    "uint64": "U64", "bool": "BOOL",
}
_ST_NAMES = {v: k for k, v in _ST_CODES.items()}


def save_safetensors(tensors: dict[str, Tensor], f: FileLike,
                     metadata: dict[str, str] | None = None) -> None:
    """Write a dict of named tensors in the safetensors format.

    The layout is the format's: an 8-byte little-endian header length, a JSON header giving each
    tensor's ``dtype``, ``shape`` and ``data_offsets``, then the raw little-endian bytes.
    Tensors are laid out largest element size first, then by name, so every one is aligned.

    >>> import io
    >>> import retrograd as torch
    >>> from retrograd.serialization import load_safetensors, save_safetensors
    >>> buf = io.BytesIO()
    >>> save_safetensors({"w": torch.ones(2), "i": torch.arange(2)}, buf)
    >>> _ = buf.seek(0)
    >>> load_safetensors(buf)
    {'i': tensor([0, 1]), 'w': tensor([1., 1.])}
    """
    if not isinstance(tensors, dict):
        raise TypeError(f"expected a dict of tensors, but got {type(tensors).__name__}")
    header: dict = {}
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
        ):
            raise TypeError("metadata must be a dict of str to str")
        header["__metadata__"] = dict(metadata)
    arrays = []
    for name, t in tensors.items():
        if not isinstance(name, str) or name == "__metadata__":
            raise TypeError(f"tensor names must be strings other than '__metadata__': {name!r}")
        if not isinstance(t, Tensor):
            raise TypeError(f"tensors[{name!r}] is a {type(t).__name__}, not a tensor")
        arrays.append((name, _le_contiguous(t._data), t.dtype))
    arrays.sort(key=lambda a: (-a[2].itemsize, a[0]))
    pos = 0
    for name, arr, dt in arrays:
        header[name] = {
            "dtype": _ST_CODES[dt.name], "shape": list(arr.shape),
            "data_offsets": [pos, pos + arr.nbytes],
        }
        pos += arr.nbytes
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    chunks: list = [struct.pack("<Q", len(raw)), raw]
    chunks += [_bytes_of(arr) for _, arr, _ in arrays]
    _write_all(f, chunks)


def _st_fail(msg: str) -> CheckpointError:
    return CheckpointError(f"safetensors: {msg}")


def _load_safetensors_bytes(data: bytes) -> dict[str, Tensor]:
    if len(data) < 8:
        raise _st_fail("the file is truncated (no header length)")
    (n,) = struct.unpack("<Q", data[:8])
    if n > _SAFETENSORS_MAX_HEADER:
        raise _st_fail(f"header length {n} is too large")
    if 8 + n > len(data):
        raise _st_fail(f"header length {n} exceeds the file size {len(data)}; truncated?")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise _st_fail(f"the header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise _st_fail("the header must be a JSON object")
    meta = header.pop("__metadata__", None)
    if meta is not None and not (
        isinstance(meta, dict) and all(isinstance(v, str) for v in meta.values())
    ):
        raise _st_fail("__metadata__ must map strings to strings")
    body = memoryview(data)[8 + n:]
    spans = []
    for name, info in header.items():
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise _st_fail(f"tensor {name!r} must have exactly dtype, shape and data_offsets")
        code, shape, offs = info["dtype"], info["shape"], info["data_offsets"]
        if code == "BF16":
            itemsize = 2
        elif code in _ST_NAMES:
            itemsize = _DTYPES[_ST_NAMES[code]].itemsize
        else:
            raise _st_fail(f"tensor {name!r} has dtype {code!r}, which retrograd can't hold")
        if not isinstance(shape, list) or not all(_is_count(s) for s in shape):
            raise _st_fail(f"tensor {name!r} has an invalid shape {shape!r}")
        if (not isinstance(offs, list) or len(offs) != 2 or not all(_is_count(o) for o in offs)
                or offs[0] > offs[1]):
            raise _st_fail(f"tensor {name!r} has invalid data_offsets {offs!r}")
        if offs[1] - offs[0] != math.prod(shape) * itemsize:
            raise _st_fail(
                f"tensor {name!r}: data_offsets span {offs[1] - offs[0]} bytes but shape "
                f"{shape} of {code} needs {math.prod(shape) * itemsize}"
            )
        spans.append((offs[0], offs[1], name, code, shape))
    spans.sort()
    pos = 0
    for begin, end, name, _, _ in spans:
        if begin != pos:
            raise _st_fail(f"tensor {name!r} starts at byte {begin}, expected {pos} (gap or "
                           "overlap in the data)")
        pos = end
    if pos != len(body):
        raise _st_fail(f"the data section holds {len(body)} bytes but the header describes "
                       f"{pos}; the file is truncated or has trailing bytes")
    out: dict[str, Tensor] = {}
    for begin, end, name, code, shape in spans:
        raw = body[begin:end]
        if code == "BF16":
            arr = _bf16_to_f32(np.frombuffer(raw, dtype="<u2")).reshape(shape)
        else:
            arr = np.frombuffer(raw, dtype=_np_le(_ST_NAMES[code])).reshape(shape)
            if code == "BOOL" and arr.view(np.uint8).max(initial=0) > 1:
                raise _st_fail(f"bool tensor {name!r} holds bytes other than 0 and 1")
            arr = arr.astype(arr.dtype.newbyteorder("="))  # a writable native copy
        out[name] = _tensor_of(arr)
    return out


def load_safetensors(f: FileLike) -> dict[str, Tensor]:
    """Read a safetensors file into a dict of tensors (in data order).

    ``BF16`` tensors load as bfloat16, ``F16`` as float16; other dtypes
    retrograd lacks raise ``CheckpointError``, as does any inconsistency in the header.

    >>> import io, struct
    >>> from retrograd.serialization import load_safetensors
    >>> head = b'{"x":{"dtype":"I8","shape":[2],"data_offsets":[0,2]}}'
    >>> load_safetensors(io.BytesIO(struct.pack("<Q", len(head)) + head + bytes([1, 255])))
    {'x': tensor([ 1, -1], dtype=retrograd.int8)}
    """
    return _load_safetensors_bytes(_read_all(f))
