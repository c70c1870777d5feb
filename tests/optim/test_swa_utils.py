"""``optim.swa_utils`` against torch: averaged parameters (SWA, EMA, custom), SWALR's
sequence, and update_bn's recomputed statistics."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as rg


def _model(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(lib.tensor(np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape)) * (i + 1),
                               dtype=lib.float32))
    return m


@pytest.mark.parametrize("kind", ["swa", "ema", "ema_multi", "custom", "buffers"])
def test_averaged_model_matches_torch(torch, kind):
    out = []
    for lib in (rg, torch):
        m = _model(lib)
        su = lib.optim.swa_utils
        kw = {"swa": {}, "ema": {"avg_fn": su.get_ema_avg_fn(0.9)},
              "ema_multi": {"multi_avg_fn": su.get_ema_multi_avg_fn(0.8)},
              "custom": {"avg_fn": lambda a, p, n: a * 0.5 + p * 0.5},
              "buffers": {"use_buffers": True}}[kind]
        avg = su.AveragedModel(m, **kw)
        opt = lib.optim.SGD(m.parameters(), lr=0.02)
        x = lib.tensor(np.linspace(-2, 2, 15).reshape(5, 3), dtype=lib.float32)
        for _ in range(4):
            opt.zero_grad()
            m(x).pow(2).mean().backward()
            opt.step()
            avg.update_parameters(m)
        out.append([t.detach().numpy().copy() for t in avg.state_dict().values()])
        assert list(avg.state_dict()) == list(avg.state_dict())
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_swalr_sequence_and_state_dict_match_torch(torch):
    seqs = []
    for lib in (rg, torch):
        p = lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([{"params": [p]}, {"params": [lib.zeros(1, requires_grad=True)],
                                               "lr": 0.5}], lr=1.0)
        seq = []
        for strategy, epochs in (("cos", 3), ("linear", 0)):
            sched = lib.optim.swa_utils.SWALR(opt, swa_lr=[0.05, 0.2], anneal_epochs=epochs,
                                              anneal_strategy=strategy)
            for _ in range(5):
                opt.step()
                sched.step()
                seq.append(sched.get_last_lr())
        seqs.append((seq, sorted(sched.state_dict())))
    np.testing.assert_allclose(seqs[0][0], seqs[1][0], rtol=1e-12)
    assert seqs[0][1] == seqs[1][1]
    with pytest.raises(ValueError, match="anneal_strategy must be one of"):
        rg.optim.swa_utils.SWALR(rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0), 0.1,
                                 anneal_strategy="step")


def test_update_bn_matches_torch(torch):
    stats = []
    for lib in (rg, torch):
        m = _model(lib)
        data = [lib.tensor(np.linspace(-1, 3, 12).reshape(4, 3) * k, dtype=lib.float32)
                for k in (1, 2, 3)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.optim.swa_utils.update_bn([(d, 0) for d in data], m)
        bn = m[1]
        stats.append((bn.running_mean.numpy().copy(), bn.running_var.numpy().copy(),
                      int(bn.num_batches_tracked), bn.momentum, m.training))
    for a, b in zip(*stats):
        np.testing.assert_allclose(a, b, rtol=1e-5)
