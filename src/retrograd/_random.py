"""Random numbers: ``Generator``, seeding, sampling factories and in-place fillers.

The numbers are PyTorch's: each ``Generator`` is PyTorch's CPU generator (a Mersenne Twister,
``_mt.Engine``, whose state bytes ``get_state``/``set_state`` share with PyTorch), and every
sampler transforms its stream as the matching ATen kernel does (``_dists``), so that the same
seed gives the same values, bit for bit in float32 and float64. As in PyTorch, samples are
drawn in the memory order of the tensor being filled (``_walk``), so a transposed tensor is
filled along its storage.

The in-place fillers (``uniform_``, ``normal_``, ...) are plain functions taking the tensor
first; ``TENSOR_METHODS`` lists them, with ``bernoulli`` and ``multinomial``, for binding as
Tensor methods. They write into the tensor's array, so views see the new values, and bump its
version counter. On a tensor with a history they record, as PyTorch does, a node of their own
(``UniformBackward0``, ...) whose gradient is zero: the new values do not depend on the old.

Samplers are not differentiable, but PyTorch still records a node when an input requires grad
(``bernoulli(p)``, ``normal(mean, std)``, ``poisson(rates)``): the gradient is zero there too.
"""

from __future__ import annotations

import math
import operator
import os
import warnings
from typing import Any

import numpy as np

from . import _dists, _dtypes, _stl
from . import _memory_format as _mf
from ._creation import (
    check_device,
    check_tensor_arg,
    finish,
    fmt_number,
    number,
    parse_size,
    resolve_dtype,
    type_name,
)
from ._dtypes import dtype, get_default_dtype, to_dtype
from ._mt import DEFAULT_SEED, Engine
from ._tensor import CPU, Tensor, make
from .ops._apply import apply, recording
from .ops.arithmetic import NotImplementedBackward
from .ops.inplace import _check_leaf, _check_writable, apply_inplace
from .ops.unary import _ZeroGrad

__all__ = [
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
    "set_rng_state", "rand", "randn", "randint", "rand_like", "randn_like", "randint_like",
    "randperm", "normal", "bernoulli", "multinomial", "poisson", "binomial",
]



def _seed_value(seed: Any) -> int:
    """A seed as the unsigned 64-bit value PyTorch stores (negative seeds wrap around)."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(2**63) <= seed < 2**64:
        raise ValueError("Overflow when unpacking long long")
    return seed % 2**64


class Generator:
    """A source of random numbers with its own state, passed as ``generator=`` to samplers.

    It is PyTorch's CPU generator: the same seed gives the same numbers, and ``get_state``
    returns PyTorch's 5056-byte state.

    >>> import retrograd as torch
    >>> g = torch.Generator().manual_seed(42)
    >>> a = torch.rand(3, generator=g)
    >>> b = torch.rand(3, generator=g.manual_seed(42))
    >>> a.tolist() == b.tolist(), g.initial_seed()
    (True, 42)
    >>> torch.rand(2, generator=torch.Generator().manual_seed(0))
    tensor([0.4963, 0.7682])
    """

    def __init__(self, device: Any = "cpu") -> None:
        check_device(device)
        self._engine = Engine(DEFAULT_SEED)

    @property
    def device(self):
        return CPU

    def manual_seed(self, seed: int) -> Generator:
        """Reseed; returns the generator itself so that calls chain."""
        self._engine.reseed(_seed_value(seed))
        return self

    def seed(self) -> int:
        """Reseed from the operating system's entropy and return the new seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self._engine.reseed(s)
        return s

    def initial_seed(self) -> int:
        """The seed last set (by ``manual_seed`` or ``seed``)."""
        return self._engine.seed

    def get_state(self) -> Tensor:
        """The full state as a 1-D ``uint8`` tensor: PyTorch's ``CPUGeneratorImplState``."""
        return make(np.frombuffer(self._engine.to_bytes(), dtype=np.uint8).copy())

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state returned by ``get_state`` (retrograd's or PyTorch's)."""
        if not isinstance(new_state, Tensor):
            raise TypeError(
                f"expected a retrograd.ByteTensor, but got {type_name(new_state)}"
            )
        if new_state.dtype is not _dtypes.uint8:
            raise TypeError("RNG state must be a retrograd.ByteTensor")
        try:
            self._engine.from_bytes(np.ascontiguousarray(new_state._data).tobytes())
        except ValueError as e:
            raise RuntimeError(str(e)) from None
        return self

    def clone_state(self) -> Generator:
        """A new generator in the same state."""
        g = Generator()
        g._engine.copy_from(self._engine)
        return g

    def get_offset(self) -> int:
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset: int) -> Generator:
        raise RuntimeError("CPU Generator does not use offset")

    def __reduce__(self):
        return (Generator, ("cpu",), self._engine.to_bytes())

    def __setstate__(self, state: bytes) -> None:
        self._engine.from_bytes(state)

    def __repr__(self) -> str:
        return f"<retrograd.Generator object at {id(self):#x}>"


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator; returns it.

    >>> import retrograd as torch
    >>> g = torch.manual_seed(0)
    >>> a = torch.rand(2)
    >>> g = torch.manual_seed(0)
    >>> b = torch.rand(2)
    >>> a.tolist() == b.tolist(), torch.initial_seed()
    (True, 0)
    """
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from the operating system's entropy; returns the seed.

    >>> import retrograd as torch
    >>> s = torch.seed()
    >>> s == torch.initial_seed()
    True
    """
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's seed.

    >>> import retrograd as torch
    >>> torch.manual_seed(7).initial_seed() == torch.initial_seed() == 7
    True
    """
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state as a ``uint8`` tensor.

    >>> import retrograd as torch
    >>> state = torch.get_rng_state()
    >>> a = torch.rand(2); torch.set_rng_state(state); b = torch.rand(2)
    >>> a.tolist() == b.tolist(), state.dtype
    (True, retrograd.uint8)
    """
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator's state from ``get_rng_state``.

    >>> import retrograd as torch
    >>> torch.set_rng_state(torch.get_rng_state())
    """
    default_generator.set_state(new_state)


# -- autograd: samples have zero gradient ------------------------------------------------------
class UniformBackward0(_ZeroGrad):
    pass


class NormalBackward0(_ZeroGrad):
    """normal_."""


class NormalBackward1(_ZeroGrad):
    """normal(Tensor mean, float std)."""


class NormalBackward2(_ZeroGrad):
    """normal(float mean, Tensor std)."""


class NormalBackward3(_ZeroGrad):
    """normal(Tensor mean, Tensor std)."""


class BernoulliBackward0(_ZeroGrad):
    """bernoulli(probabilities)."""


class BernoulliBackward1(_ZeroGrad):
    """bernoulli_(Tensor p)."""


class BernoulliBackward2(_ZeroGrad):
    """bernoulli_(float p)."""


class ExponentialBackward0(_ZeroGrad):
    pass


class GeometricBackward0(_ZeroGrad):
    pass


class LogNormalBackward0(_ZeroGrad):
    pass


class CauchyBackward0(_ZeroGrad):
    pass


class RandomBackward0(_ZeroGrad):
    """random_(from, to)."""


class RandomBackward1(_ZeroGrad):
    """random_(to)."""


class RandomBackward2(_ZeroGrad):
    """random_()."""


class PoissonBackward0(_ZeroGrad):
    pass


def _sampled(arr: np.ndarray, node_cls: type, *inputs: Any) -> Tensor:
    """``arr`` as a new tensor; with a zero-gradient node when an input requires grad."""
    return apply(node_cls, arr, *inputs)


def _fill(t: Tensor, values: np.ndarray, node_cls: type, p: Any = None) -> Tensor:
    """Write sampled ``values`` into ``t``; with a history to keep, as an in-place op whose
    node (``node_cls``) gives zero gradient to the old value (and to ``p``)."""
    if not recording(t, p):
        return _write(t, values)
    extra = () if p is None else (p,)

    def filled(old: Tensor, *args: Any) -> Tensor:
        return apply(node_cls, values, old, *args)

    return apply_inplace(t, filled, *extra)


# -- helpers -----------------------------------------------------------------------------------
def _engine(generator: Generator | None) -> Engine:
    if generator is None:
        return default_generator._engine
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a retrograd.Generator, but got {type_name(generator)}")
    return generator._engine


def _walk(arr: np.ndarray) -> tuple | None:
    """The order in which PyTorch's kernels visit the elements of ``arr``: its dimensions by
    decreasing stride (memory order), as a permutation; ``None`` for plain C order."""
    if arr.ndim < 2 or arr.flags.c_contiguous:
        return None
    order = sorted(range(arr.ndim), key=lambda d: -abs(arr.strides[d]) if arr.shape[d] > 1
                   else 0)
    return None if order == list(range(arr.ndim)) else tuple(order)


def _place(flat: np.ndarray, shape: tuple, walk: tuple | None) -> np.ndarray:
    """Samples drawn in ``walk`` order, arranged as an array of ``shape``."""
    if walk is None:
        return flat.reshape(shape)
    return flat.reshape([shape[d] for d in walk]).transpose(np.argsort(walk))


def _gather(arr: np.ndarray, walk: tuple | None) -> np.ndarray:
    """The elements of ``arr`` in ``walk`` order, flat."""
    if walk is None:
        return arr.reshape(-1)
    return arr.transpose(walk).reshape(-1)


def _like_walk(input: Tensor, memory_format: Any, fname: str) -> tuple | None:  # noqa: A002
    """The walk of ``fname(input, memory_format=...)``: the result's memory order."""
    return _mf.like_order(input._data, memory_format, fname)


def _not_implemented(kernel: str, dt: dtype) -> NotImplementedError:
    return NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_name}'")


def _float_only(dt: dtype, kernel: str) -> None:
    if not dt.is_floating_point:
        raise _not_implemented(kernel, dt)


def _digits(dt: dtype) -> int:
    """Mantissa digits of a float dtype (the C++ ``numeric_limits<T>::digits``)."""
    return {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}[dt.name]


def _cast(values: np.ndarray, dt: dtype) -> np.ndarray:
    """Sampled values as ``dt``, as C++'s ``static_cast`` converts them."""
    with np.errstate(all="ignore"):
        return values.astype(dt.np)


def _as_float(x: Any, name: str, arg: str) -> float:
    return float(number(x, name, arg))


def _broadcast_shape(a: tuple, b: tuple) -> tuple:
    """NumPy's broadcast shape, with PyTorch's message when the shapes do not match."""
    n = max(len(a), len(b))
    a2 = (1,) * (n - len(a)) + tuple(a)
    b2 = (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(a2, b2)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {i}"
            )
        out.append(y if x == 1 else x)
    return tuple(out)


def _int_arg(x: Any, name: str, arg: str, pos: int) -> int:
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be int, not bool")
    try:
        v = operator.index(x)
    except TypeError:
        raise TypeError(
            f"{name}(): argument '{arg}' (position {pos}) must be int, not {type_name(x)}"
        ) from None
    if not -(2**63) <= v < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return v


def _check_random_range(lo: int, hi: int, dt: dtype) -> None:
    """PyTorch's checks on a ``[lo, hi)`` range of integers for ``dt``."""
    if lo >= hi:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}"
        )
    cname = dt.c_name
    if dt.is_floating_point:
        digits = _digits(dt)
        bound = 2**digits
        for label, v in (("from", lo), ("to - 1", hi - 1)):
            if not -bound <= v <= bound:
                warnings.warn(
                    f"{label} is out of bounds [-(2^{digits}), 2^{digits}]. {cname} holds "
                    "every integer only within this range, so sampled values may be rounded.",
                    UserWarning, stacklevel=3,
                )
        return
    if dt is _dtypes.bool:
        vmin, vmax = 0, 1
    else:
        info = np.iinfo(dt.np)
        vmin, vmax = int(info.min), int(info.max)
    if not vmin <= lo <= vmax:
        raise RuntimeError(f"from is out of bounds for {cname}")
    if not vmin <= hi - 1 <= vmax:
        raise RuntimeError(f"to - 1 is out of bounds for {cname}")


# -- sampling factories ------------------------------------------------------------------------
def rand(*size: Any, generator: Generator | None = None, out: Tensor | None = None,
         dtype: Any = None, layout: Any = None, device: Any = None,
         requires_grad: bool = False, pin_memory: bool = False, **kwargs: Any) -> Tensor:
    """Samples from the uniform distribution on ``[0, 1)``.

    >>> import retrograd as torch
    >>> x = torch.rand(2, 3)
    >>> x.shape, x.dtype, all(0 <= v < 1 for row in x.tolist() for v in row)
    (retrograd.Size([2, 3]), retrograd.float32, True)
    """
    check_device(device)
    shape = parse_size(size, kwargs, "rand")
    dt = resolve_dtype(dtype, out, get_default_dtype())
    _float_only(dt, "check_uniform_bounds")
    u = _dists.uniform(_engine(generator), math.prod(shape), dt.np, 0.0, 1.0)
    return finish(u.reshape(shape), requires_grad, out, "rand")


def randn(*size: Any, generator: Generator | None = None, out: Tensor | None = None,
          dtype: Any = None, layout: Any = None, device: Any = None,
          requires_grad: bool = False, pin_memory: bool = False, **kwargs: Any) -> Tensor:
    """Samples from the standard normal distribution.

    >>> import retrograd as torch
    >>> torch.randn(4, dtype=torch.float64).dtype
    retrograd.float64
    """
    check_device(device)
    shape = parse_size(size, kwargs, "randn")
    dt = resolve_dtype(dtype, out, get_default_dtype())
    _float_only(dt, "normal_kernel_cpu")
    z = _dists.normal(_engine(generator), math.prod(shape), dt.np, 0.0, 1.0, True)
    return finish(z.reshape(shape), requires_grad, out, "randn")


def _randint_bounds(args: tuple, kwargs: dict, name: str, first_pos: int) -> tuple:
    """``(low, high)`` from ``(high)`` or ``(low, high)`` given positionally or by keyword."""
    low = kwargs.pop("low", None)
    high = kwargs.pop("high", None)
    args = list(args)
    if high is None:
        if not args:
            raise TypeError(f"{name}() missing required argument 'high'")
        high = args.pop()
    if args:
        if low is not None or len(args) > 1:
            raise TypeError(f"{name}() received too many positional arguments")
        low = args[0]
    high_pos = first_pos if low is None else first_pos + 1
    low = 0 if low is None else _int_arg(low, name, "low", first_pos)
    return low, _int_arg(high, name, "high", high_pos)


def randint(*args: Any, size: Any = None, generator: Generator | None = None,
            out: Tensor | None = None, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
            **kwargs: Any) -> Tensor:
    """Uniform integers in ``[low, high)``: ``randint(high, size)`` or ``randint(low, high, size)``.

    The dtype is ``int64`` unless given.

    >>> import retrograd as torch
    >>> x = torch.randint(3, 10, (100,))
    >>> x.dtype, all(3 <= v < 10 for v in x.tolist())
    (retrograd.int64, True)
    """
    check_device(device)
    args = list(args)
    pos = len(args)
    if size is None:
        if not args:
            raise TypeError("randint() missing required argument 'size'")
        size = args.pop()
    shape = parse_size((size,), {}, "randint", varargs=False, pos=pos)
    low, high = _randint_bounds(tuple(args), kwargs, "randint", 1)
    if kwargs:
        raise TypeError(f"randint() got an unexpected keyword argument '{next(iter(kwargs))}'")
    dt = resolve_dtype(dtype, out, _dtypes.int64)
    _check_random_range(low, high, dt)
    arr = _dists.random_from_to(_engine(generator), math.prod(shape), high - low, low)
    return finish(_cast(arr, dt).reshape(shape), requires_grad, out, "randint")


def rand_like(input: Tensor, *, generator: Generator | None = None,  # noqa: A002
              dtype: Any = None, layout: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """``rand`` with the shape (and, unless given, the dtype) of ``input``.

    >>> import retrograd as torch
    >>> torch.rand_like(torch.zeros(2, dtype=torch.float64)).dtype
    retrograd.float64
    """
    check_tensor_arg(input, "rand_like")
    check_device(device)
    dt = input.dtype if dtype is None else to_dtype(dtype)
    _float_only(dt, "check_uniform_bounds")
    shape = input._data.shape
    u = _dists.uniform(_engine(generator), math.prod(shape), dt.np, 0.0, 1.0)
    return finish(_place(u, shape, _like_walk(input, memory_format, "rand_like")), requires_grad)


def randn_like(input: Tensor, *, generator: Generator | None = None,  # noqa: A002
               dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """``randn`` with the shape (and, unless given, the dtype) of ``input``.

    >>> import retrograd as torch
    >>> torch.randn_like(torch.zeros(2, 3)).shape
    retrograd.Size([2, 3])
    """
    check_tensor_arg(input, "randn_like")
    check_device(device)
    dt = input.dtype if dtype is None else to_dtype(dtype)
    _float_only(dt, "normal_kernel_cpu")
    shape = input._data.shape
    walk = _like_walk(input, memory_format, "randn_like")
    z = _dists.normal(_engine(generator), math.prod(shape), dt.np, 0.0, 1.0, walk is None)
    return finish(_place(z, shape, walk), requires_grad)


def randint_like(input: Tensor, *args: Any, generator: Generator | None = None,  # noqa: A002
                 dtype: Any = None, layout: Any = None, device: Any = None,
                 requires_grad: bool = False, memory_format: Any = None,
                 **kwargs: Any) -> Tensor:
    """``randint`` with the shape (and, unless given, the dtype) of ``input``:
    ``randint_like(input, high)`` or ``randint_like(input, low, high)``.

    >>> import retrograd as torch
    >>> torch.randint_like(torch.zeros(3, dtype=torch.int32), 5).dtype
    retrograd.int32
    """
    check_tensor_arg(input, "randint_like")
    check_device(device)
    low, high = _randint_bounds(args, kwargs, "randint_like", 2)
    if kwargs:
        raise TypeError(
            f"randint_like() got an unexpected keyword argument '{next(iter(kwargs))}'"
        )
    dt = input.dtype if dtype is None else to_dtype(dtype)
    _check_random_range(low, high, dt)
    shape = input._data.shape
    arr = _dists.random_from_to(_engine(generator), math.prod(shape), high - low, low)
    walk = _like_walk(input, memory_format, "randint_like")
    return finish(_place(_cast(arr, dt), shape, walk), requires_grad)


def randperm(n: int, *, generator: Generator | None = None, out: Tensor | None = None,
             dtype: Any = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (``int64`` unless given).

    >>> import retrograd as torch
    >>> sorted(torch.randperm(5).tolist())
    [0, 1, 2, 3, 4]
    """
    check_device(device)
    n = _int_arg(n, "randperm", "n", 1)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = resolve_dtype(dtype, out, _dtypes.int64)
    if dt is _dtypes.bool or dt in _dtypes.WIDE_UNSIGNED:
        raise _not_implemented("randperm", dt)
    if dt.is_floating_point:
        limit = 2 ** _digits(dt) + 1
        if n > limit:
            raise RuntimeError(
                f"n cannot be greater than {limit} for {dt.scalar_name} type."
            )
    elif n - 1 > np.iinfo(dt.np).max:
        raise RuntimeError(
            f"value cannot be converted to type {dt.cpp_name} without overflow"
        )
    arr = _dists.randperm(_engine(generator), n)
    return finish(arr.astype(dt.np), requires_grad, out, "randperm")


_NORMAL_FORMS = (
    "normal() takes (Tensor mean, Tensor std), (Tensor mean, float std=1), "
    "(float mean, Tensor std) or (float mean, float std, tuple of ints size); "
)


def normal(mean: Any, std: Any = 1.0, size: Any = None, *, generator: Generator | None = None,
           out: Tensor | None = None, dtype: Any = None, layout: Any = None,
           device: Any = None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Samples from normal distributions: tensor means and/or stds (broadcast), or a float
    ``mean`` and ``std`` with a ``size``.

    >>> import retrograd as torch
    >>> torch.normal(0.0, 1.0, (2, 3)).shape
    retrograd.Size([2, 3])
    >>> torch.normal(torch.zeros(4), 2.0).shape
    retrograd.Size([4])
    >>> torch.normal(torch.arange(3.0), 0.0)
    tensor([0., 1., 2.])
    """
    check_device(device)
    eng = _engine(generator)
    if size is not None:
        # with a size, 0-dim tensors stand for their numbers (the float, float, size form)
        mean = _as_float(mean, "normal", "mean")
        std = _as_float(std, "normal", "std")
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if mt or st:
        if dtype is not None or requires_grad:
            raise TypeError(
                _NORMAL_FORMS + "size=, dtype= and requires_grad= only go with the last form"
            )
        dt = mean.dtype if mt else std.dtype
        _float_only(dt, "normal_kernel_cpu")
        if st:
            s = std._data.astype(np.float64)
            if s.size and not (s >= 0).all():
                raise RuntimeError("normal expects all elements of std >= 0.0")
        else:
            s = _as_float(std, "normal", "std")
            if not s >= 0:
                raise RuntimeError(f"normal expects std >= 0.0, but found std {fmt_number(s)}")
        m = mean._data if mt else _as_float(mean, "normal", "mean")
        shape = _broadcast_shape(np.shape(m), np.shape(s))
        arr = _normal_tensors(eng, shape, dt, m, std._data if st else s)
        if out is not None:
            return finish(arr, False, out, "normal")
        if mt and st:
            return _sampled(arr, NormalBackward3, mean, std)
        return _sampled(arr, NormalBackward1 if mt else NormalBackward2, mean if mt else std)
    if size is None:
        raise TypeError(_NORMAL_FORMS + "a float mean and std need a size")
    m = _as_float(mean, "normal", "mean")
    s = _as_float(std, "normal", "std")
    if not s >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {fmt_number(s)}")
    shape = parse_size((size,), {}, "normal", varargs=False)
    dt = resolve_dtype(dtype, out, get_default_dtype())
    _float_only(dt, "normal_kernel_cpu")
    arr = _dists.normal(eng, math.prod(shape), dt.np, m, s, True).reshape(shape)
    return finish(arr, requires_grad, out, "normal")


def _normal_tensors(eng: Engine, shape: tuple, dt: dtype, mean: Any, std: Any) -> np.ndarray:
    """``normal`` with a tensor mean or std, as PyTorch composes it: standard normal samples
    (with a float std: ``N(0, std)``) into a fresh tensor, then ``mul_(std)`` for a tensor std
    and ``add_(mean)``, each rounded to the result's dtype."""
    n = math.prod(shape)
    if isinstance(std, np.ndarray):
        out = _dists.normal(eng, n, dt.np, 0.0, 1.0, True).reshape(shape)
        with np.errstate(all="ignore"):
            out = np.multiply(out, std, dtype=np.result_type(out, std)).astype(dt.np)
    else:
        out = _dists.normal(eng, n, dt.np, 0.0, std, True).reshape(shape)
    # a float mean becomes a 0-dim tensor of the result's dtype
    mean = np.asarray(mean, dt.np) if not isinstance(mean, np.ndarray) else mean
    with np.errstate(all="ignore"):
        return np.add(out, mean, dtype=np.result_type(out, mean)).astype(dt.np)


_P_IN_RANGE = "Expected p_in >= 0 && p_in <= 1 to be true, but got false."


def _bernoulli_scalar_p(p: Any) -> float:
    p = _as_float(p, "bernoulli", "p")
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={fmt_number(p)}")
    return p


def _bernoulli_tensor_p(p: Tensor) -> np.ndarray:
    if not p.dtype.is_floating_point:
        raise _not_implemented("bernoulli_tensor_cpu_p_", p.dtype)
    probs = p._data
    if probs.size and not ((probs >= 0) & (probs <= 1)).all():
        raise RuntimeError(_P_IN_RANGE)
    return probs


def _bernoulli_draws(eng: Engine, shape: tuple, probs: Any, walk: tuple | None) -> np.ndarray:
    """0/1 draws (bool) for an array of ``shape``, visited in ``walk`` order: a tensor ``probs``
    broadcast to the shape, or one float."""
    n = math.prod(shape)
    if isinstance(probs, np.ndarray):
        flat = _dists.bernoulli_tensor(eng, _gather(np.broadcast_to(probs, shape), walk))
    else:
        flat = _dists.bernoulli_scalar(eng, n, probs)
    return _place(flat, shape, walk)


_NO_P = object()


def _bernoulli_forms(p: Any) -> TypeError:
    return TypeError(
        f"bernoulli() received an invalid combination of arguments - got (Tensor, "
        f"{type_name(p)}), but expected one of:\n * (Tensor input, *, torch.Generator generator "
        "= None, Tensor out = None)\n * (Tensor input, float p, *, torch.Generator generator "
        "= None)\n"
    )


def bernoulli(input: Tensor, p: Any = _NO_P, *,  # noqa: A002
              generator: Generator | None = None, out: Tensor | None = None) -> Tensor:
    """Draws 0 or 1 for each element: with probability ``input`` (a float tensor), or ``p``
    for every element when ``p`` is given. The result has ``input``'s shape and dtype.

    >>> import retrograd as torch
    >>> torch.bernoulli(torch.tensor([0.0, 1.0, 1.0]))
    tensor([0., 1., 1.])
    >>> torch.bernoulli(torch.zeros(3, dtype=torch.int64), 1.0)
    tensor([1, 1, 1])
    """
    check_tensor_arg(input, "bernoulli")
    if p is _NO_P:
        probs = _bernoulli_tensor_p(input)
    else:
        # only a number (or a 0-dim tensor standing for one) goes with input
        if isinstance(p, Tensor) and p._data.ndim != 0 or not isinstance(
                p, (Tensor, int, float, np.integer, np.floating, np.bool_)):
            raise _bernoulli_forms(p)
        probs = _bernoulli_scalar_p(p)
    draws = _bernoulli_draws(_engine(generator), input._data.shape, probs, None)
    arr = draws.astype(input._data.dtype)
    if out is not None:
        return finish(arr, False, out, "bernoulli")
    if p is _NO_P:
        return _sampled(arr, BernoulliBackward0, input)
    # PyTorch has no derivative for bernoulli(input, p): it records a node that says so.
    return apply(NotImplementedBackward, arr, input, _op="bernoulli")


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,  # noqa: A002
                generator: Generator | None = None, out: Tensor | None = None) -> Tensor:
    """Sample category indices from each row of unnormalised probabilities (1-D or 2-D).

    Without replacement no index repeats within a row; zero-probability categories come only
    after every positive one has been drawn.

    >>> import retrograd as torch
    >>> torch.multinomial(torch.tensor([0.0, 1.0, 0.0]), 1)
    tensor([1])
    >>> torch.multinomial(torch.ones(2, 5), 3).shape
    retrograd.Size([2, 3])
    """
    check_tensor_arg(input, "multinomial")
    num_samples = _int_arg(num_samples, "multinomial", "num_samples", 2)
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "multinomial only supports floating-point dtypes for input, got: "
            f"{input.dtype.scalar_name}"
        )
    p = input._data
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    n_cat = p.shape[-1]
    if not replacement and num_samples > n_cat:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if n_cat > 2**24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    rows = p.reshape(-1, n_cat).astype(np.float64)
    if rows.size and not (np.isfinite(rows).all() and (rows >= 0).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    totals = rows.sum(axis=1)
    if (totals <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    eng = _engine(generator)
    if replacement and num_samples > 1:
        res = _dists.multinomial_with_replacement(eng, p.reshape(-1, n_cat), num_samples)
    else:
        # PyTorch's fast path: argmax (or top k) of p / q with q ~ Exp(1), drawn into a tensor
        # like the input, which is a sample without replacement weighted by p
        q = _place(_cast(_dists.exponential(eng, p.size, 1.0), input.dtype), p.shape,
                   _walk(p))
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = (p / q).astype(p.dtype).reshape(-1, n_cat)
        if num_samples == 1:
            res = np.argmax(keys, axis=1)[:, None]
        else:
            res = np.array([_stl.topk_largest(row, num_samples) for row in keys],
                           np.int64).reshape(-1, num_samples)
        res = res.astype(np.int64)
    arr = res.reshape(p.shape[:-1] + (num_samples,))
    return finish(arr, False, out, "multinomial")


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Samples from Poisson distributions with the rates in ``input`` (same shape and dtype).

    >>> import retrograd as torch
    >>> torch.poisson(torch.zeros(3))
    tensor([0., 0., 0.])
    """
    check_tensor_arg(input, "poisson")
    _float_only(input.dtype, "poisson_cpu")
    lam = input._data.astype(np.float64)
    if lam.size and not (lam >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    res = _dists.poisson(_engine(generator), lam.reshape(-1)).reshape(lam.shape)
    return _sampled(res.astype(input._data.dtype), PoissonBackward0, input)


def binomial(count: Tensor, prob: Tensor, generator: Generator | None = None) -> Tensor:
    """Samples from binomial distributions with ``count`` trials of probability ``prob``
    (float tensors of one dtype, broadcast together).

    >>> import retrograd as torch
    >>> torch.binomial(torch.tensor([0., 4.]), torch.tensor([0.5, 1.0]))
    tensor([0., 4.])
    """
    check_tensor_arg(count, "binomial")
    check_tensor_arg(prob, "binomial")
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{count.dtype.scalar_name}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {prob.dtype.scalar_name} but expected "
                           f"{count.dtype.scalar_name}")
    if count._data.dtype.itemsize < 4:  # float16, bfloat16: no kernel in PyTorch
        raise _not_implemented("binomial_cpu", count.dtype)
    shape = _broadcast_shape(tuple(count.shape), tuple(prob.shape))
    np_dt = count._data.dtype
    n = np.broadcast_to(count._data, shape).reshape(-1)
    p = np.broadcast_to(prob._data, shape).reshape(-1)
    res = _dists.binomial(_engine(generator), n, p, np_dt.type).reshape(shape).astype(np_dt)
    inputs = [t for t in (count, prob) if t.requires_grad]  # PyTorch's edges: those alone
    if inputs and recording(*inputs):
        return apply(NotImplementedBackward, res, *inputs, _op="binomial")
    return make(res)


# -- in-place fillers --------------------------------------------------------------------------
def _check_inplace(t: Any, name: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): expected a retrograd.Tensor, got {type_name(t)}")
    # PyTorch's checks come before any sampling (the generator's state stays as it was).
    if recording(t):
        _check_leaf(t)
    _check_writable(t)


def _write(t: Tensor, values: np.ndarray) -> Tensor:
    # writing through the existing array keeps views of it in step
    with np.errstate(all="ignore"):
        t._data[...] = values
    t._vc[0] += 1
    return t


def _drawn(t: Tensor, draw: Any) -> np.ndarray:
    """Samples for ``t``: ``draw(n, contiguous)`` returns them flat, in the order PyTorch's
    kernel visits ``t``'s elements, and they are arranged in ``t``'s shape."""
    arr = t._data
    walk = _walk(arr)
    flat = draw(arr.size, walk is None and arr.flags.c_contiguous)
    return _place(flat, arr.shape, walk)


def _from_to(a: Any, b: Any, kwargs: dict, name: str) -> tuple:
    # PyTorch's keywords are ``from`` and ``to``; ``from`` cannot be a Python parameter name.
    a = kwargs.pop("from", a)
    b = kwargs.pop("to", b)
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return a, b


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Generator | None = None,
             **kwargs: Any) -> Tensor:
    """Fill ``t`` in place with samples from the uniform distribution on ``[a, b)``.

    >>> import retrograd as torch
    >>> from retrograd._random import uniform_
    >>> x = uniform_(torch.empty(1000), -2.0, 3.0)
    >>> all(-2 <= v < 3 for v in x.tolist())
    True
    """
    _check_inplace(t, "uniform_")
    a, b = _from_to(a, b, kwargs, "uniform_")
    a, b = _as_float(a, "uniform_", "from"), _as_float(b, "uniform_", "to")
    dt = t.dtype
    _float_only(dt, "check_uniform_bounds")
    cname = dt.c_name
    fmax = _dtypes.finfo(dt).max
    if not -fmax <= a <= fmax:
        raise RuntimeError(f"from is out of bounds for {cname}")
    if not -fmax <= b <= fmax:
        raise RuntimeError(f"to is out of bounds for {cname}")
    if a > b:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={fmt_number(a)} "
            f"> to={fmt_number(b)}"
        )
    if b - a > fmax:
        raise RuntimeError(
            f"uniform_ expects to-from <= std::numeric_limits<{dt.scalar_name}>::max(), "
            f"but found to={fmt_number(b)} and from={fmt_number(a)} which result in to-from "
            "to exceed the limit"
        )
    eng = _engine(generator)
    vals = _drawn(t, lambda n, _c: _dists.uniform(eng, n, dt.np, a, b))
    return _fill(t, vals, UniformBackward0)


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    """Fill ``t`` in place with samples from a normal distribution.

    >>> import retrograd as torch
    >>> from retrograd._random import normal_
    >>> normal_(torch.empty(2, 3), 5.0, 0.0)
    tensor([[5., 5., 5.],
            [5., 5., 5.]])
    """
    _check_inplace(t, "normal_")
    _float_only(t.dtype, "normal_kernel_cpu")
    m, s = _as_float(mean, "normal_", "mean"), _as_float(std, "normal_", "std")
    if not s >= 0 and not math.isnan(s):
        raise RuntimeError(f"normal expects std >= 0.0, but found std {fmt_number(s)}")
    eng = _engine(generator)
    vals = _drawn(t, lambda n, contiguous: _dists.normal(eng, n, t.dtype.np, m, s, contiguous))
    return _fill(t, vals, NormalBackward0)


def bernoulli_(t: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> Tensor:
    """Fill ``t`` in place with 0/1 draws, 1 with probability ``p`` (a float or a tensor
    broadcastable to ``t``).

    >>> import retrograd as torch
    >>> from retrograd._random import bernoulli_
    >>> bernoulli_(torch.zeros(3, dtype=torch.int64), 1.0)
    tensor([1, 1, 1])
    """
    _check_inplace(t, "bernoulli_")
    shape = t._data.shape
    if isinstance(p, Tensor):
        probs = _bernoulli_tensor_p(p)
        try:
            np.broadcast_to(probs, shape)
        except ValueError:
            raise RuntimeError(_expand_message(probs.shape, shape)) from None
        node_cls, p_arg = BernoulliBackward1, p
    else:
        probs = _bernoulli_scalar_p(p)
        node_cls, p_arg = BernoulliBackward2, None
    draws = _bernoulli_draws(_engine(generator), shape, probs, _walk(t._data))
    return _fill(t, draws.astype(t._data.dtype), node_cls, p_arg)


def _expand_message(src: tuple, dst: tuple) -> str:
    for i in range(1, len(dst) + 1):
        j = len(src) - i
        if j >= 0 and src[j] != 1 and src[j] != dst[-i]:
            return (
                f"The expanded size of the tensor ({dst[-i]}) must match the existing size "
                f"({src[j]}) at non-singleton dimension {len(dst) - i}.  Target sizes: "
                f"{list(dst)}.  Tensor sizes: {list(src)}"
            )
    return (
        f"the number of sizes provided ({len(dst)}) must be greater or equal to the number of "
        f"dimensions in the tensor ({len(src)})"
    )


def exponential_(t: Tensor, lambd: float = 1.0, *,
                 generator: Generator | None = None) -> Tensor:
    """Fill ``t`` in place with samples from the exponential distribution of rate ``lambd``.

    >>> import retrograd as torch
    >>> from retrograd._random import exponential_
    >>> min(exponential_(torch.empty(100), 2.0).tolist()) >= 0
    True
    """
    _check_inplace(t, "exponential_")
    dt = t.dtype
    if not dt.is_floating_point:
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must be "
            f"a floating point but you specified {dt.scalar_name}"
        )
    lam = _as_float(lambd, "exponential_", "lambd")
    if not lam > 0:
        raise RuntimeError(
            f"exponential_ expects lambda > 0.0, but found lambda={fmt_number(lam)}"
        )
    eng = _engine(generator)
    vals = _drawn(t, lambda n, _c: _cast(_dists.exponential(eng, n, lam), dt))
    return _fill(t, vals, ExponentialBackward0)


def geometric_(t: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """Fill ``t`` in place with the number of Bernoulli(``p``) trials up to the first success.

    >>> import retrograd as torch
    >>> from retrograd._random import geometric_
    >>> min(geometric_(torch.zeros(100, dtype=torch.int64), 0.5).tolist()) >= 1
    True
    """
    _check_inplace(t, "geometric_")
    p = _as_float(p, "geometric_", "p")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={fmt_number(p)}")
    eng = _engine(generator)
    vals = _drawn(t, lambda n, _c: _cast(_dists.geometric(eng, n, p), t.dtype))
    return _fill(t, vals, GeometricBackward0)


def log_normal_(t: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator: Generator | None = None) -> Tensor:
    """Fill ``t`` in place with ``exp(N(mean, std))`` samples.

    >>> import retrograd as torch
    >>> from retrograd._random import log_normal_
    >>> min(log_normal_(torch.empty(100)).tolist()) > 0
    True
    """
    _check_inplace(t, "log_normal_")
    _float_only(t.dtype, "log_normal_cpu")
    m, s = _as_float(mean, "log_normal_", "mean"), _as_float(std, "log_normal_", "std")
    if not s > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={fmt_number(s)}")
    eng = _engine(generator)
    vals = _drawn(t, lambda n, _c: _cast(_dists.log_normal(eng, n, m, s), t.dtype))
    return _fill(t, vals, LogNormalBackward0)


def cauchy_(t: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    """Fill ``t`` in place with samples from the Cauchy distribution.

    >>> import retrograd as torch
    >>> from retrograd._random import cauchy_
    >>> cauchy_(torch.empty(2, 2)).shape
    retrograd.Size([2, 2])
    """
    _check_inplace(t, "cauchy_")
    if not t.dtype.is_floating_point:
        raise RuntimeError(
            "Cauchy distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {t.dtype.scalar_name}"
        )
    m, s = _as_float(median, "cauchy_", "median"), _as_float(sigma, "cauchy_", "sigma")
    if not s > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={fmt_number(s)}")
    eng = _engine(generator)
    vals = _drawn(t, lambda n, _c: _cast(_dists.cauchy(eng, n, m, s), t.dtype))
    return _fill(t, vals, CauchyBackward0)


_UNSET = object()


def random_(t: Tensor, from_: Any = None, to: Any = _UNSET, *,
            generator: Generator | None = None, **kwargs: Any) -> Tensor:
    """Fill ``t`` in place with uniform integers, as PyTorch's ``random_``:

    ``random_(t)`` covers ``[0, max]`` of the dtype (``[0, 2**mantissa_bits]`` for floats),
    ``random_(t, to)`` covers ``[0, to)``, ``random_(t, from_, to)`` covers ``[from_, to)`` and
    ``random_(t, from_, None)`` covers ``[from_, max]``.

    >>> import retrograd as torch
    >>> from retrograd._random import random_
    >>> x = random_(torch.zeros(100, dtype=torch.int32), 5, 8)
    >>> sorted(set(x.tolist())) <= [5, 6, 7]
    True
    """
    _check_inplace(t, "random_")
    if "from" in kwargs:
        from_ = kwargs.pop("from")
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    dt = t.dtype
    if dt.is_floating_point:
        top = 2 ** _digits(dt)
    elif dt is _dtypes.bool:
        top = 1
    else:
        top = int(np.iinfo(dt.np).max)
    if to is _UNSET:
        if from_ is None:
            lo, hi, node_cls = 0, top + 1, RandomBackward2
        else:  # random_(to)
            lo, hi, node_cls = 0, _int_arg(from_, "random_", "to", 1), RandomBackward1
    else:
        node_cls = RandomBackward0
        lo = 0 if from_ is None else _int_arg(from_, "random_", "from", 1)
        hi = top + 1 if to is None else _int_arg(to, "random_", "to", 2)
        if to is None and lo > top:
            raise RuntimeError(
                f"random_ expects 'from' casted to dtype to be less than or equal to 'to' "
                f"casted to dtype, but got from={lo} > to={top}"
            )
    eng = _engine(generator)
    if to is None and lo == -(2**63):
        # PyTorch's special case: the whole 64-bit range, one 64-bit draw per element
        if dt not in (_dtypes.int64, _dtypes.float32, _dtypes.float64, _dtypes.bfloat16):
            raise RuntimeError(
                "random_full_64_bits_range_kernel_cpu handles only int64, double, float and "
                "bfloat16"
            )
        vals = _drawn(t, lambda n, _c: _cast(_dists.random_full_64(eng, n), dt))
        return _fill(t, vals, node_cls)
    _check_random_range(lo, hi, dt)
    if node_cls is RandomBackward2:
        vals = _drawn(t, lambda n, _c: _cast(_dists.random_default(eng, n, dt), dt))
    else:
        vals = _drawn(t, lambda n, _c: _cast(_dists.random_from_to(eng, n, hi - lo, lo), dt))
    return _fill(t, vals, node_cls)


TENSOR_METHODS = {
    "uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_,
    "exponential_": exponential_, "geometric_": geometric_, "log_normal_": log_normal_,
    "cauchy_": cauchy_, "random_": random_, "bernoulli": bernoulli, "multinomial": multinomial,
}
"""The functions here that PyTorch also has as Tensor methods, by method name."""
