"""Shared pieces of the Z-space stream recipes: the frame source and the JSON summary."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any, Dict, List, Tuple

import spiraltorch as st
from spiraltorch._atomic import atomic_write_text
from spiraltorch.data import find_fashion_mnist, load_fashion_mnist
from spiraltorch.vision import moving_digit_stream


def parser(doc: str, steps: int, flush_every: int, depth: int, seed: int, z_dim: int, lr: float) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=steps, help="frames in the stream")
    p.add_argument("--flush-every", type=int, default=flush_every, help="frames per online update")
    p.add_argument("--depth", type=int, default=depth, help="slices (frames) the vision volume spans")
    p.add_argument("--canvas", type=int, default=36, help="frame side in pixels (>= 28)")
    p.add_argument("--switch-every", type=int, default=4, help="swap in the next image every N frames (0: never)")
    p.add_argument("--dt", type=float, default=0.05, help="seconds between frames")
    p.add_argument("--seed", type=int, default=seed)
    p.add_argument("--z-dim", type=int, default=z_dim)
    p.add_argument("--lr", type=float, default=lr)
    p.add_argument("--lam-frac", type=float, default=0.08)
    p.add_argument("--output", help="also write the summary with the per-update trace to this JSON file")
    return p


def frames(args: argparse.Namespace) -> Tuple[str, List[Any]]:
    """(source, frames): a moving Fashion-MNIST image when the dataset is installed, else a moving
    bright square (so the recipe still runs; the summary names the source)."""
    if find_fashion_mnist():
        images, _ = load_fashion_mnist(split="test")
        start = args.seed % (images.shape[0] - 16)
        pick = images[start:start + 16]
        return "fashion-mnist", moving_digit_stream(pick, args.steps, canvas=args.canvas, seed=args.seed, dt=args.dt,
                                                    switch_every=args.switch_every)
    square = st.zeros(1, 28, 28)
    square[0, 8:20, 8:20] = 1.0
    return "synthetic-square", moving_digit_stream(square, args.steps, canvas=args.canvas, seed=args.seed, dt=args.dt)


def summary(recipe: str, source: str, args: argparse.Namespace, records: List[Dict[str, Any]],
            vision: Any, trainer: Any, extra: Dict[str, Any]) -> Dict[str, Any]:
    losses = [r["loss"] for r in records if r["loss"] is not None]
    out = {"recipe": recipe, "source": source, "steps": args.steps, "updates": len(records),
           "flush_every": args.flush_every, "final_loss": losses[-1] if losses else None,
           "mean_loss": sum(losses) / len(losses) if losses else None,
           "final_energy": vision.snapshot()["energy"], "z_state": list(trainer.state),
           "chrono": records[-1]["chrono"] if records else None}
    out.update(extra)
    finite = all(math.isfinite(v) for v in losses + out["z_state"] + [out["final_energy"]])
    out["finite"] = finite
    return out


def emit(out: Dict[str, Any], records: List[Dict[str, Any]], path: str | None) -> None:
    print(json.dumps(out, indent=2))
    if path:
        trace = [{k: r[k] for k in ("update_index", "aggregated_frames", "energy", "change", "loss")} for r in records]
        atomic_write_text(path, json.dumps(dict(out, updates_trace=trace), indent=2))
