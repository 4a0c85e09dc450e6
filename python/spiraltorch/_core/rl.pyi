"""Per-step RL numerics: discounted returns, GAE, replay buffer."""

import spiraltorch._core


def discounted_returns(rewards: object, dones: object, bootstrap: object | None = None, gamma: float = 0.9900000095367432) -> spiraltorch._core.Tensor:
    """
    G_t = r_t + gamma (1 - done_t) G_{t+1} over [steps] or [steps, envs] arrays, G after the last step = bootstrap (zeros when None). Returns a float32 tensor shaped like rewards.
    """

def gae(rewards: object, values: object, next_values: object, terminated: object, episode_end: object, gamma: float = 0.9900000095367432, lam: float = 0.949999988079071) -> tuple:
    """
    Generalised advantage estimation over [steps] or [steps, envs] arrays: delta_t = r_t + gamma (1 - terminated_t) next_value_t - value_t, A_t = delta_t + gamma lam (1 - episode_end_t) A_{t+1}. Returns (advantages, returns = advantages + values).
    """

class ReplayBuffer:
    """
    Ring buffer of (obs, action, reward, next_obs, terminated) with uniform sampling.
    """

    def __init__(self, capacity: int, obs_dim: int, seed: int = 0) -> None: ...

    def push(self, obs: object, actions: object, rewards: object, next_obs: object, terminated: object) -> None:
        """
        Appends a batch of transitions: obs/next_obs [n, obs_dim], actions/rewards/terminated [n].
        """

    def sample(self, batch: int) -> dict:
        """
        A dict of tensors for `batch` transitions drawn uniformly with replacement.
        """

    def __len__(self) -> int: ...

    def clear(self) -> None: ...

    @property
    def capacity(self) -> int: ...

    @property
    def obs_dim(self) -> int: ...

    @property
    def seed(self) -> int: ...
