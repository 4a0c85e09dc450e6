"""spiraltorch.rec: the matrix-factorisation recommender."""

from __future__ import annotations

import pytest

import spiraltorch as st
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
