"""``_sleef``: float16/bfloat16 pointwise ops bit for bit as PyTorch's CPU kernels round them.

Exhaustive: every one of the 65,536 bit patterns of each dtype goes through the op in one call,
in retrograd and in torch, and the results must be the same bits (NaN payloads aside).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import retrograd
from retrograd import _sleef

# Ops whose reduced-precision kernels take SLEEF's float32 functions (``Node.reduced``).
SLEEF_OPS = ["exp", "log", "sin", "sigmoid"]


def _every(lib, dtype):
    """All 65,536 values of the dtype, in bit-pattern order."""
    bits = np.arange(65536, dtype=np.uint16)
    if lib is retrograd:
        # ml_dtypes' bfloat16 is retrograd's; widening to float32 is exact
        np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16
        return retrograd.tensor(bits.view(np_dtype).astype(np.float32)).to(
            getattr(retrograd, dtype))
    return lib.from_numpy(bits.view(np.int16).copy()).view(getattr(lib, dtype))


def _bits(t) -> np.ndarray:
    return np.asarray(t.detach().float().numpy(), np.float32)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", SLEEF_OPS)
def test_every_value_bit_for_bit(torch, name, dtype):
    x = _every(retrograd, dtype)
    t = _every(torch, dtype)
    # the inputs are the same bits (float32 widening is exact, NaNs aside)
    np.testing.assert_array_equal(_bits(x), _bits(t))
    out = getattr(retrograd, name)(x)
    ref = getattr(torch, name)(t)
    assert out.dtype == getattr(retrograd, dtype)
    a, b = _bits(out), _bits(ref)
    both_nan = np.isnan(a) & np.isnan(b)
    bad = np.nonzero((a.view(np.int32) != b.view(np.int32)) & ~both_nan)[0]
    assert bad.size == 0, [(float(_bits(x)[k]), float(a[k]), float(b[k])) for k in bad[:5]]


def test_numpy_float32_differs_where_sleef_decides():
    """The reason for the module: NumPy's float32 exp rounds 6.84375's exp to 938 (a bfloat16
    tie, which goes to 936), SLEEF's to 938.00006 (which goes to 940, torch's answer)."""
    x = np.array([6.84375], np.float32)
    assert float(np.exp(x)[0]) == 938.0
    assert float(_sleef.expf(x)[0]) == np.nextafter(np.float32(938), np.float32(1e9))
    bf = retrograd.tensor([6.84375]).to(retrograd.bfloat16)
    assert float(retrograd.exp(bf)) == 940.0
    assert float(retrograd.sigmoid(retrograd.tensor([-90.0]).to(retrograd.bfloat16))) == 0.0


_RNG = np.random.default_rng(0)
_MODERATE = _RNG.uniform(-80, 80, 3000)
_HUGE = np.concatenate([_RNG.uniform(-3e4, 3e4, 500), _RNG.uniform(-3e38, 3e38, 500)])


@pytest.mark.parametrize("fn,ref,x", [
    (_sleef.expf, np.exp, _MODERATE),
    (_sleef.logf, np.log, np.abs(np.concatenate([_MODERATE, _HUGE, [1e-40, 3e-39]]))),
    (_sleef.sinf, np.sin, np.concatenate([_MODERATE, _HUGE])),
], ids=["exp", "log", "sin"])
def test_float32_close_to_correctly_rounded(fn, ref, x):
    """Without torch: SLEEF's functions are within a few float32 ulps of the float64 values,
    over moderate and huge arguments (subnormals and the large-argument reduction included)."""
    x = x.astype(np.float32)
    got = fn(x).astype(np.float64)
    want = ref(x.astype(np.float64))
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    assert (np.abs(got - want) / ulp).max() <= 4.0


def test_lookup_keeps_shape_and_strides():
    a = np.linspace(-3, 3, 24, dtype=np.float32).astype(np.float16).reshape(4, 6)[:, ::2]
    out = _sleef.lookup(_sleef.expf, a)
    assert out.shape == (4, 3) and out.dtype == np.float16
    np.testing.assert_array_equal(out, _sleef.expf(a.astype(np.float32)).astype(np.float16))
    assert _sleef.lookup(_sleef.expf, np.array(1.0, np.float16)).shape == ()
