"""``torch.distributions.LowRankMultivariateNormal``: a multivariate normal whose covariance
is ``W @ W.T + diag(D)`` for a thin ``cov_factor`` W; log_prob and entropy use the
Woodbury identity and the matrix determinant lemma through the small "capacitance" matrix
``I + W.T D^-1 W``, as torch's.

>>> import retrograd as torch
>>> from retrograd.distributions import LowRankMultivariateNormal
>>> d = LowRankMultivariateNormal(torch.zeros(2), torch.tensor([[1.0], [0.0]]), torch.ones(2))
>>> d.covariance_matrix
tensor([[2., 0.],
        [0., 1.]])
"""

from __future__ import annotations

import math

import retrograd as torch
from retrograd import Tensor

from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _plus_eye(K):
    n = K.shape[-1]
    return K + torch.eye(n, dtype=K.dtype)


def _batch_capacitance_tril(W, D):
    """The Cholesky factor of ``I + W.T @ D^-1 @ W``."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    return torch.linalg.cholesky(_plus_eye(torch.matmul(Wt_Dinv, W)))


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """``log det(W @ W.T + diag(D))`` by the matrix determinant lemma."""
    return (2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
            + D.log().sum(-1))


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """``x.T @ (W @ W.T + diag(D))^-1 @ x`` by the Woodbury identity."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal with covariance ``cov_factor @ cov_factor.T + diag(cov_diag)``.

    >>> import retrograd as torch
    >>> d = LowRankMultivariateNormal(torch.zeros(2), torch.zeros(2, 1), torch.ones(2))
    >>> d.log_prob(torch.zeros(2))
    tensor(-1.8379)
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = torch.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = torch.Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self) -> Tensor:
        sqrt_d = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / sqrt_d
        K = _plus_eye(torch.matmul(Dinvsqrt_W, Dinvsqrt_W.mT))
        return (sqrt_d * torch.linalg.cholesky(K)).expand(self._full())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        W = self._unbroadcasted_cov_factor
        cov = torch.matmul(W, W.mT) + torch.diag_embed(self._unbroadcasted_cov_diag)
        return cov.expand(self._full())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = torch.linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        prec = torch.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - A.mT @ A
        return prec.expand(self._full())

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        W_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        eps_W = _standard_normal(W_shape, dtype=self.loc.dtype)
        eps_D = _standard_normal(shape, dtype=self.loc.dtype)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def _logdet(self) -> Tensor:
        return _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                     self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                       self._unbroadcasted_cov_diag, value - self.loc,
                                       self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._logdet() + M)

    def entropy(self) -> Tensor:
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._logdet())
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
