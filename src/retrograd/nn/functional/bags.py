"""Bags of embeddings, pairwise distances within a batch, and Gumbel-softmax sampling:
``embedding_bag``, ``pdist`` and ``gumbel_softmax`` of ``nn.functional``.

Composites, each recorded as one node with the name of PyTorch's kernel (``EmbeddingBagBackward0``,
``PdistBackward0``; see ``ops/fused.py``): a bag reduction is a matrix product with the bag
membership (sum, mean) or a per-bag ``max``.
"""

from __future__ import annotations

import warnings

import numpy as np

import retrograd as torch
from retrograd import Tensor

from ...ops._autocast import outside
from ...ops.fused import fused
from .misc import embedding

__all__ = ["embedding_bag", "pdist", "gumbel_softmax"]


@outside  # one kernel in PyTorch, off autocast's lists
def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,  # noqa: A002
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sums, averages or takes the maximum of the embeddings in each bag: bags are the rows of
    a 2-D ``input``, or the slices of a 1-D ``input`` starting at ``offsets``.

    >>> import retrograd as torch
    >>> w = torch.arange(6.).reshape(3, 2)
    >>> torch.nn.functional.embedding_bag(torch.tensor([0, 2, 1]), w, torch.tensor([0, 2]))
    tensor([[2., 3.],
            [2., 3.]])
    """
    if weight.dtype == torch.int64 and input.is_floating_point():
        input, weight = weight, input  # noqa: A001 - PyTorch's legacy argument order
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {type(offsets)}")
        b, length = input.shape
        starts = np.arange(b) * length
        flat = input.reshape(-1)
        psw = None if per_sample_weights is None else per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = offsets.numpy().astype(np.int64)
        if include_last_offset:
            starts = starts[:-1]
        flat, psw = input, per_sample_weights
        if starts.size and starts[0] != 0:
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                               f"mini-batch has to start from position 0. However, got "
                               f"{starts[0]}")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        embedding(flat, weight, max_norm=max_norm, norm_type=norm_type)  # renormalise rows
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if sparse:
        raise NotImplementedError("retrograd has no sparse tensors: embedding_bag(sparse=True) "
                                  "is not supported")
    idx = flat.numpy().astype(np.int64)
    n = idx.size
    # The last bag runs to the end of the input (with include_last_offset too, as PyTorch's).
    ends = np.append(starts[1:], n) if starts.size else starts
    keep = np.ones(n, bool) if padding_idx is None else \
        idx != (padding_idx % weight.shape[0])
    b = starts.size
    if mode == "max":
        sels = [np.nonzero(keep[starts[k]:ends[k]])[0] + starts[k] for k in range(b)]
    else:
        member = np.zeros((b, n))
        for k in range(b):
            member[k, starts[k]:ends[k]] = keep[starts[k]:ends[k]]
        if mode == "mean":
            member = member / np.maximum(member.sum(1, keepdims=True), 1)
        member = torch.tensor(member, dtype=weight.dtype)

    def bags(weight: Tensor, psw: Tensor | None) -> Tensor:
        rows = embedding(flat, weight, scale_grad_by_freq=scale_grad_by_freq)
        if psw is not None:
            rows = rows * psw.unsqueeze(1)
        if mode != "max":
            return member.matmul(rows)
        outs = [rows[torch.tensor(sel)].max(0)[0] if sel.size
                else torch.zeros(weight.shape[1], dtype=weight.dtype) for sel in sels]
        return torch.stack(outs, 0) if outs else torch.zeros(0, weight.shape[1],
                                                             dtype=weight.dtype)

    return fused("EmbeddingBagBackward0", bags, weight, psw, _indices=flat,
                 _offsets=torch.tensor(starts), _mode=("sum", "mean", "max").index(mode),
                 _padding_idx=-1 if padding_idx is None else padding_idx,
                 _scale_grad_by_freq=scale_grad_by_freq, _sparse=sparse,
                 _packs=("=indices", "=offsets", 1, "=weight", "=result1", "=result2",
                         "=result3"))


def pdist(input: Tensor, p: float = 2) -> Tensor:  # noqa: A002
    """The p-norm distance between every pair of rows ``i < j`` of ``input`` ``(N, M)``, in
    row-major order of the pairs (``N (N - 1) / 2`` values).

    >>> import retrograd as torch
    >>> torch.nn.functional.pdist(torch.tensor([[0., 0.], [3., 4.], [0., 1.]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if input.dtype in (torch.float16, torch.bfloat16):  # PyTorch has no kernel for them
        raise NotImplementedError(f"\"pdist\" not implemented for '{input.dtype.scalar_name}'")
    i, j = (torch.tensor(v) for v in np.triu_indices(input.shape[0], 1))
    return fused("PdistBackward0",
                 lambda x: torch.linalg.vector_norm(x[i] - x[j], p, dim=1), input, _p=float(p),
                 _packs=(0, "=result"))


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample from the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with
    Gumbel noise ``g`` (drawn with ``exponential_`` as PyTorch draws it); ``hard`` returns
    one-hot vectors whose gradient is the soft sample's (straight-through).

    >>> import retrograd as torch
    >>> y = torch.nn.functional.gumbel_softmax(torch.zeros(2, 3), hard=True)
    >>> y.sum(-1)
    tensor([1., 1.])
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -torch.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if hard:
        index = y_soft.max(dim, keepdim=True)[1]
        y_hard = torch.zeros_like(logits).scatter_(dim, index, 1.0)
        return y_hard - y_soft.detach() + y_soft
    return y_soft
