"""``spiraltorch.rl``: the same module as ``spiraltorch.spiral_rl``."""

from typing import TYPE_CHECKING, Any

from . import spiral_rl as _spiral_rl
from .spiral_rl import Agent, AgentConfig, DqnAgent, EpsilonGreedy, stAgent

if TYPE_CHECKING:  # loaded on first use by __getattr__ below, as in spiral_rl
    from .spiral_rl import DQN, PpoAgent, ReinforceAgent, ReplayBuffer, SpiralTorchRL, discounted_returns, gae

__all__ = ["Agent", "AgentConfig", "DQN", "DqnAgent", "EpsilonGreedy", "PpoAgent", "ReinforceAgent", "ReplayBuffer",
           "SpiralTorchRL", "discounted_returns", "gae", "stAgent"]


def __getattr__(name: str) -> Any:
    # The neural agents load on first use (they need NumPy), as in spiral_rl.
    if name in __all__:
        return getattr(_spiral_rl, name)
    raise AttributeError(f"module 'spiraltorch.rl' has no attribute {name!r}")
