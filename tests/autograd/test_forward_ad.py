"""Forward-mode AD (``retrograd.autograd.forward_ad``): the API, its errors, tangents through
ops (against torch where installed, by finite differences otherwise), in-place ops, custom
Functions, the mix with reverse mode, and memory that does not grow with depth."""

import gc
import weakref

import numpy as np
import pytest

import retrograd
import retrograd.autograd.forward_ad as fwAD
from retrograd.ops import _apply


def _tangent(fn, x, t):
    with fwAD.dual_level():
        out = fn(fwAD.make_dual(x, t))
        return fwAD.unpack_dual(out).tangent


def test_tangent_of_a_chain_matches_finite_differences():
    rng = np.random.default_rng(0)
    x = retrograd.tensor(rng.standard_normal(5))
    t = retrograd.tensor(rng.standard_normal(5))

    def f(a):
        return ((a.sin() * 2 + a * a).exp() / (1 + a.tanh() ** 2)).cumsum(0)[1:].softmax(0)

    got = _tangent(f, x, t).numpy()
    eps = 1e-6
    fd = (f(x + eps * t) - f(x - eps * t)).numpy() / (2 * eps)
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-7)


def test_level_api_and_unpack(torch):
    x = retrograd.tensor([1.0, 2.0, 3.0])
    t = retrograd.tensor([0.5, -1.0, 2.0])
    with fwAD.dual_level() as lvl:
        assert lvl == 0
        d = fwAD.make_dual(x, t)
        assert d._base is x  # a view of the primal, as in torch
        u = fwAD.unpack_dual(d)
        assert type(u).__name__ == "UnpackedDualTensor" and u._fields == ("primal", "tangent")
        assert u.tangent is t and u.primal._base is x
        assert fwAD.unpack_dual(x).tangent is None
        y = d * d
    assert fwAD.unpack_dual(y).tangent is None  # gone with the level
    assert fwAD.unpack_dual(y).primal is y
    assert not _apply.OBSERVED  # nothing left observing: forward AD off costs nothing
    assert fwAD.enter_dual_level() == 0
    fwAD.exit_dual_level()


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - comparing type and text with torch's
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", ["outside", "nested", "size", "int_tangent", "int_primal",
                                  "twice", "exit_none"])
def test_errors_match_torch(torch, case):
    import torch.autograd.forward_ad as tfw

    def run(lib, fw):
        x = lib.tensor([1.0, 2.0, 3.0])
        if case == "outside":
            return _err(lambda: fw.make_dual(x, lib.ones(3)))
        if case == "exit_none":
            return _err(fw.exit_dual_level)
        with fw.dual_level():
            if case == "nested":
                return _err(fw.enter_dual_level)
            if case == "size":
                return _err(lambda: fw.make_dual(x, lib.ones(2)))
            if case == "int_tangent":
                return _err(lambda: fw.make_dual(x, lib.tensor([1, 2, 3])))
            if case == "int_primal":
                return _err(lambda: fw.make_dual(lib.tensor([1, 2, 3]), lib.ones(3)))
            if case == "twice":
                d = fw.make_dual(x, lib.ones(3))
                return _err(lambda: fw.make_dual(d, lib.ones(3)))

    assert run(retrograd, fwAD) == run(torch, tfw)


def test_custom_function_jvp_and_missing_jvp(torch):
    def make(lib):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_forward(x)
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x * x * g

            @staticmethod
            def jvp(ctx, t):
                (x,) = ctx.saved_tensors
                return 3 * x * x * t

        class NoJvp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        return Cube, NoJvp

    results = []
    for lib, fw in ((retrograd, fwAD), (torch, __import__("torch.autograd.forward_ad",
                                                          fromlist=["x"]))):
        cube, nojvp = make(lib)
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, lib.tensor([0.5, 1.0]))
            y = cube.apply(d)
            tan = fw.unpack_dual(y).tangent.detach().numpy()
            err = _err(lambda nojvp=nojvp, d=d: nojvp.apply(d))
            y.sum().backward()
        results.append((tan, err, x.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][2], results[1][2])
    assert results[0][1] == results[1][1]


def test_inplace_ops_carry_the_tangent(torch):
    import torch.autograd.forward_ad as tfw

    def run(lib, fw):
        with fw.dual_level():
            x = lib.tensor([1.0, 2.0, 3.0, 4.0])
            t = lib.tensor([1.0, -1.0, 0.5, 2.0])
            d = fw.make_dual(x.clone(), t)
            d.mul_(3.0)
            z = lib.zeros(6)
            z[1:5] = d          # a view of a tensor without a tangent takes one
            z.add_(1.0)
            w = lib.ones(2, 2)
            w.t_()
            v = fw.make_dual(lib.ones(2, 3), lib.arange(6.0).reshape(2, 3))
            v.t_()              # an in-place view: the tangent takes the same view
            return (fw.unpack_dual(z).tangent.numpy(), fw.unpack_dual(d).tangent is t,
                    fw.unpack_dual(v).tangent.numpy())

    got, ref = run(retrograd, fwAD), run(torch, tfw)
    np.testing.assert_allclose(got[0], ref[0])
    assert got[1] == ref[1]
    np.testing.assert_allclose(got[2], ref[2])


def test_forward_and_reverse_together(torch):
    """Reverse over forward: the tangent is differentiable when the primal requires grad."""
    import torch.autograd.forward_ad as tfw

    def run(lib, fw):
        x = lib.tensor([0.3, -1.2, 2.0], requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, lib.tensor([1.0, 0.5, -1.0]))
            y = (d.sin() * d).sum()
            tan = fw.unpack_dual(y).tangent
            (g,) = lib.autograd.grad(tan, x)
        return tan.detach().numpy(), g.numpy()

    got, ref = run(retrograd, fwAD), run(torch, tfw)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-6)


def test_no_grad_and_mixed_dtypes():
    x = retrograd.tensor([1.0, 2.0], dtype=retrograd.float64)
    with retrograd.no_grad():
        tan = _tangent(lambda a: (a.float() * retrograd.tensor([2.0, 3.0])).exp(), x,
                       retrograd.ones(2, dtype=retrograd.float64))
    assert tan.dtype == retrograd.float32
    np.testing.assert_allclose(tan.numpy(), [2 * np.exp(2), 3 * np.exp(6)], rtol=1e-6)


def test_memory_does_not_grow_with_depth():
    """No graph is kept for forward mode: intermediates die as the chain goes on."""
    x = retrograd.tensor(np.linspace(0.1, 1.0, 1000))
    with fwAD.dual_level():
        y = fwAD.make_dual(x, retrograd.ones(1000))
        first = weakref.ref(y)
        for _ in range(200):
            y = (y * 1.0001).sin() + 0.01
        gc.collect()
        assert first() is None
        assert fwAD.unpack_dual(y).tangent is not None
        assert y.grad_fn is None


def test_gradcheck_checks_forward_mode():
    x = retrograd.tensor([0.5, 1.5], dtype=retrograd.float64, requires_grad=True)
    assert retrograd.autograd.gradcheck(retrograd.sin, (x,), check_forward_ad=True)

    class Wrong(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 3  # wrong on purpose

    with pytest.raises(retrograd.autograd.GradcheckError,
                       match="Jacobian computed with forward mode mismatch"):
        retrograd.autograd.gradcheck(Wrong.apply, (x,), check_forward_ad=True)
    assert retrograd.autograd.gradcheck(Wrong.apply, (x,))


@pytest.mark.parametrize("fn", [
    lambda a: a.tanh() * a.exp(),
    lambda a: retrograd.softmax(a, 0).log(),
    lambda a: a.sigmoid().cumprod(0),
    lambda a: a.std() * a.sqrt(),
])
def test_forward_over_reverse(fn):
    """gradgradcheck's check_fwd_over_rev: forward mode through a recorded backward, including
    formulas that read their op's saved output (its tangent is kept with the node)."""
    x = retrograd.tensor([0.3, 1.2, 0.7], dtype=retrograd.float64, requires_grad=True)
    assert retrograd.autograd.gradgradcheck(fn, (x,), check_fwd_over_rev=True,
                                            check_rev_over_rev=False)
