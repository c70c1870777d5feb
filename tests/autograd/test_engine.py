"""The engine: ``Tensor.backward``, ``autograd.backward`` and ``autograd.grad``.

Most tests run one function under retrograd and under torch (the oracle) and compare values,
gradients, graph structure and error messages. Tests that need no oracle assert fixed values.
"""

from __future__ import annotations

import gc
import re
import sys
import warnings

import numpy as np
import pytest

import retrograd

from ..oracle import _torch, compare, compare_error, graph_sig, leaf, needs_torch

# -- accumulation, several paths, broadcasting -------------------------------------------------


def test_grad_accumulates_across_backward_calls():
    x = retrograd.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0, 12.0])
    (3 * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [7.0, 11.0, 15.0])
    assert x.grad.dtype == retrograd.float32
    assert x.grad.grad_fn is None and not x.grad.requires_grad


def test_grad_accumulates_when_grad_object_kept_by_user():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    g1 = x.grad
    (x * 3).sum().backward()
    # PyTorch accumulates in place when nothing requires grad: the same object is updated.
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])
    np.testing.assert_allclose(g1.numpy(), x.grad.numpy())


def test_several_paths_add_up():
    x = retrograd.tensor(2.0, requires_grad=True)
    y = x * x + 3 * x + x.exp() * x
    y.backward()
    expect = 2 * 2.0 + 3 + np.exp(2.0) * (1 + 2.0)
    assert x.grad.item() == pytest.approx(expect, rel=1e-6)


def test_same_tensor_used_twice_in_one_op():
    x = retrograd.tensor([1.0, -2.0], requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -4.0])
    x.grad = None
    (x + x + x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_broadcasting_is_undone():
    a = retrograd.ones(3, 1, requires_grad=True)
    b = retrograd.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    c = retrograd.tensor(2.0, requires_grad=True)
    d = retrograd.ones(1, 4, requires_grad=True)
    (a * b * c + d).sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,)
    assert c.grad.shape == () and d.grad.shape == (1, 4)
    np.testing.assert_allclose(a.grad.numpy(), np.full((3, 1), 20.0))
    np.testing.assert_allclose(b.grad.numpy(), [6.0, 6.0, 6.0, 6.0])
    assert c.grad.item() == pytest.approx(30.0)
    np.testing.assert_allclose(d.grad.numpy(), np.full((1, 4), 3.0))


@needs_torch
@pytest.mark.parametrize(
    "sa,sb",
    [((3, 1), (4,)), ((), (2, 3)), ((1, 3), (2, 1)), ((2, 1, 3), (4, 1)), ((5,), (1,)),
     ((2, 3), (2, 3))],
)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow"])
def test_broadcasting_grads_match_torch(sa, sb, op):
    rng = np.random.default_rng(0)
    a0 = rng.uniform(0.5, 2.0, sa)
    b0 = rng.uniform(0.5, 2.0, sb)

    def f(lib):
        a = lib.tensor(a0, dtype=lib.float64, requires_grad=True)
        b = lib.tensor(b0, dtype=lib.float64, requires_grad=True)
        out = getattr(lib, op)(a, b)
        g = lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)))
        out.backward(g)
        return out, a.grad, b.grad

    compare(f)


@needs_torch
def test_dtype_promotion_is_undone_in_grads():
    def f(lib):
        a = lib.tensor([1.0, 2.0], dtype=lib.float32, requires_grad=True)
        b = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
        out = a * b
        out.sum().backward()
        return out, a.grad, b.grad

    compare(f)


# -- retain_graph and freeing ------------------------------------------------------------------


def test_retain_graph_allows_second_backward():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first, rtol=1e-6)


def test_second_backward_raises():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


@needs_torch
@pytest.mark.parametrize(
    "expr",
    [
        lambda x: (x * x).sum(),
        lambda x: x.exp().sum(),
        lambda x: (x ** 2).mean(),
        lambda x: (x.tanh() * 2).sum(),
        lambda x: (x / (x + 1)).sum(),
    ],
)
def test_second_backward_error_text_matches_torch(expr):
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = expr(x)
        y.backward()
        y.backward()

    compare_error(f)


@needs_torch
def test_second_autograd_grad_error_text_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        lib.autograd.grad(y, x)
        lib.autograd.grad(y, x)

    compare_error(f)


def test_backward_without_saved_tensors_can_run_twice():
    # AddBackward0 saves nothing; PyTorch lets this graph be walked twice.
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


# -- create_graph and higher orders ------------------------------------------------------------


def test_third_order_of_x_to_the_fourth():
    x = retrograd.tensor(1.5, requires_grad=True)
    y = x ** 4
    (g1,) = retrograd.autograd.grad(y, x, create_graph=True)
    (g2,) = retrograd.autograd.grad(g1, x, create_graph=True)
    (g3,) = retrograd.autograd.grad(g2, x, create_graph=True)
    (g4,) = retrograd.autograd.grad(g3, x, create_graph=True)
    assert g1.item() == pytest.approx(4 * 1.5 ** 3)
    assert g2.item() == pytest.approx(12 * 1.5 ** 2)
    assert g3.item() == pytest.approx(24 * 1.5)
    assert g4.item() == pytest.approx(24.0)
    assert g3.requires_grad and g3.grad_fn is not None


def test_create_graph_backward_puts_graph_into_grad():
    x = retrograd.tensor(2.0, requires_grad=True)
    (x ** 3).backward(create_graph=True)
    g = x.grad
    assert g.item() == pytest.approx(12.0)
    assert g.requires_grad and g.grad_fn is not None
    (h,) = retrograd.autograd.grad(g, x)
    assert h.item() == pytest.approx(12.0)


def test_create_graph_retains_graph_by_default():
    x = retrograd.tensor(2.0, requires_grad=True)
    y = x ** 3
    retrograd.autograd.grad(y, x, create_graph=True)
    (g,) = retrograd.autograd.grad(y, x)  # the graph was retained
    assert g.item() == pytest.approx(12.0)


@needs_torch
@pytest.mark.parametrize(
    "name,expr",
    [
        ("pow4", lambda lib, x: x ** 4),
        ("sin", lambda lib, x: lib.sin(x)),
        ("exp_mul", lambda lib, x: lib.exp(x) * x),
        ("tanh", lambda lib, x: lib.tanh(x)),
        ("sigmoid", lambda lib, x: lib.sigmoid(x)),
        ("log_sq", lambda lib, x: lib.log(x) * x * x),
        ("div", lambda lib, x: 1 / (1 + x * x)),
        ("sqrt", lambda lib, x: lib.sqrt(x + 1)),
        ("cos_over", lambda lib, x: lib.cos(x) / x),
    ],
)
def test_higher_orders_match_torch(name, expr):
    def f(lib):
        x = lib.tensor([0.3, 1.2, 2.0], dtype=lib.float64, requires_grad=True)
        y = expr(lib, x).sum()
        grads = []
        g = y
        for _ in range(4):
            (g,) = lib.autograd.grad(g, x, create_graph=True)
            grads.append(g)
            g = g.sum()
        return grads

    compare(f)


@needs_torch
def test_mixed_second_derivatives_match_torch():
    def f(lib):
        x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=lib.float64, requires_grad=True)
        y = lib.tanh(w @ x).pow(2).sum()
        gx, gw = lib.autograd.grad(y, (x, w), create_graph=True)
        (gxw,) = lib.autograd.grad((gx * gx).sum(), w, create_graph=True)
        (gwx,) = lib.autograd.grad(gw.sum(), x)
        return gx, gw, gxw, gwx

    compare(f)


# -- inputs= ---------------------------------------------------------------------------------


def test_backward_inputs_limits_accumulation_to_leaves_listed():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    w = retrograd.tensor([3.0, 4.0], requires_grad=True)
    (x * w).sum().backward(inputs=[x])
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])
    assert w.grad is None
    (x * w).sum().backward(inputs=w)
    np.testing.assert_allclose(w.grad.numpy(), [1.0, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])


@needs_torch
def test_backward_inputs_non_leaf_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        h = x * w
        out = (h * h).sum()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.backward(inputs=[h, w])
            return x.grad, w.grad, h.grad, h.retains_grad

    compare(f)


@needs_torch
def test_backward_inputs_non_leaf_only_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x.exp()
        out = (h * 2).sum()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.backward(inputs=h)
            out2 = (h * 3).sum()
            # PyTorch runs (and frees) h's own node for backward(inputs=h): this raises.
            out2.backward(inputs=h)
            return x.grad, h.grad

    compare_error(f)


@needs_torch
def test_backward_empty_inputs_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).sum().backward(inputs=[])

    compare_error(f)


@needs_torch
def test_autograd_backward_multiple_roots_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = x * 2
        b = x.exp()
        lib.autograd.backward([a, b.sum()], [lib.tensor([1.0, -1.0]), None])
        return x.grad

    compare(f)


# -- autograd.grad ---------------------------------------------------------------------------


def test_grad_does_not_touch_dot_grad():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    (g,) = retrograd.autograd.grad((x * x).sum(), x)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
    assert x.grad is None
    assert isinstance(retrograd.autograd.grad((x * x).sum(), [x]), tuple)


def test_grad_allow_unused_and_materialize():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    z = retrograd.tensor([5.0, 6.0, 7.0], requires_grad=True)
    y = (x * 2).sum()
    gx, gz = retrograd.autograd.grad(y, [x, z], retain_graph=True, allow_unused=True)
    np.testing.assert_allclose(gx.numpy(), [2.0, 2.0])
    assert gz is None
    gx, gz = retrograd.autograd.grad(y, [x, z], materialize_grads=True)
    np.testing.assert_allclose(gz.numpy(), [0.0, 0.0, 0.0])
    assert gz.shape == (3,) and gz.dtype == retrograd.float32


@needs_torch
def test_grad_unused_input_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        z = lib.tensor([5.0], requires_grad=True)
        lib.autograd.grad((x * 2).sum(), [x, z])

    ours, _ = compare_error(f)
    assert "allow_unused=True" in str(ours)


@needs_torch
def test_grad_materialize_with_allow_unused_false_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        lib.autograd.grad((x * 2).sum(), x, allow_unused=False, materialize_grads=True)

    compare_error(f)


@needs_torch
def test_grad_of_input_that_does_not_require_grad_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        c = lib.tensor([1.0, 2.0])
        lib.autograd.grad((x * c).sum(), c)

    compare_error(f)


@needs_torch
def test_grad_with_respect_to_intermediate_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        h = x.sin()
        y = (h * h * x).sum()
        gh, gx = lib.autograd.grad(y, [h, x])
        return gh, gx, x.grad is None

    compare(f)


@needs_torch
def test_grad_grad_outputs_shape_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        lib.autograd.grad(x * 2, x, grad_outputs=lib.ones(3))

    compare_error(f)


@needs_torch
def test_backward_gradient_shape_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).backward(lib.ones(2, 1))

    compare_error(f)


@needs_torch
def test_grad_grad_outputs_too_few_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        lib.autograd.grad([x * 2, x * 3], x, grad_outputs=[lib.ones(2)])

    compare_error(f)


@needs_torch
def test_grad_grad_outputs_empty_list_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        lib.autograd.grad([x * 2, x * 3], x, grad_outputs=[])

    compare_error(f)


@needs_torch
def test_grad_grad_outputs_too_many_matches_torch():
    # torch 2.13 ignores extra grad_outputs rather than raising.
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        return lib.autograd.grad(x * 2, x, grad_outputs=[lib.ones(2), lib.ones(2)])

    compare(f)


@needs_torch
def test_autograd_backward_grad_tensors_count_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        lib.autograd.backward([x * 2, x * 3], [lib.ones(2)])

    compare_error(f)


@needs_torch
def test_grad_outputs_values_match_torch():
    def f(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y1 = x * x
        y2 = x.sum(0)
        return lib.autograd.grad(
            [y1, y2], x, grad_outputs=[lib.tensor([[1.0, 0.5], [0.0, 2.0]]), lib.tensor([1.0, 3.0])]
        )

    compare(f)


def test_grad_outputs_float64_into_float32_graph():
    # A gradient of another dtype is cast to the output's dtype, as PyTorch does.
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    g64 = retrograd.ones(2, dtype=retrograd.float64)
    (g,) = retrograd.autograd.grad(x * 2, x, grad_outputs=g64)
    assert g.dtype == retrograd.float32
    np.testing.assert_allclose(g.numpy(), [2.0, 2.0])


# -- errors on the roots -----------------------------------------------------------------------


def test_non_scalar_implicit_grad_error():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as ei:
        (x * 2).backward()
    assert str(ei.value) == "grad can be implicitly created only for scalar outputs"


@needs_torch
@pytest.mark.parametrize("api", ["backward", "grad"])
def test_non_scalar_implicit_grad_error_matches_torch(api):
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        if api == "backward":
            (x * 2).backward()
        else:
            lib.autograd.grad(x * 2, x)

    compare_error(f)


def test_no_grad_fn_error():
    x = retrograd.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError) as ei:
        x.sum().backward()
    assert str(ei.value) == (
        "element 0 of tensors does not require grad and does not have a grad_fn"
    )


@needs_torch
def test_no_grad_fn_error_second_element_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        c = lib.tensor([1.0, 2.0])
        lib.autograd.backward([x.sum(), c.sum()])

    compare_error(f)


@needs_torch
def test_no_grad_fn_error_under_no_grad_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            y = (x * 2).sum()
        y.backward()

    compare_error(f)


@needs_torch
def test_backward_on_leaf_itself_matches_torch():
    def f(lib):
        x = lib.tensor(3.0, requires_grad=True)
        x.backward()
        x.backward(lib.tensor(2.0))
        return x.grad

    compare(f)


# -- retain_grad and .grad on non-leaves -------------------------------------------------------


def test_retain_grad():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    (y * y).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [6.0, 12.0])
    np.testing.assert_allclose(x.grad.numpy(), [18.0, 36.0])


@needs_torch
def test_retain_grad_accumulates_and_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.retain_grad()
        y.retain_grad()  # twice is fine
        z = (y * y).sum()
        z.backward(retain_graph=True)
        g1 = y.grad.clone()
        z.backward()
        return g1, y.grad, x.grad, y.retains_grad, x.retains_grad

    compare(f)


@needs_torch
def test_retained_grad_not_aliased_with_leaf_grad():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        y.retain_grad()
        z = y + 0
        z.backward(lib.tensor([1.0, 1.0]))
        x.grad.add_(10)  # must not change y.grad
        return y.grad, x.grad

    compare(f)


def _grad_warning(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g = y.grad
    # torch appends where in its C++ sources the warning came from: not part of the contract.
    return g, [(wi.category, re.sub(r"\s*\(Triggered internally at .*\)$", "", str(wi.message)))
               for wi in w]


def test_grad_on_non_leaf_warns():
    g, w = _grad_warning(retrograd)
    assert g is None
    assert len(w) == 1 and w[0][0] is UserWarning
    assert "is not a leaf Tensor is being accessed" in w[0][1]
    assert "retain_grad()" in w[0][1]


@needs_torch
def test_grad_on_non_leaf_warning_text_matches_torch():
    ours = _grad_warning(retrograd)[1]
    ref = _grad_warning(_torch)[1]
    assert ours == ref


def test_grad_on_leaf_or_retained_does_not_warn():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is None
        assert y.grad is None


@needs_torch
def test_retain_grad_on_tensor_without_grad_error_matches_torch():
    def f(lib):
        lib.tensor([1.0]).retain_grad()

    compare_error(f)


# -- tensor hooks ------------------------------------------------------------------------------


def test_leaf_hook_replaces_gradient_and_can_be_removed():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    seen = []

    def hook(g):
        seen.append(g.numpy().copy())
        return g * 10

    h = x.register_hook(hook)
    (x * x).sum().backward()
    np.testing.assert_allclose(seen[0], [2.0, 4.0])
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 40.0])
    h.remove()
    x.grad = None
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    assert len(seen) == 1


def test_non_leaf_hook_replaces_gradient_and_can_be_removed():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    seen = []

    def hook(g):
        seen.append(g.numpy().copy())
        return g + 1

    h = y.register_hook(hook)
    (y * y).sum().backward(retain_graph=True)
    np.testing.assert_allclose(seen[0], [6.0, 12.0])
    np.testing.assert_allclose(x.grad.numpy(), [21.0, 39.0])
    h.remove()
    x.grad = None
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [18.0, 36.0])


@needs_torch
def test_hooks_order_and_values_match_torch():
    def f(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: log.append(("x1", g.tolist())))
        x.register_hook(lambda g: g * 2)
        x.register_hook(lambda g: log.append(("x3", g.tolist())))
        y = x * x
        y.register_hook(lambda g: log.append(("y", g.tolist())))
        y.register_hook(lambda g: g - 1)
        y.retain_grad()
        z = (y * 3).sum()
        z.backward()
        return log, x.grad, y.grad

    compare(f)


@needs_torch
def test_hook_on_retained_grad_order_matches_torch():
    # PyTorch: hooks registered before retain_grad change the retained grad; after do not.
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g * 10)
        y.retain_grad()
        y.register_hook(lambda g: g + 100)
        y.sum().backward()
        return y.grad, x.grad

    compare(f)


@needs_torch
def test_hook_under_create_graph_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = x ** 3
        y.register_hook(lambda g: g * x)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g, gg

    compare(f)


@needs_torch
def test_register_hook_on_tensor_without_grad_error_matches_torch():
    def f(lib):
        lib.tensor([1.0]).register_hook(lambda g: g)

    compare_error(f)


def test_post_accumulate_grad_hook():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    seen = []

    def hook(t):
        assert t is x
        seen.append(t.grad.numpy().copy())

    h = x.register_post_accumulate_grad_hook(hook)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert len(seen) == 2
    np.testing.assert_allclose(seen[0], [2.0, 2.0])
    np.testing.assert_allclose(seen[1], [5.0, 5.0])
    h.remove()
    (x * 3).sum().backward()
    assert len(seen) == 2


def test_post_accumulate_grad_hook_not_run_by_autograd_grad():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(1))
    retrograd.autograd.grad((x * 2).sum(), x)
    assert seen == []


def test_post_accumulate_grad_hook_can_zero_grad_in_place():
    # The optimizer-in-backward pattern: step and clear the grad inside the hook.
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)

    def hook(t):
        with retrograd.no_grad():
            t.sub_(0.5 * t.grad)
        t.grad = None

    x.register_post_accumulate_grad_hook(hook)
    (x * x).sum().backward()
    np.testing.assert_allclose(x.detach().numpy(), [0.0, 0.0])
    assert x.grad is None


@needs_torch
def test_post_accumulate_grad_hook_on_non_leaf_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0], requires_grad=True)
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)

    compare_error(f)


# -- node hooks --------------------------------------------------------------------------------


@needs_torch
def test_node_hooks_see_and_replace_gradients_like_torch():
    def f(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        y = x * w
        node = y.grad_fn

        def pre(grad_outputs):
            log.append(("pre", [g.tolist() for g in grad_outputs]))
            return (grad_outputs[0] * 2,)

        def post(grad_inputs, grad_outputs):
            log.append(("post", [None if g is None else g.tolist() for g in grad_inputs],
                        [g.tolist() for g in grad_outputs]))
            return (grad_inputs[0] + 1, grad_inputs[1])

        node.register_prehook(pre)
        node.register_hook(post)
        y.backward(lib.tensor([1.0, -1.0]))
        return log, x.grad, w.grad

    compare(f)


@needs_torch
def test_node_hook_returning_none_and_removed_like_torch():
    def f(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        h1 = y.grad_fn.register_hook(lambda gi, go: log.append("post"))
        h2 = y.grad_fn.register_prehook(lambda go: log.append("pre"))
        z = y.sum()
        z.backward(retain_graph=True)
        h1.remove()
        h2.remove()
        z.backward()
        return log, x.grad

    compare(f)


@needs_torch
def test_node_hook_with_unused_input_sees_none_like_torch():
    def f(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        c = lib.tensor([3.0, 4.0])
        y = x * c
        y.grad_fn.register_hook(lambda gi, go: log.append([g is None for g in gi]))
        y.sum().backward()
        return log, x.grad

    compare(f)


@needs_torch
def test_tensor_hook_runs_before_node_prehook_like_torch():
    def f(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.grad_fn.register_prehook(lambda go: log.append(("node", go[0].tolist())))
        y.register_hook(lambda g: (log.append(("tensor", g.tolist())), g * 3)[1])
        y.sum().backward()
        return log, x.grad

    compare(f)


# -- grad_fn names and next_functions ----------------------------------------------------------


def _structures():
    def s(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        w = leaf(lib, [0.5, -1.0, 2.0])
        c = leaf(lib, [1.0, 1.0, 1.0], requires_grad=False)
        m = leaf(lib, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        return x, w, c, m

    cases = {
        "mul_sum": lambda lib, x, w, c, m: (x * w).sum(),
        "add_scalar": lambda lib, x, w, c, m: x + 2,
        "radd": lambda lib, x, w, c, m: 2 + x,
        "sub": lambda lib, x, w, c, m: x - w,
        "rsub": lambda lib, x, w, c, m: 1 - x,
        "mul_const_tensor": lambda lib, x, w, c, m: x * c,
        "const_times_leaf": lambda lib, x, w, c, m: c * x,
        "div": lambda lib, x, w, c, m: x / w,
        "rdiv": lambda lib, x, w, c, m: 1 / x,
        "div_scalar": lambda lib, x, w, c, m: x / 2,
        "pow_scalar": lambda lib, x, w, c, m: x ** 2,
        "pow_tensor": lambda lib, x, w, c, m: x ** w,
        "rpow": lambda lib, x, w, c, m: 2 ** x,
        "neg": lambda lib, x, w, c, m: -x,
        "mean": lambda lib, x, w, c, m: x.mean(),
        "sum_dim": lambda lib, x, w, c, m: m.sum(0),
        "mean_dim": lambda lib, x, w, c, m: m.mean(1, keepdim=True),
        "exp_log": lambda lib, x, w, c, m: x.exp().log(),
        "trig": lambda lib, x, w, c, m: x.sin() * x.cos(),
        "tanh_sigmoid_relu": lambda lib, x, w, c, m: x.tanh().sigmoid().relu(),
        "abs_sqrt": lambda lib, x, w, c, m: x.abs().sqrt(),
        "clamp": lambda lib, x, w, c, m: x.clamp(0.5, 2.5),
        "clamp_min": lambda lib, x, w, c, m: x.clamp(min=0.5),
        "matmul_mv": lambda lib, x, w, c, m: x @ m,
        "matmul_mm": lambda lib, x, w, c, m: m @ m.t(),
        "mm": lambda lib, x, w, c, m: lib.mm(m.t(), m),
        "view": lambda lib, x, w, c, m: m.view(2, 3),
        "reshape": lambda lib, x, w, c, m: m.reshape(6),
        "transpose": lambda lib, x, w, c, m: m.transpose(0, 1),
        "T": lambda lib, x, w, c, m: m.T,
        "permute": lambda lib, x, w, c, m: m.permute(1, 0),
        "expand": lambda lib, x, w, c, m: x.unsqueeze(1).expand(3, 4),
        "squeeze": lambda lib, x, w, c, m: x.unsqueeze(0).squeeze(0),
        "squeeze_dim": lambda lib, x, w, c, m: m.unsqueeze(1).squeeze(1),
        "index_int": lambda lib, x, w, c, m: m[1],
        "index_slice": lambda lib, x, w, c, m: m[1:, :1],
        "index_adv": lambda lib, x, w, c, m: x[[0, 2]],
        "index_mask": lambda lib, x, w, c, m: x[x > 1.5],
        "max_full": lambda lib, x, w, c, m: m.max(),
        "max_dim": lambda lib, x, w, c, m: m.max(1)[0],
        "max_dim_indices_unused": lambda lib, x, w, c, m: m.max(0).values * 2,
        "where": lambda lib, x, w, c, m: lib.where(x > 1.5, x, w),
        "norm": lambda lib, x, w, c, m: x.norm(),
        "shared_subexpr": lambda lib, x, w, c, m: (lambda h: h * h + h)(x * w),
        "leaf_twice": lambda lib, x, w, c, m: x * x,
        "chain": lambda lib, x, w, c, m: ((x + w) * (x - w)).exp().sum() / 3,
        "detach_mix": lambda lib, x, w, c, m: x * w.detach(),
        "clone": lambda lib, x, w, c, m: x.clone(),
        "unbind": lambda lib, x, w, c, m: list(m)[1],
    }
    return s, cases


_SETUP, _CASES = _structures()


@needs_torch
@pytest.mark.parametrize("name", sorted(_CASES))
def test_graph_structure_matches_torch(name):
    expr = _CASES[name]

    def f(lib):
        x, w, c, m = _SETUP(lib)
        out = expr(lib, x, w, c, m)
        return graph_sig(out, (x, w, c, m)), out

    compare(f)


@needs_torch
def test_graph_structure_inplace_matches_torch():
    def f(lib):
        x, w, c, m = _SETUP(lib)
        y = x * 1
        y.mul_(w)
        y += 1
        return graph_sig(y, (x, w)), y

    compare(f)


def test_grad_fn_repr_and_name():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).sum()
    assert y.grad_fn.name() == "SumBackward0"
    r = repr(y.grad_fn)
    assert r.startswith("<SumBackward0 object at 0x") and r.endswith(">")
    acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert repr(acc).startswith("<AccumulateGrad object at 0x")
    assert x.grad_fn is None and x.is_leaf and not y.is_leaf


def test_accumulate_grad_variable_identity_and_sharing():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2
    b = x + 1
    acc_a = a.grad_fn.next_functions[0][0]
    acc_b = b.grad_fn.next_functions[0][0]
    assert acc_a.variable is x
    assert acc_a is acc_b  # one AccumulateGrad per leaf while the graph holds it
    c = retrograd.tensor([1.0, 2.0])
    assert (x * c).grad_fn.next_functions[1] == (None, 0)


@needs_torch
def test_accumulate_grad_variable_identity_like_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = x * 2
        b = x * x
        acc = a.grad_fn.next_functions[0][0]
        return (acc.variable is x, acc is b.grad_fn.next_functions[0][0],
                acc is b.grad_fn.next_functions[1][0], type(acc).__name__, acc.name(),
                acc.next_functions)

    compare(f)


@needs_torch
def test_multi_output_next_functions_input_nr_match_torch():
    def f(lib):
        x = lib.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
        rows = x.unbind(0)
        y = rows[1] * rows[0]
        return graph_sig(y, (x,)), y

    compare(f)


@needs_torch
def test_graph_structure_for_int_and_bool_outputs_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        cmp = x > 1.5
        idx = x.argmax()
        return (cmp.requires_grad, cmp.grad_fn is None, cmp.dtype, idx.requires_grad,
                idx.grad_fn is None, (x * cmp).grad_fn.next_functions[1])

    compare(f)


# -- deep graphs -------------------------------------------------------------------------------


def test_million_op_chain_backward_and_delete():
    limit = sys.getrecursionlimit()
    x = retrograd.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(1_000_000):
        y = y * 1.0000001
    y.backward()
    # float32 rounding: the gradient is the same product of a million factors as y itself.
    assert 1.09 < x.grad.item() < 1.14
    assert x.grad.item() == pytest.approx(y.item(), rel=1e-4)
    # A second, retained graph freed by dropping the last reference.
    y = x
    for _ in range(1_000_000):
        y = y * 1.0000001
    del y
    gc.collect()
    assert sys.getrecursionlimit() == limit


def test_deep_chain_autograd_grad_and_create_graph():
    x = retrograd.tensor(0.5, dtype=retrograd.float64, requires_grad=True)
    y = x
    for _ in range(20_000):
        y = y * 1.0001 + 0.0
    (g,) = retrograd.autograd.grad(y, x, create_graph=True)
    assert g.item() == pytest.approx(1.0001 ** 20_000, rel=1e-9)
    del g, y
    gc.collect()


# -- gradient stealing safety ------------------------------------------------------------------


def _shares(a, b) -> bool:
    return np.shares_memory(np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy()))


def test_sibling_leaf_grads_do_not_share_memory():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = retrograd.tensor([3.0, 4.0], requires_grad=True)
    a = (x + y) * 2
    a.sum().backward()
    assert not _shares(x.grad, y.grad)
    x.grad.add_(100)
    np.testing.assert_allclose(y.grad.numpy(), [2.0, 2.0])
    (x + y).backward(retrograd.tensor([1.0, 1.0]))  # accumulates into x.grad in place
    np.testing.assert_allclose(x.grad.numpy(), [103.0, 103.0])
    np.testing.assert_allclose(y.grad.numpy(), [3.0, 3.0])


def test_user_gradient_not_aliased_into_grad():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = retrograd.tensor([3.0, 4.0], requires_grad=True)
    g = retrograd.tensor([1.0, 1.0])
    (x + y).backward(g)
    assert not _shares(x.grad, g) and not _shares(y.grad, g) and not _shares(x.grad, y.grad)
    g.mul_(5)
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])
    np.testing.assert_allclose(y.grad.numpy(), [1.0, 1.0])
    x.grad.add_(1)
    np.testing.assert_allclose(g.numpy(), [5.0, 5.0])


def test_user_gradient_not_aliased_into_grad_of_leaf_root():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    g = retrograd.tensor([1.0, 1.0])
    x.backward(g)
    assert not _shares(x.grad, g)
    x.backward(g)
    np.testing.assert_allclose(g.numpy(), [1.0, 1.0])
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_user_gradient_not_aliased_through_clone_and_view():
    x = retrograd.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    g = retrograd.ones(4)
    x.clone().view(4).backward(g)
    assert not _shares(x.grad, g)
    x.grad.zero_()
    np.testing.assert_allclose(g.numpy(), np.ones(4))


def test_hook_captured_gradient_not_aliased_into_leaf_grad():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    kept = []
    x.register_hook(lambda g: kept.append(g))
    (x * 2).sum().backward()
    np.testing.assert_allclose(kept[0].numpy(), [2.0, 2.0])
    (x * 2).sum().backward()  # accumulates into x.grad; the captured tensor must not change
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 4.0])
    np.testing.assert_allclose(kept[0].numpy(), [2.0, 2.0])


def test_non_leaf_hook_captured_gradient_not_aliased_into_leaf_grad():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = x.clone()
    kept = []
    y.register_hook(lambda g: kept.append(g))
    (y * 2).sum().backward()
    x.grad.add_(10)
    np.testing.assert_allclose(kept[0].numpy(), [2.0, 2.0])


def test_retained_grad_not_aliased_with_leaf_grad_no_torch():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = x.clone()
    y.retain_grad()
    (y * 2).sum().backward()
    assert not _shares(x.grad, y.grad)
    x.grad.add_(10)
    np.testing.assert_allclose(y.grad.numpy(), [2.0, 2.0])


def test_grad_assigned_by_user_is_accumulated_in_place():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    mine = retrograd.tensor([10.0, 10.0])
    x.grad = mine
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [12.0, 12.0])
    # PyTorch adds in place into the assigned tensor.
    np.testing.assert_allclose(mine.numpy(), [12.0, 12.0])


@needs_torch
def test_stealing_cases_match_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0], requires_grad=True)
        g = lib.tensor([1.0, -1.0])
        (x + y).backward(g)
        g.mul_(3)
        x.grad.mul_(2)
        z = x.clone()
        (z + y).backward(lib.tensor([0.5, 0.5]))
        return x.grad, y.grad, g

    compare(f)


@needs_torch
def test_grad_setter_errors_match_torch():
    def wrong_shape(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.grad = lib.zeros(3)

    def wrong_dtype(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.grad = lib.zeros(2, dtype=lib.float64)

    def not_tensor(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.grad = [1.0, 2.0]

    compare_error(wrong_shape)
    compare_error(wrong_dtype)
    compare_error(not_tensor, exact=False)


@needs_torch
def test_requires_grad_on_integer_error_matches_torch():
    def f(lib):
        lib.tensor([1, 2]).requires_grad_()

    def g(lib):
        lib.tensor([1, 2], requires_grad=True)

    compare_error(f)
    compare_error(g)


@needs_torch
def test_requires_grad_false_on_non_leaf_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0], requires_grad=True)
        (x * 2).requires_grad_(False)

    compare_error(f)


@needs_torch
def test_grad_dtype_follows_leaf_like_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        h = lib.tensor([1.0, 2.0], dtype=lib.float16, requires_grad=True)
        (x.float() * 2).sum().backward()
        (h.float() * 3).sum().backward()
        return x.grad, h.grad

    compare(f)


def test_double_backward_through_saved_output_and_its_consumer():
    # t = tanh(x) is both saved by PowBackward0 (as an input) and by TanhBackward0 (as its
    # output); the double-backward graph reaches t's node from two sides.
    x = retrograd.tensor([0.5, 1.5], dtype=retrograd.float64, requires_grad=True)
    t = x.tanh()
    y = (t ** 2).sum()
    (g,) = retrograd.autograd.grad(y, x, create_graph=True)
    (gg,) = retrograd.autograd.grad(g.sum(), x)
    tv = np.tanh([0.5, 1.5])
    # d/dx [2 t (1 - t^2)] = 2 (1 - t^2) (1 - 3 t^2)
    np.testing.assert_allclose(gg.numpy(), 2 * (1 - tv**2) * (1 - 3 * tv**2), rtol=1e-10)


def test_node_runs_once_per_backward_in_double_backward():
    # Tensor hooks on t run once per pass with the full gradient, even in the double backward.
    x = retrograd.tensor([0.5, 1.5], dtype=retrograd.float64, requires_grad=True)
    t = x.tanh()
    y = (t ** 2).sum()
    (g,) = retrograd.autograd.grad(y, x, create_graph=True)
    calls = []
    t.register_hook(lambda gr: calls.append(gr.numpy().copy()))
    retrograd.autograd.grad(g.sum(), x, retain_graph=True)
    assert len(calls) == 1


@needs_torch
def test_hooks_and_retain_grad_under_autograd_grad_like_torch():
    def f(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: (log.append(("x", g.tolist())), g * 2)[1])
        y = x * 3
        y.retain_grad()
        y.register_hook(lambda g: log.append(("y", g.tolist())))
        (gx,) = lib.autograd.grad((y * y).sum(), x)
        return log, gx, x.grad, y.grad

    compare(f)


@needs_torch
def test_grad_of_intermediate_does_not_run_below_it_like_torch():
    def f(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: log.append("x"))
        h = x.exp()
        y = (h * 2).sum()
        (gh,) = lib.autograd.grad(y, h)
        (gh2,) = lib.autograd.grad((h * 3).sum(), h)
        return log, gh, gh2, x.grad

    compare(f)


def test_masked_gradients_are_positive_zero():
    # where(mask, g, 0) runs as g * mask on arrays: a negative g must still give +0.0, as
    # PyTorch's (printed grads would show -0. otherwise).
    x = retrograd.tensor([-1.0, 2.0], requires_grad=True)
    (x.relu() * -3).sum().backward()
    assert [str(v) for v in x.grad.tolist()] == ["0.0", "-3.0"]
