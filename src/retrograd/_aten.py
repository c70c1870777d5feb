"""``torch.ops.aten``: names for retrograd's primitives as PyTorch's ATen operators.

PyTorch code names operators as ``torch.ops.aten.mm.default`` (an ``OpOverload``: an operator
and one of its overloads), above all in selective activation checkpointing policies
(``utils.checkpoint.create_selective_checkpoint_contexts([torch.ops.aten.mm.default])``).
retrograd has no dispatcher: its primitives are ``Node`` subclasses named as PyTorch's grad_fns
(``MmBackward0``), and ``op_for`` names each as the ATen operator PyTorch's autograd would have
recorded that node for (``MmBackward0`` -> ``aten.mm``), by the grad_fn naming rule.

One primitive serves several ATen overloads (``mul`` of two tensors and of a tensor and a
number are one ``MulBackward0``), so an ``OpOverload`` here compares equal to any overload of the
same operator: ``aten.mul.Tensor == aten.mul.Scalar``, unlike PyTorch, so that a policy written
against any overload matches. ``aten.mm.default(a, b)`` calls retrograd's ``mm``.
"""

from __future__ import annotations

import re

__all__ = ["aten", "OpOverload", "OpOverloadPacket", "op_for"]


class OpOverload:
    """One overload of an operator: ``torch.ops.aten.mm.default``.

    >>> aten.mm.default, str(aten.mm.default), aten.mm.default.name()
    (<OpOverload(op='aten.mm', overload='default')>, 'aten.mm.default', 'aten::mm')
    """

    __slots__ = ("overloadpacket", "_overloadname", "__name__")

    def __init__(self, packet: OpOverloadPacket, overload: str) -> None:
        self.overloadpacket = packet
        self._overloadname = overload
        self.__name__ = f"{packet.__name__}.{overload}"

    def name(self) -> str:
        p = self.overloadpacket
        base = f"{p._ns}::{p.__name__}"
        return base if self._overloadname == "default" else f"{base}.{self._overloadname}"

    def __str__(self) -> str:
        return f"{self.overloadpacket}.{self._overloadname}"

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self.overloadpacket}', overload='{self._overloadname}')>"

    def __eq__(self, other) -> bool:
        # Any overload of the same operator (see the module docstring).
        if isinstance(other, OpOverload):
            return other.overloadpacket is self.overloadpacket
        return NotImplemented

    def __hash__(self) -> int:
        return hash(("OpOverload", str(self.overloadpacket)))

    def __call__(self, *args, **kwargs):
        return self.overloadpacket(*args, **kwargs)


class OpOverloadPacket:
    """An operator with all its overloads: ``torch.ops.aten.mm``; ``.default``, ``.Tensor``,
    ... are its ``OpOverload``s.

    >>> aten.add.Tensor
    <OpOverload(op='aten.add', overload='Tensor')>
    """

    def __init__(self, ns: str, name: str) -> None:
        self._ns = ns
        self.__name__ = name
        self._overloads: dict = {}

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        o = self._overloads.get(overload)
        if o is None:
            o = self._overloads[overload] = OpOverload(self, overload)
        return o

    def __str__(self) -> str:
        return f"{self._ns}.{self.__name__}"

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self}')>"

    def __call__(self, *args, **kwargs):
        import retrograd

        fn = getattr(retrograd, self.__name__, None)
        if fn is None or not callable(fn):
            raise NotImplementedError(f"retrograd does not implement {self._ns}::{self.__name__}")
        return fn(*args, **kwargs)


class _OpNamespace:
    """``torch.ops.aten``: each attribute is an operator (``OpOverloadPacket``)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._packets: dict = {}

    def __getattr__(self, op: str) -> OpOverloadPacket:
        if op.startswith("__"):
            raise AttributeError(op)
        p = self._packets.get(op)
        if p is None:
            p = self._packets[op] = OpOverloadPacket(self.name, op)
        return p

    def __repr__(self) -> str:
        return f"<_OpNamespace '{self.name}'>"


aten = _OpNamespace("aten")
prim = _OpNamespace("prim")

# grad_fn stems whose ATen operator is not their snake-case name.
_STEMS = {
    "UnsafeView": "_unsafe_view", "ToCopy": "_to_copy", "Softmax": "_softmax",
    "LogSoftmax": "_log_softmax", "Log1P": "log1p", "Expm1": "expm1", "NllLoss": "nll_loss_forward",
    "NllLoss2D": "nll_loss2d_forward", "Embedding": "embedding",
    "ScaledDotProductEfficientAttention": "_scaled_dot_product_efficient_attention",
    "ScaledDotProductFlashAttention": "_scaled_dot_product_flash_attention",
    "ScaledDotProductFlashAttentionForCpu": "_scaled_dot_product_flash_attention_for_cpu",
    "Index": "index", "IndexPut": "index_put", "Copy": "copy_", "SmoothL1Loss": "smooth_l1_loss",
}
# Operators whose overload for a tensor argument is ``.Tensor`` (cosmetic: overloads compare
# equal), as PyTorch records ``x * y`` and ``x * 2`` alike.
_TENSOR_OVERLOAD = frozenset((
    "add", "sub", "mul", "div", "eq", "ne", "lt", "le", "gt", "ge", "remainder", "fmod",
    "rsub", "maximum", "minimum", "slice", "index", "bitwise_and", "bitwise_or", "bitwise_xor",
))
_BY_CLASS: dict = {}


def op_for(P):
    """The ATen operator of primitive ``P`` (a ``Node`` subclass, by its grad_fn name), or ``P``
    itself for a user ``autograd.Function`` (PyTorch shows policies the ops inside its forward;
    here the Function is one call).

    >>> from retrograd.ops.linalg import MmBackward0
    >>> op_for(MmBackward0)
    <OpOverload(op='aten.mm', overload='default')>
    """
    op = _BY_CLASS.get(P)
    if op is None:
        name = getattr(P, "_name", None)
        if not isinstance(name, str) or "Backward" not in name:
            return P
        stem = re.sub(r"Backwards?\d*$", "", name.rsplit("::", 1)[-1])
        aten_name = _STEMS.get(stem)
        if aten_name is None:
            s = re.sub(r"(\d)D", r"\1d", stem)
            aten_name = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", s).lower()
        packet = getattr(aten, aten_name)
        op = _BY_CLASS[P] = getattr(packet, "Tensor" if aten_name in _TENSOR_OVERLOAD
                                    else "default")
    return op
