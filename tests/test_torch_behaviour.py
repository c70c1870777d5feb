"""Behaviour classes where retrograd differed from torch (issue 9, section 3), each checked
against torch: the same code's result (values, dtype, requires_grad) or its exception (type
and message)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd


def outcome(lib, code: str):
    """What ``code`` does under ``lib``: its ``r`` (tensors as lists with dtype and
    requires_grad), or the exception it raises (type and first line of the message)."""
    ns = {"torch": lib, "np": np}
    try:
        exec(code, ns)
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        msg = str(e).splitlines()[0] if str(e) else ""
        return ("raises", type(e).__name__, msg.replace("retrograd", "torch"))
    return ("value", _plain(ns.get("r")))


def _plain(r):
    if isinstance(r, (tuple, list)):
        return [_plain(x) for x in r]
    if hasattr(r, "detach") and hasattr(r, "dtype"):
        vals = np.round(r.detach().numpy().astype(float), 5)
        vals = np.where(np.isnan(vals), 1e300, vals)  # NaN compares equal to NaN here
        return (vals.tolist(), str(r.dtype).split(".")[-1], r.requires_grad)
    return r


def same_as_torch(torch, code: str):
    ours, ref = outcome(retrograd, code), outcome(torch, code)
    assert ours == ref, f"\n{code}\nretrograd: {ours}\ntorch:     {ref}"


# -- in-place ops on views, in combination ---------------------------------------------------

INPLACE_ON_VIEWS = [
    # an in-place op through a reshape view then a transpose of it (replayed view steps)
    """a = torch.arange(6.).requires_grad_().clone(); b = torch.arange(6.).reshape(6, 1)
v = a.view(1, 6); w = v.transpose(0, 1); w.add_(b); w.sum().backward()
r = v""",
    """x = torch.arange(6.).requires_grad_(); a = x * 1
v = a.view(2, 3); v.t().mul_(torch.arange(3.).reshape(3, 1)); (a * a).sum().backward()
r = x.grad""",
    # an in-place op on a tensor while an expanded view of it is alive: the view's history is
    # re-derived, and its gradient sums over the repeated elements
    """x = torch.tensor([1., 2., 3.], requires_grad=True); a = x * 2
e = a.expand(4, 3); a.div_(2.0); e.sum().backward(); r = x.grad""",
    """x = torch.arange(6.).reshape(2, 3).requires_grad_(); a = x * 2
e = a[:, :2].unsqueeze(0).expand(3, 2, 2).transpose(1, 2); a.mul_(3.0)
(g,) = torch.autograd.grad((e * torch.arange(12.).reshape(3, 2, 2)).sum(), x, create_graph=True)
r = g""",
    # an in-place op on a slice of a non-leaf, then a second-order grad
    """x = torch.tensor([[0.1, 0.2], [0.3, 0.4]], requires_grad=True); y = x * 1
y[0].tanh_(); (g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
(g2,) = torch.autograd.grad(g.sum(), x); r = (g, g2)""",
]


@pytest.mark.parametrize("code", INPLACE_ON_VIEWS)
def test_inplace_on_views(torch, code):
    same_as_torch(torch, code)


# -- first-order gradients of piecewise ops under create_graph -------------------------------

PIECEWISE = [
    "torch.relu(x)", "torch.nn.functional.relu6(x)", "torch.nn.functional.leaky_relu(x, 0.1)",
    "torch.nn.functional.hardtanh(x)", "torch.nn.functional.threshold(x, 0.1, 0.)",
    "torch.nn.functional.hardshrink(x)", "torch.nn.functional.softshrink(x)",
    "torch.nn.functional.prelu(x, torch.tensor([0.25]))", "torch.relu_(x * 1)",
    "torch.nn.functional.max_pool1d(x.view(1, 2, 3), 2)",
    "torch.nn.functional.max_pool2d(x.view(1, 1, 2, 3), 2)",
    "torch.nn.functional.adaptive_max_pool1d(x.view(1, 2, 3), 2)",
    "torch.maximum(x, y)", "torch.minimum(x, y)", "torch.clamp(x, -0.5, 0.5)",
    "torch.where(x > 0, x, y)", "x.max()", "x.view(2, 3).amax(1)",
]


@pytest.mark.parametrize("expr", PIECEWISE)
def test_first_order_grads_of_piecewise_ops_differentiate_again(torch, expr):
    code = f"""x = torch.tensor([-1.5, -0.3, 0.2, 0.7, 1.4, 2.5], requires_grad=True)
y = torch.tensor([0.1, -0.5, 0.3, 1.0, -2.0, 0.4])
(g,) = torch.autograd.grad(({expr}).sum(), x, create_graph=True)
r = [g, g.requires_grad, g.grad_fn.name() if g.grad_fn else None]
if g.requires_grad:
    (g2,) = torch.autograd.grad(g.sum(), x)
    r.append(g2.tolist())"""
    same_as_torch(torch, code)


# -- broadcasting errors ---------------------------------------------------------------------

BROADCAST = """torch.ones(2, 3) + torch.ones(2, 5)
torch.ones(2, 3) * torch.ones(4, 2, 5)
torch.ones(2, 3, 4) + torch.ones(5, 1)
torch.add(torch.ones(2, 3), torch.ones(5))
torch.ones(2, 3, dtype=torch.float64) - torch.ones(2, 5)
torch.ones(2, 3, dtype=torch.int64) * torch.ones(2, 5)
torch.ones(2, 3) / torch.ones(2, 5)
torch.ones(2, 3) % torch.ones(2, 5)
torch.ones(2, 3) // torch.ones(2, 5)
torch.ones(2, 3) ** torch.ones(2, 5)
torch.ones(2, 3).add_(torch.ones(2, 5))
torch.ones(2, 3).add_(torch.ones(4, 2, 3))
torch.ones(3).add_(torch.ones(2, 3))
torch.ones(2, 3).mul_(torch.ones(3, 3))
torch.ones(2, 3, requires_grad=True).clone().add_(torch.ones(2, 5))
torch.ones(2, 3).div_(torch.ones(2, 5))
torch.ones(2, 3).lerp_(torch.ones(2, 5), 0.5)
torch.ones(2, 3).clamp_(torch.ones(5))
torch.where(torch.ones(2, 3) > 0, torch.ones(2, 3), torch.ones(2, 5))
torch.where(torch.ones(4) > 0, torch.ones(2, 3), 0.)
torch.ones(2, 3).where(torch.ones(2, 5) > 0, 0.)
torch.maximum(torch.ones(2, 3), torch.ones(2, 5))
torch.fmin(torch.ones(2, 3), torch.ones(2, 5))
torch.ones(2, 3) == torch.ones(2, 5)
torch.ones(2, 3) < torch.ones(2, 5)
torch.ones(2, 3) & torch.ones(2, 5)
torch.logical_and(torch.ones(2, 3), torch.ones(2, 5))
torch.isclose(torch.ones(2, 3), torch.ones(2, 5))
torch.lerp(torch.ones(2, 3), torch.ones(2, 5), 0.5)
torch.atan2(torch.ones(2, 3), torch.ones(2, 5))
torch.addcmul(torch.ones(2, 3), torch.ones(2, 5), torch.ones(3))
torch.addcdiv(torch.ones(2, 3), torch.ones(2, 3), torch.ones(2, 5))
torch.clamp(torch.ones(2, 3), torch.ones(5))
torch.ones(2, 3).masked_fill(torch.ones(2, 5) > 0, 1.)
torch.ones(2, 3).masked_fill_(torch.ones(2, 5) > 0, 1.)
torch.ones(2, 3).copy_(torch.ones(5))
torch.zeros(3).copy_(torch.ones(2, 3))
torch.ones(2, 3).expand(4, 5)
torch.ones(2, 3).expand(2, 3, 1)
torch.ones(2, 3).expand(-1, -1, 3)
torch.broadcast_tensors(torch.ones(2, 3), torch.ones(5))
torch.nn.functional.l1_loss(torch.ones(2, 3), torch.ones(2, 5))""".splitlines()

SETITEM = [
    "x = torch.zeros(5); x[0:2] = torch.ones(3)",
    "x = torch.zeros(5, 2); x[0:2] = torch.ones(2, 3)",
    "x = torch.zeros(5); x[0:3] = torch.ones(1, 1, 3); r = x",
    "x = torch.zeros(5); x[0:3] = torch.ones(2, 3)",
    "x = torch.zeros(5, dtype=torch.long); x[0:3] = torch.ones(2, 3, dtype=torch.long)",
    "x = torch.zeros(5, 3); x[0:2] = torch.ones(2, 1); r = x",
    "x = torch.zeros(5, 3); x[0:2, 1] = torch.ones(3)",
    "x = torch.zeros(3); x[None] = torch.ones(2)",
    "x = torch.zeros(2, 3); x[:, None] = torch.ones(2, 2, 3)",
    "x = torch.zeros(5, 2); x[[0, 1]] = torch.ones(3, 2)",
]


@pytest.mark.parametrize("code", BROADCAST + SETITEM)
def test_shape_mismatch_errors(torch, code):
    same_as_torch(torch, code)


# -- arguments of the wrong type -------------------------------------------------------------

BAD_ARGUMENTS = """torch.exp([1., 2.])
torch.exp(None)
torch.sin(3.0)
torch.add([1., 2.], torch.ones(2))
torch.add(torch.ones(2), [1., 2.])
torch.ones(2) + [1., 2.]
[1., 2.] + torch.ones(2)
torch.ones(2) * None
torch.ones(2) + "a"
torch.mul(torch.ones(2), None)
torch.matmul(torch.ones(2, 2), [[1., 2.], [3., 4.]])
torch.matmul([[1., 2.]], torch.ones(2, 2))
torch.mm(torch.ones(2, 2), [[1., 2.], [3., 4.]])
torch.ones(2, 2) @ [[1., 2.], [3., 4.]]
torch.index_select(torch.ones(3), 0, [0, 1])
torch.gather(torch.ones(3), 0, [0, 1])
torch.ones(4).chunk("2")
torch.arange(6.).view(2, 3).shape
torch.tensor([1.], dtype="float32")
torch.ones(3, requires_grad=1)
torch.tensor([1.], requires_grad=1)
torch.zeros(2, requires_grad=1.0)
torch.clamp(torch.ones(3), min="0")""".splitlines()

# The same exception type as torch, whose message is one of its overload listings.
BAD_ARGUMENT_TYPES = """torch.ones(6).view(6.0)
torch.ones(6).view(2, 3.0)
torch.ones(6).reshape(6.0)
torch.ones(3).expand(3.0)
torch.ones(3).repeat(2.0)
torch.ones(3).permute(0.0)
torch.ones(3, dtype="float32")
torch.zeros(2, 3, dtype="float64")
torch.ones(3).clamp(max="1")""".splitlines()


@pytest.mark.parametrize("code", BAD_ARGUMENTS)
def test_arguments_of_the_wrong_type(torch, code):
    same_as_torch(torch, code)


@pytest.mark.parametrize("code", BAD_ARGUMENT_TYPES)
def test_arguments_of_the_wrong_type_raise_torchs_exception_type(torch, code):
    ours, ref = outcome(retrograd, code), outcome(torch, code)
    assert ours[:2] == ref[:2] == ("raises", "TypeError")


# -- pieces programs use: legacy types, cuda(), the default device, 0-d reductions --------------

PIECES = """r = torch.FloatTensor([1, 2])
r = torch.LongTensor(3).shape
r = torch.FloatTensor(2, 3).shape
r = torch.FloatTensor()
r = torch.BoolTensor([1, 0])
r = torch.ByteTensor([1, 2])
r = torch.DoubleTensor([1.5])
r = torch.HalfTensor([1.])
r = torch.IntTensor([3]), torch.ShortTensor([3]), torch.CharTensor([3])
r = isinstance(torch.ones(2), torch.FloatTensor), isinstance(torch.ones(2), torch.LongTensor)
r = isinstance(torch.ones(2, dtype=torch.long), torch.LongTensor)
r = torch.ones(2).type()
r = torch.ones(2, dtype=torch.float64).type()
r = torch.ones(2).type(torch.int64)
r = torch.ones(2).type("torch.LongTensor")
r = torch.ones(2).type(torch.DoubleTensor)
torch.ones(2).type("float")
torch.ones(2).cuda()
r = torch.accelerator.is_available(), torch.accelerator.current_accelerator()
r = torch.tensor(3.).sum(0)
r = torch.tensor(3.).mean(-1)
r = torch.tensor(3.).sum((0,))
r = torch.tensor(3.).amax(0)
r = torch.tensor(3.).prod(0)
r = torch.tensor(3.).logsumexp(0)
r = torch.tensor(3.).std(0)
torch.tensor(3.).sum(1)""".splitlines()


@pytest.mark.parametrize("code", PIECES)
def test_pieces_programs_use(torch, code):
    same_as_torch(torch, code)


def test_default_device_is_the_cpu():
    # (not run under torch here: its set_default_device changes the test process's state)
    assert retrograd.set_default_device("cpu") is None
    assert retrograd.set_default_device(None) is None
    assert str(retrograd.get_default_device()) == "cpu"


# -- products require one dtype ----------------------------------------------------------------

SAME_DTYPE = """torch.mm(torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64))
torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64)
torch.mm(torch.ones(2, 2, dtype=torch.long), torch.ones(2, 2))
torch.matmul(torch.ones(2), torch.ones(2, dtype=torch.float64))
torch.matmul(torch.ones(2, 2), torch.ones(2, dtype=torch.float64))
torch.matmul(torch.ones(3, 2, 2), torch.ones(3, 2, 2, dtype=torch.float64))
torch.bmm(torch.ones(3, 2, 2), torch.ones(3, 2, 2, dtype=torch.float64))
torch.dot(torch.ones(2), torch.ones(2, dtype=torch.float64))
torch.mv(torch.ones(2, 2), torch.ones(2, dtype=torch.float64))
torch.addmm(torch.ones(2, 2), torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64))
torch.nn.functional.linear(torch.ones(2, 2), torch.ones(3, 2, dtype=torch.float64))""".splitlines()


@pytest.mark.parametrize("code", SAME_DTYPE)
def test_products_require_one_dtype(torch, code):
    same_as_torch(torch, code)


# -- NumPy's names for dim and keepdim, which PyTorch accepts on reductions ----------------------

NUMPY_ALIASES = """r = torch.arange(6.).reshape(2, 3).sum(axis=1, keepdims=True)
r = torch.arange(6.).reshape(2, 3).mean(axis=0)
r = torch.sum(torch.arange(6.).reshape(2, 3), axis=1)
r = torch.arange(6.).reshape(2, 3).max(axis=1)
r = torch.arange(6.).reshape(2, 3).std(axis=1)
r = torch.arange(6.).reshape(2, 3).var(axis=1, keepdims=True)
r = torch.arange(6.).reshape(2, 3).argmax(axis=1)
r = torch.arange(6.).reshape(2, 3).amax(axis=1)
r = torch.arange(6.).reshape(2, 3).prod(axis=1)
r = torch.arange(6.).reshape(2, 3).any(axis=1)
r = torch.arange(6.).reshape(2, 3).all(axis=1, keepdims=True)
r = torch.arange(6.).reshape(2, 3).sum(keepdims=True, dim=0)""".splitlines()


@pytest.mark.parametrize("code", NUMPY_ALIASES)
def test_numpy_aliases_on_reductions(torch, code):
    same_as_torch(torch, code)


# -- sizes too large ---------------------------------------------------------------------------

OVERSIZED = """torch.zeros(2**62)
torch.empty(2**40, 2**40)
torch.randn(2**62)
torch.full((2**62,), 1.)
torch.ones(3).expand(2**62, 3)
torch.arange(0, 10**19)
torch.arange(10**20)""".splitlines()


@pytest.mark.parametrize("code", OVERSIZED)
def test_oversized_sizes(torch, code):
    same_as_torch(torch, code)
