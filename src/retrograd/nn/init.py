"""``nn.init``: fill tensors in place with PyTorch's initialisation schemes, without recording grad.

Every function takes the same arguments as PyTorch's (``generator=`` included), draws the same
random numbers in the same order with the same bounds, and returns the tensor it filled: with the
same seed, the values are PyTorch's (``orthogonal_``'s QR decomposition may round differently).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

import retrograd as torch
from retrograd import Tensor

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
    "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
    "kaiming_normal_", "orthogonal_", "sparse_",
]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d")


def _write(tensor: Tensor, arr: np.ndarray) -> Tensor:
    """Copy NumPy values into ``tensor`` in place, outside autograd."""
    with torch.no_grad():
        tensor.copy_(torch.from_numpy(np.ascontiguousarray(arr)))
    return tensor


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity (used by the xavier and kaiming schemes).

    >>> import retrograd as torch
    >>> torch.nn.init.calculate_gain("relu")
    1.4142135623730951
    >>> round(torch.nn.init.calculate_gain("leaky_relu", 0.2), 4)
    1.3868
    """
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with values drawn uniformly from ``[a, b)``.

    >>> import retrograd as torch
    >>> w = torch.nn.init.uniform_(torch.empty(100), -0.5, 0.5)
    >>> bool(w.min() >= -0.5) and bool(w.max() < 0.5)
    True
    """
    with torch.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with values drawn from ``N(mean, std**2)``.

    >>> import retrograd as torch
    >>> torch.nn.init.normal_(torch.empty(2, 3), std=0.02).shape
    retrograd.Size([2, 3])
    """
    with torch.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """Fill with values from ``N(mean, std**2)`` conditioned on lying in ``[a, b]``, by
    PyTorch's rejection sampling (so the same seed gives PyTorch's values).

    >>> import retrograd as torch
    >>> w = torch.nn.init.trunc_normal_(torch.empty(1000), std=1.0, a=-1.0, b=1.0)
    >>> bool(w.abs().max() <= 1.0)
    True
    """

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    with torch.no_grad():
        if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
            # rejection from the normal itself: at least 30% of draws land in [a, b]; the bounds
            # are rounded to the tensor's dtype so that the test matches its values
            lo = torch.tensor(a, dtype=tensor.dtype).item()
            hi = torch.tensor(b, dtype=tensor.dtype).item()
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                fresh = torch.empty_like(result).normal_(mean, std, generator=generator)
                result = torch.where(mask, fresh, result)
            if tensor is not result:
                tensor.copy_(result)
            return tensor
        # a narrow or far window: propose uniformly on [a, b], accept by the density ratio
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        candidates = torch.empty_like(tensor)
        accept = torch.empty_like(tensor)
        tensor.uniform_(a, b, generator=generator)
        candidates.copy_(tensor)
        candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
        pending = accept.uniform_(generator=generator).log_().gt(candidates)
        if pending.any():
            result = tensor
            while True:
                candidates.uniform_(a, b, generator=generator)
                result = torch.where(pending, candidates, result)
                candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
                pending = torch.where(
                    pending, accept.uniform_(generator=generator).log_().gt(candidates), pending
                )
                if not pending.any():
                    break
            tensor.copy_(result)
    return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``.

    >>> import retrograd as torch
    >>> torch.nn.init.constant_(torch.empty(2), 0.3)
    tensor([0.3000, 0.3000])
    """
    with torch.no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones.

    >>> import retrograd as torch
    >>> torch.nn.init.ones_(torch.empty(2))
    tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros.

    >>> import retrograd as torch
    >>> torch.nn.init.zeros_(torch.empty(2))
    tensor([0., 0.])
    """
    with torch.no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix.

    >>> import retrograd as torch
    >>> torch.nn.init.eye_(torch.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with torch.no_grad():
        tensor.copy_(torch.eye(*tensor.shape))
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta (an identity convolution).

    >>> import retrograd as torch
    >>> torch.nn.init.dirac_(torch.empty(2, 2, 3))[0]
    tensor([[0., 1., 0.],
            [0., 0., 0.]])
    """
    dims = tensor.ndimension()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    arr = np.zeros(sizes, dtype=np.float64)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min(per_group, sizes[1])):
            arr[(g * per_group + d, d) + centre] = 1
    return _write(tensor, arr)


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight: ``size(1)`` and ``size(0)`` times the receptive field.

    >>> import retrograd as torch
    >>> torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(8, 3, 5, 5))
    (75, 200)
    """
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in tuple(tensor.shape)[2:]:
        receptive *= s
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot uniform: ``U(-a, a)`` with ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    >>> import retrograd as torch
    >>> w = torch.nn.init.xavier_uniform_(torch.empty(3, 5))
    >>> bool(w.abs().max() <= (6 / 8) ** 0.5)
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot normal: ``N(0, std**2)`` with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    >>> import retrograd as torch
    >>> torch.nn.init.xavier_normal_(torch.empty(3, 5)).shape
    retrograd.Size([3, 5])
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float | None:
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He uniform: ``U(-bound, bound)`` with ``bound = gain * sqrt(3 / fan_mode)``.

    >>> import retrograd as torch
    >>> w = torch.nn.init.kaiming_uniform_(torch.empty(4, 6), nonlinearity="relu")
    >>> bool(w.abs().max() <= 1.0)
    True
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He normal: ``N(0, std**2)`` with ``std = gain / sqrt(fan_mode)``.

    >>> import retrograd as torch
    >>> torch.nn.init.kaiming_normal_(torch.empty(4, 6), mode="fan_out").shape
    retrograd.Size([4, 6])
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix: Q of the QR decomposition of a normal matrix.

    Dimensions after the first are flattened.

    >>> import retrograd as torch
    >>> w = torch.nn.init.orthogonal_(torch.empty(3, 3, dtype=torch.float64))
    >>> bool(((w @ w.T) - torch.eye(3, dtype=torch.float64)).abs().max() < 1e-12)
    True
    """
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flat = torch.empty(rows, cols, dtype=tensor.dtype).normal_(0, 1, generator=generator).numpy()
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diagonal(r))  # make the decomposition unique
    if rows < cols:
        q = q.T
    _write(tensor, q.reshape(tuple(tensor.shape)))
    with torch.no_grad():
        tensor.mul_(gain)
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """Fill a 2-D tensor from ``N(0, std**2)`` with a fraction ``sparsity`` of each column zero.

    >>> import retrograd as torch
    >>> w = torch.nn.init.sparse_(torch.empty(10, 3), sparsity=0.5)
    >>> [int((w[:, j] == 0).sum()) for j in range(3)]
    [5, 5, 5]
    """
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tuple(tensor.shape)
    num_zeros = int(math.ceil(sparsity * rows))
    with torch.no_grad():
        tensor.normal_(0, std, generator=generator)
        for j in range(cols):
            # PyTorch draws the rows to zero from the default generator, whatever generator= is
            zero_rows = torch.randperm(rows)[:num_zeros]
            tensor[zero_rows, j] = 0
    return tensor


def _deprecated(fn):
    old = fn.__name__[:-1]

    def wrapper(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{fn.__name__}`.",
                      FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)

    wrapper.__name__ = old
    wrapper.__doc__ = f"Deprecated alias of ``{fn.__name__}``."
    return wrapper


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
