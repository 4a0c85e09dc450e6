"""Per-step RL numerics: discounted returns, GAE, replay buffer."""

import numpy.typing

import spiraltorch._core


def discounted_returns(rewards: spiraltorch._core.Tensor | numpy.typing.ArrayLike, dones: spiraltorch._core.Tensor | numpy.typing.ArrayLike, bootstrap: spiraltorch._core.Tensor | numpy.typing.ArrayLike | None = None, gamma: float = 0.99) -> spiraltorch._core.Tensor:
    """
    G_t = r_t + gamma (1 - done_t) G_{t+1} over [steps] or [steps, envs] arrays, G after the last step = bootstrap (zeros when None). Returns a float32 tensor shaped like rewards.
    """

def gae(rewards: spiraltorch._core.Tensor | numpy.typing.ArrayLike, values: spiraltorch._core.Tensor | numpy.typing.ArrayLike, next_values: spiraltorch._core.Tensor | numpy.typing.ArrayLike, terminated: spiraltorch._core.Tensor | numpy.typing.ArrayLike, episode_end: spiraltorch._core.Tensor | numpy.typing.ArrayLike, gamma: float = 0.99, lam: float = 0.95) -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
    """
    Generalised advantage estimation over [steps] or [steps, envs] arrays: delta_t = r_t + gamma (1 - terminated_t) next_value_t - value_t, A_t = delta_t + gamma lam (1 - episode_end_t) A_{t+1}. Returns (advantages, returns = advantages + values).
    """

class ReplayBuffer:
    """
    Ring buffer of (obs, action, reward, next_obs, terminated) with uniform sampling.
    """

    def __init__(self, capacity: int, obs_dim: int, seed: int = 0) -> None: ...

    def push(self, obs: spiraltorch._core.Tensor | numpy.typing.ArrayLike, actions: spiraltorch._core.Tensor | numpy.typing.ArrayLike, rewards: spiraltorch._core.Tensor | numpy.typing.ArrayLike, next_obs: spiraltorch._core.Tensor | numpy.typing.ArrayLike, terminated: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> None:
        """
        Appends a batch of transitions: obs/next_obs [n, obs_dim], actions (int64)/rewards/terminated [n]; once full, the oldest are overwritten. ShapeError when a size disagrees, ValueError for a negative action or non-finite reward; nothing is written then.
        """

    def sample(self, batch: int) -> dict[str, spiraltorch._core.Tensor]:
        """
        A dict of tensors for `batch` transitions drawn uniformly with replacement: 'obs' and 'next_obs' [batch, obs_dim] float32, 'actions' and 'indices' [batch] int64, 'rewards' and 'terminated' [batch]. ValueError when the buffer is empty or batch <= 0.
        """

    def __len__(self) -> int:
        """The number of stored transitions (at most capacity)."""

    def clear(self) -> None:
        """Drops every stored transition."""

    @property
    def capacity(self) -> int:
        """The most transitions the ring keeps."""

    @property
    def obs_dim(self) -> int:
        """The length of one observation."""

    @property
    def seed(self) -> int:
        """The seed of the sampling generator."""
