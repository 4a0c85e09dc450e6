"""torchvision's ``datasets`` and ``transforms`` spellings for the data SpiralTorch reads
locally (``datasets.FashionMNIST`` from Debian's dataset-fashion-mnist; nothing is
downloaded), and vision streams (``ChronoSnapshot``, ``ZSpaceStreamFrame``, ``StreamedVolume``,
``ZSpaceStreamFrameAggregator``, ``SpiralTorchVision``, ``vision_online_step``,
``stream_vision_training``) whose per-frame work runs in C++."""

from . import datasets, transforms  # noqa: F401
from .stream import (  # noqa: F401
    ChronoSnapshot,
    SpiralTorchVision,
    StreamedVolume,
    ZSpaceStreamFrame,
    ZSpaceStreamFrameAggregator,
    moving_digit_stream,
    stream_vision_training,
    vision_online_step,
)

__all__ = ["ChronoSnapshot", "SpiralTorchVision", "StreamedVolume", "ZSpaceStreamFrame", "ZSpaceStreamFrameAggregator",
           "datasets", "moving_digit_stream", "stream_vision_training", "transforms", "vision_online_step"]
