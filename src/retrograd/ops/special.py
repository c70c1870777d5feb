"""Special functions (erf, erfc, erfinv, lgamma, digamma, polygamma) on NumPy alone, and their ops.

The kernels work in float64 and aim at float64 accuracy (a few ulp):

- ``erfc(z)`` for ``z >= 0.5`` is ``erfcx(z) * exp(-z**2)``, with the smooth, bounded
  ``erfcx`` as piecewise Chebyshev series fitted once, at import, by interpolation at Chebyshev
  nodes (values from ``math.erfc`` near 0 and the continued fraction above 2); ``z**2`` is split
  so that its rounding does not grow with ``z``. ``erf`` uses its Taylor series near 0 and
  ``1 - erfc`` elsewhere.
- ``erfinv`` starts from Winitzki's closed form (three digits) and refines it with Halley steps on
  ``erf`` (or on ``erfc`` near +-1, where ``1 - |x|`` carries the information).
- ``lgamma`` and ``digamma`` shift the argument above 10 with the recurrence, use the Stirling /
  asymptotic series there, the Taylor series of ``lgamma`` around 1 and 2 (its zeros), and the
  reflection formula for negative arguments.
- ``polygamma(n, x)`` for ``n >= 1`` is ``(-1)**(n+1) n! zeta(n+1, x)``, with the Hurwitz zeta
  summed directly up to ``x + N >= 10`` and completed by Euler-Maclaurin.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _sleef
from .._tensor import Tensor
from ..autograd.graph import Node
from . import _array
from ._apply import apply, apply_unary
from ._core import float_array

_PI = math.pi
_SQRT_PI = math.sqrt(math.pi)
_TWO_OVER_SQRT_PI = 2.0 / _SQRT_PI
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_EULER = 0.57721566490153286061

# Bernoulli numbers B_2, B_4, ..., B_24.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730)


def _f64(x):
    return np.asarray(x, dtype=np.float64)


# -- erf, erfc ---------------------------------------------------------------------------------


def _erfcx_reference(z: float) -> float:
    """erfc(z) * exp(z**2) in double precision, for fitting: the continued fraction (z >= 2)."""
    if z < 2.0:
        return math.erfc(z) * math.exp(z * z)
    t = 0.0
    for k in range(400, 0, -1):
        t = (k / 2.0) / (z + t)
    return 1.0 / (_SQRT_PI * (z + t))


# erfcx = erfc(z) * exp(z**2) is smooth and bounded on z >= 0.5: Chebyshev pieces, fitted once.
_ERFC_PIECES = (0.5, 1.5, 3.0, 6.0, 12.0, 28.0)


def _fit_erfcx(a: float, b: float, deg: int = 24) -> np.ndarray:
    n = deg + 1
    ty = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    z = (ty + 1.0) * (0.5 * (b - a)) + a
    coef = np.polynomial.chebyshev.chebfit(ty, [_erfcx_reference(v) for v in z], deg)
    keep = np.nonzero(np.abs(coef) > 1e-18 * np.abs(coef[0]))[0]
    return coef[: keep[-1] + 1]


_ERFCX_COEF = tuple(_fit_erfcx(a, b) for a, b in zip(_ERFC_PIECES[:-1], _ERFC_PIECES[1:]))


def _chebval(ty, coef):
    """Clenshaw's recurrence for a Chebyshev series (NumPy's chebval, without its checks)."""
    b1 = np.zeros_like(ty)
    b2 = np.zeros_like(ty)
    ty2 = 2.0 * ty
    for c in coef[:0:-1]:
        b1, b2 = ty2 * b1 - b2 + c, b1
    return ty * b1 - b2 + coef[0]


def _erfc_pos(z):
    """erfc(z) for z >= 0.5 (float64 array; nan passes through)."""
    out = np.where(np.isnan(z), np.nan, 0.0)
    edges = _ERFC_PIECES
    for i, coef in enumerate(_ERFCX_COEF):
        a, b = edges[i], edges[i + 1]
        m = (z >= a) & (z < b)
        if not m.any():
            continue
        zm = z[m]
        r = _chebval((zm - a) * (2.0 / (b - a)) - 1.0, coef)
        # exp(-z**2) with z**2 split so its rounding does not grow with z.
        zh = np.trunc(zm * 16.0) / 16.0
        out[m] = r * np.exp(-zh * zh) * np.exp(-(zm - zh) * (zm + zh))
    return out


_ERF_TAYLOR = tuple((-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(20))


def _erf_small(x):
    """erf(x) for |x| <= 0.5 from its Taylor series."""
    x2 = x * x
    s = np.full_like(x, _ERF_TAYLOR[-1])
    for c in _ERF_TAYLOR[-2::-1]:
        s = s * x2 + c
    return _TWO_OVER_SQRT_PI * x * s


def erf_kernel(x):
    x = _f64(x)
    ax = np.abs(x)
    small = ax <= 0.5
    out = np.empty_like(x)
    out[small] = _erf_small(x[small])
    big = ~small
    xb = x[big]
    out[big] = np.copysign(1.0 - _erfc_pos(np.abs(xb)), xb)
    return out


def erfc_kernel(x):
    x = _f64(x)
    out = np.empty_like(x)
    small = np.abs(x) <= 0.5
    out[small] = 1.0 - _erf_small(x[small])
    pos = (x > 0.5) | np.isnan(x)
    out[pos] = _erfc_pos(x[pos])
    neg = x < -0.5
    out[neg] = 2.0 - _erfc_pos(-x[neg])
    return out


def erfinv_kernel(y):
    y = _f64(y)
    ay = np.abs(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        # Winitzki's approximation (three digits) as the starting point.
        a = 0.147
        ln = np.log((1.0 - ay) * (1.0 + ay))
        b = 2.0 / (_PI * a) + 0.5 * ln
        x = np.sqrt(np.sqrt(b * b - ln / a) - b)
        ok = ay < 1.0
        # Halley steps (cubic convergence): on erf near 0, and near 1 on erfc
        # against the exact 1 - |y|, which carries the information there.
        for tail in (False, True):
            part = ok & ((ay > 0.5) if tail else (ay <= 0.5))
            xp, yp = x[part], ay[part]
            for _ in range(3 if tail else 2):  # the start is rougher far in the tail
                if tail:
                    fx = (1.0 - yp) - erfc_kernel(xp)
                else:
                    fx = erf_kernel(xp) - yp
                d = fx / (_TWO_OVER_SQRT_PI * np.exp(-xp * xp))
                xp = xp - d / (1.0 + xp * d)
            x[part] = xp
        x = np.where(ay == 1.0, np.inf, x)
        x = np.where(ay > 1.0, np.nan, x)
        x = np.where(ay == 0.0, 0.0, x)
    return np.copysign(x, y)


# -- gamma family ------------------------------------------------------------------------------


def _hurwitz_zeta(s: int, q):
    """zeta(s, q) = sum_k (q + k) ** -s for an integer s >= 2, elementwise in q."""
    q = _f64(q)
    out = np.zeros_like(q)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pole = (q <= 0) & (q == np.floor(q))
        # (a pole takes no shift: -1e30, an integer, would have looped 1e30 times)
        shift = np.where(q < 10.0, np.ceil(10.0 - np.where(np.isfinite(q) & ~pole, q, 10.0)), 0.0)
        n = int(shift.max()) if shift.size else 0
        for k in range(n):
            m = k < shift
            out = out + np.where(m, (1.0 / (q + k)) ** s, 0.0)
        w = q + shift
        iw = 1.0 / w
        tail = iw ** (s - 1) / (s - 1) + 0.5 * iw ** s
        fac = float(s)          # s (s+1) ... (s+2j-2) / (2j)!
        pw = iw ** (s + 1)
        for j, b in enumerate(_BERNOULLI, start=1):
            tail = tail + (b * fac / math.factorial(2 * j)) * pw
            fac *= (s + 2 * j - 1) * (s + 2 * j)
            pw = pw * iw * iw
        out = out + tail
        out = np.where(pole, np.inf, out)
        out = np.where(q == np.inf, 0.0, out)
        out = np.where(q == -np.inf, np.nan, out)
    return out


_ZETA = {k: float(_hurwitz_zeta(k, np.array(1.0))) for k in range(2, 28)}
_LGAMMA1_TAYLOR = (0.0, -_EULER) + tuple((-1) ** k * _ZETA[k] / k for k in range(2, 28))


def _lgamma1p_small(z):
    """lgamma(1 + z) for |z| <= 0.2: Taylor series (exact near the zero at 1)."""
    s = np.full_like(z, _LGAMMA1_TAYLOR[-1])
    for c in _LGAMMA1_TAYLOR[-2::-1]:
        s = s * z + c
    return s


def _lgamma_pos(x):
    """lgamma(x) for finite x > 0."""
    out = np.empty_like(x)
    near1 = np.abs(x - 1.0) <= 0.2
    near2 = np.abs(x - 2.0) <= 0.2
    out[near1] = _lgamma1p_small(x[near1] - 1.0)
    z = x[near2] - 2.0
    out[near2] = _lgamma1p_small(z) + np.log1p(z)
    rest = ~(near1 | near2)
    xr = x[rest]
    shift = np.where(xr < 10.0, np.ceil(10.0 - xr), 0.0)
    prod = np.ones_like(xr)
    for k in range(int(shift.max()) if shift.size else 0):
        prod = prod * np.where(k < shift, xr + k, 1.0)
    w = xr + shift
    iw = 1.0 / w
    iw2 = iw * iw
    series = np.zeros_like(w)
    for k in range(len(_BERNOULLI[:9]), 0, -1):
        b = _BERNOULLI[k - 1]
        series = series * iw2 + b / (2 * k * (2 * k - 1))
    with np.errstate(over="ignore", invalid="ignore"):
        st = (w - 0.5) * np.log(w) - w + _HALF_LOG_2PI + series * iw
    out[rest] = np.where(w == np.inf, np.inf, st) - np.log(prod)
    return out


def _abs_sinpi(x):
    r = x - np.round(x)
    return np.abs(np.sin(_PI * r))


def lgamma_kernel(x):
    x = _f64(x)
    out = np.empty_like(x)
    pos = x > 0
    out[pos] = _lgamma_pos(x[pos])
    neg = ~pos & np.isfinite(x)
    xn = x[neg]
    with np.errstate(divide="ignore", invalid="ignore"):
        out[neg] = np.log(_PI / _abs_sinpi(xn)) - _lgamma_pos(1.0 - xn)
    out[np.isnan(x)] = np.nan
    out[x == -np.inf] = np.inf
    return out


def _digamma_pos(x):
    """digamma(x) for x > 0."""
    shift = np.where(x < 10.0, np.ceil(10.0 - x), 0.0)
    acc = np.zeros_like(x)
    for k in range(int(shift.max()) if shift.size else 0):
        acc = acc + np.where(k < shift, 1.0 / (x + k), 0.0)
    w = x + shift
    iw = 1.0 / w
    iw2 = iw * iw
    series = np.zeros_like(w)
    for k in range(9, 0, -1):
        series = series * iw2 + _BERNOULLI[k - 1] / (2 * k)
    with np.errstate(invalid="ignore"):
        r = np.log(w) - 0.5 * iw - series * iw2
    return np.where(w == np.inf, np.inf, r) - acc


def digamma_kernel(x):
    x = _f64(x)
    out = np.empty_like(x)
    pos = x > 0
    out[pos] = _digamma_pos(x[pos])
    neg = x < 0
    xn = x[neg]
    with np.errstate(divide="ignore", invalid="ignore"):
        r = xn - np.round(xn)
        refl = _digamma_pos(1.0 - xn) - _PI / np.tan(_PI * r)
        out[neg] = np.where((r == 0) | np.isinf(xn), np.nan, refl)
    zero = x == 0
    # PyTorch: -inf at +0 and +inf at -0, as the limit from the side of the sign.
    out[zero] = np.copysign(np.inf, -x[zero])
    out[np.isnan(x)] = np.nan
    return out


def polygamma_kernel(n: int, x):
    if n == 0:
        return digamma_kernel(x)
    sign = 1.0 if n % 2 == 1 else -1.0
    return sign * math.factorial(n) * _hurwitz_zeta(n + 1, x)


# -- ops ---------------------------------------------------------------------------------------


def _cast_kernel(kernel):
    """A float64 kernel applied to an array of any float dtype, the result in that dtype."""

    def fn(a):
        dt = a.dtype
        with np.errstate(all="ignore"):
            # Kernels work on flat arrays (boolean masks; 0-d would collapse to scalars).
            return kernel(a.reshape(-1)).reshape(a.shape).astype(dt, copy=False)

    return fn


_erf = _cast_kernel(erf_kernel)
_erfc = _cast_kernel(erfc_kernel)
_erfinv = _cast_kernel(erfinv_kernel)
_lgamma = _cast_kernel(lgamma_kernel)
_digamma = _cast_kernel(digamma_kernel)


class ErfBackward0(Node):
    forward = staticmethod(_erf)
    reduced = staticmethod(_sleef.erff)  # float16/bfloat16: torch's vectorised float32 erf
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * (_TWO_OVER_SQRT_PI * xp.exp(-(x * x)))


class ErfcBackward0(Node):
    forward = staticmethod(_erfc)
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * (-_TWO_OVER_SQRT_PI * xp.exp(-(x * x)))


class ErfinvBackward0(Node):
    """Keeps its input and finds erfinv again in backward, as PyTorch's node does (its
    ``_saved_self``; the result changed in place is no error)."""

    forward = staticmethod(_erfinv)
    f16_nans = ("quiet", 0x7E00)  # calc_erfinv's quiet_NaN() out of [-1, 1]
    saves = "input"

    def backward(self, xp, g):
        y = xp.erfinv(self.saved(xp.TENSORS)[0])
        return g * (0.5 * _SQRT_PI * xp.exp(y * y))


def _lgamma_reduced(x):
    """lgamma of float16/bfloat16 values in float32, infinite where SLEEF's ``lgammaf`` (torch's
    kernel) overflows: it forms ``x log x`` first, beyond float32 from about 4.05e36; SLEEF's
    algorithm itself between 0.5 and 2.3."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        big = x.astype(np.float64) * np.log(np.abs(x.astype(np.float64))) > 3.4028234663852886e38
        out = np.where(big, np.float32(np.inf), _lgamma(x)).astype(np.float32)
        # SLEEF's own steps where they alone decide float16's last bit (x = 2.2637 ...)
        mid = (x >= np.float32(0.5)) & (x < np.float32(2.3))
        return np.where(mid, _sleef.lgammaf_mid(x), out)


class LgammaBackward0(Node):
    forward = staticmethod(_lgamma)
    reduced = staticmethod(_lgamma_reduced)  # float16/bfloat16: torch's float32 overflow
    f16_nans = ("quiet", None)  # SLEEF passes a NaN input on
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * xp.digamma(x)


class DigammaBackward0(Node):
    forward = staticmethod(_digamma)
    reduced = staticmethod(_sleef.digammaf)  # float16/bfloat16: torch's float32 kernel
    saves = "input"

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * xp.polygamma(1, x)


def _array_polygamma(n, x):
    with np.errstate(all="ignore"):
        return polygamma_kernel(n, x.reshape(-1)).reshape(x.shape).astype(x.dtype, copy=False)


class PolygammaBackward0(Node):
    """``forward(n, a)``: the order ``n`` is an attribute of the node, not an input."""

    forward = staticmethod(_array_polygamma)
    _n = 0

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * xp.polygamma(self._n + 1, x)


class PolygammaBackward1(PolygammaBackward0):
    """The in-place ``polygamma_`` (another overload in PyTorch)."""


def erf(input) -> Tensor:  # noqa: A002
    """The error function.

    >>> import retrograd as torch
    >>> torch.erf(torch.tensor([0., 1.]))
    tensor([0.0000, 0.8427])
    """
    return apply_unary(ErfBackward0, input)


def erfc(input) -> Tensor:  # noqa: A002
    """The complementary error function ``1 - erf(x)``, accurate where it is tiny.

    >>> import retrograd as torch
    >>> torch.erfc(torch.tensor([0., 1.]))
    tensor([1.0000, 0.1573])
    """
    return apply_unary(ErfcBackward0, input)


def erfinv(input) -> Tensor:  # noqa: A002
    """The inverse of ``erf`` on (-1, 1); +-inf at +-1, nan outside.

    >>> import retrograd as torch
    >>> torch.erfinv(torch.tensor([0., 0.5]))
    tensor([0.0000, 0.4769])
    """
    return apply_unary(ErfinvBackward0, input)


def lgamma(input) -> Tensor:  # noqa: A002
    """``log(|gamma(x)|)``.

    >>> import retrograd as torch
    >>> torch.lgamma(torch.tensor([1., 3.]))
    tensor([0.0000, 0.6931])
    """
    return apply_unary(LgammaBackward0, input)


def digamma(input) -> Tensor:  # noqa: A002
    """The logarithmic derivative of gamma, ``lgamma'(x)``.

    >>> import retrograd as torch
    >>> torch.digamma(torch.tensor([1.]))
    tensor([-0.5772])
    """
    return apply_unary(DigammaBackward0, input)


def polygamma(n: int, input) -> Tensor:  # noqa: A002
    """The ``n``-th derivative of ``digamma``.

    >>> import retrograd as torch
    >>> torch.polygamma(1, torch.tensor([1.]))
    tensor([1.6449])
    """
    return _polygamma(n, input, PolygammaBackward0)


def _polygamma(n, input, cls):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0 and cls is PolygammaBackward0:
        return digamma(input)
    return apply(cls, cls.forward(n, float_array(input)), input, save=(input,), _n=n)


def _polygamma_method(self, n: int) -> Tensor:
    return polygamma(n, self)


_array.register(erf=ErfBackward0.forward, erfc=ErfcBackward0.forward,
                erfinv=ErfinvBackward0.forward, lgamma=LgammaBackward0.forward,
                digamma=DigammaBackward0.forward, polygamma=PolygammaBackward0.forward)

__all__: list = ["erf", "erfc", "erfinv", "lgamma", "digamma", "polygamma"]
XP: list = []
METHODS: dict = {"erf": erf, "erfc": erfc, "erfinv": erfinv, "lgamma": lgamma,
                 "digamma": digamma, "polygamma": _polygamma_method}
INPLACE: dict = {"erf_": erf, "erfc_": erfc, "erfinv_": erfinv, "lgamma_": lgamma,
                 "digamma_": digamma,
                 "polygamma_": lambda self, n: _polygamma(n, self, PolygammaBackward1)}
