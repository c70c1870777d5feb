"""Fixtures shared by every test: the torch oracle.

``torch`` is the oracle library, or a skip of the asking test where torch is not installed: a
test that compares with torch takes it as an argument, a test that does not (gradcheck,
gradgradcheck, fixed values) takes no torch and runs everywhere. ``oracle`` is the module of
comparison helpers (``tests/oracle.py``: ``run_both``, ``assert_close``, ``leaves``,
``copy_state``, ``compare``, ``compare_error`` ...), for tests that would rather not import it.
"""

from __future__ import annotations

import pytest

from . import oracle as _oracle


@pytest.fixture(scope="session")
def torch():
    """The oracle: torch, or a skip where it is not installed."""
    return _oracle.import_torch()


@pytest.fixture(scope="session")
def oracle(torch):
    """The comparison helpers of ``tests/oracle.py``; skips without torch like ``torch``."""
    return _oracle
