"""``SpiralTorchRL``: the loop that runs a neural agent on Gymnasium environments (glue only:
the agents' numerics run in SpiralTorch and in ``spiraltorch._core.rl``)."""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from ._rl_agents import DQN, PpoAgent, ReinforceAgent

__all__ = ["SpiralTorchRL"]


def _make_env(env: Any) -> Any:
    if callable(env) and not isinstance(env, str):
        return env()
    try:
        import gymnasium
    except ImportError as exc:  # pragma: no cover - exercised only without gymnasium
        raise ImportError(f"SpiralTorchRL: environment {env!r} needs gymnasium (pip install gymnasium)") from exc
    return gymnasium.make(env)


class SpiralTorchRL:
    """``SpiralTorchRL(env, agent, seed=0, n_envs=4, n_steps=128)``: trains and evaluates ``agent``
    (a ``DQN``, ``ReinforceAgent`` or ``PpoAgent``) on ``env`` (a Gymnasium id such as
    ``"CartPole-v1"`` or a zero-argument factory returning a Gymnasium-style environment).

    Environment ``k`` is reset with ``seed + k`` the first time, so a run is reproducible;
    ``n_envs``/``n_steps`` set PPO's rollout size (DQN and REINFORCE use one environment).
    """

    def __init__(self, env: str | Callable[[], Any], agent: Any, seed: int = 0, n_envs: int = 4,
                 n_steps: int = 128) -> None:
        if not isinstance(agent, (DQN, PpoAgent, ReinforceAgent)):
            raise TypeError(f"SpiralTorchRL: agent must be a DQN, ReinforceAgent or PpoAgent, got {type(agent).__name__}")
        if n_envs <= 0 or n_steps <= 0:
            raise ValueError(f"SpiralTorchRL: n_envs and n_steps must be positive, got {n_envs}, {n_steps}")
        self.env_spec, self.agent, self.seed = env, agent, int(seed)
        self.n_envs = n_envs if isinstance(agent, PpoAgent) else 1
        self.n_steps = int(n_steps)
        self.envs = [_make_env(env) for _ in range(self.n_envs)]
        space = self.envs[0].observation_space
        obs_dim = int(np.prod(space.shape))
        n_actions = int(getattr(self.envs[0].action_space, "n", -1))
        if obs_dim != agent.obs_dim or n_actions != agent.n_actions:
            raise ValueError(f"SpiralTorchRL: the environment has obs_dim {obs_dim} and {n_actions} actions, the agent "
                             f"expects {agent.obs_dim} and {agent.n_actions}")
        self.history: list[dict[str, Any]] = []
        self.env_steps = 0

    # ---- evaluation ----
    def evaluate(self, episodes: int = 100, seed: int = 1_000_000, greedy: bool = True) -> dict[str, Any]:
        """Runs ``episodes`` episodes (environment seeds ``seed``, ``seed + 1``, ...) with the greedy
        policy (or the exploring one) and returns mean/std/min/max of the episode returns."""
        if episodes <= 0:
            raise ValueError(f"SpiralTorchRL.evaluate: episodes must be positive, got {episodes}")
        env = _make_env(self.env_spec)
        returns = []
        for k in range(episodes):
            obs, _ = env.reset(seed=seed + k)
            total, done = 0.0, False
            while not done:
                if isinstance(self.agent, DQN):
                    action = int(np.argmax(self.agent.q_values(obs))) if greedy else self.agent.act(obs)
                else:
                    action = self.agent.act(obs, explore=not greedy)
                obs, reward, terminated, truncated, _ = env.step(action)
                total += float(reward)
                done = terminated or truncated
            returns.append(total)
        env.close()
        r = np.asarray(returns)
        return {"episodes": episodes, "mean": float(r.mean()), "std": float(r.std()), "min": float(r.min()),
                "max": float(r.max()), "returns": returns}

    # ---- training ----
    def train(self, total_steps: int, eval_every: int = 10_000, eval_episodes: int = 10,
              target_return: float | None = None, keep_best: bool = True,
              log: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """Trains for up to ``total_steps`` environment steps. Every ``eval_every`` steps it runs
        ``eval_episodes`` greedy episodes; it stops early once their mean reaches ``target_return``.
        With ``keep_best`` the agent ends with the weights of its best evaluation. Returns a summary
        (steps, wall seconds, evaluations); each evaluation is also passed to ``log``."""
        if total_steps <= 0 or eval_every <= 0 or eval_episodes <= 0:
            raise ValueError(f"SpiralTorchRL.train: total_steps, eval_every and eval_episodes must be positive, got "
                             f"{total_steps}, {eval_every}, {eval_episodes}")
        self._best: tuple[float, Any] = (-math.inf, None)
        self._eval_args = (eval_every, eval_episodes, target_return, log)
        self._next_eval = self.env_steps + eval_every
        self._stop = False
        t0 = time.perf_counter()
        if isinstance(self.agent, DQN):
            self._train_dqn(total_steps)
        elif isinstance(self.agent, ReinforceAgent):
            self._train_reinforce(total_steps)
        else:
            self._train_ppo(total_steps)
        if not self._stop and (not self.history or self.history[-1]["env_steps"] != self.env_steps):
            self._maybe_eval(force=True)
        if keep_best and self._best[1] is not None:
            self.agent.load_state_dict(self._best[1])
        return {"env_steps": self.env_steps, "wall_s": time.perf_counter() - t0, "best_eval": self._best[0],
                "reached_target": self._stop, "evaluations": list(self.history)}

    def _maybe_eval(self, force: bool = False) -> None:
        every, episodes, target, log = self._eval_args
        if not force and self.env_steps < self._next_eval:
            return
        self._next_eval = self.env_steps + every
        ev = self.evaluate(episodes, seed=self.seed * 7919 + 12345 + len(self.history) * episodes)
        row = {"env_steps": self.env_steps, "eval_mean": ev["mean"], "eval_min": ev["min"]}
        self.history.append(row)
        if ev["mean"] > self._best[0]:
            self._best = (ev["mean"], self.agent.state_dict())
        if log is not None:
            log(row)
        if target is not None and ev["mean"] >= target:
            self._stop = True

    def _reset(self, k: int, first: bool) -> np.ndarray:
        obs, _ = self.envs[k].reset(seed=self.seed + k) if first else self.envs[k].reset()
        return np.asarray(obs, np.float32)

    def _train_dqn(self, total_steps: int) -> None:
        agent, env = self.agent, self.envs[0]
        obs = self._reset(0, True)
        for _ in range(total_steps):
            action = agent.act(obs)
            nxt, reward, terminated, truncated, _ = env.step(action)
            nxt = np.asarray(nxt, np.float32)
            agent.observe(obs, action, float(reward), nxt, terminated)
            self.env_steps += 1
            obs = self._reset(0, False) if terminated or truncated else nxt
            self._maybe_eval()
            if self._stop:
                return

    def _train_reinforce(self, total_steps: int) -> None:
        agent, env = self.agent, self.envs[0]
        obs = self._reset(0, True)
        start = self.env_steps
        while self.env_steps - start < total_steps and not self._stop:
            traj_o, traj_a, traj_r = [], [], []
            done = False
            while not done:
                action = agent.act(obs)
                nxt, reward, terminated, truncated, _ = env.step(action)
                traj_o.append(obs)
                traj_a.append(action)
                traj_r.append(float(reward))
                self.env_steps += 1
                done = terminated or truncated
                obs = np.asarray(nxt, np.float32)
            agent.finish_episode(np.stack(traj_o), traj_a, traj_r)
            obs = self._reset(0, False)
            self._maybe_eval()

    def _train_ppo(self, total_steps: int) -> None:
        agent, n, T = self.agent, self.n_envs, self.n_steps
        obs = np.stack([self._reset(k, True) for k in range(n)])
        updates = max(1, total_steps // (n * T))
        lr0 = agent.learning_rate
        for u in range(updates):
            agent.set_learning_rate(lr0 * (1.0 - u / updates))
            buf = {k: [] for k in ("obs", "actions", "log_probs", "values", "rewards", "next_obs", "terminated",
                                   "episode_end")}
            for _ in range(T):
                actions, logp, values = agent.step(obs)
                nxt_obs = np.empty_like(obs)
                final_obs = np.empty_like(obs)
                rew, term, end = np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32)
                for k in range(n):
                    o2, r, te, tr, _ = self.envs[k].step(int(actions[k]))
                    final_obs[k] = o2
                    rew[k], term[k], end[k] = r, float(te), float(te or tr)
                    nxt_obs[k] = self._reset(k, False) if te or tr else o2
                for key, v in (("obs", obs), ("actions", actions), ("log_probs", logp), ("values", values),
                               ("rewards", rew), ("next_obs", final_obs), ("terminated", term), ("episode_end", end)):
                    buf[key].append(v)
                obs = nxt_obs
                self.env_steps += n
            roll = {k: np.stack(v) for k, v in buf.items()}
            # V of the observation that followed each step (the final one of an ended episode).
            roll["next_values"] = agent.values(roll.pop("next_obs").reshape(T * n, -1)).reshape(T, n)
            agent.update(roll)
            self._maybe_eval()
            if self._stop:
                return
