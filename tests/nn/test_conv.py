"""Tests for convolutions (functional and modules) and fold/unfold, against PyTorch.

Every case runs the same op in retrograd and torch (the oracle; skipped without it) on the same
values and compares outputs, gradients for every input, grad_fn names, reprs and errors. The
gradcheck/gradgradcheck cases need no torch.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn  # noqa: F401 - binds rg.nn
import retrograd.nn.functional as F
from retrograd.autograd import gradcheck, gradgradcheck

from ..oracle import copy_state, run_both, same_call

TOL = {np.float32: dict(rtol=2e-4, atol=2e-5), np.float64: dict(rtol=1e-10, atol=1e-12)}


def _arrays(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [None if s is None else rng.standard_normal(s).astype(dtype) for s in shapes]


def check_fn(torch, name, shapes, dtype=np.float64, **kw):
    """torch.nn.functional.<name> and retrograd's agree on values and all gradients."""
    run_both(torch, *same_call(torch, f"nn.functional.{name}", **kw), _arrays(shapes, dtype),
             tol=TOL[dtype])


CONV2D = [
    ([(2, 3, 8, 8), (4, 3, 3, 3), (4,)], {}),
    ([(2, 3, 9, 8), (4, 3, 3, 2), (4,)], dict(stride=2, padding=1, dilation=2)),
    ([(2, 3, 9, 8), (4, 3, 3, 2), None], dict(stride=(1, 2), padding=(2, 0), dilation=(1, 3))),
    ([(2, 4, 7, 8), (6, 2, 3, 3), (6,)], dict(groups=2, padding=(1, 2))),
    ([(2, 4, 7, 8), (4, 1, 3, 3), (4,)], dict(groups=4, padding=1)),
    ([(2, 3, 7, 8), (4, 3, 2, 4), None], dict(padding="same")),
    ([(2, 3, 7, 8), (4, 3, 3, 3), (4,)], dict(padding="same", dilation=2)),
    ([(2, 3, 7, 8), (4, 3, 3, 3), (4,)], dict(padding="valid")),
    ([(3, 7, 8), (4, 3, 2, 2), (4,)], dict(stride=2)),
    ([(2, 3, 5, 5), (2, 3, 1, 1), (2,)], {}),
    ([(1, 3, 5, 5), (2, 3, 5, 5), (2,)], {}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes,kw", CONV2D)
def test_conv2d(torch, shapes, kw, dtype):
    check_fn(torch, "conv2d", shapes, dtype, **kw)


CONV1D = [
    ([(2, 3, 9), (4, 3, 3), (4,)], dict(stride=2, padding=1, dilation=2)),
    ([(2, 4, 9), (6, 2, 4), (6,)], dict(padding="same", groups=2)),
    ([(3, 9), (4, 3, 3), None], {}),
    ([(2, 3, 9), (4, 3, 3), (4,)], dict(padding=(2,), stride=(3,))),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes,kw", CONV1D)
def test_conv1d(torch, shapes, kw, dtype):
    check_fn(torch, "conv1d", shapes, dtype, **kw)


CONVT2D = [
    ([(2, 4, 5, 6), (4, 3, 3, 3), (3,)], dict(stride=2, padding=1, output_padding=1)),
    ([(2, 4, 5, 6), (4, 3, 3, 2), (6,)], dict(stride=(2, 3), padding=(1, 0), groups=2,
                                              dilation=2)),
    ([(2, 4, 5, 6), (4, 3, 3, 3), (3,)], dict(padding=1, dilation=2, output_padding=1)),
    ([(2, 4, 5, 6), (4, 3, 2, 2), None], {}),
    ([(4, 5, 6), (4, 3, 2, 2), (3,)], dict(stride=2)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes,kw", CONVT2D)
def test_conv_transpose2d(torch, shapes, kw, dtype):
    check_fn(torch, "conv_transpose2d", shapes, dtype, **kw)


@pytest.mark.parametrize("kw", [dict(stride=2, padding=1, output_padding=1), dict(padding=1),
                                dict(groups=2, dilation=2)])
def test_conv_transpose1d(torch, kw):
    check_fn(torch, "conv_transpose1d", [(2, 4, 5), (4, 3, 3), (6,) if "groups" in kw else (3,)],
             **kw)


@pytest.mark.parametrize("requires_grad", [(True, False, False), (False, True, True),
                                           (True, False, True), (False, True, False)])
@pytest.mark.parametrize("shapes,kw", [([(2, 3, 7, 8), (4, 3, 3, 2), (4,)], dict(padding=(1, 2))),
                                       ([(2, 3, 9), (4, 3, 3), None], dict(dilation=2))])
def test_stride1_conv_partial_grads(torch, shapes, kw, requires_grad):
    """A stride-1 convolution whose weight is frozen (input gradient only, through the transposed
    convolution) or whose input needs no gradient (weight gradient only, from the columns); the
    bias rides in the GEMM as a row of ones, and its gradient comes from the weight's GEMM or,
    without one, from a sum."""
    name = "conv2d" if len(shapes[0]) == 4 else "conv1d"
    run_both(torch, *same_call(torch, f"nn.functional.{name}", **kw), _arrays(shapes, np.float64),
             tol=TOL[np.float64], requires_grad=list(requires_grad))


def _direct_conv_transpose(x, w, p, d, op):
    """The definition, summed term by term: input pixel (iy, ix) and kernel tap (i, j) add
    ``x * w`` at output (iy + i * d0 - p0, ix + j * d1 - p1)."""
    n, ci, hi, wi = x.shape
    co, kh, kw = w.shape[1:]
    h = hi - 1 - 2 * p[0] + d[0] * (kh - 1) + op[0] + 1
    wd = wi - 1 - 2 * p[1] + d[1] * (kw - 1) + op[1] + 1
    out = np.zeros((n, co, h + 2 * p[0], wd + 2 * p[1]))
    for i in range(kh):
        for j in range(kw):
            contrib = np.einsum("nchw,co->nohw", x, w[:, :, i, j])
            out[:, :, i * d[0]:i * d[0] + hi, j * d[1]:j * d[1] + wi] += contrib
    return out[:, :, p[0]:p[0] + h, p[1]:p[1] + wd]


@pytest.mark.parametrize("p,d,op", [((0, 0), (1, 1), (0, 0)), ((1, 2), (2, 1), (1, 0)),
                                    ((2, 0), (1, 3), (0, 2)), ((0, 1), (1, 1), (0, 0))])
def test_stride1_transposed_conv_is_its_definition(p, d, op):
    """The stride-1 one-group transposed convolution (every stride-1 convolution's input gradient
    too) is one GEMM over column-shifted planes (zero padding shifts in across planes) and kh
    row-shifted adds: it equals the direct sum of its definition (float64, no torch needed)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 5, 6))
    w = rng.standard_normal((4, 2, 3, 2))
    y = F.conv_transpose2d(rg.tensor(x), rg.tensor(w), padding=p, dilation=d, output_padding=op)
    np.testing.assert_allclose(y.numpy(), _direct_conv_transpose(x, w, p, d, op), rtol=1e-12,
                               atol=1e-12)


def test_conv_grad_fn_edges(torch):
    x = rg.randn(2, 3, 6, 6, requires_grad=True)
    w = rg.randn(4, 3, 3, 3, requires_grad=True)
    b = rg.randn(4, requires_grad=True)
    y = F.conv2d(x, w, b)
    assert y.grad_fn.name() == "ConvolutionBackward0"
    assert len(y.grad_fn.next_functions) == 3
    assert y.is_contiguous()
    # without a bias the third edge leads nowhere, as in PyTorch
    nf = F.conv2d(x, w).grad_fn.next_functions
    nf_t = torch.nn.functional.conv2d(torch.randn(2, 3, 6, 6, requires_grad=True),
                                      torch.randn(4, 3, 3, 3)).grad_fn.next_functions
    assert len(nf) == len(nf_t) == 3 and nf[2] == nf_t[2] == (None, 0)
    # padding='same' with an even kernel pads the input first, as PyTorch does
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = F.conv2d(x, rg.randn(4, 3, 2, 2), padding="same")
    assert y.grad_fn.next_functions[0][0].name() == "ConstantPadNdBackward0"


def test_conv_double_backward_values(torch):
    """Second derivatives (grad of grad) through conv2d match PyTorch."""
    arrs = _arrays([(2, 3, 6, 5), (4, 3, 3, 2), (4,)], np.float64)
    ts = [torch.tensor(a, requires_grad=True) for a in arrs]
    rs = [rg.tensor(a, requires_grad=True) for a in arrs]
    outs = []
    for lib, (x, w, b), fn in ((torch, ts, torch.nn.functional.conv2d), (rg, rs, F.conv2d)):
        y = fn(x, w, b, stride=2, padding=1)
        gx, gw = lib.autograd.grad((y ** 2).sum(), (x, w), create_graph=True)
        (gx.sin().sum() + (gw ** 2).sum()).backward()
        outs.append([t.grad.numpy() if lib is rg else t.grad.numpy() for t in (x, w, b)])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def _t(*shape, seed=0):
    return rg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


@pytest.mark.parametrize("fn,args", [
    (lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, dilation=(1, 2)),
     ((2, 2, 5, 6), (3, 2, 2, 2), (3,))),
    (lambda x, w: F.conv2d(x, w, groups=2, padding=1), ((1, 4, 4, 4), (4, 2, 2, 2))),
    (lambda x, w, b: F.conv1d(x, w, b, padding=1), ((2, 2, 5), (3, 2, 2), (3,))),
    (lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1,
                                        groups=2), ((1, 4, 3, 3), (4, 1, 3, 2), (2,))),
    (lambda x, w, b: F.conv_transpose2d(x, w, b, padding=1, dilation=2, output_padding=1),
     ((1, 2, 4, 3), (2, 2, 3, 2), (2,))),
    (lambda x, w: F.conv_transpose1d(x, w, stride=2, dilation=2), ((1, 2, 3), (2, 3, 2))),
    (lambda x: F.unfold(x, 2, padding=1, stride=2), ((1, 2, 5, 6),)),
    (lambda x: F.fold(x, (4, 5), 2, padding=1, stride=2), ((1, 8, 9),)),
])
def test_gradcheck(fn, args):
    tensors = tuple(_t(*s, seed=i) for i, s in enumerate(args))
    assert gradcheck(fn, tensors)
    assert gradgradcheck(fn, tensors)


def test_integer_conv(torch):
    x = np.arange(2 * 3 * 5 * 5).reshape(2, 3, 5, 5)
    w = np.ones((2, 3, 2, 2), np.int64)
    r = F.conv2d(rg.tensor(x), rg.tensor(w))
    t = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w))
    assert r.dtype == rg.int64
    np.testing.assert_array_equal(r.numpy(), t.numpy())


# -- errors ------------------------------------------------------------------------------------

ERRORS = [
    ("conv2d", [(2, 5, 8, 8), (4, 3, 3, 3)], {}),
    ("conv2d", [(2, 3, 2, 2), (4, 3, 3, 3)], {}),
    ("conv2d", [(3, 8), (4, 3, 3, 3)], {}),
    ("conv2d", [(2, 3, 8, 8), (4, 3, 3, 3)], dict(groups=2)),
    ("conv2d", [(2, 4, 8, 8), (3, 2, 3, 3)], dict(groups=2)),
    ("conv2d", [(2, 3, 8, 8), (4, 3, 3, 3)], dict(stride=2, padding="same")),
    ("conv2d", [(2, 3, 8, 8), (4, 3, 3, 3)], dict(padding="foo")),
    ("conv2d", [(2, 3, 8, 8), (4, 3, 3, 3)], dict(stride=0)),
    ("conv2d", [(2, 3, 8, 8), (4, 3, 3, 3)], dict(padding=-1)),
    ("conv2d", [(2, 3, 8, 8), (4, 3, 3, 3)], dict(dilation=0)),
    ("conv2d", [(2, 3, 8, 8), (4, 3, 3, 3), (3,)], {}),
    ("conv1d", [(2, 3, 2), (4, 3, 3)], {}),
    ("conv_transpose2d", [(2, 3, 8, 8), (4, 3, 3, 3)], {}),
    ("conv_transpose2d", [(2, 3, 8, 8), (3, 4, 3, 3)], dict(stride=2, output_padding=2)),
    ("conv_transpose1d", [(2, 3, 8), (3, 4, 3)], dict(stride=2, output_padding=2)),
    ("fold", [(2, 12, 10)], dict(output_size=(4, 4), kernel_size=2)),
    ("fold", [(2, 13, 9)], dict(output_size=(4, 4), kernel_size=2)),
]


@pytest.mark.parametrize("name,shapes,kw", ERRORS)
def test_errors(torch, name, shapes, kw):
    arrs = _arrays(shapes, np.float32)
    with pytest.raises(Exception) as te:
        getattr(torch.nn.functional, name)(*[torch.tensor(a) for a in arrs], **kw)
    with pytest.raises(type(te.value)) as re_:
        getattr(F, name)(*[rg.tensor(a) for a in arrs], **kw)
    assert str(re_.value) == str(te.value)


def test_dtype_errors(torch):
    x, w = _arrays([(2, 3, 8, 8), (4, 3, 3, 3)], np.float32)
    for xa, wa, ba in ((x.astype(np.float64), w, None), (x, w.astype(np.float64), None),
                       (x, w, np.zeros(4))):
        with pytest.raises(RuntimeError) as te:
            torch.nn.functional.conv2d(torch.tensor(xa), torch.tensor(wa),
                                       None if ba is None else torch.tensor(ba))
        with pytest.raises(RuntimeError) as re_:
            F.conv2d(rg.tensor(xa), rg.tensor(wa), None if ba is None else rg.tensor(ba))
        assert str(re_.value) == str(te.value)


# -- modules -----------------------------------------------------------------------------------


MODULES = [
    ("Conv2d", (3, 4, 3), {}, (2, 3, 8, 7)),
    ("Conv2d", (3, 6, (3, 2)), dict(stride=2, padding=1, dilation=(2, 1), groups=3,
                                    bias=False), (2, 3, 9, 8)),
    ("Conv2d", (3, 4, 3), dict(padding="same", padding_mode="reflect"), (2, 3, 8, 7)),
    ("Conv2d", (3, 4, 3), dict(padding=2, padding_mode="replicate"), (2, 3, 8, 7)),
    ("Conv2d", (3, 4, 3), dict(padding=(1, 2), padding_mode="circular"), (2, 3, 8, 7)),
    ("Conv2d", (3, 4, 3), dict(padding="valid"), (2, 3, 8, 7)),
    ("Conv2d", (3, 4, 4), dict(padding="same"), (3, 8, 7)),
    ("Conv1d", (3, 4, 3), dict(stride=2, padding=1), (2, 3, 9)),
    ("Conv1d", (4, 4, 3), dict(groups=2, padding=1, padding_mode="circular"), (2, 4, 9)),
    ("ConvTranspose2d", (4, 2, 3), dict(stride=2, padding=1, output_padding=1), (2, 4, 5, 5)),
    ("ConvTranspose2d", (4, 6, (3, 2)), dict(groups=2, dilation=2, bias=False), (2, 4, 5, 5)),
    ("ConvTranspose1d", (4, 2, 3), dict(stride=2), (2, 4, 5)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,args,kw,shape", MODULES)
def test_modules(torch, name, args, kw, shape, dtype):
    tdt = torch.float32 if dtype == np.float32 else torch.float64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_mod = getattr(torch.nn, name)(*args, **kw, dtype=tdt)
        r_mod = getattr(rg.nn, name)(*args, **kw, dtype=rg.float32 if dtype == np.float32
                                     else rg.float64)
    assert repr(r_mod) == repr(t_mod)
    assert list(r_mod.state_dict()) == list(t_mod.state_dict())
    for k, v in t_mod.state_dict().items():
        assert tuple(r_mod.state_dict()[k].shape) == tuple(v.shape)
        assert r_mod.state_dict()[k].dtype == (rg.float32 if dtype == np.float32 else rg.float64)
    copy_state(t_mod, r_mod)
    run_both(torch, r_mod, t_mod, _arrays([shape], dtype, seed=3), tol=TOL[dtype], seed=4,
             modules=(r_mod, t_mod))


def test_conv_transpose_output_size(torch):
    t_mod = torch.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
    r_mod = rg.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
    copy_state(t_mod, r_mod)
    (x,) = _arrays([(1, 3, 4, 4)], np.float32)
    for size in ([8, 8], [7, 8], (1, 2, 8, 7)):
        to = t_mod(torch.tensor(x), output_size=size)
        ro = r_mod(rg.tensor(x), output_size=size)
        assert tuple(ro.shape) == tuple(to.shape)
        np.testing.assert_allclose(ro.detach().numpy(), to.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    with pytest.raises(ValueError):
        r_mod(rg.tensor(x), output_size=[10, 10])


@pytest.mark.parametrize("cls,args", [("Conv2d", (3, 8, 3)), ("Conv1d", (4, 6, 5)),
                                      ("ConvTranspose2d", (6, 3, 2)),
                                      ("Conv2d", (4, 8, 3, 1, 0, 1, 2))])
def test_default_init(cls, args):
    rg.manual_seed(0)
    m = getattr(rg.nn, cls)(*args)
    w = m.weight.detach().numpy()
    fan_in = w.shape[1] * int(np.prod(w.shape[2:]))
    bound = 1 / math.sqrt(fan_in)  # kaiming_uniform_(a=sqrt(5)) and the bias share it
    assert np.abs(w).max() <= bound
    assert np.abs(w).max() > 0.8 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.25 * bound
    b = m.bias.detach().numpy()
    assert np.abs(b).max() <= bound


def _set_normal(msg: str) -> str:
    head, _, rest = msg.partition("{")
    inner, _, tail = rest.partition("}")
    return head + "{" + ", ".join(sorted(inner.split(", "))) + "}" + tail


def test_module_ctor_errors(torch):
    for kw in (dict(groups=2), dict(padding="foo"), dict(padding_mode="foo"),
               dict(padding="same", stride=2)):
        args = (3, 4, 3)
        with pytest.raises(ValueError) as te:
            torch.nn.Conv2d(*args, **kw)
        with pytest.raises(ValueError) as re_:
            rg.nn.Conv2d(*args, **kw)
        # torch prints a set here, in hash order
        assert _set_normal(str(re_.value)) == _set_normal(str(te.value))
    with pytest.raises(ValueError) as te:
        torch.nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect")
    with pytest.raises(ValueError) as re_:
        rg.nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect")
    assert str(re_.value) == str(te.value)


# -- fold / unfold -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,kw", [
    ((2, 3, 9, 7), dict(kernel_size=(2, 3), padding=1, stride=2, dilation=(2, 1))),
    ((2, 3, 6, 6), dict(kernel_size=3)),
    ((3, 6, 5), dict(kernel_size=2, stride=(1, 2))),
])
def test_unfold(torch, shape, kw, dtype):
    check_fn(torch, "unfold", [shape], dtype, **kw)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,kw", [
    ((2, 12, 20), dict(output_size=(9, 7), kernel_size=2, padding=1, stride=2)),
    ((2, 27, 16), dict(output_size=6, kernel_size=3)),
    ((12, 20), dict(output_size=(9, 7), kernel_size=2, padding=1, stride=2)),
    ((1, 8, 6), dict(output_size=(5, 4), kernel_size=(2, 2), dilation=(2, 1), stride=(1, 2))),
])
def test_fold(torch, shape, kw, dtype):
    check_fn(torch, "fold", [shape], dtype, **kw)


def test_fold_unfold_modules(torch):
    for t_mod, r_mod, shape in (
        (torch.nn.Unfold(2, padding=1, stride=2), rg.nn.Unfold(2, padding=1, stride=2),
         (2, 3, 5, 5)),
        (torch.nn.Fold((4, 5), 2, dilation=1, padding=0, stride=1),
         rg.nn.Fold((4, 5), 2, dilation=1, padding=0, stride=1), (2, 8, 12)),
    ):
        assert repr(r_mod) == repr(t_mod)
        (x,) = _arrays([shape], np.float64)
        np.testing.assert_allclose(r_mod(rg.tensor(x)).numpy(), t_mod(torch.tensor(x)).numpy())


def test_fold_is_adjoint_of_unfold():
    x = _t(2, 3, 6, 5)
    cols = F.unfold(x, 3, padding=1, stride=2)
    g = rg.randn(*cols.shape, dtype=rg.float64)
    (gx,) = rg.autograd.grad((cols * g).sum(), x)
    np.testing.assert_allclose(gx.numpy(), F.fold(g, (6, 5), 3, padding=1, stride=2).numpy())


def test_cnn_training_matches_torch(torch):
    """A LeNet-style CNN trained 3 SGD steps in float64: losses track PyTorch's."""
    def build(lib):
        nn = lib.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = nn.Conv2d(1, 4, 3, padding=1)
                self.c2 = nn.Conv2d(4, 6, 3)
                self.fc = nn.Linear(6 * 2 * 2, 5)

            def forward(self, x):
                f = lib.nn.functional
                x = f.max_pool2d(f.relu(self.c1(x)), 2)
                x = f.avg_pool2d(f.relu(self.c2(x)), 2, ceil_mode=True)
                return self.fc(x.flatten(1))
        return Net().double()

    tm, rm = build(torch), build(rg)
    copy_state(tm, rm)
    rng = np.random.default_rng(0)
    losses = []
    for lib, m in ((torch, tm), (rg, rm)):
        opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        rng = np.random.default_rng(0)
        ls = []
        for _ in range(3):
            x = lib.tensor(rng.standard_normal((4, 1, 12, 12)))
            y = lib.tensor(rng.integers(0, 5, 4))
            loss = lib.nn.functional.cross_entropy(m(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            ls.append(loss.item())
        losses.append(ls)
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-10)
