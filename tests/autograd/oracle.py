"""Oracle helpers shared by the autograd tests: run the same code under retrograd and under
torch (the oracle) and compare values, gradients, graph structure and error messages.

torch is optional: ``_torch`` is ``None`` without it and ``needs_torch`` skips the tests that
need it; the torch-free tests run anyway.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

try:  # torch is only the oracle; the torch-free tests run without it
    import torch as _torch
except ImportError:  # pragma: no cover - depends on the environment
    _torch = None

needs_torch = pytest.mark.skipif(_torch is None, reason="torch (the oracle) is not installed")


# -- converting and comparing results ----------------------------------------------------------


def _is_tensor(x) -> bool:
    return isinstance(x, retrograd.Tensor) or (_torch is not None and isinstance(x, _torch.Tensor))


def _is_dtype(x) -> bool:
    return isinstance(x, retrograd.dtype) or (_torch is not None and isinstance(x, _torch.dtype))


def to_py(x):
    """Tensors (of either library) to (dtype name, shape, array); containers recursively."""
    if _is_dtype(x):
        return ("dtype", str(x).split(".")[-1])
    if _is_tensor(x):
        return ("T", str(x.dtype).split(".")[-1], tuple(x.shape), np.array(x.detach().tolist()))
    if isinstance(x, (list, tuple)):
        return tuple(to_py(e) for e in x)
    if isinstance(x, dict):
        return {k: to_py(v) for k, v in x.items()}
    return x


def assert_same(a, b, rtol=1e-5, atol=1e-6, path="result"):
    """Compare the ``to_py`` forms of a retrograd result ``a`` and a torch result ``b``."""
    if isinstance(b, tuple) and b and b[0] == "T":
        assert isinstance(a, tuple) and a and a[0] == "T", f"{path}: {a!r} is not a tensor"
        assert a[1] == b[1], f"{path}: dtype {a[1]} != torch's {b[1]}"
        assert a[2] == b[2], f"{path}: shape {a[2]} != torch's {b[2]}"
        np.testing.assert_allclose(a[3], b[3], rtol=rtol, atol=atol, err_msg=path)
    elif isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b), f"{path}: {a!r} vs torch's {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, rtol, atol, f"{path}[{i}]")
    elif isinstance(b, dict):
        assert isinstance(a, dict) and a.keys() == b.keys(), f"{path}: {a!r} vs {b!r}"
        for k in b:
            assert_same(a[k], b[k], rtol, atol, f"{path}[{k!r}]")
    elif isinstance(b, float):
        assert a == pytest.approx(b, rel=rtol, abs=atol), f"{path}: {a!r} vs torch's {b!r}"
    else:
        assert a == b, f"{path}: {a!r} vs torch's {b!r}"


def compare(fn, **kw):
    """Run ``fn(lib)`` with retrograd and with torch; their results must agree."""
    ours = to_py(fn(retrograd))
    ref = to_py(fn(_torch))
    assert_same(ours, ref, **kw)
    return ours


def _catch(fn, lib):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001
        return e
    return None


def _builtin_base(t: type) -> type:
    for k in t.__mro__:
        if k.__module__ == "builtins":
            return k
    return Exception


def compare_error(fn, exact=True):
    """Both libraries raise; the same builtin exception type and (if ``exact``) message."""
    ref = _catch(fn, _torch)
    assert ref is not None, "torch raised nothing: the test is wrong"
    ours = _catch(fn, retrograd)
    assert ours is not None, f"retrograd raised nothing; torch raised {type(ref).__name__}: {ref}"
    assert isinstance(ours, _builtin_base(type(ref))), (
        f"retrograd raised {type(ours).__name__}: {ours}; torch raised {type(ref).__name__}: {ref}"
    )
    if exact:
        assert str(ours) == str(ref)
    return ours, ref


# -- graph structure and leaves ----------------------------------------------------------------


def graph_sig(t, leaves=()):
    """A torch-independent description of the graph behind ``t``: node names, input_nr, which
    leaf each AccumulateGrad holds, and which nodes are shared (by first-visit number)."""
    memo: dict = {}
    alive: list = []  # keep nodes alive so that ids are not reused during the walk

    def sig(node):
        if node is None:
            return None
        if id(node) in memo:
            return ("ref", memo[id(node)])
        memo[id(node)] = len(memo)
        alive.append(node)
        name = node.name()
        if name.endswith("AccumulateGrad"):
            var = node.variable
            idx = next((i for i, leaf in enumerate(leaves) if leaf is var), "?")
            return ("AccumulateGrad", idx)
        return (name, tuple((sig(n), nr) for n, nr in node.next_functions))

    return sig(t.grad_fn)


def leaf(lib, data, dtype=None, requires_grad=True):
    """A leaf tensor of ``lib``; ``dtype`` is a name (``"float64"``) so it works for both."""
    dt = None if dtype is None else getattr(lib, dtype)
    return lib.tensor(data, dtype=dt, requires_grad=requires_grad)
