"""retrograd.special: the functions PyTorch also keeps under ``torch.special``.

They are the same ops as the top-level ones (``special.erf`` is ``retrograd.erf``), plus a few
composites that exist only here.

>>> import retrograd as torch
>>> torch.special.expit(torch.tensor([0.]))
tensor([0.5000])
"""

from __future__ import annotations

import numpy as np

from . import _sleef
from ._dtypes import FLOAT_CHARS, REDUCED, bfloat16
from ._sleef import lookup
from ._tensor import Tensor
from .autograd.graph import Node
from .ops import _array
from .ops import bessel as _bessel
from .ops._apply import apply
from .ops._core import (
    as_tensor_arg,
    bf16_nans,
    default_float,
    f16_xlogy_nans,
    float_array,
    operands,
)
from .ops.arithmetic import xlogy
from .ops.nn_activation import log_softmax, softmax
from .ops.reduction import logsumexp
from .ops.special import _erf as _np_erf
from .ops.special import _erfc as _np_erfc
from .ops.special import _erfinv as _np_erfinv
from .ops.special import digamma, erf, erfc, erfinv, lgamma, polygamma
from .ops.unary import exp2, expm1, log1p, logit, round, sigmoid

__all__ = [
    "digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln", "log1p",
    "log_ndtr", "log_softmax", "logit", "logsumexp", "ndtr", "ndtri", "polygamma", "psi",
    "round", "sinc", "softmax", "xlog1py", "xlogy",
]

expit = sigmoid
gammaln = lgamma
psi = digamma


# Each function below is one node named as PyTorch names it, with its derivative written in
# ``xp`` operations so that every order works (see ops/_array.py).

_SQRT1_2 = 0.7071067811865476
_SQRT2PI = 2.5066282746310002
_PI = 3.141592653589793


class _NdtrBackward(Node):
    _name = "MulBackward1"  # PyTorch's ndtr ends in a multiply by a number

    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * (xp.exp(x * x * -0.5) * (1 / _SQRT2PI))


def ndtr(input: Tensor) -> Tensor:  # noqa: A002
    """The standard normal CDF, ``(1 + erf(x / sqrt(2))) / 2``.

    >>> import retrograd as torch
    >>> torch.special.ndtr(torch.tensor([0.]))
    tensor([0.5000])
    """
    a = float_array(input)
    if a.dtype in REDUCED:  # torch's composite, each step rounded to the dtype
        f32 = np.float32
        s = (a.astype(f32) * f32(_SQRT1_2)).astype(a.dtype)
        e = lookup(_sleef.erff, s).astype(f32)
        out = (((f32(1) + e).astype(a.dtype).astype(f32)) * f32(0.5)).astype(a.dtype)
        if out.dtype == bfloat16.np:
            out = bf16_nans(out, vector=True)  # (its steps convert in vector code: 0xFFFF)
        return apply(_NdtrBackward, out, input, save=(input,))
    out = ((1 + _np_erf(a * a.dtype.type(_SQRT1_2))) * a.dtype.type(0.5)).astype(a.dtype)
    return apply(_NdtrBackward, out, input, save=(input,))


class SpecialNdtriBackward0(Node):
    def backward(self, xp, g):
        y = self.saved_output(xp.TENSORS)
        return g * (xp.exp(y * y * 0.5) * _SQRT2PI)


def ndtri(input: Tensor) -> Tensor:  # noqa: A002
    """The inverse of ``ndtr``: ``sqrt(2) * erfinv(2p - 1)``.

    >>> import retrograd as torch
    >>> torch.special.ndtri(torch.tensor([0.5]))
    tensor([0.])
    """
    a = float_array(input)
    out = (_np_erfinv(a * 2 - 1) * a.dtype.type(2 ** 0.5)).astype(a.dtype)
    return apply(SpecialNdtriBackward0, out, input, save_out=True)


class SpecialLogNdtrBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        y = self.saved_output(xp.TENSORS)
        return g * (xp.exp(x * x * -0.5 - y) * (1 / _SQRT2PI))


def log_ndtr(input: Tensor) -> Tensor:  # noqa: A002
    """``log(ndtr(x))``, through ``erfc`` so that it stays accurate for negative ``x``.

    >>> import retrograd as torch
    >>> torch.special.log_ndtr(torch.tensor([0.]))
    tensor([-0.6931])
    """
    a = float_array(input)
    out = np.log(_np_erfc(a * a.dtype.type(-_SQRT1_2)) * a.dtype.type(0.5)).astype(a.dtype)
    return apply(SpecialLogNdtrBackward0, out, input, save=(input,), save_out=True)


class SpecialEntrBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        return g * -(xp.log(x) + 1)


def entr(input: Tensor) -> Tensor:  # noqa: A002
    """``-x * log(x)`` elementwise (0 at 0, -inf below 0).

    >>> import retrograd as torch
    >>> torch.special.entr(torch.tensor([0.5, 0.]))
    tensor([0.3466, 0.0000])
    """
    a = float_array(input)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(a > 0, -a * np.log(np.where(a > 0, a, 1)), 0.0)
    out = np.where(a < 0, -np.inf, np.where(np.isnan(a), np.nan, out)).astype(a.dtype)
    if out.dtype == bfloat16.np:
        out = bf16_nans(out, vector=True)  # (torch's kernel: 0xFFFF)
    elif out.dtype == np.float16:
        out = np.where(a != a, a, out)  # (torch's float16 kernel returns a NaN input itself)
    return apply(SpecialEntrBackward0, out, input, save=(input,))


class SpecialXlog1PyBackward0(Node):
    def backward(self, xp, g):
        x, y = self.saved(xp.TENSORS)
        nf = self.next_functions
        gx = g * xp.where(x == 0, 0.0, xp.log1p(y)) if nf[0][0] is not None else None
        gy = g * x / (y + 1) if nf[1][0] is not None else None
        return gx, gy


def xlog1py(input: Tensor, other) -> Tensor:  # noqa: A002
    """``x * log1p(y)``, and 0 where ``x`` is 0 (unless ``y`` is NaN).

    >>> import retrograd as torch
    >>> torch.special.xlog1py(torch.tensor([0., 2.]), torch.tensor([5., 0.]))
    tensor([0., 0.])
    """
    # A number takes the tensor's dtype (a weak scalar, as PyTorch promotes): PyTorch's nodes
    # for a number (SpecialXlog1PyBackward1/2) are recorded as SpecialXlog1PyBackward0 here.
    if isinstance(input, Tensor):
        a, b = operands(input, other)
    else:
        b, a = operands(other, input)
    a, b = np.asarray(a), np.asarray(b)
    dt = a.dtype if a.dtype.char in FLOAT_CHARS else b.dtype
    if dt.char not in FLOAT_CHARS:  # integers: the default float dtype
        dt = default_float()
    a, b = a.astype(dt, copy=False), b.astype(dt, copy=False)
    other = other if isinstance(other, Tensor) else as_tensor_arg(other)
    input = input if isinstance(input, Tensor) else as_tensor_arg(input)
    with np.errstate(divide="ignore", invalid="ignore"):
        # 0 where x is 0, unless y is NaN (torch's kernel tests that first)
        out = np.where((a == 0) & (b == b), 0.0, a * np.log1p(b)).astype(dt)
    out = f16_xlogy_nans(out, a, b)
    if out.dtype == bfloat16.np:
        out = bf16_nans(out)  # (a kernel with scalar code only: 0x7FC0)
    return apply(SpecialXlog1PyBackward0, out, input, other, save=(input, other))


class SincBackward0(Node):
    def backward(self, xp, g):
        (x,) = self.saved(xp.TENSORS)
        px = x * _PI
        safe = xp.where(x == 0, 1.0, x)
        d = (px * xp.cos(px) - xp.sin(px)) / (safe * safe * _PI)
        return g * xp.where(x == 0, 0.0, d)


def sinc(input: Tensor) -> Tensor:  # noqa: A002
    """The normalised sinc, ``sin(pi x) / (pi x)``, 1 at 0.

    >>> import retrograd as torch
    >>> torch.special.sinc(torch.tensor([0., 0.5]))
    tensor([1.0000, 0.6366])
    """
    a = float_array(input)
    if a.dtype in REDUCED:
        return apply(SincBackward0, _sinc_reduced(a), input, save=(input,))
    return apply(SincBackward0, np.sinc(a).astype(a.dtype), input, save=(input,))


def _sinc_reduced(a: np.ndarray) -> np.ndarray:
    """float16/bfloat16 sinc as PyTorch's kernel: ``sin(p) / p`` with ``p = pi * x`` in
    float32 (a correctly rounded float32 sine), rounded once."""
    x = a.astype(np.float32)
    p = np.float32(np.pi) * x
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.sin(p.astype(np.float64)).astype(np.float32) / p
    out = np.where(x == 0, np.float32(1), r).astype(a.dtype)
    if out.dtype == bfloat16.np:
        out = bf16_nans(out)  # (a kernel with scalar code only: 0x7FC0)
    return out


_array.register(log1p=np.log1p)

# Bessel functions, incomplete gamma, zeta, erfcx and the orthogonal polynomials (ops/bessel.py).
globals().update(_bessel.SPECIAL)
__all__ += list(_bessel.SPECIAL)


def multigammaln(input: Tensor, p: int) -> Tensor:  # noqa: A002
    """The multivariate log-gamma of dimension ``p`` (``torch.mvlgamma``).

    >>> import retrograd as torch
    >>> torch.special.multigammaln(torch.tensor([2.5]), 2)
    tensor([0.8570])
    """
    return input.mvlgamma(p)


__all__ += ["multigammaln"]
