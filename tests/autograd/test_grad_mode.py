"""Grad modes: no_grad, enable_grad, set_grad_enabled and inference_mode.

Context managers and decorators, nesting, thread-locality, inference tensors and their errors.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import retrograd

from ..oracle import _torch, compare, compare_error, needs_torch


@pytest.fixture(autouse=True)
def _reset_modes():
    """A failing test must not leave grad mode off for the next one."""
    yield
    retrograd.set_grad_enabled(True)
    if _torch is not None:
        _torch.set_grad_enabled(True)


# -- context managers --------------------------------------------------------------------------


def test_no_grad_context():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    assert retrograd.is_grad_enabled()
    with retrograd.no_grad():
        assert not retrograd.is_grad_enabled()
        y = x * 2
        assert not y.requires_grad and y.grad_fn is None and y.is_leaf
        np.testing.assert_allclose(y.numpy(), [2.0, 4.0])
    assert retrograd.is_grad_enabled()
    assert (x * 2).requires_grad


def test_no_grad_restores_after_exception():
    with pytest.raises(ValueError):
        with retrograd.no_grad():
            raise ValueError("boom")
    assert retrograd.is_grad_enabled()
    with pytest.raises(ValueError):
        with retrograd.inference_mode():
            raise ValueError("boom")
    assert retrograd.is_grad_enabled() and not retrograd.is_inference_mode_enabled()


def test_enable_grad_inside_no_grad():
    x = retrograd.tensor([1.0], requires_grad=True)
    with retrograd.no_grad():
        with retrograd.enable_grad():
            assert retrograd.is_grad_enabled()
            assert (x * 2).requires_grad
        assert not retrograd.is_grad_enabled()
        assert not (x * 2).requires_grad


def test_set_grad_enabled_function_and_context():
    x = retrograd.tensor([1.0], requires_grad=True)
    try:
        retrograd.set_grad_enabled(False)
        assert not retrograd.is_grad_enabled()
        assert not (x * 2).requires_grad
        retrograd.set_grad_enabled(True)
        assert retrograd.is_grad_enabled()
    finally:
        retrograd.set_grad_enabled(True)
    with retrograd.set_grad_enabled(False):
        assert not retrograd.is_grad_enabled()
        with retrograd.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not retrograd.is_grad_enabled()
    assert retrograd.is_grad_enabled()


def test_set_grad_enabled_context_restores_previous_mode_not_true():
    with retrograd.no_grad():
        with retrograd.set_grad_enabled(True):
            assert retrograd.is_grad_enabled()
        assert not retrograd.is_grad_enabled()
    assert retrograd.is_grad_enabled()


def test_nesting_many_levels():
    modes = []
    with retrograd.no_grad():
        modes.append(retrograd.is_grad_enabled())
        with retrograd.enable_grad():
            modes.append(retrograd.is_grad_enabled())
            with retrograd.set_grad_enabled(False):
                modes.append(retrograd.is_grad_enabled())
                with retrograd.inference_mode():
                    modes.append((retrograd.is_grad_enabled(),
                                  retrograd.is_inference_mode_enabled()))
                    with retrograd.inference_mode(False):
                        modes.append(retrograd.is_inference_mode_enabled())
                    modes.append(retrograd.is_inference_mode_enabled())
                modes.append(retrograd.is_grad_enabled())
            modes.append(retrograd.is_grad_enabled())
        modes.append(retrograd.is_grad_enabled())
    modes.append(retrograd.is_grad_enabled())
    assert modes == [False, True, False, (False, True), False, True, False, True, False, True]


@needs_torch
def test_nesting_matches_torch():
    def f(lib):
        modes = []
        x = lib.tensor([1.0], requires_grad=True)
        with lib.no_grad():
            with lib.enable_grad():
                with lib.inference_mode():
                    modes.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
                    with lib.inference_mode(False):
                        modes.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
                        y = x * 2
                        modes.append((y.requires_grad, y.is_inference()))
                    with lib.enable_grad():
                        modes.append(lib.is_grad_enabled())
                modes.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
        return modes

    compare(f)


# -- decorators --------------------------------------------------------------------------------


def _decorated(lib, deco_name, with_parens, arg=None):
    deco = getattr(lib, deco_name)
    if with_parens:
        deco = deco() if arg is None else deco(arg)

    @deco
    def fn(x):
        """docstring kept"""
        return (x * 2).requires_grad, lib.is_grad_enabled(), lib.is_inference_mode_enabled()

    return fn


@pytest.mark.parametrize(
    "name,parens,arg,expect",
    [
        ("no_grad", True, None, (False, False, False)),
        ("no_grad", False, None, (False, False, False)),
        ("enable_grad", True, None, (True, True, False)),
        ("enable_grad", False, None, (True, True, False)),
        ("inference_mode", True, None, (False, False, True)),
        ("inference_mode", False, None, (False, False, True)),
        ("inference_mode", True, False, (True, True, False)),
        ("set_grad_enabled", True, False, (False, False, False)),
        ("set_grad_enabled", True, True, (True, True, False)),
    ],
)
def test_decorators(name, parens, arg, expect):
    x = retrograd.tensor([1.0], requires_grad=True)
    fn = _decorated(retrograd, name, parens, arg)
    assert retrograd.is_grad_enabled()  # decorating changes nothing by itself
    assert fn(x) == expect
    assert retrograd.is_grad_enabled() and not retrograd.is_inference_mode_enabled()
    assert fn.__name__ == "fn" and fn.__doc__ == "docstring kept"
    assert fn(x) == expect  # reusable


@pytest.mark.parametrize("name", ["no_grad", "enable_grad", "inference_mode"])
def test_decorators_inside_other_modes(name):
    fn = _decorated(retrograd, name, True)
    x = retrograd.tensor([1.0], requires_grad=True)
    with retrograd.no_grad():
        r = fn(x)
        assert not retrograd.is_grad_enabled()
    if name == "enable_grad":
        assert r[0] is True
    else:
        assert r[0] is False


@needs_torch
@pytest.mark.parametrize(
    "name,parens,arg",
    [("no_grad", True, None), ("no_grad", False, None), ("enable_grad", True, None),
     ("enable_grad", False, None), ("inference_mode", True, None),
     ("inference_mode", False, None), ("inference_mode", True, False),
     ("set_grad_enabled", True, False), ("set_grad_enabled", True, True)],
)
def test_decorators_match_torch(name, parens, arg):
    def f(lib):
        x = lib.tensor([1.0], requires_grad=True)
        fn = _decorated(lib, name, parens, arg)
        before = lib.is_grad_enabled()
        out = fn(x)
        with lib.no_grad():
            inside_no_grad = fn(x)
        return before, out, inside_no_grad, lib.is_grad_enabled(), fn.__name__

    compare(f)


@needs_torch
@pytest.mark.parametrize("name", ["no_grad", "enable_grad", "inference_mode"])
def test_decorated_generator_matches_torch(name):
    # PyTorch runs each step of a decorated generator under the mode, not just its creation.
    def f(lib):
        deco = getattr(lib, name)()

        @deco
        def gen():
            for _ in range(2):
                yield lib.is_grad_enabled(), lib.is_inference_mode_enabled()

        with lib.set_grad_enabled(name != "enable_grad"):
            steps = list(gen())
            after = lib.is_grad_enabled()
        return steps, after

    compare(f)


@needs_torch
def test_set_grad_enabled_call_takes_effect_immediately_like_torch():
    def f(lib):
        try:
            obj = lib.set_grad_enabled(False)
            now = lib.is_grad_enabled()
            with obj:
                inside = lib.is_grad_enabled()
            after = lib.is_grad_enabled()
        finally:
            lib.set_grad_enabled(True)
        return now, inside, after

    compare(f)


# -- thread-locality ---------------------------------------------------------------------------


def _run_in_thread(fn):
    out = {}

    def target():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001
            out["error"] = e

    t = threading.Thread(target=target)
    t.start()
    t.join(10)
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_no_grad_in_one_thread_does_not_affect_another():
    x = retrograd.tensor([1.0], requires_grad=True)
    entered = threading.Event()
    release = threading.Event()
    seen = {}

    def worker():
        with retrograd.no_grad():
            seen["worker_inside"] = retrograd.is_grad_enabled()
            entered.set()
            release.wait(10)
            seen["worker_op"] = (x * 2).requires_grad

    t = threading.Thread(target=worker)
    t.start()
    assert entered.wait(10)
    # The worker is inside no_grad now; this thread still records.
    assert retrograd.is_grad_enabled()
    assert (x * 2).requires_grad
    release.set()
    t.join(10)
    assert seen == {"worker_inside": False, "worker_op": False}


def test_new_thread_starts_with_grad_enabled():
    with retrograd.no_grad():
        assert _run_in_thread(retrograd.is_grad_enabled) is True
    with retrograd.inference_mode():
        assert _run_in_thread(retrograd.is_inference_mode_enabled) is False
    try:
        retrograd.set_grad_enabled(False)
        assert _run_in_thread(retrograd.is_grad_enabled) is True
    finally:
        retrograd.set_grad_enabled(True)


def test_backward_in_thread_while_main_in_no_grad():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)

    def work():
        y = (x * x).sum()
        y.backward()
        return x.grad.numpy().copy()

    with retrograd.no_grad():
        g = _run_in_thread(work)
    np.testing.assert_allclose(g, [2.0, 4.0])


def test_inference_mode_in_one_thread_does_not_affect_another():
    entered = threading.Event()
    release = threading.Event()
    seen = {}

    def worker():
        with retrograd.inference_mode():
            entered.set()
            release.wait(10)
            seen["t"] = retrograd.ones(1).is_inference()

    t = threading.Thread(target=worker)
    t.start()
    assert entered.wait(10)
    assert not retrograd.is_inference_mode_enabled()
    assert not retrograd.ones(1).is_inference()
    release.set()
    t.join(10)
    assert seen == {"t": True}


# -- inference mode ----------------------------------------------------------------------------


def test_is_inference():
    x = retrograd.ones(2)
    assert not x.is_inference()
    with retrograd.inference_mode():
        y = retrograd.ones(2)
        z = x * 2
        assert y.is_inference() and z.is_inference()
        assert not z.requires_grad
        assert retrograd.is_inference_mode_enabled()
    assert y.is_inference()
    assert not (y * 2).is_inference()
    with retrograd.inference_mode(False):
        assert not retrograd.ones(1).is_inference()
    with retrograd.no_grad():
        assert not retrograd.ones(1).is_inference()


@needs_torch
def test_inference_tensors_properties_match_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.inference_mode():
            y = x * 2
            v = y.view(2)
            r = (y.requires_grad, y.is_inference(), y.is_leaf, y.grad_fn is None,
                 v.is_inference())
        w = lib.tensor([1.0, 1.0])
        z = y + w
        d = x.detach()
        return r, z.is_inference(), z.requires_grad, d.is_inference()

    compare(f)


@needs_torch
def test_inference_tensor_cannot_be_saved_for_backward_error_matches_torch():
    def f(lib):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.inference_mode():
            x = lib.ones(2)
        (w * x).sum().backward()

    ours, _ = compare_error(f)
    assert "Inference tensors cannot be saved for backward" in str(ours)


def test_inference_tensor_cannot_be_saved_for_backward():
    w = retrograd.tensor([1.0, 2.0], requires_grad=True)
    with retrograd.inference_mode():
        x = retrograd.ones(2)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        w * x


@needs_torch
def test_inference_tensor_not_saved_is_fine_like_torch():
    def f(lib):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.inference_mode():
            x = lib.ones(2)
        y = w + x  # AddBackward0 saves nothing
        y.sum().backward()
        return y, w.grad

    compare(f)


@needs_torch
def test_inplace_on_inference_tensor_outside_error_matches_torch():
    def f(lib):
        with lib.inference_mode():
            x = lib.ones(2)
        x.add_(1)

    compare_error(f)


@needs_torch
@pytest.mark.parametrize("op", ["mul_", "zero_", "fill_", "setitem", "iadd", "copy_"])
def test_inplace_variants_on_inference_tensor_outside_error_match_torch(op):
    def f(lib):
        with lib.inference_mode():
            x = lib.ones(2)
        if op == "mul_":
            x.mul_(2)
        elif op == "zero_":
            x.zero_()
        elif op == "fill_":
            x.fill_(3)
        elif op == "setitem":
            x[0] = 5
        elif op == "iadd":
            x += 1
        else:
            x.copy_(lib.zeros(2))

    compare_error(f)


@needs_torch
def test_inplace_on_inference_tensor_inside_inference_mode_like_torch():
    def f(lib):
        with lib.inference_mode():
            x = lib.ones(2)
        with lib.inference_mode():
            x.add_(1)
            x[0] = 7
        return x, x.is_inference()

    compare(f)


@needs_torch
def test_requires_grad_on_inference_tensor_error_matches_torch():
    def f(lib):
        with lib.inference_mode():
            x = lib.ones(2)
        x.requires_grad_()

    compare_error(f)


def test_no_grad_allows_inplace_on_leaf():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    with retrograd.no_grad():
        x.mul_(3)
        x[0] = 10.0
    np.testing.assert_allclose(x.detach().numpy(), [10.0, 6.0])
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 12.0])


@needs_torch
def test_leaf_creation_under_no_grad_like_torch():
    def f(lib):
        with lib.no_grad():
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            y = lib.ones(2, requires_grad=True)
            z = x * y
        (x * y).sum().backward()
        return x.requires_grad, x.is_leaf, z.requires_grad, x.grad, y.grad

    compare(f)


@needs_torch
def test_backward_inside_no_grad_like_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x ** 3).sum()
        with lib.no_grad():
            y.backward(create_graph=False)
            g1 = x.grad.clone()
            x.grad = None
        # create_graph inside no_grad: the backward still records (PyTorch enables grad mode).
        z = (x ** 3).sum()
        with lib.no_grad():
            (g,) = lib.autograd.grad(z, x, create_graph=True)
        return g1, g, g.requires_grad

    compare(f)


def test_inference_mode_false_enables_grad():
    # PyTorch's InferenceMode(False) sets grad mode on for its duration, then restores it.
    x = retrograd.tensor([1.0], requires_grad=True)
    with retrograd.no_grad():
        with retrograd.inference_mode(False):
            assert retrograd.is_grad_enabled()
            assert (x * 2).requires_grad
        assert not retrograd.is_grad_enabled()


def test_set_grad_enabled_as_decorator_does_not_change_mode_at_definition():
    @retrograd.set_grad_enabled(False)
    def fn():
        return retrograd.is_grad_enabled()

    assert retrograd.is_grad_enabled()
    assert fn() is False
    assert retrograd.is_grad_enabled()


def test_no_grad_decorated_generator_runs_body_without_grad():
    x = retrograd.tensor([1.0], requires_grad=True)

    @retrograd.no_grad()
    def gen():
        yield (x * 2).requires_grad
        yield (x * 3).requires_grad

    assert list(gen()) == [False, False]
    assert retrograd.is_grad_enabled()
