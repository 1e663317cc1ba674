"""Unity's per-body angular speed cap (Rigidbody.maxAngularVelocity, 7 rad/s) and
angular drag, applied to every arm after every physics step.

This runs 4 times per decision for every arm, and with random or bang-bang actions
the cap binds on most steps: as numpy it cost more than MuJoCo's own step, so it is
a small compiled loop (numba) instead.

In segment A's frame the universal joints give closed forms. With shoulder rates
(s_z, s_x), elbow rates (e_z, e_x) and joint angles q:
    w_A = (s_x, s_z sin q_sx, s_z cos q_sx)
    w_B = w_A + (e_x cos q_ez, e_x sin q_ez, e_z)
The shoulder axes are orthonormal, so |w_A| is the norm of the shoulder rates.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, fastmath=False)
def damp_and_cap(qpos: np.ndarray, qvel: np.ndarray, drag_factor: float, max_speed: float) -> int:
    """Scale every arm's joint rates by the drag factor, then cap |w_A| and |w_B|.

    qpos, qvel: (n, 4) views, joints ordered shoulder z, shoulder x, elbow z, elbow x.
    Scaling all of an arm's rates scales both bodies' world angular velocities, which
    is what Unity's drag does to each body. Returns how many arms were capped.
    """
    capped = 0
    for i in range(qvel.shape[0]):
        sz = qvel[i, 0] * drag_factor
        sx = qvel[i, 1] * drag_factor
        ez = qvel[i, 2] * drag_factor
        ex = qvel[i, 3] * drag_factor
        speed_a = math.sqrt(sz * sz + sx * sx)
        if speed_a > max_speed:
            k = max_speed / speed_a
            sz *= k
            sx *= k
        s_sx, c_sx = math.sin(qpos[i, 1]), math.cos(qpos[i, 1])
        s_ez, c_ez = math.sin(qpos[i, 2]), math.cos(qpos[i, 2])
        ax, ay, az = sx, sz * s_sx, sz * c_sx
        bx, by, bz = ax + ex * c_ez, ay + ex * s_ez, az + ez
        speed_b = math.sqrt(bx * bx + by * by + bz * bz)
        if speed_b > max_speed:
            # Closest elbow rates that give B its clamped angular velocity ...
            k = max_speed / speed_b
            wx, wy, wz = bx * k - ax, by * k - ay, bz * k - az
            ez = wz
            ex = wx * c_ez + wy * s_ez
            bx, by, bz = ax + ex * c_ez, ay + ex * s_ez, az + ez
            speed_b = math.sqrt(bx * bx + by * by + bz * bz)
            # ... and what the elbow cannot remove (spin B gets from A) scales the arm.
            if speed_b > max_speed:
                k = max_speed / speed_b
                sz *= k
                sx *= k
                ez *= k
                ex *= k
        if speed_a > max_speed or speed_b > max_speed:
            capped += 1
        qvel[i, 0] = sz
        qvel[i, 1] = sx
        qvel[i, 2] = ez
        qvel[i, 3] = ex
    return capped
