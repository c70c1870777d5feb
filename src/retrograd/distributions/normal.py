"""The normal (Gaussian) distribution, ``torch.distributions.Normal``: samples drawn as torch
draws them (``torch.normal`` for ``sample``, a standard normal times ``scale`` plus ``loc``
for ``rsample``), so the same seed gives the same numbers.

>>> import retrograd as torch
>>> from retrograd.distributions import Normal
>>> Normal(0.0, 1.0).log_prob(torch.tensor(0.0))
tensor(-0.9189)
"""

from __future__ import annotations

import math
from numbers import Number, Real

import retrograd as torch
from retrograd import Tensor

from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import _standard_normal, broadcast_all

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    """A normal distribution with mean ``loc`` and standard deviation ``scale``.

    >>> import retrograd as torch
    >>> _ = torch.manual_seed(0)
    >>> Normal(torch.tensor([0.0]), torch.tensor([1.0])).sample()
    tensor([1.5410])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, Number) and isinstance(scale, Number):
            batch_shape = torch.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Normal, _instance)
        batch_shape = torch.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return (-((value - self.loc) ** 2) / (2 * var) - log_scale
                - math.log(math.sqrt(2 * math.pi)))

    def cdf(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + torch.erf((value - self.loc) * self.scale.reciprocal()
                                    / math.sqrt(2)))

    def icdf(self, value) -> Tensor:
        return self.loc + self.scale * torch.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + torch.log(self.scale)

    @property
    def _natural_params(self) -> tuple:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y) -> Tensor:
        return -0.25 * x.pow(2) / y + 0.5 * torch.log(-math.pi / y)
