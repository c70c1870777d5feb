"""``retrograd.micro``: the scalar engine agrees with retrograd's tensors, and has no recursion."""

import math

import retrograd as torch
from retrograd.micro import Value


def test_every_op_matches_the_tensor_engine():
    a, b = Value(1.5), Value(-0.5)
    out = ((a * b - a / b + b ** 3 + (-a).exp() + (a * 2.0).relu() - 1.0 / a) * 0.5).tanh()
    out.backward()
    ta = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(-0.5, dtype=torch.float64, requires_grad=True)
    tout = ((ta * tb - ta / tb + tb ** 3 + (-ta).exp() + (ta * 2.0).relu() - 1.0 / ta) * 0.5)
    tout = tout.tanh()
    tout.backward()
    assert math.isclose(out.data, tout.item(), rel_tol=1e-12)
    assert math.isclose(a.grad, ta.grad.item(), rel_tol=1e-12)
    assert math.isclose(b.grad, tb.grad.item(), rel_tol=1e-12)


def test_a_long_chain_needs_no_recursion():
    x = Value(1.0)
    y = x
    for _ in range(20000):
        y = y * 1.0 + 0.0
    y.backward()
    assert x.grad == 1.0
