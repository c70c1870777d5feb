"""Grad modes: whether ops record the graph, per thread.

One thread-local object holds the flags; every op reads ``state.grad_enabled`` and nothing else.
Each mode is a class usable as a context manager and as a decorator, saving and restoring the
previous state so that modes nest.
"""

from __future__ import annotations

import functools
import inspect
import threading

__all__ = [
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
    "is_inference_mode_enabled",
]


class _State(threading.local):
    # Class attributes are the defaults each new thread starts from.
    grad_enabled = True
    inference = False


state = _State()


class _Mode:
    """Base of the grad-mode classes: a context manager that also decorates functions."""

    def __new__(cls, *args, **kwargs):
        # ``@no_grad`` without parentheses decorates directly, as PyTorch allows.
        if len(args) == 1 and not kwargs and callable(args[0]) and cls is not set_grad_enabled:
            return cls()(args[0])
        return super().__new__(cls)

    def __call__(self, fn):
        if isinstance(fn, type):
            raise TypeError(f"{type(self).__name__} cannot decorate a class")
        if inspect.isgeneratorfunction(fn):
            return self._wrap_generator(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._clone():
                return fn(*args, **kwargs)

        return wrapper

    def _wrap_generator(self, fn):
        """A generator runs each of its steps inside the mode, as PyTorch's decorators do."""

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with self._clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self._clone():
                            gen.close()
                        raise
                    except BaseException as e:  # noqa: BLE001 - forwarded into the generator
                        with self._clone():
                            response = gen.throw(e)
                    else:
                        with self._clone():
                            response = gen.send(request)
            except StopIteration as e:
                return e.value

        return wrapper

    def _clone(self):
        return type(self)()

    def __enter__(self):
        raise NotImplementedError

    def __exit__(self, *exc) -> None:
        state.grad_enabled = self._prev


class no_grad(_Mode):  # noqa: N801 - PyTorch's name
    """Do not record operations: results do not require grad.

    >>> import retrograd as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.no_grad():
    ...     (x * 2).requires_grad
    False
    """

    def __enter__(self) -> None:
        self._prev = state.grad_enabled
        state.grad_enabled = False


class enable_grad(_Mode):  # noqa: N801
    """Record operations again inside ``no_grad``.

    >>> import retrograd as torch
    >>> with torch.no_grad(), torch.enable_grad():
    ...     torch.is_grad_enabled()
    True
    """

    def __enter__(self) -> None:
        self._prev = state.grad_enabled
        state.grad_enabled = True


class set_grad_enabled(_Mode):  # noqa: N801
    """Turn recording on or off; takes effect at once, and also works as a context manager.

    >>> import retrograd as torch
    >>> with torch.set_grad_enabled(False):
    ...     torch.is_grad_enabled()
    False
    """

    def __init__(self, mode: bool) -> None:
        self._prev = state.grad_enabled
        self.mode = bool(mode)
        state.grad_enabled = self.mode

    def __call__(self, fn):
        # As a decorator the mode applies only while the function runs: undo it at once.
        state.grad_enabled = self._prev
        return super().__call__(fn)

    def _clone(self):
        return _SetGradMode(self.mode)

    def __enter__(self) -> None:
        pass


class _SetGradMode(_Mode):
    """set_grad_enabled's context for one call of a decorated function."""

    def __init__(self, mode: bool) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        self._prev = state.grad_enabled
        state.grad_enabled = self.mode


def is_grad_enabled() -> bool:
    """Whether ops record the graph in this thread.

    >>> import retrograd as torch
    >>> torch.is_grad_enabled()
    True
    """
    return state.grad_enabled


class inference_mode(_Mode):  # noqa: N801
    """Like ``no_grad``, and tensors made inside are inference tensors that autograd refuses.

    >>> import retrograd as torch
    >>> with torch.inference_mode():
    ...     torch.ones(2).is_inference()
    True
    """

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def _clone(self):
        return inference_mode(self.mode)

    def __enter__(self) -> None:
        self._prev = state.grad_enabled
        self._prev_inf = state.inference
        # inference_mode(False) turns grad mode back on, as PyTorch's does.
        state.grad_enabled = not self.mode
        state.inference = self.mode

    def __exit__(self, *exc) -> None:
        state.grad_enabled = self._prev
        state.inference = self._prev_inf


def is_inference_mode_enabled() -> bool:
    """Whether inference mode is on in this thread.

    >>> import retrograd as torch
    >>> torch.is_inference_mode_enabled()
    False
    """
    return state.inference
