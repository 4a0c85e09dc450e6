"""Distributed data parallelism (``spiraltorch.distributed``), like ``torch.distributed``.

The process groups and collectives are native (``spiraltorch._core.distributed``): backend
``"mpi"`` runs Open MPI's collectives on CPU tensors, ``"nccl"`` NCCL's on CUDA tensors; no
transport of SpiralTorch's own. Start the ranks with ``spiral-run --nproc-per-node N script.py``
(or ``mpirun``); each calls ``init_process_group`` once. Every collective must be called by
every rank, in the same order, with matching shapes. ``async_op=True`` returns a ``Work``
whose ``wait()`` blocks until the operation is complete (raising ``DistributedError`` after the
group's ``timeout``).

This module holds only the PyTorch-shaped argument forms (lists of tensors); the work is in C++.
"""

from __future__ import annotations

import os
import sys
from typing import Any, List, Optional, Sequence, Union

from . import _core
from .data import DistributedSampler

_d = _core.distributed

ReduceOp = _d.ReduceOp
Work = _d.Work
DistributedError = _d.DistributedError
available_backends = _d.available_backends
unavailable_reason = _d.unavailable_reason
is_initialized = _d.is_initialized
get_rank = _d.get_rank
get_world_size = _d.get_world_size
get_backend = _d.get_backend
barrier = _d.barrier
all_reduce = _d.all_reduce
broadcast = _d.broadcast
all_gather_into_tensor = _d.all_gather_into_tensor
reduce_scatter_tensor = _d.reduce_scatter_tensor

Tensor = _core.Tensor
Op = Union[str, "ReduceOp"]

__all__ = [
    "DistributedError", "DistributedSampler", "ReduceOp", "Work", "all_gather", "all_gather_into_tensor", "all_reduce",
    "available_backends", "barrier", "broadcast", "destroy_process_group", "get_backend", "get_rank", "get_world_size",
    "init_process_group", "is_available", "is_initialized", "reduce_scatter", "reduce_scatter_tensor",
    "unavailable_reason",
]


def is_available(backend: str = "mpi") -> bool:
    """Whether ``backend`` ("mpi" or "nccl") is compiled into this build and usable here."""
    return unavailable_reason(backend) == ""


_previous_excepthook: Any = None


def _exit_on_uncaught(exc_type: Any, exc: Any, tb: Any) -> None:
    """Prints the traceback, then ends the process at once: a rank that raised must not wait in
    MPI_Finalize for ranks blocked in a collective; its launcher (mpirun) then ends the job."""
    from .launch import _flush_output

    try:
        (_previous_excepthook or sys.__excepthook__)(exc_type, exc, tb)
    finally:
        _flush_output()  # os._exit skips every flush: buffered prints would be lost
        os._exit(1)


def init_process_group(backend: str = "mpi", *, rank: Optional[int] = None, world_size: Optional[int] = None,
                       init_method: str = "env://", timeout: float = 1800.0, device: Optional[int] = None) -> None:
    """Creates the default process group.

    ``rank``/``world_size`` default to the launcher's ``RANK``/``WORLD_SIZE``; for "mpi" they
    must agree with MPI's own numbering. ``timeout`` (seconds) bounds every wait on a
    collective. ``device`` (nccl): this rank's GPU, by default ``LOCAL_RANK``. ``"gloo"`` (PyTorch's CPU
    backend) means "mpi", the CPU backend here. With more than
    one rank, an uncaught exception then ends this process at once (after printing it), so the
    job fails instead of hanging.
    """
    global _previous_excepthook
    if backend == "gloo":
        # PyTorch's name for its CPU backend: SpiralTorch's CPU collectives are Open MPI's, so a
        # program written for torch.distributed on the CPU runs unchanged (started by spiral-run).
        backend = "mpi"
    _d.init_process_group(backend, rank=-1 if rank is None else rank, world_size=-1 if world_size is None else world_size,
                          init_method=init_method, timeout=timeout, device=-1 if device is None else device)
    if _d.get_world_size() > 1 and sys.excepthook is not _exit_on_uncaught:
        _previous_excepthook = sys.excepthook
        sys.excepthook = _exit_on_uncaught


def destroy_process_group() -> None:
    """Waits for the default group's pending operations and releases it (MPI itself stays
    initialised until the process exits, so a new group can be created)."""
    global _previous_excepthook
    _d.destroy_process_group()
    if sys.excepthook is _exit_on_uncaught:
        sys.excepthook = _previous_excepthook or sys.__excepthook__
        _previous_excepthook = None


class _CopyOutWork:
    """A Work whose results are copied into a list of tensors once it completes."""

    def __init__(self, work: Any, gathered: Tensor, outputs: Sequence[Tensor]) -> None:
        self._work, self._gathered, self._outputs, self._done = work, gathered, outputs, False

    def wait(self) -> bool:
        self._work.wait()
        if not self._done:
            _scatter_rows(self._gathered, self._outputs)
            self._done = True
        return True

    def is_completed(self) -> bool:
        return self._work.is_completed()


def _scatter_rows(gathered: Tensor, outputs: Sequence[Tensor]) -> None:
    n = outputs[0].shape[0] if outputs[0].dim() else 1
    for r, out in enumerate(outputs):
        part = gathered[r * n:(r + 1) * n]
        out.copy_(part.reshape(tuple(out.shape)))


def all_gather(tensor_list: List[Tensor], tensor: Tensor, async_op: bool = False) -> Any:
    """``torch.distributed.all_gather``: ``tensor_list[r]`` receives rank r's ``tensor``
    (``world_size`` tensors shaped like it). Returns a Work with ``async_op=True``, else None."""
    world = get_world_size()
    if len(tensor_list) != world:
        raise _core.SpiralValueError(f"all_gather: tensor_list needs {world} tensors (the world size), got {len(tensor_list)}")
    for i, out in enumerate(tensor_list):
        if tuple(out.shape) != tuple(tensor.shape) or out.dtype != tensor.dtype:
            raise _core.ShapeError(f"all_gather: tensor_list[{i}] is {tuple(out.shape)} {out.dtype}, "
                                   f"expected {tuple(tensor.shape)} {tensor.dtype} like the input")
    rows = tensor.shape[0] if tensor.dim() else 1
    gathered = _core.empty((world * rows,) + tuple(tensor.shape[1:]), dtype=tensor.dtype, device=tensor.device)
    work = _CopyOutWork(all_gather_into_tensor(gathered, tensor, async_op=True), gathered, tensor_list)
    if async_op:
        return work
    work.wait()
    return None


def reduce_scatter(output: Tensor, input_list: Union[Sequence[Tensor], Tensor], op: Op = "sum",
                   async_op: bool = False) -> Any:
    """``torch.distributed.reduce_scatter``: ``output`` on rank r becomes the reduction over
    ranks of their ``input_list[r]`` (a list of ``world_size`` tensors shaped like ``output``, or
    one tensor of ``world_size`` such blocks along dim 0)."""
    if isinstance(input_list, Tensor):
        return reduce_scatter_tensor(output, input_list, op, async_op=async_op)
    world = get_world_size()
    if len(input_list) != world:
        raise _core.SpiralValueError(f"reduce_scatter: input_list needs {world} tensors (the world size), got {len(input_list)}")
    flat = _core.cat([t.reshape((-1,) + tuple(output.shape[1:])) if output.dim() else t.reshape((1,)) for t in input_list], 0)
    return reduce_scatter_tensor(output, flat, op, async_op=async_op)
