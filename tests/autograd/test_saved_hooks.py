"""Saved-tensor hooks and what nodes expose (``_saved_*``, name, metadata, hooks) against torch."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from ..oracle import compare, compare_error

R = np.random.default_rng(0)
X = R.standard_normal((3, 4)).astype(np.float32)
Y = R.standard_normal((3, 4)).astype(np.float32)
M = R.standard_normal((4, 5)).astype(np.float32)


def G(lib):
    return lib.autograd.graph


def _log_hooks(log):
    def pack(t):
        log.append(("pack", tuple(t.shape), t.grad_fn.name() if t.grad_fn else None))
        return ("packed", t)

    def unpack(p):
        log.append(("unpack",))
        return p[1]

    return pack, unpack


def _run_with_hooks(lib):
    log = []
    x = lib.tensor(X, requires_grad=True)
    with G(lib).saved_tensors_hooks(*_log_hooks(log)):
        y = x.exp()                     # saves its result
        z = (y * x).sin()               # mul saves both inputs, sin its input
        w = x.pow(2).sum() + lib.tensor(Y).sin().sum()  # a constant saves nothing
    packs = sorted(log, key=str)
    log.clear()
    (z.sum() + w).backward()
    return packs, log, x.grad


def test_pack_and_unpack_calls_match_torch(torch):
    compare(_run_with_hooks)


def test_nesting_and_disable(torch):
    def run(lib):
        log = []
        x = lib.tensor(X, requires_grad=True)
        outer = G(lib).saved_tensors_hooks(lambda t: log.append("outer") or t, lambda t: t)
        inner = G(lib).saved_tensors_hooks(lambda t: log.append("inner") or t, lambda t: t)
        with outer:
            with inner:
                x.sin()
            x.cos()
        x.tan()  # no hooks: nothing packed
        return log

    compare(run)
    compare_error(lambda lib: _enter_hooks_inside_disable(lib))
    compare_error(lambda lib: _disable_inside_hooks(lib))


def _enter_hooks_inside_disable(lib):
    with G(lib).disable_saved_tensors_hooks("no hooks here"):
        with G(lib).saved_tensors_hooks(lambda t: t, lambda t: t):
            pass


def _disable_inside_hooks(lib):
    with G(lib).saved_tensors_hooks(lambda t: t, lambda t: t):
        with G(lib).disable_saved_tensors_hooks("no hooks here"):
            pass


def test_unpack_must_return_a_tensor(torch):
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        with G(lib).saved_tensors_hooks(lambda t: t, lambda p: 3):
            y = x.sin()
        y.sum().backward()

    compare_error(run)


def test_hooks_own_the_data_no_version_check(torch):
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        with G(lib).saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            a = x * 1
            b = a.sin()
        a.add_(1)  # the packed copy is unaffected
        b.sum().backward()
        return x.grad

    compare(run)


def test_custom_function_and_double_backward_through_hooks(torch):
    def run(lib):
        log = []

        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                out = a * a
                ctx.save_for_backward(a, out)
                return out

            @staticmethod
            def backward(ctx, g):
                a, out = ctx.saved_tensors
                return 2 * a * g + 0 * out

        x = lib.tensor(X, requires_grad=True)
        with G(lib).saved_tensors_hooks(*_log_hooks(log)):
            s = Square.apply(x).sum() + (x.exp() * x).sum()
        (g,) = lib.autograd.grad(s, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return sorted(log, key=str), g, gg

    compare(run, rtol=1e-5, atol=1e-5)


def test_save_on_cpu(torch):
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        with G(lib).save_on_cpu(pin_memory=False):
            y = (x.tanh() @ lib.tensor(M)).sum()
        y.backward()
        return x.grad

    compare(run)


# -- what nodes expose ----------------------------------------------------------------------------

def _cases(lib):
    x = lib.tensor(X, requires_grad=True)
    y = lib.tensor(Y, requires_grad=True)
    m = lib.tensor(M, requires_grad=True)
    v = lib.tensor(M[:, 0].copy(), requires_grad=True)
    F = lib.nn.functional
    return {
        "mul": x * y, "mul_s": x * 2.0, "div": x / y, "pow": x ** 2, "exp": x.exp(),
        "sin": x.sin(), "tanh": x.tanh(), "sigmoid": x.sigmoid(), "relu": x.relu(),
        "abs": x.abs(), "mm": x @ m, "mv": x.mv(v), "addmm": lib.addmm(v[:1], x, m),
        "sum": x.sum(), "sum_dim": x.sum(1), "mean": x.mean(), "view": x.view(12),
        "transpose": x.transpose(0, 1), "permute": x.permute(1, 0), "unsqueeze": x.unsqueeze(0),
        "select": x[1], "max": x.max(1)[0], "softmax": x.softmax(1),
        "log_softmax": x.log_softmax(1), "gelu": F.gelu(x), "leaky": F.leaky_relu(x, 0.1),
        "elu": F.elu(x), "softplus": F.softplus(x), "clamp": x.clamp(-0.5, 0.5),
        "mse": F.mse_loss(x, y), "cat": lib.cat([x, y]), "cumsum": x.cumsum(1),
        "prod": x.prod(),
    }


def test_saved_attributes_match_torch(torch):
    ours, ref = _cases(retrograd), _cases(torch)
    checked = 0
    for name, t in ref.items():
        fn, rfn = t.grad_fn, ours[name].grad_fn
        assert rfn.name() == fn.name(), name
        for attr in (a for a in dir(fn) if a.startswith("_saved_")):
            want = getattr(fn, attr)
            got = getattr(rfn, attr)
            if isinstance(want, torch.Tensor):
                assert got is not None, f"{name}.{attr}"
                np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(),
                                           rtol=1e-6, err_msg=f"{name}.{attr}")
            else:
                assert got == pytest.approx(want), f"{name}.{attr}: {got!r} vs {want!r}"
            checked += 1
    assert checked > 60
    # a saved input is the tensor itself, as in PyTorch
    x = retrograd.tensor(X, requires_grad=True)
    assert x.sin().grad_fn._saved_self is x


def test_saved_attributes_after_free_and_missing(torch):
    def freed(lib):
        y = lib.tensor(X, requires_grad=True).exp()
        y.sum().backward()
        return y.grad_fn._saved_result

    compare_error(freed)

    def sizes_after_free(lib):
        x = lib.tensor(X, requires_grad=True)
        y = x.sum(1)
        y.sum().backward()
        return y.grad_fn._saved_self_sym_sizes, y.grad_fn._saved_dim

    compare(sizes_after_free)
    compare_error(lambda lib: lib.tensor(X, requires_grad=True).sin().grad_fn._saved_other)


def test_saved_attributes_unpack_through_hooks(torch):
    def run(lib):
        log = []
        x = lib.tensor(X, requires_grad=True)
        with G(lib).saved_tensors_hooks(*_log_hooks(log)):
            y = x.exp()
        r = y.grad_fn._saved_result
        return r, [e for e in log if e == ("unpack",)]

    compare(run)


def test_node_interface(torch):
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        y = (x * 2).sum()
        fn = y.grad_fn
        fn.metadata["k"] = 1
        seen = []
        fn.register_prehook(lambda go: seen.append(("pre", tuple(go[0].shape))))
        fn.register_hook(lambda gi, go: seen.append(("post", len(gi), len(go))))
        y.backward()
        return (fn.name(), dict(fn.metadata), isinstance(fn, G(lib).Node),
                [(n.name() if n else None, i) for n, i in fn.next_functions], seen)

    compare(run)


def test_register_multi_grad_hook(torch):
    def run(lib):
        reg = G(lib).register_multi_grad_hook
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0], requires_grad=True)
        c = lib.tensor([5.0], requires_grad=True)
        log = []
        h = reg((a, b, c), lambda gs: log.append(("all", [g if g is None else g.tolist()
                                                           for g in gs])))
        h2 = reg((a, c), lambda g: log.append(("any", g.tolist())), mode="any")
        (a.sum() * 2 + b.sum() * 3).backward()
        (b * 2).sum().backward()  # only b: "any" does not fire
        h.remove()
        h2.remove()
        (a * b).sum().backward()
        return log

    compare(run)
    compare_error(lambda lib: G(lib).register_multi_grad_hook(
        (lib.ones(1, requires_grad=True),), print, mode="some"))


# -- grad_fn._raw_saved_<name>: one saved tensor's own hooks ---------------------------------------

def test_raw_saved_register_hooks(torch):
    def run(lib):
        log = []
        x = lib.tensor(X, requires_grad=True)
        y = lib.tensor(Y, requires_grad=True)
        z = x * y
        raw = z.grad_fn._raw_saved_other
        assert raw is z.grad_fn._raw_saved_other  # one object per saved tensor
        raw.register_hooks(lambda t: (log.append("pack"), t * 2)[1],
                           lambda t: (log.append("unpack"), t)[1])
        seen = list(log)  # packed at once
        got = z.grad_fn._saved_other  # read through the unpack hook
        z.sum().backward()  # x's gradient reads the doubled y; y's reads x, untouched
        e = x.exp()
        e.grad_fn._raw_saved_result.register_hooks(lambda t: t + 1, lambda t: t)
        (ge,) = lib.autograd.grad(e.sum(), x)
        return seen, got, log, x.grad, y.grad, ge

    compare(run)


def _raw_case(lib, what):
    x = lib.tensor(X, requires_grad=True)
    if what == "twice":
        r = x.sin().grad_fn._raw_saved_self
        r.register_hooks(lambda t: t, lambda t: t)
        r.register_hooks(lambda t: t, lambda t: t)
    elif what == "under_hooks":
        with G(lib).saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x.cos()
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    elif what == "freed":
        y = x.exp()
        y.sum().backward()
        y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
    elif what == "unpack_not_tensor":
        y = x.tan()
        y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: 5)
        y.sum().backward()
    elif what == "not_a_tensor_name":
        return x.sum(0).grad_fn._raw_saved_dim
    elif what == "missing":
        return x.sin().grad_fn._raw_saved_other


@pytest.mark.parametrize("what", ["twice", "under_hooks", "freed", "unpack_not_tensor",
                                  "not_a_tensor_name", "missing"])
def test_raw_saved_errors(torch, what):
    compare_error(lambda lib: _raw_case(lib, what))


def test_raw_saved_version_check_still_applies_to_the_other_entries(torch):
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        a, b = x * 1, x * 2
        z = a * b
        z.grad_fn._raw_saved_self.register_hooks(lambda t: t.clone(), lambda t: t)
        with lib.no_grad():
            b.add_(1)  # b is saved (for a's gradient) without hooks: still version-checked
        z.sum().backward()

    compare_error(run)


def test_raw_saved_tensors_of_a_custom_function(torch):
    def run(lib):
        class Sq(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                out = a * a
                ctx.save_for_backward(a, out, None)
                return out

            @staticmethod
            def backward(ctx, g):
                a, out, _ = ctx.saved_tensors
                return 2 * a * g + 0 * out

        log = []
        x = lib.tensor(X, requires_grad=True)
        s = Sq.apply(x)
        raw = s.grad_fn._raw_saved_tensors
        # the saved output reaches the pack hook without its history, as PyTorch keeps it
        raw[1].register_hooks(lambda t: (log.append(t.grad_fn is None), t * 10)[1],
                              lambda t: (log.append("unpack"), t)[1])
        a, out, none = s.grad_fn.saved_tensors
        s.sum().backward()
        e = x.exp()
        e.grad_fn._raw_saved_result.register_hooks(lambda t: (log.append(t.grad_fn), t)[1],
                                                   lambda t: t)
        return len(raw), log, a, out, none, x.grad

    compare(run)


@pytest.mark.parametrize("what", ["none_entry", "freed_function"])
def test_raw_saved_errors_of_entries(torch, what):
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        if what == "none_entry":  # mul by a constant tensor saves no self
            m = x * lib.tensor(Y)
            m.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)

        class Id(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * 1

            @staticmethod
            def backward(ctx, g):
                return g

        y = Id.apply(x)
        y.sum().backward()
        return y.grad_fn._raw_saved_tensors

    compare_error(run)


IMG = R.standard_normal((1, 2, 4, 4)).astype(np.float32)


def _as_given_cases(lib):
    x = lib.tensor(X, requires_grad=True)
    img = lib.tensor(IMG, requires_grad=True)
    return {
        "sum": x.sum(-1), "sum_keep": x.sum((0, -1), keepdim=True), "mean": x.mean((0, -1)),
        "select": x.select(-1, -1), "transpose": x.transpose(-2, -1), "permute": x.permute(1, -2),
        "sort": x.sort(-1)[0], "topk": x.topk(2, -1)[0], "max": x.max(-1)[0], "var": x.var(-1),
        "std": x.std(-1, correction=2), "amin": x.amin(-1, keepdim=True),
        "clamp_min": x.clamp_min(0), "softmax": x.softmax(-1), "cat": lib.cat([x, x], -1),
        "cumsum": x.cumsum(-1), "diagonal": x.diagonal(0, -2, -1), "squeeze": x[:1].squeeze(-2),
        "pool": lib.nn.functional.max_pool2d(img, 2, 2, ceil_mode=True),
        "norm": lib.linalg.vector_norm(x, 3, -1, keepdim=True),
    }


def _signed(v):
    """torch's uint64 of a negative dim (alone or in a tuple) as the int it was given as."""
    if isinstance(v, int) and not isinstance(v, bool) and v >= 2 ** 63:
        return v - 2 ** 64
    return tuple(_signed(e) for e in v) if isinstance(v, tuple) else v


def test_saved_dims_as_given(torch):
    # PyTorch keeps dims (and other int arguments) as the op got them: -1, not the wrapped 1.
    ours, ref = _as_given_cases(retrograd), _as_given_cases(torch)
    checked = 0
    for name, t in ref.items():
        fn, rfn = t.grad_fn, ours[name].grad_fn
        assert rfn.name() == fn.name(), name
        for attr in (a for a in dir(fn) if a.startswith("_saved_")):
            want, got = getattr(fn, attr), getattr(rfn, attr)
            if isinstance(want, torch.Tensor):
                np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(),
                                           rtol=1e-6, err_msg=f"{name}.{attr}")
            else:
                assert got == _signed(want) and type(got) is type(want), \
                    f"{name}.{attr}: {got!r} vs {want!r}"
            checked += 1
    assert checked > 50


def test_pack_calls_for_kept_inputs_match_torch(torch):
    """Inputs PyTorch keeps though retrograd's formulas do not read them go through the hooks
    too, once each, and unpack in backward."""
    def f(lib):
        log = []
        x = lib.tensor([[[[1.0, float("nan")], [3.0, 4.0]]]], requires_grad=True)
        with G(lib).saved_tensors_hooks(*_log_hooks(log)):
            y = x.nansum() + x.nan_to_num().sum() + lib.nn.functional.avg_pool2d(x, 2).sum()
        packs = sorted(log, key=str)
        log.clear()
        y.backward()
        return packs, log, x.grad

    compare(f)


def test_saved_numbers_as_given(torch):
    """pow's exponent (and a number base) keep the Python type the call passed (``square`` is
    ``pow(x, 2)``: an int); a pool's stride is ``()`` where the call gave none."""
    def f(lib):
        x = lib.tensor([[[[1.0, 2.0], [3.0, 4.0]]]], requires_grad=True)
        fn = lib.nn.functional
        got = [lib.square(x).grad_fn._saved_exponent, (x ** 2.0).grad_fn._saved_exponent,
               (x ** True).grad_fn._saved_exponent, (2 ** x).grad_fn._saved_self,
               (2.5 ** x).grad_fn._saved_self]
        for pool in (fn.max_pool2d, fn.avg_pool2d):
            got += [pool(x, 2).grad_fn._saved_stride, pool(x, 2, []).grad_fn._saved_stride,
                    pool(x, 2, 1).grad_fn._saved_stride]
        got.append(lib.nn.MaxPool2d(2)(x).grad_fn._saved_stride)
        return [(type(v).__name__, v) for v in got]

    compare(f)


def test_index_put_indices_as_given(torch):
    """index_put's (and ``x[index] = v``'s) ``_saved_indices``: the index tensors given."""
    def f(lib):
        a = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
        got = [lib.index_put(a, (lib.tensor([2, 0, 2]),), lib.tensor([1.0, 1.0]),
                             accumulate=True).grad_fn._saved_indices,
               lib.index_put(a, (lib.tensor([True, False, True]),),
                             lib.tensor(1.0)).grad_fn._saved_indices]
        y = a.clone()
        y[[0, 1], [1, 0]] = 1.0
        got.append(y.grad_fn._saved_indices)
        return got

    compare(f)


def test_slice_bounds_as_given(torch):
    """A slice's ``_saved_start``/``_saved_end`` as the call gave them (None: 0 and INT64_MAX;
    out-of-range bounds unclamped), tensor_split's too."""
    def signed(v):
        return v - 2 ** 64 if v >= 2 ** 63 else v  # (PyTorch shows negative ones as uint64)

    def f(lib):
        x = lib.ones(5, 6, requires_grad=True)
        views = [x[1:], x[:2], x[-2:], x[1:4:2], x[:, 2:10], x.narrow(1, 2, 3),
                 *x.tensor_split([1, 3, 2, 9])]
        return [(signed(v.grad_fn._saved_start), signed(v.grad_fn._saved_end)) for v in views]

    compare(f)


def test_embedding_bag_weight_kept_for_per_sample_weights(torch):
    """embedding_bag keeps its weight only where per_sample_weights requires grad."""
    def f(lib):
        w = lib.ones(5, 2, requires_grad=True)
        psw = lib.ones(4, requires_grad=True)
        got = []
        for ww, pp in ((w, psw), (w, psw.detach()), (w.detach(), psw), (w, None)):
            g = lib.nn.functional.embedding_bag(lib.tensor([0, 1, 2, 3]), ww, lib.tensor([0, 2]),
                                                mode="sum", per_sample_weights=pp).grad_fn
            got.append(g._saved_weight)
        return got

    compare(f)


def _index_family(lib, name):
    """One op (indexing, selection, losses, norms, factorizations) on small inputs that
    require grad."""
    x = lib.tensor(X.astype(np.float64), requires_grad=True)
    s = lib.tensor(Y[:2].astype(np.float64), requires_grad=True)
    i2 = lib.tensor([[0, 2, 1, 0], [2, 1, 0, 0]])
    i1 = lib.tensor([2, 0])
    mask = lib.tensor(X > 0)
    fn = lib.nn.functional
    return {
        "gather": lambda: x.gather(0, i2),
        "take": lambda: x.take(i2),
        "put": lambda: x.put(i1, s[0, :2]),
        "index_add": lambda: x.index_add(0, i1, s),
        "index_copy": lambda: x.index_copy(0, i1, s),
        "index_select": lambda: x.index_select(1, i1),
        "index_fill": lambda: x.index_fill(1, i1, 0.5),
        "masked_select": lambda: x.masked_select(mask),
        "masked_fill": lambda: x.masked_fill(mask, 0.5),
        "masked_scatter": lambda: x.masked_scatter(mask, s.reshape(-1).repeat(2)),
        "where": lambda: lib.where(mask, x, s[:1]),
        "scatter": lambda: x.scatter(0, i2, s),
        "scatter_add": lambda: x.scatter_add(0, i2, s),
        "scatter_reduce": lambda: x.scatter_reduce(0, i2, s, "amax"),
        "cummax": lambda: x.cummax(1)[0],
        "cummin": lambda: x.cummin(0)[0],
        "max_dim": lambda: x.max(1)[0],
        "min_keepdim": lambda: x.min(0, keepdim=True)[0],
        "sort": lambda: x.sort(1)[0],
        "topk": lambda: x.topk(2)[0],
        "kthvalue": lambda: x.kthvalue(2, 0)[0],
        "median": lambda: x.median(1)[0],
        "mode": lambda: x.mode(1)[0],
        "nll_loss": lambda: fn.nll_loss(x, lib.tensor([0, 3, 1])),
        "nll_loss_weight": lambda: fn.nll_loss(x, lib.tensor([0, 3, 1]), weight=x[0].detach()),
        "cross_entropy": lambda: fn.cross_entropy(x, lib.tensor([0, 3, 1])),
        "embedding": lambda: fn.embedding(i2, x),
        "getitem": lambda: x[i1],
        "getitem_mask": lambda: x[mask],
        "getitem_2d": lambda: x[[0, 2], 1:][:, [1, 0]],
        "setitem": lambda: _set(x.clone(), (i1,), s),
        "setitem_slice": lambda: _set(x.clone(), (slice(1, None), i1), s[:, :2]),
        "index_put": lambda: x.index_put((i1,), s, accumulate=True),
        "index_select_0d": lambda: x.index_select(1, i1[0]),
        "max_pool2d": lambda: fn.max_pool2d(x[None, None], 2),
        "adaptive_max_pool2d": lambda: fn.adaptive_max_pool2d(x[None], 2),
        "batch_norm": lambda: fn.batch_norm(x, None, None, x[0, :4].detach() + 2, s[0],
                                            training=True),
        "layer_norm": lambda: fn.layer_norm(x, (4,), s[0], s[1]),
        "group_norm": lambda: fn.group_norm(x[None], 3, s[0, :3]),
        "pow": lambda: x.abs().pow(s[0]),
        "aminmax": lambda: x.aminmax(dim=1)[1],
        "mm": lambda: x.mm(s.t()),
        "mv": lambda: x.mv(s[0]),
        "qr": lambda: lib.linalg.qr(x)[1],
        "eigh": lambda: lib.linalg.eigh(x[:, :3] + x[:, :3].mT)[0],
        "svd": lambda: lib.linalg.svd(x, full_matrices=False)[1],
        "det": lambda: lib.linalg.det(x[:, :3]),
        "slogdet": lambda: lib.linalg.slogdet(x[:, :3])[1],
        "solve": lambda: lib.linalg.solve(x[:, :3], s[0, :3]),
        "ctc_loss": lambda: fn.ctc_loss(x[:, None].expand(3, 2, 4).log_softmax(2),
                                        lib.tensor([[1, 2], [3, 3]]), [3, 3], [2, 1],
                                        reduction="none"),
        "embedding_bag": lambda: fn.embedding_bag(i1, x, lib.tensor([0]), mode="max"),
        "embedding_bag_psw": lambda: fn.embedding_bag(i1, x, lib.tensor([0]),
                                                      mode="sum", per_sample_weights=s[0, :2]),
        "copysign": lambda: x.copysign(-1.0),
        "masked_select_bcast": lambda: x.masked_select(mask[:, :1]),
        "masked_scatter_bcast": lambda: x.masked_scatter(mask[:1], s.reshape(-1).repeat(2)),
        "cdist": lambda: lib.cdist(x, s),
        "dist": lambda: lib.dist(x[:2], s),
        "block_diag": lambda: lib.block_diag(x, s),
        "conv3d": lambda: fn.conv3d(x.reshape(1, 1, 3, 2, 2), s[:, :1].reshape(1, 1, 1, 1, 2)),
        "max_pool3d": lambda: fn.max_pool3d(x.reshape(1, 1, 3, 2, 2), 2),
        "multi_margin_loss": lambda: fn.multi_margin_loss(x, lib.tensor([0, 3, 1])),
        "lu_factor": lambda: lib.linalg.lu_factor(x[:, :3])[0],
        "special_i1": lambda: lib.special.i1(x),
        "logsigmoid": lambda: fn.logsigmoid(x),
        "argsort_gather": lambda: x.gather(1, x.argsort(1)),
        "repeat_interleave_t": lambda: x.repeat_interleave(lib.tensor([2, 0, 1]), dim=0),
        "combinations": lambda: lib.combinations(x[0], 2),
        "cov_aweights": lambda: lib.cov(x, aweights=s[0].abs() + 0.5),
        "fractional_max_pool3d": lambda: fn.fractional_max_pool3d(
            (x.reshape(-1, 1) * x.reshape(-1)).reshape(1, 1, 4, 6, 6), 2, output_size=2),
        "einsum": lambda: lib.einsum("ij,kj->ik", x, s),
        "matrix_norm_1": lambda: lib.linalg.matrix_norm(x, 1),
        "sdpa_dropout": lambda: fn.scaled_dot_product_attention(x[None], s[None], s[None],
                                                                dropout_p=0.5),
    }[name]()


def _set(z, key, v):
    z[key] = v
    return z


@pytest.mark.parametrize("name", [
    "gather", "take", "put", "index_add", "index_copy", "index_select", "index_fill",
    "masked_select", "masked_fill", "masked_scatter", "where", "scatter", "scatter_add",
    "scatter_reduce", "cummax", "cummin", "max_dim", "min_keepdim", "sort", "topk", "kthvalue",
    "median", "mode", "nll_loss", "nll_loss_weight", "cross_entropy", "embedding", "getitem",
    "getitem_mask", "getitem_2d", "setitem", "setitem_slice", "index_put", "index_select_0d",
    "max_pool2d", "adaptive_max_pool2d", "batch_norm", "layer_norm", "group_norm", "pow",
    "aminmax", "mm", "mv", "qr", "eigh", "svd", "det", "slogdet", "solve", "ctc_loss",
    "embedding_bag", "embedding_bag_psw", "copysign", "cdist", "dist", "block_diag", "conv3d",
    "max_pool3d", "multi_margin_loss", "lu_factor", "special_i1", "masked_select_bcast",
    "masked_scatter_bcast", "logsigmoid", "argsort_gather", "repeat_interleave_t",
    "combinations", "cov_aweights", "fractional_max_pool3d", "einsum", "matrix_norm_1",
    "sdpa_dropout"])
def test_packs_what_torch_saves(torch, name):
    """Indices, masks, targets, statistics and factors PyTorch saves as tensors go through
    pack and unpack as there: the same tensors (shape, dtype), in the same order, each
    unpacked once in backward."""
    def f(lib):
        log = []
        pack = lambda t: log.append(("pack", tuple(t.shape), str(t.dtype)[-5:])) or t  # noqa: E731
        unpack = lambda t: log.append(("unpack", tuple(t.shape), str(t.dtype)[-5:])) or t  # noqa
        with G(lib).saved_tensors_hooks(pack, unpack):
            y = _index_family(lib, name)
        packs = list(log)
        log.clear()
        y.sum().backward()
        return packs, sorted(log)

    compare(f)


def test_ctc_loss_log_alpha(torch):
    """ctc_loss's ``_saved_result1`` is PyTorch's log alpha (N, T, 2 S + 1), where its kernel
    writes it (the rest of PyTorch's is uninitialized memory)."""
    lp = np.log(np.random.default_rng(1).dirichlet(np.ones(5), size=(6, 3)))
    res = []
    for lib in (retrograd, torch):
        x = lib.tensor(lp, requires_grad=True)
        loss = lib.nn.functional.ctc_loss(x, lib.tensor([1, 2, 2, 3, 1, 4]), lib.tensor([6, 5, 3]),
                                          lib.tensor([3, 2, 1]), reduction="none")
        res.append(loss.grad_fn._saved_result1.detach().numpy())
    ours, ref = res
    t = np.arange(6)[None, :, None]
    s = np.arange(7)[None, None, :]
    written = (t < np.array([6, 5, 3])[:, None, None]) & \
        ((t == 0) | (s < 2 * np.array([3, 2, 1])[:, None, None] + 1))
    assert ours.shape == ref.shape == (3, 6, 7)
    np.testing.assert_allclose(ours[written], ref[written], rtol=1e-12)
    assert (ours[~written] == 0).all()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_embedding_bag_results(torch, dtype):
    """embedding_bag's offset2bag, bag_size and max_indices (``_saved_result1..3``) as
    PyTorch's CPU kernel keeps them, its float32 fast path for sum included."""
    cases = [([0, 1, 2, 3], [0, 2], {"mode": m}) for m in ("sum", "mean", "max")] + [
        ([0, 1, 2, 3], [0, 2], {"mode": "max", "padding_idx": 1}),
        ([0, 1, 2, 3], [0, 2], {"mode": "sum", "padding_idx": 1}),
        ([0, 1, 2, 3], [0, 2, 2], {"mode": "mean"}),
        ([0, 1, 2, 3], [0, 2], {"mode": "max", "include_last_offset": True}),
        ([[0, 1], [2, 3], [4, 4]], None, {"mode": "max"})]

    def f(lib):
        w = lib.tensor(np.random.default_rng(0).standard_normal((5, 3)).astype(dtype),
                       requires_grad=True)
        got = []
        for idx, off, kw in cases:
            g = lib.nn.functional.embedding_bag(lib.tensor(idx), w, None if off is None else
                                                lib.tensor(off), **kw).grad_fn
            got.append([getattr(g, f"_saved_result{k}") for k in (1, 2, 3)])
        return got

    compare(f)


@pytest.mark.parametrize("shapes", [((3, 4), (4, 3), (3, 4)), ((2, 5), (5, 3), (3, 1)),
                                    ((4, 2), (2, 5), (5, 3), (3, 6), (6, 2))])
def test_chain_products_in_torchs_order(torch, shapes):
    """chain_matmul and linalg.multi_dot multiply in PyTorch's order (the cheaper one for
    three matrices, the optimal chain for more): each mm keeps the operands PyTorch's does."""
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) for s in shapes]

    def f(lib):
        ms = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = []
        for y in (lib.chain_matmul(*ms), lib.linalg.multi_dot(ms)):
            seen, stack = [], [y.grad_fn]
            while stack:
                n = stack.pop()
                if n is None or n in seen:
                    continue
                seen.append(n)
                stack += [m for m, _ in n.next_functions]
            out.append([(n._saved_self_sym_sizes, n._saved_mat2_sym_sizes) for n in seen
                        if n.name() == "MmBackward0"])
        return out

    compare(f)


@pytest.mark.parametrize("name", ["mul", "div", "atan2", "pow", "lerp", "addcmul", "mm",
                                  "outer", "xlogy", "maximum"])
def test_inputs_packed_in_torchs_order(torch, name):
    """The inputs a node saves are packed in PyTorch's order (by their saved names: ``other``
    before ``self``, ``mat2`` before ``self``), each the tensor itself."""
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((3, 4)), np.abs(rng.standard_normal((3, 4))) + 0.5,
              rng.standard_normal((3, 4))]
    f = {"mul": lambda lib, a, b, c: a * b, "div": lambda lib, a, b, c: a / b,
         "atan2": lambda lib, a, b, c: lib.atan2(a, b), "pow": lambda lib, a, b, c: b.pow(a),
         "lerp": lambda lib, a, b, c: lib.lerp(a, b, c),
         "addcmul": lambda lib, a, b, c: lib.addcmul(a, b, c),
         "mm": lambda lib, a, b, c: a.mm(b.t()),
         "outer": lambda lib, a, b, c: lib.outer(a[0], b[0]),
         "xlogy": lambda lib, a, b, c: lib.xlogy(a, b),
         "maximum": lambda lib, a, b, c: lib.maximum(a, b)}[name]

    def run(lib):
        ins = [lib.tensor(x, requires_grad=True) for x in arrays]
        log = []
        with G(lib).saved_tensors_hooks(lambda t: log.append(t) or t, lambda t: t):
            f(lib, *ins)
        return [next((i for i, x in enumerate(ins) if t is x), tuple(t.shape)) for t in log]

    compare(run)
