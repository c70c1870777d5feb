"""``RemovableHandle``: what every ``register_*hook`` returns, as ``torch.utils.hooks`` has it.

One class serves the autograd graph (node and tensor hooks), ``nn`` (module hooks) and ``optim``
(optimizer hooks). It imports nothing from retrograd, so that ``autograd.graph`` can import it
while the package is still being set up.
"""

from __future__ import annotations

import itertools

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """A handle that takes its hook out again: ``remove()``, or leave a ``with`` block.

    Hooks live in one of two kinds of container. Modules and optimizers keep an ordered dict
    keyed by ``handle.id``, as PyTorch does (``extra_dict``: further dicts holding flags under
    the same id, removed together). Autograd nodes and tensors keep a plain list of the hooks
    themselves, which the backward pass walks without lookups: such a handle is made with the
    hook as second argument, and ``remove()`` takes that hook out of the list.

    >>> hooks = {}
    >>> h = RemovableHandle(hooks)
    >>> hooks[h.id] = print
    >>> with h:
    ...     len(hooks)
    1
    >>> len(hooks)
    0
    >>> fns = [print]
    >>> RemovableHandle(fns, print).remove(); fns
    []
    """

    __slots__ = ("hooks_dict", "id", "extra_dicts", "_hook")
    _next_id = itertools.count()

    def __init__(self, hooks_dict, hook=None, *, extra_dict=None) -> None:
        self.hooks_dict = hooks_dict
        self.id = next(RemovableHandle._next_id)
        self._hook = hook
        if extra_dict is None:
            extra_dict = ()
        elif isinstance(extra_dict, dict):
            extra_dict = (extra_dict,)
        self.extra_dicts = tuple(extra_dict)

    def remove(self) -> None:
        """Take the hook out; removing it twice is harmless."""
        if self._hook is not None:
            try:
                self.hooks_dict.remove(self._hook)
            except ValueError:
                pass
            return
        for d in (self.hooks_dict, *self.extra_dicts):
            d.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
