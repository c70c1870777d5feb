"""``Linear`` (``y = x @ W.T + b``), ``Bilinear`` and ``Identity``."""

from __future__ import annotations

import math

import retrograd as torch
from retrograd import Tensor

from .. import init
from ..functional.misc import bilinear as _bilinear
from ..functional.misc import linear as _linear
from ..module import Module
from ..parameter import Parameter

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """Returns its input unchanged; any constructor arguments are ignored.

    >>> import retrograd as torch
    >>> torch.nn.Identity(54, unused="x")(torch.tensor([1.0]))
    tensor([1.])
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input


class Linear(Module):
    """Applies ``x @ weight.T + bias``; weight and bias start as in PyTorch.

    The weight is ``kaiming_uniform_(a=sqrt(5))``, i.e. ``U(-1/sqrt(in), 1/sqrt(in))``, and so is
    the bias.

    >>> import retrograd as torch
    >>> fc = torch.nn.Linear(3, 2)
    >>> fc
    Linear(in_features=3, out_features=2, bias=True)
    >>> fc(torch.ones(4, 3)).shape
    retrograd.Size([4, 2])
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        if device is not None:
            torch.device(device)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(torch.empty((out_features, in_features), dtype=dtype))
        if bias:
            self.bias = Parameter(torch.empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw weight and bias from PyTorch's default distributions."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """Applies ``x1^T A x2 + b`` with ``weight`` of shape (out, in1, in2).

    Weight and bias start as ``U(-1/sqrt(in1), 1/sqrt(in1))``, as in PyTorch.

    >>> import retrograd as torch
    >>> m = torch.nn.Bilinear(2, 3, 4)
    >>> m
    Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)
    >>> m(torch.ones(5, 2), torch.ones(5, 3)).shape
    retrograd.Size([5, 4])
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        if device is not None:
            torch.device(device)
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(torch.empty((out_features, in1_features, in2_features),
                                            dtype=dtype))
        if bias:
            self.bias = Parameter(torch.empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw weight and bias from ``U(-1/sqrt(in1), 1/sqrt(in1))``."""
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return _bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
