"""Poincare embeddings of WordNet (Nickel & Kiela 2017): SpiralTorch vs geoopt + PyTorch vs gensim,
side by side in one process, on the same transitive closure and the same evaluation.

Run: PYTHONPATH=python python bench/bench_poincare.py [--subtree mammal] [--dims 5 10] [--epochs 300]
     [--long-epochs 1000] [--out bench/results/poincare_cpu.md]
Needs Debian's wordnet-base, torch, geoopt==0.5.1 and gensim (each peer is skipped, with a note,
when it does not import). Every library trains with the paper's recipe: softmax loss of the true
ancestor against `--negatives` uniform non-ancestors, Riemannian SGD with the gradient scaled by
(1 - |x|^2)^2 / 4, projection into the ball, batch `--batch-size`, lr / 10 for the first 10 epochs,
init uniform in [-1e-3, 1e-3]. All final embeddings are scored by st.geometry.reconstruction_metrics
(each node's ancestors ranked among its non-ancestors; mean rank over pairs, MAP over nodes).
gensim runs its burn-in (10 epochs at lr / 10) before its `epochs`, so it gets epochs - 10 more; it
samples `--gensim-negatives` (default 10, its own default) and SpiralTorch runs once more with that number.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

import spiraltorch as st
from spiraltorch.datasets import wordnet_closure

BURN_IN = 10


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def metrics(weight, edges) -> dict:  # type: ignore[no-untyped-def]
    w = weight if isinstance(weight, st.Tensor) else st.tensor(np.ascontiguousarray(weight, dtype=np.float64))
    return st.geometry.reconstruction_metrics(w, edges)


def run_spiraltorch(n, edges, dim, epochs, args, negatives=None) -> dict:  # type: ignore[no-untyped-def]
    model = st.geometry.PoincareEmbedding(n, dim, seed=args.seed)
    started = time.perf_counter()
    reports = model.fit(edges, epochs=epochs, lr=args.lr, negatives=negatives or args.negatives, burn_in=BURN_IN,
                        batch_size=args.batch_size)
    total = time.perf_counter() - started
    return {"s_per_epoch": total / epochs, "weight": model.weight, "loss": reports[-1]["loss"]}


def run_geoopt(n, pairs, dim, epochs, args) -> dict:  # type: ignore[no-untyped-def]
    import geoopt
    import torch

    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    ball = geoopt.PoincareBall(c=1.0)
    emb = geoopt.ManifoldParameter(torch.empty(n, dim, dtype=torch.float64).uniform_(-1e-3, 1e-3), manifold=ball)
    opt = geoopt.optim.RiemannianSGD([emb], lr=args.lr)
    # Dense "is ancestor (or self)" mask for rejection sampling of negatives.
    forbidden = np.zeros((n, n), dtype=bool)
    forbidden[pairs[:, 0], pairs[:, 1]] = True
    forbidden[np.arange(n), np.arange(n)] = True
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
                bad = forbidden[u[:, None], neg]
                if not bad.any():
                    break
                neg[bad] = rng.integers(0, n, size=int(bad.sum()))
            targets = torch.from_numpy(np.concatenate([batch[:, 1:2], neg], axis=1))
            uu = emb[torch.from_numpy(u)].unsqueeze(1)
            d = ball.dist(uu, emb[targets])
            loss = torch.nn.functional.cross_entropy(-d, torch.zeros(len(batch), dtype=torch.long))
            opt.zero_grad()
            loss.backward()
            opt.step()
    total = time.perf_counter() - started
    return {"s_per_epoch": total / epochs, "weight": emb.detach().numpy(), "loss": loss.item()}


def run_gensim(names, pairs, dim, epochs, args) -> dict:  # type: ignore[no-untyped-def]
    from gensim.models.poincare import PoincareModel

    relations = [(names[a], names[b]) for a, b in pairs]
    model = PoincareModel(relations, size=dim, alpha=args.lr, negative=args.gensim_negatives, burn_in=BURN_IN,
                          burn_in_alpha=args.lr / 10, seed=args.seed, dtype=np.float64)
    started = time.perf_counter()
    model.train(epochs=max(epochs - BURN_IN, 1), batch_size=args.batch_size, print_every=10 ** 9)
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
    parser.add_argument("--gensim-negatives", type=int, default=10,
                        help="gensim's own default; with 50 its burn-in sampler (degree^0.75 draws, redrawn until "
                             "all are distinct and unrelated) did not finish an epoch within minutes here")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip", action="append", default=[], choices=["geoopt", "gensim"])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "poincare_cpu.md"))
    args = parser.parse_args()

    names, edges = wordnet_closure(args.subtree)
    pairs = edges.numpy().astype(np.int64)
    n = len(names)
    header = (f"WordNet {args.subtree} closure: {n} nodes, {len(pairs)} edges; lr {args.lr}, {args.negatives} "
              f"negatives, batch {args.batch_size}, burn-in {BURN_IN} epochs at lr/10, seed {args.seed}\n"
              f"CPU: {cpu_model()}, {os.cpu_count()} logical cores; OMP_NUM_THREADS="
              f"{os.environ.get('OMP_NUM_THREADS', 'unset')}")
    versions = [f"spiraltorch (this tree)"]
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
    for dim in args.dims:
        runs = [("SpiralTorch", args.epochs, lambda e: run_spiraltorch(n, edges, dim, e, args))]
        if "geoopt" not in args.skip:
            runs.append(("geoopt + PyTorch", args.epochs, lambda e: run_geoopt(n, pairs, dim, e, args)))
        if "gensim" not in args.skip:
            label = f"gensim PoincareModel ({args.gensim_negatives} neg)"
            runs.append((label, args.epochs, lambda e: run_gensim(names, pairs, dim, e, args)))
            if args.gensim_negatives != args.negatives:
                runs.append((f"SpiralTorch ({args.gensim_negatives} neg)", args.epochs,
                             lambda e: run_spiraltorch(n, edges, dim, e, args, args.gensim_negatives)))
        if args.long_epochs:
            runs.append(("SpiralTorch (long)", args.long_epochs, lambda e: run_spiraltorch(n, edges, dim, e, args)))
        for label, epochs, fn in runs:
            r = fn(epochs)
            m = metrics(r["weight"], edges)
            rows.append((dim, label, epochs, r["s_per_epoch"], m["mean_rank"], m["map"]))
            print(f"dim {dim:3d}  {label:22s} {epochs:5d} epochs  {r['s_per_epoch']:8.4f} s/epoch  "
                  f"mean rank {m['mean_rank']:7.3f}  MAP {m['map']:.4f}", flush=True)
            write_table(rows, header, versions, args.out)  # after every run, so a cut-short run keeps its rows
    print()
    print(write_table(rows, header, versions, args.out))
    if args.out:
        print("written to", args.out)


def write_table(rows, header, versions, out) -> str:  # type: ignore[no-untyped-def]
    lines = ["# Poincare embeddings of WordNet: SpiralTorch vs geoopt + PyTorch vs gensim", "",
             "Generated by `PYTHONPATH=python python bench/bench_poincare.py` (all libraries in one process; "
             "metrics from `st.geometry.reconstruction_metrics` for every library).", "",
             "```", header, ", ".join(versions), "```", "",
             "| dim | library | epochs | s / epoch | vs SpiralTorch | mean rank | MAP |",
             "|---:|---|---:|---:|---:|---:|---:|"]
    for dim, label, epochs, spe, rank, mapv in rows:
        base = next(r[3] for r in rows if r[0] == dim and r[1] == "SpiralTorch")
        lines.append(f"| {dim} | {label} | {epochs} | {spe:.4f} | {spe / base:.1f}x | {rank:.3f} | {mapv:.4f} |")
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
