"""float16/bfloat16 pointwise ops bit for bit against torch's CPU kernels.

Unary ops run over every one of the 65,536 values of the dtype at once; binary ops over random
pairs drawn from all values (NaN, infinities, subnormals and huge values included). The results
must be the same bits, NaN payloads aside. Each op is one vectorised call in each library.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import retrograd
from retrograd.ops.unary import tanh_backward

DTYPES = ["bfloat16", "float16"]

UNARY = {
    "exp": lambda lib, a: lib.exp(a),
    "log": lambda lib, a: lib.log(a),
    "sin": lambda lib, a: lib.sin(a),
    "asin": lambda lib, a: lib.asin(a),
    "sigmoid": lambda lib, a: lib.sigmoid(a),
    "expit": lambda lib, a: lib.special.expit(a),
    "relu": lambda lib, a: lib.relu(a),
    "leaky_relu": lambda lib, a: lib.nn.functional.leaky_relu(a, 0.2),
    "rrelu_eval": lambda lib, a: lib.nn.functional.rrelu(a, 0.1, 0.3),
    "sinh": lambda lib, a: lib.sinh(a),
    "cosh": lambda lib, a: lib.cosh(a),
    "i0": lambda lib, a: lib.i0(a),
    "lgamma": lambda lib, a: lib.lgamma(a),
    "digamma": lambda lib, a: lib.digamma(a),
    "erf": lambda lib, a: lib.erf(a),
    "ndtr": lambda lib, a: lib.special.ndtr(a),
    "sinc": lambda lib, a: lib.special.sinc(a),
    "multigammaln": lambda lib, a: lib.special.multigammaln(a.abs() + 2, 3),
    "round_decimals": lambda lib, a: lib.round(a, decimals=1),
    "round_decimals_neg": lambda lib, a: lib.round(a * 3, decimals=-1),
    "floordiv_number": lambda lib, a: a // 0.7,
    "div_floor_number": lambda lib, a: lib.div(a, 0.3, rounding_mode="floor"),
    # by a number: truncated in float32, then rounded (by a tensor: rounded, then truncated)
    "div_trunc_number": lambda lib, a: lib.div(a, 0.3, rounding_mode="trunc"),
    "div_trunc_number_neg": lambda lib, a: a.div(-1.5, rounding_mode="trunc"),
    "xlogy_number": lambda lib, a: lib.xlogy(1.5, a),
    # a number keeps the tensor's dtype (was float32), and may come first
    "xlog1py_number": lambda lib, a: lib.special.xlog1py(a, 0.3),
    "xlog1py_rnumber": lambda lib, a: lib.special.xlog1py(1.5, a),
    "remainder_number": lambda lib, a: a % 0.7,
    "fmod_number": lambda lib, a: a.fmod(-0.7),
    "rsqrt": lambda lib, a: lib.rsqrt(a),
    # activations: float32 inside, rounded once (silu with SLEEF's expf, as torch's kernel)
    "hardsigmoid": lambda lib, a: lib.nn.functional.hardsigmoid(a),
    "hardswish": lambda lib, a: lib.nn.functional.hardswish(a),
    "silu": lambda lib, a: lib.nn.functional.silu(a),
    "mish": lambda lib, a: lib.nn.functional.mish(a),
    "softplus": lambda lib, a: lib.nn.functional.softplus(a),
    "softplus_beta": lambda lib, a: lib.nn.functional.softplus(a, 2, 5),
    "elu": lambda lib, a: lib.nn.functional.elu(a, 0.3),
    "selu": lambda lib, a: lib.nn.functional.selu(a),
    "celu": lambda lib, a: lib.nn.functional.celu(a, 0.7),
    "hardshrink": lambda lib, a: lib.nn.functional.hardshrink(a, 0.3),
    "softshrink": lambda lib, a: lib.nn.functional.softshrink(a, 0.3),
    "logsigmoid": lambda lib, a: lib.nn.functional.logsigmoid(a),
    "gelu": lambda lib, a: lib.nn.functional.gelu(a),
    "gelu_tanh": lambda lib, a: lib.nn.functional.gelu(a, approximate="tanh"),
    "sign": lambda lib, a: lib.sign(a),
    # PyTorch's sqrt/rsqrt kernels, but std::pow for float16: (-0.) ** 0.5 is 0. there
    "pow_half": lambda lib, a: a ** 0.5,
    "pow_neg_half": lambda lib, a: a ** -0.5,
}
# Known differences left: none here (scalar tails: see test_unary_scalar_tail).
_UNARY_GAPS: set = set()


BINARY = {
    "tanh_backward": lambda lib, a, b: (tanh_backward(a, b) if lib is retrograd
                                        else lib.ops.aten.tanh_backward(a, b)),
    "add_alpha": lambda lib, a, b: lib.add(a, b, alpha=2.5),
    "sub_alpha": lambda lib, a, b: lib.sub(a, b, alpha=-1.5),
    # alpha not exact in the dtype: PyTorch rounds it to the dtype first
    "add_alpha_inexact": lambda lib, a, b: lib.add(a, b, alpha=-0.3),
    "sub_alpha_inexact": lambda lib, a, b: lib.sub(a, b, alpha=0.1),
    "xlogy": lambda lib, a, b: lib.xlogy(a, b),
    "floor_divide": lambda lib, a, b: lib.floor_divide(a, b),
    "div_floor": lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
    "lerp": lambda lib, a, b: lib.lerp(a, b, 0.3),
    "lerp_high": lambda lib, a, b: lib.lerp(a, b, 0.8),
    "huber_loss": lambda lib, a, b: lib.nn.functional.huber_loss(a, b, delta=0.7,
                                                                 reduction="none"),
    "heaviside": lambda lib, a, b: lib.heaviside(a, b),
    "remainder": lambda lib, a, b: lib.remainder(a, b),
    "fmod": lambda lib, a, b: lib.fmod(a, b),
    "atan2": lambda lib, a, b: lib.atan2(a, b),
    "logaddexp2": lambda lib, a, b: lib.logaddexp2(a, b),
    # near operands, where log1p(exp2(-|a - b|)) decides the last bit
    "logaddexp2_near": lambda lib, a, b: lib.logaddexp2(a.clamp(-4, 4), b.clamp(-4, 4)),
    # value * t1 first; addcmul fuses the product with the sum (one float32 rounding)
    "addcmul": lambda lib, a, b: lib.addcmul(a, b, a, value=0.3),
    "addcdiv": lambda lib, a, b: lib.addcdiv(b, a, b, value=-2.5),
}


# Each op draws its pairs from its own fixed seed, so that adding an op re-draws no other op's
# pairs (the first ops keep the seeds they had: their place in this sorted list).
_FIRST = sorted(["tanh_backward", "add_alpha", "sub_alpha", "xlogy", "floor_divide", "div_floor",
                 "lerp", "lerp_high", "huber_loss", "heaviside", "remainder", "fmod", "atan2"])


def _seed(name: str) -> int:
    return _FIRST.index(name) if name in _FIRST else 100 + list(BINARY).index(name)


def _values(dtype) -> np.ndarray:
    """All values of the dtype as float32 (exact), in bit-pattern order."""
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16
    return np.arange(65536, dtype=np.uint16).view(np_dtype).astype(np.float32)


def _tensor(lib, values, dtype):
    return lib.tensor(values).to(getattr(lib, dtype))


def _assert_same_bits(out, ref, inputs):
    a = out.detach().float().numpy()
    b = ref.detach().float().numpy()
    assert str(out.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    bad = np.nonzero((a.view(np.int32) != b.view(np.int32)) & ~(np.isnan(a) & np.isnan(b)))[0]
    assert bad.size == 0, [tuple(float(x[k]) for x in inputs) + (float(a[k]), float(b[k]))
                           for k in bad[:5]]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_every_value(torch, name, dtype):
    if (name, dtype) in _UNARY_GAPS:
        pytest.skip("a known difference (see _UNARY_GAPS)")
    x = _values(dtype)
    fn = UNARY[name]
    with np.errstate(all="ignore"):
        _assert_same_bits(fn(retrograd, _tensor(retrograd, x, dtype)),
                          fn(torch, _tensor(torch, x, dtype)), [x])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_random_pairs(torch, name, dtype):
    x = _values(dtype)
    rng = np.random.default_rng(_seed(name))
    # 32016 pairs: below torch's parallel grain (one chunk), and a 16-element scalar tail
    a, b = x[rng.integers(0, 65536, 32016)], x[rng.integers(0, 65536, 32016)]
    fn = BINARY[name]
    with np.errstate(all="ignore"):
        _assert_same_bits(fn(retrograd, _tensor(retrograd, a, dtype), _tensor(retrograd, b, dtype)),
                          fn(torch, _tensor(torch, a, dtype), _tensor(torch, b, dtype)), [a, b])


@pytest.mark.parametrize("n", [1, 40, 64])
def test_atan2_scalar_tail(torch, n):
    """torch's loop takes SLEEF's atan2 in 32-element steps and libm's on the n % 32 left:
    (53120, -0.2405) rounds to 1.5713 in the first, 1.5703 in the second."""
    a, b = np.full(n, 53120.0, np.float32), np.full(n, -0.240478515625, np.float32)
    _assert_same_bits(retrograd.atan2(_tensor(retrograd, a, "float16"),
                                      _tensor(retrograd, b, "float16")),
                      torch.atan2(_tensor(torch, a, "float16"), _tensor(torch, b, "float16")),
                      [a, b])


# ``x + alpha * number``: PyTorch converts the number to the tensor's dtype (through float32)
# and rounds alpha to it, then runs the same kernel as for two tensors of that dtype. The
# (number, alpha) pairs include values whose direct rounding to float16 differs from the
# rounding through float32 (1 + 2**-11 + 2**-40).
NUMBER_ALPHA = [(0.1, -0.3), (300.5, -0.3), (1 + 2**-11 + 2**-40, 3)]

NUMBER_OPS = {
    "add": lambda lib, t, s, a: lib.add(t, s, alpha=a),
    "sub": lambda lib, t, s, a: lib.sub(t, s, alpha=a),
    "rsub": lambda lib, t, s, a: lib.rsub(t, s, alpha=a),
    "add_": lambda lib, t, s, a: t.clone().add_(s, alpha=a),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(NUMBER_OPS))
def test_alpha_number_every_value(torch, op, dtype):
    """Every value of the dtype in one call (65,536 elements: no scalar tail, and at most two
    of torch's 32,768-element chunks, each a multiple of 32), then some of the values where
    torch's scalar tail rounds otherwise than its vectorised loop, in calls of 31 elements
    (all tail). torch takes its scalar loop for every element of a strided input: that shows
    which values those are."""
    x = _values(dtype)
    fn = NUMBER_OPS[op]
    checked = 0
    with np.errstate(all="ignore"):
        rt, tt = _tensor(retrograd, x, dtype), _tensor(torch, x, dtype)
        strided = torch.stack([tt, tt], 1)[:, 0]
        for s, a in NUMBER_ALPHA:
            ref = fn(torch, tt, s, a)
            _assert_same_bits(fn(retrograd, rt, s, a), ref, [x])
            # (add_ on a clone would make the input contiguous: the out-of-place add shows it)
            scalar_loop = NUMBER_OPS["add" if op == "add_" else op](torch, strided, s, a)
            diff = np.nonzero((scalar_loop != ref).numpy() & ~ref.isnan().numpy())[0]
            checked += diff.size > 0
            pick = np.random.default_rng(0).permutation(diff)[:62]
            for k in range(0, pick.size, 31):
                xs = x[pick[k:k + 31]]
                _assert_same_bits(fn(retrograd, _tensor(retrograd, xs, dtype), s, a),
                                  fn(torch, _tensor(torch, xs, dtype), s, a), [xs])
    assert checked >= 2  # most pairs have values where the two loops differ


@pytest.mark.parametrize("op", ["add", "sub", "rsub", "fmod", "remainder", "eq", "lt", "mul"])
def test_float16_number_through_float32(torch, op):
    """A Python float meets a float16 tensor rounded to float32 first, then to float16, as
    ``c10::Half`` converts it: 1 + 2**-11 + 2**-40 becomes 1.0 (float32's rounding lands on a
    float16 tie, which goes to even), not 1 + 2**-10 (``mul`` keeps it in float32)."""
    x = np.array([1.0, 2.0, -1.0, 1.0009765625], np.float32)
    v = 1 + 2**-11 + 2**-40
    out = getattr(retrograd, op)(_tensor(retrograd, x, "float16"), v)
    ref = getattr(torch, op)(_tensor(torch, x, "float16"), v)
    if ref.dtype == torch.bool:
        assert out.tolist() == ref.tolist()
    else:
        _assert_same_bits(out, ref, [x])


@pytest.mark.parametrize(("name", "dtype"), [("rsqrt", "bfloat16"), ("rsqrt", "float16"),
                                           ("sinh", "bfloat16"), ("cosh", "bfloat16"),
                                           ("gelu", "bfloat16"), ("gelu", "float16"),
                                           ("gelu_tanh", "bfloat16")])
def test_unary_scalar_tail(torch, name, dtype):
    """Ops whose scalar loop (the last n % 32 elements) rounds otherwise than the vectorised
    one: torch takes its scalar loop for every element of a strided input, which shows the
    values where the two differ; 62 of them in calls of 31 elements (all tail)."""
    x = _values(dtype)
    fn = UNARY[name]
    with np.errstate(all="ignore"):
        tt = _tensor(torch, x, dtype)
        ref = fn(torch, tt)
        scalar_loop = fn(torch, torch.stack([tt, tt], 1)[:, 0])
        diff = np.nonzero((scalar_loop != ref).numpy() & ~ref.isnan().numpy())[0]
        assert diff.size > 0
        pick = np.random.default_rng(0).permutation(diff)[:62]
        for k in range(0, pick.size, 31):
            xs = x[pick[k:k + 31]]
            _assert_same_bits(fn(retrograd, _tensor(retrograd, xs, dtype)),
                              fn(torch, _tensor(torch, xs, dtype)), [xs])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", [((3, 40), (40,)), ((40, 3), (40, 1)), ((2, 3, 40), (3, 1)),
                                    ((5, 1), (1, 70)), ((2, 35, 1), (35, 2)), ((9, 7), (9, 1))])
def test_broadcast_scalar_tails(torch, shapes, dtype):
    """Where operands broadcast, torch's loop runs row by row over the innermost dimensions it
    can coalesce, each row ending in its own scalar tail of size % 32 elements: add with
    alpha, atan2 and fmod round there as in their scalar code."""
    rng = np.random.default_rng(len(shapes[0]) * 100 + shapes[0][-1])
    x = _values(dtype)
    x = x[np.isfinite(x)]
    a, b = (x[rng.integers(0, x.size, int(np.prod(s)))].reshape(s) for s in shapes)
    for fn in (lambda lib, p, q: lib.add(p, q, alpha=-0.3), lambda lib, p, q: lib.atan2(p, q),
               lambda lib, p, q: lib.fmod(p, q)):
        with np.errstate(all="ignore"):
            out = fn(retrograd, _tensor(retrograd, a, dtype), _tensor(retrograd, b, dtype))
            ref = fn(torch, _tensor(torch, a, dtype), _tensor(torch, b, dtype))
        _assert_same_bits(out.reshape(-1), ref.reshape(-1),
                          [np.broadcast_to(v, ref.shape).reshape(-1) for v in (a, b)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_half_edges(torch, dtype):
    """x ** -0.5 is PyTorch's rsqrt (1 / sqrt(x)): -inf at -0., NaN at -inf, not pow's."""
    x = np.array([-0.0, 0.0, -np.inf, np.inf, -1.0, 4.0, np.nan])
    for e in (0.5, -0.5):
        out = retrograd.tensor(x, dtype=getattr(retrograd, dtype)) ** e
        ref = torch.tensor(x, dtype=getattr(torch, dtype)) ** e
        np.testing.assert_array_equal(out.numpy(), ref.numpy())
        num = ~np.isnan(ref.numpy())  # (a NaN's sign is not compared)
        np.testing.assert_array_equal(np.signbit(out.numpy())[num], np.signbit(ref.numpy())[num])


# Layouts as torch's TensorIterator sees them: a transposed or permuted tensor alone is
# traversed in its memory order (vector steps, one tail at its end); mixed with a tensor laid
# out otherwise, or sliced with a step, every element takes the scalar loop; a row that does
# not continue the next (a slice of columns) ends in its own tail.
LAYOUTS = {
    "transposed": ((40, 50), lambda t: t.t()),
    "step2": ((50, 80), lambda t: t[:, ::2]),
    "rows": ((50, 45), lambda t: t[:, :40]),
    "expanded": ((50, 1), lambda t: t.expand(50, 40)),
    "permuted": ((5, 8, 50), lambda t: t.permute(2, 0, 1)),
    "contiguous3": ((50, 5, 8), lambda t: t),
}


def _strided_loop_values(torch, name, dtype):
    """The values where torch's scalar loop rounds otherwise than its vector steps."""
    x = _values(dtype)
    x = x[np.isfinite(x)]
    fn = UNARY[name]
    with np.errstate(all="ignore"):
        tt = _tensor(torch, x, dtype)
        ref = fn(torch, tt[: x.size // 32 * 32])
        scalar = fn(torch, torch.stack([tt, tt], 1)[:, 0])[: x.size // 32 * 32]
    return x[: x.size // 32 * 32][(scalar != ref).numpy() & ~ref.isnan().numpy()]


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize(("name", "dtype"), [("rsqrt", "bfloat16"), ("rsqrt", "float16"),
                                           ("sinh", "bfloat16"), ("gelu", "float16"),
                                           ("gelu_tanh", "float16"), ("mish", "float16")])
def test_unary_layouts(torch, name, dtype, layout):
    """A unary op's scalar-loop elements follow the input's layout, as TensorIterator orders
    and coalesces it: values where the two loops differ fill every layout."""
    diff = _strided_loop_values(torch, name, dtype)
    assert diff.size > 0
    shape, view = LAYOUTS[layout]
    x = np.random.default_rng(len(layout)).choice(diff, int(np.prod(shape))).reshape(shape)
    with np.errstate(all="ignore"):
        out = UNARY[name](retrograd, view(_tensor(retrograd, x, dtype)))
        ref = UNARY[name](torch, view(_tensor(torch, x, dtype)))
    _assert_same_bits(out.reshape(-1), ref.reshape(-1),
                      [view(torch.tensor(x)).reshape(-1).numpy()])


BINARY_LAYOUTS = [("transposed", "transposed"), ("transposed", "contiguous"),
                  ("step2", "contiguous"), ("permuted", "contiguous3"),
                  ("contiguous", "expanded"), ("transposed", None)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layouts", BINARY_LAYOUTS)
def test_binary_layouts(torch, layouts, dtype):
    """add with alpha and fmod: the scalar loop's elements (rounding alpha * y first, the exact
    fmod) where the operands' layouts send torch's loop there."""
    lay = dict(LAYOUTS, contiguous=((50, 40), lambda t: t))
    rng = np.random.default_rng(len(layouts[0]) + 10 * len(layouts[1] or ""))
    x = _values(dtype)
    x = x[np.isfinite(x)]
    ops = []
    for name in layouts:
        if name is None:  # a Python number
            ops.append((0.7, 0.7))
            continue
        shape, view = lay[name]
        v = x[rng.integers(0, x.size, int(np.prod(shape)))].reshape(shape)
        ops.append((view(_tensor(retrograd, v, dtype)), view(_tensor(torch, v, dtype))))
    (ra, ta), (rb, tb) = ops
    for fn in (lambda lib, p, q: lib.add(p, q, alpha=-0.3), lambda lib, p, q: lib.fmod(p, q)):
        with np.errstate(all="ignore"):
            out = fn(retrograd, ra, rb)
            ref = fn(torch, ta, tb)
        _assert_same_bits(out.reshape(-1), ref.reshape(-1),
                          [ta.float().reshape(-1).numpy()])


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "step2"])
@pytest.mark.parametrize("op", ["sub", "mul", "div", "fmod", "remainder", "xlogy", "fmax"])
def test_bfloat16_nan_bits(torch, op, layout):
    """A bfloat16 NaN computed in float32 gets 0xFFFF in the vector steps (cvtfp32_bf16) and
    0x7FC0 in the scalar loop (c10::BFloat16), whatever its sign: `.view(int16)` agrees."""
    fns = {"sub": lambda lib, p, q: p - q, "mul": lambda lib, p, q: p * q,
           "div": lambda lib, p, q: p / q, "fmod": lambda lib, p, q: lib.fmod(p, q),
           "remainder": lambda lib, p, q: lib.remainder(p, q),
           "xlogy": lambda lib, p, q: lib.xlogy(p, q), "fmax": lambda lib, p, q: lib.fmax(p, q)}
    rng = np.random.default_rng(3)
    pool = np.array([np.inf, -np.inf, 0.0, -0.0, -1.0, 2.5], np.float32)
    shape, view = dict(LAYOUTS, contiguous=((45, 50), lambda t: t))[layout]
    a, b = (rng.choice(pool, shape) for _ in range(2))
    if op == "fmax":  # NaN operands (fmax returns NaN only where both are)
        a[a == 0] = np.nan
        b[b == 0] = np.nan
    with np.errstate(all="ignore"):
        out, ref = (fns[op](lib, view(_tensor(lib, a, "bfloat16")),
                            view(_tensor(lib, b, "bfloat16"))) for lib in (retrograd, torch))
    got = np.ascontiguousarray(out._data).view(np.uint16).reshape(-1)
    want = ref.contiguous().view(torch.int16).numpy().view(np.uint16).reshape(-1)
    assert ((want & 0x7FFF) > 0x7F80).any()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "step2", "rows", "expanded"])
def test_bfloat16_cast_nan_bits(torch, layout):
    """float32 NaNs (either sign) cast to bfloat16: 0xFFFF where torch's copy kernel converts
    in vector steps (its tails too), 0x7FC0 where the rows are strided (its scalar loop)."""
    shape, view = dict(LAYOUTS, contiguous=((3, 7), lambda t: t))[layout]
    x = np.random.default_rng(4).choice(np.array([np.nan, -np.nan, 1.0], np.float32), shape)
    x[np.signbit(x) & np.isnan(x)] = -np.abs(np.nan)
    bits = []
    for lib in (retrograd, torch):
        t = view(lib.tensor(x))
        for out in (t.to(lib.bfloat16), t.bfloat16()):
            bits.append(np.ascontiguousarray(out._data).view(np.uint16) if lib is retrograd
                        else out.contiguous().view(torch.int16).numpy().view(np.uint16))
    assert (bits[2] == 0xFFFF).any() or (bits[2] == 0x7FC0).any()
    for b in bits[:2]:
        np.testing.assert_array_equal(b, bits[2])


@pytest.mark.parametrize("layout", ["contiguous", "step2"])
@pytest.mark.parametrize("name", ["sqrt", "log", "exp", "sigmoid", "rsqrt", "acosh", "silu",
                                  "gelu", "logsigmoid", "i0", "hardtanh"])
def test_bfloat16_unary_nan_bits(torch, name, layout):
    """bfloat16 NaNs of unary kernels: vml's map converts everything in vector steps (0xFFFF),
    cpu_kernel_vec leaves its tail and strided input to scalar code (0x7FC0), acosh has only
    scalar code."""
    fn = {"silu": lambda lib, t: lib.nn.functional.silu(t),
          "gelu": lambda lib, t: lib.nn.functional.gelu(t),
          "logsigmoid": lambda lib, t: lib.nn.functional.logsigmoid(t),
          "hardtanh": lambda lib, t: lib.nn.functional.hardtanh(t)}.get(
        name, lambda lib, t: getattr(lib, name)(t))
    shape, view = dict(LAYOUTS, contiguous=((3, 45), lambda t: t))[layout]
    x = np.random.default_rng(5).choice(np.array([np.nan, -2.0, 1.0], np.float32), shape)
    bits = []
    for lib in (retrograd, torch):
        with np.errstate(all="ignore"):
            out = fn(lib, view(lib.tensor(x).to(lib.bfloat16)))
        bits.append(np.ascontiguousarray(out._data).view(np.uint16) if lib is retrograd
                    else out.contiguous().view(torch.int16).numpy().view(np.uint16))
    assert ((bits[1] & 0x7FFF) > 0x7F80).any()
    np.testing.assert_array_equal(bits[0], bits[1])


def _bits(t, torch):
    """A float16/bfloat16 tensor's bits in C order (NaN payloads included)."""
    if isinstance(t, torch.Tensor):
        return t.contiguous().view(torch.int16).numpy().view(np.uint16).reshape(-1)
    return np.ascontiguousarray(t._data).view(np.uint16).reshape(-1)


_SELECT = {
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "minimum": lambda lib, a, b: a.minimum(b),
    "fmax": lambda lib, a, b: lib.fmax(a, b),
    "fmin": lambda lib, a, b: lib.fmin(a, b),
    "clamp_tensors": lambda lib, a, b: lib.clamp(a, b, b + 1),
    "clamp_min_tensor": lambda lib, a, b: lib.clamp(a, min=b),
    "clamp_max_method": lambda lib, a, b: a.clamp_max(b),
    "clamp_zero": lambda lib, a, b: lib.clamp(a, 0.0, 1.0),
    "clamp_neg_zero": lambda lib, a, b: a.clamp(-0.0, 0.0),
    "clamp_min_zero": lambda lib, a, b: lib.clamp_min(a, 0.0),
    "clamp_max_neg_zero": lambda lib, a, b: a.clamp(max=-0.0),
    "threshold": lambda lib, a, b: lib.nn.functional.threshold(a, 0.0, -0.0),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "step2", "transposed", "broadcast"])
@pytest.mark.parametrize("name", list(_SELECT))
def test_select_zeros_and_nans(torch, name, layout, dtype):
    """maximum/minimum/clamp of +-0 and NaN, bit for bit: torch's vector steps compare in
    float32 (a tie gives the second operand, a NaN all ones), its scalar loop's std::max the
    first (a NaN quiet: 0x7FC0, 0x7E00); clamp keeps the input unless strictly outside, and
    threshold lets a NaN through (``x <= threshold`` is false)."""
    pool = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -1.0, np.inf, -np.inf], np.float32)
    rng = np.random.default_rng(len(name) + 7 * len(layout))
    a, b = rng.choice(pool, (20, 45)), rng.choice(pool, (20, 45))

    def make(lib):
        ta, tb = (_tensor(lib, v, dtype) for v in (a, b))
        if layout == "step2":
            ta = lib.stack([ta, ta], 2)[:, :, 0]
        elif layout == "transposed":
            ta, tb = (_tensor(lib, v.T.copy(), dtype).t() for v in (a, b))
        elif layout == "broadcast":
            tb = tb[0]
        return ta, tb

    out, ref = (_SELECT[name](lib, *make(lib)) for lib in (retrograd, torch))
    np.testing.assert_array_equal(_bits(out, torch), _bits(ref, torch))


@pytest.mark.parametrize("dtype", DTYPES)
def test_float64_to_reduced_through_float32(torch, dtype):
    """float64 values (a NumPy array, a tensor, a copy_) convert to float16/bfloat16 through
    float32, as torch does: 1 + 2**-11 + 2**-40 rounds to float32's 1 + 2**-11, a float16
    tie that goes to even (1.0), not up; the same for the midpoints of every bfloat16 step."""
    x = _values(dtype).astype(np.float64)
    x = x[np.isfinite(x)]
    step = np.abs(x) * 2.0 ** -(11 if dtype == "float16" else 8)
    x = np.concatenate([x + step / 2 + step * 2.0**-30, x - step / 2 - step * 2.0**-30,
                        [1 + 2**-11 + 2**-40, 1 + 2**-11 - 2**-40, 2.0**-25]])
    rd, td = getattr(retrograd, dtype), getattr(torch, dtype)
    outs = [retrograd.tensor(x, dtype=rd), retrograd.as_tensor(x, dtype=rd),
            retrograd.tensor(x).to(rd),
            retrograd.empty(x.size, dtype=rd).copy_(retrograd.tensor(x))]
    ref = _bits(torch.tensor(x, dtype=td), torch)
    np.testing.assert_array_equal(ref, _bits(torch.tensor(x).to(td), torch))
    for out in outs:
        np.testing.assert_array_equal(_bits(out, torch), ref)


_NAN_BITS_UNARY = {
    "pow0": lambda lib, a: a ** 0, "pow1": lambda lib, a: a ** 1, "square": lambda lib, a: a ** 2,
    "pow3": lambda lib, a: a ** 3, "reciprocal_pow": lambda lib, a: a ** -1,
    "pow_m2": lambda lib, a: a ** -2, "pow_03": lambda lib, a: a ** 0.3,
    "sqrt_pow": lambda lib, a: a ** 0.5, "rsqrt_pow": lambda lib, a: a ** -0.5,
    "square_fn": lambda lib, a: lib.square(a), "rpow": lambda lib, a: 2.0 ** a,
    "rpow_neg": lambda lib, a: (-1.5) ** a, "rsub": lambda lib, a: 0.3 - a,
    "neg": lambda lib, a: -a, "abs": lambda lib, a: a.abs(), "logit": lambda lib, a: a.logit(),
    "logit_eps": lambda lib, a: lib.logit(a, eps=0.2), "deg2rad": lambda lib, a: a.deg2rad(),
    "round_decimals": lambda lib, a: lib.round(a, decimals=2),
    "lerp": lambda lib, a: lib.lerp(a, a.flip(0), 0.3),
    "lerp_high": lambda lib, a: a.lerp(a.flip(0), 0.8),
    "lerp_tensor": lambda lib, a: lib.lerp(a, a.flip(0), a.roll(7)),
    "pow_tensor": lambda lib, a: a ** a.flip(0),
    # float16: asin(2) is -NaN, acos of any NaN +NaN (of a number out of its domain -NaN)
    "asin": lambda lib, a: a.asin(), "acos": lambda lib, a: lib.acos(a),
    "sinc": lambda lib, a: lib.special.sinc(a),  # (bfloat16: scalar code only, 0x7FC0)
    # the input itself: float32 -> float16 quiets a signaling NaN, as torch's conversion
    "cast": lambda lib, a: a.clone(),
    # the sign bit set, the rest of the input's bits kept (a NaN's too), in both loops
    "copysign": lambda lib, a: lib.copysign(a, a.flip(0)),
    "copysign_number": lambda lib, a: a.copysign(-1.0),
    "xlogy_number": lambda lib, a: lib.xlogy(a, 2.5),
    "xlogy_rnumber": lambda lib, a: lib.xlogy(1.5, a),
    "xlog1py": lambda lib, a: lib.special.xlog1py(a, a.flip(0)),
    # float16: the kernels' NAN where y is NaN, x quieted where x is, else x86's -NaN (0xFE00)
    "xlogy": lambda lib, a: lib.xlogy(a, a.flip(0)),
    # float16 SLEEF fmodf: a NaN x one unit below its quieted bits, +-inf x all ones (sign
    # flipped); the scalar loop's glibc fmodf: of two NaNs the larger payload
    "fmod": lambda lib, a: lib.fmod(a, a.flip(0)), "remainder": lambda lib, a: a % a.roll(9),
    "fmod_number": lambda lib, a: a.fmod(-0.7), "remainder_number": lambda lib, a: a % 2.0,
    "addcmul": lambda lib, a: lib.addcmul(a, a.flip(0), a.roll(3), value=0.5),
    "addcdiv": lambda lib, a: lib.addcdiv(a, a.flip(0), a.roll(3), value=-2.0),
    "floor_divide": lambda lib, a: a // a.flip(0), "floor_number": lambda lib, a: a // 0.7,
    "rfloor_number": lambda lib, a: lib.floor_divide(-1.5, a),
    # float16 vector steps: SLEEF's all ones (atan2), the kernels' NAN (hypot, logaddexp(2));
    # scalar loop: logaddexp's NaN with the sign set; nextafter: the first NaN operand
    "atan2": lambda lib, a: lib.atan2(a, a.flip(0)), "hypot": lambda lib, a: a.hypot(a.roll(3)),
    "logaddexp": lambda lib, a: lib.logaddexp(a, a.flip(0)),
    "logaddexp2": lambda lib, a: lib.logaddexp2(a.roll(5), a),
    "nextafter": lambda lib, a: lib.nextafter(a, a.flip(0)),
    "frexp": lambda lib, a: lib.frexp(a).mantissa,  # (bfloat16: scalar code only, 0x7FC0)
    # rounding_mode=None given: true division, the number read in float32 as by div's
    "div_mode_none": lambda lib, a: lib.div(a, 0.3, rounding_mode=None),
    "div_trunc": lambda lib, a: lib.div(a, a.flip(0), rounding_mode="trunc"),
    "mse_none": lambda lib, a: lib.nn.functional.mse_loss(a, a.flip(0), reduction="none"),
    "huber_none": lambda lib, a: lib.nn.functional.huber_loss(a, a.flip(0), reduction="none"),
    "ndtr": lambda lib, a: lib.special.ndtr(a), "entr": lambda lib, a: lib.special.entr(a),
    "tanh_backward": lambda lib, a: (tanh_backward(a, a.flip(0)) if lib is retrograd
                                     else lib.ops.aten.tanh_backward(a, a.flip(0))),
    # the scalar loop computes calc_i0e<T> in the dtype itself (every step rounded to it)
    "i0e": lambda lib, a: lib.special.i0e(a),
    # float16: the NaN SLEEF's float32 function makes (all ones, its NAN constant, the input
    # quieted), as _mm256_cvtps_ph converts it; libm's in the scalar tails of sinh/cosh/atanh
    "sin": lambda lib, a: a.sin(), "cos": lambda lib, a: a.cos(), "tan": lambda lib, a: a.tan(),
    "tanh": lambda lib, a: a.tanh(), "sinh": lambda lib, a: a.sinh(),
    "cosh": lambda lib, a: lib.cosh(a), "atanh": lambda lib, a: a.atanh(),
    "log2": lambda lib, a: a.log2(), "log10": lambda lib, a: lib.log10(a),
    "log1p": lambda lib, a: a.log1p(), "erf": lambda lib, a: a.erf(),
    "erfinv": lambda lib, a: a.erfinv(), "lgamma": lambda lib, a: a.lgamma(),
    # ATen's float32 calc_i1/calc_i1e (Cephes's shorter tables), rounded; bfloat16 0x7FC0
    "i1": lambda lib, a: lib.special.i1(a), "i1e": lambda lib, a: lib.special.i1e(a),
}


# float16 NaN payloads these kernels pass on (which operand's, quieted or not) are left.
_NAN_BITS_BF16_ONLY = {"addcmul", "addcdiv",
                       "div_trunc", "mse_none", "huber_none"}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(_NAN_BITS_UNARY))
def test_nan_bits_every_value(torch, name, dtype):
    """Every value of the dtype (every NaN payload too), contiguous and strided (torch's
    scalar loop throughout), bit for bit: x ** 0 is 1 and x ** 1 a copy (float16 quiets it),
    bfloat16 NaNs are 0xFFFF in vector steps and 0x7FC0 in the scalar loop (abs and neg keep
    the input's bits in vector steps), float16's SLEEF pow makes all ones of a NaN operand,
    lerp keeps a NaN's sign. (Every NaN, infinity and zero, and 1,000 other values: an
    n % 32 of 7, so that the contiguous call has a scalar tail too.)"""
    if dtype == "float16" and name in _NAN_BITS_BF16_ONLY:
        pytest.skip("float16 NaN payloads of this kernel: left")
    x = _values(dtype)
    odd = ~np.isfinite(x) | (x == 0)
    rest = np.random.default_rng(11).choice(x[~odd], 1000, replace=False)
    x = np.concatenate([x[odd], rest])
    x = x[: x.size - (x.size - 7) % 32]
    fn = _NAN_BITS_UNARY[name]
    for strided in (False, True):
        ins = []
        for lib in (retrograd, torch):
            t = _tensor(lib, x, dtype)
            ins.append(lib.stack([t, t], 1)[:, 0] if strided else t)
        with np.errstate(all="ignore"):
            out, ref = fn(retrograd, ins[0]), fn(torch, ins[1])
        got, want = _bits(out, torch), _bits(ref, torch)
        bad = np.nonzero(got != want)[0]
        if name == "lerp_tensor" and dtype == "float16":
            # Left: which of two NaN operands torch's fused multiply-add passes on.
            two = (np.isnan(x) * 1 + np.isnan(x[::-1]) + np.isnan(np.roll(x, 7))) >= 2
            bad = bad[~two[bad]]
        assert bad.size == 0, (strided, [(x[k], hex(got[k]), hex(want[k])) for k in bad[:4]])


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("op", ["mul", "div", "mul_", "div_", "add", "sub"])
def test_zero_dim_tensor_of_another_dtype(torch, op, dtype):
    """A 0-d tensor of another dtype as the second operand of mul/div is read at its own value
    in float32 (PyTorch's CPU-scalar path), not rounded to the result's dtype first; add and sub
    round it, and a 0-d first operand is rounded (it is not the kernel's scalar)."""
    x = np.random.default_rng(1).standard_normal(200).astype(np.float32)
    for sdt, v in [("float32", 0.1), ("float64", 1e-3), ("int64", 257), ("float32", 3.3e38)]:
        outs = []
        for lib in (retrograd, torch):
            a, s = _tensor(lib, x, dtype), lib.tensor(v, dtype=getattr(lib, sdt))
            outs.append([getattr(a, op)(s), getattr(lib, op.rstrip("_"))(s, a)])
        for out, ref in zip(*outs):
            assert str(out.dtype)[-8:] == str(ref.dtype)[-8:]
            np.testing.assert_array_equal(_bits(out, torch), _bits(ref, torch))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_backward_of_mul_div_by_number(torch, dtype, create_graph):
    """x * 0.1 and x / 0.3 in float16/bfloat16: the gradient g * 0.1 (g / 0.3) takes the number
    in float32 and rounds once, as PyTorch's MulBackward0/DivBackward0 do with the number they
    saved (it was rounded to the dtype first: 15-58 of 100 gradients differed)."""
    rng = np.random.default_rng(2)
    x, g = rng.standard_normal(300).astype(np.float32), rng.standard_normal(300).astype(np.float32)
    for f in (lambda t: t * 0.1, lambda t: t / 0.3, lambda t: t * 1e-3):
        grads = []
        for lib in (retrograd, torch):
            xt = _tensor(lib, x, dtype).requires_grad_()
            (gx,) = lib.autograd.grad(f(xt), xt, _tensor(lib, g, dtype), create_graph=create_graph)
            grads.append(gx.detach())
        np.testing.assert_array_equal(_bits(grads[0], torch), _bits(grads[1], torch))


_SORTS = {
    "sort": lambda lib, a: lib.sort(a, stable=True),
    "sort_desc": lambda lib, a: a.sort(dim=0, descending=True, stable=True),
    "argsort": lambda lib, a: lib.argsort(a, dim=1, stable=True),
    "msort": lambda lib, a: lib.msort(a),
    "topk": lambda lib, a: lib.topk(a, 5, dim=1).values,
    "kthvalue": lambda lib, a: lib.kthvalue(a, 7, dim=1).values,
    "median": lambda lib, a: lib.median(a[:, :20].reshape(-1).nan_to_num(0.0)),
    "nanmedian_dim": lambda lib, a: lib.nanmedian(a, 1).values,
    "mode": lambda lib, a: lib.mode(a, 1).values,
    "unique": lambda lib, a: lib.unique(a, return_counts=True),
    "isin": lambda lib, a: lib.isin(a, a[0]),
}


@pytest.mark.parametrize("name", list(_SORTS))
def test_bfloat16_sorts_with_nan(torch, name):
    """bfloat16 sorts put NaN last as torch does (ml_dtypes' bfloat16 compares NaN as neither
    smaller nor larger, so NumPy's sort left it, and the values around it, in place): the
    sorts, selections, unique and isin order the exact float32 values instead."""
    pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -2.5], np.float32)
    x = np.random.default_rng(21).choice(pool, (12, 30))
    outs = []
    for lib in (retrograd, torch):
        out = _SORTS[name](lib, _tensor(lib, x, "bfloat16"))
        outs.append([o for o in (out if isinstance(out, tuple) else (out,))])
    for out, ref in zip(*outs):  # (values, NaN payloads aside; indices exactly)
        np.testing.assert_array_equal(out.float().numpy(), ref.float().numpy())


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", ["i1", "i1e"])
def test_i1_cephes_bits(torch, name, dtype):
    """special.i1/i1e as ATen's calc_i1/calc_i1e: Cephes's Chebyshev expansions with the
    compiled kernel's fused ``x * b1 - b2`` (float32: the shorter coefficient tables), bit
    for bit; float32 i1 within a unit in the last place (glibc's expf, not reproduced)."""
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.standard_normal(300) * 12, rng.standard_normal(100) * 1e-3,
                        [0.0, -0.0, 8.0, -8.0, 1e-300, 5e-324, 700.0, np.inf, -np.inf, np.nan]])
    fn = getattr(retrograd.special, name)
    out = fn(retrograd.tensor(x, dtype=getattr(retrograd, dtype))).numpy()
    ref = getattr(torch.special, name)(torch.tensor(x, dtype=getattr(torch, dtype))).numpy()
    if name == "i1" and dtype == "float32":
        np.testing.assert_array_max_ulp(out, ref, 1)
    else:
        np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [5, 16, 17, 40, 71])
def test_softmax_nan_rows(torch, n, dtype):
    """float16/bfloat16 softmax over the last dim turns a row holding NaN or +inf (or only
    -inf) all NaN with the bits of torch's kernel: bfloat16 0xFFFF in its 16-element vector
    steps, 0x7FC0 in the row's tail; float16 0xFFFF for a NaN in the vector part (not its last
    element when the tail is under 8 long), 0xFE00 for infinities, else 0x7E00 (rows mixing
    NaN and +inf: left)."""
    x = np.random.default_rng(n).standard_normal((7, n)).astype(np.float32)
    vec = n - n % 16
    x[0, 0] = np.nan
    x[1, -1] = np.nan
    x[2, max(vec - 1, 0)] = np.nan
    x[3, 2] = np.inf
    x[4] = -np.inf
    x[5, 1:3] = np.inf
    for fn in ("softmax", "_safe_softmax"):
        out, ref = (getattr(lib, fn)(_tensor(lib, x, dtype), -1) for lib in (retrograd, torch))
        np.testing.assert_array_equal(_bits(out, torch), _bits(ref, torch))
