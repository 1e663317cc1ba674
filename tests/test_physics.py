"""The compiled PhysX-style step against MuJoCo's own model: kinematics, Jacobians, mass
matrix, and the three stages of a step written out plainly with MuJoCo's functions."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from reacher.environment import ANGULAR_DRAG, GRAVITY, MAX_ANGULAR_SPEED, PHYSICS_DT
from reacher.mjcf import build_mjcf
from reacher.physics import ArmModel, arm_pose_and_jacobian, simulate


@pytest.fixture(scope="module")
def one_arm():
    model = mujoco.MjModel.from_xml_string(build_mjcf(1))
    return model, mujoco.MjData(model), ArmModel.from_mujoco(model)


def mujoco_jacobians(model, data, q):
    """Body velocities per hinge rate from MuJoCo: rows w_A, v_A (centre of mass), w_B, v_B."""
    data.qpos[:] = q
    mujoco.mj_forward(model, data)
    jac = np.zeros((12, 4))
    for b, name in enumerate(("A0", "B0")):
        jacp, jacr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
        mujoco.mj_jacBodyCom(model, data, jacp, jacr, model.body(name).id)
        jac[6 * b:6 * b + 3], jac[6 * b + 3:6 * b + 6] = jacr, jacp
    full = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, full)
    return jac, full


def test_kinematics_jacobian_and_mass_matrix_match_mujoco(one_arm):
    model, data, arm = one_arm
    rng = np.random.default_rng(0)
    for _ in range(50):
        q = rng.uniform(-np.pi, np.pi, 4)
        ours = arm_pose_and_jacobian(arm, q)
        jac, full = mujoco_jacobians(model, data, q)
        for b, name in enumerate(("A0", "B0")):
            i = model.body(name).id
            np.testing.assert_allclose(ours["origin"][b], data.xpos[i], atol=1e-12)
            np.testing.assert_allclose(ours["quat"][b], data.xquat[i], atol=1e-12)
            np.testing.assert_allclose(ours["centre"][b], data.xipos[i], atol=1e-12)
        np.testing.assert_allclose(ours["jacobian"], jac, atol=1e-12)
        np.testing.assert_allclose(ours["mass_matrix"], full, atol=1e-10)


def plain_step(model, data, q, body_vel, torque):
    """One physics step written out with MuJoCo and NumPy (no compiled code), as the
    module docstring of reacher/physics.py states it."""
    jac, full = mujoco_jacobians(model, data, q)
    v = body_vel.copy()
    for b, name in enumerate(("A0", "B0")):
        i = model.body(name).id
        rot = data.ximat[i].reshape(3, 3)
        inertia_w = rot @ np.diag(model.body_inertia[i]) @ rot.T
        w = v[6 * b:6 * b + 3] + np.linalg.solve(inertia_w, torque[b]) * PHYSICS_DT
        w *= 1.0 - ANGULAR_DRAG * PHYSICS_DT
        speed = np.linalg.norm(w)
        if speed > MAX_ANGULAR_SPEED:
            w *= MAX_ANGULAR_SPEED / speed
        v[6 * b:6 * b + 3] = w
        v[6 * b + 4] += GRAVITY * PHYSICS_DT
    body_mass = np.zeros((12, 12))
    for b, name in enumerate(("A0", "B0")):
        i = model.body(name).id
        rot = data.ximat[i].reshape(3, 3)
        body_mass[6 * b:6 * b + 3, 6 * b:6 * b + 3] = rot @ np.diag(model.body_inertia[i]) @ rot.T
        body_mass[6 * b + 3:6 * b + 6, 6 * b + 3:6 * b + 6] = model.body_mass[i] * np.eye(3)
    qdot = np.linalg.solve(full, jac.T @ body_mass @ v)
    return q + qdot * PHYSICS_DT, qdot, jac @ qdot


def test_compiled_step_equals_the_plain_statement(one_arm):
    """200 steps of random torques: the kernel and the plain statement agree to rounding."""
    model, data, arm = one_arm
    rng = np.random.default_rng(1)
    q, v = np.zeros(4), np.zeros(12)
    qpos, qvel, body_vel = np.zeros((1, 4)), np.zeros((1, 4)), np.zeros((1, 12))
    counts, capped = np.zeros(1, dtype=np.int64), np.zeros(2, dtype=np.int64)
    far_goal = np.full((1, 1, 3), 1e3)
    caps = 0
    for _ in range(200):
        torque = 150.0 * np.array([[1.0, 0.0, 1.0]]) * rng.uniform(-1, 1, (2, 3))
        q, qdot, v = plain_step(model, data, q, v, torque)
        before = capped.sum()
        simulate(qpos, qvel, body_vel, torque[None], far_goal, 1.0, counts, capped,
                 *arm.arrays,
                 PHYSICS_DT, GRAVITY, 1.0 - ANGULAR_DRAG * PHYSICS_DT, MAX_ANGULAR_SPEED)  # fmt: skip
        caps += capped.sum() > before
        np.testing.assert_allclose(qpos[0], q, atol=1e-9)
        np.testing.assert_allclose(qvel[0], qdot, atol=1e-9)
        np.testing.assert_allclose(body_vel[0], v, atol=1e-9)
    assert caps > 20  # the cap took part


def test_projection_keeps_velocities_the_joints_allow(one_arm):
    """Body velocities that already satisfy the joints pass the projection unchanged."""
    model, data, arm = one_arm
    rng = np.random.default_rng(2)
    q = rng.uniform(-1, 1, 4)
    qdot = rng.uniform(-1, 1, 4)
    jac, _ = mujoco_jacobians(model, data, q)
    qpos, qvel, body_vel = q[None].copy(), np.zeros((1, 4)), (jac @ qdot)[None].copy()
    simulate(qpos, qvel, body_vel, np.zeros((1, 2, 3)), np.full((1, 1, 3), 1e3), 1.0,
             np.zeros(1, dtype=np.int64), np.zeros(2, dtype=np.int64),
             *arm.arrays,
             PHYSICS_DT, 0.0, 1.0, 1e9)  # fmt: skip
    np.testing.assert_allclose(qvel[0], qdot, atol=1e-12)
    np.testing.assert_allclose(qpos[0], q + qdot * PHYSICS_DT, atol=1e-12)


def test_the_cap_acts_before_the_joints(one_arm):
    """A torque along a tilted segment's long axis spins it past 7 rad/s before the
    joints remove that spin: the cap fires and the swing that survives is smaller than
    without a cap, as in PhysX (and unlike a cap on the joints' rates)."""
    _, _, arm = one_arm
    q = np.array([0.0, 0.6, 0.0, 0.0])  # A tilted about the shoulder's z hinge
    pose = arm_pose_and_jacobian(arm, q)
    long_axis = pose["rot"][0][:, 1]
    torque = np.zeros((1, 2, 3))
    torque[0, 0, [0, 2]] = 150.0 * np.clip(long_axis[[0, 2]] / np.abs(long_axis[[0, 2]]).max(), -1, 1)
    swing = {}
    for cap in (MAX_ANGULAR_SPEED, 1e9):
        qpos, qvel, body_vel = q[None].copy(), np.zeros((1, 4)), np.zeros((1, 12))
        capped = np.zeros(2, dtype=np.int64)
        simulate(qpos, qvel, body_vel, torque, np.full((1, 1, 3), 1e3), 1.0, np.zeros(1, dtype=np.int64), capped,
                 *arm.arrays,
                 PHYSICS_DT, 0.0, 1.0, cap)  # fmt: skip
        swing[cap] = np.linalg.norm(body_vel[0, 0:3])
        assert capped[0] == (1 if cap == MAX_ANGULAR_SPEED else 0)
    assert swing[MAX_ANGULAR_SPEED] < 0.8 * swing[1e9]
    assert swing[MAX_ANGULAR_SPEED] < MAX_ANGULAR_SPEED


def test_reward_is_checked_before_each_step_moves_the_arm(one_arm):
    """Unity's agent checks the hand in its own update, before the physics step: a goal
    at the hand's starting point counts once, however fast the arm leaves it."""
    model, data, arm = one_arm
    q = np.zeros(4)
    jac, _ = mujoco_jacobians(model, data, q)
    start_hand = arm_pose_and_jacobian(arm, q)["origin"][1] + arm.hand * [1, -1, -1]  # B is flipped about x
    for goal, expected in ((start_hand, 1), (start_hand + np.array([0.0, 0.0, 50.0]), 0)):
        qpos, qvel, body_vel = np.zeros((1, 4)), np.zeros((1, 4)), (jac @ [5.0, 0.0, 0.0, 0.0])[None].copy()
        counts = np.zeros(1, dtype=np.int64)
        simulate(qpos, qvel, body_vel, np.zeros((1, 2, 3)), np.tile(goal, (4, 1, 1)), 1e-4, counts, np.zeros(2, dtype=np.int64),
                 *arm.arrays,
                 PHYSICS_DT, GRAVITY, 1.0, MAX_ANGULAR_SPEED)  # fmt: skip
        assert counts[0] == expected
