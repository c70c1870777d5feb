"""Floating-point arithmetic exactly as PyTorch's CPU sampling kernels do it.

Two things make NumPy's plain arithmetic differ from those kernels in the last bit:

* The kernels are compiled with fused multiply-add contraction, so ``x * (to - from) + from``
  and ``val * std + mean`` are single roundings. ``fma32`` and ``fma64`` compute a correctly
  rounded ``a * b + c`` with NumPy: the product is formed exactly (in float64 for float32
  inputs, by Dekker's splitting for float64), the sum is rounded to odd and then to nearest,
  which gives the right result (Boldo and Melquiond, "Emulation of FMA and correctly rounded
  sums: proved algorithms using rounding to odd", 2008).
* ``randn`` of 16 or more contiguous float32 values transforms blocks of 16 uniforms with the
  vectorised single-precision ``log`` and ``sincos`` of PyTorch's AVX2 kernel (Cephes
  polynomials, after Pommier's ``sse_mathfun``), which differ from a correctly rounded ``log``,
  ``sin`` and ``cos`` in about one value in seven. ``log_ps`` and ``sincos_ps`` evaluate the same
  polynomials with the same operations in the same order, in float32, contracting the same
  products into fused multiply-adds, so the results agree bit for bit.
"""

from __future__ import annotations

import numpy as np

_f32 = np.float32
_INF = np.float64(np.inf)


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _round_odd(s: np.ndarray, err: np.ndarray) -> np.ndarray:
    """``s + err`` (with ``s`` its rounding to nearest) rounded to odd: where the sum is inexact
    and ``s``'s last bit is even, step one unit towards the exact value."""
    even = (s.view(np.int64) & 1) == 0
    fix = (err != 0) & even
    if not fix.any():
        return s
    return np.where(fix, np.nextafter(s, np.where(err > 0, _INF, -_INF)), s)


_LOW29 = np.int64((1 << 29) - 1)  # the float64 mantissa bits a float32 drops
_TIE29 = np.int64(1 << 28)  # ... when they say "exactly half way"
_EXP64 = np.int64(0x7FF0000000000000)
_MIN_NORMAL32 = np.int64((1023 - 126) << 52)  # float64 exponent field of 2**-126


def fma32(a, b, c, tiny: bool = True) -> np.ndarray:
    """``a * b + c`` rounded once to float32 (inputs are float32 values). ``tiny=False``
    promises that no nonzero result falls below 2**-126 (the AVX kernels' polynomials, whose
    inputs are moderate), which saves the subnormal check."""
    a = np.asarray(a, _f32)
    b = np.asarray(b, _f32)
    c = np.asarray(c, _f32)
    if b.ndim == 0 and b == 1:
        return a + c  # the product is exact
    if c.ndim == 0 and c == 0:
        return a * b + c  # one rounding (adding zero only fixes the sign of a zero)
    p = a.astype(np.float64) * b  # exact: 24 + 24 bits fit in 53
    c = c.astype(np.float64)  # (NumPy's mixed float64 + float32 loop is ten times slower)
    s = p + c
    # Rounding s to float32 is the single rounding of the exact sum unless s sits exactly half
    # way between two float32 values (or in their subnormal range): then round to odd first.
    bits = s.view(np.int64)
    risky = (bits & _LOW29) == _TIE29
    if tiny:
        risky |= (bits & _EXP64) < _MIN_NORMAL32
    if risky.any():
        s = _round_odd(s, _two_sum(p, c)[1])
    return s.astype(_f32)


def _split(a: np.ndarray) -> tuple:
    c = 134217729.0 * a  # 2**27 + 1
    hi = c - (c - a)
    return hi, a - hi


def fma64(a, b, c) -> np.ndarray:
    """``a * b + c`` rounded once to float64."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    c = np.asarray(c, np.float64)
    with np.errstate(all="ignore"):
        if b.ndim == 0 and b == 1:
            return a + c  # the product is exact
        if c.ndim == 0 and c == 0:
            return a * b + c  # one rounding (adding zero only fixes the sign of a zero)
        return _fma64(a, b, c)


def _fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    ph = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    pl = ((ah * bh - ph) + ah * bl + al * bh) + al * bl  # ph + pl == a * b exactly
    th, tl = _two_sum(c, ph)
    v, verr = _two_sum(tl, pl)
    out = th + _round_odd(v, verr)
    # infinities and NaNs make the error terms meaningless: the plain expression is right there
    bad = ~np.isfinite(out)
    if bad.any():
        out = np.where(bad, a * b + c, out)
    return out


# -- the AVX2 kernel's log and sincos ----------------------------------------------------------
_LOG_P = tuple(_f32(v) for v in (
    7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
    -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1,
))
_LOG_Q1 = _f32(-2.12194440e-4)
_LOG_Q2 = _f32(0.693359375)
_SQRTHF = _f32(0.707106781186547524)
_MIN_NORM = np.array(0x00800000, np.int32).view(_f32)
_HALF_BITS = np.array(0.5, _f32).view(np.int32)
_ONE = _f32(1.0)
_ZERO = _f32(0.0)


def log_ps(x: np.ndarray) -> np.ndarray:
    """The AVX2 kernel's natural logarithm of float32 values (NaN for ``x <= 0``)."""
    x = np.ascontiguousarray(x, _f32)
    invalid = x <= 0
    x = np.maximum(x, _MIN_NORM)  # denormals are cut off
    bits = x.view(np.int32)
    e = ((bits.view(np.uint32) >> 23).astype(np.int32) - 0x7F).astype(_f32) + _ONE
    x = ((bits & ~0x7F800000) | _HALF_BITS).view(_f32)  # mantissa in [0.5, 1)
    small = x < _SQRTHF
    tmp = np.where(small, x, _ZERO)
    x = x - _ONE
    e = e - np.where(small, _ONE, _ZERO)
    x = x + tmp
    z = x * x
    y = np.full_like(x, _LOG_P[0])
    for p in _LOG_P[1:]:
        y = fma32(y, x, p, False)
    y = y * x
    y = fma32(y, z, e * _LOG_Q1, False)
    y = fma32(-z, _f32(0.5), y, False)
    x = fma32(e, _LOG_Q2, x + y, False)
    return np.where(invalid, _f32(np.nan), x)


_DP = (_f32(-0.78515625), _f32(-2.4187564849853515625e-4), _f32(-3.77489497744594108e-8))
_FOPI = _f32(1.27323954473516)  # 4 / pi
_COS_P = (_f32(2.443315711809948E-005), _f32(-1.388731625493765E-003),
          _f32(4.166664568298827E-002))
_SIN_P = (_f32(-1.9515295891E-4), _f32(8.3321608736E-3), _f32(-1.6666654611E-1))


def sincos_ps(x: np.ndarray) -> tuple:
    """The AVX2 kernel's ``(sin(x), cos(x))`` of float32 values (meant for moderate ``|x|``)."""
    x = np.ascontiguousarray(x, _f32)
    sign_sin = np.signbit(x)
    x = np.abs(x)
    j = (x * _FOPI).astype(np.int32)  # truncation, as cvttps
    j = (j + 1) & ~1
    y = j.astype(_f32)
    sign_sin = sign_sin ^ ((j & 4) != 0)
    sign_cos = (~(j - 2) & 4) != 0
    use_sin_poly = (j & 2) == 0
    for d in _DP:  # extended-precision reduction: x - y * pi/4 in three parts
        x = fma32(y, d, x, False)
    z = x * x
    yc = fma32(_COS_P[0], z, _COS_P[1], False)
    yc = fma32(yc, z, _COS_P[2], False)
    yc = yc * z
    yc = fma32(yc, z, -(z * _f32(0.5)), False)
    yc = yc + _ONE
    ys = fma32(_SIN_P[0], z, _SIN_P[1], False)
    ys = fma32(ys, z, _SIN_P[2], False)
    ys = ys * z
    ys = fma32(ys, x, x, False)
    s = np.where(use_sin_poly, ys, yc)
    c = np.where(use_sin_poly, yc, ys)
    return np.where(sign_sin, -s, s), np.where(sign_cos, -c, c)
