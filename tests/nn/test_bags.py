"""``embedding_bag``/``EmbeddingBag``, ``pdist`` and ``gumbel_softmax`` against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rt

from ..oracle import compare_error, copy_state, run_both

TOL = dict(rtol=1e-7, atol=1e-9)
R = np.random.default_rng(0)
W = R.standard_normal((7, 3))


def _l(lib, a):
    return lib.tensor(np.asarray(a), dtype=lib.int64)


BAGS = [  # (input, offsets, keyword arguments)
    ([1, 2, 4, 5, 4, 3, 2, 0], [0, 2, 2, 5], {}),
    ([1, 2, 4, 5, 4, 3, 2, 0], [0, 2, 2, 5], dict(mode="sum", padding_idx=2)),
    ([1, 2, 4, 5, 4, 3, 2, 0], [0, 2, 2, 5], dict(mode="max")),
    ([1, 2, 4, 5, 4, 3, 2, 0], [0, 3, 8], dict(mode="mean", include_last_offset=True,
                                            padding_idx=4)),
    ([[1, 2, 0], [6, 6, 3]], None, dict(mode="max", padding_idx=6)),
    ([[1, 2, 0], [6, 6, 3]], None, dict(mode="mean", scale_grad_by_freq=True)),
]


@pytest.mark.parametrize("case", BAGS, ids=[str(i) for i in range(len(BAGS))])
def test_embedding_bag_matches_torch(torch, case):
    inp, offsets, kw = case
    fns = [lambda w, lib=lib: lib.nn.functional.embedding_bag(
        _l(lib, inp), w, None if offsets is None else _l(lib, offsets), **kw)
        for lib in (rt, torch)]
    run_both(torch, fns[0], fns[1], [W], tol=TOL, grad_fn=False)


def test_embedding_bag_per_sample_weights_and_max_norm(torch):
    psw = R.standard_normal(8)
    fns = [lambda w, p, lib=lib: lib.nn.functional.embedding_bag(
        _l(lib, [1, 2, 4, 5, 4, 3, 2, 0]), w, _l(lib, [0, 2, 2, 5]), mode="sum",
        per_sample_weights=p) for lib in (rt, torch)]
    run_both(torch, fns[0], fns[1], [W, psw], tol=TOL, grad_fn=False)
    wr, wt = rt.tensor(W), torch.tensor(W)
    a = rt.nn.functional.embedding_bag(_l(rt, [[1, 2]]), wr, max_norm=0.5)
    b = torch.nn.functional.embedding_bag(_l(torch, [[1, 2]]), wt, max_norm=0.5)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-7)
    np.testing.assert_allclose(wr.numpy(), wt.numpy(), rtol=1e-7)  # rows renormalised in place


def test_embedding_bag_module_matches_torch(torch):
    for kw in ({}, dict(mode="sum", padding_idx=1, max_norm=1.0, include_last_offset=True),
               dict(mode="max", norm_type=1.0)):
        torch.manual_seed(0)
        tm = torch.nn.EmbeddingBag(7, 3, **kw).double()
        rt.manual_seed(0)
        rm = rt.nn.EmbeddingBag(7, 3, **kw).double()
        assert repr(rm) == repr(tm)
        assert list(rm.state_dict()) == list(tm.state_dict())
        np.testing.assert_allclose(rm.weight.detach().numpy(), tm.weight.detach().numpy())
        copy_state(tm, rm)
        fns = [lambda w, m=m, lib=lib: m(_l(lib, [1, 2, 4, 5, 4, 3]), _l(lib, [0, 2, 3])) * w
               for m, lib in ((rm, rt), (tm, torch))]
        run_both(torch, fns[0], fns[1], [R.standard_normal(3)], tol=TOL, grad_fn=False,
                 modules=(rm, tm))
    tb = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(W), mode="sum")
    rb = rt.nn.EmbeddingBag.from_pretrained(rt.tensor(W), mode="sum")
    assert repr(rb) == repr(tb) and rb.weight.requires_grad == tb.weight.requires_grad
    np.testing.assert_allclose(rb(_l(rt, [[1, 2]])).numpy(), tb(_l(torch, [[1, 2]])).numpy())


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.0])
def test_pdist_matches_torch(torch, p):
    fns = [lambda x, lib=lib: lib.nn.functional.pdist(x, p) for lib in (rt, torch)]
    run_both(torch, fns[0], fns[1], [R.standard_normal((5, 3))], tol=TOL, grad_fn=False)


@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_matches_torch_with_the_same_seed(torch, hard):
    x = R.standard_normal((4, 5))

    def f(lib):
        def g(a):
            lib.manual_seed(3)
            return lib.nn.functional.gumbel_softmax(a, tau=0.7, hard=hard, dim=-1)
        return g

    run_both(torch, f(rt), f(torch), [x], tol=dict(rtol=1e-6, atol=1e-8), grad_fn=False)


def test_bag_errors_match_torch():
    w = lambda lib: lib.ones(6, 3)  # noqa: E731
    cases = [
        lambda lib: lib.nn.functional.embedding_bag(_l(lib, [[1, 2]]), w(lib), _l(lib, [0])),
        lambda lib: lib.nn.functional.embedding_bag(_l(lib, [1, 2]), w(lib)),
        lambda lib: lib.nn.functional.embedding_bag(_l(lib, [1, 2]), w(lib), _l(lib, [0]),
                                                    mode="mean",
                                                    per_sample_weights=lib.ones(2)),
        lambda lib: lib.nn.functional.embedding_bag(_l(lib, [1, 2]), w(lib), _l(lib, [0]),
                                                    mode="bad"),
        lambda lib: lib.nn.functional.pdist(lib.ones(2, 2, 2)),
        lambda lib: lib.nn.functional.embedding_bag(_l(lib, [1, 2]), w(lib), _l(lib, [0]),
                                                    mode="max", scale_grad_by_freq=True),
    ]
    for case in cases:
        compare_error(case, exact=False)
