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
from typing import Any, Iterable

import numpy as np

from . import _core

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


def _columns(who: str, ratings: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(users, items, values) from (user, item, value) triples, an [n, 3] array, or a 3-tuple of arrays."""
    if isinstance(ratings, tuple) and len(ratings) == 3 and all(np.ndim(c) == 1 for c in ratings):
        u, i, v = (np.asarray(c) for c in ratings)
    else:
        a = np.asarray(list(ratings) if not isinstance(ratings, np.ndarray) else ratings, dtype=np.float64)
        if a.ndim != 2 or a.shape[1] != 3:
            raise ValueError(f"{who}: ratings must be (user, item, value) triples, got an array of shape {a.shape}")
        u, i, v = a[:, 0], a[:, 1], a[:, 2]
    if not (len(u) == len(i) == len(v)):
        raise ValueError(f"{who}: users, items and values have {len(u)}, {len(i)} and {len(v)} entries")
    for name, c in (("user", u), ("item", i)):
        if len(c) and not np.all(np.asarray(c, np.float64) == np.round(np.asarray(c, np.float64))):
            raise ValueError(f"{who}: {name} ids must be integers")
    return np.asarray(u, np.int64), np.asarray(i, np.int64), np.asarray(v, np.float32)


class SpiralTorchRec:
    """Biased matrix factorisation for explicit ratings.

    ``SpiralTorchRec(users, items, factors=32, solver="sgd", lr=0.005, reg=0.02, reg_bias=0.02,
    epochs=20, shuffle=True, init_std=0.1, seed=0)``. Predictions are mu + b_u + b_i + p_u . q_i.

    ``solver="sgd"``: per rating e = r - r_hat, b += lr (e - reg_bias b), p_u += lr (e q_i - reg p_u),
    q_i += lr (e p_u - reg q_i) (visiting the ratings in a fresh permutation each epoch, seeded by
    (seed, epoch), when ``shuffle``). ``solver="als"``: each epoch solves every user's (b_u, p_u) exactly given the items,
    then every item's (b_i, q_i) given the users, with penalties n (reg_bias b^2 + reg |p|^2) where
    n is the row's rating count. Factors start ~ N(0, init_std^2) from ``seed``.
    """

    def __init__(self, users: int, items: int, factors: int = 32, solver: str = "sgd", lr: float = 0.005,
                 reg: float = 0.02, reg_bias: float = 0.02, epochs: int = 20, shuffle: bool = True,
                 init_std: float = 0.1, seed: int = 0) -> None:
        if solver not in ("sgd", "als"):
            raise ValueError(f"SpiralTorchRec: solver must be 'sgd' or 'als', got {solver!r}")
        if not isinstance(epochs, int) or epochs <= 0:
            raise ValueError(f"SpiralTorchRec: epochs must be a positive int, got {epochs!r}")
        for name, v in (("lr", lr), ("reg", reg), ("reg_bias", reg_bias)):
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"SpiralTorchRec: {name} must be finite and >= 0, got {v}")
        self.model = _core.rec.BiasedMF(users, items, factors, seed, init_std)
        self.solver, self.lr, self.reg, self.reg_bias = solver, float(lr), float(reg), float(reg_bias)
        self.epochs, self.shuffle, self.seed = epochs, shuffle, seed
        self.history: list[float] = []

    users = property(lambda self: self.model.users)
    items = property(lambda self: self.model.items)
    factors = property(lambda self: self.model.factors)
    global_mean = property(lambda self: self.model.global_mean)

    def fit(self, ratings: Any, epochs: int | None = None) -> list[float]:
        """Trains for ``epochs`` (default: the constructor's) and returns the training RMSE of each
        epoch. Ratings: (user, item, value) triples, an [n, 3] array or (users, items, values)."""
        u, i, v = _columns("SpiralTorchRec.fit", ratings)
        n_epochs = self.epochs if epochs is None else epochs
        out = []
        for _ in range(n_epochs):
            if self.solver == "sgd":
                order = (np.random.default_rng((self.seed, len(self.history))).permutation(len(v))
                         if self.shuffle else None)
                out.append(self.model.sgd_epoch(u, i, v, self.lr, self.reg, self.reg_bias, order))
            else:
                out.append(self.model.als_sweep(u, i, v, self.reg, self.reg_bias))
            self.history.append(out[-1])
        return out

    def predict(self, user: int, item: int) -> float:
        """The predicted rating of ``item`` by ``user``."""
        return float(self.model.predict(user, item))

    def predict_many(self, users: Any, items: Any) -> np.ndarray:
        """Predicted ratings for paired arrays of users and items (float32 NumPy array)."""
        return self.model.predict_many(np.asarray(users, np.int64), np.asarray(items, np.int64)).numpy()

    def rmse(self, ratings: Any) -> float:
        """Root mean squared error of the predictions on ``ratings``."""
        return float(self.model.rmse(*_columns("SpiralTorchRec.rmse", ratings)))

    def recommend_top_k(self, user: int, k: int, exclude: Iterable[int] | None = None) -> list[tuple[int, float]]:
        """The ``k`` items with the highest predicted rating for ``user`` (not in ``exclude``), best first."""
        return [(int(a), float(b)) for a, b in self.model.top_k(user, k, None if exclude is None else list(exclude))]

    def user_embedding(self, user: int) -> _core.Tensor:
        """p_user as a 1 x factors tensor."""
        if not 0 <= user < self.users:
            raise ValueError(f"SpiralTorchRec: user {user!r} is out of range [0, {self.users})")
        return self.model.user_factors[user:user + 1]

    def item_embedding(self, item: int) -> _core.Tensor:
        """q_item as a 1 x factors tensor."""
        if not 0 <= item < self.items:
            raise ValueError(f"SpiralTorchRec: item {item!r} is out of range [0, {self.items})")
        return self.model.item_factors[item:item + 1]

    def biases(self) -> tuple[np.ndarray, np.ndarray]:
        """(user biases, item biases) as NumPy arrays."""
        return self.model.user_bias.numpy(), self.model.item_bias.numpy()


class ImplicitRecommender:
    """Implicit-feedback top-k recommendation by weighted ALS (Hu, Koren, Volinsky 2008).

    ``ImplicitRecommender(users, items, factors=32, reg=0.01, alpha=40.0, sweeps=10, seed=0)``.
    An observed (user, item, strength) pair has preference 1 and confidence 1 + alpha * strength;
    every unobserved pair has preference 0 and confidence 1. Scores are x_u . y_i.
    """

    def __init__(self, users: int, items: int, factors: int = 32, reg: float = 0.01, alpha: float = 40.0,
                 sweeps: int = 10, seed: int = 0) -> None:
        if not isinstance(sweeps, int) or sweeps <= 0:
            raise ValueError(f"ImplicitRecommender: sweeps must be a positive int, got {sweeps!r}")
        self.model = _core.rec.ImplicitALS(users, items, factors, reg, alpha, seed)
        self.sweeps = sweeps
        self._seen: dict[int, list[int]] = {}

    users = property(lambda self: self.model.users)
    items = property(lambda self: self.model.items)

    def fit(self, interactions: Any, sweeps: int | None = None) -> list[float]:
        """Runs ALS sweeps over (user, item, strength) interactions; returns the loss after each."""
        u, i, v = _columns("ImplicitRecommender.fit", interactions)
        losses = [self.model.sweep(u, i, v) for _ in range(self.sweeps if sweeps is None else sweeps)]
        seen: dict[int, list[int]] = {}
        for a, b in zip(u.tolist(), i.tolist()):
            seen.setdefault(a, []).append(b)
        self._seen = seen
        return losses

    def score(self, user: int, item: int) -> float:
        """x_user . y_item."""
        return float(self.model.score(user, item))

    def recommend_top_k(self, user: int, k: int, exclude_seen: bool = True,
                        exclude: Iterable[int] | None = None) -> list[tuple[int, float]]:
        """The ``k`` best-scoring items for ``user``, best first; skips the items the user interacted
        with in ``fit`` when ``exclude_seen``, and any in ``exclude``."""
        skip = list(exclude or ())
        if exclude_seen:
            skip += self._seen.get(user, [])
        return [(int(a), float(b)) for a, b in self.model.top_k(user, k, skip)]
