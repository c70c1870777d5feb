"""Result layouts (strides) of ops on a non-contiguous input, against torch: the ops PyTorch
gives a contiguous output (scans, cat/stack, softmax, roll, masked_fill/scatter) give one here
too, so that ``.view()`` on their result works as it does under torch."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

_OPS = {
    "cumsum": lambda t, x: x.cumsum(1), "cumprod": lambda t, x: x.cumprod(2),
    "cummax": lambda t, x: x.cummax(1).values, "cummin": lambda t, x: x.cummin(1).indices,
    "logcumsumexp": lambda t, x: x.logcumsumexp(1), "cat": lambda t, x: t.cat([x, x]),
    "cat1": lambda t, x: t.cat([x, x], 1), "stack": lambda t, x: t.stack([x, x]),
    "softmax": lambda t, x: x.softmax(-1), "log_softmax": lambda t, x: x.log_softmax(1),
    "masked_fill": lambda t, x: x.masked_fill(x > 5, 0),
    "masked_scatter": lambda t, x: x.masked_scatter(x > 3, t.zeros(24)),
    "roll": lambda t, x: x.roll(1, 0), "roll_flat": lambda t, x: x.roll(1),
    # reductions: PyTorch allocates their results contiguous
    "sum0": lambda t, x: x.sum(0), "sum_keep": lambda t, x: x.sum(0, keepdim=True),
    "mean0": lambda t, x: x.mean(0), "amax0": lambda t, x: x.amax(0),
    "max0": lambda t, x: x.max(0).values, "argmax0": lambda t, x: x.max(0).indices,
    "prod0": lambda t, x: x.prod(0), "std0": lambda t, x: x.std(0),
    "var_mean0": lambda t, x: t.var_mean(x, 0)[1], "norm0": lambda t, x: x.norm(dim=0),
    "logsumexp0": lambda t, x: x.logsumexp(0), "all0": lambda t, x: (x > 3).all(0),
    "aminmax0": lambda t, x: t.aminmax(x, dim=0).max, "nansum0": lambda t, x: x.nansum(0),
    "argmin0": lambda t, x: x.argmin(0), "count_nonzero0": lambda t, x: x.count_nonzero(0),
    # advanced indexing (NumPy puts an indexed middle dim first in memory) and F.unfold
    "adv_index": lambda t, x: x[:, [0, 2]], "adv_index_list": lambda t, x: x[[1, 0], :, [0, 2]],
    "unfold": lambda t, x: t.nn.functional.unfold(x.permute(2, 0, 1)[None, :2, :2], 1),
    "rpow": lambda t, x: 2 ** x, "rpow_int": lambda t, x: 2 ** x.long(),
    "float_power_rscalar": lambda t, x: t.float_power(2, x),
}


@pytest.mark.parametrize("name", sorted(_OPS))
def test_layout_matches_torch(torch, name):
    def run(lib):
        x = lib.arange(24.).view(2, 3, 4).mT + 0  # a transposed layout, (12, 1, 4)
        r = _OPS[name](lib, x)
        return r.stride(), r.is_contiguous(), r.view(-1).tolist()
    got, want = run(retrograd), run(torch)
    assert got[:2] == want[:2]
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)


def test_like_functions_preserve_layout_as_torch(torch):
    """``*_like`` keep a transposed or permuted input's layout (preserve_format), and give C
    order for an expanded input or when asked for the contiguous format."""
    def run(lib):
        x = lib.arange(24.).view(2, 3, 4)
        out = []
        for a in (x.mT, x.permute(2, 0, 1), x[:, ::2], x[0].t(), x[:, :1].expand(2, 3, 4)):
            for f in (lib.empty_like, lib.zeros_like, lib.ones_like, lib.rand_like,
                      lambda a: lib.full_like(a, 2), lambda a: lib.empty_like(
                          a, memory_format=lib.contiguous_format)):
                out.append(f(a).stride())
        return out
    assert run(retrograd) == run(torch)
