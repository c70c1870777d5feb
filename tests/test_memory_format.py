"""Memory formats (``channels_last``, ``channels_last_3d``, ``contiguous_format``,
``preserve_format``) as PyTorch's: the strides that ``to``, ``contiguous``, ``clone``, the
``*_like`` functions and ``Module.to`` give, ``is_contiguous``'s answers and the errors, run as
one program under retrograd and under torch."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd


def _catch(f):
    try:
        r = f()
    except (RuntimeError, TypeError) as e:
        return type(e).__name__, str(e)
    if isinstance(r, bool):
        return r
    return r.stride(), tuple(r.shape), r.detach().numpy().tolist()


def _program(lib):
    """What the memory-format calls give, as plain Python values."""
    cl, cl3 = lib.channels_last, lib.channels_last_3d
    cf, pf = lib.contiguous_format, lib.preserve_format
    x = lib.arange(120.).reshape(2, 3, 4, 5)
    y = x.contiguous(memory_format=cl)
    e = lib.arange(720.).reshape(2, 3, 4, 5, 6)
    out = [_catch(f) for f in (
        lambda: x.to(memory_format=cl), lambda: y, lambda: x.clone(memory_format=cl),
        lambda: y.clone(), lambda: y.clone(memory_format=cf), lambda: y.contiguous(),
        lambda: y.to(lib.float64), lambda: x.to(lib.float64, memory_format=cl),
        lambda: x.float(memory_format=cl), lambda: x.long().to(memory_format=cl),
        lambda: y[:, :, ::2].clone(), lambda: y[:, :, ::2].contiguous(),
        lambda: y + 1, lambda: y.neg(),
        lambda: lib.arange(8.).reshape(2, 1, 4, 1).to(memory_format=cl),
        lambda: lib.arange(6.).reshape(2, 3, 1, 1).contiguous(memory_format=cl),
        lambda: e.contiguous(memory_format=cl3), lambda: e.to(memory_format=cl3),
        lambda: lib.arange(24.).reshape(4, 6).t()[:, ::2].clone(),
        # errors
        lambda: lib.ones(2, 3, 4).contiguous(memory_format=cl),
        lambda: x.contiguous(memory_format=cl3), lambda: e.clone(memory_format=cl),
        lambda: lib.ones(2, 3, 4).to(memory_format=cl),
        lambda: lib.empty_like(lib.ones(2, 3, 4), memory_format=cl),
        lambda: y.contiguous(memory_format=pf), lambda: x.contiguous(memory_format=3),
        lambda: x.is_contiguous(memory_format=3), lambda: x.clone(memory_format=3),
        lambda: lib.zeros_like(x, memory_format=3), lambda: x.to(memory_format=3),
        lambda: x.to(lib.float64, memory_format="a"), lambda: x.to(cl),
        # is_contiguous
        lambda: x.is_contiguous(memory_format=cl), lambda: y.is_contiguous(memory_format=cl),
        lambda: y.is_contiguous(), lambda: x.is_contiguous(memory_format=pf),
        lambda: y.is_contiguous(memory_format=pf), lambda: x.is_contiguous(memory_format=cf),
        lambda: y.is_contiguous(memory_format=cf), lambda: x.is_contiguous(memory_format=cl3),
        lambda: lib.ones(2, 3, 4).is_contiguous(memory_format=cl),
        lambda: y[:, :, ::2].is_contiguous(memory_format=cl),
        lambda: lib.ones(2, 1, 4, 5).is_contiguous(memory_format=cl),
        lambda: e.contiguous(memory_format=cl3).is_contiguous(memory_format=cl3),
    )]
    out.append([y.contiguous(memory_format=cl) is y, y.to(memory_format=cl) is y,
                y.contiguous() is y, x.to(memory_format=cf) is x,
                lib.arange(6.).reshape(2, 3).t().to(memory_format=cf) is not None])
    for like in (lib.zeros_like, lib.ones_like, lib.empty_like, lib.rand_like, lib.randn_like):
        out.append([like(x, memory_format=cl).stride(), like(y).stride(),
                    like(y, memory_format=cf).stride(), like(e, memory_format=cl3).stride()])
    out.append([lib.full_like(x, 2., memory_format=cl).stride(),
                lib.randint_like(x, 5, memory_format=cl).stride()])
    lib.manual_seed(0)
    out.append(lib.rand_like(x, memory_format=cl).numpy().round(6).tolist())
    # gradients: the layouts and grad_fns PyTorch's give; values never change
    leaf = lib.arange(120., requires_grad=True)
    a = leaf.reshape(2, 3, 4, 5)
    zs = [a.contiguous(memory_format=cl), a.to(memory_format=cl), a.clone(memory_format=cl)]
    out.append([z.grad_fn.name() for z in zs])
    sum(z * lib.arange(120.).reshape(2, 3, 4, 5) for z in zs).sum().backward()
    out.append(leaf.grad.numpy().tolist())
    return out


def test_memory_formats_as_torch(torch):
    got, want = _program(retrograd), _program(torch)
    for g, w in zip(got, want):
        assert g == w
    assert len(got) == len(want)


def _module_program(lib):
    out = []
    for make, fmt in ((lambda: lib.nn.Conv2d(3, 4, 3), lib.channels_last),
                      (lambda: lib.nn.Conv3d(3, 4, 3), lib.channels_last_3d),
                      (lambda: lib.nn.Conv3d(3, 4, 3), lib.channels_last),
                      (lambda: lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.Linear(2, 2)),
                       lib.channels_last)):
        lib.manual_seed(0)
        m = make()
        before = [p.detach().numpy().copy() for p in m.parameters()]
        params = list(m.parameters())
        try:
            r = m.to(lib.float64, memory_format=fmt)
        except RuntimeError as e:
            out.append(str(e))
            continue
        assert r is m and list(m.parameters()) == params  # the same Parameter objects
        out.append([(p.stride(), str(p.dtype).split(".")[1]) for p in m.parameters()])
        for b, p in zip(before, m.parameters()):
            np.testing.assert_array_equal(p.detach().numpy(), b)
    m = lib.nn.Conv2d(3, 4, 3)
    for call in (lambda: m.to(lib.channels_last), lambda: m.to(memory_format=3)):
        with pytest.raises(TypeError) as info:
            call()
        out.append(str(info.value))
    out.append(m.to(memory_format=lib.preserve_format).weight.stride())
    return out


def test_module_to_memory_format_as_torch(torch):
    assert _module_program(retrograd) == _module_program(torch)


def test_channels_last_values_without_torch():
    x = retrograd.arange(120.).reshape(2, 3, 4, 5)
    y = x.to(memory_format=retrograd.channels_last)
    assert y.stride() == (60, 1, 15, 3) and y.is_contiguous(
        memory_format=retrograd.channels_last) and not y.is_contiguous()
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    assert y.contiguous().stride() == (60, 20, 5, 1)
