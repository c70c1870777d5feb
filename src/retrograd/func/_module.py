"""``functional_call`` and ``stack_module_state``, as in ``torch.func``: run a module with the
parameters and buffers given in dicts instead of its own, and stack the state of several
modules of one architecture for ``vmap`` (model ensembling)."""

from __future__ import annotations

import contextlib

from .._tensor import Tensor
from ..ops.join import stack

__all__ = ["functional_call", "stack_module_state"]


def _owner(module, name: str):
    """``(submodule, attribute)`` that ``name`` ("layer.0.weight") refers to."""
    *path, attr = name.split(".")
    m = module
    for p in path:
        m = getattr(m, p)
    return m, attr


@contextlib.contextmanager
def _reparametrize(module, values: dict, tie_weights: bool, strict: bool):
    if tie_weights:
        # Names that share one tensor (tied weights) all take a value given for any of them.
        groups: dict = {}
        for n, t in list(module.named_parameters(remove_duplicate=False)) + \
                list(module.named_buffers(remove_duplicate=False)):
            groups.setdefault(id(t), []).append(n)
        values = dict(values)
        for names in groups.values():
            given = [n for n in names if n in values]
            if len(names) < 2 or not given:
                continue
            if len({id(values[n]) for n in given}) > 1:
                raise ValueError(
                    f"functional_call got multiple values for keys {sorted(given)}, which are "
                    "tied. Consider using tie_weights=False"
                )
            for n in names:
                values.setdefault(n, values[given[0]])
    if strict:
        known = {n for n, _ in module.named_parameters(remove_duplicate=False)} | \
            {n for n, _ in module.named_buffers(remove_duplicate=False)}
        unexpected = [k for k in values if k not in known]
        missing = [k for k in known if k not in values]
        if unexpected or missing:
            msg = f"Error(s) in reparametrizing for {type(module).__name__}:"
            if unexpected:
                msg += "\n\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + "."
            if missing:
                msg += "\n\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + "."
            raise RuntimeError(msg)
    saved = []
    try:
        for name, value in values.items():
            m, attr = _owner(module, name)
            for store in (m._parameters, m._buffers):
                if attr in store:
                    saved.append((store, attr, store[attr]))
                    store[attr] = value
                    break
            else:
                saved.append((m.__dict__, attr, m.__dict__.get(attr, _ABSENT)))
                m.__dict__[attr] = value
        yield
    finally:
        for store, attr, old in reversed(saved):
            if old is _ABSENT:
                del store[attr]
            else:
                store[attr] = old


_ABSENT = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """``module(*args, **kwargs)`` with its parameters and buffers taken from the dict (or
    tuple of dicts) ``parameter_and_buffer_dicts``; the module itself is left unchanged.

    >>> import retrograd as torch
    >>> lin = torch.nn.Linear(2, 1)
    >>> params = {"weight": torch.ones(1, 2), "bias": torch.zeros(1)}
    >>> functional_call(lin, params, (torch.tensor([1.0, 2.0]),))
    tensor([3.])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    else:
        values = {}
        seen: dict = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                seen[k] = seen.get(k, 0) + 1
        dup = [k for k, c in seen.items() if c > 1]
        if dup:
            raise ValueError(
                f"{dup} appeared in multiple dictionaries; behavior of functional call is "
                "ambiguous"
            )
        for d in parameter_and_buffer_dicts:
            values.update(d)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, values, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def stack_module_state(models) -> tuple[dict, dict]:
    """``(params, buffers)``: each model's parameters and buffers stacked along a new first
    dimension, as new leaves (parameters require grad as the originals do).

    >>> import retrograd as torch
    >>> params, buffers = stack_module_state([torch.nn.Linear(2, 3) for _ in range(4)])
    >>> params["weight"].shape, params["weight"].is_leaf
    (retrograd.Size([4, 3, 2]), True)
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    kinds = {type(m) for m in models}
    if len(kinds) > 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        names = [n for n, _ in named(models[0])]
        out = {}
        for n in names:
            ts = [dict(named(m))[n] for m in models]
            s = stack([t.detach() for t in ts])
            if all(isinstance(t, Tensor) and t.requires_grad for t in ts):
                s.requires_grad_()
            out[n] = s
        return out

    return (stacked(lambda m: m.named_parameters()), stacked(lambda m: m.named_buffers()))


def replace_all_batch_norm_modules_(root):
    """Make every batch-norm module in ``root`` use batch statistics only (no running
    statistics), in place, as ``torch.func.replace_all_batch_norm_modules_``: what ``vmap``
    over a model in training mode needs.

    >>> import retrograd as torch
    >>> bn = replace_all_batch_norm_modules_(torch.nn.BatchNorm1d(3))
    >>> bn.running_mean is None, bn.track_running_stats
    (True, False)
    """
    from ..nn.modules.normalization import _BatchNorm

    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root
