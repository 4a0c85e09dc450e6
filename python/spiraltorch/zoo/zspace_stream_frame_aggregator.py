"""The Z-space stream loop through an explicit ZSpaceStreamFrameAggregator: a ring of the newest
--depth slices of a moving Fashion-MNIST stream (bounded memory), pruned to --keep-depth, flushed
into SpiralTorchVision and a ZSpaceTrainer every --flush-every frames. With --native-frames each
frame carries its own ChronoSnapshot (computed in C++ from its timestamp and energy) and the
aggregator pools those snapshots; otherwise it summarises the frames' timestamps itself.

Run: spiral-model-zoo run zspace_stream_frame_aggregator -- --steps 12 --native-frames
"""

from __future__ import annotations

import spiraltorch as st
from spiraltorch.vision import (ChronoSnapshot, SpiralTorchVision, ZSpaceStreamFrame, ZSpaceStreamFrameAggregator,
                                stream_vision_training)
from spiraltorch.utils.progress import track
from spiraltorch.zoo import _stream


def _with_snapshots(frames: list) -> list:
    """Each frame with its own one-frame ChronoSnapshot: its energy and the drift and decay rate
    since the previous frame. The aggregator pools these (frame-weighted means, pooled stds,
    summed durations), which reproduces the summary of the whole run of frames it holds."""
    out, prev = [], None
    for f in frames:
        e, t = f.profile()["average_energy"], f.timestamp
        dt = t - prev[1] if prev else 0.0
        drift = (e - prev[0]) / dt if prev and dt > 0 else 0.0
        decay = max(0.0, prev[0] - e) / (prev[0] * dt) if prev and dt > 0 and prev[0] > 0 else 0.0
        snap = ChronoSnapshot.from_values(frames=1, duration=dt, latest_timestamp=t, mean_drift=drift,
                                          mean_abs_drift=abs(drift), mean_energy=e, mean_decay=decay,
                                          min_energy=e, max_energy=e, dt=dt)
        out.append(ZSpaceStreamFrame(f.volume, timestamp=t, chrono_snapshot=snap))
        prev = (e, t)
    return out


def main() -> None:
    """Runs the recipe from the command line (``spiral-model-zoo run zspace_stream_frame_aggregator -- --help`` lists its options;
    the module docstring says what it trains and prints)."""
    p = _stream.parser(__doc__, steps=24, flush_every=3, depth=4, seed=77, z_dim=6, lr=3e-3)
    p.add_argument("--native-frames", action="store_true", help="frames carry their own ChronoSnapshot")
    p.add_argument("--keep-depth", type=int, default=None, help="prune the ring to this many slices per frame")
    args = p.parse_args()
    source, frames = _stream.frames(args)
    if args.native_frames:
        frames = _with_snapshots(frames)
    else:
        frames = [f.volume for f in frames]  # plain volumes: stamped index * dt by the loop
    aggregator = ZSpaceStreamFrameAggregator(max_depth=args.depth)
    vision = SpiralTorchVision(args.depth, args.canvas, args.canvas, alpha=0.35, temporal=6)
    trainer = st.ZSpaceTrainer(z_dim=args.z_dim, lr=args.lr, lam_frac=args.lam_frac)
    records = stream_vision_training(vision, track(frames, desc="stream", unit="frames"), aggregator=aggregator,
                                     trainer=trainer, flush_every=args.flush_every, keep_depth=args.keep_depth,
                                     dt=args.dt)
    extra = {"native_frames": args.native_frames, "aggregator_used": True, "aggregator_depth": len(aggregator),
             "frames_seen": aggregator.frames_seen, "last_stream_metadata": aggregator.telemetry_report()}
    out = _stream.summary("zspace_stream_frame_aggregator", source, args, records, vision, trainer, extra)
    _stream.emit(out, records, args.output)


if __name__ == "__main__":
    main()
