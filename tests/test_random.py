"""Tests for ``retrograd._random``: generators, seeding, sampling and the in-place fillers.

The values are PyTorch's: the torch comparisons of every sampler, bit for bit, are in
``test_random_torch.py``. Here: reproducibility, range and distribution; shapes, dtypes and
errors compared with PyTorch when it is installed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd import _random as rr

N = 100_000
NAN = float("nan")
INF = float("inf")


@pytest.fixture(autouse=True)
def _seeded():
    # every test starts from the same default-generator state, so statistics are deterministic
    rg.manual_seed(1234)


def arr(t) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def fill(T, name):
    """The in-place filler ``name`` as a function of the tensor, in either library."""
    if T is rg:
        return getattr(rr, name)
    return lambda t, *a, **k: getattr(t, name)(*a, **k)


def raised(call, mod) -> BaseException:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(mod)
    except Exception as e:  # noqa: BLE001 - any exception is the subject under test
        return e
    raise AssertionError(f"{mod.__name__}: no exception")


_SITE = "\n  The in-place op was called at:"  # retrograd names the user's line (provenance)


def assert_same_error(call, torch, prefix: bool = False) -> None:
    expected, got = raised(call, torch), raised(call, rg)
    assert type(got) is type(expected), (got, expected)
    message = str(got).split(_SITE)[0]
    if prefix:
        assert str(expected).startswith(message), (message, str(expected))
    else:
        assert message == str(expected)


# -- reproducibility ---------------------------------------------------------------------------
SAMPLERS = {
    "rand": lambda **g: rg.rand(3, 4, **g),
    "rand_f64": lambda **g: rg.rand(5, dtype=rg.float64, **g),
    "randn": lambda **g: rg.randn(6, **g),
    "randint": lambda **g: rg.randint(0, 1000, (7,), **g),
    "rand_like": lambda **g: rg.rand_like(rg.zeros(3), **g),
    "randn_like": lambda **g: rg.randn_like(rg.zeros(3), **g),
    "randint_like": lambda **g: rg.randint_like(rg.zeros(3), 50, **g),
    "randperm": lambda **g: rg.randperm(20, **g),
    "normal": lambda **g: rg.normal(0.0, 1.0, (5,), **g),
    "normal_tensor": lambda **g: rg.normal(rg.zeros(5), rg.ones(5), **g),
    "bernoulli": lambda **g: rg.bernoulli(rg.full((20,), 0.5), **g),
    "multinomial": lambda **g: rg.multinomial(rg.ones(10), 5, **g),
    "multinomial_repl": lambda **g: rg.multinomial(rg.ones(10), 20, True, **g),
    "poisson": lambda **g: rg.poisson(rg.full((8,), 3.0), **g),
    "uniform_": lambda **g: rr.uniform_(rg.empty(5), **g),
    "normal_": lambda **g: rr.normal_(rg.empty(5), **g),
    "bernoulli_": lambda **g: rr.bernoulli_(rg.empty(20), **g),
    "exponential_": lambda **g: rr.exponential_(rg.empty(5), **g),
    "random_": lambda **g: rr.random_(rg.empty(5, dtype=rg.int32), **g),
    "geometric_": lambda **g: rr.geometric_(rg.empty(5), 0.3, **g),
    "log_normal_": lambda **g: rr.log_normal_(rg.empty(5), **g),
    "cauchy_": lambda **g: rr.cauchy_(rg.empty(5), **g),
    "normal_mean_tensor": lambda **g: rg.normal(rg.zeros(2, 3), 2.0, **g),
    "normal_std_tensor": lambda **g: rg.normal(1.0, rg.ones(4), **g),
    "bernoulli_p_float": lambda **g: rg.bernoulli(rg.zeros(20), 0.5, **g),
    "bernoulli__p_tensor": lambda **g: rr.bernoulli_(rg.empty(20), rg.full((20,), 0.5), **g),
    "random_to": lambda **g: rr.random_(rg.empty(5), 100, **g),
    # on a tensor with a history the fill is recorded, and draws the same numbers
    "uniform_nonleaf": lambda **g: rr.uniform_(rg.ones(5, requires_grad=True) * 2, **g),
    "normal_nonleaf": lambda **g: rr.normal_(rg.ones(5, requires_grad=True) * 2, **g),
}


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_manual_seed_reproduces(name):
    f = SAMPLERS[name]
    rg.manual_seed(42)
    a = arr(f())
    rg.manual_seed(42)
    b = arr(f())
    np.testing.assert_array_equal(a, b)
    rg.manual_seed(43)
    c, d = arr(f()), arr(f())
    assert not (np.array_equal(a, c) and np.array_equal(a, d))


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_generator_objects_reproduce_and_are_independent(name):
    f = SAMPLERS[name]
    g1 = rg.Generator().manual_seed(7)
    g2 = rg.Generator().manual_seed(7)
    a = arr(f(generator=g1))
    rg.rand(100)  # drawing from the default generator must not disturb g2
    b = arr(f(generator=g2))
    np.testing.assert_array_equal(a, b)
    rg.manual_seed(7)
    state = rg.get_rng_state()
    f(generator=rg.Generator().manual_seed(8))
    assert arr(rg.get_rng_state()).tolist() == arr(state).tolist()


def test_sequences_continue_rather_than_repeat():
    g = rg.Generator().manual_seed(0)
    a, b = arr(rg.rand(10, generator=g)), arr(rg.rand(10, generator=g))
    assert not np.array_equal(a, b)


def test_manual_seed_returns_default_generator():
    g = rg.manual_seed(5)
    assert g is rg.default_generator
    assert isinstance(g, rg.Generator)
    assert rg.initial_seed() == 5
    assert rg.Generator().manual_seed(np.int64(9)).initial_seed() == 9


def test_generator_seed_and_initial_seed(torch):
    g = rg.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed() == 67280421310721
    s = g.seed()
    assert isinstance(s, int) and 0 <= s < 2**64 and g.initial_seed() == s
    s2 = rg.seed()
    assert rg.initial_seed() == s2
    assert g.device == "cpu"
    assert rg.Generator(device="cpu").device == "cpu"


@pytest.mark.parametrize("seed", [0, 1, -1, 2**63, 2**64 - 1, -(2**63)])
def test_seed_values_match_torch(seed, torch):
    assert rg.Generator().manual_seed(seed).initial_seed() == \
        torch.Generator().manual_seed(seed).initial_seed()


@pytest.mark.parametrize("call", [
    lambda T: T.Generator().manual_seed(2**64),
    lambda T: T.Generator().manual_seed(-(2**63) - 1),
    lambda T: T.Generator().manual_seed(1.5),
    lambda T: T.Generator().manual_seed("3"),
    lambda T: T.Generator().manual_seed(True),
    lambda T: T.manual_seed(2**64),
])
def test_seed_errors_match_torch(call, torch):
    assert_same_error(call, torch)


def test_generator_refuses_other_devices():
    with pytest.raises(RuntimeError, match="CPU only"):
        rg.Generator(device="cuda")


def test_negative_seed_wraps():
    a = arr(rg.rand(4, generator=rg.Generator().manual_seed(-1)))
    b = arr(rg.rand(4, generator=rg.Generator().manual_seed(2**64 - 1)))
    np.testing.assert_array_equal(a, b)


# -- state -------------------------------------------------------------------------------------
def test_get_set_state_round_trip():
    g = rg.Generator().manual_seed(11)
    rg.rand(3, generator=g)
    state = g.get_state()
    assert state.dtype is rg.uint8 and state.dim() == 1
    a = arr(rg.randn(5, generator=g))
    assert g.set_state(state) is g
    b = arr(rg.randn(5, generator=g))
    np.testing.assert_array_equal(a, b)
    other = rg.Generator().set_state(state)
    assert other.initial_seed() == 11
    np.testing.assert_array_equal(arr(rg.randn(5, generator=other)), a)


def test_state_is_a_copy():
    g = rg.Generator().manual_seed(3)
    state = g.get_state()
    before = arr(state).copy()
    rg.rand(10, generator=g)
    np.testing.assert_array_equal(arr(state), before)


def test_state_is_torchs_layout():
    st = arr(rg.Generator().manual_seed(4).get_state())
    assert st.shape == (5056,) and st.dtype == np.uint8
    assert st[:8].view(np.int64)[0] == 4


def test_default_rng_state_round_trip():
    state = rg.get_rng_state()
    a = arr(rg.rand(4))
    rg.set_rng_state(state)
    np.testing.assert_array_equal(arr(rg.rand(4)), a)


def test_set_state_errors():
    g = rg.Generator()
    with pytest.raises(TypeError, match="^expected a retrograd.ByteTensor, but got list$"):
        g.set_state([1, 2])
    with pytest.raises(TypeError, match="^RNG state must be a retrograd.ByteTensor$"):
        g.set_state(rg.zeros(5))
    with pytest.raises(RuntimeError, match="^Expected a CPUGeneratorImplState of size 5056 but "
                       "found the input RNG state size to be 3$"):
        g.set_state(rg.zeros(3, dtype=rg.uint8))
    with pytest.raises(RuntimeError, match="^Invalid mt19937 state$"):
        g.set_state(rg.zeros(5056, dtype=rg.uint8))
    with pytest.raises(TypeError, match="retrograd.Generator"):
        rg.rand(2, generator=3)


# -- rand, randn -------------------------------------------------------------------------------
def test_rand_distribution():
    x = arr(rg.rand(N))
    assert x.dtype == np.float32 and x.shape == (N,)
    assert x.min() >= 0.0 and x.max() < 1.0
    assert abs(x.mean() - 0.5) < 0.01
    assert abs(x.var() - 1 / 12) < 0.005


@pytest.mark.parametrize("dt", [rg.float16, rg.float32, rg.float64])
def test_rand_never_reaches_one(dt):
    x = arr(rg.rand(400_000, dtype=dt))
    assert x.dtype == dt.np
    assert x.min() >= 0 and x.max() < 1
    if dt is rg.float32:
        # on the grid of values the dtype holds exactly between 0 and 1
        bits = np.finfo(dt.np).nmant + 1
        scaled = x.astype(np.float64) * 2**bits
        np.testing.assert_array_equal(scaled, np.floor(scaled))


def test_randn_distribution():
    x = arr(rg.randn(N, dtype=rg.float64))
    assert x.dtype == np.float64
    assert abs(x.mean()) < 0.02 and abs(x.std() - 1) < 0.02
    assert abs(np.mean(np.abs(x) < 1) - 0.6827) < 0.01


SHAPE_DTYPE_CALLS = [
    lambda T: T.rand(2, 3),
    lambda T: T.rand((2, 3)),
    lambda T: T.rand([4]),
    lambda T: T.rand(()),
    lambda T: T.rand(size=(3,)),
    lambda T: T.rand(0, 2),
    lambda T: T.rand(2, dtype=T.float64),
    lambda T: T.randn(2, 3, dtype=T.float16),
    lambda T: T.randint(10, (3,)),
    lambda T: T.randint(3, 10, (2, 2)),
    lambda T: T.randint(5, (2,), dtype=T.float32),
    lambda T: T.randint(0, 2, (2,), dtype=T.bool),
    lambda T: T.randint(0, 2, (2,), dtype=T.int8),
    lambda T: T.randint(0, 5, size=(2,)),
    lambda T: T.randint(high=5, size=(2,)),
    lambda T: T.randint(-(2**63), 2**63 - 1, (2,)),
    lambda T: T.randint_like(T.zeros(2, dtype=T.int32), 5),
    lambda T: T.randint_like(T.zeros(2), 3, 5),
    lambda T: T.randint_like(T.zeros(2), low=3, high=5),
    lambda T: T.randint_like(T.zeros(2, 2), 5, dtype=T.int16),
    lambda T: T.rand_like(T.zeros(2, dtype=T.float64)),
    lambda T: T.randn_like(T.zeros(2, 3, dtype=T.float16)),
    lambda T: T.randperm(5),
    lambda T: T.randperm(0),
    lambda T: T.randperm(5, dtype=T.float32),
    lambda T: T.randperm(256, dtype=T.uint8),
    lambda T: T.normal(0.0, 1.0, (2, 3)),
    lambda T: T.normal(0, 1, (2,)),
    lambda T: T.normal(0.0, 1.0, size=(2,), dtype=T.float64),
    lambda T: T.normal(T.zeros(3), 1.0),
    lambda T: T.normal(T.zeros(3)),
    lambda T: T.normal(0.0, T.ones(3)),
    lambda T: T.normal(T.zeros(3), T.ones(2, 3)),
    lambda T: T.normal(T.zeros(3, dtype=T.float64), T.ones(3)),
    lambda T: T.normal(T.zeros(3), T.ones(3, dtype=T.float64)),
    lambda T: T.normal(0.0, T.ones(3, dtype=T.float64)),
    lambda T: T.normal(T.zeros(3, dtype=T.float16), 1.0),
    lambda T: T.normal(T.zeros(3), T.ones(3, dtype=T.int64)),
    lambda T: T.normal(T.zeros(0), 1.0),
    lambda T: T.normal(mean=0.0, std=T.ones(3)),
    lambda T: T.normal(T.tensor(1.0), 1.0, (2,)),
    lambda T: T.normal(T.tensor(1.0), T.tensor(2.0), (2, 2), dtype=T.float64),
    lambda T: T.bernoulli(T.full((3,), 0.5)),
    lambda T: T.bernoulli(T.full((3,), 0.5, dtype=T.float64)),
    lambda T: T.bernoulli(T.zeros(3, dtype=T.int64), 0.5),
    lambda T: T.bernoulli(T.zeros(3, dtype=T.bool), 1.0),
    lambda T: T.multinomial(T.ones(5), 2),
    lambda T: T.multinomial(T.ones(2, 3), 2),
    lambda T: T.multinomial(T.ones(0, 3), 2),
    lambda T: T.multinomial(T.ones(3, dtype=T.float64), 1),
    lambda T: T.multinomial(T.ones(3, dtype=T.float16), 5, True),
    lambda T: T.poisson(T.full((3,), 2.0)),
    lambda T: T.poisson(T.full((2, 2), 2.0, dtype=T.float64)),
]


@pytest.mark.parametrize("call", SHAPE_DTYPE_CALLS)
def test_shapes_and_dtypes_match_torch(call, torch):
    r, t = call(rg), call(torch)
    assert str(r.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(r.shape) == tuple(t.shape)
    assert not r.requires_grad


SAMPLING_ERRORS = [
    lambda T: T.rand(2, dtype=T.int64),
    lambda T: T.rand(2, dtype=T.bool),
    lambda T: T.randn(2, dtype=T.int64),
    lambda T: T.rand_like(T.zeros(2, dtype=T.int64)),
    lambda T: T.rand(-1),
    lambda T: T.randn(2, -3),
    lambda T: T.rand(2.5),
    lambda T: T.randint(5, 5, (2,)),
    lambda T: T.randint(6, 5, (2,)),
    lambda T: T.randint(5, (2,), dtype=T.bool),
    lambda T: T.randint(0, 300, (2,), dtype=T.uint8),
    lambda T: T.randint(-1, 3, (2,), dtype=T.uint8),
    lambda T: T.randint(5.5, (2,)),
    lambda T: T.randint(0, 5, (2,), requires_grad=True),
    lambda T: T.randint(0, 2**63, (2,)),
    lambda T: T.randint(5, 2),
    lambda T: T.randperm(-1),
    lambda T: T.randperm(257, dtype=T.uint8),
    lambda T: T.randperm(5, dtype=T.bool),
    lambda T: T.randperm(3, requires_grad=True),
    lambda T: T.randperm(5.0),
    lambda T: T.randperm(2**24 + 1, dtype=T.float16),
    lambda T: T.normal(0.0, -1.0, (2,)),
    lambda T: T.normal(T.zeros(3), -1.0),
    lambda T: T.normal(0.0, -T.ones(3)),
    lambda T: T.normal(T.zeros(3), T.ones(4)),
    lambda T: T.normal(T.zeros(2, 3), T.ones(6)),
    lambda T: T.normal(T.zeros(3, dtype=T.int64), 1.0),
    lambda T: T.normal(0.0, 1.0, (2,), dtype=T.int64),
    lambda T: T.normal(0, T.ones(3, dtype=T.int64)),
    lambda T: T.bernoulli(T.zeros(3, dtype=T.int64)),
    lambda T: T.bernoulli(T.zeros(3, dtype=T.bool)),
    lambda T: T.bernoulli(T.zeros(3), 1.5),
    lambda T: T.bernoulli(T.zeros(3), T.ones(3)),
    lambda T: T.bernoulli(T.zeros(3), T.ones(1)),
    lambda T: T.bernoulli(T.zeros(3), "a"),
    lambda T: T.bernoulli(T.zeros(3), None),
    lambda T: T.rand(2, 3.0),
    lambda T: T.rand((True, 3)),
    lambda T: T.randn(size=(2, 3.0)),
    lambda T: T.randint(3, size=(2, 3.0)),
    lambda T: T.normal(0.0, 1.0, (2, 1.0)),
    lambda T: T.multinomial(T.tensor([0.0, 1.0, 1.0]), 4),
    lambda T: T.multinomial(T.tensor([1.0, 1.0, 1.0]), 0),
    lambda T: T.multinomial(T.tensor([1.0, 1.0, 1.0]), -1),
    lambda T: T.multinomial(T.tensor([0.0, 0.0, 0.0]), 1),
    lambda T: T.multinomial(T.tensor([-1.0, 1.0, 0.0]), 1),
    lambda T: T.multinomial(T.tensor([INF, 1.0, 0.0]), 1),
    lambda T: T.multinomial(T.tensor([NAN, 1.0, 0.0]), 1),
    lambda T: T.multinomial(T.tensor([[1.0, NAN, 1.0]]), 2),
    lambda T: T.multinomial(T.tensor([[1.0, 1.0], [0.0, 0.0]]), 1),
    lambda T: T.multinomial(T.tensor([1, 2, 3]), 1),
    lambda T: T.multinomial(T.tensor(1.0), 1),
    lambda T: T.multinomial(T.ones(2, 2, 2), 1),
    lambda T: T.multinomial(T.ones(2, 0), 2),
    lambda T: T.multinomial(T.ones(3), 1.0),
    lambda T: T.multinomial(T.ones(3), True),
    lambda T: T.multinomial(T.zeros(2**24 + 1), 1),
    lambda T: T.poisson(T.full((3,), -2.0)),
    lambda T: T.poisson(T.full((3,), NAN)),
    lambda T: T.poisson(T.full((3,), 2, dtype=T.int64)),
]


@pytest.mark.parametrize("call", SAMPLING_ERRORS)
def test_sampling_errors_match_torch(call, torch):
    assert_same_error(call, torch)


@pytest.mark.parametrize("call", [
    lambda T: T.bernoulli(T.full((3,), 1.5)),
    lambda T: T.bernoulli(T.full((3,), -0.5)),
    lambda T: T.bernoulli(T.full((3,), NAN)),
])
def test_bernoulli_probability_errors_match_torch(call, torch):
    # PyTorch appends a request to report the message upstream; the rest is the same
    assert_same_error(call, torch, prefix=True)


def test_bernoulli_takes_a_0_dim_tensor_as_p(torch):
    for T in (torch, rg):
        assert T.bernoulli(T.zeros(3), T.tensor(1.0)).tolist() == [1.0, 1.0, 1.0]
        assert T.bernoulli(T.zeros(3), 1).tolist() == [1.0, 1.0, 1.0]


def test_normal_tensor_forms_refuse_dtype_and_size(torch):
    for T in (torch, rg):
        for kw in ({"dtype": T.float64}, {"requires_grad": True}):
            with pytest.raises(TypeError):
                T.normal(T.zeros(3), T.ones(3), **kw)
        with pytest.raises(TypeError):
            T.normal(0.0, 1.0)


# -- randint, randperm -------------------------------------------------------------------------
def test_randint_range_and_uniformity():
    x = arr(rg.randint(3, 10, (N,)))
    assert x.dtype == np.int64
    assert x.min() == 3 and x.max() == 9
    freq = np.bincount(x - 3) / N
    np.testing.assert_allclose(freq, np.full(7, 1 / 7), atol=0.01)
    y = arr(rg.randint(5, (1000,)))
    assert y.min() == 0 and y.max() == 4


@pytest.mark.parametrize("dt, lo, hi", [
    (rg.int8, -128, 128), (rg.uint8, 0, 256), (rg.int16, -5, 5), (rg.bool, 0, 2),
    (rg.float32, -3, 4), (rg.int64, -(2**63), 2**63 - 1),
])
def test_randint_dtypes_cover_their_range(dt, lo, hi):
    x = arr(rg.randint(lo, hi, (20_000,), dtype=dt))
    assert x.dtype == dt.np
    if dt is not rg.int64:
        assert x.min() == lo and x.max() == hi - 1
        assert len(np.unique(x)) == hi - lo
    assert not rg.randint(lo, hi, (2,), dtype=dt).requires_grad


def test_randint_float_range_beyond_precision_warns():
    with pytest.warns(UserWarning, match="out of bounds"):
        rg.randint(0, 2**25, (2,), dtype=rg.float32)


def test_randint_like():
    x = arr(rg.randint_like(rg.zeros(1000, dtype=rg.int32), 2, 6))
    assert x.dtype == np.int32 and x.min() == 2 and x.max() == 5
    assert rg.randint_like(rg.zeros(2, 3), 4).shape == (2, 3)


def test_randperm_is_permutation():
    for n in (1, 2, 10, 1000):
        p = arr(rg.randperm(n))
        assert p.dtype == np.int64
        np.testing.assert_array_equal(np.sort(p), np.arange(n))
    assert not np.array_equal(arr(rg.randperm(1000)), np.arange(1000))
    assert rg.randperm(0).shape == (0,)
    q = arr(rg.randperm(256, dtype=rg.uint8))
    np.testing.assert_array_equal(np.sort(q), np.arange(256))


# -- normal ------------------------------------------------------------------------------------
def test_normal_scalar_form_statistics():
    x = arr(rg.normal(3.0, 2.0, (N,)))
    assert x.dtype == np.float32
    assert abs(x.mean() - 3) < 0.03 and abs(x.std() - 2) < 0.03


def test_normal_tensor_forms_broadcast_and_statistics():
    mean = rg.tensor([0.0, 10.0, -5.0])
    std = rg.tensor([[0.5], [2.0]])
    x = rg.normal(mean, std)
    assert x.shape == (2, 3)
    samples = np.stack([arr(rg.normal(mean, std)) for _ in range(5000)])
    np.testing.assert_allclose(samples.mean(0), [[0, 10, -5]] * 2, atol=0.1)
    np.testing.assert_allclose(samples.std(0), [[0.5] * 3, [2.0] * 3], rtol=0.05)


def test_normal_with_zero_std_is_the_mean():
    m = rg.arange(4.0)
    assert rg.normal(m, 0.0).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert rg.normal(2.5, rg.zeros(3)).tolist() == [2.5] * 3
    assert rg.normal(m, rg.zeros(4)).tolist() == [0.0, 1.0, 2.0, 3.0]


# -- bernoulli, multinomial, poisson -----------------------------------------------------------
def test_bernoulli():
    p = rg.tensor([0.0, 1.0, 0.0, 1.0])
    assert rg.bernoulli(p).tolist() == [0.0, 1.0, 0.0, 1.0]
    x = arr(rg.bernoulli(rg.full((N,), 0.3, dtype=rg.float64)))
    assert x.dtype == np.float64 and set(np.unique(x)) == {0.0, 1.0}
    assert abs(x.mean() - 0.3) < 0.01
    y = arr(rg.bernoulli(rg.zeros(N, dtype=rg.int32), 0.8))
    assert y.dtype == np.int32 and abs(y.mean() - 0.8) < 0.01
    assert rg.bernoulli(rg.zeros(3), p=0.0).tolist() == [0.0, 0.0, 0.0]


def test_multinomial_without_replacement_gives_distinct_indices():
    probs = rg.rand(50, 10) + 0.01
    idx = arr(rg.multinomial(probs, 10))
    assert idx.shape == (50, 10) and idx.dtype == np.int64
    for row in idx:
        np.testing.assert_array_equal(np.sort(row), np.arange(10))
    part = arr(rg.multinomial(probs, 4))
    assert all(len(set(row)) == 4 for row in part)


def test_multinomial_zero_probabilities_come_last():
    for _ in range(50):
        row = arr(rg.multinomial(rg.tensor([0.0, 1.0, 0.0, 2.0]), 4))
        assert set(row[:2]) == {1, 3} and set(row[2:]) == {0, 2}
    assert rg.multinomial(rg.tensor([0.0, 1.0, 0.0]), 1).tolist() == [1]


def test_multinomial_first_draw_follows_probabilities():
    rows = rg.tensor([[1.0, 2.0, 3.0, 4.0]] * 40_000)
    first = arr(rg.multinomial(rows, 2))[:, 0]
    np.testing.assert_allclose(np.bincount(first, minlength=4) / 40_000,
                               [0.1, 0.2, 0.3, 0.4], atol=0.015)


def test_multinomial_with_replacement_frequencies():
    x = arr(rg.multinomial(rg.tensor([0.2, 0.0, 0.8]), N, replacement=True))
    assert x.shape == (N,)
    freq = np.bincount(x, minlength=3) / N
    assert freq[1] == 0
    np.testing.assert_allclose(freq, [0.2, 0.0, 0.8], atol=0.01)
    y = arr(rg.multinomial(rg.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]), 5, True))
    np.testing.assert_array_equal(y, [[2] * 5, [0] * 5])
    assert arr(rg.multinomial(rg.tensor([1e-30, 0.0, 0.0]), 3, True)).tolist() == [0, 0, 0]


def test_poisson():
    x = arr(rg.poisson(rg.full((N,), 4.0)))
    assert x.dtype == np.float32
    np.testing.assert_array_equal(x, np.round(x))
    assert abs(x.mean() - 4) < 0.05 and abs(x.var() - 4) < 0.15
    assert rg.poisson(rg.zeros(3)).tolist() == [0.0, 0.0, 0.0]
    # PyTorch converts samples beyond int64 as x86 does: to -2**63
    big = arr(rg.poisson(rg.tensor([1e20, INF], dtype=rg.float64)))
    assert big.tolist() == [-(2.0**63)] * 2


# -- requires_grad -----------------------------------------------------------------------------
def test_results_do_not_require_grad_unless_asked():
    p = rg.full((3,), 0.5, requires_grad=True)
    assert not rg.bernoulli(p.detach()).requires_grad
    assert not rg.normal(p.detach(), 1.0).requires_grad
    assert not rg.poisson(p.detach()).requires_grad
    assert not rg.multinomial(p, 2).requires_grad
    for f in (rg.rand, rg.randn):
        assert not f(2).requires_grad
        t = f(2, requires_grad=True)
        assert t.requires_grad and t.is_leaf
    t = rg.normal(0.0, 1.0, (2,), requires_grad=True)
    assert t.requires_grad and t.is_leaf
    assert rg.rand_like(p).requires_grad is False
    assert rg.randn_like(p, requires_grad=True).requires_grad
    assert rg.randint(0, 5, (2,), dtype=rg.float32, requires_grad=True).requires_grad
    assert rg.randperm(3, dtype=rg.float64, requires_grad=True).requires_grad


def test_out_parameter():
    out = rg.empty(3, dtype=rg.float64)
    r = rg.rand(3, out=out)
    assert r is out and out.dtype is rg.float64
    rg.randint(0, 4, (3,), out=out)
    assert set(out.tolist()) <= {0.0, 1.0, 2.0, 3.0}


# -- in-place fillers --------------------------------------------------------------------------
def test_fillers_write_in_place_and_bump_version():
    base = np.zeros(6, dtype=np.float32)
    t = rg.from_numpy(base)
    view = rg.from_numpy(base[2:4])
    for name, args in [("uniform_", (2.0, 3.0)), ("normal_", (5.0, 0.0)), ("bernoulli_", (1.0,)),
                       ("exponential_", ()), ("geometric_", (0.5,)), ("log_normal_", ()),
                       ("cauchy_", ()), ("random_", (7, 8))]:
        version = t._version
        r = getattr(rr, name)(t, *args)
        assert r is t
        assert t._version == version + 1
        np.testing.assert_array_equal(arr(view), base[2:4])
        np.testing.assert_array_equal(arr(t), base)
    assert base.tolist() == [7.0] * 6


def test_filler_refuses_leaf_that_requires_grad():
    t = rg.zeros(3, requires_grad=True)
    for name in ("uniform_", "normal_", "bernoulli_", "exponential_", "random_", "cauchy_"):
        with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being "
                                               "used in an in-place operation."):
            getattr(rr, name)(t)
    with rg.no_grad():
        rr.normal_(t, 3.0, 0.0)
    assert t.requires_grad and t.detach().tolist() == [3.0, 3.0, 3.0]


def test_filler_refuses_inference_tensor_outside_inference_mode():
    with rg.inference_mode():
        t = rg.zeros(2)
        rr.uniform_(t)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        rr.uniform_(t)


def test_uniform_():
    x = arr(rr.uniform_(rg.empty(N), -2.0, 3.0))
    assert x.min() >= -2 and x.max() < 3
    assert abs(x.mean() - 0.5) < 0.03
    assert arr(rr.uniform_(rg.empty(3), 1.0, 1.0)).tolist() == [1.0, 1.0, 1.0]
    h = arr(rr.uniform_(rg.empty(N, dtype=rg.float16), 0.0, 1.0))
    assert h.max() < 1
    y = arr(rr.uniform_(rg.empty(10), **{"from": 5, "to": 6}))
    assert y.min() >= 5 and y.max() < 6


def test_uniform_never_returns_upper_bound_after_rounding():
    # a draw that rounds up to ``to`` becomes ``from``, as in PyTorch
    x = arr(rr.uniform_(rg.empty(N), 1.0, 1.0000001))
    assert x.max() < np.float32(1.0000001)


def test_normal_exponential_and_others():
    x = arr(rr.normal_(rg.empty(N), 5.0, 2.0))
    assert abs(x.mean() - 5) < 0.03 and abs(x.std() - 2) < 0.03
    e = arr(rr.exponential_(rg.empty(N), 2.0))
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.01
    b = arr(rr.bernoulli_(rg.empty(N), 0.25))
    assert set(np.unique(b)) == {0.0, 1.0} and abs(b.mean() - 0.25) < 0.01
    pb = arr(rr.bernoulli_(rg.empty(2, 3), rg.tensor([0.0, 1.0, 0.0])))
    np.testing.assert_array_equal(pb, [[0, 1, 0]] * 2)
    g = arr(rr.geometric_(rg.empty(N, dtype=rg.int64), 0.25))
    assert g.min() >= 1 and abs(g.mean() - 4) < 0.1
    ln = arr(rr.log_normal_(rg.empty(N, dtype=rg.float64), 1.0, 0.5))
    assert ln.min() > 0 and abs(np.log(ln).mean() - 1) < 0.01
    c = arr(rr.cauchy_(rg.empty(N, dtype=rg.float64), 2.0, 1.0))
    assert abs(np.median(c) - 2) < 0.05


@pytest.mark.parametrize("dt, args, lo, hi", [
    (rg.uint8, (), 0, 255),
    (rg.int8, (), 0, 127),
    (rg.bool, (), 0, 1),
    (rg.int32, (5,), 0, 4),
    (rg.int8, (-3, 3), -3, 2),
    (rg.int8, (120, None), 120, 127),
    (rg.float32, (3, 8), 3, 7),
    (rg.float16, (), 0, 2048),
])
def test_random_ranges(dt, args, lo, hi):
    x = arr(rr.random_(rg.zeros(50_000, dtype=dt), *args)).astype(np.float64)
    assert x.min() == lo and x.max() == hi
    np.testing.assert_array_equal(x, np.round(x))


def test_random_full_ranges():
    f = arr(rr.random_(rg.zeros(N)))
    assert f.min() >= 0 and f.max() <= 2**24 and f.max() > 2**23
    i = arr(rr.random_(rg.zeros(N, dtype=rg.int64)))
    assert i.min() >= 0 and i.max() > 2**62
    assert arr(rr.random_(rg.zeros(3, dtype=rg.int32), **{"from": 4, "to": 5})).tolist() == [4] * 3
    assert arr(rr.random_(rg.zeros(3), to=1)).tolist() == [0.0] * 3


FILLER_ERRORS = [
    lambda T: fill(T, "uniform_")(T.zeros(2), 2, 1),
    lambda T: fill(T, "uniform_")(T.zeros(2), 0, INF),
    lambda T: fill(T, "uniform_")(T.zeros(2), -INF, 0),
    lambda T: fill(T, "uniform_")(T.zeros(2), -3e38, 3e38),
    lambda T: fill(T, "uniform_")(T.zeros(2, dtype=T.float16), 0, 70000),
    lambda T: fill(T, "uniform_")(T.zeros(2, dtype=T.int64)),
    lambda T: fill(T, "uniform_")(T.zeros(2, requires_grad=True)),
    lambda T: fill(T, "normal_")(T.zeros(2), 0, -1),
    lambda T: fill(T, "normal_")(T.zeros(2, dtype=T.int64)),
    lambda T: fill(T, "normal_")(T.zeros(2, requires_grad=True)),
    lambda T: fill(T, "exponential_")(T.zeros(2), 0),
    lambda T: fill(T, "exponential_")(T.zeros(2), -1),
    lambda T: fill(T, "exponential_")(T.zeros(2, dtype=T.int64)),
    lambda T: fill(T, "bernoulli_")(T.zeros(2), 1.5),
    lambda T: fill(T, "bernoulli_")(T.zeros(2), NAN),
    lambda T: fill(T, "bernoulli_")(T.zeros(2), T.tensor([0, 1])),
    lambda T: fill(T, "bernoulli_")(T.zeros(2), T.tensor([True, False])),
    lambda T: fill(T, "bernoulli_")(T.zeros(2), T.tensor([0.0, 1.0, 1.0])),
    lambda T: fill(T, "random_")(T.zeros(2), 5, 3),
    lambda T: fill(T, "random_")(T.zeros(2), 5, 5),
    lambda T: fill(T, "random_")(T.zeros(2, dtype=T.uint8), 0, 300),
    lambda T: fill(T, "random_")(T.zeros(2, dtype=T.uint8), -1, 3),
    lambda T: fill(T, "random_")(T.zeros(2), -3),
    lambda T: fill(T, "random_")(T.zeros(2, dtype=T.int64), -3),
    lambda T: fill(T, "random_")(T.zeros(2, dtype=T.float16), 0),
    lambda T: fill(T, "random_")(T.zeros(2, requires_grad=True)),
    lambda T: fill(T, "geometric_")(T.zeros(3), 0.0),
    lambda T: fill(T, "geometric_")(T.zeros(3), 1.0),
    lambda T: fill(T, "log_normal_")(T.zeros(3), 0, 0),
    lambda T: fill(T, "log_normal_")(T.zeros(3, dtype=T.int64)),
    lambda T: fill(T, "cauchy_")(T.zeros(3), 0, 0),
    lambda T: fill(T, "cauchy_")(T.zeros(3), 0, -1),
]


@pytest.mark.parametrize("call", FILLER_ERRORS)
def test_filler_errors_match_torch(call, torch):
    assert_same_error(call, torch)


def test_filler_float_bounds_warn():
    with pytest.warns(UserWarning, match="out of bounds"):
        rr.random_(rg.zeros(2), 0, 2**25)


def test_filler_bernoulli_probability_error_matches_torch(torch):
    assert_same_error(lambda T: fill(T, "bernoulli_")(T.zeros(2), T.tensor([0.0, 2.0])), torch,
                      prefix=True)


# -- autograd: fills on tensors with a history, samplers of inputs that require grad ----------
FILLS = [
    ("uniform_", ()), ("uniform_", (-1.0, 1.0)), ("normal_", ()), ("bernoulli_", (0.5,)),
    ("bernoulli_", ("P",)), ("exponential_", ()), ("random_", ()), ("random_", (5,)),
    ("random_", (2, 5)), ("random_", (2, None)), ("geometric_", (0.5,)), ("log_normal_", ()),
    ("cauchy_", ()),
]


def _fill_args(T, args):
    return tuple(T.full((3,), 0.5, dtype=T.float64) if a == "P" else a for a in args)


def _fill_graph(T, name, args):
    a = T.randn(3, requires_grad=True, dtype=T.float64)
    x = a * 2
    y = getattr(x, name)(*_fill_args(T, args))
    g, = T.autograd.grad((x * T.arange(3.0)).sum(), a, create_graph=True)
    nf = x.grad_fn.next_functions
    return (y is x, x.grad_fn.name(), [f is None for f, _ in nf], nf[0][0].name(), x._version,
            g.tolist(), g.requires_grad)


@pytest.mark.parametrize("name,args", FILLS, ids=[f"{n}{a}" for n, a in FILLS])
def test_fill_on_non_leaf_records_zero_gradient_node_like_torch(name, args, torch):
    assert _fill_graph(rg, name, args) == _fill_graph(torch, name, args)


@pytest.mark.parametrize("name,args", FILLS, ids=[f"{n}{a}" for n, a in FILLS])
def test_fill_on_non_leaf_draws_what_a_plain_fill_draws(name, args):
    plain = rg.zeros(3, dtype=rg.float64)
    tracked = rg.zeros(3, dtype=rg.float64, requires_grad=True) * 1
    for t in (plain, tracked):
        rg.manual_seed(3)
        getattr(t, name)(*_fill_args(rg, args))
    assert tracked.tolist() == plain.tolist()
    assert tracked.grad_fn is not None and plain.grad_fn is None


def _view_fill(T):
    a = T.randn(2, 3, requires_grad=True)
    x = a * 2
    v = x[0]
    v.uniform_()
    names = x.grad_fn.name(), v.grad_fn.name()
    x.sum().backward()
    return names, a.grad.tolist()


def test_fill_on_a_view_of_a_non_leaf_matches_torch(torch):
    assert _view_fill(rg) == _view_fill(torch)


def _tensor_p_fill(T):
    out = []
    a = T.randn(3, requires_grad=True)
    x = a * 2
    p = T.full((3,), 0.5, requires_grad=True)
    x.bernoulli_(p)
    out.append((x.grad_fn.name(), x.grad_fn.next_functions[1][0].name()))
    x.sum().backward()
    out.append(p.grad.tolist())
    # a leaf that does not require grad takes the history of p (broadcast, another dtype)
    p = T.full((1,), 0.5, requires_grad=True, dtype=T.float64)
    x = T.zeros(2, 3)
    x.bernoulli_(p)
    out.append((x.grad_fn.name(), x.requires_grad, x.is_leaf))
    x.sum().backward()
    out.append((p.grad.tolist(), str(p.grad.dtype).split(".")[-1]))
    return out


def test_bernoulli__with_a_probability_tensor_that_requires_grad_matches_torch(torch):
    assert _tensor_p_fill(rg) == _tensor_p_fill(torch)


def _sampler_graphs(T):
    out = []
    p = T.full((3,), 0.5, requires_grad=True)
    for y in (T.bernoulli(p), p.bernoulli(), T.poisson(p)):
        g, = T.autograd.grad(y.sum(), p)
        out.append((y.grad_fn.name(), g.tolist()))
    y = T.bernoulli(p, 0.3)
    out.append((y.grad_fn.name(), y.requires_grad))
    try:
        y.sum().backward()
    except RuntimeError as e:
        out.append(str(e))
    out.append(T.multinomial(p, 2).grad_fn)
    m = T.randn(3, 1, requires_grad=True, dtype=T.float64)
    s = T.rand(3, dtype=T.float64, requires_grad=True)
    for mm, ss in [(m, s), (m, 2.0), (1.0, s), (m, s.detach()), (m.detach(), s)]:
        y = T.normal(mm, ss)
        ins = [t for t in (mm, ss) if isinstance(t, T.Tensor) and t.requires_grad]
        gs = T.autograd.grad(y.sum(), ins, create_graph=True)
        out.append((y.grad_fn.name(), tuple(y.shape), [(g.tolist(), g.requires_grad) for g in gs],
                    [f is None for f, _ in y.grad_fn.next_functions]))
    return out


def test_samplers_of_inputs_that_require_grad_match_torch(torch):
    # PyTorch records a node (its gradient is zero: samples are not reparameterised)
    assert _sampler_graphs(rg) == _sampler_graphs(torch)


def test_fill_without_grad_mode_keeps_the_history():
    x = rg.ones(3, requires_grad=True) * 2
    with rg.no_grad():
        rr.normal_(x)
    assert x.grad_fn.name() == "MulBackward0"


def test_fill_invalidates_saved_values():
    x = rg.ones(3, requires_grad=True) * 2
    y = x * x
    rr.uniform_(x)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_tensor_methods_table():
    assert set(rr.TENSOR_METHODS) >= {
        "uniform_", "normal_", "bernoulli_", "exponential_", "random_", "bernoulli",
        "multinomial",
    }
    assert all(callable(f) for f in rr.TENSOR_METHODS.values())


def test_public_names():
    for name in rr.__all__:
        assert hasattr(rg, name), name


# -- binomial ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binomial_draws_torchs_samples(torch, dtype):
    # small counts (inversion), large ones (BTRS), p above 1/2 (drawn as count - k), the edges
    rng = np.random.default_rng(0)
    c = np.concatenate([rng.integers(0, 40, 40), [0, 5, 1000, 7, 3]]).astype(dtype)
    p = np.concatenate([rng.random(40), [0.5, 1.0, 0.3, 0.0, -0.5]]).astype(dtype)
    for lib in (torch, rg):
        lib.manual_seed(3)
    for _ in range(2):  # the generator's state advances alike
        a = torch.binomial(torch.tensor(c), torch.tensor(p)).numpy()
        b = rg.binomial(rg.tensor(c), rg.tensor(p))
        assert b.dtype.name == dtype
        np.testing.assert_array_equal(b.numpy(), a)
    g = rg.Generator().manual_seed(5)
    t = torch.Generator().manual_seed(5)
    np.testing.assert_array_equal(
        rg.binomial(rg.full((2, 3), 30.0), rg.full((3,), 0.4), generator=g).numpy(),
        torch.binomial(torch.full((2, 3), 30.0), torch.full((2, 3), 0.4), generator=t).numpy())


def test_binomial_errors_and_graph():
    with pytest.raises(ValueError, match="binomial only supports floating-point dtypes for "
                                         "count, got: Long"):
        rg.binomial(rg.tensor([3]), rg.tensor([0.5]))
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        rg.binomial(rg.tensor([3.0]), rg.tensor([0.5], dtype=rg.float64))
    with pytest.raises(NotImplementedError, match="\"binomial_cpu\" not implemented for 'Half'"):
        rg.binomial(rg.tensor([3.0]).half(), rg.tensor([0.5]).half())
    c = rg.tensor([4.0, 9.0], requires_grad=True)
    y = rg.binomial(c, rg.tensor([0.5, 0.5]))
    assert y.grad_fn.name() == "torch::autograd::NotImplemented"
    assert len(y.grad_fn.next_functions) == 1
    with pytest.raises(RuntimeError, match="derivative for aten::binomial is not implemented"):
        y.sum().backward()
