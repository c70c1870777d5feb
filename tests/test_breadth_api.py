"""The top-level settings, windows, data exchange and Tensor queries of the breadth work
(_settings.py, _windows.py, _tensor_extras.py), against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as rg


@pytest.mark.parametrize("name,kw", [("hann_window", {}), ("hamming_window", {"alpha": 0.6}),
                                     ("blackman_window", {}), ("bartlett_window", {}),
                                     ("kaiser_window", {"beta": 5.0})])
def test_windows_match_torch(torch, name, kw):
    for n in (0, 1, 2, 7, 16):
        for periodic in (True, False):
            for dt in ("float32", "float64"):
                a = getattr(rg, name)(n, periodic, dtype=getattr(rg, dt), **kw)
                b = getattr(torch, name)(n, periodic, dtype=getattr(torch, dt), **kw)
                assert a.dtype.name == dt
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_settings_round_trip(torch):
    for lib in (rg, torch):
        lib.use_deterministic_algorithms(True, warn_only=True)
        assert lib.are_deterministic_algorithms_enabled()
        assert lib.is_deterministic_algorithms_warn_only_enabled()
        assert lib.get_deterministic_debug_mode() == 1
        lib.set_deterministic_debug_mode("default")
        assert not lib.are_deterministic_algorithms_enabled()
        lib.set_float32_matmul_precision("high")
        assert lib.get_float32_matmul_precision() == "high"
        lib.set_float32_matmul_precision("highest")
    assert (rg.pi, rg.e, rg.inf) == (torch.pi, torch.e, torch.inf) and rg.newaxis is None
    assert repr(rg.strided) == repr(torch.strided) == "torch.strided"
    assert repr(rg.channels_last) == repr(torch.channels_last)
    x = rg.zeros(2)
    assert rg.typename(x) == torch.typename(torch.zeros(2))


def test_data_exchange(torch):
    buf = bytearray(np.arange(4, dtype=np.float32).tobytes())
    a = rg.frombuffer(buf, dtype=rg.float32, count=2, offset=4)
    b = torch.frombuffer(bytearray(buf), dtype=torch.float32, count=2, offset=4)
    assert a.tolist() == b.tolist()
    arr = np.arange(3.0)
    t = rg.from_dlpack(arr)
    arr[0] = 7.0
    assert t.tolist() == [7.0, 1.0, 2.0]  # shares memory
    assert rg.from_dlpack(torch.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
    assert torch.from_dlpack(rg.arange(3.0).numpy()).tolist() == [0.0, 1.0, 2.0]
    assert rg.scalar_tensor(2).dtype == rg.float32


def test_tensor_queries_and_legacy_methods(torch):
    x = np.array([[1.0, -2.0], [0.0, 3.0]], dtype=np.float32)
    a, b = rg.tensor(x), torch.tensor(x)
    for name in ("nbytes", "itemsize", "is_cpu", "output_nr"):
        assert getattr(a, name) == getattr(b, name), name
    for name in ("get_device", "dim_order", "is_pinned"):
        assert getattr(a, name)() == getattr(b, name)(), name
    assert a.t().dim_order() == b.t().dim_order()
    np.testing.assert_allclose(a.angle().numpy(), b.angle().numpy())
    assert a.new([1, 2]).tolist() == b.new([1, 2]).tolist() and a.new(2, 3).shape == (2, 3)
    assert a.sum_to_size(1, 2).tolist() == b.sum_to_size(1, 2).tolist()
    assert a.nonzero_static(size=4).tolist() == b.nonzero_static(size=4).tolist()
    for wrap in (False, True):
        m, n = rg.zeros(5, 2), torch.zeros(5, 2)
        assert m.fill_diagonal_(3.0, wrap).tolist() == n.fill_diagonal_(3.0, wrap).tolist()
    idx = [0, 0, 2]
    src = [2.0, 3.0, 4.0]
    for red in ("prod", "mean", "amax", "amin"):
        for inc in (True, False):
            r = rg.ones(3).index_reduce(0, rg.tensor(idx), rg.tensor(src), red, include_self=inc)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # torch: "index_reduce() is in beta"
                t = torch.ones(3).index_reduce(0, torch.tensor(idx), torch.tensor(src), red,
                                               include_self=inc)
            assert r.tolist() == t.tolist(), (red, inc)
    v = rg.tensor([2.5, 3.0], requires_grad=True)
    w = torch.tensor([2.5, 3.0], requires_grad=True)
    rg.mvlgamma(v, 3).sum().backward()
    torch.mvlgamma(w, 3).sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), w.grad.numpy(), rtol=1e-6)
    assert rg.tensor([1.0, 2.0]).apply_(lambda e: e * 3).tolist() == [3.0, 6.0]
    assert rg.tensor([1.0, 2.0]).map_(rg.tensor([1.0, 1.0]), lambda p, q: p - q).tolist() == \
        [0.0, 1.0]
    s = rg.triangular_solve(rg.tensor([[2.0], [2.0]]), rg.tensor([[2.0, 1.0], [0.0, 1.0]]))
    ts = torch.triangular_solve(torch.tensor([[2.0], [2.0]]),
                                torch.tensor([[2.0, 1.0], [0.0, 1.0]]))
    assert s.solution.tolist() == ts.solution.tolist()
