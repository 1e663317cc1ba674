"""The Reacher arm stepped the way PhysX 4.1 steps it, in joint coordinates.

Unity 2018 simulates the arm as two free rigid bodies held together by two D6 joints,
and PhysX advances them in three stages every physics step (read in PhysX 4.1's source:
`NpRigidBodyTemplate::addSpatialForce`, `Sc::BodySim::updateForces`,
`Dy::bodyCoreComputeUnconstrainedVelocity`, then the PGS joint solver and
`Dy::integrateCore`):

1. Unconstrained velocity, body by body. `AddTorque` turns the world-frame torque into
   an angular acceleration with the body's world inverse inertia at the current pose;
   one step of it is added to the angular velocity, gravity to the linear velocity.
   Angular drag scales the angular velocity by (1 - 0.05 dt); then, if its magnitude
   exceeds `maxAngularVelocity` (7 rad/s), the whole angular velocity is scaled down to
   7. There is no gyroscopic term. The cap acts *here*, before the joints: a world
   torque has a part along a tilted capsule's long axis, where its inertia is tiny
   (0.12 for A, 0.26 for B), so one step spins the body up along that axis past 7 rad/s,
   and the cap then shrinks the useful swing as well.
2. The joint solver. What PGS converges to is the velocity that satisfies the joints and
   is closest to the unconstrained one in the bodies' kinetic metric (Gauss's principle):
   in joint coordinates qdot = M(q)^-1 sum_b J_b(q)^T M_b v_b, and the bodies' new
   velocities are v_b = J_b(q) qdot. The axial spin is removed here, after the cap.
3. Positions move with those velocities: q += qdot dt.

The bodies' velocities are state: step 1 starts from the body velocities step 2 left,
which belong to the joint geometry at the *previous* pose. Projecting them anew at the
new pose is what gives the arm its centrifugal and Coriolis coupling, as in PhysX.
Observations report these stored body velocities, as Unity's `Rigidbody` does.

Joints (Unity's ConfigurableJoint with axis (1,0,0), AngularY locked, becomes a PhysX D6
joint with only SWING1 locked, which `D6JointSolverPrep` keeps as one row: the parent
frame's x axis stays perpendicular to the child frame's z axis): a universal (Cardan)
joint that turns about the parent's x axis first, then about the child's own z axis.
The MuJoCo model (`reacher/mjcf.py`) has the same two hinges in that order; this module
reads every number (offsets, anchors, axes, masses, inertias, hand) from it.

Everything per step is a small compiled loop (numba): 20 arms x 4 steps per decision. The
arms are independent, so `stepper.ArmStepper` may split them over threads (`simulate_parallel`, numba's
prange): each arm computes exactly what the one-thread loop (`simulate`) computes for it, so
the results are bitwise the same on any number of threads. How many, and the stepper that
chooses between the two: `reacher/stepper.py`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from envkit.mujoco_gl import mujoco
from reacher import observation as obs

# Body velocity layout per arm: A's angular, A's linear (centre of mass), B's angular, B's linear.
BODY_VELOCITY_SIZE = 12

@dataclass(frozen=True)
class ArmModel:
    """One arm's constants as the compiled MuJoCo model has them (all arms are copies).

    Frames: `body_quat[0]` is A's rest rotation in the arm's root frame, `body_quat[1]`
    B's in A's frame (w, x, y, z); `body_pos` the same for positions; `anchor` each
    body's joint anchor and `axis` its two hinge axes in its own frame, in the order
    MuJoCo applies them; `com` and `inertia` the centre of mass and principal inertia in
    the body frame; `hand` the hand centre in B's frame.
    """

    body_pos: np.ndarray  # (2, 3)
    body_quat: np.ndarray  # (2, 4)
    anchor: np.ndarray  # (2, 3)
    axis: np.ndarray  # (4, 3)
    com: np.ndarray  # (2, 3)
    inertia: np.ndarray  # (2, 3)
    mass: np.ndarray  # (2,)
    hand: np.ndarray  # (3,)

    @property
    def arrays(self) -> tuple[np.ndarray, ...]:
        """The constants in the order `simulate` takes them."""
        return (self.body_pos, self.body_quat, self.anchor, self.axis, self.com, self.inertia, self.mass, self.hand)

    @property
    def pose_arrays(self) -> tuple[np.ndarray, ...]:
        """The constants the kinematics needs, in the order `observe` takes them."""
        return (self.body_pos, self.body_quat, self.anchor, self.axis, self.com)

    @classmethod
    def from_mujoco(cls, model: mujoco.MjModel, arm: int = 0) -> ArmModel:
        a, b = model.body(f"A{arm}").id, model.body(f"B{arm}").id
        joints = [model.joint(f"{name}{arm}").id for name in ("shoulder_x", "shoulder_z", "elbow_x", "elbow_z")]
        if list(model.body_jntadr[[a, b]]) != joints[::2] or list(model.body_jntnum[[a, b]]) != [2, 2]:
            raise ValueError("each segment must carry its two hinges, x then z, and nothing else")
        if not np.allclose(model.body_iquat[[a, b]], [1.0, 0.0, 0.0, 0.0]):
            raise ValueError("the segments' principal inertia axes must be their body axes")
        anchors = model.jnt_pos[joints]
        if not (np.allclose(anchors[0], anchors[1]) and np.allclose(anchors[2], anchors[3])):
            raise ValueError("each segment's two hinges must share one anchor (a universal joint)")
        return cls(
            body_pos=model.body_pos[[a, b]].copy(),
            body_quat=model.body_quat[[a, b]].copy(),
            anchor=anchors[::2].copy(),
            axis=model.jnt_axis[joints].copy(),
            com=model.body_ipos[[a, b]].copy(),
            inertia=model.body_inertia[[a, b]].copy(),
            mass=model.body_mass[[a, b]].copy(),
            hand=model.site_pos[model.site(f"hand{arm}").id].copy(),
        )


# ----------------------------------------------------------------- small helpers
@njit(cache=True, inline="always")
def _qmul(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3]
    x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2]
    y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1]
    z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]
    out[0], out[1], out[2], out[3] = w, x, y, z


@njit(cache=True, inline="always")
def _qrot(axis: np.ndarray, angle: float, out: np.ndarray) -> None:
    s = math.sin(0.5 * angle)
    out[0] = math.cos(0.5 * angle)
    out[1], out[2], out[3] = axis[0] * s, axis[1] * s, axis[2] * s


@njit(cache=True, inline="always")
def _qmat(q: np.ndarray, out: np.ndarray) -> None:
    # q is a unit quaternion (a product of unit ones): no normalising needed.
    w, x, y, z = q[0], q[1], q[2], q[3]
    out[0, 0] = 1 - 2 * (y * y + z * z)
    out[0, 1] = 2 * (x * y - w * z)
    out[0, 2] = 2 * (x * z + w * y)
    out[1, 0] = 2 * (x * y + w * z)
    out[1, 1] = 1 - 2 * (x * x + z * z)
    out[1, 2] = 2 * (y * z - w * x)
    out[2, 0] = 2 * (x * z - w * y)
    out[2, 1] = 2 * (y * z + w * x)
    out[2, 2] = 1 - 2 * (x * x + y * y)


@njit(cache=True, inline="always")
def _matvec(m: np.ndarray, v: np.ndarray, out: np.ndarray) -> None:
    x = m[0, 0] * v[0] + m[0, 1] * v[1] + m[0, 2] * v[2]
    y = m[1, 0] * v[0] + m[1, 1] * v[1] + m[1, 2] * v[2]
    z = m[2, 0] * v[0] + m[2, 1] * v[1] + m[2, 2] * v[2]
    out[0], out[1], out[2] = x, y, z


@njit(cache=True, inline="always")
def _cross(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    x = a[1] * b[2] - a[2] * b[1]
    y = a[2] * b[0] - a[0] * b[2]
    z = a[0] * b[1] - a[1] * b[0]
    out[0], out[1], out[2] = x, y, z


# ------------------------------------------------------------------ kinematics
@njit(cache=True)
def _pose_buffers():
    """Scratch arrays for _kinematics: quat, rot, origin, centre, axis_w, anchor_w, tmp4, tmp3."""
    return (np.empty((2, 4)), np.empty((2, 3, 3)), np.empty((2, 3)), np.empty((2, 3)),
            np.empty((4, 3)), np.empty((2, 3)), np.empty(4), np.empty(3))


@njit(cache=True)
def _kinematics(q, body_pos, body_quat, anchor, axis, com, quat, rot, origin, centre, axis_w, anchor_w, tmp4, tmp3):
    """Pose of both segments for joint angles q, as MuJoCo's mj_kinematics composes it.

    Fills, relative to the arm's root: quat (2, 4) w x y z, rot (2, 3, 3), origin (2, 3)
    (body frame = capsule centre), centre (2, 3) (centre of mass), axis_w (4, 3) the
    hinges' world axes, anchor_w (2, 3) the shoulder and elbow.
    """
    for b in range(2):
        # Frame before the joints: the parent's frame moved by the body's offset.
        if b == 0:
            quat[0, :] = body_quat[0]
            origin[0, :] = body_pos[0]
        else:
            _qmul(quat[0], body_quat[1], tmp4)
            _matvec(rot[0], body_pos[1], tmp3)
            quat[1, :] = tmp4
            for k in range(3):
                origin[1, k] = origin[0, k] + tmp3[k]
        _qmat(quat[b], rot[b])
        _matvec(rot[b], anchor[b], tmp3)
        for k in range(3):
            anchor_w[b, k] = origin[b, k] + tmp3[k]
        for j in range(2):
            h = 2 * b + j
            _matvec(rot[b], axis[h], axis_w[h])
            _qrot(axis[h], q[h], tmp4)
            _qmul(quat[b], tmp4, tmp4)
            quat[b, :] = tmp4
            _qmat(quat[b], rot[b])
        # Both hinges turn about the anchor, which stays put.
        _matvec(rot[b], anchor[b], tmp3)
        for k in range(3):
            origin[b, k] = anchor_w[b, k] - tmp3[k]
        _matvec(rot[b], com[b], tmp3)
        for k in range(3):
            centre[b, k] = origin[b, k] + tmp3[k]


@njit(cache=True)
def _jacobian(centre, axis_w, anchor_w, jac, tmp3):
    """jac (12, 4): body velocities (w_A, v_A, w_B, v_B; v at the centres of mass) per
    unit rate of each hinge (shoulder x, shoulder z, elbow x, elbow z)."""
    jac[:] = 0.0
    for h in range(4):
        joint = h // 2  # 0: shoulder, 1: elbow
        for b in range(joint, 2):  # the shoulder moves A and B, the elbow only B
            for k in range(3):
                jac[6 * b + k, h] = axis_w[h, k]
                tmp3[k] = centre[b, k] - anchor_w[joint, k]
            _cross(axis_w[h], tmp3, tmp3)
            for k in range(3):
                jac[6 * b + 3 + k, h] = tmp3[k]


@njit(cache=True)
def _world_inertia(rot, inertia, out):
    """out (2, 3, 3): R diag(d) R^T for each body's rotation R and diagonal d (its
    principal inertia, or the inverse of it)."""
    for b in range(2):
        for r in range(3):
            for c in range(r, 3):
                s = 0.0
                for k in range(3):
                    s += rot[b, r, k] * inertia[b, k] * rot[b, c, k]
                out[b, r, c] = s
                out[b, c, r] = s


@njit(cache=True)
def _mass_matrix(jac, inertia_w, mass, out):
    """out (4, 4): M(q) = sum_b J_b^T M_b J_b, the joint-space mass matrix."""
    for i in range(4):
        for j in range(i, 4):
            s = 0.0
            for b in range(2):
                for r in range(3):
                    s += mass[b] * jac[6 * b + 3 + r, i] * jac[6 * b + 3 + r, j]
                    for c in range(3):
                        s += jac[6 * b + r, i] * inertia_w[b, r, c] * jac[6 * b + c, j]
            out[i, j] = s
            out[j, i] = s


@njit(cache=True)
def _solve4(a, rhs, out):
    """Solve the 4x4 symmetric positive definite system a out = rhs (Cholesky; a is overwritten)."""
    n = 4
    for j in range(n):
        s = a[j, j]
        for k in range(j):
            s -= a[j, k] * a[j, k]
        a[j, j] = math.sqrt(s)
        for i in range(j + 1, n):
            s = a[i, j]
            for k in range(j):
                s -= a[i, k] * a[j, k]
            a[i, j] = s / a[j, j]
    for i in range(n):
        s = rhs[i]
        for k in range(i):
            s -= a[i, k] * out[k]
        out[i] = s / a[i, i]
    for i in range(n - 1, -1, -1):
        s = out[i]
        for k in range(i + 1, n):
            s -= a[k, i] * out[k]
        out[i] = s / a[i, i]


# ---------------------------------------------------------------------- stepping
@njit(cache=True)
def simulate(
    qpos, qvel, body_vel, torque, goals, reach_sq, counts, capped,
    body_pos, body_quat, anchor, axis, com, inertia, mass, hand,
    dt, gravity, drag_factor, max_angular_speed,
):  # fmt: skip
    """Advance every arm by goals.shape[0] physics steps with its torques held.

    qpos, qvel: (n, 4) hinge angles and rates; body_vel: (n, 12) the bodies' velocities
    (state, see the module docstring); torque: (n, 2, 3) world torques on A and B;
    goals: (steps, n, 3) each goal's centre at each step (already moved for that step);
    counts: (n,) filled with how many steps each hand centre was within sqrt(reach_sq)
    of its goal, checked before the step moves the arm, as Unity's agent does.
    capped: (2,) incremented by how many (arm, step) velocities of A and of B the 7 rad/s
    cap scaled.
    """
    quat, rot, origin, centre, axis_w, anchor_w, tmp4, tmp3 = _pose_buffers()
    jac = np.empty((12, 4))
    inertia_w = np.empty((2, 3, 3))
    inv_inertia_w = np.empty((2, 3, 3))
    mm = np.empty((4, 4))
    rhs = np.empty(4)
    qd = np.empty(4)
    inv_inertia = 1.0 / inertia
    max_sq = max_angular_speed * max_angular_speed
    for i in range(qpos.shape[0]):
        counts[i] = 0
        v = body_vel[i]
        for s in range(goals.shape[0]):
            _kinematics(qpos[i], body_pos, body_quat, anchor, axis, com, quat, rot, origin, centre, axis_w, anchor_w, tmp4, tmp3)
            # Reward: the hand where it is now against the goal already moved for this step.
            _matvec(rot[1], hand, tmp3)
            d2 = 0.0
            for k in range(3):
                d = origin[1, k] + tmp3[k] - goals[s, i, k]
                d2 += d * d
            if d2 < reach_sq:
                counts[i] += 1
            # 1. Unconstrained velocities: torque, gravity, drag, then the cap.
            _world_inertia(rot, inv_inertia, inv_inertia_w)
            for b in range(2):
                _matvec(inv_inertia_w[b], torque[i, b], tmp3)
                w2 = 0.0
                for k in range(3):
                    w = (v[6 * b + k] + tmp3[k] * dt) * drag_factor
                    v[6 * b + k] = w
                    w2 += w * w
                v[6 * b + 4] += gravity * dt
                if w2 > max_sq:
                    scale = math.sqrt(max_sq / w2)
                    for k in range(3):
                        v[6 * b + k] *= scale
                    capped[b] += 1
            # 2. The joints: the kinetic-metric projection onto the joints' velocities.
            _jacobian(centre, axis_w, anchor_w, jac, tmp3)
            _world_inertia(rot, inertia, inertia_w)
            _mass_matrix(jac, inertia_w, mass, mm)
            for h in range(4):
                r = 0.0
                for b in range(2):
                    for k in range(3):
                        r += mass[b] * jac[6 * b + 3 + k, h] * v[6 * b + 3 + k]
                        for c in range(3):
                            r += jac[6 * b + k, h] * inertia_w[b, k, c] * v[6 * b + c]
                rhs[h] = r
            _solve4(mm, rhs, qd)
            for r in range(12):
                v[r] = jac[r, 0] * qd[0] + jac[r, 1] * qd[1] + jac[r, 2] * qd[2] + jac[r, 3] * qd[3]
            # 3. Positions.
            for h in range(4):
                qvel[i, h] = qd[h]
                qpos[i, h] += qd[h] * dt


@njit(cache=True, parallel=True)
def simulate_parallel(
    qpos, qvel, body_vel, torque, goals, reach_sq, counts, capped,
    body_pos, body_quat, anchor, axis, com, inertia, mass, hand,
    dt, gravity, drag_factor, max_angular_speed, chunks,
):  # fmt: skip
    """`simulate` with the arms split into `chunks` contiguous blocks, each stepped by `simulate`
    itself on its rows, which numba's prange hands to the calling thread's numba threads
    (`numba.set_num_threads`, set by the caller: set in here, it would make the function
    uncacheable). `simulate` steps each arm on its own (its scratch serves one arm at a time),
    and each block has its own scratch and cap counts, so every arm computes exactly what the
    one-thread call computes for it: the results are bitwise those of `simulate`, whatever
    the chunks and threads.

    Only plain loops and np.empty here: an array expression or np.zeros in a parallel
    function becomes a parallel loop of its own, a second dispatch to the threads.
    """
    n = qpos.shape[0]
    capped_by_chunk = np.empty((chunks, 2), dtype=capped.dtype)
    for c in prange(chunks):
        lo, hi = c * n // chunks, (c + 1) * n // chunks
        capped_by_chunk[c, 0] = 0
        capped_by_chunk[c, 1] = 0
        simulate(qpos[lo:hi], qvel[lo:hi], body_vel[lo:hi], torque[lo:hi], goals[:, lo:hi], reach_sq, counts[lo:hi],
                 capped_by_chunk[c], body_pos, body_quat, anchor, axis, com, inertia, mass, hand,
                 dt, gravity, drag_factor, max_angular_speed)
    for c in range(chunks):
        capped[0] += capped_by_chunk[c, 0]
        capped[1] += capped_by_chunk[c, 1]


@njit(cache=True)
def observe(qpos, body_vel, body_pos, body_quat, anchor, axis, com, out):
    """out (n, >= 26): per arm A's position (capsule centre, relative to the root),
    quaternion x y z w, angular velocity, centre-of-mass velocity, then the same for B."""
    quat, rot, origin, centre, axis_w, anchor_w, tmp4, tmp3 = _pose_buffers()
    for i in range(qpos.shape[0]):
        _kinematics(qpos[i], body_pos, body_quat, anchor, axis, com, quat, rot, origin, centre, axis_w, anchor_w, tmp4, tmp3)
        for b in range(2):
            o = obs.A + obs.SEGMENT_SIZE * b
            out[i, o + obs.POSITION:o + obs.POSITION + 3] = origin[b]
            out[i, o + obs.QUATERNION] = quat[b, 1]
            out[i, o + obs.QUATERNION + 1] = quat[b, 2]
            out[i, o + obs.QUATERNION + 2] = quat[b, 3]
            out[i, o + obs.QUATERNION + 3] = quat[b, 0]
            out[i, o + obs.ANGULAR_VELOCITY:o + obs.ANGULAR_VELOCITY + 3] = body_vel[i, 6 * b:6 * b + 3]
            out[i, o + obs.LINEAR_VELOCITY:o + obs.LINEAR_VELOCITY + 3] = body_vel[i, 6 * b + 3:6 * b + 6]


def arm_pose_and_jacobian(arm: ArmModel, q: np.ndarray) -> dict[str, np.ndarray]:
    """The kernel's own kinematics, Jacobian and mass matrix at one pose, for checking
    them against MuJoCo's (tests) and for reading them (everything relative to the root)."""
    quat, rot, origin, centre, axis_w, anchor_w, tmp4, tmp3 = _pose_buffers()
    jac, inertia_w, mm = np.empty((12, 4)), np.empty((2, 3, 3)), np.empty((4, 4))
    q = np.ascontiguousarray(q, dtype=np.float64)
    _kinematics(q, *arm.pose_arrays, quat, rot, origin, centre, axis_w, anchor_w, tmp4, tmp3)
    _jacobian(centre, axis_w, anchor_w, jac, tmp3)
    _world_inertia(rot, arm.inertia, inertia_w)
    _mass_matrix(jac, inertia_w, arm.mass, mm)
    return {"quat": quat, "rot": rot, "origin": origin, "centre": centre, "jacobian": jac, "mass_matrix": mm}
