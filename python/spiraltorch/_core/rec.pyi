"""Matrix factorisation recommenders: biased MF (SGD, ALS), implicit ALS."""

import numpy.typing

import spiraltorch._core


class BiasedMF:
    """r_hat(u, i) = mu + b_u + b_i + p_u . q_i, trained by SGD or ALS."""

    def __init__(self, users: int, items: int, factors: int, seed: int = 0, init_std: float = 0.1) -> None: ...

    def fit_global_mean(self, users: spiraltorch._core.Tensor | numpy.typing.ArrayLike, items: spiraltorch._core.Tensor | numpy.typing.ArrayLike, values: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> None:
        """
        Sets global_mean (mu) to the mean of values; users/items are int64 indices, one per rating.
        """

    def sgd_epoch(self, users: spiraltorch._core.Tensor | numpy.typing.ArrayLike, items: spiraltorch._core.Tensor | numpy.typing.ArrayLike, values: spiraltorch._core.Tensor | numpy.typing.ArrayLike, lr: float, reg: float, reg_bias: float, order: spiraltorch._core.Tensor | numpy.typing.ArrayLike | None = None) -> float:
        """
        One SGD pass over the ratings (users, items, values: equal-length 1-d arrays), in `order` (a permutation of their indices) when given: e = r - r_hat; b_u += lr (e - reg_bias b_u); b_i likewise; p_u += lr (e q_i - reg p_u); q_i += lr (e p_u - reg q_i). Sets global_mean first if it was never set. Returns the RMSE of the errors seen (each before its own update).
        """

    def als_sweep(self, users: spiraltorch._core.Tensor | numpy.typing.ArrayLike, items: spiraltorch._core.Tensor | numpy.typing.ArrayLike, values: spiraltorch._core.Tensor | numpy.typing.ArrayLike, reg: float, reg_bias: float) -> float:
        """
        One ALS sweep: each user's (b_u, p_u) is the exact ridge solution given the items, then each item's given the users (penalties scaled by the rating counts). Returns the training RMSE after it.
        """

    def predict(self, user: int, item: int) -> float:
        """r_hat(user, item) = mu + b_u + b_i + p_u . q_i."""

    def predict_many(self, users: spiraltorch._core.Tensor | numpy.typing.ArrayLike, items: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """r_hat for each (users[k], items[k]) pair, a float32 tensor."""

    def rmse(self, users: spiraltorch._core.Tensor | numpy.typing.ArrayLike, items: spiraltorch._core.Tensor | numpy.typing.ArrayLike, values: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> float:
        """The root mean squared error of r_hat on these ratings."""

    def top_k(self, user: int, k: int, exclude: spiraltorch._core.Tensor | numpy.typing.ArrayLike | None = None) -> list[tuple[int, float]]:
        """
        The k best items for user as [(item, predicted rating)], best first, skipping the items in exclude (ties: lower item first).
        """

    @property
    def users(self) -> int:
        """The number of users."""

    @property
    def items(self) -> int:
        """The number of items."""

    @property
    def factors(self) -> int:
        """The latent dimension."""

    @property
    def global_mean(self) -> float:
        """mu, the global rating offset."""

    @global_mean.setter
    def global_mean(self, arg: float, /) -> None: ...

    @property
    def user_factors(self) -> spiraltorch._core.Tensor:
        """P, a (users, factors) float32 copy."""

    @property
    def item_factors(self) -> spiraltorch._core.Tensor:
        """Q, an (items, factors) float32 copy."""

    @property
    def user_bias(self) -> spiraltorch._core.Tensor:
        """b_u per user, a float32 copy."""

    @property
    def item_bias(self) -> spiraltorch._core.Tensor:
        """b_i per item, a float32 copy."""

class ImplicitALS:
    """Implicit-feedback MF by weighted ALS (Hu, Koren, Volinsky 2008)."""

    def __init__(self, users: int, items: int, factors: int, reg: float = 0.01, alpha: float = 40.0, seed: int = 0) -> None: ...

    def sweep(self, users: spiraltorch._core.Tensor | numpy.typing.ArrayLike, items: spiraltorch._core.Tensor | numpy.typing.ArrayLike, values: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> float:
        """
        One weighted-ALS sweep (users, then items) over the observed (user, item, count) triples; returns the weighted loss over all user-item pairs after it.
        """

    def score(self, user: int, item: int) -> float:
        """The preference x_u . y_i."""

    def top_k(self, user: int, k: int, exclude: spiraltorch._core.Tensor | numpy.typing.ArrayLike | None = None) -> list[tuple[int, float]]:
        """
        The k best items for user as [(item, score)], best first, skipping the items in exclude.
        """

    @property
    def users(self) -> int:
        """The number of users."""

    @property
    def items(self) -> int:
        """The number of items."""

    @property
    def factors(self) -> int:
        """The latent dimension."""

    @property
    def user_factors(self) -> spiraltorch._core.Tensor:
        """X, a (users, factors) float32 copy."""

    @property
    def item_factors(self) -> spiraltorch._core.Tensor:
        """Y, an (items, factors) float32 copy."""
