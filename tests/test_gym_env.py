"""UnityReacher-v0: the built-in Reacher behind Gymnasium's single and vector interfaces."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

from ddpg.solved import SOLVE_SCORE
from reacher import BRAIN_NAME, ReacherEnvironment
from reacher.environment import EPISODE_DECISIONS
from reacher.gym_env import ReacherGymEnv

REST = np.array([0.0, -4.0, 0.0])


def test_importing_reacher_registers_the_task_and_loads_no_mujoco():
    """Gymnasium's plug-in convention: importing the package registers UnityReacher-v0, with
    string entry points, so MuJoCo is not loaded and no GL backend chosen until a make."""
    code = ("import os, sys, gymnasium, reacher\n"
            "print('UnityReacher-v0' in gymnasium.registry, 'mujoco' in sys.modules, 'MUJOCO_GL' in os.environ)")
    env = {k: v for k, v in os.environ.items() if k != "MUJOCO_GL"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.split() == ["True", "False", "False"]


@pytest.mark.parametrize("code", [
    # Gymnasium's module:id form imports the module and expects the id registered by then.
    "import gymnasium as gym; env = gym.make('reacher:UnityReacher-v0')",
    "import gymnasium as gym, reacher; env = gym.make('UnityReacher-v0')",
    "import gymnasium as gym, reacher; env = gym.make_vec('UnityReacher-v0', num_envs=2, "
    "vectorization_mode='vector_entry_point')",
])
def test_make_works_from_a_fresh_interpreter(code):
    check = code + ("; obs, _ = env.reset(seed=0); print(env.spec.max_episode_steps, env.spec.reward_threshold, "
                    "tuple(obs.shape))")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:2] == ["1000", "30.0"]


def test_register_with_gymnasium_is_a_harmless_alias():
    import reacher

    reacher.register_with_gymnasium()  # again: a no-op, for code written before the import registered
    spec = gym.spec(reacher.GYMNASIUM_ID)
    assert spec.entry_point == "reacher.gym_env:ReacherGymEnv"  # strings: nothing loads until a make
    assert spec.vector_entry_point == "reacher.gym_env:ReacherVectorEnv"


def test_the_spec_carries_the_episode_limit_and_the_solve_score():
    spec = gym.spec("UnityReacher-v0")
    assert spec.max_episode_steps == EPISODE_DECISIONS == 1000
    assert spec.reward_threshold == SOLVE_SCORE == 30.0
    env = gym.make("UnityReacher-v0")  # TimeLimit truncates at the same decision as the task itself
    env.reset(seed=0)
    ends = [env.step(np.zeros(4, dtype=np.float32))[3] for _ in range(EPISODE_DECISIONS)]
    assert ends.index(True) == EPISODE_DECISIONS - 1
    env.close()


def test_the_vector_environment_takes_a_shorter_limit_and_refuses_a_longer_one():
    envs = gym.make_vec("UnityReacher-v0", num_envs=2, vectorization_mode="vector_entry_point", max_episode_steps=3)
    envs.reset(seed=0)
    truncated = [envs.step(np.zeros((2, 4), dtype=np.float32))[3].all() for _ in range(3)]
    assert truncated == [False, False, True]
    envs.close()
    with pytest.raises(ValueError, match="from 1 to 1000"):
        gym.make_vec("UnityReacher-v0", num_envs=2, vectorization_mode="vector_entry_point", max_episode_steps=1001)


def test_single_arm_passes_gymnasiums_checker():
    env = gym.make("UnityReacher-v0")
    with warnings.catch_warnings():
        # The observation is unbounded (velocities), as in Gymnasium's own MuJoCo tasks.
        warnings.filterwarnings("ignore", message=".*Box observation space m(ax|in)imum value.*")
        check_env(env.unwrapped)
    env.close()


def test_single_arm_spaces_episode_and_reward():
    env = gym.make("UnityReacher-v0")
    assert env.observation_space.shape == (33,) and env.observation_space.dtype == np.float32
    assert env.action_space.shape == (4,) and (env.action_space.low == -1).all() and (env.action_space.high == 1).all()
    obs, info = env.reset(seed=0)
    assert obs.dtype == np.float32 and info == {}
    np.testing.assert_allclose(obs[0:3], REST, atol=1e-6)
    rng = np.random.default_rng(0)
    total, steps = 0.0, 0
    while True:
        obs, reward, terminated, truncated, _ = env.step(rng.uniform(-1, 1, 4).astype(np.float32))
        steps += 1
        total += reward
        assert not terminated
        assert reward in (0.0, *np.float32([0.01, 0.02, 0.03, 0.04]).astype(float))
        if truncated:
            break
    assert steps == 1000
    assert 0.0 <= total < 3.0  # random play scores little (README: 0.159 on average)
    with pytest.raises(RuntimeError, match="call reset"):
        env.unwrapped.step(np.zeros(4, dtype=np.float32))
    env.close()


def test_single_arm_equals_the_unityagents_interface():
    """Same seed, same actions: the Gymnasium arm and ReacherEnvironment(num_agents=1) agree exactly."""
    rng = np.random.default_rng(1)
    actions = rng.uniform(-1, 1, (60, 4))
    env = gym.make("UnityReacher-v0")
    obs, _ = env.reset(seed=11)
    ours = [obs]
    rewards = []
    for a in actions:
        obs, r, *_ = env.step(a.astype(np.float32))
        ours.append(obs)
        rewards.append(r)
    env.close()
    with ReacherEnvironment(num_agents=1, seed=11, verbose=False) as plain:
        theirs = [plain.reset()[BRAIN_NAME].vector_observations[0]]
        their_rewards = []
        for a in actions:
            info = plain.step(a.astype(np.float32)[None])[BRAIN_NAME]
            theirs.append(info.vector_observations[0])
            their_rewards.append(info.rewards[0])
    np.testing.assert_array_equal(np.array(ours), np.array(theirs, dtype=np.float32))
    assert rewards == their_rewards


def test_seeding_and_reset_parameters():
    env = gym.make("UnityReacher-v0", goal_speed=0.0, goal_size=3.0)
    first = [env.reset(seed=5)[0] for _ in range(2)]
    np.testing.assert_array_equal(first[0], first[1])
    other = env.reset(seed=6)[0]
    assert not np.array_equal(first[0][26:29], other[26:29])  # the goal moved
    assert first[0][32] == 0.0  # goal_speed 0: goals stand still
    assert env.unwrapped._env.reset_parameters == {"goal_speed": 0.0, "goal_size": 3.0}
    env.close()


def test_rgb_array_rendering():
    env = gym.make("UnityReacher-v0", render_mode="rgb_array", width=160, height=120)
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (120, 160, 3) and frame.dtype == np.uint8 and frame.std() > 10
    env.close()
    with pytest.raises(ValueError, match="render_mode"):
        ReacherGymEnv(render_mode="human")


def test_vector_env_is_native_and_equals_the_unityagents_interface():
    envs = gym.make_vec("UnityReacher-v0", num_envs=5, vectorization_mode="vector_entry_point")
    assert type(envs.unwrapped).__name__ == "ReacherVectorEnv"
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert envs.observation_space.shape == (5, 33) and envs.action_space.shape == (5, 4)
    assert envs.single_observation_space.shape == (33,)
    rng = np.random.default_rng(2)
    actions = rng.uniform(-1, 1, (40, 5, 4)).astype(np.float32)
    obs, _ = envs.reset(seed=3)
    ours = [obs]
    for a in actions:
        obs, reward, terminated, truncated, _ = envs.step(a)
        assert reward.shape == (5,) and not terminated.any() and not truncated.any()
        ours.append(obs)
    envs.close()
    with ReacherEnvironment(num_agents=5, seed=3, verbose=False) as plain:
        theirs = [plain.reset()[BRAIN_NAME].vector_observations]
        theirs += [plain.step(a)[BRAIN_NAME].vector_observations for a in actions]
    np.testing.assert_array_equal(np.array(ours), np.array(theirs, dtype=np.float32))


def test_vector_env_autoresets_on_the_next_step():
    envs = gym.make_vec("UnityReacher-v0", num_envs=3, vectorization_mode="vector_entry_point")
    envs.reset(seed=0)
    push = np.ones((3, 4), dtype=np.float32)
    for t in range(1000):
        obs, reward, terminated, truncated, _ = envs.step(push)
        assert truncated.all() == (t == 999) and not terminated.any()
    # The step after the end ignores its actions and returns new episodes' first observations.
    obs, reward, terminated, truncated, _ = envs.step(push)
    np.testing.assert_allclose(obs[:, 0:3], np.tile(REST, (3, 1)), atol=1e-6)
    assert (reward == 0).all() and not terminated.any() and not truncated.any()
    obs, *_ = envs.step(push)  # and then the episodes run on
    assert np.abs(obs[:, 0:3] - REST).max() > 1e-3
    envs.close()
