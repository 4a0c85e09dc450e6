"""Reinforcement learning (SpiralTorchRL): tabular Q-learning agents (``stAgent``, and ``Agent``
built from an ``AgentConfig``) with an epsilon-greedy exploration schedule, and neural agents
trained with SpiralTorch autograd (``DQN``, ``ReinforceAgent``, ``PpoAgent``) run on Gymnasium
environments by the ``SpiralTorchRL`` harness.

States are integer indices ``0 .. state_dim - 1``. ``update`` applies the Q-learning rule
Q[s, a] += lr (r + gamma max_a' Q[s', a'] - Q[s, a]). The "dqn" algorithm name is kept for
compatibility: the Q function is a table, not a network. Exploration draws come from a
``random.Random`` seeded by ``seed`` (by default from the agent's dimensions, so equal agents
behave alike).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # loaded on first use by __getattr__ at the end (they need NumPy)
    from ._rl_agents import DQN, PpoAgent, ReinforceAgent, ReplayBuffer, discounted_returns, gae
    from ._rl_harness import SpiralTorchRL

__all__ = ["Agent", "AgentConfig", "DQN", "DqnAgent", "EpsilonGreedy", "PpoAgent", "ReinforceAgent", "ReplayBuffer",
           "SpiralTorchRL", "discounted_returns", "gae", "stAgent"]


class EpsilonGreedy:
    """Linear schedule from ``start`` to ``end`` over ``decay_steps`` selections."""

    def __init__(self, start: float, end: float, decay_steps: int) -> None:
        for name, v in (("start", start), ("end", end)):
            if not 0.0 <= float(v) <= 1.0:
                raise ValueError(f"EpsilonGreedy: {name} must be in [0, 1], got {v}")
        self.start, self.end = float(start), float(end)
        self.decay_steps = max(1, int(decay_steps))
        self.step = 0

    def value(self) -> float:
        return self.start + (self.end - self.start) * min(max(self.step / self.decay_steps, 0.0), 1.0)

    def advance(self) -> float:
        self.step = min(self.step + 1, self.decay_steps)
        return self.value()

    def copy(self) -> EpsilonGreedy:
        c = EpsilonGreedy(self.start, self.end, self.decay_steps)
        c.step = self.step
        return c


class stAgent:  # noqa: N801 - the seed's name
    """Tabular Q-learning: ``stAgent(state_dim, action_dim, discount, learning_rate, seed=None)``,
    epsilon 0.1 until ``set_epsilon``/``set_exploration``. Greedy ties pick the highest action."""

    def __init__(self, state_dim: int, action_dim: int, discount: float, learning_rate: float,
                 seed: int | None = None) -> None:
        if not (isinstance(state_dim, int) and state_dim > 0 and isinstance(action_dim, int) and action_dim > 0):
            raise ValueError(f"stAgent: state_dim and action_dim must be positive ints, got {state_dim}, {action_dim}")
        if not 0.0 <= discount <= 1.0:
            raise ValueError(f"stAgent: discount must be in [0, 1], got {discount}")
        if not learning_rate > 0:
            raise ValueError(f"stAgent: learning_rate must be positive, got {learning_rate}")
        self.state_dim, self.action_dim = state_dim, action_dim
        self.discount, self.learning_rate = float(discount), float(learning_rate)
        self._q = [[0.0] * action_dim for _ in range(state_dim)]
        self._eps = 0.1
        self._schedule: EpsilonGreedy | None = None
        self._rng = random.Random(seed if seed is not None else f"st-spiral-rl/dqn:{state_dim}:{action_dim}")

    def _state(self, s: int, what: str = "state") -> int:
        if not (isinstance(s, int) and 0 <= s < self.state_dim):
            raise ValueError(f"stAgent: {what} {s!r} is out of range [0, {self.state_dim})")
        return s

    @property
    def epsilon(self) -> float:
        return self._eps

    def set_epsilon(self, value: float) -> None:
        """Fixed exploration rate (clamped to [0, 1]); removes any schedule."""
        self._eps = min(max(float(value), 0.0), 1.0)
        self._schedule = None

    def set_exploration(self, schedule: EpsilonGreedy) -> None:
        self._schedule = schedule.copy()
        self._eps = self._schedule.value()

    def q_values(self, state: int) -> list[float]:
        return list(self._q[self._state(state)])

    def greedy_action(self, state: int) -> int:
        row = self._q[self._state(state)]
        best = max(row)
        return max(a for a, q in enumerate(row) if q == best)

    def select_action(self, state: int) -> int:
        """Epsilon-greedy action; advances the exploration schedule."""
        self._state(state)
        if self._rng.random() < self._eps:
            action = self._rng.randrange(self.action_dim)
        else:
            action = self.greedy_action(state)
        if self._schedule is not None:
            self._eps = self._schedule.advance()
        return action

    def select_actions(self, states: Sequence[int]) -> list[int]:
        return [self.select_action(s) for s in states]

    def update(self, state: int, action: int, reward: float, next_state: int, done: bool = False) -> float:
        """One Q-learning update; returns the temporal-difference error."""
        s, s2 = self._state(state), self._state(next_state, "next_state")
        if not (isinstance(action, int) and 0 <= action < self.action_dim):
            raise ValueError(f"stAgent: action {action!r} is out of range [0, {self.action_dim})")
        target = float(reward) + (0.0 if done else self.discount * max(self._q[s2]))
        td = target - self._q[s][action]
        self._q[s][action] += self.learning_rate * td
        return td

    def update_batch(self, states: Sequence[int], actions: Sequence[int], rewards: Sequence[float],
                     next_states: Sequence[int], dones: Sequence[bool] | None = None) -> None:
        n = len(states)
        dones = list(dones) if dones is not None else [False] * n
        if not (len(actions) == len(rewards) == len(next_states) == len(dones) == n):
            raise ValueError("stAgent.update_batch: all sequences must have the same length")
        for s, a, r, s2, d in zip(states, actions, rewards, next_states, dones):
            self.update(s, a, r, s2, d)

    def state_dict(self) -> dict[str, Any]:
        sched = None if self._schedule is None else {"start": self._schedule.start, "end": self._schedule.end,
                                                     "steps": self._schedule.decay_steps,
                                                     "step": self._schedule.step}
        return {"state_dim": self.state_dim, "action_dim": self.action_dim, "discount": self.discount,
                "learning_rate": self.learning_rate, "epsilon": self._eps,
                "table": [q for row in self._q for q in row], "epsilon_schedule": sched}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        table = state.get("table")
        if table is not None and len(table) != self.state_dim * self.action_dim:
            raise ValueError(f"stAgent.load_state_dict: table has {len(table)} entries, expected "
                             f"{self.state_dim * self.action_dim}")
        if "epsilon" in state:
            self.set_epsilon(state["epsilon"])
        if table is not None:
            a = self.action_dim
            self._q = [list(map(float, table[i * a:(i + 1) * a])) for i in range(self.state_dim)]
        sched = state.get("epsilon_schedule")
        if sched is not None:
            s = EpsilonGreedy(sched["start"], sched["end"], sched["steps"])
            s.step = min(int(sched["step"]), s.decay_steps)
            self._schedule, self._eps = s, s.value()


DqnAgent = stAgent


class AgentConfig:
    """``AgentConfig(algo, state_dim, action_dim, gamma, lr, exploration=None, seed=None)``; only the
    tabular "dqn" algorithm exists."""

    def __init__(self, algo: str, state_dim: int, action_dim: int, gamma: float, lr: float,
                 exploration: EpsilonGreedy | None = None, seed: int | None = None) -> None:
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"AgentConfig: gamma must be in [0, 1], got {gamma}")
        if not lr > 0:
            raise ValueError(f"AgentConfig: lr must be positive, got {lr}")
        self.algo, self.state_dim, self.action_dim = str(algo).lower(), state_dim, action_dim
        self.gamma, self.lr, self.seed = float(gamma), float(lr), seed
        self.exploration = exploration.copy() if exploration is not None else None


class Agent(stAgent):
    """An agent built from an ``AgentConfig`` (its exploration schedule installed)."""

    def __init__(self, config: AgentConfig) -> None:
        if config.algo != "dqn":
            raise ValueError(f"Agent: unsupported algorithm '{config.algo}' (only 'dqn', tabular Q-learning)")
        super().__init__(config.state_dim, config.action_dim, config.gamma, config.lr, seed=config.seed)
        self.config = config
        if config.exploration is not None:
            self.set_exploration(config.exploration)

    @property
    def algo(self) -> str:
        return self.config.algo


# The neural agents need NumPy; they load on first use so that `import spiraltorch` stays free
# of NumPy (tests/python/test_interop.py). They import EpsilonGreedy from this module.
_NEURAL = ("DQN", "PpoAgent", "ReinforceAgent", "ReplayBuffer", "discounted_returns", "gae")


def __getattr__(name: str) -> Any:
    if name in _NEURAL:
        from . import _rl_agents

        return getattr(_rl_agents, name)
    if name == "SpiralTorchRL":
        from ._rl_harness import SpiralTorchRL

        return SpiralTorchRL
    raise AttributeError(f"module 'spiraltorch.spiral_rl' has no attribute {name!r}")
