"""Tests for retrograd._printing: tensor reprs must match PyTorch's character for character.

Most tests build the same values in NumPy and torch and compare ``format_tensor`` with
``repr(torch_tensor)``; they are skipped when torch is not installed.  A few tests at the top
check literal strings and need no torch.
"""

import math

import numpy as np
import pytest

from retrograd._printing import format_tensor, get_printoptions, set_printoptions

DEFAULT_OPTIONS = {
    "precision": 4,
    "threshold": 1000,
    "edgeitems": 3,
    "linewidth": 80,
    "sci_mode": None,
}


@pytest.fixture(autouse=True)
def _reset_printoptions():
    # Print options are global state; never let one test's settings leak into another.
    yield
    set_printoptions(profile="default")
    try:
        import torch
    except ImportError:
        return
    torch.set_printoptions(profile="default")


def fmt_float(values, dtype=np.float32, suffixes=(), **kwargs):
    data = np.array(values, dtype=dtype)
    return format_tensor(data, is_float=True, is_bool=False, suffixes=list(suffixes), **kwargs)


# ---------------------------------------------------------------------------------------------
# Literal expectations (no torch needed)
# ---------------------------------------------------------------------------------------------


def test_literal_requires_grad():
    assert fmt_float([2.0, 3.0], suffixes=["requires_grad=True"]) == (
        "tensor([2., 3.], requires_grad=True)"
    )


def test_literal_scalars():
    assert fmt_float(7.0) == "tensor(7.)"
    assert format_tensor(np.array(3), is_float=False, is_bool=False, suffixes=[]) == "tensor(3)"
    assert (
        format_tensor(np.array(True), is_float=False, is_bool=True, suffixes=[]) == "tensor(True)"
    )


def test_literal_float_modes():
    assert fmt_float([1.5, 2.25]) == "tensor([1.5000, 2.2500])"
    assert fmt_float([1e5, 1.0]) == "tensor([1.0000e+05, 1.0000e+00])"
    assert fmt_float([math.nan, math.inf, -math.inf, 1.0]) == "tensor([nan, inf, -inf, 1.])"
    assert fmt_float([-0.0]) == "tensor([-0.])"


def test_literal_ints_bools_and_grad_fn():
    ints = np.array([[1, -20], [300, 4]], dtype=np.int64)
    assert format_tensor(ints, is_float=False, is_bool=False, suffixes=[]) == (
        "tensor([[  1, -20],\n        [300,   4]])"
    )
    bools = np.array([True, False])
    assert format_tensor(bools, is_float=False, is_bool=True, suffixes=[]) == (
        "tensor([ True, False])"
    )
    assert (
        fmt_float(
            [1.0, 2.0],
            dtype=np.float64,
            suffixes=["dtype=retrograd.float64", "grad_fn=<AddBackward0>"],
        )
        == "tensor([1., 2.], dtype=retrograd.float64, grad_fn=<AddBackward0>)"
    )


def test_literal_suffix_wrap():
    # With retrograd's longer dtype name the grad_fn no longer fits within 80 columns.
    got = fmt_float(
        [0.0, 1 / 3, 2 / 3],
        dtype=np.float64,
        suffixes=["dtype=retrograd.float64", "grad_fn=<MulBackward0>"],
    )
    assert got == (
        "tensor([0.0000, 0.3333, 0.6667], dtype=retrograd.float64,\n       grad_fn=<MulBackward0>)"
    )


def test_literal_empty():
    assert fmt_float([]) == "tensor([])"
    assert fmt_float(np.zeros((0, 3))) == "tensor([], size=(0, 3))"
    assert fmt_float(np.zeros((0, 3)), suffixes=["dtype=retrograd.float64"]) == (
        "tensor([], size=(0, 3), dtype=retrograd.float64)"
    )


def test_literal_summarized():
    data = np.arange(2000, dtype=np.int64)
    assert format_tensor(data, is_float=False, is_bool=False, suffixes=[]) == (
        "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"
    )


def test_literal_parameter_prefix():
    got = fmt_float(
        np.ones((2, 2)), prefix="Parameter containing:\ntensor(", suffixes=["requires_grad=True"]
    )
    assert got == "Parameter containing:\ntensor([[1., 1.],\n        [1., 1.]], requires_grad=True)"


def test_printoptions_roundtrip():
    assert get_printoptions() == DEFAULT_OPTIONS
    set_printoptions(precision=2, sci_mode=True)
    assert get_printoptions()["precision"] == 2
    assert get_printoptions()["sci_mode"] is True
    assert fmt_float([1.5]) == "tensor([1.50e+00])"
    # sci_mode is reassigned on every call, as in torch.
    set_printoptions(precision=3)
    assert get_printoptions()["sci_mode"] is None
    set_printoptions(profile="full")
    assert get_printoptions()["threshold"] == math.inf
    set_printoptions(profile="default")
    assert get_printoptions() == DEFAULT_OPTIONS


# ---------------------------------------------------------------------------------------------
# Comparison with real torch
# ---------------------------------------------------------------------------------------------

NP_TO_TORCH_NAME = {
    np.float16: "float16",
    np.float32: "float32",
    np.float64: "float64",
    np.int8: "int8",
    np.int16: "int16",
    np.int32: "int32",
    np.int64: "int64",
    np.uint8: "uint8",
    np.bool_: "bool",
}


def _torch():
    return pytest.importorskip("torch")


def _suffixes_like_torch(t):
    """The trailing items torch's repr shows for a plain CPU tensor, in torch's spelling.

    The comparison keeps torch's own "dtype=torch.float64" text rather than retrograd's:
    "retrograd." is four characters longer, which would legitimately move the point where
    long suffix lists wrap onto a new line.
    """
    torch = _torch()
    suffixes = []
    if t.numel() == 0:
        shows_dtype = t.dtype != torch.get_default_dtype()
    else:
        shows_dtype = t.dtype not in (torch.get_default_dtype(), torch.int64, torch.bool)
    if shows_dtype:
        suffixes.append(f"dtype={t.dtype}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return suffixes


def assert_matches_torch(t, prefix="tensor("):
    torch = _torch()
    expected = repr(t)
    got = format_tensor(
        t.detach().numpy(),
        is_float=t.dtype.is_floating_point,
        is_bool=t.dtype == torch.bool,
        suffixes=_suffixes_like_torch(t),
        prefix=prefix,
    )
    assert got == expected, f"\nexpected:\n{expected}\ngot:\n{got}"


def from_np(values, dtype=np.float32):
    torch = _torch()
    return torch.from_numpy(np.array(values, dtype=dtype))


nan, inf = math.nan, math.inf

CASES = {
    # scalars
    "scalar_float": lambda: from_np(7.0),
    "scalar_float_frac": lambda: from_np(7.25),
    "scalar_float_neg_frac": lambda: from_np(-0.125, np.float64),
    "scalar_float_big": lambda: from_np(1e10),
    "scalar_float_small": lambda: from_np(1e-5),
    "scalar_nan": lambda: from_np(nan),
    "scalar_neg_inf": lambda: from_np(-inf),
    "scalar_neg_zero": lambda: from_np(-0.0),
    "scalar_int": lambda: from_np(3, np.int64),
    "scalar_int_neg": lambda: from_np(-42, np.int32),
    "scalar_uint8": lambda: from_np(255, np.uint8),
    "scalar_true": lambda: from_np(True, np.bool_),
    "scalar_false": lambda: from_np(False, np.bool_),
    "scalar_half": lambda: from_np(0.1, np.float16),
    # 1-D floats
    "integral": lambda: from_np([2.0, 3.0]),
    "fractional": lambda: from_np([1.5, 2.25]),
    "negative_mixed": lambda: from_np([-1.5, 2.0, 100.125]),
    "big_integral": lambda: from_np([1e5, 1.0]),
    "big_magnitudes": lambda: from_np([1e9, 2.5]),
    "small_magnitudes": lambda: from_np([1e-5, 0.5]),
    "ratio_just_over_1000": lambda: from_np([1001.0, 1.0]),
    "ratio_exactly_1000": lambda: from_np([1000.0, 1.0]),
    "max_exactly_1e8": lambda: from_np([1e8], np.float64),
    "three_digit_exponent": lambda: from_np([1e-300, 1e300], np.float64),
    "nan_inf_mixed": lambda: from_np([nan, inf, -inf, 1.5]),
    "nan_inf_integral": lambda: from_np([nan, -inf, 2.0, -300.0]),
    "only_nonfinite": lambda: from_np([nan, inf, -inf]),
    "nan_inf_sci": lambda: from_np([nan, inf, 1e-7, 3.0]),
    "zeros": lambda: from_np([0.0, 0.0, 0.0]),
    "zero_and_nan": lambda: from_np([0.0, nan]),
    "negative_zero": lambda: from_np([-0.0, 0.0]),
    "negative_zero_frac": lambda: from_np([-0.0, 0.001]),
    "negative_zero_sci": lambda: from_np([-0.0, 1e-6]),
    "rounding_to_wider": lambda: from_np([9.99996, 0.5], np.float64),
    "float32_inexact": lambda: from_np([0.1, 0.2, 0.3]),
    "float64_dtype": lambda: from_np([1.0, 2.0], np.float64),
    # half precision
    "half": lambda: from_np([0.1, 65504.0, -2.5], np.float16),
    "half_small": lambda: from_np([6e-8, 1.0], np.float16),
    "half_integral": lambda: from_np([1.0, 2048.0], np.float16),
    "half_2d": lambda: from_np(np.linspace(-3, 3, 12).reshape(3, 4), np.float16),
    # ints and bools
    "ints": lambda: from_np([1, -20, 300], np.int64),
    "int8": lambda: from_np([-128, 0, 127], np.int8),
    "int16": lambda: from_np([-1, 2], np.int16),
    "int32_2d": lambda: from_np([[1, 2], [-30000, 4]], np.int32),
    "uint8": lambda: from_np([0, 7, 255], np.uint8),
    "int64_extremes": lambda: from_np([-(2**63), 2**63 - 1], np.int64),
    "bools": lambda: from_np([True, False, True], np.bool_),
    "bools_all_true": lambda: from_np([True, True], np.bool_),
    "bools_2d": lambda: from_np([[True, False], [False, False]], np.bool_),
    # n-D
    "2d": lambda: from_np(np.arange(6).reshape(2, 3) * 0.5),
    "3d": lambda: from_np(np.arange(24).reshape(2, 3, 4)),
    "4d": lambda: from_np(np.arange(16).reshape(2, 2, 2, 2) - 8.0),
    "column": lambda: from_np(np.arange(5.0).reshape(5, 1)),
    "row_2d": lambda: from_np(np.arange(5.0).reshape(1, 5)),
    "3d_singleton": lambda: from_np([[[1.0]]]),
    "3d_sci": lambda: from_np(np.arange(1, 9).reshape(2, 2, 2) * 1e-6),
    # summarization
    "summarized_1d": lambda: from_np(np.arange(2000.0)),
    "summarized_1d_int": lambda: from_np(np.arange(2000), np.int64),
    "threshold_exact": lambda: from_np(np.arange(1000.0)),
    "threshold_plus_one": lambda: from_np(np.arange(1001.0)),
    "summarized_2d": lambda: from_np(np.arange(2000.0).reshape(40, 50) / 7),
    "summarized_3d": lambda: from_np(np.arange(3000).reshape(10, 20, 15), np.int32),
    "summarized_short_axis": lambda: from_np(np.arange(2000.0).reshape(2, 1000)),
    "summarized_outlier_hidden": lambda: from_np(np.r_[1.0, 2.0, 3.0, np.full(994, 1e9), 4, 5, 6]),
    # line wrapping
    "wrap_4x40": lambda: from_np(np.linspace(-1, 1, 160).reshape(4, 40)),
    "wrap_1d": lambda: from_np(np.arange(100.0) / 3),
    "wrap_1d_int": lambda: from_np(np.arange(300), np.int64),
    "wrap_bools": lambda: from_np(np.arange(50) % 3 == 0, np.bool_),
    "wrap_3d": lambda: from_np(np.arange(2 * 2 * 30).reshape(2, 2, 30) * 1.25),
    # empty
    "empty_1d": lambda: from_np([]),
    "empty_0x3": lambda: from_np(np.zeros((0, 3))),
    "empty_2x0x4": lambda: from_np(np.zeros((2, 0, 4))),
    "empty_int": lambda: from_np(np.zeros((0,)), np.int64),
    "empty_2d_float64": lambda: from_np(np.zeros((3, 0)), np.float64),
    "empty_bool": lambda: from_np(np.zeros((0, 2)), np.bool_),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    assert_matches_torch(CASES[name]())


def test_requires_grad_and_grad_fn():
    torch = _torch()
    leaf = torch.tensor([2.0, 3.0], requires_grad=True)
    assert_matches_torch(leaf)
    assert_matches_torch(leaf * 2)
    assert_matches_torch(torch.tensor(1.5, dtype=torch.float64, requires_grad=True).exp())
    assert_matches_torch(torch.zeros(0, 3, requires_grad=True))


def test_suffixes_wrap_onto_new_line():
    torch = _torch()
    # Long enough rows that ", dtype=..., grad_fn=<...>" no longer fits on the last line.
    for n in range(1, 12):
        t = torch.arange(n, dtype=torch.float64).div(3).requires_grad_()
        assert_matches_torch(t)
        assert_matches_torch(t * 1)
        assert_matches_torch((t * 1).reshape(1, n))


def test_parameter_prefix():
    torch = _torch()
    param = torch.nn.Parameter(torch.arange(12.0).reshape(3, 4) / 3)
    assert_matches_torch(param, prefix="Parameter containing:\ntensor(")
    param = torch.nn.Parameter(torch.arange(40.0) / 3)
    assert_matches_torch(param, prefix="Parameter containing:\ntensor(")


OPTION_SETS = [
    {"precision": 2},
    {"precision": 0},
    {"precision": 8},
    {"threshold": 5},
    {"threshold": 5, "edgeitems": 1},
    {"threshold": 5, "edgeitems": 0},
    {"edgeitems": 1, "threshold": 10},
    {"linewidth": 30},
    {"linewidth": 5},
    {"sci_mode": True},
    {"sci_mode": False},
    {"sci_mode": True, "precision": 1},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "short", "precision": 6},
]

OPTION_TENSORS = {
    "frac": lambda: from_np([1.12345, -2.5, 3.0]),
    "integral": lambda: from_np([1.0, 20.0, -300.0]),
    "sci": lambda: from_np([1e-7, 2.0, 3e9], np.float64),
    "zeros_nan": lambda: from_np([0.0, nan, -0.0]),
    "ints": lambda: from_np(np.arange(10), np.int64),
    "bools": lambda: from_np(np.arange(10) % 2 == 0, np.bool_),
    "matrix": lambda: from_np(np.arange(48).reshape(6, 8) / 7),
    "cube": lambda: from_np(np.arange(60).reshape(3, 4, 5), np.int16),
    "big": lambda: from_np(np.arange(2000.0) - 1000.5),
    "scalar": lambda: from_np(3.14159),
}


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: repr(o))
@pytest.mark.parametrize("name", sorted(OPTION_TENSORS))
def test_printoptions_match_torch(options, name):
    torch = _torch()
    set_printoptions(**options)
    torch.set_printoptions(**options)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    assert_matches_torch(OPTION_TENSORS[name]())


def test_precision_2_then_reset():
    torch = _torch()
    t = from_np([1.12345, 2.5])
    set_printoptions(precision=2)
    torch.set_printoptions(precision=2)
    assert_matches_torch(t)
    assert format_tensor(t.numpy(), is_float=True, is_bool=False, suffixes=[]) == (
        "tensor([1.12, 2.50])"
    )
    set_printoptions(profile="default")
    torch.set_printoptions(profile="default")
    assert_matches_torch(t)
    assert get_printoptions() == DEFAULT_OPTIONS


def _random_array(rng):
    dtype = rng.choice(list(NP_TO_TORCH_NAME))
    ndim = int(rng.integers(0, 5))
    shape = tuple(int(n) for n in rng.integers(1, 6, size=ndim))
    if rng.random() < 0.1 and ndim:
        shape = (*shape[:-1], int(rng.integers(200, 600)))
    if dtype is np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        high = min(int(info.max), 10 ** int(rng.integers(1, 10)))
        low = max(int(info.min), -high)
        return rng.integers(low, high, size=shape, endpoint=True).astype(dtype)
    scale = 10.0 ** rng.integers(-9, 12)
    values = rng.standard_normal(shape) * scale
    if rng.random() < 0.3:
        values = np.round(values)
    if rng.random() < 0.2 and values.size:
        flat = values.reshape(-1)
        picks = rng.integers(0, flat.size, size=3)
        flat[picks] = rng.choice([nan, inf, -inf, 0.0, -0.0], size=3)
    with np.errstate(over="ignore"):
        return np.asarray(values).astype(dtype)


@pytest.mark.parametrize("seed", range(300))
def test_random_arrays_match_torch(seed):
    torch = _torch()
    data = _random_array(np.random.default_rng(seed))
    assert_matches_torch(torch.from_numpy(np.ascontiguousarray(data)))
