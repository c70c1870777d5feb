"""``grad_fn._saved_<name>``: what a node saved, under PyTorch's names.

PyTorch's generated nodes expose each saved value as an attribute named after the argument of
the op (``_saved_self``, ``_saved_other``, ``_saved_result``, ``_saved_dim``, ...). retrograd's
nodes keep the same values in a few generic slots: saved inputs (``node.saved``), the saved
output, node attributes and the inputs' recorded shapes. ``NAMES`` maps, per grad_fn name,
PyTorch's names to those slots, in a small spec language:

- an int ``i``: saved entry ``i`` (a tensor, or None where nothing was saved);
- ``"result"``: the saved output;
- ``"sizes i"``: input ``i``'s recorded shape, as a tuple;
- ``".attr"``: the node attribute ``attr``; a callable ``f(node)`` for anything else.

Nodes with no entry get the generic names: a single-input op that saves its input has
``_saved_self``, one that saves its result ``_saved_result``, a binary op ``_saved_self`` and
``_saved_other``. Tensors come back unpacked (version-checked, through the saved-tensor hooks if
they were packed), and raise PyTorch's error once the graph is freed; other values stay.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, make
from . import saved as _saved

__all__ = ["NAMES", "saved_attr", "generic_names"]

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
    def get(node):
        return _strides(_shape_of(i)(node))
    return get


_SIZES = {"self_sym_sizes": "sizes 0"}
_DIM = {"dim": ".dim"}

NAMES: dict = {
    "AddBackward0": {"alpha": lambda n: _py(n._alpha)},
    "SubBackward0": {"alpha": lambda n: _py(n._alpha)},
    "PowBackward0": {"self": 0, "exponent": lambda n: _py(n._e)},
    "PowBackward1": {"self": 0, "exponent": 1},  # (the result is not kept: recomputed)
    "PowBackward2": {"exponent": 0, "self": lambda n: _py(n._base), "result": "result"},
    "MmBackward0": {"self": 0, "mat2": 1, "self_sym_sizes": "sizes 0",
                    "mat2_sym_sizes": "sizes 1", "self_sym_strides": _strides_of(0),
                    "mat2_sym_strides": _strides_of(1)},
    "MvBackward0": {"self": 0, "vec": 1},
    "DotBackward0": {"self": 0, "tensor": 1},
    "BmmBackward0": {"self": 0, "mat2": 1},
    "AddmmBackward0": {"mat1": 0, "mat2": _mat2, "mat1_sym_sizes": _shape_of(0),
                       "mat2_sym_sizes": _shape_of(1), "mat1_sym_strides": _strides_of(0),
                       "mat2_sym_strides": _strides_of(1),
                       "alpha": lambda n: _py(n.__dict__.get("_alpha", 1)),
                       "beta": lambda n: _py(n.__dict__.get("_beta", 1))},
    "SumBackward0": _SIZES,
    "SumBackward1": {**_SIZES, "dim": _dims, "keepdim": lambda n: n.__dict__.get("_keepdim",
                                                                                  False)},
    "MeanBackward0": {**_SIZES, "self_sym_numel": lambda n: int(np.prod(n._meta[0][0]))},
    "MeanBackward1": {**_SIZES, "dim": _dims,
                      "self_sym_numel": lambda n: int(np.prod(n._meta[0][0]))},
    "MaxBackward0": {**_SIZES, "dim": ".dim", "keepdim": ".keepdim", "indices": _indices},
    "MinBackward0": {**_SIZES, "dim": ".dim", "keepdim": ".keepdim", "indices": _indices},
    "MaximumBackward0": {},  # (retrograd keeps masks, not the inputs)
    "MinimumBackward0": {},
    "AmaxBackward0": {"self": 0, "result": "result", "dim": _dims},
    "AminBackward0": {"self": 0, "result": "result", "dim": _dims},
    "ViewBackward0": _SIZES,
    "UnsafeViewBackward0": _SIZES,
    "ExpandBackward0": _SIZES,
    "TransposeBackward0": {"dim0": ".d0", "dim1": ".d1"},
    "PermuteBackward0": {"dims": _permute_dims},
    "UnsqueezeBackward0": _DIM,
    "SqueezeBackward0": _SIZES,
    "SqueezeBackward1": _SIZES,
    "SelectBackward0": {**_SIZES, "dim": ".dim", "index": ".index"},
    "SliceBackward0": {**_SIZES, "dim": ".dim", "start": lambda n: n._range[0],
                       "step": lambda n: n._range[2]},
    "SoftmaxBackward0": {**_DIM, "result": "result"},
    "LogSoftmaxBackward0": {**_DIM, "result": "result"},
    "CumsumBackward0": _DIM,
    "CatBackward0": _DIM,
    "StackBackward0": _DIM,
    "GeluBackward0": {"self": 0, "approximate": lambda n: "tanh" if n._tanh else "none"},
    "LeakyReluBackward0": {"self": 0, "negative_slope": ".slope"},
    "EluBackward0": {"self": 0, "alpha": ".alpha", "scale": ".scale",
                     "input_scale": ".input_scale"},
    "SoftplusBackward0": {"self": 0, "beta": ".beta", "threshold": ".th"},
    "ClampBackward1": {"self": 0, "min": ".lo", "max": ".hi"},
    "VarBackward0": {"self": 0, "dim": lambda n: tuple(n._rdims), "correction": ".correction"},
    "StdBackward0": {"self": 0, "dim": lambda n: tuple(n._rdims), "correction": ".correction",
                     "result": "result"},
    "LinalgVectorNormBackward0": {"self": 0, "result": "result", "ord": ".p", "dim": _dims},
    "ProdBackward0": {"self": 0, "result": "result"},
    "MseLossBackward0": {"self": 0, "target": 1, "reduction": _reduction},
    "L1LossBackward0": {"self": 0, "target": 1, "reduction": _reduction},
    "BinaryCrossEntropyBackward0": {"self": 0, "target": 1, "weight": 2,
                                    "reduction": _reduction},
    "ConvolutionBackward0": {
        "input": 0, "weight": 1,
        "stride": lambda n: tuple(n._params[0]), "padding": lambda n: tuple(n._params[1]),
        "dilation": lambda n: tuple(n._params[2]), "groups": lambda n: n._params[3],
        "transposed": lambda n: n._params[4]},
    "WhereBackward0": {"condition": lambda n: make(n._cond)},
    "NllLossBackward0": {"target": lambda n: make(n._t), "total_weight": lambda n: make(n._total),
                         "reduction": _reduction, "weight": lambda n: None},
    "EmbeddingBackward0": {"indices": lambda n: make(n._indices),
                           "scale_grad_by_freq": ".scale", "sparse": lambda n: False,
                           "weight_sym_argsize_0": ".num"},
    "NativeLayerNormBackward0": {"input": 0, "weight": 1,
                                 "normalized_shape": lambda n: tuple(n._wshape)},
}


# Found by comparing with torch over the op table (tests/autograd/test_saved_attrs_table.py
# checks every name a node exposes against torch's value for the same op).
_FROM_TABLE: dict = {
    "AddbmmBackward0": {"alpha": ".alpha", "batch1": 0, "batch2": 1, "beta": ".beta"},
    "AddcdivBackward0": {"tensor1": 0, "tensor2": 1, "value": ".value"},
    "AddcmulBackward0": {"tensor1": 0, "tensor2": 1, "value": ".value"},
    "AddmvBackward0": {"alpha": ".alpha", "beta": ".beta", "mat": 0, "vec": 1},
    "AddrBackward0": {"alpha": ".alpha", "beta": ".beta", "vec1": 0, "vec2": 1},
    "BaddbmmBackward0": {"alpha": ".alpha", "batch1": 0, "batch2": 1, "beta": ".beta"},
    "BinaryCrossEntropyWithLogitsBackward0": {"pos_weight": 3, "target": 1, "weight": 2},
    "CdistBackward0": {"x1": 0, "x2": 1},
    "ChannelShuffleBackward0": {"groups": ".groups"},
    "ClampBackward0": {"max": 2, "min": 1},
    "ClampMaxBackward1": {"max": 1},
    "ClampMinBackward1": {"min": 1},
    "CumminBackward0": {"dim": ".dim"},
    "DiagonalBackward0": {"self_sym_sizes": "sizes 0"},
    "DiagonalBackward0_copy": {"self_sym_sizes": "sizes 0"},
    "DistBackward0": {"other": 1},
    "GridSampler2DBackward0": {"grid": 1, "input": 0},
    "HuberLossBackward0": {"target": 1},
    "IndexAddBackward0": {"alpha": ".alpha", "dim": ".dim"},
    "IndexBackward0": {"self_sym_sizes": "sizes 0"},
    "IndexCopyBackward0": {"dim": ".dim"},
    "IndexFillBackward0": {"dim": ".dim"},
    "IndexFillBackward1": {"dim": ".dim"},
    "IndexPutBackward0": {"accumulate": ".accumulate"},
    "IndexSelectBackward0": {"self_sym_sizes": "sizes 0"},
    "KthvalueBackward0": {"self_sym_sizes": "sizes 0"},
    "LdexpBackward0": {"other": 1},
    "LerpBackward0": {"weight": ".w"},
    "LerpBackward1": {"weight": 2},
    "LinalgCholeskyExBackward0": {"L": "result", "upper": ".upper"},
    "LinalgDetBackward0": {"A": 0},
    "LinalgHouseholderProductBackward0": {"input": 0, "tau": 1},
    "LinalgInvExBackward0": {"inverse": "result"},
    "LinalgLstsqBackward0": {"b": 1},
    "LinalgLuSolveBackward0": {"LU": 0},
    "LinalgQrBackward0": {"mode": ".mode"},
    "LinalgSlogdetBackward0": {"A": 0},
    "LinalgSolveExBackward0": {"A": 0, "left": ".left"},
    "LinalgSvdBackward0": {"full_matrices": ".full"},
    "MaskedScatterBackward0": {"source_sym_sizes": "sizes 1"},
    "MedianBackward1": {"keepdim": ".keepdim", "self_sym_sizes": "sizes 0"},
    "ModeBackward0": {"self_sym_sizes": "sizes 0"},
    "NanmedianBackward1": {"dim": ".dim", "keepdim": ".keepdim", "self_sym_sizes": "sizes 0"},
    "NativeBatchNormBackward0": {"eps": ".eps", "input": 0, "training": ".training", "weight": 1},
    "NativeGroupNormBackward0": {"eps": ".eps", "input": 0, "weight": 1},
    "NllLoss2DBackward0": {"ignore_index": ".ignore"},
    "NormBackward1": {"dim": ".dims", "p": ".p"},
    "OrmqrBackward0": {"input2": 1, "input3": 2},
    "PixelShuffleBackward0": {"upscale_factor": ".r"},
    "PixelUnshuffleBackward0": {"downscale_factor": ".r"},
    "PolygammaBackward0": {"n": ".n"},
    "ProdBackward1": {"keepdim": ".keepdim"},
    "PutBackward0": {"accumulate": ".accumulate"},
    "ReshapeAliasBackward0": {"self_sym_sizes": "sizes 0"},
    "ScatterBackward0": {"dim": ".dim"},
    "ScatterBackward1": {"dim": ".dim"},
    "ScatterReduceBackward0": {"dim": ".dim", "include_self": ".include_self",
                               "reduce": ".reduce"},
    "SmoothL1LossBackward0": {"beta": ".beta", "target": 1},
    "SoftMarginLossBackward0": {"target": 1},
    "SortBackward1": {"dim": ".dim", "self_sym_sizes": "sizes 0"},
    "SpecialXlog1PyBackward0": {"other": 1},
    "SplitBackward0": {"dim": ".dim", "self_sym_sizes": "sizes 0"},
    "SplitWithSizesBackward0": {"self_sym_sizes": "sizes 0"},
    "SqueezeBackward2": {"self_sym_sizes": "sizes 0"},
    "SqueezeBackward3": {"self_sym_sizes": "sizes 0"},
    "SqueezeBackward4": {"self_sym_sizes": "sizes 0"},
    "SqueezeBackward5": {"self_sym_sizes": "sizes 0"},
    "StdMeanBackward0": {"correction": ".correction", "dim": ".rdims", "result0": "result"},
    "TanhBackwardBackward0": {"grad_output": 0, "output": 1},
    "TopkBackward0": {"self_sym_sizes": "sizes 0"},
    "TraceBackward0": {"self_sym_sizes": "sizes 0"},
    "UnbindBackward0": {"dim": ".dim"},
    "UnfoldBackward0": {"self_sym_sizes": "sizes 0", "size": ".size", "step": ".step"},
    "UnsqueezeBackward1": {"dim": ".dim"},
    "VarMeanBackward0": {"correction": ".correction"},
    "XlogyBackward1": {"other": 0},
    "TrilBackward0": {"diagonal": ".k"},
    "TriuBackward0": {"diagonal": ".k"},
    "RepeatBackward0": {"repeats": ".reps", "self_sym_sizes": "sizes 0"},
}
for _name, _spec in _FROM_TABLE.items():
    NAMES[_name] = {**NAMES.get(_name, {}), **_spec}

def generic_names(node) -> dict:
    """The names a node without an entry gets, from what it saved."""
    saves = type(node).saves
    names = {}
    if isinstance(saves, tuple) and len(saves) == 2 and any(saves):
        names = {"self": 0, "other": 1}
    elif node._saved:
        names = {"self": 0}
    if type(node).saves == "result" or node._out is not None:
        names["result"] = "result"
    return names


def saved_attr(node, attr: str):
    """``node._saved_<name>`` (the properties ``_install`` puts on nodes read through here)."""
    name = attr[len("_saved_"):]
    names = NAMES.get(node.name())
    spec = names.get(name) if names is not None else None
    if spec is None:
        spec = generic_names(node).get(name)
    if spec is None:
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{attr}'")
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


def _install() -> None:
    """A read-only property on every node per PyTorch name above (``_saved_self``, ...); an op
    without that name raises AttributeError from ``saved_attr``, as a plain miss would."""
    names = {"self", "other", "result"}  # the generic ones (``generic_names``)
    for spec in NAMES.values():
        names.update(spec)
    for name in names:
        attr = "_saved_" + name
        setattr(_saved.SavedTensors, attr, property(lambda node, a=attr: saved_attr(node, a)))


_install()
