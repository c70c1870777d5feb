"""Tests for the Tensor class itself (``retrograd._tensor``): attributes, conversions, autograd
metadata, reprs and the legacy constructor.

Most tests run the same code through retrograd and PyTorch (the oracle) and compare values,
dtypes, identities and errors; they are skipped when PyTorch is not installed. Tests that need no
oracle assert retrograd's behaviour directly.
"""

from __future__ import annotations

import operator
import re
import warnings

import numpy as np
import pytest

import retrograd as rg


@pytest.fixture
def default_dtype():
    """Restore the default dtype of retrograd (and of torch, if installed) after the test."""
    saved = rg.get_default_dtype()
    try:
        import torch as _torch
    except ImportError:  # pragma: no cover - torch is optional
        _torch = None
    saved_t = _torch.get_default_dtype() if _torch is not None else None
    yield
    rg.set_default_dtype(saved)
    if _torch is not None:
        _torch.set_default_dtype(saved_t)


def name(d) -> str:
    return str(d).split(".")[-1]


def vals(t):
    return np.asarray(t.detach().numpy())


def raised(fn, lib) -> BaseException:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(lib)
    except Exception as e:  # noqa: BLE001 - the exception is the subject under test
        return e
    raise AssertionError(f"{lib.__name__}: no exception")


def strip_triggered(msg: str) -> str:
    return re.sub(r"\s*\(Triggered internally at .*\)\s*$", "", msg, flags=re.S)


def assert_same_error(fn, torch, message: bool = True) -> None:
    """``fn(retrograd)`` raises what ``fn(torch)`` raises: the same type and message."""
    expected = raised(fn, torch)
    got = raised(fn, rg)
    assert type(got).__name__ == type(expected).__name__, (got, expected)
    if message:
        assert strip_triggered(str(got)) == strip_triggered(str(expected)).replace(
            "torch.", "retrograd."
        )


def assert_same_tensor(r, t) -> None:
    assert name(r.dtype) == name(t.dtype)
    assert tuple(r.shape) == tuple(t.shape)
    np.testing.assert_array_equal(vals(r), vals(t).astype(vals(r).dtype))


def same_repr(fn, torch) -> None:
    r, t = fn(rg), fn(torch)
    assert repr(r) == repr(t).replace("torch.", "retrograd.")
    assert str(r) == str(t).replace("torch.", "retrograd.")


# ------------------------------------------------------------------------------------------------
# shape, Size, dim, numel, dtype, device


def test_shape_and_size():
    x = rg.zeros(3, 2)
    assert x.shape == (3, 2)
    assert x.size() == (3, 2)
    assert x.size(0) == 3 and x.size(1) == 2 and x.size(-1) == 2 and x.size(-2) == 3
    assert isinstance(x.shape, tuple) and isinstance(x.shape, rg.Size)
    assert isinstance(x.size(), rg.Size)
    assert type(x.size(0)) is int


def test_size_repr_and_str():
    s = rg.zeros(3, 2).shape
    assert repr(s) == "retrograd.Size([3, 2])"
    assert str(s) == "retrograd.Size([3, 2])"
    assert repr(rg.tensor(1.0).shape) == "retrograd.Size([])"
    assert repr(rg.Size([4, 5])) == "retrograd.Size([4, 5])"


def test_size_matches_torch(torch):
    for lib_call in (
        lambda m: m.zeros(3, 2).shape,
        lambda m: m.zeros(3, 2, 4).shape[1:],
        lambda m: m.zeros(3, 2).shape + (5,),
        lambda m: (5,) + m.zeros(3, 2).shape,
        lambda m: m.Size([2, 3]),
        lambda m: m.zeros(0).shape,
    ):
        r, t = lib_call(rg), lib_call(torch)
        assert repr(r) == repr(t).replace("torch.", "retrograd."), (r, t)
        assert tuple(r) == tuple(t)
        assert type(r).__name__ == type(t).__name__
    assert rg.zeros(3, 2, 4).shape.numel() == torch.zeros(3, 2, 4).shape.numel() == 24
    assert rg.zeros(3, 2).shape[0] == 3
    assert hash(rg.Size([3, 2])) == hash((3, 2))


def test_size_dim_out_of_range_error(torch):
    assert_same_error(lambda m: m.zeros(3, 2).size(2), torch)
    assert_same_error(lambda m: m.zeros(3, 2).size(-3), torch)
    assert_same_error(lambda m: m.tensor(1.0).size(1), torch)
    assert_same_error(lambda m: m.tensor(1.0).size(0), torch)
    assert_same_error(lambda m: m.tensor(1.0).size(-1), torch)


@pytest.mark.parametrize("shape", [(), (0,), (4,), (3, 2), (2, 0, 3), (1, 1, 1, 1)])
def test_dim_ndim_numel(torch, shape):
    r, t = rg.zeros(shape), torch.zeros(shape)
    assert r.dim() == r.ndim == t.dim() == len(shape)
    assert r.numel() == t.numel() == int(np.prod(shape))
    assert rg.numel(r) == t.numel()
    assert r.size() == t.size()


def test_dtype_attribute():
    assert rg.zeros(2).dtype is rg.float32
    assert rg.zeros(2, dtype=rg.int32).dtype is rg.int32
    assert rg.tensor([1, 2]).dtype is rg.int64


def test_device_is_cpu(torch):
    x = rg.zeros(2)
    assert str(x.device) == str(torch.zeros(2).device) == "cpu"
    assert repr(x.device) == repr(torch.zeros(2).device)
    assert x.device.type == "cpu"
    assert x.device == rg.device("cpu")
    assert x.device == "cpu"


# ------------------------------------------------------------------------------------------------
# T, mT


def test_T_2d(torch):
    r = rg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    t = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert_same_tensor(r.T, t.T)
    assert r.T.shape == (3, 2)
    r.T[0, 1] = 10.0  # a view
    assert r[1, 0].item() == 10.0


T_WARNING = (
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
    "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
    "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
    "tensor."
)


@pytest.mark.parametrize("shape", [(3,), (2, 3, 4)])
def test_T_not_2d_reverses_and_warns(torch, shape):
    """torch reverses the dims and warns (once per process, from C++, so the text is copied
    here rather than captured live)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.arange(24)[: int(np.prod(shape))].reshape(shape).T
    r, w = capture_warnings(lambda: rg.arange(24)[: int(np.prod(shape))].reshape(shape).T)
    assert_same_tensor(r, t)
    assert [str(x.message).replace("retrograd.", "torch.") for x in w] == [T_WARNING]
    assert w[0].category is UserWarning


def test_T_grad_fn_name(torch):
    r = rg.ones(2, 3, requires_grad=True).T
    t = torch.ones(2, 3, requires_grad=True).T
    assert r.grad_fn.name() == t.grad_fn.name()


def test_mT(torch):
    r = rg.arange(12.0).reshape(2, 2, 3)
    t = torch.arange(12.0).reshape(2, 2, 3)
    assert_same_tensor(r.mT, t.mT)
    assert_same_tensor(r[0].mT, t[0].mT)
    assert_same_error(lambda m: m.ones(3).mT, torch)
    rr = rg.ones(2, 3, requires_grad=True).mT
    tt = torch.ones(2, 3, requires_grad=True).mT
    assert rr.grad_fn.name() == tt.grad_fn.name()


# ------------------------------------------------------------------------------------------------
# item, tolist, numpy, __array__


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.tensor(1.5),
        lambda m: m.tensor([2.25]),
        lambda m: m.tensor([[3]]),
        lambda m: m.tensor(True),
        lambda m: m.tensor(7, dtype=m.uint8),
        lambda m: m.tensor(0.1, dtype=m.float16),
        lambda m: m.tensor(0.1),
        lambda m: m.tensor(1.5, requires_grad=True),
    ],
)
def test_item(torch, make):
    r, t = make(rg).item(), make(torch).item()
    assert r == t
    assert type(r) is type(t)


def test_item_many_elements_error(torch):
    assert_same_error(lambda m: m.ones(2).item(), torch)
    assert_same_error(lambda m: m.ones(0).item(), torch)


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.tensor([[1.0, 0.1], [2.0, 3.0]]),
        lambda m: m.tensor([1, 2, 3], dtype=m.int32),
        lambda m: m.tensor([True, False]),
        lambda m: m.tensor(2.5),
        lambda m: m.zeros(2, 0),
        lambda m: m.tensor([0.1, 0.2], dtype=m.float64),
        lambda m: m.tensor([1.0, 2.0], requires_grad=True),
    ],
)
def test_tolist(torch, make):
    r, t = make(rg).tolist(), make(torch).tolist()
    assert r == t
    assert repr(r) == repr(t)  # same Python types (int/float/bool) and nesting


def test_numpy_shares_memory(torch):
    x = rg.tensor([1.0, 2.0, 3.0])
    a = x.numpy()
    assert isinstance(a, np.ndarray) and a.dtype == np.float32
    a[0] = 10.0
    assert x[0].item() == 10.0
    x.add_(1)
    assert a.tolist() == [11.0, 3.0, 4.0]
    assert rg.tensor([1], dtype=rg.int16).numpy().dtype == torch.tensor(
        [1], dtype=torch.int16).numpy().dtype


def test_numpy_requires_grad_error(torch):
    assert_same_error(lambda m: m.ones(2, requires_grad=True).numpy(), torch)
    assert_same_error(lambda m: (m.ones(2, requires_grad=True) * 2).numpy(), torch)
    assert_same_error(lambda m: np.asarray(m.ones(2, requires_grad=True)), torch)


def test_numpy_force(torch):
    r = rg.ones(2, requires_grad=True).numpy(force=True)
    t = torch.ones(2, requires_grad=True).numpy(force=True)
    np.testing.assert_array_equal(r, t)


def test_array_protocol(torch):
    x = rg.tensor([[1, 2], [3, 4]], dtype=rg.int32)
    a = np.asarray(x)
    assert a.dtype == np.asarray(torch.tensor([[1, 2], [3, 4]], dtype=torch.int32)).dtype
    assert a.tolist() == [[1, 2], [3, 4]]
    assert np.shares_memory(a, x.numpy())
    b = np.asarray(x, dtype=np.float64)
    assert b.dtype == np.float64 and b.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    c = np.array(x)
    c[0, 0] = 99
    assert x[0, 0].item() == 1


# ------------------------------------------------------------------------------------------------
# detach, detach_, clone, data


def test_detach_shares_memory_and_version(torch):
    for m in (rg, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        d = y.detach()
        assert d.requires_grad is False and d.is_leaf and d.grad_fn is None
        before = y._version
        d.add_(1)
        assert y._version == before + 1, m.__name__
        assert y.detach().tolist() == [3.0, 5.0]
        xd = x.detach()
        xd[0] = 7.0
        assert x._version == 1
        assert x.tolist() == [7.0, 2.0]


def test_detach_in_place(torch):
    for m in (rg, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        r = y.detach_()
        assert r is y
        assert y.grad_fn is None and y.is_leaf and not y.requires_grad
        assert x.detach_() is x and not x.requires_grad


def test_detach_in_place_view_error(torch):
    def fn(m):
        x = m.ones(3, requires_grad=True)
        y = x * 1
        y[:2].detach_()

    assert_same_error(fn, torch)


def test_clone(torch):
    for m in (rg, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        c = x.clone()
        assert c.requires_grad and not c.is_leaf
        assert c.grad_fn.name() == "CloneBackward0"
        c.sum().backward()
        assert x.grad.tolist() == [1.0, 1.0]
        plain = m.tensor([1, 2])
        c2 = plain.clone()
        c2[0] = 5
        assert plain.tolist() == [1, 2]
        assert c2.dtype == plain.dtype


def test_data_attribute(torch):
    res = {}
    for m in (rg, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        d = x.data
        assert not d.requires_grad and d.is_leaf
        d[0] = 5.0  # shares memory
        d.mul_(2)
        res[m.__name__] = (x.detach().tolist(), x._version, d._version, x.requires_grad)
    assert res["retrograd"] == res["torch"]


def test_data_assignment(torch):
    res = {}
    for m in (rg, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        x.data = m.tensor([3.0, 4.0, 5.0])
        res[m.__name__] = (x.detach().tolist(), tuple(x.shape), x.requires_grad, x.is_leaf)
        other = m.zeros(2)
        x.data = other
        other[0] = 9.0  # x now shares other's memory
        res[m.__name__] += (x.detach().tolist(),)
    assert res["retrograd"] == res["torch"]


def test_data_assignment_error(torch):
    def fn(m):
        x = m.ones(2, requires_grad=True)
        x.data = 5

    assert_same_error(fn, torch)


# ------------------------------------------------------------------------------------------------
# to, float/double/..., cpu, contiguous


CASTS = ["float", "double", "half", "long", "int", "bool", "short", "char", "byte"]


@pytest.mark.parametrize("method", CASTS)
@pytest.mark.parametrize(
    "make",
    [lambda m: m.tensor([-2.7, 0.0, 1.5, 3.0]), lambda m: m.tensor([-2, 0, 1, 3]),
     lambda m: m.tensor([True, False])],
    ids=["float", "int", "bool"],
)
def test_cast_methods(torch, method, make):
    r0, t0 = make(rg), make(torch)
    r, t = getattr(r0, method)(), getattr(t0, method)()
    assert_same_tensor(r, t)
    assert (r is r0) == (t is t0)


@pytest.mark.parametrize("method", ["float", "double", "half"])
def test_cast_methods_grad_fn(torch, method):
    r = getattr(rg.tensor([1.0, 2.0], requires_grad=True), method)()
    t = getattr(torch.tensor([1.0, 2.0], requires_grad=True), method)()
    assert r.requires_grad == t.requires_grad
    assert (r.grad_fn is None) == (t.grad_fn is None)
    if t.grad_fn is not None:
        assert r.grad_fn.name() == t.grad_fn.name()
    assert repr(r) == repr(t).replace("torch.", "retrograd.")


def test_cast_float_to_long_grad_fn(torch):
    r = rg.tensor([1.5, 2.0], requires_grad=True).long()
    t = torch.tensor([1.5, 2.0], requires_grad=True).long()
    assert r.requires_grad == t.requires_grad == False  # noqa: E712
    assert r.grad_fn is None and t.grad_fn is None


@pytest.mark.parametrize("dt", ["float64", "float16", "int32", "uint8", "bool", "float32"])
def test_to_dtype(torch, dt):
    r0, t0 = rg.tensor([1.5, -2.0]), torch.tensor([1.5, -2.0])
    r, t = r0.to(getattr(rg, dt)), t0.to(getattr(torch, dt))
    assert_same_tensor(r, t)
    assert (r is r0) == (t is t0)
    r2 = r0.to(dtype=getattr(rg, dt))
    assert r2.dtype is getattr(rg, dt)


def test_to_other_tensor(torch):
    r = rg.tensor([1, 2]).to(rg.zeros(1, dtype=rg.float64))
    t = torch.tensor([1, 2]).to(torch.zeros(1, dtype=torch.float64))
    assert_same_tensor(r, t)


def test_to_device_and_copy(torch):
    for m in (rg, torch):
        x = m.tensor([1.0, 2.0])
        assert x.to("cpu") is x
        assert x.to(m.float32) is x
        assert x.to("cpu", m.float64).dtype == m.float64
        c = x.to(m.float32, copy=True)
        assert c is not x
        c[0] = 5.0
        assert x[0].item() == 1.0


def test_to_grad_fn(torch):
    r = rg.tensor([1.0], requires_grad=True).to(rg.float64)
    t = torch.tensor([1.0], requires_grad=True).to(torch.float64)
    assert r.grad_fn.name() == t.grad_fn.name()
    r.sum().backward()
    t.sum().backward()


def test_cpu_returns_self(torch):
    for m in (rg, torch):
        x = m.ones(2)
        assert x.cpu() is x


def test_contiguous(torch):
    for m in (rg, torch):
        x = m.arange(6.0).reshape(2, 3)
        assert x.contiguous() is x
        y = x.T
        assert not y.is_contiguous()
        c = y.contiguous()
        assert c.is_contiguous() and c is not y
        assert c.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
        c[0, 0] = 100.0
        assert x[0, 0].item() == 0.0


# ------------------------------------------------------------------------------------------------
# requires_grad, is_leaf, grad, retain_grad, _version


def test_requires_grad_(torch):
    for m in (rg, torch):
        x = m.ones(2)
        assert x.requires_grad_() is x and x.requires_grad
        assert x.requires_grad_(False) is x and not x.requires_grad


@pytest.mark.parametrize("dt", ["int64", "int32", "uint8", "bool"])
def test_requires_grad_integer_error(torch, dt):
    assert_same_error(lambda m: m.ones(2, dtype=getattr(m, dt)).requires_grad_(), torch)
    assert_same_error(lambda m: m.tensor([1, 2], dtype=getattr(m, dt), requires_grad=True),
                      torch)

    def setattr_(m):
        x = m.ones(2, dtype=getattr(m, dt))
        x.requires_grad = True

    assert_same_error(setattr_, torch)


def test_requires_grad_false_on_integer_is_fine(torch):
    for m in (rg, torch):
        x = m.ones(2, dtype=m.int64)
        x.requires_grad_(False)
        assert not x.requires_grad


def test_is_leaf(torch):
    for m in (rg, torch):
        x = m.ones(2, requires_grad=True)
        c = m.ones(2)
        assert x.is_leaf and c.is_leaf
        assert not (x * 2).is_leaf
        assert (c * 2).is_leaf
        assert (x * 2).detach().is_leaf
        with m.no_grad():
            assert (x * 2).is_leaf


def test_requires_grad_on_non_leaf(torch):
    def set_false(m):
        y = m.ones(2, requires_grad=True) * 2
        y.requires_grad = False

    assert_same_error(set_false, torch)

    def set_false_(m):
        (m.ones(2, requires_grad=True) * 2).requires_grad_(False)

    assert_same_error(set_false_, torch)

    def set_true(m):
        y = m.ones(2, requires_grad=True) * 2
        y.requires_grad = True

    assert_same_error(set_true, torch)
    for m in (rg, torch):
        y = m.ones(2, requires_grad=True) * 2
        assert y.requires_grad_() is y
        assert y.requires_grad and not y.is_leaf


def capture_warnings(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        result = fn()
    return result, w


def test_grad_on_non_leaf_warns(torch):
    out = {}
    for m in (rg, torch):
        y = m.ones(2, requires_grad=True) * 2
        g, w = capture_warnings(lambda y=y: y.grad)
        assert g is None
        assert len(w) == 1
        assert w[0].category is UserWarning
        out[m.__name__] = strip_triggered(str(w[0].message))
        assert w[0].filename == __file__, m.__name__
    assert out["retrograd"] == out["torch"]


def test_grad_on_leaf_does_not_warn(torch):
    for m in (rg, torch):
        for x in (m.ones(2, requires_grad=True), m.ones(2), m.ones(2) * 2):
            g, w = capture_warnings(lambda x=x: x.grad)
            assert g is None and w == []


def test_grad_after_backward():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    assert isinstance(x.grad, rg.Tensor) and x.grad.dtype is rg.float32
    del x.grad
    assert x.grad is None


def test_grad_assignment(torch):
    for m in (rg, torch):
        x = m.ones(2, requires_grad=True)
        x.grad = m.tensor([3.0, 4.0])
        assert x.grad.tolist() == [3.0, 4.0]
        x.grad = None
        assert x.grad is None


@pytest.mark.parametrize(
    "value",
    [
        lambda m: m.ones(3),
        lambda m: m.ones(2, 1),
        lambda m: m.ones(2, dtype=m.float64),
        lambda m: m.ones(2, dtype=m.int64),
        lambda m: 5,
        lambda m: [1.0, 2.0],
    ],
    ids=["shape", "shape2", "float64", "int64", "int", "list"],
)
def test_grad_assignment_errors(torch, value):
    def fn(m):
        x = m.ones(2, requires_grad=True)
        x.grad = value(m)

    assert_same_error(fn, torch)


def test_grad_assign_self_error(torch):
    def fn(m):
        x = m.ones(2, requires_grad=True)
        x.grad = x

    assert_same_error(fn, torch)


def test_version_counter(torch):
    seqs = {}
    for m in (rg, torch):
        x = m.zeros(3)
        seq = [x._version]
        x.add_(1)
        seq.append(x._version)
        x[0] = 5.0
        seq.append(x._version)
        x += 1
        seq.append(x._version)
        x.mul_(2)
        seq.append(x._version)
        x.zero_()
        seq.append(x._version)
        x.fill_(3.0)
        seq.append(x._version)
        x.copy_(m.ones(3))
        seq.append(x._version)
        v = x[1:]
        v.add_(1)
        seq.append((x._version, v._version))
        x.detach().sub_(1)
        seq.append(x._version)
        _ = x + 1
        seq.append(x._version)
        seqs[m.__name__] = seq
    assert seqs["retrograd"] == seqs["torch"]


def test_retain_grad(torch):
    res = {}
    for m in (rg, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        assert y.retains_grad is False and x.retains_grad is False
        y.retain_grad()
        y.retain_grad()  # twice is harmless
        assert y.retains_grad is True
        x.retain_grad()  # a no-op on leaves
        assert x.retains_grad is False
        (y * y).sum().backward()
        g, w = capture_warnings(lambda y=y: y.grad)
        assert w == []
        res[m.__name__] = (g.tolist(), x.grad.tolist())
    assert res["retrograd"] == res["torch"] == ([6.0, 12.0], [18.0, 36.0])


def test_retain_grad_without_requires_grad_error(torch):
    assert_same_error(lambda m: m.ones(2).retain_grad(), torch)


# ------------------------------------------------------------------------------------------------
# Python protocols: len, iter, bool, float, int, index


def test_len(torch):
    assert len(rg.zeros(3, 2)) == len(torch.zeros(3, 2)) == 3
    assert len(rg.zeros(0)) == 0
    assert_same_error(lambda m: len(m.tensor(1.0)), torch)


def test_iter(torch):
    r, t = list(rg.tensor([[1, 2], [3, 4], [5, 6]])), list(torch.tensor([[1, 2], [3, 4], [5, 6]]))
    assert len(r) == len(t) == 3
    for a, b in zip(r, t):
        assert_same_tensor(a, b)
    r1 = list(rg.tensor([1.0, 2.0]))
    assert [x.shape for x in r1] == [(), ()]
    assert [x.item() for x in r1] == [1.0, 2.0]
    assert_same_error(lambda m: iter(m.tensor(1.0)), torch)
    assert list(rg.zeros(0)) == []


def test_iter_rows_are_views_with_grad(torch):
    names = {}
    for m in (rg, torch):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        rows = list(x)
        names[m.__name__] = rows[0].grad_fn.name()
        (rows[0] * 2 + rows[1]).sum().backward()
        assert x.grad.tolist() == [[2.0, 2.0], [1.0, 1.0]]
        y = m.tensor([[1.0, 2.0], [3.0, 4.0]])
        for row in y:
            row.mul_(10)
        assert y.tolist() == [[10.0, 20.0], [30.0, 40.0]]
    assert names["retrograd"] == names["torch"]


@pytest.mark.parametrize(
    "make",
    [lambda m: m.tensor(0.0), lambda m: m.tensor([2.0]), lambda m: m.tensor([[0]]),
     lambda m: m.tensor(True), lambda m: m.tensor([False]), lambda m: m.tensor(-1)],
)
def test_bool(torch, make):
    assert bool(make(rg)) is bool(make(torch))


def test_bool_errors(torch):
    assert_same_error(lambda m: bool(m.ones(2)), torch)
    assert_same_error(lambda m: bool(m.ones(0)), torch)
    assert_same_error(lambda m: m.ones(2) and 1, torch)


@pytest.mark.parametrize(
    "make",
    [lambda m: m.tensor(2.7), lambda m: m.tensor([-2.7]), lambda m: m.tensor([[3]]),
     lambda m: m.tensor(True), lambda m: m.tensor(5, dtype=m.uint8),
     lambda m: m.tensor(1.5, requires_grad=True)],
)
def test_float_int(torch, make):
    for conv in (float, int):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r, t = conv(make(rg)), conv(make(torch))
        assert r == t and type(r) is type(t)


def test_float_of_requires_grad_warns():
    """torch warns (once per process, from C++) on float() of a tensor that requires grad, and
    not on int() or item(); the text is copied from torch 2.13."""
    x = rg.tensor(1.5, requires_grad=True)
    r, w = capture_warnings(lambda: float(x))
    assert r == 1.5
    assert [str(m.message) for m in w] == [
        "Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
        "behavior.\nConsider using tensor.detach() first."
    ]
    assert w[0].category is UserWarning
    for conv in (int, lambda t: t.item()):
        _, w = capture_warnings(lambda conv=conv: conv(x))
        assert w == []


def test_float_int_errors(torch):
    assert_same_error(lambda m: float(m.ones(2)), torch)
    assert_same_error(lambda m: int(m.ones(2)), torch)
    assert_same_error(lambda m: float(m.ones(0)), torch)


def test_index(torch):
    seq = [10, 20, 30, 40]
    assert seq[rg.tensor(2)] == seq[torch.tensor(2)] == 30
    assert seq[rg.tensor([1])] == seq[torch.tensor([1])] == 20
    assert list(range(rg.tensor(3))) == [0, 1, 2]
    assert operator.index(rg.tensor(3, dtype=rg.int8)) == 3
    assert seq[rg.tensor(1):rg.tensor(3)] == [20, 30]
    assert hex(rg.tensor(255)) == "0xff"
    assert seq[rg.tensor(True)] == seq[torch.tensor(True)]


@pytest.mark.parametrize(
    "case",
    [lambda m: "ab" * m.tensor(2), lambda m: [1, 2] * m.tensor(2), lambda m: (1,) * m.tensor(3),
     lambda m: m.tensor(2) * "ab", lambda m: m.tensor(2) * [1, 2]],
    ids=["str*t", "list*t", "tuple*t", "t*str", "t*list"],
)
def test_sequence_repetition_uses_index(torch, case):
    """``seq * t`` repeats the sequence through ``__index__`` in torch (the tensor's
    ``__rmul__`` returns NotImplemented for sequences)."""
    r, t = case(rg), case(torch)
    assert type(r) is type(t)
    assert r == t


def test_index_errors(torch):
    assert_same_error(lambda m: [1, 2][m.tensor(1.0)], torch)
    assert_same_error(lambda m: [1, 2][m.tensor([0, 1])], torch)
    assert_same_error(lambda m: range(m.tensor(2.5)), torch)


# ------------------------------------------------------------------------------------------------
# repr / str


REPRS = {
    "leaf_rg": lambda m: m.tensor([2.0, 3.0], requires_grad=True),
    "scalar": lambda m: m.tensor(7.0),
    "scalar_grad_fn": lambda m: (m.tensor([2.0, 3.0], requires_grad=True) ** 2).sum() + 3,
    "mul_grad_fn": lambda m: m.tensor([2.0, 3.0], requires_grad=True) * 2,
    "sum_grad_fn": lambda m: m.tensor([2.0, 3.0], requires_grad=True).sum(),
    "float64": lambda m: m.tensor([1.0, 2.0], dtype=m.float64),
    "float64_rg": lambda m: m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True),
    "float64_grad_fn": lambda m: m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True) + 1,
    "float16": lambda m: m.tensor([1.5, 2.0], dtype=m.float16),
    "float16_rg": lambda m: m.tensor([1.5], dtype=m.float16, requires_grad=True),
    "int32": lambda m: m.tensor([1, 2], dtype=m.int32),
    "int16": lambda m: m.tensor([1, -2], dtype=m.int16),
    "int8": lambda m: m.tensor([1, -2], dtype=m.int8),
    "uint8": lambda m: m.tensor([1, 200], dtype=m.uint8),
    "int64": lambda m: m.tensor([1, 2]),
    "bool": lambda m: m.tensor([True, False]),
    "float32": lambda m: m.tensor([0.5, 1.0]),
    "zero_dim_int": lambda m: m.tensor(3),
    "zero_dim_int32": lambda m: m.tensor(3, dtype=m.int32),
    "zero_dim_float64": lambda m: m.tensor(3.0, dtype=m.float64),
    "zero_dim_bool": lambda m: m.tensor(True),
    "zero_dim_rg": lambda m: m.tensor(1.5, requires_grad=True),
    "empty": lambda m: m.tensor([]),
    "empty_int64": lambda m: m.tensor([], dtype=m.int64),
    "empty_bool": lambda m: m.tensor([], dtype=m.bool),
    "empty_float64": lambda m: m.tensor([], dtype=m.float64),
    "empty_2d": lambda m: m.zeros(0, 3),
    "empty_2d_b": lambda m: m.zeros(2, 0),
    "empty_rg": lambda m: m.zeros(0, requires_grad=True),
    "matrix": lambda m: m.tensor([[1.0, 2.0], [3.0, 4.0]]),
    "matrix_grad_fn": lambda m: m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True) * 1,
    "int_matrix": lambda m: m.tensor([[1, 20], [300, 4]], dtype=m.int32),
    "neg_frac": lambda m: m.tensor([-0.25, 1.125]),
    "detached": lambda m: (m.tensor([2.0], requires_grad=True) * 2).detach(),
    "clone": lambda m: m.tensor([2.0], requires_grad=True).clone(),
    "to_copy": lambda m: m.tensor([2.0], requires_grad=True).double(),
    "div_int": lambda m: m.tensor([1, 2]) / 2,
}


@pytest.mark.parametrize("case", list(REPRS))
def test_repr_matches_torch(torch, case):
    same_repr(REPRS[case], torch)


def test_repr_examples():
    assert repr(rg.tensor([2.0, 3.0], requires_grad=True)) == "tensor([2., 3.], requires_grad=True)"
    assert repr(rg.tensor(7.0)) == "tensor(7.)"
    x = rg.tensor(2.0, requires_grad=True)
    assert repr(x * x * 4) == "tensor(16., grad_fn=<MulBackward0>)"
    assert repr(rg.tensor([1, 2], dtype=rg.int32)) == "tensor([1, 2], dtype=retrograd.int32)"
    assert repr(rg.tensor([], dtype=rg.int64)) == "tensor([], dtype=retrograd.int64)"


@pytest.mark.parametrize("case", ["float32", "float64", "empty", "empty_float64", "zero_dim_rg",
                                  "float64_grad_fn", "div_int"])
def test_repr_default_float64(torch, default_dtype, case):
    torch.set_default_dtype(torch.float64)
    rg.set_default_dtype(rg.float64)
    same_repr(REPRS[case], torch)


def test_format(torch):
    assert f"{rg.tensor(1.23456):.2f}" == f"{torch.tensor(1.23456):.2f}"
    assert f"{rg.tensor([1.0, 2.0])}" == f"{torch.tensor([1.0, 2.0])}"


# ------------------------------------------------------------------------------------------------
# the legacy Tensor constructor, is_tensor, from_numpy


def test_legacy_constructor_data(torch):
    for make in (
        lambda m: m.Tensor([1, 2]),
        lambda m: m.Tensor([[1.5, 2], [3, 4]]),
        lambda m: m.Tensor((2, 3)),
        lambda m: m.Tensor([True, False]),
        lambda m: m.Tensor(np.array([1, 2], dtype=np.int64)),
    ):
        assert_same_tensor(make(rg), make(torch))
    assert rg.Tensor([1, 2]).dtype is rg.float32


def test_legacy_constructor_shape(torch):
    for make in (
        lambda m: m.Tensor(2, 3),
        lambda m: m.Tensor(4),
        lambda m: m.Tensor(0),
        lambda m: m.Tensor(),
        lambda m: m.Tensor(m.Size([2, 3])),
        lambda m: m.Tensor(2, 0, 3),
    ):
        r, t = make(rg), make(torch)
        assert tuple(r.shape) == tuple(t.shape), (r.shape, t.shape)
        assert name(r.dtype) == name(t.dtype)
        assert not r.requires_grad and r.is_leaf


def test_legacy_constructor_default_float64(torch, default_dtype):
    torch.set_default_dtype(torch.float64)
    rg.set_default_dtype(rg.float64)
    assert name(rg.Tensor([1, 2]).dtype) == name(torch.Tensor([1, 2]).dtype) == "float64"
    assert name(rg.Tensor(2).dtype) == name(torch.Tensor(2).dtype)


def test_legacy_constructor_error(torch):
    assert_same_error(lambda m: m.Tensor(2.5), torch, message=False)


def test_isinstance_and_is_tensor():
    assert isinstance(rg.tensor(1), rg.Tensor)
    assert isinstance(rg.zeros(2) * 2, rg.Tensor)
    assert rg.is_tensor(rg.tensor([1.0]))
    assert not rg.is_tensor([1.0])
    assert not rg.is_tensor(np.zeros(2))
    assert not rg.is_tensor(1.0)


def test_from_numpy_shares_memory(torch):
    for m in (rg, torch):
        a = np.arange(4.0)
        t = m.from_numpy(a)
        assert name(t.dtype) == "float64"
        a[0] = 100.0
        assert t[0].item() == 100.0
        t.add_(1)
        assert a.tolist() == [101.0, 2.0, 3.0, 4.0]
        assert np.shares_memory(t.numpy(), a)
    for dt in (np.float32, np.float16, np.int32, np.int8, np.uint8, np.bool_, np.int16):
        r = rg.from_numpy(np.zeros(2, dtype=dt))
        t = torch.from_numpy(np.zeros(2, dtype=dt))
        assert name(r.dtype) == name(t.dtype)
