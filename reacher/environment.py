"""The Unity ML-Agents Reacher task, behind the unityagents 0.4 interface.

Per decision (one `step` call) every arm holds its action for 4 physics steps of
0.02 s. Each physics step, in the original's order: every goal advances by its speed,
an arm whose hand overlaps its goal earns 0.01, then the held world-frame torques act
on both segments and the physics steps the way PhysX 4.1 does (`reacher/physics.py`:
torque, gravity, drag and the 7 rad/s cap on each body's unconstrained velocity, then
the joints). MuJoCo holds the model and draws it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from envkit.brain import BrainInfo, BrainParameters
from envkit.checks import checked_actions, checked_positive_int, checked_seed
from envkit.mujoco_gl import mujoco, renderer_for
from envkit.viewer import LiveViewer
from reacher import ACADEMY_NAME, BRAIN_NAME, MAX_EPISODE_STEPS, PHYSICS_DT, PHYSICS_STEPS_PER_DECISION
from reacher import observation as obs
from reacher.inputs import ACTION_SIZE, DEFAULT_RESET_PARAMETERS, checked_reset_parameters
from reacher.mjcf import (
    GOAL_HEIGHT,
    GOAL_RADIUS,
    HAND_RADIUS,
    agent_roots,
    build_mjcf,
)
from reacher.physics import BODY_VELOCITY_SIZE, ArmModel, observe
from reacher.stepper import ArmStepper, default_threads

EPISODE_DECISIONS = MAX_EPISODE_STEPS
TORQUE_SCALE = 150.0
MAX_ANGULAR_SPEED = 7.0  # rad/s, Unity's Rigidbody.maxAngularVelocity default
ANGULAR_DRAG = 0.05  # per second, Unity's Rigidbody.angularDrag
GRAVITY = -9.81  # along y, Unity's default
REWARD_PER_PHYSICS_STEP = 0.01

DRAG_FACTOR = max(0.0, 1.0 - ANGULAR_DRAG * PHYSICS_DT)  # PhysX's angular damping per physics step


def goal_offsets(angle_deg: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Goal centres relative to their roots for angles (degrees) of shape (...): (8 sin, -1, 8 cos)."""
    if out is None:
        out = np.empty((*np.shape(angle_deg), 3))
    rad = np.radians(angle_deg)
    np.sin(rad, out=out[..., 0])
    np.cos(rad, out=out[..., 2])
    out[..., 0] *= GOAL_RADIUS
    out[..., 2] *= GOAL_RADIUS
    out[..., 1] = GOAL_HEIGHT
    return out


def world_torques(actions: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Actions (n, 4) in [-1, 1] as the world torques (n, 2, 3) on A and B: 150 (a0, 0, a1), 150 (a2, 0, a3)."""
    out[:, :, 0] = TORQUE_SCALE * actions[:, 0::2]
    out[:, :, 1] = 0.0
    out[:, :, 2] = TORQUE_SCALE * actions[:, 1::2]
    return out

class ReacherEnvironment:
    """Built-in stand-in for `unityagents.UnityEnvironment` running the Reacher scene.

    Only the constructor differs from code written for the Unity binary:
    `ReacherEnvironment(num_agents=20)` instead of `UnityEnvironment(file_name=...)`.

    Observation, per agent (33 values, float32 values widened to float64 as the original
    client does; names in `reacher/observation.py`; units: Unity lengths, where a segment
    is 6 long, and seconds):

    | index | quantity | frame | unit |
    |---|---|---|---|
    | 0-2 | upper segment (A): capsule centre | relative to the arm's root, world axes | length |
    | 3-6 | A's rotation, quaternion x, y, z, w | world | - |
    | 7-9 | A's angular velocity | world | rad/s |
    | 10-12 | A's velocity (centre of mass) | world | length/s |
    | 13-15 | lower segment (B): capsule centre | relative to the root, world axes | length |
    | 16-19 | B's rotation, quaternion x, y, z, w | world | - |
    | 20-22 | B's angular velocity | world | rad/s |
    | 23-25 | B's velocity at its centre of mass (the hand shifts it 1.45 towards the tip) | world | length/s |
    | 26-28 | goal centre | relative to the root, world axes | length |
    | 29-31 | the hand in B's own frame: always (0, 1, 0) | B | - |
    | 32 | goal speed | - | degrees per physics step |

    Action, per agent: 4 values, clipped to [-1, 1]: torques 150 (a0, 0, a1) on A and
    150 (a2, 0, a3) on B about world axes. Reward: 0.01 per physics step (4 per decision)
    with the hand within reach of the goal. An episode is 1000 decisions.

    `threads`: how many threads step the arms' physics (default `reacher.stepper.default_threads()`:
    `REACHER_THREADS` if set, else one on fewer than 8 CPUs and a quarter of them, at most 4, on
    more). Any number gives bitwise the same results; only the speed differs.
    """

    def __init__(
        self,
        num_agents: int = 20,
        seed: int = 0,
        goal_size: float = 5.0,
        goal_speed: float = 1.0,
        verbose: bool = True,
        show_viewer: bool = True,
        threads: int | None = None,
    ) -> None:
        self.num_agents = checked_positive_int(num_agents, "num_agents", "1 for the course's version 1, 20 for version 2")
        self._rng = np.random.default_rng(checked_seed(seed))
        self._reset_parameters = dict(DEFAULT_RESET_PARAMETERS)
        self._reset_parameters.update(checked_reset_parameters({"goal_size": goal_size, "goal_speed": goal_speed}))
        self._stepper = ArmStepper(default_threads() if threads is None else threads)  # checks threads

        n = self.num_agents
        self._model = mujoco.MjModel.from_xml_string(build_mjcf(n, self._reset_parameters["goal_size"]))
        self._data = mujoco.MjData(self._model)
        m = self._model
        self._roots = agent_roots(n)
        self._goal_geoms = np.array([m.geom(f"goal{i}").id for i in range(n)])
        # The per-arm (n, 4) views below need each arm's joints contiguous, in the order
        # shoulder x, shoulder z, elbow x, elbow z (one dof and one qpos entry each).
        order = [f"{j}{i}" for i in range(n) for j in ("shoulder_x", "shoulder_z", "elbow_x", "elbow_z")]
        assert [m.joint(k).id for k in order] == list(range(4 * n))
        assert (m.jnt_dofadr == np.arange(4 * n)).all() and (m.jnt_qposadr == np.arange(4 * n)).all()
        self._arm = ArmModel.from_mujoco(m)
        self._qvel = self._data.qvel.reshape(n, 4)  # views into MuJoCo's memory
        self._qpos = self._data.qpos.reshape(n, 4)
        self._body_vel = np.zeros((n, BODY_VELOCITY_SIZE))  # the bodies' velocities: physics state
        self._torque = np.zeros((n, 2, 3))
        self._counts = np.zeros(n, dtype=np.int64)
        self._substeps = np.arange(1, PHYSICS_STEPS_PER_DECISION + 1)[:, None]
        self._goal_angle = np.zeros(n)  # degrees
        self._goal_speed = np.zeros(n)  # degrees per physics step
        self._goal_track = np.empty((PHYSICS_STEPS_PER_DECISION, n, 3))
        self._goal = np.zeros((n, 3))  # relative to each root
        self._obs = np.zeros((n, obs.OBSERVATION_SIZE))
        self._obs[:, obs.HAND_LOCAL + 1] = 1.0  # the hand in B's local frame: constant (0, 1, 0)
        self._last_actions = np.zeros((n, ACTION_SIZE))
        self._cap_counts = np.zeros(2, dtype=np.int64)  # (arm, step) velocities of A, B the cap scaled
        self._mujoco_stale = True
        self._decisions = 0
        self._episode_over = False
        self._has_reset = False
        self._closed = False
        self._renderer: Any = None
        self._viewer = LiveViewer("Reacher", "overview", PHYSICS_DT * PHYSICS_STEPS_PER_DECISION, show_viewer)
        self._train_mode = True

        self.brain_names = [BRAIN_NAME]
        self.external_brain_names = [BRAIN_NAME]
        self.academy_name = ACADEMY_NAME
        self.number_brains = 1
        self.number_external_brains = 1
        self.brains = {
            BRAIN_NAME: BrainParameters(
                brain_name=BRAIN_NAME,
                vector_observation_space_size=obs.OBSERVATION_SIZE,
                num_stacked_vector_observations=1,
                vector_action_space_size=ACTION_SIZE,
                vector_action_descriptions=["", "", "", ""],
            )
        }
        self._restart_arms()
        if verbose:
            print(self)

    # ------------------------------------------------------------------ interface
    @property
    def reset_parameters(self) -> dict[str, float]:
        return dict(self._reset_parameters)

    def seed_goals(self, seed: int) -> None:
        """Re-seed the goals' start angles and speeds (the task's only random draws): the
        arms restart, and from the next `reset` on the goals are those of a new
        `ReacherEnvironment(seed=seed)`."""
        seed = checked_seed(seed)
        self._check_open()
        self._rng = np.random.default_rng(seed)
        self._restart_arms()  # the draw the constructor makes

    @property
    def random_state(self) -> dict[str, Any]:
        """The goals' random generator state (the only randomness of the task): saved with a
        training run, it lets a resumed run meet the goals the uninterrupted one would."""
        return self._rng.bit_generator.state

    @random_state.setter
    def random_state(self, state: dict[str, Any]) -> None:
        self._rng.bit_generator.state = state

    @property
    def cap_counts(self) -> tuple[int, int]:
        """How many times since construction the 7 rad/s cap scaled the upper segment's
        and the lower segment's velocity (counted per arm and physics step)."""
        return int(self._cap_counts[0]), int(self._cap_counts[1])

    @property
    def threads(self) -> int:
        """The threads asked to step the arms (`reacher.stepper.ArmStepper`: how many it uses)."""
        return self._stepper.threads

    @property
    def global_done(self) -> bool:
        """Always False, as in the original: agents restart by themselves."""
        return False

    def __str__(self) -> str:
        params = "\n".join(f"\t\t{k} -> {v}" for k, v in self._reset_parameters.items())
        return (
            f"'{ACADEMY_NAME}' started successfully!\n"
            f"Unity Academy name: {ACADEMY_NAME}\n"
            f"        Number of Brains: {self.number_brains}\n"
            f"        Number of External Brains : {self.number_external_brains}\n"
            f"        Lesson number : 0\n"
            f"        Reset Parameters :\n{params}\n"
            f"{self.brains[BRAIN_NAME]}"
        )

    def __enter__(self) -> ReacherEnvironment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def reset(self, train_mode: bool = True, config: Mapping[str, float] | None = None, lesson: int | None = None) -> dict[str, BrainInfo]:
        """Start a new episode for every agent; `config` overrides reset parameters (they persist)."""
        self._check_open()
        if config is not None:
            if not isinstance(config, Mapping):
                raise ValueError(f"config must be a dict of reset parameters such as {{'goal_size': 5.0}}, got {type(config).__name__}")
            self._reset_parameters.update(checked_reset_parameters(config))
            radius = 0.5 * self._reset_parameters["goal_size"]
            self._model.geom_size[self._goal_geoms, 0] = radius
        self._train_mode = bool(train_mode)
        self._restart_arms()
        self._has_reset = True
        if not self._train_mode:
            self._viewer.open(self._model, self._data)
        zeros = [0.0] * self.num_agents
        falses = [False] * self.num_agents
        return {BRAIN_NAME: self._brain_info(zeros, falses)}

    def step(self, vector_action: Any = None, memory: Any = None, text_action: Any = None) -> dict[str, BrainInfo]:
        """Advance every agent by one decision (4 physics steps with the action held)."""
        self._check_open()
        if not self._has_reset:
            raise RuntimeError("step() called before reset(): call env.reset(train_mode=True) first, as with the Unity binary")
        actions = checked_actions(vector_action, self.num_agents, ACTION_SIZE, BRAIN_NAME)
        if self._episode_over:  # agents restart by themselves after done, like the original
            self._restart_arms()
        self._last_actions = actions
        counts = self._simulate(np.clip(actions, -1.0, 1.0))
        self._decisions += 1
        self._episode_over = self._decisions >= EPISODE_DECISIONS
        # Rewards travel as float32 in the original (0.04 arrives as 0.03999999910593033).
        rewards = (counts * REWARD_PER_PHYSICS_STEP).astype(np.float32).tolist()
        if self._viewer.is_open:
            self._viewer.sync(self._sync_mujoco)
        return {BRAIN_NAME: self._brain_info(rewards, [self._episode_over] * self.num_agents)}

    def close(self) -> None:
        """Release the renderer and viewer; any later call raises."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        self._viewer.close()
        self._closed = True

    def render(self, width: int = 640, height: int = 480, camera: str = "overview") -> np.ndarray:
        """An RGB frame (height, width, 3) uint8 of the whole scene."""
        self._check_open()
        renderer, self._renderer = self._renderer, None  # none kept if this fails: it may be closed
        self._renderer = renderer_for(self._model, renderer, width, height, camera)
        self._sync_mujoco()
        self._renderer.update_scene(self._data, camera=camera)
        return self._renderer.render()

    # ----------------------------------------------------------------- simulation
    def _restart_arms(self) -> None:
        """Both segments hanging straight down at rest; new goal angle and speed."""
        n = self.num_agents
        d = self._data
        d.qpos[:] = 0.0
        d.qvel[:] = 0.0
        self._body_vel[:] = 0.0
        self._goal_angle = self._rng.integers(0, 360, size=n).astype(float)
        self._goal_speed = self._rng.uniform(-1.0, 1.0, size=n) * self._reset_parameters["goal_speed"]
        self._last_actions = np.zeros((n, ACTION_SIZE))
        self._decisions = 0
        self._episode_over = False
        self._goal = goal_offsets(self._goal_angle)
        self._observe()

    def _simulate(self, actions: np.ndarray) -> np.ndarray:
        """Run the 4 physics steps of one decision; returns the rewarded steps per agent."""
        world_torques(actions, out=self._torque)
        angles = self._goal_angle + self._substeps * self._goal_speed
        goals = goal_offsets(angles, out=self._goal_track)
        reach = HAND_RADIUS + 0.5 * self._reset_parameters["goal_size"]
        self._stepper.step(
            self._qpos, self._qvel, self._body_vel, self._torque, goals, reach * reach, self._counts,
            self._cap_counts, self._arm, PHYSICS_DT, GRAVITY, DRAG_FACTOR, MAX_ANGULAR_SPEED,
        )  # fmt: skip
        self._goal_angle = angles[-1]
        self._goal = goals[-1].copy()
        self._observe()  # MuJoCo's goal bodies follow when drawn (_sync_mujoco)
        return self._counts.copy()

    def _observe(self) -> None:
        """Fill the 33 values per agent in the original's order and frames."""
        observe(self._qpos, self._body_vel, *self._arm.pose_arrays, self._obs)
        self._obs[:, obs.GOAL:obs.GOAL + 3] = self._goal
        self._obs[:, obs.GOAL_SPEED] = self._goal_speed
        self._mujoco_stale = True

    def _sync_mujoco(self) -> None:
        """Bring MuJoCo's poses up to date with the physics, for drawing."""
        if self._mujoco_stale:
            m, d = self._model, self._data
            d.mocap_pos[:] = self._goal + self._roots
            mujoco.mj_kinematics(m, d)
            mujoco.mj_comPos(m, d)
            mujoco.mj_camlight(m, d)  # the cameras and lights follow their bodies
            self._mujoco_stale = False

    def _brain_info(self, rewards: list[float], done: list[bool]) -> BrainInfo:
        n = self.num_agents
        return BrainInfo(
            # The original sends float32 values; the client widens them to float64.
            vector_observations=self._obs.astype(np.float32).astype(np.float64),
            rewards=rewards,
            local_done=list(done),
            max_reached=list(done),
            agents=list(range(n)),
            previous_vector_actions=self._last_actions.astype(np.float32).astype(np.float64),
            text_observations=[""] * n,
            memories=np.zeros((n, 0)),
            previous_text_actions=[""] * n,
        )

    # ------------------------------------------------------------------ checking
    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the environment is closed: create a new ReacherEnvironment to continue")
