"""Poincare embeddings of WordNet's noun hierarchy (Nickel & Kiela 2017).

Builds the transitive closure of the hypernymy graph from Debian's wordnet-base (the mammal
subtree, 1,182 nodes, or every noun, 82,115 nodes), trains st.geometry.PoincareEmbedding and
prints the reconstruction mean rank and MAP (the authors' protocol).
Run: spiral-model-zoo run poincare_wordnet -- --subtree mammal --dim 10 --epochs 500
"""

from __future__ import annotations

import argparse
import time

import spiraltorch as st
from spiraltorch.datasets import wordnet_closure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subtree", default="mammal", help="'mammal', 'noun' or a synset name such as dog.n.01")
    parser.add_argument("--dim", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=500)
    parser.add_argument("--lr", type=float, default=0.3)
    parser.add_argument("--negatives", type=int, default=50)
    parser.add_argument("--burn-in", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=10)
    parser.add_argument("--curvature", type=float, default=-1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0, help="0: OpenMP's default")
    parser.add_argument("--no-instance-hypernyms", action="store_true")
    parser.add_argument("--print-every", type=int, default=0, help="epochs between progress lines (0: ~10 lines)")
    args = parser.parse_args()

    started = time.perf_counter()
    names, edges = wordnet_closure(args.subtree, instance_hypernyms=not args.no_instance_hypernyms)
    print(f"wordnet {args.subtree}: {len(names)} nodes, {edges.shape[0]} closure edges "
          f"({time.perf_counter() - started:.1f} s to load)")
    model = st.geometry.PoincareEmbedding(len(names), args.dim, curvature=args.curvature, seed=args.seed)
    every = args.print_every or max(1, args.epochs // 10)

    def progress(epoch: int, loss: float, seconds: float) -> None:
        if epoch == 1 or epoch % every == 0 or epoch == args.epochs:
            print(f"epoch {epoch:5d}  loss {loss:.4f}  {seconds:.3f} s")

    reports = model.fit(edges, epochs=args.epochs, lr=args.lr, negatives=args.negatives, burn_in=args.burn_in,
                        batch_size=args.batch_size, threads=args.threads, callback=progress)
    per_epoch = sum(r["seconds"] for r in reports) / max(len(reports), 1)
    evaluated = time.perf_counter()
    m = st.geometry.reconstruction_metrics(model.weight, edges, curvature=args.curvature)
    print(f"poincare_wordnet {args.subtree} dim {args.dim}: mean rank {m['mean_rank']:.3f}, MAP {m['map']:.4f} "
          f"after {args.epochs} epochs ({per_epoch:.4f} s/epoch, evaluation {time.perf_counter() - evaluated:.1f} s)")


if __name__ == "__main__":
    main()
