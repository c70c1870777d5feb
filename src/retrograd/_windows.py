"""The window functions of signal processing: ``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window`` and ``kaiser_window``, as PyTorch defines them.

A periodic window (the default) of length ``L`` is the symmetric window of length ``L + 1``
without its last value, the form spectral analysis wants.

>>> import retrograd as torch
>>> torch.hann_window(4)
tensor([0.0000, 0.5000, 1.0000, 0.5000])
"""

from __future__ import annotations

import numpy as np

from . import _dtypes
from ._tensor import Tensor, make

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


def _window(name: str, length: int, periodic: bool, dtype, requires_grad: bool, formula):
    if length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length="
                           f"{length}")
    np_dtype = np.dtype((dtype or _dtypes.get_default_dtype()).np)
    if np_dtype.kind != "f":
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if length <= 1:
        values = np.ones(length)
    else:
        n_total = length if periodic else length - 1  # the symmetric window's N
        values = formula(np.arange(length, dtype=np.float64), float(n_total))
    t = make(values.astype(np_dtype))
    if requires_grad:
        t.requires_grad_(True)
    return t


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                device=None, requires_grad: bool = False) -> Tensor:
    """``0.5 - 0.5 cos(2 pi n / N)``.

    >>> import retrograd as torch
    >>> torch.hann_window(3, periodic=False)
    tensor([0., 1., 0.])
    """
    return _window("hann_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: 0.5 - 0.5 * np.cos(2 * np.pi * n / N))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False) -> Tensor:
    """``alpha - beta cos(2 pi n / N)``.

    >>> import retrograd as torch
    >>> torch.hamming_window(3, periodic=False)
    tensor([0.0800, 1.0000, 0.0800])
    """
    return _window("hamming_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: alpha - beta * np.cos(2 * np.pi * n / N))


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """``0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)``.

    >>> import retrograd as torch
    >>> torch.blackman_window(3, periodic=False).abs().round(decimals=4)
    tensor([0., 1., 0.])
    """
    return _window("blackman_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: 0.42 - 0.5 * np.cos(2 * np.pi * n / N)
                   + 0.08 * np.cos(4 * np.pi * n / N))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The triangle ``1 - |2 n / N - 1|``.

    >>> import retrograd as torch
    >>> torch.bartlett_window(5, periodic=False)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: 1 - np.abs(2 * n / N - 1))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """``I0(beta sqrt(1 - (2 n / N - 1)^2)) / I0(beta)``, with ``I0`` the modified Bessel
    function of order 0.

    >>> import retrograd as torch
    >>> torch.kaiser_window(3, periodic=False, beta=0.0)
    tensor([1., 1., 1.])
    """
    return _window("kaiser_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: np.i0(beta * np.sqrt(np.clip(1 - (2 * n / N - 1) ** 2, 0, None)))
                   / np.i0(beta))
