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

def init_process_group(backend: str, *, rank: int = -1, world_size: int = -1, init_method: str = 'env://', timeout: float = 1800.0, device: int = -1) -> None: ...

def is_initialized() -> bool: ...

def destroy_process_group() -> None: ...

def get_rank() -> int: ...

def get_world_size() -> int: ...

def get_backend() -> str: ...

def barrier(*, async_op: bool = False) -> object: ...

def all_reduce(tensor: spiraltorch._core.Tensor, op: object = 'sum', *, async_op: bool = False) -> object: ...

def broadcast(tensor: spiraltorch._core.Tensor, src: int = 0, *, async_op: bool = False) -> object: ...

def all_gather_into_tensor(output: spiraltorch._core.Tensor, input: spiraltorch._core.Tensor, *, async_op: bool = False) -> object: ...

def reduce_scatter_tensor(output: spiraltorch._core.Tensor, input: spiraltorch._core.Tensor, op: object = 'sum', *, async_op: bool = False) -> object: ...

class DistributedDataParallel(spiraltorch._core.nn.Module):
    """
    Wraps a module for data-parallel training on the default process group (see spiraltorch.nn.parallel).
    """

    def __init__(self, module: spiraltorch._core.nn.Module, *, bucket_cap_mb: float = 25.0, broadcast_buffers: bool = True) -> None: ...

    @property
    def require_backward_grad_sync(self) -> bool:
        """False inside no_sync(): backward passes keep gradients local."""

    @require_backward_grad_sync.setter
    def require_backward_grad_sync(self, arg: bool, /) -> None: ...

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
