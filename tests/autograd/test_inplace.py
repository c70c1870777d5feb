"""Views and in-place ops: shared memory and version counters, PyTorch's errors, and
differentiable in-place ops on non-leaves and views (CopySlices).
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from ..oracle import compare, compare_error, graph_sig, needs_torch


def _grads(*ts):
    return tuple(t.grad for t in ts)


# -- views share memory and the version counter ------------------------------------------------

VIEWS = {
    "view": lambda b: b.view(6),
    "view_neg": lambda b: b.view(-1, 2),
    "reshape": lambda b: b.reshape(3, 2),
    "transpose": lambda b: b.transpose(0, 1),
    "permute": lambda b: b.permute(1, 0),
    "T": lambda b: b.T,
    "t": lambda b: b.t(),
    "expand": lambda b: b[:1].expand(4, 3),
    "squeeze": lambda b: b[:1].squeeze(0),
    "unsqueeze": lambda b: b.unsqueeze(1),
    "int_index": lambda b: b[1],
    "slice": lambda b: b[:, 1:],
    "step_slice": lambda b: b[:, ::2],
    "ellipsis_none": lambda b: b[..., None, 0],
    "detach": lambda b: b.detach(),
    "view_of_view": lambda b: b[1].view(3, 1)[1:],
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_share_memory_and_version(name):
    base = retrograd.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    v = VIEWS[name](base)
    assert np.shares_memory(v.numpy(), base.numpy())
    assert v._version == base._version == 0
    base.add_(1)
    assert v._version == 1
    if name != "expand":
        v.mul_(2)
        assert base._version == 2 and v._version == 2
    # The values written through either are seen by the other.
    np.testing.assert_allclose(VIEWS[name](base).numpy(), v.numpy())


def test_view_writes_are_visible_in_base():
    base = retrograd.zeros(2, 3)
    base[1].fill_(7)
    base.t()[0].add_(1)
    base[:, 2:].mul_(2)
    np.testing.assert_allclose(base.numpy(), [[1.0, 0.0, 0.0], [8.0, 7.0, 14.0]])
    assert base._version == 3


def test_reshape_of_non_contiguous_copies():
    base = retrograd.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    r = base.t().reshape(6)
    assert not np.shares_memory(r.numpy(), base.numpy())
    base.add_(1)
    assert r._version == 0
    np.testing.assert_allclose(r.numpy(), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0])


def test_data_does_not_share_version_counter():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    d = x.data
    assert np.shares_memory(d.numpy(), x.detach().numpy())
    d.add_(1)
    assert x._version == 0
    np.testing.assert_allclose(x.detach().numpy(), [2.0, 3.0])
    dt = x.detach()
    dt.add_(1)
    assert x._version == 1


@needs_torch
@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_metadata_matches_torch(name):
    def f(lib):
        base = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        v = VIEWS[name](base)
        info = [v._is_view(), v._base is base, v.shape, v.stride(), v.is_contiguous()]
        base.add_(1)
        info.append(v._version)
        if name != "expand":
            v.sub_(1)
        info.append(base._version)
        return info, v, base

    compare(f)


@needs_torch
@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_of_requires_grad_tensor_matches_torch(name):
    def f(lib):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        base = x * 1
        v = VIEWS[name](base)
        info = (v._is_view(), v._base is base, v.requires_grad, v.grad_fn is not None,
                None if v.grad_fn is None else v.grad_fn.name())
        if v.requires_grad:
            (v * v).sum().backward()
        return info, x.grad

    compare(f)


# -- every in-place op bumps the version -------------------------------------------------------

INPLACE = {
    "add_": lambda t: t.add_(1),
    "add_tensor": lambda t: t.add_(t.detach() * 0 + 1),
    "add_alpha": lambda t: t.add_(t.detach() * 0 + 1, alpha=2),
    "sub_": lambda t: t.sub_(1),
    "mul_": lambda t: t.mul_(2),
    "div_": lambda t: t.div_(2),
    "pow_": lambda t: t.pow_(2),
    "neg_": lambda t: t.neg_(),
    "zero_": lambda t: t.zero_(),
    "fill_": lambda t: t.fill_(3),
    "copy_": lambda t: t.copy_(t.detach() * 0 + 5),
    "clamp_": lambda t: t.clamp_(0.5, 2.5),
    "clamp_min": lambda t: t.clamp_(min=1.5),
    "relu_": lambda t: t.relu_(),
    "masked_fill_": lambda t: t.masked_fill_(t.detach() > 1.5, 0.0),
    "iadd": lambda t: t.__iadd__(1),
    "isub": lambda t: t.__isub__(1),
    "imul": lambda t: t.__imul__(3),
    "itruediv": lambda t: t.__itruediv__(4),
    "setitem_int": lambda t: t.__setitem__(0, 9.0),
    "setitem_slice": lambda t: t.__setitem__(slice(1, None), 9.0),
    "setitem_mask": lambda t: t.__setitem__(t.detach() > 1.5, -1.0),
    "setitem_list": lambda t: t.__setitem__([0, 1], 4.0),
    "setitem_tensor": lambda t: t.__setitem__(1, t.detach()[0] * 0 + 2),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_bumps_version(name):
    t = retrograd.tensor([1.0, -2.0, 3.0])
    v = t[:]
    r = INPLACE[name](t)
    assert t._version == 1 and v._version == 1
    if not name.startswith("setitem"):
        assert r is t
    INPLACE[name](v)
    assert t._version == 2


@needs_torch
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_values_and_version_match_torch(name):
    def f(lib):
        t = lib.tensor([1.0, -2.0, 3.0])
        v = t[1:]
        INPLACE[name](t)
        a = (t.clone(), t._version, v._version)
        INPLACE[name](v)
        return a, t, t._version, v._version

    compare(f)


@needs_torch
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_on_non_leaf_is_differentiable_like_torch(name):
    def f(lib):
        x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = x * 1.5
        v0 = y._version
        INPLACE[name](y)
        out = (y * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum()
        (g,) = lib.autograd.grad(out, x, create_graph=True)
        return y, y._version - v0, y.grad_fn.name(), g

    compare(f)


@needs_torch
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_on_view_of_non_leaf_is_differentiable_like_torch(name):
    def f(lib):
        x = lib.tensor([[1.0, -2.0, 3.0], [0.5, 2.5, -1.0]], dtype=lib.float64,
                       requires_grad=True)
        y = x * 2
        v = y[1]
        INPLACE[name](v)
        out = (y * y).sum()
        out.backward()
        return y, y.grad_fn.name(), x.grad, y._version

    compare(f)


# -- errors ------------------------------------------------------------------------------------


@needs_torch
@pytest.mark.parametrize(
    "case",
    ["pow_input", "mul_other", "exp_output", "sigmoid_output", "leaf_saved", "view_of_saved",
     "saved_via_detach", "setitem_saved", "tanh_output_view", "two_versions"],
)
def test_saved_tensor_modified_error_matches_torch(case):
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        if case == "pow_input":
            h = x * 1
            y = h ** 2
            h.add_(1)
        elif case == "mul_other":
            h = x + 0
            y = w * h
            h.mul_(2)
        elif case == "exp_output":
            y = x.exp()
            y.add_(1)
        elif case == "sigmoid_output":
            h = x.sigmoid()
            y = h * 1
            h.mul_(2)
        elif case == "leaf_saved":
            y = x * w
            with lib.no_grad():
                w.add_(1)
        elif case == "view_of_saved":
            h = x * 1
            y = h ** 2
            h[0:1].mul_(3)
        elif case == "saved_via_detach":
            h = x * 1
            y = h ** 2
            h.detach().zero_()
        elif case == "setitem_saved":
            h = x * 1
            y = h.sin()
            h[1] = 0.0
        elif case == "tanh_output_view":
            y = x.tanh()
            y[0].mul_(2)
        else:
            h = x * 1
            y = h * h
            h.add_(1)
            h.add_(1)
        y.sum().backward()

    ours, _ = compare_error(f)
    assert "modified by an inplace operation" in str(ours)


@needs_torch
@pytest.mark.parametrize(
    "op", ["add_", "setitem", "iadd", "mul_", "zero_", "fill_", "copy_", "relu_", "view_setitem",
           "view_mul_", "t_add_", "masked_fill_"],
)
def test_inplace_on_leaf_requiring_grad_error_matches_torch(op):
    def f(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        if op == "add_":
            x.add_(1)
        elif op == "setitem":
            x[0] = 5.0
        elif op == "iadd":
            x += 1
        elif op == "mul_":
            x.mul_(2)
        elif op == "zero_":
            x.zero_()
        elif op == "fill_":
            x.fill_(1)
        elif op == "copy_":
            x.copy_(lib.zeros(2, 2))
        elif op == "relu_":
            x.relu_()
        elif op == "view_setitem":
            x[0][1] = 5.0
        elif op == "view_mul_":
            x[0].mul_(2)
        elif op == "t_add_":
            x.t().add_(1)
        else:
            x.masked_fill_(x > 2, 0.0)

    compare_error(f)


def test_inplace_on_leaf_requiring_grad_raises():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation."):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0].mul_(2)
    assert x._version == 0
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 2.0])


@needs_torch
def test_inplace_on_expanded_view_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0])
        x.unsqueeze(0).expand(3, 2).add_(1)

    compare_error(f)


@needs_torch
def test_inplace_on_view_created_in_no_grad_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        with lib.no_grad():
            v = y[:1]
        v.mul_(2)

    compare_error(f)


@needs_torch
def test_inplace_on_multi_output_view_error_matches_torch():
    def f(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x * 1
        a, b = y.unbind(0)
        a.mul_(2)

    compare_error(f)


@needs_torch
def test_inplace_dtype_error_matches_torch():
    def f(lib):
        x = lib.tensor([1, 2])
        x.add_(1.5)

    compare_error(f)


@needs_torch
def test_inplace_shape_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0])
        x.add_(lib.ones(3, 2))

    compare_error(f)


# -- differentiable in-place on non-leaves and views -------------------------------------------


@needs_torch
def test_issue_example_setitem_and_slice_mul_():
    def f(lib):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        w = lib.tensor(5.0, requires_grad=True)
        y = x * 1
        y[0] = w
        y[1:].mul_(2)
        out = (y * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum()
        out.backward()
        return y, x.grad, w.grad, graph_sig(y, (x, w)), y._version

    compare(f)


def test_issue_example_values_without_torch():
    x = retrograd.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    w = retrograd.tensor(5.0, requires_grad=True)
    y = x * 1
    y[0] = w
    y[1:].mul_(2)
    (y * retrograd.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), [5.0, 4.0, 6.0, 8.0])
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 4.0, 6.0, 8.0])
    assert w.grad.item() == pytest.approx(1.0)
    assert y.grad_fn.name() == "torch::autograd::CopySlices"


@needs_torch
def test_setitem_boolean_mask_with_tensor_value():
    def f(lib):
        x = lib.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
        w = lib.tensor(2.0, requires_grad=True)
        y = x * 3
        y[y < 0] = w
        (y * y).sum().backward()
        return y, x.grad, w.grad, graph_sig(y, (x, w))

    compare(f)


@needs_torch
def test_setitem_boolean_mask_with_vector_value():
    def f(lib):
        x = lib.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
        w = lib.tensor([10.0, 20.0], requires_grad=True)
        y = x * 3
        y[x.detach() < 0] = w * 2
        (y * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        return y, x.grad, w.grad

    compare(f)


@needs_torch
def test_setitem_mask_2d_scalar():
    def f(lib):
        x = lib.tensor([[1.0, -2.0], [3.0, -4.0]], requires_grad=True)
        y = x * 2
        y[x < 0] = 0.0
        (y * y).sum().backward()
        return y, x.grad, graph_sig(y, (x,))

    compare(f)


@needs_torch
def test_setitem_mask_on_saved_output_error_matches_torch():
    def f(lib):
        x = lib.tensor([[1.0, -2.0], [3.0, -4.0]], requires_grad=True)
        y = x.exp()
        y[x < 0] = 0.0
        y.sum().backward()

    compare_error(f)


@needs_torch
def test_inplace_on_transposed_view():
    def f(lib):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        v = lib.tensor([1.0, -1.0, 2.0], requires_grad=True)
        y = x * 1
        t = y.t()
        t.mul_(v.unsqueeze(1))
        t[0].add_(10)
        (y * y).sum().backward()
        return y, t, x.grad, v.grad, graph_sig(y, (x, v))

    compare(f)


@needs_torch
def test_earlier_view_sees_inplace_on_other_view():
    def f(lib):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        y = x * 1
        a = y[:2]
        b = y[1:]
        a.mul_(3)
        out = (b * b).sum() + a.sum()
        out.backward()
        return a, b, y, x.grad, graph_sig(y, (x,))

    compare(f)


@needs_torch
def test_view_created_before_and_used_after_several_inplace_ops():
    def f(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([0.5, -0.5], dtype=lib.float64, requires_grad=True)
        y = x.sin()
        row0 = y[0]
        col1 = y[:, 1]
        row0.mul_(w)
        col1.add_(w)
        y[1, 0] = w.sum()
        out = (row0 * col1).sum() + (y ** 2).sum()
        (gx, gw) = lib.autograd.grad(out, (x, w), create_graph=True)
        (ggx,) = lib.autograd.grad((gx * gx).sum() + gw.sum(), x)
        return y, row0, col1, gx, gw, ggx

    compare(f)


@needs_torch
def test_copy_into_slice():
    def f(lib):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        w = lib.tensor([7.0, 8.0], requires_grad=True)
        y = x * 2
        y[1:3].copy_(w * w)
        (y * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        return y, x.grad, w.grad, graph_sig(y, (x, w))

    compare(f)


@needs_torch
def test_copy_with_broadcast_and_dtype():
    def f(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        w = lib.tensor([5.0, 6.0], dtype=lib.float64, requires_grad=True)
        y = x * 1
        y.copy_(w)
        (y * y).sum().backward()
        return y, x.grad, w.grad, graph_sig(y, (x, w))

    compare(f)


@needs_torch
def test_inplace_into_zeros_from_requires_grad_value():
    def f(lib):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        z = lib.zeros(2, 3)
        z[:, 1] = w * 3
        z[0, 2] = w[1]
        (z * z).sum().backward()
        return z, z.requires_grad, z.is_leaf, w.grad, graph_sig(z, (w,))

    compare(f)


@needs_torch
def test_iadd_on_non_leaf_and_double_backward():
    def f(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = x ** 2
        y += x
        y *= x
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return y, g, gg, graph_sig(y, (x,))

    compare(f)


@needs_torch
def test_inplace_on_view_of_view():
    def f(lib):
        x = lib.arange(12.0).view(3, 4).requires_grad_()
        y = x * 1
        v = y[1:]
        vv = v[:, ::2]
        vv.mul_(lib.tensor([[2.0, 3.0]]))
        vv[1].neg_()
        (y * y).sum().backward()
        return y, v, vv, x.grad

    compare(f)


@needs_torch
def test_inplace_on_view_that_saves_its_input():
    # pow_ and mul_ by a tensor need the old value of the view.
    def f(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = x + 1
        y[1:].pow_(2)
        y[:2].mul_(w)
        (g1, g2) = lib.autograd.grad(y.sum(), (x, w), create_graph=True)
        (gg,) = lib.autograd.grad((g1 * g1).sum() + (g2 * g2).sum(), x)
        return y, g1, g2, gg

    compare(f)


@needs_torch
def test_inplace_relu_clamp_on_view():
    def f(lib):
        x = lib.tensor([[-1.0, 2.0], [3.0, -4.0]], requires_grad=True)
        y = x * 1
        y[:, 1].clamp_(-3.0, 1.0)
        y[0].relu_()
        (y * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        return y, x.grad

    compare(f)


@needs_torch
def test_inplace_after_relu_on_view_error_matches_torch():
    # relu_ saves its output; any later in-place op on the same base bumps the shared counter.
    def f(lib):
        x = lib.tensor([[-1.0, 2.0], [3.0, -4.0]], requires_grad=True)
        y = x * 1
        y[0].relu_()
        y[1].clamp_(-3.0, 1.0)
        (y * 2).sum().backward()

    compare_error(f)


@needs_torch
def test_view_values_and_grads_after_base_modified():
    def f(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = y[1:]
        y.mul_(2)
        v.sum().backward()
        return v, x.grad, y.grad_fn.name()

    compare(f)


@needs_torch
def test_view_grad_fn_after_inplace_matches_torch():
    # PyTorch re-derives a modified view's history as AsStridedBackward0 over the base's
    # CopySlices (or the base's new node); the view's node name is user-visible.
    def f(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = y[1:]
        w = y[:2]
        v.mul_(2)
        a = graph_sig(v, (x,))
        b = graph_sig(w, (x,))
        y.add_(1)
        return a, b, graph_sig(v, (x,))

    compare(f)


@needs_torch
def test_data_assignment():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        v0 = x._version
        x.data = lib.tensor([3.0, 5.0])
        y = (x * x).sum()
        y.backward()
        return x, x.grad, x._version - v0, x.requires_grad, x.is_leaf

    compare(f)


@needs_torch
def test_data_assignment_after_graph_built():
    # The saved tensor's version is not bumped: backward uses the new values, no error.
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        x.data = lib.tensor([3.0, 5.0])
        y.backward()
        return x.grad

    compare(f)


@needs_torch
def test_data_inplace_does_not_break_backward():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        x.data.mul_(10)
        y.backward()
        return x, x.grad, x._version

    compare(f)


@needs_torch
def test_inplace_op_saving_nothing_after_saving_op_is_fine():
    # add_ on a tensor whose old value nobody saved: no version error.
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 2
        y = h + 1
        h.add_(1)
        (y.sum() + h.sum()).backward()
        return x.grad, h

    compare(f)


@needs_torch
def test_inplace_double_backward_of_setitem():
    def f(lib):
        x = lib.tensor([0.5, 1.0, 1.5], dtype=lib.float64, requires_grad=True)
        w = lib.tensor(0.7, dtype=lib.float64, requires_grad=True)
        y = x.sin() * 2  # not exp: modifying exp's saved output would (rightly) raise
        y[1] = w * w
        y[2:] *= x[:1]
        out = (y ** 3).sum()
        gx, gw = lib.autograd.grad(out, (x, w), create_graph=True)
        ggx, ggw = lib.autograd.grad(gx.sum() + gw * 2, (x, w))
        return y, gx, gw, ggx, ggw

    compare(f)


def test_inplace_gradcheck_and_gradgradcheck():
    def fn(x, w):
        y = x * 1
        y[0] = w
        y[1:].mul_(x[:2])
        return y.sin()

    x = retrograd.tensor([0.3, -0.7, 1.1], dtype=retrograd.float64, requires_grad=True)
    w = retrograd.tensor(0.4, dtype=retrograd.float64, requires_grad=True)
    assert retrograd.autograd.gradcheck(fn, (x, w))
    assert retrograd.autograd.gradgradcheck(fn, (x, w))


@needs_torch
def test_version_counter_of_saved_output_after_retain_graph_like_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        y.sum().backward(retain_graph=True)
        y.add_(1)
        y.sum().backward()

    compare_error(f)


# Operands PyTorch's nodes keep though retrograd's formulas do not read them: kept all the same
# (memory as PyTorch's), so changing one in place before backward is the same error.
_KEPT = {
    "gather": lambda lib, a, s: a.gather(0, lib.tensor([2, 0])),
    "take": lambda lib, a, s: a.take(lib.tensor([1])),
    "masked_select": lambda lib, a, s: a.masked_select(lib.tensor([True, False, True])),
    "cummax": lambda lib, a, s: a.cummax(0)[0],
    "nansum": lambda lib, a, s: a.nansum(),
    "nan_to_num": lambda lib, a, s: a.nan_to_num(),
    "erfinv": lambda lib, a, s: a.erfinv(),
    "sgn": lambda lib, a, s: a.sgn(),
    "maximum": lambda lib, a, s: lib.maximum(a, lib.tensor(2.0)),
    "fmin": lambda lib, a, s: lib.fmin(a, lib.tensor(2.0)),
    "fmod": lambda lib, a, s: lib.fmod(a, a * 0 + 4),
    "remainder": lambda lib, a, s: lib.remainder(a, a * 0 + 4),
    "xlogy_number": lambda lib, a, s: lib.xlogy(a, 2.0),
    "lerp_end": lambda lib, a, s: lib.lerp(a, a * 0 + 4, a * 0 + 0.25),
    "aminmax": lambda lib, a, s: lib.aminmax(a)[0],
    "div_floor": lambda lib, a, s: lib.div(a, a * 0 + 2, rounding_mode="floor"),
    "layer_norm_bias_source": lambda lib, a, s: lib.nn.functional.layer_norm(a[:2], (2,), None, s),
    "scatter_reduce_sum_source": lambda lib, a, s: a.scatter_reduce(0, lib.tensor([0, 0]), s,
                                                                    "sum"),
    "scatter_reduce_amax": lambda lib, a, s: a.scatter_reduce(0, lib.tensor([0, 2]), s, "amax"),
    # (these four on a (1, 1, 1, 3) input)
    "reflection_pad": lambda lib, a, s: lib.nn.functional.pad(a, (1, 1, 0, 0), mode="reflect"),
    "replication_pad": lambda lib, a, s: lib.nn.functional.pad(a, (1, 1, 0, 0), mode="replicate"),
    "adaptive_avg_pool2d": lambda lib, a, s: lib.nn.functional.adaptive_avg_pool2d(a, (1, 2)),
    "nll_loss": lambda lib, a, s: lib.nn.functional.nll_loss(a, lib.tensor([[[0, 0, 0]]])),
    "put_source": lambda lib, a, s: a.put(lib.tensor([0, 2]), s),
    "index_add_source": lambda lib, a, s: a.index_add(0, lib.tensor([0, 2]), s),
    "index_copy_source": lambda lib, a, s: a.index_copy(0, lib.tensor([0, 2]), s),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(_KEPT))
def test_kept_operand_modified_error_matches_torch(name):
    def f(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
        if name in ("reflection_pad", "replication_pad", "adaptive_avg_pool2d", "nll_loss"):
            a = lib.tensor([[[[1.0, 2.0, 3.0]]]], requires_grad=True) * 1  # (not a view)
        s = lib.tensor([4.0, 5.0], requires_grad=True) * 1
        y = _KEPT[name](lib, a, s)
        (s if name.endswith("_source") else a).add_(1)
        y.sum().backward()

    ours, _ = compare_error(f)
    assert "modified by an inplace operation" in str(ours)


@needs_torch
def test_aminmax_output_modified_error_matches_torch():
    """aminmax keeps both outputs, as PyTorch's node does."""
    def f(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
        lo, hi = lib.aminmax(a)
        assert lo.grad_fn._saved_min.item() == 1.0 and lo.grad_fn._saved_max.item() == 3.0
        hi.mul_(2)
        lo.backward()

    ours, _ = compare_error(f)
    assert "modified by an inplace operation" in str(ours)


@needs_torch
def test_erfinv_result_modified_is_no_error():
    """PyTorch's erfinv keeps its input, not its result."""
    def f(lib):
        a = lib.tensor([0.1, -0.5, 0.7], requires_grad=True)
        y = a.erfinv()
        z = y * 1
        y.mul_(2)
        z.sum().backward()
        return a.grad

    compare(f)


@needs_torch
@pytest.mark.parametrize("name", ["fmod", "remainder"])
def test_mod_keeps_operands_only_for_others_gradient(name):
    """fmod/remainder keep their operands only where ``other`` requires grad (only its gradient
    reads them): changing ``input`` in place otherwise is no error."""
    def f(lib):
        a = lib.tensor([1.0, -2.0, 3.5], requires_grad=True) * 1
        y = getattr(lib, name)(a, lib.tensor([2.0, 1.5, -1.0]))
        kept = (y.grad_fn._saved_self, y.grad_fn._saved_other)
        a.add_(1)
        y.sum().backward()
        return kept

    compare(f)


@needs_torch
@pytest.mark.parametrize("name", ["put", "index_add"])
def test_source_kept_only_for_its_gradient(name):
    """PyTorch keeps put's and index_add's source only where it requires grad: changing one
    that does not before backward is no error."""
    def f(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
        s = lib.tensor([4.0, 5.0])
        y = _KEPT[name + "_source"](lib, a, s)
        kept = y.grad_fn._saved_source
        s.add_(1)
        y.sum().backward()
        return kept, a.grad

    compare(f)
