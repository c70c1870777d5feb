"""Ready-made parametrizations (``torch.nn.utils.parametrizations``): ``weight_norm``,
``spectral_norm`` and ``orthogonal``, registered with ``parametrize.register_parametrization``
exactly as PyTorch registers them (same module layout and state_dict keys).
"""

from __future__ import annotations

import retrograd as torch
from retrograd import Tensor

from .. import functional as F
from ..module import Module
from . import parametrize

__all__ = ["orthogonal", "weight_norm", "spectral_norm"]


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of ``v`` over every dim but ``dim`` (kept, size 1 elsewhere); all dims if
    ``dim`` is -1."""
    if dim == -1:
        return v.norm()
    dim = dim + v.dim() if dim < 0 else dim
    dims = [d for d in range(v.dim()) if d != dim]
    return v.norm(2, dims, keepdim=True) if dims else v.abs()


def weight_norm_apply(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """``v * g / ||v||`` (the norm taken over every dim but ``dim``), as PyTorch's
    ``_weight_norm`` (one ``WeightNormInterfaceBackward0`` node for the first or last dim)."""
    return torch._weight_norm(v, g, dim)


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_norm_apply(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (magnitude ``original0``,
    direction ``original1``).

    >>> import retrograd as torch
    >>> m = weight_norm(torch.nn.Linear(3, 4))
    >>> m.parametrizations.weight.original0.shape, m.parametrizations.weight.original1.shape
    (retrograd.Size([4, 1]), retrograd.Size([4, 3]))
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, "
                             f"{ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._reshape_weight_to_matrix(weight)
            h, w = mat.shape
            u = torch.empty(h, dtype=mat.dtype).normal_(0, 1)
            v = torch.empty(w, dtype=mat.dtype).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, mat: Tensor, n: int) -> None:
        with torch.no_grad():
            for _ in range(n):
                self._u.copy_(F.normalize(torch.mv(mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(torch.mv(mat.mT, self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat.detach(), self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = torch.vdot(u, torch.mv(mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm, estimated by power iteration (one step
    per training-mode access; buffers ``_u``, ``_v``).

    >>> import retrograd as torch
    >>> m = spectral_norm(torch.nn.Linear(3, 4))
    >>> sorted(m.state_dict())
    ['bias', 'parametrizations.weight.0._u', 'parametrizations.weight.0._v', \
'parametrizations.weight.original']
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        conv_t = (torch.nn.ConvTranspose1d, torch.nn.ConvTranspose2d, torch.nn.ConvTranspose3d)
        dim = 1 if isinstance(module, conv_t) else 0
    parametrize.register_parametrization(module, name,
                                         _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


_ORTH_MAPS = ("matrix_exp", "cayley", "householder")


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.shape[-2], q.shape[-1]
    eye = torch.eye(k, dtype=q.dtype)
    return torch.allclose(q.mH @ q, eye, atol=10.0 * n * torch.finfo(q.dtype).eps)


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of the Householder QR of ``a``, its columns signed so that R's diagonal is
    positive."""
    x, tau = torch.geqrf(a)
    q = torch.linalg.householder_product(x, tau)
    return q * x.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _Orthogonal(Module):
    def __init__(self, weight: Tensor, orthogonal_map: str, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: Tensor) -> Tensor:
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            x = x.tril()
            if n != k:
                x = torch.cat([x, torch.zeros(*x.shape[:-2], n, n - k, dtype=x.dtype)], dim=-1)
            a = x - x.mH
            if self.orthogonal_map == "matrix_exp":
                q = torch.matrix_exp(a)
            else:
                eye = torch.eye(n, dtype=a.dtype)
                q = torch.linalg.solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = torch.linalg.householder_product(a, tau)
            q = q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:
            q = self.base @ q
        return q.mT if transposed else q

    def right_inverse(self, q: Tensor) -> Tensor:
        with torch.no_grad():
            if q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {q.shape}.")
            q_init = q
            n, k = q.shape[-2], q.shape[-1]
            transpose = n < k
            if transpose:
                q = q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in ("cayley", "matrix_exp"):
                    raise NotImplementedError("It is not possible to assign to the matrix "
                                              "exponential or the Cayley parametrizations when "
                                              "use_trivialization=False.")
                a, tau = torch.geqrf(q)
                d = a.diagonal(dim1=-2, dim2=-1)
                d.copy_(torch.where(tau == 0.0, -d.sign(), d.sign()))
                return a.mT if transpose else a
            if n == k:
                q = _make_orthogonal(q) if not _is_orthogonal(q) else q.clone()
            else:
                extra = torch.randn(*q.shape[:-2], n, n - k, dtype=q.dtype)
                q = _make_orthogonal(torch.cat([q, extra], dim=-1))
            self.base = q
            neg_id = torch.zeros_like(q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Constrain ``module.<name>`` to orthogonal (or semi-orthogonal) matrices: ``matrix_exp``
    (default for square), ``cayley`` or ``householder`` (default otherwise); with
    ``use_trivialization`` the current weight's orthogonalisation is kept in ``base``.

    >>> import retrograd as torch
    >>> m = orthogonal(torch.nn.Linear(3, 3))
    >>> w = m.weight
    >>> bool(torch.allclose(w @ w.T, torch.eye(3), atol=1e-5))
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.dim()} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _ORTH_MAPS:
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
