"""Process-wide memory settings made at import (``retrograd._allocator``), and their opt-outs."""

import os
import subprocess
import sys

import pytest

CHECK = "import gc, retrograd; print(gc.get_threshold()[2])"


def _oldest_threshold(env_extra: dict, prelude: str = "") -> int:
    env = {k: v for k, v in os.environ.items() if k not in ("RETROGRAD_GC",)}
    env.update(env_extra)
    out = subprocess.run([sys.executable, "-c", prelude + CHECK], env=env, capture_output=True,
                         text=True, timeout=120, check=True)
    return int(out.stdout.strip())


def test_full_gc_passes_made_rarer_on_import():
    assert _oldest_threshold({}) == 100


@pytest.mark.parametrize("value", ["default", "off", "0"])
def test_gc_opt_out(value):
    assert _oldest_threshold({"RETROGRAD_GC": value}) == 10


def test_program_thresholds_are_kept():
    assert _oldest_threshold({}, "import gc; gc.set_threshold(500, 5, 7); ") == 7
