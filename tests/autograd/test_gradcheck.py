"""gradcheck and gradgradcheck: pass on correct functions, fail with a readable report on a
deliberately wrong custom Function.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
from retrograd.autograd import GradcheckError, gradcheck, gradgradcheck

try:  # torch is only the oracle; the torch-free tests below run without it
    import torch as _torch
except ImportError:  # pragma: no cover - depends on the environment
    _torch = None

needs_torch = pytest.mark.skipif(_torch is None, reason="torch (the oracle) is not installed")


# -- helpers -----------------------------------------------------------------------------------


def _is_tensor(x) -> bool:
    return isinstance(x, retrograd.Tensor) or (_torch is not None and isinstance(x, _torch.Tensor))


def _is_dtype(x) -> bool:
    return isinstance(x, retrograd.dtype) or (_torch is not None and isinstance(x, _torch.dtype))


def to_py(x):
    """Tensors (of either library) to (dtype name, shape, array); containers recursively."""
    if _is_dtype(x):
        return ("dtype", str(x).split(".")[-1])
    if _is_tensor(x):
        return ("T", str(x.dtype).split(".")[-1], tuple(x.shape), np.array(x.detach().tolist()))
    if isinstance(x, (list, tuple)):
        return tuple(to_py(e) for e in x)
    if isinstance(x, dict):
        return {k: to_py(v) for k, v in x.items()}
    return x


def assert_same(a, b, rtol=1e-5, atol=1e-6, path="result"):
    """Compare the ``to_py`` forms of a retrograd result ``a`` and a torch result ``b``."""
    if isinstance(b, tuple) and b and b[0] == "T":
        assert isinstance(a, tuple) and a and a[0] == "T", f"{path}: {a!r} is not a tensor"
        assert a[1] == b[1], f"{path}: dtype {a[1]} != torch's {b[1]}"
        assert a[2] == b[2], f"{path}: shape {a[2]} != torch's {b[2]}"
        np.testing.assert_allclose(a[3], b[3], rtol=rtol, atol=atol, err_msg=path)
    elif isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b), f"{path}: {a!r} vs torch's {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, rtol, atol, f"{path}[{i}]")
    elif isinstance(b, dict):
        assert isinstance(a, dict) and a.keys() == b.keys(), f"{path}: {a!r} vs {b!r}"
        for k in b:
            assert_same(a[k], b[k], rtol, atol, f"{path}[{k!r}]")
    elif isinstance(b, float):
        assert a == pytest.approx(b, rel=rtol, abs=atol), f"{path}: {a!r} vs torch's {b!r}"
    else:
        assert a == b, f"{path}: {a!r} vs torch's {b!r}"


def compare(fn, **kw):
    """Run ``fn(lib)`` with retrograd and with torch; their results must agree."""
    ours = to_py(fn(retrograd))
    ref = to_py(fn(_torch))
    assert_same(ours, ref, **kw)
    return ours


def _catch(fn, lib):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001
        return e
    return None


def _builtin_base(t: type) -> type:
    for k in t.__mro__:
        if k.__module__ == "builtins":
            return k
    return Exception


def compare_error(fn, exact=True):
    """Both libraries raise; the same builtin exception type and (if ``exact``) message."""
    ref = _catch(fn, _torch)
    assert ref is not None, "torch raised nothing: the test is wrong"
    ours = _catch(fn, retrograd)
    assert ours is not None, f"retrograd raised nothing; torch raised {type(ref).__name__}: {ref}"
    assert isinstance(ours, _builtin_base(type(ref))), (
        f"retrograd raised {type(ours).__name__}: {ours}; torch raised {type(ref).__name__}: {ref}"
    )
    if exact:
        assert str(ours) == str(ref)
    return ours, ref



def wrong_fns(lib):
    F = lib.autograd.Function

    class BadSin(F):
        # Wrong first derivative: sin' taken as 2 * cos.
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x.cos()

    class OneEntryWrong(F):
        # Right except for the gradient of element 1, which is off by one.
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            bump = lib.zeros_like(g)
            bump[1] = 1.0
            return g * 3 + bump * g

    class DetachedSin(F):
        # Right first derivative; its backward is not differentiable in x (uses x.detach()),
        # so the second derivative is wrong.
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.detach().cos()

    class GoodSin(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.cos()

    class GoodMulAdd(F):
        @staticmethod
        def forward(ctx, x, w, k):
            ctx.save_for_backward(x, w)
            ctx.k = k
            return x * w + k, (x * x).sum()

        @staticmethod
        def backward(ctx, g1, g2):
            x, w = ctx.saved_tensors
            return g1 * w + 2 * x * g2, g1 * x, None

    class WrongSecondInput(F):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w, g * x * 0.5

    return {k: v for k, v in locals().items() if isinstance(v, type)}


def dbl(lib, data, requires_grad=True):
    return lib.tensor(data, dtype=lib.float64, requires_grad=requires_grad)


X = [0.3, -1.1, 2.0]


# -- correct functions pass --------------------------------------------------------------------

GOOD = {
    "sin": (lambda lib, x, w: lib.sin(x), False),
    "mul_broadcast": (lambda lib, x, w: x.unsqueeze(1) * w, False),
    "matmul": (lambda lib, x, w: (x.unsqueeze(1) @ w.unsqueeze(0)) @ w, False),
    "tuple_out": (lambda lib, x, w: (x.exp(), (w * w).sum()), False),
    "composite": (lambda lib, x, w: lib.tanh(x * w.sum()) / (1 + x * x), False),
    "pow_tensor": (lambda lib, x, w: (x * x + 1) ** w.mean(), False),
    "reductions": (lambda lib, x, w: (x.max(), x.mean(), w.norm()), False),
}


@pytest.mark.parametrize("name", sorted(GOOD))
def test_gradcheck_and_gradgradcheck_pass(name):
    fn, _ = GOOD[name]
    x = dbl(retrograd, X)
    w = dbl(retrograd, [0.5, 1.5])
    f = lambda x, w: fn(retrograd, x, w)  # noqa: E731
    assert gradcheck(f, (x, w)) is True
    assert gradgradcheck(f, (x, w)) is True


def test_gradcheck_good_function():
    F = wrong_fns(retrograd)
    x = dbl(retrograd, X)
    w = dbl(retrograd, [1.0, 2.0, -1.0])
    assert gradcheck(F["GoodSin"].apply, (x,)) is True
    assert gradgradcheck(F["GoodSin"].apply, (x,)) is True
    assert gradcheck(lambda x, w: F["GoodMulAdd"].apply(x, w, 2.0), (x, w)) is True
    assert gradgradcheck(lambda x, w: F["GoodMulAdd"].apply(x, w, 2.0), (x, w)) is True


def test_gradcheck_accepts_single_tensor_and_non_tensor_inputs():
    x = dbl(retrograd, X)
    assert gradcheck(retrograd.sin, x) is True
    assert gradcheck(lambda x, k: x * k, (x, 3.0)) is True
    c = dbl(retrograd, [1.0, 2.0, 3.0], requires_grad=False)
    assert gradcheck(lambda x, c: x * c, (x, c)) is True


def test_gradcheck_leaves_inputs_alone():
    x = dbl(retrograd, X)
    before = x.detach().numpy().copy()
    assert gradcheck(lambda x: (x ** 3).sum(), (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x.grad is None


def test_gradcheck_output_not_depending_on_input():
    x = dbl(retrograd, X)
    w = dbl(retrograd, [1.0])
    assert gradcheck(lambda x, w: w * 2, (x, w)) is True


def test_gradgradcheck_with_explicit_grad_outputs():
    x = dbl(retrograd, X)
    go = dbl(retrograd, [1.0, -2.0, 0.5])
    assert gradgradcheck(lambda x: x.tanh() * x, (x,), (go,)) is True


# -- wrong functions fail ----------------------------------------------------------------------


def test_gradcheck_wrong_function_raises_with_report():
    F = wrong_fns(retrograd)
    x = dbl(retrograd, X)
    with pytest.raises(GradcheckError) as ei:
        gradcheck(F["BadSin"].apply, (x,))
    msg = str(ei.value)
    assert isinstance(ei.value, RuntimeError)
    assert "Jacobian mismatch for output 0 with respect to input 0" in msg
    assert "numerical" in msg and "analytical" in msg
    # The report gives the numbers: cos(0.3) numerically, 2 * cos(0.3) analytically.
    assert f"{np.cos(0.3):.4f}"[:5] in msg
    assert f"{2 * np.cos(0.3):.4f}"[:5] in msg


def test_gradcheck_wrong_function_returns_false():
    F = wrong_fns(retrograd)
    x = dbl(retrograd, X)
    assert gradcheck(F["BadSin"].apply, (x,), raise_exception=False) is False
    # gradgradcheck tests the backward against itself: BadSin's backward is self-consistent.
    assert gradgradcheck(F["BadSin"].apply, (x,), raise_exception=False) is True


def test_gradcheck_report_names_the_single_mismatching_entry():
    F = wrong_fns(retrograd)
    x = dbl(retrograd, X)
    with pytest.raises(GradcheckError) as ei:
        gradcheck(F["OneEntryWrong"].apply, (x,))
    msg = str(ei.value)
    assert "1 mismatching" in msg
    lines = [ln for ln in msg.splitlines() if "analytical 4" in ln and "numerical 3" in ln]
    assert len(lines) == 1, msg
    assert "[1]" in lines[0]


def test_gradcheck_report_names_the_input():
    F = wrong_fns(retrograd)
    x = dbl(retrograd, X)
    w = dbl(retrograd, [1.0, 2.0, 3.0])
    with pytest.raises(GradcheckError) as ei:
        gradcheck(F["WrongSecondInput"].apply, (x, w))
    assert "Jacobian mismatch for output 0 with respect to input 1" in str(ei.value)


def test_gradgradcheck_catches_wrong_second_derivative():
    F = wrong_fns(retrograd)
    x = dbl(retrograd, X)
    assert gradcheck(F["DetachedSin"].apply, (x,)) is True
    with pytest.raises(GradcheckError):
        gradgradcheck(F["DetachedSin"].apply, (x,))
    assert gradgradcheck(F["DetachedSin"].apply, (x,), raise_exception=False) is False


def test_gradcheck_tolerances():
    # An analytical gradient off by 1e-4 (relative): fails at rtol=1e-6, passes at rtol=1e-3.
    class Slightly(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2.0002

    x = dbl(retrograd, X)
    assert gradcheck(Slightly.apply, (x,), rtol=1e-6, atol=1e-9, raise_exception=False) is False
    assert gradcheck(Slightly.apply, (x,), rtol=1e-3, atol=1e-9) is True


def test_gradcheck_error_importable_from_module():
    from retrograd.autograd.gradcheck import GradcheckError as E

    assert E is GradcheckError
    assert issubclass(E, RuntimeError)


def test_gradcheck_float32_input_warns():
    x = retrograd.tensor([0.5, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        gradcheck(lambda x: x * 2, (x,), eps=1e-3, atol=1e-2, raise_exception=False)
    assert any(issubclass(wi.category, UserWarning) and "double precision" in str(wi.message)
               for wi in w)


# -- against torch -----------------------------------------------------------------------------


@needs_torch
@pytest.mark.parametrize("name", ["BadSin", "OneEntryWrong", "DetachedSin", "GoodSin",
                                  "WrongSecondInput"])
def test_verdicts_match_torch(name):
    def f(lib):
        F = wrong_fns(lib)[name]
        x = dbl(lib, X)
        args = (x, dbl(lib, [1.0, 2.0, 3.0])) if name == "WrongSecondInput" else (x,)
        first = lib.autograd.gradcheck(F.apply, args, raise_exception=False)
        second = lib.autograd.gradgradcheck(F.apply, args, raise_exception=False)
        return first, second

    compare(f)


@needs_torch
def test_wrong_function_error_type_and_header_match_torch():
    def f(lib):
        F = wrong_fns(lib)["BadSin"]
        lib.autograd.gradcheck(F.apply, (dbl(lib, X),))

    ours, ref = compare_error(f, exact=False)
    assert type(ours).__name__ == type(ref).__name__ == "GradcheckError"
    assert str(ours).splitlines()[0] == str(ref).splitlines()[0]


@needs_torch
def test_no_input_requires_grad_error_matches_torch():
    def f(lib):
        lib.autograd.gradcheck(lambda x: x * 2, (dbl(lib, X, requires_grad=False),))

    compare_error(f)


@needs_torch
def test_float32_warning_text_matches_torch():
    def f(lib):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.autograd.gradcheck(lambda x: x * 2, (x,), eps=1e-3, atol=1e-2,
                                   raise_exception=False)
        return sorted({str(wi.message) for wi in w if "double precision" in str(wi.message)})

    compare(f)


def test_gradgradcheck_catches_wrong_double_backward_of_builtin_composition():
    # A Function whose backward is differentiable but wrong in its second derivative:
    # g * (cos x + (x - x.detach()) * 5) has the right value and a wrong derivative in x.
    class Skewed(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (x.cos() + (x - x.detach()) * 5)

    x = dbl(retrograd, X)
    assert gradcheck(Skewed.apply, (x,)) is True
    assert gradgradcheck(Skewed.apply, (x,), raise_exception=False) is False
