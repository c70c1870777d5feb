"""PyTorch's gamma sampler and its reparameterised gradient: ``_standard_gamma``,
``_standard_gamma_grad`` and ``_sample_dirichlet``, the primitives under the gamma family of
``retrograd.distributions`` (Gamma, Chi2, Beta, Dirichlet, StudentT, ...).

The sampler is ATen's ``sample_gamma`` (Marsaglia and Tsang's rejection method, with the boost
``Gamma(a) = Gamma(a + 1) * U ** (1 / a)`` below 1) driven, as ``_s_gamma_cpu``, by the
generator's float64 uniform and cached Box-Muller normal draws, so that the same seed gives
PyTorch's numbers. Its arithmetic is plain double (ATen builds this kernel without fused
multiply-adds), except where the kernel computes in the input's float type: a float32 ``alpha``
is boosted and shifted by ``1/3`` in float32, and the literals ``1.0f / 3.0f`` and ``0.0331f``
are float32 constants even in the float64 kernel.

>>> import retrograd as torch
>>> torch.manual_seed(0)
<retrograd.Generator object at ...>
>>> torch._standard_gamma(torch.tensor([1.0, 2.0]))
tensor([2.8824, 1.3158])
"""

from __future__ import annotations

import math

import numpy as np

from . import _dists
from ._creation import check_tensor_arg
from ._mt import Engine
from ._random import Generator, _engine
from ._tensor import Tensor
from .autograd.graph import Node
from .ops._apply import apply
from .ops.arithmetic import NotImplementedBackward
from .ops.special import digamma_kernel

__all__ = ["_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet"]

_THIRD_F = float(np.float32(1.0) / np.float32(3.0))  # the kernel's 1.0f / 3.0f
_C0331_F = float(np.float32(0.0331))


def _gamma_one(eng: Engine, alpha, f32: bool) -> float:
    """One ``sample_gamma`` draw for ``alpha`` (a float32 kernel when ``f32``), unclamped."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        if f32:
            inv = float(np.float32(1.0) / alpha)
            alpha = np.float32(alpha + np.float32(1.0))
        else:
            inv = 1.0 / alpha
            alpha = alpha + 1.0
        scale *= math.pow(1.0 - float(_dists.unit_double(eng, 1)[0]), inv)
    if f32:
        d = float(np.float32(alpha - np.float32(_THIRD_F)))
    else:
        d = alpha - _THIRD_F
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = float(_dists.normal_double(eng, 1, 0.0, 1.0)[0])
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1.0 - float(_dists.unit_double(eng, 1)[0])
        xx = x * x
        if u < 1.0 - _C0331_F * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def gamma_samples(eng: Engine, alphas: np.ndarray, f32: bool) -> np.ndarray:
    """``sample_gamma`` for each alpha (flat, in fill order), as float64 values."""
    out = np.empty(alphas.size, np.float64)
    vals = alphas.astype(np.float32).tolist() if f32 else alphas.tolist()
    for idx, a in enumerate(vals):
        out[idx] = _gamma_one(eng, np.float32(a) if f32 else a, f32)
    return out


def gamma_grad_kernel(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """ATen's ``standard_gamma_grad_one`` in float64: ``-(d/dalpha cdf(x; alpha)) / pdf(x;
    alpha)`` by a Taylor series for small ``x``, Rice's saddle point expansion for large
    ``alpha`` and a bivariate rational approximation otherwise."""
    a = np.asarray(alpha, np.float64)
    x = np.asarray(x, np.float64)
    a, x = np.broadcast_arrays(a, x)
    out = np.empty(a.shape, np.float64)
    with np.errstate(all="ignore"):
        # Taylor series for x < 0.8
        numer = np.ones_like(a)
        denom = a.copy()
        s1 = numer / denom
        s2 = numer / (denom * denom)
        for i in range(1, 6):
            numer = numer * (-x / i)
            denom = denom + 1
            s1 = s1 + numer / denom
            s2 = s2 + numer / (denom * denom)
        pxa = np.power(x, a)
        pdf = np.power(x, a - 1) * np.exp(-x)
        cdf = pxa * s1
        cdf_a = (np.log(x) - digamma_kernel(a)) * cdf - pxa * s2
        small = -cdf_a / pdf
        small = np.where(np.isnan(small), 0.0, small)
        # Rice saddle point for alpha > 8
        n1 = 1 + 24 * a * (1 + 12 * a)
        n2 = 1440 * (a * a) + 6 * x * (53 - 120 * x) - 65 * x * x / a + a * (107 + 3600 * x)
        near = n1 * n2 / (1244160 * (a * a) * (a * a))
        den = np.sqrt(8 * a)
        t2 = den / (a - x)
        t3 = np.power(x - a - a * np.log(x / a), -1.5)
        t23 = np.where(x < a, t2 - t3, t2 + t3)
        t1 = np.log(x / a) * t23 - np.sqrt(2 / a) * (a + x) / ((a - x) * (a - x))
        stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
        far = -stirling * (x * t1) / den
        big = np.where((0.9 * a <= x) & (x <= 1.1 * a), near, far)
        # rational approximation
        u = np.log(x / a)
        v = np.log(a)
        cv = [_UV[0][i] + u * (_UV[1][i] + u * _UV[2][i]) for i in range(8)]
        p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]))
        q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]))
        rat = np.exp(p / q)
    out = np.where(x < 0.8, small, np.where(a > 8.0, big, rat))
    return out


_UV = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07),
)


def _grad_array(alpha: np.ndarray, out: np.ndarray) -> np.ndarray:
    return gamma_grad_kernel(alpha, out).astype(np.result_type(alpha, out))


class StandardGammaBackward0(Node):
    """The reparameterised gradient: ``grad * _standard_gamma_grad(alpha, sample)``."""

    saves = "input"

    def backward(self, xp, g):
        (alpha,) = self.saved(xp.TENSORS)
        out = self.saved_output(xp.TENSORS)
        if xp.TENSORS:
            return g * _standard_gamma_grad(alpha, out)
        return g * _grad_array(alpha, out)


def _float_check(t: Tensor, op: str) -> None:
    if not t.dtype.is_floating_point or t._data.dtype.itemsize < 4:
        raise NotImplementedError(f'"{op}" not implemented for \'{t.dtype.scalar_name}\'')


class StandardGammaGradBackward0(Node):
    """PyTorch has no derivative for ``_standard_gamma_grad``: backward raises its error."""

    def backward(self, xp, g):
        raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")


def _standard_gamma(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Samples from standard gamma distributions with the concentrations in ``input`` (same
    shape and dtype), PyTorch's numbers under the same seed; differentiable (reparameterised).

    >>> import retrograd as torch
    >>> torch._standard_gamma(torch.zeros(2))
    tensor([1.1755e-38, 1.1755e-38])
    """
    check_tensor_arg(input, "_standard_gamma")
    _float_check(input, "gamma_cpu")
    arr = input._data
    f32 = arr.dtype == np.float32
    res = gamma_samples(_engine(generator), np.ascontiguousarray(arr).reshape(-1), f32)
    res = res.astype(arr.dtype).reshape(arr.shape)
    res = np.maximum(res, np.finfo(arr.dtype).tiny)
    return apply(StandardGammaBackward0, res, input, save=(input,), save_out=True)


def _standard_gamma_grad(input: Tensor, output: Tensor) -> Tensor:
    """The derivative of a standard gamma sample ``output`` with respect to its concentration
    ``input`` (PyTorch's approximation); not differentiable itself.

    >>> import retrograd as torch
    >>> torch._standard_gamma_grad(torch.tensor([1.0]), torch.tensor([1.0]))
    tensor([1.1736])
    """
    check_tensor_arg(input, "_standard_gamma_grad")
    check_tensor_arg(output, "_standard_gamma_grad")
    res = _grad_array(input._data, output._data)
    return apply(StandardGammaGradBackward0, res, input, output)


def _sample_dirichlet(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Samples from Dirichlet distributions with the concentrations in ``input`` (the last
    dimension), as PyTorch's ``_s_dirichlet_cpu``: float64 gamma draws normalised by their sum,
    kept inside ``[tiny, 1)``.

    >>> import retrograd as torch
    >>> torch._sample_dirichlet(torch.ones(3)).sum().item() > 0.99
    True
    """
    check_tensor_arg(input, "_sample_dirichlet")
    _float_check(input, "dirichlet")
    arr = input._data
    g = gamma_samples(_engine(generator), np.ascontiguousarray(arr).reshape(-1), False)
    g = np.maximum(g, np.finfo(np.float64).tiny).reshape(arr.shape)
    total = g.sum(-1, keepdims=True) if arr.ndim else g
    ret = (g / total).astype(arr.dtype)
    top = np.nextafter(arr.dtype.type(1), arr.dtype.type(0))
    ret = np.minimum(top, np.maximum(np.finfo(arr.dtype).tiny, ret))
    return apply(NotImplementedBackward, ret, input, _op="_sample_dirichlet")
