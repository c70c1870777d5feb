"""Every autograd example in ../shared/seeds/ runs with ``import retrograd as torch``.

Each test is the document's code, unchanged except where it needs something the document leaves
undefined (a ``model``) or the nn part that a later issue covers; the asserted values and reprs
are the ones the documents state.
"""

import math
import re

import pytest

import retrograd as torch


def model(x):
    # The seeds call an undefined model(x) inside no_grad/inference_mode; any op chain will do.
    return (x * 2).tanh()


# -- 000: "Autograd" ---------------------------------------------------------------------------


def test_dynamic_graph_first_example(capsys):
    x = torch.tensor([2.0, 3.0], requires_grad=True)
    y = (x * x).sum()          # y.grad_fn -> SumBackward0
    print(y.grad_fn)           # <SumBackward0 object at ...>
    print(y.grad_fn.next_functions)  # edges back to MulBackward0, then to x
    out = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"<SumBackward0 object at 0x[0-9a-f]+>", out[0])
    assert re.fullmatch(r"\(\(<MulBackward0 object at 0x[0-9a-f]+>, 0\),\)", out[1])
    mul = y.grad_fn.next_functions[0][0]
    assert [(n.name(), i) for n, i in mul.next_functions] == [
        ("torch::autograd::AccumulateGrad", 0), ("torch::autograd::AccumulateGrad", 0)]
    assert mul.next_functions[0][0].variable is x
    assert x.is_leaf and not y.is_leaf and y.grad_fn.name() == "SumBackward0"


def test_no_grad_and_inference_mode():
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    with torch.no_grad():           # do not record; outputs have requires_grad=False
        logits = model(x)
    assert not logits.requires_grad and logits.grad_fn is None

    with torch.inference_mode():    # stronger: also skips version counters / view tracking
        logits = model(x)
    assert not logits.requires_grad and logits.is_inference()
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        (logits * x).sum()


def test_accumulation_needs_zeroing():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(2):
        (w * w).sum().backward()
    assert w.grad.tolist() == [4.0, 8.0]   # the second step's grads added to the first's
    w.grad = None                          # what zero_grad(set_to_none=True) does
    (w * w).sum().backward()
    assert w.grad.tolist() == [2.0, 4.0]


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim):
        m = x.max(dim=dim, keepdim=True).values
        out = (x - m).exp().sum(dim=dim, keepdim=True).log() + m
        ctx.save_for_backward(x, out)
        ctx.dim = dim
        return out.squeeze(dim)

    @staticmethod
    def backward(ctx, grad_output):
        x, out = ctx.saved_tensors
        # softmax along dim is the local gradient; broadcast grad back
        softmax = (x - out).exp()
        return grad_output.unsqueeze(ctx.dim) * softmax, None  # None for `dim`


def test_custom_function_logsumexp():
    y = LogSumExp.apply(torch.randn(4, 8, requires_grad=True), 1)
    assert y.shape == torch.Size([4])
    assert y.grad_fn.name() == "LogSumExpBackward"
    x = torch.randn(4, 8, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: LogSumExp.apply(t, 1), (x,))
    # The value is log(sum(exp(x))) along dim 1.
    ref = x.detach().exp().sum(1).log()
    assert torch.allclose(LogSumExp.apply(x, 1), ref)


class Value:
    def __init__(self, data, _children=()):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)

    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other))

        def _backward():                 # d(out)/d(self) = other.data, etc.
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __add__(self, other):
        out = Value(self.data + other.data, (self, other))

        def _backward():
            self.grad += out.grad       # gradient flows through unchanged
            other.grad += out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, seen = [], set()

        def build(v):                    # reverse topological order
            if v not in seen:
                seen.add(v)
                for c in v._prev:
                    build(c)
                topo.append(v)
        build(self)
        self.grad = 1.0                  # seed dL/dL = 1
        for v in reversed(topo):
            v._backward()


def test_tiny_engine_matches_retrograd():
    a, b = Value(2.0), Value(-3.0)
    L = a * b + a                            # L = a*b + a
    L.backward()
    assert (a.grad, b.grad) == (-2.0, 2.0)   # dL/da = b + 1 = -2.0
    ta = torch.tensor(2.0, requires_grad=True)
    tb = torch.tensor(-3.0, requires_grad=True)
    (ta * tb + ta).backward()
    assert (ta.grad.item(), tb.grad.item()) == (a.grad, b.grad)


def test_higher_order_gradients(capsys):
    x = torch.tensor(1.5, requires_grad=True)
    y = x ** 3
    g, = torch.autograd.grad(y, x, create_graph=True)   # dy/dx = 3x^2
    g2, = torch.autograd.grad(g, x)                      # d2y/dx2 = 6x
    print(g.item(), g2.item())                           # 6.75, 9.0
    assert capsys.readouterr().out == "6.75 9.0\n"


# -- 002: "Autograd" recipe card ---------------------------------------------------------------


def test_recipe(capsys):
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 2 + 3 * x
    y.backward()
    print(x.grad)  # dy/dx at x=2: 2*2+3 = 7
    assert capsys.readouterr().out == "tensor(7.)\n"
    with torch.no_grad():
        pred = model(x)
    assert pred.requires_grad is False


def test_working_example_graph_part(capsys):
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor(0.5, requires_grad=True)
    x = torch.tensor([3.0, 4.0])

    # Forward: y = w . x + b, loss = y^2
    y = (w * x).sum() + b
    loss = y ** 2
    loss.backward()

    print("w.grad:", w.grad)  # d(loss)/dw
    print("b.grad:", b.grad)  # d(loss)/db
    # y = 11.5, dloss/dy = 23
    assert capsys.readouterr().out == "w.grad: tensor([69., 92.])\nb.grad: tensor(23.)\n"


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


def test_custom_relu():
    x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    y = MyReLU.apply(x)
    assert y.tolist() == [0.0, 0.5, 2.0]
    assert y.grad_fn.name() == "MyReLUBackward"
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0]


def test_backward_twice_needs_retain_graph():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (x.exp() * x).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()
    loss = (x.exp() * x).sum()
    loss.backward(retain_graph=True)
    loss.backward()


def test_inplace_on_tracked_leaf_is_refused():
    x = torch.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation"):
        x.add_(1)
    x = x + 1
    assert x.grad_fn.name() == "AddBackward0"


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        torch.tensor([1, 2], requires_grad=True)
    t = torch.tensor([1, 2]).float().requires_grad_()
    assert t.requires_grad


def test_detach_numpy_export():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    assert x.detach().cpu().numpy().tolist() == [1.0, 2.0]


# -- 003: "What Autograd Actually Does" --------------------------------------------------------


def test_minimal_loop(capsys):
    x = torch.tensor(3.0, requires_grad=True)
    y = x ** 2 + 2 * x + 1   # y = 16 at x=3
    assert repr(y) == "tensor(16., grad_fn=<AddBackward0>)"
    y.backward()
    print(x.grad)            # tensor(8.)
    assert capsys.readouterr().out == "tensor(8.)\n"


def f(x, branch):
    if branch == "polynomial":
        return x ** 3 - x
    else:
        return torch.sin(x) * x


def test_dynamic_graph_control_flow(capsys):
    x = torch.tensor(2.0, requires_grad=True)
    y = f(x, "polynomial")
    y.backward()
    print(x.grad)            # 3*x^2 - 1 = 11

    x.grad = None
    y = f(x, "trig")
    y.backward()
    # d/dx (sin(x)*x) = cos(x)*x + sin(x)  ≈ -0.832 + 0.909 = 0.077
    print(x.grad)
    assert capsys.readouterr().out == "tensor(11.)\ntensor(0.0770)\n"
    assert math.isclose(x.grad.item(), math.cos(2) * 2 + math.sin(2), rel_tol=1e-6)


def test_many_parameters_one_scalar(capsys):
    W = torch.randn(3, 2, requires_grad=True)
    b = torch.randn(2, requires_grad=True)
    x = torch.randn(4, 3)             # batch=4, features=3
    y_true = torch.randn(4, 2)

    # Forward
    y_pred = x @ W + b                # (4, 2)
    loss = ((y_pred - y_true) ** 2).mean()

    # One backward call → gradients on every leaf
    loss.backward()
    print(W.grad.shape)    # torch.Size([3, 2])
    print(b.grad.shape)    # torch.Size([2])
    assert capsys.readouterr().out == "retrograd.Size([3, 2])\nretrograd.Size([2])\n"
    # The gradients are the closed form: dL/dW = x^T (2 (y - t) / n), dL/db = sum of the same.
    r = 2 * (y_pred.detach() - y_true) / 8
    assert torch.allclose(W.grad, x.t() @ r, atol=1e-6)
    assert torch.allclose(b.grad, r.sum(0), atol=1e-6)


# -- the nn, optim and clip_grad_norm_ parts ---------------------------------------------------


def test_optimizer_step_pattern():
    # 000: "optimizer.zero_grad(set_to_none=True)  # else this step's grads add to last step's"
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    losses = []
    for _ in range(5):
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad(set_to_none=True)   # else this step's grads add to last step's
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def test_working_example_model_part(capsys):
    # 002's working example, the "Model with autograd" half.
    import retrograd.nn as nn

    model = nn.Linear(3, 1)
    x_batch = torch.randn(16, 3)
    target = torch.randn(16, 1)

    model.zero_grad(set_to_none=True)
    pred = model(x_batch)
    loss = nn.functional.mse_loss(pred, target)
    loss.backward()

    for name, param in model.named_parameters():
        print(f"{name}: grad norm = {param.grad.norm().item():.4f}")
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["weight", "bias"]
    # The bias gradient is the mean of 2 (pred - target): check the printed norm.
    r = 2 * (pred.detach() - target) / 16
    assert lines[1] == f"bias: grad norm = {r.sum().abs().item():.4f}"


def test_faq_snippets():
    # 002's FAQs: find parameters without grads, clip, double backward, a frozen encoder.
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1),
                                torch.nn.Linear(5, 5))
    x = torch.randn(6, 4)
    loss = model[:3](x).pow(2).mean()
    loss.backward(create_graph=True)
    missing = []
    for name, p in model.named_parameters():
        if p.grad is None:
            missing.append(f"no grad: {name}")
    assert missing == ["no grad: 3.weight", "no grad: 3.bias"]

    total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    after = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
    assert total.item() > 0 and after.norm().item() <= 1.0 + 1e-5

    loss = model[:3](x).pow(2).mean()
    grad_grad = torch.autograd.grad(loss, list(model[:3].parameters()), create_graph=True)
    assert all(g.requires_grad for g in grad_grad)

    frozen_encoder = torch.nn.Linear(4, 8)
    trainable_head = torch.nn.Linear(8, 2)
    with torch.no_grad():
        features = frozen_encoder(x)
    output = trainable_head(features)
    output.sum().backward()
    assert frozen_encoder.weight.grad is None and trainable_head.weight.grad is not None
