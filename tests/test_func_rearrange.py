"""``func.rearrange`` (einops patterns) against torch.func.rearrange: values, shapes,
gradients and every parse and size error."""

import warnings

import numpy as np
import pytest

import retrograd

CASES = [
    ((6, 4), "(a b) c -> c a b", {"a": 2}), ((6, 4), "a 1 -> a", {}), ((6, 4), "a b -> a b 1", {}),
    ((6, 4), "a b -> a () b", {}), ((6, 4), "... b -> b ...", {}), ((6, 4), "a (b) -> (b a)", {}),
    ((2, 3, 4, 5), "b ... c -> c b ...", {}), ((2, 3, 4, 5), "b ... c -> (c ...) b", {}),
    ((2, 3, 4, 5), "b h w c -> b (c h w)", {}), ((2, 3, 4, 5), "... -> (...)", {}),
    ((2, 3, 4, 5), "b (h1 h) w c -> (b h1) h w c", {"h1": 3}),
    ((2, 3, 4, 5), "a b c d -> d c b a", {"a": 2, "b": 3, "c": 4, "d": 5}),
    ((2, 3, 4, 5), "a b c d -> (a b c d) 1 1", {}), ((2, 1, 4, 5), "a 1 c d -> a c d", {}),
    ((), "->", {}), ((), "... -> ...", {}),
    # errors
    ((6, 4), "(a b) c -> a b c", {"a": 4}), ((6, 4), "(a b) c -> a b c", {}),
    ((6, 4), "a b -> b a", {"a": 5}), ((6, 4), "(a b) c -> a b c", {"a": 4, "b": 3}),
    ((2, 6, 4), "x (a b) c -> a b c x", {"a": 4}), ((6, 4), "a b c -> a b c", {}),
    ((6, 4), "a -> a", {}), ((6, 4), "a b-> a", {}), ((6, 4), "a b -> a b", {"c": 2}),
    ((6, 4), "a a -> a", {}), ((6, 4), "a b -> (a b)", {"a": 2.0}), ((6, 4), "(...) b -> b", {}),
    ((6, 4), "a 2 -> a", {}), ((6, 4), "a b -> a b c!", {}), ((6, 4), "a b", {}),
    ((6, 4), "a (b -> a b", {}), ((6, 4), "a b) -> a b", {}), ((6, 4), "((a) b) -> a b", {}),
    ((6, 4), "a _b -> a _b", {}), ((6, 4), "a 0b -> a 0b", {}), ((6, 4), "a .. -> a", {}),
    ((6, 4), "a b -> ... a b", {}), ((2, 3), "a b c d ... -> a b c d", {}),
]


def _run(lib, shape, pattern, kw):
    x = lib.arange(float(np.prod(shape)), dtype=lib.float64).reshape(shape).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch's first-class dims warn on import)
        try:
            y = lib.func.rearrange(x, pattern, **kw)
        except Exception as e:  # noqa: BLE001 - the error is the result compared
            return type(e).__name__, str(e)
    (y * lib.arange(float(y.numel()), dtype=lib.float64).reshape(y.shape)).sum().backward()
    return tuple(y.shape), y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("shape,pattern,kw", CASES)
def test_matches_torch(torch, shape, pattern, kw):
    got, want = _run(retrograd, shape, pattern, kw), _run(torch, shape, pattern, kw)
    if isinstance(want[1], str):
        assert got[0] == want[0]
        if "only on one side" in want[1]:  # (a set: its order varies from run to run)
            assert got[1].split(":")[0] == want[1].split(":")[0]
        else:
            assert got[1] == want[1]
    else:
        assert got[0] == want[0]
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[2], want[2])


def test_list_of_tensors_and_values():
    y = retrograd.func.rearrange([retrograd.ones(2, 3), retrograd.zeros(2, 3)], "n a b -> a (n b)")
    np.testing.assert_array_equal(y.numpy(), [[1, 1, 1, 0, 0, 0]] * 2)
    x = retrograd.arange(24.0).reshape(6, 4)
    np.testing.assert_array_equal(retrograd.func.rearrange(x, "(a b) c -> c a b", a=2).numpy(),
                                  x.numpy().reshape(2, 3, 4).transpose(2, 0, 1))
    with pytest.raises(retrograd.func._rearrange.DimensionBindError):
        retrograd.func.rearrange(x, "(a b) c -> a b c", a=5)
