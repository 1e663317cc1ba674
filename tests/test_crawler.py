"""The built-in Crawler against ML-Agents' CrawlerStaticTarget scene and the unityagents interface."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import numpy as np
import pytest

import crawler.environment as ce
from crawler import observation as obs
from crawler import scene
from crawler.environment import ACTION_SIZE, BRAIN_NAME, CrawlerEnvironment
from crawler.mjcf import LEG_RADIUS, LOWER_CENTRE, LOWER_HALF, PARTS
from tests._agent_helpers import resumed_as_whole

ROOT = Path(__file__).resolve().parent.parent
UNITY_PYTHON = ROOT / ".venv-unity" / "bin" / "python"
STILL = np.r_[np.zeros(12), -np.ones(8)]  # targets mid-range, strength 0: no drive at all


def _env(n: int = 12, **kw) -> CrawlerEnvironment:
    return CrawlerEnvironment(num_agents=n, verbose=False, show_viewer=False, **kw)


def test_the_interface_has_the_course_builds_sizes() -> None:
    env = _env()
    brain = env.brains[env.brain_names[0]]
    assert (env.brain_names, env.academy_name) == (["CrawlerBrain"], "CrawlerAcademy")
    assert (brain.vector_observation_space_size, brain.vector_action_space_size) == (129, 20)
    info = env.reset(train_mode=True)[BRAIN_NAME]
    assert info.vector_observations.shape == (12, 129) and info.agents == list(range(12))
    assert len(obs.labels()) == 129
    env.close()


def test_the_first_observation_is_the_prefabs_pose() -> None:
    o = _env(2).reset()[BRAIN_NAME].vector_observations
    assert np.allclose(o[0], o[1])  # every platform the same
    first = o[0]
    # CrawlerAgent.dirToTarget is set only in AgentAction: before any action it is (0, 0, 0), as 13
    # notebooks of the course print the genuine build's first observation
    assert first[obs.TARGET_DIRECTION:obs.TARGET_DIRECTION + 3].tolist() == [0, 0, 0]
    assert first[obs.BODY_HEIGHT] == pytest.approx(2.25, abs=1e-6)
    assert np.allclose(first[obs.BODY_FORWARD:obs.BODY_FORWARD + 3], [1, 0, 0], atol=1e-6)
    assert np.allclose(first[obs.BODY_UP:obs.BODY_UP + 3], [0, 1, 0], atol=1e-6)
    for part in range(1, 9):
        start = obs.part_start(part)
        local = first[start + obs.LOCAL_POSITION:start + obs.LOCAL_POSITION + 3]
        distance = scene.UPPER_DISTANCE if part % 2 else scene.LOWER_DISTANCE
        # the leg's origin in the body's frame, divided by its scale: 0.15 below, on a diagonal
        assert np.hypot(local[0], local[2]) * scene.BODY_SCALE == pytest.approx(distance, abs=1e-5)
        assert local[1] * scene.BODY_SCALE == pytest.approx(-scene.BODY_OFFSET[1], abs=1e-5)
        assert first[start + obs.ROTATION:start + obs.STRENGTH + 1].tolist() == [0, 0, 0, 0]  # no action yet
    assert first[obs.BODY:].reshape(-1)[obs.CONTACT] == 0
    # the parts' origins in the body's frame as the genuine build printed them (legs 0-3: upper; lower)
    printed = [(0.606093168, -0.142857209, -0.606078804), (1.33339906, -0.142857209, -1.33341408),
               (-0.606093347, -0.142857209, -0.606078625), (-1.33339953, -0.142857209, -1.33341372),
               (-0.606093168, -0.142857209, 0.606078804), (-1.33339906, -0.142857209, 1.33341408),
               (0.606093347, -0.142857209, 0.606078625), (1.33339953, -0.142857209, 1.33341372)]
    for part, expected in enumerate(printed, start=1):
        start = obs.part_start(part) + obs.LOCAL_POSITION
        assert np.allclose(first[start:start + 3], expected, atol=1e-5)


def test_the_direction_to_the_target_is_the_last_physics_steps() -> None:
    """After a decision the direction is that of AgentAction at its last physics step, from the body's
    position before that step (one physics step stale), and a reset keeps it."""
    env = _env(1)
    env.reset()
    o = env.step(np.r_[np.zeros(12), np.ones(8)][None])[BRAIN_NAME].vector_observations[0]
    before_last = env._record[0, scene.PHYSICS_STEPS_PER_DECISION - 1, :3]
    target = np.array([scene.TARGET[0], scene.TARGET[1], env._target[0, 2]])
    expected = (target - before_last) / np.linalg.norm(target - before_last)
    assert np.allclose(o[obs.TARGET_DIRECTION:obs.TARGET_DIRECTION + 3], expected, atol=1e-6)
    after = env._record[0, -1, :3]
    assert not np.allclose(expected, (target - after) / np.linalg.norm(target - after), atol=1e-9, rtol=0)
    again = env.reset()[BRAIN_NAME].vector_observations[0]
    assert np.array_equal(again[:3], o[:3])


@pytest.mark.parametrize("seed", range(6))
def test_the_commanded_rotations_and_strengths_are_observed(seed: int) -> None:
    env = _env(3)
    env.reset()
    actions = np.random.default_rng(seed).uniform(-1.3, 1.3, (3, ACTION_SIZE))
    o = env.step(actions)[BRAIN_NAME].vector_observations
    t = np.clip((actions + 1) / 2, 0, 1)
    for leg in range(4):
        upper, lower = obs.part_start(1 + 2 * leg), obs.part_start(2 + 2 * leg)
        assert np.allclose(o[:, upper + obs.ROTATION:upper + obs.ROTATION + 3],
                           np.c_[t[:, 2 * leg], t[:, 2 * leg + 1], np.zeros(3)], atol=1e-6)
        assert np.allclose(o[:, lower + obs.ROTATION:lower + obs.ROTATION + 3], np.c_[t[:, 8 + leg], np.zeros((3, 2))],
                           atol=1e-6)
        # the strengths are not clipped (SetJointStrength uses the raw value)
        assert np.allclose(o[:, upper + obs.STRENGTH], (actions[:, 12 + leg] + 1) / 2, atol=1e-6)
        assert np.allclose(o[:, lower + obs.STRENGTH], (actions[:, 16 + leg] + 1) / 2, atol=1e-6)


def test_actions_map_onto_the_joint_limits_and_drive_forces() -> None:
    targets, _ = ce.joint_targets(np.array([[-1.0] * 20, [1.0] * 20, [0.0] * 20]))
    deg = np.degrees(targets)
    assert np.allclose(deg[:, 0:4], [[-60] * 4, [0] * 4, [-30] * 4])  # hips, across the leg
    assert np.allclose(deg[:, 4:8], [[-20] * 4, [20] * 4, [0] * 4])  # hips, about the vertical
    assert np.allclose(deg[:, 8:12], [[0] * 4, [150] * 4, [75] * 4])  # knees
    limits = ce.drive_limits(np.r_[np.zeros(12), np.linspace(-1, 1, 8)][None])
    assert np.allclose(limits[0, :4], limits[0, 4:8]) and np.allclose(limits[0, :4], (np.linspace(-1, 1, 8)[:4] + 1) * 5000)
    assert np.allclose(limits[0, 8:], (np.linspace(-1, 1, 8)[4:] + 1) * 5000)


def test_the_drives_pull_the_joints_toward_their_targets() -> None:
    """Knees at 75 degrees and hips level, at full strength: a crawler standing on its feet.
    Guards the hinges' sense (a knee's range lowers the foot) and the actuators' wiring."""
    env = _env(1)
    env.reset()
    action = np.r_[np.tile([1.0, 0.0], 4), np.zeros(4), np.ones(8)][None]
    for _ in range(30):
        info = env.step(action)[BRAIN_NAME]
    assert not info.local_done[0]
    knees = np.degrees(env._data.qpos[[9, 12, 15, 18]])
    hips = np.degrees(env._data.qpos[[8, 11, 14, 17]])
    assert np.allclose(knees, 75.0, atol=5.0) and np.allclose(hips, 0.0, atol=5.0)
    o = info.vector_observations[0]
    assert o[obs.BODY_HEIGHT] > scene.GROUND_TOP + 0.5  # held up by its legs
    feet = [o[obs.part_start(2 + 2 * k) + obs.CONTACT] for k in range(4)]
    assert feet == [1, 1, 1, 1]


def test_a_crawler_without_drives_falls_ends_with_minus_one_and_starts_again() -> None:
    env = _env(2)
    env.reset()
    still = np.tile(STILL, (2, 1))
    first = env.step(still)[BRAIN_NAME]
    # Falling straight down, facing the target: 0.01 per physics step, 5 per decision.
    assert first.rewards == pytest.approx([5 * scene.REWARD_FACING] * 2, abs=2e-3)
    for _ in range(200):
        info = env.step(still)[BRAIN_NAME]
        if any(info.local_done):
            break
    assert info.local_done == [True, True] and info.max_reached == [False, False]
    # SetReward(-1) replaces the decision's reward; the physics steps after the contact still add theirs
    assert all(-1.2 < r < -0.8 for r in info.rewards)
    # Agent.ResetIfDone runs before SendInfo: the done crawler is observed in its first pose ...
    first = _env(1).reset()[BRAIN_NAME].vector_observations[0]
    for part in range(9):  # its pose and velocities (the commands it was given stay, as BodyPart.Reset leaves them)
        start = obs.part_start(part)
        values = slice(start, start + (obs.PART_SIZE if part == 0 else obs.ROTATION))
        assert np.array_equal(info.vector_observations[0, values], first[values])
    assert np.array_equal(info.vector_observations[0, 3:obs.BODY], first[3:obs.BODY])
    # ... while the pose it fell in is kept for Gymnasium's terminal observation
    ended = env.ended_observations[0]
    body = ended[obs.BODY + obs.CONTACT]
    uppers = ended[[obs.part_start(p) + obs.CONTACT for p in (1, 3, 5, 7)]]
    assert body == 1 or uppers.any()
    assert ended[obs.BODY_HEIGHT] < 1.5
    again = env.step(still)[BRAIN_NAME]
    assert again.local_done == [False, False]
    assert again.vector_observations[0, obs.BODY_HEIGHT] > 2.2  # back at the start, one decision in


def test_an_episode_lasts_1000_decisions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ce, "MAX_EPISODE_STEPS", 3)
    env = _env(1)
    env.reset()
    stand = np.r_[np.tile([1.0, 0.0], 4), np.zeros(4), np.ones(8)][None]
    # maxStep's Done() comes after the decision that reaches it is sent: reported one decision later
    done = [env.step(stand)[BRAIN_NAME] for _ in range(4)]
    assert [i.local_done[0] for i in done] == [False, False, False, True] and done[-1].max_reached == [True]
    assert done[-1].vector_observations[0, obs.BODY_HEIGHT] == pytest.approx(2.25, abs=1e-6)  # started again
    assert ce.MAX_EPISODE_STEPS != 1000 and __import__("crawler").MAX_EPISODE_STEPS == 1000


def test_random_play_stays_bounded() -> None:
    """The drives' 40000 N m/rad springs, capped, are stiff: too few MuJoCo steps per physics
    step and random play flings the crawlers (substeps=5 reaches thousands of rad/s)."""
    env = _env(12)
    env.reset()
    rng = np.random.default_rng(0)
    fastest = highest = 0.0
    for _ in range(150):
        info = env.step(rng.uniform(-1, 1, (12, ACTION_SIZE)))[BRAIN_NAME]
        fastest = max(fastest, np.abs(env._data.qvel).max())
        highest = max(highest, info.vector_observations[:, obs.BODY_HEIGHT].max())
        assert np.isfinite(info.vector_observations).all() and np.isfinite(info.rewards).all()
    assert fastest < 150 and highest < 25


def test_the_same_actions_give_the_same_run_whatever_the_seed() -> None:
    runs = []
    for seed in (0, 7):
        env = _env(3, seed=seed)
        env.reset()
        rng = np.random.default_rng(1)
        runs.append([env.step(rng.uniform(-1, 1, (3, ACTION_SIZE)))[BRAIN_NAME].vector_observations for _ in range(20)])
    assert all(np.array_equal(a, b) for a, b in zip(*runs, strict=True))


@pytest.mark.parametrize(("call", "expected"), [
    (lambda env: env.step(np.zeros((2, 19))), r"\(2, 19\).*\(2, 20\)"),
    (lambda env: env.step(np.full((2, 20), np.nan)), "NaN"),
    (lambda env: env.step("fast"), "numbers"),
    (lambda env: env.reset(config={"goal_size": 5.0}), "no reset parameters"),
    (lambda env: setattr(env, "random_state", {"x": 1}), "commanded_rotation"),
    (lambda env: setattr(env, "random_state", _env(3).random_state), "for 3 crawler"),
    (lambda env: env.render(width=0), "width"),
    (lambda env: env.render(camera="top"), "camera"),
])
def test_bad_input_is_named(call, expected: str) -> None:
    env = _env(2)
    env.reset()
    with pytest.raises(ValueError, match=expected):
        call(env)


@pytest.mark.parametrize("kwargs", [{"num_agents": 0}, {"num_agents": 2.5}, {"seed": "x"}, {"substeps": 0}])
def test_bad_construction_is_named(kwargs: dict) -> None:
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        CrawlerEnvironment(verbose=False, **kwargs)


def test_step_before_reset_and_after_close_say_what_to_do() -> None:
    env = _env(1)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros((1, 20)))
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()


def test_every_part_is_observed_in_the_agents_order() -> None:
    assert PARTS == ("body", "upper0", "lower0", "upper1", "lower1", "upper2", "lower2", "upper3", "lower3")
    assert obs.part_start(8) + obs.LEG_PART_SIZE == obs.OBSERVATION_SIZE
    # the lower leg's collider: 1.326 long, its centre 0.0936 beyond the leg's origin
    assert 2 * (LOWER_HALF + LEG_RADIUS) == pytest.approx(scene.LEG_HEIGHT * scene.LOWER_LENGTH_SCALE)
    assert LOWER_CENTRE == pytest.approx(0.0936)


# ------------------------------------------------------------------ Gymnasium
def test_gymnasium_envs_pass_the_checker_and_autoreset_on_the_next_step() -> None:
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env

    import crawler  # noqa: F401

    single = gym.make("UnityCrawler-v0")
    check_env(single.unwrapped, skip_render_check=True)
    assert single.spec.max_episode_steps == 1000 and single.spec.reward_threshold == 2000.0
    envs = gym.make_vec("UnityCrawler-v0", num_envs=2, vectorization_mode="vector_entry_point")
    first, _ = envs.reset(seed=0)
    still = np.tile(STILL, (2, 1)).astype(np.float32)
    for _ in range(200):
        fallen, rewards, terminated, truncated, _ = envs.step(still)
        if terminated.any():
            break
    assert terminated.all() and not truncated.any() and (rewards < -0.8).all()
    assert (fallen[:, obs.BODY_HEIGHT] < 1.5).all()  # the terminal observation is the fallen pose
    restart, rewards, terminated, _, _ = envs.step(still)
    assert np.array_equal(restart[:, 3:obs.BODY], first[:, 3:obs.BODY]) and (rewards == 0).all() and not terminated.any()
    envs.close()


# ------------------------------------------------------------ the Unity stand-in
def test_the_standin_serves_the_crawler() -> None:
    from crawler.standin import SCENE
    from envkit.unity import protocol as proto
    from envkit.unity.standin import StandIn, parse_args

    args = parse_args([], SCENE)
    assert args.num_agents == 12
    standin = StandIn(SCENE.factory(), 2, title="Crawler")
    init = standin.init_message().unity_output.rl_initialization_output
    assert init.name == "CrawlerAcademy"
    brain = init.brain_parameters[0]
    assert (brain.brain_name, brain.vector_observation_size, brain.vector_action_size) == ("CrawlerBrain", 129, 20)
    msg = proto.UnityMessage()
    msg.header.status = 200
    msg.unity_input.rl_input.command = proto.RESET
    out = standin.handle(msg).unity_output.rl_output.agentInfos["CrawlerBrain"].value
    assert len(out) == 2 and len(out[0].stacked_vector_observation) == 129
    standin.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def test_the_genuine_client_plays_the_standin_until_an_agent_is_done() -> None:
    if not UNITY_PYTHON.exists():
        message = f"{UNITY_PYTHON} is missing: run `make unity` to install the genuine client"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    done = subprocess.run([str(UNITY_PYTHON), str(ROOT / "tests" / "crawler_client_driver.py"), str(_free_port())],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert (seen["brain"], seen["agents"], seen["actions"], seen["observations"]) == ("CrawlerBrain", 12, 20, 129)
    assert any(seen["done"]) and seen["finite"] and seen["steps"] < 1000


# ------------------------------------------------------------ train.py, resume, watch, evaluate
def test_train_resumes_a_crawler_run_exactly_and_watch_and_evaluate_replay_it(tmp_path) -> None:
    import evaluate as evaluate_mod
    import watch as watch_mod

    base = ["--env", "UnityCrawler-v0", "--num-envs", "3", "--max-t", "25", "--no-progress", "--quiet",
            "--save-buffer", "--config", '{"warmup": 60}']
    whole, _ = resumed_as_whole(tmp_path, base)  # a stop between rounds, crawlers mid-episode, resumes exactly
    a = np.loadtxt(whole / "scores.csv", delimiter=",", skiprows=1)
    assert a.shape[1] == 2 and len(a) >= 3  # one row per crawler-episode (each crawler's own), its score
    record = json.loads((whole / "run.json").read_text())
    assert record["target_score"] == 2000.0 and record["n_agents"] == 3
    video = tmp_path / "crawler.gif"
    assert watch_mod.main(["--run", str(whole), "--out", str(video), "--steps", "6", "--every", "3"]) == 0
    import imageio.v2 as imageio

    assert imageio.imread(video).shape[:2] == (480, 640)
    assert evaluate_mod.main(["--run", str(whole), "--episodes", "1", "--agents", "1", "--no-progress",
                              "--out", str(tmp_path / "eval")]) == 0
    summary = json.loads((tmp_path / "eval" / "evaluation.json").read_text())
    assert summary["environment"] == "UnityCrawler-v0" and np.isfinite(summary["mean"])


@pytest.mark.parametrize(("preset", "switched"), [("td3", {"twin_critics": True, "policy_delay": 2}),
                                                  ("redq", {"ensemble": 10, "ensemble_subset": 2})])
def test_train_runs_the_variants_on_the_crawler(tmp_path, preset: str, switched: dict) -> None:
    import train as train_mod

    out = tmp_path / preset
    config = json.dumps({"preset": preset, "warmup": 30, "batch_size": 16})
    assert train_mod.main(["--env", "UnityCrawler-v0", "--num-envs", "2", "--max-t", "20", "--episodes", "2",
                           "--config", config, "--out", str(out), "--no-progress", "--quiet"]) == 0
    record = json.loads((out / "run.json").read_text())
    assert {k: record["config"][k] for k in switched} == switched and record["learner_updates"] > 0


def test_the_readme_shows_the_committed_crawler_run_made_by_its_command() -> None:
    import re

    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "](docs/media/crawler.gif)" in readme
    made = re.search(r"\.venv/bin/python watch\.py --run benchmarks/results/crawler_5_seeds/seed(\d+) --out "
                     r"docs/media/crawler\.gif --steps 120 --every 3 --fps 10", readme)
    assert made, "the README names the command that made its Crawler picture"
    gif = ROOT / "docs" / "media" / "crawler.gif"
    assert gif.stat().st_size <= 2_000_000
    from PIL import Image

    with Image.open(gif) as image:  # decisions 0, 3, ... until crawler 0 falls (at most 120), at the task's 640x480
        assert 2 <= image.n_frames <= 41 and image.size == (640, 480)
    run = json.loads((ROOT / f"benchmarks/results/crawler_5_seeds/seed{made.group(1)}/run.json").read_text())
    assert run["env_id"] == "UnityCrawler-v0" and run["seed"] == int(made.group(1)) and run["own_episodes"]


def test_the_seed_benchmark_records_each_seeds_run_and_greedy_score(tmp_path) -> None:
    from benchmarks import bench_crawler

    out = tmp_path / "bench.json"
    assert bench_crawler.main(["--seeds", "3", "--max-env-steps", "2400", "--runs", str(tmp_path / "runs"),
                               "--eval-episodes", "1", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    (seed,) = report["seeds"]
    assert seed["seed"] == 3 and seed["env_steps"] == 2400 and seed["rounds"] >= 1
    assert seed["kept_per_decision"] == 12.0  # every crawler's every decision is kept
    evaluation = json.loads((tmp_path / "runs" / "seed3-eval" / "evaluation.json").read_text())
    assert seed["greedy_score"] == pytest.approx(evaluation["mean"], abs=1e-3) and evaluation["episodes"] == 12
    assert seed["greedy"]["episodes"] == 12 and seed["greedy"]["min"] <= seed["greedy"]["mean"] <= seed["greedy"]["max"]
    assert report["mlagents_benchmark"] == 2000.0 and report["max_env_steps"] == 2400


@pytest.mark.parametrize(("environ", "quick"), [
    ({"CRAWLER_QUICK": "1"}, True), ({"REACHER_QUICK": "1"}, True),  # make test's, for every notebook
    ({}, False), ({"CRAWLER_QUICK": "0"}, False)])
def test_the_crawler_notebooks_quick_mode_has_its_own_name(environ: dict, quick: bool) -> None:
    """Crawler.ipynb read REACHER_QUICK only; CRAWLER_QUICK=1 now asks for its 3-episode check too."""
    import types

    cells = json.loads((ROOT / "Crawler.ipynb").read_text())["cells"]
    (line,) = [ln for c in cells if c["cell_type"] == "code" for ln in c["source"] if ln.startswith("QUICK =")]
    assert eval(line.split("=", 1)[1], {"os": types.SimpleNamespace(environ=environ)}) is quick


def test_the_arena_grows_with_the_crawlers_so_a_thousand_fit() -> None:
    """MuJoCo's stack takes about 2 x bodies x dofs bytes a step, the square of the crawlers: a fixed
    64M overflowed at 1000 (mj_stackAlloc). What 100 crawlers use, scaled, must fit each MJCF's arena."""
    import re

    from crawler.mjcf import build_mjcf

    env = _env(100)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):
        env.step(rng.uniform(-1, 1, (100, ACTION_SIZE)))
    m, d = env._model, env._data
    per_body_dof = d.maxuse_arena / (m.nbody * m.nv)  # about 2
    env.close()
    for n in (12, 1000):
        memory = re.search(r'<size memory="(\d+)M"/>', build_mjcf(n))
        assert memory, "the MJCF sets its arena in MiB"
        bodies, dofs = 1 + len(PARTS) * n, ce.DOF_PER_AGENT * n
        assert int(memory.group(1)) * 2**20 >= 1.2 * per_body_dof * bodies * dofs


@pytest.mark.parametrize(("actions", "named"), [
    (np.zeros((ACTION_SIZE, 2)), r"\(20, 2\).*\(2, 20\)"),  # transposed: as many values, the wrong shape
    (np.zeros((2, ACTION_SIZE), complex), "complex"),  # the imaginary part would be dropped
    ({"crawlerbrain": np.zeros((2, ACTION_SIZE))}, "CrawlerBrain"),  # another brain's name: not 'got dict'
    ({BRAIN_NAME: [[0.0] * ACTION_SIZE, [0.0]]}, r"\(2, 20\)"),  # the brain's, but ragged
    ([None] * (2 * ACTION_SIZE), r"\(2, 20\)"),  # not numbers (not NaN)
])
def test_the_crawler_refuses_the_actions_the_reacher_refuses(actions, named: str) -> None:
    """One check (envkit.checks.checked_actions) for both: one line naming the expected form."""
    from reacher.environment import ReacherEnvironment

    env = _env(2)
    env.reset()
    with pytest.raises(ValueError, match=named) as refused:
        env.step(actions)
    assert "\n" not in str(refused.value) and "got dict" not in str(refused.value)
    reacher = ReacherEnvironment(num_agents=ACTION_SIZE if np.shape(actions) == (ACTION_SIZE, 2) else 2,
                                 verbose=False, show_viewer=False)
    reacher.reset()
    bad = {"reacherbrain": 0} if isinstance(actions, dict) and BRAIN_NAME not in actions else actions
    with pytest.raises(ValueError):
        reacher.step(bad)


def test_no_action_is_zeros_for_the_crawler_as_for_the_reacher() -> None:
    """unityagents sends zeros for a brain given no action; the Reacher takes None so, and so does the Crawler."""
    first, second = _env(2), _env(2)
    first.reset(), second.reset()
    np.testing.assert_array_equal(first.step(None)[BRAIN_NAME].vector_observations,
                                  second.step(np.zeros((2, ACTION_SIZE)))[BRAIN_NAME].vector_observations)


@pytest.mark.parametrize("vector", [False, True])
@pytest.mark.parametrize("bad", [np.zeros(ACTION_SIZE + 1), np.zeros((ACTION_SIZE, 2)), np.zeros(2 * ACTION_SIZE),
                                 [[0.0] * ACTION_SIZE, [0.0]]])
def test_gymnasium_envs_name_the_action_shape_they_expect(vector: bool, bad) -> None:
    """One line naming (20,) or (num_envs, 20), not numpy's reshape message; a transposed array or the
    right count in another layout is refused, not reshaped."""
    from crawler.gym_env import CrawlerGymEnv, CrawlerVectorEnv

    env = CrawlerVectorEnv(num_envs=2) if vector else CrawlerGymEnv()
    env.reset(seed=0)
    expected = r"\(2, 20\)" if vector else r"\(20,\)"
    with pytest.raises(ValueError, match=expected) as refused:
        env.step(bad)
    assert "\n" not in str(refused.value) and "reshape" not in str(refused.value)
    env.close()


def test_a_finished_gymnasium_episode_asks_for_reset_instead_of_restarting() -> None:
    """Gymnasium's contract: step() after terminated or truncated needs reset(); the crawler used to
    start again silently. As Reacher's single env, a RuntimeError says so; reset() starts again."""
    import gymnasium as gym

    import crawler  # noqa: F401

    env = gym.make("UnityCrawler-v0")
    first, _ = env.reset(seed=0)
    for _ in range(200):
        _, reward, terminated, truncated, _ = env.step(STILL.astype(np.float32))
        if terminated or truncated:
            break
    assert terminated and reward < -0.8
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        env.step(STILL.astype(np.float32))
    again, _ = env.reset()
    assert np.array_equal(again[3:obs.BODY], first[3:obs.BODY])  # the direction is the last action's (Unity's)
    env.step(STILL.astype(np.float32))
    env.close()


def test_a_truncated_gymnasium_episode_asks_for_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    import crawler.gym_env
    from crawler.gym_env import CrawlerGymEnv

    monkeypatch.setattr(crawler.gym_env, "MAX_EPISODE_STEPS", 3)
    env = CrawlerGymEnv()
    env.reset()
    outcomes = [env.step(np.zeros(ACTION_SIZE, np.float32))[2:4] for _ in range(3)]
    assert outcomes[-1] == (False, True)
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        env.step(np.zeros(ACTION_SIZE, np.float32))
    env.close()


def test_the_hips_sideways_target_turns_the_leg_about_its_own_plus_z() -> None:
    """Unity's targetRotation = Euler(x, y, 0) acts as its inverse in the joint frame (axis (1, 0, 0),
    secondary axis (0, 0, -1)): hip y = +20 degrees turns the upper leg by Rz(+20) about its own axes,
    its outward y toward its own -x."""
    env = _env(1)
    env.reset()
    body = env._engine.models[0].body("upper0_0").id
    start = env._engine.datas[0].xmat[body].reshape(3, 3).copy()
    action = np.r_[np.tile([1.0, 0.0], 4), np.zeros(4), np.ones(8)]
    action[1] = 1.0  # leg 0's hip y target: +20 degrees
    for _ in range(20):
        env.step(action[None])
    turned = start.T @ env._engine.datas[0].xmat[body].reshape(3, 3)
    angle = np.degrees(np.arctan2(-turned[0, 1], turned[1, 1]))
    assert 12.0 < angle < 22.0  # toward +20, held short by the leg's weight; the other sign gives about -17


@pytest.mark.parametrize("gap", [0.0, 0.005, 0.0099, 0.0101, 0.015, 0.0199])
def test_a_part_touches_within_both_shapes_contact_offsets(gap: float) -> None:
    """PhysX makes contacts within the sum of both shapes' contact offsets (0.01 each): a body
    sphere that far above the ground touches, one 0.021 above does not."""
    from crawler.contacts import touching_in
    from crawler.mjcf import BODY_RADIUS, SENSOR_SIZE, SENSOR_SLICES

    row = np.zeros(SENSOR_SIZE)
    row[SENSOR_SLICES["pos"]] = np.tile([0.0, 10.0, 0.0], 9)  # every part high up
    row[SENSOR_SLICES["yaxis"]] = np.tile([1.0, 0.0, 0.0], 9)  # lying flat
    for height, touches in ((gap, True), (0.021, False)):
        row[1] = scene.GROUND_TOP + BODY_RADIUS + height
        assert touching_in(row)[0] == touches
