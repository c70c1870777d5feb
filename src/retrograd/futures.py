"""``retrograd.futures``: torch.futures' ``Future``, the result of asynchronous work.

A :class:`Future` holds a value (or an exception) that arrives later. DDP communication hooks
return one (``hook(state, bucket) -> Future[Tensor]``), and ``Work.get_future()`` turns an
asynchronous collective into one whose value is the list of tensors it wrote. ``then``
chains a callback that runs once the value is there and returns a new Future of its result.

Nothing here runs a thread: a Future made from a collective completes when something waits on
it (``wait``) or polls it (``done``), which moves the collective on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")


class Future(Generic[T]):
    """A value that will be set later (``set_result``) or by the work it stands for.

    >>> from retrograd.futures import Future
    >>> fut = Future()
    >>> doubled = fut.then(lambda f: 2 * f.value())
    >>> fut.done(), doubled.done()
    (False, False)
    >>> fut.set_result(21)
    >>> doubled.wait()
    42
    """

    def __init__(self, *, devices=None) -> None:
        self._done = False
        self._value = None
        self._error: BaseException | None = None
        self._callbacks: list = []
        # (poll, block): what moves the underlying work on, for futures of collectives
        # and of ``then`` chains; None for a future only ``set_result`` completes.
        self._source: tuple | None = None

    def done(self) -> bool:
        """Whether the value (or an error) is set; polls the work behind it."""
        if not self._done and self._source is not None:
            self._source[0]()
        return self._done

    def wait(self) -> T:
        """Block until the value is set and return it (raise the error, if one was set)."""
        if not self._done and self._source is not None:
            self._source[1]()
        if not self._done:
            raise RuntimeError("Future.wait() on a future that nothing will complete: "
                               "set_result was never called")
        if self._error is not None:
            raise self._error
        return self._value

    def value(self) -> T:
        """The value of a completed future (raises its error)."""
        if not self._done:
            raise RuntimeError("Future.value() called before the future completed; "
                               "call wait() first")
        if self._error is not None:
            raise self._error
        return self._value

    def set_result(self, result: T) -> None:
        """Complete the future with ``result`` and run its callbacks."""
        self._settle(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete the future with an error, which ``wait``/``value`` raise."""
        if not isinstance(result, BaseException):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._settle(None, result)

    def _settle(self, value, error) -> None:
        if self._done:
            raise RuntimeError("Attempting to mark a completed Future as complete again. Note "
                               "that a Future can only be marked completed once.")
        self._value, self._error, self._done = value, error, True
        self._source = None
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def add_done_callback(self, callback: Callable[[Future], None]) -> None:
        """Run ``callback(self)`` once complete (now, if it already is)."""
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)

    def then(self, callback: Callable[[Future], Any]) -> Future:
        """A new future holding ``callback(self)``, run once this one completes (an error
        raised by the callback completes the new one with a RuntimeError that names it, as
        torch's)."""
        out: Future = Future()
        out._source = (self.done, self._block)

        def run(fut: Future) -> None:
            try:
                result = callback(fut)
            except Exception as e:  # noqa: BLE001 - the error belongs to the new future
                err = RuntimeError("Got the following error when running the callback: "
                                   f"{type(e).__name__}: {e}")
                err.__cause__ = e
                out.set_exception(err)
            else:
                out.set_result(result)

        self.add_done_callback(run)
        return out

    def _block(self) -> None:
        try:
            self.wait()
        except Exception:  # noqa: BLE001 - the chained future carries it
            pass


def collect_all(futures: list) -> Future:
    """A future of the list of ``futures``, complete when all of them are.

    >>> from retrograd.futures import Future, collect_all
    >>> a, b = Future(), Future()
    >>> both = collect_all([a, b])
    >>> a.set_result(1); b.set_result(2)
    >>> [f.value() for f in both.wait()]
    [1, 2]
    """
    futures = list(futures)
    out: Future = Future()
    out._source = (lambda: all(f.done() for f in futures),
                   lambda: [f._block() for f in futures])
    left = [len(futures)]

    def one(_f) -> None:
        left[0] -= 1
        if left[0] == 0:
            out.set_result(futures)

    if not futures:
        out.set_result([])
    for f in futures:
        f.add_done_callback(one)
    return out


def wait_all(futures: list) -> list:
    """Wait for every future and return their values (raising the first error)."""
    return [f.wait() for f in futures]
