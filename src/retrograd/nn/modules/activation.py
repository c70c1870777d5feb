"""Activation modules: thin ``Module`` wrappers over ``nn.functional``, with PyTorch's
constructor signatures and reprs."""

from __future__ import annotations

import warnings

import retrograd as torch
from retrograd import Tensor

from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter

__all__ = [
    "Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU",
    "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU",
    "LogSigmoid", "Softplus", "Softshrink", "PReLU", "Softsign", "Tanhshrink", "Softmin",
    "Softmax", "Softmax2d", "LogSoftmax",
]


def _inplace_repr(inplace: bool) -> str:
    return "inplace=True" if inplace else ""


class Threshold(Module):
    """``x if x > threshold else value``.

    >>> import retrograd as torch
    >>> torch.nn.Threshold(0.1, 20)
    Threshold(threshold=0.1, value=20)
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace_str}"


class ReLU(Module):
    """``max(x, 0)``.

    >>> import retrograd as torch
    >>> torch.nn.ReLU()(torch.tensor([-1., 2.]))
    tensor([0., 2.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class RReLU(Module):
    """Randomized leaky ReLU (random slopes in training, their mean in evaluation).

    >>> import retrograd as torch
    >>> torch.nn.RReLU(0.1, 0.3)
    RReLU(lower=0.1, upper=0.3)
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace_str}"


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)``.

    >>> import retrograd as torch
    >>> torch.nn.Hardtanh(-2, 3)
    Hardtanh(min_val=-2, max_val=3)
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and rename to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and rename to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if not self.max_val > self.min_val:
            raise AssertionError

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace_str}"


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``.

    >>> import retrograd as torch
    >>> torch.nn.ReLU6()(torch.tensor([-1., 7.]))
    tensor([0., 6.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class _NoArgs(Module):
    """An activation without options (PyTorch's accept and ignore any arguments)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()


class Sigmoid(_NoArgs):
    """Logistic sigmoid.

    >>> import retrograd as torch
    >>> torch.nn.Sigmoid()(torch.tensor([0.]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return torch.sigmoid(input)


class Tanh(_NoArgs):
    """Hyperbolic tangent.

    >>> import retrograd as torch
    >>> torch.nn.Tanh()(torch.tensor([0.]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return torch.tanh(input)


class _InplaceOnly(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Hardsigmoid(_InplaceOnly):
    """``relu6(x + 3) / 6``.

    >>> import retrograd as torch
    >>> torch.nn.Hardsigmoid()(torch.tensor([0.]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class Hardswish(_InplaceOnly):
    """``x * relu6(x + 3) / 6``.

    >>> import retrograd as torch
    >>> torch.nn.Hardswish()(torch.tensor([3.]))
    tensor([3.])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardswish(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class SiLU(_InplaceOnly):
    """``x * sigmoid(x)``.

    >>> import retrograd as torch
    >>> torch.nn.SiLU()(torch.tensor([0.]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.silu(input, inplace=self.inplace)


class Mish(_InplaceOnly):
    """``x * tanh(softplus(x))``.

    >>> import retrograd as torch
    >>> torch.nn.Mish()(torch.tensor([0.]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.mish(input, inplace=self.inplace)


class SELU(_InplaceOnly):
    """Scaled ELU.

    >>> import retrograd as torch
    >>> torch.nn.SELU()(torch.tensor([0.]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.selu(input, self.inplace)


class ELU(Module):
    """``x if x > 0 else alpha * (exp(x) - 1)``.

    >>> import retrograd as torch
    >>> torch.nn.ELU(alpha=0.5)
    ELU(alpha=0.5)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace_str}"


class CELU(ELU):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    >>> import retrograd as torch
    >>> torch.nn.CELU()
    CELU(alpha=1.0)
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.celu(input, self.alpha, self.inplace)


class GLU(Module):
    """``a * sigmoid(b)`` for the halves of the input along ``dim``.

    >>> import retrograd as torch
    >>> torch.nn.GLU()
    GLU(dim=-1)
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GELU(Module):
    """``x * Phi(x)``, or its tanh approximation.

    >>> import retrograd as torch
    >>> torch.nn.GELU(approximate='tanh')
    GELU(approximate='tanh')
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    """``x where |x| > lambd, else 0``.

    >>> import retrograd as torch
    >>> torch.nn.Hardshrink()
    Hardshrink(0.5)
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """Soft shrinkage towards zero by ``lambd``.

    >>> import retrograd as torch
    >>> torch.nn.Softshrink()
    Softshrink(0.5)
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softshrink(input, self.lambd)


class LeakyReLU(Module):
    """``x if x > 0 else negative_slope * x``.

    >>> import retrograd as torch
    >>> torch.nn.LeakyReLU(0.2, inplace=True)
    LeakyReLU(negative_slope=0.2, inplace=True)
    """

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace_str}"


class LogSigmoid(_NoArgs):
    """``log(sigmoid(x))``.

    >>> import retrograd as torch
    >>> torch.nn.LogSigmoid()(torch.tensor([0.]))
    tensor([-0.6931])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.logsigmoid(input)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``.

    >>> import retrograd as torch
    >>> torch.nn.Softplus()
    Softplus(beta=1.0, threshold=20.0)
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    """``x if x > 0 else a * x`` with learnable ``a`` (one, or one per channel).

    >>> import retrograd as torch
    >>> torch.nn.PReLU(3)
    PReLU(num_parameters=3)
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None,
                 dtype=None) -> None:
        if device is not None:
            torch.device(device)
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(torch.empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Fill the weight with ``init``."""
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softsign(_NoArgs):
    """``x / (1 + |x|)``.

    >>> import retrograd as torch
    >>> torch.nn.Softsign()(torch.tensor([1.]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softsign(input)


class Tanhshrink(_NoArgs):
    """``x - tanh(x)``.

    >>> import retrograd as torch
    >>> torch.nn.Tanhshrink()(torch.tensor([0.]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.tanhshrink(input)


class _DimModule(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(_DimModule):
    """``softmax(-x)`` along ``dim``.

    >>> import retrograd as torch
    >>> torch.nn.Softmin(dim=0)(torch.tensor([0., 0.]))
    tensor([0.5000, 0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softmin(input, self.dim, _stacklevel=5)


class Softmax(_DimModule):
    """``exp(x) / sum(exp(x))`` along ``dim``.

    >>> import retrograd as torch
    >>> torch.nn.Softmax(dim=1)
    Softmax(dim=1)
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softmax(input, self.dim, _stacklevel=5)


class Softmax2d(_NoArgs):
    """Softmax over the channels of a (C, H, W) or (N, C, H, W) input.

    >>> import retrograd as torch
    >>> torch.nn.Softmax2d()(torch.zeros(1, 2, 1, 1)).flatten()
    tensor([0.5000, 0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.dim() not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)


class LogSoftmax(_DimModule):
    """``x - logsumexp(x)`` along ``dim``.

    >>> import retrograd as torch
    >>> torch.nn.LogSoftmax(dim=-1)
    LogSoftmax(dim=-1)
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.log_softmax(input, self.dim, _stacklevel=5)
