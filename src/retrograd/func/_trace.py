"""Tracing one sample's program for ``vmap``: a tape of the primitive calls it makes.

``vmap`` runs the function once, on one sample, while a ``Tape`` watches every primitive call
through ``apply``'s observer hook (``ops._apply.add_observer``). Each call becomes an entry:
the primitive, its inputs and node attributes as references to earlier values (the function's
inputs and earlier outputs, found by tensor identity or by the identity of their arrays), and
its outputs. ``_batching.replay`` then runs the tape once on the whole batch, with the
primitives' batching rules.

The transforms ``grad``/``vjp`` do not trace their backward pass: they record one ``grad``
entry (and a ``leaf`` entry per argument they differentiate), which the replay runs as a
backward of the batched graph; every sample's part of that graph is independent of the
others', so it yields per-sample gradients.

The tape is only a faithful program if nothing escaped it. ``bad`` says why one did: Python
control read a traced value (``.item()``, ``bool()``, ``.tolist()``, ``.numpy()``), an op wrote
in place, forward-mode AD was on. A tensor or array that is neither an input nor an earlier
output is an *external*: a constant of the function (a closure tensor, a parameter), or a
value made during the call (``torch.ones(3)``, or a comparison's mask computed from the data
outside ``apply``): ``vmap`` traces a second sample, and only an external that is the same
object in both traces counts as a constant (``same_program``); the others make it loop.
"""

from __future__ import annotations

import sys

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import state
from ..autograd.graph import Node
from ..ops import _apply, _core
from ..ops import inplace as _inplace
from . import _transforms

__all__ = ["Tape", "TensorMethod", "same_program", "same_ref"]

ndarray = np.ndarray

# Tensor methods through which Python reads a value: on a traced value, the rest of the
# program may depend on that sample's data.
_ESCAPES = ("item", "tolist", "numpy", "__bool__", "__float__", "__int__", "__index__",
            "__array__", "__complex__", "backward")
# Operators that compute a tensor from tensors without ``apply`` (no node: comparisons, bitwise
# ops): while tracing, each call is recorded too, as a ``TensorMethod`` entry, so that a mask
# computed from the data is a value of the tape rather than an unknown array.
_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
         "calling .item() on a Tensor, please try to rewrite what you're doing with other "
         "operations. If error is occurring somewhere inside PyTorch internals, please file a "
         "bug report.")
_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"
_ESCAPE_ERRORS = {
    "item": _ITEM, "__float__": _ITEM, "__int__": _ITEM, "__index__": _ITEM,
    "__complex__": _ITEM, "tolist": _STORAGE, "numpy": _STORAGE, "__array__": _STORAGE,
    "__bool__": "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
                "control flow. We don't support that yet, please file an issue at "
                "https://github.com/pytorch/pytorch/issues .",
    "backward": "backward() called inside a functorch transform. This is not supported, please "
                "use functorch.grad or functorch.vjp instead or call backward() outside of "
                "functorch transforms.",
}
_RECORDED = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__or__",
             "__xor__", "__rand__", "__ror__", "__rxor__", "__invert__")
_ORIGINAL: dict = {}


# Functions that make a tensor from Python values or from another tensor's shape and dtype
# alone: while tracing, what they return is declared a constant (``Tape.const``), not a value
# of unknown origin. The ``data`` makers count only when no traced tensor is their data.
_MAKERS = ("ones", "zeros", "full", "empty", "arange", "eye", "linspace", "logspace",
           "ones_like", "zeros_like", "full_like", "empty_like")
_DATA_MAKERS = ("tensor", "as_tensor")
_NEW_METHODS = ("new_ones", "new_zeros", "new_full", "new_empty")


def _constant_maker(orig, data: bool):
    def make_constant(*args, **kwargs):
        out = orig(*args, **kwargs)
        if ACTIVE and isinstance(out, Tensor):
            if data and any(t.knows(a) for t in ACTIVE for a in args[:1]):
                return out  # a traced tensor's data: not a constant
            for t in ACTIVE:
                t.const(out)
                if not data and args and isinstance(args[0], Tensor) and \
                        t._is_batched(t.ref(args[0])):
                    t.batched_consts.add(id(out))  # zeros_like(x), x.new_zeros(...): batched
        return out

    make_constant.__name__ = getattr(orig, "__name__", "make")
    return make_constant


# How PyTorch names an in-place op in its vmap error, by the primitive behind it
_INPLACE_NAMES = {"AddBackward0": "add_", "IndexPutBackward0": "index_put_",
                  "IndexAddBackward0": "index_add_", "ClampBackward1": "aten::clamp_",
                  "AddcmulBackward0": "aten::addcmul_", "AddcdivBackward0": "aten::addcdiv_",
                  "PowBackward1": "aten::pow_", "LerpBackward0": "aten::lerp_",
                  "LerpBackward1": "aten::lerp_", "MaskedScatterBackward0": "aten::masked_scatter_",
                  "IndexCopyBackward0": "aten::index_copy_", "ScatterBackward0": "aten::scatter_",
                  "Atan2Backward0": "add_"}

_PATCHES: list = []  # (owner, name, original, stand-in), made once on first use


def _patches() -> list:
    if not _PATCHES:
        pkg = sys.modules[__name__.split(".")[0]]
        for name in _ESCAPES:
            orig = _ORIGINAL[name] = getattr(Tensor, name)
            _PATCHES.append((Tensor, name, orig, _escape_method(name)))
        for name in _RECORDED:
            orig = _ORIGINAL[name] = getattr(Tensor, name)
            _PATCHES.append((Tensor, name, orig, _recorded_method(name)))
        targets = [(pkg, n, False) for n in _MAKERS] + \
            [(pkg, n, True) for n in _DATA_MAKERS] + [(Tensor, n, False) for n in _NEW_METHODS]
        for owner, name, data in targets:
            orig = getattr(owner, name)
            _PATCHES.append((owner, name, orig, _constant_maker(orig, data)))
        _PATCHES.append((_inplace, "write", _inplace.write, _checked_write(_inplace.write)))
        _PATCHES.append((_core, "made_constant", _core.made_constant,
                         _constant_from(_core.made_constant)))
    return _PATCHES


def _constant_from(orig):
    def made_constant(out, *sources):
        out = orig(out, *sources)
        if ACTIVE and not any(t.knows(s) for t in ACTIVE for s in sources):
            for t in ACTIVE:
                t.const(out)
        return out

    return made_constant


def _checked_write(orig):
    """In-place ops write their result through ``ops.inplace.write``: the innermost tape
    checks each write first (``Tape.check_write``)."""

    def write(self, arr) -> None:
        tape = ACTIVE[-1] if ACTIVE else None
        if tape is not None and tape.bad is None and not tape.paused and not tape.in_grad:
            tape.check_write(self, arr)
        orig(self, arr)

    return write


class TensorMethod(Node):
    """Stands on a tape for a call of one of the operators above (its name: the ``method``
    attribute); its batching rule calls the operator on the batch."""


def _recorded_method(name):
    orig = _ORIGINAL[name]

    def method(self, *args):
        out = orig(self, *args)
        if ACTIVE and isinstance(out, Tensor):
            ACTIVE[-1].record_method(name, (self,) + args, out)
        return out

    method.__name__ = name
    return method
ACTIVE: list = []  # the tapes being traced, innermost last (nested vmap)


def _escape_method(name):
    orig = _ORIGINAL[name]

    def method(self, *args, **kwargs):
        # The run goes on (the loop reuses it as its sample's run), the tape records no more;
        # but a value that differs per sample is PyTorch's error (while the tape can tell).
        for tape in ACTIVE:
            if not tape.in_grad and tape.knows(self):
                if tape.bad is None and not tape.paused and tape._is_batched(tape.ref(self)) \
                        and not _internal(sys._getframe(1)):
                    raise RuntimeError(_ESCAPE_ERRORS[name])
                tape.bad = tape.bad or f"Python read a traced value (Tensor.{name})"
        return orig(self, *args, **kwargs)

    method.__name__ = name
    return method


def _check_function(cls) -> None:
    """PyTorch's errors for a user ``autograd.Function`` under ``vmap`` without the support
    its transforms need (the library's own Functions are left to the loop)."""
    if cls.__module__.startswith(_PKG):
        return
    if cls.setup_context is Function.setup_context:
        raise RuntimeError(
            "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
            "jacrev, ...), it must override the setup_context staticmethod. For more details, "
            "please see https://pytorch.org/docs/main/notes/extending.func.html")
    if getattr(cls, "vmap", None) is None and not getattr(cls, "generate_vmap_rule", False):
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
            "override and implement the vmap staticmethod or set generate_vmap_rule=True. For "
            "more details, please see https://pytorch.org/docs/main/notes/extending.func.html")


def _internal(frame) -> bool:
    """Whether the reader is the library itself (an op written with NumPy on a value, where
    PyTorch has a kernel that batches): then ``vmap`` loops rather than raise."""
    return frame.f_globals.get("__name__", "").startswith(_PKG)


_PKG = __name__.split(".")[0] + "."
_PLAIN = frozenset((int, float, bool, str))  # attribute values that are constants as they are


class Tape:
    """The primitive calls of one traced run; see the module docstring.

    References (``refs``) are tuples: ``("v", i)`` value ``i``; ``("d", i)`` value ``i``
    detached (a tensor sharing its array, outside the graph); ``("a", i)`` value ``i``'s array;
    ``("c", obj)`` a constant (a number, a string, a tuple of ints, None); ``("x", k)`` the
    external ``externals[k]``.
    """

    def __init__(self, size: int = 0) -> None:
        self.size = size            # the batch size
        self.batched: set = set()   # the values that differ per sample (the vmapped inputs and
        #                             what is computed from them)
        self.batched_consts: set = set()  # ids of constants PyTorch makes batched (zeros_like)
        self.meta: list = []        # per value: (shape, dtype, requires_grad)
        self.traced: list = []      # per value: the traced tensor itself
        self.inputs: list = []      # value indices of the function's tensor inputs
        self.entries: list = []
        self.externals: list = []
        self.bad = None
        self.paused = 0             # an inner vmap is tracing
        self.in_grad = False        # the traced program's own backward is running
        self._tid: dict = {}
        self._did: dict = {}
        self._versions: list = []   # (version counter, version when recorded) per value
        self._consts: dict = {}     # tensors declared constant (Tape.const), by id

    # -- values --------------------------------------------------------------------------------
    def new(self, t: Tensor) -> int:
        i = len(self.meta)
        d, vc = t._data, t._vc
        self.meta.append((d.shape, d.dtype, t._rg if t._view is None else t.requires_grad))
        self.traced.append(t)  # keeps it (and so the ids above) alive while tracing
        self._versions.append((vc, vc[0]))
        self._tid[id(t)] = i
        self._did.setdefault(id(d), i)
        return i

    def const(self, t: Tensor) -> None:
        """Declare ``t``, made during the call, a constant (not computed from the data)."""
        self._consts[id(t)] = t
        self._versions.append((t._vc, t._vc[0]))  # written in place later: not a constant

    def knows(self, t) -> bool:
        if isinstance(t, ndarray):
            return id(t) in self._did
        return id(t) in self._tid or id(getattr(t, "_data", None)) in self._did

    def ref(self, x):
        if isinstance(x, Tensor):
            i = self._tid.get(id(x))
            if i is not None:
                return ("v", i)
            i = self._did.get(id(x._data))
            if i is not None:
                return ("d" if not x.requires_grad and self.meta[i][2] else "v", i)
            if id(x) in self._consts:
                return ("c", x)
            return self._external(x)
        if isinstance(x, ndarray):
            i = self._did.get(id(x))
            if i is not None:
                return ("a", i)
            return self._external(x)
        if isinstance(x, (tuple, list)) and any(isinstance(e, (Tensor, ndarray)) for e in x):
            return self._external(x)
        return ("c", x)

    def _external(self, x):
        if isinstance(x, Tensor):  # a closure's tensor written in place later: not a constant
            self._versions.append((x._vc, x._vc[0]))
        self.externals.append(x)
        return ("x", len(self.externals) - 1)

    # -- recording -----------------------------------------------------------------------------
    def start(self) -> None:
        if not ACTIVE:
            for owner, name, _, stand_in in _patches():
                setattr(owner, name, stand_in)
        else:
            ACTIVE[-1].paused += 1
        ACTIVE.append(self)
        _transforms.TRACE = self
        _apply.add_observer(self.observe)

    def stop(self) -> None:
        _apply.remove_observer(self.observe)
        # An in-place op changes a value after the calls that read it were recorded (whether
        # or not the op itself was observed): its version counter tells.
        if self.bad is None:
            for vc, v in self._versions:
                if vc[0] != v:
                    self.bad = "an in-place op"
                    break
        ACTIVE.pop()
        _transforms.TRACE = ACTIVE[-1] if ACTIVE else None
        if ACTIVE:
            ACTIVE[-1].paused -= 1
        else:
            for owner, name, orig, _ in _PATCHES:
                setattr(owner, name, orig)

    def observe(self, P, inputs, attrs, run):
        if self.paused or self.in_grad:
            return run()
        if isinstance(P, type) and not issubclass(P, Node):
            _check_function(P)
        tins, versions = [], []
        for x in inputs:
            if isinstance(x, Tensor):
                tins.append(x)
                versions.append(x._vc[0])
        out = run()
        if self.bad is None:
            self._record(P, inputs, attrs, out, tins, versions)
        return out

    def record_method(self, name, inputs, out) -> None:
        if self.paused or self.in_grad or self.bad is not None:
            return
        tins = [x for x in inputs if isinstance(x, Tensor)]
        self._record(TensorMethod, inputs, {"method": name}, out, tins, [x._vc[0] for x in tins])

    def _record(self, P, inputs, attrs, out, tins, versions) -> None:
        outs = out if out.__class__ is tuple else (out,)
        for x, v in zip(tins, versions):
            if x._vc[0] != v or x is outs[0] or (len(outs) > 1 and any(o is x for o in outs)):
                self.bad = "an in-place op"
                return
        for x in tins:
            if x._fw is not None:
                self.bad = "forward-mode AD"
                return
        ref, batched = self.ref, self.batched
        in_refs = tuple([ref(x) for x in inputs])
        # Whether a reference is batched (``_is_batched``, inlined on the hot path).
        any_b = False
        for r in in_refs:
            if r[0] == "c":
                if id(r[1]) in self.batched_consts:
                    any_b = True
            elif r[0] != "x" and r[1] in batched:
                any_b = True
        if P is None:
            rule = None
        else:
            if not issubclass(P, Node):
                attrs = {}  # a user Function: its ctx is no input of the rule
            rule = P.__dict__.get("vmap")
            rule = getattr(rule, "__func__", rule)
        derived = getattr(rule, "derived", ())  # attributes the rule computes afresh
        consts = getattr(rule, "consts", ())    # attributes made from Python numbers
        attr_refs = {}
        for k, v in attrs.items():
            if k == "fwd" or k in consts or v is None or v.__class__ in _PLAIN:
                r = ("c", v)
            elif k in derived:
                r = ("c", None)
            else:
                r = ref(v)
            attr_refs[k] = r
            if not any_b and self._is_batched(r):
                any_b = True
        for o in outs:
            if not isinstance(o, Tensor):
                self.bad = "a primitive returned a non-tensor"
                return
        out_refs = tuple([self.new(o) for o in outs])
        if any_b:
            batched.update(out_refs)
        self.entries.append(("op", P, in_refs, attr_refs, out_refs, state.grad_enabled))

    def _is_batched(self, ref) -> bool:
        if ref[0] == "c":
            return id(ref[1]) in self.batched_consts
        return ref[0] in ("v", "d", "a") and ref[1] in self.batched

    def check_write(self, dst: Tensor, arr) -> None:
        """PyTorch's error for an in-place op that writes values differing per sample (``arr``,
        the op's result) into a tensor that does not: ``vmap`` cannot give it a batch dim."""
        i = self._did.get(id(arr))
        if i is None or i not in self.batched or self._is_batched(self.ref(dst)):
            return
        op = next((e[1] for e in reversed(self.entries) if e[0] == "op" and i in e[4]), None)
        name = _INPLACE_NAMES.get(getattr(op, "__name__", ""), "inplace arithmetic")
        if name == "add_":  # PyTorch's add_ (atan2_) broadcasts first
            raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast "
                               f"shape {[self.size] + list(np.shape(arr))}")
        raise RuntimeError(
            f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor "
            "`other` in extra_args that has more elements than `self`. This happened due to "
            "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try "
            f"to use out-of-place operators instead of {name}. If said operator is being called "
            "inside the PyTorch framework, please file a bug report instead.")

    # -- the transforms' entries (func._transforms calls these while a tape traces) ------------
    def leaf(self, x, t) -> None:
        """``t``, a fresh tensor to differentiate with respect to, stands for ``x``."""
        if self.paused or self.in_grad or self.bad is not None:
            return
        src = self.ref(x)
        self.entries.append(("leaf", src, self.new(t)))
        if self._is_batched(src):
            self.batched.add(len(self.meta) - 1)

    def grads(self, fn, out, leaves, outer, grad_outputs):
        """Run ``fn`` (``_transforms._grads``) untraced, recording one ``grad`` entry."""
        if self.paused or self.in_grad:
            return fn(out, leaves, outer, grad_outputs)
        self.in_grad = True
        try:
            res = fn(out, leaves, outer, grad_outputs)
        finally:
            self.in_grad = False
        if self.bad is None:
            out_refs = tuple(self.ref(o) for o in out)
            leaf_refs = tuple(tuple(self.ref(x) for x in g) for g in leaves)
            go_refs = None if grad_outputs is None else tuple(self.ref(g) for g in grad_outputs)
            res_refs = tuple(tuple(self.new(g) for g in group) for group in res)
            if any(self._is_batched(r) for r in out_refs + sum(leaf_refs, ()) +
                   (go_refs or ())):
                self.batched.update(sum(res_refs, ()))
            self.entries.append(("grad", out_refs, leaf_refs, outer, go_refs, res_refs))
        return res


def _same_external(a, b) -> bool:
    # The same object in both traces existed before them (a closure's tensor, a parameter):
    # a constant. A new one each time may have been computed from the sample (a comparison's
    # mask, even one equal in both samples), so only identity counts.
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same_external(x, y) for x, y in zip(a, b))
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return a._data is b._data  # w.detach() in the function: a new tensor, the same array
    return a is b


def _same_const(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, Tensor) and isinstance(b, Tensor):  # declared constants (Tape.const)
        return a._data.shape == b._data.shape and a._data.dtype == b._data.dtype and \
            bool(np.array_equal(a._data, b._data))
    if callable(a) and hasattr(a, "__code__"):  # a forward made per call (add's alpha)
        return getattr(b, "__code__", None) is a.__code__
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 - incomparable constants are not the same
        return False


def same_ref(r1, r2, t1: Tape, t2: Tape) -> bool:
    """Whether two references (of two traces) stand for the same thing."""
    if r1[0] != r2[0]:
        return False
    if r1[0] == "c":
        return _same_const(r1[1], r2[1])
    if r1[0] == "x":
        return _same_external(t1.externals[r1[1]], t2.externals[r2[1]])
    return r1[1] == r2[1]


def same_program(t1: Tape, t2: Tape) -> bool:
    """Whether two traces (of two samples) are one program: the same calls on the same
    references, the same constants, externals equal, and outputs of the same shapes."""
    if len(t1.entries) != len(t2.entries) or len(t1.meta) != len(t2.meta):
        return False
    if any(m1[:2] != m2[:2] for m1, m2 in zip(t1.meta, t2.meta)):
        return False
    for e1, e2 in zip(t1.entries, t2.entries):
        if e1[0] != e2[0]:
            return False
        if e1[0] == "op":
            if e1[1] is not e2[1] or e1[3].keys() != e2[3].keys() or len(e1[2]) != len(e2[2]) \
                    or e1[5] != e2[5]:
                return False
            pairs = list(zip(e1[2], e2[2])) + [(e1[3][k], e2[3][k]) for k in e1[3]]
        elif e1[0] == "leaf":
            pairs = [(e1[1], e2[1])]
        else:
            if e1[3] != e2[3] or (e1[4] is None) != (e2[4] is None):
                return False
            pairs = list(zip(e1[1], e2[1])) + list(zip(e1[4] or (), e2[4] or ()))
            pairs += [p for g1, g2 in zip(e1[2], e2[2]) for p in zip(g1, g2)]
        if not all(same_ref(a, b, t1, t2) for a, b in pairs):
            return False
    return True
