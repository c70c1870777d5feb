"""The autograd graph: a ``Node`` is the backward of one op call.

A node holds ``next_functions`` (one ``(node or None, input_nr)`` edge per input), the tensors its
backward needs (checked against their version when unpacked, freed after backward unless the
graph is retained) and hooks. Leaves that require grad are reached through an
``AccumulateGrad`` node, which the leaf keeps and which refers back to the leaf only weakly,
so that no reference cycle forms.

A node's ``backward(xp, *grads)`` returns one gradient (or None) per input. ``xp`` is the
namespace its formula calls: NumPy arrays (``ops._array``) for a plain backward, or retrograd's
own differentiable ops (``ops``) when ``create_graph=True``; so one formula serves both, and
every order of derivative comes from the same line.
"""

from __future__ import annotations

import itertools
import re
import weakref

import numpy as np

from .._dtypes import FROM_NP
from ..utils.hooks import RemovableHandle

__all__ = ["Node", "AccumulateGrad", "RemovableHandle"]

# Creation order of nodes: the engine runs newer nodes first (see engine._run).
next_seq = itertools.count(1).__next__

FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)


def type_name(arr) -> str:
    """PyTorch's legacy type name of an array's dtype, as its error messages print it."""
    return "torch." + FROM_NP[arr.dtype].tensor_type


class Node:
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
    _shapes = ()          # input shapes, for undoing broadcasting
    _dtypes = None        # input NumPy dtypes, when they differ from the output's
    _pre_hooks = None
    _post_hooks = None
    _tensor_hooks = None  # {output_nr: [hook, ...]} from Tensor.register_hook on non-leaves
    _retain = None        # {output_nr: weakref to a tensor that retains its grad}
    _n_out = 1
    _multi_view = False   # a view op with several outputs (split, unbind): no in-place on them
    _materialize = True
    _seq = 0              # creation order, set when the node is attached to its output
    _hooked = False       # any of the hooks above (or retain_grad) present: one check per node
    _name = "Node"

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # Internal variants (say a tensor-times-scalar MulBackward0) set ``_name`` themselves.
        if "_name" not in cls.__dict__:
            cls._name = cls.__name__

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

    # -- saved tensors -------------------------------------------------------------------------
    def save(self, *tensors) -> None:
        """Keep input tensors (or None, or numbers) for backward; versions are checked when
        unpacked."""
        versions = []
        for t in tensors:
            if t is None or t.__class__ in _CONSTANTS:
                versions.append(None)
            elif t._inference:
                raise RuntimeError(_INFERENCE_SAVE)
            else:
                versions.append(t._vc[0])
        self._saved = tensors
        self._versions = versions

    def save2(self, a, b) -> None:
        """``save(a, b)`` unrolled: binary ops call this on every recorded forward."""
        if a is None or a.__class__ in _CONSTANTS:
            va = None
        elif a._inference:
            raise RuntimeError(_INFERENCE_SAVE)
        else:
            va = a._vc[0]
        if b is None or b.__class__ in _CONSTANTS:
            vb = None
        elif b._inference:
            raise RuntimeError(_INFERENCE_SAVE)
        else:
            vb = b._vc[0]
        self._saved = (a, b)
        self._versions = (va, vb)

    def save_output(self, t) -> None:
        """Keep an output without a reference cycle: its array, not the tensor."""
        self._out = (t._data, t._vc, t._vc[0])

    def saved(self, as_tensors: bool):
        """The saved inputs, as arrays or (for create_graph) as tensors."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(FREED_MSG)
        if len(saved) == 2:
            a, b = saved
            va, vb = self._versions
            if va is not None:
                if a._vc[0] != va:
                    raise RuntimeError(modified_msg(a, va))
                if not as_tensors:
                    a = a._data
            if vb is not None:
                if b._vc[0] != vb:
                    raise RuntimeError(modified_msg(b, vb))
                if not as_tensors:
                    b = b._data
            return a, b
        out = []
        for t, v in zip(saved, self._versions):
            if v is not None:
                if t._vc[0] != v:
                    raise RuntimeError(modified_msg(t, v))
                if not as_tensors:
                    t = t._data
            out.append(t)
        return out

    def saved_output(self, as_tensor: bool):
        """The saved output; as a tensor its grad_fn is this node, as PyTorch unpacks it."""
        out = self._out
        if out is None:
            raise RuntimeError(FREED_MSG)
        arr, vc, version = out
        if vc[0] != version:
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{type_name(arr)} {list(arr.shape)}], which is output 0 of "
                f"{op_name(self)}, is at version {vc[0]}; expected version {version} instead. "
                + HINT
            )
        if not as_tensor:
            return arr
        return unpacked_output(arr, vc, self, 0)

    def release(self) -> None:
        """Free saved tensors once the backward that needed them has run."""
        self._saved = None
        self._out = None

    # -- hooks ---------------------------------------------------------------------------------
    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; it may return new grad_outputs."""
        self._hooked = True
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        return RemovableHandle(self._pre_hooks, fn)

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(fn)
        return RemovableHandle(self._post_hooks, fn)

    def _add_tensor_hook(self, nr: int, fn) -> RemovableHandle:
        self._hooked = True
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


_INFERENCE_SAVE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)

# Python numbers saved beside tensors (``x * 2`` keeps the 2): no version to check.
_CONSTANTS = (int, float, bool, complex, np.ndarray)

HINT = (
    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
    "with torch.autograd.set_detect_anomaly(True, check_nan=False)."
)


def op_name(fn) -> str:
    """How PyTorch's version error names the op behind a node: ``Exp`` for ``ExpBackward0``."""
    return _BACKWARD_SUFFIX.sub("", fn.name())


_BACKWARD_SUFFIX = re.compile(r"Backward\d*$")


def unpacked_output(arr, vc, node, nr):
    """A saved output unpacked for a recorded backward: a tensor whose grad_fn is ``node``.

    It keeps the node's place in the engine's order (no new sequence number)."""
    t = make_tensor(arr)
    t._grad_fn, t._nr, t._rg = node, nr, True
    t._vc = vc
    return t


def modified_msg(t, expected: int) -> str:
    arr = t._data
    where = ""
    if t._grad_fn is not None:
        where = f", which is output {t._nr} of {op_name(t._grad_fn)},"
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{type_name(arr)} {list(arr.shape)}]{where} is at version {t._vc[0]}; "
        f"expected version {expected} instead. " + HINT
    )


class AccumulateGrad(Node):
    """The node behind a leaf that requires grad: it adds incoming gradients to ``.grad``."""

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


def make_tensor(arr, grad_fn=None, nr=0):
    """Set by ``_tensor`` at import: builds a tensor with a grad_fn (avoids an import cycle)."""
    raise RuntimeError("retrograd._tensor is not loaded")


def accumulate_node(t) -> AccumulateGrad:
    """The leaf's AccumulateGrad, made on first use and kept by the leaf."""
    acc = t._acc
    if acc is None:
        acc = t._acc = AccumulateGrad(t)
    return acc
