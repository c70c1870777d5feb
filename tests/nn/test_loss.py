"""Tests for ``nn.functional.loss`` and ``nn.modules.loss``: values, gradients (input and
target) and grad_fn names against PyTorch (the oracle, skipped without it), every reduction,
gradcheck/gradgradcheck in float64, warnings, errors and module reprs."""

# ruff: noqa: B023 - the lambdas below are called at once, inside their loop iteration
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn  # noqa: F401 - binds rg.nn
import retrograd.nn.functional as RF
from retrograd.autograd import gradcheck, gradgradcheck

from ..oracle import run_both

RNG = np.random.default_rng(0)


def _pair_data(kind, shape, dtype):
    rng = np.random.default_rng(abs(hash((kind, shape))) % 2**32)
    if kind == "prob":
        x = rng.uniform(0.02, 0.98, shape)
        y = rng.uniform(0, 1, shape)
    elif kind == "sign":
        x = rng.standard_normal(shape) * 2
        y = np.where(rng.uniform(size=shape) > 0.5, 1.0, -1.0)
    elif kind == "pos":
        x = rng.standard_normal(shape)
        y = rng.uniform(0.1, 3, shape).round()
    elif kind == "kl":
        x = np.log(rng.dirichlet(np.ones(shape[-1]), shape[:-1]))
        y = rng.dirichlet(np.ones(shape[-1]), shape[:-1])
        y.reshape(-1)[0] = 0.0
    else:
        x = rng.standard_normal(shape) * 2
        y = rng.standard_normal(shape) * 2
        x.reshape(-1)[0] = y.reshape(-1)[0] + 0.5  # on the Huber/smooth L1 boundary
    return x.astype(dtype), y.astype(dtype)


# name -> (function name, data kind, kwargs, target differentiable in torch)
PAIR_LOSSES = {
    "mse": ("mse_loss", "real", {}, True),
    "l1": ("l1_loss", "real", {}, True),
    "smooth_l1": ("smooth_l1_loss", "real", {}, True),
    "smooth_l1_beta": ("smooth_l1_loss", "real", {"beta": 0.5}, True),
    "smooth_l1_beta0": ("smooth_l1_loss", "real", {"beta": 0.0}, True),
    "huber": ("huber_loss", "real", {}, True),
    "huber_delta": ("huber_loss", "real", {"delta": 0.5}, True),
    "soft_margin": ("soft_margin_loss", "sign", {}, False),
    "bce": ("binary_cross_entropy", "prob", {}, True),
    "bce_logits": ("binary_cross_entropy_with_logits", "real_prob", {}, True),
    "kl": ("kl_div", "kl", {}, True),
    "kl_log_target": ("kl_div", "kl_log", {"log_target": True}, True),
    "poisson": ("poisson_nll_loss", "pos", {}, True),
    "poisson_full": ("poisson_nll_loss", "pos", {"full": True}, True),
    "poisson_nolog": ("poisson_nll_loss", "prob", {"log_input": False}, True),
    "hinge": ("hinge_embedding_loss", "sign", {"margin": 0.7}, False),
}


def _make(kind, shape, dtype):
    if kind == "real_prob":
        x, _ = _pair_data("real", shape, dtype)
        _, y = _pair_data("prob", shape, dtype)
        return x, y
    if kind == "kl_log":
        x, y = _pair_data("kl", shape, dtype)
        return x, np.log(np.maximum(y, 1e-3)).astype(dtype)
    return _pair_data(kind, shape, dtype)


def _compare(torch, fn_t, fn_r, arrays, dtype, needs, names=True, tol=None):
    """The oracle's ``run_both`` with this file's tolerances (gradients 10x looser)."""
    if tol is None:
        tol = 2e-5 if dtype == np.float32 else 1e-11
    run_both(torch, fn_r, fn_t, arrays, requires_grad=needs, grad_fn=names, seed=5,
             tol=dict(rtol=tol, atol=tol), grad_tol=dict(rtol=tol * 10, atol=tol * 10))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4)])
@pytest.mark.parametrize("name", sorted(PAIR_LOSSES))
def test_pair_losses(torch, name, shape, reduction, dtype):
    import torch.nn.functional as TF

    fname, kind, kw, target_grad = PAIR_LOSSES[name]
    x, y = _make(kind, shape, dtype)
    if fname == "kl_div" and reduction == "mean":
        reduction = "batchmean"
    # a grad_fn structure difference is accepted only where PyTorch itself is a composite
    _compare(torch, lambda a, b: getattr(TF, fname)(a, b, reduction=reduction, **kw),
             lambda a, b: getattr(RF, fname)(a, b, reduction=reduction, **kw),
             (x, y), dtype, (True, target_grad), names=True)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_losses(torch, reduction):
    import torch.nn.functional as TF

    x, y = _make("prob", (4, 3), np.float64)
    w = np.random.default_rng(1).uniform(0.5, 2, (3,))
    pw = np.random.default_rng(2).uniform(0.5, 2, (3,))
    ww = np.random.default_rng(3).uniform(0.5, 2, (4, 3))
    cases = [
        ("binary_cross_entropy", {"weight": w}),
        ("binary_cross_entropy_with_logits", {"weight": w}),
        ("binary_cross_entropy_with_logits", {"pos_weight": pw}),
        ("binary_cross_entropy_with_logits", {"weight": w, "pos_weight": pw}),
        ("mse_loss", {"weight": ww}),
        ("l1_loss", {"weight": ww}),
        ("huber_loss", {"weight": ww}),
    ]
    for fname, kw in cases:
        kt = {k: torch.tensor(v) for k, v in kw.items()}
        kr = {k: rg.tensor(v) for k, v in kw.items()}
        _compare(torch, lambda a, b: getattr(TF, fname)(a, b, reduction=reduction, **kt),
                 lambda a, b: getattr(RF, fname)(a, b, reduction=reduction, **kr),
                 (x, y), np.float64, (True, True))


def test_bce_extremes(torch):
    import torch.nn.functional as TF

    x = np.array([0.0, 1.0, 0.0, 1.0, 1e-30, 0.5])
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.5])
    _compare(torch, lambda a, b: TF.binary_cross_entropy(a, b, reduction="none"),
             lambda a, b: RF.binary_cross_entropy(a, b, reduction="none"), (x, y),
             np.float64, (True, True), tol=1e-9)  # gradients near 1e12 at the clamp
    z = np.array([-1e4, 1e4, 0.0, 88.0, -88.0, 30.0])
    for kw in ({}, {"pos_weight": np.full(6, 3.0)}):
        kt = {k: torch.tensor(v) for k, v in kw.items()}
        kr = {k: rg.tensor(v) for k, v in kw.items()}
        _compare(torch, lambda a, b: TF.binary_cross_entropy_with_logits(a, b, **kt),
                 lambda a, b: RF.binary_cross_entropy_with_logits(a, b, **kr), (z, y),
                 np.float64, (True, True))


def test_cosine_and_margin_ranking(torch):
    import torch.nn.functional as TF

    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    t = np.array([1, -1, 1, -1, -1])
    for reduction in ("mean", "sum", "none"):
        for margin in (0.0, 0.3):
            _compare(torch, lambda p, q: TF.cosine_embedding_loss(
                p, q, torch.tensor(t), margin=margin, reduction=reduction),
                lambda p, q: RF.cosine_embedding_loss(p, q, rg.tensor(t), margin=margin,
                                                      reduction=reduction),
                (a, b), np.float64, (True, True))
            _compare(torch, lambda p, q: TF.margin_ranking_loss(
                p, q, torch.tensor(t.astype(float)), margin=margin, reduction=reduction),
                lambda p, q: RF.margin_ranking_loss(p, q, rg.tensor(t.astype(float)),
                                                    margin=margin, reduction=reduction),
                (a[:, 0], b[:, 0]), np.float64, (True, True))
    _compare(torch, lambda p, q: TF.cosine_embedding_loss(p, q, torch.tensor(-1)),
             lambda p, q: RF.cosine_embedding_loss(p, q, rg.tensor(-1)),
             (a[0], b[0]), np.float64, (True, True))


@pytest.mark.parametrize("two_d", [True, False])
def test_cosine_embedding_loss_builds_torchs_graph(torch, two_d):
    """ATen's composite: the eps and the margin through the Scalar overloads (one-edge
    AddBackward1, SubBackward1), 1 - cos as SubBackward0 from a filled tensor: the same
    nodes and edges (None included) as PyTorch's."""
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    t = np.array([1, -1, 1, -1])
    if not two_d:
        a, b, t = a[0], b[0], t[1]
    graphs = []
    for lib in (rg, torch):
        p = lib.tensor(a, requires_grad=True)
        q = lib.tensor(b, requires_grad=True)
        y = lib.nn.functional.cosine_embedding_loss(p, q, lib.tensor(t), margin=0.2)
        out, stack = [], [y.grad_fn]
        while stack:
            n = stack.pop()
            if n is not None:
                out.append((n.name().replace("torch::autograd::", ""),
                            [m is None for m, _ in n.next_functions]))
                stack += [m for m, _ in n.next_functions]
        graphs.append(out)
    assert graphs[0] == graphs[1]


@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("var_shape", [(4, 3), (4,), (4, 1)])
def test_gaussian_nll(torch, full, var_shape):
    import torch.nn.functional as TF

    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    v = rng.uniform(0.0, 2.0, var_shape)
    v.reshape(-1)[0] = 0.0  # clamped to eps
    for reduction in ("mean", "sum", "none"):
        _compare(torch, lambda a, b, c: TF.gaussian_nll_loss(a, b, c, full=full,
                                                             reduction=reduction),
                 lambda a, b, c: RF.gaussian_nll_loss(a, b, c, full=full, reduction=reduction),
                 (x, y, v), np.float64, (True, True, True))
    yt = TF.gaussian_nll_loss(torch.tensor(x), torch.tensor(y), 0.5)
    yr = RF.gaussian_nll_loss(rg.tensor(x), rg.tensor(y), 0.5)
    np.testing.assert_allclose(yr.numpy(), yt.numpy(), rtol=1e-12)


# -- nll_loss and cross_entropy ----------------------------------------------------------------

CLASS_SHAPES = [(5, 4), (4,), (3, 4, 5), (2, 4, 3, 2), (2, 4, 2, 2, 2)]


def _class_data(shape, seed=0, ignore=None, dtype=np.float64):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype) * 2
    c = shape[1] if len(shape) > 1 else shape[0]
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    t = rng.integers(0, c, tshape)
    if ignore is not None and t.ndim:
        t.reshape(-1)[::3] = ignore
    return x, t, c


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fname", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", CLASS_SHAPES)
@pytest.mark.parametrize("opts", ["plain", "weight", "ignore", "weight_ignore", "ignore_pos",
                                  "smooth", "smooth_weight_ignore"])
def test_class_losses(torch, opts, shape, reduction, fname, dtype):
    import torch.nn.functional as TF

    if "smooth" in opts and fname == "nll_loss":
        pytest.skip("label_smoothing is a cross_entropy option")
    ignore = -100
    if "ignore" in opts:
        ignore = 1 if opts == "ignore_pos" else -7
    x, t, c = _class_data(shape, ignore=ignore if "ignore" in opts else None, dtype=dtype)
    kw_t, kw_r = {"reduction": reduction, "ignore_index": ignore}, {"reduction": reduction,
                                                                     "ignore_index": ignore}
    if "weight" in opts:
        w = np.linspace(0.5, 2.0, c).astype(dtype)
        kw_t["weight"], kw_r["weight"] = torch.tensor(w), rg.tensor(w)
    if "smooth" in opts:
        kw_t["label_smoothing"] = kw_r["label_smoothing"] = 0.15
    _compare(torch, lambda a: getattr(TF, fname)(a, torch.tensor(t), **kw_t),
             lambda a: getattr(RF, fname)(a, rg.tensor(t), **kw_r), (x,), dtype, (True,),
             )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", CLASS_SHAPES)
@pytest.mark.parametrize("opts", [{}, {"label_smoothing": 0.2}, {"weight": True}])
def test_cross_entropy_probabilities(torch, opts, shape, reduction):
    import torch.nn.functional as TF

    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape)
    cd = 1 if len(shape) > 1 else 0
    p = rng.uniform(size=shape)
    p = p / p.sum(cd, keepdims=True)
    c = shape[cd]
    kt, kr = dict(opts), dict(opts)
    if opts.get("weight"):
        w = np.linspace(0.5, 2.0, c)
        kt["weight"], kr["weight"] = torch.tensor(w), rg.tensor(w)
    _compare(torch, lambda a, b: TF.cross_entropy(a, b, reduction=reduction, **kt),
             lambda a, b: RF.cross_entropy(a, b, reduction=reduction, **kr), (x, p),
             np.float64, (True, True))


def test_cross_entropy_structure_and_extremes(torch):
    x = rg.tensor([[1e4, -1e4, 0.0], [0.0, 0.0, 0.0]], requires_grad=True)
    loss = RF.cross_entropy(x, rg.tensor([1, 2]))
    assert loss.grad_fn.name() == "NllLossBackward0"
    assert loss.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"
    xt = torch.tensor([[1e4, -1e4, 0.0], [0.0, 0.0, 0.0]], requires_grad=True)
    lt = torch.nn.functional.cross_entropy(xt, torch.tensor([1, 2]))
    np.testing.assert_allclose(loss.item(), lt.item(), rtol=1e-6)
    loss.backward()
    lt.backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
    # every target ignored: nan for a mean, 0 for a sum, as in PyTorch
    t = rg.tensor([-100, -100])
    assert np.isnan(RF.cross_entropy(x, t).item())
    assert RF.cross_entropy(x, t, reduction="sum").item() == 0.0
    # uint8 targets are accepted
    y = RF.nll_loss(rg.tensor([[0.1, 0.2]]), rg.tensor([1], dtype=rg.uint8))
    assert abs(y.item() + 0.2) < 1e-7


@pytest.mark.parametrize("fname", ["nll_loss", "cross_entropy"])
def test_class_losses_gradcheck(fname):
    for shape in [(3, 4), (4,), (2, 3, 2)]:
        x, t, c = _class_data(shape, ignore=-100)
        w = rg.tensor(np.linspace(0.5, 2.0, c))
        xr = rg.tensor(x, requires_grad=True)
        for kw in ({}, {"weight": w}, {"reduction": "none"}, {"reduction": "sum"}):
            def f(a, kw=kw):
                return getattr(RF, fname)(a, rg.tensor(t), **kw)

            assert gradcheck(f, (xr,))
            assert gradgradcheck(f, (xr,))
    xr = rg.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert gradgradcheck(lambda a: RF.cross_entropy(a, rg.tensor([0, 1, 3]),
                                                    label_smoothing=0.1), (xr,))


@pytest.mark.parametrize("name", ["mse", "smooth_l1", "huber", "soft_margin", "bce",
                                  "bce_logits", "kl"])
def test_pair_losses_gradcheck(name):
    fname, kind, kw, _ = PAIR_LOSSES[name]
    x, y = _make(kind, (2, 3), np.float64)
    if kind == "kl":
        y = np.abs(y) + 0.1  # the target's gradient is infinite at 0
    if kind == "real":
        x = x + 0.1  # off the kink
    xr, yr = rg.tensor(x, requires_grad=True), rg.tensor(y, requires_grad=True)
    for reduction in ("mean", "none"):
        if fname == "kl_div" and reduction == "mean":
            reduction = "batchmean"

        def f(a, b, reduction=reduction):
            return getattr(RF, fname)(a, b, reduction=reduction, **kw)

        assert gradcheck(f, (xr, yr))
        assert gradgradcheck(f, (xr, yr))
    if name == "bce_logits":
        pw = rg.tensor([0.5, 2.0, 3.0])
        assert gradgradcheck(lambda a, b: RF.binary_cross_entropy_with_logits(
            a, b, pos_weight=pw), (xr, yr))


# -- warnings and errors -----------------------------------------------------------------------


def test_warnings(torch):
    x, y = rg.randn(3, 4), rg.randn(4)
    with pytest.warns(UserWarning, match=r"Using a target size \(torch.Size\(\[4\]\)\) that is "
                                         r"different to the input size \(torch.Size\(\[3, 4\]\)"):
        RF.mse_loss(x, y)
    with pytest.warns(UserWarning, match="reduction: 'mean' divides the total loss by both"):
        RF.kl_div(x, x)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, "
                                         "please use reduction='sum' instead."):
        out = RF.mse_loss(x, x + 1, size_average=False)
    assert out.item() == pytest.approx(12.0)
    with pytest.warns(UserWarning):
        m = rg.nn.MSELoss(reduce=False)
    assert m.reduction == "none"


def _error_cases(lib):
    t = lib.tensor
    x = t(np.zeros((3, 4), np.float32))
    x4 = t(np.zeros((2, 3, 4, 5), np.float32))
    idx = t([0, 1, 1])
    return [
        ("nll_loss", (x, t([0, 5, 1])), {}),
        ("nll_loss", (x, t([0, -1, 1])), {}),
        ("nll_loss", (x, t([0.0, 1, 1])), {}),
        ("nll_loss", (x, t(np.array([0, 1, 1], np.int32))), {}),
        ("nll_loss", (x, t([0, 1])), {}),
        ("nll_loss", (x, t([[0, 1, 1]])), {}),
        ("nll_loss", (x, idx), {"weight": t(np.ones(3, np.float32))}),
        ("nll_loss", (x, idx), {"weight": t(np.ones(4))}),
        ("nll_loss", (x, idx), {"reduction": "foo"}),
        ("nll_loss", (t(1.0), t(0)), {}),
        ("nll_loss", (x4, t(np.zeros((2, 4, 4), np.int64))), {}),
        ("nll_loss", (x4, t(np.zeros((2, 4, 5), np.int64))),
         {"weight": t(np.ones(4, np.float32))}),
        ("nll_loss", (t(np.zeros((2, 3, 4), np.float32)), t(np.zeros((2, 5), np.int64))), {}),
        ("nll_loss", (t(np.zeros((2, 3, 4), np.float32)), t(np.full((2, 4), 4))), {}),
        ("cross_entropy", (x, t([0, 5, 1])), {}),
        ("cross_entropy", (x, t(np.zeros((3, 5), np.float32))), {}),
        ("cross_entropy", (x, t(np.zeros((3, 4), np.int64))), {}),
        ("cross_entropy", (x, t(np.zeros((3, 4), np.float32))), {"ignore_index": 1}),
        ("cross_entropy", (x, idx), {"label_smoothing": 1.5}),
        ("mse_loss", (x, t(np.zeros(5, np.float32))), {}),
        ("mse_loss", (x, x), {"reduction": "foo"}),
        ("mse_loss", (x, x), {"weight": t(np.ones(4, np.float32))}),
        ("binary_cross_entropy", (t(np.full(3, 0.5, np.float32)),
                                  t(np.zeros(4, np.float32))), {}),
        ("binary_cross_entropy", (t([1.5]), t([1.0])), {}),
        ("binary_cross_entropy", (t(np.full(3, 0.5, np.float32)), t(np.zeros(3))), {}),
        ("binary_cross_entropy", (t(np.full(3, 0.5, np.float32)), t(np.zeros(3, np.float32))),
         {"weight": t(np.ones(2, np.float32))}),
        ("binary_cross_entropy_with_logits", (t(np.zeros(3, np.float32)),
                                              t(np.zeros(4, np.float32))), {}),
        ("smooth_l1_loss", (x, x), {"beta": -1.0}),
        ("kl_div", (x, x), {"reduction": "foo"}),
        ("margin_ranking_loss", (t([1.0, 2.0]), t([[1.0, 2.0]]), t([1.0, 1.0])), {}),
        ("gaussian_nll_loss", (x, x, t(np.ones(5, np.float32))), {}),
        ("gaussian_nll_loss", (x, x, -1.0), {}),
    ]


def test_errors(torch):
    import torch.nn.functional as TF

    for (fname, at, kt), (_, ar, kr) in zip(_error_cases(torch), _error_cases(rg)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as et:
                getattr(TF, fname)(*at, **kt)
            with pytest.raises(et.type) as er:
                getattr(RF, fname)(*ar, **kr)
        assert str(er.value) == str(et.value), fname


# -- weights that require grad ------------------------------------------------------------------
# PyTorch has no derivative for the class weight of nll_loss/cross_entropy, nor for the weight of
# the BCE losses or the pos_weight of BCE with logits: such an argument that requires grad is an
# error in grad mode (raised before the kernel's own checks); where the loss is a composite
# (cross_entropy with class probabilities, the weighted mse/l1/huber) the gradient is real.


def _weight_grad_cases(lib):
    F = lib.nn.functional
    t = lib.tensor
    rng = np.random.default_rng(11)

    def w(n, dtype=np.float32):
        return t(rng.uniform(0.5, 2.0, n).astype(dtype), requires_grad=True)

    x = t(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    xc = t(rng.standard_normal((4, 3)).astype(np.float32))  # input without grad
    p = t(rng.uniform(0.1, 0.9, (4, 3)).astype(np.float32), requires_grad=True)
    y = t(rng.uniform(0, 1, (4, 3)).astype(np.float32))
    idx = t([0, 2, 1, 2])
    return [
        lambda: F.nll_loss(x, idx, weight=w(3)),
        lambda: F.nll_loss(xc, idx, weight=w(3), reduction="sum"),
        lambda: F.nll_loss(x[0], t(1), weight=w(3), reduction="none"),
        lambda: F.nll_loss(t(np.zeros((2, 3, 4), np.float32)), t(np.zeros((2, 4), np.int64)),
                           weight=w(3)),
        lambda: F.nll_loss(t(np.zeros((2, 3, 4, 5), np.float32)),
                           t(np.zeros((2, 4, 5), np.int64)), weight=w(3)),
        lambda: F.nll_loss(t(np.zeros((2, 3, 2, 2, 2), np.float32)),
                           t(np.zeros((2, 2, 2, 2), np.int64)), weight=w(3)),
        # the weight check comes before the kernel's checks of target and weight ...
        lambda: F.nll_loss(x, t(np.zeros((4, 2), np.int64)), weight=w(3)),
        lambda: F.nll_loss(x, t(np.zeros(4, np.int32)), weight=w(3)),
        lambda: F.nll_loss(x, idx, weight=w(4)),
        lambda: F.nll_loss(x, idx, weight=w(3, np.float64)),
        lambda: F.nll_loss(x, t([0, 5, 1, 1]), weight=w(3)),
        # ... and after the checks of nll_loss's front end
        lambda: F.nll_loss(x, t([0, 1, 1]), weight=w(3)),
        lambda: F.nll_loss(t(np.zeros((2, 3, 4), np.float32)), t(np.zeros((2, 5), np.int64)),
                           weight=w(3)),
        lambda: F.cross_entropy(x, idx, weight=w(3)),
        lambda: F.cross_entropy(x, idx, weight=w(3), label_smoothing=0.1, reduction="none"),
        lambda: F.cross_entropy(x, idx, weight=w(3), label_smoothing=1.5),
        lambda: F.binary_cross_entropy(p, y, weight=w(3)),
        lambda: F.binary_cross_entropy(p.detach(), y, weight=w(3), reduction="none"),
        lambda: F.binary_cross_entropy(p + 2, y, weight=w(3)),
        lambda: F.binary_cross_entropy(p, y.double(), weight=w(3)),
        lambda: F.binary_cross_entropy(p, y, weight=w(5)),
        lambda: F.binary_cross_entropy_with_logits(x, y, weight=w(3)),
        lambda: F.binary_cross_entropy_with_logits(xc, y, pos_weight=w(3), reduction="sum"),
        lambda: F.binary_cross_entropy_with_logits(x, y, weight=w(3), pos_weight=w(3)),
        lambda: F.binary_cross_entropy_with_logits(x, y, weight=t(np.ones(3, np.float32)),
                                                   pos_weight=w(3)),
        lambda: F.binary_cross_entropy_with_logits(x, y, weight=w(5)),
    ]


def test_weight_requiring_grad_is_an_error(torch, oracle):
    refused = 0
    for k in range(len(_weight_grad_cases(rg))):
        ours, _ = oracle.compare_error(lambda lib: _weight_grad_cases(lib)[k]())  # same text
        refused += "cannot have requires_grad True" in str(ours)
    assert refused == 22  # the other four fail an earlier check


def test_weight_requiring_grad_without_grad_mode(torch, oracle):
    # Under no_grad nothing is recorded, so nothing is refused: the values are computed.
    for k in (0, 2, 3, 13, 16, 21, 23):
        def run(lib, k=k):
            with lib.no_grad():
                out = _weight_grad_cases(lib)[k]()
            return out, out.requires_grad

        oracle.compare(run, rtol=1e-5, atol=1e-6)


def test_composite_losses_differentiate_their_weight(torch):
    import torch.nn.functional as TF

    rng = np.random.default_rng(12)
    x = rng.standard_normal((4, 3))
    prob = rng.dirichlet(np.ones(3), 4)
    w3 = rng.uniform(0.5, 2.0, 3)
    w43 = rng.uniform(0.5, 2.0, (4, 3))
    y = rng.standard_normal((4, 3))
    for reduction in ("mean", "sum", "none"):
        for smoothing in (0.0, 0.2):
            kw = {"reduction": reduction, "label_smoothing": smoothing}
            _compare(torch, lambda a, b, c: TF.cross_entropy(a, b, weight=c, **kw),
                     lambda a, b, c: RF.cross_entropy(a, b, weight=c, **kw), (x, prob, w3),
                     np.float64, (True, False, True))
        for fname in ("mse_loss", "l1_loss", "huber_loss"):
            _compare(torch, lambda a, b, c: getattr(TF, fname)(a, b, reduction=reduction,
                                                                 weight=c),
                     lambda a, b, c: getattr(RF, fname)(a, b, reduction=reduction, weight=c),
                     (x, y, w43), np.float64, (True, True, True))


def test_bce_nodes_have_no_weight_edge(torch):
    # As in PyTorch: the BCE nodes have edges for input and target only; the weights are
    # saved (an in-place change to one is caught in backward) but never differentiated.
    import torch.nn.functional as TF

    for lib, F in ((rg, RF), (torch, TF)):
        x = lib.tensor([0.2, 0.7], requires_grad=True)
        y = lib.tensor([0.0, 1.0], requires_grad=True)
        w = lib.tensor([1.0, 2.0])
        for out in (F.binary_cross_entropy(x, y, weight=w),
                    F.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=w)):
            assert len(out.grad_fn.next_functions) == 2
        out = F.binary_cross_entropy(x, y, weight=w)
        w.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.backward()


# -- modules -----------------------------------------------------------------------------------


def _loss_modules(lib):
    nn = lib.nn
    w = lib.tensor([1.0, 2.0, 3.0])
    return [
        nn.MSELoss(), nn.MSELoss(reduction="sum"), nn.L1Loss(), nn.SmoothL1Loss(beta=0.5),
        nn.HuberLoss(delta=2.0), nn.CrossEntropyLoss(), nn.CrossEntropyLoss(weight=w),
        nn.CrossEntropyLoss(ignore_index=1, label_smoothing=0.1), nn.NLLLoss(),
        nn.NLLLoss(weight=w), nn.BCELoss(), nn.BCELoss(weight=w), nn.BCEWithLogitsLoss(),
        nn.BCEWithLogitsLoss(weight=w, pos_weight=w), nn.KLDivLoss(reduction="batchmean"),
        nn.KLDivLoss(log_target=True, reduction="sum"), nn.CosineEmbeddingLoss(margin=0.1),
        nn.MarginRankingLoss(0.2), nn.SoftMarginLoss(), nn.HingeEmbeddingLoss(2.0),
        nn.PoissonNLLLoss(), nn.GaussianNLLLoss(),
    ]


def test_loss_modules(torch):
    tms, rms = _loss_modules(torch), _loss_modules(rg)
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 3))
    p = rng.uniform(0.05, 0.95, (4, 3))
    idx = rng.integers(0, 3, (4,))
    sign = np.array([1.0, -1.0, 1.0, -1.0])
    for tm, rm in zip(tms, rms):
        assert repr(rm) == repr(tm)
        assert list(rm.state_dict()) == list(tm.state_dict())
        assert rm.reduction == tm.reduction
        name = type(tm).__name__
        if name in ("CrossEntropyLoss", "NLLLoss"):
            args = (x, idx)
        elif name in ("BCELoss",):
            args = (p, p[::-1].copy())
        elif name in ("CosineEmbeddingLoss",):
            args = (x, x[::-1].copy(), sign)
        elif name == "MarginRankingLoss":
            args = (x[:, 0].copy(), x[:, 1].copy(), sign)
        elif name == "GaussianNLLLoss":
            args = (x, x[::-1].copy(), p)
        elif name == "HingeEmbeddingLoss":
            args = (x, np.where(x > 0, 1.0, -1.0))
        else:
            args = (x, p)
        if "weight" in tm.state_dict():
            tm.double()
            rm.double()
        yt = tm(*[torch.tensor(a) for a in args])
        yr = rm(*[rg.tensor(a) for a in args])
        np.testing.assert_allclose(yr.numpy(), yt.numpy(), rtol=1e-10, err_msg=name)


def _ignored_targets(lib):
    out = []
    x0 = [[0.1, 0.2, 0.3], [0.5, -0.1, 0.0], [1.0, 2.0, 3.0]]
    for tgt in ([1, -100, 2], [-100, -100, -100]):
        for red in ("mean", "sum", "none"):
            x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
            loss = lib.nn.functional.cross_entropy(x, lib.tensor(tgt), reduction=red)
            loss.sum().backward()
            out.append((loss.detach(), x.grad))
    x = lib.tensor(x0, dtype=lib.float64)
    per_sample = lib.func.vmap(lib.func.grad(lambda a, b: lib.nn.functional.cross_entropy(a, b)))
    out.append((per_sample(x, lib.tensor([1, -100, 2])),))
    return out


def test_ignored_targets_as_torch(torch):
    """Every target ignored: a NaN mean whose gradient is 0 (PyTorch's kernel never divides at
    an ignored target), and +0 losses at ignored targets; per-sample gradients too."""
    for ours, theirs in zip(_ignored_targets(rg), _ignored_targets(torch)):
        for r, e in zip(ours, theirs):
            np.testing.assert_allclose(r.numpy(), e.numpy(), rtol=1e-12, atol=0)
            assert np.array_equal(np.signbit(r.numpy()) & (r.numpy() == 0),
                                  np.signbit(e.numpy()) & (e.numpy() == 0)) or r.dim() > 1
