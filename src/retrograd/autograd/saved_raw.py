"""``grad_fn._raw_saved_<name>``: one saved tensor of a node as an object, PyTorch's
``SavedTensor``, whose ``register_hooks(pack, unpack)`` gives that one tensor its own pair of
saved-tensor hooks (as ``saved_tensors_hooks`` does for every tensor saved in its scope).

The names are those of ``saved_attrs.NAMES`` (and the generic ones) that denote a saved tensor:
a saved input entry or the saved output. Names of other saved values (``_saved_dim``, sizes)
have no raw form, as in PyTorch (AttributeError).

>>> import retrograd as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> y = x.exp()
>>> log = []
>>> y.grad_fn._raw_saved_result.register_hooks(lambda t: log.append("pack") or t,
...                                             lambda t: log.append("unpack") or t)
>>> y.sum().backward(); log
['pack', 'unpack']
"""

from __future__ import annotations

from .._tensor import Tensor, make
from . import saved as _saved
from . import saved_attrs as _attrs
from .function import BackwardCFunction
from .saved_hooks import Packed, Plain

__all__ = ["SavedTensor"]

_SET = ("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only "
        "one pair of hooks is allowed at a time.")
_FREED = ("Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
          "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
          "retain_graph=True if you need to backward through the graph a second time or if you "
          "need to access saved variables after calling backward.")


class SavedTensor:
    """One tensor a node saved (``grad_fn._raw_saved_<name>``): ``slot`` is a saved-input index
    or ``"result"``. The same object is returned on every access, as PyTorch's."""

    __slots__ = ("_node", "_slot")

    def __init__(self, node, slot) -> None:
        self._node, self._slot = node, slot

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """Pack the tensor now with ``pack_hook``; whoever reads it later (the backward,
        ``_saved_<name>``) gets ``unpack_hook`` of what ``pack_hook`` returned."""
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError(
                "register_hooks(): incompatible function arguments. The following argument types "
                "are supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: "
                "collections.abc.Callable, arg1: collections.abc.Callable) -> None"
            )
        node = self._node
        if self._slot == "result":
            out = node._out
            if out is None:
                raise RuntimeError(_FREED)
            if out.__class__ is not tuple:  # packed already (saved_tensors_hooks, or here)
                raise RuntimeError(_SET)
            node.saved_output(False)  # the version check
            node._out = Packed(_output_tensor(out), pack_hook, unpack_hook, out=0)
            return
        saved = node._saved
        if saved is None:
            raise RuntimeError(_FREED)
        entry = saved[self._slot]
        if entry.__class__ is Packed:
            raise RuntimeError(_SET)
        if entry is None:
            raise RuntimeError(_NONE)
        kinds = node.__dict__.get("_saved_kinds")
        if not isinstance(entry, Tensor) and not (kinds and kinds[self._slot] == "out"):
            return  # a number saved beside the tensors: nothing to pack
        entries = list(saved)
        if not node._packed:
            # The node's entries now unpack one by one: the others as before (Plain).
            for i, (t, v) in enumerate(zip(saved, node._versions)):
                if kinds and kinds[i] == "out":
                    entries[i] = _PlainOutput(t, node._saved_out_nr(t[0]))
                elif isinstance(t, Tensor):
                    entries[i] = Plain(t, v)
        if kinds and kinds[self._slot] == "out":  # a custom Function's saved output
            nr = node._saved_out_nr(entry[0])
            entries[self._slot] = Packed(_output_tensor(entry), pack_hook, unpack_hook, out=nr)
        else:
            entries[self._slot] = Packed(entry, pack_hook, unpack_hook)
        node._saved = tuple(entries)
        node._versions = (None,) * len(entries)
        node._packed = True


_NONE = "Calling register_hooks on a saved tensor with value None is forbidden"


def _output_tensor(out) -> Tensor:
    """A saved output as the pack hook sees it: its values and version, no grad_fn (PyTorch
    keeps outputs without their history: no reference cycle)."""
    t = make(out[0])
    t._vc = out[1]
    return t


class _PlainOutput(Plain):
    """A custom Function's saved output without hooks, beside an entry that has some."""

    __slots__ = ("nr",)

    def __init__(self, entry, nr: int) -> None:
        super().__init__(entry, entry[2])
        self.nr = nr

    def get(self, node, as_tensor: bool):
        arr, vc, version = self.t
        if vc[0] != version:
            raise RuntimeError(_saved.output_modified_msg(arr, vc, version, node, self.nr))
        if not as_tensor:
            return arr
        if node._out_rg[self.nr]:
            return _saved.unpacked_output(arr, vc, node, self.nr)
        r = make(arr)
        r._vc = vc
        return r


def raw_saved_tensors(node) -> tuple:
    """A custom Function node's ``_raw_saved_tensors``: one SavedTensor per saved entry."""
    if node._saved is None:
        raise RuntimeError(_saved.freed_msg(node))
    cache = node.__dict__.setdefault("_raw_saved", {})
    return tuple(cache.setdefault(i, SavedTensor(node, i)) for i in range(len(node._saved)))


def raw_saved_attr(node, attr: str) -> SavedTensor:
    """``node._raw_saved_<name>``: the SavedTensor of a tensor-valued saved name."""
    name = attr[len("_raw_saved_"):]
    names = _attrs.NAMES.get(node.name())
    spec = names.get(name) if names is not None else None
    if spec is None:
        spec = _attrs.generic_names(node).get(name)
    if not (isinstance(spec, int) or spec == "result"):
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{attr}'")
    if spec == "result" and node._out is None and node._saved is not None:
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{attr}'")
    cache = node.__dict__.setdefault("_raw_saved", {})
    st = cache.get(spec)
    if st is None:
        st = cache[spec] = SavedTensor(node, spec)
    return st


def _install() -> None:
    names = {"self", "other", "result"}
    for spec in _attrs.NAMES.values():
        names.update(n for n, s in spec.items() if isinstance(s, int) or s == "result")
    for name in names:
        attr = "_raw_saved_" + name
        setattr(_saved.SavedTensors, attr,
                property(lambda node, a=attr: raw_saved_attr(node, a)))
    BackwardCFunction._raw_saved_tensors = property(raw_saved_tensors)


_install()
