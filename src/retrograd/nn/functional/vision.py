"""Vision helpers of ``nn.functional``: pixel and channel shuffles, local response
normalisation (and, in ``sampling``, ``affine_grid``/``grid_sample``).

The shuffles are primitives in ``ops.nn_shuffle`` (PyTorch's grad_fn names); this module checks
arguments with PyTorch's messages. ``local_response_norm`` is composed as PyTorch composes it.
"""

from __future__ import annotations

from ..._tensor import Tensor
from ...ops import nn_shuffle as _ns
from ...ops.padding import pad
from .conv import avg_pool2d

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle",
           "local_response_norm"]


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """Rearranges ``(*, C r^2, H, W)`` into ``(*, C, H r, W r)`` (sub-pixel convolution).

    >>> import retrograd as torch
    >>> torch.nn.functional.pixel_shuffle(torch.arange(4.).reshape(1, 4, 1, 1), 2)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    return _ns.pixel_shuffle(input, r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """Rearranges ``(*, C, H r, W r)`` into ``(*, C r^2, H, W)``: the inverse of
    ``pixel_shuffle``.

    >>> import retrograd as torch
    >>> torch.nn.functional.pixel_unshuffle(torch.arange(4.).reshape(1, 1, 2, 2), 2).flatten()
    tensor([0., 1., 2., 3.])
    """
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    h, w = input.shape[-2:]
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, "
                           f"but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, "
                           f"but input.size(-1)={w} is not divisible by {r}")
    return _ns.pixel_unshuffle(input, r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    """Splits the channels of ``(N, C, *)`` into ``groups`` groups and interleaves them.

    >>> import retrograd as torch
    >>> torch.nn.functional.channel_shuffle(torch.arange(4.).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes [{', '.join(str(s) for s in input.shape)}]")
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    return _ns.channel_shuffle(input, groups)


native_channel_shuffle = channel_shuffle


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4,  # noqa: A002
                        beta: float = 0.75, k: float = 1.0) -> Tensor:
    """Normalises each element by the squares of its ``size`` neighbours across channels:
    ``x / (k + alpha * mean(x^2 over the window)) ** beta``.

    >>> import retrograd as torch
    >>> torch.nn.functional.local_response_norm(torch.ones(1, 3, 1), 2, alpha=1.0, k=0.0,
    ...                                         beta=1.0).flatten()
    tensor([2., 1., 1.])
    """
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    sizes = tuple(input.shape)
    # Average the squares over a window of channels: one 2-D average pool with a (size, 1)
    # kernel over (N, 1, C, rest) (PyTorch uses a 3-D pool for 4-D inputs: the same numbers).
    div = div.reshape(sizes[0], 1, sizes[1], -1)
    div = pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(div, (size, 1), stride=1).squeeze(1).reshape(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div
