"""Poincare embeddings of WordNet (Nickel & Kiela 2017): SpiralTorch vs geoopt + PyTorch vs gensim,
side by side in one process, on the same transitive closure and the same evaluation.

Run: PYTHONPATH=python python bench/bench_poincare.py [--subtree mammal] [--dims 5 10] [--epochs 300]
     [--long-epochs 1000] [--out bench/results/poincare_cpu.md]
     PYTHONPATH=python python bench/bench_poincare.py --subtree noun --dims 10 --timing-epochs 2
     (the full noun closure: seconds per epoch only, every library over the same few epochs)
Needs Debian's wordnet-base, torch, geoopt==0.5.1 and gensim (each peer is skipped, with a note,
when it does not import). Every library trains with the paper's recipe: softmax loss of the true
ancestor against `--negatives` uniform non-ancestors, Riemannian SGD with the gradient scaled by
(1 - |x|^2)^2 / 4, projection into the ball, batch `--batch-size`, lr / 10 for the first 10 epochs,
init uniform in [-1e-3, 1e-3]. All final embeddings are scored by st.geometry.reconstruction_metrics
(each node's ancestors ranked among its non-ancestors; mean rank over pairs, MAP over nodes).
SpiralTorch additionally does what the paper and gensim do and geoopt's loop does not: negatives drawn
in proportion to degree^0.75 during burn-in (the row "uniform burn-in" switches it off: exactly
geoopt's recipe). --extra-lr L adds SpiralTorch and geoopt rows at lr L. "Euclidean" is the paper's
baseline: the same training with d(u, v) = |u - v|^2 and plain SGD. "same wall time as geoopt" trains
SpiralTorch for as long as geoopt took (st fit(max_seconds=...)).
gensim runs its burn-in (10 epochs at lr / 10) before its `epochs`, so it gets epochs - 10 more; it
samples `--gensim-negatives` (default 10, its own default) and SpiralTorch runs once more with that number.
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

import spiraltorch as st
from machine import cpu_model
from spiraltorch.datasets import wordnet_closure

BURN_IN = 10


def run_spiraltorch(n, edges, dim, epochs, args, negatives=None, geometry="poincare", plain=False,
                    max_seconds=None) -> dict:  # type: ignore[no-untyped-def]
    """plain=True: geoopt's recipe exactly (uniform negatives throughout, constant lr after burn-in)."""
    model = st.geometry.PoincareEmbedding(n, dim, seed=args.seed, geometry=geometry)
    extra = dict(burn_in_sampling="uniform") if plain else {}
    if max_seconds:
        extra["max_seconds"] = max_seconds
    started = time.perf_counter()
    reports = model.fit(edges, epochs=epochs, lr=args.lr, negatives=negatives or args.negatives, burn_in=BURN_IN,
                        batch_size=args.batch_size, threads=args.threads, **extra)
    total = time.perf_counter() - started
    return {"s_per_epoch": total / len(reports), "weight": model.weight, "loss": reports[-1]["loss"],
            "epochs": len(reports), "geometry": geometry}


def run_geoopt(n, pairs, dim, epochs, args, max_batches=0, sparse=False) -> dict:  # type: ignore[no-untyped-def]
    """max_batches > 0: time that many batches and scale to a whole epoch (for the noun closure).
    sparse: an nn.Embedding(sparse=True) whose weight is the ManifoldParameter, stepped by geoopt's
    SparseRiemannianSGD (only the batch's rows; the dense optimizer retracts every row each step)."""
    import geoopt
    import torch

    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    ball = geoopt.PoincareBall(c=1.0)
    init = torch.empty(n, dim, dtype=torch.float64).uniform_(-1e-3, 1e-3)
    if sparse:
        table = torch.nn.Embedding(n, dim, sparse=True)
        table.weight = geoopt.ManifoldParameter(init, manifold=ball)
        emb = table.weight
        lookup = table
        opt = geoopt.optim.SparseRiemannianSGD([emb], lr=args.lr)
    else:
        emb = geoopt.ManifoldParameter(init, manifold=ball)
        lookup = emb.__getitem__
        opt = geoopt.optim.RiemannianSGD([emb], lr=args.lr)
    # Sorted keys u * n + v of "v is an ancestor of u (or u itself)" for rejection sampling of negatives
    # (a dense n x n mask would not fit the noun closure's 82k nodes).
    keys = np.unique(np.concatenate([pairs[:, 0] * n + pairs[:, 1], np.arange(n) * (n + 1)]))

    def forbidden_of(u, v):  # type: ignore[no-untyped-def]
        q = u * n + v
        pos = np.minimum(np.searchsorted(keys, q), len(keys) - 1)
        return keys[pos] == q

    k, b = args.negatives, args.batch_size
    started = time.perf_counter()
    for epoch in range(epochs):
        for group in opt.param_groups:
            group["lr"] = args.lr / 10 if epoch < BURN_IN else args.lr
        order = rng.permutation(len(pairs))
        for s in range(0, len(order), b):
            batch = pairs[order[s:s + b]]
            u = batch[:, 0]
            neg = rng.integers(0, n, size=(len(batch), k))
            for _ in range(10):  # resample the forbidden draws
                bad = forbidden_of(u[:, None], neg)
                if not bad.any():
                    break
                neg[bad] = rng.integers(0, n, size=int(bad.sum()))
            targets = torch.from_numpy(np.concatenate([batch[:, 1:2], neg], axis=1))
            uu = lookup(torch.from_numpy(u)).unsqueeze(1)
            d = ball.dist(uu, lookup(targets))
            loss = torch.nn.functional.cross_entropy(-d, torch.zeros(len(batch), dtype=torch.long))
            opt.zero_grad()
            loss.backward()
            opt.step()
            if max_batches and s // b + 1 >= max_batches:
                break
    total = time.perf_counter() - started
    batches = -(-len(pairs) // b)
    per_epoch = total / epochs * (batches / min(max_batches, batches) if max_batches else 1.0)
    return {"s_per_epoch": per_epoch, "weight": emb.detach().numpy(), "loss": loss.item()}


def run_gensim(names, pairs, dim, epochs, args, burn_in=BURN_IN) -> dict:  # type: ignore[no-untyped-def]
    from gensim.models.poincare import PoincareModel

    relations = [(names[a], names[b]) for a, b in pairs]
    model = PoincareModel(relations, size=dim, alpha=args.lr, negative=args.gensim_negatives, burn_in=burn_in,
                          burn_in_alpha=args.lr / 10, seed=args.seed, dtype=np.float64)
    started = time.perf_counter()
    model.train(epochs=max(epochs - burn_in, 1), batch_size=args.batch_size, print_every=10 ** 9)
    total = time.perf_counter() - started
    weight = np.stack([model.kv[name] for name in names])
    return {"s_per_epoch": total / epochs, "weight": weight, "loss": float("nan")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subtree", default="mammal")
    parser.add_argument("--dims", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--epochs", type=int, default=300, help="epochs for every library (the shared comparison)")
    parser.add_argument("--long-epochs", type=int, default=1000, help="a longer SpiralTorch run per dim (0: skip)")
    parser.add_argument("--lr", type=float, default=0.3)
    parser.add_argument("--negatives", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=10)
    parser.add_argument("--threads", type=int, default=0, help="SpiralTorch threads (0: OpenMP's default)")
    parser.add_argument("--gensim-negatives", type=int, default=10,
                        help="gensim's own default; with 50 its burn-in sampler (degree^0.75 draws, redrawn until "
                             "all are distinct and unrelated) did not finish an epoch within minutes here")
    parser.add_argument("--timing-epochs", type=int, default=0,
                        help="timing only (no quality): every library runs this many epochs (geoopt: "
                             "--geoopt-batches batches of each, scaled to an epoch); for the noun closure")
    parser.add_argument("--geoopt-batches", type=int, default=2000)
    parser.add_argument("--geoopt-sparse", action="store_true",
                        help="also run geoopt's SparseRiemannianSGD on an nn.Embedding(sparse=True)")
    parser.add_argument("--extra-lr", type=float, nargs="*", default=[],
                        help="also run SpiralTorch and geoopt at these learning rates")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip", action="append", default=[], choices=["geoopt", "gensim"])
    parser.add_argument("--out", default=None, help="default bench/results/poincare_cpu.md "
                                                    "(poincare_noun_cpu.md with --timing-epochs)")
    args = parser.parse_args()
    if args.out is None:
        name = "poincare_noun_cpu.md" if args.timing_epochs else "poincare_cpu.md"
        args.out = os.path.join(os.path.dirname(__file__), "results", name)

    names, edges = wordnet_closure(args.subtree)
    pairs = edges.numpy().astype(np.int64)
    n = len(names)
    header = (f"WordNet {args.subtree} closure: {n} nodes, {len(pairs)} edges; lr {args.lr}, {args.negatives} "
              f"negatives, batch {args.batch_size}, burn-in {BURN_IN} epochs at lr/10, seed {args.seed}\n"
              f"CPU: {cpu_model()}, {os.cpu_count()} logical cores; OMP_NUM_THREADS="
              f"{os.environ.get('OMP_NUM_THREADS', 'unset')}, SpiralTorch threads {args.threads or 'default'}")
    versions = ["spiraltorch (this tree)"]
    try:
        import torch

        versions.append(f"torch {torch.__version__} ({torch.get_num_threads()} threads)")
        import geoopt

        versions.append(f"geoopt {geoopt.__version__}")
    except ImportError as e:
        versions.append(f"geoopt/torch unavailable: {e}")
        args.skip.append("geoopt")
    try:
        import gensim

        versions.append(f"gensim {gensim.__version__}")
    except ImportError as e:
        versions.append(f"gensim unavailable: {e}")
        args.skip.append("gensim")
    print(header)
    print(", ".join(versions))
    rows = []
    timing = args.timing_epochs > 0

    def record(dim, label, r, score=True):  # type: ignore[no-untyped-def]
        epochs = r.get("epochs", args.timing_epochs or args.epochs)
        if score:
            m = st.geometry.reconstruction_metrics(
                r["weight"] if isinstance(r["weight"], st.Tensor)
                else st.tensor(np.ascontiguousarray(r["weight"], dtype=np.float64)),
                edges, geometry=r.get("geometry", "poincare"))
            rank, mapv = m["mean_rank"], m["map"]
        else:
            rank = mapv = float("nan")
        rows.append((dim, label, epochs, r["s_per_epoch"], rank, mapv))
        print(f"dim {dim:3d}  {label:36s} {epochs:5d} epochs  {r['s_per_epoch']:9.4f} s/epoch  "
              f"mean rank {rank:7.3f}  MAP {mapv:.4f}", flush=True)
        write_table(rows, header, versions, args.out, timing)  # after every run: a cut-short run keeps its rows

    for dim in args.dims:
        if timing:
            e = args.timing_epochs
            record(dim, "SpiralTorch", run_spiraltorch(n, edges, dim, e, args), score=False)
            record(dim, "SpiralTorch Euclidean", run_spiraltorch(n, edges, dim, e, args, geometry="euclidean"),
                   score=False)
            if "geoopt" not in args.skip:
                record(dim, f"geoopt + PyTorch ({args.geoopt_batches} batches/epoch timed)",
                       run_geoopt(n, pairs, dim, e, args, max_batches=args.geoopt_batches), score=False)
                record(dim, f"geoopt sparse ({args.geoopt_batches} batches/epoch timed)",
                       run_geoopt(n, pairs, dim, e, args, max_batches=args.geoopt_batches, sparse=True),
                       score=False)
            if "gensim" not in args.skip:
                record(dim, f"gensim PoincareModel ({args.gensim_negatives} neg)",
                       run_gensim(names, pairs, dim, e, args, burn_in=0), score=False)
            continue
        record(dim, "SpiralTorch", run_spiraltorch(n, edges, dim, args.epochs, args))
        record(dim, "SpiralTorch (uniform burn-in)", run_spiraltorch(n, edges, dim, args.epochs, args, plain=True))
        record(dim, "SpiralTorch Euclidean", run_spiraltorch(n, edges, dim, args.epochs, args, geometry="euclidean"))
        if "geoopt" not in args.skip:
            g = run_geoopt(n, pairs, dim, args.epochs, args)
            record(dim, "geoopt + PyTorch", g)
            if args.geoopt_sparse:
                record(dim, "geoopt sparse", run_geoopt(n, pairs, dim, args.epochs, args, sparse=True))
            budget = g["s_per_epoch"] * args.epochs
            record(dim, "SpiralTorch (same wall time as geoopt)",
                   run_spiraltorch(n, edges, dim, 10 ** 7, args, max_seconds=budget))
        for lr in args.extra_lr:
            other = argparse.Namespace(**{**vars(args), "lr": lr})
            record(dim, f"SpiralTorch (lr {lr:g})", run_spiraltorch(n, edges, dim, args.epochs, other))
            if "geoopt" not in args.skip:
                record(dim, f"geoopt + PyTorch (lr {lr:g})", run_geoopt(n, pairs, dim, args.epochs, other))
        if "gensim" not in args.skip:
            record(dim, f"gensim PoincareModel ({args.gensim_negatives} neg)",
                   run_gensim(names, pairs, dim, args.epochs, args))
            if args.gensim_negatives != args.negatives:
                record(dim, f"SpiralTorch ({args.gensim_negatives} neg)",
                       run_spiraltorch(n, edges, dim, args.epochs, args, args.gensim_negatives))
        if args.long_epochs:
            record(dim, "SpiralTorch (long)", run_spiraltorch(n, edges, dim, args.long_epochs, args))
    print()
    print(write_table(rows, header, versions, args.out, timing))
    if args.out:
        print("written to", args.out)


def write_table(rows, header, versions, out, timing=False) -> str:  # type: ignore[no-untyped-def]
    title = "timing on the full closure" if timing else "SpiralTorch vs geoopt + PyTorch vs gensim"
    lines = [f"# Poincare embeddings of WordNet: {title}", "",
             "Generated by `PYTHONPATH=python python bench/bench_poincare.py"
             + (" --subtree noun --dims 10 --timing-epochs N" if timing else "")
             + "` (all libraries in one process; metrics from `st.geometry.reconstruction_metrics` for every "
             "library).", "",
             "```", header, ", ".join(versions), "```", "",
             "| dim | library | epochs | s / epoch | vs SpiralTorch | mean rank | MAP |",
             "|---:|---|---:|---:|---:|---:|---:|"]
    for dim, label, epochs, spe, rank, mapv in rows:
        base = next(r[3] for r in rows if r[0] == dim and r[1] == "SpiralTorch")
        q = ("| - | - |" if math.isnan(rank) else f"| {rank:.3f} | {mapv:.4f} |")
        lines.append(f"| {dim} | {label} | {epochs} | {spe:.4f} | {spe / base:.1f}x {q}")
    if not timing:
        lines += ["", "Paper (Nickel & Kiela 2017, Table 1, mammal closure, dim 5): mean rank 1.26, MAP 0.927 "
                  "(dim 10: 1.17 / 0.939)."]
    table = "\n".join(lines) + "\n"
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as f:
            f.write(table)
    return table


if __name__ == "__main__":
    main()
