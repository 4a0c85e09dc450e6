"""
Process groups (MPI on CPU tensors, NCCL on CUDA tensors), collectives and DDP.
"""

import enum

from spiraltorch import DistributedError as DistributedError
import spiraltorch._core
import spiraltorch._core.nn


class ReduceOp(enum.Enum):
    """Reductions of all_reduce / reduce_scatter."""

    SUM = 0

    AVG = 1

    MAX = 2

    MIN = 3

class Work:
    """The handle of an asynchronous operation (async_op=True)."""

    def wait(self) -> bool:
        """
        Blocks until the operation is complete (raising its error, or DistributedError after the group's timeout); returns True.
        """

    def is_completed(self) -> bool:
        """Whether the operation has finished."""

def available_backends() -> list[str]:
    """Backends compiled into this build ('mpi', 'nccl')."""

def unavailable_reason(backend: str) -> str:
    """Why `backend` is unavailable ('' when it is available)."""

def mpi_library_version() -> str:
    """
    The MPI library's version line ('Open MPI v5.0.11'), '' in a build without MPI.
    """

def init_process_group(backend: str, *, rank: int = -1, world_size: int = -1, init_method: str = 'env://', timeout: float = 1800.0, device: int = -1) -> None:
    """
    Joins the default process group: backend 'mpi' (CPU tensors) or 'nccl' (CUDA tensors). rank and world_size default (-1) to the RANK / WORLD_SIZE environment or MPI's own; init_method must be 'env://' (the launcher's environment); timeout (seconds) bounds every collective, after which it raises DistributedError; device is this rank's CUDA device for NCCL (-1: LOCAL_RANK, else the rank, modulo the device count). ValueError for a bad backend, init_method or timeout, DeviceUnavailableError for a backend this build or machine lacks, SpiralError when a group already exists.
    """

def is_initialized() -> bool:
    """Whether init_process_group has run (and not been destroyed)."""

def destroy_process_group() -> None:
    """
    Leaves the default process group (its communicators are freed); init_process_group may run again.
    """

def get_rank() -> int:
    """
    This process's rank in the default group (0..world_size-1); SpiralError before init_process_group.
    """

def get_world_size() -> int:
    """
    The number of ranks in the default group; SpiralError before init_process_group.
    """

def get_backend() -> str:
    """
    The default group's backend ('mpi' or 'nccl'); SpiralError before init_process_group.
    """

def barrier(*, async_op: bool = False) -> Work | None:
    """
    Waits until every rank reaches the barrier; with async_op=True returns a Work to wait on instead.
    """

def all_reduce(tensor: spiraltorch._core.Tensor, op: ReduceOp | str = 'sum', *, async_op: bool = False) -> Work | None:
    """
    Reduces `tensor` over all ranks in place (op: 'sum', 'avg', 'max', 'min' or a ReduceOp); every rank ends with the result. Returns None, or a Work with async_op=True. ValueError for an unknown op.
    """

def broadcast(tensor: spiraltorch._core.Tensor, src: int = 0, *, async_op: bool = False) -> Work | None:
    """
    Copies rank src's `tensor` into `tensor` on every other rank (in place). Returns None, or a Work with async_op=True.
    """

def all_gather_into_tensor(output: spiraltorch._core.Tensor, input: spiraltorch._core.Tensor, *, async_op: bool = False) -> Work | None:
    """
    Concatenates every rank's `input` along dim 0, in rank order, into `output` (world_size times input's first dim). Returns None, or a Work with async_op=True.
    """

def reduce_scatter_tensor(output: spiraltorch._core.Tensor, input: spiraltorch._core.Tensor, op: ReduceOp | str = 'sum', *, async_op: bool = False) -> Work | None:
    """
    Reduces `input` over the ranks and leaves rank r the r-th of world_size equal dim-0 chunks of the result in `output`. Returns None, or a Work with async_op=True.
    """

class DistributedDataParallel(spiraltorch._core.nn.Module):
    """
    Wraps a module for data-parallel training on the default process group (see spiraltorch.nn.parallel).
    """

    def __init__(self, module: spiraltorch._core.nn.Module, *, bucket_cap_mb: float = 25.0, broadcast_buffers: bool = True, find_unused_parameters: bool = False) -> None:
        """
        Broadcasts rank 0's parameters (and buffers) to every rank, then averages gradients during backward in buckets of about bucket_cap_mb MB; broadcast_buffers re-sends rank 0's buffers before each forward; find_unused_parameters leaves a parameter that got no gradient on any rank without one (None).
        """

    def _prepare_forward(self) -> None: ...

    @property
    def _module(self) -> spiraltorch._core.nn.Module: ...

    @property
    def require_backward_grad_sync(self) -> bool:
        """False inside no_sync(): backward passes keep gradients local."""

    @require_backward_grad_sync.setter
    def require_backward_grad_sync(self, arg: bool, /) -> None: ...

    @property
    def find_unused_parameters(self) -> bool:
        """
        Whether parameters that got no gradient on any rank keep none (PyTorch's flag).
        """

    @property
    def bucket_indices(self) -> list[list[int]]:
        """
        Parameter indices (into parameters()) of each gradient bucket, in all-reduce order.
        """

    @property
    def overlapped_buckets(self) -> int:
        """
        Buckets of the last synchronised backward whose all-reduce started while backward still ran.
        """

    @property
    def synced_steps(self) -> int:
        """Backward passes whose gradients were averaged over the ranks."""
