"""Padding layers: ``ZeroPad``, ``ConstantPad``, ``ReflectionPad``, ``ReplicationPad`` and
``CircularPad`` in 1, 2 and 3 dims, each a thin module over ``nn.functional.pad``.

``padding`` is an int (the same amount on every side) or a tuple ``(left, right, top, bottom,
front, back)`` cut to the layer's dims; reprs and attributes are PyTorch's.
"""

from __future__ import annotations

from retrograd import Tensor

from .. import functional as F
from ..module import Module

__all__ = [
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
]


def _sides(padding, nd: int) -> tuple:
    """An int as the same amount on all ``2 * nd`` sides; a sequence as a tuple."""
    if isinstance(padding, (list, tuple)):
        return tuple(padding)
    return (padding,) * (2 * nd)


class _PadNd(Module):
    _nd = 1
    _mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _sides(padding, self._nd)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``.

    >>> import retrograd as torch
    >>> torch.nn.ConstantPad1d((1, 2), 3.5)(torch.zeros(1, 2))
    tensor([[3.5000, 0.0000, 0.0000, 3.5000, 3.5000]])
    """


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dims with ``value``.

    >>> import retrograd as torch
    >>> torch.nn.ConstantPad2d(1, 2.0)(torch.zeros(1, 1, 1))
    tensor([[[2., 2., 2.],
             [2., 0., 2.],
             [2., 2., 2.]]])
    """

    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dims with ``value``.

    >>> import retrograd as torch
    >>> torch.nn.ConstantPad3d(1, 0.5)(torch.zeros(1, 1, 1, 1)).shape
    retrograd.Size([1, 3, 3, 3])
    """

    _nd = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pads the last dim with zeros.

    >>> import retrograd as torch
    >>> torch.nn.ZeroPad1d((1, 0))(torch.ones(1, 2))
    tensor([[0., 1., 1.]])
    """


class ZeroPad2d(_ZeroPadNd):
    """Pads the last two dims with zeros.

    >>> import retrograd as torch
    >>> torch.nn.ZeroPad2d((1, 1, 0, 1))(torch.ones(1, 1, 1))
    tensor([[[0., 1., 0.],
             [0., 0., 0.]]])
    """

    _nd = 2


class ZeroPad3d(_ZeroPadNd):
    """Pads the last three dims with zeros.

    >>> import retrograd as torch
    >>> torch.nn.ZeroPad3d(1)(torch.ones(1, 1, 1, 1)).sum()
    tensor(1.)
    """

    _nd = 3


class ReflectionPad1d(_PadNd):
    """Pads the last dim with its reflection (the edge itself is not repeated).

    >>> import retrograd as torch
    >>> torch.nn.ReflectionPad1d(2)(torch.tensor([[0., 1., 2., 3.]]))
    tensor([[2., 1., 0., 1., 2., 3., 2., 1.]])
    """

    _mode = "reflect"


class ReflectionPad2d(ReflectionPad1d):
    """Pads the last two dims with their reflection.

    >>> import retrograd as torch
    >>> torch.nn.ReflectionPad2d(1)(torch.arange(4.).reshape(1, 2, 2))[0, 0]
    tensor([3., 2., 3., 2.])
    """

    _nd = 2


class ReflectionPad3d(ReflectionPad1d):
    """Pads the last three dims with their reflection.

    >>> import retrograd as torch
    >>> torch.nn.ReflectionPad3d(1)(torch.ones(1, 2, 2, 2)).shape
    retrograd.Size([1, 4, 4, 4])
    """

    _nd = 3


class ReplicationPad1d(_PadNd):
    """Pads the last dim by repeating its edge values.

    >>> import retrograd as torch
    >>> torch.nn.ReplicationPad1d((2, 1))(torch.tensor([[1., 2.]]))
    tensor([[1., 1., 1., 2., 2.]])
    """

    _mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    """Pads the last two dims by repeating their edge values.

    >>> import retrograd as torch
    >>> torch.nn.ReplicationPad2d(1)(torch.tensor([[[1., 2.]]]))
    tensor([[[1., 1., 2., 2.],
             [1., 1., 2., 2.],
             [1., 1., 2., 2.]]])
    """

    _nd = 2


class ReplicationPad3d(ReplicationPad1d):
    """Pads the last three dims by repeating their edge values.

    >>> import retrograd as torch
    >>> torch.nn.ReplicationPad3d(1)(torch.ones(1, 1, 1, 1)).shape
    retrograd.Size([1, 3, 3, 3])
    """

    _nd = 3


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        n = self._nd
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pads the last dim by wrapping around (the end continues from the start).

    >>> import retrograd as torch
    >>> torch.nn.CircularPad1d(1)(torch.tensor([[1., 2., 3.]]))
    tensor([[3., 1., 2., 3., 1.]])
    """


class CircularPad2d(_CircularPadNd):
    """Pads the last two dims by wrapping around.

    >>> import retrograd as torch
    >>> torch.nn.CircularPad2d((1, 0, 0, 1))(torch.tensor([[[1., 2.]]]))
    tensor([[[2., 1., 2.],
             [2., 1., 2.]]])
    """

    _nd = 2


class CircularPad3d(_CircularPadNd):
    """Pads the last three dims by wrapping around.

    >>> import retrograd as torch
    >>> torch.nn.CircularPad3d(1)(torch.ones(1, 1, 2, 2, 2)).shape
    retrograd.Size([1, 1, 4, 4, 4])
    """

    _nd = 3
