"""Batching rules, installed in the ``vmap`` slot of the primitives they batch.

A rule is ``rule(ctx, P, inputs, batched)``: ``inputs`` are the call's inputs in physical form
(a batched one has the batch as dim 0), ``batched`` a flag per input, ``ctx`` a ``Batch``
(batch size, traced output shapes, node attributes). It returns the physical output(s), or
None where it cannot batch this call (the replay then falls back to the per-sample loop). Most
rules move the batch dim out of the way and call the same op on the physical tensors:
pointwise ops broadcast once each batched input has 1-sized dims after its batch dim,
reductions and views shift their dims by one, products let matmul broadcast over the batch.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._dtypes import FROM_NP
from .._tensor import Tensor, make
from ..ops import (
    _views,
    arithmetic,
    compare,
    copies,
    join,
    linalg,
    nn_activation,
    nn_attention,
    nn_conv,
    nn_norm,
    reduction,
    shape,
    sorting,
    special,
    strided,
    unary,
)
from ..ops._apply import apply_binary, apply_unary
from ._trace import TensorMethod

__all__ = ["Batch", "view_rule", "install"]

_HOOK_KEYS = ("pointwise", "fwd", "array")


class Batch:
    """What a rule knows besides its inputs: the batch size ``n``, the traced outputs'
    ``(shape, dtype, requires_grad)`` (``out_meta``), and the call's node attributes
    (``attrs``: name -> ``(value, batched)``; a batched value is a physical tensor)."""

    __slots__ = ("n", "out_meta", "attrs")

    def __init__(self, n, out_meta, attrs) -> None:
        self.n = n
        self.out_meta = out_meta
        self.attrs = attrs

    def attr(self, name, default=None):
        return self.attrs[name][0] if name in self.attrs else default

    @staticmethod
    def rank(x, batched: bool) -> int:
        """The logical rank of a physical input (0 for a number)."""
        if isinstance(x, Tensor):
            return x._data.ndim - 1 if batched else x._data.ndim
        return np.ndim(x)

    @staticmethod
    def align(x, batched: bool, r: int):
        """``x`` ready to broadcast at logical rank ``r``: a batched input gets 1-sized dims
        after its batch dim (an unbatched one broadcasts from the right as it is)."""
        if not batched:
            return x
        s = x._data.shape
        if len(s) - 1 >= r:
            return x
        return shape.reshape(x, (s[0],) + (1,) * (r - len(s) + 1) + s[1:])

    def full(self, x, batched: bool):
        """``x`` with the batch dim, expanded if it had none."""
        if batched:
            return x
        if not isinstance(x, Tensor):
            x = make(np.asarray(x))
        return shape.expand(x, (self.n,) + tuple(x._data.shape))

    def node_attrs(self):
        """The plain node attributes (None if one is batched: the generic rules cannot pass
        it on)."""
        out = {}
        for k, (v, b) in self.attrs.items():
            if k in _HOOK_KEYS:
                continue
            if b:
                return None
            out[k] = v
        return out


def _dims(d):
    return tuple(k + 1 for k in d)


# -- pointwise -----------------------------------------------------------------------------------

def _unary(ctx, P, ins, bat):
    (x,) = ins
    a = ctx.attr("array")
    attrs = ctx.node_attrs()
    if attrs is None or (a is not None and a is not x):
        return None
    return apply_unary(P, x, None if a is None else x._data, **attrs)


def _binary(ctx, P, ins, bat):
    (a, b), (ba, bb) = ins, bat
    fwd = ctx.attr("fwd")
    attrs = ctx.node_attrs()
    if fwd is None or attrs is None or not isinstance(a, Tensor):
        return None
    r = max(ctx.rank(a, ba), ctx.rank(b, bb))
    a, b = ctx.align(a, ba, r), ctx.align(b, bb, r)
    want = ctx.out_meta[0][1]
    if isinstance(b, Tensor) and a._data.dtype != b._data.dtype and want.kind in "fc":
        # A logically 0-dim operand is weak in type promotion; batched it has a dim: cast
        # both to the result's dtype, as the per-sample call computes.
        a, b = a.to(FROM_NP[want]), b.to(FROM_NP[want])
    return apply_binary(P, fwd, a, b, **attrs)


def _method(ctx, P, ins, bat):
    """A comparison or bitwise operator (``_trace.TensorMethod``), broadcast over the batch."""
    name = ctx.attr("method")
    if len(ins) == 1:
        return getattr(Tensor, name)(ins[0])
    (a, b), (ba, bb) = ins, bat
    r = max(ctx.rank(a, ba), ctx.rank(b, bb))
    a, b = ctx.align(a, ba, r), ctx.align(b, bb, r)
    want = ctx.out_meta[0][1]
    if isinstance(b, Tensor) and a._data.dtype != b._data.dtype and want.kind != "b":
        a, b = a.to(FROM_NP[want]), b.to(FROM_NP[want])  # see _binary
    return getattr(Tensor, name)(a, b)


def _where(ctx, P, ins, bat):
    (a, b), (ba, bb) = ins, bat
    c, bc = ctx.attrs["_cond"]
    if not isinstance(c, Tensor):
        c = make(np.asarray(c))
    r = max(ctx.rank(a, ba), ctx.rank(b, bb), ctx.rank(c, bc))
    return compare.where(ctx.align(c, bc, r), ctx.align(a, ba, r), ctx.align(b, bb, r))


# -- views ---------------------------------------------------------------------------------------

def view_rule(ctx, P, ins, bat):
    """A view, by its recorded step, with dims shifted past the batch dim."""
    (x,), (b,) = ins, bat
    x = ctx.full(x, b)
    n = ctx.n
    name, args = ctx.attr("step")
    if name == "alias":
        return shape.reshape(x, tuple(x._data.shape))
    if name == "expand":
        (s,) = args
        return shape.expand(ctx.align(x, True, len(s)), (n,) + tuple(s))
    if name == "permute":
        return shape.permute(x, (0,) + _dims(args[0]))
    if name == "reshape":
        return shape.reshape(x, (n,) + tuple(args[0]))
    if name == "select":
        return _views.select(x, args[0] + 1, args[1])
    if name == "slice_dim":
        return _views.slice_dim(x, args[0] + 1, *args[1:])
    if name == "transpose":
        return shape.transpose(x, args[0] + 1, args[1] + 1)
    if name == "unsqueeze":
        return shape.unsqueeze(x, args[0] + 1)
    if name == "diagonal":
        return shape.diagonal(x, args[0], args[1] + 1, args[2] + 1)
    if name == "unfold" and x._data.ndim > 1:
        return x.unfold(args[0] + 1, args[1], args[2])
    if name == "as_strided_view":
        # PyTorch's rule: the physical tensor's storage, the batch dim's stride in front (each
        # sample's offset counts from its own start)
        size, stride, offset = args[:3]
        return strided.as_strided(x, (n,) + tuple(size), (x.stride()[0],) + tuple(stride),
                                  offset)
    return None


# -- products ------------------------------------------------------------------------------------

def _product(P, a, b, ba, bb):
    if P is linalg.DotBackward0 or P is linalg.VdotBackward0:
        if a._data.dtype.kind == "c":
            return None  # vdot conjugates
        if ba and bb:
            return linalg.matmul(shape.unsqueeze(a, 1), shape.unsqueeze(b, 2)).reshape(-1)
        return linalg.matmul(a, b) if ba else linalg.matmul(b, a)
    if P is linalg.MvBackward0 and bb:
        return shape.squeeze(linalg.matmul(a, shape.unsqueeze(b, -1)), -1)
    if P is linalg.MmBackward0 and ba and bb and a._data.dtype == b._data.dtype:
        # Two batches of matrices (a layer's per-sample weights under vmap(grad)): one bmm,
        # which is what matmul comes to, without the no-op views around it (each a node).
        return linalg._product(linalg.BmmBackward0, a, b)
    return linalg.matmul(a, b)


def _products(ctx, P, ins, bat):
    (a, b), (ba, bb) = ins, bat
    return _product(P, a, b, ba, bb)


def _add_product(ctx, P, ins, bat):
    (x, m1, m2), (bx, b1, b2) = ins, bat
    beta, alpha = ctx.attr("_beta", 1), ctx.attr("_alpha", 1)
    if beta == 0:
        return None  # the input is ignored but still differentiated (to zeros): the loop
    kind = linalg.MvBackward0 if P is linalg.AddmvBackward0 else linalg.MmBackward0
    out = _product(kind, m1, m2, b1, b2) if b1 or b2 else \
        ctx.full(_product(kind, m1, m2, False, False), True)
    if alpha != 1:
        out = out * alpha
    if beta != 0:
        r = out._data.ndim - 1
        out = out + (ctx.align(x, bx, r) if beta == 1 else ctx.align(x, bx, r) * beta)
    return out


# -- reductions ----------------------------------------------------------------------------------

def _reduce(ctx, P, ins, bat, fn, dims_attr):
    (x,), (b,) = ins, bat
    x = ctx.full(x, b)
    lr = x._data.ndim - 1
    dims = ctx.attr(dims_attr) if dims_attr else None
    dims = tuple(range(lr)) if dims is None else tuple(dims)
    out_shape, out_dtype, _ = ctx.out_meta[0]
    keep = len(out_shape) == lr and lr > 0 and len(dims) > 0
    if lr == 0 or not dims:
        x, dims = shape.reshape(x, (ctx.n, -1)), (0,)
        keep = False
    kw = {}
    if out_dtype != x._data.dtype and fn in (reduction.sum, reduction.mean):
        kw["dtype"] = FROM_NP[out_dtype]
    return fn(x, _dims(dims), keep, **kw)


def _sum(ctx, P, ins, bat):
    return _reduce(ctx, P, ins, bat, reduction.sum, "_dims" if P is reduction.SumBackward1
                   else None)


def _mean(ctx, P, ins, bat):
    return _reduce(ctx, P, ins, bat, reduction.mean, "_dims" if P is reduction.MeanBackward1
                   else None)


def _extreme(fn, dims_attr):
    def rule(ctx, P, ins, bat):
        return _reduce(ctx, P, ins, bat, fn, dims_attr)

    return rule


def _max_dim(ctx, P, ins, bat):
    (x,), (b,) = ins, bat
    x = ctx.full(x, b)
    if x._data.ndim == 1:
        return None  # a 0-dim input: left to the loop
    fn = reduction.max if P is reduction.MaxBackward0 else reduction.min
    return tuple(fn(x, ctx.attr("_dim") + 1, ctx.attr("_keepdim")))


def _softmax(ctx, P, ins, bat):
    (x,), (b,) = ins, bat
    x = ctx.full(x, b)
    fn = {nn_activation.SoftmaxBackward0: nn_activation.softmax,
          nn_activation.SafeSoftmaxBackward0: nn_activation._safe_softmax}.get(
        P, nn_activation.log_softmax)
    d = ctx.attr("_dim")
    if d is None:  # a 0-dim input
        return shape.reshape(fn(shape.unsqueeze(x, 1), 1), (ctx.n,))
    return fn(x, d + 1)


def _derived(*names):
    def mark(rule):
        rule.derived = names
        return rule

    return mark


@_derived("_idx")
def _max_dim_rule(ctx, P, ins, bat):
    return _max_dim(ctx, P, ins, bat)


@_derived("_total", "_coef", "_ignored")
def _nll_loss(ctx, P, ins, bat):
    (x,), (bx,) = ins, bat
    t, bt = ctx.attrs.get("_t", (None, False))
    if "_ignore" not in ctx.attrs or t is None:
        return None
    if not isinstance(t, Tensor):
        t = make(np.asarray(t))
    x, t = ctx.full(x, bx), ctx.full(t, bt)
    weight, ignore, red = ctx.attr("_weight"), ctx.attr("_ignore"), ctx.attr("_reduction")
    in_shape = ctx.attr("_in_shape")
    n = ctx.n
    rows = 1 if len(in_shape) == 1 else in_shape[0]
    x2 = shape.reshape(x, (n * rows,) + tuple(in_shape[-1:] if len(in_shape) == 1
                                              else in_shape[1:]))
    t2 = shape.reshape(t, (n * rows,) + tuple(t._data.shape[2:] if len(in_shape) > 1 else ()))
    loss = nn_activation.nll_loss_core(x2, t2, weight, ignore, "none", x2._data.shape[1])
    if red == "none":
        return shape.reshape(loss, (n,) + ctx.out_meta[0][0])
    tt = t._data.reshape(n, -1)
    ignored = tt == ignore
    if loss._data.size == n and (red == "sum" or weight is None and not ignored.any()):
        # One target a sample (the per-sample-gradient recipe), counted with weight 1: its
        # sum and its mean are its loss (x / 1 is x: no division node).
        return shape.reshape(loss, (n,))
    total = shape.reshape(loss, (n, -1)).sum(1)
    if red == "sum":
        return total
    dt = x._data.dtype
    if weight is not None:
        w = weight._data.astype(dt)[np.where(ignored, 0, tt)]
    else:
        w = np.ones(tt.shape, dt)
    count = np.where(ignored, np.zeros((), dt), w).sum(axis=1, dtype=dt)
    empty = ignored.all(axis=1)
    if empty.any():
        # A sample whose every target is ignored: a NaN loss (0 / 0) with gradient 0, as
        # PyTorch's kernel gives (it never divides at an ignored target)
        count = np.where(empty, np.ones((), dt), count)
        return total / count + make(np.where(empty, dt.type(np.nan), dt.type(0)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / count



# -- one input and constant attributes: the op again, its dims shifted ----------------------------

def _one(fn):
    """A rule for a one-input primitive: ``fn(ctx, x)`` on the physical input (batched)."""
    def rule(ctx, P, ins, bat):
        return fn(ctx, ctx.full(ins[0], bat[0]))

    return rule


def _consts(*names):
    """Mark attributes that ops make from Python numbers (fresh arrays each call): the trace
    records their values as constants."""
    def mark(rule):
        rule.consts = names
        return rule

    return mark


def _keepdim(ctx, x) -> bool:
    """A reduction kept its dims if the traced output has the input's rank."""
    return len(ctx.out_meta[0][0]) == x._data.ndim - 1


def _all_dims(ctx, x):
    return tuple(range(1, x._data.ndim))


def _norm(ctx, x):
    dims = ctx.attr("_dims")
    if x._data.ndim == 1:
        return None
    d = _all_dims(ctx, x) if dims is None else _dims(dims)
    return reduction.vector_norm(x, ctx.attr("_p"), d, _keepdim(ctx, x))


def _var(P):
    fn = reduction.var if P is reduction.VarBackward0 else reduction.std

    def rule(ctx, x):
        if x._data.ndim == 1:
            return None
        return fn(x, _dims(ctx.attr("_rdims")), keepdim=_keepdim(ctx, x),
                  correction=ctx.attr("_correction"))

    return rule


def _prod(ctx, x):
    d = ctx.attr("_dim")
    if d is None:
        return reduction.prod(shape.reshape(x, (ctx.n, -1)), 1)
    if x._data.ndim == 1:
        return None
    return reduction.prod(x, d + 1, ctx.attr("_keepdim"))


def _repeat(ctx, x):
    reps, padded = ctx.attr("_reps"), ctx.attr("_padded")
    return copies.repeat(shape.reshape(x, (ctx.n,) + tuple(padded)), (1,) + tuple(reps))


def _elu(ctx, x):
    if ctx.attr("_scale") != 1.0 or ctx.attr("_input_scale") != 1.0:
        return None  # selu, celu: their own constants
    return nn_activation.elu(x, ctx.attr("_alpha"))


@_consts("_e")
def _pow_scalar(ctx, P, ins, bat):
    e = ctx.attr("_e")
    return arithmetic.pow(ctx.full(ins[0], bat[0]), e.item() if isinstance(e, np.ndarray) else e)


def _clamp_tensors(ctx, P, ins, bat):
    r = max(ctx.rank(x, b) for x, b in zip(ins, bat))
    x, lo, hi = (ctx.align(x, b, r) for x, b in zip(ins, bat))
    return unary.clamp(x if bat[0] else ctx.full(x, False), lo, hi)


def _addcmul(ctx, P, ins, bat):
    r = max(ctx.rank(x, b) for x, b in zip(ins, bat))
    x, t1, t2 = (ctx.align(x, b, r) for x, b in zip(ins, bat))
    fn = arithmetic.addcmul if P is arithmetic.AddcmulBackward0 else arithmetic.addcdiv
    return fn(x, t1, t2, value=ctx.attr("_value"))


def _mse(ctx, P, ins, bat):
    (a, b), (ba, bb) = ins, bat
    r = max(ctx.rank(a, ba), ctx.rank(b, bb))
    a, b = ctx.align(a, ba, r), ctx.align(b, bb, r)
    loss = nn_activation.mse_loss(a if ba else ctx.full(a, False), b, reduction="none")
    red = ctx.attr("_reduction")
    if red == "none":
        return loss
    if loss._data.ndim == 1:
        return loss
    d = _all_dims(ctx, loss)
    return loss.sum(d) if red == "sum" else loss.mean(d)


# -- copies and joins ----------------------------------------------------------------------------

def _clone(ctx, P, ins, bat):
    return shape.clone(ctx.full(ins[0], bat[0]))


def _to_copy(ctx, P, ins, bat):
    return ctx.full(ins[0], bat[0]).to(FROM_NP[ctx.out_meta[0][1]])


def _cat(ctx, P, ins, bat):
    xs = [ctx.full(x, b) for x, b in zip(ins, bat)]
    if any(x._data.ndim == 2 and x._data.shape[1] == 0 for x in xs):
        return None  # PyTorch's legacy empty 1-D operand: left to the loop
    return join.cat(xs, ctx.attr("_dim") + 1)


def _stack(ctx, P, ins, bat):
    return join.stack([ctx.full(x, b) for x, b in zip(ins, bat)], ctx.attr("_dim") + 1)


def _split(ctx, P, ins, bat):
    """split/chunk: the traced pieces' sizes, along the dim past the batch dim."""
    x, d = ctx.full(ins[0], bat[0]), ctx.attr("_dim")
    return tuple(shape.split(x, [m[0][d] for m in ctx.out_meta], d + 1))


def _unbind(ctx, P, ins, bat):
    return tuple(shape.unbind(ctx.full(ins[0], bat[0]), ctx.attr("_dim") + 1))


def _logsumexp(ctx, P, ins, bat):
    x = ctx.full(ins[0], bat[0])
    lr = x._data.ndim - 1
    keep = ctx.attr("_keep") is None
    if lr == 0:
        out = reduction.logsumexp(shape.reshape(x, (ctx.n, 1)), 1, keepdim=False)
        return out
    dims = reduction._norm_dims(ctx.attr("_g"), lr)
    dims = tuple(range(lr)) if dims is None else dims
    return reduction.logsumexp(x, _dims(dims), keepdim=keep)


@_derived("_cols")
def _conv(ctx, P, ins, bat):
    """Convolution: a batch of images folds into the convolution's own batch; per-sample
    weights (model ensembles) become groups: the samples side by side in the channel dim."""
    (x, w, b), (bx, bw, bb) = ins, bat
    s, p, d, groups, transposed = ctx.attr("_params")
    out_hw, n = ctx.attr("_out_hw"), ctx.n
    x = ctx.full(x, bx)
    xs = tuple(x._data.shape)  # (n, N, C, *spatial)
    if not bw and not bb:
        y = nn_conv.conv_nd(shape.reshape(x, (n * xs[1],) + xs[2:]), w, b, s, p, d, groups,
                            transposed, out_hw)
        return shape.reshape(y, (n, xs[1]) + tuple(y._data.shape[1:]))
    w = ctx.full(w, bw)
    ws = tuple(w._data.shape)
    x2 = shape.reshape(shape.movedim(x, 0, 1), (xs[1], n * xs[2]) + xs[3:])
    w2 = shape.reshape(w, (n * ws[1],) + ws[2:])
    b2 = None if b is None else shape.reshape(ctx.full(b, bb), (-1,))
    y = nn_conv.conv_nd(x2, w2, b2, s, p, d, groups * n, transposed, out_hw)
    ys = tuple(y._data.shape)  # (N, n * C_out, *spatial)
    return shape.movedim(shape.reshape(y, (ys[0], n, ys[1] // n) + ys[2:]), 1, 0)


@_derived("_arg", "_masks")
def _max_pool2d(ctx, P, ins, bat):
    """2-D max pooling: the batch folds into the pooling's batch (an unbatched (C, H, W)
    sample is one (n, C, H, W) batch)."""
    x, n = ctx.full(ins[0], bat[0]), ctx.n
    xs = tuple(x._data.shape)
    if len(xs) == 5:
        x = shape.reshape(x, (n * xs[1],) + xs[2:])
    k, s, p, d = ctx.attr("_params")
    out, _ = nn_conv.max_pool2d_with_indices(x, k, s, p, d, ctx.attr("_ceil_mode"), False,
                                             ctx.attr("_no_stride"))
    return shape.reshape(out, (n,) + tuple(ctx.out_meta[0][0]))


def _avg_pool2d(ctx, P, ins, bat):
    """2-D average pooling: the batch folds into the pooling's batch, as max pooling's."""
    x, n = ctx.full(ins[0], bat[0]), ctx.n
    xs = tuple(x._data.shape)
    if len(xs) == 5:
        x = shape.reshape(x, (n * xs[1],) + xs[2:])
    out = nn_conv.avg_pool(x, ctx.attr("_params"), ctx.attr("_no_stride"))
    return shape.reshape(out, (n,) + tuple(ctx.out_meta[0][0]))


@_derived("_xhat", "_rstd", "_mean")
def _layer_norm(ctx, P, ins, bat):
    """Layer norm normalises trailing dims: the batch dim is one more leading dim; per-sample
    affine parameters (ensembles) scale and shift the normalised batch."""
    (x, w, b), (bx, bw, bb) = ins, bat
    x, ns, eps = ctx.full(x, bx), ctx.attr("_wshape"), ctx.attr("_eps")
    if not bw and not bb:
        return nn_norm.native_layer_norm(x, ns, w, b, eps)
    out = nn_norm.native_layer_norm(x, ns, None, None, eps)
    r = out._data.ndim - 1
    if w is not None:
        out = out * ctx.align(w, bw, r)
    return out if b is None else out + ctx.align(b, bb, r)


@_derived("_xhat", "_rstd", "_mean")
def _batch_norm(ctx, P, ins, bat):
    """Batch norm in eval mode with shared statistics: the batch folds into the norm's batch;
    per-sample affine parameters scale and shift after (training, or per-sample statistics:
    the loop)."""
    (x, w, b), (bx, bw, bb) = ins, bat
    running = ctx.attr("_running")
    if ctx.attr("_training") or running is None or any(r is None for r in running):
        return None
    x = ctx.full(x, bx)
    xs = tuple(x._data.shape)  # (n, N, C, *)
    shared = not bw and not bb
    out = nn_norm.native_batch_norm(shape.reshape(x, (ctx.n * xs[1],) + xs[2:]),
                                    w if shared else None, b if shared else None,
                                    running[0], running[1], False, 0.0, ctx.attr("_eps"))
    out = shape.reshape(out, xs)
    if shared:
        return out
    per_channel = (ctx.n, 1, xs[2]) + (1,) * (len(xs) - 3)  # per-sample affine parameters
    if w is not None:
        out = out * shape.reshape(ctx.full(w, bw), per_channel)
    return out if b is None else out + shape.reshape(ctx.full(b, bb), per_channel)


def _embedding(ctx, P, ins, bat):
    """Embedding: per-sample indices into a shared table."""
    (w,), (bw,) = ins, bat
    idx, bi = ctx.attrs.get("_indices", (None, False))
    if idx is None:
        return None
    if not isinstance(idx, Tensor):
        idx = make(np.asarray(idx))
    idx, pad, scale = ctx.full(idx, bi), ctx.attr("_pad"), ctx.attr("_scale")
    if not bw:
        return nn_norm.embedding(idx, w, pad, scale)
    if (pad is not None and pad >= 0) or scale:
        return None  # (rules on a table's rows: the loop)
    # Per-sample tables (a per-sample gradient's leaf): one table of all of them, each
    # sample's indices offset to its own rows.
    n, rows = ctx.n, w._data.shape[1]
    offset = np.arange(n).reshape((n,) + (1,) * (idx._data.ndim - 1)) * rows
    flat = shape.reshape(w, (n * rows,) + tuple(w._data.shape[2:]))
    return nn_norm.embedding(make(idx._data + offset), flat, -1, False)


@_derived("_p")
def _sdpa(ctx, P, ins, bat):
    """Scaled dot-product attention: the batch is one more leading dim of queries, keys and
    values; masks align to the scores (dropout, or a causal mask made per call: the loop)."""
    (q, k, v, fm), (bq, bk, bv, bf) = ins, bat
    allowed, ba = ctx.attrs.get("_allowed", (None, False))
    if ctx.attr("_keep") is not None or not isinstance(q, Tensor):
        return None
    r = ctx.rank(q, bq)
    q, k, v = (ctx.full(x, b) for x, b in ((q, bq), (k, bk), (v, bv)))
    if fm is not None:
        fm = ctx.align(fm, bf, r)
    if allowed is not None:
        allowed = ctx.align(allowed if isinstance(allowed, Tensor) else make(allowed), ba, r)
    return nn_attention.sdpa(q, k, v, fm, allowed, False, ctx.attr("_scale"), 0.0,
                             ctx.attr("_groups"), None, ctx.attr("_name"))


# -- user autograd.Functions ---------------------------------------------------------------------

class _VmapInfo:
    """What a Function's ``vmap`` staticmethod is told, as in PyTorch."""

    def __init__(self, batch_size: int, randomness: str) -> None:
        self.batch_size = batch_size
        self.randomness = randomness


def function_rule(ctx, cls, ins, bat):
    """A user Function: its own ``vmap`` staticmethod if it has one (PyTorch's signature,
    ``vmap(info, in_dims, *args) -> (outputs, out_dims)``); otherwise (``generate_vmap_rule``
    or none) its ``apply`` once per sample, stacked: this call alone loops."""
    rule = getattr(cls, "vmap", None)
    if rule is not None and not getattr(cls, "generate_vmap_rule", False):
        out, out_dims = rule(_VmapInfo(ctx.n, "error"), tuple(0 if b else None for b in bat),
                             *ins)
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        ods = (out_dims,) * len(outs) if not isinstance(out_dims, tuple) else out_dims
        res = tuple(ctx.full(o, False) if d is None else shape.movedim(o, d, 0)
                    for o, d in zip(outs, ods))
        return res[0] if single else res
    if not getattr(cls, "generate_vmap_rule", False):
        warnings.warn(
            "There is a performance drop because we have not yet implemented the batching "
            f"rule for {cls.__name__}. Please file us an issue on GitHub so that we can "
            "prioritize its implementation.", UserWarning, stacklevel=2)
    per = [cls.apply(*[_views.select(x, 0, i) if b else x for x, b in zip(ins, bat)])
           for i in range(ctx.n)]
    if isinstance(per[0], tuple):
        return tuple(join.stack([p[k] for p in per]) for k in range(len(per[0])))
    return join.stack(per)


def _none(ctx, P, ins, bat):
    return None


def install() -> None:
    """Put the rules in their primitives' ``vmap`` slots."""
    table = {
        linalg.MmBackward0: _products, linalg.MvBackward0: _products,
        linalg.DotBackward0: _products, linalg.BmmBackward0: _products,
        linalg.VdotBackward0: _products,
        linalg.AddmmBackward0: _add_product, linalg.AddmvBackward0: _add_product,
        reduction.SumBackward0: _sum, reduction.SumBackward1: _sum,
        reduction.MeanBackward0: _mean, reduction.MeanBackward1: _mean,
        reduction.AmaxBackward0: _extreme(reduction.amax, "_dims"),
        reduction.AminBackward0: _extreme(reduction.amin, "_dims"),
        reduction.MaxBackward1: _extreme(reduction.amax, None),
        reduction.MinBackward1: _extreme(reduction.amin, None),
        reduction.MaxBackward0: _max_dim_rule, reduction.MinBackward0: _max_dim_rule,
        nn_activation.SoftmaxBackward0: _softmax, nn_activation.LogSoftmaxBackward0: _softmax,
        nn_activation.SafeSoftmaxBackward0: _softmax,
        nn_activation.NllLossBackward0: _nll_loss, nn_activation.NllLoss2DBackward0: _nll_loss,
        compare.WhereBackward0: _where, TensorMethod: _method,
        shape.CloneBackward0: _clone, shape.ToCopyBackward0: _to_copy,
        join.CatBackward0: _cat, join.StackBackward0: _stack,
        linalg.LinalgCrossBackward0: _none,  # two inputs, but not pointwise: no rule yet
        reduction.LinalgVectorNormBackward0: _one(_norm),
        reduction.VarBackward0: _one(_var(reduction.VarBackward0)),
        reduction.StdBackward0: _one(_var(reduction.StdBackward0)),
        reduction.ProdBackward0: _one(_prod), reduction.ProdBackward1: _one(_prod),
        sorting.CumsumBackward0: _one(lambda c, x: sorting.cumsum(x, c.attr("_dim") + 1)
                                      if x._data.ndim > 1 else None),
        copies.FlipBackward0: _one(lambda c, x: copies.flip(x, _dims(c.attr("_dims")))),
        copies.RepeatBackward0: _one(_repeat),
        shape.UnsafeViewBackward0: _one(lambda c, x: shape.reshape(
            x, (c.n,) + tuple(c.out_meta[0][0]))),
        unary.ClampBackward1: _one(lambda c, x: unary.clamp(x, c.attr("_lo"), c.attr("_hi"))),
        unary.ClampBackward0: _clamp_tensors,
        arithmetic.PowBackward0: _pow_scalar,
        arithmetic.AddcmulBackward0: _addcmul, arithmetic.AddcdivBackward0: _addcmul,
        nn_activation.MseLossBackward0: _mse,
        nn_activation.GeluBackward0: _one(lambda c, x: nn_activation.gelu(
            x, "tanh" if c.attr("_tanh") else "none")),
        nn_activation.SiluBackward0: _one(lambda c, x: nn_activation.silu(x)),
        nn_activation.SoftplusBackward0: _one(lambda c, x: nn_activation.softplus(
            x, c.attr("_beta"), c.attr("_th"))),
        nn_activation.LeakyReluBackward0: _one(lambda c, x: nn_activation.leaky_relu(
            x, c.attr("_slope"))),
        nn_activation.EluBackward0: _one(_elu),
        shape.SplitBackward0: _split, shape.SplitWithSizesBackward0: _split,
        shape.UnbindBackward0: _unbind,
        reduction.LogsumexpBackward0: _logsumexp,
        nn_conv.ConvolutionBackward0: _conv,
        nn_conv.MaxPool2DWithIndicesBackward0: _max_pool2d,
        nn_norm.NativeLayerNormBackward0: _layer_norm,
        nn_conv.AvgPool2DBackward0: _avg_pool2d,
        nn_norm.NativeBatchNormBackward0: _batch_norm,
        nn_norm.EmbeddingBackward0: _embedding,
        nn_attention.SdpaBackward: _sdpa,
    }
    for P, rule in table.items():
        P.vmap = staticmethod(rule)


# The families whose one- and two-input primitives are elementwise (linalg's products take the
# two-input path too, and have rules of their own).
_POINTWISE = {m.__name__ for m in (arithmetic, compare, special, unary)}


def pointwise_rule(P, attrs):
    """The generic rule of a pointwise call through ``apply``'s one- or two-input path."""
    if P.__module__ not in _POINTWISE:
        return None
    if "array" in attrs:
        return _unary
    if "fwd" in attrs:
        return _binary
    return None


install()
