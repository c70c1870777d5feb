"""Helpers the distributions share, as ``torch.distributions.utils``: broadcasting parameters
to one shape, probabilities <-> logits, and ``lazy_property`` (a parameter computed from the
other one on first read, e.g. a Categorical given probs computes its logits when asked).

>>> import retrograd as torch
>>> from retrograd.distributions.utils import broadcast_all
>>> [tuple(t.shape) for t in broadcast_all(torch.zeros(2, 1), 3.0)]
[(2, 1), (2, 1)]
"""

from __future__ import annotations

from numbers import Number

import retrograd as torch
import retrograd.nn.functional as F
from retrograd import Tensor

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits",
           "lazy_property", "euler_constant", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni


def broadcast_all(*values) -> tuple:
    """Broadcasts tensors and numbers to one shape; numbers become tensors of the first
    tensor's dtype (the default dtype when all are numbers).

    >>> import retrograd as torch
    >>> broadcast_all(1.0, torch.tensor([1.0, 2.0]))[0]
    tensor([1., 1.])
    """
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        dtype = next((v.dtype for v in values if isinstance(v, Tensor)),
                     torch.get_default_dtype())
        values = [v if isinstance(v, Tensor) else torch.tensor(v, dtype=dtype) for v in values]
    return torch.broadcast_tensors(*values)


def _standard_normal(shape, dtype) -> Tensor:
    """Standard normal draws filled as torch's ``empty(shape).normal_()`` (its stream)."""
    return torch.empty(shape, dtype=dtype).normal_()


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sums the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def expand_probs_logits(self, new, shape) -> None:
    """Give ``new``, an expanded copy of ``self``, whichever of ``probs`` and ``logits`` ``self``
    holds (both, once the other was derived), expanded to ``shape``; the last one set is its
    ``_param``."""
    for name in ("probs", "logits"):
        if name in self.__dict__:
            value = getattr(self, name).expand(shape)
            setattr(new, name, value)
            new._param = value


def init_count_and_probs(self, total_count, probs, logits) -> None:
    """``total_count`` and ``probs`` or ``logits`` (exactly one), broadcast together, the count in
    the parameter's dtype: Binomial's and NegativeBinomial's parameters."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    name, value = ("probs", probs) if probs is not None else ("logits", logits)
    total_count, value = broadcast_all(total_count, value)
    self.total_count = total_count.type_as(value)
    setattr(self, name, value)
    self._param = value


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits: a sigmoid when binary, else a softmax over the last dim.

    >>> import retrograd as torch
    >>> logits_to_probs(torch.tensor([0.0, 0.0]))
    tensor([0.5000, 0.5000])
    """
    if is_binary:
        return torch.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Clamps probabilities into [eps, 1 - eps] of their dtype (finite logits).

    >>> import retrograd as torch
    >>> clamp_probs(torch.tensor([0.0, 1.0], dtype=torch.float64)).tolist()
    [2.220446049250313e-16, 0.9999999999999998]
    """
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from probabilities (clamped first): log-odds when binary, else log-probs.

    >>> import retrograd as torch
    >>> probs_to_logits(torch.tensor([0.5]), is_binary=True)
    tensor([0.])
    """
    ps = clamp_probs(probs)
    if is_binary:
        return torch.log(ps) - torch.log1p(-ps)
    return torch.log(ps)


class lazy_property:  # noqa: N801 (torch's name)
    """A property computed once on first read and then stored on the instance (so it is a
    plain attribute afterwards). It computes with grad enabled, as torch's, so that a value
    first read under ``no_grad`` still carries its graph."""

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with torch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower-triangular entries (below diagonal ``diag``) of a batch of square matrices,
    row by row.

    >>> import retrograd as torch
    >>> tril_matrix_to_vec(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([1., 3., 4.])
    """
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    arange = torch.arange(n)
    return mat[..., arange < arange.view(-1, 1) + (diag + 1)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of ``tril_matrix_to_vec``: a batch of lower-triangular matrices.

    >>> import retrograd as torch
    >>> vec_to_tril_matrix(torch.tensor([1.0, 3.0, 4.0]))
    tensor([[1., 0.],
            [3., 4.]])
    """
    # the positive root of D**2 + (1 + 2 diag) D - |diag| (diag + 1) - 2 len = 0
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1]
                            + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > torch.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    arange = torch.arange(n)
    mat[..., arange < arange.view(-1, 1) + (diag + 1)] = vec
    return mat
