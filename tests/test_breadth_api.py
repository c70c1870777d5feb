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


def _pair(torch, fn, *arrays):
    res = []
    for lib in (rg, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *ts)
        outs = out if isinstance(out, tuple) else (out,)
        sum(o.sum() for o in outs).backward()
        res.append(([o.detach().numpy() for o in outs], [t.grad.numpy() for t in ts]))
    for a, b in zip(res[0][0] + res[0][1], res[1][0] + res[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_more_functions_values_and_gradients(torch):
    rng = np.random.default_rng(3)
    y = rng.standard_normal((5, 4))
    _pair(torch, lambda lib, t: lib.gradient(t), y)
    _pair(torch, lambda lib, t: lib.gradient(t, spacing=0.5, dim=1, edge_order=2), y)
    _pair(torch, lambda lib, t: lib.gradient(t, spacing=(lib.tensor([0., 1., 3., 4., 7.]),),
                                             dim=0), y)
    _pair(torch, lambda lib, t: lib.pdist(t), y)
    _pair(torch, lambda lib, t: lib.pdist(t, 1.5), y)
    _pair(torch, lambda lib, t: lib.as_strided(t, (3, 2), (1, 4), 2), y)
    # as_strided_scatter: PyTorch's gradient for the input is 1 at the scattered elements and
    # 0 elsewhere (the reverse of the derivative), so the input's gradient is checked by
    # finite differences and only the source's against torch.
    src = rng.standard_normal((2, 2))
    _pair(torch, lambda lib, t, s: lib.as_strided_scatter(t.detach(), s, (2, 2), (4, 1), 1) +
          t * 0, y, src)
    assert rg.autograd.gradcheck(lambda t, s: rg.as_strided_scatter(t, s, (2, 2), (4, 1), 1),
                                 (rg.tensor(y, requires_grad=True),
                                  rg.tensor(src, requires_grad=True)))
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    w_ih, w_hh, b = rng.standard_normal((16, 3)), rng.standard_normal((16, 4)), \
        rng.standard_normal(16)
    _pair(torch, lambda lib, *t: lib.lstm_cell(t[0], (t[1], t[1] * 2), *t[2:]), x, h, w_ih, w_hh,
          b, b)
    _pair(torch, lambda lib, *t: lib.gru_cell(*t), x, h, w_ih[:12], w_hh[:12], b[:12], b[:12])
    _pair(torch, lambda lib, *t: lib.rnn_tanh_cell(*t), x, h, w_ih[:4], w_hh[:4], b[:4], b[:4])
    _pair(torch, lambda lib, *t: lib.rnn_relu_cell(*t), x, h, w_ih[:4], w_hh[:4])
    inp, wt = rng.standard_normal((1, 2, 6)), rng.standard_normal((3, 2, 3))
    _pair(torch, lambda lib, a, w: lib.convolution(a, w, None, [1], [1], [1], False, [0], 1),
          inp, wt)
    _pair(torch, lambda lib, a, w: lib.convolution(a, w.transpose(0, 1), None, [2], [0], [1],
                                                   True, [1], 1), inp, wt)


def test_more_functions_misc(torch):
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        a = rg.range(0, 1, 0.25)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = torch.range(0, 1, 0.25)
    assert a.tolist() == b.tolist() and a.dtype.name == "float32"
    for dt in ("int8", "uint8", "int32", "int64"):
        mine, theirs = rg.iinfo(getattr(rg, dt)), torch.iinfo(getattr(torch, dt))
        assert (mine.bits, mine.min, mine.max) == (theirs.bits, theirs.min, theirs.max)
    assert repr(rg.iinfo(rg.int16)) == repr(torch.iinfo(torch.int16))
    x = rg.tensor([1.0, 2.0])
    assert rg.asarray(x) is x and rg.asarray([1, 2]).dtype == rg.int64
    assert rg.empty_permuted((2, 3, 4), (0, 2, 1)).stride() == \
        torch.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
    assert rg.fill(x, 3.0).tolist() == [3.0, 3.0] and x.tolist() == [1.0, 2.0]
    assert not rg.is_complex(x) and not rg.is_inference(x) and rg.get_device(x) == -1
    A = np.random.default_rng(0).standard_normal((6, 4))
    S = rg.svd_lowrank(rg.tensor(A), q=3)[1]
    np.testing.assert_allclose(S.numpy(), np.linalg.svd(A, compute_uv=False)[:3], rtol=1e-10)
    U, S, V = rg.pca_lowrank(rg.tensor(A), q=4)
    C = A - A.mean(0)
    np.testing.assert_allclose((U.numpy() * S.numpy()) @ V.numpy().T, C, atol=1e-10)
    with pytest.raises(TypeError, match="bool is not supported by torch.iinfo"):
        rg.iinfo(rg.bool)


def test_legacy_typed_tensors_match_torch(torch):
    for name in ("FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor",
                 "BoolTensor", "HalfTensor", "CharTensor", "ShortTensor"):
        mine, theirs = getattr(rg, name), getattr(torch, name)
        a, b = mine([1, 0, 2]), theirs([1, 0, 2])
        assert a.tolist() == b.tolist() and a.dtype.name == str(b.dtype)[6:], name
        assert isinstance(a, mine) and not isinstance(a.double() if name != "DoubleTensor"
                                                      else a.float(), mine)
        assert mine(2, 3).shape == theirs(2, 3).shape and mine().shape == theirs().shape
        assert a.type() == b.type() == f"torch.{name}"
        assert repr(mine) == repr(theirs)
    x, y = rg.zeros(2), torch.zeros(2)
    assert x.type(rg.LongTensor).dtype.name == str(y.type(torch.LongTensor).dtype)[6:]
    assert x.type("torch.IntTensor").dtype == rg.int32
    with pytest.raises(TypeError, match="data must be a sequence"):
        rg.FloatTensor(2.5)
    with pytest.warns(UserWarning, match="set_default_tensor_type"):
        rg.set_default_tensor_type(rg.DoubleTensor)
    try:
        assert rg.get_default_dtype() == rg.float64
    finally:
        rg.set_default_dtype(rg.float32)
    with pytest.raises(TypeError, match="only floating-point types"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rg.set_default_tensor_type(rg.LongTensor)
    assert str(rg.get_default_device()) == str(torch.get_default_device()) == "cpu"
    rg.set_default_device("cpu")
    with pytest.raises(RuntimeError, match="CPU only"):
        rg.set_default_device("cuda")


@pytest.mark.parametrize("name,gates,n_states", [("lstm", 4, 2), ("gru", 3, 1),
                                                 ("rnn_tanh", 1, 1), ("rnn_relu", 1, 1)])
def test_aten_rnn_functions_match_torch(torch, name, gates, n_states):
    rng = np.random.default_rng(5)
    hidden, inp, layers, dirs = 3, 2, 2, 2
    params = []
    for layer in range(layers):
        for _ in range(dirs):
            width = inp if layer == 0 else hidden * dirs
            params += [rng.standard_normal((gates * hidden, width)) * 0.5,
                       rng.standard_normal((gates * hidden, hidden)) * 0.5,
                       rng.standard_normal(gates * hidden) * 0.1,
                       rng.standard_normal(gates * hidden) * 0.1]
    x = rng.standard_normal((4, 5, inp))
    h = [rng.standard_normal((layers * dirs, 4, hidden)) for _ in range(n_states)]
    res = []
    for lib in (rg, torch):
        ps = [lib.tensor(p, requires_grad=True) for p in params]
        xs = lib.tensor(x, requires_grad=True)
        hs = [lib.tensor(a) for a in h]
        out = getattr(lib, name)(xs, hs if n_states == 2 else hs[0], ps, True, layers, 0.0,
                                 False, True, True)
        sum(o.sum() for o in out).backward()
        res.append([o.detach().numpy() for o in out] + [xs.grad.numpy(), ps[0].grad.numpy()])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


def test_deprecated_autocast_aliases_and_device_module(torch):
    for lib in (rg, torch):
        with pytest.warns(DeprecationWarning, match="is deprecated"):
            assert lib.is_autocast_cpu_enabled() is False
        with pytest.warns(DeprecationWarning):
            assert lib.get_autocast_cpu_dtype() == lib.bfloat16
        with pytest.warns(DeprecationWarning):
            lib.set_autocast_cpu_dtype(lib.bfloat16)
        with pytest.warns(DeprecationWarning):
            lib.set_autocast_cpu_enabled(False)
        assert lib.get_device_module("cpu") is lib.cpu and lib.get_device_module() is lib.cpu
    with pytest.raises(RuntimeError, match="does not have a corresponding module"):
        rg.get_device_module("xla")
    assert not rg.is_distributed(rg.zeros(1))
    assert issubclass(rg.OutOfMemoryError, RuntimeError)


def test_as_strided_inplace_matches_torch(torch):
    def run(lib):
        x = lib.arange(6.0)
        y = x.as_strided_((2, 2), (1, 2), 1)
        shared = lib.arange(6.0)
        z = lib.as_strided_(shared, (3,), (2,))
        z[0] = 100.0  # the tensor keeps its memory: the write is in place
        w = lib.arange(6.0, dtype=lib.float64, requires_grad=True)
        u = w * 1
        u.as_strided_((2, 2), (1, 2), 1)
        names = (u.grad_fn.name(), u.grad_fn.next_functions[0][0].name())
        (g,) = lib.autograd.grad((u * u).sum(), w, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), w)
        return (y is x, x.tolist(), x.stride(), shared.tolist(), z._version, names,
                g.tolist(), h.tolist())

    assert run(rg) == run(torch)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation"):
        rg.arange(6.0, requires_grad=True).as_strided_((2,), (1,))
    with pytest.raises(RuntimeError, match=r"setStorage: sizes \[4\], strides \[2\]"):
        rg.arange(6.0).as_strided_((4,), (2,))
    w = rg.arange(6.0, dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradgradcheck(lambda t: (t * 1).as_strided_((3, 2), (1, 2)), [w])


def test_lobpcg_matches_torch(torch):
    rng = np.random.default_rng(0)
    m, n = rng.standard_normal((2, 9, 9))
    a = m @ m.T + np.eye(9)
    b = n @ n.T + 9 * np.eye(9)
    x0 = rng.standard_normal((9, 3))
    for kw in ({}, {"k": 2}, {"k": 3, "largest": False}, {"k": 2, "B": b}, {"X": x0},
               {"k": 2, "X": x0, "method": "basic"}):
        te, tx = torch.lobpcg(torch.tensor(a), **{k: torch.tensor(v) if isinstance(v, np.ndarray)
                                                  else v for k, v in kw.items()})
        re, rx = rg.lobpcg(rg.tensor(a), **{k: rg.tensor(v) if isinstance(v, np.ndarray) else v
                                            for k, v in kw.items()})
        np.testing.assert_allclose(re.numpy(), te.numpy(), rtol=1e-6)
        # eigenvectors up to sign (PyTorch's start from a random guess)
        np.testing.assert_allclose(np.abs(rx.numpy()), np.abs(tx.numpy()), rtol=1e-4, atol=1e-6)
    ta, ra = torch.tensor(a, requires_grad=True), rg.tensor(a, requires_grad=True)
    te, _ = torch.lobpcg(ta, k=2)
    re, rx = rg.lobpcg(ra, k=2)
    assert re.grad_fn.name() == te.grad_fn.name() and rx.grad_fn is re.grad_fn
    te.sum().backward()
    re.sum().backward()
    np.testing.assert_allclose(ra.grad.numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-8)
    with pytest.raises(ValueError, match=r"number of A rows \(=9\) is smaller than 3 x the number "
                                         r"of requested eigenpairs \(=4\)"):
        rg.lobpcg(rg.tensor(a), k=4)
    small = rg.tensor(a[:6, :6], requires_grad=True)
    assert rg.autograd.gradgradcheck(lambda t: rg.lobpcg(t, k=2)[0], [small])
