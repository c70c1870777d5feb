"""Activation checkpointing: trade compute for memory, as ``torch.utils.checkpoint``.

``checkpoint(fn, *args)`` runs ``fn`` keeping none of the tensors its backward needs; when the
backward reaches them, ``fn`` runs again (with the random-number state it first ran with, so
dropout draws the same mask) and its saved tensors are used instead. Two variants, as PyTorch's:

- ``use_reentrant=False`` (recommended): ``fn`` runs normally under saved-tensor hooks whose
  pack keeps only a ticket for each saved tensor; the first unpack of a backward re-runs ``fn``
  under hooks that collect the recomputed tensors, in the same order, and the tickets are
  redeemed from them. The graph is ``fn``'s own (``grad_fn`` is ``SinBackward0``, ...).
- ``use_reentrant=True`` (the default when nothing is passed, with PyTorch's warning): one
  ``autograd.Function``, ``CheckpointFunction``, runs ``fn`` without grad; its backward re-runs
  it with grad and calls ``autograd.backward`` inside the backward (hence "reentrant").

``checkpoint_sequential(functions, segments, input)`` checkpoints all but the last of
``segments`` runs of a sequence of modules.
"""

from __future__ import annotations

import warnings
from contextlib import nullcontext

import retrograd

from ..autograd.graph import Node, saved_tensors_hooks
from ._sac import (
    SAC_IGNORED_OPS,
    CheckpointPolicy,
    SelectiveCheckpointContext,
    create_selective_checkpoint_contexts,
)

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointFunction", "noop_context_fn",
           "CheckpointError", "set_checkpoint_debug_enabled", "set_checkpoint_early_stop",
           "detach_variable", "check_backward_validity", "CheckpointPolicy",
           "SelectiveCheckpointContext", "create_selective_checkpoint_contexts", "SAC_IGNORED_OPS",
           "get_device_states", "set_device_states", "DefaultDeviceType", "GraphExecGroup"]


def detach_variable(inputs: tuple) -> tuple:
    """Each tensor of ``inputs`` detached, keeping its ``requires_grad`` (others as they are).

    >>> import retrograd as torch
    >>> detach_variable((torch.ones(1, requires_grad=True) * 2, 3))[0].is_leaf
    True
    """
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for x in inputs:
        if isinstance(x, retrograd.Tensor):
            d = x.detach()
            d.requires_grad = x.requires_grad
            x = d
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    """PyTorch's warning when no tensor of ``inputs`` requires grad.

    >>> check_backward_validity([retrograd.ones(1, requires_grad=True)])
    """
    if not any(x.requires_grad for x in inputs if isinstance(x, retrograd.Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


class set_checkpoint_early_stop:  # noqa: N801 - PyTorch's name
    """Context manager for whether recomputation stops once it has what backward needs
    (accepted for PyTorch's API: retrograd's recomputation runs the function through).

    >>> with set_checkpoint_early_stop(False):
    ...     pass
    """

    def __init__(self, enable: bool) -> None:
        self.enable = enable

    def __enter__(self) -> None:
        return None

    def __exit__(self, *args) -> None:
        return None


def get_device_states(*args) -> tuple[list, list]:
    """The devices of the non-CPU tensors among ``args`` and their RNG states, which a checkpoint
    restores for the recomputation: none here, every tensor is on the CPU.

    >>> get_device_states(retrograd.ones(1))
    ([], [])
    """
    return [], []


def set_device_states(devices, states, *, device_type=None) -> None:
    """Restore the RNG states of ``devices`` (from ``get_device_states``): there are none."""
    for _ in zip(devices, states):
        raise RuntimeError("retrograd has no accelerator devices whose RNG state could be set")


class DefaultDeviceType:
    """The device type whose RNG state checkpointing saves when no tensor names one ("cpu"
    here: retrograd has no accelerator).

    >>> DefaultDeviceType.get_device_type()
    'cpu'
    """

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cpu"
        return DefaultDeviceType._default_device_type


_GROUP = [None]


class GraphExecGroup:
    """Checkpointed regions reached by several backward calls inside one group recompute at
    most once. (retrograd's non-reentrant checkpoint keeps what one recomputation produced
    until a backward has used it, so this holds inside and outside a group.)

    >>> with GraphExecGroup():
    ...     pass
    """

    def __enter__(self) -> GraphExecGroup:
        if _GROUP[0] is not None:
            raise RuntimeError("GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{_GROUP[0]}")
        _GROUP[0] = self
        return self

    def __exit__(self, *args) -> None:
        _GROUP[0] = None

    @classmethod
    def _get_current_group(cls):
        return _GROUP[0]


class CheckpointError(RuntimeError):
    """A recomputation that did not match the original forward (PyTorch's class)."""


_DEBUG_TIP = (
    "\nTip: To see a more detailed error message, either pass `debug=True` to\n"
    "`torch.utils.checkpoint.checkpoint(...)` or wrap the code block\n"
    "with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to\n"
    "enable checkpoint\u2011debug mode globally.\n\n"
    "If this error occurs under torch.compile with automatic_dynamic_shapes enabled,\n"
    "it may be because the recomputation selected a different compiled graph than the\n"
    "forward pass (e.g., a dynamic graph instead of the original static graph).\n"
    "To fix this, either:\n"
    "  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as\n"
    "    dynamic upfront, avoiding the static-to-dynamic transition.\n"
    "  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache\n"
    "    reordering, which can change which graph is checked first between forward\n"
    "    and recompute.\n"
    "See https://github.com/pytorch/pytorch/issues/166926 for more details and\n"
    "workaround examples.\n"
)

_DEBUG = [None]  # set_checkpoint_debug_enabled's setting (None: each call's ``debug``)


class set_checkpoint_debug_enabled:  # noqa: N801 - PyTorch's name
    """Context manager that overrides ``checkpoint``'s ``debug`` flag (None: leave it).

    >>> with set_checkpoint_debug_enabled(True):
    ...     pass
    """

    def __init__(self, enabled) -> None:
        self.enabled = enabled

    def __enter__(self) -> None:
        self.prev = _DEBUG[0]
        _DEBUG[0] = self.enabled

    def __exit__(self, *args) -> None:
        _DEBUG[0] = self.prev


def _meta(t) -> dict:
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


def _meta_str(meta: dict) -> str:
    return str(meta).replace("retrograd.", "torch.")


def noop_context_fn():
    """The default ``context_fn``: no context around the forward and the recomputation."""
    return nullcontext(), nullcontext()


def _rng_state(preserve: bool):
    return retrograd.get_rng_state() if preserve else None


class _ForkedRNG:
    """Run with the RNG state ``state`` (when not None) and restore the current state after."""

    def __init__(self, state) -> None:
        self.state = state

    def __enter__(self) -> None:
        if self.state is not None:
            self.saved = retrograd.get_rng_state()
            retrograd.set_rng_state(self.state)

    def __exit__(self, *args) -> None:
        if self.state is not None:
            retrograd.set_rng_state(self.saved)


# -- the reentrant variant ------------------------------------------------------------------------


class CheckpointFunction(retrograd.autograd.Function):
    """The reentrant checkpoint: forward without grad, recompute and backward in backward."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng_state = _rng_state(preserve_rng_state)
        ctx.inputs = []
        tensors = []
        ctx.tensor_indices = []
        for i, a in enumerate(args):
            if isinstance(a, retrograd.Tensor):
                tensors.append(a)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(a)
        ctx.save_for_backward(*tensors)
        with retrograd.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not retrograd.autograd._is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument."
            )
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            d = t.detach()
            d.requires_grad = t.requires_grad
            inputs[i] = d
        with _ForkedRNG(ctx.rng_state), retrograd.enable_grad():
            outputs = ctx.run_function(*inputs)
        if isinstance(outputs, retrograd.Tensor):
            outputs = (outputs,)
        outs, gs = [], []
        for o, g in zip(outputs, grads):
            if isinstance(o, retrograd.Tensor) and o.requires_grad:
                outs.append(o)
                gs.append(g)
        if not outs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        retrograd.autograd.backward(outs, gs)
        res = tuple(a.grad if isinstance(a, retrograd.Tensor) else None for a in inputs)
        return (None, None) + res


# -- the non-reentrant variant --------------------------------------------------------------------


class _SavedInputs(Node):
    """Holds a checkpoint's tensor arguments as saved tensors (PyTorch's frame saves them so):
    the saved-tensor hooks around the call pack them, and an in-place change before the
    recomputation raises PyTorch's "modified by an inplace operation" error."""


class _Frame:
    """One non-reentrant checkpoint call: its function and arguments, and the tickets."""

    def __init__(self, fn, args, kwargs, rng, recompute_ctx, check: bool) -> None:
        self.fn, self.kwargs, self.rng = fn, kwargs, rng
        self.args = [None if isinstance(a, retrograd.Tensor) else a for a in args]
        self.inputs = _SavedInputs()
        self.inputs.save(*[a for a in args if isinstance(a, retrograd.Tensor)])
        self.recompute_ctx = recompute_ctx  # context_fn's second, entered at each recomputation
        self.count = 0
        self.recomputed: dict = {}
        self.metas: list | None = [] if check else None  # (determinism_check="default")

    def pack(self, t):
        i = self.count
        self.count += 1
        if self.metas is not None:
            self.metas.append(_meta(t))
        return (self, i)

    def recompute(self) -> None:
        got = []

        def pack(t):
            got.append(t)
            return len(got) - 1

        saved = iter(self.inputs.saved(True))
        args = []
        for a in self.args:
            if a is None:
                a = next(saved, None)
                if isinstance(a, retrograd.Tensor):
                    d = a.detach()
                    d.requires_grad = a.requires_grad
                    a = d
            args.append(a)
        with _ForkedRNG(self.rng), retrograd.enable_grad(), self.recompute_ctx, \
                saved_tensors_hooks(pack, lambda i: got[i]):
            self.fn(*args, **self.kwargs)
        if len(got) < self.count:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{self.count}\nNumber of tensors saved during recomputation: {len(got)}.\n"
                + _DEBUG_TIP
            )
        if self.metas is not None:
            bad = "".join(
                f"tensor at position {i}:\nsaved metadata: {_meta_str(m)}\nrecomputed metadata: "
                f"{_meta_str(_meta(got[i]))}\n"
                for i, m in enumerate(self.metas) if _meta(got[i]) != m)
            if bad:
                raise CheckpointError(
                    "torch.utils.checkpoint: Recomputed values for the following tensors have "
                    f"different metadata than during the forward pass.\n{bad}.\n" + _DEBUG_TIP
                )
        self.recomputed = dict(enumerate(got[:self.count]))


def _unpack(ticket):
    frame, i = ticket
    t = frame.recomputed.pop(i, None)
    if t is None:  # the first unpack of this backward (or of a later one)
        frame.recompute()
        t = frame.recomputed.pop(i)
    return t


def _checkpoint_without_reentrant(fn, preserve_rng_state, context_fn, determinism_check, args,
                                  kwargs):
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    forward_ctx, recompute_ctx = context_fn()
    if not retrograd.is_grad_enabled():  # nothing is saved: a plain call, as PyTorch's
        return fn(*args, **kwargs)
    frame = _Frame(fn, args, kwargs, _rng_state(preserve_rng_state), recompute_ctx,
                   determinism_check == "default")
    with saved_tensors_hooks(frame.pack, _unpack), forward_ctx:
        return fn(*args, **kwargs)


# -- the entry points -----------------------------------------------------------------------------


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=noop_context_fn,
               determinism_check: str = "default", debug: bool = False,
               early_stop: bool = True, **kwargs):
    """``function(*args)``, keeping nothing for backward: it is recomputed when needed.

    >>> import retrograd as torch
    >>> from retrograd.utils.checkpoint import checkpoint
    >>> x = torch.tensor([0.5, 1.0], requires_grad=True)
    >>> y = checkpoint(lambda a: a.sin().exp(), x, use_reentrant=False)
    >>> y.sum().backward(); x.grad
    tensor([1.4174, 1.2534])
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        if retrograd.is_grad_enabled() and not any(
                isinstance(a, retrograd.Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=2)
        return CheckpointFunction.apply(function, preserve, *args)
    if (_DEBUG[0] if _DEBUG[0] is not None else debug) and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         args, kwargs)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run ``functions`` (a list or ``nn.Sequential``) in ``segments`` pieces, checkpointing all
    but the last.

    >>> import retrograd as torch
    >>> from retrograd.utils.checkpoint import checkpoint_sequential
    >>> net = torch.nn.Sequential(torch.nn.Tanh(), torch.nn.Tanh(), torch.nn.Tanh())
    >>> x = torch.tensor([1.0], requires_grad=True)
    >>> checkpoint_sequential(net, 2, x, use_reentrant=False).sum().backward()
    >>> x.grad
    tensor([0.1677])
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
            "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is not "
            "passed. use_reentrant=False is recommended, but if you need to preserve the current "
            "default behavior, you can pass use_reentrant=True. Refer to docs for more details "
            "on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))

    def run(start, end, fns):
        def forward(x):
            for j in range(start, end + 1):
                x = fns[j](x)
            return x
        return forward

    if isinstance(functions, retrograd.nn.Sequential):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1, functions)(input)
