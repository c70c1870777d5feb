"""Bessel functions, incomplete gamma, Hurwitz zeta, erfcx and the orthogonal polynomials of
``torch.special``, computed on NumPy arrays.

The kernels use quadratures that converge exponentially for these analytic integrands (the
trapezoid rule over a full period for ``I_n`` and ``J_n``, over the whole line for ``K_n``,
Gauss-Legendre for ``Y_n``), asymptotic series for large arguments, series and Lentz's
continued fraction for the incomplete gamma, and Euler-Maclaurin summation for zeta.

Differentiable where PyTorch is: ``i0``, ``i0e``, ``i1``, ``i1e``, ``erfcx`` and the incomplete
gamma functions in ``x``; each is one node named as PyTorch names it, its formula written in
``xp`` so every order works. The others (``bessel_j0`` ..., the polynomials, ``zeta``) have no
derivative in PyTorch either and record nothing.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import _sleef
from .._dtypes import REDUCED, bfloat16
from .._rng_math import fma64
from .._sleef import lookup
from .._tensor import Tensor
from ..autograd.graph import Node
from . import _array
from ._apply import apply
from ._core import (
    as_tensor_arg,
    bf16_nans,
    float_array,
    put_tail,
    scalar_loop,
    unary_nans,
    wrap,
)
from .special import _erfc, _lgamma

__all__ = ["i0", "igamma", "igammac"]
XP = ["special_i1", "special_i0e", "special_i1e", "special_erfcx"]

_SQRT_PI = math.sqrt(math.pi)
_LN_MAX = 700.0


# -- kernels (float64 in, float64 out) -----------------------------------------------------------
def _asym_i_scaled(nu: int, ax: np.ndarray) -> np.ndarray:
    """``exp(-x) I_nu(x)`` for large ``x`` (the Hankel expansion)."""
    mu = 4.0 * nu * nu
    term = np.ones_like(ax)
    total = np.ones_like(ax)
    for k in range(1, 25):
        term = term * -(mu - (2 * k - 1) ** 2) / (k * 8.0 * ax)
        total = total + term
    return total / np.sqrt(2 * np.pi * ax)


def _bessel_i_scaled(nu: int, x: np.ndarray) -> np.ndarray:
    """``exp(-|x|) I_nu(x)`` for ``nu`` 0 or 1."""
    ax = np.abs(x)
    small = ax <= 30
    out = np.empty_like(ax)
    a = ax[small]
    n = 96  # the trapezoid over a full period: exact up to I_96(30) / I_0(30) ~ 1e-35
    t = 2 * np.pi * np.arange(n) / n
    acc = np.zeros_like(a)
    for tk in t:
        acc += np.exp(a * (np.cos(tk) - 1)) * np.cos(nu * tk)
    out[small] = acc / n
    big = ~small
    out[big] = _asym_i_scaled(nu, ax[big])
    if nu == 1:
        # Below 2, the power series (the trapezoid's terms cancel there: i1(1e-10) was off by
        # 1.5e-7 relative, i1 of a subnormal 2e-17): sum (x/2)^(2k+1) / (k! (k+1)!).
        near = ax < 2
        if near.any():
            h = ax[near] / 2
            q, term = h * h, h.copy()
            acc = h.copy()
            for k in range(1, 25):
                term = term * q / (k * (k + 1))
                acc += term
            out[near] = acc * np.exp(-ax[near])
        out = np.where(x < 0, -out, np.where(x == 0, 0.0, out))
    return out


def _bessel_i(nu: int, x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return _bessel_i_scaled(nu, x) * np.exp(np.abs(x))


def _bessel_k_scaled(nu: int, x: np.ndarray) -> np.ndarray:
    """``exp(x) K_nu(x)``: the trapezoid rule on ``int_0^inf exp(-x (cosh t - 1)) cosh(nu t)``."""
    out = np.full_like(x, np.nan)
    pos = x > 0
    out[x == 0] = np.inf
    a = x[pos]
    if a.size:
        h = 0.1
        tmax = np.arccosh(1 + _LN_MAX / a.min())
        acc = 0.5 * np.ones_like(a)
        for k in range(1, int(tmax / h) + 2):
            t = k * h
            acc += np.exp(-a * (np.cosh(t) - 1)) * np.cosh(nu * t)
        out[pos] = acc * h
    return out


def _bessel_k(nu: int, x: np.ndarray) -> np.ndarray:
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        return _bessel_k_scaled(nu, x) * np.exp(-x)


def _asym_jy(nu: int, x: np.ndarray):
    """``(J_nu(x), Y_nu(x))`` for large positive ``x``."""
    mu = 4.0 * nu * nu
    p, q = np.ones_like(x), np.zeros_like(x)
    term = np.ones_like(x)
    for k in range(1, 30):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        if k % 2:
            q = q + (term if (k // 2) % 2 == 0 else -term)
        else:
            p = p + (-term if (k // 2) % 2 else term)
    chi = x - (nu / 2 + 0.25) * np.pi
    amp = np.sqrt(2 / (np.pi * x))
    return amp * (p * np.cos(chi) - q * np.sin(chi)), amp * (p * np.sin(chi) + q * np.cos(chi))


def _bessel_j(nu: int, x: np.ndarray) -> np.ndarray:
    ax = np.abs(x)
    out = np.empty_like(ax)
    small = ax <= 25
    a = ax[small]
    n = 96
    t = 2 * np.pi * np.arange(n) / n
    acc = np.zeros_like(a)
    for tk in t:
        acc += np.cos(nu * tk - a * np.sin(tk))
    out[small] = acc / n
    out[~small] = _asym_jy(nu, ax[~small])[0]
    if nu == 1:
        out = np.where(x < 0, -out, np.where(x == 0, 0.0, out))
    return out


_GL_X, _GL_W = np.polynomial.legendre.leggauss(120)


def _bessel_y(nu: int, x: np.ndarray) -> np.ndarray:
    out = np.full_like(x, np.nan)
    out[x == 0] = -np.inf
    big = x > 25
    out[big] = _asym_jy(nu, x[big])[1]
    mid = (x > 0) & ~big
    a = x[mid]
    if a.size:
        th = (_GL_X + 1) * np.pi / 2  # nodes on [0, pi]
        first = (np.sin(a[:, None] * np.sin(th) - nu * th) * _GL_W).sum(1) * (np.pi / 2) / np.pi
        tmax = np.arcsinh(_LN_MAX / a)[:, None]
        t = (_GL_X + 1) / 2 * tmax
        sign = -1.0 if nu % 2 else 1.0
        with np.errstate(over="ignore", under="ignore"):
            f = (np.exp(nu * t) + sign * np.exp(-nu * t)) * np.exp(-a[:, None] * np.sinh(t))
        second = (f * _GL_W).sum(1) * tmax[:, 0] / 2 / np.pi
        out[mid] = first - second
    return out


def _erfcx(x: np.ndarray) -> np.ndarray:
    """``exp(x^2) erfc(x)``: directly for small ``|x|``, by Laplace's continued fraction above."""
    out = np.empty_like(x)
    cf = x >= 2
    a = x[cf]
    tail = np.zeros_like(a)
    for k in range(80, 0, -1):
        tail = (k / 2) / (a + tail)
    out[cf] = 1 / (_SQRT_PI * (a + tail))
    rest = ~cf
    b = x[rest]
    with np.errstate(over="ignore", invalid="ignore"):
        direct = np.exp(b * b) * _erfc(b)
        neg_big = b < -26
        direct = np.where(neg_big, np.inf, direct)
    out[rest] = direct
    return out


def _gammainc(a: np.ndarray, x: np.ndarray, upper: bool) -> np.ndarray:
    """The regularized lower (or upper) incomplete gamma: a series where ``x < a + 1``,
    Lentz's continued fraction elsewhere."""
    a, x = np.broadcast_arrays(a, x)
    out = np.full(a.shape, np.nan)
    ok = (a >= 0) & (x >= 0)
    with np.errstate(all="ignore"):
        lgam = _lgamma(np.where(a > 0, a, 1.0))
        pre = np.exp(-x + a * np.log(np.where(x > 0, x, 1.0)) - lgam)
        ser = ok & (x < a + 1) & (a > 0)
        ap, s = a.astype(np.float64).copy(), 1 / np.where(a > 0, a, 1.0)
        d = s.copy()
        for _ in range(500):
            ap = ap + 1
            d = d * x / ap
            s = s + d
        lower = s * pre
        # Lentz's continued fraction for Q (modified to start at b = x + 1 - a)
        tiny = 1e-300
        b = x + 1 - a
        c = np.full(a.shape, 1 / tiny)
        dd = 1 / np.where(b == 0, tiny, b)
        h = dd.copy()
        for i in range(1, 500):
            an = -i * (i - a)
            b = b + 2
            dd = an * dd + b
            dd = 1 / np.where(dd == 0, tiny, dd)
            c = b + an / c
            c = np.where(c == 0, tiny, c)
            h = h * dd * c
        upper_cf = pre * h
    p = np.where(ser, lower, 1 - upper_cf)
    q = np.where(ser, 1 - lower, upper_cf)
    res = q if upper else p
    out[ok] = res[ok]
    zero_x = ok & (x == 0)
    out[zero_x] = 1.0 if upper else 0.0
    zero_a = ok & (a == 0) & (x > 0)
    out[zero_a] = 0.0 if upper else 1.0
    out[ok & np.isinf(x)] = 0.0 if upper else 1.0
    return out


# Bernoulli numbers B_2 .. B_24 over (2k)!, for Euler-Maclaurin.
_B2K = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798,
        -174611 / 330, 854513 / 138, -236364091 / 2730]


def _zeta(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The Hurwitz zeta ``sum_k (k + q)^-x`` (Euler-Maclaurin with 9 terms summed)."""
    x, q = np.broadcast_arrays(x.astype(np.float64), q.astype(np.float64))
    n = 9
    with np.errstate(all="ignore"):
        s = sum((q + k) ** -x for k in range(n))
        w = q + n
        s = s + w ** (1 - x) / (x - 1) + 0.5 * w**-x
        fact, poch = 1.0, x.copy()  # x (x+1) ... (x+2k-2)
        for k, b in enumerate(_B2K, start=1):
            fact *= (2 * k - 1) * (2 * k)
            s = s + b / fact * poch * w ** (-x - 2 * k + 1)
            poch = poch * (x + 2 * k - 1) * (x + 2 * k)
    s = np.where(x == 1, np.inf, s)
    s = np.where(x < 1, np.nan, s)
    s = np.where((q <= 0) & (q == np.floor(q)), np.inf, s)
    return np.where((q <= 0) & (q != np.floor(q)), np.nan, s)


def _poly(kind: str, x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The orthogonal polynomials by their three-term recurrences (0 where ``n < 0``)."""
    x, n = np.broadcast_arrays(x.astype(np.float64), np.asarray(n))
    n = n.astype(np.int64)
    if kind.startswith("shifted_"):
        kind, x = kind[len("shifted_"):], 2 * x - 1
    first = {"t": x, "u": 2 * x, "v": 2 * x - 1, "w": 2 * x + 1, "h": 2 * x, "he": x,
             "l": 1 - x, "p": x}[kind]
    prev, cur = np.ones_like(x), first
    out = np.where(n == 0, prev, np.where(n == 1, cur, 0.0))
    top = int(n.max(initial=0))
    for k in range(1, top):
        if kind in ("t", "u", "v", "w"):
            nxt = 2 * x * cur - prev
        elif kind == "h":
            nxt = 2 * x * cur - 2 * k * prev
        elif kind == "he":
            nxt = x * cur - k * prev
        elif kind == "l":
            nxt = ((2 * k + 1 - x) * cur - k * prev) / (k + 1)
        else:
            nxt = ((2 * k + 1) * x * cur - k * prev) / (k + 1)
        prev, cur = cur, nxt
        out = np.where(n == k + 1, cur, out)
    return out


# Cephes's Chebyshev coefficients of exp(-x) I1(x) / x on [0, 8] and exp(-x) sqrt(x) I1(x) on
# (8, inf), as ATen's calc_i1/calc_i1e take them: all of them in float64, the last 17 and 7 in
# float32 (chebyshev_coefficients_i1e_A/B).
_I1_A = (
    2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
    -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
    3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
    -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
    9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
    -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
    4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
    -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
    2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
    -1.76416518357834055153E-1, 2.52587186443633654823E-1)
_I1_B = (
    7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
    -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
    -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
    4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
    -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
    3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
    -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
    -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
    7.78576235018280120474E-1)


def _chbevl(x: np.ndarray, coef) -> np.ndarray:
    """Cephes's ``chbevl`` in ``x``'s precision with ``x * b1 - b2`` one fused step, as ATen's
    compiled kernels contract it (float32: ``_sleef``'s, for float32 coefficients)."""
    if x.dtype == np.float32:
        return _sleef._chbevl(x, tuple(np.float32(c) for c in coef))
    b0, b1, b2 = np.full_like(x, coef[0]), np.zeros_like(x), np.zeros_like(x)
    for c in coef[1:]:
        b2, b1 = b1, b0
        b0 = fma64(x, b1, -b2) + c
    return 0.5 * (b0 - b2)


def calc_i1(d: np.ndarray, scaled: bool = False) -> np.ndarray:
    """ATen's ``calc_i1`` (``calc_i1e`` when ``scaled``) on a float64 or float32 array: Cephes's
    Chebyshev expansions, bit for bit (float32 with its shorter coefficient tables; float16/
    bfloat16 kernels run the float32 one and round). float32 ``i1``'s ``std::exp`` is glibc's
    ``expf``, here float64's exp rounded: they differ in the last bit for about 1 in 3,000
    arguments.

    >>> [float(v) for v in calc_i1(np.array([1.0, -9.0]))]
    [0.5651591039924851, -1030.9147225169565]
    """
    f32 = d.dtype == np.float32
    a, b = (_I1_A[12:], _I1_B[18:]) if f32 else (_I1_A, _I1_B)
    x = np.abs(d)
    one = d.dtype.type
    with np.errstate(all="ignore"):
        e = 1 if scaled else (np.exp(x.astype(np.float64)).astype(d.dtype) if f32 else np.exp(x))
        lo = _chbevl(x / one(2) - one(2), a)
        lo = lo * x if scaled else e * x * lo
        hi = (e * _chbevl(one(32) / x - one(2), b)) / np.sqrt(x)
        out = np.where(x <= one(8), lo, hi)
    return np.where(d < 0, -out, out)


def _i1_kernel(scaled: bool):
    f32 = functools.partial(calc_i1, scaled=scaled)

    def kernel(a):
        if a.dtype in REDUCED:  # torch's float32 kernel, rounded once (scalar code only)
            out = lookup(f32, a)
            return bf16_nans(out) if a.dtype == bfloat16.np else out
        if a.dtype == np.float64 or a.dtype == np.float32:
            return calc_i1(a, scaled)
        return calc_i1(a.astype(np.float64), scaled).astype(a.dtype)
    return kernel


# -- nodes --------------------------------------------------------------------------------------
def _f64(fn):
    def kernel(a):
        with np.errstate(all="ignore"):
            return fn(a.astype(np.float64)).astype(a.dtype)
    return kernel


class I0Backward0(Node):
    forward = staticmethod(_f64(lambda a: _bessel_i(0, a)))
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * xp.special_i1(x)


class SpecialI1Backward0(Node):
    forward = staticmethod(_i1_kernel(False))
    saves = "input"
    _packs = (0, "=result")  # PyTorch keeps the result too (autograd/saved_hooks.py)

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        zero = x == 0
        safe = xp.where(zero, x * 0 + 1, x)
        return g * xp.where(zero, x * 0 + 0.5, xp.i0(x) - xp.special_i1(x) / safe)


class SpecialI0EBackward0(Node):
    forward = staticmethod(_f64(lambda a: _bessel_i_scaled(0, a)))
    saves = "input"
    _packs = (0, "=result")  # PyTorch keeps the result too (autograd/saved_hooks.py)

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * (xp.special_i1e(x) - xp.sign(x) * xp.special_i0e(x))


class SpecialI1EBackward0(Node):
    forward = staticmethod(_i1_kernel(True))
    saves = "input"
    _packs = (0, "=result")  # PyTorch keeps the result too (autograd/saved_hooks.py)

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        zero = x == 0
        safe = xp.where(zero, x * 0 + 1, x)
        grad = xp.special_i0e(x) - xp.special_i1e(x) * (xp.sign(x) + 1 / safe)
        return g * xp.where(zero, x * 0 + 0.5, grad)


class SpecialErfcxBackward0(Node):
    forward = staticmethod(_f64(_erfcx))
    saves = "input"
    _packs = (0, "=result")  # PyTorch keeps the result too (autograd/saved_hooks.py)

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * (2 * x * xp.special_erfcx(x) - 2 / _SQRT_PI)


class IgammaBackward0(Node):
    """``gammainc(a, x)``: PyTorch differentiates in ``x`` only."""

    saves = ((), (0, 1))

    def backward(self, xp, g):
        a, x = self.saved(xp.TENSORS)
        return None, g * xp.exp(-x + (a - 1) * xp.log(x) - xp.lgamma(a))


class IgammacBackward0(IgammaBackward0):
    def backward(self, xp, g):
        a, x = self.saved(xp.TENSORS)
        return None, -g * xp.exp(-x + (a - 1) * xp.log(x) - xp.lgamma(a))


def _unary(P, input):  # noqa: A002
    a = float_array(input)
    return apply(P, P.forward(a), input, save=(input,))


def i0(input: Tensor) -> Tensor:  # noqa: A002
    """The modified Bessel function of the first kind, order 0.

    >>> import retrograd as torch
    >>> torch.i0(torch.tensor([0.0, 1.0]))
    tensor([1.0000, 1.2661])
    """
    a = float_array(input)
    # float16/bfloat16: torch's float32 kernel (Cephes), bit for bit
    if a.dtype in REDUCED:
        out = unary_nans(I0Backward0, lookup(_sleef.i0f, a), a)
    else:
        out = I0Backward0.forward(a)
    return apply(I0Backward0, out, input, save=(input,))


def special_i1(input: Tensor) -> Tensor:  # noqa: A002
    """The modified Bessel function of the first kind, order 1."""
    return _unary(SpecialI1Backward0, input)


def special_i0e(input: Tensor) -> Tensor:  # noqa: A002
    """``exp(-|x|) i0(x)``.

    >>> import retrograd as torch
    >>> torch.special.i0e(torch.tensor([0.0, 1.0]))
    tensor([1.0000, 0.4658])
    """
    a = float_array(input)
    if a.dtype in REDUCED:  # torch's float32 kernel; its scalar loop in the dtype itself
        out = unary_nans(SpecialI0EBackward0, put_tail(
            lookup(_sleef.i0ef, a), scalar_loop(a.shape, a), _sleef.i0e_scalar, a), a)
    else:
        out = SpecialI0EBackward0.forward(a)
    return apply(SpecialI0EBackward0, out, input, save=(input,))


def special_i1e(input: Tensor) -> Tensor:  # noqa: A002
    """``exp(-|x|) i1(x)``."""
    return _unary(SpecialI1EBackward0, input)


def special_erfcx(input: Tensor) -> Tensor:  # noqa: A002
    """The scaled complementary error function ``exp(x^2) erfc(x)``."""
    return _unary(SpecialErfcxBackward0, input)


_array.register(i0=I0Backward0.forward, special_i1=SpecialI1Backward0.forward,
                special_i0e=SpecialI0EBackward0.forward, special_i1e=SpecialI1EBackward0.forward,
                special_erfcx=SpecialErfcxBackward0.forward)


def _pair(a, b):
    ta = a if isinstance(a, Tensor) else None
    tb = b if isinstance(b, Tensor) else None
    a = as_tensor_arg(a) if ta is None else ta
    b = as_tensor_arg(b) if tb is None else tb
    return a, b


def _incomplete(P, upper: bool, input, other) -> Tensor:  # noqa: A002
    a, x = _pair(input, other)
    aa, xa = a._data, x._data
    dt = aa.dtype if aa.dtype == xa.dtype else np.result_type(aa, xa)
    if dt.kind in "biu":
        dt = np.dtype(np.float32)
    out = _gammainc(aa.astype(np.float64), xa.astype(np.float64), upper).astype(dt)
    return apply(P, out, a, x, save=(a, x))


def gammainc(input, other) -> Tensor:  # noqa: A002
    """The regularized lower incomplete gamma ``P(a, x)`` (``torch.igamma``).

    >>> import retrograd as torch
    >>> torch.special.gammainc(torch.tensor([1.0]), torch.tensor([1.0]))
    tensor([0.6321])
    """
    return _incomplete(IgammaBackward0, False, input, other)


def gammaincc(input, other) -> Tensor:  # noqa: A002
    """The regularized upper incomplete gamma ``Q(a, x) = 1 - P(a, x)`` (``torch.igammac``).

    >>> import retrograd as torch
    >>> torch.special.gammaincc(torch.tensor([1.0]), torch.tensor([1.0]))
    tensor([0.3679])
    """
    return _incomplete(IgammacBackward0, True, input, other)


igamma = gammainc
igammac = gammaincc


def _plain(kernel, name: str, doc: str):
    def fn(input) -> Tensor:  # noqa: A002
        a = float_array(as_tensor_arg(input) if not isinstance(input, Tensor) else input)
        with np.errstate(all="ignore"):
            return wrap(kernel(a.astype(np.float64)).astype(a.dtype))
    fn.__name__ = name
    fn.__doc__ = doc
    return fn


def _two(kernel, name: str, doc: str):
    def fn(input, n) -> Tensor:  # noqa: A002
        x = input if isinstance(input, Tensor) else as_tensor_arg(input)
        nn = n._data if isinstance(n, Tensor) else np.asarray(n)
        xa = x._data
        dt = np.result_type(xa, nn) if isinstance(n, Tensor) and nn.dtype != xa.dtype \
            else xa.dtype
        if dt.kind in "biu":
            dt = np.dtype(np.float32)
        with np.errstate(all="ignore"):
            return wrap(np.asarray(kernel(xa.astype(np.float64), nn)).astype(dt))
    fn.__name__ = name
    fn.__doc__ = doc
    return fn


SPECIAL = {
    "i0": i0, "i1": special_i1, "i0e": special_i0e, "i1e": special_i1e, "erfcx": special_erfcx,
    "gammainc": gammainc, "gammaincc": gammaincc,
    "bessel_j0": _plain(lambda a: _bessel_j(0, a), "bessel_j0", "Bessel J0 (no gradient)."),
    "bessel_j1": _plain(lambda a: _bessel_j(1, a), "bessel_j1", "Bessel J1 (no gradient)."),
    "bessel_y0": _plain(lambda a: _bessel_y(0, a), "bessel_y0", "Bessel Y0 (no gradient)."),
    "bessel_y1": _plain(lambda a: _bessel_y(1, a), "bessel_y1", "Bessel Y1 (no gradient)."),
    "modified_bessel_i0": _plain(lambda a: _bessel_i(0, a), "modified_bessel_i0",
                                 "Modified Bessel I0 (no gradient, as in PyTorch)."),
    "modified_bessel_i1": _plain(lambda a: _bessel_i(1, a), "modified_bessel_i1",
                                 "Modified Bessel I1 (no gradient, as in PyTorch)."),
    "modified_bessel_k0": _plain(lambda a: _bessel_k(0, a), "modified_bessel_k0",
                                 "Modified Bessel K0 (no gradient)."),
    "modified_bessel_k1": _plain(lambda a: _bessel_k(1, a), "modified_bessel_k1",
                                 "Modified Bessel K1 (no gradient)."),
    "scaled_modified_bessel_k0": _plain(lambda a: _bessel_k_scaled(0, a),
                                        "scaled_modified_bessel_k0", "exp(x) K0(x)."),
    "scaled_modified_bessel_k1": _plain(lambda a: _bessel_k_scaled(1, a),
                                        "scaled_modified_bessel_k1", "exp(x) K1(x)."),
    "spherical_bessel_j0": _plain(lambda a: np.where(a == 0, 1.0, np.sin(a) / np.where(
        a == 0, 1.0, a)), "spherical_bessel_j0", "sin(x) / x, 1 at 0 (no gradient)."),
    "zeta": _two(_zeta, "zeta", "The Hurwitz zeta function (no gradient)."),
}
for _kind, _name in (("t", "chebyshev_polynomial_t"), ("u", "chebyshev_polynomial_u"),
                     ("v", "chebyshev_polynomial_v"), ("w", "chebyshev_polynomial_w"),
                     ("shifted_t", "shifted_chebyshev_polynomial_t"),
                     ("shifted_u", "shifted_chebyshev_polynomial_u"),
                     ("shifted_v", "shifted_chebyshev_polynomial_v"),
                     ("shifted_w", "shifted_chebyshev_polynomial_w"),
                     ("h", "hermite_polynomial_h"), ("he", "hermite_polynomial_he"),
                     ("l", "laguerre_polynomial_l"), ("p", "legendre_polynomial_p")):
    SPECIAL[_name] = _two(lambda x, n, k=_kind: _poly(k, x, n), _name,
                          f"The polynomial ``{_name}`` of degree ``n`` at ``x`` (no gradient).")

METHODS = {"i0": i0, "igamma": gammainc, "igammac": gammaincc}
INPLACE = {"i0_": i0, "igamma_": gammainc, "igammac_": gammaincc}
