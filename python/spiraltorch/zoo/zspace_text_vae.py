"""ZSpaceTextVae on English text (Debian's ``fortunes``): each sentence-sized window of text
is wave-encoded into Z-space and reconstructed through a Gaussian latent; prints the
validation reconstruction error and ELBO terms next to the prior-only decoder baseline
(decoding z ~ N(0, I)), which a trained VAE must beat, and optionally Atlas frames.

Run: spiral-model-zoo run zspace_text_vae -- --epochs 5 --jsonl metrics.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any, Dict, List, Optional, Sequence

import spiraltorch as st
from spiraltorch import nn, optim
from spiraltorch.utils.progress import progress


def text_windows(data: bytes, window: int, limit: int) -> List[str]:
    """Up to ``limit`` consecutive, non-overlapping ``window``-character pieces of the text
    (line breaks become spaces)."""
    text = data.decode("utf-8", errors="replace").replace("\n", " ")
    return [text[i : i + window] for i in range(0, min(len(text) - window, window * limit), window)]


def main(argv: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """Runs the recipe with ``argv`` (default ``sys.argv[1:]``; ``--help`` lists the options) and
    returns the last epoch's metrics (training loss, validation reconstruction, KL and ELBO, the
    prior-only baseline, seconds)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--window", type=int, default=32, help="characters per example")
    parser.add_argument("--latent", type=int, default=16)
    parser.add_argument("--train-windows", type=int, default=4000)
    parser.add_argument("--valid-windows", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--kl-weight", type=float, default=1e-4)
    parser.add_argument("--optimizer", choices=("sgd", "adam", "rmsprop"), default="adam")
    parser.add_argument("--jsonl", default=None, help="append per-epoch metrics as JSON lines")
    parser.add_argument("--atlas", action="store_true", help="print an Atlas frame summary per epoch")
    args = parser.parse_args(argv)

    st.manual_seed(0)
    vae = nn.ZSpaceTextVae(args.window, args.latent, name="text_vae")
    train = vae.encode_texts(text_windows(st.datasets.fortunes_text("train"), args.window, args.train_windows))
    valid = vae.encode_texts(text_windows(st.datasets.fortunes_text("validation"), args.window, args.valid_windows))
    opt = {"sgd": lambda p: optim.SGD(p, lr=args.lr * 20, momentum=0.9),
           "adam": lambda p: optim.Adam(p, lr=args.lr),
           "rmsprop": lambda p: optim.RMSprop(p, lr=args.lr)}[args.optimizer](vae.parameters())
    route = st.telemetry.AtlasRoute()
    out = open(args.jsonl, "a") if args.jsonl else None
    print(f"{train.shape[0]} training / {valid.shape[0]} validation windows of {args.window} characters "
          f"-> {vae.input_dim}-d wave encodings, latent {args.latent}, {args.optimizer}")
    result: Dict[str, Any] = {}
    for epoch in range(1, args.epochs + 1):
        began = time.perf_counter()
        order = st.argsort(st.rand(train.shape[0]))
        vae.train()
        with progress(train.shape[0], desc=f"epoch {epoch}/{args.epochs}", unit="windows") as bar:
            for b in range(0, train.shape[0], args.batch):
                loss, stats = vae.loss(train[order[b : b + args.batch]], kl_weight=args.kl_weight)
                opt.zero_grad()
                loss.backward()
                opt.step()
                bar.update(min(args.batch, train.shape[0] - b))
                bar.set_postfix(loss=stats["weighted_loss"])
        vae.eval()
        v = vae.evaluate(valid, kl_weight=args.kl_weight)
        prior = vae.prior_recon_loss(valid)
        result = {"epoch": epoch, "train_weighted_loss": stats["weighted_loss"], "valid_recon_loss": v["recon_loss"],
                  "valid_kl_loss": v["kl_loss"], "valid_elbo": v["evidence_lower_bound"],
                  "prior_recon_loss": prior, "seconds": time.perf_counter() - began}
        print(f"epoch {epoch}: validation reconstruction {v['recon_loss']:.3e} (prior-only decoder {prior:.3e}), "
              f"KL {v['kl_loss']:.3f}, ELBO {v['evidence_lower_bound']:.4f}")
        if args.atlas:
            frame = st.telemetry.AtlasFrame.from_metrics({f"vae.{k}": float(x) for k, x in result.items()})
            route.push_bounded(frame, 64)
            print(f"  atlas frame at {frame.timestamp:.0f}: {len(route)} frame(s) on the route")
        if out:
            out.write(json.dumps(result) + "\n")
    if out:
        out.close()
    return result


if __name__ == "__main__":
    main()
