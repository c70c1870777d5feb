"""The rest of nn.functional: linear, bilinear, embedding, one_hot, pad, normalize, ..."""

from __future__ import annotations

from ..._dtypes import int32, int64
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops import nn_norm
from ...ops._autocast import outside
from ...ops.indexing import one_hot
from ...ops.linalg import einsum
from ...ops.padding import pad
from ...ops.shape import broadcast_tensors

__all__: list = ["one_hot", "pad", "linear", "bilinear", "embedding", "normalize",
                 "cosine_similarity", "pairwise_distance"]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """``input @ weight.T + bias``; on a matrix input, one ``AddmmBackward0`` node.

    >>> import retrograd as torch
    >>> torch.nn.functional.linear(torch.ones(1, 2), torch.tensor([[1.0, 2.0]]), torch.ones(1))
    tensor([[4.]])
    """
    return nn_norm.linear(input, weight, bias)


@outside  # one kernel (_trilinear) in PyTorch, off autocast's lists
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``.

    >>> import retrograd as torch
    >>> w = torch.ones(1, 2, 2)
    >>> torch.nn.functional.bilinear(torch.ones(1, 2), torch.ones(1, 2), w)
    tensor([[4.]])
    """
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, but got "
                           f"{weight.dim()}-dimensional weight")
    s1, s2, ws = tuple(input1.shape), tuple(input2.shape), tuple(weight.shape)
    if len(s1) != len(s2):
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {len(s1)} and "
                           f"{len(s2)}")
    if s1[:-1] != s2[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{list(s1[:-1])} and {list(s2[:-1])}")
    if s1[-1] != ws[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {s1[-1]} "
                           f"but expected {ws[1]}")
    if s2[-1] != ws[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {s2[-1]} "
                           f"but expected {ws[2]}")
    if bias is not None and tuple(bias.shape) != (ws[0],):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1] if bias.dim() else 1} but expected {ws[0]}")
    x1 = input1.reshape(-1, s1[-1])
    x2 = input2.reshape(-1, s2[-1])
    # (B, i) @ (i, o*j) -> (B, o, j), then a row-wise dot with input2: two BLAS-backed steps.
    t = x1.matmul(weight.permute(1, 0, 2).reshape(ws[1], ws[0] * ws[2]))
    y = einsum("boj,bj->bo", t.reshape(-1, ws[0], ws[2]), x2)
    y = y.view(s1[:-1] + (ws[0],))
    return y if bias is None else y + bias


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at the integer indices ``input``; the ``padding_idx`` row gets no
    gradient, and with ``max_norm`` the rows looked up are renormalised in place first.

    >>> import retrograd as torch
    >>> w = torch.tensor([[0.0, 0.0], [1.0, 2.0]])
    >>> torch.nn.functional.embedding(torch.tensor([1, 0, 1]), w)
    tensor([[1., 2.],
            [0., 0.],
            [1., 2.]])
    """
    if not (isinstance(weight, Tensor) and isinstance(input, Tensor)):
        # PyTorch's torch.embedding(weight, indices) refuses anything else.
        pos, name, arg = (1, "weight", weight) if not isinstance(weight, Tensor) else \
            (2, "indices", input)
        raise TypeError(f"embedding(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(arg).__name__}")
    n = weight.shape[0] if weight.dim() else 0
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= n:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -n:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = n + padding_idx
    else:
        padding_idx = -1
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input.dtype is not int64 and input.dtype is not int32:
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{input.dtype.tensor_type} instead (while checking "
            "arguments for embedding)")
    if sparse:
        raise NotImplementedError("retrograd has no sparse tensors: embedding(sparse=True) is "
                                  "not supported")
    if max_norm is not None:
        with no_grad():
            nn_norm.embedding_renorm_(weight, input, float(max_norm), float(norm_type))
    return nn_norm.embedding(input, weight, padding_idx, bool(scale_grad_by_freq))


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,  # noqa: A002
              out: Tensor | None = None) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``.

    >>> import retrograd as torch
    >>> torch.nn.functional.normalize(torch.tensor([[3.0, 4.0]]))
    tensor([[0.6000, 0.8000]])
    """
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return out.copy_(input / denom)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim`` (after broadcasting); each
    norm is clamped below at ``eps``.

    >>> import retrograd as torch
    >>> torch.nn.functional.cosine_similarity(torch.tensor([[1.0, 0.0]]),
    ...                                       torch.tensor([[1.0, 1.0]]))
    tensor([0.7071])
    """
    if x1.shape != x2.shape:
        x1, x2 = broadcast_tensors(x1, x2)
    if not x1.is_floating_point():
        x1 = x1.float()
    if not x2.is_floating_point():
        x2 = x2.float()
    n1 = x1.norm(2, dim, keepdim=True)
    n2 = x2.norm(2, dim, keepdim=True)
    # As PyTorch: the clamp does not take part in the gradient.
    with no_grad():
        d1 = n1.clamp_min(eps) - n1
        d2 = n2.clamp_min(eps) - n2
    return ((x1 / (n1 + d1)) * (x2 / (n2 + d2))).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dim.

    >>> import retrograd as torch
    >>> torch.nn.functional.pairwise_distance(torch.tensor([[3.0, 4.0]]), torch.zeros(1, 2),
    ...                                       eps=0.0)
    tensor([5.])
    """
    # One NormBackward1 node over the difference, as PyTorch records it.
    return nn_norm.norm_last_dim(x1 - x2 + eps, p, keepdim)
