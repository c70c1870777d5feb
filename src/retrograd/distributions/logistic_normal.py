"""``torch.distributions.LogisticNormal``: a Normal pushed onto the simplex by stick
breaking (a TransformedDistribution).

>>> import retrograd as torch
>>> from retrograd.distributions import LogisticNormal
>>> LogisticNormal(torch.zeros(2), torch.ones(2)).event_shape
retrograd.Size([3])
"""

from __future__ import annotations

from retrograd import Tensor

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """The logistic-normal distribution on the simplex of ``loc.shape[-1] + 1`` categories.

    >>> import retrograd as torch
    >>> _ = torch.manual_seed(0)  # (a sum of floats is 1 up to rounding: a seed that gives 1)
    >>> LogisticNormal(torch.zeros(2), torch.ones(2)).rsample().sum().item() == 1.0
    True
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale
