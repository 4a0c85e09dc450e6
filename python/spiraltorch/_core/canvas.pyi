"""CanvasProjector: fields rendered into RGBA surfaces (PPM/PNG)."""

import os

import numpy.typing

import spiraltorch._core
import spiraltorch.telemetry


class CanvasProjector:
    """
    CanvasProjector(height=64, width=64, *, colormap='heat', normalization='minmax').

    Renders a real 2-D field into a (height, width, 4) uint8 RGBA surface: the field is resampled
    (nearest neighbour) to the canvas, normalised to t in [0, 1] ('minmax': (v - min) / (max - min);
    'symmetric': 1/2 + v / (2 max|v|)) and coloured by the colormap ('heat': r = clamp(3t),
    g = clamp(3t - 1), b = clamp(3t - 2); 'grayscale': r = g = b = t; 'diverging': blue -> white ->
    red with white at t = 1/2); channels are round(255 value), non-finite entries transparent black.
    The C++ class is st::canvas::CanvasProjector (include/spiraltorch/canvas/canvas_projector.h).
    """

    def __init__(self, height: int = 64, width: int = 64, *, colormap: str = 'heat', normalization: str = 'minmax') -> None: ...

    @property
    def height(self) -> int:
        """Canvas rows."""

    @property
    def width(self) -> int:
        """Canvas columns."""

    @property
    def colormap(self) -> str:
        """'heat', 'grayscale' or 'diverging'."""

    @property
    def normalization(self) -> str:
        """'minmax' or 'symmetric'."""

    @property
    def has_surface(self) -> bool:
        """True once something was rendered."""

    def render(self, field: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        Renders a 2-D field (Tensor, NumPy array or nested lists) and returns the (height, width, 4) uint8 surface; a refused field changes nothing.
        """

    def render_radial(self, frequency: float = 3.0, decay: float = 2.0) -> spiraltorch._core.Tensor:
        """
        Renders radial_energy_field(height, width, frequency, decay); returns the surface.
        """

    def render_trajectory(self, points: spiraltorch._core.Tensor | numpy.typing.ArrayLike, sigma: float = 1.5) -> spiraltorch._core.Tensor:
        """
        Renders trajectory_field(points, height, width, sigma) (an (N, D) Z-space trajectory); returns the surface.
        """

    def surface(self) -> spiraltorch._core.Tensor:
        """The last surface, a (height, width, 4) uint8 tensor (a copy)."""

    def field(self) -> spiraltorch._core.Tensor:
        """The last resampled field, (height, width) float64."""

    def intensity(self) -> spiraltorch._core.Tensor:
        """The normalised intensity t of the last render (NaN where not finite)."""

    def fft_power_spectrum(self) -> spiraltorch._core.Tensor:
        """
        |rfft(row)|^2 of the field per row: (height, width // 2 + 1) float64, equal to numpy.abs(numpy.fft.rfft(field, axis=1)) ** 2 (non-finite entries as 0).
        """

    def loopback_patch(self, rows: int, cols: int, gain: float = 1.0) -> spiraltorch._core.Tensor:
        """
        The intensity block-averaged onto a (rows, cols) grid, minus its mean, times gain (float64): a zero-mean wave a weights session absorbs (AmegagradSession.step_wave / accumulate_wave).
        """

    def metrics(self) -> dict[str, float]:
        """
        canvas.mean_intensity, intensity_std, energy, field_min, field_max, finite_fraction, spectral_power, spectral_centroid, dc_fraction of the last render (see the C++ header for the formulas).
        """

    def emit_atlas_frame(self, route: spiraltorch.telemetry.AtlasRoute | None, *, timestamp: float | None = None, bound: int = 0) -> spiraltorch.telemetry.AtlasFrame:
        """
        Builds a telemetry.AtlasFrame of metrics() at timestamp (seconds, default now; finite and >= 0), with a note naming the canvas, pushes it into route (a telemetry.AtlasRoute, keeping the last bound frames; 0 keeps all; None pushes nowhere) and returns it.
        """

    def write_ppm(self, path: str | os.PathLike) -> None:
        """
        Writes the surface as binary PPM (P6; colours composited over black), atomically.
        """

    def write_png(self, path: str | os.PathLike) -> None:
        """Writes the surface as an RGBA PNG, atomically."""

    def __repr__(self) -> str: ...

def radial_energy_field(height: int, width: int, frequency: float = 3.0, decay: float = 2.0) -> spiraltorch._core.Tensor:
    """
    exp(-decay r^2) (1 + cos(2 pi frequency r)) / 2 on a (height, width) grid, float64; r is the distance from the centre over half the shorter side.
    """

def trajectory_field(points: spiraltorch._core.Tensor | numpy.typing.ArrayLike, height: int, width: int, sigma: float = 1.5) -> spiraltorch._core.Tensor:
    """
    Gaussian splats (sigma pixels, weight (i + 1) / N) of the first two coordinates of an (N, D) trajectory, the square [-1, 1]^2 filling the (height, width) canvas, y up; float64.
    """

def encode_ppm(surface: spiraltorch._core.Tensor) -> bytes:
    """
    P6 bytes of a (height, width, 4) uint8 surface (colours composited over black).
    """

def encode_png(surface: spiraltorch._core.Tensor) -> bytes:
    """PNG bytes (RGBA, 8 bits) of a (height, width, 4) uint8 surface."""

def write_ppm(path: str | os.PathLike, surface: spiraltorch._core.Tensor) -> None:
    """
    Writes a (height, width, 4) uint8 surface to path as binary PPM (P6; colours composited over black), atomically (temporary file, then rename).
    """

def write_png(path: str | os.PathLike, surface: spiraltorch._core.Tensor) -> None:
    """
    Writes a (height, width, 4) uint8 surface to path as an RGBA PNG, atomically.
    """

def png_uses_zlib() -> bool:
    """
    True when PNGs are deflate-compressed with the system zlib (else stored blocks).
    """
