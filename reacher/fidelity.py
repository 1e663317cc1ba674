"""Measure the built-in Reacher the way the PhysX 4.1 reference measures the original.

The reference (`tests/physx_reference/README.md`) drove the Reacher arm, built in
PhysX 4.1 from the Unity prefab's numbers, with four seeded action sequences and
recorded what a learner would notice first: the score a random policy gets, how far
the segments move in 50 decisions, and the path under a constant torque. This module
drives `ReacherEnvironment` with the same action distributions and computes the same
figures, so tests and `benchmarks/bench_fidelity.py` compare like with like.

Action sequences, per arm and decision (each held for the decision's 4 physics steps):
    uniform:  U(-1, 1) for each of the 4 values
    gauss:    N(0, 1), clipped to [-1, 1]
    ou:       x += 0.15 (0 - x) + 0.2 N(0, 1) (Ornstein-Uhlenbeck, reset to 0 each
              episode), clipped to [-1, 1]
    const:    (1, 0, 0, 0): the full torque about world x on the upper segment only
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from envkit.mujoco_gl import mujoco
from reacher import mjcf
from reacher import observation as obs
from reacher.environment import (
    BRAIN_NAME,
    DEFAULT_RESET_PARAMETERS,
    DRAG_FACTOR,
    EPISODE_DECISIONS,
    GRAVITY,
    MAX_ANGULAR_SPEED,
    PHYSICS_DT,
    PHYSICS_STEPS_PER_DECISION,
    REWARD_PER_PHYSICS_STEP,
    ReacherEnvironment,
    goal_offsets,
    world_torques,
)
from reacher.physics import BODY_VELOCITY_SIZE, ArmModel, observe, simulate

POLICIES = ("uniform", "gauss", "ou")
REFERENCE_POLICY_NAMES = {"uniform": "uniform", "gauss": "gauss_clip", "ou": "ou"}  # the reference's names
A_CENTRE = slice(obs.A + obs.POSITION, obs.A + obs.POSITION + 3)
B_CENTRE = slice(obs.B + obs.POSITION, obs.B + obs.POSITION + 3)
DISTANCE_DECISION = 50  # the reference measures how far the segments moved after this many decisions


@dataclass(frozen=True)
class PolicyStats:
    """What the reference reports per action distribution."""

    policy: str
    arm_episodes: int
    score_mean: float
    score_se: float
    distance_a_median: float  # |A's centre - rest| after 50 decisions
    distance_b_median: float
    cap_fraction_a: float  # share of (arm, physics step) pairs on which the 7 rad/s cap scaled A
    cap_fraction_b: float


def read_reference_results(path: Path) -> dict[str, dict[str, float]]:
    """The figures of a reference output file's RESULT lines, by the reference's policy name."""
    out = {}
    for line in Path(path).read_text().splitlines():
        if line.startswith("RESULT "):
            fields = dict(item.split("=", 1) for item in line.split()[1:])
            policy = fields.pop("policy")
            out[policy] = {k: float(v) for k, v in fields.items() if k not in ("iters", "joint")}
    return out


def read_reference_cap_fractions(path: Path) -> dict[str, tuple[float, float]]:
    """Per policy, the share of physics steps on which PhysX's cap scaled A and B."""
    text = Path(path).read_text()
    found = re.findall(r"^policy=(\S+)\s.*?frac_steps A=(\S+) B=(\S+)", text, re.S | re.M)
    return {name: (float(a), float(b)) for name, a, b in found}


def read_reference_constant_path(path: Path) -> np.ndarray:
    """Rows (decision, A x y z, B x y z) of a reference file's constant-torque table."""
    row = re.compile(r"\s*(\d+) \|\s*(\S+)\s+(\S+)\s+(\S+) \|\s*(\S+)\s+(\S+)\s+(\S+) \|")
    return np.array([[float(x) for x in m.groups()] for line in Path(path).read_text().splitlines() if (m := row.match(line))])


def policy_actions(policy: str, rng: np.random.Generator, num_agents: int, decisions: int) -> np.ndarray:
    """One episode's actions, shape (decisions, num_agents, 4), for a named distribution."""
    shape = (decisions, num_agents, 4)
    if policy == "uniform":
        return rng.uniform(-1.0, 1.0, shape)
    if policy == "gauss":
        return np.clip(rng.standard_normal(shape), -1.0, 1.0)
    if policy == "ou":
        noise = rng.standard_normal(shape)
        x = np.zeros((num_agents, 4))
        out = np.empty(shape)
        for t in range(decisions):
            x += 0.15 * (0.0 - x) + 0.2 * noise[t]
            out[t] = x
        return np.clip(out, -1.0, 1.0)
    raise ValueError(f"unknown policy {policy!r}: expected one of {', '.join(POLICIES)}")


def measure_policy(policy: str, episodes: int, num_agents: int = 20, seed: int = 0) -> PolicyStats:
    """Play `episodes` full episodes of `num_agents` arms with one action distribution."""
    env = ReacherEnvironment(num_agents=num_agents, seed=seed, verbose=False)
    rng = np.random.default_rng(seed)
    scores, dist_a, dist_b = [], [], []
    capped = np.zeros(2)
    try:
        for _ in range(episodes):
            env.reset(train_mode=True)
            caps_before = np.array(env.cap_counts)
            actions = policy_actions(policy, rng, num_agents, EPISODE_DECISIONS)
            total = np.zeros(num_agents)
            for t in range(EPISODE_DECISIONS):
                info = env.step(actions[t])[BRAIN_NAME]
                total += info.rewards
                if t + 1 == DISTANCE_DECISION:
                    o = info.vector_observations
                    dist_a.append(np.linalg.norm(o[:, A_CENTRE] - mjcf.A_CENTRE, axis=1))
                    dist_b.append(np.linalg.norm(o[:, B_CENTRE] - mjcf.B_CENTRE, axis=1))
            scores.append(total)
            capped += np.array(env.cap_counts) - caps_before
    finally:
        env.close()
    s = np.concatenate(scores)
    arm_steps = episodes * EPISODE_DECISIONS * PHYSICS_STEPS_PER_DECISION * num_agents
    return PolicyStats(
        policy=policy,
        arm_episodes=len(s),
        score_mean=float(s.mean()),
        score_se=float(s.std(ddof=1) / np.sqrt(len(s))),
        distance_a_median=float(np.median(np.concatenate(dist_a))),
        distance_b_median=float(np.median(np.concatenate(dist_b))),
        cap_fraction_a=float(capped[0] / arm_steps),
        cap_fraction_b=float(capped[1] / arm_steps),
    )


def constant_torque_path(decisions: int = 150, every: int = 15) -> np.ndarray:
    """Rows (decision, A x y z, B x y z) under action (1, 0, 0, 0) from rest, one arm."""
    env = ReacherEnvironment(num_agents=1, seed=0, verbose=False)
    try:
        o = env.reset(train_mode=True)[BRAIN_NAME].vector_observations
        rows = [np.r_[0, o[0, A_CENTRE], o[0, B_CENTRE]]]
        for t in range(1, decisions + 1):
            o = env.step([[1.0, 0.0, 0.0, 0.0]])[BRAIN_NAME].vector_observations
            if t % every == 0:
                rows.append(np.r_[t, o[0, A_CENTRE], o[0, B_CENTRE]])
    finally:
        env.close()
    return np.array(rows)


@dataclass(frozen=True)
class Horizon:
    """How long two runs of the arm fed the same actions stay together."""

    decisions: int
    within: dict[float, int]  # tolerance -> leading decisions whose A and B centres all agree within it
    position_error: np.ndarray  # (decisions,) largest coordinate error of A's and B's centres


@dataclass(frozen=True)
class RecordedEpisode:
    """One arm's recorded episode: observations before each action, the actions, the
    reward of each decision, and the goal's start angle (degrees) and speed (degrees per step)."""

    observations: np.ndarray  # (decisions, 33)
    actions: np.ndarray  # (decisions, 4)
    rewards: np.ndarray  # (decisions,)
    goal_deg: float
    goal_speed: float


def read_recorded_episode(path: Path) -> RecordedEpisode:
    """A reference CSV (tests/physx_reference/README.md describes its columns)."""
    with Path(path).open() as f:
        rows = list(csv.DictReader(f))
    columns = list(rows[0])[2:35]
    return RecordedEpisode(
        observations=np.array([[float(r[c]) for c in columns] for r in rows]),
        actions=np.array([[float(r[f"a{k}"]) for k in range(4)] for r in rows]),
        rewards=np.array([float(r["reward_next4"]) for r in rows]),
        goal_deg=float(rows[0]["goal_deg"]),
        goal_speed=float(rows[0]["goal_speed"]),
    )


def replay(episode: RecordedEpisode, velocity_nudge: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Feed a recorded episode's actions and goal to the physics kernel (one arm, default
    goal size); returns the observations before each action (decisions, 33) and each
    decision's reward. velocity_nudge adds that much to B's angular velocity about x at
    the start, to measure how fast nearby trajectories part."""
    arm = ArmModel.from_mujoco(mujoco.MjModel.from_xml_string(mjcf.build_mjcf(1)))
    decisions = len(episode.actions)
    qpos, qvel, body_vel = np.zeros((1, 4)), np.zeros((1, 4)), np.zeros((1, BODY_VELOCITY_SIZE))
    body_vel[0, 6] = velocity_nudge
    counts, capped = np.zeros(1, dtype=np.int64), np.zeros(2, dtype=np.int64)
    obs_out = np.zeros((decisions, obs.OBSERVATION_SIZE))
    rewards = np.zeros(decisions)
    reach = mjcf.HAND_RADIUS + 0.5 * DEFAULT_RESET_PARAMETERS["goal_size"]
    actions = np.clip(episode.actions, -1.0, 1.0)
    goal_deg = episode.goal_deg
    steps = np.arange(0, PHYSICS_STEPS_PER_DECISION + 1)
    torque = np.zeros((1, 2, 3))
    for t in range(decisions):
        goals = goal_offsets(goal_deg + episode.goal_speed * steps)
        observe(qpos, body_vel, *arm.pose_arrays, obs_out[t:t + 1])
        obs_out[t, obs.GOAL:obs.GOAL + 3] = goals[0]
        obs_out[t, obs.HAND_LOCAL:obs.HAND_LOCAL + 3] = (0.0, 1.0, 0.0)
        obs_out[t, obs.GOAL_SPEED] = episode.goal_speed
        world_torques(actions[t:t + 1], out=torque)
        simulate(qpos, qvel, body_vel, torque, np.ascontiguousarray(goals[1:, None, :]), reach * reach, counts, capped,
                 *arm.arrays, PHYSICS_DT, GRAVITY, DRAG_FACTOR, MAX_ANGULAR_SPEED)  # fmt: skip
        rewards[t] = REWARD_PER_PHYSICS_STEP * counts[0]
        goal_deg += episode.goal_speed * PHYSICS_STEPS_PER_DECISION
    return obs_out, rewards


TOLERANCES = (1e-3, 1e-2, 1e-1, 1.0)


def horizon(a: np.ndarray, b: np.ndarray, tolerances: tuple[float, ...] = TOLERANCES) -> Horizon:
    """Leading decisions over which two observation sequences keep A's and B's centres together."""
    error = np.maximum(np.abs(a[:, A_CENTRE] - b[:, A_CENTRE]).max(axis=1), np.abs(a[:, B_CENTRE] - b[:, B_CENTRE]).max(axis=1))
    within = {tol: int(np.argmin(error <= tol)) if (error > tol).any() else len(error) for tol in tolerances}
    return Horizon(decisions=len(error), within=within, position_error=error)
