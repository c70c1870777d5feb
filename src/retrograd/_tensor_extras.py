"""Tensor methods and attributes PyTorch has beside its ops: memory and device queries
(``nbytes``, ``itemsize``, ``get_device``, ``is_cpu``, ``pin_memory``, ``dim_order``,
``storage_offset``), the
legacy ``new``, element-wise Python callbacks (``apply_``, ``map_``, ``map2_``), and a few
composed ops (``angle``, ``mvlgamma``, ``sum_to_size``, ``fill_diagonal_``, ``index_reduce``,
``nonzero_static``, ``triangular_solve``).

>>> import retrograd as torch
>>> x = torch.zeros(2, 3)
>>> x.nbytes, x.itemsize, x.get_device(), x.is_cpu
(24, 4, -1, True)
"""

from __future__ import annotations

import math

import numpy as np

from . import linalg
from ._ranges import arange
from ._settings import strided
from ._tensor import Tensor, make
from .autograd.grad_mode import no_grad, state
from .ops._autocast import fp32
from .ops._base import _check_leaf
from .ops.decomp import _structseq
from .ops.fused import fused
from .ops.join import cat
from .ops.strided import _storage_view, as_strided, empty_strided_array, geometry, storage_of
from .storage import as_source as storage_as_source
from .storage import typed_storage, untyped_storage

__all__ = ["angle", "mvlgamma", "triangular_solve", "nonzero_static", "index_reduce", "lobpcg"]

_TRIANGULAR = _structseq("triangular_solve", ("solution", "cloned_coefficient"))


def angle(input: Tensor) -> Tensor:  # noqa: A002
    """The argument of each element: ``pi`` for negative reals, 0 otherwise (NaN stays NaN);
    its gradient is zero, as PyTorch's for real inputs.

    >>> import retrograd as torch
    >>> torch.angle(torch.tensor([-1.0, 2.0]))
    tensor([3.1416, 0.0000])
    """
    x = input if input.is_floating_point() else input.float()
    zero = x.new_zeros(())
    return (zero + math.pi).where(x < 0, zero).where(~x.isnan(), x) + x * 0


def mvlgamma(input: Tensor, p: int) -> Tensor:  # noqa: A002
    """The multivariate log-gamma of dimension ``p`` (``torch.special.multigammaln``).

    >>> import retrograd as torch
    >>> torch.mvlgamma(torch.tensor([2.5, 3.0]), 2)
    tensor([0.8570, 1.5502])
    """
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if bool((input <= (p - 1) / 2).any()):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    def mvlgamma(x: Tensor) -> Tensor:
        if x.dtype.name in ("bfloat16", "float16"):
            # PyTorch's composite, rounded as it rounds: the p arguments x - i/2 in the dtype,
            # their lgamma summed in float32, then the constant.
            shifts = arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=x.dtype)
            return (shifts + x.unsqueeze(-1)).lgamma().sum(-1) + \
                p * (p - 1) / 4 * math.log(math.pi)
        out = x.lgamma()
        for i in range(1, p):
            out = out + (x - i / 2).lgamma()
        return out + p * (p - 1) / 4 * math.log(math.pi)

    return fused("MvlgammaBackward0", mvlgamma, input, _p=p)


@fp32
def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,  # noqa: N803
                     unitriangular: bool = False):
    """``(solution, cloned_coefficient)`` of ``A X = b`` for triangular ``A`` (deprecated in
    PyTorch for ``linalg.solve_triangular``).

    >>> import retrograd as torch
    >>> torch.triangular_solve(torch.tensor([[2.], [2.]]), torch.eye(2) * 2).solution
    tensor([[1.],
            [1.]])
    """
    def solve(b: Tensor, A: Tensor) -> tuple:  # noqa: N803
        T = A.mT if transpose else A  # noqa: N806
        x = linalg.solve_triangular(T, b, upper=upper != transpose, unitriangular=unitriangular)
        return x, A.clone()

    return _TRIANGULAR(fused("TriangularSolveBackward0", solve, b, A, _upper=upper,
                             _transpose=transpose, _unitriangular=unitriangular,
                             _packs=(1, 0, "=solution")))


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:  # noqa: A002
    """``nonzero``, cut or padded with ``fill_value`` to exactly ``size`` rows.

    >>> import retrograd as torch
    >>> torch.nonzero_static(torch.tensor([0, 3, 5]), size=3).tolist()
    [[1], [2], [-1]]
    """
    nz = input.nonzero()
    n = nz.shape[0]
    if n >= size:
        return nz[:size].clone()
    return cat([nz, nz.new_full((size - n, input.dim()), fill_value)], 0)


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,  # noqa: A002
                 include_self: bool = True) -> Tensor:
    """Reduce the slices of ``source`` into ``input`` at ``index`` along ``dim`` with
    ``prod``, ``mean``, ``amax`` or ``amin``.

    >>> import retrograd as torch
    >>> torch.ones(3).index_reduce(0, torch.tensor([0, 0, 2]), torch.tensor([2., 3., 4.]),
    ...                            "prod")
    tensor([6., 1., 4.])
    """
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = dim % max(source.dim(), 1)
    shape = [1] * source.dim()
    shape[d] = -1
    idx = index.reshape(shape).expand(*source.shape)
    return input.scatter_reduce(d, idx, source, reduce, include_self=include_self)


def _index_reduce_(self: Tensor, dim, index, source, reduce, *, include_self=True) -> Tensor:
    return self.copy_(index_reduce(self, dim, index, source, reduce, include_self=include_self))


def _sum_to_size(self: Tensor, *size) -> Tensor:
    """Sum the broadcast dimensions away so that the result has ``size``."""
    size = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
    lead = self.dim() - len(size)
    if lead < 0 or any(s != 1 and s != t for s, t in zip(size, self.shape[lead:])):
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, self.shape))}}}.")
    out = self.sum(tuple(range(lead))) if lead else self
    dims = tuple(i for i, (s, t) in enumerate(zip(size, out.shape)) if s == 1 and t != 1)
    return out.sum(dims, keepdim=True) if dims else out


def _fill_diagonal_(self: Tensor, fill_value, wrap: bool = False) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    n = self.numel()
    if self.dim() == 2:
        rows, cols = self.shape
        step = cols + 1
        end = n if wrap and rows > cols else min(rows, cols) * cols
    else:
        step = sum(self.stride())
        end = n
    flat = np.arange(0, end, step)
    if flat.size:
        self.view(-1)[make(flat)] = fill_value
    return self


def _new(self: Tensor, *args, **kwargs) -> Tensor:
    """The legacy constructor in this tensor's dtype: ``new(data)`` or ``new(*sizes)``."""
    kwargs.setdefault("dtype", self.dtype)
    if not args:
        return self.new_empty((0,), **kwargs)
    if len(args) == 1 and not isinstance(args[0], int) and not _is_size(args[0]):
        return self.new_tensor(args[0], **kwargs)
    size = args[0] if len(args) == 1 and not isinstance(args[0], int) else args
    return self.new_empty(tuple(size), **kwargs)


def _is_size(x) -> bool:
    return isinstance(x, tuple) and all(isinstance(i, int) for i in x) and \
        type(x).__name__ == "Size"


def _elementwise_(self: Tensor, fn, *others) -> Tensor:
    """Replace each element by ``fn(element, *others' elements)``, computed in Python."""
    cols = [self.detach().numpy().reshape(-1).tolist()]
    cols += [o.expand_as(self).detach().numpy().reshape(-1).tolist() for o in others]
    values = np.array([fn(*vals) for vals in zip(*cols)], dtype=self.detach().numpy().dtype)
    return self.copy_(make(values.reshape(tuple(self.shape))))


def _apply_(self: Tensor, callable) -> Tensor:  # noqa: A002
    return _elementwise_(self, callable)


def _map_(self: Tensor, tensor: Tensor, callable) -> Tensor:  # noqa: A002
    return _elementwise_(self, callable, tensor)


def _map2_(self: Tensor, x: Tensor, y: Tensor, callable) -> Tensor:  # noqa: A002
    return _elementwise_(self, callable, x, y)


def _dim_order(self: Tensor, *, ambiguity_check=False) -> tuple:
    strides = self.stride()
    return tuple(sorted(range(self.dim()), key=lambda d: -strides[d]))


def _storage_offset(self: Tensor) -> int:
    """Where the tensor starts in its storage (the array that owns its memory, which its views,
    ``detach()`` and ``.data`` share), in elements, as in PyTorch."""
    a = self._data
    return (a.ctypes.data - storage_of(a).ctypes.data) // a.itemsize


def _set_(self: Tensor, source=None, storage_offset=None, size=None, stride=None) -> Tensor:
    """``x.set_(source[, storage_offset, size, stride])``: ``x`` takes ``source``'s memory (all
    of it, or the given sizes and strides over it); ``x.set_()``: no memory (zero elements).
    ``x`` keeps its own autograd identity and version counter, as in PyTorch.

    >>> import retrograd as torch
    >>> s = torch.arange(6.)
    >>> t = torch.empty(0).set_(s, 1, (2, 2), (1, 2))
    >>> t
    tensor([[1., 3.],
            [2., 4.]])
    >>> _ = t.mul_(10)
    >>> s
    tensor([ 0., 10., 20., 30., 40.,  5.])
    """
    if state.grad_enabled and self.requires_grad and self.grad_fn is None:
        _check_leaf(self)
    if source is None:
        arr = self._data[:0].reshape(0) if self._data.size else \
            np.empty(0, self._data.dtype)
    else:
        flat = storage_as_source(source, self._data.dtype)
        if flat is not None:  # a storage: the tensor over it (1-D, all of it, by default)
            source = make(flat)
        if not isinstance(source, Tensor):
            raise TypeError(f"set_(): argument 'source' must be Tensor, not "
                            f"{type(source).__name__}")
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {source.dtype.c_name} to a tensor "
                               f"of type {self.dtype.c_name}")
        arr = source._data
        if storage_offset is not None:
            size = tuple(int(n) for n in (size if size is not None else arr.shape))
            if stride is None:  # contiguous
                stride, acc = [], 1
                for n in reversed(size):
                    stride.insert(0, acc)
                    acc *= max(n, 1)
            with no_grad():
                arr = as_strided(source.detach(), size, tuple(stride), storage_offset)._data
    self._data = arr
    self._vc[0] += 1
    return self


def _resize_(self: Tensor, *size, memory_format=None) -> Tensor:
    """``x.resize_(*size)``: ``x`` takes ``size`` (contiguous strides) over its storage, from
    its storage offset; a storage too small is replaced by a larger one holding the old
    elements first (the new ones are zero here; PyTorch leaves them uninitialised).

    >>> import retrograd as torch
    >>> torch.arange(6.).resize_(2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    if len(size) == 1 and not isinstance(size[0], int):
        size = tuple(size[0])
    size = tuple(int(n) for n in size)
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if any(n < 0 for n in size):
        raise RuntimeError("numel: integer multiplication overflow")
    a = self._data
    if size == a.shape and memory_format is None:
        return self
    stride, acc = [], 1
    for n in reversed(size):
        stride.insert(0, acc)
        acc *= max(n, 1)
    numel = math.prod(size)
    geo = geometry(a) or geometry(a.copy())
    root, _, off = geo
    isz = a.itemsize
    if (off + numel) * isz > root.nbytes:  # a larger storage, the old elements first
        flat = np.zeros(off + numel, a.dtype)
        old = root.nbytes // isz
        flat[:old] = np.ndarray((old,), a.dtype, buffer=root)
        root = flat
    self._data = _storage_view(root, a.dtype, size, tuple(stride), off, root.flags.writeable)
    self._vc[0] += 1
    return self


def _new_empty_strided(self: Tensor, size, stride, *, dtype=None, requires_grad=False,
                       **kwargs) -> Tensor:
    np_dtype = self._data.dtype if dtype is None else self.new_empty((), dtype=dtype)._data.dtype
    out = make(empty_strided_array(size, stride, np_dtype))
    return out.requires_grad_(True) if requires_grad else out


def _is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether both tensors are the same place in one storage (sizes, strides and offset)."""
    a, b = self._data, tensor._data
    return a.shape == b.shape and a.dtype == b.dtype and geometry(a) is not None and \
        geometry(a)[1:] == geometry(b)[1:] and storage_of(a) is storage_of(b)


def _as_subclass(self: Tensor, cls) -> Tensor:
    out = self.view_as(self)
    out.__class__ = cls
    return out


def install() -> None:
    """Bind the methods and attributes above on Tensor (where Tensor has none yet)."""
    T = Tensor
    methods = {
        "angle": angle, "mvlgamma": mvlgamma, "mvlgamma_": lambda s, p: s.copy_(mvlgamma(s, p)),
        "triangular_solve": lambda s, A, upper=True, transpose=False, unitriangular=False:
            triangular_solve(s, A, upper, transpose, unitriangular),
        "nonzero_static": nonzero_static, "index_reduce": index_reduce,
        "index_reduce_": _index_reduce_, "sum_to_size": _sum_to_size,
        "fill_diagonal_": _fill_diagonal_, "new": _new, "apply_": _apply_, "map_": _map_,
        "map2_": _map2_, "dim_order": _dim_order, "as_subclass": _as_subclass,
        "storage_offset": _storage_offset, "set_": _set_, "resize_": _resize_,
        "untyped_storage": untyped_storage, "storage": typed_storage,
        "resize_as_": lambda s, other, memory_format=None: _resize_(s, tuple(other.shape),
                                                                    memory_format=memory_format),
        "get_device": lambda s: -1, "pin_memory": lambda s, device=None: s,
        "is_pinned": lambda s, device=None: False, "const_data_ptr": lambda s: s.data_ptr(),
        "conj_physical_": lambda s: s, "new_empty_strided": _new_empty_strided,
        "is_set_to": _is_set_to,
    }
    for name, fn in methods.items():
        if name not in T.__dict__:
            setattr(T, name, fn)
    props = {
        "is_cpu": lambda s: True, "itemsize": lambda s: s.element_size(),
        "nbytes": lambda s: s.numel() * s.element_size(), "layout": lambda s: strided,
        "output_nr": lambda s: 0 if s.grad_fn is None else s._nr,
        "grad_dtype": lambda s: s.dtype,  # gradients take the tensor's dtype
        "real": lambda s: s,  # a real tensor is its own real part, as in PyTorch
    }
    for name, fn in props.items():
        if name not in T.__dict__:
            setattr(T, name, property(fn))


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None,  # noqa: N803
           X: Tensor | None = None, n: int | None = None, iK=None, niter=None, tol=None,  # noqa: N803
           largest: bool | None = None, method: str | None = None, tracker=None,
           ortho_iparams=None, ortho_fparams=None, ortho_bparams=None) -> tuple:
    """``(E, X)``: the ``k`` largest (``largest=False``: smallest) eigenvalues and
    eigenvectors of the symmetric generalized problem ``A X = B X diag(E)`` (``B`` positive
    definite, identity by default), batched, differentiable in ``A`` and ``B``.

    NOTE: PyTorch iterates (LOBPCG) from a random or given ``X`` to tolerance ``tol``; here the
    pencil is reduced with ``B``'s Cholesky factor and solved exactly by ``eigh``, so the
    eigenpairs are the converged ones (eigenvectors up to sign) and ``X``, ``iK``, ``niter``,
    ``tol``, ``method``, ``tracker`` and the ``ortho_*`` parameters change nothing. As in
    PyTorch, ``A`` and ``B`` are symmetrized first and one ``LOBPCGAutogradFunctionBackward``
    node records both outputs.

    >>> import retrograd as torch
    >>> E, X = torch.lobpcg(torch.diag(torch.arange(1., 7.)), k=2)
    >>> E
    tensor([6., 5.])
    """
    m = A.shape[-1]
    if X is None:
        k = 1 if k is None else k
        n = k if n is None else n
    else:
        n = X.shape[-1]
        k = n if k is None else k
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) "
                         f"is smaller than 3 x the number of requested eigenpairs (={n})")
    big = True if largest is None else bool(largest)
    pick = np.arange(m - 1, m - 1 - k, -1) if big else np.arange(k)
    idx = make(pick.astype(np.int64))

    def pairs(A: Tensor, B: Tensor | None = None) -> tuple:  # noqa: N803
        if B is None:
            E, V = linalg.eigh(A)
        else:  # L^-1 A L^-T W = W E with B = L L^T; X = L^-T W
            L = linalg.cholesky(B)  # noqa: N806
            C = linalg.solve_triangular(L, A, upper=False)  # noqa: N806
            C = linalg.solve_triangular(L, C.mT, upper=False)  # noqa: N806
            E, W = linalg.eigh(C)  # noqa: N806
            V = linalg.solve_triangular(L.mT, W, upper=True)  # noqa: N806
        return E.index_select(-1, idx), V.index_select(-1, idx)

    sym = [(A + A.mT) / 2] + ([] if B is None else [(B + B.mT) / 2])
    return fused("LOBPCGAutogradFunctionBackward", pairs, *sym)
