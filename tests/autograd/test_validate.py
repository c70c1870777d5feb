"""The engine checks every gradient a node returns against its input's recorded metadata
(PyTorch's ``validate_outputs``): broadcast dimensions are summed away, the dtype is cast to
the input's, and any other shape is an error naming the node, the index and both shapes."""

import numpy as np
import pytest

import retrograd as torch
from retrograd.autograd.graph import Node
from retrograd.ops._apply import apply

from ..oracle import without_provenance


class WrongShapeBackward0(Node):
    """A deliberately broken internal node: its gradient has the wrong shape."""

    def backward(self, xp, g):
        return xp.expand(xp.sum(g), self._shape)


class WrongDtypeBackward0(Node):
    def backward(self, xp, g):
        return xp.cast(g, np.float64)


class TooFewBackward0(Node):
    def backward(self, xp, g):
        return (g,)


def _broken(cls, x, **attrs):
    return apply(cls, x._data * 2, x, **attrs)


def test_internal_node_wrong_shape_raises():
    x = torch.ones(5, requires_grad=True)
    y = _broken(WrongShapeBackward0, x, _shape=(3, 4))
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    assert without_provenance(str(e.value)) == (
        "Function WrongShapeBackward0 returned an invalid gradient at index 0 - got [3, 4] but "
        "expected shape compatible with [5]"
    )


def test_internal_node_broadcast_gradient_is_summed():
    x = torch.ones(4, requires_grad=True)
    _broken(WrongShapeBackward0, x, _shape=(3, 4)).sum().backward()
    assert x.grad.tolist() == [12.0] * 4  # each of 3 rows carries the sum 4


def test_internal_node_dtype_is_cast():
    x = torch.ones(3, requires_grad=True)
    _broken(WrongDtypeBackward0, x).sum().backward()
    assert x.grad.dtype is torch.float32
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_internal_node_wrong_count_raises():
    x = torch.ones(3, requires_grad=True)
    y = torch.ones(3, requires_grad=True)
    z = apply(TooFewBackward0, x._data + y._data, x, y)
    with pytest.raises(RuntimeError, match=r"function TooFewBackward0 returned an incorrect "
                                           r"number of gradients \(expected 2, got 1\)"):
        z.sum().backward()


def test_check_runs_under_create_graph():
    x = torch.ones(4, requires_grad=True)
    y = _broken(WrongShapeBackward0, x, _shape=(3, 4))
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    assert g.tolist() == [12.0] * 4
    x5 = torch.ones(5, requires_grad=True)
    with pytest.raises(RuntimeError, match="invalid gradient at index 0"):
        torch.autograd.grad(_broken(WrongShapeBackward0, x5, _shape=(3, 4)).sum(), x5,
                            create_graph=True)


def _function(grad_fn):
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return grad_fn(g)

    return Bad


def test_user_function_wrong_shape_raises():
    bad = _function(lambda g: torch.ones(3, 4))
    x = torch.ones(5, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        bad.apply(x).sum().backward()
    assert without_provenance(str(e.value)) == (
        "Function BadBackward returned an invalid gradient at index 0 - got [3, 4] but "
        "expected shape compatible with [5]"
    )


def test_user_function_scalar_gradient_for_vector_raises():
    bad = _function(lambda g: torch.ones(()))
    x = torch.ones(4, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"got \[\] but expected shape compatible with \[4\]"):
        bad.apply(x).sum().backward()


def test_user_function_broadcast_and_dtype_fixed():
    x = torch.ones(4, requires_grad=True)
    _function(lambda g: torch.ones(3, 4)).apply(x).sum().backward()
    assert x.grad.tolist() == [3.0] * 4
    x = torch.ones(4, requires_grad=True)
    _function(lambda g: g.double()).apply(x).sum().backward()
    assert x.grad.dtype is torch.float32


def test_matches_torch_messages():
    torch_ = pytest.importorskip("torch")
    if torch_ is torch:
        pytest.skip("torch resolves to retrograd")

    class F(torch_.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return torch_.ones(3, 4)

    with pytest.raises(RuntimeError) as theirs:
        F.apply(torch_.ones(5, requires_grad=True)).sum().backward()
    bad = _function(lambda g: torch.ones(3, 4))
    with pytest.raises(RuntimeError) as ours:
        bad.apply(torch.ones(5, requires_grad=True)).sum().backward()
    assert without_provenance(str(ours.value)) == \
        str(theirs.value).replace("FBackward", "BadBackward")
