"""Mixed precision (``retrograd.amp``): autocast on the CPU, GradScaler, and a PyTorch mixed-
precision training loop run unchanged under retrograd and torch (the oracle)."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import retrograd as rg


def _model(lib, seed=0):
    """A small MLP (and a LayerNorm) with the same float32 weights under either library."""
    rs = np.random.default_rng(seed)
    m = lib.nn.Sequential(lib.nn.Linear(12, 32), lib.nn.GELU(), lib.nn.LayerNorm(32),
                          lib.nn.Linear(32, 5))
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(rs.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    return m


def _data(lib, seed=1):
    rs = np.random.default_rng(seed)
    return (lib.tensor(rs.standard_normal((16, 12)).astype(np.float32)),
            lib.tensor(rs.integers(0, 5, 16)))


def _dtypes_of_forward(lib):
    """The dtype of every op of a model's forward under autocast, and outside it."""
    F = lib.nn.functional
    m = _model(lib)
    x, y = _data(lib)
    out = []
    with lib.autocast(device_type="cpu", dtype=lib.bfloat16):
        h = m[0](x)
        out += [h.dtype]
        h = m[1](h)
        out += [h.dtype]
        h = m[2](h)
        out += [h.dtype]
        logits = m[3](h)
        out += [logits.dtype, (logits + x[:, :5]).dtype, logits.softmax(-1).dtype,
                logits.sum().dtype, lib.cat([logits, x[:, :5]]).dtype]
        out += [F.cross_entropy(logits, y).dtype, F.mse_loss(logits, x[:, :5]).dtype,
                logits.prod().dtype, (x @ x.t()).dtype, lib.dot(x[0], x[1]).dtype,
                lib.mv(x, x[0]).dtype, lib.outer(x[0], x[1]).dtype,
                F.conv1d(x.t()[None], x[:3, :, None]).dtype, lib.bmm(x[None], x.t()[None]).dtype,
                lib.addmm(x[:5, :5], x.t()[:5], x[:, :5]).dtype,
                x.double().matmul(x.double().t()).dtype]
        with lib.autocast("cpu", enabled=False):
            out += [(x @ x.t()).dtype, lib.is_autocast_enabled("cpu")]
        out += [lib.is_autocast_enabled("cpu"), lib.is_autocast_enabled(),
                lib.get_autocast_dtype("cpu")]
    out += [lib.is_autocast_enabled("cpu"), (x @ x.t()).dtype]
    return [str(o).split(".")[-1] for o in out]


def test_autocast_output_dtypes_match_torch(torch):
    assert _dtypes_of_forward(rg) == _dtypes_of_forward(torch)


def test_autocast_values_and_gradients(torch):
    res = {}
    for lib in (rg, torch):
        m = _model(lib)
        x, y = _data(lib)
        with lib.autocast("cpu"):
            loss = lib.nn.functional.cross_entropy(m(x), y)
        loss.backward()
        w = m[0].weight
        assert w.dtype == lib.float32 and w.grad.dtype == lib.float32
        res[lib] = (loss.item(), w.grad.numpy().copy())
    assert res[rg][0] == pytest.approx(res[torch][0], rel=2e-2)
    np.testing.assert_allclose(res[rg][1], res[torch][1], rtol=0.05, atol=0.02)


def test_autocast_forms_and_errors(torch):
    @rg.autocast("cpu")
    def f(a):
        return a @ a, rg.is_autocast_enabled("cpu")

    r, on = f(rg.ones(2, 2))
    assert r.dtype is rg.bfloat16 and on and not rg.is_autocast_enabled("cpu")
    with rg.amp.autocast("cpu", dtype=rg.float16):
        assert (rg.ones(2, 2) @ rg.ones(2, 2)).dtype is rg.float16
        with rg.autocast("cpu", dtype=rg.bfloat16):
            assert rg.get_autocast_dtype("cpu") is rg.bfloat16
        assert rg.get_autocast_dtype("cpu") is rg.float16
    for d in ("cpu", "cuda", "meta"):  # PyTorch's CPU build knows CUDA's autocast, not meta's
        assert rg.amp.is_autocast_available(d) == torch.amp.is_autocast_available(d)
    with pytest.warns(FutureWarning, match="torch.cpu.amp.autocast"):
        ctx = rg.cpu.amp.autocast()
    with ctx:
        assert (rg.ones(2, 2) @ rg.ones(2, 2)).dtype is rg.bfloat16
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        ctx = rg.autocast("cpu", dtype=rg.float32)
    with ctx:
        assert not rg.is_autocast_enabled("cpu")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        rg.autocast("foo")


def test_autocast_caches_parameter_casts():
    w = rg.nn.Parameter(rg.ones(3, 3))
    with rg.autocast("cpu"):
        a, b = rg.ones(2, 3) @ w, rg.ones(2, 3) @ w
        # One cast node feeds both products (PyTorch's cast cache).
        assert a.grad_fn.next_functions[1][0] is b.grad_fn.next_functions[1][0]
    with rg.autocast("cpu", cache_enabled=False):
        a, b = rg.ones(2, 3) @ w, rg.ones(2, 3) @ w
        assert a.grad_fn.next_functions[1][0] is not b.grad_fn.next_functions[1][0]


def _scaler_run(lib, overflow_at=(2, 3)):
    """A loop whose gradients overflow at some steps: the scale, the growth tracker and the
    weights step by step."""
    w = lib.nn.Parameter(lib.tensor([1.0, -2.0, 0.5]))
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=1024.0, growth_factor=2.0,
                                backoff_factor=0.25, growth_interval=2)
    trace = []
    for i in range(7):
        loss = (w * w).sum()
        if i in overflow_at:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        r = scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        trace.append((scaler.get_scale(), scaler._get_growth_tracker(), r, w.tolist()))
    sd = scaler.state_dict()
    return trace, sd


def test_grad_scaler_matches_torch(torch):
    ours, theirs = _scaler_run(rg), _scaler_run(torch)
    assert ours[1] == theirs[1]
    for a, b in zip(ours[0], theirs[0]):
        assert a[:3] == b[:3]
        np.testing.assert_allclose(a[3], b[3], rtol=1e-6)
    s = rg.amp.GradScaler("cpu")
    assert s.get_scale() == 65536.0 and s.state_dict()["scale"] == 65536.0
    s.load_state_dict(ours[1])
    assert s.state_dict() == theirs[1]
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        s.load_state_dict({})
    assert rg.amp.GradScaler("cpu", enabled=False).state_dict() == {}


def test_grad_scaler_unscale_twice_is_an_error():
    w = rg.nn.Parameter(rg.ones(2))
    opt = rg.optim.SGD([w], lr=0.1)
    s = rg.amp.GradScaler("cpu")
    s.scale(w.sum()).backward()
    s.unscale_(opt)
    assert w.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        s.unscale_(opt)


def _train(torch, steps=6):
    """A PyTorch mixed-precision training loop, as written for torch: autocast forward,
    GradScaler backward and step, a bfloat16 checkpoint saved and reloaded halfway."""
    model = _model(torch)
    x, y = _data(torch)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=2)
    losses = []
    for step in range(steps):
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        losses.append(loss.item())
        if step == steps // 2:
            buf = io.BytesIO()
            torch.save({k: v.to(torch.bfloat16) for k, v in model.state_dict().items()}, buf)
            buf.seek(0)
            state = torch.load(buf)
            assert all(v.dtype == torch.bfloat16 for v in state.values())
            model.load_state_dict(state)  # back into the float32 parameters
    return losses, scaler.get_scale()


def test_mixed_precision_training_loop_matches_torch(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _train(rg), _train(torch)
    assert ours[1] == theirs[1]
    np.testing.assert_allclose(ours[0], theirs[0], rtol=2e-2)
    assert ours[0][-1] < ours[0][0]


def _block_step(lib):
    """A transformer block (LayerNorm, causal attention, tanh-GELU MLP, residuals) under
    autocast: the dtype of each stage, the loss and a weight's gradient."""
    rs = np.random.default_rng(4)
    nn, F = lib.nn, lib.nn.functional
    ln, qkv, fc = nn.LayerNorm(16), nn.Linear(16, 48), nn.Linear(16, 32)
    with lib.no_grad():
        for p in list(qkv.parameters()) + list(fc.parameters()):
            p.copy_(lib.tensor(rs.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    x = lib.tensor(rs.standard_normal((2, 5, 16)).astype(np.float32))
    seen = []
    with lib.autocast("cpu", dtype=lib.bfloat16):
        h = ln(x)
        q, k, v = qkv(h).view(2, 5, 3, 2, 8).permute(2, 0, 3, 1, 4).unbind(0)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        a = a.transpose(1, 2).reshape(2, 5, 16)
        y = x + a
        z = F.gelu(fc(y), approximate="tanh")
        loss = F.mse_loss(z, lib.zeros(2, 5, 32))
        seen = [t.dtype for t in (h, q, a, y, z, loss)]
    loss.backward()
    return [str(d).split(".")[-1] for d in seen], loss.item(), qkv.weight.grad.numpy().copy()


def test_transformer_block_under_autocast_matches_torch(torch):
    ours, theirs = _block_step(rg), _block_step(torch)
    assert ours[0] == theirs[0]
    assert ours[1] == pytest.approx(theirs[1], rel=2e-2)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=0.05, atol=0.02 * np.abs(theirs[2]).max())


def _more_list_ops(lib):
    F = lib.nn.functional
    rs = np.random.default_rng(6)
    b = lib.tensor(rs.standard_normal((4, 6)).astype(np.float32)).bfloat16()
    x = lib.ones(2, 3, 4, 4, 4)
    with lib.autocast("cpu"):
        lp = lib.tensor(rs.standard_normal((5, 2, 4)).astype(np.float32)).bfloat16()
        lp = lp.log_softmax(2)
        outs = (F.conv3d(x, lib.ones(2, 3, 1, 1, 1)),
                F.conv_transpose3d(x, lib.ones(3, 2, 1, 1, 1)),
                F.ctc_loss(lp, lib.tensor([[1, 2], [1, 1]]), (5, 5), (2, 2)),
                F.pad(b[None], (1, 1), mode="reflect"), F.pad(b[None], (1, 1), mode="replicate"),
                F.pad(b, (1, 1)), F.pad(b[None], (1, 1), mode="circular"), lib.quantile(b, 0.5),
                lib.trace(b[:, :4]), b.prod(), F.prelu(b, lib.ones(1)),
                lib.einsum("ij,kj->ik", x[0, 0, 0], x[0, 0, 0]))
    return [str(t.dtype).split(".")[-1] for t in outs]


def test_more_autocast_list_ops_match_torch(torch):
    assert _more_list_ops(rg) == _more_list_ops(torch)


@pytest.mark.parametrize("opt_name", ["SGD", "Adam", "AdamW"])
def test_optimizers_on_bfloat16_parameters_match_torch(torch, opt_name):
    """Parameters kept in bfloat16: given the same gradients, the optimizers' in-place updates
    (mul_, lerp_, addcmul_, addcdiv_) round as PyTorch's kernels, bit for bit."""
    rs = np.random.default_rng(8)
    w0 = rs.standard_normal((3, 5)).astype(np.float32)
    grads = [rs.standard_normal((3, 5)).astype(np.float32) for _ in range(4)]
    kw = {"lr": 0.05, "momentum": 0.9} if opt_name == "SGD" else {"lr": 0.05}
    res = []
    for lib in (rg, torch):
        w = lib.nn.Parameter(lib.tensor(w0).bfloat16())
        opt = getattr(lib.optim, opt_name)([w], **kw)
        for g in grads:
            w.grad = lib.tensor(g).bfloat16()
            opt.step()
        res.append(w.detach().float().numpy())
    np.testing.assert_array_equal(res[0], res[1])


def _custom_function(lib, cast, seen):
    """A custom Function whose forward and backward multiply by a matrix (so their dtypes show
    the autocast state each runs in), decorated with ``torch.amp.custom_fwd``/``custom_bwd``."""
    fwd = lib.amp.custom_fwd(device_type="cpu", cast_inputs=cast) if cast else \
        lib.amp.custom_fwd(device_type="cpu")

    class MatmulTwice(lib.autograd.Function):
        @staticmethod
        @fwd
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return (x @ w) * 2

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            gx = (g @ w.t()) * 2
            seen.append(str(gx.dtype).split(".")[-1])  # the autocast state backward runs in
            return gx, (x.t() @ g) * 2

    return MatmulTwice


@pytest.mark.parametrize("cast", [None, "float32"])
@pytest.mark.parametrize("inside", [True, False])
def test_custom_fwd_bwd_match_torch(torch, cast, inside):
    def run(lib):
        seen = []
        f = _custom_function(lib, getattr(lib, cast) if cast else None, seen)
        x = lib.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
        w = lib.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
        with lib.autocast("cpu", dtype=lib.bfloat16, enabled=inside):
            y = f.apply(x, w)
        y.float().sum().backward()
        return seen, (y, x.grad, w.grad)

    (seen, ours), (seen_ref, ref) = run(rg), run(torch)
    assert seen == seen_ref
    for a, b in zip(ours, ref):
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(a.detach().float().numpy(), b.detach().float().numpy(),
                                   rtol=1e-2)


def test_custom_fwd_needs_a_device_type_string():
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        rg.amp.custom_fwd(lambda ctx: None, device_type=None)
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        rg.amp.custom_bwd(device_type=3)
