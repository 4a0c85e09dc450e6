"""Poincare-ball geometry of curvature c < 0 (k = -c), row-wise."""

from collections.abc import Callable

import numpy.typing

import spiraltorch._core


def mobius_add(x: spiraltorch._core.Tensor, y: spiraltorch._core.Tensor, curvature: float) -> spiraltorch._core.Tensor:
    """x (+) y, Mobius addition in the ball of curvature c."""

def expmap0(v: spiraltorch._core.Tensor, curvature: float) -> spiraltorch._core.Tensor:
    """
    exp_0(v) = tanh(sqrt(k)|v|) v / (sqrt(k)|v|): tangent vectors at the origin into the ball.
    """

def logmap0(y: spiraltorch._core.Tensor, curvature: float) -> spiraltorch._core.Tensor:
    """log_0(y), the inverse of expmap0."""

def expmap(x: spiraltorch._core.Tensor, v: spiraltorch._core.Tensor, curvature: float) -> spiraltorch._core.Tensor:
    """
    exp_x(v): the point reached from x along the geodesic with initial velocity v.
    """

def logmap(x: spiraltorch._core.Tensor, y: spiraltorch._core.Tensor, curvature: float) -> spiraltorch._core.Tensor:
    """log_x(y), the inverse of expmap at x."""

def poincare_distance(x: spiraltorch._core.Tensor, y: spiraltorch._core.Tensor, curvature: float) -> spiraltorch._core.Tensor:
    """Geodesic distance per row: (2/sqrt(k)) artanh(sqrt(k) |(-x) (+) y|)."""

def clip_to_ball(x: spiraltorch._core.Tensor, curvature: float, eps: float = 1e-05) -> spiraltorch._core.Tensor:
    """
    Rows with norm above (1 - eps)/sqrt(k) scaled back onto that radius (idempotent).
    """

def conformal_factor(x: spiraltorch._core.Tensor, curvature: float) -> spiraltorch._core.Tensor:
    """
    lambda_x = 2 / (1 - k|x|^2) per row (kept as a trailing dim of size 1).
    """

def egrad2rgrad(x: spiraltorch._core.Tensor, grad: spiraltorch._core.Tensor, curvature: float) -> spiraltorch._core.Tensor:
    """The Riemannian gradient g / lambda_x^2 of a Euclidean gradient g at x."""

def gyration(a: spiraltorch._core.Tensor, b: spiraltorch._core.Tensor, w: spiraltorch._core.Tensor, curvature: float) -> spiraltorch._core.Tensor:
    """gyr[a, b] w: a (+) (b (+) w) = (a (+) b) (+) gyr[a, b] w."""

def parallel_transport(x: spiraltorch._core.Tensor, y: spiraltorch._core.Tensor, v: spiraltorch._core.Tensor, curvature: float) -> spiraltorch._core.Tensor:
    """
    Transports the tangent vector v at x to y along the geodesic (keeps its Riemannian norm).
    """

def rsgd_step(x: spiraltorch._core.Tensor, euclidean_grad: spiraltorch._core.Tensor, curvature: float, lr: float) -> spiraltorch._core.Tensor:
    """
    One Riemannian SGD step x <- clip(exp_x(-lr (1 - k|x|^2)^2 g)); from the origin it is exp_0(-lr g).
    """

class PoincareEmbedding:
    """
    Poincare embeddings of a hierarchy (Nickel & Kiela 2017): num_nodes points of the ball of curvature c,
    trained so each node lies close to its ancestors and far from nodes it is not connected to.
    """

    def __init__(self, num_nodes: int, dim: int, curvature: float = -1.0, seed: int = 0, *, geometry: str = 'poincare') -> None:
        """
        Rows start uniform in [-1e-3, 1e-3]^dim, drawn from `seed`. geometry='euclidean' is the paper's
        baseline: d(u, v) = |u - v|^2 and plain SGD in R^dim, everything else the same.
        """

    def fit(self, edges: spiraltorch._core.Tensor | numpy.typing.ArrayLike, epochs: int = 50, lr: float = 0.3, negatives: int = 50, burn_in: int = 10, batch_size: int = 10, threads: int = 0, callback: Callable[[int, float, float], None] | None = None, verbose: bool = False, *, burn_in_sampling: str = 'degree', sampling: str = 'uniform', schedule: str = 'constant', final_lr_fraction: float = 0.0, max_seconds: float | None = None) -> list[dict[str, float]]:
        """
        Trains on edges, an (E, 2) int64 tensor of (node, ancestor) pairs of the transitive closure: softmax
        loss of the true ancestor against `negatives` sampled non-ancestors, Riemannian SGD on mini-batches
        (lr / 10 for the first `burn_in` epochs), multi-threaded with the GIL released.
        Negatives are drawn uniformly, or ('degree') in proportion to degree^0.75 as the paper does during
        burn-in (burn_in_sampling='degree', the default). schedule='linear' decays the lr after burn-in to
        lr * final_lr_fraction at the end of the run; 'constant' (default) keeps it. max_seconds bounds the
        wall time: training stops after the epoch that reaches it (the linear decay then follows the budget).
        callback(epoch, loss, seconds) runs after each epoch; verbose prints a line per epoch. Deterministic
        given the seed at any thread count (for a fixed number of epochs); on error (or an exception in the
        callback) the weights are unchanged. Returns one dict per epoch (epoch, loss, seconds, lr,
        skipped_batches).
        """

    def load_weight(self, weight: spiraltorch._core.Tensor) -> None:
        """
        Replaces the weights (e.g. a checkpoint): (num_nodes, dim), finite, rows inside the ball for the
        Poincare geometry; checked before anything changes.
        """

    @property
    def geometry(self) -> str:
        """'poincare' or 'euclidean' (the paper's baseline)."""

    @property
    def weight(self) -> spiraltorch._core.Tensor:
        """(num_nodes, dim) float64 tensor, rows = nodes."""

    @property
    def num_nodes(self) -> int:
        """The number of embedded nodes (rows of weight)."""

    @property
    def dim(self) -> int:
        """The embedding dimension (columns of weight)."""

    @property
    def curvature(self) -> float:
        """The ball's curvature c < 0."""

    @property
    def seed(self) -> int:
        """The seed of the initial weights and of the sampling."""

    def __repr__(self) -> str: ...

def reconstruction_metrics(weight: spiraltorch._core.Tensor, edges: spiraltorch._core.Tensor | numpy.typing.ArrayLike, curvature: float = -1.0, *, geometry: str = 'poincare') -> dict[str, float]:
    """
    The authors' reconstruction protocol: each node's ancestors ranked by Poincare (or, with
    geometry='euclidean', Euclidean) distance among the nodes
    that are not its ancestors. Returns dict(mean_rank= (over all pairs), map= (mean over nodes), nodes=, pairs=).
    """
