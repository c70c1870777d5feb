"""The exponential distribution, ``torch.distributions.Exponential``: ``rsample`` divides
torch's ``exponential_()`` draws by ``rate`` (same numbers under the same seed).

>>> import retrograd as torch
>>> from retrograd.distributions import Exponential
>>> Exponential(torch.tensor([2.0])).log_prob(torch.tensor([1.0]))
tensor([-1.3069])
"""

from __future__ import annotations

from numbers import Number

import retrograd as torch
from retrograd import Tensor

from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """An exponential distribution with rate ``rate`` (mean ``1 / rate``).

    >>> import retrograd as torch
    >>> Exponential(torch.tensor([4.0])).mean
    tensor([0.2500])
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return torch.zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = torch.Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Exponential, _instance)
        batch_shape = torch.Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return self.rate.new(shape).exponential_() / self.rate

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - torch.exp(-self.rate * value)

    def icdf(self, value) -> Tensor:
        return -torch.log1p(-value) / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - torch.log(self.rate)

    @property
    def _natural_params(self) -> tuple:
        return (-self.rate,)

    def _log_normalizer(self, x) -> Tensor:
        return -torch.log(-x)
