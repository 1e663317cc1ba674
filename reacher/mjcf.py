"""MJCF generator: one MuJoCo model that holds n copies of the Unity Reacher arm.

Everything is in Unity's own coordinates (y up, gravity -9.81 along y), so numbers
from the original scene can be read against this file directly. One model for all
arms lets MuJoCo step every arm in a single call, which is what makes the 20-arm
environment fast.

Each arm (docs/environment.md, "What it re-creates", says where the numbers come from):

    base sphere (static, r=0.5) at the agent root
    shoulder: universal joint at (0, 0.02, 0), about the parent's x, then the child's z
      segment A: capsule r=0.5, y from -1 to -7, mass 1
      elbow: universal joint at (0, -7, 0)
        segment B: capsule r=0.5, y from -7 to -13, plus the hand sphere (r=1)
                   at its tip, total mass 1
    goal: a mocap sphere (no physics), moved by the task each physics step

Both segments are rotated 180 degrees about x, as in the Unity scene, so their local
y axis points down the arm. Collisions are off: the arms, their goals and their
neighbours never touch in this task's scoring, and the original's joints ignore
contacts between the bodies they connect.

The joints are Unity's: its ConfigurableJoint (axis x, AngularY locked) becomes a PhysX
D6 joint with only SWING1 locked, which keeps the parent's x axis perpendicular to the
child's z axis: a Cardan joint turning about x first, then z. MuJoCo only holds the
model and draws it; `reacher/physics.py` steps it the way PhysX does.
"""

from __future__ import annotations

import math

import numpy as np

from envkit.display import OFFSCREEN_HEIGHT, OFFSCREEN_WIDTH  # every scene's offscreen buffer

# --- geometry of one arm, in Unity world units -------------------------------------
CAPSULE_RADIUS = 0.5
CAPSULE_LENGTH = 6.0  # end to end, hemispheres included
HAND_RADIUS = 1.0
SHOULDER = np.array([0.0, 0.02, 0.0])
A_CENTRE = np.array([0.0, -4.0, 0.0])
ELBOW = np.array([0.0, -7.0, 0.0])
B_CENTRE = np.array([0.0, -10.0, 0.0])
HAND = np.array([0.0, -13.0, 0.0])
GOAL_RADIUS = 8.0
GOAL_HEIGHT = -1.0
BASE_RADIUS = 0.5
SEGMENT_MASS = 1.0

# Root positions of the 20-agent scene (x varies fastest).
GRID_X = (-40.0, -20.0, 0.0, 20.0, 40.0)
GRID_Z = (0.0, 20.0, 41.1, 61.1)
ROW_SPACING = 20.0  # used for rows beyond the original's four

# Unity's Quaternion.Euler(180, 0, 0) in float32: w is cos(pi/2) rounded, not 0.
# Keeping it makes the reset observation match the original's printed one.
SEGMENT_QUAT_WXYZ = (-4.37113883e-08, 1.0, 0.0, 0.0)


def _quat_to_matrix(q: tuple[float, float, float, float]) -> np.ndarray:
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


_SEGMENT_ROT = _quat_to_matrix(SEGMENT_QUAT_WXYZ)


def capsule_inertia(mass: float, radius: float, cyl_length: float) -> tuple[float, float]:
    """(perpendicular, axial) inertia of a solid capsule about its centre."""
    v_cyl = math.pi * radius**2 * cyl_length
    v_sph = 4.0 / 3.0 * math.pi * radius**3
    m_cyl = mass * v_cyl / (v_cyl + v_sph)
    m_sph = mass - m_cyl
    axial = m_cyl * radius**2 / 2 + m_sph * 2 * radius**2 / 5
    perp = m_cyl * (cyl_length**2 / 12 + radius**2 / 4) + m_sph * (
        2 * radius**2 / 5 + cyl_length**2 / 4 + 3 * cyl_length * radius / 8
    )
    return perp, axial


def segment_b_mass_properties() -> tuple[float, float, float]:
    """Centre-of-mass offset from the capsule centre (towards the hand), and the
    (perpendicular, axial) inertia about that centre.

    Unity gives a compound collider uniform density with the body's mass fixed at 1,
    counting each collider's full volume (the hand sphere overlaps the capsule end).
    """
    r, cyl = CAPSULE_RADIUS, CAPSULE_LENGTH - 2 * CAPSULE_RADIUS
    v_cap = math.pi * r**2 * cyl + 4.0 / 3.0 * math.pi * r**3
    v_hand = 4.0 / 3.0 * math.pi * HAND_RADIUS**3
    m_cap = SEGMENT_MASS * v_cap / (v_cap + v_hand)
    m_hand = SEGMENT_MASS - m_cap
    hand_offset = float(np.linalg.norm(HAND - B_CENTRE))
    com = m_hand * hand_offset / SEGMENT_MASS
    cap_perp, cap_axial = capsule_inertia(m_cap, r, cyl)
    sph = 2.0 / 5.0 * m_hand * HAND_RADIUS**2
    perp = cap_perp + m_cap * com**2 + sph + m_hand * (hand_offset - com) ** 2
    axial = cap_axial + sph
    return com, perp, axial


def agent_roots(num_agents: int) -> np.ndarray:
    """Root positions: the original 5 x 4 grid, extended by further rows if needed."""
    if num_agents == 1:
        return np.zeros((1, 3))
    roots = []
    row = 0
    while len(roots) < num_agents:
        z = GRID_Z[row] if row < len(GRID_Z) else GRID_Z[-1] + ROW_SPACING * (row - len(GRID_Z) + 1)
        roots.extend((x, 0.0, z) for x in GRID_X)
        row += 1
    return np.array(roots[:num_agents], dtype=float)


def _vec(v) -> str:
    return " ".join(f"{float(x):.9g}" for x in v)


def _arm_xml(i: int, root: np.ndarray, goal_radius: float) -> str:
    # Positions inside a segment's frame, which is rotated (nearly exactly) 180 deg
    # about x: undo that rotation so world positions come out as in the Unity scene.
    def local(world_offset: np.ndarray) -> str:
        return _vec(_SEGMENT_ROT.T @ world_offset)

    half = CAPSULE_LENGTH / 2 - CAPSULE_RADIUS
    a_perp, a_axial = capsule_inertia(SEGMENT_MASS, CAPSULE_RADIUS, CAPSULE_LENGTH - 2 * CAPSULE_RADIUS)
    b_com, b_perp, b_axial = segment_b_mass_properties()
    quat = _vec(SEGMENT_QUAT_WXYZ)
    return f"""
    <body name="root{i}" pos="{_vec(root)}">
      <geom name="base{i}" type="sphere" size="{BASE_RADIUS}" material="base"/>
      <body name="A{i}" pos="{_vec(A_CENTRE)}" quat="{quat}">
        <inertial pos="0 0 0" mass="{SEGMENT_MASS}" diaginertia="{a_perp:.9g} {a_axial:.9g} {a_perp:.9g}"/>
        <joint name="shoulder_x{i}" type="hinge" axis="1 0 0" pos="{local(SHOULDER - A_CENTRE)}"/>
        <joint name="shoulder_z{i}" type="hinge" axis="0 0 1" pos="{local(SHOULDER - A_CENTRE)}"/>
        <geom name="capA{i}" type="capsule" size="{CAPSULE_RADIUS} {half}" zaxis="0 1 0" material="arm"/>
        <body name="B{i}" pos="{local(B_CENTRE - A_CENTRE)}">
          <inertial pos="0 {b_com:.9g} 0" mass="{SEGMENT_MASS}" diaginertia="{b_perp:.9g} {b_axial:.9g} {b_perp:.9g}"/>
          <joint name="elbow_x{i}" type="hinge" axis="1 0 0" pos="{local(ELBOW - B_CENTRE)}"/>
          <joint name="elbow_z{i}" type="hinge" axis="0 0 1" pos="{local(ELBOW - B_CENTRE)}"/>
          <geom name="capB{i}" type="capsule" size="{CAPSULE_RADIUS} {half}" zaxis="0 1 0" material="arm"/>
          <geom name="hand{i}" type="sphere" size="{HAND_RADIUS}" pos="{local(HAND - B_CENTRE)}" material="hand"/>
          <site name="hand{i}" pos="{local(HAND - B_CENTRE)}"/>
        </body>
      </body>
    </body>
    <body name="goal{i}" mocap="true" pos="{_vec(root + np.array([0.0, GOAL_HEIGHT, GOAL_RADIUS]))}">
      <geom name="goal{i}" type="sphere" size="{goal_radius}" material="goal"/>
    </body>"""


def _look_at(eye: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Camera x and y axes for looking from eye to target with y up (MuJoCo's own
    target modes assume z up)."""
    forward = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(forward, [0.0, 1.0, 0.0])
    right /= np.linalg.norm(right)
    return np.concatenate([right, np.cross(right, forward)])


def build_mjcf(num_agents: int, goal_size: float = 5.0, timestep: float = 0.02) -> str:
    """MJCF text for `num_agents` arms in one world."""
    roots = agent_roots(num_agents)
    arms = "".join(_arm_xml(i, root, 0.5 * goal_size) for i, root in enumerate(roots))
    centre = roots.mean(axis=0)
    extent = float(np.ptp(roots[:, [0, 2]], axis=0).max()) if num_agents > 1 else 0.0
    # A camera in front of the grid, above it, looking at its centre (y is up).
    distance = 32.0 + 0.8 * extent
    eye = centre + np.array([0.0, 0.95 * distance, -0.9 * distance])
    floor_y = -16.0
    return f"""<mujoco model="unity_reacher_x{num_agents}">
  <compiler angle="radian" inertiafromgeom="false" autolimits="true"/>
  <!-- Unity: 0.02 s fixed step, gravity -9.81 along y. Nothing collides or is
       constrained: the joints are the kinematic tree itself. MuJoCo never steps this
       model: reacher/physics.py does, as PhysX would; MuJoCo poses and draws it. -->
  <option timestep="{timestep}" gravity="0 -9.81 0">
    <flag contact="disable" constraint="disable"/>
  </option>
  <visual>
    <global offwidth="{OFFSCREEN_WIDTH}" offheight="{OFFSCREEN_HEIGHT}"/>
    <quality shadowsize="2048"/>
    <headlight ambient="0.35 0.35 0.35" diffuse="0.5 0.5 0.5"/>
  </visual>
  <asset>
    <texture name="grid" type="2d" builtin="checker" rgb1="0.16 0.2 0.26" rgb2="0.12 0.15 0.2"
             width="512" height="512"/>
    <material name="floor" texture="grid" texrepeat="12 12"/>
    <material name="base" rgba="0.3 0.3 0.35 1"/>
    <material name="arm" rgba="0.85 0.85 0.9 1"/>
    <material name="hand" rgba="0.2 0.45 0.95 1"/>
    <material name="goal" rgba="0.1 0.85 0.3 0.45"/>
  </asset>
  <worldbody>
    <light pos="{_vec(centre + np.array([0.0, 60.0, -20.0]))}" dir="0 -1 0.3" directional="true"/>
    <geom name="floor" type="plane" size="{extent / 2 + 40:.6g} {extent / 2 + 40:.6g} 1"
          pos="{_vec(centre + np.array([0.0, floor_y, 0.0]))}" zaxis="0 1 0" material="floor"/>
    <camera name="overview" pos="{_vec(eye)}" xyaxes="{_vec(_look_at(eye, centre + np.array([0.0, -8.0, 0.0])))}" fovy="45"/>
    {arms}
  </worldbody>
</mujoco>
"""
