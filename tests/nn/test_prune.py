"""``nn.utils.prune`` against PyTorch: the masks each method picks (ties and seeds included),
the reparametrization (``weight_orig``, ``weight_mask``, the pre-hook), containers, global
pruning, ``remove`` and the errors."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import retrograd
from retrograd.nn.utils import prune as rprune


def _run(lib, f):
    prune = importlib.import_module(lib.__name__ + ".nn.utils.prune")
    lib.manual_seed(0)
    return f(lib, prune)


def _same(a, b):
    if hasattr(a, "detach"):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b


def _chain(lib, prune):
    m = lib.nn.Linear(6, 5)
    with lib.no_grad():  # many ties: the masks follow PyTorch's topk tie order
        m.weight.copy_(lib.arange(30.).view(5, 6) % 4 - 1.5)
    prune.l1_unstructured(m, "weight", amount=0.3)
    prune.random_unstructured(m, "bias", amount=2)
    out = [m.weight_mask.clone(), m.bias_mask, [n for n, _ in m.named_parameters()],
           list(m.state_dict()), m.weight.grad_fn.name()]
    m(lib.ones(2, 6)).sum().backward()
    out.append(m.weight_orig.grad)
    prune.ln_structured(m, "weight", amount=1, n=2, dim=0)
    prune.random_structured(m, "weight", amount=0.34, dim=1)
    hook = list(m._forward_pre_hooks.values())[-1]
    out += [m.weight_mask.clone(), type(hook).__name__, len(hook)]
    prune.remove(m, "weight")
    out += [[n for n, _ in m.named_parameters()], m.weight, prune.is_pruned(m)]
    return out


def _global(lib, prune):
    net = lib.nn.Sequential(lib.nn.Conv2d(1, 3, 3), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    params = [(net[0], "weight"), (net[2], "weight")]
    prune.global_unstructured(params, pruning_method=prune.L1Unstructured, amount=0.4)
    prune.global_unstructured(params, pruning_method=prune.RandomUnstructured, amount=3)
    prune.custom_from_mask(net[2], "bias", lib.tensor([0., 1.]))
    scores = lib.arange(9.).view(3, 3)
    return [net[0].weight_mask, net[2].weight_mask, net[2].bias,
            prune.l1_unstructured(lib.nn.Linear(3, 3), "weight", 0.5,
                                  importance_scores=scores).weight_mask,
            prune.identity(lib.nn.Linear(2, 2), "weight").weight_mask,
            prune.L1Unstructured(amount=2).prune(lib.tensor([3., -1., 2., 0.5]))]


@pytest.mark.parametrize("f", [_chain, _global])
def test_prune_matches_torch(torch, f):
    _same(_run(retrograd, f), _run(torch, f))


ERRORS = [
    lambda lib, p: p.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount=1.5),
    lambda lib, p: p.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount="a"),
    lambda lib, p: p.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount=5),
    lambda lib, p: p.ln_structured(lib.nn.Linear(2, 2), "bias", amount=1, n=2, dim=0),
    lambda lib, p: p.ln_structured(lib.nn.Linear(2, 2), "weight", amount=1, n=1, dim=3),
    lambda lib, p: p.remove(lib.nn.Linear(2, 2), "weight"),
    lambda lib, p: p.global_unstructured([(lib.nn.Linear(2, 2), "weight")],
                                         p.RandomStructured, amount=1),
]


@pytest.mark.parametrize("f", ERRORS)
def test_prune_errors_match_torch(torch, f):
    def err(lib):
        try:
            _run(lib, f)
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return type(e).__name__, str(e).replace(lib.__name__ + ".", "torch.")
    assert err(retrograd) == err(torch) is not None


def test_l1_unstructured_prunes_smallest_without_torch():
    m = retrograd.nn.Linear(2, 2)
    with retrograd.no_grad():
        m.weight.copy_(retrograd.tensor([[0.1, -3.0], [2.0, -0.2]]))
    rprune.l1_unstructured(m, "weight", amount=2)
    assert m.weight_mask.tolist() == [[0.0, 1.0], [1.0, 0.0]]
    assert m(retrograd.ones(1, 2)).shape == (1, 2) and rprune.is_pruned(m)
    rprune.remove(m, "weight")
    assert m.weight.tolist() == [[0.0, -3.0], [2.0, 0.0]] and not rprune.is_pruned(m)
