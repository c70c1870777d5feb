"""``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd`` and ``hessian``, as in
``torch.func``: transforms of Python functions of tensors (or of nested tuples, lists and dicts
of tensors), built on the engine (reverse mode) and on ``autograd.forward_ad`` (forward mode).

The arguments a transform differentiates are replaced by fresh tensors that require grad: an
alias of the argument when the argument is itself tracked (by an outer ``grad``, or carrying a
forward-mode tangent), so that transforms compose (``jacfwd(jacrev(f))`` is forward over
reverse); then the engine differentiates, with ``create_graph=True`` when the results stay in
that outer graph. Results are detached unless an argument was tracked, so a plain call returns
plain tensors (and its backward records no graph).
"""

from __future__ import annotations

import functools

import numpy as np

from .. import _random
from .._tensor import Tensor, make
from ..autograd import forward_ad as _fw
from ..autograd.api import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad
from ..ops.join import stack
from ..ops.shape import reshape
from ._pytree import flatten, spec_pprint, spec_repr, unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize"]


def _zeros(t: Tensor) -> Tensor:
    return make(np.zeros_like(t._data))


def _tracked(x: Tensor) -> bool:
    return x.requires_grad or _fw.tangent_of(x) is not None


def _check_leaf(x) -> None:
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")


def _argnums(argnums, n: int) -> tuple:
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if not nums:
        raise RuntimeError("argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(
                f"argnums must be int or Tuple[int, ...], got: {type(argnums)}"
            )
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
    wrapped = tuple(a % n for a in nums)
    if isinstance(argnums, tuple) and len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {wrapped}")
    return wrapped


# The tape of a vmap being traced (func._trace.Tape), or None: it records the arguments the
# transforms differentiate and their gradients, rather than the backward's every op.
TRACE = None


def _track(x: Tensor) -> Tensor:
    """A fresh tensor equal to ``x`` to differentiate with respect to."""
    _check_leaf(x)
    if x.requires_grad:
        t = x.view_as(x)  # keeps the outer graph (and any tangent)
    else:
        t = x.detach()
        t.requires_grad_()
        t.__dict__["_func_leaf"] = True  # one of the transforms' own leaves (see _outer)
        tan = _fw.tangent_of(x)
        if tan is not None:
            t._fw = x._fw  # forward over reverse: the tangent rides along
    if TRACE is not None:
        TRACE.leaf(x, t)
    return t


def _prepare(args, argnums):
    """``(new args, tracked leaves per argnum, their specs, outer)``."""
    nums = _argnums(argnums, len(args))
    args = list(args)
    leaves, specs = [], []
    outer = any(_tracked(x) for x in flatten(args)[0] if isinstance(x, Tensor))
    for a in nums:
        flat, spec = flatten(args[a])
        flat = [_track(x) for x in flat]
        args[a] = unflatten(flat, spec)
        leaves.append(flat)
        specs.append(spec)
    return args, nums, leaves, specs, outer


def _outer(outer: bool, trees) -> bool:
    """Whether results stay in the outer graph: an argument was tracked, or the function's
    outputs reach a tensor that requires grad other than the transforms' own leaves (a module's
    parameter read from a closure: PyTorch's results then require grad, so that a loss of them,
    a physics-informed network's say, trains the parameters)."""
    if outer:
        return True
    stack = [t.grad_fn for tree in trees for t in flatten(tree)[0]
             if isinstance(t, Tensor) and t.grad_fn is not None]
    seen = set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None) if node.name().endswith("AccumulateGrad") else None
        if var is not None:
            if not var.__dict__.get("_func_leaf"):
                return True
            continue
        stack.extend(fn for fn, _ in node.next_functions)
    return False


def _grads(out, leaves, outer, grad_outputs=None):
    """Gradients of ``out`` (tensors) with respect to ``leaves`` (lists per argnum)."""
    if TRACE is not None:
        return TRACE.grads(_grads_plain, out, leaves, outer, grad_outputs)
    return _grads_plain(out, leaves, outer, grad_outputs)


def _grads_plain(out, leaves, outer, grad_outputs=None):
    flat = [x for group in leaves for x in group]
    outs = [o for o in out if o.requires_grad] if grad_outputs is None else out
    if grad_outputs is not None:
        pairs = [(o, g) for o, g in zip(out, grad_outputs) if o.requires_grad]
        outs = [o for o, _ in pairs]
        grad_outputs = [g for _, g in pairs]
    if outs:
        # The backward records a graph only when the results stay in one (``outer``): a plain
        # call detaches them, and recording a graph nobody keeps costs more than the backward.
        gs = _autograd_grad(outs, flat, grad_outputs, retain_graph=True,
                            create_graph=outer, allow_unused=True)
    else:
        gs = [None] * len(flat)
    gs = [_zeros(x) if g is None else (g if outer else g.detach()) for g, x in zip(gs, flat)]
    res, i = [], 0
    for group in leaves:
        res.append(gs[i:i + len(group)])
        i += len(group)
    return res


def _result(per_arg, specs, argnums):
    trees = tuple(unflatten(g, s) for g, s in zip(per_arg, specs))
    return trees if isinstance(argnums, tuple) else trees[0]


def _split_aux(out, has_aux: bool, api: str):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(
            f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True"
        )
    for x in flatten(out[1])[0]:  # PyTorch wraps every aux leaf as a tensor of the level
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
    return out


def _detach_tree(tree, outer: bool):
    if outer:
        return tree
    flat, spec = flatten(tree)
    return unflatten([x.detach() if isinstance(x, Tensor) else x for x in flat], spec)


def grad_and_value(func, argnums=0, has_aux: bool = False):
    """``func``'s gradient with respect to ``args[argnums]`` and its value.

    >>> import retrograd as torch
    >>> g, v = grad_and_value(lambda x: (x * x).sum())(torch.tensor([1.0, 2.0]))
    >>> g, v
    (tensor([2., 4.]), tensor(5.))
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        args, nums, leaves, specs, outer = _prepare(args, argnums)
        with enable_grad():
            out, aux = _split_aux(func(*args, **kwargs), has_aux, "grad_and_value(f)(*args)")
            if not isinstance(out, Tensor):
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                    f"{type(out)}"
                )
            if out.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                    f"tensor with {out.dim()} dims. Maybe you wanted to use the vjp or jacrev "
                    "APIs instead?"
                )
            outer = _outer(outer, (out, aux))
            per_arg = _grads([out], leaves, outer)
        value = out if outer else out.detach()
        g = _result(per_arg, specs, argnums)
        if has_aux:
            return g, (value, _detach_tree(aux, outer))
        return g, value

    return wrapper


def grad(func, argnums=0, has_aux: bool = False):
    """The gradient of a scalar function with respect to ``args[argnums]``.

    >>> import retrograd as torch
    >>> grad(lambda x: x.sin().sum())(torch.tensor([0.0]))
    tensor([1.])
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return wrapper


def vjp(func, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` gives one gradient per primal.

    >>> import retrograd as torch
    >>> out, fn = vjp(lambda x: x * 3, torch.tensor([1.0, 2.0]))
    >>> fn(torch.tensor([1.0, 1.0]))
    (tensor([3., 3.]),)
    """
    if primals:
        args, nums, leaves, specs, outer = _prepare(primals, tuple(range(len(primals))))
    else:  # nothing to differentiate: the function's value, and empty gradients
        args, leaves, specs, outer = (), [], [], False
    with enable_grad():
        out, aux = _split_aux(func(*args), has_aux, "vjp(f, *primals)")
    outer = _outer(outer, (out, aux))
    flat_out, out_spec = flatten(out)
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(
                f"vjp(f, *primals): expected f(*primals) to return only tensors, got "
                f"unsupported type {type(o)}"
            )

    def vjp_fn(cotangents):
        flat_ct, ct_spec = flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {spec_pprint(ct_spec)}, primal output: "
                f"{spec_pprint(out_spec)}"
            )
        with enable_grad():
            per_arg = _grads(flat_out, leaves, outer, flat_ct)
        return tuple(unflatten(g, s) for g, s in zip(per_arg, specs))

    res = _detach_tree(out, outer)
    if has_aux:
        return res, vjp_fn, _detach_tree(aux, outer)
    return res, vjp_fn


def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J @ tangents)`` by forward-mode AD.

    >>> import retrograd as torch
    >>> jvp(lambda x: x * x, (torch.tensor([3.0]),), (torch.tensor([1.0]),))
    (tensor([9.]), tensor([6.]))
    """
    if not isinstance(primals, tuple):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid "
            "to call f(*primals)."
        )
    flat_p, spec_p = flatten(primals)
    flat_t, spec_t = flatten(tangents) if isinstance(tangents, tuple) else ([tangents], None)
    if spec_p != spec_t:
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python "
            "structure. For example, if primals is a tuple of 3 tensors, tangents also must be. "
            f"Got primals with structure {spec_repr(spec_p)} and tangents with structure "
            f"{spec_repr(spec_t)}"
        )
    for what, flat in (("primals", flat_p), ("tangents", flat_t)):
        if not flat:
            raise RuntimeError(
                f"jvp(f, primals, tangents): Expected {what} to contain at least one Tensor."
            )
        for x in flat:
            if not isinstance(x, Tensor):
                raise RuntimeError(
                    f"jvp(f, primals, tangents): Expected {what} to only contain Tensors, got "
                    f"{type(x)}"
                )
    with _fw.dual_level():
        duals = [_fw.make_dual(p, t) for p, t in zip(flat_p, flat_t)]
        out, aux = _split_aux(func(*unflatten(duals, spec_p)), has_aux, "jvp(f, primals, tangents)")
        flat_o, spec_o = flatten(out)
        ps, ts = [], []
        for o in flat_o:
            if not isinstance(o, Tensor):
                raise RuntimeError(
                    f"jvp(f, primals, tangents): expected f(*primals) to return only tensors, "
                    f"got unsupported type {type(o)}"
                )
            p, t = _fw.unpack_dual(o)
            ps.append(p)
            ts.append(_zeros(o) if t is None else t)
    res = (unflatten(ps, spec_o), unflatten(ts, spec_o))
    if has_aux:
        return res + (aux,)
    return res


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None,
           _preallocate_and_copy: bool = False):
    """The Jacobian by reverse mode: one vector-Jacobian product per output element; each block
    is shaped ``output.shape + input.shape``.

    >>> import retrograd as torch
    >>> jacrev(lambda x: x * x)(torch.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """

    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        args, nums, leaves, specs, outer = _prepare(args, argnums)
        with enable_grad():
            out, aux = _split_aux(func(*args, **kwargs), has_aux, "jacrev(f, ...)(*args)")
            outer = _outer(outer, (out, aux))
            flat_out, out_spec = flatten(out)
            blocks = []
            for o in flat_out:
                if not isinstance(o, Tensor):
                    raise RuntimeError(
                        f"vjp(f, *primals): expected f(*primals) to return only tensors, got "
                        f"unsupported type {type(o)}"
                    )
                rows = []
                for k in range(o._data.size):
                    e = np.zeros(o._data.size, o._data.dtype)
                    e[k] = 1
                    ct = make(e.reshape(o._data.shape))
                    if TRACE is not None:
                        TRACE.const(ct)  # a basis vector: the same for every sample
                    rows.append(_grads([o], leaves, True, [ct]))
                per_arg = []
                for a, group in enumerate(leaves):
                    per_leaf = []
                    for j, x in enumerate(group):
                        if rows:
                            r = stack([row[a][j] for row in rows])
                        else:
                            r = make(np.zeros((0,) + x._data.shape, x._data.dtype))
                        r = reshape(r, tuple(o._data.shape) + tuple(x._data.shape))
                        per_leaf.append(r if outer else r.detach())
                    per_arg.append(per_leaf)
                blocks.append(_result(per_arg, specs, argnums))
        jac = unflatten(blocks, out_spec)
        if has_aux:
            return jac, _detach_tree(aux, outer)
        return jac

    return wrapper


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """The Jacobian by forward mode: one Jacobian-vector product per input element.

    >>> import retrograd as torch
    >>> jacfwd(lambda x: x.sum() * x)(torch.tensor([1.0, 2.0]))
    tensor([[4., 1.],
            [2., 5.]])
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args))
        rng = _Randomness(randomness)
        flat_args = [flatten(args[a]) for a in nums]
        outer = any(x.requires_grad for x in flatten(args)[0] if isinstance(x, Tensor))
        for flat, _ in flat_args:
            for x in flat:
                _check_leaf(x)
        cols = {}  # (argnum index, leaf index) -> list of output-leaf tangent lists
        out = aux = None
        for a_i, (flat, spec) in enumerate(flat_args):
            for j, x in enumerate(flat):
                per_elem = []
                for k in range(x._data.size):
                    e = np.zeros(x._data.size, x._data.dtype)
                    e[k] = 1
                    t = make(e.reshape(x._data.shape))
                    # PyTorch vmaps these passes: its randomness modes hold for them
                    rng.before()
                    with _fw.dual_level():
                        new = list(flat)
                        new[j] = _fw.make_dual(x, t)
                        call = list(args)
                        call[nums[a_i]] = unflatten(new, spec)
                        res, aux = _split_aux(func(*call, **kwargs), has_aux,
                                              "jacfwd(f, ...)(*args)")
                        flat_out, out_spec = flatten(res)
                        tans = []
                        for o in flat_out:
                            tan = _fw.unpack_dual(o).tangent
                            tans.append(_zeros(o) if tan is None else tan)
                        # a closure's tensor that requires grad: results stay in its graph
                        outer = _outer(outer, tans)
                        out = (flat_out, out_spec)
                    rng.after()
                    per_elem.append(tans)
                cols[a_i, j] = per_elem
        if out is None:  # every input empty: evaluate once for the output shapes
            res, aux = _split_aux(func(*args, **kwargs), has_aux, "jacfwd(f, ...)(*args)")
            out = flatten(res)
        flat_out, out_spec = out
        blocks = []
        for m, o in enumerate(flat_out):
            per_arg = []
            for a_i, (flat, _) in enumerate(flat_args):
                per_leaf = []
                for j, x in enumerate(flat):
                    col = cols.get((a_i, j), [])
                    if col:
                        b = stack([c[m] for c in col], -1)
                    else:
                        b = make(np.zeros(tuple(o._data.shape) + (0,), o._data.dtype))
                    b = reshape(b, tuple(o._data.shape) + tuple(x._data.shape))
                    per_leaf.append(b if outer else b.detach())
                per_arg.append(per_leaf)
            blocks.append(_result(per_arg, [s for _, s in flat_args], argnums))
        jac = unflatten(blocks, out_spec)
        if has_aux:
            return jac, aux
        return jac

    return wrapper


class _Randomness:
    """vmap's randomness modes for the passes a transform makes one by one: "error" (no
    random op), "same" (each pass draws what the first drew), "different"."""

    def __init__(self, mode: str) -> None:
        if mode not in ("error", "different", "same"):
            raise RuntimeError(
                f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                f"{mode}"
            )
        self.mode = mode
        self.state = _random.get_rng_state() if mode != "different" else None

    def before(self) -> None:
        if self.mode == "same":
            _random.set_rng_state(self.state)

    def after(self) -> None:
        if self.mode == "error" and not bool((_random.get_rng_state() == self.state).all()):
            raise RuntimeError(
                "vmap: called random operation while in randomness error mode. Please either "
                "use the 'same' or 'different' randomness flags on vmap or perform the "
                "randomness operation out of vmap")


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product of
    ``func`` at ``primals`` (``torch.func.linearize``).

    >>> import retrograd as torch
    >>> out, jvp_fn = linearize(torch.sin, torch.tensor([0.0, 1.0]))
    >>> jvp_fn(torch.tensor([1.0, 1.0]))
    tensor([1.0000, 0.5403])
    """
    flat_p, spec_p = flatten(primals)
    out = _detach_tree(func(*primals), False)
    out_spec = flatten(out)[1]

    def jvp_fn(*tangents):
        flat_t, spec_t = flatten(tangents)
        if spec_t != spec_p:
            raise RuntimeError(
                f"Expected the tangents {spec_repr(spec_t)} to have the same argspec as the "
                f"primals {spec_repr(spec_p)}"
            )
        for i, (p, t) in enumerate(zip(flat_p, flat_t)):
            for what, a, b in (("shape", t.shape, p.shape), ("dtype", t.dtype, p.dtype)):
                if a != b:  # (PyTorch's message names its own types)
                    a, b = (str(v).replace("retrograd.", "torch.") for v in (a, b))
                    raise RuntimeError(
                        f"tangent:{i} with {what} {a} in flattened pytree doesn't match the "
                        f"{what} {b} of the corresponding primal."
                    )
        res = jvp(func, primals, tangents)[1]
        return unflatten(flatten(res)[0], out_spec)

    return out, jvp_fn


def hessian(func, argnums=0):
    """The Hessian, ``jacfwd(jacrev(func))``: forward over reverse.

    >>> import retrograd as torch
    >>> hessian(lambda x: (x ** 3).sum())(torch.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
