"""Op table entries for the shape family: views, copies that rearrange, joins, diagonals, pads.

Multi-output ops (split, chunk, tensor_split, unbind) are checked through one of their outputs
(so the grad_fn name is compared and the other outputs' gradients count as zeros) and through
a sum of all of them (every output's gradient used).
"""

from __future__ import annotations

from .op_table import OpInfo, _sh


def _pad(lib, *args, **kwargs):
    nn = getattr(lib, "nn", None)
    fn = getattr(getattr(nn, "functional", None), "pad", None)
    if fn is None:
        from retrograd.ops.padding import pad as fn
    return fn(*args, **kwargs)


def _weighted(parts):
    """Every piece used, each with its own weight, so each piece's gradient matters."""
    total = None
    for i, p in enumerate(parts):
        s = (p * (i + 1)).sum()
        total = s if total is None else total + s
    return total


M = _sh(((3, 4),))
M3 = _sh(((2, 3, 4),))

OPS = [
    # views
    OpInfo("view_as", lambda lib, a, b: a.view_as(b), _sh(((3, 4), (12,)), ((3, 4), (2, 6)))),
    OpInfo("reshape_as", lambda lib, a, b: a.t().reshape_as(b), _sh(((3, 4), (12,)))),
    OpInfo("reshape_fn", lambda lib, a: lib.reshape(a, (-1, 2)), _sh(((3, 4),), ((0, 2),))),
    OpInfo("flatten_fn", lambda lib, a: lib.flatten(a, 0, -2), _sh(((2, 3, 4),))),
    OpInfo("flatten_0d", lambda lib, a: a.flatten(), _sh(((),))),
    OpInfo("flatten_noncontig", lambda lib, a: a.transpose(0, 2).flatten(), M3),
    OpInfo("unflatten", lambda lib, a: a.unflatten(1, (2, -1)), _sh(((3, 4),), ((2, 4, 1),))),
    OpInfo("unflatten_fn", lambda lib, a: lib.unflatten(a.t(), -1, (1, 3)), M),
    OpInfo("ravel", lambda lib, a: a.ravel(), _sh(((3, 4),), ((),))),
    OpInfo("ravel_noncontig", lambda lib, a: lib.ravel(a.t()), M),
    OpInfo("squeeze_dims", lambda lib, a: a.squeeze((0, 2)), _sh(((1, 3, 1, 2),))),
    OpInfo("squeeze_neg", lambda lib, a: lib.squeeze(a, -1), _sh(((3, 1),), ((),))),
    OpInfo("unsqueeze_fn", lambda lib, a: lib.unsqueeze(a, 0), _sh(((3, 4),), ((0,),))),
    OpInfo("permute_fn", lambda lib, a: lib.permute(a, (1, -1, 0)), M3),
    OpInfo("movedim", lambda lib, a: a.movedim(0, -1), M3),
    OpInfo("movedim_multi", lambda lib, a: lib.movedim(a, (0, 1), (2, 0)), M3),
    OpInfo("moveaxis", lambda lib, a: lib.moveaxis(a, -1, 0), M3),
    OpInfo("swapaxes", lambda lib, a: a.swapaxes(0, 1), M),
    OpInfo("swapdims", lambda lib, a: lib.swapdims(a, -1, 0), M3),
    OpInfo("t", lambda lib, a: a.t(), _sh(((3, 4),), ((4,),), ((),))),
    OpInfo("t_fn", lambda lib, a: lib.t(a), M),
    OpInfo("mT", lambda lib, a: a.mT, M3),
    OpInfo("mH", lambda lib, a: a.mH, M3),
    OpInfo("H", lambda lib, a: a.H, M),
    OpInfo("adjoint", lambda lib, a: a.adjoint(), _sh(((3, 4),), ((2, 3, 4),))),
    OpInfo("adjoint_fn", lambda lib, a: lib.adjoint(a), M),
    OpInfo("expand_as", lambda lib, a, b: a.expand_as(b), _sh(((3, 1), (2, 3, 4)))),
    OpInfo("expand_neg", lambda lib, a: a.expand(2, -1, 4), _sh(((3, 1),))),
    OpInfo("broadcast_to", lambda lib, a: lib.broadcast_to(a, (2, 3, 4)), _sh(((4,),), ((),))),
    OpInfo("broadcast_to_method", lambda lib, a: a.broadcast_to((3, 4)), _sh(((3, 1),))),
    OpInfo("broadcast_tensors", lambda lib, a, b: lib.broadcast_tensors(a, b)[1],
           _sh(((3, 1), (4,)), ((2, 3), ()))),
    OpInfo("broadcast_tensors_all", lambda lib, a, b: _weighted(lib.broadcast_tensors(a, b)),
           _sh(((3, 1), (4,)), ((3, 4), (3, 4)))),
    OpInfo("diagonal", lambda lib, a: a.diagonal(), _sh(((3, 4),), ((4, 3),))),
    OpInfo("diagonal_offset", lambda lib, a: lib.diagonal(a, 1), M),
    OpInfo("diagonal_neg_offset", lambda lib, a: a.diagonal(offset=-1), M),
    OpInfo("diagonal_dims", lambda lib, a: a.diagonal(1, -1, 0), M3),
    OpInfo("diagonal_empty", lambda lib, a: a.diagonal(5), M),
    OpInfo("unfold", lambda lib, a: a.unfold(1, 2, 1), M),
    OpInfo("unfold_step", lambda lib, a: a.unfold(-1, 2, 2), _sh(((3, 5),), ((2, 3, 4),))),
    OpInfo("unfold_dim0", lambda lib, a: a.unfold(0, 3, 1), _sh(((5,),))),
    OpInfo("unfold_0d", lambda lib, a: a.unfold(0, 1, 1), _sh(((),))),
    OpInfo("unfold_size0", lambda lib, a: a.unfold(1, 0, 2), M),
    # as_strided reads storage: overlapping windows sum their gradients; on a transposed
    # (non-contiguous) input it reads memory order; on a slice, storage past the slice
    OpInfo("narrow_copy", lambda lib, a: a.narrow_copy(1, -3, 2), M),
    OpInfo("as_strided", lambda lib, a: a.as_strided((3, 3), (1, 2), 1), M),
    OpInfo("as_strided_overlap", lambda lib, a: (a * 1).as_strided((4, 3), (2, 1)), M),
    OpInfo("as_strided_of_t", lambda lib, a: (a * 1).t().as_strided((2, 4), (1, 3), 1), M),
    OpInfo("as_strided_of_slice", lambda lib, a: (a * 1)[1:, 1:].as_strided((2, 2), (1, 4)),
           M),
    # multi-output views
    OpInfo("split", lambda lib, a: a.split(2)[1], _sh(((5, 3),), ((4, 2),))),
    OpInfo("split_all", lambda lib, a: _weighted(lib.split(a, 2, dim=1)), M),
    OpInfo("split_sizes", lambda lib, a: a.split([1, 3], -1)[0], M),
    OpInfo("split_sizes_all", lambda lib, a: _weighted(a.split([2, 0, 1])), M),
    OpInfo("chunk", lambda lib, a: a.chunk(3, 1)[2], _sh(((3, 5),))),
    OpInfo("chunk_all", lambda lib, a: _weighted(lib.chunk(a, 2)), _sh(((3, 4),), ((5,),))),
    OpInfo("tensor_split", lambda lib, a: a.tensor_split(3, dim=1)[0], _sh(((3, 5),))),
    OpInfo("tensor_split_idx",
           lambda lib, a: _weighted(lib.tensor_split(a, [1, 3, 2, 9])), _sh(((4, 2),))),
    OpInfo("tensor_split_tensor",
           lambda lib, a: _weighted(a.tensor_split(lib.tensor([1, 3]), 1)), M),
    OpInfo("unbind", lambda lib, a: a.unbind(1)[2], M),
    OpInfo("unbind_all", lambda lib, a: _weighted(lib.unbind(a)), M),
    # copies that rearrange
    OpInfo("repeat", lambda lib, a: a.repeat(2, 1, 3), _sh(((3, 2),), ((2,),), ((),), ((0, 2),))),
    OpInfo("repeat_same_ndim", lambda lib, a: a.repeat(1, 2), M),
    OpInfo("tile", lambda lib, a: lib.tile(a, (2,)), _sh(((3, 2),), ((),))),
    OpInfo("tile_more", lambda lib, a: a.tile((2, 1, 2)), _sh(((3, 2),))),
    OpInfo("repeat_interleave", lambda lib, a: a.repeat_interleave(2),
           _sh(((3, 2),), ((),), ((0,),))),
    OpInfo("repeat_interleave_dim", lambda lib, a: lib.repeat_interleave(a, 3, dim=-1), M),
    OpInfo("repeat_interleave_tensor",
           lambda lib, a: a.repeat_interleave(lib.tensor([1, 0, 2]), dim=0), M),
    OpInfo("repeat_interleave_tensor1",
           lambda lib, a: lib.repeat_interleave(a, lib.tensor([2]), dim=1), M),
    OpInfo("flip", lambda lib, a: a.flip(0), _sh(((3, 4),), ((),), ((0, 2),))),
    OpInfo("flip_dims", lambda lib, a: lib.flip(a, (0, -1)), M3),
    OpInfo("flip_varargs", lambda lib, a: a.flip(1, 2), M3),
    OpInfo("fliplr", lambda lib, a: a.fliplr(), M3),
    OpInfo("flipud", lambda lib, a: lib.flipud(a), _sh(((3, 4),), ((5,),))),
    OpInfo("roll", lambda lib, a: a.roll(1, 0), _sh(((3, 4),), ((0, 2),))),
    OpInfo("roll_flat", lambda lib, a: lib.roll(a, -5), _sh(((3, 4),), ((),))),
    OpInfo("roll_dims", lambda lib, a: a.roll((1, -2), (-1, 0)), M3),
    OpInfo("rot90", lambda lib, a: a.rot90(), M),
    OpInfo("rot90_k", lambda lib, a: lib.rot90(a, 2, (1, 2)), M3),
    OpInfo("rot90_neg", lambda lib, a: a.rot90(-1, [-1, 0]), M3),
    OpInfo("rot90_k3", lambda lib, a: a.rot90(3), M),
    # joins
    OpInfo("hstack", lambda lib, a, b: lib.hstack([a, b]),
           _sh(((3, 4), (3, 2)), ((3,), (2,)), ((), ()))),
    OpInfo("vstack", lambda lib, a, b: lib.vstack((a, b)), _sh(((3, 4), (1, 4)), ((4,), (4,)))),
    OpInfo("row_stack", lambda lib, a, b: lib.row_stack([a, b]), _sh(((4,), (2, 4)))),
    OpInfo("dstack", lambda lib, a, b: lib.dstack([a, b]),
           _sh(((3, 4), (3, 4)), ((4,), (4,)), ((), ()), ((2, 3, 1), (2, 3, 2)))),
    OpInfo("column_stack", lambda lib, a, b: lib.column_stack([a, b]),
           _sh(((3,), (3, 2)), ((), ()), ((4,), (4,)))),
    OpInfo("concat", lambda lib, a, b: lib.concat([a, b], dim=-1), _sh(((3, 4), (3, 1)))),
    OpInfo("concatenate", lambda lib, a, b: lib.concatenate([a, b]), _sh(((3, 4), (1, 4)))),
    OpInfo("stack", lambda lib, a, b: lib.stack([a, b], -1), _sh(((3, 4), (3, 4)), ((), ()))),
    # diagonals and triangles
    OpInfo("diag_1d", lambda lib, a: lib.diag(a), _sh(((3,),), ((0,),))),
    OpInfo("diag_1d_offset", lambda lib, a: a.diag(-2), _sh(((3,),))),
    OpInfo("diag_2d", lambda lib, a: a.diag(), M),
    OpInfo("diag_2d_offset", lambda lib, a: lib.diag(a, 2), M),
    OpInfo("diag_embed", lambda lib, a: a.diag_embed(), _sh(((3, 4),), ((3,),))),
    OpInfo("diag_embed_args", lambda lib, a: lib.diag_embed(a, -1, 0, 2), M3),
    OpInfo("tril", lambda lib, a: a.tril(), _sh(((3, 4),), ((2, 3, 4),), ((0, 3),))),
    OpInfo("tril_k", lambda lib, a: lib.tril(a, diagonal=-1), M),
    OpInfo("triu", lambda lib, a: lib.triu(a), _sh(((3, 4),), ((2, 3, 4),))),
    OpInfo("triu_k", lambda lib, a: a.triu(2), M),
    # in-place forms, on a non-leaf copy
    OpInfo("tril_", lambda lib, a: (a * 1).tril_(1), M),
    OpInfo("triu_", lambda lib, a: (a * 1).triu_(), M),
    OpInfo("triu_view_", lambda lib, a: _inplace_on_view(a, lambda v: v.triu_()), M3),
    OpInfo("t_", lambda lib, a: (a * 1).t_(), M),
    OpInfo("transpose_", lambda lib, a: (a * 1).transpose_(0, -1), M3),
    OpInfo("swapaxes_", lambda lib, a: (a * 1).swapaxes_(0, 1), M),
    OpInfo("unsqueeze_", lambda lib, a: (a * 1).unsqueeze_(1), M),
    OpInfo("squeeze_", lambda lib, a: (a * 1).squeeze_(), _sh(((1, 3, 1),))),
    OpInfo("squeeze_dim_", lambda lib, a: (a * 1).squeeze_(0), _sh(((1, 3, 1),))),
    OpInfo("squeeze_dims_", lambda lib, a: (a * 1).squeeze_((0, 2)), _sh(((1, 3, 1),))),
    OpInfo("inplace_view_then_mul", lambda lib, a: _view_t_then_mul(a), M),
    OpInfo("inplace_on_diagonal", lambda lib, a: _inplace_on_view(a, lambda v: v.mul_(3),
                                                                  "diagonal"), M),
    OpInfo("inplace_on_unfold", lambda lib, a: _inplace_on_view(a, lambda v: v.mul_(3),
                                                                "unfold"), M),
    OpInfo("inplace_on_as_strided", lambda lib, a: _inplace_on_view(a, lambda v: v.mul_(3),
                                                                    "as_strided"), M),
    OpInfo("inplace_on_tensor_split", lambda lib, a: _inplace_on_view(
        a, lambda v: v.mul_(3), "tensor_split"), M),
    # padding
    OpInfo("pad_constant", lambda lib, a: _pad(lib, a, (1, 2)), _sh(((3, 4),), ((0, 2),))),
    OpInfo("pad_constant_value", lambda lib, a: _pad(lib, a, (1, 0, 0, 2), value=1.5), M3),
    OpInfo("pad_constant_crop", lambda lib, a: _pad(lib, a, (-1, 2, 1, -2), "constant"), M3),
    OpInfo("pad_reflect", lambda lib, a: _pad(lib, a, (2, 3), mode="reflect"),
           _sh(((3, 4),), ((2, 3, 4),))),
    OpInfo("pad_reflect_2d", lambda lib, a: _pad(lib, a, (1, 2, 2, 0), mode="reflect"),
           _sh(((2, 3, 4),),)),
    OpInfo("pad_reflect_3d", lambda lib, a: _pad(lib, a, (1, 0, 0, 1, 1, 1), mode="reflect"),
           _sh(((1, 2, 2, 3),),)),
    OpInfo("pad_reflect_neg", lambda lib, a: _pad(lib, a, (-1, 2), mode="reflect"),
           _sh(((2, 5),),)),
    OpInfo("pad_replicate", lambda lib, a: _pad(lib, a, (2, 1), mode="replicate"),
           _sh(((3, 4),),)),
    OpInfo("pad_replicate_2d", lambda lib, a: _pad(lib, a, (1, 2, 3, 1), mode="replicate"),
           _sh(((2, 3, 4),), ((1, 2, 3, 2),))),
    OpInfo("pad_replicate_neg", lambda lib, a: _pad(lib, a, (2, -3), mode="replicate"),
           _sh(((2, 5),),)),
    OpInfo("pad_circular", lambda lib, a: _pad(lib, a, (1, 2), mode="circular"),
           _sh(((3, 4),),)),
    OpInfo("pad_circular_2d", lambda lib, a: _pad(lib, a, (2, 1, 1, 3), mode="circular"),
           _sh(((2, 3, 4),),)),
    OpInfo("pad_circular_neg", lambda lib, a: _pad(lib, a, (-2, 3), mode="circular"),
           _sh(((2, 5),),)),
]


def _view_t_then_mul(a):
    y = a * 1
    v = y[1:]
    v.t_()
    v.mul_(2)
    return y


def _inplace_on_view(a, mutate, kind="slice"):
    y = a * 1
    if kind == "diagonal":
        v = y.diagonal()
    elif kind == "unfold":
        v = y.unfold(1, 2, 2)
    elif kind == "as_strided":
        v = y.t().as_strided((2, 2), (4, 1), 1)
    elif kind == "tensor_split":
        v = y.tensor_split(2)[1]
    else:
        v = y[1:]
    mutate(v)
    return y
