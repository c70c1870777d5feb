"""``Module``: the base class of every layer, holding parameters, buffers and submodules.

A Module keeps three ordered dicts beside its ordinary attributes: ``_parameters``,
``_buffers`` and ``_modules``. Assigning a ``Parameter``, a ``Buffer`` or a ``Module`` to an
attribute files it in the right dict (``__setattr__``), and reading the attribute finds it there
(``__getattr__``); everything else (``named_parameters``, ``state_dict``, ``to``, ``repr``) walks
those dicts in insertion order, which is why their orders match PyTorch's.
"""

from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Iterator, Mapping

import retrograd as torch
from retrograd import Tensor
from retrograd.autograd.graph import current_sequence_nr as _sequence_nr
from retrograd.utils.hooks import RemovableHandle

from .parameter import Buffer, Parameter

__all__ = [
    "Module", "RemovableHandle", "register_module_forward_pre_hook",
    "register_module_forward_hook",
]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


def typename(obj) -> str:
    """The type name PyTorch's messages print: ``torch.FloatTensor`` for tensors, else the class."""
    if isinstance(obj, Tensor):
        return "torch." + obj.dtype.tensor_type
    cls = type(obj)
    module = getattr(cls, "__module__", "") or ""
    if module in ("", "builtins"):
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


def _add_hook(hooks: OrderedDict, hook, prepend: bool, extra=()) -> RemovableHandle:
    handle = RemovableHandle(hooks, extra_dict=list(extra))
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


# Hooks every module runs (``register_module_forward_*hook``).
_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()
_global_forward_hooks_with_kwargs: OrderedDict = OrderedDict()


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """Run ``hook(module, args)`` before every module's forward.

    >>> import retrograd as torch
    >>> h = torch.nn.modules.module.register_module_forward_pre_hook(lambda m, a: None)
    >>> h.remove()
    """
    return _add_hook(_global_forward_pre_hooks, hook, False)


def register_module_forward_hook(hook, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """Run ``hook(module, args, output)`` after every module's forward.

    >>> import retrograd as torch
    >>> h = torch.nn.modules.module.register_module_forward_hook(lambda m, a, o: None)
    >>> h.remove()
    """
    handle = _add_hook(_global_forward_hooks, hook, False, [_global_forward_hooks_with_kwargs])
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    return handle


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text: str, spaces: int) -> str:
    """Indent every line of ``text`` but the first (blank lines stay empty)."""
    first, *rest = text.split("\n")
    if not rest:
        return text
    return "\n".join([first] + [(" " * spaces + line) if line.strip() else "" for line in rest])


def _forward_unimplemented(self, *input):  # noqa: A002
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" '
                              "function")


class Module:
    """Base class for all neural network modules; subclass it and define ``forward``.

    >>> import retrograd as torch
    >>> class Net(torch.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = torch.nn.Linear(2, 1)
    ...     def forward(self, x):
    ...         return self.fc(x)
    >>> net = Net()
    >>> [name for name, _ in net.named_parameters()]
    ['fc.weight', 'fc.bias']
    >>> net(torch.zeros(3, 2)).shape
    retrograd.Size([3, 1])
    >>> net
    Net(
      (fc): Linear(in_features=2, out_features=1, bias=True)
    )
    """

    dump_patches: bool = False
    _version: int = 1
    training: bool
    call_super_init: bool = False

    def __init__(self, *args, **kwargs) -> None:
        if not self.call_super_init and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if not self.call_super_init and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        d = self.__dict__  # bypass __setattr__, as PyTorch does
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()
        d["_modules"] = {}
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward = _forward_unimplemented

    # -- registration --------------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (saved in state_dict if persistent).

        >>> import retrograd as torch
        >>> m = torch.nn.Module()
        >>> m.register_buffer("mean", torch.zeros(2))
        >>> m.register_buffer("tmp", torch.ones(1), persistent=False)
        >>> list(m.state_dict())
        ['mean']
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.__dict__.get("persistent", persistent)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a Parameter (or None) under ``name``.

        >>> import retrograd as torch
        >>> m = torch.nn.Module()
        >>> m.register_parameter("w", torch.nn.Parameter(torch.ones(2)))
        >>> m.w
        Parameter containing:
        tensor([1., 1.], requires_grad=True)
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module (or None) under ``name``.

        >>> import retrograd as torch
        >>> m = torch.nn.Module()
        >>> m.add_module("id", torch.nn.Identity())
        >>> m
        Module(
          (id): Identity()
        )
        """
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias of ``add_module``."""
        self.add_module(name, module)

    # -- attribute protocol --------------------------------------------------------------------
    def __getattr__(self, name: str):
        d = self.__dict__
        if "_parameters" in d:
            if name in d["_parameters"]:
                return d["_parameters"][name]
            if name in d["_buffers"]:
                return d["_buffers"][name]
            if name in d["_modules"]:
                return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__

        def remove_from(*containers) -> None:
            for c in containers:
                if name in c:
                    if isinstance(c, dict):
                        del c[name]
                    else:
                        c.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = value.__dict__.get("persistent", True)
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = (dir(type(self)) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        return sorted(k for k in keys if not k[0].isdigit())

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    # -- calling -------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        start = _sequence_nr()
        if not (self._forward_hooks or self._forward_pre_hooks or _global_forward_hooks
                or _global_forward_pre_hooks or self._backward_hooks
                or self._backward_pre_hooks):
            out = self.forward(*args, **kwargs)
        elif (self._backward_hooks or self._backward_pre_hooks) and torch.is_grad_enabled():
            out = _call_with_backward_hooks(self, args, kwargs)
        else:
            out = self._call_with_hooks(args, kwargs)
        # The graph nodes this call made lie between the two numbers: memory_report's modules.
        self.__dict__["_graph_span"] = (start, _sequence_nr())
        return out

    def _call_with_hooks(self, args: tuple, kwargs: dict):
        pre_with_kwargs = self._forward_pre_hooks_with_kwargs
        for hook_id, hook in (*_global_forward_pre_hooks.items(),
                              *self._forward_pre_hooks.items()):
            if hook_id in pre_with_kwargs:
                out = hook(self, args, kwargs)
                if out is not None:
                    if isinstance(out, tuple) and len(out) == 2:
                        args, kwargs = out
                    else:
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {out}.")
            else:
                out = hook(self, args)
                if out is not None:
                    args = out if isinstance(out, tuple) else (out,)
        called = set()
        result = None
        try:
            result = self.forward(*args, **kwargs)
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                called.add(hook_id)
                if (hook_id in self._forward_hooks_with_kwargs
                        or hook_id in _global_forward_hooks_with_kwargs):
                    out = hook(self, args, kwargs, result)
                else:
                    out = hook(self, args, result)
                if out is not None:
                    result = out
        except Exception:
            # hooks registered with always_call=True still run when forward raises
            for hook_id, hook in self._forward_hooks.items():
                if hook_id in self._forward_hooks_always_called and hook_id not in called:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            hook(self, args, kwargs, result)
                        else:
                            hook(self, args, result)
                    except Exception as e:
                        warnings.warn(
                            "module forward hook with ``always_call=True`` raised an exception "
                            f"that was silenced as another error was raised in forward: {e}",
                            stacklevel=2,
                        )
            raise
        return result

    def register_forward_pre_hook(self, hook, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Run ``hook(module, args)`` before ``forward``; a non-None result replaces the args.

        With ``with_kwargs=True`` the hook is ``hook(module, args, kwargs)`` and may return a new
        ``(args, kwargs)`` pair.

        >>> import retrograd as torch
        >>> m = torch.nn.Identity()
        >>> h = m.register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
        >>> m(torch.tensor(1.0))
        tensor(2.)
        """
        handle = _add_hook(self._forward_pre_hooks, hook, prepend,
                           [self._forward_pre_hooks_with_kwargs])
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Run ``hook(module, args, output)`` after ``forward``; a non-None result replaces it.

        >>> import retrograd as torch
        >>> m = torch.nn.Identity()
        >>> seen = []
        >>> h = m.register_forward_hook(lambda mod, args, out: seen.append(out.item()))
        >>> _ = m(torch.tensor(3.0)); seen
        [3.0]
        """
        handle = _add_hook(self._forward_hooks, hook, prepend,
                           [self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_hook(self, hook, prepend: bool = False):
        """Run ``hook(module, grad_input, grad_output)`` once the gradients with respect to the
        module's inputs are computed; a non-None result replaces ``grad_input``.

        >>> import retrograd as torch
        >>> m = torch.nn.Linear(2, 1)
        >>> seen = []
        >>> h = m.register_full_backward_hook(lambda mod, gi, go: seen.append(go[0].shape))
        >>> m(torch.ones(3, 2, requires_grad=True)).sum().backward(); seen
        [retrograd.Size([3, 1])]
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single "
                "Module. Please use only one of them."
            )
        self.__dict__["_is_full_backward_hook"] = True
        return _add_hook(self._backward_hooks, hook, prepend, [])

    def register_full_backward_pre_hook(self, hook, prepend: bool = False):
        """Run ``hook(module, grad_output)`` when the gradients with respect to the module's
        outputs are known; a non-None result replaces ``grad_output``.

        >>> import retrograd as torch
        >>> m = torch.nn.Identity()
        >>> h = m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
        >>> x = torch.ones(2, requires_grad=True)
        >>> m(x).sum().backward(); x.grad
        tensor([2., 2.])
        """
        return _add_hook(self._backward_pre_hooks, hook, prepend, [])

    def register_backward_hook(self, hook):
        """PyTorch's deprecated form; retrograd runs it as a full backward hook."""
        return self.register_full_backward_hook(hook)

    # -- traversal -----------------------------------------------------------------------------
    def _named_members(self, get_members, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True):
        seen = set()
        mods = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                if recurse else [(prefix, self)])
        for mod_prefix, mod in mods:
            for k, v in get_members(mod):
                if v is None or id(v) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield (mod_prefix + "." + k if mod_prefix else k), v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Iterate over the module's parameters (each once), submodules' too if ``recurse``.

        >>> import retrograd as torch
        >>> [tuple(p.shape) for p in torch.nn.Linear(3, 2).parameters()]
        [(2, 3), (2,)]
        """
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Iterate over ``(name, parameter)`` pairs, names dotted by submodule path.

        >>> import retrograd as torch
        >>> net = torch.nn.Sequential(torch.nn.Linear(2, 2))
        >>> [n for n, _ in net.named_parameters(prefix="net")]
        ['net.0.weight', 'net.0.bias']
        """
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Iterate over the module's buffers.

        >>> import retrograd as torch
        >>> m = torch.nn.Module(); m.register_buffer("b", torch.zeros(1))
        >>> list(m.buffers())
        [tensor([0.])]
        """
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Iterate over ``(name, buffer)`` pairs.

        >>> import retrograd as torch
        >>> m = torch.nn.Module(); m.register_buffer("b", torch.zeros(1))
        >>> [n for n, _ in m.named_buffers()]
        ['b']
        """
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def children(self) -> Iterator[Module]:
        """Iterate over the immediate child modules.

        >>> import retrograd as torch
        >>> list(torch.nn.Sequential(torch.nn.Identity()).children())
        [Identity()]
        """
        for _, m in self.named_children():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """Iterate over ``(name, child)`` pairs, each child once.

        >>> import retrograd as torch
        >>> [n for n, _ in torch.nn.Sequential(torch.nn.Identity()).named_children()]
        ['0']
        """
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """Iterate over all modules of the tree, this one first.

        >>> import retrograd as torch
        >>> len(list(torch.nn.Sequential(torch.nn.Identity()).modules()))
        2
        """
        for _, m in self.named_modules(remove_duplicate=remove_duplicate):
            yield m

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True):
        """Iterate over ``(name, module)`` for the whole tree, depth first, this one as ``''``.

        >>> import retrograd as torch
        >>> [n for n, _ in torch.nn.Sequential(torch.nn.Identity()).named_modules()]
        ['', '0']
        """
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + "." + name if prefix else name,
                                       remove_duplicate)

    def get_submodule(self, target: str) -> Module:
        """The submodule at a dotted path (``''`` is this module).

        >>> import retrograd as torch
        >>> net = torch.nn.Sequential(torch.nn.Sequential(torch.nn.Identity()))
        >>> net.get_submodule("0.0")
        Identity()
        """
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path.

        >>> import retrograd as torch
        >>> torch.nn.Sequential(torch.nn.Linear(2, 3)).get_parameter("0.bias").shape
        retrograd.Size([3])
        """
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at a dotted path.

        >>> import retrograd as torch
        >>> m = torch.nn.Module(); m.register_buffer("b", torch.ones(1))
        >>> m.get_buffer("b")
        tensor([1.])
        """
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    # -- modes and conversions -----------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (affects Dropout, BatchNorm, ...) here and in every submodule.

        >>> import retrograd as torch
        >>> net = torch.nn.Sequential(torch.nn.Identity()).eval()
        >>> net.training, net[0].training
        (False, False)
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> Module:
        """``train(False)``.

        >>> import retrograd as torch
        >>> torch.nn.Identity().eval().training
        False
        """
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter.

        >>> import retrograd as torch
        >>> lin = torch.nn.Linear(2, 2).requires_grad_(False)
        >>> lin.weight.requires_grad
        False
        """
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None, or to zeros).

        >>> import retrograd as torch
        >>> lin = torch.nn.Linear(2, 1)
        >>> lin(torch.ones(1, 2)).sum().backward()
        >>> lin.zero_grad(); lin.weight.grad is None
        True
        """
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def apply(self, fn) -> Module:
        """Call ``fn`` on every submodule (children first) and then on this module.

        >>> import retrograd as torch
        >>> names = []
        >>> _ = torch.nn.Sequential(torch.nn.Identity()).apply(
        ...     lambda m: names.append(type(m).__name__))
        >>> names
        ['Identity', 'Sequential']
        """
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse: bool = True) -> Module:
        if recurse:
            for m in self.children():
                m._apply(fn)
        for p in self._parameters.values():
            if p is None:
                continue
            with torch.no_grad():
                new = fn(p)
            if new is not p:
                p.data = new  # keep the Parameter object: optimizers hold it
            g = p.grad
            if g is not None:
                with torch.no_grad():
                    new_g = fn(g)
                if new_g is not g:
                    g.data = new_g
        for key, b in self._buffers.items():
            if b is not None:
                self._buffers[key] = fn(b)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Convert floating-point parameters and buffers to a dtype (the device must be the CPU).

        >>> import retrograd as torch
        >>> torch.nn.Linear(2, 2).to(torch.float64).weight.dtype
        retrograd.float64
        """
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        kwargs.pop("non_blocking", None)
        fmt = kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() received an invalid combination of arguments: {sorted(kwargs)}")
        if (fmt is not None and not isinstance(fmt, torch.memory_format)) or \
                any(isinstance(a, torch.memory_format) for a in args):
            torch.empty(0).to(*args, memory_format=fmt)  # PyTorch's TypeError for a bad one
        for a in args:
            if isinstance(a, torch.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, (str, torch.device, int)) and not isinstance(a, bool):
                device = a
        if device is not None and not isinstance(device, int):
            torch.device(device)  # raises for anything but the CPU
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, "
                            f"but got desired dtype={dtype}")

        def convert(t: Tensor) -> Tensor:
            # As PyTorch: floating tensors take the dtype; 4-D and 5-D ones the memory format.
            dt = dtype if t.is_floating_point() else None
            if fmt is not None and t.dim() in (4, 5):
                return t.to(dt, memory_format=fmt)
            return t if dt is None else t.to(dt)

        if dtype is None and fmt is None:
            return self
        return self._apply(convert)

    def float(self) -> Module:
        """Cast floating-point parameters and buffers to float32.

        >>> import retrograd as torch
        >>> torch.nn.Linear(1, 1).double().float().weight.dtype
        retrograd.float32
        """
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        """Cast floating-point parameters and buffers to float64.

        >>> import retrograd as torch
        >>> torch.nn.Linear(1, 1).double().bias.dtype
        retrograd.float64
        """
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        """Cast floating-point parameters and buffers to float16.

        >>> import retrograd as torch
        >>> torch.nn.Linear(1, 1).half().weight.dtype
        retrograd.float16
        """
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        """Cast floating-point parameters and buffers to bfloat16.

        >>> import retrograd as torch
        >>> torch.nn.Linear(1, 1).bfloat16().weight.dtype
        retrograd.bfloat16
        """
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def type(self, dst_type) -> Module:
        """Cast all parameters and buffers to ``dst_type``.

        >>> import retrograd as torch
        >>> torch.nn.Linear(1, 1).type(torch.float64).weight.dtype
        retrograd.float64
        """
        return self._apply(lambda t: t.to(dst_type))

    def cpu(self) -> Module:
        """Return the module itself: everything already lives on the CPU.

        >>> import retrograd as torch
        >>> torch.nn.Identity().cpu()
        Identity()
        """
        return self

    def cuda(self, device=None) -> Module:
        """Not supported: retrograd computes on the CPU only."""
        torch.device("cuda")
        return self  # pragma: no cover

    def share_memory(self) -> Module:
        """Return the module itself (no shared-memory tensors in retrograd)."""
        return self

    # -- state dict ----------------------------------------------------------------------------
    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """Run ``hook(module, prefix, keep_vars)`` before ``state_dict`` collects this module."""
        return _add_hook(self._state_dict_pre_hooks, hook, False)

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        """Run ``hook(module, state_dict, prefix, local_metadata)`` after ``state_dict``."""
        return _add_hook(self._state_dict_hooks, hook, False)

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """Run ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads its part of a state dict."""
        return _add_hook(self._load_state_dict_pre_hooks, hook, False)

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        """Run ``hook(module, incompatible_keys)`` after ``load_state_dict``; it may edit the
        key lists in place."""
        return _add_hook(self._load_state_dict_post_hooks, hook, False)

    def get_extra_state(self):
        """Override (with ``set_extra_state``) to save extra, non-tensor state in state_dict."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug."
        )

    def set_extra_state(self, state) -> None:
        """Override (with ``get_extra_state``) to load extra state from a state dict."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug."
        )

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """An OrderedDict of every parameter and persistent buffer, keyed by dotted name.

        Tensors are detached (they share memory with the module) unless ``keep_vars``.

        >>> import retrograd as torch
        >>> sd = torch.nn.Sequential(torch.nn.Linear(2, 1)).state_dict()
        >>> list(sd)
        ['0.weight', '0.bias']
        """
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                "#torch.nn.Module.state_dict for details.",
                FutureWarning,
                stacklevel=2,
            )
            names = ("destination", "prefix", "keep_vars")
            given = dict(zip(names, args))
            destination = given.get("destination", destination)
            prefix = given.get("prefix", prefix)
            keep_vars = given.get("keep_vars", keep_vars)
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            out = hook(self, destination, prefix, local_metadata)
            if out is not None:
                destination = out
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        for hook in self._load_state_dict_pre_hooks.values():
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                        persistent.items()) if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(value)}"
                )
                continue
            if param.dim() == 0 and value.dim() == 1:
                value = value[0]  # PyTorch's backward compatibility for 0-dim tensors
            if value.shape != param.shape:
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from "
                    f"checkpoint, the shape in current model is {param.shape}."
                )
                continue
            try:
                with torch.no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(value, Parameter):
                                value = Parameter(value, requires_grad=param.requires_grad)
                            else:
                                value.requires_grad_(param.requires_grad)
                        setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {param.size()} and whose dimensions in the checkpoint are "
                    f"{value.size()}, an exception occurred : {ex.args}."
                )
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head, *rest = key[len(prefix):].split(".", 1)
                    if rest:
                        if head not in self._modules:
                            unexpected_keys.append(key)
                    elif head not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping, strict: bool = True, assign: bool = False):
        """Copy parameters and buffers from ``state_dict`` into this module and its children.

        With ``strict`` (the default), missing or unexpected keys raise PyTorch's RuntimeError;
        otherwise they are returned as ``(missing_keys, unexpected_keys)``.

        >>> import retrograd as torch
        >>> a, b = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> bool((a.weight == b.weight).all())
        True
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module: Module, local: dict, prefix: str = "") -> None:
            meta = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                meta["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local, prefix, meta, True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local.items() if k.startswith(child_prefix)},
                         child_prefix)
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, keys) is not None:
                    raise RuntimeError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not"
                        "expected to return new values, if incompatible_keys need to be modified,"
                        "it should be done inplace."
                    )

        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # -- printing ------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The module-specific part of ``repr`` (override it; one line or several).

        >>> import retrograd as torch
        >>> torch.nn.Linear(2, 3).extra_repr()
        'in_features=2, out_features=3, bias=True'
        """
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + key + "): " + _addindent(repr(m), 2)
                       for key, m in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


class BackwardHookFunction(torch.autograd.Function):
    """An identity whose node marks where a module's inputs or outputs meet the graph; module
    backward hooks run as pre-hooks on its node (PyTorch does the same)."""

    @staticmethod
    def forward(ctx, *tensors):
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _through_identity(tensors: list) -> tuple:
    out = BackwardHookFunction.apply(*tensors)
    return out if isinstance(out, tuple) else (out,)


def _call_with_backward_hooks(module, args: tuple, kwargs: dict):
    """Forward with full backward (pre-)hooks: identities on the inputs and on the outputs."""
    grad_output = [None]
    hooks = module._backward_hooks
    in_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    if in_pos and hooks:
        wrapped = _through_identity([args[i] for i in in_pos])
        args = list(args)
        for i, w in zip(in_pos, wrapped):
            args[i] = w
        args = tuple(args)
        n_args = len(args)

        def input_hook(grads):
            grad_input = [None] * n_args
            for i, g in zip(in_pos, grads):
                grad_input[i] = g
            grad_input = tuple(grad_input)
            for hook in tuple(hooks.values()):
                r = hook(module, grad_input, grad_output[0])
                if r is not None:
                    grad_input = tuple(r)
            return tuple(grad_input[i] for i in in_pos)

        wrapped[0].grad_fn.register_prehook(input_hook)

    result = module._call_with_hooks(args, kwargs)
    single = isinstance(result, Tensor)
    outs = (result,) if single else result
    if not isinstance(outs, tuple):
        return result
    out_pos = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    if not out_pos:
        return result
    wrapped = _through_identity([outs[i] for i in out_pos])

    def output_hook(grads):
        go = tuple(grads)
        for hook in tuple(module._backward_pre_hooks.values()):
            r = hook(module, go)
            if r is not None:
                go = tuple(r) if isinstance(r, (tuple, list)) else (r,)
        grad_output[0] = go
        if hooks and not in_pos:
            # No input needs a gradient: the hooks run now, with grad_input all None.
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to module "
                "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/"
                "main/generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook "
                "for more details.",
                UserWarning,
                stacklevel=2,
            )
            for hook in tuple(hooks.values()):
                hook(module, (None,) * len(args), go)
        return go

    wrapped[0].grad_fn.register_prehook(output_hook)
    new = list(outs)
    for i, w in zip(out_pos, wrapped):
        new[i] = w
    return new[0] if single else type(outs)(new)
