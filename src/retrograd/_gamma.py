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

__all__ = ["_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet", "_dirichlet_grad"]

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


# -- the Dirichlet (Beta) reparameterised gradient ----------------------------------------------
def _dg(x: float) -> float:
    return float(digamma_kernel(np.array([x], np.float64))[0])


def _beta_grad_alpha_small(x, alpha, beta, f: type) -> float:
    # computed in the input's float type ``f``, as the kernel's scalar_t (float32: np.float32)
    factor = f(_dg(alpha)) - f(_dg(alpha + beta)) - np.log(x)
    numer = f(1.0)
    series = numer / alpha * (factor + f(1) / alpha)
    for i in range(1, 11):
        numer *= (f(i) - beta) * x / f(i)
        denom = alpha + f(i)
        series += numer / denom * (factor + f(1) / denom)
    result = x * np.power(f(1) - x, -beta) * series
    return 0.0 if np.isnan(result) else float(result)


def _beta_grad_beta_small(x, alpha, beta, f: type) -> float:
    factor = f(_dg(alpha + beta)) - f(_dg(beta))
    numer, betas, dbetas, series = f(1.0), f(1.0), f(0.0), factor / alpha
    for i in range(1, 9):
        numer *= -x / f(i)
        dbetas = dbetas * (beta - f(i)) + betas
        betas = betas * (beta - f(i))
        series += numer / (alpha + f(i)) * (dbetas + factor * betas)
    result = -np.power(f(1) - x, f(1) - beta) * series
    return 0.0 if np.isnan(result) else float(result)


def _beta_grad_alpha_mid(x: float, alpha: float, beta: float) -> float:
    total = alpha + beta
    mean = alpha / total
    std = math.sqrt(alpha * beta / (total + 1)) / total
    if mean - 0.1 * std <= x <= mean + 0.1 * std:  # away from the singularity at the mean
        bb = beta * beta
        poly = 47 * x * bb * bb + alpha * (
            (43 + 20 * (16 + 27 * beta) * x) * bb * beta + alpha * (
                3 * (59 + 180 * beta - 90 * x) * bb + alpha * (
                    (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                        8 * (1 - x) * (135 * beta - 11)))))
        pre_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
        pre_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
        return pre_num / (1 - x) * poly / pre_den
    prefactor = -x / math.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    t1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    t1 = t1_num / (math.sqrt(2 * alpha / beta) * math.pow(total, 1.5) * axbx * axbx)
    t2 = 0.5 * math.log(alpha / (total * x))
    t3 = math.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    t4_base = beta * math.log(beta / (total * (1 - x))) + alpha * math.log(alpha / (total * x))
    t4 = math.pow(t4_base, -1.5) if t4_base > 0 else math.inf
    return stirling * prefactor * (t1 + t2 * (t3 + (t4 if x < mean else -t4)))


_DIR_C = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]],
])


def _dirichlet_grad_one(x: float, alpha: float, total: float, f: type) -> float:
    """ATen's ``dirichlet_grad_one``: ``-(d/dalpha cdf(x; alpha, beta)) / pdf / (1 - x)`` of
    a Beta(alpha, total - alpha) sample ``x``, by the regime's approximation."""
    fx, fa, ft = f(x), f(alpha), f(total)
    fb = ft - fa
    boundary = ft * fx * (f(1) - fx)
    if x <= 0.5 and boundary < 2.5:
        return _beta_grad_alpha_small(fx, fa, fb, f)
    if x >= 0.5 and boundary < 0.75:
        return -_beta_grad_beta_small(f(1) - fx, fb, fa, f)
    beta = total - alpha
    if fa > 6 and fb > 6:
        return _beta_grad_alpha_mid(x, alpha, beta)
    u = math.log(x)
    a = math.log(alpha) - u
    b = math.log(total) - a
    p = q = 0.0
    for i, pu in enumerate((1.0, u, u * u)):
        for j, pa in enumerate((1.0, a, a * a)):
            ua = pu * pa
            c0, c1 = _DIR_C[0, i, j].tolist(), _DIR_C[1, i, j].tolist()
            p += ua * (c0[0] + b * (c0[1] + b * (c0[2] + b * c0[3])))
            q += ua * (c1[0] + b * (c1[1] + b * (c1[2] + b * c1[3])))
    approx = x * (_dg(total) - _dg(alpha)) / beta
    return p / q * approx


def _dirichlet_grad(x: Tensor, alpha: Tensor, total: Tensor) -> Tensor:
    """The reparameterised gradient of Dirichlet samples ``x`` with concentrations ``alpha``
    summing to ``total`` (PyTorch's approximation, same shapes); not differentiable itself.

    >>> import retrograd as torch
    >>> torch._dirichlet_grad(torch.tensor([0.5]), torch.tensor([1.0]), torch.tensor([2.0]))
    tensor([0.6931])
    """
    for t in (x, alpha, total):
        check_tensor_arg(t, "_dirichlet_grad")
    xa, aa, ta = np.broadcast_arrays(x._data, alpha._data, total._data)
    f = np.float32 if x._data.dtype == np.float32 else np.float64
    with np.errstate(all="ignore"):
        vals = [_dirichlet_grad_one(*v, f) for v in zip(xa.reshape(-1).tolist(),
                                                      aa.reshape(-1).tolist(),
                                                      ta.reshape(-1).tolist())]
    res = np.array(vals, np.float64).reshape(xa.shape).astype(x._data.dtype)
    return apply(NotImplementedBackward, res, x, alpha, total, _op="_dirichlet_grad")
