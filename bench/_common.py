"""What the benchmark scripts share: best-of-runs timing."""

from __future__ import annotations

import time


def time_it(fn, repeat: int, number: int) -> float:
    """Seconds per call of ``fn``: the best of ``repeat`` rounds of ``number`` calls."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def time_interleaved(fns: dict, repeat: int, number: int) -> dict:
    """Seconds per call of each of ``fns`` (name -> function): the best of ``repeat`` rounds,
    the contenders taking turns in every round, so that a change in the machine's speed
    during the run lands on all of them alike."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            best[name] = min(best[name], time_it(fn, 1, number))
    return best
