"""Real models, end to end: retrograd trains them step for step like PyTorch.

Each model is written once, as ordinary PyTorch code, against a library ``lib`` (torch or
retrograd). Both copies start from the same weights (torch's initialisation, copied through
``state_dict``), see the same batches in float64, and their per-step losses must agree to 1e-4
relative (in practice they agree to rounding), as must the final parameters.

The models: an MLP classifier (Sequential, DataLoader, Adam), a LeNet-style CNN (Conv2d,
MaxPool2d, Flatten, SGD with momentum and weight decay, StepLR), a one-layer LSTM language model
(Embedding, LSTM with truncated backpropagation through time, clip_grad_norm_) and a two-layer
GPT-style transformer (token and position embeddings, causal self-attention by ``masked_fill``
in one layer and ``scaled_dot_product_attention`` in the other, GELU MLP, LayerNorm, weight
tying, AdamW with decay and no-decay groups, clip_grad_norm_, a cosine schedule with warm-up
through LambdaLR, and ``multinomial`` sampling under ``no_grad``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd as rt

torch = pytest.importorskip("torch")

LIBS = {"torch": torch, "retrograd": rt}
RTOL = 1e-4


def twin(make, *args, **kwargs):
    """The model built with torch and with retrograd, in float64, retrograd's weights torch's."""
    torch.manual_seed(0)
    t_model = make(torch, *args, **kwargs).double()
    r_model = make(rt, *args, **kwargs).double()
    t_state = t_model.state_dict()
    assert list(r_model.state_dict()) == list(t_state)
    r_model.load_state_dict({k: rt.tensor(v.detach().numpy()) for k, v in t_state.items()})
    return {"torch": t_model, "retrograd": r_model}


def assert_same_params(models, rtol=1e-6, atol=1e-9):
    t_params = dict(models["torch"].named_parameters())
    r_params = dict(models["retrograd"].named_parameters())
    assert list(r_params) == list(t_params)
    for name, p in t_params.items():
        np.testing.assert_allclose(r_params[name].detach().numpy(), p.detach().numpy(),
                                   rtol=rtol, atol=atol, err_msg=name)


def assert_same_curves(curves, rtol=RTOL):
    t, r = np.asarray(curves["torch"]), np.asarray(curves["retrograd"])
    assert t.shape == r.shape and np.all(np.isfinite(r))
    np.testing.assert_allclose(r, t, rtol=rtol, atol=0)


# -- an MLP classifier -----------------------------------------------------------------------


def make_mlp(lib, n_in=20, hidden=32, n_out=3):
    nn = lib.nn
    return nn.Sequential(
        nn.Linear(n_in, hidden), nn.ReLU(),
        nn.Linear(hidden, hidden), nn.ReLU(),
        nn.Linear(hidden, n_out),
    )


def test_mlp_classifier_matches_torch():
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(3, 20)) * 2
    labels = rng.integers(0, 3, size=160)
    feats = centers[labels] + rng.normal(size=(160, 20))
    models = twin(make_mlp)
    losses, accs = {}, {}
    for name, lib in LIBS.items():
        model = models[name]
        data = lib.utils.data.TensorDataset(lib.tensor(feats), lib.tensor(labels))
        loader = lib.utils.data.DataLoader(data, batch_size=16)
        opt = lib.optim.Adam(model.parameters(), lr=1e-2)
        curve = []
        model.train()
        for x, y in loader:
            logits = model(x)
            loss = lib.nn.functional.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            curve.append(loss.item())
        model.eval()
        with lib.no_grad():
            pred = model(lib.tensor(feats)).argmax(dim=1)
        accs[name] = (pred == lib.tensor(labels)).double().mean().item()
        losses[name] = curve
    assert len(losses["torch"]) == 10
    assert_same_curves(losses)
    assert_same_params(models)
    assert accs["retrograd"] == pytest.approx(accs["torch"])
    assert losses["retrograd"][-1] < losses["retrograd"][0]


# -- a LeNet-style CNN -----------------------------------------------------------------------


def make_lenet(lib, classes=10):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 12x12 -> 6x6
        nn.Conv2d(4, 8, 3), nn.ReLU(), nn.MaxPool2d(2),              # 6x6 -> 4x4 -> 2x2
        nn.Flatten(),
        nn.Linear(8 * 2 * 2, 16), nn.ReLU(),
        nn.Linear(16, classes),
    )


def test_lenet_cnn_matches_torch():
    rng = np.random.default_rng(1)
    steps, batch = 10, 8
    images = rng.normal(size=(steps, batch, 1, 12, 12))
    labels = rng.integers(0, 10, size=(steps, batch))
    models = twin(make_lenet)
    losses, lrs = {}, {}
    for name, lib in LIBS.items():
        model = models[name]
        opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
        curve, lr_curve = [], []
        for x, y in zip(images, labels):
            opt.zero_grad(set_to_none=True)
            loss = lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            opt.step()
            sched.step()
            curve.append(loss.item())
            lr_curve.append(sched.get_last_lr()[0])
        losses[name], lrs[name] = curve, lr_curve
    assert_same_curves(losses)
    assert lrs["retrograd"] == pytest.approx(lrs["torch"])
    assert_same_params(models)


# -- a one-layer LSTM language model ---------------------------------------------------------


def make_lstm_lm(lib, vocab=20, emb=16, hidden=24):
    nn = lib.nn

    class LSTMLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, emb)
            self.lstm = nn.LSTM(emb, hidden, num_layers=1, batch_first=True)
            self.head = nn.Linear(hidden, vocab)

        def forward(self, tokens, state=None):
            out, state = self.lstm(self.embed(tokens), state)
            return self.head(out), state

    return LSTMLM()


def test_lstm_language_model_matches_torch():
    vocab, batch, seq, steps = 20, 4, 10, 12
    rng = np.random.default_rng(2)
    # A stream with structure to learn: each token mostly follows from the previous one.
    stream = np.empty((batch, seq * steps + 1), np.int64)
    stream[:, 0] = rng.integers(0, vocab, size=batch)
    for t in range(1, stream.shape[1]):
        jump = rng.random(batch) < 0.2
        stream[:, t] = np.where(jump, rng.integers(0, vocab, size=batch),
                                (stream[:, t - 1] * 3 + 1) % vocab)
    models = twin(make_lstm_lm)
    losses, norms = {}, {}
    for name, lib in LIBS.items():
        model = models[name]
        F = lib.nn.functional
        opt = lib.optim.SGD(model.parameters(), lr=0.5)
        state = None
        curve, norm_curve = [], []
        for i in range(steps):
            x = lib.tensor(stream[:, i * seq:(i + 1) * seq])
            y = lib.tensor(stream[:, i * seq + 1:(i + 1) * seq + 1])
            if state is not None:   # truncated backpropagation through time
                state = tuple(s.detach() for s in state)
            logits, state = model(x, state)
            loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
            model.zero_grad()
            loss.backward()
            norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
            curve.append(loss.item())
            norm_curve.append(float(norm))
        losses[name], norms[name] = curve, norm_curve
        assert tuple(state[0].shape) == (1, batch, 24) and tuple(state[1].shape) == (1, batch, 24)
    assert_same_curves(losses)
    assert_same_curves(norms)
    assert_same_params(models)


# -- a two-layer GPT-style transformer -------------------------------------------------------


def make_gpt(lib, vocab=16, block_size=16, n_embd=32, n_head=4, n_layer=2):
    nn, F = lib.nn, lib.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self, use_sdpa):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            self.use_sdpa = use_sdpa
            self.register_buffer(
                "bias", lib.tril(lib.ones(block_size, block_size)).view(1, 1, block_size,
                                                                        block_size))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
            k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
            v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
            if self.use_sdpa:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0,
                                                   is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
                att = F.softmax(att, dim=-1)
                y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(n_embd, 4 * n_embd)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * n_embd, n_embd)

        def forward(self, x):
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self, use_sdpa):
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd)
            self.attn = CausalSelfAttention(use_sdpa)
            self.ln_2 = nn.LayerNorm(n_embd)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab, n_embd),
                wpe=nn.Embedding(block_size, n_embd),
                h=nn.ModuleList([Block(use_sdpa=i % 2 == 1) for i in range(n_layer)]),
                ln_f=nn.LayerNorm(n_embd),
            ))
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.lm_head.weight = self.transformer.wte.weight   # weight tying

        def forward(self, idx, targets=None):
            b, t = idx.size()
            pos = lib.arange(0, t, dtype=lib.long)
            x = self.transformer.wte(idx) + self.transformer.wpe(pos)
            for block in self.transformer.h:
                x = block(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
            return logits, loss

        @lib.no_grad()
        def generate(self, idx, max_new_tokens, temperature=1.0):
            for _ in range(max_new_tokens):
                logits, _ = self(idx[:, -block_size:])
                probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)
                idx = lib.cat((idx, lib.multinomial(probs, num_samples=1)), dim=1)
            return idx

    return GPT()


def configure_optimizer(lib, model, lr, weight_decay):
    params = {n: p for n, p in model.named_parameters() if p.requires_grad}
    decay = [p for p in params.values() if p.dim() >= 2]
    no_decay = [p for p in params.values() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    return lib.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95)), len(decay), len(no_decay)


def cosine_with_warmup(warmup, total):
    def factor(step):
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, total - warmup)
        return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress))
    return factor


def test_gpt_matches_torch():
    vocab, block, batch, steps = 16, 16, 4, 12
    rng = np.random.default_rng(3)
    # Arithmetic-like sequences: runs counting up by a random stride, modulo the vocabulary.
    start = rng.integers(0, vocab, size=(steps, batch, 1))
    stride = rng.integers(1, 4, size=(steps, batch, 1))
    seqs = (start + stride * np.arange(block + 1)) % vocab
    models = twin(make_gpt)
    losses, norms, lrs = {}, {}, {}
    for name, lib in LIBS.items():
        model = models[name]
        assert model.lm_head.weight is model.transformer.wte.weight
        opt, n_decay, n_no_decay = configure_optimizer(lib, model, 3e-3, 0.1)
        assert (n_decay, n_no_decay) == (10, 18)   # the tied matrix counted once
        sched = lib.optim.lr_scheduler.LambdaLR(opt, cosine_with_warmup(3, steps))
        curve, norm_curve, lr_curve = [], [], []
        model.train()
        for i in range(steps):
            x, y = lib.tensor(seqs[i, :, :-1]), lib.tensor(seqs[i, :, 1:])
            _, loss = model(x, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            curve.append(loss.item())
            norm_curve.append(norm.item())
            lr_curve.append(sched.get_last_lr()[0])
        losses[name], norms[name], lrs[name] = curve, norm_curve, lr_curve
        model.eval()
        lib.manual_seed(0)
        out = model.generate(lib.tensor([[1, 2], [3, 4]]), max_new_tokens=5)
        assert tuple(out.shape) == (2, 7) and out.dtype == lib.int64
        assert not out.requires_grad
        tokens = out.numpy()
        assert tokens.min() >= 0 and tokens.max() < vocab
        assert (tokens[:, :2] == [[1, 2], [3, 4]]).all()
    assert_same_curves(losses)
    assert_same_curves(norms)
    assert lrs["retrograd"] == pytest.approx(lrs["torch"])
    assert_same_params(models)
    assert losses["retrograd"][-1] < losses["retrograd"][0]
    # The eval-mode forward of the trained models agree as well.
    x = seqs[0, :, :-1]
    with torch.no_grad():
        t_logits = models["torch"](torch.tensor(x))[0].numpy()
    with rt.no_grad():
        r_logits = models["retrograd"](rt.tensor(x))[0].numpy()
    np.testing.assert_allclose(r_logits, t_logits, rtol=1e-6, atol=1e-9)


# -- the benchmark's hand-written NumPy steps are correct (bench/bench_train.py) -----------


def test_bench_numpy_floor_gradients():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "bench" / "bench_train.py"
    if not path.exists():
        pytest.skip("bench/ is not part of this tree")
    spec = importlib.util.spec_from_file_location("bench_train", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    for work in bench.WORKLOADS:
        bench.check_numpy_grads(work)
