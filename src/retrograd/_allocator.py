"""Process-wide memory settings: glibc's malloc keeps freed memory, and full GC passes are rarer.

1. Let glibc's malloc keep freed memory, so large temporaries do not fault in fresh pages.

Every op on a large tensor allocates its result; with glibc's defaults, blocks of more than
128 KiB are mapped fresh from the OS and returned on free, so each one costs page faults
(about 2 microseconds per 4 KiB page), which can double the time of a training step. Raising
the mmap threshold and the trim threshold makes malloc reuse the freed blocks instead, as a
hand-tuned NumPy program would. This changes the allocator for the whole process, so it is a
deliberate choice: set ``RETROGRAD_MALLOC=default`` in the environment before importing
retrograd to leave the allocator alone. It does nothing on other C libraries and platforms.

2. Make the cyclic garbage collector's full passes rarer. A graph is freed by reference
counting (it holds no cycles), but its nodes and tensors are objects the collector tracks, and
each full pass walks all of them: building a 100,000-op graph spent two thirds of its time in
those passes. Raising the oldest generation's threshold from 10 to 100 (only if the program has
not set its own) cuts that to a few percent; cyclic garbage that survives to the oldest
generation waits longer. ``RETROGRAD_GC=default`` leaves the collector alone.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 * 1024 * 1024   # glibc's largest allowed value on 64-bit systems
_TRIM_THRESHOLD = 1024 * 1024 * 1024

tuned = False


def tune() -> bool:
    """Apply the settings once (unless opted out); return whether they are in effect."""
    global tuned
    if tuned:
        return True
    if os.environ.get("RETROGRAD_MALLOC", "").lower() in ("default", "off", "0"):
        return False
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        # glibc only (mallopt's numbers mean other things elsewhere): AttributeError otherwise.
        is_glibc = hasattr(libc, "gnu_get_libc_version")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    if not is_glibc:
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    tuned = bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))
    return tuned


_GC_DEFAULT = (700, 10, 10)
_GC_OLDEST = 100


def tune_gc() -> bool:
    """Raise the oldest generation's threshold (unless opted out or already changed)."""
    if os.environ.get("RETROGRAD_GC", "").lower() in ("default", "off", "0"):
        return False
    if gc.get_threshold() != _GC_DEFAULT:
        return gc.get_threshold()[2] == _GC_OLDEST
    gc.set_threshold(_GC_DEFAULT[0], _GC_DEFAULT[1], _GC_OLDEST)
    return True


tune()
tune_gc()
