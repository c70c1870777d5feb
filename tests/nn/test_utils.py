"""Tests for ``retrograd.nn.utils``: gradient clipping and parameter/vector conversion, against
PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn  # noqa: F401 - binds rg.nn


def grads_setup(lib, dtype_name="float32", with_none=True):
    rng = np.random.default_rng(0)
    dt = getattr(lib, dtype_name)
    shapes = [(3, 4), (5,), (2, 2, 2)]
    params = []
    for i, shape in enumerate(shapes):
        p = lib.nn.Parameter(lib.tensor(rng.standard_normal(shape), dtype=dt))
        p.grad = lib.tensor(rng.standard_normal(shape) * (i + 1), dtype=dt)
        params.append(p)
    if with_none:
        params.append(lib.nn.Parameter(lib.zeros(2, dtype=dt)))  # no grad
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, "inf", 0.5])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
def test_clip_grad_norm_matches_torch(torch, norm_type, max_norm, dtype_name):
    nt = float(norm_type)
    mine, theirs = grads_setup(rg, dtype_name), grads_setup(torch, dtype_name)
    total = rg.nn.utils.clip_grad_norm_(mine, max_norm, nt)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, nt)
    assert isinstance(total, rg.Tensor) and total.dim() == 0
    assert total.dtype == getattr(rg, dtype_name) and not total.requires_grad
    tol = 1e-5 if dtype_name == "float32" else 1e-12
    assert total.item() == pytest.approx(expected.item(), rel=tol)
    for p, q in zip(mine, theirs):
        assert (p.grad is None) == (q.grad is None)
        if p.grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=tol, atol=tol)


def test_clip_grad_norm_single_tensor_generator_and_empty(torch):
    p = rg.ones(4, requires_grad=True)
    p.grad = rg.full((4,), 3.0)
    assert rg.nn.utils.clip_grad_norm_(p, 1.0).item() == pytest.approx(6.0)
    assert p.grad.tolist() == pytest.approx([0.5] * 4, rel=1e-5)
    lin = rg.nn.Linear(2, 2)
    lin(rg.ones(1, 2)).sum().backward()
    rg.nn.utils.clip_grad_norm_(lin.parameters(), 0.1)
    assert rg.nn.utils.get_total_norm([lin.weight.grad, lin.bias.grad]).item() == \
        pytest.approx(0.1, rel=1e-4)
    assert repr(rg.nn.utils.clip_grad_norm_([], 1.0)) == repr(
        torch.nn.utils.clip_grad_norm_([], 1.0))
    with pytest.warns(UserWarning, match="empty generator"):
        rg.nn.utils.clip_grad_norm_((q for q in []), 1.0)


# NumPy warns on inf * 0 inside Tensor.mul_ (PyTorch does not); a core issue, not clipping's.
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("bad", [math.inf, math.nan])
def test_clip_grad_norm_nonfinite(torch, bad):
    def run(lib, **kw):
        p = lib.ones(2, requires_grad=True)
        p.grad = lib.tensor([1.0, bad])
        try:
            return lib.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True, **kw)
        except RuntimeError as e:
            return str(e)
    assert run(rg) == run(torch)
    p = rg.ones(2, requires_grad=True)
    p.grad = rg.tensor([1.0, bad])
    total = rg.nn.utils.clip_grad_norm_([p], 1.0)  # default: no error, scaled anyway
    assert not math.isfinite(total.item())


def test_clip_grad_value_matches_torch(torch):
    mine, theirs = grads_setup(rg), grads_setup(torch)
    assert rg.nn.utils.clip_grad_value_(mine, 0.7) is None
    torch.nn.utils.clip_grad_value_(theirs, 0.7)
    for p, q in zip(mine, theirs):
        if p.grad is not None:
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    single = rg.ones(1, requires_grad=True)
    single.grad = rg.tensor([-5.0])
    rg.nn.utils.clip_grad_value_(single, 2)
    assert single.grad.tolist() == [-2.0]


def test_parameters_to_vector_and_back(torch):
    mine, theirs = grads_setup(rg, with_none=False), grads_setup(torch, with_none=False)
    v = rg.nn.utils.parameters_to_vector(mine)
    np.testing.assert_array_equal(v.detach().numpy(),
                                  torch.nn.utils.parameters_to_vector(theirs).detach().numpy())
    assert v.requires_grad  # differentiable, as in PyTorch
    v.sum().backward()
    new = np.arange(v.numel(), dtype=np.float32)
    rg.nn.utils.vector_to_parameters(rg.tensor(new), mine)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), theirs)
    for p, q in zip(mine, theirs):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        assert isinstance(p, rg.nn.Parameter) and p.requires_grad and p.is_leaf


def test_vector_to_parameters_type_error(torch):
    for lib in (rg, torch):
        with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
            lib.nn.utils.vector_to_parameters([1.0], [lib.zeros(1)])


def test_clip_grad_norm_deprecated_alias():
    p = rg.ones(1, requires_grad=True)
    p.grad = rg.tensor([2.0])
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        rg.nn.utils.clip_grad_norm(p, 1.0)
