"""Saved-tensor hooks: ``saved_tensors_hooks(pack, unpack)``, ``disable_saved_tensors_hooks``,
``save_on_cpu``, as in ``torch.autograd.graph``.

While a pair of hooks is registered (innermost wins; the stack is per thread), every tensor
saved for backward, by built-in ops (inputs and outputs) and custom Functions alike, is handed
to ``pack`` at the moment it is saved, and only what ``pack`` returned is kept. The backward,
or a ``grad_fn._saved_*`` access, calls ``unpack`` on it and uses the tensor it returns, in the
place of the original (with the original's place in the graph), as PyTorch does; versions are
not checked then (the hooks own the data).

The save points (``SavedTensors.save``, the unrolled saves in ``ops._apply``, saved outputs,
Function's ``save_for_backward``) test one module flag, ``saved.HOOKS_ON``, and call
``pack_node`` only when it is set; the unpack side is one flag per node (``_packed``).

PyTorch packs what its node saves in the order of its saved names (inputs by name, then
outputs). A primitive whose saves differ from the plain order, or that keeps as arrays what
PyTorch saves as tensors (indices, masks, targets), declares ``_packs``: that order, over its
saved entries (``int``), its saved output (``"out"``) and array attributes (``"_idx"``, or
``("_idx", to_torch, back)`` where PyTorch's tensor has another shape). A packed attribute
leaves the node's ``__dict__`` and reads through a class descriptor that unpacks it (so nodes
made without hooks read it as a plain attribute, at no cost). An entry ``"=name"`` packs the
value of ``grad_fn._saved_name`` (a tensor, or each tensor of a list), for what the node keeps in
another form (an indexing key, statistics it recomputes): those are unpacked when the node's
backward runs (a per-node override of ``backward``), and the node keeps its own form.
"""

from __future__ import annotations

import threading
import weakref
from functools import partial

import numpy as np

from .._tensor import Tensor, make
from . import saved as _saved
from .saved_attrs import NAMES, saved_attr

__all__ = ["saved_tensors_hooks", "disable_saved_tensors_hooks", "save_on_cpu", "pack_node",
           "unpack_entry", "Packed", "Plain"]


class _State(threading.local):
    stack: tuple = ()        # (pack, unpack) pairs, innermost last
    disabled = None          # disable_saved_tensors_hooks' error message, while it is active


_state = _State()
_users = [0]  # registered pairs over all threads: the flag save points test


def _sync_flag() -> None:
    _saved.HOOKS_ON = _users[0] > 0


class Packed:
    """What is kept for one saved tensor while hooks are on: the pack hook's result, the unpack
    hook to call, and where the original sat in the graph (so that an unpacked copy under
    ``create_graph`` carries on from there). ``out`` is the output number when the tensor is an
    output of the node that saved it (its grad_fn, the node itself, is not stored: no cycle)."""

    __slots__ = ("value", "unpack", "fn", "nr", "rg", "acc", "out")

    def __init__(self, t: Tensor, pack, unpack, out=None) -> None:
        self.unpack = unpack
        self.out = out
        if out is None:
            self.fn, self.nr, self.rg, self.acc = t._grad_fn, t._nr, t._rg, t._acc
        else:
            self.fn, self.nr, self.rg, self.acc = None, out, True, None
        self.value = pack(t)


def _hooks():
    stack = _state.stack
    return stack[-1] if stack else None


class paused:  # noqa: N801 - a context manager, used as a function
    """Saved tensors are not packed inside: the inner graph of a composite recorded as one
    node (``ops.fused``), whose node packs what PyTorch's one node saves."""

    def __enter__(self) -> None:
        _state.stack = _state.stack + (None,)

    def __exit__(self, *args) -> None:
        _state.stack = _state.stack[:-1]


def pack_node(node, out=None, outputs=None) -> None:
    """Run the current pack hook over what ``node`` just saved: its saved inputs, and its saved
    output ``out`` (a tensor) if it keeps one. A custom Function's node passes its
    ``outputs`` (entries saved as ``"out"`` are packed as those tensors)."""
    hooks = _hooks()
    if hooks is None:
        return
    pack, unpack = hooks
    plan = type(node).__dict__.get("_packs_plan")
    if plan is None:
        plan = _plan(type(node))
    if plan is not _NO_PLAN:
        if out is None and plan and plan[-1] == "out":
            return  # the output's save point, just after this one, packs all in order
        _pack_planned(node, plan, pack, unpack, out)
    saved = node._saved
    if saved:
        kinds = node.__dict__.get("_saved_kinds")
        entries = []
        for i, t in enumerate(saved):
            if kinds is not None and kinds[i] == "out":
                nr = _out_nr(node, t[0])
                entries.append(Packed(outputs[nr], pack, unpack, out=nr))
            elif isinstance(t, Tensor):
                entries.append(Packed(t, pack, unpack))
            else:
                entries.append(t)
        node._saved = tuple(entries)
        node._versions = (None,) * len(entries)
    if out is not None and node._out.__class__ is tuple and \
            getattr(type(node), "_pack_rest", True):
        node._out = Packed(out, pack, unpack, out=0)
    node._packed = True


_NO_PLAN = False  # (a class without ``_packs``; an empty plan packs nothing)
_ABSENT = object()


class _PackedAttr:
    """A node attribute PyTorch saves as a tensor (``_packs``): on a node made under hooks it
    was packed, and reading it unpacks it (as the array, or tensor, it was)."""

    __slots__ = ("name", "default")

    def __init__(self, name: str, default) -> None:
        self.name, self.default = name, default

    def __get__(self, node, cls=None):
        if node is None:
            return self
        entry = node.__dict__.get("_packed_attrs", {}).get(self.name)
        if entry is None:
            if self.default is _ABSENT:
                raise AttributeError(self.name)
            return self.default
        if node._saved is None:  # freed by a backward
            raise RuntimeError(_saved.freed_msg(node))
        p, as_tensor, back = entry
        v = unpack_entry(node, p, as_tensor)
        return back(node, v) if back is not None else v


def _by_name(cls):
    """The saved entries of a node without ``_packs`` in PyTorch's order: its inputs by their
    saved names (``other`` before ``self``), as its generated nodes save them."""
    names = NAMES.get(cls._name)
    if names is None:
        saves = cls.saves
        names = {"self": 0, "other": 1} if isinstance(saves, tuple) and len(saves) == 2 \
            and any(saves) else {}
    order = tuple(i for _, i in sorted((n, s) for n, s in names.items() if s.__class__ is int))
    return order if order != tuple(sorted(order)) else None


def _plan(cls):
    """``cls._packs`` read once per class: ``(kind, key, to_torch, back)`` per entry, the
    attributes' descriptors installed."""
    packs = getattr(cls, "_packs", None)
    if packs is None:
        packs = _by_name(cls)
    if packs is None:
        cls._packs_plan = _NO_PLAN
        return _NO_PLAN
    plan = []
    for e in packs:
        if e.__class__ is int or e == "out" or e[0] == "=":
            plan.append((e, None, None))
            continue
        name, to_torch, back = (e, None, None) if isinstance(e, str) else e
        if not isinstance(cls.__dict__.get(name), _PackedAttr):
            setattr(cls, name, _PackedAttr(name, getattr(cls, name, _ABSENT)))
        plan.append((name, to_torch, back))
    if "out" in packs:
        plan.append("out")  # (a marker: the node saves its output; pack at that point)
    cls._packs_plan = plan = tuple(plan)
    return plan


def _pack_planned(node, plan, pack, unpack, out) -> None:
    """Pack what ``node`` saved in PyTorch's order (``plan``); entries already packed (an
    earlier save point of the same node) are left as they are. A class with ``_pack_rest``
    False keeps its other saved entries unpacked (PyTorch's node does not save them)."""
    saved = node._saved
    entries = list(saved) if saved else []
    attrs = node.__dict__.get("_packed_attrs")
    plan = plan[:-1] if plan and plan[-1] == "out" else plan
    # Values named by ``"=name"``, read before anything is packed (the reads unpack after).
    done = node.__dict__.get("_packed_named", ())
    named = {key: _named(node, key[1:]) for key, _, _ in plan
             if key.__class__ is str and key[0] == "=" and key not in done}
    for key, to_torch, back in plan:
        if key.__class__ is int:
            if key < len(entries) and isinstance(entries[key], Tensor):
                entries[key] = Packed(entries[key], pack, unpack)
        elif key == "out":
            if out is not None and node._out.__class__ is tuple:
                node._out = Packed(out, pack, unpack, out=0)
        elif key[0] == "=":
            v = named.get(key)
            extra = node.__dict__.get("_packed_extra")
            if v is None:
                continue  # (not there yet, as a factorization's outputs; or packed already)
            if extra is None:
                extra = node._packed_extra = []
                node._packed_named = set()
                node.backward = partial(_unpacking_backward, weakref.ref(node))
            node._packed_named.add(key)
            # (out=0: no grad_fn kept, which may be this node: no reference cycle)
            extra += [Packed(t, pack, unpack, out=0) for t in (
                v if isinstance(v, (tuple, list)) else (v,)) if isinstance(t, Tensor)]
        else:
            v = node.__dict__.get(key)
            if v is None:
                continue  # (None stays: nothing saved, as PyTorch's undefined tensor)
            del node.__dict__[key]
            if attrs is None:
                attrs = node._packed_attrs = {}
            is_tensor = isinstance(v, Tensor)
            t = v if is_tensor else make(np.asarray(to_torch(node, v) if to_torch else v))
            attrs[key] = (Packed(t, pack, unpack), is_tensor, back)
    if saved:
        if not getattr(type(node), "_pack_rest", True):
            entries = [Plain(t, v) if isinstance(t, Tensor) else t
                       for t, v in zip(entries, node._versions)]
        node._saved = tuple(entries)
        node._versions = (None,) * len(entries)


def _named(node, name: str):
    try:  # (as the class's grad_fn: CopySlices is an IndexPutBackward0 renamed)
        return saved_attr(node, "_saved_" + name, type(node).__name__)
    except (AttributeError, RuntimeError):
        return None


def _unpacking_backward(ref, xp, *grads):
    """A node's backward that first unpacks its ``"=name"`` entries, as PyTorch's backward
    unpacks every saved tensor (the node holds this through a weak reference: no cycle)."""
    node = ref()
    for p in node._packed_extra:
        p.unpack(p.value)
    return type(node).backward(node, xp, *grads)


def _out_nr(node, arr) -> int:
    for i, a in enumerate(node._out_arrays):
        if a is arr:
            return i
    return 0


class Plain:
    """A saved tensor that has no hooks, beside one that has (``SavedTensor.register_hooks``
    on one entry of a node): unpacked as usual, version-checked."""

    __slots__ = ("t", "version")

    def __init__(self, t: Tensor, version) -> None:
        self.t, self.version = t, version

    def get(self, node, as_tensor: bool):
        t = self.t
        if self.version is not None and t._vc[0] != self.version:
            raise RuntimeError(_saved.modified_msg(t, self.version, node))
        return t if as_tensor else t._data


def unpack_entry(node, p, as_tensor: bool):
    """One saved entry of a node with packed tensors, as the backward reads it."""
    if p.__class__ is not Packed:
        return p.get(node, as_tensor) if p.__class__ is Plain else p
    t = p.unpack(p.value)
    if not isinstance(t, Tensor):
        raise TypeError(
            "Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
            f"{type(t).__name__}"
        )
    if not as_tensor:
        return t._data
    if p.out is not None:
        rg = node.__dict__.get("_out_rg")
        if rg is not None and not rg[p.out]:
            return make(t._data)
        return _saved.unpacked_output(t._data, t._vc, node, p.out)
    if t._grad_fn is p.fn and t._nr == p.nr and t._rg == p.rg and \
            (p.fn is not None or t._acc is p.acc):
        return t  # the original tensor itself (or one standing in the same place)
    r = make(t._data, p.fn, p.nr)
    if p.fn is None and p.rg:
        r._rg = True
        r._acc = p.acc  # a saved leaf: gradients still reach the leaf's AccumulateGrad
    return r


_saved.PACK_NODE = pack_node
_saved.UNPACK = unpack_entry


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Context manager: every tensor saved for backward inside goes through ``pack_hook`` when
    saved and ``unpack_hook`` when the backward needs it.

    >>> import retrograd as torch
    >>> packed = []
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or len(packed),
    ...                                               lambda i: packed[i - 1]):
    ...     y = (x * x).sum()
    >>> len(packed)
    2
    >>> y.backward(); x.grad
    tensor([2., 4.])
    """

    def __init__(self, pack_hook, unpack_hook) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _state.disabled is not None:
            raise RuntimeError(_state.disabled)
        _state.stack = _state.stack + ((self.pack_hook, self.unpack_hook),)
        _users[0] += 1
        _sync_flag()
        return self

    def __exit__(self, *args) -> None:
        _state.stack = _state.stack[:-1]
        _users[0] -= 1
        _sync_flag()


class disable_saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Context manager under which registering saved-tensor hooks raises ``error_message`` (for
    features that cannot work with them). Entering it while hooks are registered raises too.

    >>> import retrograd as torch
    >>> g = torch.autograd.graph
    >>> with g.disable_saved_tensors_hooks("not here"):
    ...     try:
    ...         with g.saved_tensors_hooks(lambda t: t, lambda t: t):
    ...             pass
    ...     except RuntimeError as e:
    ...         print(e)
    not here
    """

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        if _state.stack:
            raise RuntimeError(self.error_message)
        self.prev = _state.disabled
        _state.disabled = self.error_message

    def __exit__(self, *args) -> None:
        _state.disabled = self.prev


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Keep saved tensors in CPU memory until backward. retrograd's tensors live there already,
    so each is kept as it is (``pin_memory`` and ``device_type`` are accepted for
    compatibility).

    >>> import retrograd as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> with torch.autograd.graph.save_on_cpu(pin_memory=True):
    ...     y = (x * x).sum()
    >>> y.backward(); x.grad
    tensor([2., 4.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(t):
            return (t.device, t.cpu())

        def unpack_from_cpu(packed):
            device, t = packed
            return t.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)
