"""gradcheck and gradgradcheck: pass on correct functions, fail with a readable report on a
deliberately wrong custom Function.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
from retrograd.autograd import GradcheckError, gradcheck, gradgradcheck

from ..oracle import compare, compare_error, needs_torch


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
