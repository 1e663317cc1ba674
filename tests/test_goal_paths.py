"""Goal paths (``ddpg/variants/goal_paths.py``): the relabelled experience is what the environment
would have given, and the variant plugs into the agent, its learner and the run's state."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ddpg import backends
from ddpg.variants import VariantAgent, parse_config
from ddpg.variants.goal_paths import GoalPaths
from ddpg_agent import NStepReturns
from model import Actor
from reacher import ReacherEnvironment
from reacher import observation as obs
from reacher.environment import PHYSICS_STEPS_PER_DECISION, goal_offsets
from reacher.goals import hand_positions, path_rewards

SMALL = {"buffer_size": 20_000, "batch_size": 32, "warmup": 64, "learn_every": 5, "learn_updates": 2}


@pytest.fixture(scope="module")
def episode() -> dict[str, np.ndarray]:
    """One 400-decision episode of 6 arms played by the committed actor (so the hands reach the
    goals): observations (T + 1, N, 33), actions and the environment's rewards."""
    actor = Actor(33, 4, 0, 128, 128)
    actor.load_state_dict(torch.load("checkpoint_actor.pth", weights_only=True))
    env = ReacherEnvironment(num_agents=6, seed=5, verbose=False)
    brain = env.brain_names[0]
    try:
        states = [np.asarray(env.reset(train_mode=True)[brain].vector_observations, np.float32)]
        actions, rewards = [], []
        for _ in range(400):
            with torch.no_grad():
                action = actor(torch.from_numpy(states[-1])).numpy()
            info = env.step(action)[brain]
            states.append(np.asarray(info.vector_observations, np.float32))
            actions.append(action)
            rewards.append(info.rewards)
        env._sync_mujoco()  # MuJoCo draws the arms: its hand sites after the last step
        hands = np.array([env._data.site(f"hand{i}").xpos for i in range(6)]) - env._roots
    finally:
        env.close()
    return {"states": np.array(states), "actions": np.array(actions), "rewards": np.array(rewards),
            "last_hands": hands}


def _goal_path(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The real goal's angles (T + 1, 1, N) and speeds (1, N), read back from the observations."""
    goal = states[..., obs.GOAL:obs.GOAL + 3].astype(np.float64)
    return np.degrees(np.arctan2(goal[..., 0], goal[..., 2]))[:, None], states[0, :, obs.GOAL_SPEED][None]


def test_the_hand_is_where_mujoco_puts_it(episode) -> None:
    np.testing.assert_allclose(hand_positions(episode["states"][-1]), episode["last_hands"], atol=1e-5)


def test_rewards_along_the_real_goal_path_are_the_environments(episode) -> None:
    """The one approximation (the hand on a straight line within a decision) changes few rewards."""
    states, rewards = episode["states"], episode["rewards"]
    angles, speeds = _goal_path(states)
    moved = (angles[1:] - angles[:-1] - PHYSICS_STEPS_PER_DECISION * speeds + 180) % 360 - 180
    np.testing.assert_allclose(moved, 0, atol=1e-3)  # the goal's motion, as goal_paths takes it
    ours = path_rewards(hand_positions(states), angles[:-1], speeds)[:, 0]
    assert rewards.sum() > 30  # the arms do reach their goals, so this compares something
    assert np.mean(np.abs(ours - rewards) > 1e-9) < 0.02
    np.testing.assert_allclose(ours.sum(axis=0), rewards.sum(axis=0), rtol=0.03)


def test_relabelled_transitions_are_the_episode_against_consistent_goal_paths(episode) -> None:
    states, actions = episode["states"], episode["actions"]
    t, n, paths = len(actions), states.shape[1], 3
    goal_paths = GoalPaths(paths, seed=0, n_step=3, gamma=0.9)
    for i in range(t):
        goal_paths.record(states[i], actions[i], states[i + 1])
    s, a, returns, s2, discounts, by_step = goal_paths.transitions()
    assert s.shape == (t * paths * n, 33) and a.shape == (t * paths * n, 4) and returns.shape == (t * paths * n,)
    s, s2 = s.reshape(t, paths, n, 33), s2.reshape(t, paths, n, 33)
    arm = [i for i in range(33) if not obs.GOAL <= i < obs.GOAL + 3 and i != obs.GOAL_SPEED]
    np.testing.assert_array_equal(s[..., arm], np.broadcast_to(states[:-1, None, :, arm], s[..., arm].shape))
    np.testing.assert_array_equal(a.reshape(t, paths, n, 4), np.broadcast_to(actions[:, None], (t, paths, n, 4)))
    # each path: a goal on the ring, moving at its own constant speed, that passes the hand's nearest ring point
    angles = np.degrees(np.arctan2(s[..., obs.GOAL], s[..., obs.GOAL + 2]))
    speeds = s[0, ..., obs.GOAL_SPEED]
    assert np.all(np.abs(speeds) <= 1.0) and speeds.std() > 0.1
    np.testing.assert_allclose(s[..., obs.GOAL:obs.GOAL + 3], goal_offsets(angles), atol=1e-5)
    step = (angles[1:] - angles[:-1] - PHYSICS_STEPS_PER_DECISION * speeds + 180) % 360 - 180
    np.testing.assert_allclose(step, 0, atol=1e-3)
    hands = hand_positions(states[:-1])[:, None]  # (T, 1, N, 3)
    heading = np.degrees(np.arctan2(hands[..., 0], hands[..., 2]))
    nearest = np.abs((angles - heading + 180) % 360 - 180).min(axis=0)
    assert np.all(nearest < 2.5)  # degrees: the goal passes where the hand points, at its moment
    # the returns and discounts are NStepReturns' over the path's rewards, next states 3 steps on
    rewards = path_rewards(hand_positions(states), angles, speeds)
    assert (rewards > 0).mean() > 0.05  # aimed paths are reached
    n_step = NStepReturns(3, 0.9)
    expected = []
    for i in range(t):
        expected += n_step.push(s[i].reshape(-1, 33), a.reshape(t, paths * n, 4)[i], rewards[i].reshape(-1),
                                s2[i].reshape(-1, 33), np.zeros(paths * n, bool))  # (next states: below)
    expected += n_step.end_episode()
    ours = returns.reshape(t, paths * n)
    np.testing.assert_allclose(np.concatenate([x[2] for x in expected]).reshape(t, -1), ours, atol=1e-12)
    np.testing.assert_allclose(np.concatenate([x[4] for x in expected]).reshape(t, -1),
                               discounts.reshape(t, -1), atol=1e-12)
    # and the rewards one by one with their span, which a new gamma discounts again (ReplayBuffer.rediscount)
    np.testing.assert_array_equal(np.concatenate([x[5] for x in expected]).reshape(t, paths * n, 4),
                                  by_step.reshape(t, paths * n, 4))
    np.testing.assert_array_equal(s2[:-3], s[3:])
    assert goal_paths.transitions() is None  # the record was cleared
    for i in range(2):  # an episode shorter than n_step: each return sums the steps there are
        goal_paths.record(states[i], actions[i], states[i + 1])
    short = goal_paths.transitions()
    assert short[2].shape == (2 * paths * n,) and np.all(short[4].reshape(2, -1)[0] == 0.9 ** 2)


def test_the_agent_stores_each_episode_again_and_learns_from_it() -> None:
    agent = VariantAgent(33, 4, 0, config=parse_config({**SMALL, "goal_paths": 3, "n_step": 1}))
    assert backends.attach(agent, "auto") == "readable"  # only what is stored changes, not the update
    env = ReacherEnvironment(num_agents=2, seed=1, verbose=False)
    brain = env.brain_names[0]
    sizes = []
    try:
        for _ in range(2):
            agent.reset()
            states = env.reset(train_mode=True)[brain].vector_observations
            for _ in range(50):
                actions = agent.act(states)
                info = env.step(actions)[brain]
                agent.step(states, actions, info.rewards, info.vector_observations)
                states = info.vector_observations
            sizes.append(len(agent.memory))
        agent.reset()
    finally:
        env.close()
    assert sizes == [100, 100 + 300 + 100]  # the first episode's 100 rows went in again for 3 paths at the reset
    assert len(agent.memory) == 2 * 2 * 50 * 4  # two episodes, each stored once and again for 3 paths
    assert agent.n_updates > 0


def test_goal_paths_are_refused_where_they_cannot_apply() -> None:
    with pytest.raises(ValueError, match=r"goal_paths must be a whole number >= 0, got 1.5"):
        parse_config({"goal_paths": 1.5})
    with pytest.raises(ValueError, match=r"goal_paths reads the goal and the hand from Reacher's observation"):
        VariantAgent(3, 1, 0, config=parse_config({**SMALL, "goal_paths": 2}))
    agent = VariantAgent(33, 4, 0, config=parse_config({**SMALL, "goal_paths": 2}))
    states = np.zeros((2, 33))
    with pytest.raises(ValueError, match=r"terminal states"):
        agent.step(states, np.zeros((2, 4)), np.zeros(2), states, np.array([True, False]))
