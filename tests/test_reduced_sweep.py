"""Differential checks of reduced precision (float16, bfloat16) against PyTorch: the corners a
sweep of user-level code found different (issue 10). Each test runs the same calls through
retrograd and torch and compares dtypes, bits and errors; skipped without torch."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

import retrograd as rg

REDUCED = ["bfloat16", "float16"]


def bits(t) -> list:
    """A float16/bfloat16 tensor's bit patterns (through a float32 copy: exact)."""
    a = np.asarray(t.float().tolist(), dtype=np.float32)
    return a.astype(rg.bfloat16.np if str(t.dtype).endswith("bfloat16") else np.float16) \
        .view(np.int16).tolist()


@pytest.fixture
def restore_default(torch):
    yield
    rg.set_default_dtype(rg.float32)
    torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("name", REDUCED)
def test_integer_ops_into_reduced_default_dtype(torch, restore_default, name):
    # Integers taking a float16/bfloat16 default dtype: cast to it, computed in float32,
    # rounded once (division too, which NumPy had no loop for).
    rg.set_default_dtype(getattr(rg, name))
    torch.set_default_dtype(getattr(torch, name))
    vals, dens = [1, 2, 257, 1001, 3001], [3, 7, 11, 13, 17]

    def run(lib):
        i = lib.tensor(vals)
        outs = [i / 3, i / lib.tensor(dens), lib.true_divide(i, 7), lib.sigmoid(i), lib.exp(i),
                lib.sqrt(i), lib.tanh(i)]
        return [(str(r.dtype).split(".")[1], bits(r)) for r in outs]

    assert run(rg) == run(torch)


@pytest.mark.parametrize("name", REDUCED)
def test_linspace_reduced_rounds_every_step(torch, name):
    rnd = random.Random(0)
    for _ in range(40):
        s, e, n = rnd.uniform(-100, 100), rnd.uniform(-100, 100), rnd.randint(2, 300)
        mine = rg.linspace(s, e, n, dtype=getattr(rg, name))
        want = torch.linspace(s, e, n, dtype=getattr(torch, name))
        assert bits(mine) == bits(want), (s, e, n)
    assert bits(rg.linspace(-1, 1, 11, dtype=getattr(rg, name))) == \
        bits(torch.linspace(-1, 1, 11, dtype=getattr(torch, name)))


def test_format_of_tensors(torch):
    for lib in (rg, torch):
        got = [f"{lib.tensor(2.5)}", f"{lib.tensor(3)}", f"{lib.tensor(True)}",
               f"{lib.tensor(2.5, requires_grad=True)}", f"{lib.tensor(2.7, dtype=lib.bfloat16)}",
               f"{lib.tensor(2.5):.3f}", f"{lib.tensor([2.5])}".replace(lib.__name__, "T")]
        if lib is rg:
            mine = got
        else:
            assert mine == got
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        format(rg.tensor([2.5]), ">30")


def test_view_dtype(torch):
    cases = [("float32", "int32", [4]), ("float32", "float16", [4]), ("float32", "bfloat16", [3]),
             ("float32", "float64", [4]), ("float32", "uint8", [2]), ("bfloat16", "int16", [3]),
             ("float16", "bfloat16", [2, 2]), ("bool", "uint8", [3]), ("int16", "float16", [5]),
             ("float32", "float64", [3]), ("float32", "int16", []), ("float32", "int32", [])]
    for src, dst, shape in cases:
        res = []
        for lib in (rg, torch):
            x = lib.arange(int(np.prod(shape)) or 1).reshape(shape).to(getattr(lib, src))
            try:
                y = x.view(getattr(lib, dst))
                res.append((tuple(y.shape), str(y.dtype).split(".")[1], y.requires_grad,
                            y.to(lib.float64).tolist()))
            except RuntimeError as e:
                res.append(str(e))
        assert res[0] == res[1], (src, dst, shape)
    # memory and version counter are shared; the result is outside the graph
    w = rg.zeros(3, requires_grad=True)
    v = w.detach().view(rg.int32)
    v[0] = 1
    assert w[0].item() == np.float32(1.401298464324817e-45) and w._version == 1
    assert not w.view(rg.float16).requires_grad and w.view(dtype=rg.int32).dtype is rg.int32
    with pytest.raises(RuntimeError, match="self.stride"):
        rg.zeros(4, 2).t().view(rg.float16)


def test_casts_do_not_warn(torch):
    # PyTorch overflows to inf (and NaN into an integer) without a warning.
    calls = [lambda lib: lib.tensor([1e39], dtype=lib.float64).float(),
             lambda lib: lib.tensor([1e39], dtype=lib.float64).bfloat16(),
             lambda lib: lib.tensor([1e6]).half(),
             lambda lib: lib.tensor([16777217, 257, 2049]).half(),
             lambda lib: lib.tensor([float("nan"), 1e20]).int(),
             lambda lib: lib.tensor([float("nan"), 1e20], dtype=lib.bfloat16).long()]
    for f in calls:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            mine = f(rg)
        want = f(torch)
        assert mine.to(rg.float64).tolist() == want.to(torch.float64).tolist()


@pytest.mark.parametrize("name", REDUCED)
def test_nll_loss_reduced_cascade_sum(torch, name):
    # PyTorch's nll_loss kernel sums float16/bfloat16 terms in the dtype, in a cascade of
    # partial sums (16 per level); weights and ignored targets follow the same path.
    def run(lib, n, shape):
        lib.manual_seed(n)
        x = (lib.randn(n, 10, *shape) * 2).log_softmax(1).to(getattr(lib, name))
        t = lib.randint(0, 10, (n, *shape))
        w = (lib.rand(10) * 2).to(getattr(lib, name))
        f = lib.nn.functional
        out = []
        for red in ("sum", "mean"):
            out += [f.nll_loss(x, t, reduction=red), f.nll_loss(x, t, weight=w, reduction=red),
                    f.nll_loss(x, t, ignore_index=3, reduction=red),
                    f.nll_loss(x, t, weight=w, ignore_index=3, reduction=red),
                    f.cross_entropy(x.float(), t, reduction=red).to(getattr(lib, name))]
        return [bits(r) for r in out]

    for n, shape in ((1, ()), (17, ()), (257, ()), (300, ()), (4, (7,)), (3, (5, 6))):
        assert run(rg, n, shape) == run(torch, n, shape), (n, shape)


@pytest.mark.parametrize("name", REDUCED)
def test_reduced_losses_and_sums_accumulate_in_float32(torch, name):
    def run(lib):
        lib.manual_seed(0)
        x = (lib.randn(6, 37) * 3).to(getattr(lib, name))
        y, f = x.flip(0), lib.nn.functional
        w = lib.randn(37).to(getattr(lib, name))
        return [bits(r) for r in (
            f.mse_loss(x, y), f.mse_loss(x, y, reduction="sum"), f.l1_loss(x, y),
            f.smooth_l1_loss(x, y, reduction="sum"), x.nansum(1), x.nansum(),
            f.rms_norm(x, (37,)), f.rms_norm(x, (37,), w),
            (lib.ones(70000, dtype=getattr(lib, name)) * 3).sum())]

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # float16's overflow to inf is silent, as in PyTorch
        mine = run(rg)
    assert mine == run(torch)
    assert rg.nn.functional.rms_norm(rg.ones(2, 3, dtype=getattr(rg, name), requires_grad=True),
                                     (3,)).grad_fn.name() == "ToCopyBackward0"


@pytest.mark.parametrize("name", REDUCED)
def test_ops_without_reduced_kernels_raise(torch, name):
    def check(lib):
        x = lib.randn(3, 4).to(getattr(lib, name))
        f = lib.nn.functional
        for call, kernel in ((lambda: lib.cdist(x, x), "cdist"), (lambda: lib.pdist(x), "pdist"),
                             (lambda: f.pdist(x), "pdist"),
                             (lambda: f.multi_margin_loss(x, lib.tensor([1, 0, 0])),
                              "multi_margin_loss_cpu_kernel")):
            with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for'):
                call()
        with lib.autocast("cpu", dtype=getattr(lib, name)):  # the float32 list casts first
            assert lib.cdist(x, x).dtype == lib.float32

    check(rg)
    check(torch)
    with pytest.raises(RuntimeError, match="^cdist only supports non-negative p values$"):
        rg.cdist(rg.ones(2, 2), rg.ones(2, 2), p=-1)


def test_autocast_dtypes_of_ops_off_its_lists(torch):
    # einsum, tensordot and inner are on none of autocast's lists: only their bmm/mm is (not a
    # dot product, nor a product with no contraction); bilinear, embedding_bag and matrix_exp
    # are single kernels; RNN cells add their biases inside linear; index_copy promotes;
    # ormqr runs in float32.
    def run(lib):
        lib.manual_seed(0)
        a = lib.randn(3, 4)
        b, v, f = a.bfloat16(), lib.randn(3), lib.nn.functional
        calls = [
            lambda: lib.einsum("ij,kj->ik", a, a), lambda: lib.einsum("ij->", a),
            lambda: lib.einsum("i,j->ij", a[0], a[1]), lambda: lib.einsum("ij,ij->i", a, a),
            lambda: lib.einsum("ab,bc->ac", a[:, :1], a), lambda: lib.einsum("i,j->ij", b[0], a[0]),
            lambda: lib.einsum("ij,kj->ik", b, a), lambda: lib.tensordot(a, a.t(), 1),
            lambda: lib.tensordot(v, v, 1), lambda: lib.tensordot(b, a.t(), 1),
            lambda: lib.inner(a, a), lambda: lib.inner(v, v), lambda: lib.inner(a[:1], v[:4]),
            lambda: lib.linalg.matrix_exp(a[:3, :3]),
            lambda: f.bilinear(a, a, lib.randn(2, 4, 4)),
            lambda: f.embedding_bag(lib.tensor([[0, 1]]), a),
            lambda: lib.nn.RNNCell(4, 3)(a), lambda: lib.nn.GRUCell(4, 3)(a),
            lambda: lib.nn.LSTMCell(4, 3)(a)[0],
            lambda: b.index_copy(0, lib.tensor([0]), a[:1]),
            lambda: lib.ormqr(a, v, a), lambda: lib.copysign(b, a), lambda: lib.nextafter(b, a)]
        out = []
        for dt in (lib.bfloat16, lib.float16):
            with lib.autocast("cpu", dtype=dt):
                for c in calls:
                    try:
                        out.append(str(c().dtype).split(".")[1])
                    except RuntimeError as e:
                        out.append(str(e))
        return out

    assert run(rg) == run(torch)
    with pytest.raises(NotImplementedError, match="\"nextafter_cpu\" not implemented for 'Long'"):
        rg.nextafter(rg.tensor([1]), rg.tensor([2]))


def _caught(f):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = f()
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            r = f"{type(e).__name__}: {e}"
    return r, [(x.category.__name__, str(x.message).replace("torch.", "T.")) for x in w]


def test_grad_scaler_errors_and_deprecated_spellings(torch):
    def run(lib):
        m = lib.nn.Linear(2, 1)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        fresh = lib.amp.GradScaler("cpu")
        mh = lib.nn.Linear(2, 1).half()
        oh = lib.optim.SGD(mh.parameters(), lr=0.1)
        sh = lib.amp.GradScaler("cpu")
        sh.scale(mh(lib.ones(1, 2, dtype=lib.half)).sum()).backward()
        out = [_caught(lambda: fresh.step(opt)), _caught(lambda: fresh.update()),
               _caught(lambda: fresh.unscale_(opt)), _caught(lambda: fresh.scale(3.0)),
               _caught(lambda: sh.unscale_(oh)),
               _caught(lambda: lib.cuda.amp.GradScaler().is_enabled()),
               _caught(lambda: lib.cpu.amp.GradScaler().is_enabled()),
               _caught(lambda: lib.amp.GradScaler("cuda").is_enabled()),
               _caught(lambda: lib.cuda.amp.autocast()._enabled),
               _caught(lambda: lib.autocast("cuda")._enabled),
               _caught(lambda: lib.autocast("cpu", dtype=lib.float32)._enabled),
               _caught(lambda: lib.cuda.amp.custom_fwd(cast_inputs=lib.float32) is not None),
               _caught(lambda: [lib.amp.is_autocast_available(d) for d in ("cpu", "cuda", "meta")]),
               _caught(lambda: lib.cuda.amp.amp_definitely_not_available())]
        with lib.autocast("cpu", dtype=lib.float16, enabled=False):
            out.append((str(lib.get_autocast_dtype("cpu")), lib.is_autocast_enabled("cpu")))
        lib.set_autocast_cache_enabled(False)
        out.append(lib.autocast("cpu")._cache_enabled)
        lib.set_autocast_cache_enabled(True)
        return [str(o).replace(lib.__name__ + ".", "T.") for o in out]

    assert run(rg) == run(torch)


def test_grad_scaler_unscales_bfloat16_grads_in_float32(torch):
    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(8, 1).to(lib.bfloat16)
        o = lib.optim.SGD(m.parameters(), lr=0.1)
        s = lib.amp.GradScaler("cpu", init_scale=3.0)  # 1/3 is no power of two
        s.scale(m(lib.randn(4, 8).to(lib.bfloat16)).sum()).backward()
        s.unscale_(o)
        return bits(m.weight.grad)

    assert run(rg) == run(torch)


@pytest.mark.parametrize("name", REDUCED)
def test_reduced_norms_moments_and_fused_products(torch, name):
    # vector_norm (clip_grad_norm_), var/std, addmm/baddbmm and avg_pool compute in float32
    # (a float16 sum of squares overflowed to inf) and round once.
    def run(lib):
        lib.manual_seed(0)
        dt = getattr(lib, name)
        x = (lib.randn(6, 37) * 3).to(dt)
        w, b = lib.randn(37, 5).to(dt), lib.randn(5).to(dt)
        m = lib.nn.Linear(7, 5).to(dt)
        (m(lib.randn(3, 7).to(dt)) * 100).sum().backward()
        total = lib.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        f = lib.nn.functional
        exact = [bits(r) for r in (
            lib.linalg.vector_norm(lib.full((35,), 300.0, dtype=dt)), x.norm(), x.norm(dim=1),
            total, x.var(1), x.std(), lib.var_mean(x, 1)[1], x.std(0),
            f.avg_pool1d(x[None], 3), f.cosine_similarity(x[:3], x[3:]))]
        products = [np.asarray(r.float().tolist()) for r in (
            m.weight.grad, lib.addmm(b, x, w), lib.addmm(b, x, w, beta=0.5, alpha=2.0),
            lib.baddbmm(b[None, None], x[None], w[None]))]
        return exact, products

    (mine, mp), (want, wp) = run(rg), run(torch)
    assert mine == want
    for a, b in zip(mp, wp):  # float32 sums in BLAS's order: bfloat16 exact, float16 to 1 ulp
        if name == "bfloat16":
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=2 ** -10, atol=1e-6)


def _mixed_calls(lib, x, xd, wd):
    f = lib.nn.functional
    calls = [lambda: f.layer_norm(x, (4,), lib.ones(4, dtype=wd)),
             lambda: f.batch_norm(x, lib.zeros(4, dtype=wd), lib.ones(4, dtype=wd),
                                  training=True),
             lambda: f.group_norm(x, 2, lib.ones(4, dtype=wd)),
             lambda: f.linear(x, lib.ones(2, 4, dtype=wd)),
             lambda: f.linear(x, lib.ones(2, 4, dtype=wd), lib.ones(2, dtype=wd)),
             lambda: f.linear(x, lib.ones(2, 4, dtype=xd), lib.ones(2, dtype=wd)),
             lambda: f.conv1d(x[None], lib.ones(2, 3, 2, dtype=xd), lib.ones(2, dtype=wd))]
    if xd != lib.float32:  # (PyTorch's oneDNN path words a float32 input's otherwise)
        calls.append(lambda: f.conv1d(x[None], lib.ones(2, 3, 2, dtype=wd)))
    out = []
    for c in calls:
        try:
            out.append(str(c().dtype).split(".")[1])
        except RuntimeError as e:
            out.append(str(e))
    return out


def test_mixed_dtype_errors_of_linear_conv_and_norms(torch):
    def run(lib):
        dts = (lib.float16, lib.bfloat16, lib.float32, lib.float64)
        return [_mixed_calls(lib, lib.randn(3, 4, dtype=xd), xd, wd)
                for xd in dts for wd in dts if xd != wd]

    assert run(rg) == run(torch)


def test_autocast_cast_made_under_no_grad_is_not_cached(torch):
    # A weight first cast under no_grad (an evaluation inside the region) must not hand its
    # history-less cast to a later product: that product reaches the parameter, as in PyTorch.
    def run(lib):
        a, w = lib.randn(3, 4), lib.nn.Parameter(lib.randn(4, 2))
        with lib.autocast("cpu"):
            with lib.no_grad():
                y1 = a @ w
            y2 = a @ w
            y3 = a @ w
        y2.float().sum().backward()
        return (y1.requires_grad, y2.requires_grad, y2.grad_fn.name(),
                y2.grad_fn.next_functions[1][0] is y3.grad_fn.next_functions[1][0],
                str(w.grad.dtype).split(".")[1])

    assert run(rg) == run(torch)


@pytest.mark.parametrize("name", REDUCED)
def test_amp_training_loop_matches_torch(torch, name, tmp_path):
    # autocast forward, GradScaler (overflows included with float16), unscale_ + clip, step,
    # a bfloat16 checkpoint reloaded: torch's loss trajectory to the dtype's precision, and no
    # NumPy RuntimeWarning on the overflowing steps.
    def run(lib):
        dt = getattr(lib, name)
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(16, 32), lib.nn.GELU(), lib.nn.LayerNorm(32),
                                  lib.nn.Linear(32, 4))
        opt = lib.optim.AdamW(model.parameters(), lr=1e-2)
        scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 16, growth_interval=3)
        x, y = lib.randn(12, 8, 16), lib.randint(0, 4, (12, 8))
        losses = []
        for step in range(12):
            opt.zero_grad()
            with lib.autocast("cpu", dtype=dt):
                loss = lib.nn.functional.cross_entropy(model(x[step]), y[step])
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
            losses.append(loss.item())
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save({k: v.to(dt) for k, v in model.state_dict().items()}, path)
        model.load_state_dict(lib.load(path))
        return losses, scaler.state_dict(), lib.nn.functional.cross_entropy(model(x[0]),
                                                                            y[0]).item()

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        mine = run(rg)
    want = run(torch)
    np.testing.assert_allclose(mine[0], want[0], rtol=1e-2)
    assert mine[1] == want[1]
    assert mine[2] == pytest.approx(want[2], rel=1e-2)


def test_iinfo_of_a_float_dtype_message(torch):
    for lib in (rg, torch):
        with pytest.raises(TypeError, match="Use torch.finfo to handle 'torch.iinfo'$"):
            lib.iinfo(lib.bfloat16)


@pytest.mark.parametrize("name", REDUCED)
def test_reduced_backward_kernels(torch, name):
    # tanh/sigmoid/silu/softmax backward are single kernels in PyTorch: float32 inside, one
    # rounding (float16's sigmoid_backward: its own arithmetic, step by step).
    def run(lib):
        lib.manual_seed(0)
        dt = getattr(lib, name)
        x0, g = lib.randn(8, 37).to(dt), lib.randn(8, 37).to(dt)
        out = []
        for f in (lib.tanh, lib.sigmoid, lib.nn.functional.silu, lambda t: lib.softmax(t, -1)):
            x = x0.clone().requires_grad_()
            f(x).backward(g)
            out.append(bits(x.grad))
        return out

    assert run(rg) == run(torch)


@pytest.mark.parametrize("name", REDUCED)
def test_reduced_mse_loss_backward(torch, name):
    def run(lib):
        lib.manual_seed(0)
        dt = getattr(lib, name)
        x0, t = lib.randn(16, 37).to(dt), lib.randn(16, 37).to(dt)
        out = []
        for red, g in (("mean", lib.tensor(1.5)), ("sum", lib.tensor(0.3)),
                       ("none", lib.randn(16, 37))):
            x = x0.clone().requires_grad_()
            lib.nn.functional.mse_loss(x, t, reduction=red).backward(g.to(dt))
            out.append(bits(x.grad))
        return out

    assert run(rg) == run(torch)


def test_div_backward_order_of_operations(torch):
    # -g * ((a / b) / b), as PyTorch's div_tensor_other_backward: bit for bit in every dtype
    def run(lib, dt):
        lib.manual_seed(0)
        a = lib.randn(16, 37).to(dt).requires_grad_()
        b = (lib.randn(16, 37).abs() + 0.5).to(dt).requires_grad_()
        (a / b).backward(lib.randn(16, 37).to(dt))
        return bits(b.grad) if dt != lib.float32 else b.grad.tolist()

    for name in ("bfloat16", "float16", "float32"):
        assert run(rg, getattr(rg, name)) == run(torch, getattr(torch, name)), name


@pytest.mark.parametrize("name", REDUCED)
def test_reduced_var_std_backward(torch, name):
    def run(lib):
        lib.manual_seed(0)
        dt = getattr(lib, name)
        x0 = (lib.randn(8, 37) * 2 + 1).to(dt)
        out = []
        for f in (lambda x: x.var(1), lambda x: x.std(0), lambda x: x.var(),
                  lambda x: lib.var_mean(x, 1)[0], lambda x: x.var(1, correction=0)):
            x = x0.clone().requires_grad_()
            y = f(x)
            y.backward(lib.randn(y.shape).to(dt))
            out.append(bits(x.grad))
        return out

    assert run(rg) == run(torch)


@pytest.fixture
def one_thread(torch):
    # PyTorch's norm kernels split their rounded accumulations over threads; retrograd follows
    # the single-threaded order (its get_num_threads() is 1).
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _ulps(a, b) -> int:
    """Largest distance in units in the last place between two float16/bfloat16 bit lists."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    a, b = np.where(a < 0, -(a & 0x7FFF), a), np.where(b < 0, -(b & 0x7FFF), b)
    return int(np.abs(a - b).max()) if a.size else 0


@pytest.mark.parametrize("name", REDUCED)
def test_reduced_norm_kernels_round_as_torch(torch, one_thread, name):
    # Layer/group/batch norm of a float16/bfloat16 input: the statistics stored in the
    # parameters' dtype (rounded unless the weights are float32), layer norm's weight and bias
    # gradients accumulated row by row in the input's dtype, batch norm's fused x*alpha+beta,
    # reduced-dtype variance and running statistics (bfloat16). Reduced results to the bit up to
    # a rare 1-ulp float32 tie, float32 gradients to float32 rounding.
    def run(lib, fn, pname, train):
        lib.manual_seed(0)
        dt, pdt = getattr(lib, name), getattr(lib, pname)
        x = (lib.randn(8, 6, 37) * 2 + 0.5).to(dt).requires_grad_()
        shape = {"ln": (37,), "ln2": (6, 37)}.get(fn, (6,))
        w = (lib.randn(shape) * 0.5 + 1).to(pdt).requires_grad_()
        b = lib.randn(shape).to(pdt).requires_grad_()
        rm, rv = lib.randn(6).to(pdt), (lib.rand(6) + 0.5).to(pdt)
        f = lib.nn.functional
        y = {"ln": lambda: f.layer_norm(x, (37,), w, b),
             "ln2": lambda: f.layer_norm(x, (6, 37), w, b),
             "gn": lambda: f.group_norm(x, 3, w, b),
             "bn": lambda: f.batch_norm(x, rm, rv, w, b, training=train)}[fn]()
        y.backward(lib.randn(8, 6, 37).to(dt))
        return [bits(t) if t.dtype == dt else np.asarray(t.tolist()).ravel()
                for t in (y, x.grad, w.grad, b.grad, rm, rv)]

    for fn in ("ln", "ln2", "gn", "bn"):
        for pname in (name, "float32"):
            for train in (True, False) if fn == "bn" else (True,):
                mine, want = run(rg, fn, pname, train), run(torch, fn, pname, train)
                for i, (a, b) in enumerate(zip(mine, want)):
                    where = (fn, pname, train, i)
                    if isinstance(a, list):
                        assert _ulps(a, b) <= 1, where
                        assert np.mean(np.asarray(a) != np.asarray(b)) < 0.01, where
                    else:
                        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=str(where))
    # without weights, the statistics are kept in the input's dtype
    def plain(lib):
        lib.manual_seed(1)
        x = lib.randn(4, 6, 9).to(getattr(lib, name)).requires_grad_()
        outs = []
        for f in (lambda t: lib.nn.functional.layer_norm(t, (9,)),
                  lambda t: lib.nn.functional.group_norm(t, 2),
                  lambda t: lib.nn.functional.batch_norm(t, None, None, training=True)):
            x.grad = None
            f(x).backward(lib.randn(4, 6, 9).to(x.dtype))
            outs.append(bits(x.grad))
        return outs

    for a, b in zip(plain(rg), plain(torch)):
        assert _ulps(a, b) <= 1 and np.mean(np.asarray(a) != np.asarray(b)) < 0.01


def test_autocast_joins_products_and_affine_grid(torch):
    # cat/stack are on autocast's promote list (float16 with bfloat16 raises there, as does a
    # float16 under bfloat16 autocast); stack of float16 and bfloat16 promotes outside it; addr
    # promotes mixed operands; affine_grid is a bmm (the autocast dtype); a 3-operand einsum
    # contracts left to right, rounding each product.
    def run(lib):
        lib.manual_seed(0)
        a, b, c = lib.randn(3, 4), lib.randn(4, 5), lib.randn(5, 2)
        theta = lib.randn(2, 2, 3)
        f = lib.nn.functional
        calls = [lambda: lib.cat([a.half(), a.bfloat16()]),
                 lambda: lib.stack([a.half(), a.half()]),
                 lambda: lib.cat([a, a.half(), a.bfloat16()]),
                 lambda: lib.cat([a.bfloat16(), a.int()]),
                 lambda: lib.hstack([a.half(), a.bfloat16()]),
                 lambda: lib.addr(a.bfloat16(), a[:, 0], a[0]),
                 lambda: lib.addr(a.half(), a[:, 0].bfloat16(), a[0]),
                 lambda: lib.addr(a, lib.arange(3), a[0]),
                 lambda: f.affine_grid(theta, (2, 3, 4, 5), align_corners=False),
                 lambda: f.affine_grid(theta.bfloat16(), (2, 3, 4, 5), align_corners=True),
                 lambda: lib.einsum("ij,jk,kl->il", a, b, c),
                 lambda: lib.einsum("ij,jk,kl->il", a.half(), b.half(), c.half())]
        out = [str(lib.stack([a.half(), a.bfloat16()]).dtype).split(".")[1]]
        for dt in (lib.bfloat16, lib.float16):
            with lib.autocast("cpu", dtype=dt):
                for call in calls:
                    try:
                        r = call()
                        out.append((str(r.dtype).split(".")[1],
                                    bits(r) if r.dtype != lib.float32 else r.tolist()))
                    except RuntimeError as e:
                        out.append(str(e))
        th = theta.clone().requires_grad_()
        with lib.autocast("cpu"):
            f.affine_grid(th, (2, 3, 4, 5), align_corners=False).float().sum().backward()
        return out, th.grad.tolist()

    assert run(rg) == run(torch)


@pytest.mark.parametrize("name", REDUCED)
def test_recurrent_layers_round_as_torch_cells(torch, one_thread, name):
    # RNN/GRU/LSTM in float16/bfloat16 and RNN/GRU under autocast: PyTorch's cells step by
    # step (linear of the hidden state plus the input projection, each rounded), the weight's
    # autocast cast shared by the steps, and batch_first's transposed input projected with the
    # bias added after the product (linear of a non-contiguous input).
    def run(lib, cls, batch_first, autocast):
        lib.manual_seed(1)
        dt = getattr(lib, name)
        m = getattr(lib.nn, cls)(4, 3, num_layers=2, batch_first=batch_first,
                                 bidirectional=True)
        x = lib.randn(5, 2, 4)
        if autocast:
            with lib.autocast("cpu", dtype=dt):
                out = m(x)
        else:
            m, x = m.to(dt), x.to(dt)
            out = m(x)
        out[0].float().sum().backward()
        return [np.asarray(t.float().tolist()) for t in
                (out[0], m.weight_hh_l0.grad, m.weight_ih_l1_reverse.grad, m.bias_hh_l0.grad)]

    for cls, autocast, batch_first in (("RNN", False, False), ("GRU", False, True),
                                       ("LSTM", False, True), ("RNN", True, True),
                                       ("GRU", True, False)):
        mine, want = run(rg, cls, batch_first, autocast), run(torch, cls, batch_first, autocast)
        for a, b in zip(mine, want):
            np.testing.assert_array_equal(a, b, err_msg=str((cls, autocast, batch_first)))


def test_linear_of_a_non_contiguous_input_adds_the_bias_after(torch):
    def run(lib):
        lib.manual_seed(0)
        x = lib.randn(5, 2, 8).bfloat16().transpose(0, 1)
        w, b = lib.randn(3, 8).bfloat16(), lib.randn(3).bfloat16()
        y = lib.nn.functional.linear(x.requires_grad_(), w, b)
        return bits(y), y.grad_fn.name()

    assert run(rg) == run(torch)


@pytest.mark.parametrize("name", REDUCED)
def test_reduced_conv_attention_log_softmax_and_bias_sums(torch, one_thread, name):
    # conv (PyTorch's im2col kernel for 16-bit floats): forward with the bias inside one
    # rounding; input gradient's columns rounded then summed per kernel offset, weight gradient
    # rounded per sample. Flash attention rounds exp(s - max) for the product with v.
    # log_softmax over the last dim keeps its row sums and their logs in the dtype; softmax over
    # another dim rounds exp(x - max) in its scalar tail (inner positions past the last full
    # vector of 16). Broadcast
    # and bias-row gradient sums are float32 sums rounded once.
    def run(lib):
        lib.manual_seed(0)
        dt = getattr(lib, name)
        f = lib.nn.functional
        x = lib.randn(3, 4, 7, 7).to(dt).requires_grad_()
        w = lib.randn(6, 2, 3, 3).to(dt).requires_grad_()
        b = lib.randn(6).to(dt).requires_grad_()
        y = f.conv2d(x, w, b, stride=(1, 2), padding=1, groups=2)
        y.backward(lib.randn(y.shape).to(dt))
        x1 = lib.randn(2, 3, 9).to(dt).requires_grad_()
        w1 = lib.randn(4, 3, 2).to(dt).requires_grad_()
        y1 = f.conv1d(x1, w1)
        y1.backward(lib.randn(y1.shape).to(dt))
        q, k, v = (lib.randn(2, 2, 5, 8).to(dt).requires_grad_() for _ in range(3))
        att = f.scaled_dot_product_attention(q, k, v, is_causal=True)
        z = lib.randn(6, 37).to(dt).requires_grad_()
        ls = lib.log_softmax(z * 3, -1)
        sm = lib.softmax(lib.randn(5, 4, 21).to(dt) * 3, 1)  # 21 inner positions: a tail of 5
        ce = f.cross_entropy(z, lib.randint(0, 37, (6,)))
        ce.backward()
        s = lib.randn(5, 4, 12).to(dt).requires_grad_()
        c = lib.randn(12).to(dt).requires_grad_()
        lin = lib.nn.Linear(12, 3).to(dt)
        (lin(s + c).float() ** 2).sum().backward()
        return [bits(t) for t in (y, x.grad, w.grad, b.grad, y1, x1.grad, w1.grad, att, ls,
                                  sm, z.grad, c.grad, lin.bias.grad, lin.weight.grad)]

    assert run(rg) == run(torch)
