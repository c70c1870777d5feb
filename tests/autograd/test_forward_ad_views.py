"""Forward AD and views made before their base became dual: a view takes the same view of the
base's tangent (made on first use), both ways (an in-place op on the base, or on a sibling view),
through views of views, and never for a primal from ``unpack_dual`` or a detached tensor.
Each scenario runs on retrograd and, where installed, on torch, and the tangents must agree."""

import numpy as np

import retrograd
import retrograd.autograd.forward_ad as rg_fwAD


def _scenarios(lib, fwAD) -> dict:
    """Tangents (arrays, or None) of views under several in-place updates, on ``lib``."""
    res = {}

    def tan(name, t):
        got = fwAD.unpack_dual(t).tangent
        res[name] = None if got is None else got.detach().numpy().copy()

    with fwAD.dual_level():
        d = fwAD.make_dual(lib.tensor([1.0, 2.0, 3.0]), lib.tensor([10.0, 20.0, 30.0]))
        base = lib.zeros(3)
        view = base[1:]
        vv = view[1:]
        base.copy_(d)
        tan("copy_ view", view)
        tan("copy_ view of view", vv)
        tan("op on the view", view * 2)
        tan("view of the view made now", view[0])
        base.add_(d)  # the base's tangent changes in place: the view sees it
        tan("after a second add_", view)

        base = lib.zeros(3)
        view = base[1:]
        base.add_(d)
        tan("add_ view", view)

        base = lib.zeros(3)
        view, other = base[1:], base[:2]
        view.mul_(2).add_(d[1:])  # an in-place op on a view makes the base dual
        tan("reverse: base", base)
        tan("reverse: sibling view", other)

        base = lib.zeros(2, 3)
        tview, row, flat = base.t(), base[0], base.view(6)
        detached = base.detach()
        with lib.no_grad():
            ng = base[1]
        base.copy_(fwAD.make_dual(lib.ones(2, 3), lib.arange(6.0).reshape(2, 3)))
        tan("transpose", tview)
        tan("row", row)
        tan("flat", flat)
        tan("view made under no_grad", ng)
        tan("detached", detached)
        primal = fwAD.unpack_dual(base).primal
        tan("primal", primal)
        tan("view of a primal", primal[0])
        parts = base.split(1)
        tan("split after", parts[1])

        base = lib.zeros(4)
        parts, items = base.split(2), base.unbind(0)
        base.add_(fwAD.make_dual(lib.ones(4), lib.arange(4.0)))
        tan("split before", parts[1])
        tan("unbind before", items[3])
    tan("after the level", view)
    return res


def test_views_made_before_their_base_became_dual():
    got = _scenarios(retrograd, rg_fwAD)
    np.testing.assert_array_equal(got["copy_ view"], [20.0, 30.0])
    np.testing.assert_array_equal(got["copy_ view of view"], [30.0])
    np.testing.assert_array_equal(got["op on the view"], [40.0, 60.0])
    np.testing.assert_array_equal(got["after a second add_"], [40.0, 60.0])
    np.testing.assert_array_equal(got["reverse: base"], [0.0, 20.0, 30.0])
    np.testing.assert_array_equal(got["reverse: sibling view"], [0.0, 20.0])
    np.testing.assert_array_equal(got["transpose"], [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]])
    np.testing.assert_array_equal(got["unbind before"], 3.0)
    for name in ("detached", "primal", "view of a primal", "after the level"):
        assert got[name] is None, name


def test_view_tangents_match_torch(torch):
    import torch.autograd.forward_ad as t_fwAD

    got = _scenarios(retrograd, rg_fwAD)
    want = _scenarios(torch, t_fwAD)
    assert got.keys() == want.keys()
    for name, w in want.items():
        if w is None:
            assert got[name] is None, name
        else:
            np.testing.assert_array_equal(got[name], w, err_msg=name)


def test_view_tangent_aliases_the_base_tangent():
    with rg_fwAD.dual_level():
        base = retrograd.zeros(3)
        view = base[1:]
        base.copy_(rg_fwAD.make_dual(retrograd.ones(3), retrograd.tensor([1.0, 2.0, 3.0])))
        t = rg_fwAD.unpack_dual(view).tangent
        assert rg_fwAD.unpack_dual(view).tangent is t  # made once, then kept
        view.mul_(3)  # in place on the view: the base's tangent sees it
        np.testing.assert_array_equal(rg_fwAD.unpack_dual(base).tangent.numpy(), [1.0, 6.0, 9.0])
        np.testing.assert_array_equal(t.numpy(), [6.0, 9.0])


def test_view_tangent_with_a_graph_and_reverse_mode(torch):
    def run(lib, fwAD):
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with fwAD.dual_level():
            base = lib.zeros(3).clone()
            view = base[1:]
            base.add_(fwAD.make_dual(lib.ones(3), w * 2))  # a tangent with a graph
            t = fwAD.unpack_dual(view).tangent
            (t * lib.tensor([1.0, 5.0])).sum().backward()
            return t.detach().numpy(), type(t.grad_fn).__name__, w.grad.numpy()

    got, want = run(retrograd, rg_fwAD), run(torch, __import__("torch.autograd.forward_ad",
                                                                fromlist=["x"]))
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1] == "AsStridedBackward0"
    np.testing.assert_array_equal(got[2], want[2])


def test_hvp_of_a_view_output_made_before_its_base_changed(torch):
    def run(lib):
        def f(x):
            base = lib.zeros(4)
            s = base[2]  # the output: a view, made before the base takes x's values
            base.copy_(lib.cat([x, x[:1]]) ** 2)
            return s

        out, hv = lib.autograd.functional.hvp(f, lib.tensor([1.0, 2.0, 3.0]), lib.ones(3))
        return out.item(), hv.numpy()

    got, want = run(retrograd), run(torch)
    assert got[0] == want[0] == 9.0
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[1], [0.0, 0.0, 2.0])
