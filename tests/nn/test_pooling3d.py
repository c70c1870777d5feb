"""3-D convolution and pooling, max unpooling, power-average and fractional max pooling
(functional and modules) against PyTorch: values, indices, gradients, reprs, errors."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rt

from ..oracle import compare_error, copy_state, run_both

TOL = dict(rtol=1e-7, atol=1e-9)
R = np.random.default_rng(0)
X = R.standard_normal((2, 4, 5, 4, 6))
POS = np.abs(X) + 0.1

# (function name, input arrays, positional args, keyword args)
CASES = [
    ("conv3d", [X, R.standard_normal((6, 2, 2, 3, 2)), R.standard_normal(6)], (),
     dict(stride=(1, 2, 1), padding=(1, 0, 2), dilation=(2, 1, 1), groups=2)),
    ("conv3d", [X[0], R.standard_normal((6, 2, 1, 3, 2))], (), dict(padding="same", groups=2)),
    ("conv3d", [X, R.standard_normal((3, 4, 1, 2, 2))], (), dict(padding="valid")),
    ("conv_transpose3d", [X, R.standard_normal((4, 3, 2, 3, 2)), R.standard_normal(6)], (),
     dict(stride=(2, 1, 3), padding=(1, 0, 1), output_padding=(1, 0, 2), groups=2,
          dilation=(1, 2, 1))),
    ("conv_transpose3d", [X[0], R.standard_normal((4, 3, 2, 2, 2))], (), dict(stride=2)),
    ("max_pool3d", [X], (3,), dict(stride=2, padding=1, dilation=(1, 1, 2), ceil_mode=True,
                                   return_indices=True)),
    ("max_pool3d", [X[0]], (2,), dict(return_indices=True)),
    ("avg_pool3d", [X], (3,), dict(stride=2, padding=1, ceil_mode=True)),
    ("avg_pool3d", [X], (3,), dict(stride=2, padding=1, ceil_mode=True,
                                   count_include_pad=False)),
    ("avg_pool3d", [X[0]], ((2, 3, 2),), dict(stride=1, padding=1, divisor_override=5)),
    ("adaptive_avg_pool3d", [X], ((3, None, 4),), {}),
    ("adaptive_max_pool3d", [X], ((3, 2, 4),), dict(return_indices=True)),
    ("adaptive_max_pool3d", [X[0]], (2,), {}),
    ("lp_pool1d", [POS[:, :, 0, 0]], (2.0, 3, 2, True), {}),
    ("lp_pool2d", [POS[:, :, 0]], (3, (2, 3)), {}),
    ("lp_pool3d", [POS], (1.5, 2), {}),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_functional_matches_torch(torch, case):
    name, arrays, args, kw = case
    fns = [lambda *t, lib=lib: getattr(lib.nn.functional, name)(*t, *args, **kw)
           for lib in (rt, torch)]
    # composites here, PyTorch's own kernels there: grad_fn names differ
    run_both(torch, fns[0], fns[1], arrays, tol=TOL, grad_fn=False)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_matches_torch(torch, nd):
    x = X[(slice(None), slice(None)) + (0,) * (3 - nd)]
    pool = getattr(torch.nn.functional, f"max_pool{nd}d")
    vals, idx = pool(torch.tensor(x), 2, stride=2, return_indices=True)
    for kw in (dict(output_size=x.shape[2:]), dict(output_size=x.shape), {}):
        if not kw and any(s % 2 for s in x.shape[2:]):
            continue
        fns = [lambda v, lib=lib, kw=kw: getattr(lib.nn.functional, f"max_unpool{nd}d")(
            v, lib.tensor(idx.numpy()), 2, **kw) for lib in (rt, torch)]
        run_both(torch, fns[0], fns[1], [vals.numpy()], tol=TOL, grad_fn=False)


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool_matches_torch(torch, nd):
    x = X if nd == 3 else X[:, :, 0]
    u = R.random((2, 4, nd))
    for kw in (dict(output_size=(3, 2, 3) if nd == 3 else (3, 4)),
               dict(output_ratio=(0.4,) * nd), dict(output_size=2, kernel_size=1)):
        kw = dict(dict(kernel_size=2), **kw)
        fns = [lambda a, lib=lib, kw=kw: getattr(lib.nn.functional, f"fractional_max_pool{nd}d")(
            a, return_indices=True, _random_samples=lib.tensor(u), **kw) for lib in (rt, torch)]
        run_both(torch, fns[0], fns[1], [x], tol=TOL, grad_fn=False)


def test_fractional_max_pool_draws_samples():
    rt.manual_seed(0)
    x = rt.tensor(X[:, :, 0])
    a = rt.nn.functional.fractional_max_pool2d(x, 2, output_size=3)
    rt.manual_seed(0)
    u = rt.rand(2, 4, 2, dtype=rt.float64)
    b = rt.nn.functional.fractional_max_pool2d(x, 2, output_size=3, _random_samples=u)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


LAYERS = [
    ("Conv3d", (4, 6, 3), dict(padding=1, groups=2), [(2, 4, 3, 4, 5)]),
    ("Conv3d", (4, 2, (1, 2, 3)), dict(stride=2, padding=(0, 1, 1), padding_mode="circular",
                                       bias=False), [(1, 4, 3, 4, 5)]),
    ("Conv3d", (4, 2, 3), dict(padding="same", padding_mode="reflect"), [(4, 3, 4, 5)]),
    ("ConvTranspose3d", (4, 2, 2), dict(stride=2), [(2, 4, 2, 3, 2)]),
    ("ConvTranspose3d", (4, 6, 3), dict(stride=(1, 2, 2), padding=1, output_padding=(0, 1, 1),
                                        groups=2, dilation=1), [(1, 4, 2, 3, 2)]),
    ("MaxPool3d", (2,), {}, [(2, 3, 4, 4, 4)]),
    ("MaxPool3d", ((1, 2, 3),), dict(stride=1, padding=(0, 1, 1), ceil_mode=True),
     [(1, 2, 3, 4, 5)]),
    ("AvgPool3d", (2,), {}, [(2, 3, 4, 4, 4)]),
    ("AvgPool3d", (3, 2, 1, True, False, 4), {}, [(1, 2, 5, 4, 5)]),
    ("AdaptiveAvgPool3d", ((2, None, 3),), {}, [(2, 3, 4, 4, 5)]),
    ("AdaptiveMaxPool3d", (2,), dict(return_indices=True), [(2, 3, 4, 4, 5)]),
    ("LPPool1d", (2, 3), {}, [(2, 3, 7)]),
    ("LPPool2d", (1.5, (2, 3)), dict(stride=1, ceil_mode=True), [(2, 3, 4, 5)]),
    ("LPPool3d", (2, 2), {}, [(1, 2, 4, 4, 4)]),
]


@pytest.mark.parametrize("case", LAYERS, ids=[f"{c[0]}-{i}" for i, c in enumerate(LAYERS)])
def test_layer_matches_torch(torch, case):
    name, args, kw, shapes = case
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(*args, **kw).double()
    rm = getattr(rt.nn, name)(*args, **kw).double()
    assert repr(rm) == repr(tm)
    assert list(rm.state_dict()) == list(tm.state_dict())
    assert {k: v for k, v in vars(rm).items() if not k.startswith("_")} == \
        {k: v for k, v in vars(tm).items() if not k.startswith("_")}
    copy_state(tm, rm)
    xs = [np.abs(R.standard_normal(s)) + 0.1 for s in shapes]
    run_both(torch, rm, tm, xs, tol=TOL, grad_fn=False, modules=(rm, tm))


def test_unpool_and_fractional_layers_match_torch(torch):
    for nd in (1, 2, 3):
        x = X[(slice(None), slice(None)) + (0,) * (3 - nd)]
        tp = getattr(torch.nn, f"MaxPool{nd}d")(2, stride=1, return_indices=True)
        tu, ru = (getattr(lib.nn, f"MaxUnpool{nd}d")(2, stride=1) for lib in (torch, rt))
        assert repr(ru) == repr(tu)
        vals, idx = tp(torch.tensor(x))
        ind = idx.numpy()
        fns = [lambda v, m=m, lib=lib, i=ind, o=x.shape[2:]: m(v, lib.tensor(i), output_size=o)
               for m, lib in ((ru, rt), (tu, torch))]
        run_both(torch, fns[0], fns[1], [vals.numpy()], tol=TOL, grad_fn=False)
    for nd, kw in ((2, dict(output_size=3)), (2, dict(output_ratio=0.5, return_indices=True)),
                   (3, dict(output_ratio=(0.5, 0.5, 0.5)))):
        u = R.random((2, 4, nd))
        tm, rm = (getattr(lib.nn, f"FractionalMaxPool{nd}d")(
            2, _random_samples=lib.tensor(u), **kw) for lib in (torch, rt))
        assert repr(rm) == repr(tm)
        assert list(rm.state_dict()) == list(tm.state_dict())
        assert (rm.kernel_size, rm.output_size, rm.output_ratio) == \
            (tm.kernel_size, tm.output_size, tm.output_ratio)
        x = X if nd == 3 else X[:, :, 0]
        run_both(torch, rm, tm, [x], tol=TOL, grad_fn=False)


def test_errors_match_torch():
    x5 = lambda lib: lib.ones(1, 2, 5, 5, 5)  # noqa: E731
    cases = [
        lambda lib: lib.nn.functional.max_pool3d(x5(lib), 3, padding=2),
        lambda lib: lib.nn.functional.avg_pool3d(x5(lib), 3, padding=2),
        lambda lib: lib.nn.functional.conv3d(x5(lib), lib.ones(4, 2, 2, 2, 2), padding="same",
                                             stride=2),
        lambda lib: lib.nn.functional.conv3d(x5(lib), lib.ones(4, 3, 2, 2, 2)),
        lambda lib: lib.nn.functional.conv3d(lib.ones(5, 5, 5), lib.ones(4, 2, 2, 2, 2)),
        lambda lib: lib.nn.functional.max_unpool2d(lib.ones(1, 2, 2), lib.zeros(1, 2, 2,
                                                                               dtype=lib.int64),
                                                   2, output_size=(7, 7)),
        lambda lib: lib.nn.functional.fractional_max_pool2d(lib.ones(1, 5, 6), 2),
        lambda lib: lib.nn.functional.fractional_max_pool2d(lib.ones(1, 5, 6), 2,
                                                            output_size=(5, 5)),
        lambda lib: lib.nn.functional.fractional_max_pool3d(lib.ones(1, 5, 4, 6), 2,
                                                            output_size=(3, 3, 3)),
        lambda lib: lib.nn.FractionalMaxPool2d(2),
        lambda lib: lib.nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5),
        lambda lib: lib.nn.FractionalMaxPool2d(2, output_ratio=1.5),
    ]
    for case in cases:
        compare_error(case)


def test_random_draws_match_torch_with_the_same_seed(torch):
    """Fractional pooling's samples, spectral norm's starting vectors and a lazy layer's
    initialisation come from the same generator draws as PyTorch's."""
    x = X[:, :, :4]
    out = []
    for lib in (torch, rt):
        lib.manual_seed(0)
        a = lib.nn.functional.fractional_max_pool2d(lib.tensor(x[:, :, 0]), 2, output_size=(2, 3))
        lib.manual_seed(0)
        b = lib.nn.functional.fractional_max_pool3d(lib.tensor(x), 2, output_size=(1, 2, 3))
        lib.manual_seed(0)
        m = lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(3, 4))
        lib.manual_seed(0)
        lazy = lib.nn.LazyLinear(4)
        lazy(lib.ones(2, 3))
        out.append([a.numpy(), b.numpy(), m.parametrizations.weight[0]._u.numpy(),
                    lazy.weight.detach().numpy()])
    for a, b in zip(*out):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
