"""``torch.cpu``: the CPU as a device (always there) and its deprecated ``amp`` aliases."""

from . import amp

__all__ = ["amp", "is_available", "device_count"]


def is_available() -> bool:
    """The CPU is always available.

    >>> import retrograd
    >>> retrograd.cpu.is_available()
    True
    """
    return True


def device_count() -> int:
    return 1
