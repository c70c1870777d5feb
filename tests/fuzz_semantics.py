"""A differential fuzzer of tensor semantics: random calls of public functions, methods,
operators, in-place and ``out=`` forms, indexing and creation functions, with random dtypes
(bool, the integers, the reduced floats, float32/float64), Python scalars and 0-d tensors on
either side, empty and non-contiguous (transposed, strided, expanded) inputs, negative and
tuple dims, and ``requires_grad`` float inputs.

``draw_case(rng)`` draws one call as plain data; ``outcome(lib, case)`` runs it under one
library and returns what it did (its exception, or its results, the inputs an in-place form
wrote, the grad_fn name and the gradients); ``difference(ours, ref)`` says how retrograd's
outcome differs from torch's, or ``None``. ``tests/test_fuzz_semantics.py`` runs a bounded
number of cases in CI; ``python -m tests.fuzz_semantics N`` runs N cases and groups the
differences by op and cause.
"""

from __future__ import annotations

import operator
import random
import re
import sys
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64")
INTS = DTYPES[1:6]
FLOATS = DTYPES[6:]
TOL = {"float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2), "float32": (2e-5, 2e-6),
       "float64": (1e-9, 1e-12)}


# -- arguments as plain data ------------------------------------------------------------------


@dataclass(frozen=True)
class T:
    """A tensor argument: its dtype, shape, layout ("c" contiguous, "t" a transpose, "s" a
    strided slice, "e" an expansion), values seed and requires_grad (float dtypes only)."""
    dtype: str
    shape: tuple
    layout: str = "c"
    seed: int = 0
    grad: bool = False
    special: bool = False           # include nan/inf/-0.0 (floats) or extremes (ints)

    def __repr__(self):
        flags = ("g" if self.grad else "") + ("!" if self.special else "")
        return f"T({self.dtype},{self.shape},{self.layout}{flags},{self.seed})"


@dataclass(frozen=True)
class Dt:
    """A dtype argument by name."""
    name: str

    def __repr__(self):
        return self.name


def _values(dtype, shape, seed, special):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    if dtype == "bool":
        a = rng.integers(0, 2, n).astype(bool)
    elif dtype == "uint8":
        a = rng.integers(0, 12, n).astype(np.uint8)
        if special:
            a[rng.integers(0, 2, n).astype(bool)] = 250
    elif dtype in INTS:
        a = rng.integers(-6, 7, n).astype(dtype)
        if special:
            info = np.iinfo(dtype)
            a[rng.integers(0, 3, n) == 0] = info.max
            a[rng.integers(0, 3, n) == 0] = info.min
    else:
        # small halves and integers (ties for sort/argmax, exact rounding cases)
        a = np.round(rng.standard_normal(n) * 3, 1)
        a[rng.integers(0, 3, n) == 0] = np.round(a[rng.integers(0, 3, n) == 0])
        if special:
            pick = rng.integers(0, 5, n)
            a[pick == 0] = np.nan
            a[pick == 1] = np.inf
            a[pick == 2] = -np.inf
            a[pick == 3] = -0.0
        a = a.astype(np.float32 if dtype in ("bfloat16", "float16") else dtype)
        if dtype == "float16":
            a = a.astype(np.float16)
    return a.reshape(shape)


def make_tensor(lib, spec: T, inplace=False):
    """The tensor ``spec`` describes, under ``lib``; a requires-grad leaf behind its view
    (an in-place form gets a clone of the leaf, so that it writes to a non-leaf)."""
    shape = spec.shape
    lay = spec.layout if shape and not (spec.layout == "t" and len(shape) < 2) else "c"
    if lay == "t":
        base_shape = (shape[-1],) + shape[1:-1] + (shape[0],)
    elif lay == "s":
        base_shape = shape[:-1] + (2 * shape[-1],)
    elif lay == "e":
        base_shape = tuple(1 if i % 2 == 0 else s for i, s in enumerate(shape))
    else:
        base_shape = shape
    arr = _values(spec.dtype, base_shape, spec.seed, spec.special)
    dt = getattr(lib, spec.dtype)
    t = lib.tensor(arr.astype(np.float32) if spec.dtype == "bfloat16" else arr).to(dt)
    leaf = t
    if spec.grad and spec.dtype in FLOATS:
        leaf = t.requires_grad_()
        if inplace or lay != "c":
            t = leaf.clone()
    if lay == "t":
        t = t.transpose(0, -1)
    elif lay == "s":
        t = t[..., ::2]
    elif lay == "e":
        t = t.expand(*shape)
    return t, (leaf if leaf.requires_grad else None)


# -- the catalogue ----------------------------------------------------------------------------

BINARY = ("add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod",
          "pow", "float_power", "atan2", "maximum", "minimum", "fmax", "fmin", "eq", "ne", "lt",
          "le", "gt", "ge", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
          "bitwise_right_shift", "logical_and", "logical_or", "logical_xor", "hypot",
          "copysign", "nextafter", "xlogy", "heaviside", "gcd", "lcm", "logaddexp",
          "logaddexp2", "ldexp", "rsub", "isclose", "clamp_min", "clamp_max", "mul", "add",
          "div", "sub", "eq", "lt")
OPERATORS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
             "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
             "pow": operator.pow, "and": operator.and_, "or": operator.or_,
             "xor": operator.xor, "lshift": operator.lshift, "rshift": operator.rshift,
             "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
             "gt": operator.gt, "ge": operator.ge, "matmul": operator.matmul}
IOPERATORS = {"add": operator.iadd, "sub": operator.isub, "mul": operator.imul,
              "truediv": operator.itruediv, "floordiv": operator.ifloordiv,
              "mod": operator.imod, "pow": operator.ipow, "and": operator.iand,
              "or": operator.ior, "xor": operator.ixor, "lshift": operator.ilshift,
              "rshift": operator.irshift}
INPLACE_BINARY = ("add_", "sub_", "mul_", "div_", "floor_divide_", "remainder_", "fmod_",
                  "pow_", "atan2_", "bitwise_and_", "bitwise_or_", "bitwise_xor_", "eq_",
                  "lt_", "ge_", "logical_and_", "logical_or_", "hypot_", "copysign_",
                  "maximum", "xlogy_", "lerp_", "clamp_min_", "true_divide_", "mul_", "add_")
UNARY = ("abs", "neg", "negative", "sign", "sgn", "sqrt", "rsqrt", "exp", "exp2", "expm1",
         "log", "log2", "log10", "log1p", "sin", "cos", "tan", "tanh", "sigmoid", "asin",
         "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc", "erfinv",
         "ceil", "floor", "round", "trunc", "frac", "fix", "reciprocal", "square",
         "bitwise_not", "logical_not", "isnan", "isinf", "isfinite", "isposinf", "isneginf",
         "isreal", "signbit", "positive", "nan_to_num", "relu", "lgamma", "digamma",
         "deg2rad", "rad2deg", "angle", "i0", "sinc", "logit", "clone", "nonzero",
         "count_nonzero", "flatten", "ravel", "t", "msort", "numel", "is_nonzero", "item",
         "tolist", "float", "int", "long", "bool", "half", "double", "byte", "trace", "diag",
         "tril", "triu", "fliplr", "isneginf", "argwhere", "exp_", "abs_", "neg_", "sqrt_",
         "floor_", "sign_", "sigmoid_", "round_", "bitwise_not_", "logical_not_", "zero_",
         "relu_", "square_", "reciprocal_", "trunc_", "frac_")
REDUCTIONS = ("sum", "prod", "mean", "nansum", "nanmean", "amax", "amin", "max", "min",
              "argmax", "argmin", "all", "any", "std", "var", "logsumexp", "cumsum", "cumprod",
              "cummax", "cummin", "count_nonzero", "median", "nanmedian", "mode", "norm",
              "aminmax", "std_mean", "var_mean", "softmax", "log_softmax", "sum", "mean", "max",
              "argmax", "logcumsumexp", "diff", "flip", "roll", "squeeze", "unsqueeze")
SORTING = ("sort", "argsort", "topk", "kthvalue", "unique", "unique_consecutive",
           "searchsorted", "bincount", "histc", "bucketize", "sort", "unique")
CREATION = ("arange", "linspace", "logspace", "full", "zeros", "ones", "tensor", "eye",
            "full_like", "zeros_like", "ones_like", "empty_like", "as_tensor", "tensor",
            "arange", "range", "tril_indices", "triu_indices", "scalar_tensor")
JOIN = ("cat", "stack", "where", "hstack", "vstack", "lerp", "addcmul", "addcdiv", "clamp",
        "clip", "masked_fill", "index_select", "gather", "take", "masked_select", "index_add",
        "scatter", "scatter_add", "index_fill", "matmul", "mm", "dot", "outer", "reshape",
        "view", "expand", "repeat", "narrow", "split", "chunk", "permute", "transpose",
        "movedim", "broadcast_to", "type_as", "to", "new_full", "new_zeros", "new_tensor",
        "tile", "split_with_sizes", "masked_fill_", "index_fill_", "copy_", "fill_",
        "clamp_", "where")

SHAPES = ((), (0,), (3,), (1,), (2, 3), (3, 1), (2, 0), (1, 3), (2, 3, 2), (2, 1, 3), (4,),
          (3, 3))


class Draw:
    """Random argument drawing, from one ``random.Random``."""

    def __init__(self, rng: random.Random):
        self.r = rng

    def choice(self, seq):
        return self.r.choice(seq)

    def chance(self, p):
        return self.r.random() < p

    def dtype(self, kinds=DTYPES):
        return self.choice(kinds)

    def shape(self):
        return self.choice(SHAPES)

    def tensor(self, dtype=None, shape=None, grad=None, layout=None):
        dtype = dtype or self.dtype()
        shape = self.shape() if shape is None else shape
        layout = layout or (self.choice("ctse") if self.chance(0.35) else "c")
        grad = (dtype in FLOATS and self.chance(0.3)) if grad is None else grad
        return T(dtype, tuple(shape), layout, self.r.randrange(1 << 20), grad,
                 self.chance(0.12))

    def scalar(self):
        return self.choice((True, False, 0, 1, 2, -3, 7, 0.0, 1.5, -0.5, 2.0, float("nan"),
                            float("inf"), -2, 3))

    def broadcast_with(self, shape):
        """A shape broadcastable with ``shape`` (sometimes one that is not)."""
        if self.chance(0.06):
            return self.shape()
        drop = self.r.randint(0, len(shape))
        return tuple(1 if self.chance(0.3) else s for s in shape[drop:])

    def operand(self, shape):
        """A second operand: a tensor (maybe 0-d), or a Python scalar."""
        k = self.r.random()
        if k < 0.3:
            return self.scalar()
        if k < 0.45:
            return self.tensor(shape=())
        return self.tensor(shape=self.broadcast_with(shape))

    def dim(self, ndim, allow_none=True, allow_tuple=True):
        if allow_none and self.chance(0.2):
            return None
        if ndim == 0:
            return self.choice((0, -1, 1)) if self.chance(0.5) else 0
        d = self.r.randint(-ndim, ndim - 1)
        if self.chance(0.04):
            return ndim + 1  # out of range
        if allow_tuple and self.chance(0.25):
            other = self.r.randint(-ndim, ndim - 1)
            return (d, other) if other % ndim != d % ndim or self.chance(0.2) else (d,)
        return d


@dataclass
class Case:
    """One call: its kind, op name, positional arguments and keyword arguments."""
    kind: str
    op: str
    args: tuple
    kw: dict

    def __repr__(self):
        kw = "".join(f", {k}={v!r}" for k, v in self.kw.items())
        return f"{self.kind}:{self.op}({', '.join(map(repr, self.args))}{kw})"


def _binary(d: Draw) -> Case:
    x = d.tensor()
    y = d.operand(x.shape)
    op = d.choice(BINARY)
    kw = {}
    if op in ("add", "sub") and d.chance(0.4):
        kw["alpha"] = d.choice((2, -1, 0.5, True, 1.5))
    if op == "div" and d.chance(0.6):
        kw["rounding_mode"] = d.choice(("floor", "trunc", None))
    form = d.r.random()
    if form < 0.15 and not isinstance(y, T):
        return Case("fn", op, (y, x), kw)               # scalar first: torch's TypeError
    if form < 0.45:
        return Case("method", op, (x, y), kw)
    if form < 0.6:
        out = d.tensor(shape=d.choice((x.shape, (0,), (5,))), grad=False, layout="c")
        return Case("out", op, (x, y), dict(kw, out=out))
    return Case("fn", op, (x, y), kw)


def _operator(d: Draw) -> Case:
    x = d.tensor()
    y = d.operand(x.shape)
    name = d.choice(tuple(OPERATORS))
    if name == "matmul":
        y = d.tensor(shape=d.choice(((3,), (3, 2), (2,), ())))
        x = d.tensor(shape=d.choice(((3,), (2, 3), (0, 3), (2, 2, 3))))
    if d.chance(0.3):
        return Case("op", name, (y, x), {})              # reflected: scalar on the left
    if name in IOPERATORS and d.chance(0.4):
        return Case("iop", name, (x, y), {})
    return Case("op", name, (x, y), {})


def _inplace(d: Draw) -> Case:
    x = d.tensor()
    op = d.choice(INPLACE_BINARY)
    if op == "lerp_":
        return Case("method", op, (x, d.operand(x.shape), d.choice((0.5, 2)),), {})
    y = d.operand(x.shape)
    if d.chance(0.3) and isinstance(y, T):
        # self must keep its shape: y broadcasts into it
        y = T(y.dtype, tuple(s for s in x.shape[len(x.shape) - len(y.shape):]), y.layout,
              y.seed, y.grad, y.special) if len(y.shape) <= len(x.shape) else y
    return Case("method", op, (x, y), {})


def _unary(d: Draw) -> Case:
    x = d.tensor()
    op = d.choice(UNARY)
    kw = {}
    if op == "round" and d.chance(0.4):
        kw["decimals"] = d.choice((1, -1, 0, 2))
    if op == "nan_to_num" and d.chance(0.5):
        kw = {"nan": d.choice((0.5, 2)), "posinf": d.choice((None, 100, 1.5))}
    if op in ("tril", "triu", "diag") and d.chance(0.5):
        kw["diagonal"] = d.choice((1, -1, 0))
    if op in ("flatten",) and x.shape and d.chance(0.5):
        kw = {"start_dim": d.dim(len(x.shape), False, False)}
    if op == "logit" and d.chance(0.4):
        kw["eps"] = 0.1
    if d.chance(0.5) or op in ("tolist", "item", "float", "int", "long", "bool", "half",
                                "double", "byte", "zero_") or op.endswith("_"):
        return Case("method", op, (x,), kw)
    if d.chance(0.15) and not op.endswith("_"):
        out = d.tensor(shape=d.choice((x.shape, (0,))), grad=False, layout="c")
        return Case("out", op, (x,), dict(kw, out=out))
    return Case("fn", op, (x,), kw)


def _reduction(d: Draw) -> Case:
    x = d.tensor()
    op = d.choice(REDUCTIONS)
    n = len(x.shape)
    kw = {}
    single = op in ("argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin", "median",
                    "nanmedian", "mode", "softmax", "log_softmax", "logcumsumexp", "diff",
                    "unsqueeze", "all", "any", "max", "min")
    dim = d.dim(n + (op == "unsqueeze"), allow_none=op not in (
        "cumsum", "cumprod", "cummax", "cummin", "softmax", "log_softmax", "logcumsumexp",
        "unsqueeze"), allow_tuple=not single or op in ("all", "any"))
    if op in ("flip", "roll"):
        dim = dim if isinstance(dim, tuple) else ((dim,) if dim is not None else (0,))
        if op == "roll":
            kw["shifts"] = tuple(d.r.randint(-3, 3) for _ in dim)
        kw["dims"] = dim
    elif dim is not None or op in ("cumsum", "cumprod", "softmax", "log_softmax",
                                   "logcumsumexp", "unsqueeze", "cummax", "cummin"):
        kw["dim"] = 0 if dim is None else dim
        if op not in ("cumsum", "cumprod", "softmax", "log_softmax", "logcumsumexp", "diff",
                      "squeeze", "unsqueeze", "cummax", "cummin", "count_nonzero",
                      "aminmax") and d.chance(0.4):
            kw["keepdim"] = d.choice((True, False))
    if op in ("sum", "prod", "mean", "cumsum", "cumprod", "nansum", "nanmean", "softmax",
              "log_softmax") and d.chance(0.3):
        kw["dtype"] = Dt(d.dtype())
    if op in ("std", "var", "std_mean", "var_mean") and d.chance(0.4):
        kw["correction"] = d.choice((0, 1, 2))
    if op == "norm" and d.chance(0.5):
        kw["p"] = d.choice((1, 2, float("inf"), 0, 3.5, "fro"))
    if op in ("max", "min") and "dim" not in kw and d.chance(0.2):
        return Case("fn", op, (x, d.operand(x.shape)), {})   # the binary overload
    if d.chance(0.5):
        return Case("method", op, (x,), kw)
    return Case("fn", op, (x,), kw)


def _sorting(d: Draw) -> Case:
    op = d.choice(SORTING)
    x = d.tensor()
    n = len(x.shape)
    kw = {}
    if op in ("sort", "argsort"):
        if d.chance(0.6):
            kw["dim"] = d.dim(n, False, False)
        if d.chance(0.5):
            kw["descending"] = d.choice((True, False))
        if d.chance(0.5):
            kw["stable"] = True
    elif op == "topk":
        k = d.r.randint(0, 3)
        if d.chance(0.5):
            kw["dim"] = d.dim(n, False, False)
        if d.chance(0.4):
            kw["largest"] = d.choice((True, False))
        return Case("fn", op, (x, k), kw)
    elif op == "kthvalue":
        if d.chance(0.5):
            kw["dim"] = d.dim(n, False, False)
        return Case("fn", op, (x, d.r.randint(1, 3)), kw)
    elif op in ("unique", "unique_consecutive"):
        for k in ("return_inverse", "return_counts") + (("sorted",) if op == "unique" else ()):
            if d.chance(0.5):
                kw[k] = d.choice((True, False))
        if d.chance(0.3):
            kw["dim"] = d.dim(n, False, False)
    elif op in ("searchsorted", "bucketize"):
        seq = d.tensor(shape=d.choice(((5,), (0,), (2, 4))), grad=False)
        vals = d.operand(seq.shape[:-1] + (3,)) if d.chance(0.8) else d.scalar()
        if d.chance(0.4):
            kw["right"] = d.choice((True, False))
        if d.chance(0.3):
            kw["out_int32"] = True
        if op == "bucketize":
            return Case("fn", "sorted_" + op, (vals, seq), kw)
        return Case("fn", "sorted_" + op, (seq, vals), kw)
    elif op == "bincount":
        x = d.tensor(dtype=d.choice(("int64", "int32", "uint8", "float32", "int64")),
                     shape=d.choice(((5,), (0,), (), (2, 2))))
        if d.chance(0.3):
            kw["minlength"] = d.choice((0, 3, 12))
        if d.chance(0.3):
            kw["weights"] = d.tensor(shape=x.shape, grad=False)
    elif op == "histc":
        kw = {"bins": d.choice((4, 1)), "min": d.choice((0, -2)), "max": d.choice((0, 3))}
    return Case(d.choice(("fn", "method")), op, (x,), kw)


def _creation(d: Draw) -> Case:
    op = d.choice(CREATION)
    dt = {"dtype": Dt(d.dtype())} if d.chance(0.4) else {}
    num = (0, 1, 2, -3, 0.5, 2.5, -1.5, True, 10, 3.0)
    if op in ("arange", "range"):
        k = d.r.randint(1, 3)
        args = tuple(d.choice(num) for _ in range(k))
        if k == 3 and args[2] == 0:
            args = args[:2] + (d.choice((0, 0.25)),)
        if op == "range" and k == 3 and abs(args[2]) < 1 and dt and dt["dtype"].name not in \
                FLOATS:
            args = args[:2] + (1,)  # torch.range dies of SIGFPE (its step casts to 0)
        return Case("fn", op, args, dt)
    if op in ("linspace", "logspace"):
        return Case("fn", op, (d.choice(num), d.choice(num), d.choice((0, 1, 5, 4))), dt)
    if op == "full":
        return Case("fn", op, (d.choice(((2, 3), (), (0,), [2])),
                               d.choice((1, 1.5, True, False, -2, float("nan")))), dt)
    if op in ("zeros", "ones"):
        return Case("fn", op, d.choice((((2, 3),), (2, 3), (), ((),), (0,))), dt)
    if op in ("tensor", "as_tensor"):
        return Case("fn", op, (_nested(d),), dt)
    if op == "eye":
        return Case("fn", op, d.choice(((3,), (2, 4), (0,))), dt)
    if op == "scalar_tensor":
        return Case("fn", op, (d.choice(num),), dt)
    if op in ("tril_indices", "triu_indices"):
        return Case("fn", op, (d.choice((3, 4, 0)), d.choice((3, 2)), d.choice((0, 1, -1))),
                    dt)
    x = d.tensor(grad=False)
    if op == "full_like":
        return Case("fn", op, (x, d.choice((1, 2.5, True, -1))), dt)
    if op == "empty_like":
        return Case("fn", "ones_like", (x,), dt)
    return Case("fn", op, (x,), dt)


def _nested(d: Draw):
    leaf = (0, 1, -2, 1.5, True, False, float("nan"), 3)
    shape = d.choice(((), (2,), (2, 2), (0,), (1, 3)))
    mixed = d.chance(0.5)
    kinds = leaf if mixed else d.choice(((0, 1, -2, 3), (True, False), (1.5, -0.5, 0.0)))

    def build(s):
        if not s:
            return d.choice(kinds)
        return [build(s[1:]) for _ in range(s[0])]

    v = build(shape)
    if d.chance(0.1):
        v = [v, [1]] if isinstance(v, list) and v else v   # ragged: an error
    return v


def _index(d: Draw, shape):
    """An index expression for a tensor of ``shape``."""
    n = len(shape)
    parts = []
    dims = list(shape)
    for i in range(d.r.randint(0, max(n, 1))):
        k = d.r.random()
        size = dims[i] if i < len(dims) else 1
        if k < 0.3:
            parts.append(d.r.randint(-size - (1 if d.chance(0.05) else 0), max(size - 1, 0)))
        elif k < 0.5:
            step = d.choice((1, 2, 1, -1)) if d.chance(0.3) else None
            parts.append(slice(d.choice((None, 0, 1, -1)), d.choice((None, 2, -1, 5)), step))
        elif k < 0.6:
            parts.append(None)
        elif k < 0.7:
            parts.append(Ellipsis)
        elif k < 0.85:
            parts.append([d.r.randint(-size, max(size - 1, 0)) for _ in range(d.r.randint(0, 3))]
                         if size else [])
        elif k < 0.93:
            parts.append(T(d.choice(("int64", "int32", "uint8", "bool")),
                           d.choice(((2,), (), (1,))), "c", d.r.randrange(1 << 20)))
        else:
            parts.append(T("bool", tuple(shape[i:i + 1]), "c", d.r.randrange(1 << 20)))
    if len(parts) == 1 and d.chance(0.6):
        return parts[0]
    if not parts and d.chance(0.5):
        return T("bool", tuple(shape), "c", d.r.randrange(1 << 20))
    return tuple(parts)


def _indexing(d: Draw) -> Case:
    x = d.tensor(shape=d.choice(((3,), (2, 3), (3, 4), (2, 3, 2), (), (0, 2))))
    idx = _index(d, x.shape)
    k = d.r.random()
    if k < 0.5:
        return Case("getitem", "getitem", (x, idx), {})
    if k < 0.85:
        v = d.choice((d.scalar(), d.tensor(shape=d.choice(((), (1,), (2,), (3,))), grad=False)))
        return Case("setitem", "setitem", (x, idx, v), {})
    if x.shape:
        src = T(d.dtype(), (2,), "c", d.r.randrange(1 << 20))
        ind = T(d.choice(("int64", "int32", "bool")), (2,), "c", d.r.randrange(1 << 20))
        return Case("method", "index_put_",
                    (x, (T("int64", (2,), "c", ind.seed),), src),
                    {"accumulate": d.choice((True, False))})
    return Case("getitem", "getitem", (x, idx), {})


def _join(d: Draw) -> Case:
    op = d.choice(JOIN)
    x = d.tensor()
    s = x.shape
    n = len(s)
    if op in ("cat", "stack", "hstack", "vstack"):
        ys = [x] + [d.tensor(shape=s if d.chance(0.8) else d.shape()) for _ in
                    range(d.r.randint(0, 2))]
        kw = {"dim": d.dim(n + (op == "stack"), False, False)} if d.chance(0.5) and \
            op in ("cat", "stack") else {}
        return Case("fn", op, (ys,), kw)
    if op == "where":
        c = T("bool", d.broadcast_with(s), "c", d.r.randrange(1 << 20))
        return Case("fn", op, (c, d.choice((x, d.scalar())), d.operand(s)), {})
    if op in ("lerp", "addcmul", "addcdiv"):
        args = (x, d.operand(s), d.operand(s))
        if op != "lerp":
            args = (x, d.tensor(shape=d.broadcast_with(s)), d.tensor(shape=d.broadcast_with(s)))
            kw = {"value": d.choice((2, 0.5, True))} if d.chance(0.5) else {}
            return Case("fn", op, args, kw)
        return Case("fn", op, args, {})
    if op in ("clamp", "clip", "clamp_"):
        lo = d.choice((None, -1, 0.5, True)) if d.chance(0.6) else d.operand(s)
        hi = d.choice((None, 2, 1.5)) if d.chance(0.6) else d.operand(s)
        return Case("method" if op == "clamp_" else d.choice(("fn", "method")), op,
                    (x, lo, hi), {})
    if op in ("masked_fill", "masked_fill_"):
        m = T("bool", d.broadcast_with(s), "c", d.r.randrange(1 << 20))
        v = d.choice((d.scalar(), d.tensor(shape=())))
        return Case("method", op, (x, m, v), {})
    if op in ("index_select", "gather", "index_add", "scatter", "scatter_add", "index_fill",
              "index_fill_", "take"):
        if not n:
            extra = (1.5,) if "fill" in op else ()
            return Case("method", op, (x, 0, T("int64", (1,), "c", 0)) + extra, {})
        dim = d.dim(n, False, False)
        size = s[dim] if -n <= dim < n else 1
        idt = d.choice(("int64", "int64", "int32", "float32"))
        if op == "take":
            return Case("fn", op, (x, T("int64", (2,), "c", 0)), {}) if x.shape and \
                0 not in x.shape else Case("fn", "clone", (x,), {})
        if op in ("index_select", "index_fill", "index_fill_"):
            ind = T(idt, (min(size, 2),), "c", 0)
            extra = (d.choice((1.5, -2, True)),) if "fill" in op else ()
            return Case("method", op, (x, dim, ind) + extra, {})
        if op == "index_add":
            ind = T(idt, (min(size, 2),), "c", 0)
            src_shape = tuple(min(size, 2) if i == dim % n else v for i, v in enumerate(s))
            return Case("fn", op, (x, dim, ind, d.tensor(shape=src_shape)),
                        {"alpha": d.choice((1, 2, 0.5))} if d.chance(0.4) else {})
        ind = T(idt, s, "c", 0)
        if op == "gather":
            return Case("fn", op, (x, dim, ind), {})
        src = d.tensor(shape=s) if d.chance(0.7) else d.scalar()
        kw = {}
        if op == "scatter" and d.chance(0.3):
            kw["reduce"] = d.choice(("add", "multiply"))
        return Case("fn", op, (x, dim, ind, src), kw)
    if op == "masked_select":
        return Case("fn", op, (x, T("bool", d.broadcast_with(s), "c", d.r.randrange(1 << 20))),
                    {})
    if op in ("matmul", "mm", "dot", "outer"):
        a = d.tensor(shape=d.choice(((3,), (2, 3), (0, 3))))
        b = d.tensor(shape=d.choice(((3,), (3, 2), (3, 0), (2,))))
        return Case("fn", op, (a, b), {})
    if op in ("reshape", "view"):
        numel = int(np.prod(s)) if s else 1
        shp = d.choice(((-1,), (numel,), (1, -1), (-1, 1), (2, -1), (), (-1, -1)))
        return Case("method", op, (x, shp), {})
    if op in ("expand", "broadcast_to"):
        shp = d.choice(((2,) + s, tuple(-1 for _ in s), (3, 3), (2, 1) + s))
        return Case("method", op, (x, shp), {})
    if op in ("repeat", "tile"):
        reps = tuple(d.r.randint(0, 2) for _ in range(d.r.randint(max(n, 1) - 1, n + 1)))
        return Case("method", op, (x, reps), {})
    if op == "narrow":
        return Case("fn", op, (x, d.dim(n, False, False), d.r.randint(-1, 1), d.r.randint(0, 2)),
                    {})
    if op in ("split", "chunk", "split_with_sizes"):
        if op == "split_with_sizes":
            return Case("method", op, (x, [1, 2]), {"dim": d.dim(n, False, False)})
        return Case("fn", op, (x, d.choice((1, 2, 3))), {"dim": d.dim(n, False, False)})
    if op in ("permute", "movedim", "transpose"):
        if op == "permute":
            p = list(range(n))
            d.r.shuffle(p)
            return Case("method", op, (x, tuple(i - n if d.chance(0.3) else i for i in p)), {})
        return Case("fn", op, (x, d.dim(n, False, False), d.dim(n, False, False)), {})
    if op in ("type_as", "to"):
        return Case("method", op, (x, d.tensor(shape=()) if op == "type_as" else Dt(d.dtype())),
                    {})
    if op in ("new_full", "new_zeros", "new_tensor"):
        arg = {"new_full": ((2,), d.choice((1.5, 2, True))), "new_zeros": ((2, 1),),
               "new_tensor": (_nested(d),)}[op]
        return Case("method", op, (x,) + arg, {"dtype": Dt(d.dtype())} if d.chance(0.3) else {})
    if op in ("copy_", "fill_"):
        v = d.tensor(shape=d.broadcast_with(s)) if op == "copy_" else d.choice(
            (d.scalar(), d.tensor(shape=())))
        return Case("method", op, (x, v), {})
    return Case("fn", "clone", (x,), {})


KINDS = ((_binary, 22), (_operator, 14), (_inplace, 10), (_unary, 16), (_reduction, 16),
         (_sorting, 7), (_creation, 6), (_indexing, 10), (_join, 12))


def draw_case(rng: random.Random) -> Case:
    """One random call."""
    d = Draw(rng)
    fns, weights = zip(*KINDS)
    return rng.choices(fns, weights)[0](d)


# -- running a case ---------------------------------------------------------------------------


class _Env:
    """The tensors one run made: leaves (for gradients) and arguments (to see what was
    written in place)."""

    def __init__(self, lib, inplace):
        self.lib = lib
        self.inplace = inplace
        self.leaves = []
        self.tensors = []

    def build(self, v):
        if isinstance(v, T):
            t, leaf = make_tensor(self.lib, v, self.inplace)
            if leaf is not None:
                self.leaves.append(leaf)
            self.tensors.append(t)
            return t
        if isinstance(v, Dt):
            return getattr(self.lib, v.name)
        if isinstance(v, tuple):
            return tuple(self.build(e) for e in v)
        if isinstance(v, list):
            return [self.build(e) for e in v]
        if isinstance(v, dict):
            return {k: self.build(e) for k, e in v.items()}
        return v


def _method_call(op, args, kw):
    """``x.op(a1, ..., k=v)`` compiled as user code writes it (retrograd's argument errors
    read the caller's bytecode to count positions as a method does)."""
    names = {f"a{i}": a for i, a in enumerate(args)}
    pos = ", ".join(f"a{i}" for i in range(1, len(args)))
    kws = ", ".join(f"{k}=kw_{k}" for k in kw)
    names.update({f"kw_{k}": v for k, v in kw.items()})
    return eval(f"a0.{op}({', '.join(x for x in (pos, kws) if x)})", {}, names)  # noqa: S307


def call(lib, case: Case, env: _Env):
    args = env.build(case.args)
    kw = env.build(case.kw)
    if case.kind == "fn":
        return getattr(lib, case.op)(*args, **kw)
    if case.kind in ("method",):
        return _method_call(case.op, args, kw)
    if case.kind == "out":
        r = getattr(lib, case.op)(*args, **kw)
        return ("out", r is kw["out"], kw["out"])
    if case.kind == "op":
        return OPERATORS[case.op](*args)
    if case.kind == "iop":
        x = args[0]
        r = IOPERATORS[case.op](x, args[1])
        return ("iop", r is x, r)
    if case.kind == "getitem":
        return args[0][args[1]]
    if case.kind == "setitem":
        args[0][args[1]] = args[2]
        return args[0]
    raise ValueError(case.kind)


@dataclass
class Outcome:
    error: tuple | None = None          # (builtin base type name, message)
    result: object = None               # nested to_py form
    written: object = None              # the tensor arguments after the call
    grad_fn: str | None = None
    grads: object = None
    view: tuple | None = None           # (strides, is_contiguous) where the result is a view


def _base_type(e) -> str:
    for k in type(e).__mro__:
        if k.__module__ == "builtins":
            return k.__name__
    return "Exception"


def _np(t):
    return t.detach().float().numpy() if str(t.dtype).endswith("bfloat16") else \
        t.detach().numpy()


def to_py(x):
    """Results as plain data: tensors as (dtype, shape, array); containers recursively."""
    if hasattr(x, "is_floating_point") and hasattr(x, "shape"):
        return ("T", str(x.dtype).split(".")[-1], tuple(x.shape), np.array(_np(x)))
    if hasattr(x, "is_floating_point") and not hasattr(x, "shape"):
        return ("dtype", str(x).split(".")[-1])
    if type(x).__name__ == "dtype":
        return ("dtype", str(x).split(".")[-1])
    if type(x).__name__ == "Size":
        return ("Size", tuple(x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__ if type(x) in (list, tuple) else "tuple",
                tuple(to_py(e) for e in x))
    if isinstance(x, (bool, int, float, str, type(None))):
        return (type(x).__name__, x)
    return ("?", type(x).__name__)


def _first_tensor(r):
    if hasattr(r, "requires_grad"):
        return r
    if isinstance(r, (tuple, list)):
        for e in r:
            t = _first_tensor(e)
            if t is not None:
                return t
    return None


def outcome(lib, case: Case) -> Outcome:
    """What ``case`` does under ``lib``."""
    inplace = case.kind in ("iop", "setitem") or case.op.endswith("_")
    env = _Env(lib, inplace)
    out = Outcome()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = call(lib, case, env)
        except Exception as e:  # noqa: BLE001 - every error is compared
            out.error = (_base_type(e), _message(e))
            return out
        out.result = to_py(r)
        if inplace:
            out.written = to_py(env.tensors[:1])
        t = _first_tensor(r)
        if t is not None and getattr(t, "_base", None) is not None and t.numel() > 1:
            try:
                out.view = (tuple(t.stride()), t.is_contiguous())
            except Exception:  # noqa: BLE001
                out.view = None
        if t is not None and t.requires_grad and env.leaves:
            fn = t.grad_fn
            out.grad_fn = None if fn is None else (
                fn.name() if callable(getattr(fn, "name", None)) else type(fn).__name__)
            try:
                w = lib.ones_like(t).mul(1.5)
                g = lib.autograd.grad((t * w).sum(), env.leaves, allow_unused=True)
                out.grads = to_py(list(g))
            except Exception as e:  # noqa: BLE001
                out.grads = ("error", _base_type(e), _message(e))
    return out


_PROVENANCE = re.compile(r'\n  [^\n]* at: File "[^"\n]*", line \d+, in [^\n]*')


def _message(e) -> str:
    msg = _PROVENANCE.sub("", str(e))
    return msg.replace("retrograd", "torch")


# -- comparing --------------------------------------------------------------------------------


def _close(a, b, dtype) -> bool:
    if a.shape != b.shape:
        return False
    if dtype in TOL:
        a = a.astype(np.float64)
        b = b.astype(np.float64)
        if not np.array_equal(np.isnan(a), np.isnan(b)):
            return False
        fin = np.isfinite(b)
        if not np.array_equal(a[~fin & ~np.isnan(b)], b[~fin & ~np.isnan(b)]):
            return False
        rtol, atol = TOL[dtype]
        return bool(np.allclose(a[fin], b[fin], rtol=rtol, atol=atol))
    return bool(np.array_equal(a, b))


def diff_py(a, b, path="result"):
    """How the to_py form ``a`` differs from ``b``, or ``None``."""
    if isinstance(b, tuple) and b and b[0] == "T":
        if not (isinstance(a, tuple) and a and a[0] == "T"):
            return f"{path}: type {a if not isinstance(a, tuple) else a[0]} vs tensor"
        if a[1] != b[1]:
            return f"{path}: dtype {a[1]} vs {b[1]}"
        if a[2] != b[2]:
            return f"{path}: shape {a[2]} vs {b[2]}"
        if not _close(a[3], b[3], b[1]):
            return f"{path}: values"
        return None
    if isinstance(b, tuple) and len(b) == 2 and b[0] in ("tuple", "list"):
        if not (isinstance(a, tuple) and len(a) == 2 and a[0] == b[0]):
            return f"{path}: {str(a)[:60]} vs {b[0]}"
        if len(a[1]) != len(b[1]):
            return f"{path}: length {len(a[1])} vs {len(b[1])}"
        for i, (x, y) in enumerate(zip(a[1], b[1])):
            dd = diff_py(x, y, f"{path}[{i}]")
            if dd:
                return dd
        return None
    if isinstance(b, tuple) and len(b) == 2 and b[0] == "float" and isinstance(a, tuple) and \
            a[0] == "float":
        if a[1] == b[1] or (a[1] != a[1] and b[1] != b[1]) or abs(a[1] - b[1]) <= 1e-5 * (
                1 + abs(b[1])):
            return None
        return f"{path}: value {a[1]} vs {b[1]}"
    if a != b:
        return f"{path}: {str(a)[:60]} vs {str(b)[:60]}"
    return None


def difference(ours: Outcome, ref: Outcome):
    """(cause, detail) of how retrograd's outcome differs from torch's, or ``None``."""
    if ref.error or ours.error:
        if not ours.error:
            return "no error", f"torch raised {ref.error[0]}: {ref.error[1][:200]}"
        if not ref.error:
            return "spurious error", f"{ours.error[0]}: {ours.error[1][:200]}"
        if ours.error[0] != ref.error[0]:
            return "error type", f"{ours.error[0]} vs {ref.error[0]}: {ours.error[1][:120]} | " \
                                 f"{ref.error[1][:120]}"
        if ours.error[1] != ref.error[1]:
            return "error message", f"{ours.error[1][:150]} | {ref.error[1][:150]}"
        return None
    for what in ("result", "written"):
        dd = diff_py(getattr(ours, what), getattr(ref, what), what)
        if dd:
            kind = dd.split(": ")[1].split(" ")[0]
            return f"{what} {kind}", dd
    if ours.grad_fn != ref.grad_fn:
        return "grad_fn", f"{ours.grad_fn} vs {ref.grad_fn}"
    dd = diff_py(ours.grads, ref.grads, "grads")
    if dd:
        return "grads", dd
    if ref.view is not None and ours.view != ref.view:
        return "view strides", f"{ours.view} vs {ref.view}"
    return None


def run_one(case: Case, torch, retrograd):
    """(cause, detail) for ``case``, or ``None`` where retrograd does what torch does."""
    ref = outcome(torch, case)
    ours = outcome(retrograd, case)
    return difference(ours, ref)


def main(argv):  # pragma: no cover - the scratch driver
    import torch

    import retrograd
    n = int(argv[1]) if len(argv) > 1 else 1000
    start = int(argv[2]) if len(argv) > 2 else 0
    groups = defaultdict(list)
    counts = Counter()
    for seed in range(start, start + n):
        case = draw_case(random.Random(seed))
        try:
            dd = run_one(case, torch, retrograd)
        except Exception as e:  # noqa: BLE001
            dd = ("fuzzer crash", f"{type(e).__name__}: {e}")
        counts[case.kind] += 1
        if dd:
            groups[(case.op, dd[0])].append((seed, case, dd[1]))
    total = sum(len(v) for v in groups.values())
    print(f"cases {n}, differences {total}, classes {len(groups)}")
    for (op, cause), items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        seed, case, detail = items[0]
        print(f"{len(items):5d} {op:22s} {cause:16s} seed={seed} {case!r}\n      {detail}")


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv)
