"""Selective activation checkpointing: which ops' outputs a checkpointed region keeps.

``create_selective_checkpoint_contexts(policy)`` returns the pair of context managers that
``checkpoint(..., use_reentrant=False, context_fn=...)`` enters around the forward and around
the recomputation, as ``torch.utils.checkpoint``'s:

- around the forward, an observer of every primitive call (``ops._apply.add_observer``) asks the
  policy about each op (``policy(ctx, op, *inputs)``, ``op`` its ``torch.ops.aten`` name, see
  ``retrograd._aten``) and keeps, detached, the outputs of the ops it says to save;
- around the recomputation, the same observer counts the calls again (per op) and hands each
  saved op its kept output (``ops._apply.SUBSTITUTE``), so that its forward is not computed
  again: pointwise ops, products, reductions, and ``linear``, which asks ``ops._apply.PEEK``
  before its product. (Ops that compute before calling ``apply`` otherwise, views and user
  Functions compute again, with the same values.) Each kept output is used once: a second
  backward through the region raises PyTorch's error, as does a kept output changed in place.

A list of ops stands for a policy that saves exactly those (``MUST_SAVE``) and recomputes the
rest (``PREFER_RECOMPUTE``).
"""

from __future__ import annotations

import enum
from collections import defaultdict

import retrograd

from .._aten import OpOverload, OpOverloadPacket, aten, op_for, prim
from ..ops import _apply

__all__ = ["CheckpointPolicy", "SelectiveCheckpointContext", "create_selective_checkpoint_contexts",
           "SAC_IGNORED_OPS"]


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an op's output: ``{MUST,PREFER}_SAVE`` keep it
    from the forward, ``{MUST,PREFER}_RECOMPUTE`` recompute it (``*_CPU_OFFLOAD``: recompute,
    as PyTorch's eager mode does). ``MUST_*`` means no other subsystem may override it.

    >>> CheckpointPolicy.MUST_SAVE.value
    0
    """

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


def _policy_from_bool(b: bool) -> CheckpointPolicy:
    return CheckpointPolicy.MUST_SAVE if b else CheckpointPolicy.PREFER_RECOMPUTE


class SelectiveCheckpointContext:
    """What a policy function gets first: ``is_recompute`` (always False: the policy runs in
    the forward only; the recomputation follows what it decided) and ``op_output``."""

    def __init__(self, *, is_recompute: bool, op_output=None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


# Ops whose number differs between the forward and the recomputation (PyTorch's set).
SAC_IGNORED_OPS = {aten.detach.default, prim.device.default} | {
    getattr(aten, name).default for name in (
        "sym_storage_offset", "is_contiguous", "is_strides_like_format", "numel", "sym_numel",
        "size", "stride", "is_non_overlapping_and_dense", "sym_size", "dim", "storage_offset",
        "sym_stride")}

_RECOMPUTE = object()
_CONSUMED = object()
_SAC_MISMATCH_MSG = (
    "This can happen if the operations in the checkpointed region are nondeterministic or "
    "depend on global state that changed between forward and backward."
)


class _VersionWrapper:
    """A kept output and its version, to catch an in-place change before it is reused."""

    def __init__(self, val) -> None:
        self.val = val
        self.version = val._version if isinstance(val, retrograd.Tensor) else None

    def get_val(self, allow_cache_entry_mutation: bool):
        if self.version is not None and not allow_cache_entry_mutation and \
                self.val._version != self.version:
            raise RuntimeError(
                "Tensor cached during selective activation checkpoint has been mutated")
        return self.val


def _tree_map(fn, out):
    if isinstance(out, tuple):
        return tuple(fn(o) for o in out)
    if isinstance(out, list):
        return [fn(o) for o in out]
    return fn(out)


def _detach(x):
    return x.detach() if isinstance(x, retrograd.Tensor) else x


class _Mode:
    """A context manager that observes every primitive call while it is entered."""

    def __enter__(self):
        _apply.add_observer(self._observe)
        return self

    def __exit__(self, *exc) -> None:
        _apply.remove_observer(self._observe)


class _CachingTorchDispatchMode(_Mode):
    """The forward's side: asks the policy and keeps the outputs it says to save."""

    def __init__(self, policy_fn, storage) -> None:
        self.policy_fn = policy_fn
        self.storage = storage
        self.func_counter: dict = defaultdict(int)

    def _observe(self, P, inputs, attrs, run):
        out = run()
        if P is None:  # a view recording no node of its own (unbind's outputs)
            return out
        op = op_for(P)
        if op in SAC_IGNORED_OPS:
            return out
        idx = self.func_counter[P]
        self.func_counter[P] += 1
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out),
                                op, *inputs)
        if isinstance(policy, bool):
            policy = _policy_from_bool(policy)
        if policy in (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE):
            self.storage[P][idx] = _tree_map(lambda x: _VersionWrapper(_detach(x)), out)
        else:
            self.storage[P][idx] = _RECOMPUTE
        return out


class _CachedTorchDispatchMode(_Mode):
    """The recomputation's side: each saved op takes its kept output instead of computing."""

    def __init__(self, policy_fn, storage, allow_cache_entry_mutation: bool = False) -> None:
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation
        self.func_counter: dict = defaultdict(int)

    def __enter__(self):
        # Reset, so that a second backward (retain_graph) meets "backward an extra time".
        self.func_counter.clear()
        self._prev_peek = _apply.PEEK
        _apply.PEEK = self._peek
        return super().__enter__()

    def __exit__(self, *exc) -> None:
        _apply.PEEK = self._prev_peek
        super().__exit__(*exc)

    def _peek(self, P):
        """The output kept for the next call of ``P``, if it is one to hand over."""
        entry = self.storage.get(P, {}).get(self.func_counter[P])
        if isinstance(entry, _VersionWrapper) and isinstance(entry.val, retrograd.Tensor):
            return entry.val
        return None

    def _observe(self, P, inputs, attrs, run):
        if P is None:
            return run()
        op = op_for(P)
        if op in SAC_IGNORED_OPS:
            return run()
        idx = self.func_counter[P]
        self.func_counter[P] += 1
        func_storage = self.storage.get(P)
        if func_storage is None:
            raise RuntimeError(f"{op} encountered during backward but not found in storage. "
                               f"{_SAC_MISMATCH_MSG}")
        entry = func_storage.get(idx)
        if entry is None:
            raise RuntimeError(f"{op} invocation index {idx} encountered during backward but "
                               f"not found in storage. {_SAC_MISMATCH_MSG}")
        if entry is _CONSUMED:
            raise RuntimeError(
                "Trying to backward an extra time. You are only allowed to backward once on any "
                "region computed under selective activation checkpoint."
            )
        if entry is _RECOMPUTE:
            return run()
        func_storage[idx] = _CONSUMED
        kept = _tree_map(lambda w: w.get_val(self.allow_cache_entry_mutation), entry)
        if "step" in attrs:  # a view must alias its (recomputed) input: made again
            return run()
        prev = _apply.SUBSTITUTE
        _apply.SUBSTITUTE = kept
        try:
            return run()
        finally:
            _apply.SUBSTITUTE = prev


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The ``context_fn`` pair for ``checkpoint`` that keeps the outputs of the ops
    ``policy_fn_or_list`` saves: a function ``(ctx, op, *args, **kwargs) -> CheckpointPolicy``
    (or a bool), or a list of ops (``torch.ops.aten.mm.default``) to save.

    >>> import functools
    >>> import retrograd as torch
    >>> from retrograd.utils.checkpoint import checkpoint
    >>> x = torch.tensor([[0.5, 1.0], [1.5, 2.0]], requires_grad=True)
    >>> context_fn = functools.partial(create_selective_checkpoint_contexts,
    ...                                [torch.ops.aten.mm.default])
    >>> y = checkpoint(lambda a: torch.mm(a, a).sigmoid(), x, use_reentrant=False,
    ...                context_fn=context_fn)
    >>> y.sum().backward(); x.grad
    tensor([[0.2299, 0.3705],
            [0.1863, 0.1200]])
    """
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, OpOverload):
                extra = (
                    "Please update the OpOverloadPacket to a specific OpOverload.For example, if "
                    "you have `torch.ops.aten.mm`, change it to `torch.ops.aten.mm.default`."
                ) if isinstance(op, OpOverloadPacket) else ""
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} "
                                 f"of type {_type_str(op)}. {extra}")
        ops = list(policy_fn_or_list)

        def policy_fn(ctx, op, *args, **kwargs):
            if op in ops:
                return CheckpointPolicy.MUST_SAVE
            return CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: dict = defaultdict(dict)
    return (_CachingTorchDispatchMode(policy_fn, storage),
            _CachedTorchDispatchMode(None, storage, allow_cache_entry_mutation))


def _type_str(op) -> str:
    t = type(op)
    if t is OpOverloadPacket:
        return "<class 'torch._ops.OpOverloadPacket'>"
    return str(t)
