"""n-step returns (``ddpg_agent.NStepReturns``): the stored transitions, worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ddpg_agent import Agent, NStepReturns

SMALL = {"buffer_size": 1000, "batch_size": 8, "warmup": 10_000}


def _one(out: list[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """The transitions of one push, as one block of rows."""
    return tuple(np.concatenate([t[i] for t in out]) for i in range(5))


def test_n_step_returns_by_hand_across_a_terminal_and_a_time_limit() -> None:
    g = 0.9
    ret = NStepReturns(3, g)
    s = lambda v: np.full((1, 2), float(v))  # noqa: E731 (state v)
    a = np.zeros((1, 1))
    no, yes = np.array([False]), np.array([True])
    assert ret.push(s(0), a, [1.0], s(1), no) == []
    assert ret.push(s(1), a, [2.0], s(2), no) == []
    out = _one(ret.push(s(2), a, [3.0], s(3), no))  # s0 now spans 3 steps
    np.testing.assert_allclose(out[0], s(0))
    np.testing.assert_allclose(out[2], [1 + g * 2 + g * g * 3])
    np.testing.assert_allclose(out[3], s(3))
    np.testing.assert_allclose(out[4], [g ** 3])
    out = _one(ret.push(s(3), a, [4.0], s(4), yes))  # terminal: s1, s2, s3 all end here, discount 0
    np.testing.assert_allclose(out[0][:, 0], [1, 2, 3])
    np.testing.assert_allclose(out[2], [2 + g * 3 + g * g * 4, 3 + g * 4, 4])
    np.testing.assert_allclose(out[4], [0, 0, 0])
    assert ret.end_episode() == []  # nothing left pending
    # next episode, cut by a time limit after 2 steps: both bootstrap from the last state
    ret.push(s(10), a, [1.0], s(11), no)
    ret.push(s(11), a, [5.0], s(12), no)
    out = _one(ret.end_episode())
    np.testing.assert_allclose(out[0][:, 0], [10, 11])
    np.testing.assert_allclose(out[2], [1 + g * 5, 5])
    np.testing.assert_allclose(out[3][:, 0], [12, 12])
    np.testing.assert_allclose(out[4], [g ** 2, g])


def test_n_step_per_arm_with_one_arm_terminating() -> None:
    ret = NStepReturns(2, 0.5)
    states = np.arange(3.0).reshape(3, 1)
    a = np.zeros((3, 1))
    out = _one(ret.push(states, a, [1.0, 1.0, 1.0], states + 10, np.array([False, True, False])))
    np.testing.assert_allclose(out[0][:, 0], [1])  # arm 1 ends at once, with nothing to bootstrap
    np.testing.assert_allclose(out[4], [0])
    out = _one(ret.push(states[[0, 2]] + 10, a[:2], [2.0, 4.0], states[[0, 2]] + 20, np.array([False, False])))
    np.testing.assert_allclose(out[0][:, 0], [0, 2])
    np.testing.assert_allclose(out[2], [1 + 0.5 * 2, 1 + 0.5 * 4])
    with pytest.raises(ValueError, match=r"expected one per arm still in its episode \(2\)"):
        ret.push(states, a, [0.0] * 3, states, np.array([False] * 3))


def test_one_step_stores_each_transition_at_once_in_arm_order() -> None:
    """n = 1 is one-step DDPG: rows in the arms' order, discount gamma, 0 at a terminal state."""
    ret = NStepReturns(1, 0.99)
    rng = np.random.default_rng(0)
    s, a, s2 = rng.normal(size=(3, 4)), rng.normal(size=(3, 2)), rng.normal(size=(3, 4))
    r = rng.normal(size=3).astype(np.float32)
    [(states, actions, rewards, next_states, discounts, _)] = ret.push(s, a, r, s2, np.array([False, True, False]))
    assert np.array_equal(states, s) and np.array_equal(actions, a) and np.array_equal(next_states, s2)
    assert np.array_equal(rewards, r.astype(np.float64)) and np.array_equal(discounts, [0.99, 0.0, 0.99])
    assert ret.end_episode() == []


def test_agents_store_n_step_transitions() -> None:
    agent = Agent(33, 4, 0, n_step=3, **SMALL)
    rng = np.random.default_rng(0)
    for _ in range(5):
        agent.step(rng.normal(size=(2, 33)), rng.uniform(-1, 1, (2, 4)), np.ones(2), rng.normal(size=(2, 33)))
    discounts = agent.memory.split(agent.memory.data[:len(agent.memory)])[4]
    assert len(agent.memory) == 6 and torch.allclose(discounts, torch.tensor(agent.config.gamma ** 3))
    agent.reset()  # the episode's last two steps of each arm bootstrap through the time limit
    assert len(agent.memory) == 10


def test_the_readable_agent_stays_course_sized() -> None:
    """ddpg_agent.py is the file learners read top to bottom: at most 365 lines (issues 25 and 60: 300; issue 65
    added the TD target's two named parts, target_action and target_value, which every variant builds on, issue 67
    leaves room for a contributor's new setting and its use, issue 75 lets each arm end and restart on its own, and
    issue 86 takes up a setting changed while training: follow_config, and the rewards a new gamma needs)."""
    from pathlib import Path

    lines = (Path(__file__).resolve().parent.parent / "ddpg_agent.py").read_text().count("\n")
    assert lines <= 365, f"ddpg_agent.py has {lines} lines; keep it at most 365"
