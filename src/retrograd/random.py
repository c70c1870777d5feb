"""``torch.random``: the default generator's seeding and state, and ``fork_rng``.

The functions are the top-level ones (``retrograd.manual_seed`` is ``retrograd.random.
manual_seed``); ``fork_rng`` runs a block and then puts the generator's state back, so that the
block's draws do not change what comes after it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from ._random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = [
    "Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
    "manual_seed", "seed", "set_rng_state", "thread_safe_generator",
]


@contextlib.contextmanager
def fork_rng(devices: Iterable[int] | None = None, enabled: bool = True,
             _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str | None = None) -> Iterator[None]:
    """Run the ``with`` block, then restore the CPU generator's state (there are no devices).

    >>> import retrograd as torch
    >>> torch.manual_seed(0)  # doctest: +ELLIPSIS
    <retrograd.Generator object at ...>
    >>> with torch.random.fork_rng():
    ...     a = torch.rand(2)
    >>> torch.rand(2).tolist() == a.tolist()
    True
    """
    if device_type == "meta" or not enabled:
        yield
        return
    devices = [] if devices is None else list(devices)
    if devices:
        raise AssertionError("Torch not compiled with CUDA enabled")
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def thread_safe_generator() -> Any:
    """The generator of a DataLoader thread worker; ``None`` elsewhere (retrograd's workers are
    processes, which use the default generator).

    >>> import retrograd as torch
    >>> torch.random.thread_safe_generator() is None
    True
    """
    return None
