"""``functional_call``: call a module with some of its parameters and buffers replaced by
given tensors for the duration of the call (``torch.nn.utils.stateless``)."""

from __future__ import annotations

import warnings

from ..module import Module

__all__ = ["functional_call"]


def _owner(module: Module, name: str) -> tuple:
    *path, leaf = name.split(".")
    sub = module.get_submodule(".".join(path)) if path else module
    return sub, leaf


def functional_call(module: Module, parameters_and_buffers: dict, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """``module(*args, **kwargs)`` with the named tensors standing in for its parameters and
    buffers (gradients flow to the given tensors); the module is unchanged afterwards.

    >>> import retrograd as torch, warnings
    >>> m = torch.nn.Linear(1, 1)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     functional_call(m, {"weight": torch.ones(1, 1), "bias": torch.zeros(1)},
    ...                     (torch.tensor([[3.0]]),))
    tensor([[3.]])
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and "
                  "will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    if isinstance(parameters_and_buffers, (list, tuple)):
        merged: dict = {}
        for d in parameters_and_buffers:
            dup = set(merged) & set(d)
            if dup:
                raise ValueError(f"{sorted(dup)} appeared in multiple dictionaries; behavior of "
                                 f"functional call is ambiguous")
            merged.update(d)
        parameters_and_buffers = merged
    known = dict(module.named_parameters(remove_duplicate=False))
    known.update(dict(module.named_buffers(remove_duplicate=False)))
    if strict:
        missing = sorted(set(known) - set(parameters_and_buffers))
        unexpected = sorted(set(parameters_and_buffers) - set(known))
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               f"Missing key(s): {missing}. Unexpected key(s): {unexpected}.")
    saved = []
    try:
        for name, value in parameters_and_buffers.items():
            sub, leaf = _owner(module, name)
            store = sub._parameters if leaf in sub._parameters else (
                sub._buffers if leaf in sub._buffers else None)
            if store is None:
                saved.append((sub, leaf, None, sub.__dict__.get(leaf)))
                object.__setattr__(sub, leaf, value)
            else:
                saved.append((sub, leaf, store, store[leaf]))
                store[leaf] = value
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for sub, leaf, store, old in reversed(saved):
            if store is None:
                if old is None:
                    sub.__dict__.pop(leaf, None)
                else:
                    object.__setattr__(sub, leaf, old)
            else:
                store[leaf] = old
