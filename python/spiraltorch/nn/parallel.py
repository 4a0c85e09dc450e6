"""Data-parallel training (``spiraltorch.nn.parallel``), like ``torch.nn.parallel``.

``DistributedDataParallel`` is the native wrapper (``spiraltorch._core.distributed``): at
construction it broadcasts rank 0's parameters and buffers, and during each backward pass it
averages the gradients over the ranks of the default process group in buckets of about
``bucket_cap_mb`` (reverse registration order), each bucket's all-reduce starting as soon as
its gradients are in while the rest of the backward runs. After ``backward()`` every rank holds
the same averaged gradients, so any optimizer, ``nn.fit`` and ``ModuleTrainer`` work unchanged.
Every rank must run the same number of synchronised backward passes.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from .. import _core

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(_core.distributed.DistributedDataParallel):
    """``DistributedDataParallel(module, device_ids=None, output_device=None, *, bucket_cap_mb=25.0,
    broadcast_buffers=True, find_unused_parameters=False)``.

    The wrapped module is ``.module`` (its keys read ``module.<key>``). A call with one tensor
    runs the native forward; other calls prepare the reducer and pass everything to the module.
    ``no_sync()`` keeps gradients local for gradient accumulation: the next backward outside it
    averages what has accumulated. ``bucket_indices``, ``overlapped_buckets`` and
    ``synced_steps`` report what the reducer did.
    """

    def __init__(self, module: Any, device_ids: Any = None, output_device: Any = None, dim: int = 0, *,
                 bucket_cap_mb: float = 25.0, broadcast_buffers: bool = True, find_unused_parameters: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False) -> None:
        """PyTorch's arguments: ``device_ids``/``output_device`` name the one device the module already
        lives on (a list of one index or None; the batches come to it as the caller moves them),
        ``gradient_as_bucket_view`` and ``static_graph`` are accepted and change nothing. Parameters
        that get no gradient in a pass contribute zeros (or what they hold) to the average either
        way; with ``find_unused_parameters=True`` the ranks also agree which parameters got a
        gradient anywhere, and one that got none on any rank keeps ``.grad`` None, as in PyTorch."""
        if not isinstance(module, _core.nn.Module):
            raise _core.DtypeError(f"DistributedDataParallel: expected a Module, got {type(module).__name__}")
        if device_ids is not None and len(list(device_ids)) > 1:
            raise _core.SpiralValueError("DistributedDataParallel: one device per process (device_ids of length 1)")
        if dim != 0:
            raise _core.SpiralValueError("DistributedDataParallel: batches are split along dim 0 only")
        super().__init__(module, bucket_cap_mb=bucket_cap_mb, broadcast_buffers=broadcast_buffers,
                         find_unused_parameters=bool(find_unused_parameters))

    @property
    def module(self) -> Any:
        """The wrapped module."""
        return self._module

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and isinstance(args[0], _core.Tensor):
            return super().__call__(args[0])
        self._prepare_forward()
        return self._module(*args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backward passes inside the block keep their gradients local (no communication)."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous
