"""``spiraltorch.rl``: the same module as ``spiraltorch.spiral_rl``."""

from .spiral_rl import Agent, AgentConfig, DqnAgent, EpsilonGreedy, stAgent  # noqa: F401

__all__ = ["Agent", "AgentConfig", "DqnAgent", "EpsilonGreedy", "stAgent"]
