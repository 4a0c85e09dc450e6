"""Vision streams: frames of image slices feeding a ``SpiralTorchVision`` volume and a
``ZSpaceTrainer`` online, with bounded memory and float64 chrono summaries.

The per-frame work runs in C++ (``spiraltorch._core.vision``): the ring of recent slices
(``ZSpaceStreamFrameAggregator``), slice profiles, chrono summaries and merges, the EMA volume and
the online step. This module holds the Python spellings and the stream loop.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional

from .. import _core

__all__ = ["ChronoSnapshot", "SpiralTorchVision", "StreamedVolume", "ZSpaceStreamFrame", "ZSpaceStreamFrameAggregator",
           "moving_digit_stream", "stream_vision_training", "vision_online_step"]

_v = _core.vision
Tensor = _core.Tensor

#: A chrono summary (11 float64 statistics of the frame energies over time) and its frame interval.
ChronoSnapshot = _v.ChronoSnapshot


def _volume_of(slices: Any, who: str) -> Tensor:
    """A (depth, H, W) float tensor from a tensor (2-d: one slice) or a sequence of (H, W) slices."""
    if isinstance(slices, Tensor):
        vol = slices
    else:
        items = list(slices)
        if not items:
            raise _core.SpiralValueError(f"{who}: need at least one slice")
        vol = _core.stack([s if isinstance(s, Tensor) else _core.tensor(s) for s in items], 0)
    if vol.dim() == 2:
        vol = vol.reshape(1, vol.shape[0], vol.shape[1])
    if vol.dim() != 3:
        raise _core.ShapeError(f"{who}: expected slices (H, W) or a volume (depth, H, W), got {tuple(vol.shape)}")
    return vol if vol.dtype in (_core.dtype.float32, _core.dtype.float64) else vol.float()


def _report(profile: Dict[str, Any]) -> Dict[str, Any]:
    return {"depth": profile["depth"], "mean_intensity": profile["average_mean"], "mean_std": profile["average_std"],
            "mean_energy": profile["average_energy"], "total_energy": profile["total_energy"],
            "max_energy": profile["max_energy"], "energy_entropy": profile["energy_entropy"]}


class _VolumeSlices:
    """depth / slice_shape / slices of a (depth, H, W) ``volume`` attribute."""

    volume: Tensor

    @property
    def depth(self) -> int:
        return int(self.volume.shape[0])

    @property
    def slice_shape(self) -> tuple:
        return (int(self.volume.shape[1]), int(self.volume.shape[2]))

    def slices(self) -> List[Tensor]:
        """The slices as (H, W) tensors (views of the volume)."""
        return [self.volume[i] for i in range(self.depth)]


class ZSpaceStreamFrame(_VolumeSlices):
    """One frame of a stream: a (depth, H, W) volume of slices, an optional chrono snapshot and
    atlas frame, and a timestamp (seconds, float64; the snapshot's when none is given)."""

    def __init__(self, slices: Any, *, atlas_frame: Any = None, chrono_snapshot: Optional[ChronoSnapshot] = None,
                 timestamp: Optional[float] = None) -> None:
        self.volume = _volume_of(slices, "ZSpaceStreamFrame")
        self.atlas_frame = atlas_frame
        self.chrono_snapshot = chrono_snapshot
        self._timestamp = timestamp

    @property
    def timestamp(self) -> Optional[float]:
        if self._timestamp is not None:
            return float(self._timestamp)
        return self.chrono_snapshot.timestamp if self.chrono_snapshot is not None else None

    def with_atlas(self, frame: Any) -> "ZSpaceStreamFrame":
        self.atlas_frame = frame
        return self

    def with_snapshot(self, snapshot: ChronoSnapshot) -> "ZSpaceStreamFrame":
        self.chrono_snapshot = snapshot
        return self

    def profile(self) -> Dict[str, Any]:
        """Per-slice means/stds/energies and aggregates (``_core.vision.slice_profile``)."""
        return _v.slice_profile(self.volume)

    def telemetry_report(self) -> Dict[str, Any]:
        return _report(self.profile())

    def to_streamed_volume(self) -> "StreamedVolume":
        return StreamedVolume.from_frame(self)

    into_streamed_volume = to_streamed_volume

    def to_dict(self) -> Dict[str, Any]:
        return {"depth": self.depth, "slice_shape": list(self.slice_shape), "timestamp": self.timestamp,
                "chrono_snapshot": self.chrono_snapshot.to_dict() if self.chrono_snapshot is not None else None,
                "profile": self.profile(), "telemetry_report": self.telemetry_report()}


class StreamedVolume(_VolumeSlices):
    """A volume that ingests frames as a voxel EMA: ``v <- (1 - alpha) v + alpha new`` for a frame of
    the same shape; a frame of another shape replaces it."""

    def __init__(self, volume: Tensor, *, chrono_snapshot: Optional[ChronoSnapshot] = None, atlas_frame: Any = None) -> None:
        self.volume = _volume_of(volume, "StreamedVolume").clone()
        self.chrono_snapshot = chrono_snapshot
        self.atlas_frame = atlas_frame

    @staticmethod
    def from_frame(frame: ZSpaceStreamFrame) -> "StreamedVolume":
        return StreamedVolume(frame.volume, chrono_snapshot=frame.chrono_snapshot, atlas_frame=frame.atlas_frame)

    def ingest_frame(self, frame: ZSpaceStreamFrame, *, alpha: float = 0.5) -> "StreamedVolume":
        """Blends ``frame`` in (alpha in [0, 1]); its chrono snapshot, if any, is pooled with ours."""
        if not 0.0 <= alpha <= 1.0:
            raise _core.SpiralValueError(f"StreamedVolume.ingest_frame: alpha must be in [0, 1], got {alpha}")
        new = frame.volume.to(self.volume.dtype)
        if tuple(new.shape) == tuple(self.volume.shape):
            self.volume = self.volume * (1.0 - alpha) + new * alpha
        else:
            self.volume = new.clone()
        if frame.chrono_snapshot is not None:
            self.chrono_snapshot = (frame.chrono_snapshot if self.chrono_snapshot is None
                                    else self.chrono_snapshot.merge(frame.chrono_snapshot))
        if frame.atlas_frame is not None:
            self.atlas_frame = frame.atlas_frame
        return self

    def profile(self) -> Dict[str, Any]:
        return _v.slice_profile(self.volume)

    def telemetry_report(self) -> Dict[str, Any]:
        return _report(self.profile())

    def to_dict(self) -> Dict[str, Any]:
        return {"depth": self.depth, "slice_shape": list(self.slice_shape),
                "chrono_snapshot": self.chrono_snapshot.to_dict() if self.chrono_snapshot is not None else None,
                "profile": self.profile()}


class ZSpaceStreamFrameAggregator:
    """The newest ``max_depth`` slices of a stream (oldest first; None: unbounded) and the chrono
    summary of the frames they came from. Memory stays bounded however long the stream runs."""

    def __init__(self, *, max_depth: Optional[int] = None) -> None:
        self._ring = _v.FrameAggregator(max_depth)
        self.atlas_frame: Any = None

    @property
    def max_depth(self) -> Optional[int]:
        return self._ring.max_depth

    def set_max_depth(self, max_depth: Optional[int]) -> None:
        self._ring.max_depth = max_depth

    def with_max_depth(self, max_depth: Optional[int]) -> "ZSpaceStreamFrameAggregator":
        self.set_max_depth(max_depth)
        return self

    def __len__(self) -> int:
        return self._ring.depth

    def len(self) -> int:
        return self._ring.depth

    def is_empty(self) -> bool:
        return self._ring.depth == 0

    @property
    def frames_seen(self) -> int:
        """Frames extended since construction."""
        return self._ring.frames_seen

    @property
    def slice_shape(self) -> Optional[tuple]:
        s = self._ring.slice_shape
        return None if s is None else tuple(s)

    def extend(self, frame: Any, timestamp: Optional[float] = None) -> None:
        """Appends a frame's slices (a ``ZSpaceStreamFrame``, a volume or a slice). ``timestamp``
        defaults to the frame's, else to the number of frames seen so far."""
        if not isinstance(frame, ZSpaceStreamFrame):
            frame = ZSpaceStreamFrame(frame)
        ts = timestamp if timestamp is not None else frame.timestamp
        self._ring.extend(frame.volume, float(self._ring.frames_seen if ts is None else ts), frame.chrono_snapshot)
        if frame.atlas_frame is not None:
            self.atlas_frame = frame.atlas_frame

    def clear(self) -> None:
        self._ring.clear()
        self.atlas_frame = None

    def prune_oldest(self, keep: int) -> None:
        self._ring.prune_oldest(keep)

    @property
    def chrono_snapshot(self) -> Optional[ChronoSnapshot]:
        return self._ring.chrono()

    def volume(self) -> Tensor:
        """The held slices as one (depth, H, W) float32 tensor (a copy)."""
        return self._ring.volume()

    def as_frame(self) -> Optional[ZSpaceStreamFrame]:
        if self.is_empty():
            return None
        return ZSpaceStreamFrame(self._ring.volume(), atlas_frame=self.atlas_frame, chrono_snapshot=self._ring.chrono())

    def drain_frame(self) -> Optional[ZSpaceStreamFrame]:
        """``as_frame()``, then clear (max_depth is kept)."""
        frame = self.as_frame()
        self.clear()
        return frame

    def to_streamed_volume(self) -> Optional[StreamedVolume]:
        frame = self.as_frame()
        return None if frame is None else StreamedVolume.from_frame(frame)

    def profile(self) -> Optional[Dict[str, Any]]:
        return None if self.is_empty() else _v.slice_profile(self._ring.volume())

    def telemetry_report(self) -> Optional[Dict[str, Any]]:
        p = self.profile()
        return None if p is None else _report(p)


class SpiralTorchVision:
    """A (depth, height, width) volume kept as an EMA of the payloads it is given
    (``accumulate``, alpha * weight per update), projected over depth with a window
    (hann, hamming, blackman, gaussian or none), and the energy history of the last
    ``temporal`` updates. Backed by ``_core.vision.VisionVolume``."""

    def __init__(self, depth: int, height: int, width: int, *, alpha: float = 0.2, window: Optional[str] = "hann",
                 temporal: int = 4) -> None:
        self._native = _v.VisionVolume(depth, height, width, alpha, window or "none", temporal)

    depth = property(lambda self: self._native.depth)
    height = property(lambda self: self._native.height)
    width = property(lambda self: self._native.width)
    alpha = property(lambda self: self._native.alpha)
    window = property(lambda self: self._native.window)
    temporal = property(lambda self: self._native.temporal)
    updates = property(lambda self: self._native.updates)

    @property
    def volume(self) -> Tensor:
        return self._native.volume

    def accumulate(self, payload: Any, weight: float = 1.0) -> float:
        """EMA update with a volume, frame or streamed volume; returns the mean |voxel change|."""
        return self._native.accumulate(_payload_volume(payload), float(weight))

    def project(self, *, normalise: bool = True) -> Tensor:
        """Window-weighted sum of the slices, (height, width); normalised by the max |value|."""
        return self._native.project(normalise=normalise)

    def snapshot(self) -> Dict[str, Any]:
        """``{volume, profile, energy (sum of squares), temporal (energy history), updates}``."""
        return {"volume": self._native.volume, "profile": _v.slice_profile(self._native.volume),
                "energy": self._native.energy(), "temporal": self._native.energy_history(),
                "updates": self._native.updates}

    def state_dict(self) -> Dict[str, Any]:
        return {"volume": self._native.volume, "updates": self._native.updates}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        self._native.load(state["volume"], int(state["updates"]))

    def reset(self) -> None:
        self._native.reset()


def _payload_volume(payload: Any) -> Tensor:
    if isinstance(payload, (ZSpaceStreamFrame, StreamedVolume)):
        return payload.volume
    return _volume_of(payload, "SpiralTorchVision.accumulate")


def vision_online_step(vision: SpiralTorchVision, payload: Any, *, aggregator: Optional[ZSpaceStreamFrameAggregator] = None,
                       trainer: Any = None, weight: float = 1.0,
                       metrics_builder: Optional[Callable[[SpiralTorchVision, Dict[str, Any]], Dict[str, Any]]] = None,
                       step_index: Optional[int] = None) -> Dict[str, Any]:
    """One online step: with an ``aggregator`` the payload is extended into it and the aggregated
    slices become the payload; it is accumulated into ``vision`` and, with a ``trainer``
    (``ZSpaceTrainer``), the trainer steps on metrics of the volume: ``metrics_builder(vision,
    step)`` when given, else the C++ defaults (a documented heuristic, see
    ``_core.vision.online_step``). Returns ``{applied, frame_index, energy, change, loss, metrics,
    z_state, chrono}``."""
    chrono = None
    if aggregator is not None:
        aggregator.extend(payload)
        volume = aggregator.volume()
        chrono = aggregator.chrono_snapshot
    else:
        volume = _payload_volume(payload)
        chrono = getattr(payload, "chrono_snapshot", None)
    if metrics_builder is None:
        step = _v.online_step(vision._native, volume, float(weight), trainer)
    else:
        step = _v.online_step(vision._native, volume, float(weight), None)
        metrics = metrics_builder(vision, step)
        step["metrics"] = metrics
        if trainer is not None:
            step["loss"] = trainer.step(metrics)
            step["z_state"] = list(trainer.state)
    step.update({"applied": True, "frame_index": step_index if step_index is not None else vision.updates - 1,
                 "chrono": chrono.to_dict() if chrono is not None else None})
    return step


def stream_vision_training(vision: SpiralTorchVision, frames: Iterable[Any], *,
                           aggregator: Optional[ZSpaceStreamFrameAggregator] = None, trainer: Any = None,
                           weight: float = 1.0, flush_every: int = 1, keep_depth: Optional[int] = None,
                           metrics_builder: Optional[Callable[..., Dict[str, Any]]] = None,
                           on_step: Optional[Callable[[Dict[str, Any]], None]] = None, final_flush: bool = True,
                           dt: float = 1.0) -> List[Dict[str, Any]]:
    """Runs a frame stream into ``vision`` (and ``trainer``): every frame is extended into the
    aggregator (default ``ZSpaceStreamFrameAggregator(max_depth=vision.depth)``: a ring of the
    newest slices, so memory stays bounded), optionally pruned to ``keep_depth`` slices, and every
    ``flush_every`` frames one online step runs on the aggregated slices (the ring is not drained).
    A final partial flush runs when frames are pending and ``final_flush``. Frames without a
    timestamp are stamped ``index * dt``. Returns one record per update (``vision_online_step``'s
    keys plus ``update_index`` and ``aggregated_frames``, the frames since the previous update)."""
    if not isinstance(flush_every, int) or flush_every <= 0:
        raise _core.SpiralValueError(f"stream_vision_training: flush_every must be a positive int, got {flush_every!r}")
    if keep_depth is not None and (not isinstance(keep_depth, int) or keep_depth <= 0):
        raise _core.SpiralValueError(f"stream_vision_training: keep_depth must be a positive int, got {keep_depth!r}")
    agg = aggregator if aggregator is not None else ZSpaceStreamFrameAggregator(max_depth=vision.depth)
    records: List[Dict[str, Any]] = []
    pending = 0

    def flush(index: int) -> None:
        nonlocal pending
        volume = agg.volume()
        if volume.shape[0] > vision.depth:  # an unbounded or deeper ring: the newest slices
            volume = volume[volume.shape[0] - vision.depth:]
        frame = ZSpaceStreamFrame(volume, chrono_snapshot=agg.chrono_snapshot)
        rec = vision_online_step(vision, frame, trainer=trainer, weight=weight, metrics_builder=metrics_builder,
                                 step_index=index)
        rec["update_index"] = len(records)
        rec["aggregated_frames"] = pending
        pending = 0
        records.append(rec)
        if on_step is not None:
            on_step(rec)

    index = -1
    for index, frame in enumerate(frames):
        if not isinstance(frame, ZSpaceStreamFrame):
            frame = ZSpaceStreamFrame(frame)
        agg.extend(frame, frame.timestamp if frame.timestamp is not None else index * dt)
        if keep_depth is not None:
            agg.prune_oldest(keep_depth)
        pending += 1
        if pending >= flush_every:
            flush(index)
    if final_flush and pending:
        flush(index)
    return records


def moving_digit_stream(images: Tensor, steps: int, *, canvas: int = 40, seed: int = 0, dt: float = 0.05,
                        switch_every: int = 0) -> List[ZSpaceStreamFrame]:
    """A stream of ``steps`` frames (1, canvas, canvas): an image from ``images`` (N, 28, 28) or
    (N, 1, 28, 28) moving with constant velocity and bouncing off the borders, timestamped
    ``k * dt``. ``switch_every`` > 0 swaps in the next image every that many frames."""
    import numpy as np

    imgs = images.reshape(images.shape[0], images.shape[-2], images.shape[-1]).float().numpy()
    h, w = imgs.shape[1:]
    if canvas < max(h, w):
        raise _core.SpiralValueError(f"moving_digit_stream: canvas {canvas} is smaller than the images ({h}, {w})")
    rng = np.random.default_rng(seed)
    y, x = rng.integers(0, canvas - h + 1), rng.integers(0, canvas - w + 1)
    vy, vx = rng.choice([-2, -1, 1, 2]), rng.choice([-2, -1, 1, 2])
    which = int(rng.integers(0, imgs.shape[0]))
    frames = []
    for k in range(steps):
        if switch_every and k and k % switch_every == 0:
            which = (which + 1) % imgs.shape[0]
        board = np.zeros((1, canvas, canvas), dtype=np.float32)
        board[0, y:y + h, x:x + w] = imgs[which]
        frames.append(ZSpaceStreamFrame(_core.from_numpy(board).clone(), timestamp=k * dt))
        if not 0 <= y + vy <= canvas - h:
            vy = -vy
        if not 0 <= x + vx <= canvas - w:
            vx = -vx
        y, x = y + vy, x + vx
    return frames
