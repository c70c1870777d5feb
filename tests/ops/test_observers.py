"""The observer hook of ``ops/_apply.py``: every primitive call is seen, once, with its result."""

import numpy as np

import retrograd as torch
from retrograd.ops._apply import OBSERVERS, add_observer, remove_observer


def _observe(fn):
    seen = []

    def spy(P, inputs, attrs, run):
        r = run()
        seen.append((P.__name__ if P is not None else None, len(inputs), dict(attrs), r))
        return r

    add_observer(spy)
    try:
        fn()
    finally:
        remove_observer(spy)
    return seen


def test_every_apply_path_is_observed():
    x = torch.randn(3, 4, requires_grad=True)

    class Triple(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3

    seen = _observe(lambda: (x * 2, x.sin(), x.sum(1), x[0], x.max(1), Triple.apply(x),
                             x.detach().add_(1.0)))
    names = [s[0] for s in seen]
    # The in-place add_ is seen as the out-of-place primitive it runs; Triple's inner mul is not
    # seen again (ops inside an observed call are not observed twice).
    assert names == ["MulBackward0", "SinBackward0", "SumBackward1", "SelectBackward0",
                     "MaxBackward0", "Triple", "AddBackward0"]
    assert seen[2][2]["_dims"] == (1,)
    assert seen[3][2]["step"] == ("select", (0, 0))
    assert isinstance(seen[4][3], tuple)


def test_observer_can_replace_the_result_and_results_are_unchanged_otherwise():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    plain = (x * x).sum()
    seen = _observe(lambda: None)
    assert seen == []

    def double(P, inputs, attrs, run):
        r = run()
        return r * 2 if P.__name__ == "ExpBackward0" else r

    add_observer(double)
    try:
        y = x.exp()
        z = (x * x).sum()
    finally:
        remove_observer(double)
    np.testing.assert_allclose(y.detach().numpy(), 2 * np.exp([1.0, 2.0]), rtol=1e-6)
    assert z.item() == plain.item()
    z.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    assert OBSERVERS == []
