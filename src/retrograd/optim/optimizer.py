"""``Optimizer``: parameter groups, per-parameter state, and the state-dict format PyTorch uses.

Subclasses implement ``step``; the base class owns ``param_groups`` (a list of dicts, each with
``'params'`` and the group's options, missing options filled from ``defaults``), ``state``
(a defaultdict keyed by parameter), ``zero_grad``, and ``state_dict``/``load_state_dict``, whose
format (parameters numbered in group order) is PyTorch's.
"""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain

import retrograd as torch
from retrograd import Tensor

from ..utils.hooks import RemovableHandle

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]


def _typename(obj) -> str:
    """How PyTorch's messages name a param that is not one: ``torch.FloatTensor``, ``int``."""
    if isinstance(obj, Tensor):
        return "torch." + obj.dtype.tensor_type
    cls = type(obj)
    module = getattr(cls, "__module__", "") or ""
    return cls.__qualname__ if module in ("", "builtins") else f"{module}.{cls.__qualname__}"


class _RequiredParameter:
    """Marks a default that every parameter group must give (such as SGD's old ``lr``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


# Hooks run around every optimizer's step (PyTorch's register_optimizer_step_*_hook).
_global_optimizer_pre_hooks: OrderedDict = OrderedDict()
_global_optimizer_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` before every optimizer's ``step``.

    >>> import retrograd as torch
    >>> h = torch.optim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: None)
    >>> h.remove()
    """
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` after every optimizer's ``step``."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _hooked_step(step):
    """Wrap a subclass's ``step`` to run the step hooks and note that it was called."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        for hook in (*_global_optimizer_pre_hooks.values(),
                     *self._optimizer_step_pre_hooks.values()):
            out = hook(self, args, kwargs)
            if out is not None:
                if isinstance(out, tuple) and len(out) == 2:
                    args, kwargs = out
                else:
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {out}.")
        result = step(self, *args, **kwargs)
        self._opt_called = True
        for hook in (*self._optimizer_step_post_hooks.values(),
                     *_global_optimizer_post_hooks.values()):
            hook(self, args, kwargs)
        return result

    wrapper._hooked = True
    return wrapper


def _no_grad(step):
    """Run a built-in optimizer's ``step`` under ``no_grad`` (closures re-enable grad)."""

    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        with torch.no_grad():
            return step(*args, **kwargs)

    return wrapper


def _check(name: str, ok: bool, value) -> None:
    """PyTorch's constructor check: ``ValueError("Invalid <name>: <value>")`` unless ``ok``."""
    if not ok:
        raise ValueError(f"Invalid {name}: {value}")


def _check_adam_args(lr, eps, betas, weight_decay) -> None:
    """The argument checks the Adam family (Adam, AdamW, Adamax, NAdam, RAdam) shares."""
    _check("learning rate", 0.0 <= lr, lr)
    _check("epsilon value", 0.0 <= eps, eps)
    _check("beta parameter at index 0", 0.0 <= betas[0] < 1.0, betas[0])
    _check("beta parameter at index 1", 0.0 <= betas[1] < 1.0, betas[1])
    _check("weight_decay value", 0.0 <= weight_decay, weight_decay)


def _call_closure(closure):
    if closure is None:
        return None
    with torch.enable_grad():
        return closure()


def _step_value(step_t: Tensor) -> float:
    return step_t.item()


# In-place update primitives, on the fused methods where retrograd has them and composed from
# add_/copy_ otherwise (same formula, so trajectories agree with PyTorch's to rounding).
def _addcmul_(t: Tensor, a: Tensor, b: Tensor, value: float = 1.0) -> Tensor:
    fused = getattr(t, "addcmul_", None)
    if fused is not None:
        return fused(a, b, value=value)
    return t.add_(a * b, alpha=value)


def _addcdiv_(t: Tensor, a: Tensor, b: Tensor, value: float = 1.0) -> Tensor:
    fused = getattr(t, "addcdiv_", None)
    if fused is not None:
        return fused(a, b, value=value)
    return t.add_(a / b, alpha=value)


def _lerp_(t: Tensor, end: Tensor, weight: float) -> Tensor:
    # PyTorch's lerp formula, composed (measured faster here than Tensor.lerp_). Not for
    # float16/bfloat16: add_ rounds its alpha to the dtype (as PyTorch's add kernel does),
    # while lerp's kernel keeps the weight in float32.
    if t.dtype in (torch.bfloat16, torch.float16):
        return t.lerp_(end, weight)
    if weight < 0.5:
        return t.add_(end - t, alpha=weight)
    return t.copy_(end - (end - t) * (1 - weight))


def _maximum_(t: Tensor, other: Tensor) -> Tensor:
    maximum = getattr(torch, "maximum", None)
    if maximum is not None:
        return t.copy_(maximum(t, other))
    return t.copy_(torch.where(other > t, other, t))


class Optimizer:
    """Base class of all optimizers.

    ``params`` is an iterable of tensors, or of dicts (parameter groups) each holding
    ``'params'`` and any options that override ``defaults`` for that group.

    >>> import retrograd as torch
    >>> w, b = torch.zeros(2, requires_grad=True), torch.zeros(1, requires_grad=True)
    >>> opt = torch.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
    >>> [g["lr"] for g in opt.param_groups]
    [0.1, 0.5]
    """

    def __init__(self, params, defaults: dict) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _hooked_step(step)

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # -- groups --------------------------------------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own options (unset options take the defaults).

        >>> import retrograd as torch
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        >>> opt.add_param_group({"params": torch.zeros(2, requires_grad=True), "lr": 0.01})
        >>> len(opt.param_groups), opt.param_groups[1]["momentum"]
        (2, 0)
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        tensors = [p[1] if isinstance(p, tuple) else p for p in params]
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not self.defaults.get("differentiable", None) and not (p.is_leaf
                                                                      or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        ids = [id(p) for p in tensors]
        if len(ids) != len(set(ids)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        existing = set()
        for group in self.param_groups:
            existing.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not existing.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- gradients and steps -------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors (to None, or to zeros).

        >>> import retrograd as torch
        >>> w = torch.ones(2, requires_grad=True); (w * w).sum().backward()
        >>> opt = torch.optim.SGD([w], lr=0.1); opt.zero_grad(); w.grad is None
        True
        """
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure=None):
        """Update the parameters once; subclasses implement it."""
        raise NotImplementedError

    def register_step_pre_hook(self, hook) -> RemovableHandle:
        """Run ``hook(optimizer, args, kwargs)`` before each ``step``."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook) -> RemovableHandle:
        """Run ``hook(optimizer, args, kwargs)`` after each ``step``."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def _register(self, hooks: OrderedDict, hook, prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Run ``hook(optimizer)`` before ``state_dict``."""
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Run ``hook(optimizer, state_dict)`` after ``state_dict``; it may return a new one."""
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Run ``hook(optimizer, state_dict)`` before loading; it may return a new one."""
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Run ``hook(optimizer)`` after ``load_state_dict``."""
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state dict ----------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """``{'state': {index: state}, 'param_groups': [options with 'params': [indices]]}``.

        Parameters are numbered in the order the groups list them; the state's tensors are
        shared, not copied.

        >>> import retrograd as torch
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        >>> sd = opt.state_dict(); sd["param_groups"][0]["params"], sd["state"]
        ([0], {})
        """
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index: dict[int, int] = {}
        start = 0

        def pack(group: dict) -> dict:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        out = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, out)
            if result is not None:
                out = result
        return out

    @staticmethod
    def _cast_state_value(param: Tensor, value: Tensor, key) -> Tensor:
        if key == "step":
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype)
        return value

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore the state and group options saved by ``state_dict``.

        >>> import retrograd as torch
        >>> w = torch.zeros(1, requires_grad=True)
        >>> a, b = torch.optim.SGD([w], lr=0.1), torch.optim.SGD([w], lr=0.5)
        >>> b.load_state_dict(a.state_dict()); b.param_groups[0]["lr"]
        0.1
        """
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                return Optimizer._cast_state_value(param, value, key)
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, str):
                return type(value)(cast(param, v) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v

        def update_group(group: dict, new_group: dict) -> dict:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)
