"""Neural RL agents trained with SpiralTorch autograd and optimizers: DQN (replay buffer, target
network, Huber loss, double-Q targets), REINFORCE with a learned value baseline, and PPO (clipped
surrogate objective, GAE). Observations are flat float vectors, actions are discrete.

The per-step numerics (replay storage and sampling, discounted returns, GAE) run in C++
(``spiraltorch._core.rl``); networks, losses and optimizers are SpiralTorch's. Each agent builds
its networks from its own ``seed`` (the global generator is restored afterwards) and draws its
exploration/sampling randomness from a NumPy generator seeded with the same value.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from . import _core
from . import nn as _nn
from . import optim as _optim
from .autograd import no_grad as _no_grad
from .spiral_rl import EpsilonGreedy

__all__ = ["DQN", "PpoAgent", "ReinforceAgent", "ReplayBuffer", "discounted_returns", "gae"]

ReplayBuffer = _core.rl.ReplayBuffer


def discounted_returns(rewards: Any, dones: Any, bootstrap: Any = None, gamma: float = 0.99) -> np.ndarray:
    """G_t = r_t + gamma (1 - done_t) G_{t+1} over [steps] or [steps, envs] arrays (C++); the value
    after the last step is ``bootstrap`` (zeros when None). Returns a float32 NumPy array."""
    return _core.rl.discounted_returns(np.asarray(rewards, np.float32), np.asarray(dones, np.float32),
                                       None if bootstrap is None else np.asarray(bootstrap, np.float32),
                                       gamma).numpy()


def gae(rewards: Any, values: Any, next_values: Any, terminated: Any, episode_end: Any, gamma: float = 0.99,
        lam: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Generalised advantage estimation (C++) over [steps] or [steps, envs] arrays.

    ``next_values[t]`` is V of the observation after step t (the final observation of a truncated
    episode); ``terminated`` stops bootstrapping, ``episode_end`` (terminated or truncated) stops the
    recursion. Returns ``(advantages, returns)`` with returns = advantages + values."""
    f = lambda a: np.asarray(a, np.float32)  # noqa: E731
    adv, ret = _core.rl.gae(f(rewards), f(values), f(next_values), f(terminated), f(episode_end), gamma, lam)
    return adv.numpy(), ret.numpy()


def _mlp(sizes: Sequence[int], activation: str = "tanh") -> _nn.Sequential:
    act = {"tanh": _nn.Tanh, "relu": _nn.ReLU}[activation]
    layers: list[Any] = []
    for k in range(len(sizes) - 1):
        layers.append(_nn.Linear(sizes[k], sizes[k + 1]))
        if k < len(sizes) - 2:
            layers.append(act())
    return _nn.Sequential(*layers)


def _seeded(seed: int, build):
    """Runs ``build()`` with the global generator at ``seed``, then restores the generator."""
    state = _core._get_rng_state()
    _core.manual_seed(int(seed))
    try:
        return build()
    finally:
        _core._set_rng_state(*state)


def _check_dims(who: str, obs_dim: int, n_actions: int) -> None:
    for name, v in (("obs_dim", obs_dim), ("n_actions", n_actions)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v <= 0:
            raise ValueError(f"{who}: {name} must be a positive int, got {v!r}")


def _check_positive(who: str, **values: float) -> None:
    for name, v in values.items():
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ValueError(f"{who}: {name} must be a positive number, got {v!r}")


class _Agent:
    obs_dim: int
    n_actions: int
    name = "agent"

    def _obs(self, obs: Any, batch: bool = False) -> np.ndarray:
        a = np.asarray(obs, dtype=np.float32)
        want = 2 if batch else 1
        if a.ndim != want or a.shape[-1] != self.obs_dim:
            shape = f"(n, {self.obs_dim})" if batch else f"({self.obs_dim},)"
            raise ValueError(f"{self.name}: observation has shape {a.shape}, expected {shape}")
        if not np.isfinite(a).all():
            raise ValueError(f"{self.name}: observation {a.tolist()} is not finite")
        return a

    def _action(self, action: Any) -> int:
        if not isinstance(action, (int, np.integer)) or isinstance(action, bool) or not 0 <= action < self.n_actions:
            raise ValueError(f"{self.name}: action {action!r} is out of range [0, {self.n_actions})")
        return int(action)


class DQN(_Agent):
    """Deep Q-network (Mnih et al. 2015) with double-Q targets (van Hasselt et al. 2016).

    ``DQN(obs_dim, n_actions, hidden=(256, 256), lr=2.3e-3, gamma=0.99, buffer_size=100_000,
    batch_size=64, learning_starts=1000, train_freq=256, gradient_steps=128, target_sync=128,
    exploration=EpsilonGreedy(1.0, 0.04, 8000), huber_delta=1.0, max_grad_norm=10.0, seed=0)``
    (defaults: the CartPole settings of the RL Baselines3 Zoo).

    Loss per sampled transition: Huber(Q(s, a) - y) with y = r + gamma (1 - terminated)
    Q_target(s', argmax_a' Q(s', a')). Every ``train_freq`` observed steps it takes
    ``gradient_steps`` Adam steps; the target network copies the online one every
    ``target_sync`` gradient steps.
    """

    name = "DQN"

    def __init__(self, obs_dim: int, n_actions: int, hidden: Sequence[int] = (256, 256), lr: float = 2.3e-3,
                 gamma: float = 0.99, buffer_size: int = 100_000, batch_size: int = 64, learning_starts: int = 1000,
                 train_freq: int = 256, gradient_steps: int = 128, target_sync: int = 128,
                 exploration: EpsilonGreedy | None = None, huber_delta: float = 1.0, max_grad_norm: float = 10.0,
                 double: bool = True, seed: int = 0) -> None:
        _check_dims("DQN", obs_dim, n_actions)
        _check_positive("DQN", lr=lr, huber_delta=huber_delta, max_grad_norm=max_grad_norm)
        for name, v in (("batch_size", batch_size), ("train_freq", train_freq), ("gradient_steps", gradient_steps),
                        ("target_sync", target_sync), ("buffer_size", buffer_size)):
            if not isinstance(v, int) or v <= 0:
                raise ValueError(f"DQN: {name} must be a positive int, got {v!r}")
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"DQN: gamma must be in [0, 1], got {gamma}")
        self.obs_dim, self.n_actions, self.gamma = int(obs_dim), int(n_actions), float(gamma)
        self.batch_size, self.learning_starts = batch_size, int(learning_starts)
        self.train_freq, self.gradient_steps, self.target_sync = train_freq, gradient_steps, target_sync
        self.huber_delta, self.max_grad_norm, self.double, self.seed = float(huber_delta), float(max_grad_norm), double, seed
        sizes = [self.obs_dim, *hidden, self.n_actions]
        self.q_net = _seeded(seed, lambda: _mlp(sizes, "relu"))
        self.target_net = _seeded(seed, lambda: _mlp(sizes, "relu"))
        self.target_net.load_state_dict(self.q_net.state_dict())
        self.optimizer = _optim.Adam(self.q_net.parameters(), lr=lr)
        self.buffer = ReplayBuffer(buffer_size, self.obs_dim, seed)
        self.exploration = (exploration or EpsilonGreedy(1.0, 0.04, 8000)).copy()
        self.epsilon = self.exploration.value()
        self.rng = np.random.default_rng(seed)
        self.steps = 0
        self.updates = 0

    def q_values(self, obs: Any) -> np.ndarray:
        """Q(s, .) of one observation (or a batch [n, obs_dim]) as a NumPy array."""
        a = np.asarray(obs, np.float32)
        x = self._obs(a, batch=a.ndim == 2)
        with _no_grad():
            q = self.q_net(_core.tensor(x.reshape(-1, self.obs_dim))).numpy()
        return q if a.ndim == 2 else q[0]

    def act(self, obs: Any, explore: bool = True) -> int:
        """Epsilon-greedy action (greedy when ``explore`` is False); exploring advances the schedule."""
        q = self.q_values(obs)
        if explore:
            eps = self.epsilon
            self.epsilon = self.exploration.advance()
            if self.rng.random() < eps:
                return int(self.rng.integers(self.n_actions))
        return int(np.argmax(q))

    def observe(self, obs: Any, action: int, reward: float, next_obs: Any, terminated: bool) -> float | None:
        """Stores the transition; trains when due. Returns the mean loss of the training done, else None."""
        o, o2, a = self._obs(obs), self._obs(next_obs), self._action(action)
        if not math.isfinite(float(reward)):
            raise ValueError(f"DQN: reward {reward!r} is not finite")
        self.buffer.push(o[None], np.array([a], np.int64), np.array([reward], np.float32), o2[None],
                         np.array([float(bool(terminated))], np.float32))
        self.steps += 1
        if self.steps < self.learning_starts or self.steps % self.train_freq:
            return None
        return float(np.mean([self.train_step() for _ in range(self.gradient_steps)]))

    def train_step(self) -> float:
        """One Adam step on a sampled batch; returns the Huber loss."""
        b = self.buffer.sample(self.batch_size)
        with _no_grad():
            q_next_target = self.target_net(b["next_obs"])
            if self.double:
                best = self.q_net(b["next_obs"]).argmax(1).unsqueeze(1)
            else:
                best = q_next_target.argmax(1).unsqueeze(1)
            next_q = q_next_target.gather(1, best).squeeze(1)
            target = b["rewards"] + self.gamma * (1.0 - b["terminated"]) * next_q
        q = self.q_net(b["obs"]).gather(1, b["actions"].unsqueeze(1)).squeeze(1)
        loss = _nn.huber_loss(q, target, delta=self.huber_delta)
        self.optimizer.zero_grad()
        loss.backward()
        _optim.clip_grad_norm_(self.q_net.parameters(), self.max_grad_norm)
        self.optimizer.step()
        self.updates += 1
        if self.updates % self.target_sync == 0:
            self.sync_target()
        return float(loss.item())

    def sync_target(self) -> None:
        """Copies the online network's weights into the target network."""
        self.target_net.load_state_dict(self.q_net.state_dict())

    def state_dict(self) -> dict[str, Any]:
        """Copies of both networks' weights and the counters."""
        return {"q_net": {k: v.clone() for k, v in self.q_net.state_dict().items()},
                "target_net": {k: v.clone() for k, v in self.target_net.state_dict().items()},
                "epsilon": self.epsilon, "steps": self.steps, "updates": self.updates}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.q_net.load_state_dict(state["q_net"])
        self.target_net.load_state_dict(state.get("target_net", state["q_net"]))
        self.epsilon = float(state.get("epsilon", self.epsilon))
        self.steps, self.updates = int(state.get("steps", self.steps)), int(state.get("updates", self.updates))


class _PolicyAgent(_Agent):
    """A softmax policy network and a value network."""

    def _build(self, hidden: Sequence[int], seed: int) -> None:
        self.policy = _seeded(seed, lambda: _mlp([self.obs_dim, *hidden, self.n_actions]))
        self.value = _seeded(seed + 1, lambda: _mlp([self.obs_dim, *hidden, 1]))
        self.rng = np.random.default_rng(seed)

    def state_dict(self) -> dict[str, Any]:
        """Copies of the policy and value networks' weights."""
        return {"policy": {k: v.clone() for k, v in self.policy.state_dict().items()},
                "value": {k: v.clone() for k, v in self.value.state_dict().items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.policy.load_state_dict(state["policy"])
        self.value.load_state_dict(state["value"])

    def probabilities(self, obs: Any) -> np.ndarray:
        """pi(.|s) for one observation or a batch."""
        a = np.asarray(obs, np.float32)
        x = self._obs(a, batch=a.ndim == 2)
        with _no_grad():
            p = self.policy(_core.tensor(x.reshape(-1, self.obs_dim))).softmax(-1).numpy().astype(np.float64)
        return p if a.ndim == 2 else p[0]

    def values(self, obs: Any) -> np.ndarray:
        """V(s) for a batch of observations [n, obs_dim]."""
        x = self._obs(obs, batch=True)
        with _no_grad():
            return self.value(_core.tensor(x)).numpy()[:, 0]

    def _sample(self, p: np.ndarray) -> np.ndarray:
        p = p / p.sum(-1, keepdims=True)
        u = self.rng.random((p.shape[0], 1))
        return np.minimum((np.cumsum(p, -1) < u).sum(-1), self.n_actions - 1)

    def act(self, obs: Any, explore: bool = True) -> int:
        """A sampled action (the most probable one when ``explore`` is False)."""
        p = self.probabilities(obs)
        return int(self._sample(p[None])[0]) if explore else int(np.argmax(p))


class ReinforceAgent(_PolicyAgent):
    """REINFORCE (Williams 1992) with a learned state-value baseline.

    ``ReinforceAgent(obs_dim, n_actions, hidden=(64,), lr=1e-2, value_lr=1e-2, gamma=0.99,
    normalize=True, seed=0)``. ``finish_episode(observations, actions, rewards)`` computes the
    returns G_t (C++), advantages A_t = G_t - V(s_t) (normalised when ``normalize``), takes one
    Adam step on -mean(log pi(a_t|s_t) A_t) and one on mean((V(s_t) - G_t)^2)."""

    name = "ReinforceAgent"

    def __init__(self, obs_dim: int, n_actions: int, hidden: Sequence[int] = (64,), lr: float = 1e-2,
                 value_lr: float = 1e-2, gamma: float = 0.99, normalize: bool = True, seed: int = 0) -> None:
        _check_dims("ReinforceAgent", obs_dim, n_actions)
        _check_positive("ReinforceAgent", lr=lr, value_lr=value_lr)
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"ReinforceAgent: gamma must be in [0, 1], got {gamma}")
        self.obs_dim, self.n_actions, self.gamma, self.normalize, self.seed = int(obs_dim), int(n_actions), float(gamma), normalize, seed
        self._build(hidden, seed)
        self.policy_opt = _optim.Adam(self.policy.parameters(), lr=lr)
        self.value_opt = _optim.Adam(self.value.parameters(), lr=value_lr)

    def finish_episode(self, observations: Any, actions: Sequence[int], rewards: Sequence[float]) -> dict[str, float]:
        """One policy-gradient update from a finished episode; returns the losses and the return."""
        obs = self._obs(observations, batch=True)
        acts = np.array([self._action(a) for a in actions], np.int64)
        rew = np.asarray(rewards, np.float32)
        if not (len(obs) == len(acts) == len(rew)) or len(obs) == 0:
            raise ValueError(f"ReinforceAgent.finish_episode: {len(obs)} observations, {len(acts)} actions and "
                             f"{len(rew)} rewards; need equal, non-zero lengths")
        dones = np.zeros_like(rew)
        dones[-1] = 1.0
        returns = discounted_returns(rew, dones, gamma=self.gamma)
        x = _core.tensor(obs)
        g = _core.tensor(returns)
        baseline = self.values(obs)
        adv = returns - baseline
        if self.normalize and len(adv) > 1:
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        logp = self.policy(x).log_softmax(-1).gather(1, _core.tensor(acts).unsqueeze(1)).squeeze(1)
        policy_loss = -(logp * _core.tensor(adv.astype(np.float32))).mean()
        self.policy_opt.zero_grad()
        policy_loss.backward()
        self.policy_opt.step()
        value_loss = ((self.value(x).squeeze(1) - g) ** 2).mean()
        self.value_opt.zero_grad()
        value_loss.backward()
        self.value_opt.step()
        return {"policy_loss": float(policy_loss.item()), "value_loss": float(value_loss.item()),
                "return": float(rew.sum())}


class PpoAgent(_PolicyAgent):
    """Proximal policy optimisation (Schulman et al. 2017), clipped objective, GAE advantages.

    ``PpoAgent(state_dim, action_dim, learning_rate=2.5e-4, clip_range=0.2, hidden=(64, 64),
    gamma=0.99, gae_lambda=0.95, epochs=4, minibatches=4, ent_coef=0.01, vf_coef=0.5,
    max_grad_norm=0.5, seed=0)`` (the first four are the seed's ``PpoAgent`` arguments).

    ``update(rollout)`` takes arrays [steps, envs]: ``obs`` [steps, envs, obs_dim], ``actions``,
    ``log_probs`` (of the behaviour policy), ``values``, ``rewards``, ``next_values``,
    ``terminated``, ``episode_end``; computes GAE (C++) and minimises, per minibatch,
    -mean(min(rho A, clip(rho, 1-c, 1+c) A)) + vf_coef mean((V - R)^2) - ent_coef mean(H(pi)).
    """

    name = "PpoAgent"

    def __init__(self, state_dim: int, action_dim: int, learning_rate: float = 2.5e-4, clip_range: float = 0.2,
                 hidden: Sequence[int] = (64, 64), gamma: float = 0.99, gae_lambda: float = 0.95, epochs: int = 4,
                 minibatches: int = 4, ent_coef: float = 0.01, vf_coef: float = 0.5, max_grad_norm: float = 0.5,
                 seed: int = 0) -> None:
        _check_dims("PpoAgent", state_dim, action_dim)
        _check_positive("PpoAgent", learning_rate=learning_rate, clip_range=clip_range, max_grad_norm=max_grad_norm)
        for name, v in (("gamma", gamma), ("gae_lambda", gae_lambda)):
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"PpoAgent: {name} must be in [0, 1], got {v}")
        self.obs_dim, self.n_actions = int(state_dim), int(action_dim)
        self.clip_range, self.gamma, self.gae_lambda = float(clip_range), float(gamma), float(gae_lambda)
        self.epochs, self.minibatches, self.seed = int(epochs), int(minibatches), seed
        self.ent_coef, self.vf_coef, self.max_grad_norm = float(ent_coef), float(vf_coef), float(max_grad_norm)
        self.learning_rate = float(learning_rate)
        self._build(hidden, seed)
        self.params = list(self.policy.parameters()) + list(self.value.parameters())
        self.optimizer = _optim.Adam(self.params, lr=learning_rate, eps=1e-5)

    def set_learning_rate(self, lr: float) -> None:
        """Sets the optimizer's learning rate (for annealing)."""
        _check_positive("PpoAgent", learning_rate=lr)
        for group in self.optimizer.param_groups:
            group["lr"] = float(lr)

    def step(self, obs: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For a batch of observations: sampled actions, their log-probabilities, and V(s)."""
        x = self._obs(obs, batch=True)
        p = self.probabilities(x)
        actions = self._sample(p)
        logp = np.log(p[np.arange(len(actions)), actions] + 1e-12)
        return actions, logp.astype(np.float32), self.values(x)

    def update(self, rollout: dict[str, Any]) -> dict[str, float]:
        """PPO epochs over one rollout; returns mean losses, approximate KL and the clip fraction."""
        obs = np.asarray(rollout["obs"], np.float32)
        steps, envs = np.asarray(rollout["rewards"]).shape
        if obs.shape != (steps, envs, self.obs_dim):
            raise ValueError(f"PpoAgent.update: obs has shape {obs.shape}, expected {(steps, envs, self.obs_dim)}")
        adv, ret = gae(rollout["rewards"], rollout["values"], rollout["next_values"], rollout["terminated"],
                       rollout["episode_end"], self.gamma, self.gae_lambda)
        n = steps * envs
        flat_obs = obs.reshape(n, self.obs_dim)
        acts = np.asarray(rollout["actions"], np.int64).reshape(n)
        if acts.min() < 0 or acts.max() >= self.n_actions:
            raise ValueError(f"PpoAgent.update: actions outside [0, {self.n_actions})")
        old_logp = np.asarray(rollout["log_probs"], np.float32).reshape(n)
        adv, ret = adv.reshape(n), ret.reshape(n)
        size = max(1, n // self.minibatches)
        stats: dict[str, list[float]] = {"policy_loss": [], "value_loss": [], "entropy": [], "approx_kl": [],
                                         "clip_fraction": []}
        c = self.clip_range
        for _ in range(self.epochs):
            order = self.rng.permutation(n)
            for start in range(0, n, size):
                idx = order[start:start + size]
                a = adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                x = _core.tensor(flat_obs[idx])
                logits = self.policy(x)
                logp_all = logits.log_softmax(-1)
                logp = logp_all.gather(1, _core.tensor(acts[idx]).unsqueeze(1)).squeeze(1)
                ratio = (logp - _core.tensor(old_logp[idx])).exp()
                at = _core.tensor(a.astype(np.float32))
                surrogate = _core.minimum(ratio * at, ratio.clamp(1.0 - c, 1.0 + c) * at)
                entropy = -(logp_all.exp() * logp_all).sum(-1).mean()
                v = self.value(x).squeeze(1)
                value_loss = ((v - _core.tensor(ret[idx])) ** 2).mean()
                policy_loss = -surrogate.mean()
                loss = policy_loss + self.vf_coef * value_loss - self.ent_coef * entropy
                self.optimizer.zero_grad()
                loss.backward()
                _optim.clip_grad_norm_(self.params, self.max_grad_norm)
                self.optimizer.step()
                r = ratio.detach().numpy()
                stats["policy_loss"].append(float(policy_loss.item()))
                stats["value_loss"].append(float(value_loss.item()))
                stats["entropy"].append(float(entropy.item()))
                stats["approx_kl"].append(float(np.mean((r - 1) - np.log(r))))
                stats["clip_fraction"].append(float(np.mean(np.abs(r - 1) > c)))
        return {k: float(np.mean(v)) for k, v in stats.items()}
