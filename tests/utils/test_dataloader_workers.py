"""``DataLoader(num_workers > 0)``: real worker processes, seeded, ordered and shut down as in
PyTorch, compared with ``torch.utils.data`` where torch is installed. Datasets are tiny so that
the few worker processes these tests start cost little.
"""

from __future__ import annotations

import os
import random
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.utils import data as rdata
from retrograd.utils.data import _worker


class _Seeds:
    """Map-style: what each sample's worker sees of its seeding (works under either library)."""

    def __init__(self, lib, n: int = 6) -> None:
        self.lib, self.n = lib, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        info = self.lib.utils.data.get_worker_info()
        return (i, info.id, info.num_workers, info.seed, os.getpid(),
                float(self.lib.rand(1)), float(np.random.rand()), random.random())


def _Range(lib, n: int = 10):  # noqa: N802 - stands for a class
    """Iterable: each worker yields its share of ``range(n)``, split by ``get_worker_info``."""

    class Range(lib.utils.data.IterableDataset):
        def __iter__(self):
            info = lib.utils.data.get_worker_info()
            start, step = (0, 1) if info is None else (info.id, info.num_workers)
            return iter(range(start, n, step))

    return Range()


def _loader(lib, ds, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.utils.data.DataLoader(ds, **kw)


def _rows(loader) -> list:
    return [[list(map(_item, col)) for col in batch] for batch in loader]


def _item(x):
    return x.item() if hasattr(x, "item") else x


def test_workers_load_in_order_and_seed_like_torch(torch):
    def run(lib):
        g = lib.Generator().manual_seed(3)
        lib.manual_seed(5)
        loader = _loader(lib, _Seeds(lib), batch_size=2, num_workers=2, generator=g)
        return _rows(loader), float(lib.rand(1))

    (ours, after), (theirs, their_after) = run(rg), run(torch)
    pids = {r[4] for b in ours for r in zip(*b)}
    assert len(pids) == 2 and os.getpid() not in pids
    drop_pid = [[col for k, col in enumerate(b) if k != 4] for b in ours]
    assert drop_pid == [[col for k, col in enumerate(b) if k != 4] for b in theirs]
    assert after == their_after  # the main process's generator moved as torch's did


def test_shuffled_batches_with_workers_match_torch(torch):
    def run(lib):
        lib.manual_seed(0)
        ds = lib.utils.data.TensorDataset(lib.arange(13))
        return [b[0].tolist() for b in _loader(lib, ds, batch_size=3, shuffle=True,
                                               num_workers=2, prefetch_factor=1)]
    assert run(rg) == run(torch)


def test_more_workers_than_cpus_warns_as_torch(torch):
    n = len(os.sched_getaffinity(0)) + 1
    messages = []
    for lib in (rg, torch):
        with pytest.warns(UserWarning, match="This DataLoader will create") as rec:
            loader = lib.utils.data.DataLoader(list(range(n)), num_workers=n)
        with pytest.warns(UserWarning, match="This DataLoader will create"):
            it = iter(loader)
        assert [b.item() for b in it] == list(range(n))
        messages.append(str(rec[0].message))
    assert messages[0] == messages[1]


def test_worker_init_fn_and_iterable_datasets():
    loader = _loader(rg, _Range(rg), batch_size=2, num_workers=2,
                     worker_init_fn=lambda wid: np.random.seed(100 + wid))
    got = [b.tolist() for b in loader]
    assert got == [[0, 2], [1, 3], [4, 6], [5, 7], [8], [9]]
    assert rdata.get_worker_info() is None


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
def test_iterable_dataset_matches_torch(torch):
    def run(lib):
        return [b.tolist() for b in _loader(lib, _Range(lib, 7), batch_size=2, num_workers=3)]
    assert run(rg) == run(torch)


class _Fails:
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int):
        if i == 2:
            raise ValueError("bad sample")
        return i


def test_worker_exception_names_the_worker(torch):
    for lib in (rg, torch):
        it = iter(_loader(lib, _Fails(), batch_size=1, num_workers=2))
        with pytest.raises(ValueError) as e:
            list(it)
        it._shutdown_workers()  # the traceback keeps the iterator: stop its workers now
        first = str(e.value).splitlines()[0]
        assert first == "Caught ValueError in DataLoader worker process 0."
        assert "bad sample" in str(e.value)


class _Dies:
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int):
        if i == 1:
            os._exit(3)
        return i


def test_dead_worker_is_reported(monkeypatch):
    monkeypatch.setattr(_worker, "MP_STATUS_CHECK_INTERVAL", 0.2)
    it = iter(_loader(rg, _Dies(), batch_size=1, num_workers=2))
    with pytest.raises(RuntimeError, match=r"^DataLoader worker \(pid\(s\) \d+\) exited "
                                           r"unexpectedly$"):
        list(it)
    it._shutdown_workers()
    assert not any(w.is_alive() for w in it._workers)


def test_persistent_workers_and_clean_shutdown():
    loader = _loader(rg, _Seeds(rg, 4), batch_size=2, num_workers=2, persistent_workers=True)
    first = _rows(loader)
    it = loader._iterator
    second = _rows(loader)
    assert loader._iterator is it and all(w.is_alive() for w in it._workers)
    assert {r[4] for b in first for r in zip(*b)} == {r[4] for b in second for r in zip(*b)}
    assert [b[0] for b in first] == [b[0] for b in second] == [[0, 1], [2, 3]]
    it._shutdown_workers()
    assert not any(w.is_alive() for w in it._workers)
    plain = iter(_loader(rg, list(range(3)), num_workers=1))
    assert [b.tolist() for b in plain] == [[0], [1], [2]]
    assert not any(w.is_alive() for w in plain._workers)


def test_timeout_and_unordered_results():
    class Slow:
        def __len__(self):
            return 2

        def __getitem__(self, i):
            import time
            time.sleep(0.4)
            return i

    it = iter(_loader(rg, Slow(), num_workers=1, timeout=0.2))
    with pytest.raises(RuntimeError, match="^DataLoader timed out after 0.2 seconds$"):
        next(it)
    it._shutdown_workers()
    got = [b.item() for b in _loader(rg, list(range(6)), num_workers=2, in_order=False)]
    assert sorted(got) == list(range(6))


@pytest.mark.parametrize("kwargs", [
    {"num_workers": 0, "prefetch_factor": 2}, {"num_workers": 1, "prefetch_factor": -1},
    {"num_workers": 0, "persistent_workers": True},
    {"num_workers": 0, "multiprocessing_context": "fork"},
    {"num_workers": 1, "multiprocessing_context": "nope"},
    {"num_workers": 1, "multiprocessing_context": 3},
])
def test_worker_option_errors_match_torch(kwargs, torch):
    errors = []
    for lib in (rg, torch):
        with pytest.raises((ValueError, TypeError)) as e:
            lib.utils.data.DataLoader(list(range(3)), **kwargs)
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]


def test_pin_memory_warns_as_torch_and_changes_nothing(torch):
    messages = []
    for lib in (rg, torch):
        with pytest.warns(UserWarning) as rec:
            got = [b.tolist() for b in lib.utils.data.DataLoader([1, 2], pin_memory=True)]
        assert got == [[1], [2]]
        messages.append(sorted(str(w.message) for w in rec))
    assert messages[0] == messages[1]


def test_numpy_seed_matches_torch(torch):
    from torch.utils.data._utils.worker import _generate_state

    for base, wid in [(0, 0), (2**63 - 1, 3), (123456789012345, 1)]:
        assert _worker.numpy_seed(base, wid) == _generate_state(base, wid)


def test_worker_info_is_frozen_like_torch(torch):
    from torch.utils.data._utils.worker import WorkerInfo

    ours = _worker.WorkerInfo(id=1, num_workers=2, seed=7, dataset=None)
    theirs = WorkerInfo(id=1, num_workers=2, seed=7, dataset=None)
    assert repr(ours) == repr(theirs)
    for info in (ours, theirs):
        with pytest.raises(AttributeError, match="^cannot assign to field 'id'$"):
            info.id = 3


def test_tensors_cross_processes_through_multiprocessing():
    import pickle
    from multiprocessing.reduction import ForkingPickler

    t = rg.arange(4.0).requires_grad_()
    back = pickle.loads(ForkingPickler.dumps(t))
    assert back.tolist() == [0.0, 1.0, 2.0, 3.0] and back.requires_grad
    with pytest.raises(RuntimeError, match="^Cowardly refusing"):
        ForkingPickler.dumps(t * 2)
    again = pickle.loads(pickle.dumps(t * 2))  # plain pickle takes the values, as PyTorch's
    assert again.tolist() == [0.0, 2.0, 4.0, 6.0] and again.requires_grad and again.is_leaf
