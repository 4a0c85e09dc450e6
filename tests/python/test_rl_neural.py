"""Neural agents of spiraltorch.spiral_rl (DQN, REINFORCE, PPO), the C++ returns/GAE/replay
numerics they use, and the SpiralTorchRL harness on Gymnasium's CartPole-v1 (short smoke runs;
bench/bench_rl_cartpole.py holds the full runs)."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import rl
from spiraltorch.spiral_rl import (DQN, EpsilonGreedy, PpoAgent, ReinforceAgent, ReplayBuffer, SpiralTorchRL,
                                   discounted_returns, gae)


def numpy_gae(r, v, nv, term, end, gamma, lam):
    adv = np.zeros_like(r, dtype=np.float64)
    a = np.zeros(r.shape[1])
    for t in reversed(range(r.shape[0])):
        delta = r[t] + gamma * (1 - term[t]) * nv[t] - v[t]
        a = delta + gamma * lam * (1 - end[t]) * a
        adv[t] = a
    return adv, adv + v


def test_gae_and_returns_match_numpy_references():
    rng = np.random.default_rng(0)
    T, E = 37, 3
    r, v, nv = rng.normal(size=(T, E)), rng.normal(size=(T, E)), rng.normal(size=(T, E))
    end = (rng.random((T, E)) < 0.1).astype(np.float64)
    term = end * (rng.random((T, E)) < 0.5)
    adv, ret = gae(r, v, nv, term, end, 0.97, 0.9)
    want_adv, want_ret = numpy_gae(r, v, nv, term, end, 0.97, 0.9)
    np.testing.assert_allclose(adv, want_adv, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ret, want_ret, rtol=1e-4, atol=1e-4)
    g = discounted_returns([1.0, 1.0, 1.0], [0, 0, 1], gamma=0.5)
    np.testing.assert_allclose(g, [1.75, 1.5, 1.0])
    g2 = discounted_returns(np.ones((2, 2)), np.zeros((2, 2)), bootstrap=[10.0, 0.0], gamma=0.5)
    np.testing.assert_allclose(g2, [[4.0, 1.5], [6.0, 1.0]])
    with pytest.raises(ValueError, match="lambda"):
        gae(r, v, nv, term, end, 0.9, 1.5)
    with pytest.raises(ValueError, match="next_values"):
        gae(r, v, nv[:-1], term, end)


def test_replay_buffer_is_a_seeded_ring():
    buf = ReplayBuffer(3, 2, seed=5)
    obs = np.arange(10, dtype=np.float32).reshape(5, 2)
    buf.push(obs, [0, 1, 0, 1, 0], [0, 1, 2, 3, 4], obs + 100, [0, 0, 0, 0, 1])
    assert len(buf) == 3 and buf.capacity == 3 and buf.obs_dim == 2 and buf.seed == 5
    s = buf.sample(32)
    rewards = s["rewards"].numpy()
    assert set(rewards.tolist()) <= {2.0, 3.0, 4.0}  # transitions 0 and 1 were overwritten
    np.testing.assert_array_equal(s["obs"].numpy()[:, 0], rewards * 2)
    np.testing.assert_array_equal(s["next_obs"].numpy()[:, 1], rewards * 2 + 101)
    np.testing.assert_array_equal(s["terminated"].numpy(), (rewards == 4).astype(np.float32))
    twin = ReplayBuffer(3, 2, seed=5)
    twin.push(obs, [0, 1, 0, 1, 0], [0, 1, 2, 3, 4], obs + 100, [0, 0, 0, 0, 1])
    assert twin.sample(32)["indices"].tolist() == s["indices"].tolist()
    with pytest.raises(ValueError, match="next_obs"):
        buf.push(obs, [0] * 5, [0] * 5, obs[:2], [0] * 5)
    assert len(buf) == 3
    buf.clear()
    with pytest.raises(ValueError, match="empty"):
        buf.sample(1)


def test_dqn_step_uses_huber_loss_and_double_q_targets():
    agent = DQN(3, 2, hidden=(8,), learning_starts=10**9, batch_size=4, seed=1)
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(4, 3)).astype(np.float32)
    agent.buffer = ReplayBuffer(4, 3, seed=0)
    agent.buffer.push(obs, [0, 1, 1, 0], [1.0, 0.0, 2.0, -1.0], obs[::-1].copy(), [0, 1, 0, 0])
    batch = ReplayBuffer(4, 3, seed=0)
    batch.push(obs, [0, 1, 1, 0], [1.0, 0.0, 2.0, -1.0], obs[::-1].copy(), [0, 1, 0, 0])
    b = {k: v.numpy() for k, v in batch.sample(4).items()}
    q_next_online, q_next_target = agent.q_values(b["next_obs"]), None
    with st.no_grad():
        q_next_target = agent.target_net(st.tensor(b["next_obs"])).numpy()
    y = b["rewards"] + 0.99 * (1 - b["terminated"]) * q_next_target[np.arange(4), q_next_online.argmax(1)]
    q = agent.q_values(b["obs"])[np.arange(4), b["actions"]]
    d = np.abs(q - y)
    huber = np.where(d < 1, 0.5 * d**2, d - 0.5).mean()
    assert agent.train_step() == pytest.approx(huber, rel=1e-4, abs=1e-6)


def test_dqn_learns_a_contextual_bandit_and_validates():
    agent = DQN(2, 2, hidden=(16,), learning_starts=64, train_freq=16, gradient_steps=8, batch_size=32,
                exploration=EpsilonGreedy(1.0, 0.1, 300), gamma=0.0, seed=3)
    rng = np.random.default_rng(1)
    for _ in range(600):
        o = rng.normal(size=2).astype(np.float32)
        a = agent.act(o)
        agent.observe(o, a, float(a == int(o[0] > 0)), o, True)
    test = rng.normal(size=(200, 2)).astype(np.float32)
    acc = np.mean(agent.q_values(test).argmax(1) == (test[:, 0] > 0))
    assert acc > 0.9
    assert agent.epsilon == pytest.approx(0.1)
    with pytest.raises(ValueError, match=r"shape \(3,\), expected \(2,\)"):
        agent.act([0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="action 2 is out of range"):
        agent.observe(test[0], 2, 0.0, test[0], False)
    with pytest.raises(ValueError, match="not finite"):
        agent.act([np.nan, 0.0])
    with pytest.raises(ValueError, match="gamma"):
        DQN(2, 2, gamma=1.5)
    with pytest.raises(ValueError, match="n_actions"):
        DQN(2, 0)


def test_agents_are_seeded_and_leave_the_global_generator_alone():
    st.manual_seed(123)
    before = st.rand(3).tolist()
    st.manual_seed(123)
    a, b = PpoAgent(4, 2, seed=9), PpoAgent(4, 2, seed=9)
    assert st.rand(3).tolist() == before
    o = np.ones(4, np.float32)
    np.testing.assert_array_equal(a.probabilities(o), b.probabilities(o))
    assert [a.act(o) for _ in range(20)] == [b.act(o) for _ in range(20)]
    c = PpoAgent(4, 2, seed=10)
    assert not np.allclose(a.probabilities(o), c.probabilities(o))


def test_reinforce_raises_the_probability_of_rewarded_actions():
    agent = ReinforceAgent(2, 3, hidden=(16,), lr=0.05, seed=0)
    o = np.array([0.5, -0.5], np.float32)
    p0 = agent.probabilities(o)[2]
    for _ in range(30):
        acts = [agent.act(o) for _ in range(8)]
        stats = agent.finish_episode(np.tile(o, (8, 1)), acts, [1.0 if a == 2 else 0.0 for a in acts])
    assert agent.probabilities(o)[2] > max(0.8, p0 + 0.3)
    assert set(stats) == {"policy_loss", "value_loss", "return"}
    with pytest.raises(ValueError, match="equal, non-zero lengths"):
        agent.finish_episode(np.tile(o, (2, 1)), [0], [1.0, 1.0])


def test_ppo_update_clips_the_ratio():
    agent = PpoAgent(2, 2, learning_rate=0.05, clip_range=0.1, hidden=(8,), epochs=10, minibatches=1, ent_coef=0.0,
                     seed=0)
    T, E = 16, 2
    obs = np.tile(np.array([1.0, 0.0], np.float32), (T, E, 1))
    acts, logp, vals = agent.step(obs.reshape(T * E, 2))
    z = np.zeros((T, E), np.float32)
    roll = {"obs": obs, "actions": acts.reshape(T, E), "log_probs": logp.reshape(T, E), "values": vals.reshape(T, E),
            "rewards": (acts.reshape(T, E) == 1).astype(np.float32), "next_values": z, "terminated": z + 1,
            "episode_end": z + 1}
    p_before = agent.probabilities(obs[0, 0])[1]
    stats = agent.update(roll)
    assert agent.probabilities(obs[0, 0])[1] > p_before
    assert stats["clip_fraction"] > 0  # ten epochs at lr 0.05 push the ratio past 1 +- 0.1
    assert set(stats) == {"policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction"}
    with pytest.raises(ValueError, match="obs has shape"):
        agent.update({**roll, "obs": obs[:, :, :1]})
    with pytest.raises(ValueError, match="clip_range"):
        PpoAgent(2, 2, clip_range=0.0)


def test_rl_module_reexports_the_neural_agents():
    assert rl.DQN is DQN and rl.PpoAgent is PpoAgent and rl.SpiralTorchRL is SpiralTorchRL
    assert rl.ReinforceAgent is ReinforceAgent and rl.gae is gae and rl.discounted_returns is discounted_returns
    assert rl.ReplayBuffer is ReplayBuffer


gymnasium = pytest.importorskip("gymnasium", reason="gymnasium is not installed")


def test_spiraltorch_rl_ppo_smoke_on_cartpole():
    harness = SpiralTorchRL("CartPole-v1", PpoAgent(4, 2, seed=0), seed=0, n_envs=4, n_steps=128)
    rows = []
    before = harness.evaluate(5, seed=50)["mean"]
    summary = harness.train(20_480, eval_every=10_240, eval_episodes=5, log=rows.append)
    after = harness.evaluate(10, seed=77)
    assert summary["env_steps"] == 20_480 and len(rows) == 2
    assert after["mean"] > max(100.0, 3 * before)  # a random-ish start survives ~10-40 steps
    assert len(after["returns"]) == 10 and after["min"] <= after["mean"] <= after["max"]


def test_spiraltorch_rl_dqn_and_reinforce_smoke_on_cartpole():
    dqn = SpiralTorchRL("CartPole-v1", DQN(4, 2, hidden=(64, 64), seed=0), seed=0)
    s = dqn.train(6000, eval_every=3000, eval_episodes=5)
    assert s["env_steps"] == 6000 and dqn.agent.updates > 0 and s["best_eval"] > 30
    reinforce = SpiralTorchRL("CartPole-v1", ReinforceAgent(4, 2, seed=0), seed=0)
    s = reinforce.train(3000, eval_every=1500, eval_episodes=3)
    assert s["env_steps"] >= 3000 and s["best_eval"] > 9
    with pytest.raises(ValueError, match="obs_dim 4 and 2 actions"):
        SpiralTorchRL("CartPole-v1", PpoAgent(3, 2))
    with pytest.raises(TypeError, match="agent must be"):
        SpiralTorchRL("CartPole-v1", object())
