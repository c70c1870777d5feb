"""``AdaptiveLogSoftmaxWithLoss``: the efficient softmax of Grave et al. (2016) for large
vocabularies; frequent classes in a head, the rest in clusters behind low-rank projections."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

import numpy as np

import retrograd as torch
from retrograd import Tensor

from .. import functional as F
from ..module import Module
from .container import ModuleList, Sequential
from .linear import Linear

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax: ``forward(input, target)`` returns ``(output, loss)``, the target
    log-probabilities and their negative mean; ``log_prob`` gives every class's, ``predict``
    the most likely class.

    >>> import retrograd as torch
    >>> m = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 8], div_value=2.0)
    >>> out = m(torch.ones(3, 8), torch.tensor([0, 5, 9]))
    >>> out.output.shape, m.log_prob(torch.ones(3, 8)).shape
    (retrograd.Size([3]), retrograd.Size([3, 10]))
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in "
                             "an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, dtype=dtype),
                                        Linear(hsz, osz, bias=False, dtype=dtype)))

    def reset_parameters(self) -> None:
        """Re-draw the head's and every cluster's weights."""
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor):
        tdim = target_.dim()
        if tdim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs "
                                   f"with size {input_.shape}")
        elif tdim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs "
                                   f"with size {input_.shape}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = tdim > 0
        x = input_ if batched else input_.unsqueeze(0)
        t = (target_ if batched else target_.unsqueeze(0)).numpy().astype(np.int64)
        b = t.shape[0]
        output = torch.zeros(b, dtype=x.dtype)
        gather = t.copy()
        bounds = [0] + self.cutoffs
        used = 0
        for i in range(len(bounds) - 1):
            rows = np.nonzero((t >= bounds[i]) & (t < bounds[i + 1]))[0]
            if rows.size == 0:
                continue
            used += rows.size
            if i == 0:
                continue
            idx = torch.tensor(rows)
            logp = F.log_softmax(self.tail[i - 1](x.index_select(0, idx)), dim=1)
            rel = torch.tensor(t[rows] - bounds[i])
            local = logp.gather(1, rel.unsqueeze(1)).squeeze(1)
            output = output.index_add(0, idx, local)
            gather[rows] = self.shortlist_size + i - 1
        if used != b:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values "
                               f"in range [{t.min()}, {t.max()}] were found. ")
        head_logprob = F.log_softmax(self.head(x), dim=1)
        output = output + head_logprob.gather(1, torch.tensor(gather).unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:  # noqa: A002
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return torch.cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:  # noqa: A002
        """Log-probabilities of every class, ``(N, n_classes)``."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:  # noqa: A002
        """The most likely class of each row (the full distribution is computed only for rows
        whose head prediction is a cluster)."""
        head_output = self.head(input)
        output = torch.argmax(head_output, dim=1)
        outside = output >= self.shortlist_size
        if not bool(outside.any()):
            return output
        if bool(outside.all()):
            return torch.argmax(self._full_log_prob(input, head_output), dim=1)
        log_prob = self._full_log_prob(input[outside], head_output[outside])
        output[outside] = torch.argmax(log_prob, dim=1)
        return output
