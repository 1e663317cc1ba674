"""The Unity ML-Agents Crawler task (CrawlerStaticTarget), behind the unityagents 0.4 interface.

Per decision (one `step` call) each crawler's action sets its joints' drive targets and
strengths, then the physics runs 5 steps of 0.01333 s (`crawler/scene.py`: numbers and sources).
The rules follow ML-Agents 0.4.0 step by step: CrawlerAgent.AgentAction, every physics step before
it runs, sets the direction to the target and adds 0.03 x the body's velocity toward it plus 0.01 x
the cosine between the body's forward axis and it; the step's narrow phase finds the contacts of the
pose it starts from, and a body or upper leg within both shapes' contact offsets of the ground makes
GroundContact replace the decision's reward with -1 (the decision's later steps still add theirs)
and end the crawler's episode; so does maxStep 5000, reported at the 1001st decision. A done
crawler is reset before it is observed (Agent.ResetIfDone precedes SendInfo), its drives keeping
their last settings, as BodyPart.Reset leaves them.

An engine steps the crawlers and answers in sensor rows (crawler/mjcf.py's SENSOR_SLICES): by
default MuJoCo (crawler/mujoco_engine.py: each crawler in a model of its own, on a few threads), or
another one (`physics`, the PhysX reference of benchmarks/physx/). The rules are computed here from
the rows after the decision, with the same code for either engine. A model of all the crawlers is
kept for the viewer and `render`, filled from MuJoCo's states when shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from crawler import MAX_EPISODE_STEPS, scene
from crawler import observation as obs
from crawler.actions import ACTION_SIZE, drive_limits, joint_targets
from crawler.contacts import ENDS, touching_in
from crawler.mjcf import ACTUATED, N_LEGS, PARTS, SENSOR_SIZE, SENSOR_SLICES, SUBSTEPS_PER_PHYSICS_STEP, build_mjcf
from crawler.mujoco_engine import MuJoCoCrawlers
from crawler.threads import checked_threads, default_threads
from envkit.brain import BrainInfo, BrainParameters
from envkit.checks import checked_actions, checked_positive_int, checked_seed
from envkit.mujoco_gl import mujoco, renderer_for
from envkit.viewer import LiveViewer

BRAIN_NAME = "CrawlerBrain"
ACADEMY_NAME = "CrawlerAcademy"
N_PARTS = len(PARTS)
QPOS_PER_AGENT = 7 + 3 * N_LEGS  # the body's free joint, then hip y, hip x, knee per leg
DOF_PER_AGENT = 6 + 3 * N_LEGS
_POS, _YAXIS, _ROOT_X, _ROOT_Z, _ROOT_VEL, _COM_VEL, _OMEGA = (SENSOR_SLICES[k] for k in (
    "pos", "yaxis", "root_xaxis", "root_zaxis", "root_vel", "com_vel", "omega"))
_OLD_STATE_KEYS = frozenset({"commanded_rotation", "commanded_strength"})
_STATE_KEYS = frozenset({*_OLD_STATE_KEYS, "simulation"})
_OLD_SIMULATION_KEYS = frozenset({"substeps", "mujoco_state", "force_limits", "decisions", "done", "touching",
                                  "last_actions", "has_reset"})
_SIMULATION_KEYS = _OLD_SIMULATION_KEYS | {"dir_to_target"}


class ExternalPhysics(Protocol):
    """Another engine stepping the same crawlers (benchmarks/physx/server.py's PhysX reference):
    it answers in the sensor rows of crawler/mjcf.py (SENSOR_SIZE values a crawler), so this
    class computes rewards, contacts and observations from either engine with the same code."""

    def restart(self, mask: np.ndarray) -> np.ndarray:
        """Put the masked crawlers (n,) in their first pose at rest; every crawler's row (n, SENSOR_SIZE)."""
        ...

    def step(self, actions: np.ndarray) -> np.ndarray:
        """One decision of the raw actions (n, 20): the rows (n, steps + 1, SENSOR_SIZE) before each
        physics step and after the last."""
        ...

    def close(self) -> None:
        """Release what the engine holds (threads, a process)."""
        ...


class CrawlerEnvironment:
    """Built-in stand-in for `unityagents.UnityEnvironment` running the Crawler scene.

    `CrawlerEnvironment(num_agents=12)` instead of `UnityEnvironment(file_name=...)`; the rest of
    the course's Crawler.ipynb runs unchanged. Observation: 129 values per agent
    (`crawler/observation.py` has the table). Action: 20 values in [-1, 1] (the targets clamped,
    as Mathf.Lerp clamps them, the strengths taken as given, as SetJointStrength takes them): the
    hips' x and y targets of legs 0-3 (0-7, in pairs), the knees' targets (8-11), the upper
    legs' strengths (12-15) and the lower legs' (16-19). The scene has no random draws, so
    `seed` changes nothing; it is accepted because the interface passes one. `threads` (default
    `default_threads()`) step the crawlers; the numbers are the same on any count. `physics`, an
    `ExternalPhysics`, steps the crawlers in another engine instead of MuJoCo (the PhysX reference
    of benchmarks/physx/), every rule of the scene unchanged.
    """

    def __init__(self, num_agents: int = 12, seed: int = 0, verbose: bool = True, show_viewer: bool = True,
                 substeps: int = SUBSTEPS_PER_PHYSICS_STEP, threads: int | None = None,
                 physics: ExternalPhysics | None = None) -> None:
        n = checked_positive_int(num_agents, "num_agents", "12 in the course's Crawler")
        checked_seed(seed)  # checked, though the scene draws nothing at random
        self.substeps = checked_positive_int(substeps, "substeps", "MuJoCo steps per physics step")
        self.threads = default_threads() if threads is None else checked_threads(threads)
        self.num_agents = n
        # The display: every crawler in one model, for the viewer and render (crawler/mjcf.py's scene).
        self._model = mujoco.MjModel.from_xml_string(build_mjcf(n, self.substeps))
        self._display = mujoco.MjData(self._model)
        self._display_stale = True
        m = self._model
        assert m.nq == n * QPOS_PER_AGENT and m.nv == n * DOF_PER_AGENT and m.nu == 12 * n
        assert [m.actuator(j).name for j in range(12)] == [f"{a}_0" for a in ACTUATED]
        # The physics: MuJoCo stepping each crawler alone (crawler/mujoco_engine.py), or another engine.
        self._engine: ExternalPhysics = MuJoCoCrawlers(n, self.substeps, self.threads) if physics is None else physics
        self._target = np.array([[scene.TARGET[0], scene.TARGET[1], m.geom(f"target{i}").pos[2]] for i in range(n)])
        # The sensors per crawler at the start of each physics step of a decision, then after it.
        self._record = np.zeros((n, scene.PHYSICS_STEPS_PER_DECISION + 1, SENSOR_SIZE))
        self._norm_rot = np.zeros((n, 12))
        self._strength = np.zeros((n, 12))
        self._touching = np.zeros((n, N_PARTS), dtype=bool)
        self._decisions = np.zeros(n, dtype=np.int64)
        self._done = np.zeros(n, dtype=bool)
        self._last_actions = np.zeros((n, ACTION_SIZE))
        self._obs = np.zeros((n, obs.OBSERVATION_SIZE))
        self._ended_obs = np.zeros((n, obs.OBSERVATION_SIZE), dtype=np.float32)
        # CrawlerAgent.dirToTarget: set only in AgentAction (every physics step, before it runs), so
        # (0, 0, 0) until the first action and one physics step stale after (a reset keeps it).
        self._dir_to_target = np.zeros((n, 3))
        self._parts = np.zeros((n, N_PARTS, obs.LEG_PART_SIZE))
        self._rot = np.zeros((n, 3, 3))
        self._has_reset = False
        self._closed = False
        self._renderer: Any = None
        self._viewer = LiveViewer("Crawler", "follow", DECISION_SECONDS, show_viewer)
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
        """Everything that decides what the crawlers do next, as plain lists (saved with a run, so
        a resumed run, even one saved mid-episode, steps on bitwise as the uninterrupted one):
        each crawler's last commanded joint rotations and strengths (they stay in its observation
        across a reset: BodyPart.Reset leaves them), and under "simulation" each crawler's MuJoCo
        state (mj_getState's integration state: time, positions, velocities, the solver's warm
        start, the drives' targets), its drives' force limits, decisions into the episode, done
        flag, parts touching the ground and last action."""
        if not isinstance(self._engine, MuJoCoCrawlers):
            raise ValueError("an environment stepped by external physics cannot save its state: only MuJoCo's is saved")
        return {"commanded_rotation": self._norm_rot.tolist(), "commanded_strength": self._strength.tolist(),
                "simulation": {**self._engine.state, "decisions": self._decisions.tolist(),
                               "done": self._done.tolist(), "touching": self._touching.tolist(),
                               "last_actions": self._last_actions.tolist(), "has_reset": self._has_reset,
                               "dir_to_target": self._dir_to_target.tolist()}}

    @random_state.setter
    def random_state(self, state: dict[str, Any]) -> None:
        keys = set(state) if isinstance(state, Mapping) else None
        if keys != _STATE_KEYS and keys != _OLD_STATE_KEYS:
            raise ValueError(f"the Crawler's state is a dict with the keys {sorted(_STATE_KEYS)} (or, saved before "
                             f"the simulation was, {sorted(_OLD_STATE_KEYS)}), got "
                             f"{sorted(state) if isinstance(state, Mapping) else type(state).__name__}")
        rotation = np.asarray(state["commanded_rotation"], dtype=np.float64)
        strength = np.asarray(state["commanded_strength"], dtype=np.float64)
        if rotation.shape != self._norm_rot.shape or strength.shape != self._strength.shape:
            raise ValueError(f"the saved state is for {len(rotation)} crawler(s), this environment has {self.num_agents}")
        if keys == _OLD_STATE_KEYS:  # the commands only, as saved before: the crawlers stay as they are
            self._norm_rot, self._strength = rotation, strength
            self._observe()
            return
        self._set_simulation(state["simulation"])
        self._norm_rot, self._strength = rotation, strength
        self._observe()

    def _set_simulation(self, sim: Any) -> None:
        """The "simulation" part of random_state: checked whole before anything is set."""
        n = self.num_agents
        if not isinstance(sim, Mapping) or set(sim) not in (_SIMULATION_KEYS, _OLD_SIMULATION_KEYS):
            raise ValueError(f"the Crawler's saved simulation is a dict with the keys {sorted(_SIMULATION_KEYS)}, got "
                             f"{sorted(sim) if isinstance(sim, Mapping) else type(sim).__name__}")
        if sim["substeps"] != self.substeps:
            raise ValueError(f"the saved state was stepped with substeps={sim['substeps']}, this environment has "
                             f"substeps={self.substeps}")
        if not isinstance(self._engine, MuJoCoCrawlers):
            raise ValueError("an environment stepped by external physics cannot restore a state: only MuJoCo's is saved")
        size = self._engine.state_size()
        arrays = {"mujoco_state": ((n, size), np.float64), "force_limits": ((n, 12, 2), np.float64),
                  "decisions": ((n,), np.int64), "done": ((n,), bool), "touching": ((n, N_PARTS), bool),
                  "last_actions": ((n, ACTION_SIZE), np.float64), "dir_to_target": ((n, 3), np.float64)}
        values = {}
        for key, (shape, dtype) in arrays.items():
            if key not in sim:  # saved before the direction was kept: the body's own, as it was then read
                continue
            value = np.asarray(sim[key], dtype=dtype)
            if value.shape != shape:
                raise ValueError(f"the saved simulation's {key} has shape {value.shape}, expected {shape} "
                                 f"({n} crawler(s))")
            values[key] = value
        self._record[:, -1] = self._engine.set_state(values["mujoco_state"], values["force_limits"])
        self._decisions[:] = values["decisions"]
        self._done[:] = values["done"]
        self._touching[:] = values["touching"]
        self._last_actions = values["last_actions"]
        self._dir_to_target = values.get("dir_to_target", self._target - self._record[:, -1, _POS][:, :3])
        self._has_reset = bool(sim["has_reset"])
        self._display_stale = True

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
            self._viewer.open(self._model, self._data)
        return {BRAIN_NAME: self._brain_info(np.zeros(self.num_agents), self._done)}

    def step(self, vector_action: Any = None, memory: Any = None, text_action: Any = None) -> dict[str, BrainInfo]:
        """One decision of every crawler: set the drives, then 5 physics steps."""
        self._check_open()
        if not self._has_reset:
            raise RuntimeError("step() called before reset(): call env.reset(train_mode=True) first, as with the Unity binary")
        actions = checked_actions(vector_action, self.num_agents, ACTION_SIZE, BRAIN_NAME)
        if self._done.any():  # only in a state saved before done crawlers restarted within the step
            self._restart(self._done)
        self._last_actions = actions
        self._norm_rot = joint_targets(actions)[1]
        self._strength = drive_limits(actions)
        rewards = self._simulate()
        self._decisions += 1
        # Agent.maxStep 5000 calls Done() after the decision that reaches it is sent, so the timeout
        # is reported one decision later, the 1001st (Agent.AgentStep / SendInfo order, ML-Agents 0.4.0).
        timeout = self._decisions > MAX_EPISODE_STEPS
        ended = self._done | timeout
        info_max = timeout & ~self._done
        self._ended_obs[ended] = self._obs[ended]
        if ended.any():  # Agent.ResetIfDone runs before SendInfo: a done crawler is observed in its first pose
            self._restart(ended)
        if self._viewer.is_open:
            self._viewer.sync(self._fill_display)
        return {BRAIN_NAME: self._brain_info(rewards, ended, max_reached=info_max)}

    @property
    def ended_observations(self) -> np.ndarray:
        """The observations (n, 129) float32 the crawlers that were done at the last step ended in,
        before Unity's reset replaced them with the first pose (Gymnasium's terminal observation;
        other rows are stale)."""
        return self._ended_obs.copy()

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
        self._viewer.close()
        self._engine.close()
        self._closed = True

    def render(self, width: int = 640, height: int = 480, camera: str = "follow") -> np.ndarray:
        """An RGB frame (height, width, 3) uint8: camera "follow" (crawler 0) or "overview"."""
        self._check_open()
        renderer, self._renderer = self._renderer, None  # none kept if this fails: it may be closed
        self._renderer = renderer_for(self._model, renderer, width, height, camera)
        self._renderer.update_scene(self._data, camera=camera)
        return self._renderer.render()

    # ----------------------------------------------------------------- simulation
    @property
    def _data(self) -> Any:
        """The display's MjData (all the crawlers), its positions and velocities filled from the
        crawlers' own (and its poses computed) when asked for: the viewer, render and checks read it."""
        if self._display_stale:
            n, d = self.num_agents, self._display
            if not isinstance(self._engine, MuJoCoCrawlers):
                raise ValueError("an environment stepped by external physics has no MuJoCo state to show")
            self._engine.fill(d, d.qpos.reshape(n, QPOS_PER_AGENT), d.qvel.reshape(n, DOF_PER_AGENT))
            mujoco.mj_fwdPosition(self._model, d)
            self._display_stale = False
        return self._display

    def _restart(self, which: np.ndarray) -> None:
        """BodyPart.Reset: each part of the chosen crawlers back to its first pose, at rest."""
        self._record[which, -1] = self._engine.restart(which)[which]
        self._decisions[which] = 0
        self._done[which] = False
        self._touching[which] = False  # BodyPart.Reset clears GroundContact.touchingGround
        self._display_stale = True
        self._observe()

    def _simulate(self) -> np.ndarray:
        """Run one decision's physics steps; the decision's reward per agent, as Unity sums it:
        each physics step's reward from the state before it, the whole replaced by -1 at the step
        whose pose the crawler's body or an upper leg first touches the ground in, the later steps
        still adding theirs."""
        self._record[:] = self._engine.step(self._last_actions)
        self._display_stale = True
        record, steps = self._record, scene.PHYSICS_STEPS_PER_DECISION
        # PhysX finds contacts in simulate's narrow phase, from the poses the step starts from, and
        # Unity sends OnCollisionEnter after it: a step's touches are those of the state before it.
        touching = touching_in(record[:, :steps])  # (n, steps, parts)
        ends = (touching & ENDS).any(axis=2)
        fell = ends.any(axis=1)
        falls_at = np.where(fell, ends.argmax(axis=1), steps)
        rewards = self._step_rewards(record[:, :-1])  # (n, steps)
        reward = np.zeros(self.num_agents)
        for j in range(steps):  # in Unity's order: AgentAction adds, then the step's contact may SetReward(-1)
            reward += rewards[:, j]
            reward[falls_at == j] = scene.GROUND_PENALTY
        self._touching[:] = touching[:, -1]
        self._dir_to_target[:] = self._target - record[:, steps - 1, _POS][:, :3]  # the last AgentAction's
        self._observe()
        self._done = fell
        return reward

    def _step_rewards(self, rows: np.ndarray) -> np.ndarray:
        """CrawlerAgent's reward of a physics step from the sensors (..., SENSOR_SIZE) before it:
        0.03 x the body's velocity toward the target plus 0.01 x its facing cosine."""
        pos, forward, vel = rows[..., _POS][..., :3], rows[..., _ROOT_Z], rows[..., _ROOT_VEL]
        to_target = self._target[:, None, :] - pos
        direction = to_target / np.linalg.norm(to_target, axis=-1, keepdims=True)
        return (scene.REWARD_VELOCITY * np.einsum("nsj,nsj->ns", vel, direction)
                + scene.REWARD_FACING * np.einsum("nsj,nsj->ns", forward, direction))

    def _observe(self) -> None:
        """The observations (n, 129) from the sensors after the last decision (or restart)."""
        o, n, rows = self._obs, self.num_agents, self._record[:, -1]
        positions = rows[:, _POS].reshape(n, N_PARTS, 3)
        pos, rot = positions[:, 0], self._rot
        rot[:, :, 0], rot[:, :, 1], rot[:, :, 2] = rows[:, _ROOT_X], rows[:, _YAXIS][:, :3], rows[:, _ROOT_Z]
        length = np.linalg.norm(self._dir_to_target, axis=1, keepdims=True)
        o[:, 0:3] = np.divide(self._dir_to_target, length, out=np.zeros_like(self._dir_to_target), where=length > 0)
        o[:, obs.BODY_HEIGHT] = pos[:, 1]
        o[:, obs.BODY_FORWARD:obs.BODY_FORWARD + 3] = rot[:, :, 2]
        o[:, obs.BODY_UP:obs.BODY_UP + 3] = rot[:, :, 1]
        local = np.einsum("nji,npj->npi", rot, positions - pos[:, None, :]) / scene.BODY_SCALE
        parts = self._parts
        parts[:, :, obs.CONTACT] = self._touching
        parts[:, :, obs.VELOCITY:obs.VELOCITY + 3] = rows[:, _COM_VEL].reshape(n, N_PARTS, 3)
        parts[:, :, obs.ANGULAR_VELOCITY:obs.ANGULAR_VELOCITY + 3] = rows[:, _OMEGA].reshape(n, N_PARTS, 3)
        parts[:, :, obs.LOCAL_POSITION:obs.LOCAL_POSITION + 3] = local
        upper, lower = parts[:, 1::2], parts[:, 2::2]
        upper[:, :, obs.ROTATION] = self._norm_rot[:, 0:4]  # x
        upper[:, :, obs.ROTATION + 1] = self._norm_rot[:, 4:8]  # y (z: no such axis, 0)
        lower[:, :, obs.ROTATION] = self._norm_rot[:, 8:12]
        upper[:, :, obs.STRENGTH] = self._strength[:, 0:4] / scene.MAX_JOINT_FORCE
        lower[:, :, obs.STRENGTH] = self._strength[:, 8:12] / scene.MAX_JOINT_FORCE
        o[:, obs.BODY:obs.BODY + obs.PART_SIZE] = parts[:, 0, :obs.PART_SIZE]
        o[:, obs.LEGS:] = parts[:, 1:].reshape(n, -1)

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

    def _fill_display(self) -> None:
        """Fill the display's data for the viewer, which shows it (the `_data` property fills it)."""
        assert self._data is self._display


DECISION_SECONDS = scene.PHYSICS_DT * scene.PHYSICS_STEPS_PER_DECISION
