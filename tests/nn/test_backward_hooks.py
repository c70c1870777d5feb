"""Module backward hooks (register_full_backward_hook / _pre_hook), compared with torch."""

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


def _run(lib, replace_in=False, replace_out=False, input_grad=True):
    lib.manual_seed(0)
    m = lib.nn.Linear(3, 2)
    with lib.no_grad():
        m.weight.copy_(lib.tensor([[1., 2., 3.], [-1., 0.5, 2.]]))
        m.bias.copy_(lib.tensor([0.1, -0.2]))
    seen = []

    def hook(mod, grad_input, grad_output):
        seen.append(("hook", [None if g is None else g.detach().numpy().copy() for g in grad_input],
                     [g.detach().numpy().copy() for g in grad_output]))
        if replace_in:
            return tuple(None if g is None else g * 3 for g in grad_input)
        return None

    def pre_hook(mod, grad_output):
        seen.append(("pre", [g.detach().numpy().copy() for g in grad_output]))
        if replace_out:
            return (grad_output[0] * 2,)
        return None

    m.register_full_backward_pre_hook(pre_hook)
    m.register_full_backward_hook(hook)
    x = lib.tensor([[1., 2., 3.], [0.5, -1., 2.]], requires_grad=input_grad)
    y = m(x)
    (y * lib.tensor([[1., 2.], [3., 4.]])).sum().backward()
    grads = [m.weight.grad.numpy(), m.bias.grad.numpy()]
    if input_grad:
        grads.append(x.grad.numpy())
    return seen, grads, y.grad_fn.name()


@pytest.mark.parametrize("replace_in,replace_out,input_grad", [
    (False, False, True), (True, False, True), (False, True, True), (True, True, True),
    (False, False, False),
])
def test_backward_hooks_match_torch(replace_in, replace_out, input_grad):
    ours = _run(retrograd, replace_in, replace_out, input_grad)
    theirs = _run(torch, replace_in, replace_out, input_grad)
    assert ours[2] == theirs[2] == "BackwardHookFunctionBackward"
    assert [s[0] for s in ours[0]] == [s[0] for s in theirs[0]]
    for a, b in zip(ours[0], theirs[0]):
        for ga, gb in zip(a[1:], b[1:]):
            assert len(ga) == len(gb)
            for x, y in zip(ga, gb):
                assert (x is None) == (y is None)
                if x is not None:
                    np.testing.assert_allclose(x, y, rtol=1e-6)
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_hook_handle_removes():
    m = retrograd.nn.Identity()
    calls = []
    h = m.register_full_backward_hook(lambda mod, gi, go: calls.append(1))
    x = retrograd.ones(2, requires_grad=True)
    m(x).sum().backward()
    h.remove()
    m(x).sum().backward()
    assert calls == [1]
