"""The differential fuzzer of tensor semantics (``tests/fuzz_semantics.py``) in CI: a bounded
number of random calls (dtypes, promotion, scalars, ``out=``, in-place, indexing, reductions,
creation, gradients) compared with torch, and one regression case per class of difference the
fuzzer found and retrograd fixed. ``RETROGRAD_FUZZ_SEMANTICS=5000`` runs more cases;
``python -m tests.fuzz_semantics 5000`` prints the differences grouped by op and cause.
"""

from __future__ import annotations

import os
import random

import pytest

import retrograd

from .fuzz_semantics import Case, Dt, T, draw_case, run_one

EXAMPLES = int(os.environ.get("RETROGRAD_FUZZ_SEMANTICS", "200"))

# (op, cause) pairs still known to differ, each with why it is not fixed yet; a drawn case in
# one of these classes is not a failure (any other difference is).
KNOWN = {
}


def _check(torch, case):
    dd = run_one(case, torch, retrograd)
    assert dd is None, f"{case!r}: {dd[0]}: {dd[1]}"


@pytest.mark.parametrize("seed", range(EXAMPLES))
def test_fuzz(torch, seed):
    case = draw_case(random.Random(seed))
    dd = run_one(case, torch, retrograd)
    if dd is not None and (case.op, dd[0]) in KNOWN:
        pytest.skip(f"known: {KNOWN[case.op, dd[0]]}")
    assert dd is None, f"{case!r}: {dd[0]}: {dd[1]}"


def _t(dtype, shape, layout="c", seed=1, grad=False):
    return T(dtype, shape, layout, seed, grad)


# One case per fixed class: the call, as the fuzzer draws it.
REGRESSIONS = {
    # out=: cast check, resize (with its warning), the write, the autograd refusal
    "out_add_resize": Case("out", "add", (_t("int64", (2, 3)), 1),
                           {"out": _t("float64", (5,))}),
    "out_add_empty": Case("out", "add", (_t("uint8", (4,)), 1), {"out": _t("int32", (0,))}),
    "out_sqrt_cast": Case("out", "sqrt", (_t("int32", (3,)),), {"out": _t("int64", (3,))}),
    "out_abs_same": Case("out", "abs", (_t("int32", (3,)),), {"out": _t("int16", (3,))}),
    "out_eq_any": Case("out", "eq", (_t("float32", (3,)), 1.5), {"out": _t("float16", (3,))}),
    "out_grad": Case("out", "mul", (_t("float64", (2,), grad=True), 2),
                     {"out": _t("float64", (2,))}),
    "out_logical_grad": Case("out", "logical_or", (_t("float32", (2,), grad=True),
                                                   _t("float32", ())), {"out": _t("bool", (0,))}),
    "out_bitwise_cast_first": Case("out", "bitwise_and", (_t("float64", (3,)), _t("int8", ())),
                                   {"out": _t("int32", (3,))}),
    "out_true_divide_name": Case("out", "true_divide", (_t("float32", (2,), grad=True), 2),
                                 {"out": _t("float32", (2,))}),
    "out_sum_dtype": Case("out", "sum", (_t("float32", (2, 3)), 0), {"out": _t("int64", (0,))}),
    "out_cumsum_dtype": Case("out", "cumsum", (_t("int32", (3,)), 0),
                             {"out": _t("float64", (0,))}),
    "out_mean_int": Case("out", "mean", (_t("float32", (3,)), 0), {"out": _t("int8", (0,))}),
    "out_signbit": Case("out", "signbit", (_t("float32", (3,)),), {"out": _t("int8", (3,))}),
    "out_noncontiguous": Case("out", "add", (_t("float32", (2, 3)), 1),
                              {"out": _t("float32", (2, 3), "t")}),
    # ops with no overload taking a number: PyTorch's TypeError (methods count from 1)
    "logical_or_number": Case("fn", "logical_or", (_t("int64", (3,)), float("inf")), {}),
    "logical_and_method": Case("method", "logical_and", (_t("int16", (3,)), True), {}),
    "isclose_method": Case("method", "isclose", (_t("float64", (2,)), -2), {}),
    "maximum_method": Case("method", "maximum", (_t("float16", (2,)), 7), {}),
    "fmax_method": Case("method", "fmax", (_t("int16", (2,)), -0.5), {}),
    "gcd_number_first": Case("fn", "gcd", (1, _t("uint8", (2,))), {}),
    "ldexp_number": Case("fn", "ldexp", (_t("int64", (2,)), 2.0), {}),
    "heaviside_number": Case("fn", "heaviside", (_t("float32", (2,)), 0.5), {}),
    "nextafter_number": Case("fn", "nextafter", (_t("float32", (2,)), -2), {}),
    # NotImplementedError for a dtype the kernel lacks
    "histc_int": Case("fn", "histc", (_t("int64", (3,)),), {"bins": 2}),
    "lcm_bfloat16": Case("fn", "lcm", (_t("bfloat16", (2,)), _t("bfloat16", (2,))), {}),
    "gcd_bool": Case("fn", "gcd", (_t("bool", (2,)), _t("bool", (2,))), {}),
    # heaviside: PyTorch's message and broadcasting error
    "heaviside_dtypes": Case("fn", "heaviside", (_t("int16", ()), _t("float16", ())), {}),
    "heaviside_broadcast": Case("fn", "heaviside", (_t("int16", (2, 3)), _t("int16", (4,))), {}),
    # ldexp's dtype: input * pow(2.0, other)
    "ldexp_bfloat16": Case("fn", "ldexp", (_t("int64", (2,)), _t("bfloat16", (1,))), {}),
    "ldexp_half_int": Case("fn", "ldexp", (_t("float16", (2,)), _t("int64", (2,))), {}),
    # expand: PyTorch's strides, and writable where no elements overlap
    "expand_strides": Case("method", "expand", (_t("int8", (3, 3)), (2, 1, 3, 3)), {}),
    "expand_noop_inplace": Case("method", "sign_", (_t("float16", (1, 3), "e"),), {}),
    "expand_empty_inplace": Case("method", "lt_", (_t("int32", (2, 0), "e"), 1), {}),
    "expand_overlap_inplace": Case("method", "add_", (_t("float32", (2, 3), "e"), 1), {}),
    "transpose_expanded": Case("fn", "transpose", (_t("float16", (2, 1, 3), "e"), -1, -3), {}),
    # clamp with one tensor bound and one number bound: no overload
    "clamp_tensor_number": Case("fn", "clamp", (_t("bfloat16", (2, 3)), _t("float32", (3, 1)), 0),
                                {}),
    "kthvalue_empty_dim": Case("fn", "kthvalue", (_t("int16", (2, 0)), 2), {}),
    "index_put_dtype_first": Case("method", "index_put_", (
        _t("bool", (2, 3)), (T("int64", (2,), "c", 5),), _t("float32", (2,))),
        {"accumulate": True}),
    # dtype= of sum/prod/cumsum/cumprod is the result's dtype, also bool and the small ints
    "sum_dtype_bool": Case("method", "sum", (_t("uint8", (2, 3)),),
                           {"dim": 0, "dtype": Dt("bool")}),
    "sum_all_dtype_int8": Case("fn", "sum", (_t("int64", (4,)),), {"dtype": Dt("int8")}),
    "prod_dtype_int16": Case("method", "prod", (_t("float32", (2, 3)),),
                             {"dim": 1, "dtype": Dt("int16")}),
    "cumsum_dtype_int32": Case("method", "cumsum", (_t("float16", (4,)),),
                               {"dim": -1, "dtype": Dt("int32")}),
    "cumprod_dtype_int8": Case("fn", "cumprod", (_t("int64", (3, 3)),), {"dim": -1,
                                                                          "dtype": Dt("int8")}),
    # in place: the cast check comes before the kernel's dtype check
    "bitwise_and_float_into_int": Case("method", "bitwise_and_", (_t("int16", (3, 1)), 1.5), {}),
    "ilshift_float_into_int": Case("iop", "lshift", (_t("int8", (3, 1)), 1.5), {}),
    "bitwise_xor_double_tensor": Case("method", "bitwise_xor_", (_t("int16", (3,)),
                                                                 _t("float64", ())), {}),
    # alpha: PyTorch's alpha_check, and integer alpha wrapping in the result's dtype
    "add_float_alpha_int": Case("fn", "add", (_t("int32", (2, 3)), 0), {"alpha": 0.5}),
    "sub_bool_alpha": Case("method", "sub", (_t("int64", (2,)), float("inf")), {"alpha": True}),
    "add_bool_int_alpha": Case("fn", "add", (_t("bool", (3,)), _t("bool", (3,))), {"alpha": 2}),
    "sub_uint8_alpha": Case("method", "sub", (_t("uint8", (3, 3)), _t("uint8", (3,))),
                            {"alpha": 2}),
    "rsub_float_alpha_int": Case("fn", "rsub", (_t("int64", (2,)), 1), {"alpha": 0.5}),
    # flip's dims keyword
    "flip_dims_keyword": Case("fn", "flip", (_t("float32", (2, 3)),), {"dims": (-1,)}),
    "flip_dims_repeated": Case("fn", "flip", (_t("float64", (3,)),), {"dims": (-1, 0)}),
    # index_put: the empty dim's index error, the value's shape, the dtypes, then the bounds
    "index_put_shape_before_dtype": Case("method", "index_put_", (
        _t("int64", (3, 4)), (T("int64", (2,), "c", 5),), _t("int8", (2,))), {}),
    "index_put_empty_dim": Case("method", "index_put_", (
        _t("float64", (0, 2)), (T("int64", (2,), "c", 5),), _t("uint8", (2,))), {}),
    "getitem_empty_result": Case("getitem", "getitem", (_t("float32", (0, 2)), (
        slice(None), [5])), {}),
    "getitem_empty_dim": Case("getitem", "getitem", (_t("float32", (0, 2)), [0]), {}),
    # 0-dim tensors: a single slice's own error
    "getitem_0d_slice": Case("getitem", "getitem", (_t("float32", ()), slice(1, None)), {}),
    "getitem_0d_tuple": Case("getitem", "getitem", (_t("float32", ()), (0,)), {}),
    # numbers written into integer tensors: PyTorch's overflow check (negative ints wrap)
    "setitem_nan_into_int": Case("setitem", "setitem", (_t("int8", (3, 4)), 0, float("nan")),
                                 {}),
    "setitem_negative_into_uint8": Case("setitem", "setitem", (_t("uint8", (3,)), [0, 1], -129),
                                        {}),
    "setitem_big_into_int8": Case("setitem", "setitem", (_t("int8", (3,)), 0, 300), {}),
    "fill_half_negative_uint8": Case("method", "fill_", (_t("uint8", (2,)), -0.5), {}),
    "masked_fill_inf_int": Case("method", "masked_fill_", (
        _t("int16", (3,)), T("bool", (3,), "c", 2), float("inf")), {}),
    "setitem_big_float32": Case("setitem", "setitem", (_t("float32", (2,)), 0, 1e300), {}),
    # reductions' dtype errors and messages
    "mean_dtype_int": Case("method", "mean", (_t("bool", (3, 3)),),
                           {"dim": (-2, -1), "dtype": Dt("int32")}),
    "nanmean_int_with_dtype": Case("fn", "nanmean", (_t("uint8", (4,)),), {"dtype": Dt("int64")}),
    "nanmean_dtype_int": Case("fn", "nanmean", (_t("float32", (4,)),), {"dtype": Dt("int64")}),
    "std_mean_int": Case("fn", "std_mean", (_t("int16", (2, 3)),), {"dim": 0}),
    "var_mean_int": Case("fn", "var_mean", (_t("int8", (2,)),), {}),
    "argmax_bool": Case("method", "argmax", (_t("bool", (4,)),), {"dim": -1}),
    "argmin_bool": Case("fn", "argmin", (_t("bool", (2, 2)),), {}),
    "aminmax_tuple_dim": Case("fn", "aminmax", (_t("int32", (3, 1)),), {"dim": (1,)}),
    "bincount_float": Case("method", "bincount", (_t("float32", (0,)),), {}),
    "bincount_bool": Case("fn", "bincount", (_t("bool", (3,)),), {}),
    # integer powers with negative exponents (tensor exponents; a number one still refuses)
    "pow_int_negative_tensor": Case("op", "pow", (_t("int64", (2, 3), seed=3),
                                                  _t("int64", (2, 3), seed=4)), {}),
    "rpow_bool_negative": Case("op", "pow", (False, _t("int64", (2, 3))), {}),
    "pow_uint8_int8": Case("op", "pow", (_t("uint8", ()), _t("int8", (), seed=9)), {}),
    "pow_bool_bool": Case("fn", "pow", (_t("bool", (3,)), _t("bool", (3,))), {}),
    "pow__int_tensor": Case("method", "pow_", (_t("int64", (1, 3)), _t("int64", (3,))), {}),
    # empty reductions name the dim as given; split_with_sizes too
    "amax_empty_negative_dim": Case("fn", "amax", (_t("bfloat16", (0,)),), {"dim": (-1,)}),
    "amin_empty_dims_order": Case("method", "amin", (_t("float32", (2, 0)),), {"dim": (0, -1)}),
    "split_with_sizes_dim": Case("method", "split_with_sizes", (_t("int8", (1, 3)), [1, 2]),
                                 {"dim": -2}),
    # in-place methods' argument errors under their own name, positions after self
    "atan2__number": Case("method", "atan2_", (_t("float16", ()), 2.0), {}),
    "hypot__number": Case("method", "hypot_", (_t("int32", (4,)), 2.0), {}),
    "logical_and__number": Case("method", "logical_and_", (_t("float16", (0,)), 3), {}),
    # dtypes without a kernel
    "topk_bool": Case("fn", "topk", (_t("bool", (2, 3)), 2), {"dim": -1}),
    "kthvalue_bool": Case("fn", "kthvalue", (_t("bool", (3, 3)), 1), {"dim": 0}),
    "logaddexp_promoted_name": Case("fn", "logaddexp", (_t("bool", (2, 3)), _t("uint8", (2, 3))),
                                    {}),
    "dot_dtype_before_size": Case("fn", "matmul", (_t("int16", (3,)), _t("float16", (2,))), {}),
    "unique_consecutive_dim_single": Case("fn", "unique_consecutive", (_t("int64", (1,)),),
                                          {"dim": -1}),
    "out_float_power": Case("out", "float_power", (_t("bool", (2, 3)), _t("float64", (3,))),
                            {"out": _t("bfloat16", (0,))}),
    # torch.range: no one-argument form, the step's sign, bool
    "range_one_argument": Case("fn", "range", (3.0,), {}),
    "range_step_sign": Case("fn", "range", (3.0, -3, 2), {"dtype": Dt("int32")}),
    "range_bool": Case("fn", "range", (0, 3), {"dtype": Dt("bool")}),
    # x[mask] = one value of another dtype: cast, as PyTorch
    "setitem_mask_value_dtype": Case("setitem", "setitem", (
        _t("int16", (3, 2)), T("bool", (3, 2), "c", 4), _t("uint8", ())), {}),
    "setitem_mask_empty": Case("setitem", "setitem", (
        _t("int16", (0, 2)), T("bool", (0, 2), "c", 4), _t("uint8", ())), {}),
    # scatter checks the dtypes before the index
    "scatter_add_dtype_first": Case("fn", "scatter_add", (
        _t("int8", (4,)), -1, T("int64", (4,), "c", 0), _t("int16", (4,))), {}),
    "scatter_dtype_first": Case("fn", "scatter", (
        _t("int16", (2, 3)), 0, T("int64", (2, 3), "c", 0), _t("int64", (2, 3))), {}),
    "copysign_number_first": Case("fn", "copysign", (-0.5, _t("int8", (1,))), {}),
    "roll_0d_dims": Case("method", "roll", (_t("int16", ()),), {"shifts": (3,), "dims": (0,)}),
    # in place: the written-to tensor's overlap, then the shapes, then the cast
    "add__overlap_before_cast": Case("method", "add_", (_t("int8", (2, 3), "e"), float("inf")),
                                     {}),
    "remainder__shape_before_cast": Case("method", "remainder_", (
        _t("int32", (1,)), _t("float32", (3, 3))), {}),
    "clamp__c_type_name": Case("method", "clamp_", (_t("int8", (2, 0)), None, 1.5), {}),
    "clamp_min__c_type_name": Case("method", "clamp_min_", (_t("uint8", (1, 3)), 0.5), {}),
    "getitem_0d_int": Case("getitem", "getitem", (_t("int32", ()), -2), {}),
    "setitem_mask_0d_no_cast": Case("setitem", "setitem", (
        _t("bool", ()), T("bool", (), "c", 3), _t("float16", (1,))), {}),
    "fmin_number_first": Case("fn", "fmin", (3, _t("bfloat16", (0,))), {}),
    "logical_or_number_first": Case("fn", "logical_or", (float("nan"), _t("float32", (2, 3))),
                                    {}),
    "scatter_add_src_number": Case("fn", "scatter_add", (
        _t("bool", (3, 3)), -2, T("int64", (3, 3), "c", 0), False), {}),
    "scatter_add_index_dtype_first": Case("fn", "scatter_add", (
        _t("bfloat16", (4,)), 0, T("float32", (4,), "c", 0), _t("int16", (4,))), {}),
    "expand_type_name": Case("method", "expand", (_t("int16", (2, 1, 3)), (3, 3)), {}),
    "expand_type_name_bool": Case("method", "expand", (_t("bool", (2, 1)), (3,)), {}),
    # a dtype= that cannot carry a gradient, on an input that requires grad
    "sum_int_dtype_grad": Case("fn", "sum", (_t("float64", (2, 3), grad=True),),
                               {"dim": 1, "dtype": Dt("int64")}),
    "cumprod_uint8_dtype_grad": Case("method", "cumprod", (_t("bfloat16", (2, 3), grad=True),),
                                     {"dim": 0, "dtype": Dt("uint8")}),
    "prod_int_dtype_grad": Case("method", "prod", (_t("float32", (3,), grad=True),),
                                {"dtype": Dt("int32")}),
    "median_bool_dim": Case("method", "median", (_t("bool", (2, 1, 3)),), {"dim": -1}),
    "nanmedian_bool": Case("fn", "nanmedian", (_t("bool", (3, 3)),), {}),
    "histc_bool": Case("fn", "histc", (_t("bool", (2, 3)),), {"bins": 1, "min": 0, "max": 0}),
    "bincount_empty_weights": Case("fn", "bincount", (_t("int64", (0,)),),
                                   {"weights": _t("uint8", (0,))}),
    "unique_0d_dim": Case("method", "unique", (_t("int32", ()),), {"dim": 0}),
    "unique_consecutive_zero_dims": Case("method", "unique_consecutive", (
        _t("float32", (2, 0)),), {"return_counts": True, "dim": -2}),
    "rshift_bool_int_0d": Case("op", "rshift", (_t("bool", (3,)), _t("int32", ())), {}),
    "lshift_number_bool_first": Case("op", "lshift", (False, _t("int8", (3,))), {}),
    "fmod_bool": Case("fn", "fmod", (_t("bool", (2, 3)), _t("bool", ())), {}),
    "floor_divide__bool": Case("method", "floor_divide_", (_t("bool", (2, 3)),
                                                          _t("bool", (2, 3))), {}),
    "div_trunc_bool": Case("method", "div", (_t("bool", (3,)), True), {"rounding_mode": "trunc"}),
    "scalar_tensor_wraps": Case("fn", "scalar_tensor", (-3,), {"dtype": Dt("uint8")}),
    "scalar_tensor_overflow": Case("fn", "scalar_tensor", (300,), {"dtype": Dt("int8")}),
    "cummin_0d_dim": Case("fn", "cummin", (_t("float32", ()),), {"dim": 1}),
    "nanmedian_empty_dim": Case("fn", "nanmedian", (_t("int8", (2, 0)),), {"dim": 1}),
    "unique_consecutive_0d_dim": Case("method", "unique_consecutive", (_t("bfloat16", ()),),
                                      {"return_inverse": True, "dim": 0}),
    "div_mode_none_grad_fn": Case("method", "div", (_t("float16", (1,), grad=True),
                                                    _t("float32", ())), {"rounding_mode": None}),
    "clamp_min_number_first": Case("fn", "clamp_min", (True, _t("bool", (2, 1, 3))), {}),
    "clamp_max_number_first": Case("fn", "clamp_max", (1, _t("float32", (2,))), {}),
    # a 0-dim tensor bound with a number bound: PyTorch reads the tensor as a number
    "clamp_0d_tensor_and_number": Case("method", "clamp", (_t("int8", ()), _t("int8", ()), 1.5),
                                       {}),
    "clip_0d_tensor_and_number": Case("method", "clip", (_t("float32", (4,), "e"),
                                                         _t("int16", ()), 0), {}),
    "clamp_min__tensor_legacy_name": Case("method", "clamp_min_", (_t("int8", (3,), "s"),
                                                                   _t("float16", ())), {}),
    "hypot_number_first": Case("fn", "hypot", (float("inf"), _t("int32", (2, 3))), {}),
    "aminmax_empty_dim": Case("method", "aminmax", (_t("bfloat16", (0,)),), {"dim": 0}),
    "kthvalue_bool_empty": Case("fn", "kthvalue", (_t("bool", (0,)), 2), {}),
    "var_mean_empty_mean_nan": Case("fn", "var_mean", (_t("bfloat16", (2, 0), "t"),), {}),
    "std_mean_empty_dim": Case("fn", "std_mean", (_t("float32", (2, 0)),),
                               {"dim": -1, "correction": 2}),
    "setitem_expand_type_name": Case("setitem", "setitem", (_t("bool", ()), (),
                                                            _t("bool", (2,), "e")), {}),
}


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regression(torch, name):
    _check(torch, REGRESSIONS[name])


def test_dtype_arg_repr():
    # the drawn cases print as the calls they make (the report names them so)
    assert repr(Case("fn", "sum", (_t("int8", (2,)),), {"dtype": Dt("int64")})) == \
        "fn:sum(T(int8,(2,),c,1), dtype=int64)"
