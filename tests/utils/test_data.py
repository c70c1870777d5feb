"""Tests for ``retrograd.utils.data``: datasets, samplers, collation and the DataLoader.

Batches, dtypes and order are compared with ``torch.utils.data`` on the same data when PyTorch
is installed (shuffled orders too: the generators draw PyTorch's numbers; see also
``tests/test_random_torch.py``). Worker processes are tested in ``test_dataloader_workers.py``.
"""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.utils import data as rdata

Point = collections.namedtuple("Point", "x y")


def _plain(obj):
    """A comparable form of a collated batch from either library."""
    if hasattr(obj, "detach") and hasattr(obj, "dtype"):
        return ("T", str(obj.dtype).split(".")[-1], tuple(obj.shape), obj.detach().tolist())
    if isinstance(obj, dict):
        return (type(obj).__name__, {k: _plain(v) for k, v in obj.items()})
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return ("namedtuple", type(obj).__name__, [_plain(v) for v in obj])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_plain(v) for v in obj])
    return obj


def _to_torch(obj, torch):
    if isinstance(obj, rg.Tensor):
        return torch.from_numpy(obj.numpy().copy())
    if isinstance(obj, dict):
        return type(obj)((k, _to_torch(v, torch)) for k, v in obj.items())
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_to_torch(v, torch) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_torch(v, torch) for v in obj)
    return obj


COLLATE_CASES = {
    "ints": [1, 2, 3],
    "floats": [1.5, 2.0],
    "bools": [True, False],
    "mixed_int_float": [1, 2.5],
    "strings": ["a", "b"],
    "bytes": [b"a", b"b"],
    "tuples": [(1, 0.5, "a"), (2, 1.5, "b")],
    "lists": [[1, 2], [3, 4]],
    "dicts": [{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}],
    "ordered": [collections.OrderedDict(z=1, a=2.0), collections.OrderedDict(z=3, a=4.0)],
    "namedtuple": [Point(1, 2.0), Point(3, 4.0)],
    "np_arrays": [np.arange(3, dtype=np.int16), np.arange(3, dtype=np.int16)],
    "np_float32": [np.ones((2, 2), np.float32), np.zeros((2, 2), np.float32)],
    "np_scalars_f32": [np.float32(1), np.float32(2)],
    "np_scalars_i32": [np.int32(1), np.int32(2)],
    "np_bool": [np.bool_(True), np.bool_(False)],
    "tensors": [rg.tensor([1.0, 2.0]), rg.tensor([3.0, 4.0])],
    "tensors_0d": [rg.tensor(1), rg.tensor(2)],
    "tensor_pairs": [(rg.zeros(2, 3), rg.tensor(1)), (rg.ones(2, 3), rg.tensor(0))],
    "nested": [{"x": (rg.ones(2), 1), "y": {"z": [0.5]}}, {"x": (rg.zeros(2), 2),
                                                           "y": {"z": [1.5]}}],
}


@pytest.mark.parametrize("name", sorted(COLLATE_CASES))
def test_default_collate_matches_torch(name, torch):
    batch = COLLATE_CASES[name]
    ours = rdata.default_collate(batch)
    theirs = torch.utils.data.default_collate(_to_torch(batch, torch))
    assert _plain(ours) == _plain(theirs)


@pytest.mark.parametrize("batch", [
    [[1, 2], [3]],
    [object(), object()],
    [None, None],
    [np.array(["a"]), np.array(["b"])],
    [np.array([object()]), np.array([object()])],
])
def test_default_collate_errors_match_torch(batch, torch):
    with pytest.raises(Exception) as theirs:
        torch.utils.data.default_collate(batch)
    with pytest.raises(type(theirs.value)) as ours:
        rdata.default_collate(batch)
    assert str(ours.value) == str(theirs.value)


def test_default_collate_stack_mismatch():
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        rdata.default_collate([rg.zeros(2), rg.zeros(3)])


@pytest.mark.parametrize("data", [
    (np.array([1, 2]), 3, "x"),
    [np.float64(1.0), np.int32(2)],
    {"a": np.zeros(2, np.float32), "b": (1, 2)},
    Point(np.array([1.0]), "s"),
    np.int64(3),
    np.array(["a", "b"]),
    "plain",
    rg.tensor([1, 2]),
])
def test_default_convert_matches_torch(data, torch):
    theirs = torch.utils.data.default_convert(_to_torch(data, torch))
    ours = rdata.default_convert(data)
    if isinstance(data, np.ndarray) and data.dtype.kind == "U":
        assert ours is data
    else:
        assert _plain(ours) == _plain(theirs)


# -- DataLoader against torch's on the same data -------------------------------------------------
def _tensor_dataset(n=10):
    x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    y = np.arange(n, dtype=np.int64) % 3
    return x, y


@pytest.mark.parametrize("batch_size", [1, 3, 4, 10, 16])
@pytest.mark.parametrize("drop_last", [False, True])
def test_dataloader_unshuffled_matches_torch(batch_size, drop_last, torch):
    x, y = _tensor_dataset()
    ours = rdata.DataLoader(rdata.TensorDataset(rg.from_numpy(x), rg.from_numpy(y)),
                            batch_size=batch_size, drop_last=drop_last)
    theirs = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
        batch_size=batch_size, drop_last=drop_last,
    )
    assert len(ours) == len(theirs)
    got = [_plain(b) for b in ours]
    want = [_plain(b) for b in theirs]
    assert got == want
    assert len(got) == len(ours)


class _Samples:
    """A map-style dataset of mixed samples: dicts with numpy arrays, floats, ints, strings."""

    def __len__(self):
        return 7

    def __getitem__(self, i):
        return {"img": np.full((2, 2), i, np.float32), "label": i % 2, "w": i / 2,
                "name": f"s{i}", "pair": (i, np.int64(i))}


def test_dataloader_dict_samples_match_torch(torch):
    ours = [_plain(b) for b in rdata.DataLoader(_Samples(), batch_size=3)]
    theirs = [_plain(b) for b in torch.utils.data.DataLoader(_Samples(), batch_size=3)]
    assert ours == theirs


def test_dataloader_no_batching_matches_torch(torch):
    x, y = _tensor_dataset(4)
    ours = rdata.DataLoader(rdata.TensorDataset(rg.from_numpy(x), rg.from_numpy(y)),
                            batch_size=None)
    theirs = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
        batch_size=None,
    )
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]
    assert [_plain(b) for b in rdata.DataLoader(_Samples(), batch_size=None)] == [
        _plain(b) for b in torch.utils.data.DataLoader(_Samples(), batch_size=None)
    ]


def test_dataloader_shuffle_is_a_permutation_and_reproducible():
    ds = rdata.TensorDataset(rg.arange(20))
    loader = rdata.DataLoader(ds, batch_size=6, shuffle=True,
                              generator=rg.Generator().manual_seed(3))
    epoch1 = [b[0].tolist() for b in loader]
    epoch2 = [b[0].tolist() for b in loader]
    assert [len(b) for b in epoch1] == [6, 6, 6, 2]
    assert sorted(sum(epoch1, [])) == list(range(20))
    assert sorted(sum(epoch2, [])) == list(range(20))
    assert epoch1 != epoch2  # a new order each epoch
    again = rdata.DataLoader(ds, batch_size=6, shuffle=True,
                             generator=rg.Generator().manual_seed(3))
    assert [b[0].tolist() for b in again] == epoch1
    assert sum(epoch1, []) != list(range(20))


def test_dataloader_shuffle_follows_manual_seed():
    ds = list(range(50))
    rg.manual_seed(7)
    a = [b.tolist() for b in rdata.DataLoader(ds, batch_size=8, shuffle=True)]
    rg.manual_seed(7)
    b = [b.tolist() for b in rdata.DataLoader(ds, batch_size=8, shuffle=True)]
    assert a == b
    assert sorted(sum(a, [])) == ds


def test_dataloader_shuffle_drop_last_sets(torch):
    ds = list(range(11))
    ours = [b.tolist() for b in rdata.DataLoader(ds, batch_size=4, shuffle=True, drop_last=True)]
    theirs = [b.tolist() for b in torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True,
                                                              drop_last=True)]
    assert [len(b) for b in ours] == [len(b) for b in theirs] == [4, 4]
    assert len(set(sum(ours, []))) == 8 and set(sum(ours, [])) <= set(ds)


def test_dataloader_sampler_batch_sampler_and_collate_fn():
    ds = list(range(10))
    loader = rdata.DataLoader(ds, batch_size=3, sampler=[9, 8, 7, 6])
    assert [b.tolist() for b in loader] == [[9, 8, 7], [6]]
    loader = rdata.DataLoader(ds, batch_sampler=[[0, 5], [1]])
    assert [b.tolist() for b in loader] == [[0, 5], [1]]
    assert loader.batch_size is None and len(loader) == 2
    loader = rdata.DataLoader(ds, batch_size=4, collate_fn=lambda b: sum(b))
    assert list(loader) == [6, 22, 17]
    loader = rdata.DataLoader(ds, batch_size=4, sampler=rdata.SequentialSampler(ds))
    assert isinstance(loader.batch_sampler, rdata.BatchSampler)
    assert loader.sampler.__class__ is rdata.SequentialSampler


def test_dataloader_attributes_and_iterator():
    ds = rdata.TensorDataset(rg.arange(5))
    loader = rdata.DataLoader(ds, batch_size=2, drop_last=True)
    assert loader.dataset is ds and loader.batch_size == 2 and loader.drop_last
    assert isinstance(loader.sampler, rdata.SequentialSampler)
    assert loader.collate_fn is rdata.default_collate
    it = iter(loader)
    assert len(it) == 2
    assert next(it)[0].tolist() == [0, 1]
    assert next(it)[0].tolist() == [2, 3]
    with pytest.raises(StopIteration):
        next(it)
    with pytest.raises(StopIteration):
        next(it)
    shuffled = rdata.DataLoader(ds, shuffle=True)
    assert isinstance(shuffled.sampler, rdata.RandomSampler)


def test_dataloader_uses_getitems():
    calls = []

    class Batched(rdata.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            raise AssertionError("should fetch through __getitems__")

        def __getitems__(self, idx):
            calls.append(list(idx))
            return [float(i) for i in idx]

    out = [b.tolist() for b in rdata.DataLoader(Batched(), batch_size=2)]
    assert out == [[0.0, 1.0], [2.0, 3.0], [4.0]]
    assert calls == [[0, 1], [2, 3], [4]]


class _Stream(rdata.IterableDataset):
    def __init__(self, n, with_len=True):
        self.n = n
        self.with_len = with_len

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        if not self.with_len:
            raise TypeError("object of type '_Stream' has no len()")
        return self.n


class _StreamNoLen(rdata.IterableDataset):
    def __iter__(self):
        return iter(range(7))


@pytest.mark.parametrize("batch_size", [None, 1, 3])
@pytest.mark.parametrize("drop_last", [False, True])
def test_iterable_dataset_matches_torch(batch_size, drop_last, torch):
    if batch_size is None and drop_last:
        return

    class TStream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    ours = rdata.DataLoader(_Stream(7), batch_size=batch_size, drop_last=drop_last)
    theirs = torch.utils.data.DataLoader(TStream(), batch_size=batch_size, drop_last=drop_last)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]
    assert len(ours) == len(theirs)


def test_iterable_dataset_without_len():
    loader = rdata.DataLoader(_StreamNoLen(), batch_size=3)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]]
    with pytest.raises(TypeError):
        len(loader)


@pytest.mark.parametrize("kwargs", [
    {"shuffle": True, "sampler": [0, 1]},
    {"batch_sampler": [[0]], "batch_size": 3},
    {"batch_sampler": [[0]], "shuffle": True},
    {"batch_sampler": [[0]], "drop_last": True},
    {"batch_size": None, "drop_last": True},
    {"num_workers": -1},
])
def test_dataloader_option_errors_match_torch(kwargs, torch):
    ds = list(range(4))
    with pytest.raises(ValueError) as theirs:
        torch.utils.data.DataLoader(ds, **kwargs)
    with pytest.raises(ValueError) as ours:
        rdata.DataLoader(ds, **kwargs)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("kwargs", [{"shuffle": True}, {"sampler": [1, 2]},
                                    {"batch_sampler": [[1]]}])
def test_iterable_dataset_option_errors_match_torch(kwargs, torch):
    class TStream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    with pytest.raises(ValueError) as theirs:
        torch.utils.data.DataLoader(TStream(), **kwargs)
    with pytest.raises(ValueError) as ours:
        rdata.DataLoader(_StreamNoLen(), **kwargs)
    assert str(ours.value) == str(theirs.value)


# -- samplers ------------------------------------------------------------------------------------
def test_sequential_and_batch_sampler_match_torch(torch):
    for n, bs, dl in [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False), (0, 2, False)]:
        ours = rdata.BatchSampler(rdata.SequentialSampler(range(n)), bs, dl)
        theirs = torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(range(n)),
                                               bs, dl)
        assert list(ours) == list(theirs)
        assert len(ours) == len(theirs)


@pytest.mark.parametrize("args", [(-1, False), (0, False), (True, False), (2.0, False),
                                  (2, 1), (2, None)])
def test_batch_sampler_errors_match_torch(args, torch):
    with pytest.raises(ValueError) as theirs:
        torch.utils.data.BatchSampler(range(3), *args)
    with pytest.raises(ValueError) as ours:
        rdata.BatchSampler(range(3), *args)
    assert str(ours.value) == str(theirs.value)


def test_random_sampler():
    g = rg.Generator().manual_seed(0)
    s = rdata.RandomSampler(range(10), generator=g)
    assert len(s) == 10 and sorted(s) == list(range(10))
    s = rdata.RandomSampler(range(4), num_samples=10, generator=g)
    out = list(s)
    assert len(out) == len(s) == 10
    assert sorted(out[:4]) == sorted(out[4:8]) == [0, 1, 2, 3]
    assert len(set(out[8:])) == 2
    s = rdata.RandomSampler(range(3), replacement=True, num_samples=100, generator=g)
    out = list(s)
    assert len(out) == 100 and set(out) == {0, 1, 2}
    a = list(rdata.RandomSampler(range(30), generator=rg.Generator().manual_seed(5)))
    b = list(rdata.RandomSampler(range(30), generator=rg.Generator().manual_seed(5)))
    assert a == b and a != list(range(30))


@pytest.mark.parametrize("kwargs", [{"replacement": 1}, {"num_samples": 0},
                                    {"num_samples": 2.0}, {"num_samples": -3}])
def test_random_sampler_errors_match_torch(kwargs, torch):
    with pytest.raises(Exception) as theirs:
        torch.utils.data.RandomSampler(range(3), **kwargs)
    with pytest.raises(type(theirs.value)) as ours:
        rdata.RandomSampler(range(3), **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_subset_random_and_weighted_samplers():
    g = rg.Generator().manual_seed(1)
    s = rdata.SubsetRandomSampler([10, 20, 30, 40], generator=g)
    assert len(s) == 4 and sorted(s) == [10, 20, 30, 40]
    w = rdata.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 200, generator=g)
    out = list(w)
    assert len(out) == len(w) == 200 and set(out) == {1, 3}
    assert out.count(3) > out.count(1)
    w = rdata.WeightedRandomSampler(rg.tensor([1.0, 1.0, 1.0]), 3, replacement=False)
    assert sorted(w) == [0, 1, 2]
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        rdata.WeightedRandomSampler([[0.0, 1.0]], 4)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        rdata.WeightedRandomSampler([1.0], 0)


def test_sampler_base():
    with pytest.raises(NotImplementedError):
        iter(rdata.Sampler())

    class Evens(rdata.Sampler):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(0, self.n, 2))

        def __len__(self):
            return (self.n + 1) // 2

    loader = rdata.DataLoader(list(range(10)), batch_size=2, sampler=Evens(10))
    assert [b.tolist() for b in loader] == [[0, 2], [4, 6], [8]]
    assert len(loader) == 3


# -- datasets ------------------------------------------------------------------------------------
def test_tensor_dataset():
    x, y = rg.arange(6).reshape(3, 2), rg.tensor([1.0, 2.0, 3.0])
    ds = rdata.TensorDataset(x, y)
    assert len(ds) == 3
    a, b = ds[1]
    assert a.tolist() == [2, 3] and b.item() == 2.0
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        rdata.TensorDataset(rg.zeros(2), rg.zeros(3))


def test_subset_concat_stack_chain():
    s = rdata.Subset(list(range(10)), [9, 0, 4])
    assert len(s) == 3 and [s[i] for i in range(3)] == [9, 0, 4]
    c = rdata.ConcatDataset([range(3), range(10, 14)])
    assert len(c) == 7 and c.cumulative_sizes == [3, 7]
    assert [c[i] for i in range(7)] == [0, 1, 2, 10, 11, 12, 13]
    assert c[-1] == 13 and c[-7] == 0
    with pytest.raises(ValueError, match="absolute value of index"):
        c[-8]
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        rdata.ConcatDataset([])
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        rdata.ConcatDataset([_Stream(2)])

    class D(rdata.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return i

    both = D() + D()
    assert isinstance(both, rdata.ConcatDataset) and len(both) == 4
    with pytest.raises(NotImplementedError, match="should implement __getitem__"):
        rdata.Dataset()[0]
    st = rdata.StackDataset([1, 2], ["a", "b"])
    assert st[1] == (2, "b") and len(st) == 2
    assert rdata.StackDataset(x=[1, 2], y=[3, 4])[0] == {"x": 1, "y": 3}
    chain = _Stream(2) + _Stream(3)
    assert list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5


@pytest.mark.parametrize("n, lengths", [
    (10, [0.5, 0.3, 0.2]), (3, [0.1, 0.1, 0.8]), (11, [0.25, 0.25, 0.5]), (10, [3, 7]),
    (7, [0.5, 0.5]), (5, [5, 0]),
])
def test_random_split_sizes_match_torch(n, lengths, torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = [len(s) for s in torch.utils.data.random_split(range(n), lengths)]
        parts = rdata.random_split(range(n), lengths, generator=rg.Generator().manual_seed(0))
    assert [len(s) for s in parts] == theirs
    items = sum((list(p) for p in parts), [])
    assert sorted(items) == list(range(n))


def test_random_split_reproducible_and_errors(torch):
    a = rdata.random_split(range(20), [5, 15], generator=rg.Generator().manual_seed(1))
    b = rdata.random_split(range(20), [5, 15], generator=rg.Generator().manual_seed(1))
    assert list(a[0]) == list(b[0]) and list(a[1]) == list(b[1])
    assert isinstance(a[0], rdata.Subset)
    with pytest.raises(ValueError) as theirs:
        torch.utils.data.random_split(range(10), [3, 3])
    with pytest.raises(ValueError) as ours:
        rdata.random_split(range(10), [3, 3])
    assert str(ours.value) == str(theirs.value)
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        rdata.random_split(range(3), [0.1, 0.1, 0.8])


def test_random_split_feeds_a_dataloader():
    x = rg.arange(30, dtype=rg.float32).reshape(10, 3)
    y = rg.arange(10)
    train, val = rdata.random_split(rdata.TensorDataset(x, y), [0.8, 0.2],
                                    generator=rg.Generator().manual_seed(0))
    seen = []
    for xb, yb in rdata.DataLoader(train, batch_size=3, shuffle=True):
        assert xb.shape[1:] == (3,) and xb.dtype is rg.float32 and yb.dtype is rg.int64
        assert xb[:, 0].tolist() == (yb * 3).to(rg.float32).tolist()
        seen += yb.tolist()
    assert sorted(seen) == sorted(train.indices)
    assert len(rdata.DataLoader(val, batch_size=3)) == 1
