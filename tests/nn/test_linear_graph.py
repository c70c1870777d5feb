"""nn.Linear records PyTorch's graph: the weight enters through a TBackward0 view."""

import pytest

import retrograd

torch_ = pytest.importorskip("torch")


def _sig(fn, depth=0):
    if fn is None:
        return "None"
    name = fn.name() if hasattr(fn, "name") else type(fn).__name__
    name = name.replace("torch::autograd::", "")
    nf = fn.next_functions
    if depth > 3 or not nf:
        return name
    return name + "(" + ", ".join(_sig(f, depth + 1) for f, _ in nf) + ")"


@pytest.mark.parametrize("shape", [(5, 4), (3, 5, 4), (4,)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("input_grad", [False, True])
def test_linear_graph_matches_torch(shape, bias, input_grad):
    sigs = []
    for lib in (retrograd, torch_):
        m = lib.nn.Linear(4, 3, bias=bias)
        y = m(lib.randn(*shape, requires_grad=input_grad))
        sigs.append(_sig(y.grad_fn))
    assert sigs[0] == sigs[1]


def test_weight_gradient_is_contiguous_and_right():
    m = retrograd.nn.Linear(4, 3)
    x = retrograd.randn(5, 4)
    m(x).pow(2).sum().backward()
    g = m.weight.grad.numpy()
    assert g.flags["C_CONTIGUOUS"]
    t = torch_.nn.Linear(4, 3)
    with torch_.no_grad():
        t.weight.copy_(torch_.tensor(m.weight.detach().numpy()))
        t.bias.copy_(torch_.tensor(m.bias.detach().numpy()))
    t(torch_.tensor(x.numpy())).pow(2).sum().backward()
    assert abs(g - t.weight.grad.numpy()).max() < 1e-5
