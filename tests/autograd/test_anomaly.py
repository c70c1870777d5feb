"""Anomaly mode against torch: the switches, the warnings, the forward traceback each node keeps,
errors in backward pointing at their forward line, and NaN checks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

from ..oracle import compare, compare_error


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def test_switches_match_torch(torch):
    def run(lib):
        states = [(lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())]
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
            with _quiet(lambda: lib.autograd.detect_anomaly()):
                states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
            states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        lib.autograd.set_detect_anomaly(True)  # as a function: on until turned off
        states.append(lib.is_anomaly_enabled())
        lib.set_anomaly_enabled(False)
        states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        return states

    compare(run)
    # detect_anomaly is a context manager only in torch 2.13 (not a decorator)
    compare_error(lambda lib: _quiet(lambda: lib.autograd.detect_anomaly())(lambda: 1))


def test_enabling_warns(torch):
    for lib in (torch, retrograd):
        with pytest.warns(UserWarning) as rec:
            lib.autograd.detect_anomaly()
        assert str(rec[0].message) == (
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.")
        assert rec[0].filename == __file__


def _forward_and_trace(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    with _quiet(lib.autograd.detect_anomaly):
        y = a.exp() * 2  # the line the traceback must end at
    return y.grad_fn.metadata["traceback_"]


def test_nodes_keep_their_forward_traceback(torch):
    ours, ref = _forward_and_trace(retrograd), _forward_and_trace(torch)
    assert ours[-2:] == ref[-2:]
    assert "y = a.exp() * 2" in ours[-1]
    # off: nothing is recorded
    a = retrograd.tensor([1.0], requires_grad=True)
    assert "traceback_" not in (a * 2).grad_fn.metadata


def _failing_backward(lib):
    class Bad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    x = lib.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            z = Bad.apply(x * 2).sum()  # the forward line of the failing node
            with pytest.raises(ValueError, match="boom"):
                z.backward()
    msgs = [str(w.message) for w in rec if "Error detected" in str(w.message)]
    assert len(msgs) == 1
    return msgs[0]


def test_error_in_backward_names_its_forward_line(torch):
    ours, ref = _failing_backward(retrograd), _failing_backward(torch)
    head = "Error detected in BadBackward. Traceback of forward call that caused the error:\n"
    assert ours.startswith(head) and ref.startswith(head)
    line = "    z = Bad.apply(x * 2).sum()  # the forward line of the failing node\n"
    # torch's stack also shows its own Python frame (Function.apply); retrograd's ends at yours
    assert ours[len(head):].split(line)[0] == ref[len(head):].split(line)[0]
    assert ours.endswith(line)


def _nan(lib, fn, check_nan=True):
    a = lib.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with lib.autograd.detect_anomaly(check_nan=check_nan):
            fn(a).sum().backward()
    return a.grad


@pytest.mark.parametrize("fn", [lambda a: a.sqrt() * 0, lambda a: a / a,
                                lambda a: (a * 0).log().exp()])
def test_nan_in_backward_raises(torch, fn):
    ours, ref = compare_error(lambda lib: _nan(lib, fn))
    assert "returned nan values in its" in str(ref)
    # without check_nan the NaN goes through, as without anomaly mode
    compare(lambda lib: _nan(lib, fn, check_nan=False), atol=0, rtol=0)


def test_parent_of_double_backward_nodes(torch):
    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        with _quiet(lib.autograd.detect_anomaly):
            (g,) = lib.autograd.grad((a * a).sum(), a, create_graph=True)
        meta = g.grad_fn.metadata
        return g.grad_fn.name(), sorted(meta), meta["parent_"].name()

    compare(run)


def test_no_nan_check_outside_anomaly_mode():
    a = retrograd.tensor([0.0, 1.0], requires_grad=True)
    (a.sqrt() * 0).sum().backward()
    assert np.isnan(a.grad.numpy()[0])
