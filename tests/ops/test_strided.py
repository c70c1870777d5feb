"""``as_strided`` (ops/strided.py) and ``Tensor.set_``: views of a tensor's storage, as in
PyTorch: writes go through to the storage, non-contiguous inputs are read in memory order,
overlapping windows sum their gradients, and the same programs print the same under torch."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd


def _program(lib):
    """A program over as_strided views; returns what it observed, as plain Python values."""
    out = []

    def see(t):
        out.append((tuple(t.shape), t.stride(), t.storage_offset(),
                    t.detach().numpy().tolist()))

    x = lib.arange(6.)
    y = x.as_strided((2, 2), (1, 2), 1)
    see(y)
    out.append(y._base is x)
    y.mul_(10)
    see(x)
    see(lib.arange(6.).view(2, 3).t().as_strided((2, 2), (1, 2)))   # storage order
    see(lib.arange(6.)[2:].as_strided((3,), (1,), 0))               # before the slice
    z = lib.arange(10.).as_strided((3, 3), (3, 1))[1]
    z.add_(100)
    see(z._base)
    # gradients: through a view of a view (default offset: the input's), overlapping windows
    a = lib.arange(12., requires_grad=True)
    c = (a * 2).view(3, 4)[1:, 1:]
    d = c.as_strided((2, 3), (1, 2))
    see(d)
    out.append(d.grad_fn.name())
    d.pow(2).sum().backward()
    see(a.grad)
    a = lib.arange(5., requires_grad=True)
    (a.as_strided((3, 3), (1, 1)) * lib.arange(9.).view(3, 3)).sum().backward()
    see(a.grad)
    # in place on an as_strided view of a non-contiguous tensor: CopySlices
    a = lib.arange(6., requires_grad=True)
    base = a.view(2, 3).t() * 1
    v = base.as_strided((2,), (2,), 1)
    v.mul_(5)
    out.append((base.grad_fn.name(), repr(base).split("grad_fn=")[1]))
    (base * lib.arange(6.).view(3, 2)).sum().backward()
    see(a.grad)
    # second order
    a = lib.arange(4., requires_grad=True)
    g, = lib.autograd.grad((a * a).as_strided((2, 2), (1, 1)).pow(2).sum(), a,
                           create_graph=True)
    g.sum().backward()
    see(g)
    see(a.grad)
    n = (a * 1).as_strided((2, 2), (1, 1), 1).grad_fn
    out.append((n._saved_size, n._saved_stride, n._saved_storage_offset))
    out.append((a * 1).as_strided((2,), (1,)).grad_fn._saved_storage_offset)
    # forward mode: the tangent is the same view of the input's tangent
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        p = fw.make_dual(lib.arange(6.), lib.arange(6.) * 3)
        see(fw.unpack_dual(p.as_strided((2, 2), (1, 2))).tangent)
    # vmap: each sample's offset counts from its own start
    see(lib.vmap(lambda t: (t * 1).as_strided((2, 2), (1, 2), 1))(lib.arange(24.).view(2, 3, 4)))
    return out


def test_as_strided_program_matches_torch(torch):
    assert _program(retrograd) == _program(torch)


@pytest.mark.parametrize("args", [((4,), (2,)), ((2,), (1,), -1), ((2, 2), (1,)),
                                  ((2,), (-1,))])
def test_as_strided_errors_match_torch(torch, args):
    msgs = []
    for lib in (retrograd, torch):
        with pytest.raises(RuntimeError) as e:
            lib.arange(6.).as_strided(*args)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_as_strided_gradcheck_overlap_and_transposed():
    w = retrograd.tensor(np.random.default_rng(0).normal(size=(3, 4)), requires_grad=True)
    assert retrograd.autograd.gradcheck(lambda t: (t * 1).t().as_strided((3, 3), (1, 1), 2), [w])
    assert retrograd.autograd.gradgradcheck(lambda t: (t * t).as_strided((4, 3), (2, 1)), [w])


def _set_program(lib):
    out = []
    s = lib.arange(6.)
    t = lib.empty(0)
    out.append(t.set_(s) is t)
    out.append((t.tolist(), t._version, t.data_ptr() == s.data_ptr()))
    t.mul_(2)
    out.append((s.tolist(), s._version, t._version))
    u = lib.zeros(3).set_(s, 1, (2, 2), (1, 2))
    out.append((u.tolist(), u.stride(), u.storage_offset()))
    out.append(lib.zeros(3).set_(s, 2, (2,)).stride())
    out.append(tuple(lib.ones(2).set_().shape))
    for f in (lambda: lib.zeros(3, requires_grad=True).set_(s),
              lambda: lib.zeros(3).set_(lib.arange(3))):
        with pytest.raises(RuntimeError) as e:
            f()
        out.append(str(e.value).split("\n")[0])
    return out


def test_set_matches_torch(torch):
    assert _set_program(retrograd) == _set_program(torch)


def _storage_program(lib):
    """resize_/resize_as_, empty_strided/new_empty_strided and is_set_to, as PyTorch's."""
    out = []
    y = lib.arange(6.)
    out.append((y.resize_(2, 2) is y, y.tolist(), y.stride(), y._version))
    y.resize_(3, 3)
    out.append((tuple(y.shape), y[:2].tolist(), y.stride()))
    z = lib.arange(6.)[2:]
    z.resize_(2)
    out.append((z.tolist(), z.storage_offset()))
    b = lib.ones(2, 3).t()
    b.resize_(3, 2)
    out.append(b.stride())
    b.resize_(2, 3, memory_format=lib.contiguous_format)
    out.append(b.stride())
    x = lib.arange(4.)
    w = x[:2]
    w.resize_(3)
    out.append((w.tolist(), x.tolist()))
    out.append(tuple(lib.ones(2).resize_as_(lib.ones(3, 1)).shape))
    for f in (lambda: lib.ones(2, requires_grad=True).resize_(3), lambda: lib.ones(2).resize_(-1)):
        with pytest.raises(RuntimeError) as e:
            f()
        out.append(str(e.value))
    e = lib.empty_strided((2, 3), (1, 2), dtype=lib.float64, requires_grad=True)
    out.append((e.stride(), e.is_contiguous(), e.dtype is lib.float64, e.requires_grad))
    out.append(lib.empty_strided((2, 3), (0, 1)).stride())
    out.append(lib.ones(2).new_empty_strided((2, 3), (1, 2)).stride())
    m = lib.arange(12.).view(3, 4)
    out.append((m.is_set_to(m), m.is_set_to(m.view(3, 4)), m.detach().is_set_to(m),
                m.is_set_to(m.t()), m.is_set_to(m.clone())))
    return out


def test_resize_and_strided_storage_match_torch(torch):
    assert _storage_program(retrograd) == _storage_program(torch)
