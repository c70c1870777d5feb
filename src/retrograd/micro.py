"""``retrograd.micro``: reverse-mode autodiff on scalars, the whole idea on one screen.

A ``Value`` holds a number, the gradient of the final output with respect to it, and how it was
made: the values it came from and a function that pushes its gradient back to them (the chain
rule, one local derivative per input). ``backward()`` orders the graph so that every value comes
after everything it feeds (an iterative depth-first walk: no recursion, so long chains are
fine), seeds the output's gradient with 1 and runs the pushes from the output back. retrograd's
real engine is this idea on arrays, with saved tensors, version checks and higher orders.

>>> a, b = Value(2.0), Value(-3.0)
>>> c = (a * b + a.exp()).tanh()
>>> c.backward()
>>> round(a.grad, 4), round(b.grad, 4)
(0.9672, 0.4408)
"""

from __future__ import annotations

import math

__all__ = ["Value"]


class Value:
    """A scalar that remembers how it was computed, so gradients can flow back through it."""

    __slots__ = ("data", "grad", "_parents", "_push", "op")

    def __init__(self, data: float, _parents: tuple = (), op: str = "") -> None:
        self.data = float(data)
        self.grad = 0.0
        self._parents = _parents
        self._push = None  # set by the op that made this value: adds self.grad into parents
        self.op = op

    # -- the ops: each returns a new Value and says how to push its gradient back ----------------
    def __add__(self, other) -> Value:
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def push():
            self.grad += out.grad           # d(a+b)/da = 1
            other.grad += out.grad          # d(a+b)/db = 1
        out._push = push
        return out

    def __mul__(self, other) -> Value:
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def push():
            self.grad += other.data * out.grad   # d(ab)/da = b
            other.grad += self.data * out.grad   # d(ab)/db = a
        out._push = push
        return out

    def __pow__(self, k: float) -> Value:
        assert isinstance(k, (int, float)), "only constant exponents"
        out = Value(self.data ** k, (self,), f"**{k}")

        def push():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._push = push
        return out

    def exp(self) -> Value:
        out = Value(math.exp(self.data), (self,), "exp")

        def push():
            self.grad += out.data * out.grad     # the derivative of exp is exp
        out._push = push
        return out

    def tanh(self) -> Value:
        out = Value(math.tanh(self.data), (self,), "tanh")

        def push():
            self.grad += (1.0 - out.data ** 2) * out.grad
        out._push = push
        return out

    def relu(self) -> Value:
        out = Value(max(self.data, 0.0), (self,), "relu")

        def push():
            self.grad += (out.data > 0) * out.grad
        out._push = push
        return out

    # -- composites: written from the ops above, so they need no backward of their own ----------
    def __neg__(self) -> Value:
        return self * -1.0

    def __sub__(self, other) -> Value:
        return self + (-other)

    def __truediv__(self, other) -> Value:
        return self * (other if isinstance(other, Value) else Value(other)) ** -1

    def __radd__(self, other) -> Value:
        return self + other

    def __rmul__(self, other) -> Value:
        return self * other

    def __rsub__(self, other) -> Value:
        return Value(other) - self

    def __rtruediv__(self, other) -> Value:
        return Value(other) / self

    # -- the engine ----------------------------------------------------------------------------
    def backward(self) -> None:
        """Gradients of this value with respect to every value it was computed from."""
        order, seen, stack = [], set(), [(self, False)]
        while stack:                         # iterative post-order depth-first walk
            v, done = stack.pop()
            if done:
                order.append(v)
            elif id(v) not in seen:
                seen.add(id(v))
                stack.append((v, True))
                stack.extend((p, False) for p in v._parents if id(p) not in seen)
        self.grad = 1.0
        for v in reversed(order):            # the output first, the inputs last
            if v._push is not None:
                v._push()

    def __repr__(self) -> str:
        return f"Value(data={self.data:.4g}, grad={self.grad:.4g})"
