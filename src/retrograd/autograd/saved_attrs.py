"""``grad_fn._saved_<name>``: what a node saved, under PyTorch's names.

PyTorch's generated nodes expose each saved value as an attribute named after the argument of
the op (``_saved_self``, ``_saved_other``, ``_saved_result``, ``_saved_dim``, ...). retrograd's
nodes keep the same values in a few generic slots: saved inputs (``node.saved``), the saved
output, node attributes and the inputs' recorded shapes. ``NAMES`` maps, per grad_fn name,
PyTorch's names to those slots, in a small spec language:

- an int ``i``: saved entry ``i`` (a tensor, or None where nothing was saved);
- ``"result"``: the saved output;
- ``"sizes i"``: input ``i``'s recorded shape, as a tuple;
- ``".attr"``: the node attribute ``attr``; a callable ``f(node)`` for anything else
  (``saved_spec`` reads a spec and holds the callables: dims as the op got them, kept by the
  op as the node attribute ``_g``; outputs of fused composites; results recomputed from
  saved inputs).

Nodes with no entry get the generic names: a single-input op that saves its input has
``_saved_self``, one that saves its result ``_saved_result``, a binary op ``_saved_self`` and
``_saved_other``. Tensors come back unpacked (version-checked, through the saved-tensor hooks if
they were packed), and raise PyTorch's error once the graph is freed; other values stay.
"""

from __future__ import annotations

import numpy as np

from .._tensor import make
from . import saved as _saved
from .saved_spec import (
    _arr,
    _as_int,
    _bag_result,
    _bag_weight,
    _broadcast_weight,
    _conv_output_padding,
    _conv_param,
    _diag_step,
    _dims,
    _fused_out,
    _given,
    _group_stats,
    _index_given,
    _index_indices,
    _indices,
    _is_target,
    _keep_none,
    _layer_rstd,
    _log_sigmoid_buffer,
    _lu_of,
    _mat2,
    _max_pool2d_indices,
    _none_such,
    _norm_mean,
    _out,
    _permute_dims,
    _pow_result,
    _py,
    _recomputed,
    _reduction,
    _running,
    _scalar_or_tensor,
    _select_index,
    _shape_of,
    _size,
    _split_sizes,
    _strides_of,
    _total_weight,
    _value,
)

__all__ = ["NAMES", "saved_attr", "generic_names"]


_SIZES = {"self_sym_sizes": "sizes 0"}


def _slice_bound(k):
    """A slice's start (0) or end (1) as given (None: 0 and INT64_MAX, PyTorch's defaults),
    where the view keeps them, else the normalized bound."""
    def get(node):
        g = node.__dict__.get("_g")
        if g is None:
            return node._range[k]
        v = g[k]
        if v is ...:  # (a C++ decomposition's slice to the end: no end kept)
            return None
        return (0, 2 ** 63 - 1)[k] if v is None else int(v)
    return get


def _stride(node):
    """A 2-D pool's stride: ``()`` where the call gave none, as PyTorch's node keeps it."""
    return () if node.__dict__.get("_no_stride") else tuple(node._params[1])
_DIM = {"dim": ".dim"}

NAMES: dict = {
    "AddBackward0": {"alpha": lambda n: _py(n._alpha)},
    "SubBackward0": {"alpha": lambda n: _py(n._alpha)},
    "PowBackward0": {"self": 0, "exponent": lambda n: _py(n.__dict__.get("_g", n._e))},
    "PowBackward1": {"self": 0, "exponent": 1},  # (the result is not kept: recomputed)
    "PowBackward2": {"exponent": 0, "self": lambda n: _py(n.__dict__.get("_g", n._base)),
                     "result": "result"},
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
    "MaximumBackward0": {"self": 0, "other": 1}, "MinimumBackward0": {"self": 0, "other": 1},
    "FmaxBackward0": {"self": 0, "other": 1}, "FminBackward0": {"self": 0, "other": 1},
    "FmodBackward1": {"self": 0, "other": 1}, "RemainderBackward1": {"self": 0, "other": 1},
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
    "SliceBackward0": {**_SIZES, "dim": lambda n: int(n.__dict__.get("_gd", n._dim)),
                       "start": _slice_bound(0),
                       "end": _slice_bound(1), "step": lambda n: n._range[2]},
    "SoftmaxBackward0": {**_DIM, "result": "result"},
    "SafeSoftmaxBackward0": {**_DIM, "result": "result"},
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
        "stride": lambda n: _conv_param(0)(n), "padding": lambda n: _conv_param(1)(n),
        "dilation": lambda n: _conv_param(2)(n), "groups": lambda n: n._params[3],
        "transposed": lambda n: n._params[4]},
    "WhereBackward0": {"condition": lambda n: make(n._cond)},
    "NllLossBackward0": {"self": 0, "target": lambda n: make(n._t),
                         "total_weight": lambda n: make(n._total),
                         "reduction": _reduction, "weight": lambda n: None},
    "EmbeddingBackward0": {"indices": lambda n: make(n._indices),
                           "scale_grad_by_freq": ".scale", "sparse": lambda n: False,
                           "weight_sym_argsize_0": ".num"},
    "NativeLayerNormBackward0": {"input": 0, "weight": 1,
                                 "normalized_shape": lambda n: tuple(n._wshape)},
    # (these keep only their source: no ``_saved_self``, as in PyTorch)
    "PutBackward0": {"self": _none_such}, "IndexAddBackward0": {"self": _none_such},
    "IndexCopyBackward0": {"self": _none_such},
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
    "LerpBackward1": {"self": 0, "end": 1, "weight": 2},
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
                               "reduce": ".reduce", "self": 0, "src": 1, "result": "result"},
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
    "AsStridedBackward0": {"size": ".size", "stride": ".stride", "storage_offset": ".offset"},
    "NarrowCopyBackward0": {"self_sym_sizes": "sizes 0", "dim": ".dim",
                            "start": ".given_start", "length": ".length"},  # (start as given)
    "UnsqueezeBackward1": {"dim": ".dim"},
    "VarMeanBackward0": {"correction": ".correction"},
    "XlogyBackward1": {"other": 0, "self": ".self"},
    "XlogyBackward2": {"self": 0, "other": 1},
    "TrilBackward0": {"diagonal": ".k"},
    "TriuBackward0": {"diagonal": ".k"},
    "RepeatBackward0": {"repeats": ".reps", "self_sym_sizes": "sizes 0"},
}


_DIM0 = {"dim": _given(fallback=".dim")}
_SORTING = {"dim": _given(0, fallback=".dim"), "indices": _indices}
_SORTING_KEEP = {**_SORTING, "keepdim": _given(1, fallback=".keepdim")}
_VAR = {"dim": _given(0, tup=True),
        "correction": lambda n: _as_int(n._g[1]) if "_g" in n.__dict__ else n._correction,
        "keepdim": _keep_none}


_POOL = {"kernel_size": lambda n: tuple(n._params[0]), "stride": lambda n: tuple(n._params[1]),
         "padding": lambda n: tuple(n._params[2])}
_AVG_POOL = {**_POOL, "ceil_mode": lambda n: n._params[3],
             "count_include_pad": lambda n: n._params[4],
             "divisor_override": lambda n: n._params[5]}
_MAX_POOL = {**_POOL, "dilation": lambda n: tuple(n._params[3]), "ceil_mode": ".ceil_mode"}
_RESULT = {"result": _fused_out(0)}

# Composites recorded as one node (``ops.fused``): the attributes their calls pass, and their
# outputs read from the graph they keep.
_FUSED: dict = {
    "ConvolutionBackward0": {"output_padding": _conv_output_padding,
                             "bias_sym_sizes_opt": lambda n: (0,) if n._meta[2] is None
                             else tuple(n._meta[2][0])},
    "ConvTbcBackward0": {"weight": 1, "bias": 2, "pad": ".pad"},
    "CdistBackward0": {"p": ".p", **_RESULT}, "DistBackward0": {"p": ".p", **_RESULT},
    "PdistBackward0": {"p": ".p", **_RESULT},
    "RenormBackward0": {"p": ".p", "dim": ".dim", "maxnorm": ".maxnorm"},
    "CopysignBackward0": _RESULT, "CopysignBackward1": _RESULT, "LdexpBackward0": _RESULT,
    "LinalgHouseholderProductBackward0": _RESULT,
    "LinalgLstsqBackward0": {"solution": _fused_out(0)},
    "OrmqrBackward0": {"left": ".left", "transpose": ".transpose", **_RESULT},
    "LinalgSolveTriangularBackward0": {"left": ".left", "upper": ".upper",
                                       "unitriangular": ".unitriangular", **_RESULT},
    "LinalgLuSolveBackward0": {"left": ".left", "adjoint": ".adjoint", "pivots": ".pivots",
                               **_RESULT},
    "LinalgLuBackward0": {"pivot": ".pivot", "P": _fused_out(0), "L": _fused_out(1),
                          "U": _fused_out(2)},
    "TriangularSolveBackward0": {"A": 1, "solution": _fused_out(0), "upper": ".upper",
                                 "transpose": ".transpose", "unitriangular": ".unitriangular"},
    "SelectScatterBackward0": {"dim": ".dim", "index": ".index"},
    "SliceScatterBackward0": {"dim": ".dim", "start": ".start", "end": ".end", "step": ".step"},
    "DiagonalScatterBackward0": {"offset": ".offset", "dim1": ".dim1", "dim2": ".dim2"},
    "AffineGridGeneratorBackward0": {"align_corners": ".align_corners", "size": ".size"},
    "GridSampler2DBackward0": {"interpolation_mode": ".interpolation_mode",
                               "padding_mode": ".padding_mode",
                               "align_corners": ".align_corners"},
    "MultiMarginLossBackward0": {"margin": ".margin", "p": ".p", "reduction": _reduction,
                                 "target": ".target", "weight": ".weight"},
    "MultilabelMarginLossBackward0": {"reduction": _reduction, "target": ".target",
                                      "is_target": _is_target},
    "MvlgammaBackward0": {"p": ".p"},
    "MaxPool3DWithIndicesBackward0": {**_MAX_POOL, "result1": _fused_out(1)},
    "MaxPool2DWithIndicesBackward0": {"result1": _max_pool2d_indices, "ceil_mode": ".ceil_mode"},
    "AvgPool3DBackward0": _AVG_POOL,
    "AdaptiveMaxPool3DBackward0": {"result1": _fused_out(1)},
    "FractionalMaxPool2DBackward0": {"result1": _fused_out(1)},
    "FractionalMaxPool3DBackward0": {"result1": _fused_out(1)},
    "MaxUnpool2DBackward0": {"indices": ".indices"},
    "LuUnpackBackward0": {"LU_data_sym_argsize_minus_1": lambda n: int(n._meta[0][0][-1]),
                          "LU_data_sym_argsize_minus_2": lambda n: int(n._meta[0][0][-2])},
}


_MORE: dict = {
    "ClampMinBackward0": {"min": _given(fallback=".bound")},
    "ClampMaxBackward0": {"max": _given(fallback=".bound")},
    "ReflectionPad1DBackward0": {"padding": ".padding", "self": 0},
    "ReflectionPad2DBackward0": {"padding": ".padding", "self": 0},
    "ReflectionPad3DBackward0": {"padding": ".padding", "self": 0},
    "ReplicationPad1DBackward0": {"padding": ".padding", "self": 0},
    "ReplicationPad2DBackward0": {"padding": ".padding", "self": 0},
    "ReplicationPad3DBackward0": {"padding": ".padding", "self": 0},
    "IndexSelectBackward0": {"dim": _given(0, fallback=lambda n: int(n._dim) if "_dim" in
                                           n.__dict__ else int(n._idxs[0][0])),
                             "index": _select_index},
    "FractionalMaxPool2DBackward0": {"kernel_size": ".kernel_size",
                                     "output_size": ".output_size"},
    "FractionalMaxPool3DBackward0": {"kernel_size": ".kernel_size",
                                     "output_size": ".output_size"},
    "RreluWithNoiseBackward0": {"lower": ".lower", "upper": ".upper", "training": ".training",
                                "noise": lambda n: n.__dict__.get("_noise")},
    "RsubBackward1": {"alpha": lambda n: _py(n.__dict__.get("_alpha", 1))},
    # (a number operand: PyTorch's Scalar, a Python number)
    "MulBackward1": {"other": lambda n: _py(n.saved(False)[1])},
    "DivBackward1": {"other": lambda n: _py(n.saved(False)[1])},
    "NativeGroupNormBackward0": {"result1": _norm_mean},
    "BinaryCrossEntropyBackward0": {"weight": _broadcast_weight},
    "SpecialI0EBackward0": {"result": _recomputed}, "SpecialI1Backward0": {"result": _recomputed},
    "SpecialI1EBackward0": {"result": _recomputed},
    "SpecialErfcxBackward0": {"result": _recomputed},
    "PowBackward1": {"result": _pow_result},
    "LinalgDetBackward0": {"LU": _lu_of(0), "pivots": _lu_of(1)},
    "LinalgSlogdetBackward0": {"LU": _lu_of(0), "pivots": _lu_of(1)},
    "LinalgSolveExBackward0": {"LU": _lu_of(0), "pivots": _lu_of(1)},
    "LogSigmoidBackward0": {"buffer": _log_sigmoid_buffer},
    "IndexBackward0": {"indices": _index_indices},
    "IndexPutBackward0": {"indices": _index_indices},
    "DivBackward2": {"rounding_mode": ".rounding_mode", "other": _scalar_or_tensor, "self": 0},
    "MaskedSelectBackward0": {"mask": _given(fallback=_arr("_mask")), "self": 0},
    "MaskedScatterBackward0": {"mask": _given(fallback=_arr("_mask"))},
    "WeightNormInterfaceBackward0": {"v": 0, "g": 1, "dim": ".dim", "result1": _arr("_norms")},
    "CtcLossBackward0": {"log_probs": 0, "result0": "result", "blank": ".blank",
                         "result1": lambda n: n.log_alpha(),
                         "zero_infinity": ".zero_infinity", "targets": _arr("_targets"),
                         "input_lengths": lambda n: tuple(int(v) for v in n._lengths[0]),
                         "target_lengths": lambda n: tuple(int(v) for v in n._lengths[1])},
    "NativeBatchNormBackward0": {"result1": _norm_mean, "running_mean": _running(0),
                                 "running_var": _running(1)},
    "NativeLayerNormBackward0": {"result1": _norm_mean, "bias": 2},
    "LinalgLuFactorExBackward0": {"LU": _fused_out(0), "pivot": ".pivot",
                                  "pivots": _arr("_pivots")},
    "GatherBackward0": {"self": 0}, "TakeBackward0": {"self": 0},
    "CummaxBackward0": {"self": 0},
    "CumminBackward0": {"self": 0}, "NansumBackward0": {"self": 0},
    "NanToNumBackward0": {"self": 0}, "AvgPool2DBackward0": {"self": 0},
    "AdaptiveAvgPool2DBackward0": {"self": 0},
    "PutBackward0": {"source": 0}, "IndexAddBackward0": {"source": 0},
    "IndexCopyBackward0": {"source": 0},
    "EmbeddingBagBackward0": {"indices": ".indices", "offsets": ".offsets", "mode": ".mode",
                              "padding_idx": ".padding_idx",
                              "scale_grad_by_freq": ".scale_grad_by_freq", "sparse": ".sparse",
                              "per_sample_weights": 1, "weight_sym_argsize_0": _size(0, 0),
                              "weight": _bag_weight, "result1": _bag_result(1),
                              "result2": _bag_result(2), "result3": _bag_result(3)},
}


# Where PyTorch keeps the argument as given: these override the entries above.
_AS_GIVEN: dict = {
    "CumsumBackward0": _DIM0, "CumprodBackward0": _DIM0, "LogcumsumexpBackward0": _DIM0,
    "CatBackward0": _DIM0, "StackBackward0": _DIM0, "UnsqueezeBackward0": _DIM0,
    "GatherBackward0": _DIM0, "ScatterAddBackward0": _DIM0, "SoftmaxBackward0": _DIM0,
    "LogSoftmaxBackward0": _DIM0, "SafeSoftmaxBackward0": _DIM0,
    "FlipBackward0": {"dims": _given(tup=True, fallback=_dims)},
    "TransposeBackward0": {"dim0": _given(0, fallback=".d0"), "dim1": _given(1, fallback=".d1")},
    "TransposeBackward1": {"dim0": _given(0, fallback=".d0"), "dim1": _given(1, fallback=".d1")},
    "PermuteBackward0": {"dims": _given(tup=True, fallback=_permute_dims)},
    "SelectBackward0": {"dim": _given(0, fallback=".dim"), "index": _given(1, fallback=".index")},
    "SortBackward0": _SORTING, "SortBackward1": _SORTING, "TopkBackward0": _SORTING,
    "CummaxBackward0": _SORTING, "CumminBackward0": _SORTING,
    "KthvalueBackward0": _SORTING_KEEP, "MedianBackward1": _SORTING_KEEP,
    "NanmedianBackward1": _SORTING_KEEP, "ModeBackward0": _SORTING_KEEP,
    "MaxBackward0": {"dim": _given(0, fallback=".dim"), "keepdim": _given(1, fallback=".keepdim")},
    "MinBackward0": {"dim": _given(0, fallback=".dim"), "keepdim": _given(1, fallback=".keepdim")},
    "SumBackward1": {"dim": _given(0, tup=True, fallback=_dims),
                     "keepdim": _given(1, fallback=lambda n: False)},
    "MeanBackward1": {"dim": _given(0, tup=True, fallback=_dims),
                      "keepdim": _given(1, fallback=lambda n: False)},
    "AmaxBackward0": {"dim": _given(tup=True, fallback=_dims), "keepdim": _keep_none},
    "AminBackward0": {"dim": _given(tup=True, fallback=_dims), "keepdim": _keep_none},
    "NansumBackward0": {"dim": _given(tup=True), "keepdim": _keep_none},
    "LogsumexpBackward0": {"dim": _given(tup=True), "keepdim": _keep_none},
    "VarBackward0": _VAR, "StdBackward0": _VAR, "VarMeanBackward0": _VAR,
    "StdMeanBackward0": _VAR,
    "SqueezeBackward1": {"dim": _given()}, "SqueezeBackward2": {"dim": _given()},
    "SqueezeBackward4": {"dim": _given()}, "SqueezeBackward5": {"dim": _given()},
    "DiagonalBackward0": {"offset": _given(0, fallback=_diag_step(0)),
                          "dim1": _given(1, fallback=_diag_step(1)),
                          "dim2": _given(2, fallback=_diag_step(2))},
    "DiagEmbedBackward0": {"offset": _given(0, fallback=".offset"),
                           "dim1": _given(1, fallback=".d1"), "dim2": _given(2, fallback=".d2")},
    "UnfoldBackward0": {"dimension": _given(fallback=".dim")},
    "SplitWithSizesBackward0": {"dim": _given(fallback=".dim")},
    "SplitBackward0": {"dim": _given(fallback=".dim")},
    "RollBackward0": {"dims": lambda n: _given(tup=True, fallback=_dims)(n) or ()},
    "Rot90Backward0": {"k": _given(0, fallback=".k"), "dims": _given(1, tup=True, fallback=_dims)},
    "LinalgCrossBackward0": {"dim": _given(fallback=".dim")},
    "TakeBackward0": {"index": _index_given}, "PutBackward0": {"index": _index_given},
    "IndexFillBackward0": {"index": _index_given}, "IndexFillBackward1": {"index": _index_given},
    "LogitBackward0": {"eps": lambda n: n.__dict__.get("_eps")},
    "AminmaxBackward0": {"dim": _given(0), "keepdim": _given(1), "self": 0, "min": _out(0),
                         "max": _out(1)},
    "ProdBackward1": {"dim": _given(fallback=".dim")},
    "NormBackward1": {"keepdim": _keep_none},
    "LinalgVectorNormBackward0": {"dim": _given(0, tup=True, fallback=_dims),
                                  "ord": _given(1, fallback=".p"),
                                  "keepdim": lambda n: n._keep is None and n._dims is not None},
}


# Families whose values the nodes keep under other names (pooling, sorting, indexing, losses,
# normalization, factorizations), checked by the same comparison.
_KEPT: dict = {
    "AddbmmBackward0": {"batch1_sym_argsize_0": _size(1, 0), "batch1_sym_argsize_1": _size(1, 1),
                        "batch2_sym_argsize_2": _size(2, 2)},
    "ClampMaxBackward0": {"max": ".bound"},
    "ClampMinBackward0": {"min": ".bound"},
    "ConstantPadNdBackward0": {"pad": lambda n: tuple(-int(p) for p in n._back)},
    "CummaxBackward0": {"dim": ".dim", "indices": _arr("_idx")},
    "CumminBackward0": {"indices": _arr("_idx")},
    "CumprodBackward0": {"dim": ".dim"},
    "LogcumsumexpBackward0": {"dim": ".dim"},
    "DiagEmbedBackward0": {"offset": ".offset", "dim1": ".d1", "dim2": ".d2"},
    "DiagonalBackward0": {"offset": _diag_step(0), "dim1": _diag_step(1),
                          "dim2": _diag_step(2)},
    "DiagonalBackward0_copy": {"offset": _diag_step(0), "dim1": _diag_step(1),
                               "dim2": _diag_step(2)},
    "EmbeddingBackward0": {"padding_idx": lambda n: -1 if n._pad is None else int(n._pad)},
    "FlipBackward0": {"dims": _dims},
    "GatherBackward0": {"dim": ".dim", "index": _arr("_idx"), "sparse_grad": lambda n: False},
    "HuberLossBackward0": {"delta": ".beta", "reduction": _reduction},
    "SmoothL1LossBackward0": {"reduction": _reduction},
    "SoftMarginLossBackward0": {"reduction": _reduction},
    "BinaryCrossEntropyWithLogitsBackward0": {"reduction": _reduction},
    "IndexAddBackward0": {"index": _arr("_idx"), "source_dim": lambda n: len(n._meta[1][0])},
    "IndexCopyBackward0": {"index": _arr("_idx"), "source_dim": lambda n: len(n._meta[1][0])},
    "IndexFillBackward0": {"index": _arr("_idx")},
    "IndexFillBackward1": {"index": _arr("_idx")},
    "PutBackward0": {"index": _arr("_idx")},
    "TakeBackward0": {"index": _arr("_idx")},
    "ScatterAddBackward0": {"dim": ".dim", "index": _arr("_idx")},
    "ScatterBackward0": {"index": _arr("_idx")},
    "ScatterBackward1": {"index": _arr("_idx")},
    "ScatterReduceBackward0": {"index": _arr("_idx")},
    "MaskedFillBackward0": {"mask": _arr("_mask")},
    "MaskedFillBackward1": {"mask": _arr("_mask")},
    "KthvalueBackward0": {"dim": ".dim", "indices": _indices},
    "MedianBackward1": {"dim": ".dim", "indices": _indices},
    "NanmedianBackward1": {"indices": _indices},
    "ModeBackward0": {"dim": ".dim", "keepdim": ".keepdim", "indices": _indices},
    "SortBackward0": {"dim": ".dim", "indices": _indices, "self_sym_sizes": "sizes 0"},
    "SortBackward1": {"indices": _indices},
    "TopkBackward0": {"dim": ".dim", "indices": _indices},
    "LinalgCrossBackward0": {"dim": ".dim"},
    "RollBackward0": {"dims": _dims,
                      "shifts": lambda n: tuple(-int(b) for b in np.atleast_1d(n._back))},
    "Rot90Backward0": {"k": ".k", "dims": _dims},
    "SplitBackward0": {"split_size": lambda n: int(n._out_meta[0][0][n._dim])},
    "SplitWithSizesBackward0": {"dim": ".dim", "split_sizes": _split_sizes},
    "TransposeBackward1": {"dim0": ".d0", "dim1": ".d1"},
    "UnfoldBackward0": {"dimension": ".dim"},
    "NativeGroupNormBackward0": {"N": lambda n: int(n._nclg[0]), "C": lambda n: int(n._nclg[1]),
                                 "HxW": lambda n: int(n._nclg[2]),
                                 "group": lambda n: int(n._nclg[3]), "result2": _group_stats},
    "NativeLayerNormBackward0": {"result2": _layer_rstd},
    "NativeBatchNormBackward0": {"result2": lambda n: make(n._rstd.reshape(-1) if n._training
                                                           else n._rstd[:0].reshape(-1))},
    "NllLossBackward0": {"ignore_index": ".ignore", "weight": lambda n: n._weight,
                         "total_weight": _total_weight},
    "NllLoss2DBackward0": {"self": 0, "ignore_index": ".ignore", "weight": lambda n: n._weight,
                           "total_weight": _total_weight, "reduction": _reduction,
                           "target": lambda n: make(n._t)},
    "LinalgQrBackward0": {"Q": _out(0), "R": _out(1)},
    "LinalgEighBackward0": {"eigenvalues": _out(0), "eigenvectors": _out(1)},
    "LinalgSvdBackward0": {"U": _out(0), "S": _out(1), "Vh": _out(2),
                           "S_sym_argsize_minus_1": lambda n: int(n._out_meta[1][0][-1])},
    "LinalgSlogdetBackward0": {"sign": _out(0)},
    "AvgPool2DBackward0": {"kernel_size": lambda n: tuple(n._params[0]),
                           "stride": _stride,
                           "padding": lambda n: tuple(n._params[2]),
                           "ceil_mode": lambda n: n._params[3],
                           "count_include_pad": lambda n: n._params[4],
                           "divisor_override": lambda n: n._params[5]},
    "MaxPool2DWithIndicesBackward0": {"kernel_size": lambda n: tuple(n._params[0]),
                                      "stride": _stride,
                                      "padding": lambda n: tuple(n._params[2]),
                                      "dilation": lambda n: tuple(n._params[3])},
    "AdaptiveMaxPool2DBackward0": {"result1": _arr("_idx")},
}
for _table in (_KEPT, _AS_GIVEN, _FUSED, _MORE):
    for _name, _spec in _table.items():
        _FROM_TABLE[_name] = {**_FROM_TABLE.get(_name, {}), **_spec}

_FROM_TABLE["SliceBackward0"] = NAMES["SliceBackward0"]  # (compared over the table too)
for _name, _spec in _FROM_TABLE.items():
    NAMES[_name] = {**NAMES.get(_name, {}), **_spec}

# Provided, but not compared over the op table: eigenvectors and singular vectors are unique
# only up to sign (LAPACK's choice differs), and topk(sorted=False)'s order is unspecified; in
# eval rrelu's noise is uninitialized memory in PyTorch. tests/autograd/test_saved_hooks.py
# checks dims on direct calls.
_UNCHECKED = {
    "TopkBackward0": ("indices",),
    "LinalgEighBackward0": ("eigenvectors",),
    "LinalgSvdBackward0": ("U", "Vh"),
    "RreluWithNoiseBackward0": ("noise",),
    "CtcLossBackward0": ("result1",),  # (what PyTorch's kernel leaves unwritten is garbage)
}
for _name, _drop in _UNCHECKED.items():
    for _a in _drop:
        _FROM_TABLE.get(_name, {}).pop(_a, None)

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


def saved_attr(node, attr: str, kind: str | None = None):
    """``node._saved_<name>`` (the properties ``_install`` puts on nodes read through here);
    ``kind``: read it as that grad_fn's (a node named otherwise, as CopySlices)."""
    name = attr[len("_saved_"):]
    names = NAMES.get(kind or node.name())
    spec = names.get(name) if names is not None else None
    if spec is None:
        spec = generic_names(node).get(name)
    if spec is None:
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{attr}'")
    return _value(node, spec)


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
