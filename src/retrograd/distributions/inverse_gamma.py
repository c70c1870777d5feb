"""The inverse gamma distribution, ``torch.distributions.InverseGamma``: the reciprocal of a
``Gamma`` variable (a ``PowerTransform(-1)`` of it), sampled through the gamma sampler.

>>> import retrograd as torch
>>> from retrograd.distributions import InverseGamma
>>> InverseGamma(torch.tensor([2.0]), torch.tensor([1.0])).mode
tensor([0.3333])
"""

from __future__ import annotations

import retrograd as torch
from retrograd import Tensor

from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """The reciprocal of a ``Gamma(concentration, rate)`` variable.

    >>> import retrograd as torch
    >>> InverseGamma(torch.tensor([3.0]), torch.tensor([2.0])).mean
    tensor([1.])
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self) -> Tensor:
        return self.base_dist.concentration

    @property
    def rate(self) -> Tensor:
        return self.base_dist.rate

    @property
    def mean(self) -> Tensor:
        result = self.rate / (self.concentration - 1)
        return torch.where(self.concentration > 1, result, torch.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        result = self.rate.square() / ((self.concentration - 1).square()
                                       * (self.concentration - 2))
        return torch.where(self.concentration > 2, result, torch.inf)

    def entropy(self) -> Tensor:
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()
