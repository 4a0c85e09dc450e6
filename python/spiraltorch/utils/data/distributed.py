"""``torch.utils.data.distributed``: the module path PyTorch programs import ``DistributedSampler``
from (``from torch.utils.data.distributed import DistributedSampler``); the sampler is
``spiraltorch.data.DistributedSampler``."""

from ...data import DistributedSampler

__all__ = ["DistributedSampler"]
