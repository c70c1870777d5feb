"""PyTorch's CPU sampling kernels on NumPy arrays: each function turns the raw stream of an
``_mt.Engine`` into samples exactly as the matching ATen kernel does, draw for draw.

The kernels draw one sample after another in the output's memory order; here each function
returns a flat array of ``n`` samples in that order, and the caller places them
(``_random.fill_order``). Rounding follows the kernels: a float32 uniform is the low 24 bits of
a 32-bit draw times 2**-24, a float64 one the low 53 bits of a 64-bit draw times 2**-53, and
the affine maps are fused multiply-adds (see ``_rng_math``). Scalar distributions (exponential,
Cauchy, ...) compute in float64 and the caller casts.
"""

from __future__ import annotations

import math

import numpy as np

from . import _dtypes
from ._mt import Engine
from ._rng_math import fma32, fma64, log_ps, sincos_ps

_f32 = np.float32
_M24 = np.uint64((1 << 24) - 1)
_M53 = np.uint64((1 << 53) - 1)
_TWO_PI = 2.0 * math.pi

def _acc_fma(a, b, c, acc: type) -> np.ndarray:
    return fma64(a, b, c) if acc is np.float64 else fma32(a, b, c)


# -- uniform -----------------------------------------------------------------------------------
def unit_double(eng: Engine, n: int) -> np.ndarray:
    """``n`` draws of ``uniform_real_distribution<double>(0, 1)``."""
    return (eng.u64(n) & _M53).astype(np.float64) * 2.0**-53


def unit_float(eng: Engine, n: int) -> np.ndarray:
    """``n`` draws of ``uniform_real_distribution<float>(0, 1)``."""
    return (eng.u32(n) & _M24).astype(_f32) * _f32(2.0**-24)


def uniform(eng: Engine, n: int, np_dt: np.dtype, lo: float, hi: float) -> np.ndarray:
    """``uniform_(lo, hi)`` of a float tensor of ``n`` elements (values in ``np_dt``).
    float16 and bfloat16 compute in float32 (PyTorch's opmath type) and round at the end; a
    value that rounds to ``hi`` becomes ``lo``, so that the interval stays half-open."""
    np_dt = np.dtype(np_dt)
    if np_dt == np.float64:
        x, acc = unit_double(eng, n), np.float64
    else:
        x, acc = unit_float(eng, n), _f32
    # from and to are cast to the computing type first, and to - from is computed there
    frm = acc(lo)
    to = acc(hi)
    with np.errstate(over="ignore", invalid="ignore"):
        vals = _acc_fma(x, acc(to - frm), frm, acc).astype(np_dt)
        top = np.asarray(to).astype(np_dt)
        hit = vals >= top
        if hit.any():
            vals[hit] = np.asarray(frm).astype(np_dt)
    return vals


# -- normal ------------------------------------------------------------------------------------
def normal_double(eng: Engine, n: int, mean: float, std: float) -> np.ndarray:
    """``n`` draws of ``normal_distribution<double>(mean, std)``: Box-Muller on pairs of
    uniforms, the sine of each pair kept in the generator for the next draw."""
    out = np.empty(n, np.float64)
    i = 0
    if n and eng.next_double is not None:
        out[0] = eng.next_double
        eng.next_double = None
        i = 1
    pairs = (n - i + 1) // 2
    if pairs:
        u = unit_double(eng, 2 * pairs)
        r = np.sqrt(-2.0 * np.log1p(-u[1::2]))
        theta = _TWO_PI * u[0::2]
        z = np.empty(2 * pairs)
        z[0::2] = r * np.cos(theta)
        z[1::2] = r * np.sin(theta)
        out[i:] = z[:n - i]
        if (n - i) % 2:
            eng.next_double = float(z[-1])
    with np.errstate(over="ignore", invalid="ignore"):
        return fma64(out, std, mean)


def _box_muller_16(u: np.ndarray, np_dt: np.dtype, mean: float, std: float) -> np.ndarray:
    """``normal_fill_16`` on rows of 16 uniforms: the first 8 give the radii, the last 8 the
    angles; cosines fill the first half, sines the second. float32 takes the AVX2 kernel's
    approximations, float64 the C library's functions."""
    u = u.reshape(-1, 16)
    if np_dt == np.float32:
        radius = np.sqrt(_f32(-2.0) * log_ps(_f32(1.0) - u[:, :8]))
        s, c = sincos_ps(_f32(_TWO_PI) * u[:, 8:])
        m, sd = _f32(mean), _f32(std)
        return np.concatenate([fma32(radius * c, sd, m), fma32(radius * s, sd, m)], axis=1)
    radius = np.sqrt(-2.0 * np.log(1.0 - u[:, :8]))
    theta = _TWO_PI * u[:, 8:]
    return np.concatenate([fma64(radius * np.cos(theta), std, mean),
                           fma64(radius * np.sin(theta), std, mean)], axis=1)


def normal(eng: Engine, n: int, np_dt: np.dtype, mean: float, std: float,
           contiguous: bool) -> np.ndarray:
    """``normal_(mean, std)`` of a float tensor of ``n`` elements, by PyTorch's two paths:
    16 or more contiguous elements take the blockwise Box-Muller fill, the rest scalar draws.
    float16 and bfloat16 fill through float32 and round at the end."""
    np_dt = np.dtype(np_dt)
    if n < 16 or not contiguous:
        with np.errstate(over="ignore"):
            return normal_double(eng, n, mean, std).astype(np_dt)
    work = np.dtype(np.float64) if np_dt == np.float64 else np.dtype(_f32)
    u = uniform(eng, n, work, 0.0, 1.0)
    out = np.empty(n, work)
    full = n // 16 * 16
    with np.errstate(over="ignore", invalid="ignore"):
        out[:full] = _box_muller_16(u[:full], work, mean, std).reshape(-1)
        if n % 16:
            # the tail: the last 16 values are computed again from a block of 16 uniforms,
            # all fresh for float32/float64; float16/bfloat16 keep the leftover uniforms first
            fresh = 16 if np_dt == work else 16 - n % 16
            tail = uniform(eng, fresh, work, 0.0, 1.0)
            if fresh < 16:
                tail = np.concatenate([u[full:], tail])
            out[n - 16:] = _box_muller_16(tail, work, mean, std).reshape(-1)
    return out.astype(np_dt)


# -- distributions of one uniform --------------------------------------------------------------
def bernoulli_scalar(eng: Engine, n: int, p: float) -> np.ndarray:
    """``bernoulli_(p)`` with a float ``p``: a double uniform below ``p``."""
    return unit_double(eng, n) < p


def bernoulli_tensor(eng: Engine, probs: np.ndarray) -> np.ndarray:
    """``bernoulli_(p)`` with a tensor ``p`` (flat, in fill order): double uniforms for a
    float64 ``p``, float ones otherwise."""
    if probs.dtype == np.float64:
        return unit_double(eng, probs.size) < probs
    return unit_float(eng, probs.size) < probs.astype(_f32)


def exponential(eng: Engine, n: int, lambd: float) -> np.ndarray:
    return -1.0 / lambd * np.log1p(-unit_double(eng, n))


def geometric(eng: Engine, n: int, p: float) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.ceil(np.log(unit_double(eng, n)) / math.log1p(-p))


def cauchy(eng: Engine, n: int, median: float, sigma: float) -> np.ndarray:
    x = np.tan(math.pi * (unit_double(eng, n) - 0.5))
    return fma64(sigma, x, median)


def log_normal(eng: Engine, n: int, mean: float, std: float) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.exp(normal_double(eng, n, mean, std))


# -- integers ----------------------------------------------------------------------------------
def random_from_to(eng: Engine, n: int, span: int, base: int) -> np.ndarray:
    """``random_(from, to)``: a draw modulo ``to - from`` plus ``from``, as int64 (64-bit draws
    from a span of 2**28 on, which keeps the modulo bias small)."""
    raw = eng.u64(n) if span >= 1 << 28 else eng.u32(n)
    return (raw % np.uint64(span)).astype(np.int64) + np.int64(base)


def random_full_64(eng: Engine, n: int) -> np.ndarray:
    """``random_(-2**63, None)`` on int64: every 64-bit draw reinterpreted."""
    return eng.u64(n).view(np.int64)


def random_default(eng: Engine, n: int, dt: _dtypes.dtype) -> np.ndarray:
    """``random_()`` without bounds: a draw modulo ``max + 1`` of an integer dtype (the low bit
    for bool) or ``2**digits + 1`` of a float one, as int64; 64-bit draws for int64 and
    float64 only."""
    raw = eng.u64(n) if dt in (_dtypes.int64, _dtypes.float64) else eng.u32(n)
    if dt is _dtypes.bool:
        top = 2
    elif dt.is_floating_point:
        top = (1 << {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}[dt.name]) + 1
    else:
        top = int(np.iinfo(dt.np).max) + 1
    return (raw % np.uint64(top)).astype(np.int64)


def randperm(eng: Engine, n: int) -> np.ndarray:
    """``randperm(n)``: the swaps of PyTorch's Fisher-Yates shuffle (32-bit draws below
    ``2**32 / 20`` elements, the 64-bit inside-out variant above)."""
    if n < 0xFFFFFFFF // 20:
        perm = np.arange(n, dtype=np.int64)
        if n > 1:
            # step i swaps positions i and i + z_i
            offsets = eng.u32(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)
            perm = _apply_swaps(offsets) if n > 2000 else _swap_loop(offsets, n)
        return perm
    perm = np.empty(n, np.int64)  # pragma: no cover - 200 million elements
    picks = (eng.u64(n) % np.arange(1, n + 1, dtype=np.uint64)).tolist()
    for i, z in enumerate(picks):
        perm[i] = perm[z]
        perm[z] = i
    return perm


def _swap_loop(offsets: np.ndarray, n: int) -> np.ndarray:
    perm = list(range(n))
    for i, z in enumerate(offsets.tolist()):
        if z:
            j = i + z
            perm[i], perm[j] = perm[j], perm[i]
    return np.array(perm, np.int64)


def _apply_swaps(offsets: np.ndarray) -> np.ndarray:
    """The same swaps without a Python loop. Position i is final after step i and then holds
    what position t_i = i + z_i held just before it. A position q > i held its own value
    unless an earlier step k swapped into it (t_k = q): then, from the latest such k, the value
    position k held before step k. So with g(q) = "the value position q held before step q"
    = g(latest k < q with t_k = q), or q if none, every result is one g; g follows chains of
    such steps, resolved by pointer jumping."""
    m = offsets.size  # steps; n = m + 1 positions
    n = m + 1
    k = np.arange(m, dtype=np.int64)
    t = k + offsets.astype(np.int64)
    keys = t * n + k  # steps sorted by target, then by step
    order = np.argsort(keys)
    keys, ts, ks = keys[order], t[order], k[order]
    prev_same = np.full(m, -1, np.int64)  # the previous step with the same target
    same = ts[1:] == ts[:-1]
    prev_same[ks[1:][same]] = ks[:-1][same]
    q = np.arange(n, dtype=np.int64)
    idx = np.searchsorted(keys, q * n + q, "left") - 1  # last step before q aiming at q
    hit = idx >= 0
    hit[hit] = ts[idx[hit]] == q[hit]
    g = np.where(hit, ks[np.maximum(idx, 0)], q)
    while True:
        nxt = g[g]
        if np.array_equal(nxt, g):
            break
        g = nxt
    out = np.empty(n, np.int64)
    out[:m] = np.where(offsets == 0, g[:m],
                       np.where(prev_same >= 0, g[np.maximum(prev_same, 0)], t))
    out[m] = g[m]
    return out


# -- multinomial and Poisson -------------------------------------------------------------------
def multinomial_with_replacement(eng: Engine, rows: np.ndarray, n_sample: int) -> np.ndarray:
    """PyTorch's sampler with replacement: the running sum of each row in the row's dtype,
    divided by the total, then a binary search for each double uniform."""
    acc = np.float32 if rows.dtype in (np.float16, _dtypes.bfloat16.np) else rows.dtype
    out = np.empty((rows.shape[0], n_sample), np.int64)
    for i, row in enumerate(rows.astype(acc)):
        cum = np.cumsum(row, dtype=acc)
        cum = cum / cum[-1]
        cum[-1] = 1
        out[i] = np.searchsorted(cum.astype(np.float64), unit_double(eng, n_sample), "left")
    return out


def poisson(eng: Engine, rates: np.ndarray) -> np.ndarray:
    """PyTorch's ``sample_poisson`` for each rate (flat, in fill order): Hoermann's transformed
    rejection for rates of 10 or more, multiplication of uniforms below. (That kernel is built
    without fused multiply-adds: plain Python arithmetic rounds as it does.)"""
    out = np.empty(rates.size, np.float64)
    for idx, lam in enumerate(rates.tolist()):
        out[idx] = _poisson_one(eng, lam)
    return out


def _to_int64(x: float) -> int:
    """C's conversion of a double to int64 on x86: out of range (or NaN) gives -2**63."""
    if x != x or not -(2.0**63) <= x < 2.0**63:
        return -(2**63)
    return int(x)


def _poisson_one(eng: Engine, lam: float) -> float:
    if lam >= 10:
        slam = math.sqrt(lam)
        loglam = math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            uv = unit_double(eng, 2)
            u = float(uv[0]) - 0.5
            v = float(uv[1])
            us = 0.5 - abs(u)
            k = _to_int64(float(np.floor((2 * a / us + b) * u + lam + 0.43)))
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - math.lgamma(k + 1.0)):
                return k
    if lam == 0:
        return 0.0
    enlam = math.exp(-lam)
    x = 0
    prod = 1.0
    while True:
        prod *= float(unit_double(eng, 1)[0])
        if prod > enlam:
            x += 1
        else:
            return x


def binomial(eng: Engine, counts: np.ndarray, probs: np.ndarray, acc: type) -> np.ndarray:
    """PyTorch's ``sample_binomial`` for each (count, prob) pair (flat, in fill order): the
    BTRS transformed rejection where ``count * min(p, 1 - p) >= 10``, otherwise inversion by
    a sum of geometric variables. ``acc`` is the input's dtype (count and prob are read in it;
    the algorithm's own arithmetic is float64, as the kernel's)."""
    out = np.empty(counts.size, np.float64)
    for idx, (n, p) in enumerate(zip(counts.tolist(), probs.tolist())):
        out[idx] = _binomial_one(eng, n, p, acc)
    return out


def _binomial_one(eng: Engine, n: float, p: float, acc: type) -> float:
    if n <= 0.0 or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return n
    if p <= 0.5:
        return _btrs(eng, n, p, acc) if n * p >= 10.0 else _binomial_inversion(eng, n, p)
    if p > 0.5:
        q = float(acc(1.0) - acc(p))  # 1 - prob in the input's dtype
        k = _btrs(eng, n, q, acc) if n * q >= 10.0 else _binomial_inversion(eng, n, q)
        return float(acc(n) - acc(k))
    return math.nan


def _binomial_inversion(eng: Engine, n: float, p: float) -> float:
    logprob = math.log1p(-p)
    total = 0.0
    k = 0.0
    while True:
        u = float(unit_double(eng, 1)[0])
        total += math.ceil(math.log(u) / logprob) if u > 0 else math.inf
        if total > n:
            return k
        k += 1


_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
         0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
         0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k: float) -> float:
    """``lgamma(k + 1)`` minus its Stirling approximation: a table to 9, a series above."""
    if k <= 9:
        return _TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _btrs(eng: Engine, n: float, p: float, acc: type) -> float:
    """Hoermann's BTRS (transformed rejection with squeeze), as PyTorch writes it; ``k`` is
    kept in the input's dtype, as the kernel's ``scalar_t``."""
    stddev = math.sqrt(n * p * (1 - p))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    r = p / (1 - p)
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor((n + 1) * p)
    while True:
        uv = unit_double(eng, 2)
        u = float(uv[0]) - 0.5
        v = float(uv[1])
        us = 0.5 - abs(u)
        k = float(acc(math.floor((2 * a / us + b) * u + c)))
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1)))
                 + (n + 1) * math.log((n - m + 1) / (n - k + 1))
                 + (k + 0.5) * math.log(r * (n - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(n - m)
                 - _stirling_tail(k) - _stirling_tail(n - k))
        if v <= bound:
            return k
