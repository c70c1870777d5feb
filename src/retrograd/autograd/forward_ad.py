"""Forward-mode AD: ``dual_level``, ``make_dual``, ``unpack_dual`` (``torch.autograd.forward_ad``).

A dual tensor carries a tangent beside its value (``Tensor._fw``: ``(level, tangent)``, None on
every other tensor through a class attribute, so nothing changes on the hot path). Entering a
dual level registers an observer on ``ops._apply``: each primitive call with an input carrying
a tangent gets the output's tangent pushed through at once, and no graph is kept for it, so
memory does not grow with depth. The rule comes from the primitive's declaration, in this order:

- a view (``apply_view``) replays the same view step on the tangent: the tangent of a view is
  the same view of the tangent, so in-place updates reach both;
- ``P.jvp(node, xp, *tangents)``, an explicit rule (bilinear products, ...);
- a pointwise primitive (one called through ``apply_unary``/``apply_binary``, unless its class
  says ``pointwise = False``): the Jacobian is diagonal after broadcasting, so the output
  tangent is the sum over inputs of the VJP formula applied to the broadcast tangent;
- otherwise the double-VJP trick, valid for any primitive whose backward is written in
  differentiable ops: ``J t = d/du <J^T u, t>`` (slower: two small backward passes).

The primitive's node is built by the call itself (its inputs that carry tangents are made to
record for the duration of the call), so a rule reads the same saved values and attributes as
the backward formula; when the call would not have recorded, the node is dropped afterwards.
Tangents are plain arrays pushed through NumPy unless grad mode is on and a primal or a tangent
requires grad: then the rule runs on tensors and records, so reverse-over-forward and
forward-over-reverse (``jacfwd(jacrev(f))``) work. User ``autograd.Function``s use their ``jvp``
staticmethod, with ``ctx.save_for_forward``.

The same rules also run after the fact (``replay_tangent``): on a graph already recorded, each
node that leads to the seeded leaves gets its output's tangent from its inputs', oldest first.
``autograd.functional.hvp`` takes this route: a plain recorded call costs far less than one in
which every op is observed, and the Hessian-vector product needs the graph anyway.

>>> import retrograd as torch
>>> import retrograd.autograd.forward_ad as fwAD
>>> x = torch.tensor([0.0, 1.0])
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, torch.ones(2)).exp() * 2
...     fwAD.unpack_dual(y).tangent
tensor([2.0000, 5.4366])
"""

from __future__ import annotations

import weakref
from collections import namedtuple

import numpy as np

from .. import ops as _ops
from .._dtypes import FLOAT_CHARS, FROM_NP
from .._tensor import Tensor, edge, make
from ..ops import _apply, _array
from ..ops._views import replay
from . import provenance as _provenance
from . import prune as _prune
from .api import grad as _grad
from .function import Function
from .grad_mode import state
from .graph import Node

__all__ = ["dual_level", "make_dual", "unpack_dual", "enter_dual_level", "exit_dual_level",
           "UnpackedDualTensor"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "What ``unpack_dual`` returns: the primal and its tangent (or None)."


class _Level:
    """One dual level: tangents are valid while their level is the current one; the tensors
    given one (weakly held) drop it when the level exits, so no tangent outlives its level."""

    __slots__ = ("duals", "nodes")

    def __init__(self) -> None:
        self.duals: list = []
        self.nodes: list = []  # nodes given their outputs' tangents (``_out_fw``), weakly


_current = None  # the live _Level, or None
_deref = weakref.ref.__call__  # a weak reference's referent or None (mapped over a level's lists)


def enter_dual_level() -> int:
    """Enter a new forward-AD level and return its index (0: only one level at a time).

    >>> lvl = enter_dual_level(); exit_dual_level(); lvl
    0
    """
    global _current
    if _current is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current = _Level()
    _apply.add_observer(_observe)
    _apply.RECORD_ALSO = _carries_tangent
    return 0


def exit_dual_level(*, level=None) -> None:
    """Leave the current forward-AD level: every tangent made in it is gone."""
    global _current
    if _current is None:
        raise RuntimeError("Dual level must be a positive number.")
    if level is not None and level != 0:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    _apply.remove_observer(_observe)
    _apply.RECORD_ALSO = None
    lvl, _current = _current, None
    for t in map(_deref, lvl.duals):
        if t is not None:
            fw = t._fw
            if fw is not None and fw[0] is lvl:
                del t._fw
    for node in map(_deref, lvl.nodes):
        # A node holding its output's tangent, whose graph reaches the node again (the tangent
        # of tanh's output is computed from that output), is a reference cycle: cut it, so the
        # graph dies by reference counting.
        if node is not None:
            node.__dict__.pop("_out_fw", None)


class dual_level:  # noqa: N801 - PyTorch's name
    """Context manager (and decorator) for a forward-AD level.

    >>> import retrograd as torch
    >>> with dual_level():
    ...     d = make_dual(torch.tensor([2.0]), torch.tensor([1.0]))
    ...     unpack_dual(d * d).tangent
    tensor([4.])
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)

        wrapper.__wrapped__ = fn
        wrapper.__name__ = getattr(fn, "__name__", "wrapper")
        wrapper.__doc__ = fn.__doc__
        return wrapper


def _torch_dtype(arr) -> str:
    return "torch." + FROM_NP[arr.dtype].name


def tangent_of(t):
    """The tangent ``t`` carries at the current level, or None."""
    fw = t._fw
    if fw is not None and fw[0] is _current and _current is not None:
        return fw[1]
    if t._view is not None and _current is not None:
        return view_tangent(t, _current)
    return None


def view_tangent(t: Tensor, lvl):
    """The tangent of a view made before its base became dual (by an in-place op on the base
    or on another of its views): the same view of the base's tangent, made on first use and
    kept, so that later in-place updates of either reach both (PyTorch's lazy forward grad of
    views). None when the base has no tangent, or for a view outside forward AD (a primal)."""
    base, steps, _ = t._view
    bfw = base._fw
    if bfw is None or bfw[0] is not lvl or t._data.dtype.char not in FLOAT_CHARS or \
            t.__dict__.get("_fw_off"):
        return None
    bt = bfw[1]
    if bt._view is not None or (bt._rg and bt._grad_fn is None):
        prev = _apply.OBSERVED  # a tangent that is a view itself, or a leaf requiring grad
        _apply.OBSERVED = False
        try:
            tan = replay(_ops, bt, steps)
        except RuntimeError:  # a view the tangent's layout does not allow: on a copy
            tan = replay(_ops, _ops.contiguous(bt), steps)
        finally:
            _apply.OBSERVED = prev
    else:
        try:
            tan = make(_array.replay(bt._data, steps))
        except (RuntimeError, ValueError):  # as above
            tan = make(np.ascontiguousarray(_array.replay(bt._data.copy(), steps)))
        else:
            # A view of the tangent (its version counter; with a graph, the history
            # AsStridedBackward0 re-derived from the tangent's, as PyTorch's)
            tan._vc = bt._vc
            tan._view = (bt, steps, None)
    _set(t, tan, lvl)
    return tan


def tangent_level():
    """The live forward-AD level (an object), or None outside ``dual_level``."""
    return _current


def set_tangent(t: Tensor, tangent: Tensor) -> None:
    """Give ``t`` itself (not a view, as ``make_dual`` does) ``tangent`` at the live level:
    for callers that made ``t`` fresh and checked shapes (``autograd.functional.hvp``)."""
    if t._data.dtype.char in FLOAT_CHARS:  # _set, inlined
        lvl = _current
        t._fw = (lvl, tangent)
        lvl.duals.append(weakref.ref(t))


def _carries_tangent(args) -> bool:
    for x in args:
        if isinstance(x, Tensor) and tangent_of(x) is not None:
            return True
    return False


def make_dual(tensor: Tensor, tangent: Tensor, *, level=None) -> Tensor:
    """A view of ``tensor`` that carries ``tangent`` as its forward gradient.

    >>> import retrograd as torch
    >>> with dual_level():
    ...     unpack_dual(make_dual(torch.tensor([1.0]), torch.tensor([3.0]))).tangent
    tensor([3.])
    """
    if _current is None or (level is not None and level < 0):
        if level is not None and level >= 0:
            raise RuntimeError(
                "Trying to access a forward AD level with an invalid index. This index was "
                "either not created or is already deleted."
            )
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if level is not None and level != 0:  # the only level (one at a time, as in PyTorch)
        raise RuntimeError("Invalid level given to _make_dual")
    if tensor._data.dtype.char not in FLOAT_CHARS:
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: "
            f"{_torch_dtype(tensor._data)}"
        )
    if tangent._data.dtype.char not in FLOAT_CHARS:
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: "
            f"{_torch_dtype(tangent._data)}"
        )
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor._data.shape)} while the given forward gradient is of size "
            f"{list(tangent._data.shape)}."
        )
    if tangent_of(tensor) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the "
            "same level 0 is not supported."
        )
    d = tensor.view(tensor._data.shape)
    _set(d, tangent, _current)
    return d


def unpack_dual(tensor: Tensor, *, level=None) -> UnpackedDualTensor:
    """``(primal, tangent)``: a view of ``tensor`` without its tangent, and the tangent at the
    current level (None outside a level or for a tensor without one).

    >>> import retrograd as torch
    >>> unpack_dual(torch.tensor([1.0])).tangent is None
    True
    """
    t = tangent_of(tensor) if isinstance(tensor, Tensor) else None
    if t is None:
        return UnpackedDualTensor(tensor, None)
    if level is not None and level != 0:
        raise RuntimeError("Invalid level given to _fw_primal")
    prev = _apply.OBSERVED
    _apply.OBSERVED = False  # the primal view must not inherit the tangent
    try:
        p = tensor.view(tensor._data.shape)
    finally:
        _apply.OBSERVED = prev
    p.__dict__["_fw_off"] = True  # a view of a dual base that never takes its tangent
    return UnpackedDualTensor(p, t)


# -- pushing tangents through primitive calls ---------------------------------------------------


class _Forced(Node):
    """A stand-in history given to a tangent-carrying input for the duration of a call, so that
    the call records its node (the rules read its saved values); edges to it are cut after."""


_FORCED = _Forced()
_NONE_EDGE = (None, 0)
_NodeType = type(Node)  # the class of primitives' classes (a user Function's differs)
_SEQ = _prune.SEQ


def _observe(P, inputs, attrs, run):
    """The observer: a call with an input carrying a tangent gets its output's tangent. A
    primitive's is pushed here (the common call, kept to one frame: every node made below
    walks up these frames to its user's line); views and user Functions have their own."""
    lvl = _current
    prev = state.grad_enabled
    tans = None
    natural = False     # an input requires grad (grad mode on): the call records by itself
    forced = None       # inputs with a tangent that record only for the call (see _Forced)
    tan_graph = False   # a tangent requires grad: the rule records
    i = 0
    for x in inputs:
        if x.__class__ is Tensor or isinstance(x, Tensor):
            fw = x._fw
            if fw is None and x._view is not None and view_tangent(x, lvl) is not None:
                fw = x._fw  # a view made before its base became dual
            if x._rg or (x._view is not None and x.requires_grad):
                natural = prev
                if fw is not None and fw[0] is lvl:
                    if tans is None:
                        tans = [None] * len(inputs)
                    tans[i] = t = fw[1]
                    if t._rg or (t._view is not None and t.requires_grad):
                        tan_graph = True
            else:
                if fw is not None and fw[0] is lvl:
                    if tans is None:
                        tans = [None] * len(inputs)
                    tans[i] = t = fw[1]
                    if t._rg or (t._view is not None and t.requires_grad):
                        tan_graph = True
                    # (forced after the loop: an input may come twice, a * a)
                    if forced is None:
                        forced = [x]
                    else:
                        forced.append(x)
        i += 1
    if tans is None:
        if "step" in attrs and inputs[0].__dict__.get("_fw_off"):
            out = run()  # a view of a primal: no tangent from the base either
            if isinstance(out, Tensor):
                out.__dict__["_fw_off"] = True
            return out
        return run()
    if "step" in attrs or (P.__class__ is not _NodeType and not issubclass(P, Node)):
        return _observe_other(P, inputs, attrs, run, tans, lvl)
    if forced is not None:
        for x in forced:
            x._grad_fn, x._rg = _FORCED, True
    state.grad_enabled = True
    try:
        out = run()
    finally:
        state.grad_enabled = prev
        if forced is not None:
            for x in forced:
                x._grad_fn, x._rg = None, False
    if out.__class__ is Tensor:
        # One output (the common call): the graph test, the rule and the tangent's checks
        # inlined (each a call less per observed primitive).
        node = out._grad_fn
        if node is None or node is _FORCED:
            return out
        if prev and tan_graph:
            graph = True
        else:
            # The rule records only when what it reads requires grad: with constant tangents,
            # a node whose saved values are all constants (``W @ x``'s tangent ``W @ v``, x
            # alone requiring grad) has a constant tangent, computed on arrays.
            graph = natural and (node._out is not None or node._packed or _reads_grad(node))
        try:
            if P.jvp is not None:
                if graph:
                    tout = node.jvp(_ops, *tans)
                else:
                    tout = node.jvp(_array, *_arrays(tans))
            else:
                tout = _rule(P, node, tans, (out,), graph, "pointwise" in attrs)
        finally:
            if forced is not None and (natural or graph):
                # (Otherwise the node is dropped below and nothing else holds it.)
                node.next_functions = tuple(_NONE_EDGE if e[0] is _FORCED else e
                                            for e in node.next_functions)
            if not natural and out._grad_fn is node:
                out._grad_fn, out._nr, out._rg = None, 0, False
        if tout.__class__ is not tuple:
            if tout is not None and out._data.dtype.char in FLOAT_CHARS:  # _set, inlined
                d = out._data
                if tout.__class__ is Tensor:
                    a = tout._data
                    # _as_tangent's checks, inlined for a fresh tangent of the right form
                    if a.shape != d.shape or a.dtype != d.dtype or tout._view is not None or \
                            _is_one_of(tout, tans):
                        tout = _as_tangent(tout, out, tans, graph)
                elif graph or tout.__class__ is not np.ndarray or tout.shape != d.shape or \
                        tout.dtype != d.dtype or tout.base is not None:
                    tout = _as_tangent(tout, out, tans, graph)
                else:
                    for t in tans:  # _is_data_of, inlined: never an input's tangent itself
                        if t is not None and t._data is tout:
                            tout = _as_tangent(tout, out, tans, graph)
                            break
                    else:
                        tout = make(tout)
                out._fw = (lvl, tout)
                lvl.duals.append(weakref.ref(out))
            if natural:
                # A backward that records (create_graph) unpacks saved outputs as new tensors:
                # they take their tangents from here (forward over reverse).
                node._out_fw = (out._fw,)
                lvl.nodes.append(weakref.ref(node))
            return out
        outs = (out,)
    else:
        outs = out if isinstance(out, tuple) else (out,)
        node = next((o._grad_fn for o in outs
                     if isinstance(o, Tensor) and o._grad_fn is not None), None)
        if node is None or node is _FORCED:
            return out
        if len(outs) > 1 and getattr(node, "_outs", 0) is None and hasattr(node, "keep"):
            # A factorization keeps its outputs once the call returns (ops.decomp._attach): the
            # rule runs inside the call, so it keeps them here.
            node.keep([o._data for o in outs], [o._vc for o in outs])
        if node._out is None and len(outs) > 1 and isinstance(outs[0], Tensor):
            node.save_output(outs[0])  # std_mean saves it once the call returns: its rule reads it
        graph = prev and tan_graph or natural
        try:
            tout = _rule(P, node, tans, outs, graph, "pointwise" in attrs)
        finally:
            if forced is not None:
                node.next_functions = tuple(_NONE_EDGE if e[0] is _FORCED else e
                                            for e in node.next_functions)
            if not natural:
                for o in outs:
                    if isinstance(o, Tensor) and o._grad_fn is node:
                        o._grad_fn, o._nr, o._rg = None, 0, False
    if not isinstance(tout, tuple):
        tout = (tout,)
    for o, t in zip(outs, tout):
        if t is not None and isinstance(o, Tensor):
            _set(o, _as_tangent(t, o, tans, graph), lvl)
    if natural:
        node._out_fw = tuple(o._fw if isinstance(o, Tensor) else None for o in outs)
        lvl.nodes.append(weakref.ref(node))
    return out


def _observe_other(P, inputs, attrs, run, tans, lvl):
    """A view (its tangent: the same view of the input's) or a user Function (its ``jvp``)."""
    if "step" in attrs:
        out = run()
        try:
            tan = replay(_ops, tans[0], (attrs["step"],))
        except RuntimeError:  # a view the tangent's layout does not allow: on a copy
            tan = replay(_ops, _ops.contiguous(tans[0]), (attrs["step"],))
        _set(out, tan, lvl)
        return out
    return _function_jvp(P, inputs, attrs, tans, run, lvl)


def _set(out, tan, lvl) -> None:
    if isinstance(out, Tensor) and tan is not None and out._data.dtype.char in FLOAT_CHARS:
        out._fw = (lvl, tan)
        lvl.duals.append(weakref.ref(out))


def _reads_grad(node) -> bool:
    """Whether a one-output node keeps a value that requires grad for its rule to read: its
    saved output, or a saved input that requires grad (hooked entries: assume so)."""
    if node._out is not None or node._packed:
        return True
    for x in node._saved or ():
        if x.__class__ is Tensor or isinstance(x, Tensor):
            if x._rg or (x._view is not None and x.requires_grad):
                return True
    return False


def _as_tangent(t, o, tans, graph):
    """A rule's result as a tangent of ``o``: its shape and dtype, never one of the inputs'
    tangents itself (an in-place op on one must not change the other)."""
    d = o._data
    if t.__class__ is Tensor or graph or isinstance(t, Tensor):
        if not isinstance(t, Tensor):
            t = make(np.asarray(t))
        a = t._data
        if a.shape != d.shape:
            t = _ops.expand(t, d.shape)
        if a.dtype != d.dtype:  # (expand keeps the dtype)
            t = _ops.to_dtype_op(t, d.dtype)
        if t._view is not None or _is_one_of(t, tans):
            t = _ops.clone(t)
        return t
    a = t if t.__class__ is np.ndarray else np.asarray(t)
    if a.shape != d.shape or a.dtype != d.dtype or a.base is not None or _is_data_of(a, tans):
        a = np.array(np.broadcast_to(a, d.shape), dtype=d.dtype, order="C")
    return make(a)


def _arrays(tans) -> list:
    """The tangents' arrays (None stays None), for a rule computed on arrays."""
    if len(tans) == 1:
        return [tans[0]._data]  # (one input: its tangent is there)
    return [t if t is None else t._data for t in tans]


def _is_one_of(t, tans) -> bool:
    for x in tans:
        if t is x:
            return True
    return False


def _is_data_of(a, tans) -> bool:
    for x in tans:
        if x is not None and a is x._data:
            return True
    return False


def _rule(P, node, tans, outs, graph, pointwise, shape=None):
    """The output tangent(s) of one recorded primitive call (see the module docstring);
    ``outs`` None (a replay, see ``replay_tangent``): ``shape`` is the output's."""
    if graph:
        xp, tv = _ops, tans
    else:
        xp = _array
        tv = _arrays(tans)
    if P.jvp is not None:
        return node.jvp(xp, *tv)
    if getattr(P, "pointwise", pointwise):
        if outs is not None:
            shape = outs[0]._data.shape
        if len(tv) == 1:  # one input (the output's shape): its formula, once
            t = tv[0]
            if (t._data.shape if graph else t.shape) != shape:
                t = _ops.expand(t, shape) if graph else np.broadcast_to(t, shape)
            r = node.backward(xp, t)
            return r[0] if r.__class__ is tuple else r
        total = None
        for i, t in enumerate(tv):
            if t is None:
                continue
            if graph:
                if t._data.shape != shape:
                    t = _ops.expand(t, shape)
            elif t.shape != shape:
                t = np.broadcast_to(t, shape)
            r = node.backward(xp, t)
            r = r[i] if isinstance(r, tuple) else r
            if r is not None:
                total = r if total is None else total + r
        return total
    return _double_vjp(node, tans, _units(node, outs), graph)


def _units(node, outs) -> list:
    """The cotangents ``u`` of ``_double_vjp``: ones (requiring grad) for the outputs the node
    differentiates, zeros for the others."""
    us = []
    for o in outs:
        if isinstance(o, Tensor) and o._grad_fn is node and o._data.dtype.char in FLOAT_CHARS:
            # J^T u is linear in u, so any u will do: ones keep formulas that branch on the
            # sign of g (logcumsumexp) on a smooth branch.
            us.append(make(np.ones_like(o._data)).requires_grad_())
        elif isinstance(o, Tensor):
            us.append(make(np.zeros_like(o._data)))
        else:
            us.append(None)
    return us


def _double_vjp(node, tans, us, graph):
    """``J t = d/du <J^T u, t>``: the backward formula, run on tensors with a ``u`` that
    requires grad, then differentiated with respect to ``u``."""
    wrt = [u for u in us if u is not None and u._rg]
    prev = state.grad_enabled
    state.grad_enabled = True
    try:
        gis = node.backward(_ops, *us)
        if not isinstance(gis, tuple):
            gis = (gis,)
        total = None
        for gi, t, meta in zip(gis, tans, node._meta):
            if gi is None or t is None:
                continue
            if gi._data.shape != meta[0]:
                gi = _ops.sum_to(gi, meta[0])
            s = _ops.sum(gi * t)
            total = s if total is None else total + s
        if total is None or not total.requires_grad:
            res = [None] * len(wrt)  # the outputs do not depend on the inputs: zero tangents
        else:
            # retain_graph: the pass may run through the op's own node (its saved output),
            # which the user's backward still needs.
            # create_graph: the formulas' tensor forms are the ones every op has (some array
            # twins miss 0-d cases); the result is detached below unless a graph is wanted.
            res = _grad(total, wrt, retain_graph=True, create_graph=True, allow_unused=True)
            if not graph:
                res = [None if r is None else r.detach() for r in res]
    finally:
        state.grad_enabled = prev
    it = iter(res)
    out = []
    for u in us:
        if u is not None and u._rg:
            r = next(it)
            out.append(r if r is not None else make(np.zeros_like(u._data)))
        else:
            out.append(None)
    return tuple(out)


# -- forward mode by replay: tangents pushed through a graph already recorded ------------------


class NoReplay(Exception):
    """A node the replay has no rule for once its call is over (a user Function, a primitive
    with several outputs): the caller takes another route."""


def replay_tangent(out: Tensor, seeds: dict):
    """The tangent of ``out`` when the leaves whose AccumulateGrad nodes key ``seeds`` move
    along their tangents (the values, tensors): each primitive's rule, chosen as ``_observe``
    chooses it, runs on the graph ``out`` was recorded with, oldest node first, reading the
    values the call saved. ``autograd.functional.hvp`` differentiates the result (reverse over
    forward) without observing every op of the call: one plain recorded forward, then one rule
    per node that leads to a seeded leaf.

    Returns ``(tangent or None, closed)``: ``closed`` when every path from ``out`` ends at a
    seeded leaf, so a backward from the tangent (whose graph reaches only these nodes and
    constants, when the seeds require no grad) needs no pruning. Raises ``NoReplay``.

    >>> import retrograd as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> acc = y.grad_fn.next_functions[0][0].next_functions[0][0]  # x's AccumulateGrad
    >>> replay_tangent(y, {acc: torch.tensor([1.0, 0.0])})  # <2 x, v>, and every path ends at x
    (tensor(2., grad_fn=<SumBackward0>), True)
    """
    # (A view whose base changed in place since takes its new history: edge() finds it.)
    root, nr = (out._grad_fn, out._nr) if out._view is None else edge(out)
    reach, closed = _prune.reaching_closed(((root, nr),), seeds)
    tan = dict(seeds)
    get = tan.get
    outs = None  # each node's output (shape, dtype), as its consumers recorded it: made lazily
    hint = _provenance.HINT
    try:
        for fn in sorted(reach, key=_SEQ):
            if fn in tan:
                continue  # a seeded leaf
            tans = None
            tan_graph = False
            i = 0
            for (nxt, nr), m in zip(fn.next_functions, fn._meta):
                t = get(nxt)
                if t is not None:
                    if t.__class__ is tuple:  # a node with several outputs: output nr's
                        t = t[nr]
                    if t is not None:
                        a = t._data
                        if (a.shape, a.dtype) != m:
                            t = _fit(t, m[0], m[1])
                        if tans is None:
                            tans = [None] * len(fn._meta)
                        tans[i] = t
                        if t._rg or (t._view is not None and t.requires_grad):
                            tan_graph = True
                i += 1
            if tans is None:
                continue  # no input moves: a zero tangent
            P = fn.__class__
            if P.__class__ is not _NodeType:
                raise NoReplay  # a user Function: its jvp runs in the call (_function_jvp)
            graph = tan_graph or _reads_grad(fn)
            # The nodes a rule makes take the line that made the node (provenance), as under
            # an observed call.
            _provenance.HINT = fn.__dict__.get("_site")
            if fn._n_out != 1:
                tan[fn] = _replay_multi(P, fn, tans, graph)
                continue
            if fn._step is not None:  # a view: the same view of the tangent (_observe_other)
                try:
                    r = replay(_ops, tans[0], (fn._step,))
                except RuntimeError:  # a view the tangent's layout does not allow: on a copy
                    r = replay(_ops, _ops.contiguous(tans[0]), (fn._step,))
            elif P.jvp is not None:
                r = fn.jvp(_ops, *tans) if graph else fn.jvp(_array, *_arrays(tans))
            else:
                pointwise = getattr(P, "pointwise", None)
                if pointwise is None:
                    # Called through apply_binary (its save plan is made) or apply_unary (a
                    # one-input save spec): the calls ``_observe`` sees as pointwise.
                    pointwise = P._plan is not None or P.saves.__class__ is str
                if pointwise and len(tans) == 1:  # (the tangent has the output's shape)
                    r = fn.backward(_ops, tans[0]) if graph else \
                        fn.backward(_array, tans[0]._data)
                    if r.__class__ is tuple:
                        r = r[0]
                elif pointwise:
                    meta = fn._meta
                    shape = meta[0][0] if meta[1] is None else \
                        np.broadcast_shapes(*[m[0] for m in meta if m is not None])
                    r = _rule(P, fn, tans, None, graph, True, shape)
                else:
                    if outs is None:
                        outs = {root: (out._data.shape, out._data.dtype)}
                        for g in reach:
                            for (nxt, _), m in zip(g.next_functions, g._meta or ()):
                                outs[nxt] = m
                    shape, dtype = outs[fn]
                    u = make(np.ones(shape, dtype))
                    if dtype.char in FLOAT_CHARS:
                        u._rg = True
                    r = _double_vjp(fn, tans, [u], graph)[0]
            if r.__class__ is Tensor:
                tan[fn] = r
            elif r is not None:
                tan[fn] = r if isinstance(r, Tensor) else \
                    make(r if r.__class__ is np.ndarray else np.asarray(r))
    finally:
        _provenance.HINT = hint
    t = get(root)
    if t.__class__ is tuple:
        t = t[nr]
    if t is not None:
        d = out._data
        if (t._data.shape, t._data.dtype) != (d.shape, d.dtype):
            t = _fit(t, d.shape, d.dtype)
    return t, closed


def _replay_multi(P, node, tans, graph) -> tuple:
    """The output tangents of a node with several outputs (``max`` with indices, ``sort``):
    as ``_observe`` computes them, the outputs' forms read from the node (``_out_meta``)."""
    if P.jvp is not None:
        r = node.jvp(_ops, *tans) if graph else node.jvp(_array, *_arrays(tans))
        r = r if isinstance(r, tuple) else (r,)
    else:
        us = []
        for shape, dtype in node._out_meta:
            u = make(np.ones(shape, dtype) if dtype.char in FLOAT_CHARS else np.zeros(shape, dtype))
            u._rg = dtype.char in FLOAT_CHARS
            us.append(u)
        r = _double_vjp(node, tans, us, graph)
    res = []
    for t, (shape, dtype) in zip(r, node._out_meta):
        if t is not None and dtype.char in FLOAT_CHARS:
            if not isinstance(t, Tensor):
                t = make(np.asarray(t))
            res.append(_fit(t, shape, dtype) if (t._data.shape, t._data.dtype) != (shape, dtype)
                       else t)
        else:
            res.append(None)
    return tuple(res)


def _fit(t: Tensor, shape, dtype) -> Tensor:
    """A replayed tangent in its output's shape and dtype (a rule may leave it broadcastable)."""
    if t._data.shape != shape:
        t = _ops.expand(t, shape)
    if t._data.dtype != dtype:
        t = _ops.to_dtype_op(t, dtype)
    return t


def _function_jvp(cls, inputs, attrs, tans, run, lvl):
    """A user ``autograd.Function``: its ``jvp(ctx, *tangents)`` staticmethod."""
    if cls.jvp is Function.jvp:
        Function.jvp(None)
    out = run()
    ctx = attrs.get("ctx")
    targs = []
    for x, t in zip(inputs, tans):
        if isinstance(x, Tensor) and t is None:
            t = make(np.zeros_like(x._data))
        targs.append(t if isinstance(x, Tensor) else None)
    saved = ctx.__dict__.get("saved_for_forward")
    if saved is not None:
        # ``ctx.save_for_forward``: what ``jvp`` reads as ``ctx.saved_tensors``.
        keep = ctx._saved, ctx._saved_kinds, ctx._versions
        ctx._saved, ctx._saved_kinds = tuple(saved), ["in" if t is not None else None
                                                      for t in saved]
        ctx._versions = [None if t is None else t._vc[0] for t in saved]
    try:
        tout = cls.jvp(ctx, *targs)
    finally:
        if saved is not None:
            ctx._saved, ctx._saved_kinds, ctx._versions = keep
    outs = out if isinstance(out, tuple) else (out,)
    touts = tout if isinstance(tout, tuple) else (tout,)
    for o, t in zip(outs, touts):
        if isinstance(o, Tensor) and isinstance(t, Tensor):
            _set(o, t, lvl)
    return out
