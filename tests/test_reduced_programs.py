"""Mixed-precision training programs run unchanged under retrograd and PyTorch (issue 10).

Each program is a function of the library module (``import retrograd as torch`` style): a small
model trained a few steps with ``autocast`` (bfloat16 or float16) and ``GradScaler``,
``unscale_`` + ``clip_grad_norm_``, a bfloat16 checkpoint saved and reloaded mid-run; or trained
in pure bfloat16 (``model.to(torch.bfloat16)``); then run in ``.half()`` for inference. Every
step's loss, gradient norm, output and gradient dtypes and the scaler's scale are compared with
PyTorch's (torch on one thread: its reduced-precision kernels split their rounded sums over
threads). Skipped without torch."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import retrograd as rg


@pytest.fixture
def one_thread(torch):
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _models(lib, name):
    nn = lib.nn

    class Classifier(nn.Module):
        """A recurrent or attention encoder, its last step (or mean) classified."""

        def __init__(self, kind):
            super().__init__()
            self.kind = kind
            if kind == "enc":
                self.body = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
            elif kind == "enc_tm":
                self.body = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0)
            else:
                self.body = getattr(nn, kind.upper())(16, 16, batch_first=True)
            self.head = nn.Linear(16, 4)

        def forward(self, x):
            if self.kind == "enc":
                return self.head(self.body(x).mean(1))
            if self.kind == "enc_tm":
                return self.head(self.body(x.transpose(0, 1)).mean(0))
            return self.head(self.body(x)[0][:, -1])

    class Bag(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(40, 16)
            self.head = nn.Linear(16, 4)

        def forward(self, x):
            return self.head(self.emb(x).mean(1))

    lib.manual_seed(0)
    if name == "mlp":
        model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 4))
        x = lib.randn(5, 8, 12)
    elif name == "cnn":
        model = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(),
                              nn.Dropout(0.25), nn.MaxPool2d(2), nn.Flatten(),
                              nn.Linear(6 * 3 * 3, 4))
        x = lib.randn(5, 4, 3, 6, 6)
    elif name == "emb":
        model = Bag()
        x = lib.randint(0, 40, (5, 8, 6))
    else:
        model = Classifier(name)
        x = lib.randn(5, 4, 5, 16)
    return model, x, lib.randint(0, 4, (5, x.shape[1]))


def _train(lib, name, mode, opt_name):
    """Per-step records of a training run; ``mode``: "bfloat16"/"float16" autocast, "pure"."""
    model, x, y = _models(lib, name)
    ac = None if mode == "pure" else getattr(lib, mode)
    if mode == "pure":
        model = model.to(lib.bfloat16)
        x = x.to(lib.bfloat16) if x.is_floating_point() else x
    opt = {"adamw": lambda p: lib.optim.AdamW(p, lr=1e-2, weight_decay=0.1),
           "adam": lambda p: lib.optim.Adam(p, lr=1e-2),
           "sgd": lambda p: lib.optim.SGD(p, lr=0.1, momentum=0.9)}[opt_name](model.parameters())
    # (growing every 2 steps, float16's scaled gradients overflow within a few steps: the
    # scaler skips those steps and backs off)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 16, growth_interval=2,
                                enabled=ac is not None)
    recs = []
    for step in range(len(x)):
        opt.zero_grad()
        if ac is None:
            out = model(x[step])
            loss = lib.nn.functional.cross_entropy(out, y[step])
        else:
            with lib.autocast("cpu", dtype=ac):
                out = model(x[step])
                loss = lib.nn.functional.cross_entropy(out, y[step])
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        dts = sorted({str(p.grad.dtype).split(".")[1] for p in model.parameters()
                      if p.grad is not None})
        recs.append((str(out.dtype).split(".")[1], str(loss.dtype).split(".")[1], dts,
                     loss.item(), norm.item(), scaler.get_scale() if ac is not None else 0.0))
        if step == 1:  # a bfloat16 checkpoint, saved and loaded back mid-run
            buf = io.BytesIO()
            lib.save({k: v.to(lib.bfloat16) if v.is_floating_point() else v
                      for k, v in model.state_dict().items()}, buf)
            buf.seek(0)
            model.load_state_dict(lib.load(buf))
    model.eval()
    with lib.no_grad():
        half = model.half()
        out = half(x[0].half() if x.is_floating_point() else x[0])
    return recs, (str(out.dtype).split(".")[1], np.asarray(out.float().tolist()))


def _compare(name, mode, opt_name, torch, rtol):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine, want = _train(rg, name, mode, opt_name), _train(torch, name, mode, opt_name)
    for step, (a, b) in enumerate(zip(mine[0], want[0])):
        where = (name, mode, opt_name, step)
        assert a[:3] == b[:3], where
        assert a[5] == b[5], where  # the scaler's scale: the same overflows skipped
        np.testing.assert_allclose(a[3:5], b[3:5], rtol=rtol, err_msg=str(where))
    assert mine[1][0] == want[1][0]
    np.testing.assert_allclose(mine[1][1], want[1][1], rtol=0.05, atol=0.02)


@pytest.mark.parametrize("name,mode,opt_name", [
    ("mlp", "bfloat16", "adamw"), ("mlp", "float16", "sgd"), ("mlp", "pure", "adam"),
    ("cnn", "bfloat16", "adamw"), ("cnn", "float16", "sgd"), ("cnn", "pure", "sgd"),
    ("emb", "bfloat16", "adam"), ("emb", "pure", "adamw"),
    ("gru", "bfloat16", "adamw"), ("gru", "float16", "sgd"), ("lstm", "pure", "adamw"),
])
def test_amp_programs_match_torch(torch, one_thread, name, mode, opt_name):
    # Bit-level kernels agree: losses and gradient norms to float32 noise.
    _compare(name, mode, opt_name, torch, rtol=2e-3)


@pytest.mark.parametrize("name,mode", [("enc", "bfloat16"), ("enc_tm", "float16"),
                                       ("enc", "pure")])
def test_amp_transformer_programs_match_torch(torch, one_thread, name, mode):
    # A layer norm's mean can sit on a bfloat16 tie that PyTorch's Welford sum breaks either
    # way: the encoder agrees to the dtype's precision rather than the bit.
    _compare(name, mode, "adamw", torch, rtol=2e-2)
