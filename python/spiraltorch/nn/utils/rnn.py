"""Variable-length sequences for the recurrent layers, as ``torch.nn.utils.rnn``:
``pad_sequence``, ``pack_padded_sequence``, ``pack_sequence``, ``pad_packed_sequence``,
``unpad_sequence``, ``unpack_sequence`` and ``PackedSequence``.

A ``PackedSequence`` holds PyTorch's layout: the time steps of every sequence interleaved
(longest first) in ``data`` (``(sum of lengths, *features)``), ``batch_sizes`` (how many sequences
are still running at each step, an int64 CPU tensor), and the permutations between the caller's
batch order and the sorted one. ``nn.LSTM`` and ``nn.GRU`` accept one and return their output
packed, with each sequence's ``h_n`` taken at its own last step (the native layers run the packed
steps). The functions here only rearrange tensors with native ops, so gradients flow through them.
"""

from __future__ import annotations

from typing import Any, List, NamedTuple, Optional, Sequence, Tuple, Union

from ... import _core
from ..._core import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence",
           "pad_sequence", "unpack_sequence", "unpad_sequence"]


class PackedSequence(NamedTuple):
    """torch.nn.utils.rnn.PackedSequence: (data, batch_sizes, sorted_indices, unsorted_indices)."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Optional[Tensor] = None
    unsorted_indices: Optional[Tensor] = None

    def to(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        """The same sequence with ``data`` moved/converted (batch_sizes stay on the CPU)."""
        data = self.data.to(*args, **kwargs)
        device = data.device
        move = (lambda t: None if t is None else t.to(device))
        return PackedSequence(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    @property
    def is_cuda(self) -> bool:
        return str(self.data.device).startswith("cuda")


def invert_permutation(permutation: Optional[Tensor]) -> Optional[Tensor]:
    """The inverse of an index permutation (None stays None)."""
    if permutation is None:
        return None
    order = _core.argsort(permutation)
    return order.to(_core.dtype.int64)


def _lengths_list(lengths: Any) -> List[int]:
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise _core.ShapeError(f"pack_padded_sequence: lengths must be 1-D, got shape {tuple(lengths.shape)}")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Packs a padded batch ``(T, B, *)`` (``(B, T, *)`` with batch_first) of sequences of the given
    lengths. With ``enforce_sorted`` the lengths must be non-increasing; otherwise the batch is sorted
    here and the permutation kept, so the recurrent layer's h_n comes back in the caller's order."""
    lens = _lengths_list(lengths)
    batch_dim = 0 if batch_first else 1
    if len(lens) != input.shape[batch_dim]:
        raise _core.ShapeError(f"pack_padded_sequence: {len(lens)} lengths for a batch of {input.shape[batch_dim]}")
    if any(n <= 0 for n in lens):
        raise _core.SpiralValueError("pack_padded_sequence: every length must be positive")
    if max(lens) > input.shape[1 - batch_dim]:
        raise _core.ShapeError(f"pack_padded_sequence: a length of {max(lens)} exceeds the padded length "
                               f"{input.shape[1 - batch_dim]}")
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:])):
            raise _core.SpiralValueError("pack_padded_sequence: lengths must be sorted in decreasing order when "
                                         "enforce_sorted=True (pass enforce_sorted=False to sort them here)")
        sorted_indices = None
        order = list(range(len(lens)))
    else:
        order = sorted(range(len(lens)), key=lambda i: -lens[i])  # stable, like torch.sort(descending)
        sorted_indices = _core.tensor(order, dtype=_core.dtype.int64, device=input.device)
        input = input.index_select(batch_dim, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    sorted_lens = [lens[i] for i in order]
    steps = sorted_lens[0]
    batch_sizes = [sum(1 for n in sorted_lens if n > t) for t in range(steps)]
    data = _core.cat([input[t, :batch_sizes[t]] for t in range(steps)], 0)
    return PackedSequence(data, _core.tensor(batch_sizes, dtype=_core.dtype.int64), sorted_indices,
                          invert_permutation(sorted_indices))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: Optional[int] = None) -> Tuple[Tensor, Tensor]:
    """The padded batch ``(T, B, *)`` (``(B, T, *)`` with batch_first) and the lengths (int64) of a
    PackedSequence, in the caller's batch order."""
    data, batch_sizes = sequence.data, [int(v) for v in sequence.batch_sizes.tolist()]
    steps, batch = len(batch_sizes), batch_sizes[0]
    if total_length is not None:
        if total_length < steps:
            raise _core.SpiralValueError(f"pad_packed_sequence: total_length {total_length} is shorter than the "
                                         f"longest sequence ({steps})")
        steps_out = total_length
    else:
        steps_out = steps
    rows, offset = [], 0
    for n in batch_sizes:
        step = data[offset:offset + n]
        if n < batch:
            pad = _core.full((batch - n,) + tuple(step.shape[1:]), padding_value, dtype=data.dtype,
                             device=data.device)
            step = _core.cat([step, pad], 0)
        rows.append(step)
        offset += n
    for _ in range(steps_out - steps):
        rows.append(_core.full((batch,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device))
    padded = _core.stack(rows, 0)
    lengths = [sum(1 for n in batch_sizes if n > b) for b in range(batch)]
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = [lengths[i] for i in sequence.unsorted_indices.tolist()]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, _core.tensor(lengths, dtype=_core.dtype.int64)


def pad_sequence(sequences: Union[Tensor, Sequence[Tensor]], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stacks tensors of shape ``(L_i, *)`` into ``(max L, B, *)`` (``(B, max L, *)`` with batch_first),
    filling with ``padding_value`` on the right (or the left)."""
    if padding_side not in ("right", "left"):
        raise _core.SpiralValueError(f"pad_sequence: padding_side must be 'right' or 'left', got {padding_side!r}")
    seqs = list(sequences)
    if not seqs:
        raise _core.SpiralValueError("pad_sequence: needs at least one sequence")
    longest = max(s.shape[0] for s in seqs)
    rows = []
    for s in seqs:
        missing = longest - s.shape[0]
        if missing:
            pad = _core.full((missing,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = _core.cat([s, pad] if padding_side == "right" else [pad, s], 0)
        rows.append(s)
    return _core.stack(rows, 0 if batch_first else 1)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Packs a list of ``(L_i, *)`` tensors (``pad_sequence`` then ``pack_padded_sequence``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False) -> List[Tensor]:
    """The list of unpadded sequences of a padded batch."""
    batch = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [batch[i, :n] for i, n in enumerate(_lengths_list(lengths))]


def unpack_sequence(packed_sequences: PackedSequence) -> List[Tensor]:
    """The list of sequences of a PackedSequence, in the caller's order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
