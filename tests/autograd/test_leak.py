"""Leak warnings: loops that keep graphs alive across optimizer steps warn once; legitimate
loops never do."""

import warnings

import pytest

import retrograd as torch
from retrograd import nn
from retrograd.autograd import leak
from retrograd.autograd.graph import GraphLeakWarning


def _loop(kind, steps=8):
    leak.reset()
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    total, losses, h = 0.0, [], torch.zeros(8, 1)
    for _ in range(steps):
        if kind == "total":
            loss = ((model(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss  # <total>
        elif kind == "list":
            loss = ((model(x) - y) ** 2).mean()  # <list>
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss)
        elif kind == "rnn":
            h = h * 0.5 + model(x)  # <rnn>
            loss = ((h - y) ** 2).mean()
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()
        elif kind == "item":
            loss = ((model(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            losses.append(loss.detach())
        elif kind == "accumulate":
            opt.zero_grad()
            for xb, yb in zip(x.split(2), y.split(2)):
                (((model(xb) - yb) ** 2).mean() / 4).backward()
            opt.step()
        elif kind == "retain":
            out = model(x)
            opt.zero_grad()
            out.mean().backward(retain_graph=True)
            (out ** 2).mean().backward()
            opt.step()
        elif kind == "detached_rnn":
            h = h * 0.5 + model(x)
            loss = ((h - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            h = h.detach()
        elif kind == "no_grad":
            with torch.no_grad():
                total = total + model(x).sum()
            loss = ((model(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return total


def _gan(steps=6):
    leak.reset()
    torch.manual_seed(0)
    G, D = nn.Linear(2, 3), nn.Linear(3, 1)
    og, od = torch.optim.SGD(G.parameters(), lr=0.01), torch.optim.SGD(D.parameters(), lr=0.01)
    for _ in range(steps):
        fake = G(torch.randn(4, 2))
        od.zero_grad()
        D(fake.detach()).mean().backward()
        od.step()
        og.zero_grad()
        (-D(fake).mean()).backward()   # fake was made before D's step: legitimate
        og.step()


def _line(marker):
    with open(__file__) as f:
        return next(i for i, ln in enumerate(f, 1) if ln.rstrip().endswith(f"# <{marker}>"))


@pytest.mark.parametrize("kind, words", [
    ("total", "is extended at"),
    ("list", "was made at"),
    ("rnn", "reaches back to"),
])
def test_leaking_loops_warn_once_naming_the_line(kind, words):
    with pytest.warns(GraphLeakWarning) as rec:
        _loop(kind)
    leaks = [w for w in rec if issubclass(w.category, GraphLeakWarning)]
    assert len(leaks) == 1
    msg = str(leaks[0].message)
    assert words in msg
    assert f'File "{__file__}", line {_line(kind)}, in _loop' in msg
    assert leaks[0].filename == __file__   # attributed to the user's code


@pytest.mark.parametrize("kind", ["item", "accumulate", "retain", "detached_rnn", "no_grad"])
def test_legitimate_loops_never_warn(kind):
    with warnings.catch_warnings():
        warnings.simplefilter("error", GraphLeakWarning)
        _loop(kind, steps=12)


def test_gan_and_a_long_graph_never_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", GraphLeakWarning)
        _gan()
        leak.reset()
        x = torch.ones(3, requires_grad=True)
        y = x
        for _ in range(2000):   # one very long graph, no optimizer steps
            y = y * 1.0
        y.sum().backward()


def test_the_watch_stops_after_the_first_steps():
    _loop("item", steps=leak.WATCHED_STEPS + 2)
    from retrograd.autograd import api
    assert api.on_backward is None and not leak._watch.active
    leak.reset()


def test_a_fresh_program_is_watched_from_its_first_backward():
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import warnings
        import retrograd as torch
        warnings.simplefilter("always")
        w = torch.ones(3, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        total = 0
        for step in range(6):
            loss = (w * w).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total = total + loss
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("GraphLeakWarning") == 1
    assert 'line 13, in <module>' in r.stderr


def test_backward_without_optimizer_keeps_few_roots():
    """Before any optimizer step the watch remembers each backward's root weakly; a program
    that never steps must not keep one entry per backward forever."""
    leak.reset()
    x = torch.ones(3, requires_grad=True)
    kept = []
    for i in range(3 * leak._MAX_ROOTS):
        y = (x * 2).sum()
        if i < 5:
            kept.append(y)  # five graphs stay alive: their roots must be remembered
        y.backward()
    roots = leak._watch.roots
    assert len(roots) <= leak._MAX_ROOTS + 1
    alive = {r() for _, r in roots} - {None}
    assert {y.grad_fn for y in kept} <= alive
    leak.reset()
