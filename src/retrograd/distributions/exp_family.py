"""``torch.distributions.ExponentialFamily``: the base of distributions whose density is
``exp(<t(x), theta> - F(theta) + k(x))``; given natural parameters ``theta`` and the log
normalizer ``F``, the entropy (and a same-family KL) follow from ``grad F`` (Bregman
divergence), computed with retrograd's own autograd.

>>> from retrograd.distributions import ExponentialFamily, Normal
>>> issubclass(Normal, ExponentialFamily)
True
"""

from __future__ import annotations

import retrograd as torch
from retrograd import Tensor

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """An exponential-family distribution: subclasses give ``_natural_params``,
    ``_log_normalizer(*params)`` and ``_mean_carrier_measure``.

    >>> import retrograd as torch
    >>> from retrograd.distributions import Exponential
    >>> ExponentialFamily.entropy(Exponential(torch.tensor([2.0])))
    tensor([0.3069], grad_fn=<SubBackward0>)
    """

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy from the Bregman divergence of the log normalizer."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        grads = torch.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for p, g in zip(nparams, grads):
            result = result - (p * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
