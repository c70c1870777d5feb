"""``retrograd.profiler`` / ``retrograd.autograd.profiler``: ops and backward nodes timed."""

import json

import pytest

import retrograd as torch


def _run():
    x = torch.randn(16, 16, requires_grad=True)
    with torch.profiler.profile(record_shapes=True, profile_memory=True) as prof:
        with torch.profiler.record_function("forward_pass"):
            y = (x * 2).sin().sum()
        y.backward()
    return prof


def test_every_op_and_backward_node_is_an_event_with_torchs_names():
    prof = _run()
    keys = [e.key for e in prof.events()]
    assert keys[:4] == ["forward_pass", "aten::mul", "aten::sin", "aten::sum"]
    for name in ("SumBackward0", "SinBackward0", "MulBackward0"):
        assert name in keys
        assert "autograd::engine::evaluate_function: " + name in keys
    ev = {e.key: e for e in prof.events()}
    assert ev["aten::mul"].input_shapes == [[16, 16], []]
    assert ev["aten::mul"].cpu_parent is ev["forward_pass"]
    assert ev["aten::sin"].cpu_memory_usage == 16 * 16 * 4
    fwd = ev["forward_pass"]
    assert fwd.cpu_time_total >= sum(c.cpu_time_total for c in fwd.cpu_children)
    assert fwd.self_cpu_time_total == pytest.approx(
        fwd.cpu_time_total - sum(c.cpu_time_total for c in fwd.cpu_children))


def test_table_has_pytorchs_cpu_columns_and_sorts():
    prof = _run()
    avg = prof.key_averages()
    table = avg.table(sort_by="cpu_time_total", row_limit=5)
    header = table.splitlines()[1].split()
    assert " ".join(header) == ("Name Self CPU % Self CPU CPU total % CPU total CPU time avg "
                                "CPU Mem Self CPU Mem # of Calls")
    assert len([ln for ln in table.splitlines() if "aten::" in ln or "Backward" in ln
                or "forward_pass" in ln]) == 5
    assert table.rstrip().splitlines()[-1].startswith("Self CPU time total: ")
    totals = [e.cpu_time_total for e in sorted(avg, key=lambda e: -e.cpu_time_total)][:5]
    assert totals == sorted(totals, reverse=True)
    shaped = prof.key_averages(group_by_input_shape=True).table()
    assert "Input Shapes" in shaped and "[[16, 16], []]" in shaped


def test_chrome_trace(tmp_path):
    prof = _run()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    assert {e["name"] for e in trace} >= {"forward_pass", "aten::mul", "MulBackward0"}
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in trace)


def test_nothing_recorded_outside_and_autograd_front():
    x = torch.ones(3, requires_grad=True)
    with torch.autograd.profiler.profile() as prof:
        y = x.exp()
    z = x.exp()
    (y + z).sum().backward()   # y's node ran after the profile ended: not recorded
    assert [e.key for e in prof.key_averages()] == ["aten::exp"]
    with torch.profiler.record_function("outside"):   # no profile: a no-op
        pass
