"""Activations and softmax-like functions, as ``torch.nn.functional`` has them.

The stable or hot ones are primitives in ``ops.nn_activation`` (with PyTorch's grad_fn names);
the rest are written here on retrograd's ops. ``inplace=True`` runs the op in place with
PyTorch's semantics (the tensor takes the op's grad_fn).
"""

from __future__ import annotations

import warnings

import retrograd as torch
from retrograd import Tensor

from ...ops import nn_activation as _A
from ...ops._autocast import lower_precision
from ...ops.fused import fused
from ...ops.inplace import apply_inplace

__all__ = [
    "threshold", "threshold_", "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu",
    "elu_", "selu", "selu_", "celu", "celu_", "gelu", "silu", "mish", "softplus", "softsign",
    "tanh", "sigmoid", "hardtanh", "hardtanh_", "hardsigmoid", "hardswish", "logsigmoid",
    "prelu", "rrelu", "rrelu_", "hardshrink", "softshrink", "tanhshrink", "softmax",
    "log_softmax", "softmin", "glu",
]


def _maybe_inplace(inplace: bool, fn, input: Tensor, *args) -> Tensor:  # noqa: A002
    if inplace:
        return apply_inplace(input, fn, *args)
    return fn(input, *args)


def _result_inplace(inplace: bool, fn, input: Tensor, *args) -> Tensor:  # noqa: A002
    """In place, ops whose PyTorch in-place form saves the output use their ``result`` node."""
    if inplace:
        return apply_inplace(input, fn, *args, result=True)
    return fn(input, *args)


def threshold(input: Tensor, threshold: float, value: float,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """``x if x > threshold else value``.

    >>> import retrograd as torch
    >>> torch.nn.functional.threshold(torch.tensor([0.5, 2.]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    return _result_inplace(inplace, _A.threshold, input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """In-place :func:`threshold`.

    >>> import retrograd as torch
    >>> torch.nn.functional.threshold_(torch.tensor([0.5, 2.]), 1.0, 0.0)
    tensor([0., 2.])
    """
    return apply_inplace(input, _A.threshold, threshold, value, result=True)


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``max(x, 0)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.relu(torch.tensor([-1., 2.]))
    tensor([0., 2.])
    """
    if inplace:
        return torch.relu_(input)
    return torch.relu(input)


def relu_(input: Tensor) -> Tensor:  # noqa: A002
    """In-place :func:`relu`.

    >>> import retrograd as torch
    >>> torch.nn.functional.relu_(torch.tensor([-1., 2.]))
    tensor([0., 2.])
    """
    return input.relu_()


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,  # noqa: A002
             inplace: bool = False) -> Tensor:
    """``clamp(x, min_val, max_val)``; the gradient is zero outside ``(min_val, max_val)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.hardtanh(torch.tensor([-2., 0.5, 3.]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _maybe_inplace(inplace, _A.hardtanh, input, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:  # noqa: A002
    """In-place :func:`hardtanh`.

    >>> import retrograd as torch
    >>> torch.nn.functional.hardtanh_(torch.tensor([-2., 3.]))
    tensor([-1.,  1.])
    """
    return hardtanh(input, min_val, max_val, True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``min(max(x, 0), 6)`` (a hardtanh, as in PyTorch).

    >>> import retrograd as torch
    >>> torch.nn.functional.relu6(torch.tensor([-1., 7.]))
    tensor([0., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01,  # noqa: A002
               inplace: bool = False) -> Tensor:
    """``x if x > 0 else negative_slope * x``.

    >>> import retrograd as torch
    >>> torch.nn.functional.leaky_relu(torch.tensor([-1., 2.]), 0.1)
    tensor([-0.1000,  2.0000])
    """
    return _result_inplace(inplace, _A.leaky_relu, input, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:  # noqa: A002
    """In-place :func:`leaky_relu`.

    >>> import retrograd as torch
    >>> torch.nn.functional.leaky_relu_(torch.tensor([-1., 2.]), 0.5)
    tensor([-0.5000,  2.0000])
    """
    return apply_inplace(input, _A.leaky_relu, negative_slope, result=True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x if x > 0 else alpha * (exp(x) - 1)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.elu(torch.tensor([0., 1.]))
    tensor([0., 1.])
    """
    return _result_inplace(inplace, _A.elu, input, alpha)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """In-place :func:`elu`.

    >>> import retrograd as torch
    >>> torch.nn.functional.elu_(torch.tensor([0., 1.]))
    tensor([0., 1.])
    """
    return apply_inplace(input, _A.elu, alpha, result=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """Scaled ELU with the self-normalising constants.

    >>> import retrograd as torch
    >>> torch.nn.functional.selu(torch.tensor([0., 1.]))
    tensor([0.0000, 1.0507])
    """
    return _result_inplace(inplace, _A.selu, input)


def selu_(input: Tensor) -> Tensor:  # noqa: A002
    """In-place :func:`selu`.

    >>> import retrograd as torch
    >>> torch.nn.functional.selu_(torch.tensor([0.]))
    tensor([0.])
    """
    return apply_inplace(input, _A.selu, result=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    >>> import retrograd as torch
    >>> torch.nn.functional.celu(torch.tensor([0., 1.]))
    tensor([0., 1.])
    """
    return _result_inplace(inplace, _A.celu, input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """In-place :func:`celu`.

    >>> import retrograd as torch
    >>> torch.nn.functional.celu_(torch.tensor([0.]))
    tensor([0.])
    """
    return apply_inplace(input, _A.celu, alpha, result=True)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """``x * Phi(x)`` (``approximate='tanh'``: the tanh approximation).

    >>> import retrograd as torch
    >>> torch.nn.functional.gelu(torch.tensor([0., 1.]))
    tensor([0.0000, 0.8413])
    """
    return _A.gelu(input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * sigmoid(x)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.silu(torch.tensor([0., 1.]))
    tensor([0.0000, 0.7311])
    """
    return _maybe_inplace(inplace, _A.silu, input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * tanh(softplus(x))``.

    >>> import retrograd as torch
    >>> torch.nn.functional.mish(torch.tensor([0., 1.]))
    tensor([0.0000, 0.8651])
    """
    return _maybe_inplace(inplace, _A.mish, input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """``log(1 + exp(beta * x)) / beta``; linear where ``beta * x > threshold``.

    >>> import retrograd as torch
    >>> torch.nn.functional.softplus(torch.tensor([0.]))
    tensor([0.6931])
    """
    return _A.softplus(input, beta, threshold)


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    """``x / (1 + |x|)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.softsign(torch.tensor([1., -3.]))
    tensor([ 0.5000, -0.7500])
    """
    return input / (input.abs() + 1)


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    """Hyperbolic tangent.

    >>> import retrograd as torch
    >>> torch.nn.functional.tanh(torch.tensor([0.]))
    tensor([0.])
    """
    return input.tanh()


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """Logistic sigmoid.

    >>> import retrograd as torch
    >>> torch.nn.functional.sigmoid(torch.tensor([0.]))
    tensor([0.5000])
    """
    return input.sigmoid()


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``relu6(x + 3) / 6``.

    >>> import retrograd as torch
    >>> torch.nn.functional.hardsigmoid(torch.tensor([0., 3.]))
    tensor([0.5000, 1.0000])
    """
    return _maybe_inplace(inplace, _A.hardsigmoid, input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * relu6(x + 3) / 6``.

    >>> import retrograd as torch
    >>> torch.nn.functional.hardswish(torch.tensor([0., 3.]))
    tensor([0., 3.])
    """
    return _maybe_inplace(inplace, _A.hardswish, input)


def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """``log(sigmoid(x))``, stable for large inputs of either sign.

    >>> import retrograd as torch
    >>> torch.nn.functional.logsigmoid(torch.tensor([0.]))
    tensor([-0.6931])
    """
    return _A.logsigmoid(input)


@lower_precision
def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """``x if x > 0 else weight * x`` with one weight, or one per channel (dim 1).

    >>> import retrograd as torch
    >>> torch.nn.functional.prelu(torch.tensor([-2., 3.]), torch.tensor([0.25]))
    tensor([-0.5000,  3.0000])
    """
    return _A.prelu(input, weight)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
          training: bool = False, inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: slopes drawn from ``U(lower, upper)`` in training, their mean in
    evaluation.

    >>> import retrograd as torch
    >>> torch.nn.functional.rrelu(torch.tensor([-3., 2.]), 0.25, 0.25)
    tensor([-0.7500,  2.0000])
    """
    if not training:
        if inplace:
            return leaky_relu(input, (lower + upper) / 2, inplace)
        # as PyTorch: one RreluWithNoiseBackward0 node (ops/fused.py)
        return fused("RreluWithNoiseBackward0",
                     lambda x: leaky_relu(x, (lower + upper) / 2), input, _lower=lower,
                     _upper=upper, _training=False)
    # as PyTorch's kernel: one float64 uniform slope per non-positive element, in order, between
    # the bounds rounded to the input's computing type (float32 below float64); that kernel is
    # built without fused multiply-adds, so the affine map rounds twice
    negative = input <= 0
    acc = torch.float64 if input.dtype == torch.float64 else torch.float32
    lo, hi = (torch.tensor(v, dtype=acc).item() for v in (lower, upper))
    unit = torch.empty(int(negative.sum()), dtype=torch.float64).uniform_()
    slopes = unit * (hi - lo) + lo
    noise = torch.ones_like(input)
    noise[negative] = slopes.to(input.dtype)
    if inplace:
        return input.mul_(noise)
    return fused("RreluWithNoiseBackward0", lambda x: x * noise, input, _lower=lower,
                 _upper=upper, _training=True, _noise=noise)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
           training: bool = False) -> Tensor:
    """In-place :func:`rrelu`.

    >>> import retrograd as torch
    >>> torch.nn.functional.rrelu_(torch.tensor([-3., 2.]), 0.25, 0.25)
    tensor([-0.7500,  2.0000])
    """
    return rrelu(input, lower, upper, training, True)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """``x where |x| > lambd, else 0``.

    >>> import retrograd as torch
    >>> torch.nn.functional.hardshrink(torch.tensor([0.3, -1.]))
    tensor([ 0., -1.])
    """
    return _A.hardshrink(input, lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    >>> import retrograd as torch
    >>> torch.nn.functional.softshrink(torch.tensor([0.3, -1.]))
    tensor([ 0.0000, -0.5000])
    """
    return _A.softshrink(input, lambd)


def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    """``x - tanh(x)``.

    >>> import retrograd as torch
    >>> torch.nn.functional.tanhshrink(torch.tensor([0.]))
    tensor([0.])
    """
    return input - input.tanh()


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype=None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim``, stable at extreme logits.

    >>> import retrograd as torch
    >>> torch.nn.functional.softmax(torch.tensor([1e4, 0.]), dim=0)
    tensor([1., 0.])
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return _A.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
                dtype=None) -> Tensor:
    """``x - logsumexp(x)`` along ``dim``, stable at extreme logits.

    >>> import retrograd as torch
    >>> torch.nn.functional.log_softmax(torch.tensor([0., 0.]), dim=0)
    tensor([-0.6931, -0.6931])
    """
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _A.log_softmax(input, dim, dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype=None) -> Tensor:
    """``softmax(-x)`` along ``dim``.

    >>> import retrograd as torch
    >>> torch.nn.functional.softmin(torch.tensor([0., 0.]), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return _A.softmax(-input, dim, dtype)


def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """``a * sigmoid(b)`` for the two halves ``a``, ``b`` of ``input`` along ``dim``.

    >>> import retrograd as torch
    >>> torch.nn.functional.glu(torch.tensor([2., 0.]))
    tensor([1.])
    """
    return _A.glu(input, dim)
