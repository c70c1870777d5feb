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
