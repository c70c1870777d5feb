"""What every op shares: turning arguments into arrays, PyTorch's promotion, and the node.

An op reads as: arrays in (``operands``), NumPy computes, and if recording is on and an input
requires grad, a node of the op's Backward class is attached (``record``) with one edge per input
and whatever its formula needs saved.
"""

from __future__ import annotations

import dis
import os
import sys

import numpy as np

from .. import _dtypes
from .._dtypes import F32, FLOAT_CHARS, FROM_NP, REDUCED, WIDE_CHARS, binary_result, to_reduced
from .._sleef import lookup
from .._tensor import Tensor, edge, make

ndarray = np.ndarray
asarray = np.asarray
NONE_EDGE = (None, 0)
_SCALARS = (int, float, bool)


def c_order(a: np.ndarray) -> np.ndarray:
    """``a`` in C order (a copy only when it is not): the layout PyTorch gives the results of
    ops that allocate their output contiguous (scans, cat, softmax, roll, masked_fill...),
    where NumPy would keep a transposed input's layout."""
    return a if a.flags.c_contiguous else a.copy(order="C")


def default_float():
    return _dtypes.get_default_dtype().np


def as_tensor_arg(x) -> Tensor:
    """A Tensor from an op argument that may be a number, a NumPy array or a list."""
    if isinstance(x, Tensor):
        return x
    from .._creation import tensor

    return tensor(x)


_C_INT_NAMES = {"B": "uint8_t", "b": "int8_t", "h": "int16_t", "i": "int", "l": "int64_t",
                "q": "int64_t"}


def _c_type_name(dt) -> str:
    """The tensor type PyTorch's C++ errors print (bool and bfloat16 have no legacy name)."""
    name = dt.scalar_name
    return f"CPU{name}Type" if name in ("Bool", "BFloat16") else f"torch.{dt.tensor_type}"


def checked_scalar(v, dt: np.dtype):
    """A Python number written into an array of dtype ``dt`` as PyTorch converts it
    (``c10::checked_convert``): an integer dtype refuses NaN, infinities and values out of its
    range (a negative int into an unsigned dtype wraps, as two's complement), float32 refuses
    finite values beyond its range; otherwise the number itself.

    >>> checked_scalar(-129, np.dtype(np.uint8)), checked_scalar(1.5, np.dtype(np.float16))
    (127, 1.5)
    """
    c = v.__class__
    if c is bool or (c is not int and c is not float):
        return v
    kind = dt.kind
    if kind in "iu":
        info = np.iinfo(dt)
        if c is float:
            bad = v != v or v < info.min or v > info.max
        else:
            bad = v > info.max or (v < info.min and not (kind == "u" and -v <= info.max))
            if not bad and v < 0 and kind == "u":
                return v % (int(info.max) + 1)
        if bad:
            raise RuntimeError(f"value cannot be converted to type {_C_INT_NAMES[dt.char]} "
                               "without overflow")
    elif dt.char == "f" and c is float and abs(v) > 3.4028234663852886e38 and v - v == 0:
        raise RuntimeError("value cannot be converted to type float without overflow")
    return v


def scalar_value(b):
    """A Python number from a number-like argument, or None if it is not one."""
    t = b.__class__
    if t is float or t is int or t is bool:
        return b
    if isinstance(b, np.generic):
        return b.item()
    return None


def operands(a: Tensor, b):
    """The arrays for a binary op, promoted as PyTorch promotes; ``b`` may stay a weak scalar."""
    ad = a._data
    if isinstance(b, Tensor):
        bd = b._data
        if ad.dtype is not bd.dtype and ad.dtype != bd.dtype:
            rt = binary_result(FROM_NP[ad.dtype], ad.ndim == 0, FROM_NP[bd.dtype],
                               bd.ndim == 0).np
            if rt in REDUCED:  # through float32, as PyTorch converts
                return (ad if ad.dtype == rt else to_reduced(ad, rt),
                        bd if bd.dtype == rt else to_reduced(bd, rt))
            if ad.dtype != rt:
                ad = ad.astype(rt)
            if bd.dtype != rt:
                bd = bd.astype(rt)
        return ad, bd
    if b.__class__ is float:
        if ad.dtype.char not in FLOAT_CHARS:
            ad = ad.astype(default_float())
        return ad, scalar_array(b, ad.dtype)
    if b.__class__ is int or b.__class__ is bool:
        if ad.dtype.char in FLOAT_CHARS:
            return ad, scalar_array(b, ad.dtype)
        kind = ad.dtype.kind
        if b.__class__ is int:
            if kind == "b":
                ad = ad.astype(np.int64)
            else:
                lo, hi = _INT_RANGE[ad.dtype.char]
                if not lo <= b <= hi:
                    # PyTorch wraps an out-of-range number into the tensor's dtype.
                    b = np.array(b & 0xFFFFFFFFFFFFFFFF, dtype=np.uint64).astype(ad.dtype)
        return ad, b
    return operands(a, _coerce(b))


_INT_RANGE = {np.dtype(t).char: (int(np.iinfo(t).min), int(np.iinfo(t).max))
              for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                        np.uint64)}
_SCALARS_CACHE: dict = {}
_F16 = np.dtype(np.float16)


# Binary ops whose CPU kernel keeps a Python scalar in float32 with a reduced-precision tensor
# (the others round the scalar to the tensor's dtype first): measured against PyTorch.
_SCALAR_IN_F32 = frozenset(("MulBackward0", "DivBackward0", "DivModeBackward"))


# The kernels PyTorch lacks for uint16/uint32/uint64, by op (grad_fn or function name): their
# messages name the kernel (``"add_stub" not implemented for 'UInt16'``).
WIDE_MISSING = {
    "AddBackward0": "add_stub", "SubBackward0": "add_stub", "RsubBackward1": "add_stub",
    "RemainderBackward1": "remainder_cpu", "RemainderBackward0": "remainder_cpu",
    "FmodBackward1": "fmod_cpu", "FmodBackward0": "fmod_cpu", "PowBackward1": "pow",
    "PowBackward0": "pow", "MaximumBackward0": "maximum_cpu", "MinimumBackward0": "minimum_cpu",
    "FmaxBackward0": "maximum_cpu", "FminBackward0": "minimum_cpu", "IgammaBackward0": "igamma_cpu",
    "less": "lt_cpu", "less_equal": "le_cpu", "greater": "gt_cpu", "greater_equal": "ge_cpu",
    "bitwise_left_shift": "lshift_cpu", "bitwise_right_shift": "rshift_cpu", "neg": "neg_cpu",
    "abs": "abs_cpu", "sign": "sign_cpu", "bitwise_not": "bitwise_not_cpu",
    "floor_divide": "div_floor_cpu", "DotBackward0": "dot", "MvBackward0": "addmv_impl_cpu",
    "MmBackward0": "addmm_impl_cpu_", "BmmBackward0": "bmm",
}


def check_wide(op: str, np_dtype) -> None:
    """PyTorch's NotImplementedError for an op it has no uint16/uint32/uint64 kernel for."""
    kernel = WIDE_MISSING.get(op)
    if kernel is not None:
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{FROM_NP[np.dtype(np_dtype)].scalar_name}\'')


# Binary ops whose bfloat16 kernel converts its float32 results in vector steps (checked with
# torch: NaN bits 0xFFFF there); a scalar-only kernel (xlogy, fmax) gives 0x7FC0 everywhere.
_VECTOR_NANS = frozenset((
    "AddBackward0", "AddBackward1", "SubBackward0", "SubBackward1", "MulBackward0",
    "MulBackward1", "DivBackward0", "DivBackward1", "DivModeBackward", "PowBackward0",
    "PowBackward1", "Atan2Backward0", "HypotBackward0", "LogaddexpBackward0",
    "Logaddexp2Backward0", "TanhBackwardBackward0"))
_SCALAR_NANS = frozenset(("XlogyBackward0", "XlogyBackward1", "XlogyBackward2"))


def _has_nan(a: np.ndarray) -> bool:
    m = a.min() if a.size else 0  # NaN if any: one pass, no temporary array
    return m != m


def reduced_binary(P, fwd, a: Tensor, b):
    """A binary pointwise op off the fast path: operands promoted as PyTorch promotes, and
    a reduced-precision result (float16, bfloat16) computed in float32 and rounded once, as
    PyTorch's CPU kernels do; an op whose kernel rounds otherwise declares it as ``P.reduced``
    (a function of the two arrays, in the dtype). Returns the (promoted) operand arrays and
    the result."""
    ad, bd = operands(a, b)
    rd = ad.dtype
    if rd not in REDUCED:
        if rd.char in WIDE_CHARS:
            check_wide(P._name, rd)
        return ad, bd, fwd(ad, bd)
    if bd.__class__ is not ndarray:
        bd = np.asarray(bd, rd)
    f = getattr(P, "reduced", None)
    wide = None
    if f is not None and bd.dtype == rd:  # the op's own float16/bfloat16 kernel
        out = f(ad, bd)
    else:
        if bd.ndim == 0 and P.__name__ in _SCALAR_IN_F32 and (
                not isinstance(b, Tensor) or b._data.dtype != rd):
            # PyTorch's kernel reads a one-element second operand (a number, or a 0-d tensor of
            # another dtype) at its original value in float32, not rounded to the result's dtype.
            # A number is saved so, too: the backward's g * b then rounds once, as PyTorch's.
            v = b._data.item() if isinstance(b, Tensor) else scalar_value(b)
            bd = scalar_array(float(v), F32)
            out = fwd(ad.astype(F32), bd)
        else:
            out = fwd(ad.astype(F32), bd.astype(F32))
        if out.__class__ is not ndarray:
            out = asarray(out)
        if out.dtype == F32:
            wide, out = out, out.astype(rd)
    if out.dtype == _dtypes.bfloat16.np and (wide is None or _has_nan(wide)):
        if P.__name__ in _VECTOR_NANS:
            out = bf16_nans(out, ad, bd)
        elif P.__name__ in _SCALAR_NANS:
            out = bf16_nans(out)
    elif out.dtype == _F16 and P.__name__ == "XlogyBackward0":
        out = f16_xlogy_nans(out, ad, bd)
    elif out.dtype == _F16 and getattr(P, "f16_nans", None) is not None:
        out = f16_binary_nans(out, ad, bd, *P.f16_nans)
    return ad, bd, out


def scalar_loop(shape: tuple, *operands: np.ndarray):
    """The flat indices (C order) of a pointwise result of ``shape`` that PyTorch's CPU loop
    computes in its scalar code rather than in 32-element vector steps (on one thread), or
    ``None``. TensorIterator coalesces the innermost dimensions while every operand's strides
    (0 where it broadcasts) continue one another; each row of that inner size ends in a
    scalar tail of ``size % 32`` elements. Operands laid out otherwise than in C order go
    through ``strided_loop``.

    >>> import numpy as np
    >>> scalar_loop((80,), np.zeros(80), np.zeros(()))
    slice(64, 80, None)
    >>> scalar_loop((3, 40), np.zeros((3, 40)), np.zeros(40))[:10]
    array([32, 33, 34, 35, 36, 37, 38, 39, 72, 73])
    """
    same = True
    for o in operands:
        if not o.flags.c_contiguous:
            return strided_loop(shape, *operands)
        same = same and o.shape == shape
    if same:  # one row: the tail of the whole
        n = operands[0].size if operands else 1
        return slice(n - n % 32, n) if n % 32 else None
    strides = []
    for o in operands:  # element strides per dimension, innermost first; 0 where broadcast
        st, acc, oshape = [], 1, o.shape
        for k in range(1, len(shape) + 1):
            size = oshape[-k] if k <= len(oshape) else 1
            st.append(acc if size != 1 else 0)
            acc *= size
        strides.append(st)
    inner, first = 1, [0] * len(operands)
    for k in range(len(shape)):
        size = shape[-1 - k]
        if inner == 1:
            inner, first = size, [st[k] for st in strides]
        elif size != 1:
            if any(inner * f != st[k] for f, st in zip(first, strides)):
                break
            inner *= size
    tail = inner % 32
    if not tail:
        return None
    n = int(np.prod(shape))
    if inner == n:
        return slice(n - tail, n)
    return (np.arange(n // inner)[:, None] * inner + np.arange(inner - tail, inner)).reshape(-1)


def _swap(strides, sizes, d0: int, d1: int) -> int:
    # TensorIteratorBase::reorder_dimensions's should_swap: the first operand whose strides
    # of the two dimensions differ (neither broadcast) orders them; equal strides put the
    # smaller size first.
    for st in strides:
        s0, s1 = st[d0], st[d1]
        if s0 == 0 or s1 == 0:
            continue
        if s0 != s1:
            return -1 if s0 < s1 else 1
        if sizes[d0] > sizes[d1]:
            return 1
    return 0


def strided_loop(shape: tuple, *operands: np.ndarray):
    """``scalar_loop`` for operands of any strides (transposed, sliced, expanded), as PyTorch
    lays out a new result: TensorIterator orders the dimensions by the operands' strides
    (``reorder_dimensions``), the result dense in that order, and coalesces those that
    continue one another (``coalesce_dimensions``). The loop (aten/src/ATen/native/cpu/
    Loops.h, ``VectorizedLoop2d``) takes its 32-element vector steps on a row of that inner
    size only when every operand steps by one element there, or one of them by none;
    otherwise its ``basic_loop`` computes every element in scalar code.

    >>> import numpy as np
    >>> strided_loop((4, 40), np.zeros((40, 4)).T, np.zeros((4, 40)))  # mixed: all scalar
    slice(0, 160, None)
    >>> strided_loop((70, 4), np.zeros((4, 70)).T)[:4]  # alone: its memory order, one tail
    array([187, 191, 195, 199])
    """
    inner, row, perm = _iteration(shape, operands)
    n = int(np.prod(shape))
    vector = all(s == 1 for s in inner) or (
        inner.count(0) == 1 and all(s in (0, 1) for s in inner))
    if not vector:
        return slice(0, n)
    tail = row % 32
    if not tail:
        return None
    nd = len(shape)
    order = np.arange(n).reshape(shape).transpose([nd - 1 - p for p in reversed(perm)])
    return order.reshape(-1, row)[:, row - tail:].reshape(-1)


def _iteration(shape: tuple, operands) -> tuple:
    """TensorIterator's view of a pointwise loop: (each operand's stride along a row, the
    row's size, the order of the dimensions, innermost first)."""
    nd = len(shape)
    sizes = shape[::-1]  # innermost first, as TensorIterator numbers dimensions
    strides = [[s // o.itemsize for s in np.broadcast_to(o, shape).strides[::-1]]
               for o in operands]
    perm = list(range(nd))
    for i in range(1, nd):  # TensorIterator's insertion sort, ambiguous comparisons skipped
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = _swap(strides, sizes, perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    isz = [sizes[p] for p in perm]
    ist = [[st[p] for p in perm] for st in strides]
    prev = 0
    for d in range(1, nd):  # coalesce_dimensions (the new result is dense in this order)
        if isz[prev] == 1 or isz[d] == 1 or all(isz[prev] * st[prev] == st[d] for st in ist):
            if isz[prev] == 1:
                for st in ist:
                    st[prev] = st[d]
            isz[prev] *= isz[d]
        else:
            prev += 1
            for st in ist:
                st[prev] = st[d]
            isz[prev] = isz[d]
    row = isz[0] if nd else 1
    inner = [st[0] for st in ist] if nd else [0] * len(operands)
    return inner, row, perm


def put_tail(out: np.ndarray, tail, fn, *arrays) -> np.ndarray:
    """``out`` (C-contiguous, copied if need be) with the elements at the flat indices
    ``tail`` (``scalar_loop``'s) replaced by ``fn`` of the arrays' elements there (each taken
    in C order, broadcast to ``out``'s shape).

    >>> import numpy as np
    >>> put_tail(np.zeros((2, 2)), [1, 2], lambda x: x + 1, np.ones(2))
    array([[0., 2.],
           [2., 0.]])
    """
    if tail is None:
        return out
    if not out.flags.c_contiguous or not out.flags.writeable:
        out = np.array(out, order="C")
    shape = out.shape
    out.reshape(-1)[tail] = fn(*(np.broadcast_to(a, shape).reshape(-1)[tail] for a in arrays))
    return out


def bf16_nans(out: np.ndarray, *operands: np.ndarray, vector: bool = False) -> np.ndarray:
    """A bfloat16 result computed in float32 with its NaNs' bits as torch's loop leaves them:
    0xFFFF where the vector steps convert (``cvtfp32_bf16`` blends in all ones), 0x7FC0 in the
    scalar loop (``c10::BFloat16``'s rounding), whatever the NaN's sign (``scalar_loop`` of
    the operands as laid out; with none, a kernel with no vector steps: all 0x7FC0; ``vector``:
    one that converts even its tails in vector steps, ``vml``'s: all 0xFFFF).

    >>> import ml_dtypes
    >>> x = np.full(40, np.nan, ml_dtypes.bfloat16)
    >>> [hex(v) for v in bf16_nans(x, x).view(np.uint16)[[0, 31, 32, 39]]]
    ['0xffff', '0xffff', '0x7fc0', '0x7fc0']
    """
    bits = out.view(np.uint16) if out.flags.c_contiguous else None
    if bits is None or not ((bits & 0x7FFF) > 0x7F80).any():
        if bits is not None or not np.isnan(out).any():
            return out
    proto, out = out, np.array(out, order="C")
    flat = out.view(np.uint16).reshape(-1)
    nan = (flat & 0x7FFF) > 0x7F80
    flat[nan] = 0xFFFF
    if vector:
        return like_layout(out, proto)
    tail = scalar_loop(out.shape, *operands) if operands else slice(None)
    if tail is not None:
        scalar = np.zeros(flat.size, bool)
        scalar[tail] = True
        flat[nan & scalar] = 0x7FC0
    return like_layout(out, proto)


def nan_bits(out: np.ndarray, nan: np.ndarray, tail, vector, scalar) -> np.ndarray:
    """``out`` (a new C-contiguous float16/bfloat16 array) with the bits of its NaNs (``nan``,
    broadcast to it) set: ``vector`` where torch's vector steps wrote them, ``scalar`` at the
    flat indices ``tail`` (``scalar_loop``'s); None keeps the NaN (quieted in the vector steps,
    where it went through float32 and back: bfloat16's conversion makes every NaN 0xFFFF);
    ``vector=False`` keeps the vector steps' NaNs as they are."""
    flat = out.view(np.uint16).reshape(-1)
    nan = np.broadcast_to(nan, out.shape).reshape(-1)
    in_tail = np.zeros(flat.size, bool)
    if tail is not None:
        in_tail[tail] = True
    vec = nan & ~in_tail
    if vector is False:
        pass
    elif vector is None:
        if out.dtype == _dtypes.bfloat16.np:
            flat[vec] = 0xFFFF
        else:
            flat[vec] |= 0x0200
    else:
        flat[vec] = vector
    if scalar is not None:
        flat[nan & in_tail] = scalar
    return out


def f16_xlogy_nans(out: np.ndarray, x, y) -> np.ndarray:
    """float16 ``out`` of a kernel ``isnan(y) ? NAN : x == 0 ? 0 : x * f(y)`` (xlogy, xlog1py;
    ``x``, ``y`` its operands, numbers or arrays) with torch's NaN bits: its ``NAN`` (0x7E00)
    where ``y`` is NaN, ``x`` quieted where ``x`` is (x86 passes a product's first NaN on), and
    x86's default NaN (0xFE00) where ``f(y)`` or the product is invalid (glibc's ``logf(-1)``,
    ``inf * 0``).

    >>> x = np.array([np.nan, 1.0, 1.0], np.float16)
    >>> y = np.array([-1.0, np.nan, -1.0], np.float16)
    >>> [hex(v) for v in f16_xlogy_nans(np.full(3, np.nan, np.float16), x, y).view(np.uint16)]
    ['0x7e00', '0x7e00', '0xfe00']
    """
    if out.dtype != _F16 or not np.isnan(out).any():
        return out
    res = np.array(out, order="C")
    xs = np.broadcast_to(np.asarray(x, _F16), res.shape)
    ys = np.broadcast_to(np.asarray(y, _F16), res.shape)
    bits = np.where(np.isnan(ys), np.uint16(0x7E00), np.where(
        np.isnan(xs), xs.view(np.uint16) | np.uint16(0x0200), np.uint16(0xFE00)))
    nan = np.isnan(res)
    res.view(np.uint16)[nan] = bits[nan]
    return like_layout(res, out)


def f16_binary_nans(out: np.ndarray, a, b, vector, scalar) -> np.ndarray:
    """float16 ``out`` of a binary kernel of ``a`` and ``b`` (as laid out) with the NaN bits
    torch's loop leaves: ``vector`` in its 32-element vector steps, ``scalar`` in its scalar
    loop (``scalar_loop``), each a constant, "first" (the first NaN operand quieted: x86's
    ``a + b``), "first_neg" (that with the sign bit set) or None (as computed).

    >>> x = np.full(40, np.nan, np.float16)
    >>> bits = f16_binary_nans(x, x, np.ones(40, np.float16), 0xFFFF, "first_neg")
    >>> [hex(v) for v in bits.view(np.uint16)[[0, 39]]]
    ['0xffff', '0xfe00']
    """
    if not np.isnan(out).any():
        return out
    res = np.array(out, order="C")
    flat = res.view(np.uint16).reshape(-1)
    nan = (flat & 0x7FFF) > 0x7C00
    in_tail = np.zeros(flat.size, bool)
    tail = scalar_loop(res.shape, *(np.asarray(x) for x in (a, b)))
    if tail is not None:
        in_tail[tail] = True
    for where, rule in ((nan & ~in_tail, vector), (nan & in_tail, scalar)):
        if rule is None or not where.any():
            continue
        if isinstance(rule, str):
            xa, xb = (np.broadcast_to(np.asarray(x, _F16), res.shape).reshape(-1)[where]
                      for x in (a, b))
            bits = np.where(np.isnan(xa), xa, xb).view(np.uint16) | np.uint16(0x0200)
            flat[where] = bits | np.uint16(0x8000) if rule == "first_neg" else bits
        else:
            flat[where] = rule
    return like_layout(res, out)


def quiet_tail(out: np.ndarray, a: np.ndarray) -> np.ndarray:
    """abs or neg (``out``) of ``a`` as torch's float16/bfloat16 kernels give a NaN: bfloat16
    keeps its bits in the vector steps (a mask of the sign bit) and converts through float32
    in the scalar loop (0x7FC0 there); float16 goes through float32 in both (quieted)."""
    bits = out.view(np.uint16)
    if out.dtype == _F16:
        nan = (bits & 0x7FFF) > 0x7C00
        if nan.any():
            out = out.copy()
            out.view(np.uint16)[nan] |= 0x0200
        return out
    if not ((bits & 0x7FFF) > 0x7F80).any():
        return out
    tail = scalar_loop(out.shape, a)
    if tail is None:
        return out
    res = np.array(out, order="C")
    nan_bits(res, np.isnan(res), tail, False, 0x7FC0)
    return like_layout(res, out)


def like_layout(out: np.ndarray, proto: np.ndarray) -> np.ndarray:
    """``out`` (C-contiguous) laid out in memory as ``proto`` of its shape is (NumPy's order
    for a new result of the operands, as torch lays out a pointwise result: a transposed
    input gives a transposed result, which decides the loops of the ops that read it)."""
    if proto.flags.c_contiguous or proto.shape != out.shape:
        return out
    res = np.empty_like(proto, dtype=out.dtype)
    res[...] = out
    return res


def unit_rows(a: np.ndarray) -> bool:
    """Whether torch's loop over ``a`` alone steps by one element along its rows (in the order
    TensorIterator gives its dimensions): what kernels that convert even their tails in
    vector steps (the copy kernel's, logit's) need for them."""
    return a.flags.c_contiguous or _iteration(a.shape, (a,))[0] == [1]


def bf16_cast_nans(out: np.ndarray, a: np.ndarray) -> np.ndarray:
    """A float32 array ``a`` converted to bfloat16 (``out``) with the NaN bits of torch's copy
    kernel (``reduced_float_copy_kernel``): 0xFFFF where its rows step by one element (vector
    conversion, tails included), 0x7FC0 where they do not, broadcast rows too
    (``c10::BFloat16``), whatever the NaN's sign.

    >>> import ml_dtypes
    >>> x = np.full((2, 4), np.nan, np.float32)
    >>> hex(bf16_cast_nans(x.astype(ml_dtypes.bfloat16), x).view(np.uint16)[0, 0])
    '0xffff'
    >>> hex(bf16_cast_nans(x[:, ::2].astype(ml_dtypes.bfloat16), x[:, ::2]).view(np.uint16)[0, 0])
    '0x7fc0'
    """
    if not _has_nan(a):
        return out
    vector = unit_rows(a)
    out = np.array(out, order="C")
    flat = out.view(np.uint16).reshape(-1)
    flat[(flat & 0x7FFF) > 0x7F80] = 0xFFFF if vector else 0x7FC0
    return out


# bfloat16 unary kernels by how they convert a float32 NaN (checked with torch): in vector steps
# throughout (vml's map: 0xFFFF), in a loop with a scalar tail (cpu_kernel_vec: 0xFFFF, 0x7FC0
# in the tail and for strided input), in scalar code only (0x7FC0).
_UNARY_VECTOR_NANS = frozenset((
    "ExpBackward0", "LogBackward0", "SinBackward0", "CosBackward0", "TanBackward0",
    "AsinBackward0", "AcosBackward0", "AtanBackward0", "TanhBackward0", "SqrtBackward0",
    "Log1PBackward0", "Expm1Backward0", "Log2Backward0", "Log10Backward0", "ErfBackward0",
    "ErfcBackward0", "ErfinvBackward0", "LgammaBackward0", "I0Backward0", "ReluBackward0",
    "FloorBackward0", "CeilBackward0", "RoundBackward0", "TruncBackward0",
    "LogSigmoidBackward0", "HardtanhBackward0", "HardshrinkBackward0"))
_UNARY_LOOP_NANS = frozenset((
    "SinhBackward0", "CoshBackward0", "AtanhBackward0", "SigmoidBackward0", "RsqrtBackward0",
    "Exp2Backward0", "DigammaBackward0", "FracBackward0", "ReciprocalBackward0",
    "SiluBackward0", "MishBackward0", "GeluBackward0", "EluBackward0", "CeluBackward0",
    "SoftplusBackward0", "HardswishBackward0", "HardsigmoidBackward0", "LeakyReluBackward0",
    "SoftshrinkBackward0", "Deg2RadBackward0", "Rad2DegBackward0", "SpecialI0EBackward0"))
_UNARY_SCALAR_NANS = frozenset(("AsinhBackward0", "AcoshBackward0"))


def unary_nans(P, out: np.ndarray, a: np.ndarray) -> np.ndarray:
    """A bfloat16 unary result ``out`` of input ``a`` with the NaN bits of ``P``'s kernel."""
    name = P.__name__
    if out.dtype != _dtypes.bfloat16.np or (
            name not in _UNARY_LOOP_NANS and name not in _UNARY_VECTOR_NANS
            and name not in _UNARY_SCALAR_NANS):
        return out
    if out.flags.c_contiguous and (out.view(np.uint16) & 0x7FFF).max(initial=0) <= 0x7F80:
        return out  # no NaN: one pass
    if name in _UNARY_LOOP_NANS:
        return bf16_nans(out, a)
    return bf16_nans(out, vector=name in _UNARY_VECTOR_NANS)


def reduced_unary(P, a: np.ndarray) -> np.ndarray:
    """A unary pointwise op on a float16/bfloat16 array: computed in float32 and rounded once,
    as PyTorch's kernels do. An op whose kernel takes a SLEEF function there declares the
    float32 reproduction as ``P.reduced`` (see ``_sleef``), applied through a lookup table. An
    op whose scalar loop rounds otherwise (on the last ``n % 32`` elements, which torch's
    32-element vector steps leave, ``scalar_loop``) declares that loop as ``P.reduced_tail``
    (in the dtype). ``P.f16_nans`` gives float16 NaNs the bits of torch's kernel (its float32
    NaN converted: ``_sleef.f16_nan_bits``), set in the op's lookup table."""
    f = getattr(P, "reduced", None)
    nans = getattr(P, "f16_nans", None) if a.dtype == _F16 else None
    if nans is not None:  # float16 NaNs with the bits of torch's kernel: in the table
        out = lookup(f or P.forward, a, nans)
    elif f is not None:
        out = lookup(f, a)
    else:
        out = P.forward(a.astype(F32))
        if out.__class__ is not ndarray:
            out = asarray(out)
        if out.dtype == F32:
            out = out.astype(a.dtype)
    tail = getattr(P, "reduced_tail", None)
    if tail is not None:
        out = put_tail(out, scalar_loop(a.shape, a), tail, a)
    return unary_nans(P, out, a)


def scalar_array(value, dtype) -> np.ndarray:
    """A Python number as a read-only 0-d array of a float tensor's dtype.

    NumPy handles a 0-d array of the same dtype twice as fast as a Python float, and the
    result is the same: PyTorch, too, casts a scalar to the tensor's dtype before the op
    (to float16 through float32, as ``c10::Half`` converts a double: rounding it directly
    differs where float32's rounding lands on a float16 tie).
    """
    if value == 0 or value != value:
        # Not cached: 0.0 and -0.0 are equal keys but different numbers, and nan != nan.
        arr = np.array(value, dtype=dtype)
        arr.flags.writeable = False
        return arr
    key = (value, dtype)
    arr = _SCALARS_CACHE.get(key)
    if arr is None:
        if len(_SCALARS_CACHE) > 4096:
            _SCALARS_CACHE.clear()
        arr = np.array(F32.type(value) if dtype == _F16 and value.__class__ is float else value,
                       dtype=dtype)
        arr.flags.writeable = False
        _SCALARS_CACHE[key] = arr
    return arr


def _coerce(b):
    v = scalar_value(b)
    if v is not None:
        return v
    if isinstance(b, np.ndarray):  # formulas pass constants; PyTorch refuses lists
        return as_tensor_arg(b)
    raise TypeError(f"unsupported operand type for a tensor op: {type(b).__name__}")


def wrap(out) -> Tensor:
    """An output that records nothing."""
    if out.__class__ is not ndarray:
        out = asarray(out)
    return make(out)


def made_constant(out, *sources) -> Tensor:
    """A tensor an op makes from Python values, or from the data of ``sources`` alone, with
    no graph (an attention mask built from a boolean one). ``func``'s tracer stands in for
    this function: while vmap traces, the result is declared a constant unless a source is a
    value of the traced program."""
    return wrap(out)


def wire(node, inputs) -> None:
    """Edges and input metadata for ``node``: one ``(shape, dtype)`` per input (None for
    numbers), which the engine checks every gradient against."""
    if len(inputs) == 1:
        t = inputs[0]
        node.next_functions = (edge(t),)
        d = t._data
        node._meta = ((d.shape, d.dtype),)
        return
    edges = []
    meta = []
    for t in inputs:
        if t.__class__ is Tensor or isinstance(t, Tensor):
            edges.append(edge(t))
            d = t._data
            meta.append((d.shape, d.dtype))
        else:
            edges.append(NONE_EDGE)
            meta.append(None)
    node.next_functions = tuple(edges)
    node._meta = tuple(meta)


def float_array(x: Tensor):
    """The values of ``x`` as floats: integer inputs of float ops take the default dtype."""
    a = x._data
    if a.dtype.char not in FLOAT_CHARS:
        a = a.astype(default_float())
    return a


def wrap_dim(dim: int, ndim: int) -> int:
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim + n if dim < 0 else dim


def wrap_dims(dim, ndim: int):
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        return tuple(wrap_dim(d, ndim) for d in dim)
    return wrap_dim(dim, ndim)


# -- PyTorch's errors for shapes -----------------------------------------------------------------
# Ops let NumPy find a shape mismatch (no check on the hot path) and, in the handler of NumPy's
# ValueError, ask these for PyTorch's error instead.


def broadcast_error(*shapes) -> RuntimeError | None:
    """PyTorch's error for ``shapes`` that do not broadcast together, or None if they do.

    As PyTorch's ``infer_size``, shapes combine left to right, each pair compared from the
    last dimension: the message names the first pair and its rightmost mismatch.

    >>> broadcast_error((2, 3), (2, 5))
    RuntimeError('The size of tensor a (3) must match the size of tensor b (5) at non-singleton dimension 1')
    """  # noqa: E501
    acc = tuple(shapes[0])
    for s in shapes[1:]:
        s = tuple(s)
        n = max(len(acc), len(s))
        out = [0] * n
        for i in range(n - 1, -1, -1):
            ia, ib = i - n + len(acc), i - n + len(s)
            sa = acc[ia] if ia >= 0 else 1
            sb = s[ib] if ib >= 0 else 1
            if sa != sb and sa != 1 and sb != 1:
                return RuntimeError(
                    f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                    f"non-singleton dimension {i}")
            out[i] = sb if sa == 1 else sa
        acc = tuple(out)
    return None


def check_broadcast(*shapes) -> None:
    """Raise PyTorch's RuntimeError if ``shapes`` do not broadcast together (else nothing: the
    caller re-raises the error it was handling)."""
    e = broadcast_error(*shapes)
    if e is not None:
        raise e from None


# -- PyTorch's errors for arguments of the wrong type ----------------------------------------------

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BINARY_OP = dis.opmap.get("BINARY_OP")
_NB_OPS = dict(enumerate(sym for _, sym in getattr(dis, "_nb_ops", ())))


def arg_error(fname: str, arg: str, pos, value, expected: str = "Tensor") -> TypeError:
    """PyTorch's TypeError for argument ``arg`` (at 1-based ``pos``, or None for a keyword)
    of ``fname`` given ``value`` instead of an ``expected``.

    When the op was called by an operator (``t + [1.]``), Python's message for the operator,
    as torch's operators return NotImplemented for such an operand. Only the error path looks
    at the caller's frame: the ops themselves check nothing more than they did.

    >>> arg_error("exp", "input", 1, [1.0])
    TypeError("exp(): argument 'input' (position 1) must be Tensor, not list")
    """
    f = op = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE):
        op, f = f, f.f_back
    if f is not None and _BINARY_OP is not None and pos == 2:
        code = f.f_code.co_code
        if code[f.f_lasti] == _BINARY_OP and code[f.f_lasti + 1] in _NB_OPS:
            sym = _NB_OPS[code[f.f_lasti + 1]]
            sym = "** or pow()" if sym == "**" else sym  # (Python's wording)
            return TypeError(f"unsupported operand type(s) for {sym}: 'Tensor' and "
                             f"'{type(value).__name__}'")
    if pos and pos > 1 and _called_as_method(op):
        pos -= 1  # x.index_select(0, [0]): PyTorch counts the arguments after self
    where = f" (position {pos})" if pos else ""
    return TypeError(f"{fname}(): argument '{arg}'{where} must be {expected}, not "
                     f"{type(value).__name__}")


_LOADS = ("LOAD_FAST", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_DEREF")


def _called_as_method(op) -> bool:
    """Whether the op running in frame ``op`` was called as a method of its first argument
    (``x.sum("a")``, not ``torch.sum(x, "a")``), read from the caller's bytecode: the
    callable of the call in progress was loaded as an attribute of a plain variable holding
    that argument. False when it cannot tell. Only error paths ask."""
    caller = op.f_back
    code = op.f_code
    if caller is None or not (code.co_argcount or code.co_flags & 0x04):  # (0x04: *args)
        return False
    try:
        if code.co_argcount:
            first = op.f_locals[code.co_varnames[0]]
        else:  # a wrapper taking *args (autocast's)
            first = op.f_locals[code.co_varnames[code.co_kwonlyargcount]][0]
        instrs = list(dis.get_instructions(caller.f_code))
        k = max(i for i, ins in enumerate(instrs) if ins.offset <= caller.f_lasti)
        if not instrs[k].opname.startswith("CALL"):
            return False  # (3.11: the call's cache entries sit after its offset; fine)
        need = instrs[k].arg or 0
        k -= 1
        while k >= 0 and instrs[k].opname in ("PRECALL", "KW_NAMES"):
            k -= 1
        while need > 0 and k >= 0:  # walk back over the instructions that pushed the arguments
            ins = instrs[k]
            if ins.opname.startswith(("JUMP", "POP_JUMP", "FOR_ITER", "CALL", "PRECALL")) and \
                    need > 0 and ins.opname != "CALL":
                return False
            need -= dis.stack_effect(ins.opcode, ins.arg if ins.opcode >= dis.HAVE_ARGUMENT
                                     else None, jump=False)
            k -= 1
        if need != 0 or k < 1 or instrs[k].opname not in ("LOAD_METHOD", "LOAD_ATTR"):
            return False
        src = instrs[k - 1]
        if src.opname not in _LOADS:
            return False
        name = src.argval
        if src.opname == "LOAD_FAST" or src.opname == "LOAD_DEREF":
            obj = caller.f_locals.get(name)
        else:
            obj = caller.f_locals.get(name, caller.f_globals.get(name))
        return obj is first
    except (KeyError, ValueError, TypeError, IndexError):
        return False


_OPERATORS = (dis.opmap.get("COMPARE_OP"), _BINARY_OP)


def called_by_operator() -> bool:
    """Whether the op calling this was called by an operator (``t == [1.]``, ``t ** None``),
    from the frame of the op's caller; only error paths ask."""
    f = sys._getframe(2)
    return f.f_code.co_code[f.f_lasti] in _OPERATORS


def tensor_arg(fname: str, arg: str, pos, x) -> Tensor:
    """``x`` as a tensor for argument ``arg`` of ``fname``: a number or an array (which
    formulas pass) becomes one; a list, None or a string is PyTorch's TypeError."""
    if isinstance(x, Tensor):
        return x
    if scalar_value(x) is None and not isinstance(x, np.ndarray):
        raise arg_error(fname, arg, pos, x)
    return as_tensor_arg(x)


class Signatures:
    """An op's PyTorch signatures, written as PyTorch lists them in its errors, and the check
    that gives PyTorch's TypeError for a call that fits none of them.

    Ops call ``check`` only where they already failed (in an ``except`` clause), so that a
    correct call costs nothing; if the arguments do fit, ``check`` returns and the op re-raises
    its own error. A type ending in ``?`` also accepts None. How the user called the op
    (keywords, a method of the tensor) is read from the call in the user's code, so that the
    message names keywords and counts positions after ``self`` as PyTorch's does.

    >>> sig = Signatures("softmax", "Tensor input, int dim, torch.dtype? dtype = None")
    >>> sig.check([1.0], 0)
    Traceback (most recent call last):
    ...
    TypeError: softmax(): argument 'input' (position 1) must be Tensor, not list
    """

    def __init__(self, name: str, *overloads: str) -> None:
        self.name = name
        self.overloads = overloads
        self._parsed: list | None = None

    def _params(self) -> list:
        if self._parsed is None:
            parsed = []
            for text in self.overloads:
                params, kw_only = [], False
                for item in text.split(", ") if text else ():
                    if item == "*":
                        kw_only = True
                        continue
                    decl, _, default = item.partition(" = ")
                    kind, _, pname = decl.rpartition(" ")
                    params.append((pname, kind, default or None, kw_only))
                parsed.append(params)
            self._parsed = parsed
        return self._parsed

    def check(self, *args, **kwargs) -> None:
        """Raise PyTorch's TypeError if ``args``/``kwargs`` fit none of the signatures.

        Ops pass their parameters along, in order, defaults included: trailing positional
        arguments that are None or equal to the default count as not given, as do keywords that
        are None. Those the op's caller passed by keyword (``clamp(x, min="0")``, read from
        the call in the caller's code) are reported as keywords, as PyTorch does."""
        overloads = self._params()
        args = list(args)
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        op = outer = sys._getframe(1)
        while outer.f_back is not None and outer.f_back.f_code.co_filename.startswith(_PACKAGE):
            outer = outer.f_back  # (a method's wrapper, a helper): the call the user wrote
        names = _keywords_of_call(outer.f_back)
        if names:
            params = op.f_code.co_varnames[:op.f_code.co_argcount]
            for i in range(min(len(args), len(params)) - 1, -1, -1):
                if params[i] in names:
                    v = args.pop(i)
                    if v is not None:
                        kwargs = {params[i]: v, **kwargs}
                elif i == len(args) - 1 and _defaulted_anywhere(overloads, i, args[i]):
                    args.pop()
        for o in overloads:  # PyTorch unpacks int lists first, whatever the overload
            for i, (pname, kind, _, kw) in enumerate(o):
                v = kwargs.get(pname) if kw or i >= len(args) else args[i]
                if kind.startswith("tuple of ints") and isinstance(v, (list, tuple)):
                    for k, e in enumerate(v):
                        if not _fits("int", e):
                            raise TypeError(
                                f"{self.name}(): argument '{pname}' failed to unpack the object "
                                f"at pos {k + 1} with error \"type must be tuple of ints,but got "
                                f"{type(e).__name__}\"")
        while args and all(_defaulted(o, len(args) - 1, args[-1]) for o in overloads):
            args.pop()
        # As PyTorch's parser: with one overload of a plausible length, its own complaint.
        n = len(args) + len(kwargs)
        plausible = []
        for o in overloads:
            if _mismatch(o, args, kwargs) is None:
                return
            if sum(p[2] is None and not p[1].endswith("?") for p in o) <= n <= len(o):
                plausible.append(o)
        method = _called_as_method(outer)  # x.sum("a"): PyTorch leaves self out
        if len(plausible) == 1 or len(overloads) == 1:
            raise TypeError(self.name + _mismatch((plausible or overloads)[0], args, kwargs,
                                                  method))
        got = [_type_name(a) for a in args[method:]] + [f"{k}={_type_name(v)}"
                                                         for k, v in kwargs.items()]
        if method and not args[1:] and kwargs:
            got.append("")  # x.clamp(min="0"): PyTorch writes "got (min=str, )"
        lines = "".join(f" * ({o.replace('?', '')})\n" for o in self.overloads)
        raise TypeError(f"{self.name}() received an invalid combination of arguments - got "
                        f"({', '.join(got)}), but expected one of:\n{lines}")


def _keywords_of_call(frame) -> tuple:
    """The names passed by keyword in the call ``frame`` is making now (Python 3.11-3.13
    bytecode: ``KW_NAMES`` before the call, or the names constant of ``CALL_KW``); () if
    unknown."""
    if frame is None:
        return ()
    try:
        instrs = list(dis.get_instructions(frame.f_code))
    except (TypeError, ValueError):
        return ()
    at = max((k for k, ins in enumerate(instrs) if ins.offset <= frame.f_lasti), default=None)
    if at is None:
        return ()
    for ins in reversed(instrs[max(at - 3, 0):at + 1]):
        if ins.opname == "KW_NAMES" or (ins.opname == "LOAD_CONST" and instrs[at].opname ==
                                         "CALL_KW"):
            names = frame.f_code.co_consts[ins.arg]
            return names if isinstance(names, tuple) else ()
        if ins.opname not in ("CALL", "PRECALL", "CALL_KW"):
            break
    return ()


def _defaulted_anywhere(overloads, i: int, v) -> bool:
    return all(_defaulted(o, i, v) for o in overloads)


def _defaulted(params, i: int, v) -> bool:
    """Whether positional argument ``i`` with value ``v`` is the default of ``params`` (or
    ``params`` has no positional parameter ``i``)."""
    positional = [p for p in params if not p[3]]
    if i >= len(positional):
        return True
    _, kind, default, _ = positional[i]
    if v is None:
        return default is not None or kind.endswith("?")
    return default == repr(v)


def _type_name(v) -> str:
    return type(v).__name__


def _fits(kind: str, v) -> bool:
    if v is None:
        return kind.endswith("?")
    kind = kind.rstrip("?")
    if kind == "Tensor":
        return isinstance(v, Tensor)
    if kind == "int":
        return (isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))) or (
            isinstance(v, Tensor) and v._data.dtype.kind in "iu" and v._data.size == 1)
    if kind == "tuple of ints":
        return _fits("int", v) or (isinstance(v, (list, tuple)) and all(_fits("int", e) for e in v))
    if kind == "Number":
        return scalar_value(v) is not None
    if kind == "bool":
        return isinstance(v, (bool, np.bool_))
    if kind == "torch.dtype":
        return isinstance(v, _dtypes.dtype)
    return True


def _mismatch(params, args, kwargs, method: bool = False) -> str | None:
    """Why ``args``/``kwargs`` do not fit ``params`` (PyTorch's message after the op's name),
    or None if they fit."""
    positional = [p for p in params if not p[3]]
    if len(args) > len(positional):
        n = len(positional)
        return f"() takes {n} positional argument{'' if n == 1 else 's'} but {len(args)} were given"
    for k in kwargs:
        if k not in {p[0] for p in params}:
            return f"() got an unexpected keyword argument '{k}'"
    for i, (pname, kind, default, kw) in enumerate(params):
        given = i < len(args) and not kw
        v = args[i] if given else kwargs.get(pname)
        if v is None and (default is not None or kind.endswith("?")):
            continue
        if v is None and not given:
            return f"() missing 1 required positional arguments: \"{pname}\""
        if not _fits(kind, v):
            where = f" (position {i + 1 - method})" if given else ""
            return f"(): argument '{pname}'{where} must be {kind.rstrip('?')}, not {_type_name(v)}"
    return None


def op_name_of(P) -> str:
    """The public name of a binary primitive's op, from its grad_fn name (``add``)."""
    name = P._name
    k = name.find("Backward")
    return (name[:k] if k > 0 else name).lower()


def broadcasting(fn, *arrays, **kwargs):
    """``fn(*arrays, **kwargs)``, with PyTorch's error when the arrays do not broadcast."""
    try:
        return fn(*arrays, **kwargs)
    except ValueError:
        check_broadcast(*[np.shape(a) for a in arrays])
        raise


def expand_error(shape, sizes, dtype) -> RuntimeError | None:
    """PyTorch's error for expanding (or assigning) a tensor of ``shape`` and NumPy ``dtype``
    to ``sizes``, checked from the last dimension as PyTorch does; None if it expands.

    >>> expand_error((3,), (2,), np.dtype("float32"))
    RuntimeError('The expanded size of the tensor (2) must match the existing size (3) at non-singleton dimension 0.  Target sizes: [2].  Tensor sizes: [3]')
    """  # noqa: E501
    shape, sizes = tuple(shape), tuple(sizes)
    lead = len(sizes) - len(shape)
    if lead < 0:
        return RuntimeError(
            f"expand({_c_type_name(FROM_NP[dtype])}{{{list(shape)}}}, size={list(sizes)}): the "
            f"number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(shape)})")
    for i in range(len(sizes) - 1, lead - 1, -1):
        have, want = shape[i - lead], sizes[i]
        if have != want and have != 1 and want != -1:
            return RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({have}) "
                f"at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                f"{list(shape)}")
    return None


Tensor  # noqa: B018 - re-exported for op modules
