"""Custom ``autograd.Function``: ctx, saved tensors, marks, once_differentiable and errors.

Each Function is defined by a factory taking the library (retrograd or torch), so the same
code runs under both and the results, graph and error messages are compared.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from ..oracle import compare, compare_error, graph_sig, needs_torch

# -- Functions, built for either library -------------------------------------------------------


def fns(lib):
    """A namespace of Function subclasses of ``lib.autograd.Function``."""
    F = lib.autograd.Function

    class MyExp(F):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class Cube(F):
        # Saves its input; backward in differentiable ops, so double backward works.
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

    class MulSetup(F):
        @staticmethod
        def forward(x, w, k):
            return x * w * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, w, k = inputs
            ctx.save_for_backward(x, w)
            ctx.k = k

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w * ctx.k, g * x * ctx.k, None

    class ScaleBy(F):
        # A non-tensor argument and plain attributes on ctx.
        @staticmethod
        def forward(ctx, x, factor, tag):
            ctx.factor = factor
            ctx.tag = tag
            ctx.needs = ctx.needs_input_grad
            return x * factor

        @staticmethod
        def backward(ctx, g):
            assert ctx.tag == "hello"
            return g * ctx.factor, None, None

    class Needs(F):
        @staticmethod
        def forward(ctx, a, b, n):
            ctx.seen = ctx.needs_input_grad
            return a + b * n

        @staticmethod
        def backward(ctx, g):
            ctx.seen_in_backward = ctx.needs_input_grad
            return (g if ctx.needs_input_grad[0] else None,
                    g * ctx.n_unused if False else (g * 2 if ctx.needs_input_grad[1] else None),
                    None)

    class SplitSum(F):
        # Two outputs.
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2, x.sum()

        @staticmethod
        def backward(ctx, g1, g2):
            (x,) = ctx.saved_tensors
            return g1 * 2 + g2 * lib.ones_like(x)

    class SplitNoMat(F):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.got = (g1 is None, g2 is None)
            out = None
            if g1 is not None:
                out = g1 * 2
            if g2 is not None:
                out = g2 * 3 if out is None else out + g2 * 3
            return out

    class SplitMat(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.got = (g1 is None, g2 is None, g1.tolist(), g2.tolist())
            return g1 * 2 + g2 * 3

    class SortVals(F):
        # mark_non_differentiable on an integer (and a float) output.
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax()
            mask = (x > 0).to(x.dtype)
            ctx.mark_non_differentiable(idx, mask)
            ctx.save_for_backward(x)
            return x * 2, idx, mask

        @staticmethod
        def backward(ctx, g, g_idx, g_mask):
            ctx.got = (g_idx is None, None if g_mask is None else g_mask.tolist())
            return g * 2

    class AddOneInplace(F):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class Once(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    class TooMany(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    class TooFew(F):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return (g,)

    class ExtraNones(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    class WrongShape(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return lib.ones(3)

    class BroadcastGrad(F):
        # A gradient with broadcastable extra dims: PyTorch sums it down (validate_outputs).
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return (g * 2).expand(4, *g.shape)

    class GradForNonTensor(F):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    class WrongDtype(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return (g * 2).double()

    class Identity(F):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    class SaveOutput(F):
        # Saves its output; backward uses it differentiably (tanh).
        @staticmethod
        def forward(ctx, x):
            y = x.tanh()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * (1 - y * y)

    class LogSumExp(F):
        @staticmethod
        def forward(ctx, x):
            m = x.max()
            out = m + (x - m).exp().sum().log()
            ctx.save_for_backward(x, out)
            return out

        @staticmethod
        def backward(ctx, g):
            x, out = ctx.saved_tensors
            return g * (x - out).exp()

    class SaveNonTensor(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    class ReturnsNonTensorBackward(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return 3.0

    return {k: v for k, v in locals().items() if isinstance(v, type)}


# -- basics ------------------------------------------------------------------------------------


def test_forward_backward_with_ctx():
    F = fns(retrograd)
    x = retrograd.tensor([0.0, 1.0, 2.0], requires_grad=True)
    y = F["MyExp"].apply(x)
    np.testing.assert_allclose(y.detach().numpy(), np.exp([0.0, 1.0, 2.0]), rtol=1e-6)
    assert y.grad_fn.name() == "MyExpBackward"
    assert y.requires_grad and not y.is_leaf
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0, 2.0]), rtol=1e-6)


def test_grad_fn_names():
    F = fns(retrograd)
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    assert F["LogSumExp"].apply(x).grad_fn.name() == "LogSumExpBackward"
    assert F["Cube"].apply(x).grad_fn.name() == "CubeBackward"
    assert F["MulSetup"].apply(x, x, 2.0).grad_fn.name() == "MulSetupBackward"
    assert type(F["Cube"].apply(x).grad_fn).__name__ == "CubeBackward"


@needs_torch
@pytest.mark.parametrize("name", ["MyExp", "Cube", "SaveOutput", "LogSumExp", "Identity"])
def test_single_input_function_matches_torch(name):
    def f(lib):
        x = lib.tensor([0.3, -1.2, 2.0], dtype=lib.float64, requires_grad=True)
        y = fns(lib)[name].apply(x)
        loss = (y * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum() if y.dim() else y
        loss.backward()
        return y, x.grad, y.grad_fn.name(), graph_sig(y, (x,))

    compare(f)


@needs_torch
def test_setup_context_form_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, -1.0], requires_grad=True)
        y = fns(lib)["MulSetup"].apply(x, w, 0.5)
        y.backward(lib.tensor([1.0, 10.0]))
        return y, x.grad, w.grad, y.grad_fn.name(), graph_sig(y, (x, w))

    compare(f)


def test_plain_attributes_on_ctx_and_non_tensor_args():
    F = fns(retrograd)
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = F["ScaleBy"].apply(x, 3.0, "hello")
    assert y.grad_fn.factor == 3.0 and y.grad_fn.tag == "hello"
    assert y.grad_fn.needs == (True, False, False)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


@needs_torch
def test_non_tensor_args_match_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fns(lib)["ScaleBy"].apply(x, 3.0, "hello")
        y.sum().backward()
        return y, x.grad, y.grad_fn.needs, graph_sig(y, (x,))

    compare(f)


@needs_torch
@pytest.mark.parametrize("rg", [(True, True), (True, False), (False, True)])
def test_needs_input_grad_matches_torch(rg):
    def f(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=rg[0])
        b = lib.tensor([3.0, 4.0], requires_grad=rg[1])
        y = fns(lib)["Needs"].apply(a, b, 2)
        y.sum().backward()
        node = y.grad_fn
        return (node.seen, node.seen_in_backward, node.needs_input_grad, a.grad, b.grad,
                graph_sig(y, (a, b)))

    compare(f)


@needs_torch
def test_no_input_requires_grad_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0])
        y = fns(lib)["Cube"].apply(x)
        return y, y.requires_grad, y.grad_fn is None, y.is_leaf

    compare(f)


@needs_torch
def test_apply_under_no_grad_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            y = fns(lib)["Cube"].apply(x)
        return y, y.requires_grad, y.grad_fn is None

    compare(f)


@needs_torch
def test_forward_runs_without_grad_mode_like_torch():
    def f(lib):
        seen = []

        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                z = x * 2
                seen.append((lib.is_grad_enabled(), z.requires_grad))
                return z

            @staticmethod
            def backward(ctx, g):
                seen.append(lib.is_grad_enabled())
                return g * 2

        x = lib.tensor([1.0], requires_grad=True)
        Probe.apply(x).sum().backward()
        return seen, x.grad

    compare(f)


# -- saved tensors -----------------------------------------------------------------------------


@needs_torch
def test_saved_input_modified_in_place_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 1
        y = fns(lib)["Cube"].apply(h)
        h.add_(1)
        y.sum().backward()

    compare_error(f)


@needs_torch
def test_saved_leaf_modified_in_place_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fns(lib)["Cube"].apply(x)
        with lib.no_grad():
            x.mul_(2)
        y.sum().backward()

    compare_error(f)


@needs_torch
def test_saved_output_modified_in_place_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fns(lib)["MyExp"].apply(x)
        y.mul_(2)
        y.sum().backward()

    compare_error(f)


def test_saved_input_modified_in_place_raises():
    F = fns(retrograd)
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = F["Cube"].apply(h)
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@needs_torch
def test_saved_tensors_freed_after_backward_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fns(lib)["Cube"].apply(x)
        y.sum().backward()
        y.grad_fn.saved_tensors  # noqa: B018

    compare_error(f)


def test_saved_tensors_freed_after_backward():
    F = fns(retrograd)
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = F["Cube"].apply(x)
    (saved,) = y.grad_fn.saved_tensors
    assert saved is x
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn.saved_tensors  # noqa: B018
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()


def test_saved_tensors_kept_with_retain_graph():
    F = fns(retrograd)
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = F["Cube"].apply(x)
    y.sum().backward(retain_graph=True)
    (saved,) = y.grad_fn.saved_tensors
    assert saved is x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 24.0])


@needs_torch
def test_saved_output_identity_like_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fns(lib)["MyExp"].apply(x)
        (s,) = y.grad_fn.saved_tensors
        return (s, s.grad_fn is y.grad_fn, s.requires_grad, s._version == y._version,
                s.data_ptr() == y.data_ptr())

    compare(f)


@needs_torch
def test_save_for_backward_non_tensor_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        fns(lib)["SaveNonTensor"].apply(x)

    compare_error(f)


# -- several outputs, materialisation, non-differentiable outputs --------------------------------


@needs_torch
@pytest.mark.parametrize("use", ["both", "first", "second"])
def test_multiple_outputs_match_torch(use):
    def f(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a, s = fns(lib)["SplitSum"].apply(x)
        if use == "both":
            loss = (a * a).sum() + s * 3
        elif use == "first":
            loss = a.sum()
        else:
            loss = s * 2
        loss.backward()
        return a, s, x.grad, a.grad_fn is s.grad_fn, a.grad_fn.name(), graph_sig(loss, (x,))

    compare(f)


@needs_torch
def test_set_materialize_grads_false_passes_none_like_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a, b = fns(lib)["SplitNoMat"].apply(x)
        b.sum().backward()
        return x.grad, a.grad_fn.got

    compare(f)


@needs_torch
def test_materialized_grads_are_zeros_like_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a, b = fns(lib)["SplitMat"].apply(x)
        a.sum().backward()
        return x.grad, a.grad_fn.got

    compare(f)


def test_set_materialize_grads_false_passes_none():
    F = fns(retrograd)
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    a, b = F["SplitNoMat"].apply(x)
    a.sum().backward()
    assert a.grad_fn.got == (False, True)
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


@needs_torch
def test_mark_non_differentiable_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y, idx, mask = fns(lib)["SortVals"].apply(x)
        (y.sum() + (mask * 0).sum()).backward() if mask.requires_grad else y.sum().backward()
        return (y, idx, mask, y.requires_grad, idx.requires_grad, mask.requires_grad,
                idx.grad_fn is None, mask.grad_fn is None, x.grad, y.grad_fn.got)

    compare(f)


@needs_torch
def test_mark_non_differentiable_output_used_in_loss_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y, idx, mask = fns(lib)["SortVals"].apply(x)
        (y * mask).sum().backward()
        return x.grad, y.grad_fn.got

    compare(f)


# -- mark_dirty --------------------------------------------------------------------------------


@needs_torch
def test_mark_dirty_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 2
        v0 = h._version
        y = fns(lib)["AddOneInplace"].apply(h)
        same = y is h
        y2 = y * y
        y2.sum().backward()
        return (y, same, h._version - v0, y.grad_fn.name(), h.grad_fn.name(), x.grad,
                graph_sig(y, (x,)))

    compare(f)


@needs_torch
def test_mark_dirty_on_leaf_requiring_grad_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        fns(lib)["AddOneInplace"].apply(x)

    compare_error(f)


@needs_torch
def test_mark_dirty_on_leaf_without_grad_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0])
        w = lib.tensor([1.0, 1.0], requires_grad=True)
        y = fns(lib)["AddOneInplace"].apply(x)
        return y, y is x, y.requires_grad, x._version, (y * w).requires_grad

    compare(f)


# -- once_differentiable and double backward ---------------------------------------------------


def test_once_differentiable_first_order_works():
    F = fns(retrograd)
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    F["Once"].apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


@needs_torch
def test_once_differentiable_double_backward_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fns(lib)["Once"].apply(x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        g.sum().backward()

    compare_error(f)


@needs_torch
def test_once_differentiable_create_graph_result_like_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fns(lib)["Once"].apply(x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        return g, g.requires_grad, g.grad_fn is not None

    compare(f)


@needs_torch
@pytest.mark.parametrize("name", ["Cube", "SaveOutput", "LogSumExp", "MyExp"])
def test_double_backward_through_function_matches_torch(name):
    def f(lib):
        x = lib.tensor([0.3, -1.2, 2.0], dtype=lib.float64, requires_grad=True)
        y = fns(lib)[name].apply(x)
        loss = (y * y).sum() if y.dim() else y * y
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x, create_graph=True)
        (ggg,) = lib.autograd.grad(gg.sum(), x)
        return g, gg, ggg

    compare(f)


def test_double_backward_through_function_values():
    F = fns(retrograd)
    x = retrograd.tensor([2.0], dtype=retrograd.float64, requires_grad=True)
    y = F["Cube"].apply(x).sum()
    (g,) = retrograd.autograd.grad(y, x, create_graph=True)
    (gg,) = retrograd.autograd.grad(g.sum(), x, create_graph=True)
    (ggg,) = retrograd.autograd.grad(gg.sum(), x)
    assert g.item() == pytest.approx(12.0)
    assert gg.item() == pytest.approx(12.0)
    assert ggg.item() == pytest.approx(6.0)


# -- errors from backward ----------------------------------------------------------------------


@needs_torch
@pytest.mark.parametrize(
    "name, exact",
    [("TooMany", True), ("WrongShape", True), ("ReturnsNonTensorBackward", False)],
)
def test_bad_gradient_error_matches_torch(name, exact):
    # backward returns two gradients for one input / a gradient of the wrong shape / a float
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        fns(lib)[name].apply(x).sum().backward()

    compare_error(f, exact=exact)


@needs_torch
def test_too_few_gradients_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([1.0, 2.0], requires_grad=True)
        fns(lib)["TooFew"].apply(x, y).sum().backward()

    compare_error(f)


@needs_torch
def test_gradient_for_non_tensor_input_error_matches_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        fns(lib)["GradForNonTensor"].apply(x, 2.0).sum().backward()

    compare_error(f)


@needs_torch
@pytest.mark.parametrize("name", ["ExtraNones", "BroadcastGrad", "WrongDtype"])
def test_accepted_gradient_matches_torch(name):
    # extra trailing Nones are dropped, a broadcastable gradient is summed down and a gradient
    # of another dtype is cast back to the input's
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        fns(lib)[name].apply(x).sum().backward()
        return x.grad

    compare(f)


@needs_torch
def test_identity_function_output_is_new_tensor_like_torch():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fns(lib)["Identity"].apply(x)
        same = y is x
        y.sum().backward()
        return same, y.is_leaf, y.grad_fn.name(), x.grad, y.data_ptr() == x.data_ptr()

    compare(f)


@needs_torch
def test_function_node_hooks_like_torch():
    def f(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fns(lib)["Cube"].apply(x)
        y.grad_fn.register_prehook(lambda go: log.append(("pre", go[0].tolist())))
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", gi[0].tolist())))
        y.register_hook(lambda g: g * 2)
        y.sum().backward()
        return log, x.grad

    compare(f)


def test_function_gradcheck():
    F = fns(retrograd)
    x = retrograd.tensor([0.3, -1.2, 2.0], dtype=retrograd.float64, requires_grad=True)
    for name in ("Cube", "SaveOutput", "LogSumExp", "MyExp"):
        assert retrograd.autograd.gradcheck(F[name].apply, (x,))
        assert retrograd.autograd.gradgradcheck(F[name].apply, (x,))
