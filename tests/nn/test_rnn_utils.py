"""``nn.utils.rnn`` (pack/pad/unpack) and packed sequences through RNN/LSTM/GRU, against
PyTorch: data, batch sizes, permutations, outputs, hidden states and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rt

from ..oracle import assert_close, compare_error, copy_state, run_both

TOL = dict(rtol=1e-7, atol=1e-9)
R = np.random.default_rng(0)
SEQS = [R.standard_normal((n, 3)) for n in (2, 4, 1, 3)]


def _u(lib):
    return lib.nn.utils.rnn


def _packed(p) -> list:
    return [p.data, p.batch_sizes, p.sorted_indices, p.unsorted_indices]


@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_pack_pad_roundtrip_matches_torch(torch, enforce_sorted):
    seqs = sorted(SEQS, key=len, reverse=True) if enforce_sorted else SEQS

    def f(lib):
        def g(*xs):
            p = _u(lib).pack_sequence(list(xs), enforce_sorted=enforce_sorted)
            padded, lengths = _u(lib).pad_packed_sequence(p, batch_first=True,
                                                          padding_value=-1.0, total_length=5)
            un = _u(lib).unpack_sequence(p)
            return _packed(p) + [padded, lengths] + un
        return g

    run_both(torch, f(rt), f(torch), seqs, tol=TOL, grad_fn=False)


@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_padded_and_pad_sequence_match_torch(torch, batch_first):
    def f(lib):
        def g(*xs):
            padded = _u(lib).pad_sequence(list(xs), batch_first=batch_first, padding_value=0.5)
            left = _u(lib).pad_sequence(list(xs), batch_first=batch_first, padding_side="left")
            lengths = lib.tensor([len(x) for x in SEQS])
            p = _u(lib).pack_padded_sequence(padded, lengths, batch_first=batch_first,
                                             enforce_sorted=False)
            un = _u(lib).unpad_sequence(padded, lengths, batch_first=batch_first)
            return [padded, left] + _packed(p) + un
        return g

    run_both(torch, f(rt), f(torch), SEQS, tol=TOL, grad_fn=False)


def test_packed_sequence_object(torch):
    for lib in (rt, torch):
        p = _u(lib).pack_sequence([lib.ones(2, 1), lib.ones(1, 1)])
        assert isinstance(p, tuple) and p._fields == ("data", "batch_sizes", "sorted_indices",
                                                      "unsorted_indices")
        assert p.to(lib.float64).data.dtype == lib.float64 and p.double().data.dtype == \
            lib.float64 and not p.is_cuda
    r = _u(rt).PackedSequence(rt.ones(3), rt.tensor([2, 1]), rt.tensor([1, 0]))
    assert_close(r.unsorted_indices, torch.tensor([1, 0]))
    assert_close(_u(rt).invert_permutation(rt.tensor([2, 0, 3, 1])),
                 _u(torch).invert_permutation(torch.tensor([2, 0, 3, 1])))


@pytest.mark.parametrize("mode,kw", [("LSTM", dict(num_layers=2, bidirectional=True)),
                                     ("GRU", dict(bidirectional=True)),
                                     ("RNN", dict(num_layers=2)),
                                     ("LSTM", dict(proj_size=2, batch_first=True))])
def test_rnn_with_packed_input_matches_torch(torch, mode, kw):
    torch.manual_seed(0)
    tm = getattr(torch.nn, mode)(3, 4, **kw).double()
    rm = getattr(rt.nn, mode)(3, 4, **kw).double()
    copy_state(tm, rm)
    d = (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)
    h0 = R.standard_normal((d, 4, kw.get("proj_size") or 4))
    c0 = R.standard_normal((d, 4, 4))

    def f(lib, m):
        def g(*xs):
            *seqs, h, c = xs
            p = _u(lib).pack_sequence(list(seqs), enforce_sorted=False)
            out, hid = m(p, (h, c) if mode == "LSTM" else h)
            return [out.data, out.batch_sizes, out.sorted_indices, hid]
        return g

    run_both(torch, f(rt, rm), f(torch, tm), SEQS + [h0, c0], tol=TOL, grad_fn=False,
             modules=(rm, tm))


def test_rnn_utils_errors_match_torch():
    cases = [
        lambda lib: _u(lib).pack_sequence([lib.ones(1, 2), lib.ones(3, 2)]),
        lambda lib: _u(lib).pack_padded_sequence(lib.ones(3, 2, 1), [3, 0]),
        lambda lib: _u(lib).pad_packed_sequence(
            _u(lib).pack_sequence([lib.ones(3, 2)]), total_length=2),
    ]
    for case in cases:
        compare_error(case)
