"""Spatial transformer sampling: ``affine_grid`` and ``grid_sample`` (2-D and 3-D grids,
bilinear/trilinear and nearest modes, zeros/border/reflection padding).

NOTE: composed from differentiable ops, each recorded as one node with the name of PyTorch's
kernel (``AffineGridGeneratorBackward0``, ``GridSampler2DBackward0``, ``GridSampler3DBackward0``;
see ``ops/fused.py``): the sample positions are unnormalised, padded, split into their
integer corners and fractional weights, and the corners gathered from the flattened input;
gradients reach both the input and the grid (through the weights), to every order.
"""

from __future__ import annotations

import itertools
import warnings

import retrograd as torch
from retrograd import Tensor

from ...ops._autocast import fp32
from ...ops.fused import fused

__all__ = ["affine_grid", "grid_sample"]

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False "
                  "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
                  "See the documentation of grid_sample for details.")


def _base_coords(n: int, align_corners: bool, dtype) -> Tensor:
    if n <= 1:
        return torch.zeros(max(n, 0), dtype=dtype)
    lin = torch.linspace(-1, 1, n, dtype=dtype)
    return lin if align_corners else lin * ((n - 1) / n)


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid ``(N, H, W, 2)`` (or ``(N, D, H, W, 3)``) of the affine maps ``theta``
    ``(N, 2, 3)`` (or ``(N, 3, 4)``) for an output of ``size``, in ``[-1, 1]`` coordinates.

    >>> import retrograd as torch
    >>> eye = torch.tensor([[[1., 0., 0.], [0., 1., 0.]]])
    >>> torch.nn.functional.affine_grid(eye, (1, 1, 1, 2), align_corners=True)[0, 0]
    tensor([[-1.,  0.],
            [ 1.,  0.]])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    size = tuple(int(s) for s in size)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    shape = tuple(theta.shape)
    if len(size) == 4:
        if theta.dim() != 3 or shape[-2:] != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got torch.Size({list(shape)}).")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or shape[-2:] != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got torch.Size({list(shape)}).")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    nd = len(spatial)
    # PyTorch's kernel is a bmm: under autocast its operands (the base grid too) are rounded to
    # the autocast dtype, the product summed in float32 and rounded once.
    lp = None
    if torch.is_autocast_enabled("cpu") and theta.dtype != torch.float64:
        lp = torch.get_autocast_dtype("cpu")
    # base[..., k]: x (last dim) first, then y, then z; and a column of ones (built as the
    # kernel builds it, outside autocast's join rules).
    with torch.autocast("cpu", enabled=False):
        axes = [_base_coords(n, align_corners, theta.dtype) for n in spatial]
        grids = torch.meshgrid(*axes, indexing="ij")
        base = torch.stack([*reversed(grids), torch.ones(spatial, dtype=theta.dtype)], -1)
    flat = base.reshape(1, -1, 1, nd + 1)

    def grid(theta: Tensor) -> Tensor:
        if lp is None:
            out = (flat * theta.unsqueeze(1)).sum(-1)      # (N, HW, nd): theta @ [x, y, 1]
        else:
            out = (flat.to(lp).float() * theta.to(lp).float().unsqueeze(1)).sum(-1).to(lp)
        return out.reshape(size[0], *spatial, nd)

    return fused("AffineGridGeneratorBackward0", grid, theta, _align_corners=align_corners,
                 _size=tuple(size), _packs=())


def _unnormalize(coord: Tensor, n: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) / 2 * (n - 1)
    return ((coord + 1) * n - 1) / 2


def _reflect(x: Tensor, twice_low: int, twice_high: int) -> Tensor:
    if twice_low == twice_high:
        return torch.zeros_like(x)
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = (x - lo).abs()
    extra = torch.fmod(x, span)
    flips = torch.floor(x / span).detach()
    even = torch.fmod(flips, 2) == 0
    return torch.where(even, extra + lo, span - extra + lo)


def _source_index(coord: Tensor, n: int, padding_mode: str, align_corners: bool) -> Tensor:
    x = _unnormalize(coord, n, align_corners)
    if padding_mode == "border":
        x = x.clamp(0, n - 1)
    elif padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (n - 1)) if align_corners else _reflect(x, -1, 2 * n - 1)
        x = x.clamp(0, n - 1)
    return x


@fp32
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",  # noqa: A002
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Samples ``input`` ``(N, C, H, W)`` at the ``[-1, 1]`` positions of ``grid``
    ``(N, H_out, W_out, 2)`` (x first); 5-D inputs take 3-D grids. ``mode`` is ``bilinear``
    (trilinear on 5-D) or ``nearest``.

    >>> import retrograd as torch
    >>> x = torch.arange(4.).reshape(1, 1, 2, 2)
    >>> g = torch.tensor([[[[0., 0.], [1., 1.]]]])
    >>> torch.nn.functional.grid_sample(x, g, align_corners=True)
    tensor([[[[1.5000, 3.0000]]]])
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if mode == "bicubic":
        raise NotImplementedError("grid_sample(mode='bicubic') is not implemented in retrograd")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    nd = input.dim() - 2
    if nd not in (2, 3) or grid.dim() != input.dim() or grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    n, c = input.shape[:2]
    spatial = tuple(input.shape[2:])
    out_sp = tuple(grid.shape[1:-1])
    strides = [1] * nd
    for i in range(nd - 2, -1, -1):
        strides[i] = strides[i + 1] * spatial[i + 1]

    def sample(input: Tensor, grid: Tensor) -> Tensor:  # noqa: A002
        # grid[..., 0] indexes the last input dim (x), grid[..., 1] the one before, ...
        pos = [_source_index(grid[..., nd - 1 - i], spatial[i], padding_mode, align_corners)
               for i in range(nd)]
        flat = input.reshape(n, c, -1)

        def gather(idx: list) -> Tensor:
            """Values at integer positions ``idx`` (zero outside the input)."""
            valid = None
            lin = 0
            for i, p in enumerate(idx):
                ok = (p >= 0) & (p <= spatial[i] - 1)
                valid = ok if valid is None else valid & ok
                lin = lin + p.clamp(0, spatial[i] - 1).long() * strides[i]
            lin = lin.reshape(n, 1, -1).expand(n, c, -1)
            vals = flat.gather(2, lin).reshape(n, c, *out_sp)
            return vals * valid.unsqueeze(1).to(input.dtype)

        if mode == "nearest":
            # The grid gets a zero gradient (not none), as from PyTorch's kernel.
            tie = sum(p - p.detach() for p in pos).unsqueeze(1) * 0
            return gather([torch.round(p).detach() for p in pos]) + tie
        lows = [torch.floor(p).detach() for p in pos]
        fracs = [p - lo for p, lo in zip(pos, lows)]
        out = None
        for corner in itertools.product((0, 1), repeat=nd):
            w = None
            idx = []
            for i, b in enumerate(corner):
                wi = fracs[i] if b else 1 - fracs[i]
                w = wi if w is None else w * wi
                idx.append(lows[i] + b)
            term = gather(idx) * w.unsqueeze(1)
            out = term if out is None else out + term
        return out

    # (PyTorch's enums: bilinear 0, nearest 1, bicubic 2; zeros 0, border 1, reflection 2)
    return fused(f"GridSampler{nd}DBackward0", sample, input, grid,
                 _interpolation_mode={"bilinear": 0, "nearest": 1, "bicubic": 2}.get(mode),
                 _padding_mode={"zeros": 0, "border": 1, "reflection": 2}.get(padding_mode),
                 _align_corners=align_corners)
