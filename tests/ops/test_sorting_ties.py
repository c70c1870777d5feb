"""Tie order of sort, argsort, topk, kthvalue and mode against PyTorch's CPU kernels.

With distinct values every correct algorithm agrees; with ties PyTorch returns whatever
libstdc++'s ``std::sort`` / ``nth_element`` / ``partial_sort`` or ATen's quickselect leave, which
``retrograd._stl`` replays. Rows here are small integers (many ties), some longer than 16 (where
``std::sort`` leaves insertion sort) and some of 64k or more for topk's partial-sort path.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

CASES = [
    (shape, dtype, seed)
    for seed, (shape, dtype) in enumerate([
        ((40,), "float32"), ((3, 17), "int64"), ((2, 33), "float64"), ((5, 4, 20), "float32"),
        ((2, 130), "int32"), ((9,), "float16"), ((4, 70), "float32"), ((1, 300), "int64"),
    ])
]


def _input(shape, dtype, seed):
    a = np.random.default_rng(seed).integers(0, 4, size=shape).astype(dtype)
    if dtype.startswith("float") and seed % 2:
        a.reshape(-1)[::7] = np.nan
    return a


def _same(torch, got, want):
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


@pytest.mark.parametrize("shape,dtype,seed", CASES)
def test_sort_argsort_ties_match_torch(torch, shape, dtype, seed):
    a = _input(shape, dtype, seed)
    for d in range(len(shape)):
        for desc in (False, True):
            for stable in (False, True):
                got = retrograd.from_numpy(a).sort(dim=d, descending=desc, stable=stable)
                want = torch.from_numpy(a).sort(dim=d, descending=desc, stable=stable)
                _same(torch, got, want)
            np.testing.assert_array_equal(
                retrograd.from_numpy(a).argsort(d, desc).numpy(),
                torch.from_numpy(a).argsort(d, desc).numpy())


@pytest.mark.parametrize("shape,dtype,seed", CASES)
def test_topk_ties_match_torch(torch, shape, dtype, seed):
    a = _input(shape, dtype, seed)
    n = shape[-1]
    for k in sorted({0, 1, 2, n // 3, n - 1, n}):
        for largest in (True, False):
            for srt in (True, False):
                got = retrograd.from_numpy(a).topk(k, -1, largest, srt)
                want = torch.from_numpy(a).topk(k, -1, largest, srt)
                _same(torch, got, want)


@pytest.mark.parametrize("shape,dtype,seed", CASES)
def test_kthvalue_mode_ties_match_torch(torch, shape, dtype, seed):
    a = _input(shape, dtype, seed)
    n = shape[-1]
    for k in sorted({1, 2, n // 2, n}):
        _same(torch, retrograd.from_numpy(a).kthvalue(k), torch.from_numpy(a).kthvalue(k))
    got, want = retrograd.from_numpy(a).mode(), torch.from_numpy(a).mode()
    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())


def test_topk_partial_sort_path_ties(torch):
    # k * 64 <= n: PyTorch takes std::partial_sort (a heap), whose tie order differs again.
    a = np.random.default_rng(0).integers(0, 3, size=(2, 200)).astype("float32")
    _same(torch, retrograd.from_numpy(a).topk(3), torch.from_numpy(a).topk(3))
    _same(torch, retrograd.from_numpy(a).topk(2, largest=False),
          torch.from_numpy(a).topk(2, largest=False))


def test_unstable_sort_ties_fixed_values():
    # std::sort's introsort on 20 elements (no torch needed): PyTorch 2.13 gives this order.
    x = retrograd.tensor([1, 0, 1, 0] * 5)
    assert x.sort().indices[:10].tolist() == [1, 19, 17, 15, 13, 11, 9, 7, 5, 3]
    assert x.sort(stable=True).indices[:10].tolist() == [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]
    assert retrograd.tensor([2, 1, 2, 1, 2]).kthvalue(4).indices.item() == 0
    assert retrograd.tensor([3., 1., 3., 2., 1., 3., float("nan"), 0.]).topk(3).indices.tolist() \
        == [6, 0, 5]
