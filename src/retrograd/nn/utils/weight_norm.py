"""The legacy hook-based ``weight_norm``/``remove_weight_norm`` and
``spectral_norm``/``remove_spectral_norm`` of ``torch.nn.utils`` (parameters ``weight_g``,
``weight_v``; ``weight_orig`` with buffers ``weight_u``, ``weight_v``), recomputing the weight
in a forward pre-hook as PyTorch does. New code uses ``parametrizations`` instead.
"""

from __future__ import annotations

import warnings

import retrograd as torch
from retrograd import Tensor

from .. import functional as F
from ..module import Module
from ..parameter import Parameter
from .parametrizations import _norm_except_dim, weight_norm_apply

__all__ = ["weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]


class WeightNorm:
    """The forward pre-hook of the legacy ``weight_norm``."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = dim

    def compute_weight(self, module: Module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return weight_norm_apply(v, g, self.dim)

    def remove(self, module: Module) -> None:
        with torch.no_grad():
            weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Legacy weight normalisation: ``weight = weight_g * weight_v / ||weight_v||``,
    recomputed before every forward (deprecated in PyTorch too).

    >>> import retrograd as torch, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = torch.nn.utils.weight_norm(torch.nn.Linear(3, 4))
    >>> list(m.state_dict())
    ['bias', 'weight_g', 'weight_v']
    """
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, WeightNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter "
                               f"{name}")
    fn = WeightNorm(name, -1 if dim is None else dim)
    weight = getattr(module, name)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, fn.dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, fn.compute_weight(module))
    module.register_forward_pre_hook(fn)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo the legacy ``weight_norm``: ``weight`` becomes a parameter again.

    >>> import retrograd as torch, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = torch.nn.utils.weight_norm(torch.nn.Linear(3, 4))
    >>> list(remove_weight_norm(m).state_dict())
    ['bias', 'weight']
    """
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")


class SpectralNorm:
    """The forward pre-hook of the legacy ``spectral_norm``."""

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name = name
        self.dim = dim
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with torch.no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(torch.mv(mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(torch.mv(mat, v), dim=0, eps=self.eps))
                u, v = u.clone(), v.clone()
        sigma = torch.dot(u, torch.mv(mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with torch.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Legacy spectral normalisation: ``weight = weight_orig / sigma``, with ``sigma``
    estimated by power iteration before every training-mode forward.

    >>> import retrograd as torch
    >>> list(torch.nn.utils.spectral_norm(torch.nn.Linear(3, 4)).state_dict())
    ['bias', 'weight_orig', 'weight_u', 'weight_v']
    """
    if dim is None:
        conv_t = (torch.nn.ConvTranspose1d, torch.nn.ConvTranspose2d, torch.nn.ConvTranspose3d)
        dim = 1 if isinstance(module, conv_t) else 0
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter "
                               f"{name}")
    fn = SpectralNorm(name, n_power_iterations, dim, eps)
    weight = module._parameters[name]
    if weight is None:
        raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
    with torch.no_grad():
        mat = fn.reshape_weight_to_matrix(weight)
        h, w = mat.shape
        u = F.normalize(torch.empty(h, dtype=weight.dtype).normal_(0, 1), dim=0, eps=fn.eps)
        v = F.normalize(torch.empty(w, dtype=weight.dtype).normal_(0, 1), dim=0, eps=fn.eps)
    delattr(module, fn.name)
    module.register_parameter(fn.name + "_orig", weight)
    setattr(module, fn.name, weight.detach())
    module.register_buffer(fn.name + "_u", u)
    module.register_buffer(fn.name + "_v", v)
    module.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo the legacy ``spectral_norm``.

    >>> import retrograd as torch
    >>> m = torch.nn.utils.spectral_norm(torch.nn.Linear(3, 4))
    >>> list(remove_spectral_norm(m).state_dict())
    ['bias', 'weight']
    """
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
