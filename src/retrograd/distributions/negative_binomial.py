"""The negative binomial distribution, ``torch.distributions.NegativeBinomial``: the number of
successes before ``total_count`` failures; sampled as PyTorch does, a Poisson draw whose rate
is a gamma draw, so the same seed gives PyTorch's samples.

>>> import retrograd as torch
>>> from retrograd.distributions import NegativeBinomial
>>> NegativeBinomial(torch.tensor([3.0]), torch.tensor([0.5])).mean
tensor([3.])
"""

from __future__ import annotations

import retrograd as torch
import retrograd.nn.functional as F
from retrograd import Tensor

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import (
    expand_probs_logits,
    init_count_and_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """Counts of successes (probability ``probs`` each) before ``total_count`` failures.

    >>> import retrograd as torch
    >>> NegativeBinomial(torch.tensor([2.0]), logits=torch.tensor([0.0])).variance
    tensor([4.])
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None,
                 validate_args: bool | None = None) -> None:
        init_count_and_probs(self, total_count, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = torch.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        expand_probs_logits(self, new, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self) -> Tensor:
        return self.total_count * torch.exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / torch.sigmoid(-self.logits)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @lazy_property
    def _gamma(self) -> Gamma:
        # not validated: total_count may be zero
        return Gamma(concentration=self.total_count, rate=torch.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=()) -> Tensor:
        with torch.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return torch.poisson(rate)

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = (self.total_count * F.logsigmoid(-self.logits)
                            + value * F.logsigmoid(self.logits))
        log_normalization = (-torch.lgamma(self.total_count + value) + torch.lgamma(1.0 + value)
                             + torch.lgamma(self.total_count))
        # total_count == 0 and value == 0 has probability 1, but lgamma(0) is infinite
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
