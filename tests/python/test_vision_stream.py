"""spiraltorch.vision streams: chrono snapshots, frames, the bounded aggregator ring, the EMA
vision volume, the online step and the stream loop; the quickstart and the stream recipes."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import vision as sv

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYPATH = os.path.dirname(os.path.dirname(os.path.abspath(st.__file__)))


def _fashion_or_skip():
    if st.data.find_fashion_mnist() is None:
        pytest.skip("Fashion-MNIST (Debian's dataset-fashion-mnist) is not installed")
    return st.data.load_fashion_mnist(split="test")


def test_chrono_snapshot_values_merge_and_dict():
    snap = sv.ChronoSnapshot.from_values(frames=2, duration=0.5, latest_timestamp=1e9 + 0.25, mean_energy=1.0,
                                         energy_std=0.0, min_energy=1.0, max_energy=1.0, dt=-3.0)
    assert snap.timestamp == 1e9 + 0.25  # float64: a float32 would round this to 1e9
    assert snap.dt == 0.0 and snap.frames == 2
    other = sv.ChronoSnapshot({"frames": 2, "mean_energy": 3.0, "latest_timestamp": 2.0}, dt=0.1)
    merged = snap.merge(other)
    s = merged.summary()
    assert s["frames"] == 4 and s["mean_energy"] == 2.0 and s["energy_std"] == 1.0  # pooled: between-group spread
    assert merged.to_dict()["timestamp"] == 1e9 + 0.25
    whole = sv.ChronoSnapshot.from_stream([0.0, 0.5, 1.0], [1.0, 2.0, 0.5]).summary()
    assert whole["duration"] == 1.0 and whole["mean_drift"] == pytest.approx((2.0 - 3.0) / 2)
    with pytest.raises(ValueError, match="before the previous one"):
        sv.ChronoSnapshot.from_stream([1.0, 0.0], [1.0, 1.0])


def test_frames_profiles_and_streamed_volume():
    frame = sv.ZSpaceStreamFrame([st.ones(3, 3), st.zeros(3, 3)], timestamp=0.5)
    assert frame.depth == 2 and frame.slice_shape == (3, 3) and frame.timestamp == 0.5
    prof = frame.profile()
    assert prof["energies"] == [1.0, 0.0] and prof["energy_entropy"] == 0.0
    assert frame.telemetry_report()["total_energy"] == 1.0
    assert frame.to_dict()["profile"]["depth"] == 2
    vol = frame.to_streamed_volume()
    assert sv.StreamedVolume.from_frame(frame).depth == vol.depth == 2
    vol.ingest_frame(sv.ZSpaceStreamFrame(st.full((2, 3, 3), 3.0)), alpha=0.5)
    np.testing.assert_allclose(vol.volume.numpy()[0], 2.0)
    assert vol.slices()[1].tolist()[0] == [1.5, 1.5, 1.5]
    assert vol.to_dict()["depth"] == 2
    with pytest.raises(ValueError, match="alpha must be in"):
        vol.ingest_frame(frame, alpha=1.5)
    with pytest.raises(st.ShapeError):
        sv.ZSpaceStreamFrame(st.zeros(2, 2, 2, 2))


def test_aggregator_ring_is_bounded_and_drains():
    agg = sv.ZSpaceStreamFrameAggregator(max_depth=3)
    for k in range(50):
        agg.extend(st.full((1, 4, 4), float(k)), timestamp=0.1 * k)
    assert len(agg) == 3 and agg.len() == 3 and not agg.is_empty() and agg.frames_seen == 50
    assert agg.slice_shape == (4, 4)
    np.testing.assert_array_equal(agg.volume().numpy()[:, 0, 0], [47.0, 48.0, 49.0])
    chrono = agg.chrono_snapshot.summary()
    assert chrono["frames"] == 3 and chrono["latest_timestamp"] == pytest.approx(4.9)
    assert agg.profile()["depth"] == 3 and agg.telemetry_report()["depth"] == 3
    assert agg.to_streamed_volume().depth == 3
    agg.with_max_depth(2)
    assert agg.max_depth == 2 and len(agg) == 2
    agg.prune_oldest(1)
    assert len(agg) == 1
    frame = agg.drain_frame()
    assert frame.depth == 1 and agg.is_empty() and agg.as_frame() is None and agg.profile() is None
    agg.set_max_depth(None)
    with pytest.raises(ValueError, match="max_depth must be positive"):
        sv.ZSpaceStreamFrameAggregator(max_depth=0)
    with pytest.raises(st.ShapeError, match="do not match"):
        agg.extend(st.zeros(1, 4, 4))
        agg.extend(st.zeros(1, 5, 5))
    agg.clear()
    assert agg.telemetry_report() is None


def test_vision_volume_online_step_and_state():
    vis = sv.SpiralTorchVision(2, 4, 4, alpha=0.5, window="hamming", temporal=3)
    assert (vis.depth, vis.height, vis.width, vis.alpha, vis.window, vis.temporal) == (2, 4, 4, 0.5, "hamming", 3)
    trainer = st.ZSpaceTrainer(z_dim=4)
    rec = sv.vision_online_step(vis, st.rand(2, 4, 4, generator=st.Generator().manual_seed(1)), trainer=trainer)
    assert rec["applied"] and math.isfinite(rec["loss"]) and len(rec["z_state"]) == 4
    assert set(rec["metrics"]) >= {"speed", "memory", "stability", "drs", "gradient"}
    proj = vis.project(normalise=True)
    assert float(np.abs(proj.numpy()).max()) == pytest.approx(1.0)
    snap = vis.snapshot()
    assert snap["updates"] == 1 and snap["energy"] > 0 and len(snap["temporal"]) == 1
    state = vis.state_dict()
    vis.accumulate(st.zeros(2, 4, 4))
    assert vis.updates == 2
    vis.load_state_dict(state)
    assert vis.updates == 1 and np.allclose(vis.volume.numpy(), state["volume"].numpy())
    custom = sv.vision_online_step(vis, st.ones(2, 4, 4), trainer=trainer,
                                   metrics_builder=lambda v, step: {"speed": step["change"], "memory": 0.1})
    assert custom["metrics"] == {"speed": custom["change"], "memory": 0.1} and math.isfinite(custom["loss"])
    vis.reset()
    assert vis.updates == 0
    with pytest.raises(st.ShapeError):
        vis.accumulate(st.zeros(3, 4, 4))


def test_stream_vision_training_flushes_every_n_frames():
    frames = [st.full((1, 4, 4), float(k)) for k in range(3)]
    vis = sv.SpiralTorchVision(2, 4, 4)
    records = sv.stream_vision_training(vis, frames, flush_every=2, trainer=st.ZSpaceTrainer(z_dim=3))
    assert [r["aggregated_frames"] for r in records] == [2, 1]
    assert [r["update_index"] for r in records] == [0, 1] and records[-1]["chrono"]["summary"]["frames"] == 2
    assert len(sv.stream_vision_training(sv.SpiralTorchVision(2, 4, 4), frames, flush_every=2, final_flush=False)) == 1
    seen = []
    sv.stream_vision_training(sv.SpiralTorchVision(2, 4, 4), frames, keep_depth=1, on_step=seen.append)
    assert len(seen) == 3
    with pytest.raises(ValueError, match="flush_every must be a positive int"):
        sv.stream_vision_training(vis, frames, flush_every=0)
    with pytest.raises(ValueError, match="keep_depth must be a positive int"):
        sv.stream_vision_training(vis, frames, keep_depth=0)


def test_moving_digit_stream_losses_depend_on_the_image():
    images, _ = _fashion_or_skip()
    finals = []
    for idx in (0, 1):
        frames = sv.moving_digit_stream(images[idx:idx + 1], 8, canvas=32, seed=3)
        assert len(frames) == 8 and frames[0].slice_shape == (32, 32) and frames[1].timestamp == pytest.approx(0.05)
        # The image is pasted whole: its pixel sum is preserved in every frame.
        assert float(frames[5].volume.sum().item()) == pytest.approx(float(images[idx].sum().item()), rel=1e-5)
        trainer = st.ZSpaceTrainer(z_dim=4)
        recs = sv.stream_vision_training(sv.SpiralTorchVision(4, 32, 32), frames, trainer=trainer, flush_every=2)
        finals.append((recs[-1]["loss"], tuple(trainer.state)))
    assert finals[0] != finals[1]


def _run(args, timeout=180):
    env = dict(os.environ, PYTHONPATH=PYPATH)
    proc = subprocess.run([sys.executable] + args, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_zspace_stream_training_quickstart_example_runs():
    _fashion_or_skip()
    outs = []
    for image in ("0", "7"):
        out = _run([os.path.join(ROOT, "examples", "zspace_stream_training_quickstart.py"), "--steps", "8",
                    "--image", image])
        assert "finite: True" in out and out.count("update ") == 4
        outs.append(out.split("loss first")[1].splitlines()[0])
    assert outs[0] != outs[1]  # the metrics follow the image streamed


@pytest.mark.parametrize("recipe,extra", [("zspace_stream_online_vision", []),
                                          ("zspace_stream_frame_aggregator", ["--native-frames"]),
                                          ("zspace_stream_frame_aggregator", [])])
def test_zspace_stream_recipes_run(recipe, extra, tmp_path):
    _fashion_or_skip()
    results = []
    for seed in ("1", "2"):
        path = tmp_path / f"{recipe}_{seed}.json"
        out = _run(["-m", "spiraltorch.model_zoo", "run", recipe, "--", "--steps", "8", "--flush-every", "2",
                    "--seed", seed, "--output", str(path)] + extra)
        summary = json.loads(out[out.index("{"):])
        assert summary["recipe"] == recipe and summary["updates"] == 4 and summary["finite"]
        assert summary["source"] == "fashion-mnist" and math.isfinite(summary["final_loss"])
        if recipe == "zspace_stream_frame_aggregator":
            assert summary["native_frames"] == bool(extra) and summary["aggregator_depth"] <= 4
        assert len(json.loads(path.read_text())["updates_trace"]) == 4
        results.append((summary["final_loss"], summary["z_state"]))
    assert results[0] != results[1]


def test_zspace_stream_focus_suggests_the_stream_recipes():
    ranked = [e.key for e in st.model_zoo.suggest_models(focus="zspace_stream", available_only=True, limit=2)]
    assert ranked == ["zspace_stream_online_vision", "zspace_stream_frame_aggregator"]
