"""MuJoCo against the PhysX reference one decision at a time, on the states a walking policy visits.

    python -m benchmarks.bench_crawler_prediction --actor PATH --physx BINARY \\
        --json benchmarks/results/crawler_genuine/prediction.json

The genuine-trained SAC (``models/sac_crawler_best.pth`` of legalaspro/unity-reacher-crawler-deeprl)
walks the 12 crawlers of the PhysX reference (its kept readings, ``KEPT_READINGS``) for ``--decisions``
decisions. At every ``--every``-th decision each crawler's state is carried into the built-in
Crawler's MuJoCo model (the body's pose and velocity, the hinges' angles from the legs' axes, the
joint velocities by least squares over every part's velocity and angular velocity), the same action
is stepped for one decision, and the sensor rows after it are compared with PhysX's. Random play
parts ways within decisions, so a whole-episode comparison measures chaos as much as the engines;
one decision from the same state measures the engines.

The same predictions are made by PhysX itself, a fresh reference put in the recorded state: with
Unity's 12 solver iterations (the floor: only PhysX's caches, rebuilt, differ) and with more
(``--iterations``: PhysX nearer its converged answer).

Reported per figure, median and 90th percentile over the crawler-decisions: how far the carried
state is from PhysX's own (the part of PhysX's maximal-coordinate joints a tree of hinges cannot
hold), and after the decision the body's position, the parts' positions, their velocities and
angular velocities, and the body's height (MuJoCo's less PhysX's: its sign says which pushes higher);
and for scale, how far PhysX's body moved in the decision and its parts' fastest speeds.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import torch

from benchmarks.bench_crawler_genuine import CRAWLERS, load_actor, sha256
from benchmarks.physx.server import KEPT_READINGS
from crawler.actions import drive_limits, joint_targets
from crawler.environment import BRAIN_NAME, CrawlerEnvironment
from crawler.mjcf import N_LEGS, PARTS, SENSOR_SLICES, SUBSTEPS_PER_PHYSICS_STEP, build_mjcf
from ddpg.run_folder.atomic import write_json

_POS, _Y, _VEL, _OMEGA = (SENSOR_SLICES[k] for k in ("pos", "yaxis", "com_vel", "omega"))


class _Recorder:
    """The reference behind the environment, keeping each crawler's state before a decision and
    the rows its step returned (the environment replaces a fallen crawler's with its reset pose)."""

    def __init__(self, engine: Any) -> None:
        self.engine, self.now, self.before, self.after, self.states = engine, None, [], [], []

    def restart(self, mask: np.ndarray) -> np.ndarray:
        self.now = self.engine.restart(mask).copy()
        return self.now

    def step(self, actions: np.ndarray) -> np.ndarray:
        self.states.append(self.engine.state())
        rows = self.engine.step(actions)
        self.before.append(self.now)
        self.now = rows[:, -1].copy()  # never written to: the state before the next decision too
        self.after.append(self.now)
        return rows

    def close(self) -> None:
        self.engine.close()


def walk(binary: Path, actor: Path, decisions: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The reference's rows before each decision (decisions, n, 117), the actions, the rows after
    (decisions, n, 117) and its whole state before each (decisions, n, 9, 13), the actor playing
    greedily (crawlers that fall restart)."""
    from benchmarks.physx.server import PhysXCrawlers

    policy = load_actor(actor)
    recorder = _Recorder(PhysXCrawlers(binary, CRAWLERS, KEPT_READINGS))
    env = CrawlerEnvironment(CRAWLERS, verbose=False, show_viewer=False, physics=recorder)
    try:
        info = env.reset()[BRAIN_NAME]
        actions = []
        for _ in range(decisions):
            with torch.no_grad():
                a = policy(torch.as_tensor(info.vector_observations, dtype=torch.float32)).numpy().astype(np.float64)
            info = env.step(a)[BRAIN_NAME]
            actions.append(a)
    finally:
        env.close()
    return np.array(recorder.before), np.array(actions), np.array(recorder.after), np.array(recorder.states)


def carry(model: Any, data: Any, row: np.ndarray, i: int) -> None:
    """Set crawler i's MuJoCo state from a sensor row of the reference."""
    pos, yaxis = row[_POS].reshape(-1, 3), row[_Y].reshape(-1, 3)
    body = np.stack([row[SENSOR_SLICES["root_xaxis"]], yaxis[0], row[SENSOR_SLICES["root_zaxis"]]], axis=1)
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, body.ravel())
    data.qpos[:3], data.qpos[3:7] = pos[0], quat
    for k in range(N_LEGS):
        upper = model.body(f"upper{k}_{i}").id
        rest = np.empty(9)
        mujoco.mju_quat2Mat(rest, model.body_quat[upper])
        v = rest.reshape(3, 3).T @ body.T @ yaxis[1 + 2 * k]  # the leg's axis before its hinges: Rz(y) Rx(-x) e_y
        data.qpos[model.joint(f"hip_x{k}_{i}").qposadr[0]] = -np.arcsin(np.clip(v[2], -1.0, 1.0))
        data.qpos[model.joint(f"hip_y{k}_{i}").qposadr[0]] = np.arctan2(-v[0], v[1])
        mujoco.mj_kinematics(model, data)
        w = data.xmat[upper].reshape(3, 3).T @ yaxis[2 + 2 * k]  # the lower leg's axis in the upper's frame
        data.qpos[model.joint(f"knee{k}_{i}").qposadr[0]] = np.arctan2(-w[2], w[1])
    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)
    rows, wanted = [], []
    velocity, omega = row[_VEL].reshape(-1, 3), row[_OMEGA].reshape(-1, 3)
    for p, name in enumerate(PARTS):
        jp, jr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
        mujoco.mj_jacBodyCom(model, data, jp, jr, model.body(f"body{i}" if name == "body" else f"{name}_{i}").id)
        rows += [jp, jr]
        wanted += [velocity[p], omega[p]]
    data.qvel[:] = np.linalg.lstsq(np.vstack(rows), np.concatenate(wanted), rcond=None)[0]
    data.qacc_warmstart[:] = 0.0


_FIGURES = ("carried", "body_position", "parts_position", "velocity", "angular_velocity", "body_height",
            "scale_body_moved", "scale_velocity", "scale_angular_velocity")


def _compare(errors: dict[str, list[float]], carried: np.ndarray, got: np.ndarray, before: np.ndarray,
             want: np.ndarray) -> None:
    """One crawler-decision's figures: the carried state's rows against the reference's before the
    decision, a prediction's rows after it against the reference's, and the reference's motion."""
    errors["carried"].append(float(np.abs(carried[_POS] - before[_POS]).max()))
    errors["body_position"].append(float(np.linalg.norm(got[:3] - want[:3])))
    errors["parts_position"].append(float(np.abs(got[_POS] - want[_POS]).max()))
    errors["velocity"].append(float(np.abs(got[_VEL] - want[_VEL]).max()))
    errors["angular_velocity"].append(float(np.abs(got[_OMEGA] - want[_OMEGA]).max()))
    errors["body_height"].append(float(got[1] - want[1]))
    # the scale: how far the reference's body moved in the decision, and its parts' fastest speeds
    errors["scale_body_moved"].append(float(np.linalg.norm(want[:3] - before[:3])))
    errors["scale_velocity"].append(float(np.abs(want[_VEL]).max()))
    errors["scale_angular_velocity"].append(float(np.abs(want[_OMEGA]).max()))


def _summary(errors: dict[str, list[float]]) -> dict[str, Any]:
    return {k: {"median": round(float(np.median(v)), 4), "p90": round(float(np.quantile(v, 0.9)), 4),
                "mean": round(float(np.mean(v)), 4)} for k, v in errors.items()} | {"samples": len(errors["carried"])}


def predict_physx(binary: Path, options: tuple[str, ...], before: np.ndarray, actions: np.ndarray, after: np.ndarray,
                  states: np.ndarray, every: int) -> dict[str, Any]:
    """The same, predicted by a fresh PhysX reference (its own options) put in the recorded states:
    with the walk's own options, the floor that PhysX's rebuilt caches alone give."""
    from benchmarks.physx.server import PhysXCrawlers

    errors: dict[str, list[float]] = {k: [] for k in _FIGURES}
    with PhysXCrawlers(binary, before.shape[1], options) as server:
        for t in range(0, len(before), every):
            carried = server.set_state(states[t])
            got = server.step(actions[t])[:, -1]
            for i in range(before.shape[1]):
                _compare(errors, carried[i], got[i], before[t, i], after[t, i])
    return _summary(errors)


def predict(before: np.ndarray, actions: np.ndarray, after: np.ndarray, every: int, substeps: int) -> dict[str, Any]:
    n = before.shape[1]
    models = [mujoco.MjModel.from_xml_string(build_mjcf(n, substeps, only=i)) for i in range(n)]
    datas = [mujoco.MjData(m) for m in models]
    errors: dict[str, list[float]] = {k: [] for k in _FIGURES}
    for t in range(0, len(before), every):
        targets = joint_targets(actions[t])[0]
        caps = np.maximum(drive_limits(actions[t]), 0.0)
        for i, (m, d) in enumerate(zip(models, datas, strict=True)):
            carry(m, d, before[t, i], i)
            mujoco.mj_forward(m, d)
            carried = d.sensordata.copy()
            d.ctrl[:] = targets[i]
            m.actuator_forcerange[:, 0], m.actuator_forcerange[:, 1] = -caps[i], caps[i]
            mujoco.mj_step(m, d, nstep=5 * substeps)
            mujoco.mj_forward(m, d)
            _compare(errors, carried, d.sensordata, before[t, i], after[t, i])
    return _summary(errors)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--actor", type=Path, required=True, help="models/sac_crawler_best.pth of the reference's clone")
    parser.add_argument("--physx", type=Path, required=True, help="benchmarks/physx/build.sh's crawler_physx")
    parser.add_argument("--decisions", type=int, default=300, help="decisions the actor walks the reference's 12 crawlers")
    parser.add_argument("--every", type=int, default=5, help="compare at every n-th decision")
    parser.add_argument("--iterations", type=int, nargs="*", default=[50, 200],
                        help="also predict with the reference at these solver iterations (Unity's: 12)")
    parser.add_argument("--json", type=Path, help="write the record here")
    args = parser.parse_args(argv)
    for flag, path in (("--actor", args.actor), ("--physx", args.physx)):
        if not path.is_file():
            parser.error(f"{flag} {path}: no such file")
    if args.decisions < 1 or args.every < 1:
        parser.error("--decisions and --every take positive numbers")
    before, actions, after, states = walk(args.physx, args.actor, args.decisions)
    record = {"actor_sha256": sha256(args.actor), "physx_options": list(KEPT_READINGS), "decisions": args.decisions,
              "every": args.every, "mujoco": mujoco.__version__, "substeps": SUBSTEPS_PER_PHYSICS_STEP,
              "errors": predict(before, actions, after, args.every, SUBSTEPS_PER_PHYSICS_STEP),
              "physx_fresh": predict_physx(args.physx, KEPT_READINGS, before, actions, after, states, args.every),
              "physx_iterations": {str(k): predict_physx(args.physx, (*KEPT_READINGS, "--iters", str(k), str(k)), before, actions,
                                                         after, states, args.every) for k in args.iterations}}
    for name in ("errors", "physx_fresh"):
        print(name, json.dumps({k: v["median"] for k, v in record[name].items() if k != "samples"}))
    for k, v in record["physx_iterations"].items():
        print(f"physx {k} iterations", json.dumps({f: x["median"] for f, x in v.items() if f != "samples"}))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        write_json(args.json, record)


if __name__ == "__main__":
    main()
