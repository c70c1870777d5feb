"""Matrix decompositions and solvers: inv, det, slogdet, solve, cholesky, qr, eigh, svd,
svdvals, pinv, matrix_power."""

from __future__ import annotations

__all__: list = []
XP: list = []
METHODS: dict = {}
INPLACE: dict = {}
