"""The NumPy-facing recommenders of ``spiraltorch.rec`` (loaded on first use): ``SpiralTorchRec``
(biased matrix factorisation by SGD or ALS) and ``ImplicitRecommender`` (weighted ALS), both
computed in C++ (``spiraltorch._core.rec``)."""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from . import _core

__all__ = ["ImplicitRecommender", "SpiralTorchRec"]


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
