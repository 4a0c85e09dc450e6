"""Streaming Z-space trainer quickstart: Fashion-MNIST images move across a canvas; their frames
stream through a bounded ZSpaceStreamFrameAggregator ring into SpiralTorchVision (an EMA volume
over the last 4 frames) and a ZSpaceTrainer, one online update every 2 frames. The per-frame
work (ring, chrono summary, EMA, online step) runs in C++.

python examples/zspace_stream_training_quickstart.py [--steps 24] [--flush-every 2]
"""

from __future__ import annotations

import argparse
import math

import spiraltorch as st
from spiraltorch.vision import (SpiralTorchVision, ZSpaceStreamFrameAggregator, moving_digit_stream,
                                stream_vision_training)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=24)
    p.add_argument("--flush-every", type=int, default=2)
    p.add_argument("--image", type=int, default=0, help="index of the Fashion-MNIST test image")
    args = p.parse_args()

    images, labels = st.data.load_fashion_mnist(split="test")
    pick = images[args.image:args.image + 4]
    names = [st.data.FASHION_CLASSES[int(v)] for v in labels[args.image:args.image + 4].tolist()]
    print(f"images {args.image}..{args.image + 3}: {', '.join(names)} (the next one every 4 frames)")
    frames = moving_digit_stream(pick, args.steps, canvas=36, seed=args.image, dt=0.05, switch_every=4)

    vision = SpiralTorchVision(4, 36, 36, alpha=0.35, temporal=6)
    ring = ZSpaceStreamFrameAggregator(max_depth=4)
    trainer = st.ZSpaceTrainer(z_dim=6, lr=5e-3, lam_frac=0.08)

    def show(rec: dict) -> None:
        c = rec["chrono"]["summary"]
        print(f"update {rec['update_index']:2d} frames {rec['aggregated_frames']} t={c['latest_timestamp']:.2f}s "
              f"energy {rec['energy']:8.3f} change {rec['change']:.4f} mean-drift {c['mean_drift']:+.4f}/s "
              f"loss {rec['loss']:.5f}")

    records = stream_vision_training(vision, frames, aggregator=ring, trainer=trainer, flush_every=args.flush_every,
                                     on_step=show)
    losses = [r["loss"] for r in records]
    z = list(trainer.state)
    print(f"updates {len(records)}, ring holds {len(ring)} slices of {ring.frames_seen} frames")
    print(f"loss first {losses[0]:.5f} last {losses[-1]:.5f} mean {sum(losses) / len(losses):.5f}")
    print("z =", [round(v, 4) for v in z])
    print("finite:", all(math.isfinite(v) for v in losses + z))


if __name__ == "__main__":
    main()
