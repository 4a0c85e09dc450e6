"""CanvasProjector: pixels through the documented colormaps, PPM/PNG bytes that parse back to the
surface, the row-wise power spectrum against numpy.fft, the loopback patch and the Atlas frame."""

from __future__ import annotations

import math
import struct
import zlib

import numpy as np
import pytest

import spiraltorch as st


def decode_png(data: bytes) -> np.ndarray:
    """A minimal reader for the PNGs we write (8-bit RGBA, filter 0): checks every chunk CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, size = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert crc == zlib.crc32(kind + body), kind
        if kind == b"IHDR":
            w, h, depth, colour, comp, filt, interlace = struct.unpack(">IIBBBBB", body)
            assert (depth, colour, comp, filt, interlace) == (8, 6, 0, 0, 0)
            size = (h, w)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert kind == b"IEND" and size is not None
    raw = zlib.decompress(idat)
    h, w = size
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(h, 1 + 4 * w)
    assert (rows[:, 0] == 0).all()
    return rows[:, 1:].reshape(h, w, 4)


def test_heat_colormap_pixels_and_surface_form():
    p = st.CanvasProjector(1, 3)
    s = p.render(st.tensor([[0.0, 0.5, 1.0]]))
    assert tuple(s.shape) == (1, 3, 4) and s.dtype == st.uint8
    assert s.numpy().tolist() == [[[0, 0, 0, 255], [255, 128, 0, 255], [255, 255, 255, 255]]]
    assert p.has_surface and p.colormap == "heat" and p.normalization == "minmax"
    assert p.height == 1 and p.width == 3
    assert "CanvasProjector(height=1" in repr(p)


def test_grayscale_diverging_and_nonfinite_pixels():
    g = st.CanvasProjector(1, 4, colormap="grayscale")
    px = g.render(np.array([[-4.0, -2.0, 0.0, np.nan]])).numpy()
    assert px[0, :, 0].tolist() == [0, 128, 255, 0] and px[0, :, 3].tolist() == [255, 255, 255, 0]
    d = st.CanvasProjector(1, 3, colormap="diverging", normalization="symmetric")
    assert d.render([[-2.0, 0.0, 1.0]]).numpy()[0].tolist() == [[0, 0, 255, 255], [255, 255, 255, 255],
                                                               [255, 128, 128, 255]]
    assert math.isnan(g.intensity().numpy()[0, 3])


def test_refused_inputs_change_nothing():
    p = st.CanvasProjector(4, 4)
    with pytest.raises(ValueError, match="nothing rendered yet"):
        p.surface()
    p.render_radial()
    before = p.surface().numpy().copy()
    with pytest.raises(st.ShapeError, match="CanvasProjector.render"):
        p.render(st.zeros(3))
    assert (p.surface().numpy() == before).all()
    with pytest.raises(ValueError, match="unknown colormap 'viridis'"):
        st.CanvasProjector(4, 4, colormap="viridis")
    with pytest.raises(ValueError, match="height must be in"):
        st.CanvasProjector(0, 4)


@pytest.mark.parametrize("shape", [(5, 12), (4, 16), (3, 7)])
def test_fft_power_spectrum_matches_numpy(shape):
    rng = np.random.default_rng(0)
    field = rng.standard_normal(shape)
    p = st.CanvasProjector(*shape)
    p.render(field)
    want = np.abs(np.fft.rfft(field, axis=1)) ** 2
    got = p.fft_power_spectrum().numpy()
    assert got.shape == want.shape == (shape[0], shape[1] // 2 + 1)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(p.field().numpy(), field)


def test_radial_field_and_metrics_change_with_the_input():
    f = st.canvas.radial_energy_field(16, 16, frequency=2.0, decay=1.0).numpy()
    r = np.hypot(np.arange(16)[:, None] + 0.5 - 8, np.arange(16)[None, :] + 0.5 - 8) / 8
    np.testing.assert_allclose(f, np.exp(-r * r) * 0.5 * (1 + np.cos(2 * np.pi * 2.0 * r)), rtol=1e-12)
    p = st.CanvasProjector(16, 16)
    p.render_radial(frequency=1.0)
    low = p.metrics()
    p.render_radial(frequency=5.0)
    high = p.metrics()
    assert set(low) == {"canvas.mean_intensity", "canvas.intensity_std", "canvas.energy", "canvas.field_min",
                        "canvas.field_max", "canvas.finite_fraction", "canvas.spectral_power",
                        "canvas.spectral_centroid", "canvas.dc_fraction"}
    assert all(math.isfinite(v) for v in [*low.values(), *high.values()])
    assert high["canvas.spectral_centroid"] > low["canvas.spectral_centroid"]


def test_trajectory_rendering_puts_the_path_on_the_canvas():
    pts = st.tensor([[-0.5, 0.5, 0.1], [0.0, 0.0, 0.2], [0.5, -0.5, 0.3]])
    field = st.canvas.trajectory_field(pts, 9, 9, sigma=1.0).numpy()
    assert np.unravel_index(field.argmax(), field.shape) == (6, 6)
    p = st.CanvasProjector(9, 9)
    s = p.render_trajectory(pts, sigma=1.0).numpy()
    assert (s[6, 6, :3] == 255).all()  # the brightest (last) point is white in the heat map


def test_loopback_patch_is_a_zero_mean_wave_towards_the_bright_block():
    field = np.zeros((4, 6))
    field[:2, :3] = 1.0
    p = st.CanvasProjector(4, 6)
    p.render(field)
    patch = p.loopback_patch(2, 2, gain=2.0).numpy()
    np.testing.assert_allclose(patch, 2.0 * (np.array([[1.0, 0.0], [0.0, 0.0]]) - 0.25))
    with pytest.raises(ValueError, match="rows and cols must be in"):
        p.loopback_patch(5, 1)


def test_ppm_and_png_files_parse_back_to_the_surface(tmp_path):
    p = st.CanvasProjector(6, 10, colormap="heat")
    p.render_radial()
    surface = p.surface().numpy()
    p.write_ppm(tmp_path / "c.ppm")
    p.write_png(tmp_path / "c.png")
    data = (tmp_path / "c.ppm").read_bytes()
    header = b"P6\n10 6\n255\n"
    assert data.startswith(header)
    rgb = np.frombuffer(data[len(header):], dtype=np.uint8).reshape(6, 10, 3)
    np.testing.assert_array_equal(rgb, surface[:, :, :3])  # all alpha 255 here
    np.testing.assert_array_equal(decode_png((tmp_path / "c.png").read_bytes()), surface)
    assert st.canvas.encode_png(p.surface()) == (tmp_path / "c.png").read_bytes()
    assert st.canvas.encode_ppm(p.surface()) == data
    assert isinstance(st.canvas.png_uses_zlib(), bool)
    # Module-level writers take any surface; a bad one leaves the old file alone.
    st.canvas.write_png(tmp_path / "d.png", p.surface())
    st.canvas.write_ppm(tmp_path / "d.ppm", p.surface())
    with pytest.raises(st.ShapeError):
        st.canvas.write_png(tmp_path / "d.png", st.zeros(2, 2, 3, dtype=st.uint8))
    np.testing.assert_array_equal(decode_png((tmp_path / "d.png").read_bytes()), surface)
    assert sorted(f.name for f in tmp_path.iterdir()) == ["c.png", "c.ppm", "d.png", "d.ppm"]


def test_emit_atlas_frame_pushes_canvas_metrics_into_a_route():
    route = st.telemetry.AtlasRoute()
    p = st.CanvasProjector(8, 8)
    for i, freq in enumerate([1.0, 2.0, 3.0]):
        p.render_radial(frequency=freq)
        frame = p.emit_atlas_frame(route, timestamp=float(i), bound=2)
        assert isinstance(frame, st.telemetry.AtlasFrame)
        assert frame.metric_value("canvas.energy") == pytest.approx(p.metrics()["canvas.energy"])
    assert len(route) == 2 and route.latest_timestamp == 2.0
    assert route.summary()["districts"][0]["name"] == "Surface"
    assert "canvas 8x8 heat" in frame.notes()
    with pytest.raises(ValueError, match="timestamp must be finite and >= 0"):
        p.emit_atlas_frame(route, timestamp=-1.0)
    assert len(route) == 2
    assert p.emit_atlas_frame(None).timestamp > 1.6e9  # default timestamp: now


def test_loopback_patch_closes_the_loop_with_a_weights_session():
    session = st.AmegagradSession((1, 4), weights=st.tensor([[0.4, -0.4, 0.1, -0.1]], dtype=st.float64))
    p = st.CanvasProjector(4, 8, colormap="diverging", normalization="symmetric")
    p.render(session.weights)
    patch = p.loopback_patch(1, 4)
    before = session.weights.numpy().copy()
    session.step_wave(patch)
    moved = session.weights.numpy() - before
    # The patch acts as a gradient: the brightest weight goes down, the darkest up.
    assert moved[0, 0] < 0 < moved[0, 1]
