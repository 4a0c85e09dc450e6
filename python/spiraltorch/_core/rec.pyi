"""Matrix factorisation recommenders: biased MF (SGD, ALS), implicit ALS."""

import spiraltorch._core


class BiasedMF:
    """r_hat(u, i) = mu + b_u + b_i + p_u . q_i, trained by SGD or ALS."""

    def __init__(self, users: int, items: int, factors: int, seed: int = 0, init_std: float = 0.10000000149011612) -> None: ...

    def fit_global_mean(self, users: object, items: object, values: object) -> None: ...

    def sgd_epoch(self, users: object, items: object, values: object, lr: float, reg: float, reg_bias: float, order: object | None = None) -> float:
        """
        One SGD pass (in `order` when given); returns the RMSE of the errors seen.
        """

    def als_sweep(self, users: object, items: object, values: object, reg: float, reg_bias: float) -> float:
        """One ALS sweep (users then items); returns the training RMSE after it."""

    def predict(self, user: int, item: int) -> float: ...

    def predict_many(self, users: object, items: object) -> spiraltorch._core.Tensor: ...

    def rmse(self, users: object, items: object, values: object) -> float: ...

    def top_k(self, user: int, k: int, exclude: object | None = None) -> list[tuple[int, float]]: ...

    @property
    def users(self) -> int: ...

    @property
    def items(self) -> int: ...

    @property
    def factors(self) -> int: ...

    @property
    def global_mean(self) -> float: ...

    @global_mean.setter
    def global_mean(self, arg: float, /) -> None: ...

    @property
    def user_factors(self) -> spiraltorch._core.Tensor: ...

    @property
    def item_factors(self) -> spiraltorch._core.Tensor: ...

    @property
    def user_bias(self) -> spiraltorch._core.Tensor: ...

    @property
    def item_bias(self) -> spiraltorch._core.Tensor: ...

class ImplicitALS:
    """Implicit-feedback MF by weighted ALS (Hu, Koren, Volinsky 2008)."""

    def __init__(self, users: int, items: int, factors: int, reg: float = 0.009999999776482582, alpha: float = 40.0, seed: int = 0) -> None: ...

    def sweep(self, users: object, items: object, values: object) -> float:
        """One sweep; returns the weighted loss after it."""

    def score(self, user: int, item: int) -> float: ...

    def top_k(self, user: int, k: int, exclude: object | None = None) -> list[tuple[int, float]]: ...

    @property
    def users(self) -> int: ...

    @property
    def items(self) -> int: ...

    @property
    def factors(self) -> int: ...

    @property
    def user_factors(self) -> spiraltorch._core.Tensor: ...

    @property
    def item_factors(self) -> spiraltorch._core.Tensor: ...
