"""Recommenders (SpiralTorchRec).

``SpiralTorchRec``: biased matrix factorisation r_hat = mu + b_u + b_i + p_u . q_i trained by SGD
(the update of Funk / scikit-surprise's SVD) or by alternating least squares, both in C++.
``ImplicitRecommender``: implicit-feedback top-k by weighted ALS (Hu, Koren, Volinsky 2008).

``Recommender`` (the seed's): user and item factor vectors trained by online SGD on
(user, item, rating) triples; scores are dot products.

Deterministic: factors start at U[u, f] = 0.05 sin((u+1)(f+1)), V[i, f] = 0.05 cos((i+1)(f+1))
and ratings are visited in the given order. Every updated factor passes a soft guard that keeps
it finite and within about +-64 (values past 64 are pulled back towards 64). There is no global
mean or bias term, so with ratings far from zero the factors have far to travel: expect many
epochs (or a larger learning rate) before the RMSE drops.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable

from . import _core

if TYPE_CHECKING:  # loaded on first use by __getattr__ below (they need NumPy)
    from ._rec_mf import ImplicitRecommender, SpiralTorchRec

__all__ = ["ImplicitRecommender", "RecEpochReport", "Recommender", "SpiralTorchRec"]

_LIMIT = 64.0


def _guard(v: float) -> float:
    if not math.isfinite(v):
        return 0.0
    a = abs(v)
    if a <= _LIMIT:
        return v
    return math.copysign(_LIMIT * (1.0 - 0.05 * (a - _LIMIT) / (a + _LIMIT)), v)


@dataclass(frozen=True)
class RecEpochReport:
    """``rmse`` of the prediction errors seen during the epoch (each measured before its update),
    ``samples``, and the mean L2 penalty ``regularization_penalty``."""

    rmse: float
    samples: int
    regularization_penalty: float

    def __repr__(self) -> str:
        return (f"RecEpochReport(rmse={self.rmse:.4f}, samples={self.samples}, "
                f"regularization_penalty={self.regularization_penalty:.4f})")


class Recommender:
    """``Recommender(users, items, factors, learning_rate=0.05, regularization=0.002)``."""

    def __init__(self, users: int, items: int, factors: int, learning_rate: float = 0.05,
                 regularization: float = 0.002) -> None:
        for name, v in (("users", users), ("items", items), ("factors", factors)):
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"Recommender: {name} must be a positive int, got {v!r}")
        if not (math.isfinite(learning_rate) and learning_rate > 0):
            raise ValueError(f"Recommender: learning_rate must be positive, got {learning_rate}")
        if not (math.isfinite(regularization) and regularization >= 0):
            raise ValueError(f"Recommender: regularization must be >= 0, got {regularization}")
        self.users, self.items, self.factors = users, items, factors
        self.learning_rate, self.regularization = float(learning_rate), float(regularization)
        self._u = [[0.05 * math.sin((u + 1) * (f + 1)) for f in range(factors)] for u in range(users)]
        self._v = [[0.05 * math.cos((i + 1) * (f + 1)) for f in range(factors)] for i in range(items)]

    def _check(self, user: int, item: int | None = None) -> None:
        if not (isinstance(user, int) and 0 <= user < self.users):
            raise ValueError(f"Recommender: user {user!r} is out of range [0, {self.users})")
        if item is not None and not (isinstance(item, int) and 0 <= item < self.items):
            raise ValueError(f"Recommender: item {item!r} is out of range [0, {self.items})")

    def predict(self, user: int, item: int) -> float:
        """The score U[user] . V[item]."""
        self._check(user, item)
        return math.fsum(a * b for a, b in zip(self._u[user], self._v[item]))

    def train_epoch(self, ratings: Iterable[tuple[int, int, float]]) -> RecEpochReport:
        """One pass of online SGD on 1/2 (U[u].V[i] - r)^2 + reg/2 (|U[u]|^2 + |V[i]|^2) over the
        ratings in order. Nothing changes when a rating is invalid."""
        triples = [(int(u), int(i), float(r)) for u, i, r in ratings]
        if not triples:
            raise ValueError("Recommender.train_epoch: no ratings")
        for u, i, r in triples:
            self._check(u, i)
            if not math.isfinite(r):
                raise ValueError(f"Recommender.train_epoch: rating {r} for ({u}, {i}) is not finite")
        U = [row[:] for row in self._u]
        V = [row[:] for row in self._v]
        lr, reg = self.learning_rate, self.regularization
        sq = pen = 0.0
        for u, i, r in triples:
            e = math.fsum(a * b for a, b in zip(U[u], V[i])) - r
            sq += e * e
            for f in range(self.factors):
                uf, vf = U[u][f], V[i][f]
                U[u][f] = _guard(uf - lr * (e * vf + reg * uf))
                V[i][f] = _guard(vf - lr * (e * uf + reg * vf))
                pen += reg * (uf * uf + vf * vf)
        self._u, self._v = U, V
        n = len(triples)
        return RecEpochReport(math.sqrt(sq / n), n, pen / n)

    def recommend_top_k(self, user: int, k: int, exclude: Iterable[int] | None = None) -> list[tuple[int, float]]:
        """The ``k`` best-scoring items for ``user`` (not in ``exclude``) as (item, score), best first;
        ties keep the lower item id first."""
        if k == 0:
            return []
        self._check(user)
        skip = set(exclude or ())
        scored = [(i, self.predict(user, i)) for i in range(self.items) if i not in skip]
        scored.sort(key=lambda p: -p[1])  # stable: equal scores stay in item order
        return scored[:k]

    def user_embedding(self, user: int) -> _core.Tensor:
        self._check(user)
        return _core.Tensor(1, self.factors, list(self._u[user]))

    def item_embedding(self, item: int) -> _core.Tensor:
        self._check(0, item)
        return _core.Tensor(1, self.factors, list(self._v[item]))


# SpiralTorchRec and ImplicitRecommender need NumPy; they load on first use so that
# `import spiraltorch` stays free of NumPy (tests/python/test_interop.py).
_LAZY = ("ImplicitRecommender", "SpiralTorchRec")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import _rec_mf

        return getattr(_rec_mf, name)
    raise AttributeError(f"module 'spiraltorch.rec' has no attribute {name!r}")
