"""The Laplace distribution, ``torch.distributions.Laplace``: ``rsample`` inverts the CDF at
torch's ``uniform_(eps - 1, 1)`` draws (same numbers under the same seed).

>>> import retrograd as torch
>>> from retrograd.distributions import Laplace
>>> Laplace(0.0, 1.0).log_prob(torch.tensor(0.0))
tensor(-0.6931)
"""

from __future__ import annotations

from numbers import Number

import retrograd as torch
from retrograd import Tensor

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """A Laplace distribution with location ``loc`` and scale ``scale``.

    >>> Laplace(0.0, 2.0).variance
    tensor(8.)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2**0.5) * self.scale

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, Number) and isinstance(scale, Number):
            batch_shape = torch.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Laplace, _instance)
        batch_shape = torch.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = torch.finfo(self.loc.dtype).eps
        u = self.loc.new(shape).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * torch.log1p(-u.abs())

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -torch.log(2 * self.scale) - torch.abs(value - self.loc) / self.scale

    def cdf(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * torch.expm1(-d.abs() / self.scale)

    def icdf(self, value) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * torch.log1p(-2 * term.abs())

    def entropy(self) -> Tensor:
        return 1 + torch.log(2 * self.scale)
