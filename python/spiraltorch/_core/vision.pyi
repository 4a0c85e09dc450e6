"""Vision streams: chrono summaries, slice profiles, frame rings."""

from collections.abc import Sequence

import spiraltorch._core
import spiraltorch._core.zspace


class ChronoSnapshot:
    """
    A chrono summary of a frame stream (timestamps float64) and its mean frame interval dt.
    """

    def __init__(self, summary: object, *, dt: float = 0.0) -> None:
        """
        From a dict (or object) with the summary keys; missing keys are 0, a negative or non-finite dt is 0.
        """

    @staticmethod
    def from_values(*, frames: int, duration: float, latest_timestamp: float, mean_drift: float = 0.0, mean_abs_drift: float = 0.0, drift_std: float = 0.0, mean_energy: float = 0.0, energy_std: float = 0.0, mean_decay: float = 0.0, min_energy: float = 0.0, max_energy: float = 0.0, dt: float = 0.0) -> ChronoSnapshot: ...

    @staticmethod
    def from_stream(timestamps: Sequence[float], energies: Sequence[float]) -> ChronoSnapshot:
        """
        The summary of frames with these timestamps (non-decreasing) and energies (mean of squares).
        """

    @property
    def timestamp(self) -> float: ...

    @property
    def dt(self) -> float: ...

    @property
    def frames(self) -> int: ...

    def summary(self) -> dict: ...

    def merge(self, other: ChronoSnapshot) -> ChronoSnapshot:
        """
        Both snapshots pooled as one stream (frame-weighted means, pooled stds).
        """

    def to_dict(self) -> dict: ...

    def __repr__(self) -> str: ...

def slice_profile(volume: spiraltorch._core.Tensor) -> dict:
    """
    Per-slice means, stds and energies of a (depth, ...) volume and their aggregates (entropy in bits).
    """

class FrameAggregator:
    """The newest max_depth slices of a stream and their chrono summary."""

    def __init__(self, max_depth: int | None = None) -> None: ...

    @property
    def max_depth(self) -> int | None: ...

    @max_depth.setter
    def max_depth(self, arg: int | None, /) -> None: ...

    def extend(self, volume: spiraltorch._core.Tensor, timestamp: float, chrono: ChronoSnapshot | None = None) -> None: ...

    def prune_oldest(self, keep: int) -> None: ...

    def clear(self) -> None: ...

    @property
    def depth(self) -> int: ...

    @property
    def frames_seen(self) -> int: ...

    @property
    def slice_shape(self) -> object: ...

    def volume(self) -> spiraltorch._core.Tensor: ...

    def chrono(self) -> ChronoSnapshot | None: ...

class VisionVolume:
    """An EMA (depth, height, width) volume with window-weighted projection."""

    def __init__(self, depth: int, height: int, width: int, alpha: float = 0.2, window: str = 'hann', temporal: int = 4) -> None: ...

    @property
    def depth(self) -> int: ...

    @property
    def height(self) -> int: ...

    @property
    def width(self) -> int: ...

    @property
    def alpha(self) -> float: ...

    @property
    def window(self) -> str: ...

    @property
    def temporal(self) -> int: ...

    @property
    def updates(self) -> int: ...

    @property
    def volume(self) -> spiraltorch._core.Tensor: ...

    def accumulate(self, volume: spiraltorch._core.Tensor, weight: float = 1.0) -> float:
        """EMA update; returns the mean absolute voxel change."""

    def project(self, *, normalise: bool = True) -> spiraltorch._core.Tensor: ...

    def energy(self) -> float: ...

    def energy_history(self) -> list[float]: ...

    def window_weights(self) -> list[float]: ...

    def reset(self) -> None: ...

    def load(self, volume: spiraltorch._core.Tensor, updates: int) -> None: ...

def online_step(vision: VisionVolume, payload: spiraltorch._core.Tensor, weight: float = 1.0, trainer: spiraltorch._core.zspace.ZSpaceTrainer | None = None) -> dict:
    """
    Accumulates payload into vision and, with a trainer, steps it on the default metrics (a heuristic: speed = mean |voxel change|, memory = mean slice energy, stability = mean slice std, drs = max |projection|, gradient = row means of the normalised projection pooled into z_dim bands, centred). Returns {energy, change, loss, metrics, z_state}.
    """
