"""retrograd's random numbers against PyTorch's, bit for bit: after the same ``manual_seed`` every
sampler gives the same values (``np.array_equal`` on float32/float64 arrays) and leaves the
generator in the same state (``get_rng_state`` bytes compared).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd as rg

SEEDS = [0, 1, 2024]
SIZES = [1, 15, 16, 17, 100]


def _np(x):
    if isinstance(x, (list, tuple)):
        return [_np(v) for v in x]
    if hasattr(x, "detach"):
        x = x.detach()
        if str(x.dtype).endswith("bfloat16"):
            x = x.float()
        return np.asarray(x.numpy())
    return x


def _same(a, b) -> None:
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), (a.ravel()[:8], b.ravel()[:8])


def both(torch, seed: int, fn) -> None:
    """``fn(T)`` under both libraries from the same seed: same values, same generator state."""
    rg.manual_seed(seed)
    ours = _np(fn(rg))
    torch.manual_seed(seed)
    theirs = _np(fn(torch))
    _same(ours, theirs)
    _same(_np(rg.get_rng_state()), _np(torch.get_rng_state()))


@pytest.fixture(scope="module")
def avx2(torch):
    """float32 ``randn`` of 16 or more values takes PyTorch's AVX2 kernel, whose approximations
    retrograd reproduces; a torch built or run without it computes otherwise."""
    if torch.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"):
        pytest.skip("torch does not run its AVX2 kernels here")


# -- the engine: seeding and state bytes -------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 7, 2**32 + 5, 2**64 - 1, 67280421310721])
def test_state_bytes_match_torch(seed, torch):
    both(torch, seed, lambda T: T.get_rng_state())
    both(torch, seed, lambda T: [T.randint(0, 2**40, (700,)), T.randn(3), T.get_rng_state()])


def test_default_generator_starts_at_torchs_default_seed(torch):
    assert rg.Generator().initial_seed() == torch.Generator().initial_seed()
    g, h = rg.Generator(), torch.Generator()
    _same(_np(rg.rand(5, generator=g)), _np(torch.rand(5, generator=h)))


def test_states_move_between_libraries(torch):
    torch.manual_seed(3)
    torch.randn(5)  # leaves a cached normal in the state
    rg.set_rng_state(rg.from_numpy(torch.get_rng_state().numpy().copy()))
    _same(_np(rg.randn(7)), _np(torch.randn(7)))
    g = rg.Generator().manual_seed(11)
    rg.rand(9, generator=g)
    h = torch.Generator()
    h.set_state(torch.from_numpy(_np(g.get_state()).copy()))
    _same(_np(rg.randn(20, generator=g)), _np(torch.randn(20, generator=h)))


def test_generator_clone_and_pickle():
    import pickle

    g = rg.Generator().manual_seed(5)
    rg.rand(3, generator=g)
    for h in (g.clone_state(), pickle.loads(pickle.dumps(g))):
        _same(_np(rg.randn(5, generator=h)), _np(rg.randn(5, generator=g.clone_state())))


# -- factories ---------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
def test_rand_randn_randint(seed, n, torch, avx2):
    both(torch, seed, lambda T: [
        T.rand(n), T.rand(n, dtype=T.float64), T.randn(n), T.randn(n, dtype=T.float64),
        T.randint(-5, 7, (n,)), T.randint(2**33, (n,)), T.randn(n, 3),
    ])


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_reduced_precision(dt, torch, avx2):
    def run(T):
        d = getattr(T, dt)
        return [T.rand(50, dtype=d), T.randn(7, dtype=d), T.randn(32, dtype=d),
                T.randn(17, dtype=d), T.empty(37, dtype=d).normal_(0.3, 1.7),
                T.empty(20, dtype=d).uniform_(-1, 2), T.empty(5, dtype=d).exponential_()]
    both(torch, 4, run)


def test_mixed_sequence_carries_state_and_normal_cache(torch, avx2):
    def seq(T):
        g = T.Generator().manual_seed(9)
        return [T.randn(3), T.rand(2), T.randint(0, 10, (5,)), T.randn(1, dtype=T.float64),
                T.randn(5), T.randn(33), T.randperm(10), T.rand(3, generator=g),
                T.randn(2, generator=g), T.normal(0.5, 2.0, (4,)), T.randn(2, 2).t().normal_(),
                T.randn(1)]
    both(torch, 0, seq)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 100, 1000, 2001, 30000])
def test_randperm(n, torch):
    both(torch, 1, lambda T: [T.randperm(n), T.randperm(n, dtype=T.float32)])


def test_like_factories_follow_the_inputs_layout(torch, avx2):
    def run(T):
        x = T.zeros(5, 4).t()  # fills along the storage, and randn takes the scalar path
        return [T.rand_like(x), T.randn_like(x), T.randint_like(x, 3, 9),
                T.randn_like(T.zeros(4, 5)), T.rand_like(x, dtype=T.float64)]
    both(torch, 2, run)


@pytest.mark.parametrize("seed", SEEDS)
def test_normal_overloads(seed, torch, avx2):
    def run(T):
        m = T.linspace(-1, 1, 20)
        s = T.linspace(0.1, 2.0, 20)
        return [T.normal(m, s), T.normal(m, 1.7), T.normal(0.3, s), T.normal(m[:5], s[:5]),
                T.normal(m.reshape(20, 1)[:4], s[:3]), T.normal(m.double(), 0.5),
                T.normal(0.2, 3.0, (17,)), T.normal(0.2, 3.0, (5,), dtype=T.float64)]
    both(torch, seed, run)


# -- in-place fillers --------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("n", SIZES)
def test_fillers(dt, n, torch, avx2):
    def run(T):
        d = getattr(T, dt)
        e = lambda: T.empty(n, dtype=d)  # noqa: E731
        return [e().uniform_(-0.37, 2.1), e().normal_(0.3, 1.7), e().exponential_(2.5),
                e().geometric_(0.3), e().log_normal_(0.3, 0.8), e().cauchy_(0.1234, 1.7),
                e().bernoulli_(0.3), e().random_(), e().random_(10), e().random_(-3, 9),
                T.empty(n, dtype=T.int64).geometric_(0.01)]
    both(torch, 5, run)


def test_fillers_on_non_contiguous_tensors(torch, avx2):
    def run(T):
        a = T.zeros(6, 7)
        a.t().uniform_()
        b = T.zeros(8, 9)
        b[:, ::2].normal_()  # 40 values, not contiguous: the scalar path
        c = T.zeros(4, 5, 6).permute(2, 0, 1)
        c.exponential_()
        return [a, b, c, T.zeros(3, 32)[:, :16].normal_()]
    both(torch, 6, run)


@pytest.mark.parametrize("dt", ["int64", "int32", "int16", "int8", "uint8", "bool", "float32",
                                "float64"])
def test_random_overloads(dt, torch):
    def run(T):
        d = getattr(T, dt)
        out = [T.empty(20, dtype=d).random_(), T.empty(20, dtype=d).random_(2)]
        if dt != "bool":
            out += [T.empty(20, dtype=d).random_(1, 5), T.empty(20, dtype=d).random_(3, None)]
        if dt in ("int64", "float32", "float64"):
            out.append(T.empty(20, dtype=d).random_(-(2**63), None))
        return out
    both(torch, 7, run)


@pytest.mark.parametrize("pdt", ["float32", "float64"])
def test_bernoulli_forms(pdt, torch):
    def run(T):
        p = T.linspace(0, 1, 40, dtype=getattr(T, pdt)).reshape(8, 5)
        return [T.bernoulli(p), T.bernoulli(p, 0.25), T.zeros(8, 5).bernoulli_(p),
                T.zeros(5, 8).t().bernoulli_(p), T.zeros(3, 8, 5, dtype=T.int64).bernoulli_(p[0]),
                T.zeros(8, 5, dtype=T.bool).bernoulli_(0.6)]
    both(torch, 8, run)


@pytest.mark.parametrize("seed", SEEDS)
def test_multinomial(seed, torch):
    def run(T):
        w = T.tensor([[0.1, 2.0, 0.0, 1.0, 3.0, 0.5], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]])
        return [T.multinomial(w, 1), T.multinomial(w, 4), T.multinomial(w[1], 6),
                T.multinomial(w, 7, replacement=True), T.multinomial(w[0], 1, True),
                T.multinomial(w.double(), 3, True), T.multinomial(w[0].double(), 3)]
    both(torch, seed, run)


def test_multinomial_ties_follow_torchs_topk(torch):
    def run(T):
        p = T.tensor([0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0])
        z = T.zeros(200)
        z[[3, 50, 177]] = T.tensor([1.0, 2.0, 3.0])
        sparse = T.rand(3, 100) * (T.rand(3, 100) > 0.7)
        return [T.multinomial(p, 7), T.multinomial(z, 3), T.multinomial(z, 5),
                T.multinomial(z, 200), T.multinomial(sparse, 60),
                T.tensor(list(T.utils.data.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 4,
                                                                 replacement=False)))]
    both(torch, 2, run)


def test_poisson(torch):
    rates = [0.0, 0.5, 3.0, 9.9, 10.0, 42.0, 1e4, 1e7]
    both(torch, 3, lambda T: [T.poisson(T.tensor(rates * 3)),
                              T.poisson(T.tensor(rates, dtype=T.float64))])


# -- nn: initialisation, dropout, default layer parameters ------------------------------------
def _params(module) -> list:
    return [p for _, p in sorted(module.named_parameters())]


LAYERS = [
    lambda nn: nn.Linear(3, 4), lambda nn: nn.Linear(20, 30, bias=False),
    lambda nn: nn.Bilinear(3, 4, 5), lambda nn: nn.Conv1d(2, 4, 3),
    lambda nn: nn.Conv2d(3, 8, (3, 2), groups=1), lambda nn: nn.Conv2d(4, 4, 3, groups=2),
    lambda nn: nn.ConvTranspose2d(3, 2, 3), lambda nn: nn.Embedding(10, 6),
    lambda nn: nn.RNN(4, 5, num_layers=2), lambda nn: nn.LSTM(3, 4, bidirectional=True),
    lambda nn: nn.GRU(3, 6, batch_first=True), lambda nn: nn.LSTMCell(3, 4),
    lambda nn: nn.GRUCell(2, 3), lambda nn: nn.RNNCell(2, 3),
    lambda nn: nn.MultiheadAttention(8, 2), lambda nn: nn.MultiheadAttention(8, 2, kdim=3, vdim=5),
    lambda nn: nn.TransformerEncoderLayer(8, 2, dim_feedforward=16),
    lambda nn: nn.LayerNorm(5), lambda nn: nn.BatchNorm1d(3), lambda nn: nn.PReLU(),
]


@pytest.mark.parametrize("make", LAYERS, ids=range(len(LAYERS)))
def test_default_layer_initialisation(make, torch):
    both(torch, 0, lambda T: _params(make(T.nn)))


def test_init_functions(torch, avx2):
    def run(T):
        init = T.nn.init
        w = lambda *s: T.empty(*s)  # noqa: E731
        return [init.uniform_(w(5, 4), -1, 2), init.normal_(w(30), 1, 3),
                init.xavier_uniform_(w(6, 7)), init.xavier_normal_(w(6, 7), gain=2),
                init.kaiming_uniform_(w(8, 3, 3)), init.kaiming_normal_(w(5, 20), mode="fan_out"),
                init.trunc_normal_(w(40), std=0.5), init.trunc_normal_(w(40), 0, 1, 1.5, 2.5),
                init.sparse_(w(10, 4), 0.3)]
    both(torch, 1, run)


def test_orthogonal_init_draws_as_torch(torch):
    # the QR decomposition (LAPACK) may round differently; the draws and state are the same
    rg.manual_seed(0)
    ours = _np(rg.nn.init.orthogonal_(rg.empty(4, 6)))
    torch.manual_seed(0)
    theirs = _np(torch.nn.init.orthogonal_(torch.empty(4, 6)))
    np.testing.assert_allclose(ours, theirs, atol=1e-6)
    _same(_np(rg.get_rng_state()), _np(torch.get_rng_state()))


@pytest.mark.parametrize("p", [0.2, 0.5, 1.0])
def test_dropout_masks(p, torch):
    def run(T):
        F = T.nn.functional
        x = T.arange(1.0, 61.0).reshape(2, 3, 10)
        x4 = x.reshape(2, 3, 2, 5)
        return [F.dropout(x, p), F.dropout(x.double(), p), F.dropout1d(x, p),
                F.dropout1d(x[0], p), F.dropout2d(x4, p), F.dropout3d(x4.unsqueeze(2), p),
                F.dropout3d(x4, p), F.alpha_dropout(x, p, True),
                F.feature_alpha_dropout(x4, p, True), F.dropout(x.clone(), p, inplace=True),
                T.nn.Dropout(p)(x)]
    both(torch, 11, run)


def test_other_ops_that_draw(torch):
    def run(T):
        F = T.nn.functional
        x = T.linspace(-2, 2, 60).reshape(3, 4, 5)
        y = x.clone()
        return [F.rrelu(x, training=True), F.rrelu(x.double(), 0.1, 0.7, training=True),
                F.rrelu_(y, training=True), y, T.nn.RReLU()(x),
                F.dropout(x.transpose(0, 2), 0.4), F.dropout(x.permute(2, 0, 1), 0.4),
                F.fractional_max_pool2d(x.reshape(1, 3, 4, 5), 2, output_size=(2, 2)),
                T.rand(1)]
    both(torch, 0, run)
    for T in (rg, torch):  # the attention weights' dropout: same draws, values up to rounding
        T.manual_seed(1)
    x = rg.linspace(-2, 2, 60).reshape(3, 4, 5)
    ours = rg.nn.functional.scaled_dot_product_attention(x, x, x, dropout_p=0.3)
    x = torch.linspace(-2, 2, 60).reshape(3, 4, 5)
    theirs = torch.nn.functional.scaled_dot_product_attention(x, x, x, dropout_p=0.3)
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-6, atol=1e-6)
    _same(_np(rg.get_rng_state()), _np(torch.get_rng_state()))


def test_dropout_graph_matches_torch(torch):
    for T in (rg, torch):
        T.manual_seed(0)
    x = rg.ones(4, 3, requires_grad=True)
    tx = torch.ones(4, 3, requires_grad=True)
    for f in ("dropout", "alpha_dropout", "dropout1d"):
        kw = {"training": True}
        y = getattr(rg.nn.functional, f)(x, 0.5, **kw)
        ty = getattr(torch.nn.functional, f)(tx, 0.5, **kw)
        assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
        y.sum().backward()
        ty.sum().backward()
        _same(_np(x.grad), _np(tx.grad))
        x.grad = None
        tx.grad = None


# -- data loading ------------------------------------------------------------------------------
def test_shuffling_and_random_split(torch):
    def run(T):
        data = T.utils.data
        ds = data.TensorDataset(T.arange(23))
        g = T.Generator().manual_seed(3)
        out = [b[0] for b in data.DataLoader(ds, batch_size=5, shuffle=True)]
        out += [b[0] for b in data.DataLoader(ds, batch_size=4, shuffle=True, generator=g)]
        out.append(T.tensor(list(data.RandomSampler(range(7), replacement=True,
                                                    num_samples=40))))
        out.append(T.tensor(list(data.RandomSampler(range(5), num_samples=12))))
        out.append(T.tensor(list(data.SubsetRandomSampler([3, 5, 7, 9]))))
        out.append(T.tensor(list(data.WeightedRandomSampler([0.1, 0.5, 2.0], 9))))
        parts = data.random_split(range(10), [0.3, 0.7])
        out += [T.tensor(list(p)) for p in parts]
        return out
    both(torch, 0, run)


def test_vectorised_swaps_match_the_loop():
    from retrograd import _dists

    rng = np.random.default_rng(5)
    for n in list(range(2, 80)) + [257, 1000]:
        z = rng.integers(0, 2**32, n - 1).astype(np.uint64) % np.arange(n, 1, -1, dtype=np.uint64)
        _same(_dists._apply_swaps(z), _dists._swap_loop(z, n))


def test_mantissa_rounding_helpers():
    from retrograd._rng_math import fma32, fma64

    a = np.float32(1 + 2**-23)
    assert fma32(a, a, np.float32(-1)) == np.float32(2**-22 + 2**-46)
    x = 1 + 2**-52
    assert fma64(x, x, -1.0) == 2**-51 + 2**-104
    assert math.isnan(fma64(np.inf, 0.0, 1.0))


def test_torch_random_module(torch):
    names = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
             "manual_seed", "seed", "set_rng_state", "thread_safe_generator"]
    assert all(hasattr(rg.random, n) and hasattr(torch.random, n) for n in names)

    def run(T):
        T.random.manual_seed(4)
        with T.random.fork_rng():
            inside = T.randn(3)
        return [inside, T.randn(3), T.tensor(T.random.initial_seed())]
    both(torch, 0, run)
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        with rg.random.fork_rng(devices=[0]):
            pass
