"""Sorting, selection and scans: sort, argsort, topk, kthvalue, median, mode, unique, and the
cumulative ops (cumsum, cumprod, cummax, cummin, logcumsumexp)."""

from __future__ import annotations

__all__: list = []
XP: list = []
METHODS: dict = {}
INPLACE: dict = {}
