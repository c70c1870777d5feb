"""``retrograd.utils.summary``: one row per module, parameter totals and saved bytes."""

import retrograd as torch
from retrograd import nn


def test_summary_rows_and_totals():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Sequential(nn.Linear(8, 2), nn.ReLU()))
    model[0].bias.requires_grad_(False)
    s = torch.utils.summary(model, torch.randn(5, 4))
    assert [(r["name"], r["type"], r["output_shape"], r["params"]) for r in s.rows] == [
        ("", "Sequential", [5, 2], 58),
        ("0", "Linear", [5, 8], 40),
        ("1", "Tanh", [5, 8], 0),
        ("2", "Sequential", [5, 2], 18),
        ("2.0", "Linear", [5, 2], 18),
        ("2.1", "ReLU", [5, 2], 0),
    ]
    assert (s.total_params, s.trainable_params, s.param_bytes) == (58, 50, 232)
    saved = {r["name"]: r["saved_bytes"] for r in s.rows}
    # Linear 0 saves its input (5 x 4); tanh its result (5 x 8); linear 2.0 its input (tanh's
    # result again: counted once in every row that holds both) and weight (2 x 8); relu its
    # result (5 x 2). float32: 4 bytes each.
    assert saved == {"": (20 + 40 + 16 + 10) * 4, "0": 80, "1": 160, "2": (40 + 16 + 10) * 4,
                     "2.0": (40 + 16) * 4, "2.1": 40}
    assert s.saved_bytes == saved[""]
    text = str(s)
    assert "2.0 (Linear)" in text and "total params: 58" in text
    assert "trainable params: 50" in text and "non-trainable params: 8" in text


def test_summary_leaves_no_hooks_behind():
    model = nn.Linear(3, 3)
    torch.utils.summary(model, torch.randn(2, 3))
    assert not model._forward_hooks and not model._forward_pre_hooks
