"""dtypes as objects, the default float dtype, and PyTorch's type promotion rules.

Each :class:`dtype` wraps one NumPy dtype. Promotion follows PyTorch, not NumPy: Python scalars
are weak, 0-dim tensors do not promote dimensioned ones of the same category, and an integer
tensor meeting a float scalar becomes the default float dtype.
"""

from __future__ import annotations

import builtins as _builtins

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "bfloat16", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "bool", "half", "float", "double", "short", "int",
    "long", "set_default_dtype", "get_default_dtype", "promote_types", "can_cast", "finfo",
]

_builtin_bool = _builtins.bool
_builtins_float = _builtins.float
_builtins_int = _builtins.int


class dtype:  # noqa: N801 - PyTorch's name
    """A tensor element type, e.g. ``retrograd.float32``.

    Beside its NumPy dtype (``np``), each dtype holds the names PyTorch's messages print for it:

    - ``scalar_name``: its ScalarType name, ``'Float'``, as in ``"abs_cpu" not implemented for
      'Bool'`` or ``expected scalar type Float but found Double``;
    - ``tensor_type``: its legacy tensor type, ``'FloatTensor'``, printed ``torch.FloatTensor``;
    - ``c_name``: its C type as the compiler names it, ``'long int'``, as in ``mask with dtype
      long int``;
    - ``cpp_name``: its C++ type as PyTorch's source spells it, ``'int64_t'``, as in ``value
      cannot be converted to type int64_t without overflow``.

    An array's names are one dict read away: ``FROM_NP[arr.dtype].scalar_name``.

    >>> import retrograd
    >>> retrograd.float32.is_floating_point, retrograd.float32.itemsize
    (True, 4)
    >>> d = retrograd.int64
    >>> d.scalar_name, d.tensor_type, d.c_name, d.cpp_name
    ('Long', 'LongTensor', 'long int', 'int64_t')
    """

    __slots__ = ("name", "np", "is_floating_point", "is_signed", "itemsize", "_kind", "_rank",
                 "scalar_name", "tensor_type", "c_name", "cpp_name")

    def __init__(self, name: str, np_dtype, kind: int, rank: int, scalar_name: str,
                 c_name: str, cpp_name: str):
        self.name = name
        self.np = np.dtype(np_dtype)
        # kind: 0 bool, 1 integer, 2 floating; rank orders dtypes within a kind.
        self._kind = kind
        self._rank = rank
        self.is_floating_point = kind == 2
        self.is_signed = kind == 2 or (kind == 1 and self.np.kind == "i")
        self.itemsize = self.np.itemsize
        self.scalar_name = scalar_name
        self.tensor_type = scalar_name + "Tensor"
        self.c_name = c_name
        self.cpp_name = cpp_name

    @property
    def is_complex(self) -> _builtin_bool:
        return False

    def __repr__(self) -> str:
        return "retrograd." + self.name

    def __reduce__(self):
        return self.name

    def to_real(self) -> dtype:
        return self


# name, NumPy type, kind, rank; then scalar_name, c_name and cpp_name (see the class docstring).
bool = dtype("bool", np.bool_, 0, 0, "Bool", "bool", "bool")  # noqa: A001 - PyTorch's name
uint8 = dtype("uint8", np.uint8, 1, 0, "Byte", "unsigned char", "uint8_t")
int8 = dtype("int8", np.int8, 1, 0, "Char", "signed char", "int8_t")
int16 = dtype("int16", np.int16, 1, 1, "Short", "short int", "int16_t")
int32 = dtype("int32", np.int32, 1, 2, "Int", "int", "int")
int64 = dtype("int64", np.int64, 1, 3, "Long", "long int", "int64_t")
# The wider unsigned types: PyTorch has them as "shell" dtypes (creation, casts, a few kernels);
# they promote only with themselves and the floating dtypes (see promote_types).
uint16 = dtype("uint16", np.uint16, 1, 1, "UInt16", "unsigned short", "uint16_t")
uint32 = dtype("uint32", np.uint32, 1, 2, "UInt32", "unsigned int", "uint32_t")
uint64 = dtype("uint64", np.uint64, 1, 3, "UInt64", "unsigned long", "uint64_t")
float16 = dtype("float16", np.float16, 2, 0, "Half", "c10::Half", "c10::Half")
# NumPy has no bfloat16: ml_dtypes (maintained with JAX) registers one with NumPy. Its arrays
# have kind 'V', not 'f': ask ``FLOAT_CHARS``/``REDUCED`` below, never ``dtype.kind``.
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, 2, 0, "BFloat16", "c10::BFloat16",
                 "c10::BFloat16")
float32 = dtype("float32", np.float32, 2, 1, "Float", "float", "float")
float64 = dtype("float64", np.float64, 2, 2, "Double", "double", "double")

half = float16
float = float32  # noqa: A001
double = float64
short = int16
int = int32  # noqa: A001
long = int64

ALL = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, uint16,
       uint32, uint64)
# The unsigned dtypes above uint8, which PyTorch promotes with no other integer or bool dtype.
WIDE_UNSIGNED = frozenset((uint16, uint32, uint64))
# NumPy dtype -> retrograd dtype; the hot path reads a tensor's dtype through this.
FROM_NP: dict = {d.np: d for d in ALL}
for _d in ALL:
    FROM_NP[_d.np.type] = _d

# The reduced-precision floats: their pointwise ops compute in float32 and round once, their
# reductions and matmuls accumulate in float32, as PyTorch's CPU kernels do.
REDUCED = frozenset((float16.np, bfloat16.np))
# One-character codes (``arr.dtype.char``) of the floating dtypes, and of those that compute
# natively (float32, float64): ``arr.dtype.char in FLOAT_CHARS`` is the cheap "is floating"
# test that also holds for bfloat16, whose NumPy kind is 'V'.
FLOAT_CHARS = "fd" + float16.np.char + bfloat16.np.char
NATIVE_FLOAT_CHARS = "fd"
REDUCED_CHARS = float16.np.char + bfloat16.np.char
# uint16/uint32/uint64 (see WIDE_UNSIGNED): PyTorch has few kernels for them, so binary ops on
# them leave the fast path (ops._apply.apply_binary) for the one that checks (ops._core).
WIDE_CHARS = "".join(d.np.char for d in WIDE_UNSIGNED)
OFF_FAST_CHARS = REDUCED_CHARS + WIDE_CHARS
F32 = float32.np


def is_float_np(np_dtype) -> _builtin_bool:
    """Whether a NumPy dtype is one of retrograd's floating dtypes (bfloat16 included).

    >>> import numpy as np
    >>> is_float_np(bfloat16.np), is_float_np(np.dtype(np.int32))
    (True, False)
    """
    return np_dtype.char in FLOAT_CHARS


_F16 = np.dtype(np.float16)


def to_reduced(arr: np.ndarray, np_dtype) -> np.ndarray:
    """``arr`` cast to a reduced float dtype as PyTorch casts: through float32 (a float64 or
    an integer rounds to float32 first, then to the reduced dtype)."""
    if arr.dtype != F32 and arr.dtype not in REDUCED:
        arr = arr.astype(F32)
    out = arr.astype(np_dtype)
    if np_dtype == _F16 and arr.dtype == F32:
        m = arr.min() if arr.size else 0
        if m != m:  # a NaN: torch's conversion (vcvtps2ph) quiets a signaling one
            bits = out.view(np.uint16)
            nan = (bits & 0x7FFF) > 0x7C00
            if (bits[nan] & 0x0200 == 0).any():
                out = out.copy()
                out.view(np.uint16)[nan] |= 0x0200
    return out


def from_numpy_dtype(np_dtype) -> dtype:
    """The retrograd dtype of a NumPy dtype, or TypeError naming what is not supported."""
    d = FROM_NP.get(np_dtype)
    if d is None:
        d = FROM_NP.get(np.dtype(np_dtype))
        if d is None:
            raise TypeError(
                f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported types "
                "are: float64, float32, float16, bfloat16, int64, int32, int16, int8, uint64, "
                "uint32, uint16, uint8, and bool."
            )
    return d


def to_dtype(d) -> dtype:
    """Accept a retrograd dtype, a NumPy dtype or a Python type (float, int, bool)."""
    if d.__class__ is dtype:
        return d
    if d is _builtins_float:
        return float64
    if d is _builtins_int:
        return int64
    if d is _builtin_bool:
        return bool
    return from_numpy_dtype(d)



_state = {"default": float32}


def get_default_dtype() -> dtype:
    """The dtype of floating tensors made from Python floats (float32 unless changed).

    >>> import retrograd
    >>> retrograd.get_default_dtype()
    retrograd.float32
    """
    return _state["default"]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (float32 or float64, as PyTorch allows).

    >>> import retrograd
    >>> retrograd.set_default_dtype(retrograd.float64)
    >>> retrograd.tensor([1.5]).dtype
    retrograd.float64
    >>> retrograd.set_default_dtype(retrograd.float32)
    """
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _state["default"] = d
    _BINARY_CACHE.clear()


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` can be cast to, by PyTorch's table.

    >>> import retrograd
    >>> retrograd.promote_types(retrograd.int64, retrograd.float16)
    retrograd.float16
    """
    a, b = to_dtype(a), to_dtype(b)
    if a is b:
        return a
    if (a in WIDE_UNSIGNED or b in WIDE_UNSIGNED) and a._kind < 2 and b._kind < 2:
        raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {a.scalar_name} and {b.scalar_name}")
    if a._kind != b._kind:
        return a if a._kind > b._kind else b
    if a._rank == 0 and b._rank == 0 and a._kind == 2:
        return float32  # float16 with bfloat16: neither holds the other
    if a._kind == 1 and (a is uint8) != (b is uint8):
        # uint8 with a signed type: the signed type if wider, else int16.
        s = b if a is uint8 else a
        return int16 if s is int8 else s
    return a if a._rank >= b._rank else b


def can_cast(from_: dtype, to: dtype) -> _builtin_bool:
    """Whether PyTorch's in-place ops may write a ``from_`` result into a ``to`` tensor.

    >>> import retrograd
    >>> retrograd.can_cast(retrograd.float32, retrograd.int64)
    False
    """
    from_, to = to_dtype(from_), to_dtype(to)
    if from_._kind > to._kind or (to is bool and from_ is not bool):
        return False
    # PyTorch allows int -> unsigned casts in this check; only the category matters.
    return True


def _combine(higher, lower):
    """Combine two promotion tiers: ``higher`` wins unless ``lower`` is of a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._kind == 2:
        return higher
    if higher is bool or lower._kind == 2:
        return promote_types(higher, lower)
    return higher


def scalar_dtype(x) -> dtype:
    """The dtype a Python scalar takes in promotion (floats take the default dtype)."""
    t = x.__class__
    if t is _builtin_bool or t is np.bool_:
        return bool
    if t is _builtins_float or (isinstance(x, np.floating)):
        return _state["default"]
    return int64


def result_type_of(dims, zeros, scalars) -> dtype:
    """Promote dimensioned tensors, 0-dim tensors and scalars, in PyTorch's three tiers."""
    r_dim = r_zero = r_wrapped = None
    for d in dims:
        r_dim = d if r_dim is None else promote_types(r_dim, d)
    for d in zeros:
        r_zero = d if r_zero is None else promote_types(r_zero, d)
    for s in scalars:
        d = scalar_dtype(s)
        r_wrapped = d if r_wrapped is None else promote_types(r_wrapped, d)
    return _combine(r_dim, _combine(r_zero, r_wrapped))


_BINARY_CACHE: dict = {}


def binary_result(da: dtype, a_zero: _builtin_bool, db, b_zero: _builtin_bool) -> dtype:
    """Cached promotion of two operands; ``db`` may be a Python scalar type (weak)."""
    key = (da, a_zero, db, b_zero)
    r = _BINARY_CACHE.get(key)
    if r is None:
        if db.__class__ is dtype:
            dims = [d for d, z in ((da, a_zero), (db, b_zero)) if not z]
            zeros = [d for d, z in ((da, a_zero), (db, b_zero)) if z]
            r = result_type_of(dims, zeros, ())
        else:
            sample = db()
            r = result_type_of(() if a_zero else (da,), (da,) if a_zero else (), (sample,))
        _BINARY_CACHE[key] = r
    return r


class finfo:  # noqa: N801 - PyTorch's name
    """Machine limits of a floating dtype (the default dtype when called without one).

    >>> import retrograd
    >>> f = retrograd.finfo(retrograd.bfloat16)
    >>> f.bits, f.eps, f.resolution
    (16, 0.0078125, 0.01)
    >>> retrograd.finfo(retrograd.float16).max
    65504.0
    """

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None):  # noqa: A002 - PyTorch's argument name
        d = get_default_dtype() if type is None else to_dtype(type)
        if not d.is_floating_point:
            raise TypeError(
                "torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                "'torch.finfo'"
            )
        info = ml_dtypes.finfo(d.np) if d is bfloat16 else np.finfo(d.np)
        self.bits = d.itemsize * 8
        self.eps = _builtins_float(info.eps)
        self.max = _builtins_float(info.max)
        self.min = _builtins_float(info.min)
        self.tiny = self.smallest_normal = _builtins_float(info.smallest_normal)
        self.resolution = _builtins_float(10.0 ** -info.precision)
        self.dtype = d.name

    def __eq__(self, other) -> _builtin_bool:
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self) -> _builtins_int:
        return hash(self.dtype)

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")
