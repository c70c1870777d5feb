"""ops/fused.py: composites recorded as one node with PyTorch's kernel name.

The op table checks their values, gradients (every order) and grad_fn names; here, the rest of
what a node is: its edges (``next_functions``) against torch's, the saved-input checks, a freed
graph, no-grad calls, and that the inner graph dies with the node (no reference cycle).
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import retrograd
from retrograd.ops.fused import fused, node_class


def _edges(t):
    return [None if f is None else (f.name(), nr) for f, nr in t.grad_fn.next_functions]


CASES = {
    "conv3d": lambda lib, x, w: lib.nn.functional.conv3d(x, w, None, padding=1),
    "conv_transpose3d": lambda lib, x, w: lib.nn.functional.conv_transpose3d(x, w),
    "cdist": lambda lib, x, w: lib.cdist(x.reshape(2, -1), w.reshape(4, -1)[:, :8]),
    "embedding_bag": lambda lib, x, w: lib.nn.functional.embedding_bag(
        lib.tensor([[0, 1], [1, 0]]), w.reshape(2, -1)),
    "max_unpool1d": lambda lib, x, w: lib.nn.functional.max_unpool1d(
        x.reshape(1, 2, 8)[..., :2], lib.tensor([[[1, 2], [0, 3]]]), 2),
    "lu_solve": lambda lib, x, w: lib.linalg.lu_solve(
        *lib.linalg.lu_factor(x.reshape(4, 4) + 4 * lib.eye(4)), w.reshape(4, 8)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_next_functions_against_torch(torch, name):
    rng = np.random.default_rng(0)
    xa, wa = rng.standard_normal((1, 2, 2, 2, 2)), rng.standard_normal((2, 2, 2, 2, 2))
    outs = []
    for lib in (retrograd, torch):
        x = lib.tensor(xa, requires_grad=True)
        w = lib.tensor(wa, requires_grad=name != "conv_transpose3d")
        outs.append(CASES[name](lib, x, w))
    assert outs[0].grad_fn.name() == outs[1].grad_fn.name()
    assert _edges(outs[0]) == _edges(outs[1])
    np.testing.assert_allclose(outs[0].detach().numpy(), outs[1].detach().numpy(), rtol=1e-6)


def _op(x):
    return fused("NormBackward1", lambda t: (t * t).sum().sqrt(), x)


def test_one_node_every_order():
    x = retrograd.tensor([1.0, -2.0], requires_grad=True, dtype=retrograd.float64)
    y = _op(x)
    assert type(y.grad_fn) is node_class("NormBackward1")
    assert y.grad_fn.next_functions[0][0] is x.grad_fn or \
        y.grad_fn.next_functions[0][0].variable is x
    (g,) = retrograd.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), x.detach().numpy() / np.sqrt(5.0))
    (h,) = retrograd.autograd.grad(g.sum(), x)
    v = x.detach().numpy()
    n = np.sqrt(5.0)
    np.testing.assert_allclose(h.numpy(), (1 / n) * np.ones(2) - v * v.sum() / n**3)


def test_saved_inputs_checked_and_freed():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = _op(x)
    with retrograd.no_grad():
        x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = _op(x)
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_retain_graph_and_inplace_on_result():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = fused("ExpBackward0", lambda t: t.exp(), x)  # the inner exp saves its result
    y.backward(retrograd.ones(2), retain_graph=True)
    y.backward(retrograd.ones(2))
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]), rtol=1e-6)
    y = fused("ExpBackward0", lambda t: t.exp(), x)
    with retrograd.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward(retrograd.ones(2))


def test_no_grad_records_nothing():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    with retrograd.no_grad():
        y = _op(x)
    assert y.grad_fn is None and not y.requires_grad
    assert _op(retrograd.tensor([3.0, 4.0])).item() == 5.0


def test_graph_dies_with_its_output():
    gc.disable()
    try:
        x = retrograd.tensor([1.0, 2.0], requires_grad=True)
        y = _op(x)
        node = weakref.ref(y.grad_fn)
        inner = weakref.ref(y.grad_fn._inner[0].grad_fn)
        del y
        assert node() is None and inner() is None
    finally:
        gc.enable()
