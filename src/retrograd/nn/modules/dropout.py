"""nn modules: dropout (Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout,
FeatureAlphaDropout)."""

from __future__ import annotations

from retrograd import Tensor

from .. import functional as F
from ..module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """In training, zero elements with probability ``p`` and scale the rest by ``1/(1-p)``.

    >>> import retrograd as torch
    >>> d = torch.nn.Dropout(0.2)
    >>> d
    Dropout(p=0.2, inplace=False)
    >>> d.eval()(torch.ones(2))
    tensor([1., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """In training, zero whole channels of (N, C, L) or (C, L) input with probability ``p``.

    >>> import retrograd as torch
    >>> torch.nn.Dropout1d()
    Dropout1d(p=0.5, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """In training, zero whole channels of (N, C, H, W) input with probability ``p``.

    >>> import retrograd as torch
    >>> torch.nn.Dropout2d(0.1)
    Dropout2d(p=0.1, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """In training, zero whole channels of (N, C, D, H, W) input with probability ``p``.

    >>> import retrograd as torch
    >>> torch.nn.Dropout3d()
    Dropout3d(p=0.5, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout for SELU networks: keeps zero mean and unit variance.

    >>> import retrograd as torch
    >>> torch.nn.AlphaDropout(0.1)
    AlphaDropout(p=0.1, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels (dim 1), for SELU networks.

    >>> import retrograd as torch
    >>> torch.nn.FeatureAlphaDropout(0.2)
    FeatureAlphaDropout(p=0.2, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.feature_alpha_dropout(input, self.p, self.training)
