"""``retrograd.profiler``: where the time goes, op by op, as ``torch.profiler`` reports it.

Inside ``with profile() as prof:`` every primitive call is timed (named as PyTorch names its
kernels, ``aten::mul``), and so is each backward node created there when the engine runs it
(``autograd::engine::evaluate_function: MulBackward0``); ``record_function`` adds named ranges.
``prof.key_averages().table(sort_by="cpu_time_total")`` prints PyTorch's CPU columns and
``prof.export_chrome_trace(path)`` writes a trace for chrome://tracing or Perfetto. Outside a
profile nothing is recorded and nothing is paid: the hook is ``ops._apply``'s observer list.
"""

from __future__ import annotations

import enum
import functools
import json
import os
import re
import threading
import time

from ._aten import OpOverload, op_for
from ._tensor import Tensor
from .ops._apply import add_observer, remove_observer

__all__ = ["profile", "record_function", "ProfilerActivity", "FunctionEvent",
           "FunctionEventAvg", "EventList"]

_now = time.perf_counter_ns
_active: list = []  # the profiles running now (innermost last)


class ProfilerActivity(enum.Enum):
    """What to profile: only the CPU exists here (``CUDA`` is accepted and records nothing)."""

    CPU = 0
    CUDA = 1


def _aten_name(P) -> str:
    """``aten::addmm`` for ``AddmmBackward0``: PyTorch's kernel name from the grad_fn name
    (``_aten.op_for``: ``aten::_softmax``, ``aten::log1p``, ...)."""
    op = op_for(P)
    if isinstance(op, OpOverload):
        return f"aten::{op.overloadpacket.__name__}"
    name = getattr(P, "_name", None) or P.__name__
    name = re.sub(r"Backward\d*$", "", name)
    return "aten::" + re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _shapes(values) -> list:
    return [list(v.shape) if isinstance(v, Tensor) else [] for v in values]


def _nbytes(r) -> int:
    if isinstance(r, Tensor):
        return r.numel() * r.element_size()
    if isinstance(r, (tuple, list)):
        return sum(_nbytes(x) for x in r)
    return 0


class FunctionEvent:
    """One timed range: ``name``, ``start_us``/``end_us`` (microseconds since the profile
    started), ``input_shapes``, ``cpu_memory_usage`` (bytes its outputs took), its children."""

    def __init__(self, name: str, start: int, shapes: list, thread: int, parent) -> None:
        self.name = self.key = name
        self._start = start
        self._end = start
        self.input_shapes = shapes
        self.thread = thread
        self.cpu_parent = parent
        self.cpu_children: list = []
        self.cpu_memory_usage = 0
        self.count = 1

    @property
    def cpu_time_total(self) -> float:
        return (self._end - self._start) / 1000.0

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self) -> str:
        return (f"<FunctionEvent name={self.name} cpu_time_total={self.cpu_time_total:.3f}us "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one name (and input shapes, when grouped so) added up."""

    def __init__(self, key: str, shapes) -> None:
        self.key = key
        self.input_shapes = shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0

    def add(self, e) -> FunctionEventAvg:
        self.count += e.count
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total
        self.cpu_memory_usage += e.cpu_memory_usage
        self.self_cpu_memory_usage += e.self_cpu_memory_usage
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / max(self.count, 1)

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us "
                f"cpu_time={self.cpu_time:.3f}us count={self.count}>")


def _fmt_time(us: float) -> str:
    if abs(us) >= 1e6:
        return f"{us / 1e6:.3f}s"
    if abs(us) >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _fmt_mem(b: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(b) >= size:
            return f"{b / size:.2f} {unit}"
    return f"{b} B"


class EventList(list):
    """A list of events (or of averages) that prints as PyTorch's table."""

    def __init__(self, items=(), profile_memory: bool = False, shapes: bool = False) -> None:
        super().__init__(items)
        self._memory = profile_memory
        self._shapes = shapes

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_name_column_width:
              int = 55, header: str | None = None, top_level_events_only: bool = False) -> str:
        """PyTorch's CPU table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time
        avg, (CPU Mem, Self CPU Mem,) # of Calls (, Input Shapes)."""
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        rows = rows[:row_limit] if row_limit is not None and row_limit >= 0 else rows
        total_self = sum(e.self_cpu_time_total for e in self) or 1.0
        name_w = min(max([len(e.key) for e in rows] + [4]) + 4, max_name_column_width)
        heads = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
        if self._memory:
            heads += ["CPU Mem", "Self CPU Mem"]
        heads.append("# of Calls")
        shapes_w = 0
        if self._shapes:
            shapes_w = min(max([len(str(e.input_shapes)) for e in rows] + [12]) + 4, 80)

        def line(name, cells, shapes=None):
            s = name[:name_w - 4].rjust(name_w) + "  " + "".join(c.rjust(12) + "  " for c in cells)
            if self._shapes:
                s += str(shapes).rjust(shapes_w) + "  "
            return s

        sep = "-" * name_w + "  " + "".join("-" * 12 + "  " for _ in heads)
        if self._shapes:
            sep += "-" * shapes_w + "  "
        out = [header] if header else []
        out += [sep, line("Name", heads, "Input Shapes" if self._shapes else None), sep]
        for e in rows:
            cells = [f"{100 * e.self_cpu_time_total / total_self:.2f}%",
                     _fmt_time(e.self_cpu_time_total),
                     f"{100 * e.cpu_time_total / total_self:.2f}%",
                     _fmt_time(e.cpu_time_total),
                     _fmt_time(e.cpu_time_total / max(e.count, 1))]
            if self._memory:
                cells += [_fmt_mem(e.cpu_memory_usage), _fmt_mem(e.self_cpu_memory_usage)]
            cells.append(str(e.count))
            out.append(line(e.key, cells, e.input_shapes))
        out.append(sep)
        out.append(f"Self CPU time total: {_fmt_time(sum(e.self_cpu_time_total for e in self))}")
        return "\n".join(out) + "\n"

    def total_average(self) -> FunctionEventAvg:
        avg = FunctionEventAvg("Total", None)
        for e in self:
            avg.add(e)
        return avg


class profile:  # noqa: N801 - PyTorch's name
    """Time every op (forward and backward) run inside the block.

    >>> import retrograd as torch
    >>> x = torch.ones(8, 8, requires_grad=True)
    >>> with torch.profiler.profile(record_shapes=True) as prof:
    ...     (x * 2).sin().sum().backward()
    >>> sorted({e.key for e in prof.key_averages()})[:3]
    ['MulBackward0', 'SinBackward0', 'SumBackward0']
    >>> "aten::sin" in prof.key_averages().table(sort_by="cpu_time_total")
    True
    """

    def __init__(self, activities=None, *, schedule=None, on_trace_ready=None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False, with_modules: bool = False,
                 experimental_config=None, execution_trace_observer=None,
                 acc_events: bool = False, enabled: bool = True, use_cuda: bool = False,
                 use_device=None, **kwargs) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.on_trace_ready = on_trace_ready
        self._events: list = []
        self._stack: list = []
        self._t0 = 0

    # -- recording ----------------------------------------------------------------------------
    def _begin(self, name: str, shapes: list) -> FunctionEvent:
        parent = self._stack[-1] if self._stack else None
        e = FunctionEvent(name, _now(), shapes, threading.get_ident(), parent)
        if parent is not None:
            parent.cpu_children.append(e)
        self._stack.append(e)
        self._events.append(e)
        return e

    def _end(self, e: FunctionEvent, nbytes: int = 0) -> None:
        e._end = _now()
        e.cpu_memory_usage += nbytes if self.profile_memory else 0
        if self._stack and self._stack[-1] is e:
            self._stack.pop()

    def _observe(self, P, inputs, attrs, run):
        shapes = _shapes(inputs) if self.record_shapes else []
        e = self._begin(_aten_name(P), shapes)
        try:
            r = run()
        finally:
            self._end(e)
        e.cpu_memory_usage = _nbytes(r) if self.profile_memory else 0
        first = r[0] if isinstance(r, tuple) and r else r
        node = getattr(first, "grad_fn", None)
        if node is not None and "backward" not in node.__dict__:
            node.backward = self._timed(node)
        return r

    def _timed(self, node):
        inner = node.backward
        name = node.name()

        def backward(xp, *grads):
            if self._t0 == 0 or self not in _active:
                return inner(xp, *grads)
            outer = self._begin("autograd::engine::evaluate_function: " + name, [])
            e = self._begin(name, _shapes(grads) if self.record_shapes else [])
            try:
                res = inner(xp, *grads)
            finally:
                self._end(e)
                self._end(outer)
            if self.profile_memory:
                e.cpu_memory_usage = outer.cpu_memory_usage = sum(
                    getattr(g, "nbytes", 0) for g in (res if isinstance(res, tuple) else (res,))
                    if g is not None)
            return res

        return backward

    # -- context manager ----------------------------------------------------------------------
    def start(self) -> None:
        if not self.enabled:
            return
        self._t0 = _now()
        _active.append(self)
        add_observer(self._observe)

    def stop(self) -> None:
        if not self.enabled or self not in _active:
            return
        remove_observer(self._observe)
        _active.remove(self)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def step(self) -> None:
        """Marks a training step (schedules are not supported: every step is recorded)."""

    # -- results ------------------------------------------------------------------------------
    def events(self) -> EventList:
        return EventList(self._events, self.profile_memory, self.record_shapes)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) \
            -> EventList:
        groups: dict = {}
        for e in self._events:
            k = (e.key, str(e.input_shapes) if group_by_input_shape else None)
            if k not in groups:
                groups[k] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shape
                                             else None)
            groups[k].add(e)
        return EventList(groups.values(), self.profile_memory, group_by_input_shape)

    def table(self, *args, **kwargs) -> str:
        return self.key_averages().table(*args, **kwargs)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (JSON) that chrome://tracing and Perfetto open."""
        pid = os.getpid()
        trace = [{
            "ph": "X", "cat": "cpu_op", "name": e.name, "pid": pid, "tid": e.thread,
            "ts": (e._start - self._t0) / 1000.0, "dur": (e._end - e._start) / 1000.0,
            "args": {"Input Dims": e.input_shapes} if self.record_shapes else {},
        } for e in self._events]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)


class record_function:  # noqa: N801 - PyTorch's name
    """A named range in the profile (a context manager and a decorator); free without one.

    >>> import retrograd as torch
    >>> with torch.profiler.profile() as prof:
    ...     with torch.profiler.record_function("my_block"):
    ...         _ = torch.ones(3).exp()
    >>> [e.key for e in prof.events()]
    ['my_block', 'aten::exp']
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self._events: list = []

    def __enter__(self) -> record_function:
        self._events = [(p, p._begin(self.name, [])) for p in _active]
        return self

    def __exit__(self, *exc) -> None:
        for p, e in self._events:
            p._end(e)
        self._events = []

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)

        return wrapper
