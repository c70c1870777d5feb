"""PyTorch's zip checkpoint format (what ``torch.save`` writes): reading it without running
code, reading it with pickle's full machinery when the caller opts in, and writing it for the
objects retrograd's own format cannot hold (a whole ``nn.Module``).

A ``torch.save`` file is a zip archive holding ``<name>/data.pkl`` (a pickle) and one entry
``<name>/data/<key>`` per storage, which the pickle names by persistent id
``("storage", <storage type>, key, location, numel)``.

By default (``weights_only=True``) the pickle goes through ``_RestrictedUnpickler``: it resolves
only a fixed list of globals (tensor and parameter rebuilding, storage types, dtypes,
``torch.Size``, ``torch.device``, ``OrderedDict``, ``set``), each mapped to retrograd's own code,
plus the globals the user allowlisted with ``add_safe_globals``/``safe_globals``; it refuses
everything else with PyTorch's ``pickle.UnpicklingError``, and builds objects (``NEWOBJ``,
``BUILD``) only of allowlisted classes. PyTorch's code is never imported. Only
``weights_only=False`` runs pickle's full machinery (``find_class`` imports whatever the file
names), which can run arbitrary code: as in PyTorch, only for files from a trusted source.

Files written here use PyTorch's names for tensors, parameters, storages, dtypes and sizes
(``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``, ...): a file holding only those
and plain containers is a valid ``torch.save`` file.
"""

from __future__ import annotations

import _compat_pickle
import collections
import contextlib
import io
import pickle
import struct
import sys
import zipfile
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from . import _dtypes
from ._dtypes import FLOAT_CHARS
from ._tensor import Size, Tensor, device
from .ops.strided import geometry

_DTYPES = {d.name: d for d in _dtypes.ALL}

class CheckpointError(RuntimeError):
    """A checkpoint that is malformed, truncated, or holds something retrograd will not load."""


def _fail(msg: str) -> CheckpointError:
    return CheckpointError(f"retrograd.load: {msg}")


def _le_contiguous(arr: np.ndarray) -> np.ndarray:
    if not arr.flags.c_contiguous:
        arr = arr.copy(order="C")  # (np.ascontiguousarray would turn 0-d into 1-d)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return arr


def _bytes_of(arr: np.ndarray) -> memoryview:
    """A contiguous array's bytes, without copying."""
    return memoryview(arr.reshape(-1).view(np.uint8))


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


class _Untyped(_Storage):
    """An untyped storage (its bytes, little-endian): PyTorch writes uint16, uint32 and uint64
    tensors over one, with ``_rebuild_tensor_v3`` naming the dtype."""


_UNTYPED = _StorageType("untyped")  # torch.storage.UntypedStorage


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


def _rebuild_tensor_v3(storage: Any, storage_offset: Any, size: Any, stride: Any,
                       requires_grad: Any, backward_hooks: Any, dtype: Any,
                       metadata: Any = None) -> Tensor:
    if not isinstance(storage, _Storage) or not isinstance(dtype, _dtypes.dtype):
        raise _bad("_rebuild_tensor_v3 expects a storage and a dtype")
    raw = storage.array
    if raw.dtype != np.uint8:
        raise _bad("_rebuild_tensor_v3 expects an untyped storage")
    isz = dtype.itemsize
    # (no copy on a little-endian host: tensors over one storage keep sharing it)
    le = dtype.np if sys.byteorder == "little" else dtype.np.newbyteorder("<")
    arr = raw[: raw.size // isz * isz].view(le).astype(dtype.np, copy=False)
    return _rebuild_tensor_v2(_Storage(arr), storage_offset, size, stride, requires_grad,
                              backward_hooks, metadata)


_REBUILDERS.update({_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter})


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
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch.storage", "UntypedStorage"): _UNTYPED,
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


# -- what a weights-only load may resolve besides tensors: the user's allowlist ----------------
_SAFE: list = []  # what add_safe_globals was given, in order


def _allowed() -> dict:
    """The user's allowlist as ``{"module.qualname": object}``, as PyTorch keys it."""
    out = {}
    for g in _SAFE:
        if isinstance(g, tuple):
            obj, path = g
        else:
            obj, path = g, f"{g.__module__}.{g.__qualname__}"
        out[path] = obj
    return out


def _check_safe(globs: Any) -> list:
    if not isinstance(globs, (list, tuple, set)):
        raise TypeError(f"expected a list of globals, but got {type(globs).__name__}")
    for g in globs:
        if isinstance(g, tuple):
            if len(g) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full path), "
                                 f"but got tuple of length: {len(g)}")
            if type(g[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full path, "
                                f"but got: {type(g[1])}")
    return list(globs)


def add_safe_globals(safe_globals: list) -> None:
    """Allow ``load(..., weights_only=True)`` to resolve these globals: functions in the list
    may be called while unpickling, classes instantiated and have their state set.

    Each item is a function or class (named in the file as ``module.qualname``), or a tuple
    ``(object, "full.path")`` naming it as the file does. Allowlist only code you trust.

    >>> import retrograd as torch
    >>> class Config:
    ...     pass
    >>> torch.serialization.add_safe_globals([Config])
    >>> Config in torch.serialization.get_safe_globals()
    True
    >>> torch.serialization.clear_safe_globals()
    """
    _SAFE.extend(g for g in _check_safe(safe_globals) if g not in _SAFE)


def get_safe_globals() -> list:
    """The globals ``add_safe_globals`` allowlisted (a copy).

    >>> import retrograd as torch
    >>> torch.serialization.get_safe_globals()
    []
    """
    return list(_SAFE)


def clear_safe_globals() -> None:
    """Forget every global ``add_safe_globals`` allowlisted.

    >>> import retrograd as torch
    >>> torch.serialization.add_safe_globals([dict]); torch.serialization.clear_safe_globals()
    >>> torch.serialization.get_safe_globals()
    []
    """
    _SAFE.clear()


class safe_globals(contextlib.AbstractContextManager):
    """A context manager that allowlists ``safe_globals`` (as ``add_safe_globals``) inside its
    block only.

    >>> import retrograd as torch
    >>> with torch.serialization.safe_globals([dict]):
    ...     dict in torch.serialization.get_safe_globals()
    True
    >>> torch.serialization.get_safe_globals()
    []
    """

    def __init__(self, safe_globals: list) -> None:
        self.safe_globals = _check_safe(safe_globals)

    def __enter__(self) -> None:
        self._saved = list(_SAFE)
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc: Any) -> None:
        _SAFE[:] = self._saved


# PyTorch's wording for a weights-only refusal (``torch.load``'s, which wraps its unpickler's).
_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source."
)
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default "
    "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)


def _refused(message: str, unsafe_global: bool = False) -> pickle.UnpicklingError:
    if unsafe_global:
        head = (
            "Weights only load failed. This file can still be loaded, to do so you have two "
            "options, \033[1mdo those steps only if you trust the source of the checkpoint"
            f"\033[0m. \n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
            "`weights_only=True` please check the recommended steps in the following error "
            "message.\n\tWeightsUnpickler error: " + message
        )
    else:
        head = (
            f"Weights only load failed. {_UNSAFE_MESSAGE}\nPlease file an issue with the "
            "following so that we can make `weights_only=True` compatible with your use case: "
            "WeightsUnpickler error: \n\n" + message
        )
    return pickle.UnpicklingError(head + _DOCS_MESSAGE)


def _py3_name(module: str, name: str) -> str:
    """The ``module.name`` a protocol-2 pickle's global means in Python 3, written as PyTorch
    writes it in messages (builtins without their module)."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    return name if module == "builtins" else f"{module}.{name}"


class _RestrictedUnpickler(pickle._Unpickler):  # type: ignore[name-defined]
    """The pure-Python unpickler of a weights-only load.

    ``find_class`` hands out retrograd's own functions and markers for PyTorch's tensor names
    (never an imported object), or an object the user allowlisted; ``NEWOBJ`` instantiates
    only allowlisted classes and ``BUILD`` sets state only on them (and plain attributes on an
    ``OrderedDict``: PyTorch stores a state dict's ``_metadata`` that way); ``INST``, ``OBJ``,
    ``NEWOBJ_EX`` and the extension registry are refused.
    """

    dispatch = dict(pickle._Unpickler.dispatch)  # type: ignore[attr-defined]

    def __init__(self, file: IO[bytes], load_storage: Callable[[Any], _Storage]) -> None:
        super().__init__(file, encoding="utf-8")
        self._load_storage = load_storage
        self._user = _allowed()
        self._classes = {id(v) for v in self._user.values() if isinstance(v, type)}

    def find_class(self, module: str, name: str) -> Any:
        try:
            return _GLOBALS[(module, name)]
        except (KeyError, TypeError):
            pass
        path = _py3_name(str(module), str(name))
        full = path if "." in path else f"builtins.{path}"
        if full in self._user or path in self._user:
            return self._user.get(full, self._user.get(path))
        raise _refused(
            f"Unsupported global: GLOBAL {path} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{path}])` or the "
            f"`torch.serialization.safe_globals([{path}])` context manager to allowlist this "
            "global if you trust this class/function.", unsafe_global=True)

    def persistent_load(self, pid: Any) -> _Storage:
        return self._load_storage(pid)

    def _refuse(self) -> None:
        raise _refused("this pickle builds objects with an opcode retrograd does not load "
                       "(INST, OBJ, NEWOBJ_EX or the extension registry)")

    def _load_newobj(self) -> None:
        args = self.stack.pop()
        cls = self.stack.pop()
        if id(cls) not in self._classes or not isinstance(args, tuple):
            raise _refused("Can only create new object for nn.Parameter or classes allowlisted "
                           f"via `add_safe_globals` but got {cls}")
        self.append(cls.__new__(cls, *args))

    def _load_build(self) -> None:
        stack = self.stack
        state = stack.pop()
        inst = stack[-1]
        if id(type(inst)) in self._classes:
            # As pickle's BUILD does, for a class the user trusts.
            setstate = getattr(inst, "__setstate__", None)
            if setstate is not None:
                setstate(state)
                return
            slotstate = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            if state:
                inst.__dict__.update(state)
            for k, v in (slotstate or {}).items():
                setattr(inst, k, v)
            return
        if not isinstance(inst, collections.OrderedDict) or not isinstance(state, dict):
            raise _refused("Can only build Tensor, Parameter, OrderedDict or types allowlisted "
                           f"via `add_safe_globals`, but got {type(inst)}")
        for k, v in state.items():
            if not isinstance(k, str) or k.startswith("__"):
                raise _bad(f"refusing to set attribute {k!r}")
            setattr(inst, k, v)

    for _op in (pickle.INST, pickle.OBJ, pickle.NEWOBJ_EX, pickle.EXT1, pickle.EXT2,
                pickle.EXT4):
        dispatch[_op[0]] = _refuse
    dispatch[pickle.NEWOBJ[0]] = _load_newobj
    dispatch[pickle.BUILD[0]] = _load_build
    del _op


class _FullUnpickler(pickle.Unpickler):
    """The unpickler of ``weights_only=False``: pickle's own, which imports and calls whatever
    the file names. PyTorch's tensor names still map to retrograd's code, and a file that needs
    another part of PyTorch (a torch ``nn.Module``) is refused rather than importing torch."""

    def __init__(self, file: IO[bytes], load_storage: Callable[[Any], _Storage]) -> None:
        super().__init__(file, encoding="utf-8")
        self._load_storage = load_storage

    def find_class(self, module: str, name: str) -> Any:
        found = _GLOBALS.get((module, name))
        if found is not None:
            return found
        if module == "torch" or module.startswith("torch."):
            raise _bad(f"this file needs PyTorch's '{module}.{name}', which retrograd does not "
                       "provide; load a state_dict instead")
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> _Storage:
        return self._load_storage(pid)


def _bf16_to_f32(raw: np.ndarray) -> np.ndarray:
    """bfloat16 bits (uint16, any byte order) as a native bfloat16 array."""
    return raw.astype(np.uint16).view(_dtypes.bfloat16.np)


def _load_torch_zip(data: bytes, map_location: Any, weights_only: bool = True) -> Any:
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
        if name == "untyped":  # bytes; _rebuild_tensor_v3 reads them as its dtype
            if len(raw) < numel:
                raise _bad(f"storage {key!r} should hold {numel} bytes but has {len(raw)}")
            storages[(key, name)] = _Storage(np.frombuffer(raw, np.uint8, count=numel).copy())
            return storages[(key, name)]
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
        payload = io.BytesIO(fh.read())
    if not weights_only:
        return _map_all(_FullUnpickler(payload, load_storage).load(), map_location)
    up = _RestrictedUnpickler(payload, load_storage)
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



# -- writing -------------------------------------------------------------------------------------
# The objects that a file names by PyTorch's globals: written as ``GLOBAL torch... name``
# without importing torch (the loader maps the same names back to them).
_FORGED: dict = {}


def _forge() -> None:
    named = {
        ("torch._utils", "_rebuild_tensor_v2"), ("torch._utils", "_rebuild_tensor_v3"),
        ("torch._utils", "_rebuild_parameter"),
        ("torch", "Size"), ("torch", "device"),
    }
    for key, obj in _GLOBALS.items():
        if key in named or isinstance(obj, (_StorageType, _dtypes.dtype)):
            _FORGED[id(obj)] = key


_forge()
_STORAGE_OF = {st.dtype: st for st in _GLOBALS.values() if isinstance(st, _StorageType)}
_WIDE = frozenset(d.np for d in _dtypes.WIDE_UNSIGNED)


class _Pickler(pickle._Pickler):  # type: ignore[name-defined]
    """Pickle's pure-Python pickler, writing tensors as PyTorch does: a ``_rebuild_tensor_v2``
    call over a storage that is stored as its own zip entry (a persistent id)."""

    def __init__(self, file: IO[bytes], protocol: int) -> None:
        super().__init__(file, protocol)
        self.storages: list = []
        self.keys: dict = {}  # id(_Storage) -> its key
        self.by_root: dict = {}  # (id(storage array), dtype) -> (_Storage, storage array)

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is not _Storage and type(obj) is not _Untyped:
            return None
        key = self.keys.get(id(obj))
        if key is None:
            key = self.keys[id(obj)] = str(len(self.storages))
            self.storages.append(obj.array)
        st = _UNTYPED if type(obj) is _Untyped else \
            _STORAGE_OF[_dtypes.FROM_NP[obj.array.dtype].name]
        return ("storage", st, key, "cpu", obj.array.size)

    def _storage(self, arr: np.ndarray) -> tuple:
        """``(storage, storage offset, strides)`` for ``arr``: its whole storage, shared by
        every tensor saved over it, as torch.save writes (a contiguous copy of its own where
        NumPy's layout has no PyTorch strides, or its bytes are big-endian)."""
        geo = geometry(arr) if arr.dtype.byteorder != ">" and sys.byteorder == "little" \
            else None
        if geo is None:
            arr = _le_contiguous(arr)
            geo = (arr, tuple(s // arr.itemsize for s in arr.strides), 0)
        root, strides, off = geo
        key = (id(root), arr.dtype)
        hit = self.by_root.get(key)
        if hit is None:
            mem = np.ndarray((root.nbytes,), np.uint8, buffer=root)
            if arr.dtype in _WIDE:  # PyTorch's layout for them: bytes, and the dtype
                st = _Untyped(mem)
            else:
                st = _Storage(mem[: mem.size // arr.itemsize * arr.itemsize].view(
                    arr.dtype.newbyteorder("=")))
            hit = self.by_root[key] = (st, root)  # (holds root: ids stay unique)
        return hit[0], off, strides

    def reducer_override(self, obj: Any) -> Any:
        if id(obj) in _FORGED:
            return _FORGED[id(obj)][1]  # a name: pickle calls save_global
        if isinstance(obj, Tensor):
            rg = obj.requires_grad
            if type(obj).__name__ == "Parameter":
                return (_rebuild_parameter, (_tensor_of(obj._data), rg, collections.OrderedDict()))
            arr = obj._data
            st, off, strides = self._storage(arr)
            if type(st) is _Untyped:
                return (_rebuild_tensor_v3, (st, off, tuple(arr.shape), strides, rg,
                                             collections.OrderedDict(), obj.dtype))
            return (_rebuild_tensor_v2, (st, off, tuple(arr.shape), strides,
                                         rg, collections.OrderedDict()))
        if isinstance(obj, Size):
            return (_make_size, (tuple(obj),))
        if isinstance(obj, device):
            return (_make_device, ("cpu",))
        return NotImplemented

    def save_global(self, obj: Any, name: str | None = None) -> None:
        key = _FORGED.get(id(obj))
        if key is None:
            super().save_global(obj, name)
            return
        self.write(pickle.GLOBAL + f"{key[0]}\n{key[1]}\n".encode())
        self.memoize(obj)


def save_torch_zip(obj: Any, protocol: int = 2) -> bytes:
    """``obj`` pickled in ``torch.save``'s zip layout, as bytes."""
    out = io.BytesIO()
    pk = _Pickler(out, protocol)
    pk.dump(obj)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("archive/data.pkl", out.getvalue())
        zf.writestr("archive/byteorder", "little")
        for key, arr in enumerate(pk.storages):
            zf.writestr(f"archive/data/{key}", _bytes_of(_le_contiguous(arr)).tobytes())
        zf.writestr("archive/version", "3\n")
    return buf.getvalue()
