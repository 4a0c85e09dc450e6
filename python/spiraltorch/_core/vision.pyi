"""Vision streams: chrono summaries, slice profiles, frame rings."""

from collections.abc import Sequence
from typing import Any

import spiraltorch._core
import spiraltorch._core.zspace


class ChronoSnapshot:
    """
    A chrono summary of a frame stream (timestamps float64) and its mean frame interval dt.
    """

    def __init__(self, summary: dict[str, float] | Any, *, dt: float = 0.0) -> None:
        """
        From a dict (or object) with the summary keys; missing keys are 0, a negative or non-finite dt is 0.
        """

    @staticmethod
    def from_values(*, frames: int, duration: float, latest_timestamp: float, mean_drift: float = 0.0, mean_abs_drift: float = 0.0, drift_std: float = 0.0, mean_energy: float = 0.0, energy_std: float = 0.0, mean_decay: float = 0.0, min_energy: float = 0.0, max_energy: float = 0.0, dt: float = 0.0) -> ChronoSnapshot:
        """
        A snapshot from the summary fields given one by one (a negative or non-finite dt becomes 0).
        """

    @staticmethod
    def from_stream(timestamps: Sequence[float], energies: Sequence[float]) -> ChronoSnapshot:
        """
        The summary of frames with these timestamps (non-decreasing) and energies (mean of squares).
        """

    @property
    def timestamp(self) -> float:
        """summary['latest_timestamp'], or 0 when it is not finite."""

    @property
    def dt(self) -> float:
        """The mean frame interval (>= 0)."""

    @property
    def frames(self) -> int:
        """The number of frames summarised."""

    def summary(self) -> dict[str, float]:
        """
        {'frames', 'duration', 'latest_timestamp', 'mean_drift', 'mean_abs_drift', 'drift_std', 'mean_energy', 'energy_std', 'mean_decay', 'min_energy', 'max_energy'}.
        """

    def merge(self, other: ChronoSnapshot) -> ChronoSnapshot:
        """
        Both snapshots pooled as one stream (frame-weighted means, pooled stds).
        """

    def to_dict(self) -> dict[str, float | dict[str, float]]:
        """{'timestamp', 'dt', 'summary': summary()}."""

    def __repr__(self) -> str: ...

def slice_profile(volume: spiraltorch._core.Tensor) -> dict[str, Any]:
    """
    Per-slice means, stds and energies of a (depth, ...) volume and their aggregates (entropy in bits).
    """

class FrameAggregator:
    """The newest max_depth slices of a stream and their chrono summary."""

    def __init__(self, max_depth: int | None = None) -> None: ...

    @property
    def max_depth(self) -> int | None:
        """
        The most slices kept (None: unbounded); setting it trims the oldest. ValueError unless > 0.
        """

    @max_depth.setter
    def max_depth(self, arg: int | None, /) -> None: ...

    def extend(self, volume: spiraltorch._core.Tensor, timestamp: float, chrono: ChronoSnapshot | None = None) -> None:
        """
        Appends the slices of a (D, H, W) volume taken at timestamp (with the frame's own chrono snapshot when given), then drops the oldest beyond max_depth. ShapeError when the slice shape differs from the slices held.
        """

    def prune_oldest(self, keep: int) -> None:
        """Keeps the newest keep slices (0 clears)."""

    def clear(self) -> None:
        """Drops every slice (frames_seen is kept)."""

    @property
    def depth(self) -> int:
        """The number of slices held."""

    @property
    def frames_seen(self) -> int:
        """Frames passed to extend() so far."""

    @property
    def slice_shape(self) -> tuple[int, ...] | None:
        """(H, W) of the slices held, or None when empty."""

    def volume(self) -> spiraltorch._core.Tensor:
        """The held slices stacked (depth, H, W) float32; ValueError when empty."""

    def chrono(self) -> ChronoSnapshot | None:
        """
        The chrono snapshot of the frames whose slices are held (None when empty).
        """

class VisionVolume:
    """An EMA (depth, height, width) volume with window-weighted projection."""

    def __init__(self, depth: int, height: int, width: int, alpha: float = 0.2, window: str = 'hann', temporal: int = 4) -> None: ...

    @property
    def depth(self) -> int:
        """Slices of the volume."""

    @property
    def height(self) -> int:
        """Rows of each slice."""

    @property
    def width(self) -> int:
        """Columns of each slice."""

    @property
    def alpha(self) -> float:
        """The EMA rate."""

    @property
    def window(self) -> str:
        """
        The slice window of project(): 'hann', 'hamming', 'blackman', 'gaussian' or 'none'.
        """

    @property
    def temporal(self) -> int:
        """How many past energies energy_history() keeps."""

    @property
    def updates(self) -> int:
        """The number of accumulate() updates so far (load() sets it)."""

    @property
    def volume(self) -> spiraltorch._core.Tensor:
        """A copy of the (depth, height, width) float32 volume."""

    def accumulate(self, volume: spiraltorch._core.Tensor, weight: float = 1.0) -> float:
        """
        EMA update v <- (1 - a) v + a x with a = alpha * weight (the first update copies x; x may be (k, height, width) with k <= depth, updating the newest k slices). Returns the mean absolute voxel change. ShapeError for another shape, ValueError for weight < 0 or a > 1.
        """

    def project(self, *, normalise: bool = True) -> spiraltorch._core.Tensor:
        """
        The window-weighted sum over slices, (height, width) float32; normalise divides by the max |value|.
        """

    def energy(self) -> float:
        """The sum of squares of the volume."""

    def energy_history(self) -> list[float]:
        """energy() after each of the last `temporal` updates, oldest first."""

    def window_weights(self) -> list[float]:
        """
        The per-slice weights of project() (floored at 1e-3; all 1 for 'none' or depth 1).
        """

    def reset(self) -> None:
        """Zeroes the volume, the update count and the energy history."""

    def load(self, volume: spiraltorch._core.Tensor, updates: int) -> None:
        """
        Restores a checkpoint: the (depth, height, width) volume and the update count.
        """

def online_step(vision: VisionVolume, payload: spiraltorch._core.Tensor, weight: float = 1.0, trainer: spiraltorch._core.zspace.ZSpaceTrainer | None = None) -> dict[str, Any]:
    """
    Accumulates payload into vision and, with a trainer, steps it on the default metrics (a heuristic: speed = mean |voxel change|, memory = mean slice energy, stability = mean slice std, drs = max |projection|, gradient = row means of the normalised projection pooled into z_dim bands, centred). Returns {energy, change, loss, metrics, z_state}.
    """
