"""The Cauchy distribution, ``torch.distributions.Cauchy``: ``rsample`` scales and shifts
torch's ``cauchy_()`` draws (same numbers under the same seed).

>>> import retrograd as torch
>>> from retrograd.distributions import Cauchy
>>> Cauchy(0.0, 1.0).cdf(torch.tensor(0.0))
tensor(0.5000)
"""

from __future__ import annotations

import math
from numbers import Number

import retrograd as torch
from retrograd import Tensor

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """A Cauchy (Lorentz) distribution with median ``loc`` and half width ``scale``.

    >>> Cauchy(0.0, 1.0).entropy()
    tensor(2.5310)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, Number) and isinstance(scale, Number):
            batch_shape = torch.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Cauchy, _instance)
        batch_shape = torch.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return torch.full(self._extended_shape(), float("nan"), dtype=self.loc.dtype)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return torch.full(self._extended_shape(), float("inf"), dtype=self.loc.dtype)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return self.loc + self.loc.new(shape).cauchy_() * self.scale

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return torch.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value) -> Tensor:
        return torch.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()
