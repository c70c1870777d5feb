"""The spec language of ``grad_fn._saved_<name>`` (see ``saved_attrs``): ``value`` reads one
spec on a node, and the helpers here derive what PyTorch's nodes show from what retrograd's keep
(dims as the op got them, outputs of fused composites, recomputed results, ...).
"""

from __future__ import annotations

import sys

import numpy as np

from .._tensor import Tensor, make
from . import saved as _saved

_REDUCTION = {"none": 0, "mean": 1, "sum": 2}


def _reduction(node):
    return _REDUCTION.get(node.__dict__.get("_reduction"), 1)


def _py(v):
    """A plain Python value (numbers as PyTorch's attributes give them)."""
    if isinstance(v, np.ndarray) and v.ndim == 0:
        return v.item()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, list):
        return tuple(v)
    return v


def _dims(node):
    d = node.__dict__.get("_dims")
    return None if d is None else tuple(d)


def _permute_dims(node):
    inv = node._inv
    dims = [0] * len(inv)
    for i, j in enumerate(inv):
        dims[j] = i
    return tuple(dims)


def _strides(shape) -> tuple:
    """Contiguous strides, in elements (retrograd keeps no strides for its saved inputs)."""
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= n
    return tuple(reversed(out))


def _indices(node):
    idx = node._idx
    if not node._keepdim and idx.ndim:
        idx = np.squeeze(idx, node._dim)
    return make(idx)


def _mat2(node):
    (w,) = node.saved(True)[1:2]
    return w


def _shape_of(i):
    def get(node):
        saved = node.saved(True)
        return tuple(saved[i].shape)
    return get


def _strides_of(i):
    """The saved input's strides, in elements, where its array has them (a transposed view
    keeps its own), else contiguous ones."""
    def get(node):
        a = node.saved(True)[i]._data
        if a.size > 1 and all(s >= 0 and s % a.itemsize == 0 for s in a.strides):
            return tuple(s // a.itemsize for s in a.strides)
        return _strides(a.shape)
    return get


def _arr(attr):
    """A kept array (or tensor) attribute, as a tensor; None stays None."""
    def get(node):
        v = getattr(node, attr, None)  # (through the hooks, where they packed it)
        if v is None or isinstance(v, Tensor):
            return v
        return make(np.asarray(v))
    return get


def _size(i, k):
    """Input ``i``'s size along ``k`` (PyTorch's ``<name>_sym_argsize_<k>``)."""
    return lambda n: int(n._meta[i][0][k])


def _out(i):
    """Output ``i`` of a node that keeps its outputs (a factorization's ``_outs``)."""
    return lambda n: n.outputs(_Tensors)[i]


class _Tensors:
    """The ``xp`` flag ``outputs`` reads: unpack as tensors."""
    TENSORS = True


def _diag_step(k):
    def get(node):
        steps = [a for name, a in node._steps if name == "diagonal"]
        return int(steps[-1][k])
    return get


def _split_sizes(node):
    return tuple(int(m[0][node._dim]) for m in node._out_meta)


def _group_stats(node):
    n, _, _, g = node._nclg
    return make(node._rstd.reshape(n, g))


def _layer_rstd(node):
    lead = node._xshape[:len(node._xshape) - len(node._wshape)]
    return make(node._rstd.reshape(tuple(lead) + (1,) * len(node._wshape)))


def _total_weight(node):
    t = node._total
    return make(np.zeros((), node._dtype.dtype if hasattr(node._dtype, "dtype") else float)
                if t is None else np.asarray(t))


_NOT = object()


def _as_int(v):
    return v if v is None or isinstance(v, bool) else int(v)


def _given(k=None, tup=False, fallback=None):
    """An argument as the op got it: PyTorch keeps dims as given (``-1``, not the wrapped
    ``1``), and the ops that take them keep them so (node attribute ``_g``, item ``k`` of it
    where they keep several); ``tup``: a dim list, as a tuple."""
    def get(node):
        g = node.__dict__.get("_g", _NOT)
        if g is _NOT or (k is not None and g is None):
            return _value(node, fallback)
        if k is not None:
            g = g[k]
        if g is None and fallback is not None:
            return _value(node, fallback)
        if tup and g is not None:
            return (_as_int(g),) if isinstance(g, (int, np.integer)) else \
                tuple(_as_int(d) for d in g)
        if isinstance(g, (list, tuple)):
            return tuple(_as_int(d) for d in g)
        return _as_int(g) if isinstance(g, (int, np.integer)) else g
    return get


def _index_given(node):
    """An index tensor as the op got it (negative entries unwrapped), else the kept one."""
    g = node.__dict__.get("_g")
    return g if isinstance(g, Tensor) else _arr("_idx")(node)


def _keep_none(node):
    """keepdim, from the reduced shape a node keeps only when keepdim was False."""
    return node._keep is None


def _fused_out(i):
    """Output ``i`` of a composite recorded as one node (``ops.fused``), from the graph the
    node keeps for its backward (None where only forward AD recorded it)."""
    def get(node):
        if node._saved is None:
            raise RuntimeError(_saved.FREED_MSG)
        if node._inner is None:
            return None
        outs = node._inner[0]
        o = outs[i] if isinstance(outs, tuple) else outs
        if o._data.dtype.kind in "fc":
            return _saved.unpacked_output(o._data, o._vc, node, i)
        return make(o._data)
    return get


def _conv_param(k):
    """Convolution parameter ``k`` (stride, padding, dilation), one entry per spatial dim: a
    1-D convolution runs as a 2-D one of height 1, and PyTorch's node keeps one entry."""
    def get(node):
        nd = len(node._meta[0][0]) - 2
        return tuple(int(v) for v in node._params[k][-nd:])
    return get


def _conv_output_padding(node):
    op = node.__dict__.get("_output_padding")
    if op is not None:
        return tuple(op)
    nd = len(node._meta[0][0]) - 2
    out = node.__dict__.get("_out_hw")
    if not node._params[4] or out is None:
        return (0,) * nd
    s, p, d = (_conv_param(k)(node) for k in range(3))
    x, k, out = node._x_hw[-nd:], node._w_shape[-nd:], tuple(out)[-nd:]
    return tuple(int(out[i] - ((x[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + 1))
                 for i in range(nd))


def _max_pool2d_indices(node):
    """max_pool2d's indices, derived from the window positions the node keeps (or finds
    again from the saved input); read through the node's module, which autograd cannot
    import."""
    (x,) = node.saved(False)
    mod = sys.modules[type(node).__module__]
    return make(mod._max_pool_indices(node._window_arg(x), node._in_shape[-2:], *node._params))


def _is_target(node):
    """multilabel_margin_loss's target as a mask: the classes listed before the first -1."""
    t = node._target.numpy()
    t2 = t.reshape(-1, t.shape[-1]) if t.ndim else t.reshape(1, 1)
    listed = np.cumprod(t2 >= 0, axis=1).astype(bool)
    mask = np.zeros(t2.shape)
    rows = np.broadcast_to(np.arange(t2.shape[0])[:, None], t2.shape)
    mask[rows[listed], t2[listed]] = 1.0
    dtype = node._meta[0][1]
    return make(mask.reshape(t.shape).astype(dtype))


def _select_index(node):
    g = node.__dict__.get("_g")
    if g is not None and isinstance(g[1], Tensor):
        return g[1]
    return make(node._idx) if "_idx" in node.__dict__ else make(node._idxs[0][1])


def _scalar_or_tensor(node):
    """A tensor operand, or a number one as the 0-d tensor PyTorch wraps it in."""
    g = node.__dict__.get("_g")
    return g if g is None or isinstance(g, Tensor) else make(np.asarray(g))


def _running(k):
    """batch_norm's running mean (0) or variance (1): the tensors the call got, or None."""
    return lambda n: n.__dict__.get("_running", (None, None))[k]


def _recomputed(node):
    """A pointwise node's result, recomputed from its saved input (the node keeps the input
    its formula reads, PyTorch's keeps the result too), with the node as its grad_fn."""
    (x,) = node.saved(False)
    out = np.asarray(type(node).forward(x)).astype(node._meta[0][1], copy=False)
    return _saved.unpacked_output(out, [0], node, 0)


def _pow_result(node):
    """pow(tensor, tensor)'s result, recomputed from the saved operands."""
    a, b = node.saved(False)
    out = np.asarray(np.power(a, b))
    return _saved.unpacked_output(out.astype(np.result_type(a, b), copy=False), [0], node, 0)


def _norm_mean(node):
    """The mean a normalization's forward computed (PyTorch's ``result1``), from the saved
    input: over each group (group_norm), each row of the normalized dims (layer_norm), or
    each channel (batch_norm in training; empty in eval, as PyTorch's)."""
    x = node.saved(False)[0]
    name = node.name()
    if name == "NativeGroupNormBackward0":
        n, _, _, g = node._nclg
        return make(x.reshape(n, g, -1).mean(-1))
    if name == "NativeLayerNormBackward0":
        k = len(node._wshape)
        lead = x.shape[:x.ndim - k]
        return make(x.reshape(lead + (-1,)).mean(-1).reshape(lead + (1,) * k))
    if not node._training:
        return make(x[:0].reshape(-1)[:0])
    axes = (0,) + tuple(range(2, x.ndim))
    return make(x.mean(axis=axes))


def _broadcast_weight(node):
    """binary_cross_entropy's weight, expanded to the input's shape as PyTorch's node keeps it."""
    w = _value(node, 2)
    if w is None:
        return None
    return make(np.broadcast_to(w.detach().numpy(), node._meta[0][0]))


def _value(node, spec):
    """The value ``spec`` (see the module docstring) names on ``node``."""
    if spec is None:
        return None
    if isinstance(spec, int):
        if node._saved is None:
            raise RuntimeError(_saved.FREED_MSG)
        saved = node.saved(True)
        v = saved[spec] if spec < len(saved) else None
        if isinstance(v, np.ndarray):  # a number operand kept as a 0-d array
            v = make(v)
        return v if v is None or isinstance(v, Tensor) else _py(v)
    if spec == "result":
        if node._out is None:
            if node._saved is None:  # (release frees both)
                raise RuntimeError(_saved.FREED_MSG)
            return None
        return node.saved_output(True)
    if spec.__class__ is str and spec.startswith("sizes "):
        return tuple(node._meta[int(spec[6:])][0])
    if spec.__class__ is str and spec.startswith("."):
        return _py(node.__dict__[spec.replace(".", "_", 1)])
    return spec(node)


def _lu_of(k):
    """The LU factorization (0: packed ``LU``, 1: ``pivots``) PyTorch's det, slogdet and solve
    keep, found again from the saved ``A`` when asked (retrograd's formulas do not read it).
    det and slogdet factor ``A.mT`` (their LAPACK call reads a row-major ``A`` as its
    transpose; the determinant is the same), solve factors ``A``."""
    def get(node):
        (a,) = node.saved(True)[:1]
        rg = sys.modules["retrograd"]  # (the package, loaded by now; autograd cannot import it)
        if node.name() != "LinalgSolveExBackward0":
            a = a.mT
        with rg.no_grad():
            return rg.linalg.lu_factor(a.detach())[k]
    return get


def _log_sigmoid_buffer(node):
    """log_sigmoid's ``buffer`` as PyTorch's CPU kernel fills it: ``exp(-|x|)``."""
    (x,) = node.saved(False)
    return make(np.exp(-np.abs(x)))


def _index_indices(node):
    """Advanced indexing's ``indices`` as PyTorch's node keeps them, from the index as given:
    ints select (and drop out), slices, None and what Ellipsis spans are None, lists become
    tensors, tensors (boolean masks too) stay; trailing Nones go."""
    if "_g" not in node.__dict__:
        raise AttributeError("indices are kept only for input[index]")
    index = node._g
    if isinstance(index, list) and index and all(isinstance(i, (list, tuple)) for i in index):
        index = tuple(index)  # (a list of sequences indexes as their tuple, NumPy's old rule)
    items = list(index) if isinstance(index, tuple) else [index]
    n_int = sum(1 for i in items if isinstance(i, (int, np.integer)) and not isinstance(i, bool))
    n_new = sum(1 for i in items if i is None)
    ndim = len(node._meta[0][0]) + n_int - n_new
    used = sum(1 if not isinstance(i, Tensor) or i.dtype.name != "bool" else max(i.dim(), 1)
               for i in items if i is not None and i is not Ellipsis)
    out = []
    for i in items:
        if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            continue
        if i is Ellipsis:
            out += [None] * (ndim - used)
        elif i is None or isinstance(i, slice):
            out.append(None)
        elif isinstance(i, bool) or (isinstance(i, Tensor) and i.dim() == 0
                                     and i.dtype.name == "bool"):
            # a scalar mask: PyTorch indexes a new dim of size 1 with [0] (True) or [] (False)
            out.append(make(np.zeros(1 if bool(i) else 0, np.int64)))
        else:
            a = np.asarray(i)
            out.append(i if isinstance(i, Tensor) else make(a if a.size else a.astype(np.int64)))
    while out and out[-1] is None:
        out.pop()
    return tuple(out)


def _none_such(node):
    """A name PyTorch's node lacks, where the generic names would give one (a node keeping only
    its second operand has no ``_saved_self``)."""
    raise AttributeError(f"'{type(node).__name__}' object has no such saved attribute")


def _bag_weight(node):
    """embedding_bag's weight: kept where per_sample_weights requires grad (its gradient reads
    the weight), None otherwise, as PyTorch's node keeps it."""
    nf = node.next_functions
    return _value(node, 0) if len(nf) > 1 and nf[1][0] is not None else None


_FAST_BAG = (np.dtype(np.float32), np.dtype(np.float16))


def _bag_result(k):
    """embedding_bag's ``result1`` (offset2bag), ``result2`` (bag_size) and ``result3``
    (max_indices), as PyTorch's CPU kernel keeps them, found again from the node's indices,
    offsets and mode: offset2bag is empty on its fast path (sum, no padding_idx, a float32 or
    16-bit weight); bag sizes (less padding) only for mean and max, zeros for sum; max_indices
    is bag_size, except for max (per bag and column the weight row of the first maximum, 0 for
    an empty bag)."""
    def get(node):
        idx = np.asarray(node._indices._data if isinstance(node._indices, Tensor)
                         else node._indices).reshape(-1)
        starts = np.asarray(node._offsets._data, np.int64)
        n, b, mode, pad = idx.size, starts.size, node._mode, node._padding_idx
        dtype = node._meta[0][1]
        if k == 1:
            if mode == 0 and pad < 0 and (dtype in _FAST_BAG or dtype.name == "bfloat16"):
                return make(np.zeros(0, np.int64))
            o2b = np.zeros(n + 1, np.int64)
            np.add.at(o2b, starts, 1)
            o2b[0] -= 1
            return make(np.cumsum(o2b)[:n])
        ends = np.append(starts[1:], n)
        keep = idx != pad if pad >= 0 else np.ones(n, bool)
        size = np.array([keep[s:e].sum() for s, e in zip(starts, ends)], np.int64) \
            if mode else np.zeros(b, np.int64)
        if k == 2 or mode != 2:
            return make(size)
        (w,) = node.saved(False)[:1]
        out = np.zeros((b, w.shape[1]), np.int64)
        for j, (s, e) in enumerate(zip(starts, ends)):
            rows = idx[s:e][keep[s:e]]
            if rows.size:
                out[j] = rows[np.argmax(w[rows], axis=0)]
        return make(out)
    return get
