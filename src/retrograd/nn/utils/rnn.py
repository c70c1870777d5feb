"""Variable-length sequences for the recurrent layers: ``PackedSequence`` and the functions that
pack, pad and unpack batches of sequences, as in ``torch.nn.utils.rnn``.

A packed sequence stores the time steps of a batch sorted by decreasing length one after the
other: step ``t`` holds the ``batch_sizes[t]`` sequences still running. Everything here is
composed from differentiable ops (slices, ``cat``, ``index_select``), so gradients flow back to
the padded or packed inputs.
"""

from __future__ import annotations

from typing import NamedTuple

import retrograd as torch
from retrograd import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


class PackedSequence_(NamedTuple):  # noqa: N801 - PyTorch's name
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    """The packed form of a batch of sequences: ``data`` (all steps, packed), ``batch_sizes``
    (int64, how many sequences each step holds), and the permutation from the caller's batch
    order to decreasing length (``sorted_indices``) and back (``unsorted_indices``).

    >>> import retrograd as torch
    >>> from retrograd.nn.utils.rnn import pack_sequence
    >>> pack_sequence([torch.tensor([1., 2.]), torch.tensor([3.])]).batch_sizes
    tensor([2, 1])
    """

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None, unsorted_indices: Tensor | None = None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PyTorch's legacy form: (data, batch_sizes) as the first arg
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """The same sequence with ``data`` converted by ``Tensor.to`` (indices stay int64)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def double(self) -> PackedSequence:
        return self.to(dtype=torch.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=torch.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=torch.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=torch.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=torch.int32)

    def cpu(self) -> PackedSequence:
        return self

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of ``0..n-1`` (``None`` stays ``None``).

    >>> import retrograd as torch
    >>> invert_permutation(torch.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    out = torch.empty_like(permutation)
    return out.scatter_(0, permutation, torch.arange(permutation.numel(), dtype=out.dtype))


def _pack(padded: Tensor, batch_sizes: list, sorted_indices: Tensor | None) -> Tensor:
    """The packed data of a time-major padded batch, in ``sorted_indices`` order."""
    if sorted_indices is not None:
        padded = padded.index_select(1, sorted_indices)
    return torch.cat([padded[t, :bs] for t, bs in enumerate(batch_sizes)], 0)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,  # noqa: A002
                         enforce_sorted: bool = True) -> PackedSequence:
    """Packs a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences of
    the given ``lengths``; ``enforce_sorted=False`` accepts lengths in any order.

    >>> import retrograd as torch
    >>> x = torch.tensor([[1., 3.], [2., 0.]])          # two sequences along dim 0
    >>> pack_padded_sequence(x, [2, 1]).data
    tensor([1., 3., 2.])
    """
    if isinstance(lengths, Tensor):
        lengths = lengths.to(dtype=torch.int64)
    else:
        lengths = torch.as_tensor(lengths, dtype=torch.int64)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = torch.sort(lengths, descending=True)
    lens = [int(v) for v in lengths.tolist()]
    if lens and min(lens) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    x = input.transpose(0, 1) if batch_first else input
    if len(lens) != x.shape[1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lens)} (batch_size={x.shape[1]})")
    if lens and lens[0] > x.shape[0]:
        raise RuntimeError(f"Expected sequence length to be larger than 0 and not larger than "
                           f"the total length, but got {lens[0]} and total length "
                           f"{x.shape[0]}")
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(lens[0] if lens else 0)]
    data = _pack(x, batch_sizes, sorted_indices)
    return PackedSequence(data, torch.tensor(batch_sizes, dtype=torch.int64), sorted_indices,
                          None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None) -> tuple:
    """Unpacks a ``PackedSequence`` into a padded batch and the lengths (int64), in the batch
    order the sequences were packed from.

    >>> import retrograd as torch
    >>> p = pack_sequence([torch.tensor([1., 2.]), torch.tensor([3.])])
    >>> pad_packed_sequence(p, batch_first=True)
    (tensor([[1., 2.],
            [3., 0.]]), tensor([2, 1]))
    """
    sizes = [int(v) for v in sequence.batch_sizes.tolist()]
    t_max = len(sizes)
    if total_length is not None:
        if total_length < t_max:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {t_max}")
        t_max = total_length
    data = sequence.data
    b = sizes[0] if sizes else 0
    rows, off = [], 0
    for t in range(t_max):
        bs = sizes[t] if t < len(sizes) else 0
        step = data[off:off + bs]
        off += bs
        if bs < b:
            fill = torch.full((b - bs, *data.shape[1:]), padding_value, dtype=data.dtype)
            step = torch.cat([step, fill], 0)
        rows.append(step)
    padded = torch.stack(rows, 0)
    lengths = torch.tensor([sum(1 for s in sizes if s > i) for i in range(b)], dtype=torch.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stacks sequences of different lengths ``(L_i, *)`` into ``(L_max, B, *)`` (``(B, L_max,
    *)`` with ``batch_first``), padding with ``padding_value`` on ``padding_side``.

    >>> import retrograd as torch
    >>> pad_sequence([torch.tensor([1., 2.]), torch.tensor([3.])], batch_first=True)
    tensor([[1., 2.],
            [3., 0.]])
    """
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    sequences = list(sequences)
    t_max = max(s.shape[0] for s in sequences)
    out = []
    for s in sequences:
        n = t_max - s.shape[0]
        if n:
            fill = torch.full((n, *s.shape[1:]), padding_value, dtype=s.dtype)
            s = torch.cat([s, fill] if padding_side == "right" else [fill, s], 0)
        out.append(s)
    return torch.stack(out, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> list:
    """The list of sequences in a padded batch, each cut to its length.

    >>> import retrograd as torch
    >>> unpad_sequence(torch.tensor([[1., 2.], [3., 0.]]), torch.tensor([2, 1]), True)
    [tensor([1., 2.]), tensor([3.])]
    """
    if not batch_first:
        # As PyTorch: the padded batch itself is transposed in place.
        padded_sequences.transpose_(0, 1)
    x = padded_sequences
    return [x[i, :int(n)] for i, n in enumerate(lengths.tolist())]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Packs a list of sequences ``(L_i, *)`` (by default sorted by decreasing length).

    >>> import retrograd as torch
    >>> pack_sequence([torch.tensor([1.]), torch.tensor([2., 3.])], enforce_sorted=False).data
    tensor([2., 1., 3.])
    """
    lengths = torch.as_tensor([v.shape[0] for v in sequences], dtype=torch.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences in a ``PackedSequence``, in their original order.

    >>> import retrograd as torch
    >>> unpack_sequence(pack_sequence([torch.tensor([1.]), torch.tensor([2., 3.])], False))
    [tensor([1.]), tensor([2., 3.])]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
