"""``autograd.graph.allow_mutation_on_saved_tensors``: in-place ops on saved tensors are cloned
first, so the backward sees the forward's values; PyTorch's errors when it is misused."""

import numpy as np
import pytest

import retrograd

F = retrograd.nn.functional

# Each mutation of a saved tensor ``b`` (its values were [1, 2, 3] when saved).
MUTATIONS = {
    "setitem": lambda lib, b: b.__setitem__(0, 5.0),
    "fill_": lambda lib, b: b.fill_(3.0),
    "zero_": lambda lib, b: b.zero_(),
    "clamp_": lambda lib, b: b.clamp_(max=0.5),
    "masked_fill_": lambda lib, b: b.masked_fill_(b > 1.5, 0.0),
    "index_put_": lambda lib, b: b.index_put_((lib.tensor([0]),), lib.tensor(9.0)),
    "copy_": lambda lib, b: b.copy_(lib.zeros(3)),
    "relu inplace": lambda lib, b: lib.nn.functional.relu(b.sub_(2), inplace=True),
    "exp_": lambda lib, b: b.exp_(),
    "uniform_": lambda lib, b: b.uniform_(),
    "add_": lambda lib, b: b.add_(lib.ones(3)),
    "add_ twice": lambda lib, b: b.add_(1).add_(1),
    "under no_grad": lambda lib, b: _no_grad(lib, lambda: b.mul_(3)),
    "through detach": lambda lib, b: b.detach().add_(1),
    "through a view at offset 0": lambda lib, b: b[:2].mul_(3),
}


def _no_grad(lib, fn):
    with lib.no_grad():
        fn()


def _grad_after(lib, mutate):
    with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a.clone()
        out = (b * b * a).sum()
        mutate(lib, b)
        out.backward()
        return a.grad.numpy(), type(ctx).__name__


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_the_backward_reads_the_saved_values(name):
    grad, ctx_name = _grad_after(retrograd, MUTATIONS[name])
    np.testing.assert_array_equal(grad, [3.0, 12.0, 27.0])  # d/da of sum(a^3)
    assert ctx_name == "_AllowMutationOnSavedContext"


def test_matches_torch(torch):
    for name, mutate in MUTATIONS.items():
        np.testing.assert_array_equal(_grad_after(retrograd, mutate)[0],
                                      _grad_after(torch, mutate)[0], err_msg=name)


def test_docstring_example_and_saved_outputs(torch):
    def run(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = lib.ones(2, 3, requires_grad=True)
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            out.sum().backward()
            c = a.clone()
            y = c.exp()  # saves its output, then changed in place
            y.mul_(2)
            w = lib.zeros(2, 3, requires_grad=True)
            y.sum().backward(retain_graph=False)
            z = (w + 1) * (w + 1)
            s = z.sum()
            s.backward(retain_graph=True)  # a second backward after a mutation
            (w + 0).add_(1)
            z.mul_(5)
            s.backward()
            return a.grad.numpy(), b.detach().numpy(), w.grad.numpy()

    got, want = run(retrograd), run(torch)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    np.testing.assert_allclose(got[0], np.full((2, 3), 2.0 + 2 * np.e), rtol=1e-6)


def test_views_at_another_offset_are_cloned_too():
    # (PyTorch matches writes to saved tensors by data pointer, so these two read the new
    # values there: [0, 6, 24, 54]. Here every write to saved memory clones first.)
    for mutate_view in (True, False):
        with retrograd.autograd.graph.allow_mutation_on_saved_tensors():
            a = retrograd.ones(4, requires_grad=True)
            b = a.clone() * retrograd.arange(4.0)
            if mutate_view:
                out = (b ** 2).sum()
                b[1:].mul_(3)
            else:
                v = b[1:]
                out = (v ** 2).sum()
                b.mul_(3)
            out.backward()
        np.testing.assert_array_equal(a.grad.numpy(), [0.0, 2.0, 8.0, 18.0])


def test_errors_match_torch(torch):
    def errors(lib):
        amst = lib.autograd.graph.allow_mutation_on_saved_tensors
        got = []
        with pytest.raises(RuntimeError) as e:
            with amst(), amst():
                pass
        got.append(str(e.value))
        with amst():
            a = lib.ones(3, requires_grad=True)
            out = (a.clone() ** 2).sum()
        with pytest.raises(AssertionError) as e:
            out.backward()  # outside the block the graph was recorded in
        got.append(str(e.value))
        a = lib.ones(3, requires_grad=True)
        b = a.clone()
        out = (b * b).sum()  # recorded before the block: the usual error
        with amst():
            b.add_(1)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                out.backward()
        return got

    assert errors(retrograd) == errors(torch)
    assert errors(retrograd)[0] == "allow_mutation_on_saved_tensors contexts cannot be nested"


def test_nothing_is_kept_after_the_block():
    from retrograd.ops import _base

    with retrograd.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
        a = retrograd.ones(3, requires_grad=True)
        (a.clone() * 2 * a).sum().backward()
        assert _base.BEFORE_WRITE is not None
    assert _base.BEFORE_WRITE is None
    assert len(ctx.original) == len(ctx.cloned) == 0
