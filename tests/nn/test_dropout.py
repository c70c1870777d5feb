"""Tests for dropout: statistics, scaling, the mask shared by forward and backward, seeding,
channel-wise variants, and the modules' reprs and errors (against PyTorch where it applies)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn  # noqa: F401
import retrograd.nn.functional as F


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
@pytest.mark.parametrize("dt", [rg.float32, rg.float64])
def test_dropout_statistics_and_scale(p, dt):
    rg.manual_seed(0)
    x = rg.ones(200_000, dtype=dt, requires_grad=True)
    y = F.dropout(x, p)
    vals = y.detach().numpy()
    kept = vals != 0
    assert y.dtype == dt
    np.testing.assert_allclose(vals[kept], 1 / (1 - p), rtol=1e-6)
    assert abs(kept.mean() - (1 - p)) < 0.005
    assert abs(vals.mean() - 1.0) < 0.02
    assert y.grad_fn.name() == "MulBackward0"
    # The backward uses the very mask of the forward.
    y.backward(rg.full_like(y, 3.0))
    np.testing.assert_allclose(x.grad.numpy(), 3.0 * vals)


def test_dropout_seeding_and_identity():
    rg.manual_seed(7)
    a = F.dropout(rg.ones(100), 0.5)
    rg.manual_seed(7)
    b = F.dropout(rg.ones(100), 0.5)
    assert a.tolist() == b.tolist()
    c = F.dropout(rg.ones(100), 0.5)
    assert a.tolist() != c.tolist()
    x = rg.randn(5, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    y = F.dropout(x, 1.0)
    assert y.tolist() == [0.0] * 5 and y.grad_fn.name() == "MulBackward0"


def test_dropout_inplace():
    rg.manual_seed(1)
    x = rg.ones(1000)
    y = F.dropout(x, 0.5, inplace=True)
    assert y is x
    assert set(x.tolist()) == {0.0, 2.0}


def test_dropout_gradcheck():
    x = rg.randn(6, dtype=rg.float64, requires_grad=True)

    def f(x):
        rg.manual_seed(3)
        return F.dropout(x, 0.4)

    assert rg.autograd.gradcheck(f, (x,))
    assert rg.autograd.gradgradcheck(f, (x,))


@pytest.mark.parametrize("fn,shape,mshape", [
    ("dropout2d", (8, 16, 3, 3), (8, 16, 1, 1)),
    ("dropout2d", (8, 16, 3), (8, 16, 1)),
    ("dropout1d", (8, 16, 5), (8, 16, 1)),
    ("dropout1d", (16, 5), (16, 1)),
    ("dropout3d", (4, 8, 2, 2, 2), (4, 8, 1, 1, 1)),
    ("dropout3d", (8, 2, 2, 2), (8, 1, 1, 1)),
])
def test_channel_dropout(fn, shape, mshape):
    rg.manual_seed(0)
    x = rg.ones(*shape, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = getattr(F, fn)(x, 0.5)
    v = y.detach().numpy()
    axes = tuple(i for i, s in enumerate(mshape) if s == 1)
    assert (v.min(axis=axes) == v.max(axis=axes)).all()
    assert set(np.unique(v)) <= {0.0, 2.0} and len(np.unique(v)) == 2
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), v)


def test_channel_dropout_errors_and_warnings(torch):
    with pytest.raises(RuntimeError) as et:
        torch.nn.functional.dropout1d(torch.ones(2, 3, 4, 5))
    with pytest.raises(RuntimeError) as er:
        F.dropout1d(rg.ones(2, 3, 4, 5))
    assert str(er.value) == str(et.value)
    for shape in [(3, 4), (2, 3, 4)]:
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter("always")
            torch.nn.functional.dropout2d(torch.ones(*shape))
        with warnings.catch_warnings(record=True) as wr:
            warnings.simplefilter("always")
            F.dropout2d(rg.ones(*shape))
        assert [str(w.message) for w in wr] == [str(w.message) for w in wt]


def test_alpha_dropout():
    rg.manual_seed(0)
    x = rg.randn(200_000, dtype=rg.float64, requires_grad=True)
    y = F.alpha_dropout(x, 0.2, training=True)
    v = y.detach().numpy()
    assert abs(v.mean()) < 0.02 and abs(v.std() - 1) < 0.02
    y.sum().backward()
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * 0.2 + 1) * 0.8)
    assert set(np.round(np.unique(x.grad.numpy()), 9)) == {0.0, round(a, 9)}
    assert F.alpha_dropout(x, 0.2) is x


@pytest.mark.parametrize("cls", ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
                                 "AlphaDropout", "FeatureAlphaDropout"])
def test_dropout_modules(torch, cls):
    for args in [(), (0.2,), (0.3, True)]:
        assert repr(getattr(rg.nn, cls)(*args)) == repr(getattr(torch.nn, cls)(*args))
    with pytest.raises(ValueError) as et:
        getattr(torch.nn, cls)(1.5)
    with pytest.raises(ValueError) as er:
        getattr(rg.nn, cls)(1.5)
    assert str(er.value) == str(et.value)
    m = getattr(rg.nn, cls)(0.5).eval()
    x = rg.randn(2, 3, 4) if cls == "Dropout1d" else rg.randn(2, 3, 4, 4)
    tm = getattr(torch.nn, cls)(0.5).eval()
    tx = torch.randn(tuple(x.shape))
    # an unbatched input comes back as a view (PyTorch adds and removes a batch dimension)
    assert (m(x) is x) == (tm(tx) is tx)


def test_dropout_module_train():
    rg.manual_seed(0)
    m = rg.nn.Dropout(0.25)
    y = m(rg.ones(10_000))
    assert set(y.unique().tolist()) == {0.0, float(np.float32(1 / 0.75))}
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got -0.1"):
        F.dropout(rg.ones(2), -0.1)
