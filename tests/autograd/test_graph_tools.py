"""Graph drawing and memory reports (``retrograd.autograd.graph``: to_dot, draw, memory_report)."""

import os
import re
import shutil

import numpy as np
import pytest

import retrograd as torch
from retrograd import nn
from retrograd.autograd.graph import draw, memory_report, to_dot


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))


def test_to_dot_names_every_node_leaf_and_saved_tensor():
    m = _mlp()
    x = torch.randn(5, 4)
    y = m(x).pow(2).sum()
    dot = to_dot(y, params=dict(m.named_parameters()))
    assert dot.startswith("digraph {") and dot.rstrip().endswith("}")
    boxes = re.findall(r'n\d+ \[label="([^"]*)", fillcolor=(\w+)\]', dot)
    # (PyTorch's linear also records a TBackward0 per weight; the drawing shows what is there.)
    names = sorted(b[0] for b in boxes if b[0] != "TBackward0")
    assert names == sorted([
        "SumBackward0", "PowBackward0", "AddmmBackward0", "TanhBackward0", "AddmmBackward0",
        "0.weight\\n(8, 4)", "0.bias\\n(8)", "2.weight\\n(2, 8)", "2.bias\\n(2)",
    ])
    # The output is highlighted, leaves are light blue.
    assert ("SumBackward0", "darkolivegreen1") in boxes
    assert ("0.weight\\n(8, 4)", "lightblue") in boxes
    # Saved tensors: shape, dtype and bytes (tanh's result: 5 x 8 float32 = 160 bytes).
    assert "result\\n(5, 8) float32 160 B" in dot
    # Every edge joins two declared nodes.
    ids = set(re.findall(r"^\s+(\w+) \[", dot, re.M))
    for a, b in re.findall(r"^\s+(\w+) -> (\w+)", dot, re.M):
        assert a in ids and b in ids
    assert "orange" not in to_dot(y, show_saved=False)


def test_draw_writes_dot_and_explains_svg_without_graphviz(tmp_path, monkeypatch):
    x = torch.ones(3, requires_grad=True)
    y = (x * x).sum()
    p = draw(y, str(tmp_path / "g.dot"))
    assert open(p).read() == to_dot(y)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="Graphviz's 'dot' program.*h.dot was written"):
        draw(y, str(tmp_path / "h.svg"))
    assert not os.path.exists(tmp_path / "h.svg")
    assert open(tmp_path / "h.dot").read() == to_dot(y)   # the .dot is written always


def test_memory_report_counts_saved_arrays_and_shared_storage_once():
    x = torch.randn(64, 32, requires_grad=True)
    w = torch.randn(32, 16, requires_grad=True)
    h = x @ w          # saves x and w
    a = h.tanh()       # saves its result
    b = a * a          # saves a twice: the same storage, counted once
    loss = b.sum()
    rep = memory_report(loss)
    expected = x.numel() * 4 + w.numel() * 4 + a.numel() * 4
    assert rep.total_bytes == expected
    assert dict(rep.per_node)["MmBackward0"] == (64 * 32 + 32 * 16) * 4
    assert "total" in str(rep) and f"{expected:,}" in str(rep)
    loss.backward()
    assert memory_report(loss).total_bytes == 0   # freed by backward


def test_memory_report_per_module():
    m = _mlp()
    y = m(torch.randn(5, 4)).pow(2).sum()
    rep = memory_report(y, model=m)
    assert sum(rep.per_module.values()) == rep.total_bytes == (20 + 40 + 16 + 10) * 4
    # By the module whose forward made each node: layer 2 saved its input (tanh's result,
    # 5 x 8, which tanh saved too: counted once) and weight (2 x 8), layer 0 its input (5 x 4);
    # pow, outside the model, its input (5 x 2).
    assert rep.per_module == {"2": (40 + 16) * 4, "0": 20 * 4, None: 10 * 4}
    # With parameters only, a node belongs to the layer whose parameters it (or the nearest
    # node on its input side) consumes.
    by_params = memory_report(y, params=dict(m.named_parameters())).per_module
    assert by_params == {"2": (40 + 16 + 10) * 4, "0": 20 * 4}


def test_module_spans_nest():
    torch.manual_seed(0)
    inner = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    outer = nn.Sequential(inner, nn.Linear(3, 1))
    y = outer(torch.randn(2, 3)).sum()
    rep = memory_report(y, model=outer)
    # Nodes count under the innermost module that made them ("0.0", not "0"); ReLU's result
    # is the last layer's saved input, counted once, there.
    assert rep.per_module == {"1": (6 + 3) * 4, "0.0": 6 * 4}
    s0, e0 = inner._graph_span
    s1, e1 = outer._graph_span
    assert s1 < s0 < e0 < e1


def test_saved_arrays_of_a_user_function():
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x ** 3
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, _ = ctx.saved_tensors
            return 3 * x * x * g

    x = torch.ones(10, dtype=torch.float64, requires_grad=True)
    y = Cube.apply(x)
    assert memory_report(y).total_bytes == 160
    np.testing.assert_allclose(y.detach().numpy(), 1.0)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
def test_draw_renders_svg_with_graphviz(tmp_path):
    x = torch.ones(3, requires_grad=True)
    path = draw((x * x).sum(), str(tmp_path / "g.svg"), params={"x": x})
    svg = open(path).read()
    assert "<svg" in svg and "MulBackward0" in svg
    assert (tmp_path / "g.dot").exists()
