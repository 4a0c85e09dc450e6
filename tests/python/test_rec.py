"""spiraltorch.rec: the matrix-factorisation recommender."""

from __future__ import annotations

import pytest

from spiraltorch.rec import Recommender

RATINGS = [(0, 0, 5.0), (0, 1, 3.0), (1, 0, 4.0), (1, 2, 4.5)]


def test_seed_quickstart_matches_the_exact_update_rule():
    rec = Recommender(users=8, items=12, factors=4, learning_rate=0.05, regularization=0.002)
    rmse = [rec.train_epoch(RATINGS).rmse for _ in range(3)]
    assert rmse == pytest.approx([4.191, 4.189, 4.187], abs=6e-4)
    report = rec.train_epoch(RATINGS)
    assert report.samples == 4 and "RecEpochReport(rmse=" in repr(report)


def test_training_fits_the_ratings():
    rec = Recommender(users=3, items=4, factors=3, learning_rate=0.1, regularization=0.0)
    ratings = [(0, 0, 1.0), (0, 1, -1.0), (1, 0, 0.5), (1, 2, 2.0), (2, 3, -1.5), (2, 1, 1.0)]
    first = rec.train_epoch(ratings).rmse
    for _ in range(400):
        last = rec.train_epoch(ratings).rmse
    assert last < 0.05 < first
    for u, i, r in ratings:
        assert rec.predict(u, i) == pytest.approx(r, abs=0.1)


def test_top_k_exclusion_and_errors():
    rec = Recommender(users=2, items=5, factors=2)
    top = rec.recommend_top_k(0, 3)
    scores = [rec.predict(0, i) for i in range(5)]
    assert [s for _, s in top] == sorted(scores, reverse=True)[:3]
    assert all(i != top[0][0] for i, _ in rec.recommend_top_k(0, 5, exclude=[top[0][0]]))
    assert rec.recommend_top_k(0, 0) == []
    assert tuple(rec.user_embedding(1).shape) == (1, 2)
    before = rec.predict(1, 1)
    with pytest.raises(ValueError, match=r"item 9 is out of range \[0, 5\)"):
        rec.train_epoch([(1, 1, 3.0), (0, 9, 1.0)])
    assert rec.predict(1, 1) == before  # nothing was applied
    with pytest.raises(ValueError, match="no ratings"):
        rec.train_epoch([])
    with pytest.raises(ValueError, match="factors must be a positive int"):
        Recommender(2, 2, 0)


# ---- SpiralTorchRec (biased MF, SGD / ALS in C++) and implicit top-k ----

import numpy as np  # noqa: E402

from spiraltorch.rec import ImplicitRecommender, SpiralTorchRec  # noqa: E402


def low_rank_ratings(users=60, items=40, seed=0, noise=0.05):
    rng = np.random.default_rng(seed)
    P, Q = rng.normal(size=(users, 3)), rng.normal(size=(items, 3))
    bu, bi = rng.normal(0, 0.5, users), rng.normal(0, 0.5, items)
    mask = rng.random((users, items)) < 0.5
    u, i = np.nonzero(mask)
    r = 3.5 + bu[u] + bi[i] + 0.5 * (P[u] * Q[i]).sum(1) + rng.normal(0, noise, len(u))
    return u, i, r.astype(np.float32)


@pytest.mark.parametrize("solver,kw", [("sgd", dict(lr=0.02, reg=0.002, reg_bias=0.002, epochs=150)),
                                       ("als", dict(reg=0.002, reg_bias=0.002, epochs=12))])
def test_spiraltorch_rec_recovers_low_rank_ratings(solver, kw):
    u, i, r = low_rank_ratings()
    m = SpiralTorchRec(60, 40, factors=4, solver=solver, seed=1, **kw)
    hist = m.fit((u, i, r))
    assert len(hist) == kw["epochs"] and hist[-1] < 0.3 * hist[0]
    pred = m.predict_many(u, i)
    assert np.sqrt(np.mean((pred - r) ** 2)) == pytest.approx(m.rmse((u, i, r)), rel=1e-5)
    assert m.rmse((u, i, r)) < 0.15
    assert m.global_mean == pytest.approx(float(r.mean()), rel=1e-5)
    bu, bi = m.biases()
    P, Q = m.model.user_factors.numpy(), m.model.item_factors.numpy()
    want = m.global_mean + bu[3] + bi[5] + P[3] @ Q[5]
    assert m.predict(3, 5) == pytest.approx(want, rel=1e-5)
    assert m.user_embedding(3).shape == (1, 4) and m.item_embedding(5).tolist()[0] == pytest.approx(Q[5].tolist())


def test_spiraltorch_rec_sgd_matches_a_numpy_reference_epoch():
    u, i, r = low_rank_ratings(8, 6, seed=2)
    m = SpiralTorchRec(8, 6, factors=3, solver="sgd", lr=0.05, reg=0.03, reg_bias=0.01, shuffle=False, seed=4)
    P, Q = m.model.user_factors.numpy().astype(np.float64), m.model.item_factors.numpy().astype(np.float64)
    bu, bi, mu = np.zeros(8), np.zeros(6), float(np.mean(r.astype(np.float64)))
    for uu, ii, rr in zip(u, i, r):  # scikit-surprise's SVD update, in the given order
        e = rr - (mu + bu[uu] + bi[ii] + P[uu] @ Q[ii])
        bu[uu] += 0.05 * (e - 0.01 * bu[uu])
        bi[ii] += 0.05 * (e - 0.01 * bi[ii])
        pu = P[uu].copy()
        P[uu] += 0.05 * (e * Q[ii] - 0.03 * P[uu])
        Q[ii] += 0.05 * (e * pu - 0.03 * Q[ii])
    m.fit((u, i, r), epochs=1)
    np.testing.assert_allclose(m.model.user_factors.numpy(), P, atol=1e-5)
    np.testing.assert_allclose(m.biases()[1], bi, atol=1e-5)


def test_spiraltorch_rec_top_k_and_errors():
    u, i, r = low_rank_ratings()
    m = SpiralTorchRec(60, 40, factors=4, solver="als", epochs=5)
    m.fit(list(zip(u.tolist(), i.tolist(), r.tolist())))
    top = m.recommend_top_k(0, 5, exclude=[0, 1])
    scores = [m.predict(0, j) for j in range(40)]
    ranked = [j for j in np.argsort(scores)[::-1] if j not in (0, 1)][:5]
    assert [t[0] for t in top] == ranked and top[0][1] == pytest.approx(max(scores[2:]), rel=1e-5)
    before = m.model.user_factors.numpy().copy()
    with pytest.raises(IndexError, match="user 99 at rating 1 is out of range"):
        m.fit(([0, 99], [0, 1], [3.0, 4.0]))
    with pytest.raises(ValueError, match=r"shape \(2, 2\)"):
        m.fit([(0, 1), (1, 2)])
    with pytest.raises(ValueError, match="solver"):
        SpiralTorchRec(3, 3, solver="adam")
    np.testing.assert_array_equal(m.model.user_factors.numpy(), before)


def test_implicit_recommender_finds_held_out_items():
    rng = np.random.default_rng(0)
    users, items = 60, 40
    group_u, group_i = np.arange(users) % 3, np.arange(items) % 3
    held = {}
    triples = []
    for user in range(users):
        liked = [j for j in range(items) if group_i[j] == group_u[user]]
        held[user] = liked[user % len(liked)]
        for j in liked:
            if j != held[user] and rng.random() < 0.7:
                triples.append((user, j, float(rng.integers(1, 4))))
    rec = ImplicitRecommender(users, items, factors=6, reg=0.1, alpha=5.0, sweeps=6, seed=0)
    losses = rec.fit(triples)
    assert all(b <= a * (1 + 1e-6) for a, b in zip(losses, losses[1:]))
    hits = sum(held[u] in [j for j, _ in rec.recommend_top_k(u, 5)] for u in range(users))
    assert hits > 40  # random would hit ~ 60 * 5 / 28
    seen = {j for (uu, j, _) in triples if uu == 0}
    top = rec.recommend_top_k(0, 10)
    assert not seen & {j for j, _ in top}
    assert top[0][1] == pytest.approx(rec.score(0, top[0][0]))
    assert {j for j, _ in rec.recommend_top_k(0, 40, exclude_seen=False)} >= seen
    with pytest.raises(ValueError, match="negative strength"):
        rec.fit([(0, 0, -1.0)])
