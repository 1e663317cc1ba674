"""The built-in Crawler's engine: MuJoCo stepping each crawler in a model and data of its own.

`CrawlerEnvironment` holds the scene's rules (rewards, contacts, endings, observations) and asks an
engine for sensor rows (crawler/mjcf.py's SENSOR_SLICES, SENSOR_SIZE values a crawler): the state
before each physics step of a decision and after the last. This is the default engine; the PhysX
reference of benchmarks/physx/ answers the same two calls, so the rules are computed by the same
code from either.

The crawlers never touch (50 apart), so each is stepped alone, on a few threads: a crawler's
numbers do not depend on the thread count or on the other crawlers. Python does no work per part or
per MuJoCo step: the model's sensors record, per physics step, the poses and velocities the rules need.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from crawler import scene
from crawler.actions import drive_limits, joint_targets
from crawler.mjcf import SENSOR_SIZE, build_mjcf
from envkit.mujoco_gl import mujoco

# What MuJoCo's mj_getState saves of each crawler: everything its future steps depend on
# (time, qpos, qvel, act, the solver's warm start, ctrl, applied forces, ...).
_MJ_STATE = mujoco.mjtState.mjSTATE_INTEGRATION


class MuJoCoCrawlers:
    """n crawlers, each in a MuJoCo model of its own where it stands in the scene, stepped
    `substeps` MuJoCo steps per physics step on `threads` threads (the caller's among them)."""

    def __init__(self, num_agents: int, substeps: int, threads: int) -> None:
        n = self.num_agents = num_agents
        self.substeps = substeps
        self.models = [mujoco.MjModel.from_xml_string(build_mjcf(n, substeps, only=i)) for i in range(n)]
        self.datas = [mujoco.MjData(model) for model in self.models]
        # One crawler is one island, and its sensors are read only in each physics step's
        # mj_step1: both left off elsewhere, which changes no number (checked bitwise) and saves
        # some 7% of a MuJoCo step.
        island, sensor = int(mujoco.mjtDisableBit.mjDSBL_ISLAND), int(mujoco.mjtDisableBit.mjDSBL_SENSOR)
        for model in self.models:
            model.opt.disableflags |= island | sensor
        self._sensors_on = self.models[0].opt.disableflags & ~sensor
        self._sensors_off = self.models[0].opt.disableflags
        assert all(model.nsensordata == SENSOR_SIZE and model.nu == 12 for model in self.models)
        self._qpos0 = [model.qpos0.copy() for model in self.models]
        self.targets = np.zeros((n, 12))  # the drives' targets (ctrl), radians
        self.force_limits = np.zeros((n, 12, 2))  # no drive until the first action (SetupBodyPart sets none)
        for model, limits in zip(self.models, self.force_limits, strict=True):
            model.actuator_forcerange[:] = limits
        # The sensors per crawler at the start of each physics step of a decision, then after it.
        self._record = np.zeros((n, scene.PHYSICS_STEPS_PER_DECISION + 1, SENSOR_SIZE))
        # The calling thread steps crawlers too; helpers join it, each taking the next crawler not
        # yet taken, so a helper the OS keeps waiting (a busy machine) holds up no share of them.
        self._helpers = min(threads, n) - 1
        self._pool = ThreadPoolExecutor(self._helpers, "crawler") if self._helpers else None

    def restart(self, mask: np.ndarray) -> np.ndarray:
        """BodyPart.Reset: each part of the masked crawlers back to its first pose, at rest (the
        drives keep their settings); every crawler's sensor row (n, SENSOR_SIZE) now."""
        for i in np.flatnonzero(mask):
            model, data = self.models[i], self.datas[i]
            data.qpos[:] = self._qpos0[i]
            data.qvel[:] = 0.0
            data.qacc_warmstart[:] = 0.0
            self._sensed_step1(model, data, self._record[i, -1])  # the first pose's sensors
        return self._record[:, -1]

    def step(self, actions: np.ndarray) -> np.ndarray:
        """One decision of the actions (n, 20) as JointDriveController reads them: the sensor rows
        (n, steps + 1, SENSOR_SIZE) before each physics step and after the last."""
        self.targets[:] = joint_targets(actions)[0]
        caps = np.maximum(drive_limits(actions), 0.0)  # a negative strength gives no force
        self.force_limits[:, :, 0], self.force_limits[:, :, 1] = -caps, caps
        claim = itertools.count().__next__  # atomic under the GIL
        futures = [self._pool.submit(self._step_claimed, claim) for _ in range(self._helpers)] if self._pool else []
        self._step_claimed(claim)
        for future in futures:
            if not future.cancel():  # a helper that never started has nothing left to do
                future.result()
        return self._record

    @property
    def state(self) -> dict[str, Any]:
        """Each crawler's MuJoCo state (mj_getState's integration state: time, positions,
        velocities, the solver's warm start, the drives' targets) and its drives' force limits."""
        states = []
        for model, data in zip(self.models, self.datas, strict=True):
            state = np.empty(mujoco.mj_stateSize(model, _MJ_STATE))
            mujoco.mj_getState(model, data, state, _MJ_STATE)
            states.append(state.tolist())
        return {"substeps": self.substeps, "mujoco_state": states, "force_limits": self.force_limits.tolist()}

    def state_size(self) -> int:
        """Values in one crawler's saved MuJoCo state."""
        return int(mujoco.mj_stateSize(self.models[0], _MJ_STATE))

    def set_state(self, mujoco_state: np.ndarray, force_limits: np.ndarray) -> np.ndarray:
        """Restore what `state` saved (checked by the caller); every crawler's sensor row now."""
        for i, (model, data) in enumerate(zip(self.models, self.datas, strict=True)):
            mujoco.mj_setState(model, data, mujoco_state[i], _MJ_STATE)
            model.actuator_forcerange[:] = force_limits[i]
            self._sensed_step1(model, data, self._record[i, -1])  # this state's sensors, as after a decision
        self.force_limits[:] = force_limits
        self.targets[:] = [data.ctrl for data in self.datas]
        return self._record[:, -1]

    def fill(self, data: Any, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Copy every crawler's positions, velocities, targets and time into a model of them all
        (qpos and qvel: views of its arrays, one row a crawler), for the viewer and render."""
        for i, own in enumerate(self.datas):
            qpos[i], qvel[i] = own.qpos, own.qvel
        data.ctrl[:] = self.targets.ravel()
        data.time = self.datas[0].time

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def _step_claimed(self, claim: Callable[[], int]) -> None:
        """Step crawlers until none is left: each thread's share of a decision, taken one crawler
        at a time (claim hands each index out once; MuJoCo releases the GIL while it steps)."""
        while (i := claim()) < self.num_agents:
            self._step_crawler(i)

    def _step_crawler(self, i: int) -> None:
        """One decision's physics of crawler i, in its own model and data. Each physics step
        starts with mj_step1, whose sensors (the state before the step) are recorded, and
        mj_step2; the rest of its MuJoCo steps follow in one call. The sensors of the final state
        close the record."""
        steps, rest = scene.PHYSICS_STEPS_PER_DECISION, self.substeps - 1
        model, data, record = self.models[i], self.datas[i], self._record[i]
        model.actuator_forcerange[:] = self.force_limits[i]
        data.ctrl[:] = self.targets[i]
        for j in range(steps):
            self._sensed_step1(model, data, record[j])
            mujoco.mj_step2(model, data)
            if rest:
                mujoco.mj_step(model, data, nstep=rest)  # the rest of it (crawler/mjcf.py)
        self._sensed_step1(model, data, record[steps])  # the state after the decision

    def _sensed_step1(self, model: Any, data: Any, row: np.ndarray) -> None:
        """mj_step1 (poses, velocities, contacts of the current state; no step) with the sensors,
        copied into row."""
        model.opt.disableflags = self._sensors_on
        mujoco.mj_step1(model, data)
        model.opt.disableflags = self._sensors_off
        row[:] = data.sensordata


__all__ = ["MuJoCoCrawlers"]
