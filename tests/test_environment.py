"""The built-in Reacher against the facts of the Unity original and the unityagents interface."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from reacher import BRAIN_NAME, BrainInfo, BrainParameters, ReacherEnvironment

# The first observation the real binary prints after reset (agent 0). Indices 26-28
# (goal) and 32 (goal speed) depend on the random draw; the rest is the arm.
UNITY_FIRST_OBSERVATION = np.array([
    0, -4, 0, 1, -0, -0, -4.37113883e-08, 0, 0, 0, 0, 0, 0,
    0, -10, 0, 1, -0, -0, -4.37113883e-08, 0, 0, 0, 0, 0, 0,
    5.75471878, -1, 5.55726624, 0, 1, 0, -0.168164849,
])
ARM = np.r_[0:26, 29:32]


@pytest.fixture(scope="module")
def env20():
    env = ReacherEnvironment(num_agents=20, seed=0, verbose=False)
    yield env
    env.close()


def play_random(env: ReacherEnvironment, rng: np.random.Generator, bang_bang: bool = False) -> tuple[np.ndarray, list[BrainInfo]]:
    info = env.reset(train_mode=True)[BRAIN_NAME]
    infos = [info]
    scores = np.zeros(env.num_agents)
    while True:
        actions = rng.uniform(-1, 1, (env.num_agents, 4))
        if bang_bang:
            actions = np.sign(actions)
        info = env.step(actions)[BRAIN_NAME]
        infos.append(info)
        scores += info.rewards
        if np.any(info.local_done):
            return scores, infos


# --------------------------------------------------------------------- interface
def test_interface_names_and_types(env20, capsys):
    assert env20.brain_names == ["ReacherBrain"]
    brain = env20.brains["ReacherBrain"]
    assert isinstance(brain, BrainParameters)
    assert brain.brain_name == "ReacherBrain"
    assert brain.vector_observation_space_size == 33
    assert brain.vector_action_space_size == 4
    assert brain.vector_action_space_type == "continuous"
    assert brain.num_stacked_vector_observations == 1
    info = env20.reset(train_mode=True)["ReacherBrain"]
    assert isinstance(info, BrainInfo)
    assert info.vector_observations.shape == (20, 33) and info.vector_observations.dtype == np.float64
    assert isinstance(info.rewards, list) and len(info.rewards) == 20 and all(isinstance(r, float) for r in info.rewards)
    assert info.local_done == [False] * 20 and info.max_reached == [False] * 20
    assert info.agents == list(range(20))
    assert info.previous_vector_actions.shape == (20, 4)
    assert env20.global_done is False


def test_banner_matches_the_original(capsys):
    with ReacherEnvironment(num_agents=1, seed=0) as env:
        printed = capsys.readouterr().out
        assert printed.strip() == str(env).strip()
    for line in [
        "Unity Academy name: Academy",
        "Number of Brains: 1",
        "Number of External Brains : 1",
        "Lesson number : 0",
        "goal_speed -> 1.0",
        "goal_size -> 5.0",
        "Unity brain name: ReacherBrain",
        "Number of Visual Observations (per agent): 0",
        "Vector Observation space type: continuous",
        "Vector Observation space size (per agent): 33",
        "Number of stacked Vector Observation: 1",
        "Vector Action space type: continuous",
        "Vector Action space size (per agent): 4",
    ]:
        assert line in printed, line


def test_three_action_forms_are_equivalent():
    rng = np.random.default_rng(3)
    actions = rng.uniform(-1, 1, (5, 20, 4))
    results = []
    for form in ("array", "flat", "dict"):
        env = ReacherEnvironment(num_agents=20, seed=7, verbose=False)
        env.reset()
        obs = []
        for a in actions:
            given = {"array": a, "flat": a.ravel().tolist(), "dict": {"ReacherBrain": a}}[form]
            obs.append(env.step(given)["ReacherBrain"].vector_observations)
        results.append(np.array(obs))
        env.close()
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])


def test_previous_actions_are_reported(env20):
    env20.reset()
    a = np.linspace(-2, 2, 80).reshape(20, 4)
    info = env20.step(a)["ReacherBrain"]
    np.testing.assert_allclose(info.previous_vector_actions, a, rtol=1e-6)


# ------------------------------------------------------------------ reset state
@pytest.mark.parametrize("num_agents", [1, 20])
def test_reset_observation_matches_unity(num_agents):
    env = ReacherEnvironment(num_agents=num_agents, seed=1, verbose=False)
    for _ in range(3):
        obs = env.reset()["ReacherBrain"].vector_observations
        np.testing.assert_allclose(obs[:, ARM], np.broadcast_to(UNITY_FIRST_OBSERVATION[ARM], (num_agents, ARM.size)), atol=1e-5)
        goal = obs[:, 26:29]
        np.testing.assert_allclose(np.hypot(goal[:, 0], goal[:, 2]), 8.0, atol=1e-5)
        np.testing.assert_allclose(goal[:, 1], -1.0, atol=1e-6)
        # The start angle is a whole number of degrees; the speed is within goal_speed.
        degrees = np.degrees(np.arctan2(goal[:, 0], goal[:, 2])) % 360
        np.testing.assert_allclose(degrees, np.round(degrees), atol=1e-3)
        assert np.all(np.abs(obs[:, 32]) <= 1.0)
    env.close()


def test_goal_start_angle_and_speed_distributions():
    env = ReacherEnvironment(num_agents=20, seed=2, verbose=False)
    degrees, speeds = [], []
    for _ in range(50):
        obs = env.reset()["ReacherBrain"].vector_observations
        degrees.append(np.round(np.degrees(np.arctan2(obs[:, 26], obs[:, 28])) % 360))
        speeds.append(obs[:, 32])
    degrees, speeds = np.concatenate(degrees), np.concatenate(speeds)
    assert degrees.min() >= 0 and degrees.max() <= 359 and len(np.unique(degrees)) > 300
    assert -1 <= speeds.min() < -0.9 and 0.9 < speeds.max() <= 1
    assert abs(speeds.mean()) < 0.06


def test_goal_moves_by_its_speed_every_physics_step(env20):
    obs0 = env20.reset()["ReacherBrain"].vector_observations
    obs1 = env20.step(np.zeros((20, 4)))["ReacherBrain"].vector_observations
    a0 = np.degrees(np.arctan2(obs0[:, 26], obs0[:, 28]))
    a1 = np.degrees(np.arctan2(obs1[:, 26], obs1[:, 28]))
    moved = (a1 - a0 + 180) % 360 - 180
    np.testing.assert_allclose(moved, 4 * obs0[:, 32], atol=1e-4)


# ------------------------------------------------------------- reward, episodes
def test_rewards_are_quantised_and_episode_ends_after_1000_decisions():
    env = ReacherEnvironment(num_agents=20, seed=4, verbose=False)
    rng = np.random.default_rng(4)
    _, infos = play_random(env, rng)
    assert len(infos) == 1001  # the reset plus 1000 decisions
    for info in infos[1:-1]:
        assert not any(info.local_done) and not any(info.max_reached)
    assert infos[-1].local_done == [True] * 20 and infos[-1].max_reached == [True] * 20
    rewards = np.array([info.rewards for info in infos[1:]])
    allowed = np.float32([0.0, 0.01, 0.02, 0.03, 0.04]).astype(np.float64)
    assert np.isin(rewards, allowed).all()
    assert (rewards > 0).any()
    # The next step restarts the agents by themselves, as the original does.
    info = env.step(np.zeros((20, 4)))["ReacherBrain"]
    assert not any(info.local_done)
    np.testing.assert_allclose(info.vector_observations[:, 1], -4.0, atol=0.05)
    env.close()


def test_holding_the_hand_in_a_goal_earns_004_per_decision():
    """With goal_speed 0 and the goal grown over the resting hand, every physics step counts."""
    env = ReacherEnvironment(num_agents=2, seed=0, verbose=False)
    # Hand rests at (0, -13, 0); goal at radius 8, height -1: centre distance sqrt(8^2 + 12^2) = 14.42.
    info = env.reset(config={"goal_speed": 0.0, "goal_size": 2 * (14.42 - 1.0 + 0.2)})["ReacherBrain"]
    assert env.reset_parameters == {"goal_speed": 0.0, "goal_size": pytest.approx(27.24)}
    info = env.step(np.zeros((2, 4)))["ReacherBrain"]
    assert info.rewards == [float(np.float32(0.04))] * 2 == [0.03999999910593033] * 2
    # Shrink it just below the reach: nothing.
    env.reset(config={"goal_size": 2 * (14.42 - 1.0 - 0.2)})
    assert env.step(np.zeros((2, 4)))["ReacherBrain"].rewards == [0.0, 0.0]
    env.close()


def test_random_policy_scores_little():
    """A uniformly random policy rarely touches the goal: PhysX running the same arm
    scores 0.161 per episode (tests/test_physx_reference.py holds it to that over 400
    arm-episodes; the original was reported at 0.0-0.2)."""
    env = ReacherEnvironment(num_agents=20, seed=5, verbose=False)
    rng = np.random.default_rng(5)
    means = [play_random(env, rng)[0].mean() for _ in range(2)]
    env.close()
    assert 0.0 < np.mean(means) < 0.4


# --------------------------------------------------------------------- physics
def test_torque_acts_about_world_axes_on_each_segment():
    env = ReacherEnvironment(num_agents=1, seed=0, verbose=False)
    for k, (segment, axis) in enumerate([(0, 0), (0, 2), (1, 0), (1, 2)]):
        env.reset()
        a = np.zeros((1, 4))
        a[0, k] = 1.0
        obs = env.step(a)["ReacherBrain"].vector_observations[0]
        w = obs[7:10] if segment == 0 else obs[20:23]
        assert w[axis] > 0.1 and abs(w[1]) < 1e-6, (k, w)
    # B's torque puts no reaction on A: A only moves through the joint coupling, weakly.
    env.reset()
    obs = env.step([[0, 0, 1, 0]])["ReacherBrain"].vector_observations[0]
    assert abs(obs[7]) < abs(obs[20])
    env.close()


def test_pose_stays_at_rest_without_torque(env20):
    env20.reset()
    for _ in range(50):
        info = env20.step(np.zeros((20, 4)))["ReacherBrain"]
    obs = info.vector_observations
    np.testing.assert_allclose(obs[:, 0:3], [[0, -4, 0]] * 20, atol=1e-6)
    np.testing.assert_allclose(obs[:, 13:16], [[0, -10, 0]] * 20, atol=1e-6)


def test_bang_bang_stays_finite_and_capped():
    """Full torques flipping at random: the arm stays whole and its speeds bounded.

    The 7 rad/s cap acts on each body's velocity before the joints, as in PhysX, so the
    speeds observed after the joints may pass 7 now and then (PhysX's too); the
    projection never adds kinetic energy, which bounds them.
    """
    env = ReacherEnvironment(num_agents=20, seed=6, verbose=False)
    rng = np.random.default_rng(6)
    caps_before = np.array(env.cap_counts)
    speeds = []
    for _ in range(3):
        _, infos = play_random(env, rng, bang_bang=True)
        obs = np.array([info.vector_observations for info in infos])
        assert np.isfinite(obs).all()
        # The arm never comes apart: A's centre stays 4.02 from the shoulder, B's within 10.02.
        shoulder = np.array([0.0, 0.02, 0.0])
        np.testing.assert_allclose(np.linalg.norm(obs[..., 0:3] - shoulder, axis=-1), 4.02, atol=1e-4)
        assert np.linalg.norm(obs[..., 13:16] - shoulder, axis=-1).max() <= 10.02 + 1e-4
        speeds.append(np.linalg.norm(obs[..., [[7, 8, 9], [20, 21, 22]]], axis=-1))
        quat_norm = np.linalg.norm(obs[..., 3:7], axis=-1)
        np.testing.assert_allclose(quat_norm, 1.0, atol=1e-5)
    env.close()
    speeds = np.concatenate(speeds)
    capped = np.array(env.cap_counts) - caps_before
    assert (capped > 0.2 * 3 * 1000 * 4 * 20).all()  # the cap binds on a good share of steps
    assert np.median(speeds) < 7.0
    assert speeds.max() < 2 * 7.0


# ------------------------------------------------------------------ determinism
def test_same_seed_same_observations_different_seed_different_goals():
    def run(seed):
        env = ReacherEnvironment(num_agents=20, seed=seed, verbose=False)
        rng = np.random.default_rng(0)
        first = env.reset()["ReacherBrain"].vector_observations
        obs = [env.step(rng.uniform(-1, 1, (20, 4)))["ReacherBrain"].vector_observations for _ in range(100)]
        env.close()
        return first, np.array(obs)

    a_first, a = run(11)
    b_first, b = run(11)
    c_first, _ = run(12)
    np.testing.assert_array_equal(a_first, b_first)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a_first[:, 26:29], c_first[:, 26:29])


def test_any_number_of_agents():
    env = ReacherEnvironment(num_agents=27, seed=0, verbose=False)
    info = env.reset()["ReacherBrain"]
    assert info.vector_observations.shape == (27, 33)
    assert env.step(np.zeros((27, 4)))["ReacherBrain"].vector_observations.shape == (27, 33)
    env.close()


# -------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("actions", "message"),
    [
        (np.zeros((20, 3)), r"shape \(20, 3\).*expected an \(20, 4\) array"),
        (np.zeros((19, 4)), r"shape \(19, 4\)"),
        (np.zeros(81), r"81 values"),
        (np.zeros((20, 4, 1)), r"shape \(20, 4, 1\)"),
        ([["a"] * 4] * 20, r"must be real numbers, got an array of dtype <U1"),
        ([[object()] * 4] * 20, r"must be real numbers, got an array of dtype object"),
        (np.full((20, 4), 0.5 + 0.5j), r"must be real numbers, got an array of dtype complex128"),
        ([[0.1, 0.2], [0.3]] * 10, r"must be numbers"),
        (np.full((20, 4), np.nan), r"must be finite: agent 0, action 0 is nan"),
        (np.where(np.eye(20, 4) > 0, np.inf, 0.0), r"must be finite: agent 0, action 0 is inf"),
        ({"OtherBrain": np.zeros((20, 4))}, r"unknown brain.*OtherBrain"),
    ],
)
def test_bad_actions_raise_clear_errors(env20, actions, message):
    env20.reset()
    with pytest.raises(ValueError, match=message):
        env20.step(actions)


def test_out_of_range_actions_are_clipped():
    runs = []
    for scale in (1.0, 5.0):
        env = ReacherEnvironment(num_agents=20, seed=9, verbose=False)
        env.reset()
        a = np.sign(np.random.default_rng(9).uniform(-1, 1, (20, 4))) * scale
        runs.append(np.array([env.step(a)["ReacherBrain"].vector_observations for _ in range(10)]))
        env.close()
    np.testing.assert_array_equal(runs[0], runs[1])


def test_bad_config_and_construction():
    env = ReacherEnvironment(num_agents=2, seed=0, verbose=False)
    with pytest.raises(ValueError, match=r"unknown reset parameter 'goal_colour'.*goal_speed, goal_size"):
        env.reset(config={"goal_colour": 1.0})
    with pytest.raises(ValueError, match=r"'goal_size' must be positive"):
        env.reset(config={"goal_size": 0})
    with pytest.raises(ValueError, match=r"'goal_speed' must be a number"):
        env.reset(config={"goal_speed": "fast"})
    with pytest.raises(ValueError, match=r"must be finite"):
        env.reset(config={"goal_speed": math.inf})
    with pytest.raises(ValueError, match=r"config must be a dict"):
        env.reset(config=[("goal_size", 5.0)])
    assert env.reset_parameters == {"goal_speed": 1.0, "goal_size": 5.0}  # nothing half-applied
    for bad in (0, -3, 2.5, "20", True):
        with pytest.raises(ValueError, match=r"num_agents must be a positive integer"):
            ReacherEnvironment(num_agents=bad, verbose=False)


def test_step_before_reset_and_after_close():
    env = ReacherEnvironment(num_agents=2, seed=0, verbose=False)
    with pytest.raises(RuntimeError, match=r"before reset\(\)"):
        env.step(np.zeros((2, 4)))
    env.reset()
    env.close()
    with pytest.raises(RuntimeError, match=r"closed"):
        env.step(np.zeros((2, 4)))
    with pytest.raises(RuntimeError, match=r"closed"):
        env.reset()


# -------------------------------------------------------------------- rendering
def test_render_returns_a_non_blank_frame():
    with ReacherEnvironment(num_agents=20, seed=0, verbose=False) as env:
        env.reset()
        frame = env.render(width=320, height=240)
        assert frame.shape == (240, 320, 3) and frame.dtype == np.uint8
        assert frame.std() > 10 and len(np.unique(frame.reshape(-1, 3), axis=0)) > 50
        # Goals are drawn green: some pixels are clearly green.
        green = (frame[..., 1] > 120) & (frame[..., 1] > frame[..., 0] + 40)
        assert green.sum() > 30


@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="needs Xvfb (Debian package xvfb) for a virtual display")
def test_train_mode_false_opens_the_live_viewer_on_a_display(tmp_path):
    """As the original's window: with a display and train_mode=False the arms show live."""
    display = ":97"
    xvfb = subprocess.Popen(["Xvfb", display, "-screen", "0", "800x600x24"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        script = (
            "import numpy as np\n"
            "from reacher import ReacherEnvironment\n"
            "env = ReacherEnvironment(num_agents=2, seed=0, verbose=False)\n"
            "env.reset(train_mode=False)\n"
            "assert env._viewer.is_open and env._viewer.is_running()\n"
            "for _ in range(3):\n"
            "    env.step(np.zeros((2, 4)))\n"
            "env.close()\n"
            "print('viewer ok')\n"
        )
        env = {k: v for k, v in os.environ.items() if k != "MUJOCO_GL"}
        env.update(DISPLAY=display, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
        result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
        assert "viewer ok" in result.stdout, result.stderr[-2000:]
    finally:
        xvfb.terminate()
        xvfb.wait(timeout=10)


def test_render_rejects_bad_sizes_and_cameras():
    with ReacherEnvironment(num_agents=1, seed=0, verbose=False) as env:
        env.reset()
        with pytest.raises(ValueError, match=r"width must be an integer from 1 to 1920"):
            env.render(width=4000, height=480)
        with pytest.raises(ValueError, match=r"height must be an integer from 1 to 1080"):
            env.render(width=640, height=0)
        with pytest.raises(ValueError, match=r"unknown camera 'side'"):
            env.render(camera="side")


def test_stale_display_variable_is_not_taken_for_a_display(monkeypatch):
    from envkit.display import x_display_reachable

    monkeypatch.setenv("DISPLAY", ":4242")
    assert not x_display_reachable()
    monkeypatch.delenv("DISPLAY")
    assert not x_display_reachable()
