"""Biased matrix factorisation: SpiralTorchRec (SGD and ALS, C++) vs scikit-surprise's SVD on the
same ratings, timed in one process. Writes bench/results/rec.md.

    pip install scikit-surprise==1.1.5   # not part of the test command
    PYTHONPATH=python python bench/bench_rec.py [--repeats 3]

The ratings: we found no Debian package (apt-cache: no MovieLens, Jester or recommenderlab data)
and no PyPI package that ships a real ratings set in its files (surprise downloads MovieLens at run
time, which this machine cannot), so the set is synthetic, shaped like
MovieLens-100k and documented here: 943 users, 1682 items, 100,000 distinct (user, item) pairs
drawn with Zipf-like item popularity (exponent 0.9) and log-normal user activity; the hidden rating
is 3.53 + b_u + b_i + p_u . q_i with b_u ~ N(0, 0.35^2), b_i ~ N(0, 0.5^2), rank-10 factors whose
dot product has variance 0.5, plus N(0, 0.9^2) noise, rounded to whole stars and clipped to [1, 5].
A seeded 80/20 split gives the training and test sets. Every model is fitted on the training set and
scored by RMSE on the test set; fit times exclude data loading.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import cpu_model  # noqa: E402
from spiraltorch.rec import SpiralTorchRec  # noqa: E402


def synthetic_ratings(seed: int = 0, users: int = 943, items: int = 1682, n: int = 100_000, rank: int = 10):
    rng = np.random.default_rng(seed)
    item_p = 1.0 / np.arange(1, items + 1) ** 0.9
    item_p = rng.permutation(item_p / item_p.sum())
    user_p = rng.lognormal(0.0, 1.0, users)
    user_p /= user_p.sum()
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < n:
        m = n - len(pairs)
        us = rng.choice(users, size=m * 2, p=user_p)
        its = rng.choice(items, size=m * 2, p=item_p)
        for u, i in zip(us.tolist(), its.tolist()):
            pairs.add((u, i))
            if len(pairs) == n:
                break
    pu = np.array(sorted(pairs), dtype=np.int64)
    u, i = pu[:, 0], pu[:, 1]
    bu, bi = rng.normal(0, 0.35, users), rng.normal(0, 0.5, items)
    P = rng.normal(0, (0.5 / rank) ** 0.25, (users, rank))
    Q = rng.normal(0, (0.5 / rank) ** 0.25, (items, rank))
    r = 3.53 + bu[u] + bi[i] + (P[u] * Q[i]).sum(1) + rng.normal(0, 0.9, n)
    r = np.clip(np.round(r), 1, 5).astype(np.float32)
    order = rng.permutation(n)
    cut = int(0.8 * n)
    tr, te = order[:cut], order[cut:]
    return (u[tr], i[tr], r[tr]), (u[te], i[te], r[te])


def rmse(pred, truth) -> float:
    return float(np.sqrt(np.mean((np.asarray(pred, np.float64) - truth) ** 2)))


def time_best(fit, repeats: int):
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fit()
        best = min(best, time.perf_counter() - t0)
    return best, out


def surprise_rows(train, test, repeats: int, configs):
    from surprise import SVD, Dataset, Reader

    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        for u, i, r in zip(*train):
            f.write(f"{u} {i} {r}\n")
        path = f.name
    data = Dataset.load_from_file(path, Reader(line_format="user item rating", sep=" ", rating_scale=(1, 5)))
    trainset = data.build_full_trainset()
    os.unlink(path)
    testset = [(str(u), str(i), float(r)) for u, i, r in zip(*test)]
    rows = []
    for label, kw in configs:
        def fit():
            algo = SVD(random_state=0, **kw)
            algo.fit(trainset)
            return algo
        secs, algo = time_best(fit, repeats)
        preds = algo.test(testset)
        rows.append((label, secs, rmse([p.est for p in preds], test[2])))
    return rows


def spiral_rows(train, test, repeats: int, configs):
    rows = []
    for label, kw in configs:
        def fit():
            m = SpiralTorchRec(943, 1682, **kw)
            m.fit(train)
            return m
        secs, m = time_best(fit, repeats)
        rows.append((label, secs, rmse(m.predict_many(test[0], test[1]), test[2])))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "rec.md"))
    args = ap.parse_args()
    train, test = synthetic_ratings()
    import surprise

    sur = surprise_rows(train, test, args.repeats, [
        ("surprise SVD (defaults: 100 factors, 20 epochs, lr 0.005, reg 0.02)", {}),
        ("surprise SVD (20 factors, 20 epochs, lr 0.01, reg 0.05)", dict(n_factors=20, n_epochs=20, lr_all=0.01, reg_all=0.05)),
    ])
    ours = spiral_rows(train, test, args.repeats, [
        ("SpiralTorchRec SGD (same as surprise defaults)", dict(factors=100, solver="sgd", lr=0.005, reg=0.02,
                                                                 reg_bias=0.02, epochs=20, shuffle=False)),
        ("SpiralTorchRec SGD (20 factors, 20 epochs, lr 0.01, reg 0.05, shuffled)",
         dict(factors=20, solver="sgd", lr=0.01, reg=0.05, reg_bias=0.05, epochs=20)),
        ("SpiralTorchRec ALS (10 factors, 6 sweeps, reg 0.1, reg_bias 0.05)",
         dict(factors=10, solver="als", reg=0.1, reg_bias=0.05, epochs=6)),
    ])
    base = sur[0]
    mean_only = rmse(np.full(len(test[2]), train[2].mean()), test[2])
    lines = ["# Biased matrix factorisation: SpiralTorchRec vs scikit-surprise SVD", "",
             f"Generated by `PYTHONPATH=python python bench/bench_rec.py --repeats {args.repeats}` (one process; "
             "fit time = best of the repeats, data loading excluded).", "",
             "```", f"CPU: {cpu_model()}, {os.cpu_count()} logical cores (shared); scikit-surprise {surprise.__version__}; "
             f"load average {os.getloadavg()[0]:.1f}",
             f"ratings: synthetic MovieLens-100k-shaped set (see bench/bench_rec.py docstring), "
             f"{len(train[2])} train / {len(test[2])} test; global-mean RMSE {mean_only:.4f}", "```", "",
             "| model | fit s | vs surprise defaults | test RMSE |", "|---|---:|---:|---:|"]
    for label, secs, err in sur + ours:
        lines.append(f"| {label} | {secs:.3f} | {secs / base[1]:.2f}x | {err:.4f} |")
    # The goal: some SpiralTorchRec model at least as accurate as every surprise model and faster
    # than each of them.
    best = min(ours, key=lambda row: row[2])
    ok = all(best[2] <= row[2] and best[1] <= row[1] for row in sur)
    lines += ["", f"Best SpiralTorchRec: {best[0]}, test RMSE {best[2]:.4f} vs surprise's best "
              f"{min(r[2] for r in sur):.4f}; fit {best[1]:.3f} s vs surprise's fastest {min(r[1] for r in sur):.3f} s: "
              f"{'RMSE <= and time <= every surprise row' if ok else 'NOT better than every surprise row'}.", ""]
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
