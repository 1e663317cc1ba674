"""How the built-in Crawler steps: each crawler in a MuJoCo model of its own, on any number of
threads, its rewards and observations computed after the decision from recorded sensors, and
its whole state saved and restored (crawler/environment.py)."""

from __future__ import annotations

import json

import mujoco
import numpy as np
import pytest

from crawler import observation as obs
from crawler import scene
from crawler.actions import ACTION_SIZE, drive_limits, joint_targets
from crawler.contacts import _CENTRE, _HALF, _RADIUS
from crawler.contacts import ENDS as _ENDS
from crawler.environment import BRAIN_NAME, CrawlerEnvironment
from crawler.mjcf import PARTS, build_mjcf

STILL = np.r_[np.zeros(12), -np.ones(8)]  # no drive: a crawler drops onto its body within 10 decisions


def _env(n: int, **kw) -> CrawlerEnvironment:
    return CrawlerEnvironment(num_agents=n, verbose=False, show_viewer=False, **kw)


def _actions(n: int, decisions: int, seed: int = 0) -> np.ndarray:
    """Random play, crawler 0 without drives (it falls and starts again within the run)."""
    actions = np.random.default_rng(seed).uniform(-1.0, 1.0, (decisions, n, ACTION_SIZE))
    actions[:, 0] = STILL
    return actions


def _play(env: CrawlerEnvironment, actions: np.ndarray) -> list[tuple[np.ndarray, list, list]]:
    out = []
    for a in actions:
        info = env.step(a)[BRAIN_NAME]
        out.append((info.vector_observations, info.rewards, info.local_done))
    return out


def _same(a: list, b: list) -> bool:
    return all(np.array_equal(x[0], y[0]) and x[1] == y[1] and x[2] == y[2] for x, y in zip(a, b, strict=True))


class _PerStepCrawler:
    """The reward, contacts and observation computed in Python between MuJoCo's mj_step1 and
    mj_step2 at every physics step, from the bodies' poses and velocities, in Unity's order:
    AgentAction (direction to the target, reward) then the physics step, whose narrow phase finds
    the contacts of the pose it starts from; a fall's SetReward(-1) replaces what the decision had
    earned, later steps add; a done crawler is reset before it is observed. One crawler, stepped in
    the same model as the environment's."""

    def __init__(self, n: int, i: int, substeps: int = 20) -> None:
        self.m = mujoco.MjModel.from_xml_string(build_mjcf(n, substeps, only=i))
        self.d = mujoco.MjData(self.m)
        self.substeps = substeps
        self.bodies = np.array([self.m.body(f"{p}_{i}" if p != "body" else f"body{i}").id for p in PARTS])
        self.target = np.array([scene.TARGET[0], scene.TARGET[1], self.m.geom(f"target{i}").pos[2]])
        self.m.actuator_forcerange[:] = 0.0
        self.norm_rot, self.strength = np.zeros(12), np.zeros(12)
        self.done = False
        self.dir_to_target = np.zeros(3)
        self.restart()

    def restart(self) -> None:
        self.d.qpos[:] = self.m.qpos0
        self.d.qvel[:] = 0.0
        self.d.qacc_warmstart[:] = 0.0
        self.forward()
        self.touching[:] = False

    def forward(self) -> None:
        mujoco.mj_fwdPosition(self.m, self.d)
        mujoco.mj_fwdVelocity(self.m, self.d)
        self.read_contacts()

    def read_contacts(self) -> None:
        d, b = self.d, self.bodies
        axis_y = d.xmat[b, 4]
        centre_y = d.xpos[b, 1] + axis_y * _CENTRE
        lowest = centre_y - np.abs(axis_y) * _HALF - _RADIUS
        self.touching = np.less_equal(lowest - scene.GROUND_TOP, 2 * scene.CONTACT_OFFSET)

    def body_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        d, b = self.d, self.bodies[:1]
        return d.xpos[b], d.xmat[b].reshape(-1, 3, 3), d.cvel[b, 3:] + np.cross(d.cvel[b, :3], d.xpos[b] - d.subtree_com[b])

    def step_reward(self) -> np.ndarray:
        pos, rot, vel = self.body_state()
        to_target = self.target - pos
        direction = to_target / np.linalg.norm(to_target, axis=1, keepdims=True)
        return (scene.REWARD_VELOCITY * np.einsum("ij,ij->i", vel, direction)
                + scene.REWARD_FACING * np.einsum("ij,ij->i", rot[:, :, 2], direction))

    def step(self, action: np.ndarray) -> tuple[float, np.ndarray]:
        targets, norm = joint_targets(action[None])
        self.norm_rot, self.strength = norm[0], drive_limits(action[None])[0]
        self.d.ctrl[:] = targets[0]
        cap = np.maximum(self.strength, 0.0)
        self.m.actuator_forcerange[:, 0], self.m.actuator_forcerange[:, 1] = -cap, cap
        reward, fell = np.zeros(1), False
        for _ in range(scene.PHYSICS_STEPS_PER_DECISION):
            mujoco.mj_step1(self.m, self.d)
            self.dir_to_target = self.target - self.body_state()[0][0]  # AgentAction
            reward += self.step_reward()
            self.read_contacts()  # the narrow phase, on the pose the step starts from
            if not fell and (self.touching & _ENDS).any():
                fell, reward[:] = True, scene.GROUND_PENALTY  # OnCollisionEnter after the step: SetReward(-1)
            mujoco.mj_step2(self.m, self.d)
            mujoco.mj_step(self.m, self.d, nstep=self.substeps - 1)
        touching = self.touching.copy()
        self.forward()
        self.touching = touching  # the last step's contacts
        self.done = fell
        if fell:  # ResetIfDone, before the observation is sent
            self.restart()
        return float(reward[0]), self.observe()

    def observe(self) -> np.ndarray:
        d, o = self.d, np.zeros(obs.OBSERVATION_SIZE)
        pos, rot, _ = self.body_state()
        pos, rot = pos[0], rot[0]
        o[0:3] = self.dir_to_target / np.linalg.norm(self.dir_to_target)
        o[obs.BODY_HEIGHT] = pos[1]
        o[obs.BODY_FORWARD:obs.BODY_FORWARD + 3] = rot[:, 2]
        o[obs.BODY_UP:obs.BODY_UP + 3] = rot[:, 1]
        b = self.bodies
        omega = d.cvel[b, :3]
        com_vel = d.cvel[b, 3:] + np.cross(omega, d.xipos[b] - d.subtree_com[b[0]])
        local = np.einsum("ji,pj->pi", rot, d.xpos[b] - pos) / scene.BODY_SCALE
        parts = np.zeros((len(PARTS), obs.LEG_PART_SIZE))
        parts[:, obs.CONTACT] = self.touching
        parts[:, obs.VELOCITY:obs.VELOCITY + 3] = com_vel
        parts[:, obs.ANGULAR_VELOCITY:obs.ANGULAR_VELOCITY + 3] = omega
        parts[:, obs.LOCAL_POSITION:obs.LOCAL_POSITION + 3] = local
        parts[1::2, obs.ROTATION] = self.norm_rot[0:4]
        parts[1::2, obs.ROTATION + 1] = self.norm_rot[4:8]
        parts[2::2, obs.ROTATION] = self.norm_rot[8:12]
        parts[1::2, obs.STRENGTH] = self.strength[0:4] / scene.MAX_JOINT_FORCE
        parts[2::2, obs.STRENGTH] = self.strength[8:12] / scene.MAX_JOINT_FORCE
        o[obs.BODY:obs.BODY + obs.PART_SIZE] = parts[0, :obs.PART_SIZE]
        o[obs.LEGS:] = parts[1:].ravel()
        return o


def test_rewards_and_observations_are_the_per_physics_step_computations() -> None:
    """The sensors recorded per physics step and the rewards summed after the decision give
    exactly (bitwise, in float64) what Python computing between MuJoCo's calls gave, falls and
    restarts included: the same physics, the same numbers."""
    n, actions = 3, _actions(3, 40, seed=2)
    env = _env(n, threads=1)
    env.reset()
    refs = [_PerStepCrawler(n, i) for i in range(n)]
    rewards = []
    simulate = env._simulate
    env._simulate = lambda: rewards.append(simulate()) or rewards[-1]  # the float64 rewards, before float32
    fell = 0
    for a in actions:
        env.step(a)
        expected = [ref.step(a[i]) for i, ref in enumerate(refs)]
        assert np.array_equal(rewards[-1], [r for r, _ in expected])
        assert np.array_equal(env._obs, np.stack([o for _, o in expected]))
        fell += sum(ref.done for ref in refs)
    assert fell >= 2  # crawler 0 fell and started again at least twice: the -1 path is covered


def test_the_numbers_are_the_same_on_any_number_of_threads() -> None:
    actions = _actions(5, 25, seed=3)
    runs = []
    for threads in (1, 2, 3):
        env = _env(5, threads=threads)
        assert env.threads == threads
        env.reset()
        runs.append(_play(env, actions))
        env.close()
    assert _same(runs[0], runs[1]) and _same(runs[0], runs[2])


def test_a_crawlers_run_does_not_depend_on_its_neighbours() -> None:
    """Crawler 0 alone or beside two others, the same actions: the same numbers."""
    actions = _actions(3, 20, seed=4)
    alone, beside = _env(1), _env(3)
    alone.reset(), beside.reset()
    for a in actions:
        one, three = alone.step(a[:1])[BRAIN_NAME], beside.step(a)[BRAIN_NAME]
        assert np.array_equal(one.vector_observations[0], three.vector_observations[0])
        assert one.rewards[0] == three.rewards[0]


@pytest.mark.parametrize("threads", [(1, 2), (2, 1)])
def test_random_state_resumes_mid_episode_bitwise(threads: tuple[int, int]) -> None:
    """Save mid-episode (through JSON, as plain as a run's state gets), restore in a new
    environment after its reset: the same actions then give the same observations, rewards and
    ends, bit for bit, a fall and restart among them."""
    actions = _actions(3, 20, seed=5)
    first = _env(3, threads=threads[0])
    first.reset()
    _play(first, actions[:6])
    saved = json.loads(json.dumps(first.random_state))
    inner = [(d.time, d.qpos.copy(), d.qvel.copy(), d.qacc_warmstart.copy(), d.ctrl.copy(), m.actuator_forcerange.copy())
             for m, d in zip(first._engine.models, first._engine.datas, strict=True)]
    expected = _play(first, actions[6:])
    assert any(done[0] for _, _, done in expected)
    second = _env(3, threads=threads[1])
    second.reset()
    second.random_state = saved
    for (time, *arrays), m, d in zip(inner, second._engine.models, second._engine.datas, strict=True):  # the solver's warm start too
        assert d.time == time and all(np.array_equal(a, b) for a, b in zip(
            arrays, (d.qpos, d.qvel, d.qacc_warmstart, d.ctrl, m.actuator_forcerange), strict=True))
    assert _same(_play(second, actions[6:]), expected)


def test_an_old_random_state_sets_the_commands_only() -> None:
    """A state saved before the simulation was (the commanded rotations and strengths) loads as
    it did: the observation shows them, the crawlers stay where they are."""
    env = _env(2)
    env.reset()
    qpos = env._data.qpos.copy()
    rotation, strength = np.full((2, 12), 0.25), np.full((2, 12), 5000.0)
    env.random_state = {"commanded_rotation": rotation.tolist(), "commanded_strength": strength.tolist()}
    o = env._obs
    assert np.all(o[:, obs.part_start(1) + obs.ROTATION] == 0.25)
    assert np.all(o[:, obs.part_start(2) + obs.STRENGTH] == 0.5)
    assert np.array_equal(env._data.qpos, qpos)


@pytest.mark.parametrize(("change", "expected"), [
    (lambda s: s["simulation"].pop("touching"), "simulation is a dict with the keys"),
    (lambda s: s["simulation"].update(decisions=[1, 2, 3]), "decisions has shape"),
    (lambda s: s["simulation"].update(substeps=10), "substeps=10"),
])
def test_a_bad_saved_simulation_is_named(change, expected: str) -> None:
    env = _env(2)
    env.reset()
    state = env.random_state
    change(state)
    with pytest.raises(ValueError, match=expected):
        env.random_state = state


@pytest.mark.parametrize("bad", [0, "two", 1.5])
def test_a_bad_thread_count_is_named(bad: object, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="threads"):
        _env(1, threads=bad)
    monkeypatch.setenv("CRAWLER_THREADS", str(bad))
    with pytest.raises(ValueError, match="CRAWLER_THREADS"):
        _env(1)
