"""``torch.autograd.profiler``: the older front of the profiler (``retrograd.profiler``)."""

from __future__ import annotations

from ..profiler import EventList, FunctionEvent, FunctionEventAvg, profile, record_function

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]
