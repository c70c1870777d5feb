"""``apply``: the one place where an op call becomes part of the graph.

A primitive is declared once, as a ``Node`` subclass (see ``autograd/graph.py``): its PyTorch
grad_fn name is the class name, ``forward`` computes on arrays, ``backward(self, xp, *grads)``
is the vector-Jacobian product written once against ``xp``, ``saves`` says which inputs the
formula reads, and ``jvp``/``vmap`` leave room for the transforms. An op function parses its
arguments, computes (or lets ``apply`` compute) the forward on arrays, and hands the result here.

Only this module (and the in-place half of it, ``inplace.py``) reads grad mode. ``apply``
decides whether the output requires grad, builds the edges, records each input's shape and
dtype (the engine checks every gradient against them), saves tensors with their versions, and
links views to their base. Its speed tricks live here and nowhere else: the common one- and
two-input calls take unrolled paths.
"""

from __future__ import annotations

import sys

import numpy as np

from .._dtypes import FLOAT_CHARS, NATIVE_FLOAT_CHARS, OFF_FAST_CHARS, REDUCED
from .._tensor import Tensor, edge, make
from ..autograd import provenance as _provenance
from ..autograd import saved as _saved
from ..autograd.grad_mode import state
from ..autograd.graph import Node, next_seq
from ..autograd.provenance import ENABLED as PROVENANCE
from ..autograd.provenance import USER as _USER
from ..autograd.provenance import site as _site
from ..autograd.provenance import site_from as _site_from
from ..autograd.saved import INFERENCE_SAVE
from . import _array, _core
from ._core import (
    NONE_EDGE,
    arg_error,
    as_tensor_arg,
    check_broadcast,
    default_float,
    op_name_of,
    reduced_binary,
    reduced_unary,
    scalar_array,
    scalar_value,
    tensor_arg,
    wire,
)

ndarray = np.ndarray
_SCALARS = _core._SCALARS_CACHE
_NODE_TYPE = type(Node)  # primitives' class: a user Function class is not one
_getframe = sys._getframe
asarray = np.asarray

__all__ = [
    "apply", "apply_view", "apply_multi", "recording", "needs_grad", "Node", "add_observer",
    "remove_observer",
]

# -- observers: where the transforms and tools see every op call --------------------------------
# Forward-mode AD, anomaly mode and the profiler each need to see every primitive call (its
# declaration, inputs, attributes and result). Each ``apply*`` below tests one module global,
# ``OBSERVED``, which costs a few nanoseconds when nothing observes; when an observer is
# registered, the call is routed through ``_observed``, which runs the observers as middleware
# around the plain call.
OBSERVED = False
OBSERVERS: list = []
RECORD_ALSO = None  # forward AD's test: does a call on these inputs need its node (recording)
# An observer's stand-in for the result of the call it is running (set around ``run()``): the
# output tensor(s) to use instead of computing the forward, where the call's path allows (see
# ``_SUBSTITUTE``; selective checkpointing reuses the outputs it cached).
SUBSTITUTE = None
# While set, ``PEEK(P)`` is the output an observer will hand the next call of ``P`` (or None):
# an op that computes before calling ``apply`` (``linear``) asks first, to skip the work.
PEEK = None


def add_observer(obs) -> None:
    """Register ``obs(P, inputs, attrs, run)``, called around every primitive call while it is
    registered: ``run()`` performs the call and returns its result (a tensor or a tuple of
    tensors), and ``obs`` returns the result to hand back (``run()``'s, or one it derived).
    ``P`` is the primitive (a Node subclass, or the user Function class for ``Function.apply``),
    ``inputs`` the call's inputs (tensors or numbers), ``attrs`` the node attributes the op
    passed (``dim``, ``keepdim``, ...; ``pointwise`` True on the one- and two-input
    pointwise paths, with the forward ``fwd`` of a two-input call and the array ``array``
    a one-input call computed on (None: the input's); a view's also has ``step``, how it was
    made: see
    ``apply_view``). Ops called inside an observer, or inside ``run``, are not
    observed again. Observers registered later run outside earlier ones.

    >>> import retrograd as torch
    >>> seen = []
    >>> def spy(P, inputs, attrs, run):
    ...     seen.append(P.__name__)
    ...     return run()
    >>> add_observer(spy)
    >>> _ = torch.ones(2).exp()
    >>> remove_observer(spy)
    >>> seen
    ['ExpBackward0']
    """
    global OBSERVED
    OBSERVERS.append(obs)
    OBSERVED = True


def remove_observer(obs) -> None:
    """Unregister an observer added with ``add_observer``."""
    global OBSERVED
    OBSERVERS.remove(obs)
    OBSERVED = bool(OBSERVERS)


def _observed(fn, P, inputs, args, kwargs, attrs=None):
    """Run ``fn(*args, **kwargs)`` (an ``apply*`` call) inside the registered observers, which
    see ``attrs`` (by default ``kwargs``)."""
    global OBSERVED
    OBSERVED = False
    hint = _provenance.HINT
    if PROVENANCE and hint is None and P.__class__ is _NODE_TYPE and issubclass(P, Node):
        # A primitive's call: every node made inside it (the tangent's too) takes the line
        # this call came from, walked up to once. (A user Function's jvp is user code: its
        # ops find their own lines.)
        _provenance.HINT = _site_from(_getframe(2))
    try:
        def run():
            sub = SUBSTITUTE
            if sub is not None:
                how = _SUBSTITUTE.get(fn)
                if how is not None:
                    return how(args, kwargs, sub)
            return fn(*args, **kwargs)

        if len(OBSERVERS) == 1:  # the common case (forward AD alone): no wrapper layer
            return OBSERVERS[0](P, inputs, kwargs if attrs is None else attrs, run)
        for obs in OBSERVERS:
            run = _wrap(obs, P, inputs, kwargs if attrs is None else attrs, run)
        return run()
    finally:
        OBSERVED = bool(OBSERVERS)
        _provenance.HINT = hint


def _wrap(obs, P, inputs, attrs, inner):
    return lambda: obs(P, inputs, attrs, inner)


def needs_grad(t) -> bool:
    """Whether ``t`` (a tensor, a number or None) requires grad; a view may first need to
    re-derive its history after an in-place op on its base. While forward AD is on, a tensor
    with a tangent counts too: ops save for its rule what they save for its gradient."""
    if t.__class__ is Tensor or isinstance(t, Tensor):
        return t._rg or (t._view is not None and t.requires_grad) or \
            ((t._fw is not None or t._view is not None) and RECORD_ALSO is not None and
             RECORD_ALSO((t,)))  # (a view may take its tangent from its base: forward_ad)
    return False


def recording(*args) -> bool:
    """Whether an op on these arguments records a node: grad mode on and some input needs it.

    Ops whose forward keeps extra arrays only for backward ask this first. While forward AD
    is on, a call with an input that carries a tangent records too (``RECORD_ALSO``): its
    tangent's rule reads the node."""
    if state.grad_enabled:
        for t in args:
            if needs_grad(t):
                return True
    if OBSERVED and RECORD_ALSO is not None:
        return RECORD_ALSO(args)
    return False


def apply(P, out, *inputs, save=None, save_out: bool = False, **attrs) -> Tensor:
    """Wrap the forward result ``out`` of primitive ``P`` on ``inputs`` as a tensor, recording
    a ``P`` node when grad mode is on and an input requires grad.

    ``out`` is an array, or None to compute ``P.forward`` on the inputs' arrays. ``save`` are
    the tensors (or numbers) the backward reads, checked against their version when unpacked;
    ``save_out`` keeps the output. Keyword ``attrs`` become attributes of the node.

    >>> import retrograd as torch
    >>> from retrograd.ops.unary import ExpBackward0
    >>> x = torch.tensor([0.0, 1.0], requires_grad=True)
    >>> apply(ExpBackward0, None, x, save_out=True).grad_fn.name()
    'ExpBackward0'
    """
    if OBSERVED:
        return _observed(apply, P, inputs, (P, out, *inputs),
                         dict(attrs, save=save, save_out=save_out), attrs)
    if out is None:
        out = P.forward(*[t._data if isinstance(t, Tensor) else t for t in inputs])
    if out.__class__ is not ndarray:
        out = asarray(out)
    if state.grad_enabled:
        for t in inputs:
            if t.__class__ is Tensor or isinstance(t, Tensor):
                if t._rg or (t._view is not None and t.requires_grad):
                    break
        else:
            return make(out)
        node = P()
        if PROVENANCE:
            f = _getframe(2)  # provenance.site, inlined: the op's caller
            c = f.f_code
            node._site = (c, f.f_lasti) if c.co_filename in _USER else _site_from(f)
        wire(node, inputs)
        if attrs:
            node.__dict__.update(attrs)
        if save is not None:
            node.save(*save)
        r = make(out, node)
        if save_out:
            node._out = (out, r._vc, 0)
            if _saved.HOOKS_ON:
                _saved.PACK_NODE(node, r)
        return r
    return make(out)


def apply_multi(P, outs, inputs, *, differentiable=None, save=None, **attrs) -> tuple:
    """``apply`` for a primitive with several outputs (``max`` with indices, ``lstm``, ...).

    ``differentiable`` marks which outputs take the node (the others, e.g. integer indices,
    are plain tensors); by default the floating ones do."""
    if OBSERVED:
        return _observed(apply_multi, P, tuple(inputs), (P, outs, inputs),
                         dict(attrs, differentiable=differentiable, save=save), attrs)
    outs = [o if o.__class__ is ndarray else asarray(o) for o in outs]
    if differentiable is None:
        differentiable = [o.dtype.char in FLOAT_CHARS for o in outs]
    if not recording(*inputs):
        return tuple(make(o) for o in outs)
    node = P()
    if PROVENANCE:
        f = _getframe(2)  # provenance.site, inlined: the op's caller
        c = f.f_code
        node._site = (c, f.f_lasti) if c.co_filename in _USER else _site_from(f)
    wire(node, inputs)
    if attrs:
        node.__dict__.update(attrs)
    if save is not None:
        node.save(*save)
    node._n_out = len(outs)
    node._plain = False
    node._out_meta = [(o.shape, o.dtype) for o in outs]
    res = []
    for i, (o, d) in enumerate(zip(outs, differentiable)):
        res.append(make(o, node, i) if d else make(o))
    return tuple(res)


def link_view(t: Tensor, x: Tensor, step: tuple) -> Tensor:
    """Make ``t`` a view of ``x``: it shares ``x``'s version counter and records ``step``."""
    t._vc = x._vc
    t._inference = x._inference
    if not state.grad_enabled and x._rg:
        t.__dict__["_no_grad_view"] = True
    v = x._view
    if v is None:
        t._view = (x, (step,), x._grad_fn)
    else:
        base = v[0]
        t._view = (base, v[1] + (step,), base._grad_fn)
    return t


def apply_view(P, out, x: Tensor, step: tuple, **attrs) -> Tensor:
    """``apply`` for a view op: ``out`` is a NumPy view of ``x``'s array. The result shares
    ``x``'s memory and version counter and records how it was made (``step``), so that an
    in-place op on it can rewrite its base's history (``inplace.py``). ``P`` None: a view
    that records no node of its own (``unbind``'s outputs)."""
    if OBSERVED:
        return _observed(apply_view, P, (x,), (P, out, x, step), attrs, dict(attrs, step=step))
    if out.__class__ is not ndarray:
        out = asarray(out)
    if state.grad_enabled:
        if P is not None and (x._rg or (x._view is not None and x.requires_grad)):
            # apply() and link_view() inlined: views are among the most frequent ops.
            node = P()
            if PROVENANCE:
                f = _getframe(2)  # provenance.site, inlined: the op's caller
                c = f.f_code
                node._site = (c, f.f_lasti) if c.co_filename in _USER else _site_from(f)
            fn = x._grad_fn
            node.next_functions = ((fn, x._nr) if fn is not None and x._view is None
                                   else edge(x),)
            d = x._data
            node._meta = ((d.shape, d.dtype),)
            node._step = step  # how the view was made (forward mode's replay reads it)
            if attrs:
                node.__dict__.update(attrs)
            t = make(out, node)
        else:
            t = make(out)
    else:
        t = make(out)
        if x._rg:
            t.__dict__["_no_grad_view"] = True
    t._vc = x._vc
    t._inference = x._inference
    v = x._view
    if v is None:
        t._view = (x, (step,), x._grad_fn)
    else:
        base = v[0]
        t._view = (base, v[1] + (step,), base._grad_fn)
    return t


# -- the hot paths: one and two inputs -----------------------------------------------------------

_new = object.__new__


def _edge_fast(t):
    """``edge(t)`` for the common case, a non-view tensor with a history, without a call."""
    fn = t._grad_fn
    if fn is not None and t._view is None:
        return (fn, t._nr)
    return edge(t)


def save_plan(P) -> tuple:
    """What a binary primitive saves, for each combination of inputs needing grad.

    ``P.saves`` lists, per input, what its gradient formula reads: input indices and
    ``"result"``; ``((1,), (0,))`` for ``mul`` (d/da reads b, d/db reads a). The plan is a
    ``(save a, save b, save result)`` triple indexed by ``2 * needs_a + needs_b``.
    """
    plan = P._plan
    if plan is None:
        reads = P.saves
        plan = []
        for k in range(4):
            need = (k >> 1, k & 1)
            plan.append(tuple(any(need[i] and j in reads[i] for i in range(2))
                              for j in (0, 1, "result")))
        plan = P._plan = tuple(plan)
    return plan


def apply_binary(P, fwd, a: Tensor, b, **attrs) -> Tensor:
    """``apply`` for a binary pointwise primitive: ``a`` a tensor, ``b`` a tensor or a number.

    Operands are promoted as PyTorch promotes (a number is a weak scalar); the node saves the
    inputs ``P.saves`` asks for. Two tensors of one dtype take the fewest steps: this is the
    hottest path in the library.
    """
    if OBSERVED:
        return _observed(apply_binary, P, (a, b), (P, fwd, a, b), attrs,
                         dict(attrs, pointwise=True, fwd=fwd))
    b_tensor = b.__class__ is Tensor or isinstance(b, Tensor)
    if not b_tensor and b.__class__ is not float and b.__class__ is not int and \
            scalar_value(b) is None:
        # An array operand (formulas pass constants) is a constant tensor, with its own shape
        # to sum back to; PyTorch refuses a list, None or a string.
        if b.__class__ is not ndarray:
            raise arg_error(op_name_of(P), "other", 2, b)
        b = as_tensor_arg(b)
        b_tensor = True
    ad = a._data
    try:
        if b_tensor and ad.dtype is b._data.dtype and ad.dtype.char not in OFF_FAST_CHARS:
            bd = b._data
            out = fwd(ad, bd)
        elif b.__class__ is float and ad.dtype.char in NATIVE_FLOAT_CHARS:
            # ``x * 0.5``: a weak scalar in x's dtype (scalar_array's cache, read inline)
            bd = _SCALARS.get((b, ad.dtype))
            if bd is None:
                bd = scalar_array(b, ad.dtype)
            out = fwd(ad, bd)
        else:
            # Promotion, and float16/bfloat16 computed in float32 then rounded once.
            ad, bd, out = reduced_binary(P, fwd, a, b)
    except ValueError:  # NumPy's shape mismatch: PyTorch's error (free when nothing is raised)
        if b_tensor:
            check_broadcast(ad.shape, b._data.shape)
        raise
    if out.__class__ is not ndarray:
        out = asarray(out)
    if (a._rg or a._view is not None or (b_tensor and (b._rg or b._view is not None))) and \
            state.grad_enabled:
        # edge() inlined for the common cases: a non-view tensor with a history, or a leaf
        # whose AccumulateGrad exists (a parameter, from its second use on).
        if a._view is not None:
            ea = edge(a)
        elif (fn := a._grad_fn) is not None:
            ea = (fn, a._nr)
        elif a._rg and (fn := a._acc) is not None:
            ea = (fn, 0)
        else:
            ea = edge(a)
        if not b_tensor:
            eb = NONE_EDGE
        elif b._view is not None:
            eb = edge(b)
        elif (fn := b._grad_fn) is not None:
            eb = (fn, b._nr)
        elif b._rg and (fn := b._acc) is not None:
            eb = (fn, 0)
        else:
            eb = edge(b)
        ra = ea[0] is not None
        rb = eb[0] is not None
        if ra or rb:
            node = _new(P)  # P(), without type.__call__: primitives have no __init__
            if PROVENANCE:
                f = _getframe(2)  # provenance.site, inlined: the op's caller
                c = f.f_code
                node._site = (c, f.f_lasti) if c.co_filename in _USER else _site_from(f)
            node.next_functions = (ea, eb)
            d = a._data
            if b_tensor:
                e = b._data
                node._meta = ((d.shape, d.dtype), (e.shape, e.dtype))
            else:
                node._meta = ((d.shape, d.dtype), None)
            if attrs:
                node.__dict__.update(attrs)
            plan = P._plan
            if plan is None:
                plan = save_plan(P)
            sa, sb, so = plan[ra * 2 + rb]
            if sa or sb:
                # Saved with their versions (Node.save2, unrolled: this runs on every call).
                if sa:
                    if a._inference:
                        raise RuntimeError(INFERENCE_SAVE)
                    sa, va = a, a._vc[0]
                else:
                    sa = va = None
                if sb:
                    if b_tensor:
                        if b._inference:
                            raise RuntimeError(INFERENCE_SAVE)
                        sb, vb = b, b._vc[0]
                    else:
                        sb, vb = bd, None
                else:
                    sb = vb = None
                node._saved = (sa, sb)
                node._versions = (va, vb)
            t = _new(Tensor)  # _tensor.make(out, node), unrolled: this runs on every call
            t._data = out
            t._vc = vc = [0]
            t._grad = t._view = t._acc = None
            t._rg = True
            t._grad_fn = node
            t._nr = 0
            t._inference = False
            node._seq = next_seq()
            if so:
                node._out = (out, vc, 0)
            if _saved.HOOKS_ON:  # saved-tensor hooks pack what was saved (saved_hooks.py)
                _saved.PACK_NODE(node, t)
            return t
    return make(out)


def apply_unary(P, x: Tensor, a=None, **attrs) -> Tensor:
    """``apply`` for a one-input primitive whose forward is ``P.forward(a)``: ``a`` is ``x``'s
    array, or by default (``a=None``) ``x``'s values as floats (integers take the default
    float dtype, as PyTorch's float ops do).

    ``P.saves`` is ``"input"``, ``"result"`` or ``()``."""
    if OBSERVED:
        return _observed(apply_unary, P, (x,), (P, x, a), attrs,
                         dict(attrs, pointwise=True, array=a))
    if a is None:
        try:
            a = x._data
        except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
            raise arg_error(op_name_of(P), "input", 1, x) from None
        if a.dtype.char in NATIVE_FLOAT_CHARS:
            out = P.forward(a)
        elif a.dtype in REDUCED:
            # float16/bfloat16: computed in float32 and rounded once, as PyTorch's kernels do.
            out = reduced_unary(P, a)
        else:  # integers and bools take the default float dtype (which may be reduced)
            a = a.astype(default_float())
            out = reduced_unary(P, a) if a.dtype in REDUCED else P.forward(a)
    else:
        out = P.forward(a)
    if out.__class__ is not ndarray:
        out = asarray(out)
    if (x._rg or x._view is not None) and state.grad_enabled:
        fn = x._grad_fn
        e = (fn, x._nr) if fn is not None and x._view is None else edge(x)
        if e[0] is not None:
            node = _new(P)
            if PROVENANCE:
                f = _getframe(2)  # provenance.site, inlined: the op's caller
                c = f.f_code
                node._site = (c, f.f_lasti) if c.co_filename in _USER else _site_from(f)
            node.next_functions = (e,)
            d = x._data
            node._meta = ((d.shape, d.dtype),)
            if attrs:
                node.__dict__.update(attrs)
            saves = P.saves
            if saves == "input":
                if x._inference:
                    raise RuntimeError(INFERENCE_SAVE)
                node._saved = (x,)
                node._versions = (x._vc[0],)
            t = _new(Tensor)  # _tensor.make(out, node), unrolled: this runs on every call
            t._data = out
            t._vc = vc = [0]
            t._grad = t._view = t._acc = None
            t._rg = True
            t._grad_fn = node
            t._nr = 0
            t._inference = False
            node._seq = next_seq()
            if saves == "result":
                node._out = (out, vc, 0)
            if _saved.HOOKS_ON:  # saved-tensor hooks pack what was saved (saved_hooks.py)
                _saved.PACK_NODE(node, t)
            return t
    return make(out)


def _given_binary(args, kwargs, sub):
    out = sub._data
    return apply_binary(args[0], lambda a, b: out, *args[2:], **kwargs)


def _given_unary(args, kwargs, sub):
    # The node apply_unary would build (saving its input or its result), on the given output.
    P, x = args[0], args[1]
    saves = P.saves
    return apply(P, sub._data, x, save=(x,) if saves == "input" else None,
                 save_out=saves == "result", **kwargs)


# How a call takes a given result instead of computing it (``SUBSTITUTE``): ``apply`` and
# ``apply_multi`` take the arrays in place of the ones the op computed (or would compute), a
# binary call a forward that returns it, a one-input call the node ``apply`` builds on it.
# (Views must alias their input, and user Functions compute inside: they run as they are.)
_SUBSTITUTE = {
    apply: lambda args, kwargs, sub: apply(args[0], sub._data, *args[2:], **kwargs),
    apply_binary: _given_binary,
    apply_unary: _given_unary,
    apply_multi: lambda args, kwargs, sub: apply_multi(args[0], [t._data for t in sub],
                                                       *args[2:], **kwargs),
}


def unary_op(P, name: str, doc: str, float_op: bool = True):
    """The function form of a one-input pointwise primitive, derived from its declaration
    (``P.forward``, ``P.saves``); its array twin (``_array.<name>``) is ``P.forward``."""
    # A non-tensor argument fails on its first attribute read: PyTorch's TypeError instead
    # (the try costs nothing when nothing is raised).
    if float_op:
        def op(input) -> Tensor:  # noqa: A002
            try:
                return apply_unary(P, input)
            except AttributeError:
                if not isinstance(input, Tensor):
                    raise arg_error(name, "input", 1, input) from None
                raise
    else:
        def op(input) -> Tensor:  # noqa: A002
            try:
                return apply_unary(P, input, input._data)
            except AttributeError:
                if not isinstance(input, Tensor):
                    raise arg_error(name, "input", 1, input) from None
                raise
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    op.primitive = P
    _array.register(**{name: P.forward})
    return op


def binary_op(P, name: str, doc: str, prepare=None):
    """The function form of a two-input pointwise primitive, derived from its declaration
    (``P.forward``, ``P.saves``). ``prepare(input, other)``, if given, checks arguments first
    (PyTorch's errors for bool subtraction and the like)."""
    save_plan(P)
    fwd = P.forward

    def op(input, other) -> Tensor:  # noqa: A002
        if input.__class__ is not Tensor and not isinstance(input, Tensor):
            input = tensor_arg(name, "input", 1, input)
        if prepare is not None:
            prepare(input, other)
        return apply_binary(P, fwd, input, other)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    op.primitive = P
    _array.register(**{name: fwd})
    return op


# -- user Functions ------------------------------------------------------------------------------


def apply_function(cls, node, args, kwargs, uses_setup: bool):
    """``Function.apply``: run the user's forward without recording, then wire its node as
    built-in ops are wired (edges, input metadata, saved tensors, dirty and non-differentiable
    outputs)."""
    if OBSERVED:
        return _observed(apply_function, cls, tuple(args), (cls, node, args, kwargs, uses_setup),
                         {}, {"ctx": node})
    prev = state.grad_enabled
    state.grad_enabled = False
    try:
        if uses_setup:
            output = cls.forward(*args, **kwargs)
            cls.setup_context(node, args, output)
        else:
            output = cls.forward(node, *args, **kwargs)
    finally:
        state.grad_enabled = prev
    return _attach_function(node, args, output, prev and any(node._needs_input_grad))


def _attach_function(node, args, output, record: bool):
    """Wire a user Function's node: edges to tensor inputs, outputs pointing back at it."""
    single = not isinstance(output, tuple)
    outs = (output,) if single else output
    inputs = [a for a in args if isinstance(a, Tensor)]
    dirty = node._dirty
    non_diff = node._non_diff
    results = []
    if record:
        wire(node, inputs)
        if PROVENANCE:
            node._site = _site(3)
        node._seq = next_seq()
    out_arrays = []
    out_rg = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            results.append(o)
            out_arrays.append(None)
            out_rg.append(False)
            continue
        is_dirty = any(o is d for d in dirty)
        differentiable = record and not any(o is n for n in non_diff) and \
            o._data.dtype.char in FLOAT_CHARS
        if is_dirty:
            if record and o._grad_fn is None and o._rg:
                raise RuntimeError(
                    "a leaf Variable that requires grad has been used in an in-place operation."
                )
            r = o
            r._vc[0] += 1  # PyTorch bumps a dirty tensor's version once more
            if differentiable:
                r._grad_fn, r._nr, r._rg = node, i, True
        elif any(o is a for a in inputs) or o._grad_fn is not None or o._rg:
            # An input returned as is (or a tensor with a graph): the output is a new alias.
            r = make(o._data, node if differentiable else None, i)
            r._vc = o._vc
        else:
            r = o
            if differentiable:
                r._grad_fn, r._nr, r._rg = node, i, True
        results.append(r)
        out_arrays.append(r._data)
        out_rg.append(differentiable)
    node._out_arrays = out_arrays
    node._out_rg = out_rg
    node._n_out = len(outs)
    node._plain = False
    node._out_meta = [
        (r._data.shape, r._data.dtype) if isinstance(r, Tensor) else ((), np.float32)
        for r in results
    ]
    _save_function(node, inputs, results)
    return results[0] if single else tuple(results)


def _save_function(node, inputs, results) -> None:
    """Turn ``ctx.to_save`` into version-checked saved tensors; outputs are kept as arrays so
    that no reference cycle forms through the output's grad_fn."""
    kinds, saved, versions = [], [], []
    for t in node.to_save:
        if t is None:
            kinds.append(None)
            saved.append(None)
            versions.append(None)
        elif any(t is r for r in results):
            kinds.append("out")
            saved.append((t._data, t._vc, t._vc[0]))
            versions.append(None)
        else:
            if t._inference:
                raise RuntimeError(
                    "Inference tensors cannot be saved for backward. To work around you can make "
                    "a clone to get a normal tensor and use it in autograd."
                )
            kinds.append("in")
            saved.append(t)
            versions.append(t._vc[0])
    node._saved_kinds = kinds
    node._saved = tuple(saved)
    node._versions = versions
    node.to_save = ()
    if _saved.HOOKS_ON:
        _saved.PACK_NODE(node, None, results)
