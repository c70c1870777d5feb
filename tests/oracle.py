"""The torch oracle shared by every test: run the same code under retrograd and under torch and
compare values, dtypes, shapes, gradients, graph structure and error messages.

torch is optional. ``tests/conftest.py`` turns this module into fixtures (``torch`` skips the test
that asks for it when torch is missing); tests that take no torch fixture, such as the
finite-difference checks, run anyway. ``_torch`` is ``None`` without torch and ``needs_torch``
skips a test that reaches torch through the helpers below rather than through the fixture.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import retrograd

try:  # torch is only the oracle; the torch-free tests run without it
    import torch as _torch
except ImportError:  # pragma: no cover - depends on the environment
    _torch = None

needs_torch = pytest.mark.skipif(_torch is None, reason="torch (the oracle) is not installed")


def import_torch():
    """torch, or skip the calling test when it is not installed."""
    return pytest.importorskip("torch", reason="torch (the oracle) is not installed")


# -- converting between the two libraries ------------------------------------------------------


def _is_tensor(x) -> bool:
    return isinstance(x, retrograd.Tensor) or (_torch is not None and isinstance(x, _torch.Tensor))


def _is_dtype(x) -> bool:
    return isinstance(x, retrograd.dtype) or (_torch is not None and isinstance(x, _torch.dtype))


def dtype_name(t) -> str:
    """``"float32"`` for a tensor or dtype of either library."""
    return str(getattr(t, "dtype", t)).split(".")[-1]


def numpy(t):
    """A tensor of either library as a NumPy array (``None`` stays ``None``)."""
    return None if t is None else t.detach().numpy()


def leaves(lib, arrays, requires_grad=True) -> list:
    """Leaf tensors of ``lib`` holding ``arrays`` (``None`` stays ``None``). ``requires_grad`` is
    one flag or one per array; integer and bool arrays never require grad."""
    flags = requires_grad if isinstance(requires_grad, (list, tuple)) else [requires_grad] * len(
        arrays)
    return [None if a is None else
            lib.tensor(a, requires_grad=bool(f) and np.asarray(a).dtype.kind == "f")
            for a, f in zip(arrays, flags)]


def copy_state(t_module, rg_module):
    """Load a torch module's state (parameters and buffers) into the retrograd twin."""
    rg_module.load_state_dict({k: retrograd.tensor(v.detach().numpy())
                               for k, v in t_module.state_dict().items()})


def flat(o) -> list:
    """The tensors (and ``None``s) of a possibly nested tuple/list of outputs, in order."""
    if isinstance(o, (tuple, list)):
        return [y for z in o for y in flat(z)]
    return [o]


def same_call(torch, path: str, **kw) -> tuple:
    """The function at the dotted ``path`` (``"nn.functional.conv2d"``) in retrograd and in
    torch, each with the keyword arguments ``kw`` bound: the ``fn, fn_torch`` of ``run_both``."""
    fns = []
    for lib in (retrograd, torch):
        f = lib
        for part in path.split("."):
            f = getattr(f, part)
        fns.append(lambda *a, _f=f: _f(*a, **kw))
    return tuple(fns)


# -- comparing ---------------------------------------------------------------------------------


def assert_close(ours, ref, rtol=1e-5, atol=1e-6, what="result"):
    """A retrograd tensor equals a torch tensor: shape, dtype and values (integers exactly)."""
    assert (ours is None) == (ref is None), f"{what}: {ours!r} vs torch's {ref!r}"
    if ref is None:
        return
    assert tuple(ours.shape) == tuple(ref.shape), \
        f"{what}: shape {tuple(ours.shape)} != torch's {tuple(ref.shape)}"
    assert dtype_name(ours) == dtype_name(ref), \
        f"{what}: dtype {dtype_name(ours)} != torch's {dtype_name(ref)}"
    a, b = numpy(ours), numpy(ref)
    if b.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


def assert_grad_close(ours, ref, tol, what="grad"):
    """Gradients agree; where torch has none, retrograd has none or zeros."""
    if ref is None:
        assert ours is None or not numpy(ours).any(), f"{what}: torch has no gradient"
        return
    assert ours is not None, f"{what}: retrograd has no gradient, torch has one"
    np.testing.assert_allclose(numpy(ours), numpy(ref), err_msg=what, **tol)


def run_both(torch, fn, fn_torch, arrays, *, tol, grad_tol=None, requires_grad=True,
             grad_fn=True, seed=1, loss=None, modules=None):
    """Run ``fn`` on retrograd leaves and ``fn_torch`` on torch leaves holding the same
    ``arrays``; both must agree on every output's shape, dtype and values, on the grad_fn name
    of the first output (if ``grad_fn``), and on the gradient of every input (and of every
    parameter of ``modules``, a (retrograd, torch) pair) for one upstream loss.

    ``loss(lib, outputs)`` gives that loss; by default it is ``sum((o * w_k).sum())`` over the
    floating outputs, with ``w_k`` standard normal from ``default_rng(seed + k)``. Warnings are
    silenced (both libraries warn alike; warnings are tested where they matter). Returns the two
    results, ``(ours, ref)``.
    """
    grad_tol = tol if grad_tol is None else grad_tol
    rs = leaves(retrograd, arrays, requires_grad)
    ts = leaves(torch, arrays, requires_grad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, ref = fn(*rs), fn_torch(*ts)
    outs, refs = flat(ours), flat(ref)
    assert len(outs) == len(refs), f"{len(outs)} outputs, torch has {len(refs)}"
    for k, (a, b) in enumerate(zip(outs, refs)):
        assert_close(a, b, what=f"output {k}", **tol)
    if grad_fn and refs[0] is not None and refs[0].grad_fn is not None:
        name = outs[0].grad_fn.name() if outs[0].grad_fn is not None else None
        assert name == refs[0].grad_fn.name(), f"grad_fn {name} != torch's"

    diff = [k for k, b in enumerate(refs) if b is not None and b.requires_grad]
    if not diff:
        return ours, ref
    if loss is None:
        ws = {k: np.random.default_rng(seed + k).standard_normal(tuple(refs[k].shape))
              .astype(dtype_name(refs[k])) for k in diff}

        def loss(lib, o):
            return sum((o[k] * lib.tensor(ws[k])).sum() for k in diff)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss(retrograd, outs).backward()
        loss(torch, refs).backward()
    for i, (r, t) in enumerate(zip(rs, ts)):
        if t is not None and t.requires_grad:
            assert_grad_close(r.grad, t.grad, grad_tol, f"grad of input {i}")
    if modules is not None:
        rm, tm = modules
        for (n1, p1), (n2, p2) in zip(tm.named_parameters(), rm.named_parameters(),
                                      strict=True):
            assert n1 == n2
            assert_grad_close(p2.grad, p1.grad, grad_tol, f"grad of {n1}")
    return ours, ref


# -- results of arbitrary code, and errors -----------------------------------------------------


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


# retrograd adds, after PyTorch's text, lines naming where the op concerned was created or
# modified ("  ExpBackward0 was created by the forward call at: File ..."): not PyTorch's.
_PROVENANCE = re.compile(r'\n  [^\n]* at: File "[^"\n]*", line \d+, in [^\n]*')


def without_provenance(msg: str) -> str:
    """An error message without retrograd's provenance lines."""
    return _PROVENANCE.sub("", msg)


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
        assert without_provenance(str(ours)) == str(ref)
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
