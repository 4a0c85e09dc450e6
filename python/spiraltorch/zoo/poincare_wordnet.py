"""Poincare embeddings of WordNet's noun hierarchy (Nickel & Kiela 2017).

Builds the transitive closure of the hypernymy graph from Debian's wordnet-base (the mammal
subtree, 1,182 nodes, or every noun, 82,115 nodes), trains st.geometry.PoincareEmbedding and
prints the reconstruction mean rank and MAP (the authors' protocol).

Training follows the paper: burn-in epochs at lr / 10 with negatives drawn by degree^0.75, then
uniform negatives at lr (--schedule linear anneals it to 0 by the end of the run -- the last epoch
or, with --minutes, the end of the wall-clock budget). With --minutes training stops after the
epoch that reaches the budget. --checkpoint saves the weights (NumPy .npy, written atomically) at every
progress line and at the end; --resume continues from such a file.

Run: spiral-model-zoo run poincare_wordnet -- --subtree mammal --dim 10 --epochs 500
     spiral-model-zoo run poincare_wordnet -- --subtree noun --dim 10 --minutes 60 --threads 2 \\
         --checkpoint noun10.npy
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import spiraltorch as st
from spiraltorch._atomic import atomic_write
from spiraltorch.datasets import wordnet_closure
from spiraltorch.utils.progress import Progress


def _save(path: str, weight: "st.Tensor") -> None:
    atomic_write(path, lambda f: np.save(f, weight.numpy()))


def main() -> None:
    """Runs the recipe from the command line (``spiral-model-zoo run poincare_wordnet -- --help`` lists its options;
    the module docstring says what it trains and prints)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subtree", default="mammal", help="'mammal', 'noun' or a synset name such as dog.n.01")
    parser.add_argument("--dim", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=None,
                        help="epochs to run (default 500; with --minutes at most this many, default unlimited)")
    parser.add_argument("--minutes", type=float, default=0.0, help="wall-clock budget for training (0: none)")
    parser.add_argument("--lr", type=float, default=0.3)
    parser.add_argument("--negatives", type=int, default=50)
    parser.add_argument("--burn-in", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=10)
    parser.add_argument("--schedule", choices=["constant", "linear"], default="constant")
    parser.add_argument("--burn-in-sampling", choices=["degree", "uniform"], default="degree")
    parser.add_argument("--geometry", choices=["poincare", "euclidean"], default="poincare")
    parser.add_argument("--curvature", type=float, default=-1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0, help="0: OpenMP's default")
    parser.add_argument("--no-instance-hypernyms", action="store_true")
    parser.add_argument("--print-every", type=int, default=0,
                        help="epochs between progress lines (0: ~10 lines, or one a minute with --minutes)")
    parser.add_argument("--checkpoint", default=None, help="save the weights here (.npy) at each progress line")
    parser.add_argument("--resume", default=None, help="start from weights saved by --checkpoint")
    parser.add_argument("--eval-every", type=float, default=0.0,
                        help="with --minutes: also print mean rank / MAP every this many minutes (0: only at the end)")
    parser.add_argument("--logdir", default=None,
                        help="write a TensorBoard run here: the loss per epoch and the final points for the projector")
    args = parser.parse_args()
    epochs = args.epochs if args.epochs is not None else (10 ** 9 if args.minutes else 500)

    started = time.perf_counter()
    names, edges = wordnet_closure(args.subtree, instance_hypernyms=not args.no_instance_hypernyms)
    print(f"wordnet {args.subtree}: {len(names)} nodes, {edges.shape[0]} closure edges "
          f"({time.perf_counter() - started:.1f} s to load)", flush=True)
    model = st.geometry.PoincareEmbedding(len(names), args.dim, curvature=args.curvature, seed=args.seed,
                                          geometry=args.geometry)
    if args.resume:
        model.load_weight(st.tensor(np.load(args.resume), dtype=st.float64))
        print(f"resumed from {args.resume}", flush=True)
    every = args.print_every or (0 if args.minutes else max(1, epochs // 10))
    state = {"last_print": time.perf_counter(), "last_eval": time.perf_counter(), "train_s": 0.0}

    def metrics_line(weight: "st.Tensor") -> str:
        m = st.geometry.reconstruction_metrics(weight, edges, curvature=args.curvature, geometry=args.geometry)
        return f"mean rank {m['mean_rank']:.3f}, MAP {m['map']:.4f}"

    bar = Progress(epochs * edges.shape[0] if not args.minutes else None, desc="train", unit="edges")
    writer = None
    if args.logdir:
        from spiraltorch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(args.logdir)

    def progress(epoch: int, loss: float, seconds: float) -> None:
        state["train_s"] += seconds
        bar.update(edges.shape[0])
        bar.set_postfix(epoch=epoch, loss=loss)
        if writer is not None:
            writer.add_scalar("train/loss", loss, epoch)
        now = time.perf_counter()
        due = (epoch % every == 0) if every else (now - state["last_print"] >= 60)
        if epoch == 1 or due or epoch == epochs:
            state["last_print"] = now
            bar.print(f"epoch {epoch:6d}  loss {loss:.4f}  {seconds:.3f} s/epoch  {state['train_s'] / 60:.1f} min "
                      f"trained")

    # Checkpoints and interim evaluations need the weights, which fit publishes when it returns:
    # with a budget the run is split into chunks of `chunk` minutes that continue the same schedule.
    budget_s = args.minutes * 60.0
    chunk_s = budget_s
    if args.minutes and (args.checkpoint or args.eval_every):
        chunk_s = max(60.0, (args.eval_every or 10.0) * 60.0)
    reports: list[dict] = []
    done = 0
    while True:
        remaining = budget_s - state["train_s"] if budget_s else 0.0
        if budget_s and remaining <= 0:
            break
        n_left = epochs - done
        if n_left <= 0:
            break
        kwargs = dict(lr=args.lr, negatives=args.negatives, batch_size=args.batch_size, threads=args.threads,
                      callback=lambda e, l, s: progress(done + e, l, s), burn_in_sampling=args.burn_in_sampling)
        if budget_s:
            # One chunk: the linear decay must span the whole budget, so chunks run with a constant lr
            # equal to the schedule's value at their start (piecewise-constant annealing).
            frac = state["train_s"] / budget_s
            burn = max(0, args.burn_in - done)
            lr_now = args.lr * (1 - frac) if args.schedule == "linear" and burn == 0 else args.lr
            kwargs.update(lr=max(lr_now, args.lr * 1e-3), burn_in=burn, schedule="constant",
                          max_seconds=min(chunk_s, remaining))
            if args.schedule == "linear" and chunk_s >= remaining:
                kwargs.update(schedule="linear", lr=max(lr_now, args.lr * 1e-3))
        else:
            kwargs.update(burn_in=args.burn_in, schedule=args.schedule)
        part = model.fit(edges, epochs=n_left, **kwargs)
        reports += part
        done += len(part)
        if args.checkpoint:
            _save(args.checkpoint, model.weight)
            print(f"checkpoint: {args.checkpoint} after {done} epochs", flush=True)
        if args.eval_every and budget_s and state["train_s"] < budget_s:
            print(f"after {done} epochs ({state['train_s'] / 60:.1f} min): {metrics_line(model.weight)}", flush=True)
        if not budget_s:
            break
    bar.close()
    if writer is not None:  # the points in the ball, labelled by synset, for TensorBoard's projector
        writer.add_embedding(model, metadata=names, global_step=done, tag=f"wordnet_{args.subtree}")
        writer.close()
    per_epoch = sum(r["seconds"] for r in reports) / max(len(reports), 1)
    evaluated = time.perf_counter()
    line = metrics_line(model.weight)
    print(f"poincare_wordnet {args.subtree} dim {args.dim}: {line} after {done} epochs "
          f"({per_epoch:.4f} s/epoch, {state['train_s'] / 60:.1f} min training, evaluation "
          f"{time.perf_counter() - evaluated:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
