"""``vmap``, as in ``torch.func``: ``in_dims``, ``out_dims``, nesting, ``chunk_size`` and
``randomness``.

The function runs once, on one sample, while a tape records its primitive calls
(``_trace``); the tape then runs once on the whole batch, each primitive through its batching
rule (``_batching``, ``_rules``): NumPy does the per-sample work in one call per primitive.
Where that cannot be done faithfully (an op without a rule, Python reading a traced value, an
in-place op, randomness that must differ per sample, a value computed from the data outside
the recorded calls), the function runs once per sample and the results are stacked, with
PyTorch's performance warning when a rule is missing: the results are the same either way.
"""

from __future__ import annotations

import functools
import warnings

from .. import _random
from .._creation import zeros
from .._tensor import Tensor
from ..ops._views import select, slice_dim
from ..ops.join import cat, stack
from ..ops.shape import expand, movedim
from ._batching import NoRule, lookup, replay
from ._pytree import broadcast_to_and_flatten, flatten, spec_repr, unflatten
from ._trace import Tape, same_program, same_ref

# How the last vmap call ran: "rules" or "loop", and why it looped (the tests read it).
LAST = {"path": None, "reason": None}

_RANDOM_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
    "of vmap"
)

__all__ = ["vmap"]


def _name(func) -> str:
    return getattr(func, "__name__", repr(func))


def _dims_for(func, in_dims, args, spec):
    """One in_dim (int or None) per leaf of ``args``, with PyTorch's checks and messages."""
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
            f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}."
        )
    if not args:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
            "trying to vmap over a function with no inputs. The latter is unsupported."
        )
    dims = broadcast_to_and_flatten(in_dims, spec)
    if dims is None:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
            f"structure of `inputs`. in_dims has structure {spec_repr(flatten(in_dims)[1])} but "
            f"inputs has structure {spec_repr(spec)}."
        )
    for d in dims:
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input "
                "but in_dim must be either an integer dimension or None."
            )
    return dims


def _out_dims_for(func, out_dims, spec):
    ods = broadcast_to_and_flatten(out_dims, spec)
    if ods is None:
        raise ValueError(
            f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
            f"compatible with the structure of `outputs`. out_dims has structure "
            f"{spec_repr(flatten(out_dims)[1])} but outputs has structure {spec_repr(spec)}."
        )
    return ods


def _not_tensor(func, x):
    name = _name(func)
    return ValueError(
        f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(x)}. Did you "
        "mean to set out_dims= to None for output?"
    )


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """Map ``func`` over a dimension of its inputs: ``vmap(f)(x)[i] == f(x[i])``.

    >>> import retrograd as torch
    >>> vmap(torch.dot)(torch.ones(3, 2), torch.arange(6.0).view(3, 2))
    tensor([1., 5., 9.])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        flat, spec = flatten(args)
        dims = _dims_for(func, in_dims, args, spec)
        sizes = []
        for x, d in zip(flat, dims):
            if d is None:
                continue
            if not isinstance(x, Tensor):
                raise ValueError(
                    f"vmap({getattr(func, '__name__', 'f')}, in_dims={in_dims}, ...)(<inputs>): "
                    f"Got in_dim={d} for an input but the input is of type {type(x)}. We cannot "
                    "vmap over non-Tensor arguments, please use None as the respective in_dim"
                )
            n = x.dim()
            if not -n <= d < n:
                raise ValueError(
                    f"vmap({getattr(func, '__name__', 'f')}, in_dims={in_dims}, ...)(<inputs>): "
                    f"Got in_dim={d} for some input, but that input is a Tensor of "
                    f"dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim < {n}."
                )
            sizes.append(x.shape[d])
        if not sizes:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        if any(n != sizes[0] for n in sizes):
            raise ValueError(
                "vmap: Expected all tensors to have the same size in the mapped dimension, got "
                f"sizes {sizes} for the mapped dimension"
            )
        B = sizes[0]
        if B == 0:
            return _empty_batch(func, flat, spec, dims, kwargs, out_dims)
        state = _rng_state(randomness)
        done: dict = {}  # sample -> the output of a traced run of it, reused by the loop
        fast = _batched(func, flat, spec, dims, B, kwargs, randomness, state, chunk_size, done)
        if fast is not None:
            return _assemble(func, fast, out_dims, B)
        if randomness == "different":
            state = None
        results = []
        for b in range(B):
            # A traced run is a real run of the sample (its in-place writes, its backward()
            # happened): running it again would do them twice.
            if b in done:
                results.append(done[b])
                continue
            if randomness == "same":
                _random.set_rng_state(state)
            sample = [x if d is None else select(x, d, b) for x, d in zip(flat, dims)]
            out = func(*unflatten(sample, spec), **kwargs)
            if randomness == "error" and not _same_state(state, _rng_state(randomness)):
                raise RuntimeError(_RANDOM_ERROR)
            results.append(out)
        flat_outs = [flatten(r)[0] for r in results]
        out_spec = flatten(results[0])[1]
        ods = _out_dims_for(func, out_dims, out_spec)
        stacked = []
        for i, od in enumerate(ods):
            leaves = [fo[i] for fo in flat_outs]
            if od is None:
                stacked.append(leaves[0])
                continue
            if not isinstance(leaves[0], Tensor):
                raise _not_tensor(func, leaves[0])
            s = stack(leaves)
            if od != 0:
                s = movedim(s, 0, od)
            stacked.append(s)
        return unflatten(stacked, out_spec)

    return wrapper


def _rng_state(randomness: str):
    """The default generator's state, to restore it ("same", "different"); for "error", which
    only asks whether anything drew, its cheap token (``_mt.Engine.token``) instead: reading
    the state bytes was a tenth of a small vmap(grad) call."""
    if randomness == "error":
        return _random.default_generator._engine.token()
    return _random.get_rng_state()


def _same_state(a, b) -> bool:
    if a is None:
        return True
    if isinstance(a, tuple):  # tokens: the same count and the same cached normals
        return a[0] == b[0] and a[1] is b[1] and a[2] is b[2]
    return bool((a == b).all())


def _trace(func, flat, spec, dims, b, kwargs):
    """Run ``func`` on sample ``b`` under a new tape: ``(tape, flat outputs, output spec)``."""
    sample = [x if d is None else select(x, d, b) for x, d in zip(flat, dims)]
    tape = Tape(len(flat) and next((x.shape[d] for x, d in zip(flat, dims) if d is not None), 0))
    for x, d in zip(sample, dims):
        if isinstance(x, Tensor):
            tape.inputs.append(tape.new(x))
            if d is not None:
                tape.batched.add(tape.inputs[-1])
    tape.start()
    try:
        out = func(*unflatten(sample, spec), **kwargs)
    finally:
        tape.stop()
    flat_out, out_spec = flatten(out)
    tape.out_refs = [tape.ref(o) if isinstance(o, Tensor) else None for o in flat_out]
    tape.out = out
    return tape, flat_out, out_spec


def _loop(reason: str):
    LAST["path"], LAST["reason"] = "loop", reason


def _batched(func, flat, spec, dims, B, kwargs, randomness, state, chunk_size, done):
    """The fast path: trace one sample, replay on the batch. ``(outputs as (physical
    tensor, batched) pairs, output spec, traced outputs)``, or None to run the loop; ``done``
    receives the outputs of the samples traced (the loop reuses them)."""
    if B == 0:
        return _loop("an empty batch")
    tape, flat_out, out_spec = _trace(func, flat, spec, dims, 0, kwargs)
    done[0] = tape.out
    moved = not _same_state(state, _rng_state(randomness))
    if moved:
        if randomness == "error":
            raise RuntimeError(_RANDOM_ERROR)
        if randomness == "different":  # each sample its own draws, in the loop's order
            return _loop("randomness='different'")
    if tape.bad is not None:
        return _loop(tape.bad)
    if any(r is None for r in tape.out_refs):
        return _loop("an output that is not a tensor")
    if tape.externals and B > 1:
        # Values from outside the recorded calls: constants, unless they change with the data.
        if moved:
            _random.set_rng_state(state)
        tape2, _, _ = _trace(func, flat, spec, dims, B - 1, kwargs)
        if randomness != "different":  # (the loop draws "different" numbers in sample order)
            done[B - 1] = tape2.out
        if tape2.bad is not None or not same_program(tape, tape2) or not all(
                same_ref(a, b, tape, tape2) for a, b in zip(tape.out_refs, tape2.out_refs)):
            return _loop("a value made during the call outside the recorded calls")
    phys = [(x if d == 0 else movedim(x, d, 0), True) if d is not None else (x, False)
            for x, d in zip(flat, dims) if isinstance(x, Tensor)]
    step = B if chunk_size is None else chunk_size
    chunks = []
    try:
        for lo in range(0, B, step):
            hi = min(B, lo + step)
            ins = [(slice_dim(x, 0, lo, hi) if b and (lo, hi) != (0, B) else x, b)
                   for x, b in phys]
            vals = replay(tape, ins, hi - lo)
            chunks.append([lookup(tape, vals, r) for r in tape.out_refs])
    except NoRule as e:
        warnings.warn(
            "There is a performance drop because we have not yet implemented the batching "
            f"rule for {e.args[0]}. Please file us an issue on GitHub so that we can "
            "prioritize its implementation.", UserWarning, stacklevel=3)
        return _loop(f"no batching rule: {e.args[0]}")
    except Exception as e:  # noqa: BLE001 - a rule that cannot batch this call: the loop can
        return _loop(f"replay error: {type(e).__name__}: {e}")
    outs = []
    for i, o in enumerate(flat_out):
        parts = [c[i] for c in chunks]
        if any(b for _, b in parts):
            x = cat([p if b else expand(p, (hi - lo,) + tuple(p.shape))
                     for (p, b), (lo, hi) in zip(parts, _ranges(B, step))]) \
                if len(parts) > 1 else parts[0][0]
            if not o.requires_grad and x.requires_grad:
                x = x.detach()
            outs.append((x, True))
        else:
            outs.append((parts[0][0], False))
    LAST["path"], LAST["reason"] = "rules", None
    return outs, out_spec, flat_out


def _ranges(B, step):
    return [(lo, min(B, lo + step)) for lo in range(0, B, step)]


def _assemble(func, fast, out_dims, B):
    outs, out_spec, _ = fast
    name = _name(func)
    ods = _out_dims_for(func, out_dims, out_spec)
    res = []
    for (x, b), od in zip(outs, ods):
        if od is None:
            if b:
                raise ValueError(
                    f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is "
                    "None")
            res.append(x)
            continue
        s = x if b else stack([x] * B)
        res.append(movedim(s, 0, od) if od != 0 else s)
    return unflatten(res, out_spec)


def _empty_batch(func, flat, spec, dims, kwargs, out_dims):
    """A batch of size 0: the function runs once on zeros of one sample's shape, for the
    outputs' shapes and dtypes; each output is empty along its out_dim."""
    sample = [x if d is None else zeros(tuple(x.shape[:d % x.dim()]) +
                                        tuple(x.shape[d % x.dim() + 1:]), dtype=x.dtype)
              for x, d in zip(flat, dims)]
    flat_out, out_spec = flatten(func(*unflatten(sample, spec), **kwargs))
    res = []
    for o, od in zip(flat_out, _out_dims_for(func, out_dims, out_spec)):
        if od is None:
            res.append(o)
            continue
        if not isinstance(o, Tensor):
            raise _not_tensor(func, o)
        e = zeros((0,) + tuple(o.shape), dtype=o.dtype)
        res.append(movedim(e, 0, od) if od != 0 else e)
    return unflatten(res, out_spec)
