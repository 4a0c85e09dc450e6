"""Online Z-space training from a vision stream: a Fashion-MNIST image moving across a canvas is
streamed frame by frame into SpiralTorchVision (an EMA volume spanning the last --depth frames)
and a ZSpaceTrainer, one online update every --flush-every frames (stream_vision_training; the
per-frame work runs in C++). Prints a JSON summary: updates, final/mean loss, final energy, z.

Run: spiral-model-zoo run zspace_stream_online_vision -- --steps 16 --flush-every 2
"""

from __future__ import annotations

import spiraltorch as st
from spiraltorch.vision import SpiralTorchVision, stream_vision_training
from spiraltorch.utils.progress import track
from spiraltorch.zoo import _stream


def main() -> None:
    """Runs the recipe from the command line (``spiral-model-zoo run zspace_stream_online_vision -- --help`` lists its options;
    the module docstring says what it trains and prints)."""
    args = _stream.parser(__doc__, steps=32, flush_every=2, depth=4, seed=2026, z_dim=8, lr=5e-3).parse_args()
    source, frames = _stream.frames(args)
    vision = SpiralTorchVision(args.depth, args.canvas, args.canvas, alpha=0.35, temporal=6)
    trainer = st.ZSpaceTrainer(z_dim=args.z_dim, lr=args.lr, lam_frac=args.lam_frac)
    records = stream_vision_training(vision, track(frames, desc="stream", unit="frames"), trainer=trainer,
                                     flush_every=args.flush_every, final_flush=True)
    out = _stream.summary("zspace_stream_online_vision", source, args, records, vision, trainer, {})
    _stream.emit(out, records, args.output)


if __name__ == "__main__":
    main()
