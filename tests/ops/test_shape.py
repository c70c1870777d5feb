"""Focused tests of the shape family: which ops are views (shared memory and version counter),
in-place view ops and their history, multi-output views refusing in-place changes, integer and
bool dtypes, padding values, and PyTorch's errors for misuse."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.ops.padding import pad as rg_pad


def _x(shape=(3, 4), lib=retrograd, requires_grad=False, dtype=None):
    a = np.arange(int(np.prod(shape)), dtype=dtype or np.float64).reshape(shape)
    return lib.tensor(a, requires_grad=requires_grad)


VIEWS = {
    "view": lambda x: x.view(4, 3),
    "view_as": lambda x: x.view_as(retrograd.zeros(12)),
    "reshape": lambda x: x.reshape(2, 6),
    "flatten": lambda x: x.flatten(),
    "ravel": lambda x: x.ravel(),
    "unflatten": lambda x: x.unflatten(1, (2, 2)),
    "unflatten_noncontig": lambda x: x.t().unflatten(0, (2, 2)),
    "squeeze": lambda x: x[None].squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "permute": lambda x: x.permute(1, 0),
    "movedim": lambda x: x.movedim(0, 1),
    "transpose": lambda x: x.transpose(0, 1),
    "swapaxes": lambda x: x.swapaxes(0, 1),
    "t": lambda x: x.t(),
    "T": lambda x: x.T,
    "mT": lambda x: x.mT,
    "adjoint": lambda x: x.adjoint(),
    "expand": lambda x: x[:, :1].expand(3, 5),
    "broadcast_to": lambda x: retrograd.broadcast_to(x, (2, 3, 4)),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "diagonal": lambda x: x.diagonal(1),
    "unfold": lambda x: x.unfold(1, 2, 1),
    "split": lambda x: x.split(2)[1],
    "split_sizes": lambda x: x.split([1, 2])[0],
    "chunk": lambda x: x.chunk(2, 1)[1],
    "tensor_split": lambda x: x.tensor_split([1, 3], 1)[1],
    "unbind": lambda x: x.unbind(1)[2],
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_share_memory_and_version(name):
    x = _x()
    v = VIEWS[name](x)
    assert v._is_view() and v._base is x
    before = v.detach().numpy().copy()
    x.add_(1)
    assert v._version == x._version == 1
    np.testing.assert_allclose(v.detach().numpy(), before + 1)


COPIES = {
    "reshape_noncontig": lambda x: x.t().reshape(-1),
    "flatten_noncontig": lambda x: x.t().flatten(),
    "repeat": lambda x: x.repeat(1, 1),
    "tile": lambda x: x.tile((1,)),
    "repeat_interleave": lambda x: x.repeat_interleave(1, dim=0),
    "flip": lambda x: x.flip(0),
    "roll": lambda x: x.roll(1),
    "rot90": lambda x: x.rot90(4),
    "diag": lambda x: x.diag(),
    "diag_embed": lambda x: x.diag_embed(),
    "tril": lambda x: x.tril(),
    "triu": lambda x: x.triu(),
    "pad": lambda x: rg_pad(x, (0, 0)),
    "hstack": lambda x: retrograd.hstack([x]),
}


@pytest.mark.parametrize("name", sorted(COPIES))
def test_copies_own_their_memory(name):
    x = _x()
    c = COPIES[name](x)
    assert not np.shares_memory(c.numpy(), x.numpy())
    assert c._base is None or c._base is not x


def test_ravel_of_noncontiguous_is_a_view_of_a_copy():
    x = _x(requires_grad=True)
    r = x.t().ravel()
    assert r.grad_fn.name() == "ViewBackward0"
    assert r.grad_fn.next_functions[0][0].name() == "CloneBackward0"


@pytest.mark.parametrize("op", ["split", "chunk", "split_sizes", "unbind", "split_single"])
def test_multi_output_views_refuse_inplace(op):
    x = _x(requires_grad=True) * 1
    outs = {"split": lambda: x.split(2), "chunk": lambda: x.chunk(2),
            "split_sizes": lambda: x.split([1, 2]), "unbind": lambda: x.unbind(),
            "split_single": lambda: x.split([3])}[op]()
    name = {"split": "Split", "chunk": "Split", "split_sizes": "SplitWithSizes",
            "unbind": "Unbind", "split_single": "SplitWithSizes"}[op]
    with pytest.raises(RuntimeError, match=f"Output 0 of {name} is a view and is being "
                                           "modified inplace"):
        outs[0].mul_(2)


def test_multi_output_views_inplace_without_grad():
    x = _x()
    a, b = x.split(2)
    a.mul_(0)
    assert x[:2].sum().item() == 0 and x._version == 1


def test_tensor_split_outputs_allow_inplace():
    x = _x(requires_grad=True)
    y = x * 1
    a, b = y.tensor_split(2)
    b.mul_(2)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[1] * 4, [1] * 4, [2] * 4])


def test_split_gradient_with_unused_outputs():
    x = _x(requires_grad=True)
    a, b, c = x.split(1)
    (b * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0] * 4, [3] * 4, [0] * 4])
    assert a.grad_fn is b.grad_fn and a.grad_fn.name() == "SplitBackward0"


def test_unfold_overlapping_windows_refuse_writes():
    x = _x()
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        x.unfold(1, 2, 1).mul_(2)
    x.unfold(1, 2, 2).mul_(2)  # disjoint windows write through
    np.testing.assert_allclose(x.numpy(), _x().numpy() * 2)


# -- in-place view ops ----------------------------------------------------------------------------


INPLACE_VIEW = [
    ("t_", lambda y: y.t_(), lambda y: y.t(), "TBackward1"),
    ("transpose_", lambda y: y.transpose_(0, 1), lambda y: y.transpose(0, 1),
     "TransposeBackward1"),
    ("swapaxes_", lambda y: y.swapaxes_(1, 0), lambda y: y.swapaxes(1, 0), "TransposeBackward1"),
    ("swapdims_", lambda y: y.swapdims_(1, 0), lambda y: y.swapdims(1, 0), "TransposeBackward1"),
    ("unsqueeze_", lambda y: y.unsqueeze_(-1), lambda y: y.unsqueeze(-1), "UnsqueezeBackward1"),
    ("squeeze_", lambda y: y[None].squeeze_(), lambda y: y[None].squeeze(), "SqueezeBackward3"),
    ("squeeze_dim", lambda y: y[None].squeeze_(0), lambda y: y[None].squeeze(0),
     "SqueezeBackward4"),
    ("squeeze_dims", lambda y: y[None].squeeze_((0,)), lambda y: y[None].squeeze((0,)),
     "SqueezeBackward5"),
]


@pytest.mark.parametrize("name,inplace,outplace,node", INPLACE_VIEW, ids=[i[0] for i in
                                                                           INPLACE_VIEW])
def test_inplace_view_ops(name, inplace, outplace, node):
    x = _x(requires_grad=True)
    y = x * 2
    v0 = y._version
    r = inplace(y)
    ref = outplace(x * 2)
    assert tuple(r.shape) == tuple(ref.shape)
    np.testing.assert_allclose(r.detach().numpy(), ref.detach().numpy())
    assert r.grad_fn.name() == node
    if not name.startswith("squeeze"):
        assert r is y and y._version == v0 + 1
    (r * retrograd.arange(r.numel(), dtype=retrograd.float64).view(r.shape)).sum().backward()
    g = x.grad.numpy().copy()
    x.grad = None
    (ref * retrograd.arange(ref.numel(), dtype=retrograd.float64).view(ref.shape)).sum().backward()
    np.testing.assert_allclose(g, x.grad.numpy())


def test_inplace_view_op_on_leaf_raises():
    x = _x(requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.t_()
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0].unsqueeze_(0)
    y = _x()
    y.unsqueeze_(0).squeeze_(0).t_()
    assert tuple(y.shape) == (4, 3) and y._version == 3


def test_inplace_view_op_on_a_view_stays_a_view():
    x = _x()
    v = x.t()
    v.t_()
    assert v._is_view() and v._base is x and tuple(v.shape) == (3, 4)
    x.add_(1)
    np.testing.assert_allclose(v.numpy(), x.numpy())


@pytest.mark.parametrize("name", ["tril_", "triu_"])
def test_tril_triu_inplace(name):
    x = _x(requires_grad=True)
    y = x * 1
    r = getattr(y, name)(1)
    assert r is y and y._version == 1
    ref = getattr(x * 1, name[:-1])(1)
    np.testing.assert_allclose(r.detach().numpy(), ref.detach().numpy())
    assert r.grad_fn.name() == ("TrilBackward0" if name == "tril_" else "TriuBackward0")
    r.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), getattr(np, name[:-1])(np.ones((3, 4)), 1))


def test_function_and_method_forms_agree():
    x = _x((2, 3, 4))
    pairs = [
        (retrograd.flip(x, (0, 2)), x.flip(0, 2)),
        (retrograd.roll(x, 1, 1), x.roll(1, 1)),
        (retrograd.rot90(x, 1, (1, 2)), x.rot90(1, (1, 2))),
        (retrograd.tril(x, -1), x.tril(-1)),
        (retrograd.movedim(x, 0, 2), x.moveaxis(0, 2)),
        (retrograd.swapaxes(x, 0, 2), x.swapdims(0, 2)),
        (retrograd.diagonal(x, 0, 1, 2), x.diagonal(dim1=1, dim2=2)),
        (retrograd.tile(x, (2,)), x.repeat(1, 1, 2)),
        (retrograd.unflatten(x, 2, (2, 2)), x.view(2, 3, 2, 2)),
        (retrograd.ravel(x), x.flatten()),
        (retrograd.hstack([x, x]), retrograd.cat([x, x], 1)),
        (retrograd.vstack([x, x]), retrograd.row_stack([x, x])),
    ]
    for a, b in pairs:
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    for a, b in zip(retrograd.split(x, [1, 2], 1), x.split([1, 2], dim=1)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_broadcast_helpers():
    assert retrograd.broadcast_shapes((3, 1), 4, [2, 1, 1]) == retrograd.Size([2, 3, 4])
    assert retrograd.broadcast_shapes((3, 1), (4,)) == retrograd.Size([3, 4])
    assert retrograd.broadcast_shapes() == retrograd.Size([])
    x = _x()
    a, b = retrograd.broadcast_tensors(x, retrograd.zeros(4))
    assert a is x and tuple(b.shape) == (3, 4) and b._is_view()


def test_repeat_interleave_of_repeats_alone():
    r = retrograd.repeat_interleave(retrograd.tensor([2, 0, 3]))
    assert r.tolist() == [0, 0, 2, 2, 2] and r.dtype == retrograd.int64


# -- against torch --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


DTYPE_CASES = {
    "repeat": lambda lib, x: x.repeat(2, 1),
    "tile": lambda lib, x: lib.tile(x, (2,)),
    "repeat_interleave": lambda lib, x: x.repeat_interleave(2, dim=1),
    "repeat_interleave_t": lambda lib, x: x.repeat_interleave(lib.tensor([1, 2, 0]), dim=0),
    "flip": lambda lib, x: x.flip(1),
    "roll": lambda lib, x: x.roll(-1, 1),
    "rot90": lambda lib, x: x.rot90(),
    "diag": lambda lib, x: x.diag(1),
    "diag_1d": lambda lib, x: x[0].diag(-1),
    "diag_embed": lambda lib, x: x.diag_embed(1),
    "diagonal": lambda lib, x: x.diagonal(-1),
    "tril": lambda lib, x: x.tril(),
    "triu": lambda lib, x: lib.triu(x, -1),
    "unfold": lambda lib, x: x.unfold(1, 3, 1),
    "hstack": lambda lib, x: lib.hstack([x, x]),
    "dstack": lambda lib, x: lib.dstack([x, x]),
    "column_stack": lambda lib, x: lib.column_stack([x[0], x[1]]),
    "pad": lambda lib, x: _pad(lib, x, (1, 1), value=7),
    "pad_reflect": lambda lib, x: _pad(lib, x, (2, 1), mode="reflect"),
    "pad_replicate": lambda lib, x: _pad(lib, x, (2, 1, 0, 1), mode="replicate"),
    "pad_circular": lambda lib, x: _pad(lib, x, (2, 1), mode="circular"),
}


def _pad(lib, *args, **kwargs):
    if lib is retrograd and not hasattr(retrograd, "nn"):
        return rg_pad(*args, **kwargs)
    return lib.nn.functional.pad(*args, **kwargs)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float32"])
@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
def test_dtypes_match_torch(torch, name, dtype):
    if dtype == "bool" and name.startswith("pad"):
        pytest.skip("torch pads no bool tensors")
    a = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    try:
        ref = DTYPE_CASES[name](torch, torch.tensor(a))
    except Exception as e:  # noqa: BLE001 - whatever torch refuses, we refuse alike
        with pytest.raises(type(e)):
            DTYPE_CASES[name](retrograd, retrograd.tensor(a))
        return
    out = DTYPE_CASES[name](retrograd, retrograd.tensor(a))
    assert str(out.dtype).replace("retrograd", "torch") == str(ref.dtype)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


PADS = [((1, 2), "reflect", (2, 5)), ((-2, 3), "reflect", (2, 5)), ((3, -1), "reflect", (1, 5)),
        ((-1, -1), "reflect", (1, 5)), ((2, -3), "replicate", (2, 5)),
        ((-2, -1, 1, 2), "replicate", (1, 3, 5)), ((-2, 3), "circular", (2, 5)),
        ((3, -2), "circular", (2, 5)), ((5, 5), "circular", (1, 5)),
        ((1, 1, 2, 2, 1, 0), "circular", (1, 2, 3, 4)), ((1, 1, 1, 1, 1, 1), "replicate",
                                                           (1, 1, 2, 2, 2)),
        ((-1, 2, 0, -1), "constant", (3, 4)), ((0, 0, 0, 0, 1, 1), "constant", (2, 3, 4))]


@pytest.mark.parametrize("pads,mode,shape", PADS)
def test_pad_values_and_grads(torch, pads, mode, shape):
    a = np.random.default_rng(0).standard_normal(shape)
    x = retrograd.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    out = rg_pad(x, pads, mode=mode)
    ref = torch.nn.functional.pad(tx, pads, mode=mode)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy())
    w = np.random.default_rng(1).standard_normal(tuple(ref.shape))
    (out * retrograd.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


MISUSE = {
    "view_bad": lambda lib, x: x.view(5, -1),
    "unflatten_sizes": lambda lib, x: x.unflatten(1, (3, 2)),
    "unflatten_empty": lambda lib, x: x.unflatten(1, ()),
    "movedim_repeat": lambda lib, x: x.movedim((0, 0), (0, 1)),
    "movedim_len": lambda lib, x: x.movedim((0, 1), (0,)),
    "adjoint_1d": lambda lib, x: x[0].adjoint(),
    "H_1d": lambda lib, x: x[0].H,
    "mT_1d": lambda lib, x: x[0].mT,
    "repeat_few": lambda lib, x: x.repeat(2),
    "repeat_neg": lambda lib, x: x.repeat(-1, 2),
    "ri_neg": lambda lib, x: x.repeat_interleave(-1),
    "ri_len": lambda lib, x: x.repeat_interleave(lib.tensor([1, 2]), dim=0),
    "ri_neg_t": lambda lib, x: x.repeat_interleave(lib.tensor([1, -1, 1]), dim=0),
    "ri_output_size": lambda lib, x: x.repeat_interleave(2, dim=0, output_size=5),
    "flip_dup": lambda lib, x: x.flip(0, 0),
    "flip_range": lambda lib, x: x.flip(2),
    "fliplr_1d": lambda lib, x: x[0].fliplr(),
    "flipud_0d": lambda lib, x: x[0, 0].flipud(),
    "roll_align": lambda lib, x: x.roll((1, 2), (0,)),
    "roll_nodims": lambda lib, x: x.roll((1, 2)),
    "rot90_dims": lambda lib, x: x.rot90(1, (0, 1, 1)),
    "rot90_1d": lambda lib, x: x[0].rot90(),
    "rot90_same": lambda lib, x: x.rot90(1, (0, 0)),
    "split_zero": lambda lib, x: x.split(0),
    "split_neg": lambda lib, x: x.split(-1),
    "split_sum": lambda lib, x: x.split([1, 1]),
    "split_neg_size": lambda lib, x: x.split([4, -1]),
    "split_0d": lambda lib, x: x[0, 0].split(1),
    "chunk_zero": lambda lib, x: x.chunk(0),
    "chunk_0d": lambda lib, x: x[0, 0].chunk(2),
    "tsplit_0d": lambda lib, x: x[0, 0].tensor_split(2),
    "tsplit_zero": lambda lib, x: x.tensor_split(0),
    "tsplit_float": lambda lib, x: x.tensor_split(lib.tensor([1.0])),
    "tsplit_2d": lambda lib, x: x.tensor_split(lib.tensor([[1]])),
    "hstack_empty": lambda lib, x: lib.hstack([]),
    "vstack_empty": lambda lib, x: lib.vstack([]),
    "diag_3d": lambda lib, x: x[None].diag(),
    "diag_0d": lambda lib, x: x[0, 0].diag(),
    "diagonal_same": lambda lib, x: x.diagonal(0, 1, 1),
    "diagonal_same_neg": lambda lib, x: x.diagonal(0, -1, 1),
    "diag_embed_same": lambda lib, x: x.diag_embed(0, -1, 2),
    "tril_1d": lambda lib, x: x[0].tril(),
    "triu_0d": lambda lib, x: x[0, 0].triu(),
    "unfold_big": lambda lib, x: x.unfold(1, 5, 1),
    "unfold_step": lambda lib, x: x.unfold(1, 2, 0),
    "unfold_size": lambda lib, x: x.unfold(1, -1, 1),
    "unfold_dim": lambda lib, x: x.unfold(2, 1, 1),
    "expand_bad": lambda lib, x: x.expand(2, 4),
    "bshapes": lambda lib, x: lib.broadcast_shapes((3, 1), (4,), 2),
    "bshapes_bad": lambda lib, x: lib.broadcast_shapes((3, 1), (2, 4)),
    "btensors_bad": lambda lib, x: lib.broadcast_tensors(x, x[:, :2]),
    "pad_odd": lambda lib, x: _pad(lib, x, (1,)),
    "pad_long": lambda lib, x: _pad(lib, x, (1, 1, 1, 1, 1, 1)),
    "pad_crop": lambda lib, x: _pad(lib, x, (-3, -2)),
    "pad_mode": lambda lib, x: _pad(lib, x, (1, 1), mode="foo"),
    "pad_value": lambda lib, x: _pad(lib, x, (1, 1), mode="reflect", value=1.0),
    "pad_reflect_big": lambda lib, x: _pad(lib, x, (4, 0), mode="reflect"),
    "pad_reflect_big_2d": lambda lib, x: _pad(lib, x[None], (0, 0, 3, 3), mode="reflect"),
    "pad_reflect_1d": lambda lib, x: _pad(lib, x[0], (1, 1), mode="reflect"),
    "pad_reflect_dims": lambda lib, x: _pad(lib, x, (1, 1, 1, 1), mode="reflect"),
    "pad_circular_wrap": lambda lib, x: _pad(lib, x, (5, 0), mode="circular"),
    "pad_replicate_empty": lambda lib, x: _pad(lib, x[:, :0], (1, 1), mode="replicate"),
    "t_3d": lambda lib, x: x[None].t(),
}


@pytest.mark.parametrize("name", sorted(MISUSE))
def test_errors_match_torch(torch, name):
    fn = MISUSE[name]
    with pytest.raises(Exception) as ref:
        fn(torch, _x(lib=torch))
    with pytest.raises(type(ref.value)) as err:
        fn(retrograd, _x())
    assert str(err.value) == str(ref.value)


def test_repeat_interleave_tensor_is_index_select(torch):
    """With a tensor of repeats, PyTorch's composite is index_select by the repeated indices:
    its node keeps the dim as given and the index (a pack hook sees it)."""
    for lib in (retrograd, torch):
        packed = []
        x = lib.ones(2, 3, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t, p=packed: p.append(t.shape) or t,
                                                    lambda t: t):
            y = x.repeat_interleave(lib.tensor([1, 2]), dim=-2)
        assert y.grad_fn.name() == "IndexSelectBackward0"
        assert y.grad_fn._saved_index.tolist() == [0, 1, 1]
        assert [tuple(s) for s in packed] == [(3,)]
        with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no"):
            lib.tensor(3.0).repeat_interleave(lib.tensor([2]), dim=0)
