"""``spiraltorch.rl``: the same module as ``spiraltorch.spiral_rl``."""

from .spiral_rl import (  # noqa: F401
    DQN,
    Agent,
    AgentConfig,
    DqnAgent,
    EpsilonGreedy,
    PpoAgent,
    ReinforceAgent,
    ReplayBuffer,
    SpiralTorchRL,
    discounted_returns,
    gae,
    stAgent,
)

__all__ = ["Agent", "AgentConfig", "DQN", "DqnAgent", "EpsilonGreedy", "PpoAgent", "ReinforceAgent", "ReplayBuffer",
           "SpiralTorchRL", "discounted_returns", "gae", "stAgent"]
