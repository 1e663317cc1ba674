"""Gymnasium tasks through train.py: the adapter (actions, observations, endings), the
training loop's handling of terminations and of copies that finish early, the CLI, resume,
the value maps and --animate, watch and evaluate on a Gymnasium run."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
import torch

import evaluate as evaluate_mod
import train as train_mod
import watch as watch_mod
from ddpg.loop import GOOD_SCORE, train
from ddpg.reporting import value_maps
from ddpg.run_folder.record_file import read_record
from ddpg.tasks import REACHER_ONE_ARM, TASKS, open_environment, reacher_task, task_for
from ddpg.variants import parse_config
from ddpg_agent import Agent, DDPGConfig
from envkit.gym_as_unity import GymEnvironment
from tests._agent_helpers import as_recorded, resumed_as_whole

COUNTDOWN_ID = "tests/Countdown-v0"


class Countdown(gym.Env):
    """Observation (steps left, 0); reward 1 per step; terminates when the countdown, which
    starts at 3 + the reset seed, reaches 0; TimeLimit truncates at 6."""

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Box(-10.0, 10.0, (2,), np.float32)
        self.action_space = gym.spaces.Box(-2.0, 2.0, (1,), np.float32)
        self.left = 0
        self.start = 3

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self.start = 3 + seed
        self.left = self.start
        return np.array([self.left, 0.0], np.float32), {}

    def step(self, action):
        self.left -= 1
        return np.array([self.left, float(action[0])], np.float32), 1.0, self.left == 0, False, {}


if COUNTDOWN_ID not in gym.registry:
    gym.register(COUNTDOWN_ID, entry_point=Countdown, max_episode_steps=6)


def test_actions_are_scaled_to_the_tasks_bounds():
    """Agent action 0.5 on Pendulum (torque bounds +-2) is torque 1.0 in the raw task."""
    env = open_environment("Pendulum-v1", 1, 3)
    raw = gym.make("Pendulum-v1")
    brain = env.brain_names[0]
    ours = env.reset()[brain].vector_observations[0]
    theirs, _ = raw.reset(seed=3)
    np.testing.assert_allclose(env.observation_from_agent(ours), theirs, rtol=1e-6)
    for _ in range(5):
        info = env.step(np.array([[0.5]]))[brain]
        theirs, reward, *_ = raw.step(np.array([1.0], np.float32))
        np.testing.assert_allclose(env.observation_from_agent(info.vector_observations[0]), theirs, rtol=1e-5)
        assert info.rewards[0] == pytest.approx(reward, rel=1e-6)
    env.close()


def test_observations_scaled_only_where_the_task_asks():
    assert task_for("MountainCarContinuous-v0").scale_observations
    with open_environment("MountainCarContinuous-v0", 1, 0) as env:
        states = env.reset()[env.brain_names[0]].vector_observations
        raw = env.observation_from_agent(states)
        assert -1.2 <= raw[0, 0] <= 0.6 and np.all(np.abs(states) <= 1.0)
        np.testing.assert_allclose(env.observation_to_agent(raw), states)
    with GymEnvironment("MountainCarContinuous-v0", seed=0, scale_observations=False) as env:
        np.testing.assert_allclose(env.reset()[env.brain_names[0]].vector_observations, raw, rtol=1e-6)


def test_terminated_and_truncated_become_local_done_and_max_reached():
    """Copies seeded 0 and 1 terminate at steps 3 and 4 (not max_reached); a countdown of 10
    is cut by the TimeLimit at 6: local_done and max_reached."""
    with GymEnvironment(COUNTDOWN_ID, num_envs=2, seed=0) as env:
        brain = env.brain_names[0]
        env.reset()
        dones = [env.step(np.zeros((2, 1)))[brain] for _ in range(4)]
        assert [d.local_done for d in dones] == [[False, False], [False, False], [True, False], [False, True]]
        assert not any(any(d.max_reached) for d in dones)
    with GymEnvironment(COUNTDOWN_ID, num_envs=1, seed=7) as env:  # countdown 10 > TimeLimit 6
        brain = env.brain_names[0]
        env.reset()
        infos = [env.step(np.zeros((1, 1)))[brain] for _ in range(6)]
        assert infos[-1].local_done == [True] and infos[-1].max_reached == [True]
        assert not any(i.local_done[0] for i in infos[:-1])


def test_the_loop_stops_bootstrapping_at_terminations_and_waits_for_copies_that_end_first():
    """Copies ending at steps 3, 4 and 5: 12 transitions stored (none after a copy's end,
    although the vector environment restarts a finished copy and it earns rewards again),
    discount 0 on each terminal one, each copy's score its own episode's return."""
    env = GymEnvironment(COUNTDOWN_ID, num_envs=3, seed=0)
    agent = Agent(2, 1, 0, warmup=10**6, n_step=1)
    scores = train(env, agent, episodes=1, max_t=50, target_score=None, good_score=None)
    env.close()
    np.testing.assert_array_equal(scores, [[3.0, 4.0, 5.0]])
    memory = agent.memory
    assert len(memory) == 12
    states, _, _, _, discounts = memory.split(memory.data[:12])
    g = agent.config.gamma
    # steps 1-3 of all copies (copy 0 ends at 3), step 4 of copies 1 and 2 (copy 1 ends), step 5 of copy 2
    expected = [g, g, g, g, g, g, 0.0, g, g, 0.0, g, 0.0]
    np.testing.assert_allclose(discounts.ravel(), expected, rtol=1e-6)
    assert states[-1, 0] == 1.0  # copy 2's last state: one step left


def test_n_step_returns_through_the_loop_end_at_each_copys_termination():
    """The same copies with 3-step returns: still 12 transitions, none past a copy's end. Step 1
    of copies 1 and 2 and step 2 of copy 2 span 3 steps (discount gamma^3); every other step
    reaches its copy's terminal state within 3 steps (discount 0), returns summed to it."""
    env = GymEnvironment(COUNTDOWN_ID, num_envs=3, seed=0)
    agent = Agent(2, 1, 0, warmup=10**6, n_step=3)
    train(env, agent, episodes=1, max_t=50, target_score=None, good_score=None)
    env.close()
    memory = agent.memory
    assert len(memory) == 12
    _, _, rewards, _, discounts = memory.split(memory.data[:12])
    g = agent.config.gamma
    assert sorted(np.round(discounts.ravel().tolist(), 6)) == [0.0] * 9 + [round(g ** 3, 6)] * 3
    np.testing.assert_allclose(sorted(rewards.ravel().tolist())[-1], 1 + g + g * g, rtol=1e-6)  # 3 rewards of 1


def test_a_truncated_episode_bootstraps():
    env = GymEnvironment(COUNTDOWN_ID, num_envs=1, seed=7)  # truncated at 6, never terminates
    agent = Agent(2, 1, 0, warmup=10**6, n_step=1)
    train(env, agent, episodes=1, target_score=None, good_score=None)
    env.close()
    assert len(agent.memory) == 6
    np.testing.assert_allclose(agent.memory.split(agent.memory.data[:6])[4].ravel(), agent.config.gamma)


@pytest.mark.parametrize("env_id, message", [
    ("NoSuchTask-v0", "unknown Gymnasium environment 'NoSuchTask-v0'"),
    ("CartPole-v1", "DDPG needs a bounded Box of continuous actions"),
])
def test_tasks_ddpg_cannot_drive_are_refused_clearly(env_id, message):
    with pytest.raises(ValueError, match=message):
        GymEnvironment(env_id)


@pytest.mark.parametrize("argv, message", [
    (["--env", "NoSuchTask-v0"], "--env: unknown Gymnasium environment"),
    (["--num-envs", "2"], "--num-envs is for a Gymnasium task"),
    (["--env", "Pendulum-v1", "--agents", "2"], "--agents is for the built-in Reacher"),
    (["--env", "Pendulum-v1", "--animate"], "the maps need exactly 2 numbers"),
    (["--animate"], "--animate needs a Gymnasium task"),
    (["--env", "Pendulum-v1", "--good-score", "high"], "expected a number or 'off'"),
])
def test_cli_refuses_bad_combinations(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        train_mod.main([*argv, "--out", str(tmp_path / "run"), "--episodes", "1", "--no-progress"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_task_settings_reach_the_run_record(tmp_path):
    out = tmp_path / "pendulum"
    code = train_mod.main(["--env", "Pendulum-v1", "--episodes", "2", "--num-envs", "2", "--out", str(out),
                           "--no-progress", "--quiet", "--config", '{"warmup": 100}'])
    assert code == 0
    record = json.loads((out / "run.json").read_text())
    task = TASKS["Pendulum-v1"]
    assert record["env_id"] == "Pendulum-v1" and record["n_agents"] == 2 and record["max_t"] == 200
    assert record["target_score"] == task.target and record["schedule"]["good_score"] is None
    assert record["config"]["learn_every"] == 1 and record["config"]["warmup"] == 100  # task, then --config
    assert record["episodes_run"] == 2 and record["learner_updates"] > 0
    scores = np.loadtxt(out / "scores.csv", delimiter=",", skiprows=1)
    assert scores.shape == (2, 3) and np.all(scores[:, 1:] < 0)  # episode column, then 2 copies


def test_resume_of_a_gymnasium_run_continues_exactly(tmp_path):
    base = ["--env", "Pendulum-v1", "--no-progress", "--quiet", "--save-buffer", "--config", '{"warmup": 100}']
    resumed_as_whole(tmp_path, base)


def test_value_maps_evaluate_the_networks_on_the_grid():
    env = open_environment("MountainCarContinuous-v0", 1)
    agent = Agent(2, 1, 0)
    grid = value_maps.grid_for(env, ("position", "velocity"))
    assert grid.low == pytest.approx((-1.2, -0.07)) and grid.high == pytest.approx((0.6, 0.07))
    q, mu = value_maps.evaluate_grid(agent, grid)
    assert q.shape == mu.shape == (grid.points, grid.points)
    xs, ys = grid.axes()
    i, j = 17, 60  # row i: velocity ys[i]; column j: position xs[j]
    s = torch.tensor(env.observation_to_agent(np.array([[xs[j], ys[i]]])), dtype=torch.float32)
    with torch.no_grad():
        assert mu[i, j] == pytest.approx(float(agent.actor_local(s)[0, 0]), abs=1e-6)
        assert q[i, j] == pytest.approx(float(agent.critic_local(s, agent.actor_local(s))[0, 0]), abs=1e-6)
    fig = value_maps.draw(agent, grid, np.array([[-0.5, 0.0], [-0.4, 0.01]]), "title")
    assert value_maps.figure_to_rgb(fig).ndim == 3
    env.close()


def test_animate_writes_frames_the_final_picture_and_an_animation(tmp_path):
    """The issue's acceptance command, on 3 episodes."""
    out = tmp_path / "mcc"
    code = train_mod.main(["--env", "MountainCarContinuous-v0", "--episodes", "3", "--animate", "--out", str(out),
                           "--no-progress", "--quiet", "--animate-every", "2"])
    assert code == 0
    frames = sorted(p.name for p in (out / "value_maps").glob("*.png"))
    assert frames == ["episode_00001.png", "episode_00002.png", "episode_00003.png"]
    assert (out / "value_map.png").stat().st_size > 10_000
    animation = [p for p in (out / "value_maps.mp4", out / "value_maps.gif") if p.exists()]
    assert len(animation) == 1 and animation[0].stat().st_size > 1_000
    import imageio.v2 as imageio

    assert len(imageio.mimread(animation[0])) == 3

    # watch.py and evaluate.py replay the run on its own task
    video = tmp_path / "mcc.gif"
    assert watch_mod.main(["--run", str(out), "--out", str(video), "--steps", "20", "--every", "5"]) == 0
    assert imageio.imread(video).shape[:2] == (400, 600)  # the task's own frame size
    assert evaluate_mod.main(["--run", str(out), "--episodes", "2", "--no-progress", "--out",
                              str(tmp_path / "eval")]) == 0
    summary = json.loads((tmp_path / "eval" / "evaluation.json").read_text())
    assert summary["environment"] == "MountainCarContinuous-v0" and summary["agents"] == 1


def test_reward_scale_changes_what_is_learned_not_the_scores():
    env = GymEnvironment(COUNTDOWN_ID, num_envs=1, seed=0)
    agent = Agent(2, 1, 0, warmup=10**6, n_step=1)
    scores = train(env, agent, episodes=1, target_score=None, good_score=None, reward_scale=0.25)
    env.close()
    np.testing.assert_array_equal(scores, [[3.0]])
    np.testing.assert_allclose(agent.memory.split(agent.memory.data[:3])[2].ravel(), 0.25)


def test_unity_reacher_through_gymnasium_keeps_reachers_settings(tmp_path):
    """UnityReacher-v0 is the default task behind Gymnasium's interface: same config, the schedule on."""
    out = tmp_path / "ur"
    assert train_mod.main(["--env", "UnityReacher-v0", "--num-envs", "2", "--episodes", "1", "--max-t", "30",
                           "--out", str(out), "--no-progress", "--quiet"]) == 0
    record = json.loads((out / "run.json").read_text())
    assert record["config"]["learn_every"] == 20 and record["schedule"]["good_score"] == 33.0
    assert record["target_score"] == 30.0 and record["env_steps"] == 60 and record["n_agents"] == 2


def test_one_arm_reacher_takes_its_own_settings_and_twenty_arms_the_defaults(tmp_path):
    """train.py --agents 1 is the course's version 1, with tasks.REACHER_ONE_ARM; --config and
    --good-score still win; 2 arms and more keep DDPGConfig's defaults and the schedule."""
    one, mine, two = tmp_path / "one", tmp_path / "mine", tmp_path / "two"
    common = ["--episodes", "1", "--max-t", "30", "--no-progress", "--quiet"]
    assert train_mod.main(["--agents", "1", "--out", str(one), *common]) == 0
    record = json.loads((one / "run.json").read_text())
    assert {k: record["config"][k] for k in REACHER_ONE_ARM.config} == REACHER_ONE_ARM.config
    assert record["schedule"]["good_score"] is None and record["task_why"] == REACHER_ONE_ARM.why
    assert train_mod.main(["--agents", "1", "--out", str(mine), "--config", '{"lr_critic": 0.001}',
                           "--good-score", "30", *common]) == 0
    record = json.loads((mine / "run.json").read_text())
    assert record["config"]["lr_critic"] == 0.001 and record["config"]["tau"] == REACHER_ONE_ARM.config["tau"]
    assert record["schedule"]["good_score"] == 30.0
    assert train_mod.main(["--agents", "2", "--out", str(two), *common]) == 0
    record = json.loads((two / "run.json").read_text())
    assert record["config"] == as_recorded(DDPGConfig()) and record["schedule"]["good_score"] == GOOD_SCORE
    assert "task_why" not in record and reacher_task(20) is None
    # a resumed one-arm run keeps its own settings and its record says why it has them
    assert train_mod.main(["--resume", str(mine), "--episodes", "2", "--no-progress", "--quiet"]) == 0
    record = json.loads((mine / "run.json").read_text())
    assert record["episodes_run"] == 2 and record["config"]["lr_critic"] == 0.001
    assert record["schedule"]["good_score"] == 30.0 and record["task_why"] == REACHER_ONE_ARM.why


@pytest.mark.parametrize("env_id", ["InvertedPendulum-v5", "InvertedDoublePendulum-v5", "Reacher-v5"])
def test_a_mujoco_task_trains_with_its_own_settings(env_id, tmp_path):
    """A task's TASKS entry (DDPG settings, reward scale, reason) reaches the agent and the record;
    the threshold is the spec's."""
    out = tmp_path / "run"
    assert train_mod.main(["--env", env_id, "--episodes", "3", "--out", str(out), "--no-progress", "--quiet",
                           "--config", '{"warmup": 10}']) == 0
    record, task = read_record(out), TASKS[env_id]
    assert record.config == as_recorded(parse_config({**task.config, "warmup": 10}))
    assert record.reward_scale == task.reward_scale and record.task_why == task.why
    assert record.schedule["good_score"] == task.good_score
    assert record.target_score == gym.spec(env_id).reward_threshold and record.max_t == gym.spec(env_id).max_episode_steps
    assert record.episodes_run == 3 and record.learner_updates > 0
