"""``vmap``'s fast path: a traced tape (``_trace``) replayed once on the whole batch, each
primitive through its batching rule (the ``vmap`` slot of its ``Node``; ``_rules.py``).

Every batched value is a tensor with the batch as its dim 0 (its *physical* form; the traced
tensor is its *logical* form, one sample). A value computed from unbatched values only is the
same for every sample, and the replay reuses the traced tensor. A rule receives the physical
inputs and a flag per input (batched or not) and returns the physical output, with the
batch first, by the same ops on the physical tensors: the replay records an ordinary graph,
so an outer ``grad`` differentiates through it and an inner ``grad`` (a ``grad`` entry) runs
the ordinary backward of it. Every rule's output is checked against the traced output's shape
and dtype; a primitive without a rule, or a mismatch, ends the replay (``NoRule``) and
``vmap`` falls back to running the function per sample.
"""

from __future__ import annotations

from sys import _getframe

from .._creation import ones_like
from .._tensor import Tensor
from ..autograd import provenance as _provenance
from ..autograd.grad_mode import state
from ..autograd.graph import Node
from ..ops.shape import expand
from . import _transforms
from ._rules import Batch, function_rule, pointwise_rule, view_rule

__all__ = ["NoRule", "lookup", "replay", "rule_for"]


class NoRule(Exception):
    """The tape holds a call the rules cannot batch; ``args[0]`` names the primitive."""


def rule_for(P, attrs):
    """The batching rule of primitive ``P`` as called with ``attrs``, or None."""
    if P is None or "step" in attrs:
        return view_rule
    if not issubclass(P, Node):
        return function_rule
    rule = P.__dict__.get("vmap")
    return rule if rule is not None else pointwise_rule(P, attrs)


def lookup(tape, vals, ref):
    """The replayed ``(object, batched)`` a tape reference stands for."""
    kind, k = ref
    if kind == "c":
        return k, False
    if kind == "x":
        return tape.externals[k], False
    x, b = vals[k]
    if kind == "d":
        return x.detach(), b
    return x, b  # "v"; "a" too: the rule reads the array of a tensor attribute


def replay(tape, phys_inputs, n: int):
    """Run ``tape`` on the batch: ``phys_inputs`` are ``(tensor, batched)`` per traced input
    value. Returns the physical values, ``(object, batched)`` per tape value."""
    vals: list = [None] * len(tape.meta)
    for i, v in zip(tape.inputs, phys_inputs):
        vals[i] = v
    hint = _provenance.HINT
    # The nodes the library's rules make take the user's line of the traced call they batch
    # (or, for a call that made no node, the line that called vmap), found once here rather
    # than each walking up through the replay's frames (a user Function's own vmap rule is
    # user code: its ops find their own lines).
    here = _provenance.site_from(_getframe(1)) if hint is None and _provenance.ENABLED else None
    try:
        _replay(tape, vals, n, hint, here)
    finally:
        _provenance.HINT = hint
    return vals


def _replay(tape, vals, n, hint, here):
    externals, traced, meta = tape.externals, tape.traced, tape.meta

    def get(ref):
        return lookup(tape, vals, ref)

    for e in tape.entries:
        kind = e[0]
        if kind == "op":
            _, P, in_refs, attr_refs, out_ids, grad_mode = e
            ins, any_b = [], False
            for rk, k in in_refs:  # lookup, inlined: the replay's most frequent call
                if rk == "v" or rk == "a":
                    v = vals[k]
                    any_b = any_b or v[1]
                elif rk == "c":
                    v = (k, False)
                elif rk == "x":
                    v = (externals[k], False)
                else:
                    x, b = vals[k]
                    v = (x.detach(), b)
                    any_b = any_b or b
                ins.append(v)
            attrs = {}
            for key, ref in attr_refs.items():
                v = attrs[key] = (ref[1], False) if ref[0] == "c" else get(ref)
                any_b = any_b or v[1]
            if not any_b:
                for i in out_ids:
                    vals[i] = (traced[i], False)
                continue
            rule = rule_for(P, attrs)
            name = getattr(P, "__name__", "a view")
            if rule is None:
                raise NoRule(name)
            ctx = Batch(n, [meta[i] for i in out_ids], attrs)
            if here is not None:
                node = traced[out_ids[0]]._grad_fn
                _provenance.HINT = None if rule is function_rule else \
                    getattr(node, "_site", None) or here
            prev = state.grad_enabled
            state.grad_enabled = grad_mode  # as the traced call ran (no_grad inside, say)
            try:
                out = rule(ctx, P, [x for x, _ in ins], [b for _, b in ins])
            finally:
                state.grad_enabled = prev
                _provenance.HINT = hint
            if out is None:
                raise NoRule(name)
            outs = out if isinstance(out, tuple) else (out,)
            if len(outs) != len(out_ids):
                raise NoRule(name)
            for i, o in zip(out_ids, outs):
                shape, dtype, rg = meta[i]
                d = o._data
                if d.shape != (n,) + tuple(shape) or d.dtype != dtype or o.requires_grad != rg:
                    raise NoRule(f"{name} (its rule gave {d.shape} {d.dtype} requires_grad="
                                 f"{o.requires_grad}, expected {(n,) + tuple(shape)} {dtype} "
                                 f"requires_grad={rg})")
                vals[i] = (o, True)
        elif kind == "leaf":
            _, src, i = e
            x, b = get(src)
            if not isinstance(x, Tensor):
                raise NoRule("a leaf")
            # A per-sample gradient needs a per-sample leaf: an unbatched one is expanded.
            vals[i] = (_transforms._track(x if b else expand(x, (n,) + tuple(x._data.shape))),
                       True)
        else:
            _, out_refs, leaf_refs, outer, go_refs, res_ids = e
            outs = [get(r) for r in out_refs]
            leaves = [[get(r)[0] for r in g] for g in leaf_refs]
            if go_refs is None:
                gos = []
                for o, _ in outs:
                    gos.append(ones_like(o))
                outs = [o for o, _ in outs]
            else:
                pairs = [(o, get(r)) for o, r in zip(outs, go_refs)]
                outs, gos = [], []
                for (o, bo), (g, bg) in pairs:
                    if bo and not bg:
                        g = expand(g, tuple(o._data.shape))
                    elif bg and not bo:
                        o = expand(o, tuple(g._data.shape))
                    outs.append(o)
                    gos.append(g)
            res = _transforms._grads_plain(outs, leaves, outer, gos)
            for group, ids in zip(res, res_ids):
                for g, i in zip(group, ids):
                    if not meta[i][2] and g.requires_grad:
                        g = g.detach()
                    vals[i] = (g, True)
