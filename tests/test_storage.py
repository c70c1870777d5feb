"""Storages (retrograd/storage.py): ``untyped_storage()``/``storage()`` of tensors and views, and
``set_`` over a storage, against torch."""

from __future__ import annotations

import warnings

import retrograd


def _program(lib):
    out = []
    x = lib.arange(6.)
    s = x.untyped_storage()
    out.append((s.size(), len(s), s.nbytes(), s.element_size(), str(s.device), s[4],
                s.tolist()[4:8], s.is_shared(), s.data_ptr() == x.data_ptr()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = x[2:].storage()
    out.append((ts.size(), len(ts), str(ts.dtype).split(".")[-1], ts[1], ts.tolist(),
                ts.element_size(), ts.nbytes(), ts.data_ptr() == x.data_ptr(),
                type(ts).__name__, ts.untyped().nbytes()))
    y = lib.empty(0).set_(s, 1, (2,), (2,))
    out.append(y.tolist())
    out.append(lib.empty(0).set_(s).tolist())
    out.append(tuple(lib.zeros(0, dtype=lib.int32).set_(s).shape))
    out.append(lib.empty(0).set_(ts).tolist())
    y.mul_(10)
    out.append(x.tolist())  # set_ over the storage shares it
    out.append((lib.UntypedStorage(4).nbytes(), type(x.untyped_storage()).__name__))
    v = x.view(2, 3).t()
    out.append((v.untyped_storage().nbytes(), v.untyped_storage().data_ptr() == x.data_ptr(),
                x[1:3].untyped_storage().nbytes()))
    return out


def test_storages_match_torch(torch):
    assert _program(retrograd) == _program(torch)


def test_storage_warns_once_as_deprecated():
    import retrograd.storage as st

    st._warned[0] = False
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        retrograd.ones(2).storage()
        retrograd.ones(2).storage()
    assert [str(m.message)[:31] for m in w] == ["TypedStorage is deprecated. It "]
