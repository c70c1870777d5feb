"""The demo, ``python -m retrograd``: it trains, reports its accuracy and writes its outputs."""

from __future__ import annotations

import csv
import io
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np

import retrograd
from retrograd import _demo

SRC = str(pathlib.Path(retrograd.__file__).resolve().parents[1])
ACCURACY = re.compile(r"^accuracy: (\d+(?:\.\d+)?)% on (\d+) held-out points", re.M)


def run_demo(*args: str, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, "-m", "retrograd", *args], capture_output=True,
                         env=env, cwd=cwd, timeout=120)
    # Decoded by hand: text mode would turn the progress bar's carriage returns into newlines.
    res.stdout, res.stderr = res.stdout.decode(), res.stderr.decode()
    return res


def test_help_lists_the_options():
    res = run_demo("--help")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("usage: python -m retrograd")
    for option in ("--epochs", "--hidden", "--lr", "--seed", "--out", "--quiet"):
        assert option in res.stdout


def test_bad_option_is_a_usage_error():
    res = run_demo("--epochs", "0")
    assert res.returncode == 2
    assert "--epochs must be at least 1" in res.stderr


def test_short_run_writes_its_outputs(tmp_path):
    out = tmp_path / "demo"
    res = run_demo("--epochs", "4", "--points", "200", "--out", str(out))
    assert res.returncode == 0, res.stderr
    m = ACCURACY.search(res.stdout)
    assert m, res.stdout
    assert 0 <= float(m.group(1)) <= 100 and int(m.group(2)) == 100
    # The progress bar goes to stderr; not a terminal here, so only its last frame, no "\r".
    assert "\r" not in res.stderr and "4/4" in res.stderr and "loss" in res.stderr
    assert res.stderr.count("\n") == 1
    assert f"outputs written to {out}" in res.stdout
    with open(out / "loss_curve.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["epoch"]) for r in rows] == [1, 2, 3, 4]
    assert all(np.isfinite(float(r["loss"])) and float(r["loss"]) > 0 for r in rows)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["epochs"] == 4 and len(summary["loss_curve"]) == 4
    assert abs(summary["test_accuracy"] * 100 - float(m.group(1))) < 0.051
    assert (out / "regions.txt").read_text().count("\n") > 10
    svg = (out / "demo.svg").read_text()   # the picture, with no plotting library
    assert svg.startswith("<svg") and "<polyline" in svg and svg.count("<circle") == 100
    import xml.etree.ElementTree as ET
    ET.fromstring(svg)
    try:
        import matplotlib  # noqa: F401
        has_mpl = True
    except ImportError:
        has_mpl = False
    assert (out / "loss_curve.png").exists() == has_mpl


def test_default_run_learns_the_spirals(tmp_path):
    """The demo as the README runs it (default settings): over 95% on held-out points."""
    res = run_demo("--quiet", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""   # --quiet: no progress bar
    acc = float(ACCURACY.search(res.stdout).group(1))
    assert acc > 95.0, res.stdout
    # Without --out it writes to ./retrograd-demo; a second run replaces it, saying so.
    assert (tmp_path / "retrograd-demo" / "loss_curve.csv").exists()
    assert (tmp_path / "retrograd-demo" / "demo.svg").exists()


def test_a_second_run_replaces_the_outputs_and_graph_draws(tmp_path):
    res = run_demo("--epochs", "1", "--points", "60", "--graph", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    dot = (tmp_path / "retrograd-demo" / "graph.dot").read_text()
    assert dot.startswith("digraph") and "AddmmBackward0" in dot and "0.weight" in dot
    res = run_demo("--epochs", "1", "--points", "60", cwd=tmp_path)
    assert "replacing the outputs of a previous run in" in res.stdout
    assert not (tmp_path / "retrograd-demo" / "graph.dot").exists()
    assert sorted(os.listdir(tmp_path)) == ["retrograd-demo"]


def test_bad_values_are_one_line_errors(tmp_path):
    (tmp_path / "a_file").write_text("")
    for args, text in [
        (("--out", str(tmp_path / "a_file")), "exists and is not a directory"),
        (("--out", "/proc/no/such/dir"), "cannot create it"),
        (("--seed", "-1"), "--seed must be between 0 and 2**32 - 1"),
        (("--lr", "inf"), "--lr must be a finite positive number"),
        (("--lr", "nan"), "--lr must be a finite positive number"),
    ]:
        res = run_demo("--epochs", "1", "--points", "60", *args, cwd=tmp_path)
        assert res.returncode == 2, (args, res.stderr)
        assert text in res.stderr and "Traceback" not in res.stderr, res.stderr


def test_progress_bar_redraws_in_place():
    s = io.StringIO()
    bar = _demo.ProgressBar(3, s, width=6, min_interval=0, live=True)
    for i in range(1, 4):
        bar.update(i, loss=1.0 / i)
    bar.close()
    frames = s.getvalue().rstrip("\n").split("\r")[1:]
    assert len(frames) == 3 and s.getvalue().endswith("\n")
    assert frames[-1].startswith("training [######]   3/3  loss 0.3333  ")


def test_progress_bar_in_a_log_writes_one_line():
    s = io.StringIO()   # not a terminal
    bar = _demo.ProgressBar(3, s, width=6, min_interval=0)
    for i in range(1, 4):
        bar.update(i, loss=1.0 / i)
    bar.close()
    assert "\r" not in s.getvalue() and s.getvalue().count("\n") == 1
    assert s.getvalue().startswith("training [######]   3/3  loss 0.3333  ")


def test_spirals_are_balanced_and_bounded():
    x, y = _demo.make_spirals(100, np.random.default_rng(0))
    assert x.dtype == np.float32 and y.dtype == np.int64
    assert np.bincount(y).tolist() == [100, 100]
    assert np.abs(x).max() < 1.3
