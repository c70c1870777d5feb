"""Checkpoints: ``save``/``load`` in a format that cannot run code, safetensors, and reading
files written by PyTorch's ``torch.save``.

retrograd's own format (what ``save`` writes) is one file::

    magic    16 bytes  b"\\x89RETROGRAD-CKPT\\n"
    length    8 bytes  unsigned little-endian length of the header
    header            UTF-8 JSON: {"format", "version", "data_nbytes", "tensors", "root"}
    padding           zero bytes up to a multiple of 64
    data              each tensor's bytes, C order, little-endian, at a 64-byte aligned offset

``root`` describes the saved object: JSON ``null``/``true``/``false``/numbers/strings/arrays
stand for ``None``/bools/ints and finite floats/str/lists, and a one-key object tags everything
else: ``{"$tensor": i}`` (entry ``i`` of ``tensors``), ``{"$tuple": [...]}``,
``{"$size": [...]}``, ``{"$dict": [[k, v], ...]}``, ``{"$odict": [[k, v], ...]}``,
``{"$float": "nan" | "inf" | "-inf"}``, ``{"$bytes": base64}``, ``{"$dtype": name}`` and
``{"$device": "cpu"}``. Each entry of ``tensors`` gives ``dtype``, ``shape``, ``offset`` and
``nbytes`` (relative to the data section), ``crc32``, ``requires_grad`` and ``kind``
(``tensor``, ``parameter``, ``ndarray`` or ``npscalar``). Loading only decodes JSON and copies
bytes into NumPy arrays, and checks every field, size, offset and checksum first.

The same tensor object saved twice loads as one object; distinct tensors that share memory (views
of one array) are saved as separate copies and load as independent tensors.

``load`` also reads safetensors files and PyTorch's zip checkpoints. The latter hold a pickle;
it is read by an unpickler that resolves only a fixed list of globals (tensor and parameter
rebuilding, storage types, dtypes, ``torch.Size``, ``torch.device``, ``OrderedDict``, ``set``),
each mapped to retrograd's own code, and refuses every other global, and the opcodes that build
arbitrary objects, with ``pickle.UnpicklingError``. PyTorch's code is never imported.
"""

from __future__ import annotations

import base64
import collections
import io
import json
import math
import os
import pickle
import struct
import zipfile
import zlib
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from . import _dtypes
from ._dtypes import FLOAT_CHARS
from ._tensor import Size, Tensor, device

__all__ = ["save", "load", "save_safetensors", "load_safetensors"]

FileLike = str | os.PathLike | IO[bytes]

MAGIC = b"\x89RETROGRAD-CKPT\n"
FORMAT = "retrograd.save"
VERSION = 1
_ALIGN = 64
_MAX_HEADER = 1 << 30
_SAFETENSORS_MAX_HEADER = 100_000_000

_DTYPES = {d.name: d for d in _dtypes.ALL}


class CheckpointError(RuntimeError):
    """A checkpoint that is malformed, truncated, or holds something retrograd will not load."""


def _fail(msg: str) -> CheckpointError:
    return CheckpointError(f"retrograd.load: {msg}")


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


def _le_contiguous(arr: np.ndarray) -> np.ndarray:
    if not arr.flags.c_contiguous:
        arr = arr.copy(order="C")  # (np.ascontiguousarray would turn 0-d into 1-d)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return arr


def _bytes_of(arr: np.ndarray) -> memoryview:
    """A contiguous array's bytes, without copying."""
    return memoryview(arr.reshape(-1).view(np.uint8))


def _np_le(name: str) -> np.dtype:
    return _DTYPES[name].np.newbyteorder("<")


def _tensor_of(arr: np.ndarray, requires_grad: bool = False, parameter: bool = False) -> Tensor:
    from ._creation import from_numpy

    if arr.dtype.byteorder not in "=|":
        arr = arr.astype(arr.dtype.newbyteorder("="))
    t = from_numpy(arr)
    if parameter:
        try:
            from .nn import Parameter  # type: ignore[attr-defined]
        except ImportError:
            pass
        else:
            return Parameter(t, requires_grad=requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


# -- save ----------------------------------------------------------------------------------------
class _Encoder:
    def __init__(self) -> None:
        self.entries: list = []
        self.arrays: list = []
        self.index: dict = {}  # id(tensor or ndarray) -> entry index
        self.keep: list = []  # keep saved objects alive so that ids stay unique
        self.active: set = set()
        self.nbytes = 0

    def add_array(self, obj: Any, arr: np.ndarray, kind: str, requires_grad: bool) -> int:
        key = id(obj)
        if key in self.index:
            return self.index[key]
        dt = _dtypes.FROM_NP.get(arr.dtype.newbyteorder("="))
        if dt is None:
            raise TypeError(f"retrograd.save: arrays of dtype {arr.dtype} are not supported")
        arr = _le_contiguous(arr)
        offset = -(-self.nbytes // _ALIGN) * _ALIGN
        self.entries.append({
            "dtype": dt.name, "shape": list(arr.shape), "offset": offset,
            "nbytes": arr.nbytes, "crc32": zlib.crc32(_bytes_of(arr)),
            "requires_grad": bool(requires_grad), "kind": kind,
        })
        self.arrays.append((offset, arr))
        self.nbytes = offset + arr.nbytes
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
    """Save tensors, or lists, tuples and dicts of them and of plain values, to ``f``.

    ``f`` is a path or a binary file object. The file holds a JSON description and raw tensor
    bytes (see the module docstring), so loading it never runs code. ``pickle_module`` and
    ``pickle_protocol`` are accepted for compatibility and ignored.

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
    root = enc.encode(obj, "the object")
    header = {
        "format": FORMAT, "version": VERSION, "data_nbytes": enc.nbytes,
        "tensors": enc.entries, "root": root,
    }
    raw = json.dumps(header, allow_nan=False, separators=(",", ":")).encode("utf-8")
    start = len(MAGIC) + 8 + len(raw)
    pad = -start % _ALIGN
    chunks: list = [MAGIC, struct.pack("<Q", len(raw)), raw, b"\0" * pad]
    pos = 0
    for offset, arr in enc.arrays:
        if offset > pos:
            chunks.append(b"\0" * (offset - pos))
        chunks.append(_bytes_of(arr))
        pos = offset + arr.nbytes
    _write_all(f, chunks)


# -- load: retrograd's format --------------------------------------------------------------------
def _is_count(x: Any) -> bool:
    return type(x) is int and x >= 0


def _check_entry(i: int, e: Any, data_len: int) -> None:
    if not isinstance(e, dict):
        raise _fail(f"tensor entry {i} is not an object")
    need = {"dtype", "shape", "offset", "nbytes", "crc32", "requires_grad", "kind"}
    if set(e) != need:
        raise _fail(f"tensor entry {i} has fields {sorted(e)}, expected {sorted(need)}")
    if e["dtype"] not in _DTYPES:
        raise _fail(f"tensor entry {i} has unknown dtype {e['dtype']!r}")
    shape = e["shape"]
    if not isinstance(shape, list) or not all(_is_count(s) for s in shape) or len(shape) > 64:
        raise _fail(f"tensor entry {i} has an invalid shape {shape!r}")
    if not (_is_count(e["offset"]) and _is_count(e["nbytes"]) and _is_count(e["crc32"])):
        raise _fail(f"tensor entry {i} has an invalid offset, nbytes or crc32")
    expect = math.prod(shape) * _DTYPES[e["dtype"]].itemsize
    if e["nbytes"] != expect:
        raise _fail(
            f"tensor entry {i}: nbytes is {e['nbytes']} but shape {shape} of {e['dtype']} needs "
            f"{expect}"
        )
    if e["offset"] + e["nbytes"] > data_len:
        raise _fail(
            f"tensor entry {i} (bytes {e['offset']}..{e['offset'] + e['nbytes']}) lies outside "
            f"the {data_len}-byte data section; the file is truncated or corrupt"
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
    def __init__(self, entries: list, data: memoryview, map_location: Any) -> None:
        self.entries = entries
        self.data = data
        self.map_location = map_location
        self.made: dict = {}

    def tensor(self, i: Any) -> Any:
        if type(i) is not int or not 0 <= i < len(self.entries):
            raise _fail(f"reference to tensor {i!r}, but the file has {len(self.entries)}")
        if i in self.made:
            return self.made[i]
        e = self.entries[i]
        raw = self.data[e["offset"]:e["offset"] + e["nbytes"]]
        if zlib.crc32(raw) != e["crc32"]:
            raise _fail(f"tensor entry {i} fails its checksum; the file is corrupt")
        if e["dtype"] == "bool" and bytes(raw).translate(None, b"\0\1"):
            raise _fail(f"tensor entry {i} is bool but holds bytes other than 0 and 1")
        arr = np.frombuffer(raw, dtype=_np_le(e["dtype"])).reshape(e["shape"]).copy()
        arr = arr.astype(arr.dtype.newbyteorder("="), copy=False)
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
    if header.get("version") != VERSION:
        raise _fail(f"unsupported checkpoint version {header.get('version')!r} (this retrograd "
                    f"reads version {VERSION})")
    if set(header) != {"format", "version", "data_nbytes", "tensors", "root"}:
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
    for i, e in enumerate(entries):
        _check_entry(i, e, nbytes)
    dec = _Decoder(entries, memoryview(data)[start:], map_location)
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


def _map(t: Tensor, map_location: Any) -> Any:
    if callable(map_location) and not isinstance(map_location, (dict, device)):
        out = map_location(t, "cpu")
        return t if out is None else out
    return t


# -- PyTorch's zip checkpoints -------------------------------------------------------------------
_STORAGE_DTYPES = {
    "DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool",
}


class _StorageType:
    """What the unpickler hands out for ``torch.FloatStorage`` and friends: just a dtype name."""

    __slots__ = ("dtype",)

    def __init__(self, dtype: str) -> None:
        self.dtype = dtype


class _Storage:
    """A loaded storage: a flat NumPy array of its elements."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


class _Marker:
    """Stands for a type (``torch.Tensor``, ``nn.Parameter``) that may only appear as an argument
    of ``_rebuild_from_type_v2``; it is not callable."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def _bad(msg: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(f"retrograd.load: {msg}")


def _as_dims(x: Any, what: str) -> tuple:
    if not isinstance(x, tuple) or not all(type(d) is int and d >= 0 for d in x):
        raise _bad(f"{what} must be a tuple of non-negative ints, got {x!r}")
    return x


def _check_hooks(hooks: Any) -> None:
    if not isinstance(hooks, dict) or hooks:
        raise _bad("tensors with backward hooks are not supported")


def _rebuild_tensor_v2(storage: Any, storage_offset: Any, size: Any, stride: Any,
                       requires_grad: Any, backward_hooks: Any, metadata: Any = None) -> Tensor:
    if not isinstance(storage, _Storage):
        raise _bad("_rebuild_tensor_v2 expects a storage")
    if type(storage_offset) is not int or storage_offset < 0:
        raise _bad(f"bad storage offset {storage_offset!r}")
    size = _as_dims(size, "size")
    stride = _as_dims(stride, "stride")
    if len(size) != len(stride):
        raise _bad(f"size {size} and stride {stride} differ in length")
    if not isinstance(requires_grad, bool):
        raise _bad("requires_grad must be a bool")
    _check_hooks(backward_hooks)
    if metadata is not None and not (isinstance(metadata, dict) and not metadata):
        raise _bad("tensor metadata is not supported")
    base = storage.array
    n = base.shape[0]
    if 0 in size:
        if storage_offset > n:
            raise _bad(f"storage offset {storage_offset} is past the storage's {n} elements")
        arr = np.empty(size, dtype=base.dtype)
    else:
        last = storage_offset + sum((s - 1) * st for s, st in zip(size, stride))
        if last >= n:
            raise _bad(
                f"a tensor of size {list(size)}, stride {list(stride)} and offset "
                f"{storage_offset} reaches element {last} of a storage of {n} elements"
            )
        isz = base.dtype.itemsize
        arr = np.lib.stride_tricks.as_strided(
            base[storage_offset:], shape=size, strides=tuple(st * isz for st in stride)
        )
    if requires_grad and arr.dtype.char not in FLOAT_CHARS:
        raise _bad(f"a {arr.dtype} tensor can't require grad")
    return _tensor_of(arr, requires_grad)


def _rebuild_parameter(data: Any, requires_grad: Any, backward_hooks: Any,
                       state: Any = None) -> Tensor:
    if not isinstance(data, Tensor) or not isinstance(requires_grad, bool):
        raise _bad("_rebuild_parameter expects a tensor and a bool")
    _check_hooks(backward_hooks)
    if state:
        raise _bad("parameters with extra state (attributes) are not supported")
    if requires_grad and not data.is_floating_point():
        raise _bad("an integer parameter can't require grad")
    return _tensor_of(data._data, requires_grad, parameter=True)


_REBUILDERS: set = set()


def _rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Tensor:
    if func not in _REBUILDERS or not isinstance(args, tuple):
        raise _bad("_rebuild_from_type_v2 with an unsupported rebuild function")
    if not isinstance(new_type, _Marker):
        raise _bad("_rebuild_from_type_v2 with an unsupported type")
    if state:
        raise _bad("tensors with extra state (attributes) are not supported")
    t = func(*args)
    if new_type.name == "Parameter" and type(t).__name__ != "Parameter":
        t = _tensor_of(t._data, t.requires_grad, parameter=True)
    return t


_REBUILDERS.update({_rebuild_tensor_v2, _rebuild_parameter})


def _make_size(dims: Any = ()) -> Size:
    if not isinstance(dims, (tuple, list)) or not all(type(d) is int for d in dims):
        raise _bad(f"torch.Size expects ints, got {dims!r}")
    return Size(dims)


def _make_device(kind: Any, index: Any = None) -> Any:
    if not isinstance(kind, str) or not (index is None or type(index) is int):
        raise _bad(f"torch.device expects a string, got {kind!r}")
    if kind.split(":")[0] == "cpu":
        return device("cpu")
    return kind if index is None else f"{kind}:{index}"


def _codecs_encode(s: Any, encoding: Any = "utf-8") -> bytes:
    if not isinstance(s, str) or encoding not in ("latin1", "latin-1"):
        raise _bad("_codecs.encode is only accepted for latin1 text")
    return s.encode("latin1")


def _make_set(items: Any = ()) -> set:
    if not isinstance(items, (list, tuple)):
        raise _bad("set expects a list")
    return set(items)


def _make_frozenset(items: Any = ()) -> frozenset:
    if not isinstance(items, (list, tuple)):
        raise _bad("frozenset expects a list")
    return frozenset(items)


def _make_odict(items: Any = ()) -> collections.OrderedDict:
    if not isinstance(items, (list, tuple, dict)):
        raise _bad("OrderedDict expects a list of pairs")
    return collections.OrderedDict(items)


_GLOBALS: dict = {
    ("collections", "OrderedDict"): _make_odict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
    ("torch", "Tensor"): _Marker("Tensor"),
    ("torch.nn.parameter", "Parameter"): _Marker("Parameter"),
    ("torch", "Size"): _make_size,
    ("torch", "device"): _make_device,
    ("builtins", "set"): _make_set,
    ("builtins", "frozenset"): _make_frozenset,
    ("__builtin__", "set"): _make_set,  # protocol 2 pickles use Python 2 names
    ("__builtin__", "frozenset"): _make_frozenset,
    ("_codecs", "encode"): _codecs_encode,
}
for _name, _dt in _STORAGE_DTYPES.items():
    _GLOBALS[("torch", _name)] = _StorageType(_dt)
for _d in _dtypes.ALL:
    _GLOBALS[("torch", _d.name)] = _d


class _RestrictedUnpickler(pickle._Unpickler):  # type: ignore[name-defined]
    """The pure-Python unpickler with a fixed allowlist of globals and no object building.

    ``find_class`` hands out only retrograd's own functions and markers (never an imported
    object), ``BUILD`` may only set plain attributes on an ``OrderedDict`` (PyTorch stores a
    state dict's ``_metadata`` that way), and the opcodes that instantiate classes directly
    (``INST``, ``OBJ``, ``NEWOBJ``, ``NEWOBJ_EX``) and the extension registry are refused.
    """

    dispatch = dict(pickle._Unpickler.dispatch)  # type: ignore[attr-defined]

    def __init__(self, file: IO[bytes], load_storage: Callable[[Any], _Storage]) -> None:
        super().__init__(file, encoding="utf-8")
        self._load_storage = load_storage

    def find_class(self, module: str, name: str) -> Any:
        try:
            return _GLOBALS[(module, name)]
        except (KeyError, TypeError):
            raise _bad(
                f"refusing to load global '{module}.{name}': only tensors, parameters and plain "
                "containers (dict, OrderedDict, list, tuple, set, str, bytes, numbers, None) "
                "can be loaded"
            ) from None

    def persistent_load(self, pid: Any) -> _Storage:
        return self._load_storage(pid)

    def _refuse(self) -> None:
        raise _bad("this pickle builds arbitrary objects, which retrograd refuses to load")

    def _load_build(self) -> None:
        stack = self.stack
        state = stack.pop()
        inst = stack[-1]
        if not isinstance(inst, collections.OrderedDict) or not isinstance(state, dict):
            raise _bad(f"refusing to set the state of a {type(inst).__name__}")
        for k, v in state.items():
            if not isinstance(k, str) or k.startswith("__"):
                raise _bad(f"refusing to set attribute {k!r}")
            setattr(inst, k, v)

    for _op in (pickle.INST, pickle.OBJ, pickle.NEWOBJ, pickle.NEWOBJ_EX, pickle.EXT1,
                pickle.EXT2, pickle.EXT4):
        dispatch[_op[0]] = _refuse
    dispatch[pickle.BUILD[0]] = _load_build
    del _op


def _bf16_to_f32(raw: np.ndarray) -> np.ndarray:
    """bfloat16 bits (uint16, any byte order) as a native bfloat16 array."""
    return raw.astype(np.uint16).view(_dtypes.bfloat16.np)


def _load_torch_zip(data: bytes, map_location: Any) -> Any:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        names = zf.namelist()
    except (zipfile.BadZipFile, ValueError, OSError) as e:
        raise _fail(f"not a valid zip archive ({e})") from None
    pkls = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(pkls) != 1:
        if any(n.endswith("constants.pkl") for n in names):
            raise _fail("this is a TorchScript archive, not a torch.save checkpoint")
        raise _fail("the zip archive has no single '<name>/data.pkl'; not a torch.save file")
    prefix = pkls[0][: -len("data.pkl")]
    order = "little"
    if prefix + "byteorder" in names:
        order = zf.read(prefix + "byteorder").decode("ascii", "replace").strip()
        if order not in ("little", "big"):
            raise _fail(f"unknown byte order {order!r}")
    raw_cache: dict = {}
    storages: dict = {}

    def load_storage(pid: Any) -> _Storage:
        if (not isinstance(pid, tuple) or len(pid) != 5 or pid[0] != "storage"
                or not isinstance(pid[1], _StorageType) or not isinstance(pid[2], str)
                or type(pid[4]) is not int or pid[4] < 0):
            raise _bad(f"unsupported persistent id {pid!r}")
        _, stype, key, _location, numel = pid
        name = stype.dtype
        if (key, name) in storages:
            return storages[(key, name)]
        if not key or "/" in key or "\\" in key or key.startswith("."):
            raise _bad(f"bad storage key {key!r}")
        if key not in raw_cache:
            try:
                raw_cache[key] = zf.read(prefix + "data/" + key)
            except KeyError:
                raise _bad(f"storage {key!r} is missing from the archive") from None
        raw = raw_cache[key]
        isz = 2 if name == "bfloat16" else _DTYPES[name].itemsize
        if len(raw) < numel * isz:
            raise _bad(
                f"storage {key!r} should hold {numel} elements of {name} ({numel * isz} bytes) "
                f"but has {len(raw)} bytes"
            )
        end = "<" if order == "little" else ">"
        if name == "bfloat16":
            arr = _bf16_to_f32(np.frombuffer(raw, dtype=end + "u2", count=numel))
        else:
            arr = np.frombuffer(raw, dtype=_DTYPES[name].np.newbyteorder(end), count=numel)
            arr = arr.astype(arr.dtype.newbyteorder("="))  # a writable native copy
        if name == "bool" and arr.view(np.uint8).max(initial=0) > 1:
            raise _bad(f"bool storage {key!r} holds bytes other than 0 and 1")
        storages[(key, name)] = _Storage(arr)
        return storages[(key, name)]

    with zf.open(pkls[0]) as fh:
        up = _RestrictedUnpickler(io.BytesIO(fh.read()), load_storage)
        try:
            obj = up.load()
        except pickle.UnpicklingError:
            raise
        except RecursionError:
            raise _bad("the pickle is nested too deeply") from None
        except (EOFError, IndexError, KeyError, ValueError, TypeError, AttributeError,
                struct.error) as e:
            raise _bad(f"malformed pickle in {pkls[0]} ({type(e).__name__}: {e})") from None
    return _map_all(obj, map_location)


def _map_all(obj: Any, map_location: Any) -> Any:
    if not callable(map_location) or isinstance(map_location, (dict, device)):
        return obj
    if isinstance(obj, Tensor):
        return _map(obj, map_location)
    if isinstance(obj, dict):
        for k, v in obj.items():
            obj[k] = _map_all(v, map_location)
        return obj
    if isinstance(obj, list):
        return [_map_all(v, map_location) for v in obj]
    if isinstance(obj, tuple) and not isinstance(obj, Size):
        return tuple(_map_all(v, map_location) for v in obj)
    return obj


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

    No code from the file is ever run, whatever ``weights_only`` says: retrograd's format and
    safetensors are JSON plus raw bytes, and PyTorch's pickles go through a reader that accepts
    only tensors and plain containers and raises ``pickle.UnpicklingError`` naming anything
    else. ``map_location`` may be ``None``, ``'cpu'``, a ``device``, a dict whose targets are
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
        return _load_torch_zip(data, map_location)
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
    "int32": "I32",
    "int16": "I16", "int8": "I8", "uint8": "U8", "bool": "BOOL",
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
