"""Errors that name the line: PyTorch's text first, then where the op concerned was created."""

import os
import subprocess
import sys
import textwrap

import pytest

import retrograd as torch

from ..oracle import without_provenance

HERE = os.path.abspath(__file__)


def _line_of(marker: str) -> int:
    with open(HERE) as f:
        for i, line in enumerate(f, 1):
            if line.rstrip().endswith(f"# <{marker}>"):
                return i
    raise AssertionError(marker)


def _at(marker: str) -> str:
    return f'File "{HERE}", line {_line_of(marker)}, in '


def test_backward_through_a_freed_graph_names_the_forward_line():
    x = torch.ones(3, requires_grad=True)
    y = x.exp().sum()  # <exp>
    y.backward()
    with pytest.raises(RuntimeError) as e:
        y.backward()
    msg = str(e.value)
    assert msg.startswith("Trying to backward through the graph a second time")
    assert f"\n  ExpBackward0 was created by the forward call at: {_at('exp')}" in msg


def test_saved_tensor_modified_in_place_names_both_lines():
    w = torch.ones(3, requires_grad=True)
    a = w.exp()  # <save>
    a.add_(1)  # <modify>
    with pytest.raises(RuntimeError) as e:
        a.sum().backward()
    msg = str(e.value)
    assert msg.startswith("one of the variables needed for gradient computation has been "
                          "modified by an inplace operation: [torch.FloatTensor [3]], which is "
                          "output 0 of Exp, is at version 1; expected version 0 instead.")
    assert f"It was saved by ExpBackward0, created by the forward call at: {_at('save')}" in msg
    assert f"It was modified by the in-place call at: {_at('modify')}" in msg


def test_saved_input_modified_by_an_optimizer_step_names_the_step():
    w = torch.ones(3, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    loss = (w * w).sum()  # <mul>
    loss.backward(retain_graph=True)
    opt.step()  # <step>
    with pytest.raises(RuntimeError) as e:
        loss.backward()
    msg = str(e.value)
    assert "created by the forward call at: " + _at("mul") in msg
    assert "modified by the in-place call at: " + _at("step") in msg


def test_in_place_on_a_leaf_names_the_call():
    w = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        w.mul_(2)  # <leaf>
    assert str(e.value).startswith(
        "a leaf Variable that requires grad is being used in an in-place operation.\n")
    assert _at("leaf") in str(e.value)


def test_custom_function_wrong_gradient_names_the_apply_line():
    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return torch.ones(3, 4)

    y = Wrong.apply(torch.ones(5, requires_grad=True))  # <apply>
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    assert without_provenance(str(e.value)) == (
        "Function WrongBackward returned an invalid gradient at index 0 - got [3, 4] but "
        "expected shape compatible with [5]")
    assert "WrongBackward was created by the forward call at: " + _at("apply") in str(e.value)


def test_ops_inside_library_code_are_attributed_to_the_users_line():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh())
    out = model(torch.ones(1, 2))  # <model>
    out.sum().backward()
    with pytest.raises(RuntimeError) as e:
        out.sum().backward()
    assert "TanhBackward0 was created by the forward call at: " + _at("model") in str(e.value)


def test_provenance_can_be_turned_off():
    code = textwrap.dedent("""
        import retrograd as torch
        x = torch.ones(3, requires_grad=True)
        y = x.exp().sum()
        y.backward()
        try:
            y.backward()
        except RuntimeError as e:
            print(repr(str(e)))
    """)
    env = dict(os.environ, RETROGRAD_PROVENANCE="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert "Trying to backward through the graph a second time" in out
    assert "created by the forward call" not in out


def test_nodes_made_under_forward_ad_name_the_user_line():
    # Under an observer (forward AD) the op's node and its tangent's nodes are made below the
    # observer's frames: all of them name the line of the op call.
    from retrograd.autograd import forward_ad as fwAD
    from retrograd.autograd.provenance import describe

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, torch.tensor([1.0, 1.0]))  # <make>
        y = (d * d).sin()  # <dual>
        tangent = fwAD.unpack_dual(y).tangent
    seen, stack = set(), [y.grad_fn, tangent.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen or isinstance(n, torch.autograd.graph.AccumulateGrad):
            continue
        seen.add(n)
        stack += [m for m, _ in n.next_functions]
    ops = [n for n in seen if n.name() != "ViewBackward0"]  # make_dual's view: its own line
    assert len(ops) >= 4  # sin, mul and the tangent's own nodes
    for n in ops:
        assert describe(n._site).startswith(_at("dual")), n.name()
