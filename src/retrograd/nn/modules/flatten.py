"""nn modules: Flatten and Unflatten."""

from __future__ import annotations

from retrograd import Tensor

from ..module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flattens dims ``start_dim`` to ``end_dim`` into one.

    >>> import retrograd as torch
    >>> torch.nn.Flatten()(torch.zeros(2, 3, 4)).shape
    retrograd.Size([2, 12])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expands dim ``dim`` into the shape ``unflattened_size``.

    >>> import retrograd as torch
    >>> torch.nn.Unflatten(1, (2, 3))(torch.zeros(4, 6)).shape
    retrograd.Size([4, 2, 3])
    """

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        if isinstance(dim, int):
            self._require_tuple_int(unflattened_size)
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim = dim
        self.unflattened_size = unflattened_size

    @staticmethod
    def _require_tuple_int(size) -> None:
        if isinstance(size, (tuple, list)):
            for i, s in enumerate(size):
                if not isinstance(s, int):
                    raise TypeError("unflattened_size must be tuple of ints, but found element "
                                    f"of type {type(s).__name__} at pos {i}")
            return
        raise TypeError("unflattened_size must be a tuple of ints, but found type "
                        f"{type(size).__name__}")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
