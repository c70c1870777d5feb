"""Saved tensors: what a node keeps for its backward, checked against versions when unpacked.

``SavedTensors`` is the part of ``Node`` that saves inputs (tensors are version-checked when
unpacked, numbers are constants), saves an output without a reference cycle (its array and
version counter, not the tensor), unpacks them as arrays or, under ``create_graph``, as
tensors, and frees them after backward. PyTorch's error texts for a freed graph and for an
in-place change to a saved tensor live here too.
"""

from __future__ import annotations

import re

import numpy as np

from .._dtypes import FROM_NP
from .provenance import inplace_site, with_site

__all__ = ["SavedTensors", "FREED_MSG", "HINT", "modified_msg", "freed_msg",
           "output_modified_msg", "op_name",
           "type_name", "unpacked_output"]

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


INFERENCE_SAVE = (
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
    fw = node.__dict__.get("_out_fw")
    if fw is not None:  # forward AD: the output's tangent, kept by autograd/forward_ad.py
        t._fw = fw[nr]
    return t


def modified_msg(t, expected: int, node=None) -> str:
    """PyTorch's text, then where ``node`` saved the tensor and where it was changed."""
    arr = t._data
    where = ""
    if t._grad_fn is not None:
        where = f", which is output {t._nr} of {op_name(t._grad_fn)},"
    msg = (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{type_name(arr)} {list(arr.shape)}]{where} is at version {t._vc[0]}; "
        f"expected version {expected} instead. " + HINT
    )
    if node is not None:
        msg = with_site(msg, node, f"It was saved by {node.name()}, created by the forward call")
    return with_site(msg, label="It was modified by the in-place call", s=inplace_site(t._vc))


def output_modified_msg(arr, vc, expected: int, node, nr: int) -> str:
    """The version error for a saved *output* (output ``nr`` of ``node``) changed in place."""
    msg = (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{type_name(arr)} {list(arr.shape)}], which is output {nr} of "
        f"{op_name(node)}, is at version {vc[0]}; expected version {expected} instead. " + HINT
    )
    msg = with_site(msg, node, f"It was saved by {node.name()}, created by the forward call")
    return with_site(msg, label="It was modified by the in-place call", s=inplace_site(vc))


def freed_msg(node) -> str:
    """FREED_MSG, then the forward call that created ``node``."""
    return with_site(FREED_MSG, node)


# Saved-tensor hooks (``saved_hooks.py``): the save points test HOOKS_ON and then hand the node
# to PACK_NODE; a node holding packed entries has ``_packed`` set and unpacks through UNPACK.
HOOKS_ON = False
PACK_NODE = None
UNPACK = None


def make_tensor(arr, grad_fn=None, nr=0):
    """Set by ``_tensor`` at import: builds a tensor with a grad_fn (avoids an import cycle)."""
    raise RuntimeError("retrograd._tensor is not loaded")



class SavedTensors:
    """The saved-tensor half of ``Node``."""

    # NOTE: no ``__getattr__`` here (nor on Tensor): a class that has one makes CPython read
    # every attribute of its instances on the slow path, and the engine reads node attributes
    # all the time. ``grad_fn._saved_<name>`` are properties (autograd/saved_attrs.py).
    __slots__ = ()
    _packed = False  # saved under saved-tensor hooks: entries unpack through the hook

    # -- saved tensors -------------------------------------------------------------------------
    def save(self, *tensors) -> None:
        """Keep input tensors (or None, or numbers) for backward; versions are checked when
        unpacked."""
        versions = []
        for t in tensors:
            if t is None or t.__class__ in _CONSTANTS:
                versions.append(None)
            elif t._inference:
                raise RuntimeError(INFERENCE_SAVE)
            else:
                versions.append(t._vc[0])
        self._saved = tensors
        self._versions = versions
        if HOOKS_ON:
            PACK_NODE(self)

    def save2(self, a, b) -> None:
        """``save(a, b)`` unrolled: binary ops call this on every recorded forward."""
        if a is None or a.__class__ in _CONSTANTS:
            va = None
        elif a._inference:
            raise RuntimeError(INFERENCE_SAVE)
        else:
            va = a._vc[0]
        if b is None or b.__class__ in _CONSTANTS:
            vb = None
        elif b._inference:
            raise RuntimeError(INFERENCE_SAVE)
        else:
            vb = b._vc[0]
        self._saved = (a, b)
        self._versions = (va, vb)
        if HOOKS_ON:
            PACK_NODE(self)

    def save_output(self, t) -> None:
        """Keep an output without a reference cycle: its array, not the tensor."""
        self._out = (t._data, t._vc, t._vc[0])
        if HOOKS_ON:
            PACK_NODE(self, t)

    def saved(self, as_tensors: bool):
        """The saved inputs, as arrays or (for create_graph) as tensors."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(freed_msg(self))
        if self._packed:
            return [UNPACK(self, p, as_tensors) for p in saved]
        if len(saved) == 2:
            a, b = saved
            va, vb = self._versions
            if va is not None:
                if a._vc[0] != va:
                    raise RuntimeError(modified_msg(a, va, self))
                if not as_tensors:
                    a = a._data
            if vb is not None:
                if b._vc[0] != vb:
                    raise RuntimeError(modified_msg(b, vb, self))
                if not as_tensors:
                    b = b._data
            return a, b
        out = []
        for t, v in zip(saved, self._versions):
            if v is not None:
                if t._vc[0] != v:
                    raise RuntimeError(modified_msg(t, v, self))
                if not as_tensors:
                    t = t._data
            out.append(t)
        return out

    def saved_output(self, as_tensor: bool):
        """The saved output; as a tensor its grad_fn is this node, as PyTorch unpacks it."""
        out = self._out
        if out is None:
            raise RuntimeError(freed_msg(self))
        if out.__class__ is not tuple:  # packed by a saved-tensor hook
            return UNPACK(self, out, as_tensor)
        arr, vc, version = out
        if vc[0] != version:
            raise RuntimeError(output_modified_msg(arr, vc, version, self, 0))
        if not as_tensor:
            return arr
        unpack = self.__dict__.get("_out_unpack")
        if unpack is not None:
            # An in-place op on a view: its output unpacks with the view's history (through
            # the base's CopySlices), as PyTorch's, not as an output of this node.
            t = unpack(arr, vc)
            if t is not None:
                return t
        return unpacked_output(arr, vc, self, 0)

    def release(self) -> None:
        """Free saved tensors once the backward that needed them has run."""
        self._saved = None
        self._out = None
