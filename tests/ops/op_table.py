"""The op table: every differentiable op with sample inputs, driving the generic op tests.

Each entry names an op, gives one function written against a ``lib`` (retrograd or torch, so the
same expression runs in both), and lists samples: the shapes of the tensor arguments (which may
broadcast, be 0-dim or empty) and the input domain that keeps the op smooth. Adding an op here
runs it through every test in ``test_op_table.py``: values, dtype and shape against torch,
gradcheck and gradgradcheck in float64, and first- and second-order gradients against torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class OpInfo:
    name: str
    fn: object                       # fn(lib, *tensors) -> tensor
    samples: list                    # list of tuples of shapes, one per tensor argument
    low: float = -2.0                # input domain
    high: float = 2.0
    grad: bool = True                # differentiable
    gradgrad: bool = True            # second order checked too
    no_gradgrad: str = ""            # why there is no second order (retrograd's or torch's)
    no_gradcheck: str = ""           # why the gradient is not the derivative (torch's choice)
    positive_gap: float = 0.0        # keep |x| above this (away from kinks and poles)
    int_inputs: tuple = ()           # argument positions that are integer tensors
    extra: dict = field(default_factory=dict)

    def ids(self):
        return [f"{self.name}-{'x'.join(map(str, s)) if s else 'scalar'}" for s in self.samples]


def _sh(*shapes):
    return list(shapes)


UNARY = _sh(((3, 4),), ((),), ((0, 3),), ((2, 3, 2),))
BINARY = _sh(((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3)), ((2, 3), ()),
             ((0, 2), (2,)))

OPS = [
    # arithmetic
    OpInfo("add", lambda lib, a, b: a + b, BINARY),
    OpInfo("add_alpha", lambda lib, a, b: lib.add(a, b, alpha=2.5), BINARY),
    OpInfo("sub", lambda lib, a, b: a - b, BINARY),
    OpInfo("sub_alpha", lambda lib, a, b: lib.sub(a, b, alpha=-1.5), BINARY),
    OpInfo("mul", lambda lib, a, b: a * b, BINARY),
    OpInfo("div", lambda lib, a, b: a / b, BINARY, positive_gap=0.5),
    OpInfo("add_scalar", lambda lib, a: a + 2.5, UNARY),
    OpInfo("radd_scalar", lambda lib, a: 2.5 + a, UNARY),
    OpInfo("rsub_scalar", lambda lib, a: 2.5 - a, UNARY),
    OpInfo("sub_scalar", lambda lib, a: a - 2, UNARY),
    OpInfo("mul_scalar", lambda lib, a: a * 3, UNARY),
    OpInfo("rmul_scalar", lambda lib, a: -1.5 * a, UNARY),
    OpInfo("div_scalar", lambda lib, a: a / 4, UNARY),
    OpInfo("rdiv_scalar", lambda lib, a: 2 / a, UNARY, positive_gap=0.5),
    OpInfo("neg", lambda lib, a: -a, UNARY),
    OpInfo("pow_scalar", lambda lib, a: a ** 3, UNARY),
    OpInfo("pow_half", lambda lib, a: a ** 0.5, UNARY, low=0.5, high=3.0),
    OpInfo("pow_square", lambda lib, a: a ** 2, UNARY),
    OpInfo("pow_neg", lambda lib, a: a ** -1.5, UNARY, low=0.5, high=3.0),
    OpInfo("pow_tensor", lambda lib, a, b: a ** b, BINARY, low=0.5, high=2.0),
    OpInfo("rpow_scalar", lambda lib, a: 2 ** a, UNARY),
    # unary math
    OpInfo("exp", lambda lib, a: a.exp(), UNARY),
    OpInfo("log", lambda lib, a: lib.log(a), UNARY, low=0.2, high=3.0),
    OpInfo("sin", lambda lib, a: lib.sin(a), UNARY),
    OpInfo("cos", lambda lib, a: a.cos(), UNARY),
    OpInfo("tanh", lambda lib, a: lib.tanh(a), UNARY),
    OpInfo("sigmoid", lambda lib, a: a.sigmoid(), UNARY, low=-4, high=4),
    OpInfo("relu", lambda lib, a: lib.relu(a), UNARY, positive_gap=0.1),
    OpInfo("abs", lambda lib, a: a.abs(), UNARY, positive_gap=0.1),
    OpInfo("sqrt", lambda lib, a: lib.sqrt(a), UNARY, low=0.3, high=3.0),
    OpInfo("clamp", lambda lib, a: a.clamp(-0.5, 0.7), UNARY, positive_gap=0.0,
           extra={"avoid": (-0.5, 0.7)}),
    OpInfo("clamp_min", lambda lib, a: lib.clamp(a, min=0.2), UNARY, extra={"avoid": (0.2,)}),
    OpInfo("clamp_max", lambda lib, a: a.clamp(max=-0.1), UNARY, extra={"avoid": (-0.1,)}),
    OpInfo("clamp_tensor", lambda lib, a, lo, hi: a.clamp(lo, hi + 3),
           _sh(((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), ())), extra={"gap_between": True}),
    OpInfo("where", lambda lib, a, b: lib.where(a > 0, a, b), BINARY, positive_gap=0.1),
    OpInfo("where_scalar", lambda lib, a: lib.where(a > 0, a * 2, 0.5), UNARY, positive_gap=0.1),
    # reductions
    OpInfo("sum", lambda lib, a: a.sum(), UNARY),
    OpInfo("sum_dim", lambda lib, a: a.sum(-1), _sh(((3, 4),), ((2, 3, 2),), ((0, 3),))),
    OpInfo("sum_dims_keep", lambda lib, a: a.sum((0, 2), keepdim=True), _sh(((2, 3, 2),))),
    OpInfo("mean", lambda lib, a: a.mean(), _sh(((3, 4),), ((),), ((2, 3, 2),))),
    OpInfo("mean_dim", lambda lib, a: lib.mean(a, 1, keepdim=True), _sh(((3, 4),), ((2, 3, 2),))),
    OpInfo("max", lambda lib, a: a.max(), _sh(((3, 4),), ((),))),
    OpInfo("max_dim", lambda lib, a: a.max(1).values, _sh(((3, 4),), ((2, 3, 2),))),
    OpInfo("max_dim_keep", lambda lib, a: a.max(dim=0, keepdim=True)[0], _sh(((3, 4),))),
    OpInfo("min", lambda lib, a: a.min(), _sh(((3, 4),))),
    OpInfo("min_dim", lambda lib, a: lib.min(a, -1)[0], _sh(((3, 4),))),
    OpInfo("norm", lambda lib, a: a.norm(), _sh(((3, 4),), ((5,),))),
    OpInfo("norm_dim", lambda lib, a: a.norm(dim=1), _sh(((3, 4),))),
    OpInfo("norm_p1", lambda lib, a: a.norm(1), _sh(((3, 4),)), positive_gap=0.1),
    OpInfo("norm_p3", lambda lib, a: a.norm(3, dim=0, keepdim=True), _sh(((3, 4),)),
           positive_gap=0.1),
    OpInfo("vector_norm_inf", lambda lib, a: lib.linalg.vector_norm(a, float("inf")),
           _sh(((3, 4),))),
    # linear algebra
    OpInfo("matmul_mm", lambda lib, a, b: a @ b, _sh(((3, 4), (4, 2)))),
    OpInfo("matmul_mv", lambda lib, a, b: a @ b, _sh(((3, 4), (4,)))),
    OpInfo("matmul_vm", lambda lib, a, b: a @ b, _sh(((4,), (4, 2)))),
    OpInfo("matmul_dot", lambda lib, a, b: lib.matmul(a, b), _sh(((4,), (4,)))),
    OpInfo("matmul_bmm", lambda lib, a, b: a @ b, _sh(((2, 3, 4), (2, 4, 2)))),
    OpInfo("matmul_broadcast", lambda lib, a, b: a @ b,
           _sh(((2, 1, 3, 4), (3, 4, 2)), ((2, 3, 4), (4, 2)), ((4,), (2, 4, 3)))),
    OpInfo("mm", lambda lib, a, b: lib.mm(a, b), _sh(((3, 4), (4, 2)))),
    # shape and views
    OpInfo("view", lambda lib, a: a.view(4, 3), _sh(((3, 4),))),
    OpInfo("view_infer", lambda lib, a: a.view(-1), _sh(((3, 4),), ((),))),
    OpInfo("reshape", lambda lib, a: a.reshape(2, -1), _sh(((3, 4),))),
    OpInfo("reshape_noncontig", lambda lib, a: a.t().reshape(-1), _sh(((3, 4),))),
    OpInfo("transpose", lambda lib, a: a.transpose(0, -1), _sh(((3, 4),), ((2, 3, 2),))),
    OpInfo("T", lambda lib, a: a.T, _sh(((3, 4),))),
    OpInfo("permute", lambda lib, a: a.permute(2, 0, 1), _sh(((2, 3, 4),))),
    OpInfo("expand", lambda lib, a: a.expand(2, 3, 4), _sh(((3, 1),), ((4,),))),
    OpInfo("squeeze", lambda lib, a: a.squeeze(), _sh(((3, 1, 4),))),
    OpInfo("squeeze_dim", lambda lib, a: a.squeeze(1), _sh(((3, 1, 4),))),
    OpInfo("unsqueeze", lambda lib, a: a.unsqueeze(-1), _sh(((3, 4),), ((),))),
    OpInfo("flatten", lambda lib, a: a.flatten(1), _sh(((2, 3, 4),))),
    OpInfo("clone", lambda lib, a: a.clone(), UNARY),
    # indexing
    OpInfo("index_int", lambda lib, a: a[1], _sh(((3, 4),))),
    OpInfo("index_slice", lambda lib, a: a[1:], _sh(((3, 4),))),
    OpInfo("index_step", lambda lib, a: a[:, ::2], _sh(((3, 4),))),
    OpInfo("index_mixed", lambda lib, a: a[0, 1:, None], _sh(((2, 3, 4),))),
    OpInfo("index_ellipsis", lambda lib, a: a[..., 1], _sh(((2, 3, 4),))),
    OpInfo("index_list", lambda lib, a: a[[0, 2, 2]], _sh(((3, 4),))),
    OpInfo("index_tensor", lambda lib, a: a[:, lib.tensor([3, 0, 3])], _sh(((3, 4),))),
    OpInfo("index_bool", lambda lib, a: a[a > 0], _sh(((3, 4),)), positive_gap=0.05),
    # composites of in-place ops on non-leaves
    OpInfo("setitem_scalar", lambda lib, a: _setitem(a, lambda y: y.__setitem__(0, 1.5)),
           _sh(((3, 4),))),
    OpInfo("setitem_tensor", lambda lib, a, b: _setitem(a, lambda y: y.__setitem__(
        (slice(None), 1), b * 2)), _sh(((3, 4), (3,)))),
    OpInfo("setitem_mask", lambda lib, a: _setitem(a, lambda y: y.__setitem__(y > 0, 0.0)),
           _sh(((3, 4),)), positive_gap=0.05),
    OpInfo("inplace_view_mul", lambda lib, a: _setitem(a, lambda y: y[1:].mul_(2)),
           _sh(((3, 4),))),
    OpInfo("inplace_ops", lambda lib, a, b: _chain_inplace(a, b), _sh(((3, 4), (3, 4))),
           positive_gap=0.3),
]


def _setitem(a, mutate):
    y = a * 1
    mutate(y)
    return y


def _chain_inplace(a, b):
    y = a * 1
    y.add_(b).mul_(b).sub_(1).div_(b)
    y += a
    y *= 0.25
    return y.tanh_()


def make_inputs(op: OpInfo, shapes, rng, dtype=np.float64):
    """NumPy arrays for one sample: in the op's domain, away from its kinks."""
    arrays = []
    for shape in shapes:
        x = rng.uniform(op.low, op.high, size=shape).astype(dtype)
        if op.positive_gap:
            x = np.where(np.abs(x) < op.positive_gap, np.sign(x + 1e-12) * op.positive_gap + x,
                         x)
        for v in op.extra.get("avoid", ()):
            x = np.where(np.abs(x - v) < 0.05, x + 0.1, x)
        arrays.append(x.astype(dtype))
    return arrays
