"""Flatten parameters into one vector and back: ``parameters_to_vector``, ``vector_to_parameters``.
"""

from __future__ import annotations

import retrograd as torch
from retrograd import Tensor

from ..module import typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters) -> Tensor:
    """Concatenate the flattened parameters into one 1-D tensor (differentiable).

    >>> import retrograd as torch
    >>> torch.nn.utils.parameters_to_vector([torch.ones(2, 2), torch.zeros(1)])
    tensor([1., 1., 1., 1., 0.])
    """
    return torch.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Copy consecutive slices of ``vec`` into the parameters' data (in order, by size).

    >>> import retrograd as torch
    >>> lin = torch.nn.Linear(2, 1)
    >>> torch.nn.utils.vector_to_parameters(torch.arange(3.0), lin.parameters())
    >>> lin.weight.data, lin.bias.data
    (tensor([[0., 1.]]), tensor([2.]))
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    offset = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[offset:offset + n].view_as(p).data
        offset += n
