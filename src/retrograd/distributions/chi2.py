"""The chi-squared distribution, ``torch.distributions.Chi2``: ``Gamma(df / 2, 1 / 2)``.

>>> import retrograd as torch
>>> from retrograd.distributions import Chi2
>>> Chi2(torch.tensor([2.0])).mean
tensor([2.])
"""

from __future__ import annotations

from retrograd import Tensor

from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """A chi-squared distribution with ``df`` degrees of freedom: ``Gamma(df / 2, 1 / 2)``.

    >>> import retrograd as torch
    >>> Chi2(torch.tensor([3.0])).variance
    tensor([6.])
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2
