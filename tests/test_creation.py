"""Tests for the tensor factories in ``retrograd._creation``.

Most cases run the same call through retrograd and PyTorch and compare dtypes, values and
errors; they are skipped when PyTorch is not installed. The rest check retrograd on its own.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd._creation import tensor

NAN = float("nan")
INF = float("inf")


def dtype_name(t) -> str:
    return str(t.dtype).split(".")[-1]


def values(t) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def raised(call, mod) -> BaseException:
    try:
        call(mod)
    except Exception as e:  # noqa: BLE001 - any exception is the subject under test
        return e
    raise AssertionError(f"{mod.__name__}: no exception")


def assert_same(call, torch, exact: bool = True) -> None:
    """``call(retrograd)`` and ``call(torch)`` agree on dtype, shape and values.

    With ``exact=False`` floats may differ by rounding: PyTorch's vectorised range kernels
    round differently depending on the CPU's vector width.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r, t = call(rg), call(torch)
    assert dtype_name(r) == dtype_name(t)
    assert tuple(r.shape) == tuple(t.shape)
    if exact or not r.dtype.is_floating_point:
        np.testing.assert_array_equal(values(r), values(t))
    else:
        tol = 1e-3 if r.dtype is rg.float16 else 1e-6
        np.testing.assert_allclose(values(r), values(t), rtol=tol, atol=tol)


def assert_same_error(call, torch) -> None:
    """``call`` raises the same exception type with the same message in both libraries."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected, got = raised(call, torch), raised(call, rg)
    assert type(got) is type(expected), (got, expected)
    assert str(got) == str(expected)


# -- tensor(): dtype inference -----------------------------------------------------------------
DATA = [
    lambda T: T.tensor(1.5),
    lambda T: T.tensor(3),
    lambda T: T.tensor(True),
    lambda T: T.tensor([1, 2]),
    lambda T: T.tensor([1.0, 2]),
    lambda T: T.tensor([True, 2]),
    lambda T: T.tensor([True, 2.5]),
    lambda T: T.tensor([True, False]),
    lambda T: T.tensor([[1, 2], [3, 4]]),
    lambda T: T.tensor([[1, 2.0], [3, 4]]),
    lambda T: T.tensor([]),
    lambda T: T.tensor([[], []]),
    lambda T: T.tensor(((1, 2), (3, 4))),
    lambda T: T.tensor(range(4)),
    lambda T: T.tensor([[[1], [2]], [[3], [4]]]),
    lambda T: T.tensor(np.float64(1.0)),
    lambda T: T.tensor(np.float32(1.25)),
    lambda T: T.tensor(np.int32(3)),
    lambda T: T.tensor(np.int8(-3)),
    lambda T: T.tensor(np.float16(2)),
    lambda T: T.tensor(np.bool_(True)),
    lambda T: T.tensor([np.float64(1), 2.0]),
    lambda T: T.tensor([np.int32(1), 2]),
    lambda T: T.tensor([np.float16(1), np.int64(2)]),
    lambda T: T.tensor([np.uint8(1), np.int8(1)]),
    lambda T: T.tensor([True, np.uint8(3)]),
    lambda T: T.tensor([np.int16(1), np.int32(2)]),
    lambda T: T.tensor(np.array([1.5, 2])),
    lambda T: T.tensor(np.array([1, 2], dtype=np.int32)),
    lambda T: T.tensor(np.array([[1, 2]], dtype=np.uint8)),
    lambda T: T.tensor(np.array([True, False])),
    lambda T: T.tensor(np.zeros((2, 0))),
    lambda T: T.tensor(np.array(3)),
    lambda T: T.tensor(np.array(3.0, np.float16)),
    lambda T: T.tensor(np.arange(6.0).reshape(2, 3)[:, 1]),
    lambda T: T.tensor([np.zeros(0, np.int32)]),
    lambda T: T.tensor([np.array([1, 2], np.int32), np.array([3, 4], np.int32)]),
    lambda T: T.tensor([np.zeros(2, np.int32), [1, 2]]),
    lambda T: T.tensor([T.tensor(1.0), T.tensor(2.0)]),
    lambda T: T.tensor([T.tensor(1), T.tensor(2.0)]),
    lambda T: T.tensor([T.tensor(1), T.tensor(2)]),
    lambda T: T.tensor([T.tensor(1, dtype=T.int32), 2]),
    lambda T: T.tensor([T.tensor(1.5, dtype=T.float64), 2]),
    lambda T: T.tensor([1, T.tensor(2.5)]),
    lambda T: T.tensor([T.tensor([1.0]), T.tensor([2.0])]),
    lambda T: T.tensor([[T.tensor(1.0)], [T.tensor(2.0)]]),
    lambda T: T.tensor([[1, 2], T.tensor([3, 4])]),
    lambda T: T.tensor([[1.0, 2.0], T.tensor([3, 4])]),
    lambda T: T.tensor(T.Size([2, 3])),
    lambda T: T.tensor(np.zeros((0, 3), np.int8)),
    lambda T: T.tensor([], dtype=T.int32),
    lambda T: T.tensor([T.tensor(1.0, requires_grad=True)]),
    lambda T: T.tensor(1e300),
    lambda T: T.tensor([2**63, 1.0]),
    lambda T: T.tensor(-(2**63)),
]

DATA_WITH_DTYPE = [
    lambda T: T.tensor([1.5, -2.7], dtype=T.int32),
    lambda T: T.tensor([1, 2], dtype=T.float16),
    lambda T: T.tensor([1, 2], dtype=T.float64),
    lambda T: T.tensor(0.1, dtype=T.float64),
    lambda T: T.tensor([0.5, 0.0, NAN], dtype=T.bool),
    lambda T: T.tensor([[1, 0], [3, 4]], dtype=T.bool),
    lambda T: T.tensor([-1], dtype=T.uint8),
    lambda T: T.tensor([-255], dtype=T.uint8),
    lambda T: T.tensor([255], dtype=T.uint8),
    lambda T: T.tensor(2**63, dtype=T.float32),
    lambda T: T.tensor([1e300], dtype=T.float16),
    lambda T: T.tensor([1e300], dtype=T.float64),
    lambda T: T.tensor(np.array([1.5, 2.5]), dtype=T.float32),
    lambda T: T.tensor(np.array([1.7, -1.7]), dtype=T.int64),
    lambda T: T.tensor(np.array([300]), dtype=T.uint8),
    lambda T: T.tensor(np.array([1, 2], np.int8), dtype=T.int8),
    lambda T: T.tensor(3, dtype=float),
    lambda T: T.tensor(3.7, dtype=int),
    lambda T: T.tensor(T.tensor([1, 2]), dtype=T.float32),
    lambda T: T.tensor([2**62, 3], dtype=T.int64),
    lambda T: T.tensor([-165, 1.5], dtype=T.uint8),
    lambda T: T.tensor([[1.7], [T.tensor(-9, dtype=T.int32)]], dtype=T.uint8),
    lambda T: T.tensor([2**62 + 1, 0.5], dtype=T.int64),
]


@pytest.mark.parametrize("call", DATA + DATA_WITH_DTYPE)
def test_tensor_dtype_and_values_match_torch(call, torch):
    assert_same(call, torch)


@pytest.mark.parametrize("data, expected", [
    (1.5, rg.float32), (3, rg.int64), (True, rg.bool), ([1, 2.5], rg.float32),
    ([True, 1], rg.int64), ([[True], [False]], rg.bool), ([], rg.float32),
    (np.array([1.0]), rg.float64), (np.float64(1.0), rg.float64), (np.int32(1), rg.int32),
    (np.array([1], np.int16), rg.int16), ([np.float64(2.0), 1], rg.float64),
])
def test_tensor_dtype_inference(data, expected):
    t = tensor(data)
    assert t.dtype is expected
    np.testing.assert_array_equal(t.numpy(), np.asarray(data, dtype=expected.np))


def test_tensor_values_and_shape():
    t = tensor([[1.5, 2], [3, -4]])
    assert t.shape == (2, 2)
    assert t.tolist() == [[1.5, 2.0], [3.0, -4.0]]
    assert tensor(7).shape == () and tensor(7).item() == 7
    assert tensor([[], []]).shape == (2, 0)
    assert tensor([[[1]], [[2]]]).shape == (2, 1, 1)


def test_default_dtype_applies_to_python_floats():
    rg.set_default_dtype(rg.float64)
    try:
        assert tensor([1.0, 2]).dtype is rg.float64
        assert tensor([]).dtype is rg.float64
        assert tensor([1, 2]).dtype is rg.int64
        assert tensor(np.float32(1)).dtype is rg.float32
        assert rg.full((2,), 1.5).dtype is rg.float64
        assert rg.arange(0.0, 1.0, 0.5).dtype is rg.float64
        assert rg.zeros(2).dtype is rg.float64
    finally:
        rg.set_default_dtype(rg.float32)
    assert tensor([1.0]).dtype is rg.float32


def test_tensor_float64_data_is_not_rounded_through_float32():
    assert tensor(0.1, dtype=rg.float64).item() == 0.1
    assert tensor([0.1], dtype=rg.float64).tolist() == [0.1]


def test_tensor_copies_its_data():
    a = np.array([1.0, 2.0])
    t = tensor(a)
    a[0] = 9.0
    assert t.tolist() == [1.0, 2.0]
    lst = [1, 2]
    t = tensor(lst)
    lst[0] = 5
    assert t.tolist() == [1, 2]
    assert t.numpy().flags.c_contiguous
    assert tensor(np.arange(6.0).reshape(2, 3).T).numpy().flags.c_contiguous


def test_tensor_from_tensor_copies_and_warns(torch):
    src = tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning) as rec:
        t = tensor(src)
    with pytest.warns(UserWarning) as rec_torch:
        torch.tensor(torch.tensor([1.0]))
    assert str(rec[0].message) == str(rec_torch[0].message).replace("torch.", "retrograd.")
    assert str(rec[0].message).startswith(
        "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone()"
    )
    assert t.tolist() == [1.0, 2.0]
    assert not t.requires_grad and t.is_leaf
    t.numpy()[0] = 5.0
    assert src.detach().tolist() == [1.0, 2.0]


def test_tensor_from_tensor_warns_without_torch():
    with pytest.warns(UserWarning, match="sourceTensor.detach"):
        t = tensor(tensor([1, 2]), dtype=rg.float64)
    assert t.dtype is rg.float64 and t.tolist() == [1.0, 2.0]


def test_tensor_requires_grad():
    t = tensor([1.0, 2.0], requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad_fn is None
    assert not tensor([1.0]).requires_grad
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype "
                                           "can require gradients$"):
        tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        tensor([True], requires_grad=True)


TENSOR_ERRORS = [
    lambda T: T.tensor([[1, 2], [3, 4, 5]]),
    lambda T: T.tensor([[1, 2], [3]]),
    lambda T: T.tensor([[[1], [2]], [[3], [4, 5]]]),
    lambda T: T.tensor([[1], []]),
    lambda T: T.tensor([[1, 2], 3]),
    lambda T: T.tensor([1.0, [2, 3]]),
    lambda T: T.tensor([1, [2, 3]], dtype=T.float32),
    lambda T: T.tensor(None),
    lambda T: T.tensor([1, None]),
    lambda T: T.tensor({1: 2}),
    lambda T: T.tensor({1, 2}),
    lambda T: T.tensor("a"),
    lambda T: T.tensor(["a"]),
    lambda T: T.tensor([1, "a"]),
    lambda T: T.tensor([[1, 2], T.tensor([3, 4, 5])]),
    lambda T: T.tensor(2**63),
    lambda T: T.tensor([2**64]),
    lambda T: T.tensor([300], dtype=T.uint8),
    lambda T: T.tensor([-300], dtype=T.uint8),
    lambda T: T.tensor([-1.0], dtype=T.uint8),
    lambda T: T.tensor([2**40], dtype=T.int32),
    lambda T: T.tensor([1e30], dtype=T.int64),
    lambda T: T.tensor([NAN], dtype=T.int64),
    lambda T: T.tensor([-1, -1.5], dtype=T.uint8),
    lambda T: T.tensor([T.tensor([1.0, 2.0]), T.tensor([2.0, 3.0])]),
    lambda T: T.tensor([np.array(1, np.int32), 2]),
    lambda T: T.tensor([1], requires_grad=True),
    lambda T: T.tensor(np.zeros(2, ">f8")),
]


@pytest.mark.parametrize("call", TENSOR_ERRORS)
def test_tensor_errors_match_torch(call, torch):
    assert_same_error(call, torch)


@pytest.mark.parametrize("call", [
    lambda T: T.tensor(np.array(["a"])),
    lambda T: T.tensor(np.array([1], dtype=object)),
    lambda T: T.as_tensor(np.array(["a"])),
    lambda T: T.from_numpy(np.array(["a"])),
    lambda T: T.from_numpy(np.array([1], dtype=object)),
])
def test_unsupported_numpy_dtype_errors_match_torch(call, torch):
    # retrograd lists fewer supported types than PyTorch; the rest of the message is the same
    expected, got = raised(call, torch), raised(call, rg)
    assert type(got) is type(expected) is TypeError
    head = "The only supported types are: "
    assert str(got).split(head)[0] == str(expected).split(head)[0]
    assert str(got).endswith(head + "float64, float32, float16, int64, int32, int16, int8, "
                             "uint64, uint32, uint16, uint8, and bool.")


def test_tensor_ragged_message():
    with pytest.raises(ValueError, match=r"^expected sequence of length 2 at dim 1 \(got 3\)$"):
        tensor([[1, 2], [3, 4, 5]])


@pytest.mark.parametrize("data, name", [
    (np.zeros(2, np.complex64), "numpy.complex64"),
    (np.zeros(2, np.longdouble), "numpy.longdouble"),
    (np.array(["a"]), "numpy.str_"),
    (np.array(["2020"], dtype="datetime64[D]"), "numpy.datetime64"),
])
def test_tensor_unsupported_numpy_dtype(data, name):
    msg = (
        f"can't convert np.ndarray of type {name}. The only supported types are: float64, "
        "float32, float16, int64, int32, int16, int8, uint64, uint32, uint16, uint8, and bool."
    )
    with pytest.raises(TypeError) as e:
        tensor(data)
    assert str(e.value) == msg
    with pytest.raises(TypeError, match="numpy.longdouble"):
        tensor(np.longdouble(3))
    with pytest.raises(TypeError, match="complex"):
        tensor(1 + 2j)


@pytest.mark.parametrize("dev", [None, "cpu", "cpu:0", rg.device("cpu")])
def test_device_cpu_is_accepted(dev):
    assert tensor([1.0], device=dev).device == "cpu"
    assert rg.zeros(2, device=dev).shape == (2,)
    assert rg.arange(3, device=dev).tolist() == [0, 1, 2]


@pytest.mark.parametrize("dev", ["cuda", "cuda:0", "meta", 0])
def test_device_other_than_cpu_is_refused(dev):
    for call in (lambda: tensor([1.0], device=dev), lambda: rg.zeros(2, device=dev),
                 lambda: rg.ones_like(rg.zeros(2), device=dev), lambda: rg.eye(2, device=dev)):
        with pytest.raises(RuntimeError, match="CPU only"):
            call()


def test_ignored_keywords_are_accepted():
    assert rg.empty(2, layout=None, pin_memory=False, memory_format=None).shape == (2,)
    assert rg.zeros_like(rg.ones(2), memory_format=None, layout=None).tolist() == [0.0, 0.0]
    assert tensor([1.0], pin_memory=False).tolist() == [1.0]


# -- as_tensor, from_numpy ---------------------------------------------------------------------
def test_as_tensor_returns_same_tensor_when_no_conversion():
    t = tensor([1.0, 2.0])
    assert rg.as_tensor(t) is t
    assert rg.as_tensor(t, dtype=rg.float32) is t
    assert rg.as_tensor(t, device="cpu") is t


def test_as_tensor_converts_dtype():
    t = tensor([1, 2])
    f = rg.as_tensor(t, dtype=rg.float64)
    assert f is not t and f.dtype is rg.float64 and f.tolist() == [1.0, 2.0]


def test_as_tensor_shares_numpy_memory():
    a = np.array([1.0, 2.0])
    t = rg.as_tensor(a)
    a[0] = -1.0
    assert t.tolist() == [-1.0, 2.0]
    assert t.dtype is rg.float64
    c = rg.as_tensor(a, dtype=rg.float32)
    a[1] = 7.0
    assert c.tolist() == [-1.0, 2.0] and c.dtype is rg.float32


def test_as_tensor_of_lists_infers_like_tensor(torch):
    for data in ([1, 2], [1.0, 2], [[True]], 3.5, [np.int32(1)]):
        assert_same(lambda T, d=data: T.as_tensor(d), torch)
    assert_same(lambda T: T.as_tensor([1, 2], dtype=T.float64), torch)


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = rg.from_numpy(a)
    assert t.dtype is rg.int32 and t.shape == (2, 3)
    a[0, 0] = 100
    assert t.tolist()[0][0] == 100
    t.numpy()[1, 2] = -5
    assert a[1, 2] == -5
    assert not t.requires_grad and t.is_leaf


def test_from_numpy_keeps_strides_and_0d():
    a = np.arange(6.0).reshape(2, 3)[:, 0]
    t = rg.from_numpy(a)
    assert t.tolist() == [0.0, 3.0]
    assert np.shares_memory(t.numpy(), a)
    assert rg.from_numpy(np.array(2.5)).shape == ()


def test_from_numpy_non_writeable_array_still_works():
    a = np.arange(3.0)
    a.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = rg.from_numpy(a)
    assert t.tolist() == [0.0, 1.0, 2.0]
    assert (t.numpy() == a).all()


FROM_NUMPY_ERRORS = [
    lambda T: T.from_numpy([1, 2]),
    lambda T: T.from_numpy(np.zeros(2, ">f8")),
]


@pytest.mark.parametrize("call", FROM_NUMPY_ERRORS)
def test_from_numpy_errors_match_torch(call, torch):
    assert_same_error(call, torch)


def test_from_numpy_unsupported_dtype_message():
    with pytest.raises(TypeError) as e:
        rg.from_numpy(np.zeros(2, np.longdouble))
    assert str(e.value) == (
        "can't convert np.ndarray of type numpy.longdouble. The only supported types are: "
        "float64, float32, float16, int64, int32, int16, int8, uint64, uint32, uint16, uint8, and "
        "bool."
    )


# -- zeros, ones, empty, full ------------------------------------------------------------------
SIZE_CALLS = [
    lambda T: T.zeros(2, 3),
    lambda T: T.zeros((2, 3)),
    lambda T: T.zeros([2, 3]),
    lambda T: T.zeros(T.Size([2, 3])),
    lambda T: T.zeros(()),
    lambda T: T.zeros([]),
    lambda T: T.zeros(0),
    lambda T: T.zeros(size=(2, 1)),
    lambda T: T.zeros(np.int64(2)),
    lambda T: T.zeros(T.tensor(2), 1),
    lambda T: T.zeros(2, dtype=T.int32),
    lambda T: T.zeros(2, dtype=T.bool),
    lambda T: T.ones(2, 3),
    lambda T: T.ones((1, 2), dtype=T.uint8),
    lambda T: T.ones(3, dtype=T.float64),
    lambda T: T.ones(2, dtype=T.bool),
    lambda T: T.full((2, 2), 1),
    lambda T: T.full((2,), True),
    lambda T: T.full((2,), 1.5),
    lambda T: T.full([2], np.float64(1.5)),
    lambda T: T.full((2,), np.int32(1)),
    lambda T: T.full((2,), T.tensor(1.5, dtype=T.float64)),
    lambda T: T.full((2,), 1.5, dtype=T.int64),
    lambda T: T.full((2,), -1, dtype=T.uint8),
    lambda T: T.full((2,), 2, dtype=T.bool),
    lambda T: T.full((2,), 1, dtype=T.float16),
    lambda T: T.full((2,), INF, dtype=T.float32),
    lambda T: T.full([], 1),
    lambda T: T.full((2, 0), 3.0),
]


@pytest.mark.parametrize("call", SIZE_CALLS)
def test_filled_factories_match_torch(call, torch):
    assert_same(call, torch)


def test_empty_shapes_and_dtypes(torch):
    for call in (lambda T: T.empty(2, 3), lambda T: T.empty((4,), dtype=T.int32),
                 lambda T: T.empty(size=[1, 2]), lambda T: T.empty_like(T.zeros(2, 1))):
        r, t = call(rg), call(torch)
        assert dtype_name(r) == dtype_name(t) and tuple(r.shape) == tuple(t.shape)


def test_zeros_ones_full_values():
    assert rg.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert rg.ones(2, dtype=rg.int64).tolist() == [1, 1]
    assert rg.full((2,), 7).tolist() == [7, 7]
    assert rg.full((2,), 7).dtype is rg.int64
    assert rg.full((3,), True).dtype is rg.bool
    assert rg.full((1,), 2.5).dtype is rg.float32
    assert rg.zeros(2, 3).dtype is rg.float32


FILL_ERRORS = [
    lambda T: T.zeros(-1),
    lambda T: T.zeros(2, -1),
    lambda T: T.ones(-1),
    lambda T: T.empty(2, -3),
    lambda T: T.full((-1,), 1),
    lambda T: T.zeros(),
    lambda T: T.zeros(2.0),
    lambda T: T.zeros((2.0, 3)),
    lambda T: T.zeros(None),
    lambda T: T.zeros(True),
    lambda T: T.zeros(T.tensor(2.0)),
    lambda T: T.full(2, 1),
    lambda T: T.full((2,), "a"),
    lambda T: T.full((2,), None),
    lambda T: T.full((2,), T.tensor([1.5])),
    lambda T: T.full((2,), 300, dtype=T.uint8),
    lambda T: T.full((2,), INF, dtype=T.int64),
    lambda T: T.full((2,), 2**63),
    lambda T: T.full((2,), 1e10, dtype=T.float16),
    lambda T: T.full((2,), 1e40, dtype=T.float32),
    lambda T: T.full((2,), 2**40, dtype=T.int32),
    lambda T: T.full((2,), 2**20, dtype=T.int16),
    lambda T: T.full((2,), 2**20, dtype=T.int8),
    lambda T: T.full_like(T.zeros(2, dtype=T.uint8), 300),
    lambda T: T.zeros(2, out=T.empty(2, dtype=T.int32), dtype=T.float32),
    lambda T: T.zeros(2, out=T.empty(2, requires_grad=True)),
]


@pytest.mark.parametrize("call", FILL_ERRORS)
def test_fill_errors_match_torch(call, torch):
    assert_same_error(call, torch)


def test_zeros_size_errors():
    with pytest.raises(RuntimeError, match="^zeros: Dimension size must be non-negative.$"):
        rg.zeros(-1)
    with pytest.raises(RuntimeError, match=r"negative dimension -3: \[2, -3\]"):
        rg.ones(2, -3)
    with pytest.raises(TypeError, match="must be tuple of ints, not float"):
        rg.zeros(2.5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'shape'"):
        rg.zeros(shape=(2,))


# -- *_like ------------------------------------------------------------------------------------
LIKE_CALLS = [
    lambda T: T.zeros_like(T.zeros(2, dtype=T.int32)),
    lambda T: T.zeros_like(T.ones(2, 3)),
    lambda T: T.ones_like(T.zeros(2, dtype=T.int32), dtype=T.float16),
    lambda T: T.ones_like(T.zeros((), dtype=T.bool)),
    lambda T: T.full_like(T.zeros(2, dtype=T.int32), 1.7),
    lambda T: T.full_like(T.zeros(2, dtype=T.int32), 1.7, dtype=T.float64),
    lambda T: T.full_like(T.zeros(2, 2), 3),
    lambda T: T.full_like(T.zeros(2, dtype=T.uint8), -1),
    lambda T: T.zeros_like(T.zeros(2, requires_grad=True)),
]


@pytest.mark.parametrize("call", LIKE_CALLS)
def test_like_factories_match_torch(call, torch):
    assert_same(call, torch)


LIKE_ERRORS = [
    lambda T: T.zeros_like(np.zeros(2)),
    lambda T: T.zeros_like([1, 2]),
    lambda T: T.ones_like(3),
    lambda T: T.empty_like([1]),
    lambda T: T.full_like((1,), 1),
]


@pytest.mark.parametrize("call", LIKE_ERRORS)
def test_like_errors_match_torch(call, torch):
    assert_same_error(call, torch)


def test_like_does_not_inherit_requires_grad():
    x = rg.ones(2, requires_grad=True)
    for f in (rg.zeros_like, rg.ones_like, rg.empty_like):
        assert not f(x).requires_grad
        assert f(x, requires_grad=True).requires_grad
    assert rg.zeros_like(rg.ones(2, 3, dtype=rg.int64)).dtype is rg.int64


# -- arange, linspace, logspace, eye -----------------------------------------------------------
ARANGE = [
    (5,), (1, 4), (1, 4, 0.5), (0, 1, 0.1), (1, 2.5, 0.5), (5.0,), (0, 10, 3), (10, 0, -3),
    (5, 5), (0.1, 0.5, 0.1), (-3, 3, 0.7), (0, -1, -0.25), (True,), (np.int32(3),),
    (np.float64(3),), (0, 2**60, 2**58), (-(2**60), 2**60, 2**59), (1, 1e4, 7.5),
]
ARANGE_DTYPE = [
    ((5,), "float64"), ((5.5,), "int64"), ((0.5, 3), "int64"), ((0, 3), "uint8"),
    ((-1, 3), "uint8"), ((1, 3), "float16"), ((1, 10, 2.5), "int32"), ((-5, -1, 0.5), "int32"),
    ((0, 10, 3), "int16"), ((0, 1, 0.1), "float64"), ((2, 9, 2), "int8"),
]


@pytest.mark.parametrize("args", ARANGE)
def test_arange_matches_torch(args, torch):
    assert_same(lambda T: T.arange(*args), torch, exact=False)


@pytest.mark.parametrize("args, dt", ARANGE_DTYPE)
def test_arange_with_dtype_matches_torch(args, dt, torch):
    assert_same(lambda T: T.arange(*args, dtype=getattr(T, dt)), torch, exact=False)


def test_arange_keywords_and_tensors(torch):
    assert_same(lambda T: T.arange(start=1, end=3), torch)
    assert_same(lambda T: T.arange(end=3), torch)
    assert_same(lambda T: T.arange(T.tensor(3)), torch)
    assert_same(lambda T: T.arange(T.tensor(3.0)), torch)
    assert_same(lambda T: T.arange(0, 2, out=T.empty(2, dtype=T.float64)), torch)


def test_range_arguments_may_be_0d_tensors(torch):
    assert_same(lambda T: T.linspace(T.tensor(0, dtype=T.int64), 5, 3), torch)
    assert_same(lambda T: T.linspace(T.tensor(0.5, dtype=T.float64), 5, 3), torch)
    assert_same(lambda T: T.logspace(T.tensor(0.0), T.tensor(2.0), 3), torch)
    for T in (torch, rg):
        with pytest.raises(TypeError):
            T.arange(0, T.tensor([3]))


def test_arange_values_without_torch():
    assert rg.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert rg.arange(5).dtype is rg.int64
    x = rg.arange(1, 2.5, 0.5)
    assert x.dtype is rg.float32 and x.tolist() == [1.0, 1.5, 2.0]
    assert len(rg.arange(0, 1, 0.1)) == 10
    assert len(rg.arange(0, 1, 0.3)) == math.ceil(1 / 0.3)
    assert rg.arange(10, 0, -3).tolist() == [10, 7, 4, 1]


ARANGE_ERRORS = [
    lambda T: T.arange(0, 10, 0),
    lambda T: T.arange(0, 10, -1),
    lambda T: T.arange(10, 0, 1),
    lambda T: T.arange(0, INF),
    lambda T: T.arange(0, NAN),
    lambda T: T.arange(0, 5, dtype=T.bool),
    lambda T: T.arange(0, 1, 0.3, dtype=T.int64),
    lambda T: T.arange(10**20),
    lambda T: T.arange(5, requires_grad=True),
]


@pytest.mark.parametrize("call", ARANGE_ERRORS)
def test_arange_errors_match_torch(call, torch):
    assert_same_error(call, torch)


def test_arange_error_messages():
    with pytest.raises(RuntimeError, match="^step must be nonzero$"):
        rg.arange(0, 3, 0)
    with pytest.raises(RuntimeError, match="^upper bound and lower bound inconsistent with step "
                                           "sign$"):
        rg.arange(0, 3, -1)


LINSPACE = [
    (0, 1, 5), (0, 1, 1), (0, 1, 0), (0, 10, 4), (3, -2, 6), (3, 10, 5), (-1.5, 2.25, 7),
    (0.1, 0.9, 9), (1e-3, 1e3, 11), (0, 1, 100), (5, 5, 3),
]
LINSPACE_DTYPE = [
    ((0, 10, 4), "int64"), ((-10, 10, 5), "int32"), ((0, 255, 5), "uint8"), ((-1, 3, 5), "uint8"),
    ((0, 1, 3), "float16"), ((0, 1, 2), "float64"), ((0.1, 0.7, 7), "float64"),
    ((0, 100, 7), "int16"), ((2.7, 9.2, 6), "int64"), ((-9, 5.0, 11), "int8"),
    ((-9, 5, 40), "int64"), ((-9, 5.0, 11), "uint8"), ((-4, -14.15, 1), "uint8"),
    ((8.0, -17.0, 0), "uint8"), ((6.4, -20.0, 4), "float16"), ((-4.1, 0.5, 10), "float16"),
    ((2.0, -1, 10), "float32"),
]


@pytest.mark.parametrize("args", LINSPACE)
def test_linspace_matches_torch(args, torch):
    assert_same(lambda T: T.linspace(*args), torch, exact=False)


@pytest.mark.parametrize("args, dt", LINSPACE_DTYPE)
def test_linspace_with_dtype_matches_torch(args, dt, torch):
    assert_same(lambda T: T.linspace(*args, dtype=getattr(T, dt)), torch, exact=False)


def test_linspace_endpoints_are_exact():
    x = rg.linspace(0.1, 0.7, 13)
    assert x.tolist()[0] == np.float32(0.1) and x.tolist()[-1] == np.float32(0.7)
    assert rg.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert rg.linspace(0, 10, 4, dtype=rg.int64).tolist() == [0, 3, 6, 10]
    assert rg.linspace(torch_like_scalar(0.0), torch_like_scalar(1.0), 3).tolist() == [0, 0.5, 1]


def torch_like_scalar(v: float):
    return tensor(v)


LOGSPACE = [
    ((0, 2, 3), {}), ((0, 2, 3), {"base": 2}), ((-10, 10, 5), {}), ((0, 2, 1), {}),
    ((0, 2, 0), {}), ((0, 1, 3), {"base": -2}), ((0, 1, 3), {"base": 0}),
    ((0, 2, 3), {"dtype": "int64"}), ((0, 2, 3, 2.0), {"dtype": "int64"}),
    ((0.5, 3.5, 7), {"base": 3.0}), ((0, 1, 4), {"dtype": "float64"}),
    ((1, 3, 3), {"base": 2.5, "dtype": "int32"}),
]


@pytest.mark.parametrize("args, kw", LOGSPACE)
def test_logspace_matches_torch(args, kw, torch):
    def call(T):
        k = dict(kw)
        if "dtype" in k:
            k["dtype"] = getattr(T, k["dtype"])
        return T.logspace(*args, **k)

    r, t = call(rg), call(torch)
    assert dtype_name(r) == dtype_name(t)
    np.testing.assert_allclose(values(r), values(t), rtol=1e-6, equal_nan=True)


def test_logspace_values():
    assert rg.logspace(0, 2, 3).tolist() == [1.0, 10.0, 100.0]
    assert rg.logspace(0, 3, 4, base=2, dtype=rg.int64).tolist() == [1, 2, 4, 8]


RANGE_ERRORS = [
    lambda T: T.linspace(0, 1, -1),
    lambda T: T.linspace(-18.0, 7.0, 4, dtype=T.uint8),
    lambda T: T.linspace(0, 1e10, 4, dtype=T.float16),
    lambda T: T.logspace(-1.07, 1.0, 9, dtype=T.uint8),
    lambda T: T.logspace(2.25, 2.5, 1, dtype=T.int8),
    lambda T: T.linspace(T.tensor([0.0]), 1, 3),
    lambda T: T.linspace(0, T.tensor([[1.0]]), 3),
    lambda T: T.logspace(T.tensor([0.0]), 1, 3),
    lambda T: T.linspace(0, 1, 3, dtype=T.bool),
    lambda T: T.eye(-1),
    lambda T: T.eye(2, -1),
    lambda T: T.eye(2.0),
]


@pytest.mark.parametrize("call", RANGE_ERRORS)
def test_range_errors_match_torch(call, torch):
    assert_same_error(call, torch)


@pytest.mark.parametrize("call", [
    lambda T: T.eye(3), lambda T: T.eye(2, 3), lambda T: T.eye(3, 2), lambda T: T.eye(0),
    lambda T: T.eye(2, dtype=T.int64), lambda T: T.eye(2, dtype=T.bool),
    lambda T: T.eye(n=2, m=1), lambda T: T.eye(3, out=T.empty(1)),
])
def test_eye_matches_torch(call, torch):
    assert_same(call, torch)


def test_float_steps_are_refused(torch):
    # PyTorch lists every overload in its message; the type is what matters
    for T in (torch, rg):
        with pytest.raises(TypeError):
            T.linspace(0, 1, 3.0)
        with pytest.raises(TypeError):
            T.logspace(0, 1, 3.0)
    with pytest.raises(TypeError, match="'steps' .* must be int, not float"):
        rg.linspace(0, 1, 3.0)


def test_eye_values():
    assert rg.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert rg.eye(1, 3, dtype=rg.int32).tolist() == [[1, 0, 0]]


# -- requires_grad and out= for every factory --------------------------------------------------
FLOAT_FACTORIES = [
    lambda **k: tensor([1.0], **k), lambda **k: rg.zeros(2, **k), lambda **k: rg.ones(2, **k),
    lambda **k: rg.empty(2, **k), lambda **k: rg.full((2,), 1.0, **k),
    lambda **k: rg.zeros_like(rg.ones(2), **k), lambda **k: rg.ones_like(rg.ones(2), **k),
    lambda **k: rg.empty_like(rg.ones(2), **k), lambda **k: rg.full_like(rg.ones(2), 3, **k),
    lambda **k: rg.arange(3.0, **k), lambda **k: rg.linspace(0, 1, 3, **k),
    lambda **k: rg.logspace(0, 1, 3, **k), lambda **k: rg.eye(2, **k),
]


@pytest.mark.parametrize("make", FLOAT_FACTORIES)
def test_every_factory_accepts_requires_grad(make):
    t = make(requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad_fn is None
    assert not make().requires_grad
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        make(requires_grad=True, dtype=rg.int64)


def test_out_writes_in_place():
    out = rg.empty(2, dtype=rg.int32)
    version = out._version
    r = rg.zeros(2, out=out)
    assert r is out and out.tolist() == [0, 0] and out.dtype is rg.int32
    assert out._version == version + 1
    rg.arange(3, out=out)
    assert out.tolist() == [0, 1, 2]
    x = rg.empty(3)
    rg.full((3,), 2.0, out=x)
    assert x.tolist() == [2.0, 2.0, 2.0]


# -- size parsing: PyTorch reads the first element strictly and the rest leniently -------------
SIZE_PARSE_CALLS = [
    lambda T: T.zeros(2, True),
    lambda T: T.zeros((2, True)),
    lambda T: T.ones(2, T.tensor(1)),
    lambda T: T.ones(2, np.int32(3)),
]


@pytest.mark.parametrize("call", SIZE_PARSE_CALLS)
def test_size_parsing_matches_torch(call, torch):
    assert_same(call, torch)


SIZE_PARSE_ERRORS = [
    lambda T: T.zeros(True, 2),
    lambda T: T.zeros(2, None),
    lambda T: T.zeros(2, "a"),
    lambda T: T.zeros(2, np.float64(2)),
    lambda T: T.zeros(2, T.tensor(2.0)),
    lambda T: T.zeros(2, 3.0, 4.0),
    lambda T: T.zeros((True, 2)),
    lambda T: T.zeros((2, 3, None)),
    lambda T: T.zeros([2.0]),
    lambda T: T.zeros(2.0, 3),
    lambda T: T.zeros(None, 3),
    lambda T: T.zeros(size=2),
    lambda T: T.zeros(size=(2, 3.0)),
    lambda T: T.zeros(size=(2.0, 3)),
    lambda T: T.zeros(2, 3, size=(2,)),
    lambda T: T.empty(2, 3.0),
    lambda T: T.full((2, 3.0), 1),
]


@pytest.mark.parametrize("call", SIZE_PARSE_ERRORS)
def test_size_parsing_errors_match_torch(call, torch):
    assert_same_error(call, torch)


# -- tril_indices, triu_indices ----------------------------------------------------------------
TRI_CALLS = [
    lambda T: T.tril_indices(3, 3),
    lambda T: T.tril_indices(3, 4, 1),
    lambda T: T.triu_indices(4, 3, -1),
    lambda T: T.tril_indices(5, 7, -2),
    lambda T: T.triu_indices(7, 5, 2),
    lambda T: T.triu_indices(1, 1),
    lambda T: T.tril_indices(0, 3),
    lambda T: T.tril_indices(3, 0),
    lambda T: T.triu_indices(3, 3, 5),
    lambda T: T.tril_indices(3, 3, -5),
    lambda T: T.triu_indices(3, 3, -5),
    lambda T: T.tril_indices(3, 3, 5),
    lambda T: T.tril_indices(3, 3, 2**62),
    lambda T: T.triu_indices(5, 2, -(2**62)),
    lambda T: T.triu_indices(3, 3, dtype=T.int32),
    lambda T: T.tril_indices(T.tensor(3), 3),
    lambda T: T.tril_indices(row=2, col=3, offset=1),
    lambda T: T.tril_indices(2, 3, device="cpu"),
]


@pytest.mark.parametrize("call", TRI_CALLS)
def test_tri_indices_match_torch(call, torch):
    assert_same(call, torch)


@pytest.mark.parametrize("lower", [True, False])
def test_tri_indices_agree_with_numpy(lower):
    for n, m in [(4, 6), (6, 4), (1, 5), (5, 5)]:
        for k in range(-7, 8):
            if lower:
                got, want = rg.tril_indices(n, m, k), np.tril_indices(n, k, m)
            else:
                got, want = rg.triu_indices(n, m, k), np.triu_indices(n, k, m)
            assert got.tolist() == [want[0].tolist(), want[1].tolist()]
            assert got.dtype is rg.int64


TRI_ERRORS = [
    lambda T: T.tril_indices(-1, 3),
    lambda T: T.tril_indices(3, -1),
    lambda T: T.triu_indices(-2, 3),
    lambda T: T.tril_indices(3, 3, dtype=T.float32),
    lambda T: T.tril_indices(3, 3, dtype=T.bool),
    lambda T: T.tril_indices(3, 3, dtype=T.uint8),
    lambda T: T.tril_indices(3, 3, dtype=T.int16),
    lambda T: T.triu_indices(3, 3, dtype=T.float64),
    lambda T: T.tril_indices(3.0, 3),
    lambda T: T.tril_indices(3, 3, 1.5),
    lambda T: T.tril_indices(True, 3),
    lambda T: T.tril_indices(3),
    lambda T: T.triu_indices(3),
    lambda T: T.tril_indices(3, 3, requires_grad=True),
    lambda T: T.tril_indices(3, 3, out=None),
]


@pytest.mark.parametrize("call", TRI_ERRORS)
def test_tri_indices_errors_match_torch(call, torch):
    assert_same_error(call, torch)


# -- meshgrid, cartesian_prod ------------------------------------------------------------------
def _grid_outputs(call):
    def run(T):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = call(T)
        return T.stack([o.reshape(-1) for o in out]) if isinstance(out, tuple) else out
    return run


GRID_CALLS = [
    lambda T: T.meshgrid(T.tensor([1.0, 2, 3]), T.tensor([4.0, 5]), indexing="ij"),
    lambda T: T.meshgrid(T.tensor([1.0, 2, 3]), T.tensor([4.0, 5]), indexing="xy"),
    lambda T: T.meshgrid([T.tensor([1.0, 2, 3]), T.tensor([4.0, 5])], indexing="xy"),
    lambda T: T.meshgrid((T.tensor([1, 2, 3]), T.tensor([4, 5])), indexing="ij"),
    lambda T: T.meshgrid(T.tensor([1, 2, 3]), T.tensor([4, 5])),
    lambda T: T.meshgrid(T.tensor(2.0), T.tensor([4.0, 5]), indexing="ij"),
    lambda T: T.meshgrid(T.tensor([1, 2]), indexing="xy"),
    lambda T: T.meshgrid(T.tensor(7), indexing="xy"),
    lambda T: T.meshgrid(T.arange(2), T.arange(3), T.arange(4), indexing="xy"),
    lambda T: T.meshgrid(T.arange(2), T.arange(3), T.arange(4), indexing="ij"),
    lambda T: T.meshgrid(T.zeros(0), T.zeros(3), indexing="xy"),
    lambda T: T.meshgrid(T.tensor([True, False]), T.tensor([True]), indexing="ij"),
    lambda T: T.cartesian_prod(T.tensor([1.0, 2, 3]), T.tensor([4.0, 5])),
    lambda T: T.cartesian_prod(T.tensor([1.0, 2, 3])),
    lambda T: T.cartesian_prod(T.zeros(2), T.zeros(0)),
    lambda T: T.cartesian_prod(T.arange(2), T.arange(3), T.arange(2)),
]


@pytest.mark.parametrize("call", GRID_CALLS)
def test_grids_match_torch(call, torch):
    assert_same(_grid_outputs(call), torch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r, t = call(rg), call(torch)
    assert isinstance(r, tuple) == isinstance(t, tuple) and len(r) == len(t)


GRID_ERRORS = [
    lambda T: T.meshgrid(),
    lambda T: T.meshgrid(indexing="ij"),
    lambda T: T.meshgrid([], indexing="ij"),
    lambda T: T.meshgrid(T.zeros(2), T.tensor([1, 2]), indexing="ij"),
    lambda T: T.meshgrid(T.zeros(2), T.zeros(2), indexing="foo"),
    lambda T: T.meshgrid([T.zeros(2)], [T.zeros(2)]),
    lambda T: T.meshgrid(T.zeros(2), [1, 2], indexing="ij"),
    lambda T: T.meshgrid(1, indexing="ij"),
    lambda T: T.meshgrid(T.zeros(2), T.zeros(2), c=1),
    lambda T: T.cartesian_prod(),
    lambda T: T.cartesian_prod(T.tensor(1.0)),
    lambda T: T.cartesian_prod(T.zeros(2), T.tensor(1.0)),
    lambda T: T.cartesian_prod(T.zeros(2, 2)),
    lambda T: T.cartesian_prod(T.zeros(2), T.tensor([1, 2])),
    lambda T: T.cartesian_prod([T.zeros(2)]),
]


@pytest.mark.parametrize("call", GRID_ERRORS)
def test_grid_errors_match_torch(call, torch):
    assert_same_error(call, torch)


def test_meshgrid_refuses_2d_tensors(torch):
    for T in (torch, rg):
        with pytest.raises(RuntimeError, match="^torch.meshgrid: Expected 0D or 1D tensor in the "
                                               "tensor list but got: "):
            T.meshgrid(T.zeros(2), T.zeros(2, 2), indexing="ij")


def test_meshgrid_warns_without_indexing():
    a = rg.tensor([1.0, 2.0])
    with pytest.warns(UserWarning, match="^torch.meshgrid: in an upcoming release, it will be "
                                         "required to pass the indexing argument."):
        rg.meshgrid(a, a)
    with pytest.warns(UserWarning, match="indexing argument"):
        rg.meshgrid(a, a, indexing=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rg.meshgrid(a, a, indexing="ij")
        rg.meshgrid(a, a, indexing="xy")


def _grid_graph(T):
    out = []
    a = T.tensor([1.0, 2, 3], requires_grad=True, dtype=T.float64)
    b = T.tensor([4.0, 5], requires_grad=True, dtype=T.float64)
    s = T.tensor(2.0, requires_grad=True, dtype=T.float64)
    for indexing in ("ij", "xy"):
        x, y, z = T.meshgrid(a, b, s, indexing=indexing)
        out.append((x.grad_fn.name(), x.grad_fn.next_functions[0][0].name(), x._base is a,
                    z._base is s, tuple(x.shape)))
        g = T.autograd.grad((x * y * y * z).sum(), (a, b, s), create_graph=True)
        out.append([t.tolist() for t in g])
        out.append([t.tolist() for t in T.autograd.grad(g[1].sum(), (a, b, s))])
    c = T.cartesian_prod(a, b, a)
    fn = c.grad_fn
    out.append((fn.name(), fn.next_functions[0][0].name(),
                fn.next_functions[0][0].next_functions[0][0].name()))
    out.append([t.tolist() for t in T.autograd.grad((c ** 2).sum(), (a, b))])
    out.append(T.cartesian_prod(a) is a)
    x, _ = T.meshgrid(a.detach(), b, indexing="ij")
    out.append(x.grad_fn)
    return out


def test_grids_are_differentiable_views_like_torch(torch):
    assert _grid_graph(rg) == _grid_graph(torch)


def test_meshgrid_outputs_share_memory_with_inputs():
    a = rg.tensor([1.0, 2.0, 3.0])
    x, _ = rg.meshgrid(a, rg.tensor([0.0, 0.0]), indexing="ij")
    a[0] = 9.0
    assert x[0].tolist() == [9.0, 9.0]


# -- Tensor.new_* ------------------------------------------------------------------------------
NEW_CALLS = [
    lambda T: T.tensor([1, 2, 3], dtype=T.int32).new_zeros(2, 3),
    lambda T: T.tensor([1], dtype=T.int32).new_zeros((2, 3)),
    lambda T: T.tensor([1], dtype=T.int32).new_zeros([2]),
    lambda T: T.tensor([1], dtype=T.int32).new_zeros(size=(2,)),
    lambda T: T.tensor([1], dtype=T.int32).new_zeros(2, dtype=T.float64),
    lambda T: T.tensor([1], dtype=T.int32).new_zeros(()),
    lambda T: T.tensor([1], dtype=T.int32).new_zeros(T.Size([2, 1])),
    lambda T: T.zeros(1).new_zeros(T.tensor(2)),
    lambda T: T.zeros(1).new_zeros(np.int64(2)),
    lambda T: T.zeros(1).new_zeros(2, True),
    lambda T: T.tensor([1], dtype=T.int32).new_ones(2),
    lambda T: T.tensor([1], dtype=T.int32).new_ones(0),
    lambda T: T.zeros(1, dtype=T.float64).new_ones(2, 2),
    lambda T: T.zeros(1, dtype=T.bool).new_ones(2),
    lambda T: T.tensor([1], dtype=T.int32).new_full((2,), 1.7),
    lambda T: T.tensor([1], dtype=T.int32).new_full((2,), 3, dtype=T.float32),
    lambda T: T.zeros(1).new_full((2,), 3),
    lambda T: T.zeros(1, dtype=T.uint8).new_full([2], -1),
    lambda T: T.zeros(1, dtype=T.int32).new_full([2], T.tensor(3.5)),
    lambda T: T.zeros(1).new_full(size=(2,), fill_value=3),
    lambda T: T.zeros(1, dtype=T.int32).new_tensor([1.5, 2.5]),
    lambda T: T.zeros(1).new_tensor([1, 2]),
    lambda T: T.zeros(1, dtype=T.float64).new_tensor(3),
    lambda T: T.zeros(1).new_tensor([1, 2], dtype=T.int64),
    lambda T: T.zeros(1, dtype=T.int32).new_tensor(True),
    lambda T: T.zeros(1, dtype=T.int32).new_tensor(np.array([1.5])),
    lambda T: T.zeros(1, dtype=T.int32).new_tensor(T.tensor([1.5, -2.5], requires_grad=True)),
    lambda T: T.zeros(1).new_tensor([[1, 2], [3, 4]]),
]


@pytest.mark.parametrize("call", NEW_CALLS)
def test_new_methods_match_torch(call, torch):
    assert_same(call, torch)


def test_new_empty_shape_and_dtype(torch):
    for call in (lambda T: T.zeros(1, dtype=T.int32).new_empty(2, 3),
                 lambda T: T.zeros(1, dtype=T.int32).new_empty((2,)),
                 lambda T: T.zeros(1).new_empty((2,), dtype=T.float16),
                 lambda T: T.zeros(1).new_empty(size=[0, 2])):
        r, t = call(rg), call(torch)
        assert dtype_name(r) == dtype_name(t) and tuple(r.shape) == tuple(t.shape)


NEW_ERRORS = [
    lambda T: T.zeros(1).new_zeros(-1),
    lambda T: T.zeros(1).new_empty(-2),
    lambda T: T.zeros(1).new_zeros(2.0),
    lambda T: T.zeros(1).new_ones((2, 3.0)),
    lambda T: T.zeros(1).new_zeros(True),
    lambda T: T.zeros(1).new_zeros(),
    lambda T: T.zeros(1).new_ones(),
    lambda T: T.zeros(1).new_zeros(2, 3, size=(2,)),
    lambda T: T.zeros(1).new_zeros(2, foo=1),
    lambda T: T.zeros(1).new_zeros(2, out=None),
    lambda T: T.zeros(1).new_ones(size=2),
    lambda T: T.zeros(1).new_full(2, 3),
    lambda T: T.zeros(1).new_full((2,)),
    lambda T: T.zeros(1).new_full((2,), "a"),
    lambda T: T.zeros(1, dtype=T.int32).new_full((2,), 2**40),
    lambda T: T.zeros(1, dtype=T.int32).new_full((2,), 1.5e40),
    lambda T: T.zeros(1, dtype=T.int32).new_zeros(2, requires_grad=True),
    lambda T: T.zeros(1, dtype=T.int32).new_tensor([1, 2], requires_grad=True),
    lambda T: T.zeros(1).new_tensor(),
    lambda T: T.zeros(1).new_tensor("a"),
]


@pytest.mark.parametrize("call", NEW_ERRORS)
def test_new_methods_errors_match_torch(call, torch):
    assert_same_error(call, torch)


def test_new_methods_make_fresh_leaves():
    x = rg.ones(2, requires_grad=True) * 2
    for t in (x.new_zeros(2), x.new_ones(2), x.new_full((2,), 1.0), x.new_empty(2),
              x.new_tensor([1.0, 2.0])):
        assert t.is_leaf and not t.requires_grad and t.dtype is rg.float32
    t = x.new_zeros(2, requires_grad=True)
    assert t.is_leaf and t.requires_grad
    src = rg.tensor([1.0, 2.0])
    with pytest.warns(UserWarning):
        c = src.new_tensor(src)
    c[0] = 5.0
    assert src.tolist() == [1.0, 2.0]


def test_new_tensor_from_a_tensor_warns_like_torch(torch):
    with pytest.warns(UserWarning) as rec:
        rg.zeros(1).new_tensor(rg.tensor([1.0]))
    with pytest.warns(UserWarning) as rec_torch:
        torch.zeros(1).new_tensor(torch.tensor([1.0]))
    assert str(rec[0].message) == str(rec_torch[0].message)
    assert rec[0].filename == __file__


def test_tensor_methods_table():
    from retrograd import _creation

    for name in ("new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"):
        assert getattr(rg.Tensor, name) is _creation.TENSOR_METHODS[name]
