"""MultiheadAttention, TransformerEncoderLayer and TransformerEncoder against PyTorch."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import retrograd as rt
from retrograd.autograd import gradcheck, gradgradcheck

from ..oracle import copy_state, run_both

TOL = {"float32": dict(rtol=2e-4, atol=2e-5), "float64": dict(rtol=1e-9, atol=1e-11)}
E, L, S, N = 8, 4, 5, 3

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True",
                                        "ignore:Support for mismatched",
                                        "ignore:The PyTorch API of nested tensors")


def _load(tm, rm, dtype: str):
    for m in (tm, rm):
        m.double() if dtype == "float64" else m.float()
    copy_state(tm, rm)
    assert list(rm.state_dict()) == list(tm.state_dict())
    tm.zero_grad()
    rm.zero_grad()


def _compare(torch, tm, rm, inputs, kwargs=None, dtype="float64", same=()):
    """Call both modules with the same inputs (``same`` lists positions that reuse input 0,
    as self-attention does): the oracle compares every output and every gradient."""
    _load(tm, rm, dtype)
    kwargs = kwargs or {}

    def call(m, lib):
        kw = {k: lib.tensor(v if v.dtype == bool else v.astype(dtype))
              if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}

        def f(*xs):
            return m(*[xs[0] if i in same else x for i, x in enumerate(xs)], **kw)
        return f

    run_both(torch, call(rm, rt), call(tm, torch), [x.astype(dtype) for x in inputs],
             tol=TOL[dtype], seed=0, modules=(rm, tm), grad_fn=False)  # module internals differ


R = np.random.default_rng(0)
KPM = np.zeros((N, S), dtype=bool)
KPM[0, -2:] = True
AM = R.standard_normal((L, S))
BAM = R.random((L, S)) > 0.8
BAM[:, 0] = False

MHA_CONFIGS = [{}, dict(bias=False), dict(add_bias_kv=True), dict(add_zero_attn=True),
               dict(kdim=6, vdim=7)]
MASKS = [{}, dict(need_weights=False), dict(key_padding_mask=KPM), dict(attn_mask=AM),
         dict(attn_mask=BAM, key_padding_mask=KPM, need_weights=False),
         dict(average_attn_weights=False, attn_mask=BAM)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("cfg", MHA_CONFIGS, ids=lambda c: ",".join(c) or "default")
def test_mha_matches_torch(torch, cfg, batch_first, dtype):
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(E, 2, batch_first=batch_first, **cfg).eval()
    rm = rt.nn.MultiheadAttention(E, 2, batch_first=batch_first, **cfg).eval()
    assert repr(rm) == repr(tm)

    def sh(a, b, c):
        return (b, a, c) if batch_first else (a, b, c)

    q = R.standard_normal(sh(L, N, E))
    k = R.standard_normal(sh(S, N, cfg.get("kdim", E)))
    v = R.standard_normal(sh(S, N, cfg.get("vdim", E)))
    for kw in MASKS:
        _compare(torch, tm, rm, [q, k, v], kw, dtype)


@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_self_attention_and_causal(torch, batch_first):
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(E, 4, batch_first=batch_first)
    rm = rt.nn.MultiheadAttention(E, 4, batch_first=batch_first)
    x = R.standard_normal((N, L, E) if batch_first else (L, N, E))
    cm = np.triu(np.full((L, L), -np.inf), 1)
    for kw in ({}, dict(attn_mask=cm), dict(attn_mask=cm, is_causal=True, need_weights=False),
               dict(key_padding_mask=KPM[:, :L])):
        _compare(torch, tm, rm, [x, x, x], kw, same=(1, 2))
    # key is value (encoder-decoder attention)
    mem = R.standard_normal((N, S, E) if batch_first else (S, N, E))
    _compare(torch, tm, rm, [x, mem, mem], {}, same=())


def test_mha_unbatched(torch):
    torch.manual_seed(0)
    tm, rm = torch.nn.MultiheadAttention(E, 2), rt.nn.MultiheadAttention(E, 2)
    q, k, v = (R.standard_normal(s) for s in ((L, E), (S, E), (S, E)))
    _compare(torch, tm, rm, [q, k, v], dict(key_padding_mask=KPM[0]))
    _compare(torch, tm, rm, [q, k, v], dict(attn_mask=R.standard_normal((2, L, S))))


def test_mha_init_and_state_dict(torch):
    for kw in ({}, dict(add_bias_kv=True, kdim=3, vdim=5), dict(bias=False)):
        tm, rm = torch.nn.MultiheadAttention(16, 4, **kw), rt.nn.MultiheadAttention(16, 4, **kw)
        assert list(rm.state_dict()) == list(tm.state_dict())
        assert [n for n, _ in rm.named_parameters()] == [n for n, _ in tm.named_parameters()]
        assert repr(rm) == repr(tm)
    rt.manual_seed(0)
    m = rt.nn.MultiheadAttention(64, 4)
    w = m.in_proj_weight.detach().numpy()
    bound = math.sqrt(6.0 / (64 + 3 * 64))    # xavier_uniform_ on (3E, E)
    assert w.min() >= -bound and w.max() <= bound and w.std() > 0.5 * bound / math.sqrt(3)
    assert not m.in_proj_bias.detach().numpy().any()
    assert not m.out_proj.bias.detach().numpy().any()
    wo = m.out_proj.weight.detach().numpy()
    assert np.abs(wo).max() <= 1 / math.sqrt(64)
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert isinstance(m.out_proj, rt.nn.Linear)


def test_mha_errors_match_torch(torch):
    cases = [
        lambda nn, T: nn.MultiheadAttention(7, 2),
        lambda nn, T: nn.MultiheadAttention(0, 2),
        lambda nn, T: nn.MultiheadAttention(8, 2)(T.randn(4, 3, 8), T.randn(5, 3, 8),
                                                  T.randn(5, 3, 8), attn_mask=T.randn(4, 4)),
        lambda nn, T: nn.MultiheadAttention(8, 2)(T.randn(4, 3, 8), T.randn(5, 3, 8),
                                                  T.randn(5, 3, 8), attn_mask=T.randn(5, 4, 5)),
        lambda nn, T: nn.MultiheadAttention(8, 2)(T.randn(4, 3, 8), T.randn(5, 3, 8),
                                                  T.randn(5, 3, 8), need_weights=False,
                                                  is_causal=True),
    ]
    for case in cases:
        got = []
        for lib in (torch, rt):
            try:
                case(lib.nn, lib)
                got.append(None)
            except Exception as e:  # noqa: BLE001
                got.append((type(e).__name__, str(e).replace("torch.Size", "Size")
                            .replace("retrograd.Size", "Size")))
        assert got[0] is not None and got[1] == got[0]


def test_mha_dropout_train_vs_eval():
    rt.manual_seed(0)
    m = rt.nn.MultiheadAttention(E, 2, dropout=0.5)
    x = rt.randn(L, N, E)
    a = m(x, x, x)[0]
    b = m(x, x, x)[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    m.eval()
    np.testing.assert_array_equal(m(x, x, x)[0].detach().numpy(),
                                  m(x, x, x)[0].detach().numpy())


LAYER_CONFIGS = [dict(), dict(batch_first=True), dict(norm_first=True, activation="gelu"),
                 dict(bias=False), dict(layer_norm_eps=1e-3, dropout=0.0)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cfg", LAYER_CONFIGS, ids=lambda c: ",".join(c) or "default")
def test_encoder_layer_matches_torch(torch, cfg, dtype):
    torch.manual_seed(0)
    tm = torch.nn.TransformerEncoderLayer(E, 2, 16, **cfg)
    rm = rt.nn.TransformerEncoderLayer(E, 2, 16, **cfg)
    assert repr(rm) == repr(tm)
    assert list(rm.state_dict()) == list(tm.state_dict())
    if cfg.get("dropout") != 0.0:
        tm.eval()
        rm.eval()
    x = R.standard_normal((N, L, E) if cfg.get("batch_first") else (L, N, E))
    kpm = np.zeros((N, L), dtype=bool)
    kpm[1, -1] = True
    cm = np.triu(np.full((L, L), -np.inf), 1)
    for kw in ({}, dict(src_key_padding_mask=kpm), dict(src_mask=cm, is_causal=True),
               dict(src_mask=cm, src_key_padding_mask=kpm)):
        _compare(torch, tm, rm, [x], kw, dtype)


def test_encoder_layer_callable_activation_and_errors(torch):
    torch.manual_seed(0)
    tm = torch.nn.TransformerEncoderLayer(E, 2, 16, activation=torch.nn.GELU()).eval()
    rm = rt.nn.TransformerEncoderLayer(E, 2, 16, activation=rt.nn.GELU()).eval()
    assert repr(rm) == repr(tm)
    _load(tm, rm, "float64")
    fn = rt.nn.TransformerEncoderLayer(E, 2, 16, activation=lambda x: x * 2)
    assert fn.activation_relu_or_gelu == 0
    x = R.standard_normal((L, N, E))
    np.testing.assert_allclose(rm(rt.tensor(x)).detach().numpy(),
                               tm(torch.tensor(x)).detach().numpy(), rtol=1e-9, atol=1e-11)
    for lib in (torch, rt):
        with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
            lib.nn.TransformerEncoderLayer(E, 2, activation="tanh")


@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_matches_torch(torch, batch_first):
    torch.manual_seed(0)
    tl = torch.nn.TransformerEncoderLayer(E, 2, 16, dropout=0.0, batch_first=batch_first)
    rl = rt.nn.TransformerEncoderLayer(E, 2, 16, dropout=0.0, batch_first=batch_first)
    te = torch.nn.TransformerEncoder(tl, 2, norm=torch.nn.LayerNorm(E))
    re = rt.nn.TransformerEncoder(rl, 2, norm=rt.nn.LayerNorm(E))
    assert repr(re) == repr(te)
    x = R.standard_normal((N, L, E) if batch_first else (L, N, E))
    cm = np.triu(np.full((L, L), -np.inf), 1)
    kpm = np.zeros((N, L), dtype=bool)
    kpm[0, -1] = True
    for kw in ({}, dict(mask=cm), dict(mask=cm, is_causal=True), dict(src_key_padding_mask=kpm)):
        _compare(torch, te, re, [x], kw)


def test_encoder_nested_fast_path_zeros_padding(torch):
    """PyTorch's inference fast path returns zeros at padded positions; so does retrograd."""
    torch.manual_seed(0)
    tl = torch.nn.TransformerEncoderLayer(E, 2, 16, batch_first=True)
    rl = rt.nn.TransformerEncoderLayer(E, 2, 16, batch_first=True)
    te, re = torch.nn.TransformerEncoder(tl, 2).eval(), rt.nn.TransformerEncoder(rl, 2).eval()
    _load(te, re, "float32")
    x = R.standard_normal((N, L, E)).astype(np.float32)
    kpm = np.zeros((N, L), dtype=bool)
    kpm[0, -1] = True
    with torch.no_grad():
        a = te(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm))
    with rt.no_grad():
        b = re(rt.tensor(x), src_key_padding_mask=rt.tensor(kpm))
    np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-4, atol=1e-5)
    assert not b.numpy()[0, -1].any()


def test_encoder_nested_tensor_warning(torch):
    for kw in (dict(), dict(batch_first=True, norm_first=True),
               dict(batch_first=True, bias=False), dict(batch_first=True)):
        msgs = []
        for lib in (torch, rt):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, 2, 16, **kw), 1)
            msgs.append([str(m.message) for m in w if "nested" in str(m.message)])
        assert msgs[0] == msgs[1]


def test_encoder_layer_gradgradcheck():
    rt.manual_seed(0)
    layer = rt.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0).double()
    x = rt.randn(3, 1, 4, dtype=rt.float64, requires_grad=True)
    cm = rt.triu(rt.full((3, 3), float("-inf"), dtype=rt.float64), diagonal=1)
    assert gradcheck(lambda x: layer(x, src_mask=cm, is_causal=True), (x,))
    assert gradgradcheck(lambda x: layer(x, src_mask=cm, is_causal=True), (x,))


DECODER_CASES = [(cfg, "float64") for cfg in LAYER_CONFIGS] + [({}, "float32")]


@pytest.mark.parametrize("cfg,dtype", DECODER_CASES,
                         ids=[(",".join(c) or "default") + "-" + d for c, d in DECODER_CASES])
def test_decoder_layer_matches_torch(torch, cfg, dtype):
    torch.manual_seed(0)
    tm = torch.nn.TransformerDecoderLayer(E, 2, 16, **cfg)
    rm = rt.nn.TransformerDecoderLayer(E, 2, 16, **cfg)
    assert repr(rm) == repr(tm)
    assert list(rm.state_dict()) == list(tm.state_dict())
    if cfg.get("dropout") != 0.0:
        tm.eval()
        rm.eval()
    bf = cfg.get("batch_first")
    tgt = R.standard_normal((N, L, E) if bf else (L, N, E))
    mem = R.standard_normal((N, S, E) if bf else (S, N, E))
    kpm = np.zeros((N, L), dtype=bool)
    kpm[1, -1] = True
    cm = np.triu(np.full((L, L), -np.inf), 1)
    for kw in (dict(tgt_key_padding_mask=kpm, memory_key_padding_mask=KPM),
               dict(tgt_mask=cm, tgt_is_causal=True, memory_mask=BAM)):
        _compare(torch, tm, rm, [tgt, mem], kw, dtype)


@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_matches_torch(torch, batch_first):
    torch.manual_seed(0)
    tl = torch.nn.TransformerDecoderLayer(E, 2, 16, dropout=0.0, batch_first=batch_first)
    rl = rt.nn.TransformerDecoderLayer(E, 2, 16, dropout=0.0, batch_first=batch_first)
    td = torch.nn.TransformerDecoder(tl, 2, norm=torch.nn.LayerNorm(E))
    rd = rt.nn.TransformerDecoder(rl, 2, norm=rt.nn.LayerNorm(E))
    assert repr(rd) == repr(td)
    assert list(rd.state_dict()) == list(td.state_dict())
    tgt = R.standard_normal((N, L, E) if batch_first else (L, N, E))
    mem = R.standard_normal((N, S, E) if batch_first else (S, N, E))
    cm = np.triu(np.full((L, L), -np.inf), 1)
    _compare(torch, td, rd, [tgt, mem], dict(tgt_mask=cm, memory_key_padding_mask=KPM))
    # unbatched
    one = (lambda a: a[0]) if batch_first else (lambda a: a[:, 0])
    _compare(torch, td, rd, [one(tgt), one(mem)], dict(tgt_mask=cm))


@pytest.mark.parametrize("cfg", [dict(), dict(batch_first=True, norm_first=True, bias=False)],
                         ids=["default", "bf_normfirst_nobias"])
def test_transformer_matches_torch(torch, cfg):
    kw = dict(d_model=E, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
              dim_feedforward=16, dropout=0.0, **cfg)
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        tm = torch.nn.Transformer(**kw)
    with warnings.catch_warnings(record=True) as rw:
        warnings.simplefilter("always")
        rm = rt.nn.Transformer(**kw)
    assert [str(w.message) for w in rw] == [str(w.message) for w in tw]
    assert repr(rm) == repr(tm)
    assert list(rm.state_dict()) == list(tm.state_dict())
    assert (rm.d_model, rm.nhead, rm.batch_first) == (tm.d_model, tm.nhead, tm.batch_first)
    bf = cfg.get("batch_first")
    src = R.standard_normal((N, S, E) if bf else (S, N, E))
    tgt = R.standard_normal((N, L, E) if bf else (L, N, E))
    cm = rt.nn.Transformer.generate_square_subsequent_mask(L).numpy().astype(np.float64)
    np.testing.assert_array_equal(cm, torch.nn.Transformer.generate_square_subsequent_mask(L))
    for call_kw in ({}, dict(tgt_mask=cm, src_key_padding_mask=KPM,
                             memory_key_padding_mask=KPM)):
        _compare(torch, tm, rm, [src, tgt], call_kw)


def test_transformer_init_custom_and_errors(torch):
    rt.manual_seed(0)
    m = rt.nn.Transformer(16, 2, 1, 1, 32)
    w = m.decoder.layers[0].linear1.weight.detach().numpy()   # xavier_uniform_ on (32, 16)
    bound = math.sqrt(6.0 / (16 + 32))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert not m.decoder.layers[0].multihead_attn.in_proj_bias.detach().numpy().any()
    enc, dec = rt.nn.Identity(), rt.nn.Identity()
    custom = rt.nn.Transformer(8, 2, custom_encoder=enc, custom_decoder=rt.nn.Module())
    assert custom.encoder is enc and dec is not custom.decoder
    cases = [
        lambda lib: lib.nn.Transformer(8, 2, 1, 1, 8)(lib.randn(5, 3, 8), lib.randn(4, 2, 8)),
        lambda lib: lib.nn.Transformer(8, 2, 1, 1, 8)(lib.randn(5, 3, 6), lib.randn(4, 3, 6)),
    ]
    for case in cases:
        msgs = []
        for lib in (torch, rt):
            with pytest.raises(RuntimeError) as e:
                case(lib)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


def test_decoder_layer_gradgradcheck():
    rt.manual_seed(0)
    layer = rt.nn.TransformerDecoderLayer(2, 1, 3, dropout=0.0).double()
    x = rt.randn(2, 1, 2, dtype=rt.float64, requires_grad=True)
    mem = rt.randn(2, 1, 2, dtype=rt.float64, requires_grad=True)
    assert gradcheck(lambda x, m: layer(x, m), (x, mem))
    assert gradgradcheck(lambda x, m: layer(x, m), (x, mem))
