"""retrograd.futures.Future against torch.futures.Future: completion, ``then`` chains, errors,
``collect_all``/``wait_all``. (Futures of collectives run in tests/distributed.)"""

from __future__ import annotations

import pytest

from retrograd import futures


def scenario(F, collect_all, wait_all) -> list:
    out = []
    f = F()
    g = f.then(lambda x: x.value() + 1)
    out.append((f.done(), g.done()))
    f.set_result(1)
    out.append((g.wait(), g.done(), f.value()))
    a, b = F(), F()
    both = collect_all([a, b])
    out.append(both.done())
    a.set_result(1)
    b.set_result([2])
    out.append((both.done(), [x.value() for x in both.wait()], wait_all([a, b])))
    called = []
    z = F()
    z.add_done_callback(lambda fut: called.append(fut.value()))
    z.set_result(7)
    z.add_done_callback(lambda fut: called.append(-fut.value()))
    out.append(called)
    return out


def errors(F) -> list:
    out = []
    h = F()
    k = h.then(lambda x: 1 / x.value())
    h.set_result(0)
    with pytest.raises(RuntimeError) as e:
        k.wait()
    out.append(str(e.value).split("\n")[0])
    e = F()
    e.set_exception(ValueError("boom"))
    for get in (e.wait, e.value):
        with pytest.raises(ValueError, match="boom"):
            get()
    with pytest.raises(RuntimeError) as again:
        e.set_result(1)
    out.append(str(again.value))
    with pytest.raises(AssertionError) as bad:
        F().set_exception(3)
    out.append(str(bad.value))
    return out


def test_future_behaves_as_torchs(torch):
    ours = scenario(futures.Future, futures.collect_all, futures.wait_all)
    assert ours == [(False, False), (2, True, 1), False, (True, [1, [2]], [1, [2]]), [7, -7]]
    assert ours == scenario(torch.futures.Future, torch.futures.collect_all,
                            torch.futures.wait_all)
    assert errors(futures.Future) == errors(torch.futures.Future)


def test_future_without_torch():
    f = futures.Future()
    with pytest.raises(RuntimeError, match="set_result was never called"):
        f.wait()
    with pytest.raises(RuntimeError, match="call wait"):
        f.value()
    assert futures.collect_all([]).wait() == []
