"""The Unity ML-Agents Crawler task (CrawlerStaticTarget), behind the unityagents 0.4 interface.

Per decision (one `step` call) each crawler's action sets its joints' drive targets and
strengths, then the physics runs 5 steps of 0.01333 s (each 20 MuJoCo steps) (`crawler/scene.py`: numbers and sources).
Rewards accrue on every physics step, as CrawlerAgent.AgentAction adds them, from the state
before that step: 0.03 x the body's velocity toward the target plus 0.01 x the cosine between
the body's forward axis and the direction to the target. A crawler whose body or upper leg
touches the ground gets -1 for that decision (GroundContact's SetReward replaces what the
decision had earned) and is done; so is one that reaches 1000 decisions (maxStep 5000). A done
crawler starts again from its first pose at the next step, as Unity's resetOnDone does; its
drives keep their last settings, as BodyPart.Reset leaves them.

MuJoCo steps the model (`crawler/mjcf.py`); each joint's slerp drive is a position actuator
with the drive's spring and damper, limited to the strength the agent asks for.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from crawler import MAX_EPISODE_STEPS, scene
from crawler import observation as obs
from crawler.mjcf import (
    ACTUATED,
    BODY_RADIUS,
    LEG_RADIUS,
    LOWER_CENTRE,
    LOWER_HALF,
    N_LEGS,
    PARTS,
    SUBSTEPS_PER_PHYSICS_STEP,
    UPPER_HALF,
    build_mjcf,
)
from reacher.brain import BrainInfo, BrainParameters
from reacher.display import x_display_reachable
from reacher.mujoco_gl import mujoco, renderer_for

BRAIN_NAME = "CrawlerBrain"
ACADEMY_NAME = "CrawlerAcademy"
ACTION_SIZE = 20
N_PARTS = len(PARTS)
QPOS_PER_AGENT = 7 + 3 * N_LEGS  # the body's free joint, then hip y, hip x, knee per leg
DOF_PER_AGENT = 6 + 3 * N_LEGS
_RADIUS = np.array([BODY_RADIUS] + [LEG_RADIUS] * 8)  # the parts' shapes, PARTS' order
_HALF = np.array([0.0] + [UPPER_HALF, LOWER_HALF] * 4)  # half the cylinder (the body is a sphere)
_CENTRE = np.array([0.0] + [0.0, LOWER_CENTRE] * 4)  # the collider's centre along the part's own y
_ENDS = np.array([True, True, False, True, False, True, False, True, False])  # body and upper legs: -1, done


# The action by index: (indices, meaning, the line of ML-Agents' code that reads them), for docs/crawler.md.
ACTIONS = (
    ("0-7", "hip targets of legs 0-3 in pairs: across the leg, -60 to 0 degrees; about the vertical, -20 to 20",
     "CrawlerAgent.AgentAction: bpDict[legNUpper].SetJointTargetRotation(vectorAction[2N], vectorAction[2N + 1], 0)"),
    ("8-11", "knee targets of legs 0-3, 0 to 150 degrees",
     "CrawlerAgent.AgentAction: bpDict[legNLower].SetJointTargetRotation(vectorAction[8 + N], 0, 0)"),
    ("12-15", "upper legs' strengths: the hip's drive up to (s + 1) / 2 x 10000",
     "CrawlerAgent.AgentAction: bpDict[legNUpper].SetJointStrength(vectorAction[12 + N])"),
    ("16-19", "lower legs' strengths: the knee's drive likewise",
     "CrawlerAgent.AgentAction: bpDict[legNLower].SetJointStrength(vectorAction[16 + N])"),
)


def joint_targets(actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Actions (n, 20) as JointDriveController reads them: the targets (n, 12) in radians in the
    actuators' order (hip x of legs 0-3, hip y, knee) and their normalised values (n, 12) in [0, 1]."""
    t = np.clip((actions[:, :12] + 1.0) * 0.5, 0.0, 1.0)  # Mathf.Lerp clamps
    norm = np.concatenate([t[:, 0:8:2], t[:, 1:8:2], t[:, 8:12]], axis=1)
    low = np.repeat([scene.HIP_X_LIMITS[0], -scene.HIP_Y_LIMIT, scene.KNEE_X_LIMITS[0]], N_LEGS)
    high = np.repeat([scene.HIP_X_LIMITS[1], scene.HIP_Y_LIMIT, scene.KNEE_X_LIMITS[1]], N_LEGS)
    return np.radians(low + (high - low) * norm), norm


def drive_limits(actions: np.ndarray) -> np.ndarray:
    """The drives' maximum forces (n, 12), actuators' order: (s + 1) / 2 x 10000, an upper leg's
    strength for both its hip axes (one slerp drive), a lower leg's for its knee."""
    s = (actions[:, 12:20] + 1.0) * 0.5 * scene.MAX_JOINT_FORCE
    return np.concatenate([s[:, :4], s[:, :4], s[:, 4:]], axis=1)


class CrawlerEnvironment:
    """Built-in stand-in for `unityagents.UnityEnvironment` running the Crawler scene.

    `CrawlerEnvironment(num_agents=12)` instead of `UnityEnvironment(file_name=...)`; the rest of
    the course's Crawler.ipynb runs unchanged. Observation: 129 values per agent
    (`crawler/observation.py` has the table). Action: 20 values in [-1, 1] (clipped): the
    hips' x and y targets of legs 0-3 (0-7, in pairs), the knees' targets (8-11), the upper
    legs' strengths (12-15) and the lower legs' (16-19). The scene has no random draws, so
    `seed` changes nothing; it is accepted because the interface passes one.
    """

    def __init__(self, num_agents: int = 12, seed: int = 0, verbose: bool = True, show_viewer: bool = True,
                 substeps: int = SUBSTEPS_PER_PHYSICS_STEP) -> None:
        if isinstance(num_agents, bool) or not isinstance(num_agents, (int, np.integer)) or num_agents < 1:
            raise ValueError(f"num_agents must be a positive integer (12 in the course's Crawler), got {num_agents!r}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        if isinstance(substeps, bool) or not isinstance(substeps, (int, np.integer)) or substeps < 1:
            raise ValueError(f"substeps must be a positive integer (MuJoCo steps per physics step), got {substeps!r}")
        self.num_agents = n = int(num_agents)
        self.substeps = int(substeps)
        self._model = mujoco.MjModel.from_xml_string(build_mjcf(n, self.substeps))
        self._data = mujoco.MjData(self._model)
        m = self._model
        assert m.nq == n * QPOS_PER_AGENT and m.nv == n * DOF_PER_AGENT and m.nu == 12 * n
        assert [m.actuator(j).name for j in range(12)] == [f"{a}_0" for a in ACTUATED]
        self._qpos0 = m.qpos0.copy()
        self._bodies = np.array([[m.body(f"{p}_{i}" if p != "body" else f"body{i}").id for p in PARTS]
                                 for i in range(n)])  # (n, 9)
        self._roots = self._bodies[:, 0]
        ground = m.geom("ground").id
        self._ground = ground
        self._geom_owner = np.full(m.ngeom, -1, dtype=np.int64)  # geom -> agent * 9 + part
        for i in range(n):
            for p, name in enumerate(PARTS):
                self._geom_owner[m.geom(f"{name}_{i}" if name != "body" else f"body{i}").id] = i * N_PARTS + p
        self._target = np.array([[scene.TARGET[0], scene.TARGET[1], m.geom(f"target{i}").pos[2]] for i in range(n)])
        self._ctrl = self._data.ctrl.reshape(n, 12)
        self._limits = m.actuator_forcerange.reshape(n, 12, 2)
        self._limits[:] = 0.0  # no drive until the first action (SetupBodyPart sets none)
        self._norm_rot = np.zeros((n, 12))
        self._strength = np.zeros((n, 12))
        self._touching = np.zeros((n, N_PARTS), dtype=bool)
        self._decisions = np.zeros(n, dtype=np.int64)
        self._done = np.zeros(n, dtype=bool)
        self._last_actions = np.zeros((n, ACTION_SIZE))
        self._obs = np.zeros((n, obs.OBSERVATION_SIZE))
        self._has_reset = False
        self._closed = False
        self._show_viewer = show_viewer
        self._renderer: Any = None
        self._viewer: Any = None
        self.brain_names = [BRAIN_NAME]
        self.external_brain_names = [BRAIN_NAME]
        self.academy_name = ACADEMY_NAME
        self.number_brains = 1
        self.number_external_brains = 1
        self.brains = {BRAIN_NAME: BrainParameters(
            brain_name=BRAIN_NAME, vector_observation_space_size=obs.OBSERVATION_SIZE,
            num_stacked_vector_observations=1, vector_action_space_size=ACTION_SIZE,
            vector_action_descriptions=[""] * ACTION_SIZE)}
        self._restart(np.ones(n, dtype=bool))
        if verbose:
            print(self)

    # ------------------------------------------------------------------ interface
    @property
    def reset_parameters(self) -> dict[str, float]:
        """None: the Crawler's academy declares no reset parameters."""
        return {}

    @property
    def random_state(self) -> dict[str, Any]:
        """What carries over from one episode to the next: the scene draws nothing at random, but
        each crawler's last commanded joint rotations and strengths stay in its observation across
        a reset (BodyPart.Reset leaves them). Saved with a run, so a resumed run sees what the
        uninterrupted one would."""
        return {"commanded_rotation": self._norm_rot.tolist(), "commanded_strength": self._strength.tolist()}

    @random_state.setter
    def random_state(self, state: dict[str, Any]) -> None:
        expected = {"commanded_rotation", "commanded_strength"}
        if not isinstance(state, Mapping) or set(state) != expected:
            raise ValueError(f"the Crawler's state is a dict with the keys {sorted(expected)}, got "
                             f"{sorted(state) if isinstance(state, Mapping) else type(state).__name__}")
        rotation = np.asarray(state["commanded_rotation"], dtype=np.float64)
        strength = np.asarray(state["commanded_strength"], dtype=np.float64)
        if rotation.shape != self._norm_rot.shape or strength.shape != self._strength.shape:
            raise ValueError(f"the saved state is for {len(rotation)} crawler(s), this environment has {self.num_agents}")
        self._norm_rot, self._strength = rotation, strength
        self._observe()

    @property
    def global_done(self) -> bool:
        """Always False, as in the original: agents restart by themselves."""
        return False

    def __str__(self) -> str:
        return (f"'{ACADEMY_NAME}' started successfully!\nUnity Academy name: {ACADEMY_NAME}\n"
                f"        Number of Brains: 1\n        Number of External Brains : 1\n        Lesson number : 0\n"
                f"        Reset Parameters :\n\t\t\n{self.brains[BRAIN_NAME]}")

    def __enter__(self) -> CrawlerEnvironment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def reset(self, train_mode: bool = True, config: Mapping[str, float] | None = None,
              lesson: int | None = None) -> dict[str, BrainInfo]:
        """Every crawler back to its first pose, at rest."""
        self._check_open()
        if config:
            raise ValueError(f"the Crawler has no reset parameters, got {dict(config)!r}; pass config=None")
        self._restart(np.ones(self.num_agents, dtype=bool))
        self._has_reset = True
        if not train_mode:
            self._open_viewer()
        return {BRAIN_NAME: self._brain_info(np.zeros(self.num_agents), self._done)}

    def step(self, vector_action: Any = None, memory: Any = None, text_action: Any = None) -> dict[str, BrainInfo]:
        """One decision of every crawler: set the drives, then 5 physics steps."""
        self._check_open()
        if not self._has_reset:
            raise RuntimeError("step() called before reset(): call env.reset(train_mode=True) first, as with the Unity binary")
        actions = self._checked(vector_action)
        if self._done.any():  # agents restart by themselves after done, like the original
            self._restart(self._done)
        self._last_actions = actions
        clipped = np.clip(actions, -1.0, 1.0)
        targets, self._norm_rot = joint_targets(clipped)
        self._ctrl[:] = targets
        self._strength = drive_limits(clipped)
        self._limits[:, :, 0] = -self._strength
        self._limits[:, :, 1] = self._strength
        rewards = self._simulate()
        self._decisions += 1
        ended = self._done | (self._decisions >= MAX_EPISODE_STEPS)
        if self._viewer is not None:
            self._sync_viewer()
        info = self._brain_info(rewards, ended, max_reached=ended & ~self._done)
        self._done = ended
        return {BRAIN_NAME: info}

    def restart_agents(self, which: Any) -> np.ndarray:
        """Put the chosen crawlers (a boolean mask or indices) back to their first pose at rest now,
        without a step (Gymnasium's autoreset); their new observations (k, 129)."""
        self._check_open()
        mask = np.zeros(self.num_agents, dtype=bool)
        mask[np.asarray(which)] = True
        self._restart(mask)
        return self._obs[mask].astype(np.float32)

    def close(self) -> None:
        """Release the renderer and viewer; any later call raises."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        self._close_viewer()
        self._closed = True

    def render(self, width: int = 640, height: int = 480, camera: str = "follow") -> np.ndarray:
        """An RGB frame (height, width, 3) uint8: camera "follow" (crawler 0) or "overview"."""
        self._check_open()
        renderer, self._renderer = self._renderer, None  # none kept if this fails: it may be closed
        self._renderer = renderer_for(self._model, renderer, width, height, camera)
        self._renderer.update_scene(self._data, camera=camera)
        return self._renderer.render()

    # ----------------------------------------------------------------- simulation
    def _checked(self, vector_action: Any) -> np.ndarray:
        """The Reacher's check with the Crawler's sizes (one function, so both refuse the same input:
        a transposed array, complex numbers, another brain's or a wrong value under the brain's name)."""
        from reacher.inputs import checked_actions

        return checked_actions(vector_action, self.num_agents, ACTION_SIZE, BRAIN_NAME)

    def _restart(self, which: np.ndarray) -> None:
        """BodyPart.Reset: each part of the chosen crawlers back to its first pose, at rest."""
        qpos = self._data.qpos.reshape(self.num_agents, QPOS_PER_AGENT)
        qvel = self._data.qvel.reshape(self.num_agents, DOF_PER_AGENT)
        qpos[which] = self._qpos0.reshape(self.num_agents, QPOS_PER_AGENT)[which]
        qvel[which] = 0.0
        self._data.qacc_warmstart[:] = 0.0
        self._decisions[which] = 0
        self._done[which] = False
        self._forward()
        self._observe()

    def _forward(self) -> None:
        """Positions, velocities and contacts of the current state (no step)."""
        mujoco.mj_fwdPosition(self._model, self._data)
        mujoco.mj_fwdVelocity(self._model, self._data)
        self._read_contacts()

    def _read_contacts(self) -> None:
        """Which parts touch the ground: within Unity's contact offset of the platform's top, as
        GroundContact hears of it (the ground is a plane, so the distance is exact)."""
        d, b = self._data, self._bodies
        axis_y = d.xmat[b, 4]  # each part's own y axis (the capsules' length), its world y component
        centre_y = d.xpos[b, 1] + axis_y * _CENTRE
        lowest = centre_y - np.abs(axis_y) * _HALF - _RADIUS
        np.less_equal(lowest - scene.GROUND_TOP, scene.CONTACT_OFFSET, out=self._touching)

    def _simulate(self) -> np.ndarray:
        """Run one decision's physics steps; the decision's reward per agent."""
        m, d = self._model, self._data
        reward = np.zeros(self.num_agents)
        fell = np.zeros(self.num_agents, dtype=bool)
        for j in range(scene.PHYSICS_STEPS_PER_DECISION):
            mujoco.mj_step1(m, d)  # the state before this step: poses, velocities, contacts
            if j > 0:
                self._read_contacts()
                fell |= (self._touching & _ENDS).any(axis=1)
            reward += np.where(fell, 0.0, self._step_reward())
            mujoco.mj_step2(m, d)
            if self.substeps > 1:
                mujoco.mj_step(m, d, nstep=self.substeps - 1)  # the rest of it (crawler/mjcf.py)
        self._forward()
        fell |= (self._touching & _ENDS).any(axis=1)
        self._observe()
        self._done = fell
        return np.where(fell, scene.GROUND_PENALTY, reward)

    def _body_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each crawler's body: position, rotation matrix (n, 3, 3) and velocity."""
        d, b = self._data, self._roots
        return d.xpos[b], d.xmat[b].reshape(-1, 3, 3), d.cvel[b, 3:] + np.cross(d.cvel[b, :3], d.xpos[b] - d.subtree_com[b])

    def _step_reward(self) -> np.ndarray:
        pos, rot, vel = self._body_state()
        to_target = self._target - pos
        direction = to_target / np.linalg.norm(to_target, axis=1, keepdims=True)
        return (scene.REWARD_VELOCITY * np.einsum("ij,ij->i", vel, direction)
                + scene.REWARD_FACING * np.einsum("ij,ij->i", rot[:, :, 2], direction))

    def _observe(self) -> None:
        d, o = self._data, self._obs
        pos, rot, _ = self._body_state()
        to_target = self._target - pos
        o[:, 0:3] = to_target / np.linalg.norm(to_target, axis=1, keepdims=True)
        o[:, obs.BODY_HEIGHT] = pos[:, 1]
        o[:, obs.BODY_FORWARD:obs.BODY_FORWARD + 3] = rot[:, :, 2]
        o[:, obs.BODY_UP:obs.BODY_UP + 3] = rot[:, :, 1]
        b = self._bodies
        roots = self._roots[:, None]
        omega = d.cvel[b, :3]  # (n, 9, 3) world angular velocities
        com_vel = d.cvel[b, 3:] + np.cross(omega, d.xipos[b] - d.subtree_com[roots])
        local = np.einsum("nji,npj->npi", rot, d.xpos[b] - pos[:, None, :]) / scene.BODY_SCALE
        parts = np.zeros((self.num_agents, N_PARTS, obs.LEG_PART_SIZE))
        parts[:, :, obs.CONTACT] = self._touching
        parts[:, :, obs.VELOCITY:obs.VELOCITY + 3] = com_vel
        parts[:, :, obs.ANGULAR_VELOCITY:obs.ANGULAR_VELOCITY + 3] = omega
        parts[:, :, obs.LOCAL_POSITION:obs.LOCAL_POSITION + 3] = local
        upper, lower = parts[:, 1::2], parts[:, 2::2]
        upper[:, :, obs.ROTATION] = self._norm_rot[:, 0:4]  # x
        upper[:, :, obs.ROTATION + 1] = self._norm_rot[:, 4:8]  # y (z: no such axis, 0)
        lower[:, :, obs.ROTATION] = self._norm_rot[:, 8:12]
        upper[:, :, obs.STRENGTH] = self._strength[:, 0:4] / scene.MAX_JOINT_FORCE
        lower[:, :, obs.STRENGTH] = self._strength[:, 8:12] / scene.MAX_JOINT_FORCE
        o[:, obs.BODY:obs.BODY + obs.PART_SIZE] = parts[:, 0, :obs.PART_SIZE]
        o[:, obs.LEGS:] = parts[:, 1:].reshape(self.num_agents, -1)

    def _brain_info(self, rewards: np.ndarray, done: np.ndarray, max_reached: np.ndarray | None = None) -> BrainInfo:
        n = self.num_agents
        return BrainInfo(
            vector_observations=self._obs.astype(np.float32).astype(np.float64),  # float32 on the wire
            rewards=np.asarray(rewards, dtype=np.float32).tolist(),
            local_done=np.asarray(done, dtype=bool).tolist(),
            max_reached=(np.zeros(n, bool) if max_reached is None else max_reached).tolist(),
            agents=list(range(n)),
            previous_vector_actions=self._last_actions.astype(np.float32).astype(np.float64),
            text_observations=[""] * n, memories=np.zeros((n, 0)), previous_text_actions=[""] * n)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the environment is closed: create a new CrawlerEnvironment to continue")

    # ------------------------------------------------------------------- viewer
    def _open_viewer(self) -> None:
        """train_mode=False on a desktop shows the crawlers live, like the original's window."""
        if self._viewer is not None or not self._show_viewer or not x_display_reachable():
            return
        try:
            import mujoco.viewer

            self._viewer = mujoco.viewer.launch_passive(self._model, self._data, show_left_ui=False, show_right_ui=False)
            self._viewer.cam.type = mujoco.mjtCamera.mjCAMERA_FIXED
            self._viewer.cam.fixedcamid = self._model.camera("follow").id
            self._next_frame_time = time.perf_counter()
        except Exception as error:  # no usable display: keep running without a window
            print(f"Crawler: no interactive viewer ({error}); use env.render() for frames")
            self._viewer = None

    def _close_viewer(self) -> None:
        if self._viewer is None:
            return
        self._viewer.close()
        self._viewer = None
        for thread in threading.enumerate():
            if "_launch_internal" in thread.name and thread is not threading.current_thread():
                thread.join(timeout=5)

    def _sync_viewer(self) -> None:
        if self._viewer.is_running():
            self._viewer.sync()
            wait = self._next_frame_time - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            self._next_frame_time = max(self._next_frame_time, time.perf_counter()) + DECISION_SECONDS
        else:
            self._close_viewer()


DECISION_SECONDS = scene.PHYSICS_DT * scene.PHYSICS_STEPS_PER_DECISION
