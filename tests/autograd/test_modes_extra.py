"""The rest of torch.autograd's names: multithreading and view-replay switches, legacy Function
classes, region_activation_memory_budget, func.functionalize/debug_unwrap and the device-state
helpers of utils.checkpoint, each against torch."""

import numpy as np
import pytest

import retrograd


def _views(lib):
    """Views of a base changed in place, with and without view replay: their grad_fn names
    and the gradient through two of them."""
    A = lib.autograd
    res = [A.is_view_replay_enabled()]
    for mode in (False, True):
        with A._force_original_view_tracking(mode):
            res.append(A.is_view_replay_enabled())
            leaf = lib.ones(4, requires_grad=True)
            a = leaf.clone()
            v = a[1:]
            vv = v.unsqueeze(0)
            w = a.view(2, 2).t()[0]
            a.mul_(2)
            res.append([type(t.grad_fn).__name__ for t in (v, vv, w)])
            res.append([type(f[0]).__name__ for f in vv.grad_fn.next_functions])
            (vv.sum() + w.sum() * 3).backward()
            res.append(leaf.grad.tolist())
            a = leaf.clone()
            v = a[1:]
            a.mul_(2)
            v.mul_(3)  # an in-place op on the view of a changed base
            (a * a).sum().backward()
            res.append((type(v.grad_fn).__name__, leaf.grad.tolist()))
    res.append(A.is_view_replay_enabled())
    return res


def test_view_replay():
    got = _views(retrograd)
    assert got[7] == ["SliceBackward0", "UnsqueezeBackward0", "SelectBackward0"]
    assert got[2] == ["AsStridedBackward0"] * 3
    assert got[-1] is False


def test_view_replay_matches_torch(torch):
    assert _views(retrograd) == _views(torch)


def _switches(lib):
    A = lib.autograd
    res = [A.is_multithreading_enabled()]
    m = A.set_multithreading_enabled(False)  # at once, as set_grad_enabled
    res.append(A.is_multithreading_enabled())
    with m:
        pass
    res.append(A.is_multithreading_enabled())

    @A.set_multithreading_enabled(False)
    def f():
        return A.is_multithreading_enabled()

    res += [A.is_multithreading_enabled(), f(), A.is_multithreading_enabled()]
    A.set_multithreading_enabled(True)
    res.append(A.grad_mode.set_multithreading_enabled is A.set_multithreading_enabled)
    res.append(A.function.InplaceFunction(inplace=True).inplace)
    res.append(isinstance(A.Function, A.function.FunctionMeta))
    res.append(issubclass(A.NestedIOFunction, A.Function))
    for budget in (0.5, 2, "a"):
        with pytest.raises((RuntimeError, ValueError, TypeError)) as e:
            A.graph.region_activation_memory_budget(budget)
        res.append((e.type.__name__, str(e.value)))
    return res


def test_switches_and_legacy_classes_match_torch(torch):
    got = _switches(retrograd)
    assert got[:3] == [True, False, True]
    assert got == _switches(torch)


def _func_and_checkpoint(lib):
    res = []

    def f(a):
        b = a.clone()
        b.add_(1)
        a.mul_(2)
        return b

    for remove in ("mutations", "mutations_and_views"):
        z = lib.ones(2)
        g = lib.func.functionalize(f, remove=remove)
        res.append((g.__name__, g(z).tolist(), z.tolist()))
    with pytest.raises(RuntimeError) as e:
        lib.func.functionalize(f, remove="bad")
    res.append(str(e.value))
    x = lib.ones(2)
    res.append(lib.func.debug_unwrap(x) is x)
    cp = lib.utils.checkpoint
    res.append(cp.get_device_states(x, 3))
    cp.set_device_states([], [])
    with cp.GraphExecGroup() as g:
        res.append(cp.GraphExecGroup._get_current_group() is g)
        with pytest.raises(RuntimeError, match="GraphExecGroup contexts cannot be nested"):
            with cp.GraphExecGroup():
                pass
    res.append(cp.GraphExecGroup._get_current_group())
    return res


def test_functionalize_and_checkpoint_helpers_match_torch(torch):
    got = _func_and_checkpoint(retrograd)
    assert got[0] == ("f", [2.0, 2.0], [2.0, 2.0])
    assert got == _func_and_checkpoint(torch)
    assert retrograd.utils.checkpoint.DefaultDeviceType.get_device_type() == "cpu"


def test_functionalize_keeps_gradients():
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    retrograd.func.functionalize(lambda a: (a * a).sum())(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


def _jacobians(lib):
    import warnings

    gc = __import__(lib.__name__ + ".autograd.gradcheck", fromlist=["x"])
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    y = lib.tensor([3.0], dtype=lib.float64, requires_grad=True)
    res = []
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res.append(gc.get_numerical_jacobian(lambda inp: inp[0] * inp[1], (x, y)))
        res.append(gc.get_numerical_jacobian(lambda inp: (inp[0] * inp[1], inp[0]), (x, y),
                                             target=(y,)))
        res.append(gc.get_numerical_jacobian(lambda inp: inp[0].sin(), (x, lib.ones(2)),
                                             eps=1e-6))
        z = lib.tensor([1.0, 2.0], requires_grad=True)
        jac, *flags = gc.get_analytical_jacobian((z, lib.ones(1, requires_grad=True)), z.exp())
        res.append(jac)
        res.append(tuple(flags))
        with pytest.raises(ValueError) as e:
            gc.get_numerical_jacobian(lambda inp: inp[0], (x,), grad_out=2.0)
        res.append(str(e.value))
    res.append([(r.category.__name__, str(r.message)) for r in rec])
    res.append(gc.get_numerical_jacobian_wrt_specific_input(
        lambda p, q: (p * q, p.sum()), 1, (x, y), (x * y, x.sum()), 1e-6))
    with pytest.raises(AssertionError, match="Expected input to have requires_grad=True"):
        gc.get_numerical_jacobian_wrt_specific_input(lambda p: p, 0, (lib.ones(2),),
                                                     (lib.ones(2),), 1e-3)
    return res


def test_gradcheck_jacobian_helpers_match_torch(torch):
    got, want = _jacobians(retrograd), _jacobians(torch)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, tuple) and w and hasattr(w[0], "numpy"):
            assert len(g) == len(w)
            for a, b in zip(g, w):
                assert a.dtype.itemsize == b.dtype.itemsize and a.shape == b.shape
                np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-9)
        else:
            assert g == w
