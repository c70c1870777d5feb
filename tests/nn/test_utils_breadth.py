"""``nn.utils`` fusion, ``functional_call``, ``skip_init`` and the memory-format helpers
against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rt

from ..oracle import copy_state, run_both

TOL = dict(rtol=1e-7, atol=1e-9)
R = np.random.default_rng(0)


def _trained_bn(lib, bn):
    bn.running_mean.copy_(lib.tensor(R.standard_normal(bn.num_features)))
    bn.running_var.copy_(lib.tensor(R.random(bn.num_features) + 0.5))
    return bn.eval()


def test_fusion_matches_torch(torch):
    for kind, make, shape in (
            ("conv", lambda lib: (lib.nn.Conv2d(2, 3, 2), lib.nn.BatchNorm2d(3)), (1, 2, 4, 4)),
            ("convT", lambda lib: (lib.nn.ConvTranspose2d(2, 3, 2), lib.nn.BatchNorm2d(3)),
             (1, 2, 3, 3)),
            ("linear", lambda lib: (lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3)), (2, 4))):
        torch.manual_seed(0)
        tl, tb = (m.double().eval() for m in make(torch))
        rl, rb = (m.double().eval() for m in make(rt))
        copy_state(tl, rl)
        state = {k: v.clone() for k, v in _trained_bn(torch, tb).state_dict().items()}
        rb.load_state_dict({k: rt.tensor(v.numpy()) for k, v in state.items()})
        rb.eval()
        if kind == "linear":
            tf, rf = (lib.nn.utils.fuse_linear_bn_eval(m, b)
                      for lib, m, b in ((torch, tl, tb), (rt, rl, rb)))
        else:
            tf, rf = (lib.nn.utils.fuse_conv_bn_eval(m, b, transpose=kind == "convT")
                      for lib, m, b in ((torch, tl, tb), (rt, rl, rb)))
        assert repr(rf) == repr(tf)
        x = R.standard_normal(shape)
        run_both(torch, rf, tf, [x], tol=TOL, grad_fn=False, modules=(rf, tf))
        np.testing.assert_allclose(rf(rt.tensor(x)).detach().numpy(),
                                   rb(rl(rt.tensor(x))).detach().numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.stateless.functional_call` is deprecated")
def test_functional_call_matches_torch(torch):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).double()
    rm = rt.nn.Sequential(rt.nn.Linear(3, 4), rt.nn.BatchNorm1d(4)).double()
    copy_state(tm, rm)
    w = R.standard_normal((4, 3))
    x = R.standard_normal((5, 3))
    rv = R.random(4) + 0.5
    outs = []
    for lib, m in ((torch, tm), (rt, rm)):
        wt = lib.tensor(w, requires_grad=True)
        m.eval()
        out = lib.nn.utils.stateless.functional_call(
            m, {"0.weight": wt, "1.running_var": lib.tensor(rv)}, (lib.tensor(x),))
        out.sum().backward()
        outs.append((out.detach().numpy(), wt.grad.numpy(), m[0].weight.detach().numpy(),
                     m[1].running_var.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12)


def test_skip_init_and_memory_format(torch):
    for lib in (torch, rt):
        m = lib.nn.utils.skip_init(lib.nn.Linear, 5, 2, bias=False)
        assert tuple(m.weight.shape) == (2, 5) and m.bias is None
        c = lib.nn.Conv2d(1, 1, 1)
        assert lib.nn.utils.convert_conv2d_weight_memory_format(c, lib.channels_last) is c
