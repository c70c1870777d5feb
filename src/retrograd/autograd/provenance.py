"""Provenance: which line of the user's code made a node, for errors raised later in backward.

An error in backward ("Trying to backward through the graph a second time", "one of the
variables needed for gradient computation has been modified by an inplace operation", a custom
Function's wrong gradient) happens far from its cause. Each node records, when it is created,
where in the user's code the op was called: the innermost frame outside retrograd, kept as its
code object and instruction offset (no frame is kept alive, so no locals are). The text
("File "train.py", line 12, in step") is worked out only when an error is raised.
``RETROGRAD_PROVENANCE=0`` in the environment turns the recording off.
"""

from __future__ import annotations

import os
import sys

__all__ = ["ENABLED", "site", "site_from", "USER", "describe", "with_site",
           "record_inplace", "inplace_site"]

ENABLED = os.environ.get("RETROGRAD_PROVENANCE", "1") != "0"

_getframe = sys._getframe
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# Keyed by file name, not by code object: a str caches its hash, while hashing a code object
# hashes its constants again every time (several microseconds for a script's module code).
_IN_LIB: dict = {}  # file name -> whether it is retrograd's own


def site(depth: int = 2):
    """``(code, offset)`` of the innermost frame outside retrograd, ``depth`` frames up from
    the caller's caller. Cheap: a dict lookup per frame walked."""
    return site_from(_getframe(depth))


# Files known to be the user's: the hot paths (ops/_apply.py) take the frame two up, and when
# its file is in this set (the common case: an op called from user code) record it without a
# call; otherwise ``site_from`` walks up and remembers what it found.
USER: set = set()


# Set while an observer (forward AD) runs a primitive's call: the user's line that call came
# from, found once, for every node made inside it (its own and its tangent's), instead of each
# of them walking up through the observer's frames (ops._apply._observed).
HINT = None


def site_from(f):
    """``(code, offset)`` of the first frame from ``f`` up that is not retrograd's own."""
    if HINT is not None:
        return HINT
    get = _IN_LIB.get
    while f is not None:
        code = f.f_code
        name = code.co_filename
        lib = get(name)
        if lib is None:
            lib = _IN_LIB[name] = name.startswith(_PKG)
        if not lib:
            USER.add(name)
            return (code, f.f_lasti)
        f = f.f_back
    return None


def _line(code, offset: int) -> int:
    for start, end, line in code.co_lines():
        if start <= offset < end and line is not None:
            return line
    return code.co_firstlineno


def describe(s) -> str:
    """``File "x.py", line 3, in f`` for a recorded site."""
    code, offset = s
    return f'File "{code.co_filename}", line {_line(code, offset)}, in {code.co_name}'


def with_site(msg: str, node=None, label: str | None = None, s=None) -> str:
    """``msg`` with, on a new line, where ``node`` was created (or ``label`` and the site
    ``s``: "the in-place op was called")."""
    if s is None and node is not None:
        s = node.__dict__.get("_site")
    if s is None:
        return msg
    if label is None:
        label = f"{node.name()} was created by the forward call"
    return f"{msg}\n  {label} at: {describe(s)}"


def record_inplace(vc) -> None:
    """Remember where the in-place op that just bumped the version counter ``vc`` was called
    (kept as the counter's second item, read by the saved-tensor version error)."""
    if ENABLED:
        vc[1:] = (site(3),)


def inplace_site(vc):
    return vc[1] if len(vc) > 1 else None
