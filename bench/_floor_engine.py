"""The leanest define-by-run engine for bench_overhead's chain: a floor for any engine in Python.

It records the same graph retrograd records for ``(y * w + b).sin() * 0.9`` (a node per op,
edges to the inputs' nodes, saved arrays, each gradient's shape and dtype checked against its
input, a heap ordering the backward walk, ``.grad`` on leaves) and nothing else: no grad mode,
no dtype promotion, no version counters, hooks, views, provenance or error messages. Whatever
retrograd costs above this is the price of its semantics; whatever this costs above hand-written
NumPy is the price of recording a graph in Python at all.

Only bench_overhead.py uses it; it is not part of retrograd.
"""

from __future__ import annotations

import itertools
from heapq import heappop, heappush

import numpy as np

_seq = itertools.count().__next__
_new = object.__new__


class Var:
    __slots__ = ("data", "node", "edge", "grad")

    def __mul__(self, other):
        return _mul(self, other)

    def __add__(self, other):
        return _add(self, other)

    def sin(self):
        return _sin(self)

    def sum(self):
        return _sum(self)


class _Node:
    __slots__ = ("inputs", "saved", "seq", "meta")


class _Leaf(_Node):
    __slots__ = ("var",)


class _Mul(_Node):
    __slots__ = ()

    def backward(self, g):
        a, b = self.saved
        return g * b, g * a


class _MulScalar(_Node):
    __slots__ = ()

    def backward(self, g):
        return (g * self.saved,)


class _Add(_Node):
    __slots__ = ()

    def backward(self, g):
        return g, g


class _Sin(_Node):
    __slots__ = ()

    def backward(self, g):
        return (g * np.cos(self.saved),)


class _Sum(_Node):
    __slots__ = ()

    def backward(self, g):
        return (np.broadcast_to(g, self.saved),)


def leaf(array: np.ndarray) -> Var:
    """A leaf that requires grad."""
    v = _new(Var)
    v.data, v.node, v.grad = array, None, None
    n = _new(_Leaf)
    n.var, n.seq, n.inputs, n.meta = v, _seq(), (), ()
    v.edge = n
    return v


def _out(array, node) -> Var:
    v = _new(Var)
    v.data, v.node, v.edge = array, node, node
    node.seq = _seq()
    return v


def _mul(a: Var, b) -> Var:
    ad = a.data
    if b.__class__ is float:
        s = ad.dtype.type(b)
        n = _new(_MulScalar)
        n.inputs, n.saved, n.meta = (a.edge,), s, ((ad.shape, ad.dtype),)
        return _out(ad * s, n)
    bd = b.data
    n = _new(_Mul)
    n.inputs, n.saved = (a.edge, b.edge), (ad, bd)
    n.meta = ((ad.shape, ad.dtype), (bd.shape, bd.dtype))
    return _out(ad * bd, n)


def _add(a: Var, b: Var) -> Var:
    ad, bd = a.data, b.data
    n = _new(_Add)
    n.inputs, n.meta = (a.edge, b.edge), ((ad.shape, ad.dtype), (bd.shape, bd.dtype))
    return _out(ad + bd, n)


def _sin(a: Var) -> Var:
    ad = a.data
    n = _new(_Sin)
    n.inputs, n.saved, n.meta = (a.edge,), ad, ((ad.shape, ad.dtype),)
    return _out(np.sin(ad), n)


def _sum(a: Var) -> Var:
    ad = a.data
    n = _new(_Sum)
    n.inputs, n.saved, n.meta = (a.edge,), ad.shape, ((ad.shape, ad.dtype),)
    return _out(ad.sum(), n)


def backward(root: Var) -> None:
    """Accumulate d(root)/d(leaf) into each leaf's ``grad``."""
    bufs = {root.node: np.ones_like(root.data)}
    heap = [(-root.node.seq, root.node)]
    while heap:
        node = heappop(heap)[1]
        g = bufs.pop(node)
        if node.__class__ is _Leaf:
            v = node.var
            v.grad = g.copy() if v.grad is None else v.grad + g
            continue
        for nxt, gi, (shape, dtype) in zip(node.inputs, node.backward(g), node.meta):
            if nxt is None:
                continue
            if gi.shape != shape or gi.dtype is not dtype:
                raise RuntimeError(f"invalid gradient: {gi.shape} for {shape}")
            old = bufs.get(nxt)
            if old is None:
                bufs[nxt] = gi
                heappush(heap, (-nxt.seq, nxt))
            else:
                bufs[nxt] = old + gi
