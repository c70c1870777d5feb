"""The autograd graph: a ``Node`` is the backward of one op call.

A node holds ``next_functions`` (one ``(node or None, input_nr)`` edge per input), each input's
recorded ``(shape, dtype)`` (``_meta``, which the engine checks every gradient against), the
tensors its backward needs (``saved.py``: checked against their version when unpacked, freed
after backward unless the graph is retained) and hooks. Leaves that require grad are reached
through an ``AccumulateGrad`` node, which the leaf keeps and which refers back to the leaf only
weakly, so that no reference cycle forms.

A node's ``backward(xp, *grads)`` returns one gradient (or None) per input. ``xp`` is the
namespace its formula calls: NumPy arrays (``ops._array``) for a plain backward, or retrograd's
own differentiable ops (``ops``) when ``create_graph=True``; so one formula serves both, and
every order of derivative comes from the same line.
"""

from __future__ import annotations

import itertools
import weakref

from ..utils.hooks import RemovableHandle
from .saved import (  # noqa: F401 - re-exported: ops import these from graph
    FREED_MSG,
    HINT,
    SavedTensors,
    modified_msg,
    op_name,
    type_name,
    unpacked_output,
)

__all__ = ["Node", "AccumulateGrad", "RemovableHandle", "current_sequence_nr"]

_TOOLS = ("to_dot", "draw", "memory_report", "MemoryReport", "GraphLeakWarning",
          "increment_version", "GradientEdge", "get_gradient_edge")


def __getattr__(name: str):
    # The graph tools (graph_tools.py, leak.py) need the tensor type, whose module imports this
    # one: they load on first use.
    if name in _TOOLS:
        from . import graph_tools, leak
        return getattr(leak if name == "GraphLeakWarning" else graph_tools, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Creation order of nodes: the engine runs newer nodes first (see engine._run).
next_seq = itertools.count(1).__next__


def current_sequence_nr() -> int:
    """A number above every node's creation number so far and below every later node's: two
    of them bracket the nodes an op or a module's forward made (``memory_report`` uses this).

    >>> current_sequence_nr() < current_sequence_nr()
    True
    """
    return next_seq()


class Node(SavedTensors):
    """The backward of one op call. Subclasses define ``backward(self, xp, *grads)``.

    >>> import retrograd as torch
    >>> x = torch.tensor([2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().grad_fn.name()
    'SumBackward0'
    """

    # The declaration of a primitive (read by ``ops._apply`` and the transforms):
    forward = None        # the forward on arrays, where ``apply`` computes it
    saves = ()            # what the backward reads (see ops._apply: apply_unary, save_plan)
    jvp = None            # forward-mode rule (room for the transforms issue)
    vmap = None           # batching rule (room for the transforms issue)

    # Class-level defaults keep node creation to the few attributes an op actually sets.
    next_functions: tuple = ()
    _meta = None          # per input: (shape, NumPy dtype) the engine checks gradients against
    _saved = ()           # tensors the backward needs; None once freed
    _versions = ()        # their versions when saved
    _out = None           # (array, version counter, version) of a saved output
    _pre_hooks = None
    _post_hooks = None
    _tensor_hooks = None  # {output_nr: [hook, ...]} from Tensor.register_hook on non-leaves
    _retain = None        # {output_nr: weakref to a tensor that retains its grad}
    _n_out = 1
    _multi_view = False   # a view op with several outputs (split, unbind): no in-place on them
    _step = None          # a view op's step (``ops._apply.apply_view``)
    _materialize = True
    _plan = None
    _seq = 0              # creation order, set when the node is attached to its output
    _hooked = False       # any of the hooks above (or retain_grad) present: one check per node
    _plain = True         # no hooks, one output, the default release (engine's fast path)
    _name = "Node"

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # Internal variants (say a tensor-times-scalar MulBackward0) set ``_name`` themselves.
        if "_name" not in cls.__dict__:
            cls._name = cls.__name__
        cls._plan = None  # what a binary primitive saves, worked out on first use (ops._apply)
        # The engine's fast path: one output, no hooks, nothing but saved tensors to free.
        cls._plain = cls._plain and cls._n_out == 1 and "release" not in cls.__dict__

    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"

    @property
    def metadata(self) -> dict:
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self._metadata = {}
        return d

    def backward(self, xp, *grads):
        raise NotImplementedError(f"{self.name()} has no backward")

    # -- hooks ---------------------------------------------------------------------------------
    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; it may return new grad_outputs."""
        self._hooked = True
        self._plain = False
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        return RemovableHandle(self._pre_hooks, fn)

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may return new grad_inputs."""
        self._plain = False
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(fn)
        return RemovableHandle(self._post_hooks, fn)

    def _add_tensor_hook(self, nr: int, fn) -> RemovableHandle:
        self._hooked = True
        self._plain = False
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        hooks = self._tensor_hooks.setdefault(nr, [])
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def _needs(self, i: int) -> bool:
        return self.next_functions[i][0] is not None

    @property
    def needs_input_grad(self) -> tuple:
        return tuple(fn is not None for fn, _ in self.next_functions)


class AccumulateGrad(Node):
    """The node behind a leaf that requires grad: it adds incoming gradients to ``.grad``."""

    _plain = False

    def __init__(self, variable) -> None:
        # NOTE: the leaf holds this node (so building an edge to it is one attribute read) and
        # the node holds the leaf weakly, so no cycle forms; a gradient for a leaf that is gone
        # has nowhere to go and is dropped.
        self._variable = weakref.ref(variable)
        self._seq = next_seq()

    @property
    def variable(self):
        return self._variable()

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {hex(id(self))}>"


def accumulate_node(t) -> AccumulateGrad:
    """The leaf's AccumulateGrad, made on first use and kept by the leaf."""
    acc = t._acc
    if acc is None:
        acc = t._acc = AccumulateGrad(t)
    return acc
