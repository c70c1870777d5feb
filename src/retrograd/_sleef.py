"""Single-precision math exactly as PyTorch's CPU kernels compute it for float16 and bfloat16.

PyTorch computes a pointwise op on a float16 or bfloat16 tensor in float32 and rounds once. Its
vectorised kernels (``Vectorized<BFloat16>``/``Vectorized<Half>``) take ``exp``, ``log``, ``sin``
... from SLEEF (``Sleef_expf8_u10`` and friends, the AVX2 build, which contracts the polynomial
steps into fused multiply-adds), while NumPy's float32 functions are other approximations. The
two differ by one unit in the last place of float32 now and then, and when that unit decides how
the value rounds to 8 or 11 bits the reduced-precision results differ. This module evaluates
SLEEF's algorithms (``expf``, ``logf_u1``, ``sinf_u1``, ``asinf_u1``, ``atan2f_u1``, ``exp2f``,
``log1pf``, part of ``lgammaf_u1``) and ATen's own float32 kernels (``calc_i0``,
``calc_digamma``) with the same float32 operations in the same order (fused multiply-adds
emulated exactly, ``_rng_math.fma32``), so the rounded results agree bit for bit.

A 16-bit dtype has only 65,536 values, so an op is evaluated once per dtype on every bit pattern
and kept as a lookup table (128 KiB); a call is then one indexing, faster than computing
(``lookup``). float32 and float64 tensors keep NumPy's functions.

>>> import numpy as np
>>> float(expf(np.float32(6.84375)))  # NumPy's float32 exp says 938.0
938.0000610351562
"""

from __future__ import annotations

import functools

import numpy as np

from ._rng_math import fma32

_f32 = np.float32
_i32 = np.int32


def _fma(a, b, c):
    return fma32(a, b, c)


def _fms(a, b, c):  # a * b - c, one rounding
    return fma32(a, b, -np.asarray(c, _f32))


def _fnma(a, b, c):  # -(a * b) + c, one rounding
    return fma32(-np.asarray(a, _f32), b, c)


def _rint_i(x):
    """``_mm256_cvtps_epi32``: round half to even; NaN and out of range give INT_MIN."""
    r = np.rint(x)
    ok = np.abs(r) < 2.0 ** 31
    return np.where(ok, r, -2.0 ** 31).astype(_i32)


def _pow2i(q):
    return ((q + _i32(0x7F)) << 23).astype(_i32).view(_f32)


# -- double-float arithmetic (SLEEF's df.h, FMA variants) --------------------------------------

def _add2_ff(x, y):
    s = x + y
    v = s - x
    return s, (x - (s - v)) + (y - v)


def _add_ff(x, y):  # |x| >= |y|
    s = x + y
    return s, (x - s) + y


def _add_f2f(x, y):
    s = x[0] + y
    return s, ((x[0] - s) + y) + x[1]


def _add_ff2(x, y):
    s = x + y[0]
    return s, ((x - s) + y[0]) + y[1]


def _add_f2f2(x, y):
    s = x[0] + y[0]
    return s, (((x[0] - s) + y[0]) + x[1]) + y[1]


def _add2_f2f2(x, y):
    s = x[0] + y[0]
    v = s - x[0]
    t = (x[0] - (s - v)) + (y[0] - v)
    return s, t + (x[1] + y[1])


def _normalize(t):
    s = t[0] + t[1]
    return s, (t[0] - s) + t[1]


def _mul_ff(x, y):
    s = x * y
    return s, _fms(x, y, s)


def _mul_f2f(x, y):
    s = x[0] * y
    return s, _fma(x[1], y, _fms(x[0], y, s))


def _mul_f2f2(x, y):
    s = x[0] * y[0]
    return s, _fma(x[0], y[1], _fma(x[1], y[0], _fms(x[0], y[0], s)))


def _mul_f2f2_f(x, y):
    return _fma(x[0], y[0], _fma(x[1], y[0], x[0] * y[1]))


def _squ(x):
    s = x[0] * x[0]
    return s, _fma(x[0] + x[0], x[1], _fms(x[0], x[0], s))


def _div(n, d):
    t = _f32(1) / d[0]
    s = n[0] * t
    u = _fms(t, n[0], s)
    v = _fnma(d[1], t, _fnma(d[0], t, _f32(1)))
    return s, _fma(s, v, _fma(n[1], t, u))


def _add2_ff2(x, y):
    s = x + y[0]
    v = s - x
    return s, ((x - (s - v)) + (y[0] - v)) + y[1]


def _sub_f2f(x, y):
    s = x[0] - y
    return s, ((x[0] - s) - y) + x[1]


def _sub_f2f2(x, y):  # |x| >= |y|
    s = x[0] - y[0]
    return s, (((x[0] - s) - y[0]) + x[1]) - y[1]


def _sqrt_f2(d):
    """``dfsqrt_vf2_vf``: sqrt(d) as a double-float, one Newton step from float32's sqrt."""
    t = np.sqrt(d)
    r = _f32(1) / t
    q = _mul_f2f2(_add2_ff2(d, _mul_ff(t, t)), (r, r * _fnma(t, r, _f32(1))))
    return q[0] * _f32(0.5), q[1] * _f32(0.5)


# -- the functions ----------------------------------------------------------------------------

_R_LN2 = _f32(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U = _f32(0.693145751953125)
_L2L = _f32(1.428606765330187045e-06)
_EXP_P = tuple(_f32(v) for v in (
    0.000198527617612853646278381, 0.00139304355252534151077271, 0.00833336077630519866943359,
    0.0416664853692054748535156, 0.166666671633720397949219, 0.5,
))


def expf(d) -> np.ndarray:
    """SLEEF's ``expf`` (``Sleef_expf8_u10``) of float32 values.

    >>> float(expf(np.float32(1.0)))
    2.7182817459106445
    """
    d = np.asarray(d, _f32)
    with np.errstate(all="ignore"):
        q = _rint_i(d * _R_LN2)
        qf = q.astype(_f32)
        s = _fma(qf, -_L2U, d)
        s = _fma(qf, -_L2L, s)
        u = np.full_like(s, _EXP_P[0])
        for c in _EXP_P[1:]:
            u = _fma(u, s, c)
        u = _f32(1) + _fma(s * s, u, s)
        h = q >> 1
        u = (u * _pow2i(h)) * _pow2i(q - h)
        u = np.where(d < -104, _f32(0), u)
        return np.where(d > 100, _f32(np.inf), u)


_LOG2_DF = (_f32(0.69314718246459960938), _f32(-1.904654323148236017e-09))
_LOG_P = (_f32(0.3027294874), _f32(0.3996108174), _f32(0.6666694880))


def logf(d) -> np.ndarray:
    """SLEEF's ``logf_u1`` (``Sleef_logf8_u10``) of float32 values.

    >>> float(logf(np.float32(0.0025424957275390625)))  # NumPy's float32 log is 1 ulp below
    -5.974608898162842
    """
    d = np.asarray(d, _f32)
    with np.errstate(all="ignore"):
        o = d < _f32(2.0 ** -126)
        d = np.where(o, d * _f32(2.0 ** 64), d)
        e = ((d * _f32(1.0 / 0.75)).view(_i32) >> 23 & 0xFF) - 0x7F
        m = (d.view(_i32) + ((-e) << 23)).astype(_i32).view(_f32)
        e = np.where(o, e - 64, e)
        s = _mul_f2f(_LOG2_DF, e.astype(_f32))
        x = _div(_add2_ff(_f32(-1), m), _add2_ff(_f32(1), m))
        x2 = x[0] * x[0]
        t = _fma(_LOG_P[0], x2, _LOG_P[1])
        t = _fma(t, x2, _LOG_P[2])
        s = _add_f2f2(s, (x[0] * _f32(2), x[1] * _f32(2)))
        s = _add_f2f(s, (x2 * x[0]) * t)
        r = s[0] + s[1]
        r = np.where(np.isposinf(d), _f32(np.inf), r)
        r = np.where((d < 0) | np.isnan(d), _f32(np.nan), r)
        return np.where(d == 0, _f32(-np.inf), r)


_M_1_PI = _f32(0.318309886183790671537767526745028724)
_PI_A2 = _f32(3.1414794921875)
_PI_B2 = _f32(0.00011315941810607910156)
_PI_C2 = _f32(1.9841872589410058936e-09)
_SIN_P = (_f32(2.6083159809786593541503e-06), _f32(-0.0001981069071916863322258),
          _f32(0.00833307858556509017944336))
_SIN_C = _f32(-0.166666597127914428710938)
_HALF_PI = (_f32(3.1415927410125732422 * -0.5), _f32(-8.7422776573475857731e-08 * -0.5))


def _pi_bits(bits: int) -> int:
    """floor(pi * 2**bits), by Machin's formula in integers."""
    one = 1 << (bits + 16)

    def atan_inv(n):
        total, term, k, sign = 0, one // n, 1, 1
        while term:
            total += sign * (term // k)
            term //= n * n
            k += 2
            sign = -sign
        return total

    return (16 * atan_inv(5) - 4 * atan_inv(239)) >> 16


def _float_part(num: int, shift: int) -> np.float32:
    """``num / 2**shift`` rounded to double, then to float, its two last bits cleared."""
    v = np.float32(num / (1 << shift) if shift >= 0 else num * (1 << -shift))
    return (v.view(_i32) & _i32(-4)).view(_f32)


def _rempi_table() -> np.ndarray:
    """SLEEF's ``Sleef_rempitabsp``: for each exponent, ``frac(2**ex / (2 pi)) / 2**ex`` (times
    2**64 above 2**90) split into four floats, recomputed here from pi in integers."""
    bits = 1400
    rpi = (1 << (2 * bits - 1)) // _pi_bits(bits)  # floor(0.5/pi * 2**bits)
    rows = []
    for i in range(25, 128):
        ex = i - 23
        scale = 64 if i > 90 else 0
        # frac(2**ex * rpi / 2**bits) / 2**ex * 2**scale, as num / 2**den
        num = (rpi << ex) & ((1 << bits) - 1)
        den = bits + ex - scale
        row = []
        for _ in range(3):
            part = _float_part(num, den)
            row.append(part)
            m, e = float(part).as_integer_ratio()  # e: a power of two
            num -= (m << den) // e
        row.append(np.float32(num / (1 << den)))
        rows.append(row)
    rows.append([np.float32(0)] * 4)  # infinities and NaNs index here (their results are NaN)
    return np.array(rows, _f32)


_RTAB: list = []


def _rempisub(x):
    y = np.rint(x * _f32(4))
    i = np.trunc(y - np.rint(x) * _f32(4))
    return x - y * _f32(0.25), np.where(np.isfinite(i), i, -2.0 ** 31).astype(_i32)


_TWO_PI = (_f32(3.1415927410125732422 * 2), _f32(-8.7422776573475857731e-08 * 2))


def _rempi(a: np.ndarray) -> tuple:
    """SLEEF's large-argument reduction (``rempif``): ``a`` in turns as ``i`` quarter turns
    plus a double-float rest, then scaled by 2 pi (Payne and Hanek's method, with SLEEF's
    table and operations)."""
    if not _RTAB:
        _RTAB.append(_rempi_table())
    tab = _RTAB[0]
    ex = ((a.view(_i32) >> 23) & 0xFF) - 0x7F - 25
    q = np.where(ex > 90 - 25, -64, 0).astype(_i32)
    a = (a.view(_i32) + (q << 23)).astype(_i32).view(_f32)
    row = tab[np.clip(ex, 0, len(tab) - 1)]
    x = _mul_ff(a, row[:, 0])
    d, q = _rempisub(x[0])
    x = _normalize((d, x[1]))
    x = _add2_f2f2(x, _mul_ff(a, row[:, 1]))
    d, i = _rempisub(x[0])
    q = q + i
    x = _normalize((d, x[1]))
    x = _add2_f2f2(x, _mul_f2f((row[:, 2], row[:, 3]), a))
    x = _mul_f2f2(_normalize(x), _TWO_PI)
    small = np.abs(a) < _f32(0.7)
    return (np.where(small, a, x[0]), np.where(small, _f32(0), x[1])), q


_PI_ABCD = (_f32(3.140625), _f32(0.0009670257568359375), _f32(6.2771141529083251953e-07),
             _f32(1.2154201256553420762e-10))


def sinf(d) -> np.ndarray:
    """SLEEF's ``sinf`` (``Sleef_sinf8_u35``) of float32 values: a three-part Cody-Waite
    reduction below 125, four parts below 39000, ``rempif`` above.

    >>> float(sinf(np.float32(300.0)))  # the correctly rounded float32 is -0.99975586
    -0.9997557997703552
    """
    r = np.asarray(d, _f32)
    with np.errstate(all="ignore"):
        q = _rint_i(r * _M_1_PI)
        u = q.astype(_f32)
        d = _fma(u, -_PI_A2, r)
        d = _fma(u, -_PI_B2, d)
        d = _fma(u, -_PI_C2, d)
        a = np.abs(r)
        mid = ~(a < _f32(125.0))
        if mid.any():
            v = _fma(u, -_PI_ABCD[0], r)
            for c in _PI_ABCD[1:]:
                v = _fma(u, -c, v)
            d = np.where(mid, v, d)
            big = ~(a < _f32(39000.0))
            if big.any():
                rb = r[big]
                (rh, rl), i = _rempi(rb)
                q2 = ((i & 3) * 2 + np.where(rh > 0, 2, 1)) >> 2
                sign = np.where(np.signbit(rh), _f32(-1), _f32(1))
                x = _add2_f2f2((rh, rl), (_HALF_PI[0] * sign, _HALF_PI[1] * sign))
                odd = (i & 1) == 1
                db = np.where(odd, x[0], rh) + np.where(odd, x[1], rl)
                q = q.copy()
                q[big] = q2
                d[big] = np.where(np.isfinite(rb), db, _f32(np.nan))
        s = d * d
        d = np.where((q & 1) == 1, -d, d)
        u = _fma(_SIN_P[0], s, _SIN_P[1])
        u = _fma(u, s, _SIN_P[2])
        u = _fma(u, s, _SIN_C)
        u = s * (u * d) + d
        return np.where((r == 0) & np.signbit(r), r, u)


_ERF_P = tuple(_f32(v) for v in (1.061405429, -1.453152027, 1.421413741, -0.284496736,
                                 0.254829592))


def erff(a) -> np.ndarray:
    """PyTorch's vectorised float32 erf (``Vectorized<float>::erf``, which its float16 and
    bfloat16 kernels run): Abramowitz and Stegun's 7.1.26, ``1 - t P(t) exp(-x**2)`` with
    ``t = 1 / (1 + 0.3275911 |x|)`` and SLEEF's exp, fused where the kernel fuses. Its absolute
    error is about 1e-7, so tiny arguments give 0.

    >>> float(erff(np.float32(1e-8)))
    0.0
    """
    a = np.asarray(a, _f32)
    with np.errstate(all="ignore"):
        t = _f32(1) / _fma(_f32(0.3275911), np.abs(a), _f32(1))
        r = np.full_like(t, _ERF_P[0])
        for c in _ERF_P[1:]:
            r = _fma(r, t, c)
        z = _fma(-expf(-(a * a)) * t, r, _f32(1))
        # a NaN input comes out quieted, its sign kept (the kernel's sign mask: x & -0.)
        return np.where(a != a, a + a, np.where(np.signbit(a), -z, z))


def _toward0(x):
    """One unit in the last place toward zero (zero stays)."""
    return np.where(x == 0, _f32(0), (x.view(_i32) - _i32(1)).view(_f32))


def fmodf(x, y) -> np.ndarray:
    """SLEEF's ``fmodf`` (``Sleef_fmodf8``) of float32 values: exact, except that a quotient
    beyond float32's range gives NaN (the reciprocal-based steps overflow).

    >>> float(fmodf(np.float32(7.5), np.float32(2.0)))
    1.5
    >>> float(fmodf(np.float32(3e38), np.float32(1e-30)))
    nan
    """
    x, y = np.broadcast_arrays(np.asarray(x, _f32), np.asarray(y, _f32))
    with np.errstate(all="ignore"):
        nu, de = np.abs(x), np.abs(y)
        o = de < _f32(2.0 ** -126)
        nu = np.where(o, nu * _f32(2.0 ** 25), nu)
        de = np.where(o, de * _f32(2.0 ** 25), de)
        s = np.where(o, _f32(2.0 ** -25), _f32(1))
        rde = _toward0(_f32(1) / de)
        r = (nu, np.zeros_like(nu))
        for _ in range(8):  # enough for float32's range, 22 bits a step
            q = np.trunc(_toward0(r[0]) * rde)
            q = np.where((_f32(3) * de > r[0]) & (r[0] >= de), _f32(2), q)
            q = np.where((_f32(2) * de > r[0]) & (r[0] >= de), _f32(1), q)
            r = _normalize(_add2_f2f2(r, _mul_ff(q, -de)))
        ret = np.where(r[0] + r[1] == de, _f32(0), (r[0] + r[1]) * s)
        ret = np.where(np.signbit(x), -ret, ret)
        ret = np.where(nu < de, x, ret)
        # NaN bits as the compiled kernel leaves them (torch's float16 results show them): a NaN
        # x comes out one unit below its quieted bits (toward0's step), an infinite x all ones
        # with the sign flipped by its own
        xb = x.view(_i32)
        ret = np.where(x != x, ((xb | _i32(0x00400000)) - _i32(1)).view(_f32), ret)
        ones = np.where(xb < 0, _i32(0x7FFFFFFF), _i32(-1)).view(_f32)
        ret = np.where(np.isinf(x) & (y == y), ones, ret)
        return np.where(de == 0, _f32(np.nan), ret).astype(_f32)


_EXP_OVERFLOW = _f32(88.72283935546875)  # exp(x) is beyond float32 above this


def sinhf(d) -> np.ndarray:
    """SLEEF's ``sinhf_u10`` as it rounds for float16/bfloat16: it forms ``exp(|x|)`` first,
    so it is infinite as soon as that overflows (NumPy's stays finite up to 89.4).

    >>> float(sinhf(np.float32(89.0)))
    inf
    """
    d = np.asarray(d, _f32)
    with np.errstate(over="ignore"):
        return np.where(np.abs(d) > _EXP_OVERFLOW, np.copysign(_f32(np.inf), d), np.sinh(d))


def coshf(d) -> np.ndarray:
    """SLEEF's ``coshf_u10`` as it rounds for float16/bfloat16 (see ``sinhf``).

    >>> float(coshf(np.float32(-89.0)))
    inf
    """
    d = np.asarray(d, _f32)
    with np.errstate(over="ignore"):
        return np.where(np.abs(d) > _EXP_OVERFLOW, _f32(np.inf), np.cosh(d))


def sigmoidf(d) -> np.ndarray:
    """PyTorch's reduced-precision sigmoid, ``1 / (1 + exp(-x))`` in float32 with SLEEF's exp.

    >>> float(sigmoidf(np.float32(-90.0)))  # exp(90) overflows float32
    0.0
    """
    d = np.asarray(d, _f32)
    with np.errstate(all="ignore"):
        return _f32(1) / (_f32(1) + expf(-d))


_ASIN_P = tuple(_f32(v) for v in (0.4197454825e-1, 0.2424046025e-1, 0.4547423869e-1,
                                  0.7495029271e-1, 0.1666677296e+0))


def asinf(d) -> np.ndarray:
    """SLEEF's ``asinf_u1`` (``Sleef_asinf8_u10``): a polynomial in x**2 below 0.5, above it
    ``pi/2 - 2 asin(sqrt((1 - |x|) / 2))`` with the square root and the subtraction from pi/4
    in double-float.

    >>> lookup(asinf, np.array([0.136474609375], np.float16))  # NumPy's float32 gives 0.1368
    array([0.137], dtype=float16)
    """
    d = np.asarray(d, _f32)
    with np.errstate(all="ignore"):
        a = np.abs(d)
        o = a < _f32(0.5)
        x2 = np.where(o, d * d, (_f32(1) - a) * _f32(0.5))
        sq = _sqrt_f2(x2)
        one = a == _f32(1)
        x = (np.where(o, a, np.where(one, _f32(0), sq[0])), np.where(o | one, _f32(0), sq[1]))
        u = np.full_like(d, _ASIN_P[0])
        for c in _ASIN_P[1:]:
            u = _fma(u, x2, c)
        u = u * (x2 * x[0])
        y = _sub_f2f(_sub_f2f2((_f32(3.1415927410125732422 / 4),
                                _f32(-8.7422776573475857731e-08 / 4)), x), u)
        return np.copysign(np.where(o, u + x[0], (y[0] + y[1]) * _f32(2)), d)


# Cephes's Chebyshev coefficients for exp(-x) I0(x) on [0, 8] and exp(-x) sqrt(x) I0(x) on
# [8, inf), rounded to float32 as torch's ``chebyshev_coefficients_i0e_A<float>`` holds them.
_I0_A = tuple(_f32(v) for v in (
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
    9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
    1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1))
_I0_B = tuple(_f32(v) for v in (
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1))


def _chbevl(x, coef):
    """Cephes's ``chbevl`` (Clenshaw's recurrence) in float32, ``x * b1 - b2`` contracted
    into one fused step as the compiled kernel has it."""
    b0, b1, b2 = np.full_like(x, coef[0]), np.zeros_like(x), np.zeros_like(x)
    for c in coef[1:]:
        b2, b1 = b1, b0
        b0 = _fms(x, b1, b2) + c
    return _f32(0.5) * (b0 - b2)


def i0f(d) -> np.ndarray:
    """torch's ``calc_i0`` in float32 (Cephes's two Chebyshev expansions of ``I0``), which its
    float16/bfloat16 kernel runs; ``std::exp`` (glibc's ``expf``) is float64's exp rounded.
    ``exp(|x|)`` comes first, so it overflows from 88.72, and gives NaN at infinity.

    >>> lookup(i0f, np.array([2.90625, 100.0], np.float16))
    array([4.527,   inf], dtype=float16)
    """
    x = np.abs(np.asarray(d, _f32))
    with np.errstate(all="ignore"):
        e = np.exp(x.astype(np.float64)).astype(_f32)
        lo = e * _chbevl(x / _f32(2) - _f32(2), _I0_A)
        hi = e * _chbevl(_f32(32) / x - _f32(2), _I0_B) / np.sqrt(x)
        return np.where(x <= _f32(8), lo, hi)


def i0ef(d) -> np.ndarray:
    """torch's ``calc_i0e`` in float32 (``Vectorized<float>::i0e``, its float16/bfloat16
    vector steps): Cephes's Chebyshev expansions of ``exp(-x) I0(x)``, fused as compiled.

    >>> lookup(i0ef, np.array([0.000244379, 8.0234375], np.float16))
    array([0.9995, 0.1432], dtype=float16)
    """
    x = np.abs(np.asarray(d, _f32))
    with np.errstate(all="ignore"):
        lo = _chbevl(x / _f32(2) - _f32(2), _I0_A)
        hi = _chbevl(_f32(32) / x - _f32(2), _I0_B) / np.sqrt(x)
        return np.where(x <= _f32(8), lo, hi)


def _i0e_in(dtype, d) -> np.ndarray:
    x = np.abs(np.asarray(d, _f32))

    def rnd(v):  # one c10::Half/c10::BFloat16 operation: in float32, rounded to the dtype
        return np.asarray(v, _f32).astype(dtype).astype(_f32)

    def chbevl(y, coef):  # the coefficients as the dtype holds them; no fused steps here
        b0, b1, b2 = np.full_like(y, rnd(coef[0])), np.zeros_like(y), np.zeros_like(y)
        for c in coef[1:]:
            b2, b1 = b1, b0
            b0 = rnd(rnd(rnd(y * b1) - b2) + rnd(c))
        return rnd(_f32(0.5) * rnd(b0 - b2))

    with np.errstate(all="ignore"):
        lo = chbevl(rnd(rnd(x / _f32(2)) - _f32(2)), _I0_A)
        # std::sqrt of the dtype is float32's: the quotient is a float, rounded once
        hi = chbevl(rnd(rnd(_f32(32) / x) - _f32(2)), _I0_B) / np.sqrt(x)
        return np.where(x <= _f32(8), lo, hi)


_I0E_IN: dict = {}


def i0e_scalar(a: np.ndarray) -> np.ndarray:
    """torch's scalar loop of ``special.i0e`` on a float16/bfloat16 array ``a``: Math.h's
    ``calc_i0e<T>`` instantiated for the dtype itself, so every step of Cephes's Chebyshev
    recurrence rounds to it (its coefficients too: float16 flushes the smallest to zero).
    The vector steps (``Vectorized<float>``) compute in float32 and round once; the scalar
    loop runs on the ``n % 32`` tail and on input that does not step by one element.

    >>> i0e_scalar(np.array([0.000244379, 8.0234375], np.float16))  # 0.99976 rounds to 1 there
    array([1.    , 0.1432], dtype=float16)
    """
    fn = _I0E_IN.get(a.dtype)
    if fn is None:
        fn = _I0E_IN[a.dtype] = functools.partial(_i0e_in, a.dtype)
    return lookup(fn, a)


_PSI_A = tuple(_f32(v) for v in (8.33333333333333333333E-2, -2.10927960927960927961E-2,
                                 7.57575757575757575758E-3, -4.16666666666666666667E-3,
                                 3.96825396825396825397E-3, -8.33333333333333333333E-3,
                                 8.33333333333333333333E-2))


def _digamma_pos(x):
    """``calc_digamma`` for x > 0: the recurrence up to 10, then the asymptotic series."""
    res = np.zeros_like(x)
    for _ in range(10):  # float32 adds 1 to a positive x at most 10 times before 10
        m = x < _f32(10)
        res = np.where(m, res - _f32(1) / x, res)
        x = np.where(m, x + _f32(1), x)
    z = _f32(1) / (x * x)
    p = np.zeros_like(x)
    for c in _PSI_A:  # polevl, its step fused
        p = _fma(p, z, c)
    y = np.where(x < _f32(1e17), z * p, _f32(0))
    out = res + np.log(x.astype(np.float64)).astype(_f32) - (_f32(0.5) / x) - y
    return np.where(x == _f32(10), res + _f32(2.25175258906672110764), out)


def digammaf(d) -> np.ndarray:
    """torch's ``calc_digamma(float)`` (Cephes's psi), which its float16/bfloat16 kernel runs:
    the reflection ``psi(1 - x) - pi / tan(pi frac(x))`` (in float64, rounded) below zero,
    glibc's ``logf`` as float64's log rounded.

    >>> lookup(digammaf, np.array([0.0748291015625, -1.0], np.float16))  # NumPy's: -13.83
    array([-13.82,    nan], dtype=float16)
    """
    x = np.asarray(d, _f32)
    with np.errstate(all="ignore"):
        neg = x < 0
        r = np.fmod(x.astype(np.float64), 1.0)
        cot = (np.pi / np.tan(np.pi * r)).astype(_f32)
        pos = _digamma_pos(np.where(neg, _f32(1) - x, x))
        out = np.where(neg & (x == np.trunc(x)), _f32(np.nan), np.where(neg, pos - cot, pos))
        return np.where(x == 0, np.copysign(_f32(np.inf), -x), out)


_ATAN_P = tuple(_f32(v) for v in (
    -0.00176397908944636583328247, 0.0107900900766253471374512, -0.0309564601629972457885742,
    0.0577365085482597351074219, -0.0838950723409652709960938, 0.109463557600975036621094,
    -0.142626821994781494140625, 0.199983194470405578613281))
_HALF_PI_DF = (_f32(1.5707963705062866211), _f32(-4.3711388286737928865e-08))


def _mulsign(x, y):
    return np.where(np.signbit(y), -x, x)


def _atan2k(y, x):
    """``atan2kf_u1`` for y >= 0: the quadrant in q, ``atan(s)`` with |s| <= 1 in double-float."""
    q = np.where(x < 0, _f32(-2), _f32(0))
    x = np.abs(x)
    p = x < y
    q = np.where(p, q + _f32(1), q)
    zero = np.zeros_like(x)
    s = _div((np.where(p, -x, y), zero), (np.where(p, y, x), zero))
    t = _normalize(_squ(s))
    u = np.full_like(x, _ATAN_P[0])
    for c in _ATAN_P[1:]:
        u = _fma(u, t[0], c)
    t = _mul_f2f2(t, _add_ff(_f32(-0.333332866430282592773438), u * t[0]))
    t = _mul_f2f2(s, _add_ff2(_f32(1), t))
    return _add_f2f2(_mul_f2f(_HALF_PI_DF, q), t)


def _isinf2(d, m):  # m with d's sign where d is infinite, else 0
    return np.where(np.isinf(d), np.where(np.signbit(d), -np.abs(m), m), _f32(0))


def atan2f(y, x) -> np.ndarray:
    """SLEEF's ``atan2f_u1`` (``Sleef_atan2f8_u10``), torch's float16/bfloat16 atan2 kernel
    (NumPy's float32 arctan2 rounds this example to 1.5703125 in float16).

    >>> float(atan2f(np.float32(53120.0), np.float32(-0.240478515625)).astype(np.float16))
    1.5712890625
    """
    y, x = np.broadcast_arrays(np.asarray(y, _f32), np.asarray(x, _f32))
    with np.errstate(all="ignore"):
        o = np.abs(x) < _f32(2.9387372783541830947e-39)  # 1 / FLT_MAX: scaled, as SLEEF
        x = np.where(o, x * _f32(1 << 24), x)
        y = np.where(o, y * _f32(1 << 24), y)
        d = _atan2k(np.abs(y), x)
        r = _mulsign(d[0] + d[1], x)
        hp = _f32(np.pi / 2)
        r = np.where(np.isinf(x) | (x == 0), hp - _isinf2(x, _mulsign(hp, x)), r)
        r = np.where(np.isinf(y), hp - _isinf2(x, _mulsign(_f32(np.pi / 4), x)), r)
        r = np.where(y == 0, np.where(np.signbit(x), _f32(np.pi), _f32(0)), r)
        return np.where(np.isnan(x) | np.isnan(y), _f32(np.nan), _mulsign(r, y))


_EXP2_P = tuple(_f32(v) for v in (0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2,
                                  0.5550347269e-1, 0.2402264476e+0, 0.6931471825e+0))


def exp2f(d) -> np.ndarray:
    """SLEEF's ``exp2f`` (``Sleef_exp2f8_u10``): ``2**q (1 + s P(s))`` with q = rint(d).

    >>> float(exp2f(np.float32(-0.5)))
    0.7071067690849304
    """
    d = np.asarray(d, _f32)
    with np.errstate(all="ignore"):
        u = np.rint(d)
        q = _rint_i(u)
        s = d - u
        p = np.full_like(d, _EXP2_P[0])
        for c in _EXP2_P[1:]:
            p = _fma(p, s, c)
        p = _fma(p, s, _f32(1))
        h = q >> 1
        p = (p * _pow2i(h)) * _pow2i(q - h)
        p = np.where(d >= _f32(128), _f32(np.inf), p)
        return np.where(d < _f32(-150), _f32(0), p)


_LOG1P_P = (_f32(0.3027294874), _f32(0.3996108174), _f32(0.6666694880))


def _log1pf_unit(d):
    """SLEEF's ``log1pf`` (``Sleef_log1pf8_u10``) for 0 <= d <= 1, where none of its special
    cases apply: ``e log 2 + 2 atanh(m / (2 + m))`` in double-float."""
    e = ((((d + _f32(1)) * _f32(1 / 0.75)).view(_i32) >> 23) & 0xFF) - 0x7F
    t = _pow2i(-e)
    m = _fma(d, t, t - _f32(1))
    s = _mul_f2f(_LOG2_DF, e.astype(_f32))
    x = _div((m, np.zeros_like(m)), _add_ff(_f32(2), m))
    x2 = x[0] * x[0]
    p = _fma(_fma(np.full_like(d, _LOG1P_P[0]), x2, _LOG1P_P[1]), x2, _LOG1P_P[2])
    s = _add_f2f2(s, (x[0] * _f32(2), x[1] * _f32(2)))
    s = _add_f2f(s, (x2 * x[0]) * p)
    return s[0] + s[1]


def logaddexp2f(a, b) -> np.ndarray:
    """torch's float16/bfloat16 logaddexp2 kernel in float32: ``max + log1p(exp2(-|a - b|))
    / log(2)`` with SLEEF's exp2 and log1p, the last product and sum fused.

    >>> float(logaddexp2f(np.float32(0.0218505859375), np.float32(1.953125)))  # NumPy: 2.2890625
    2.289062738418579
    """
    a, b = np.broadcast_arrays(np.asarray(a, _f32), np.asarray(b, _f32))
    with np.errstate(all="ignore"):
        m = np.where(np.isnan(a) | np.isnan(b), _f32(np.nan), np.maximum(a, b))
        r = _fma(_log1pf_unit(exp2f(-np.abs(a - b))), _f32(1 / np.log(2.0)), m)
        return np.where((a == b) & np.isinf(a), a, r)


# gammafk's polynomial and series coefficients for 0.5 <= x <= 1.2 and for 1.2 < x < 2.3
_LGAMMA_U = tuple((_f32(p), _f32(q)) for p, q in (
    (0.9435157776e+0, 0.1102489550e-3), (0.8670063615e+0, 0.8160019934e-4),
    (0.4826702476e+0, 0.1528468856e-3), (-0.8855129778e-1, -0.2355068718e-3),
    (0.1013825238e+0, 0.4962242092e-3), (-0.1493408978e+0, -0.1193488017e-2),
    (0.1697509140e+0, 0.2891599433e-2), (-0.2072454542e+0, -0.7385451812e-2),
    (0.2705872357e+0, 0.2058077045e-1)))
_LGAMMA_Z = tuple((_f32(p), _f32(q)) for p, q in (
    (-0.400686534596170958447352690395e+0, -0.673523028297382446749257758235e-1),
    (0.822466960142643054450325495997e+0, 0.322467033928981157743538726901e+0),
    (-0.577215665946766039837398973297e+0, 0.422784335087484338986941629852e+0)))


def _add2_f2f(x, y):
    s = x[0] + y
    v = s - x[0]
    return s, ((x[0] - (s - v)) + (y - v)) + x[1]


def lgammaf_mid(a) -> np.ndarray:
    """SLEEF's ``lgammaf_u1`` (``Sleef_lgammaf8_u10``, torch's float16/bfloat16 lgamma) for
    0.5 <= a < 2.3, where ``gammafk`` needs neither reflection nor Stirling's series: a
    polynomial in ``t = a - 1`` (to 1.2) or ``a - 2``, finished in double-float.

    >>> float(lgammaf_mid(np.float32(2.263671875)))  # under float16's midpoint 0.13275146484375
    0.1327514499425888
    """
    a = np.asarray(a, _f32)
    o0 = a <= _f32(1.2)
    t = _normalize(_add2_f2f((a, np.zeros_like(a)), np.where(o0, _f32(-1), _f32(-2))))[0]
    u = np.where(o0, *_LGAMMA_U[0])
    for c in _LGAMMA_U[1:]:
        u = _fma(u, t, np.where(o0, *c))
    z = _add2_f2f(_mul_ff(u, t), np.where(o0, *_LGAMMA_Z[0]))
    for c in _LGAMMA_Z[1:]:
        z = _add2_f2f(_mul_f2f(z, t), np.where(o0, *c))
    z = _mul_f2f(z, t)
    return z[0] + z[1]


# -- lookup tables ----------------------------------------------------------------------------

_TABLES: dict = {}


def tanhf_libm(x) -> np.ndarray:
    """glibc's ``tanhf`` (2.36, fdlibm's algorithm), what torch's scalar loops call as
    ``std::tanh``: ``-t / (t + 2)`` with ``t = expm1f(-2|x|)`` below 1, ``1 - 2 / (expm1f(2|x|)
    + 2)`` up to 22, then +-1 (NumPy's float32 ``expm1`` is glibc's ``expm1f``). Not always
    correctly rounded: float16 GELU (tanh form) and mish round one input each otherwise.

    >>> float(tanhf_libm(np.float32(-0.19983219)))  # correctly rounded: -0.19721404
    -0.1972140520811081
    """
    x = np.asarray(x, _f32)
    a = np.abs(x)
    with np.errstate(over="ignore", invalid="ignore"):
        below = np.expm1(_f32(-2) * a)
        above = np.expm1(_f32(2) * np.minimum(a, _f32(22)))
        z = np.where(a < 1, -below / (below + _f32(2)), _f32(1) - _f32(2) / (above + _f32(2)))
    z = np.where(a >= 22, _f32(1), np.where(a < _f32(2.0**-55), a, z))
    return np.where(np.isnan(x), x, np.copysign(z, x))


def lookup(fn, a: np.ndarray, nans=None) -> np.ndarray:
    """``fn`` (float32 to float32) applied to a float16 or bfloat16 array and rounded once to
    its dtype, through a table of ``fn`` at all 65,536 values of the dtype, built on first use.
    ``nans`` (float16 only: ``f16_nan_bits``'s rule) gives the table's NaNs the bits of
    torch's kernel.

    >>> lookup(expf, np.array([6.84375], np.float16))
    array([938.], dtype=float16)
    """
    key = (fn, a.dtype, nans)
    table = _TABLES.get(key)
    if table is None:
        every = np.arange(65536, dtype=np.uint16).view(a.dtype)
        # Beyond float16's range: inf, as torch rounds; the NaN entries cast silently.
        with np.errstate(over="ignore", invalid="ignore"):
            table = np.asarray(fn(every.astype(_f32)), _f32).astype(a.dtype)
        if nans is not None and a.dtype == np.float16:
            f16_nan_bits(table.view(np.uint16), every.view(np.uint16), nans)
        _TABLES[key] = table
    return table[a.view(np.uint16)]


def _rule_bits(rule, src: np.ndarray) -> np.ndarray:
    if rule == "quiet":
        return src | 0x0200
    if rule == "quiet_neg":
        return (src | 0x0200) ^ 0x8000
    if rule == "same":
        return src
    if isinstance(rule, tuple):  # (bits where the input's sign is +, where it is -)
        return np.where(src & 0x8000, np.uint16(rule[1]), np.uint16(rule[0]))
    return np.uint16(rule)


def f16_nan_bits(out: np.ndarray, src: np.ndarray, nans) -> np.ndarray:
    """Set, in place, the bits of the NaNs of ``out`` (a float16 result's uint16 view) as
    torch's float32 kernel makes them and ``_mm256_cvtps_ph`` converts them (sign and top
    payload bits kept, quiet bit set), from the input's bits ``src``. ``nans`` is
    ``(rule for a NaN input, rule for a NaN made from a number)``, each "quiet" (the input
    passed on, quieted: SLEEF's arithmetic), "quiet_neg" (its sign flipped: sigmoid's
    ``1 / (1 + exp(-x))``), "same" (the input's bits), a constant (SLEEF's ``vor`` with an
    all-ones mask: 0xFFFF; its canonical ``NAN``: 0x7E00; x86's default NaN: 0xFE00) or a
    pair of constants by the input's sign.

    >>> out = np.array([0x7E00, 0x7E00], np.uint16)
    >>> [hex(v) for v in f16_nan_bits(out, np.array([0x7D01, 0x7C00], np.uint16),
    ...                                    ("quiet", 0xFFFF))]
    ['0x7f01', '0xffff']
    """
    nan = (out & 0x7FFF) > 0x7C00
    if not nan.any():
        return out
    src = np.broadcast_to(src, out.shape)
    given = nan & ((src & 0x7FFF) > 0x7C00)
    made = nan & ~given
    for m, rule in zip((given, made), nans):
        if rule is not None and m.any():
            out[m] = _rule_bits(rule, src[m])
    return out
