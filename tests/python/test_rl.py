"""spiraltorch.spiral_rl / spiraltorch.rl: tabular Q-learning agents and exploration schedules."""

from __future__ import annotations

import textwrap

import pytest

import spiraltorch as st
from conftest import run_python
from spiraltorch.rl import Agent, AgentConfig, EpsilonGreedy, stAgent


def test_seed_rl_snippets_run():
    code = textwrap.dedent("""
        from spiraltorch.spiral_rl import stAgent

        agent = stAgent(state_dim=4, action_dim=2, discount=0.97, learning_rate=0.02)
        action = agent.select_action(0)
        agent.update(0, int(action), reward=1.0, next_state=1)
        print("action:", action)
        print("epsilon:", agent.state_dict()["epsilon"])

        from spiraltorch.rl import Agent, AgentConfig, EpsilonGreedy

        config = AgentConfig("dqn", state_dim=4, action_dim=2, gamma=0.97, lr=0.02,
                             exploration=EpsilonGreedy(0.2, 0.05, 100), seed=7)
        agent = Agent(config)
        action = agent.select_action(0)
        agent.update(0, int(action), 1.0, 1)
        print(agent.algo, agent.state_dict()["epsilon"])
    """)
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] in ("action: 0", "action: 1") and lines[1] == "epsilon: 0.1"
    assert lines[2] == f"dqn {0.2 + (0.05 - 0.2) * 1 / 100}"


def test_q_learning_finds_the_optimal_policy_on_a_chain():
    # States 0..4 on a line; action 1 moves right, 0 moves left; reaching 4 pays 1 and ends.
    agent = stAgent(5, 2, discount=0.9, learning_rate=0.5, seed=3)
    agent.set_exploration(EpsilonGreedy(1.0, 0.05, 2000))
    for _ in range(300):
        s = 0
        for _ in range(50):
            a = agent.select_action(s)
            s2 = min(s + 1, 4) if a == 1 else max(s - 1, 0)
            done = s2 == 4
            agent.update(s, a, 1.0 if done else 0.0, s2, done)
            s = s2
            if done:
                break
    assert [agent.greedy_action(s) for s in range(4)] == [1, 1, 1, 1]
    # Q of moving right from state 3 -> 1, from 2 -> 0.9, from 1 -> 0.81 (discounted).
    assert agent.q_values(3)[1] == pytest.approx(1.0, abs=1e-3)
    assert agent.q_values(1)[1] == pytest.approx(0.81, abs=1e-2)


def test_rule_ties_schedule_and_state_dict():
    a = stAgent(2, 3, discount=0.5, learning_rate=0.1)
    assert a.greedy_action(0) == 2  # all-zero row: ties go to the highest action
    a.update(0, 1, reward=2.0, next_state=1)
    assert a.q_values(0) == [0.0, 0.2, 0.0]
    a.update(1, 0, reward=0.0, next_state=0)  # bootstraps from max Q[0] = 0.2
    assert a.q_values(1)[0] == pytest.approx(0.1 * 0.5 * 0.2)
    sd = a.state_dict()
    b = stAgent(2, 3, discount=0.5, learning_rate=0.1)
    b.load_state_dict(sd)
    assert b.state_dict() == sd
    sched = EpsilonGreedy(0.5, 0.0, 4)
    a.set_exploration(sched)
    eps = [a.epsilon]
    for _ in range(6):
        a.select_action(0)
        eps.append(a.epsilon)
    assert eps == [0.5, 0.375, 0.25, 0.125, 0.0, 0.0, 0.0]
    assert sched.step == 0  # the agent works on a copy
    a.set_epsilon(1.7)
    assert a.epsilon == 1.0 and a.state_dict()["epsilon_schedule"] is None
    twin1, twin2 = stAgent(3, 4, 0.9, 0.1), stAgent(3, 4, 0.9, 0.1)
    twin1.set_epsilon(1.0)
    twin2.set_epsilon(1.0)
    assert twin1.select_actions([0] * 20) == twin2.select_actions([0] * 20)  # same default seed


def test_errors():
    a = stAgent(2, 2, 0.9, 0.1)
    with pytest.raises(ValueError, match=r"state 5 is out of range \[0, 2\)"):
        a.select_action(5)
    with pytest.raises(ValueError, match="action 3 is out of range"):
        a.update(0, 3, 1.0, 1)
    with pytest.raises(ValueError, match="discount must be in"):
        stAgent(2, 2, 1.5, 0.1)
    with pytest.raises(ValueError, match="unsupported algorithm 'ppo'"):
        Agent(AgentConfig("ppo", 2, 2, 0.9, 0.1))
    with pytest.raises(ValueError, match="table has 3 entries"):
        a.load_state_dict({"table": [0.0, 1.0, 2.0]})
    with pytest.raises(ValueError, match="same length"):
        a.update_batch([0, 1], [0], [1.0, 1.0], [1, 0])
    assert st.rl.stAgent is st.spiral_rl.stAgent
