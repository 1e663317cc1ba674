"""MJCF generator: one MuJoCo model holding the scene's crawlers, or one of them alone where it
stands in the scene (`build_mjcf(..., only=i)`: the environment steps each so), in Unity's own
coordinates.

Like `reacher/mjcf.py`, everything stays in Unity's numbers (y up, gravity -9.81 along y):
Unity's rotation and cross-product formulas are the standard ones, so the physics is the same
whichever handedness a reader imagines, and every value can be checked against the prefab.

One crawler (`crawler/scene.py` holds the numbers and their sources):

    Body: a sphere, r 0.315, mass 1, free; it faces +x (yaw 90 degrees)
    leg k (k = 0..3 at -z, -x, +z, +x of the agent's origin, rotated 45 degrees with it):
        upper leg: capsule r 0.15, 0.816 long, mass 3, its centre 0.9 out from the origin
            hip, 0.48 inside its centre: a hinge about the vertical (+-20 deg), then one
            about the horizontal axis across the leg (-60 to 0 deg: lifting it)
        lower leg: capsule r 0.15, 1.326 long, mass 1, its centre 0.0936 beyond its
            origin at 1.98 out
            knee, 0.78 inside that origin: a hinge about the same axis (0 to 150 deg: lowering it)

Unity joins sibling rigidbodies with ConfigurableJoints solved as constraints; MuJoCo's tree
of hinges holds the same degrees of freedom exactly. Each hinge has a position actuator with
the slerp drive's spring and damper, whose force limit (the agent's strength) the environment
sets each decision. Mass, centre of mass and inertia come from the colliders, as Unity computes
them. The ground is one plane at the platforms' top, y = 0.5 (each platform's own ground is a
1500 x 50 box beside its neighbours'), so the crawlers never meet (50 apart in z). Shapes rest on it
at contact, as PhysX's rest offset of 0 has them; the environment hears of a touch within
Unity's contact offset, 0.01.
"""

from __future__ import annotations

import math

import numpy as np

from crawler import scene
from envkit.display import OFFSCREEN_HEIGHT, OFFSCREEN_WIDTH  # every scene's offscreen buffer

N_LEGS = 4
PARTS = ("body", *(f"{p}{k}" for k in range(N_LEGS) for p in ("upper", "lower")))  # the observation's order
ACTUATED = tuple(f"{j}{k}" for j in ("hip_x", "hip_y", "knee") for k in range(N_LEGS))  # one actuator each
# MuJoCo steps per physics step of the original. PhysX solves a drive implicitly and caps its
# impulse; MuJoCo's position actuator is implicit in its damping only while its force is under
# the cap, and a capped 40000 N m/rad spring on a 1 kg body is unstable at 13.3 ms and still
# spikes at a tenth of it (benchmarks/bench_crawler_physics.py measures it: its substeps table in
# docs/crawler.md); a twentieth holds.
SUBSTEPS_PER_PHYSICS_STEP = 20

# Derived sizes (scaled as Unity scales colliders: the radius by the larger cross scale).
BODY_RADIUS = scene.BODY_RADIUS * scene.BODY_SCALE
LEG_RADIUS = scene.LEG_RADIUS * scene.LEG_WIDTH_SCALE
UPPER_HALF = 0.5 * scene.LEG_HEIGHT * scene.UPPER_LENGTH_SCALE - LEG_RADIUS  # half the cylinder part
LOWER_HALF = 0.5 * scene.LEG_HEIGHT * scene.LOWER_LENGTH_SCALE - LEG_RADIUS
LOWER_CENTRE = scene.LOWER_COLLIDER_CENTRE * scene.LOWER_LENGTH_SCALE
HIP = scene.JOINT_ANCHOR * scene.UPPER_LENGTH_SCALE  # along the upper leg's own y
KNEE = scene.JOINT_ANCHOR * scene.LOWER_LENGTH_SCALE  # along the lower leg's own y


def yaw_matrix(deg: float) -> np.ndarray:
    """Unity's rotation about +y by deg (Quaternion.Euler(0, deg, 0))."""
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def look_axes(direction: np.ndarray) -> np.ndarray:
    """A camera's x (image right) and y (image up) axes as columns, looking along direction with
    Unity's y up (MuJoCo's cameras look along their -z)."""
    z = -np.asarray(direction, dtype=float) / np.linalg.norm(direction)
    x = np.cross([0.0, 1.0, 0.0], z)
    x /= np.linalg.norm(x)
    return np.stack([x, np.cross(z, x)], axis=1)


def _quat(matrix: np.ndarray) -> str:
    import mujoco

    q = np.empty(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(matrix, dtype=np.float64).ravel())
    return " ".join(f"{v:.9g}" for v in q)


def _vec(v: np.ndarray | tuple[float, ...]) -> str:
    return " ".join(f"{float(x):.9g}" for x in v)


def agent_origin(i: int) -> np.ndarray:
    """Agent i's origin (the prefab's Crawler object) in world coordinates."""
    z = scene.PLATFORM_Z[i] if i < len(scene.PLATFORM_Z) else scene.PLATFORM_Z[-1] + 50.0 * (i - 11)
    return np.array([scene.AGENT_ROOT[0], scene.AGENT_ROOT[1], z])


def start_pose() -> tuple[np.ndarray, np.ndarray, list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]]:
    """Starting poses relative to the agent's origin: the body's position and rotation, then for
    each leg the upper and lower legs' positions and rotations (all world-aligned)."""
    root = yaw_matrix(scene.AGENT_ROOT_YAW)
    body_pos = root @ np.array(scene.BODY_OFFSET)
    body_rot = root @ yaw_matrix(scene.BODY_YAW)
    # A leg's own y points outward and its own z up: Euler(-90, psi, 0) with psi 0, 90, 180, -90.
    tilt = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])  # Euler(-90, 0, 0)
    legs = []
    for k, direction in enumerate(scene.LEG_DIRECTIONS):
        rot = root @ yaw_matrix((0.0, 90.0, 180.0, -90.0)[k]) @ tilt
        assert np.allclose(rot[:, 1], root @ np.array(direction))
        legs.append((root @ (scene.UPPER_DISTANCE * np.array(direction)), rot,
                     root @ (scene.LOWER_DISTANCE * np.array(direction)), rot))
    return body_pos, body_rot, legs


def _crawler(i: int) -> str:
    origin = agent_origin(i)
    body_pos, body_rot, legs = start_pose()
    parts = [f'<body name="body{i}" pos="{_vec(origin + body_pos)}" quat="{_quat(body_rot)}">',
             f'<freejoint name="free{i}"/>',
             f'<geom name="body{i}" type="sphere" size="{BODY_RADIUS:.9g}" mass="{scene.BODY_MASS:g}" material="body"/>']
    for k, (upper_pos, upper_rot, lower_pos, lower_rot) in enumerate(legs):
        rel_pos = body_rot.T @ (upper_pos - body_pos)
        rel_rot = body_rot.T @ upper_rot
        # The prefab's ConfigurableJoint has axis (1, 0, 0) and secondary axis (0, 0, -1), and Unity's
        # targetRotation = Quaternion.Euler(x, y, 0) acts as its inverse in that joint frame
        # (JointDriveController.SetJointTargetRotation, ML-Agents 0.4.0): the leg turns by
        # Rx(-x) Rz(+y) about its own axes. So hip x is a hinge about the leg's own -x (a positive
        # angle lowers the far end) and hip y one about its own +z.
        parts += [
            f'<body name="upper{k}_{i}" pos="{_vec(rel_pos)}" quat="{_quat(rel_rot)}">',
            f'<joint name="hip_y{k}_{i}" type="hinge" pos="0 {HIP:.9g} 0" axis="0 0 1" '
            f'range="{-scene.HIP_Y_LIMIT:g} {scene.HIP_Y_LIMIT:g}"/>',
            f'<joint name="hip_x{k}_{i}" type="hinge" pos="0 {HIP:.9g} 0" axis="-1 0 0" '
            f'range="{scene.HIP_X_LIMITS[0]:g} {scene.HIP_X_LIMITS[1]:g}"/>',
            f'<geom name="upper{k}_{i}" type="capsule" fromto="0 {-UPPER_HALF:.9g} 0 0 {UPPER_HALF:.9g} 0" '
            f'size="{LEG_RADIUS:.9g}" mass="{scene.UPPER_MASS:g}" material="leg"/>',
            f'<body name="lower{k}_{i}" pos="{_vec(upper_rot.T @ (lower_pos - upper_pos))}" '
            f'quat="{_quat(upper_rot.T @ lower_rot)}">',
            f'<joint name="knee{k}_{i}" type="hinge" pos="0 {KNEE:.9g} 0" axis="-1 0 0" '
            f'range="{scene.KNEE_X_LIMITS[0]:g} {scene.KNEE_X_LIMITS[1]:g}"/>',
            f'<geom name="lower{k}_{i}" type="capsule" fromto="0 {LOWER_CENTRE - LOWER_HALF:.9g} 0 0 '
            f'{LOWER_CENTRE + LOWER_HALF:.9g} 0" size="{LEG_RADIUS:.9g}" mass="{scene.LOWER_MASS:g}" material="foot"/>',
            "</body>", "</body>",
        ]
    if i == 0:
        # Behind and to the side of crawler 0, looking at it; it keeps that offset as the crawler moves.
        offset = np.array([-6.0, 3.5, 5.0])
        parts.append(f'<camera name="follow" mode="trackcom" pos="{_vec(body_rot.T @ offset)}" '
                     f'xyaxes="{_vec((body_rot.T @ look_axes(-offset)).T.ravel()[:6])}"/>')
    parts.append("</body>")
    target = np.array([scene.TARGET[0], scene.TARGET[1], origin[2]])
    parts.append(f'<geom name="target{i}" type="box" size="0.5 0.5 0.5" pos="{_vec(target)}" material="target" '
                 'contype="0" conaffinity="0"/>')
    return "\n".join(parts)


# Each crawler's sensors, in this order (SENSOR_SIZE values): every part's position (framepos of
# the body frame) and own y axis, then the body's own x and z axes and velocity at its origin,
# then every part's velocity at its centre of mass and angular velocity (world). MuJoCo computes
# them in mj_step1 from the state before the step: what the reward, the contacts and the
# observation read, copied per physics step without stepping through Python per part.
SENSOR_SLICES = {
    "pos": slice(0, 27), "yaxis": slice(27, 54), "root_xaxis": slice(54, 57), "root_zaxis": slice(57, 60),
    "root_vel": slice(60, 63), "com_vel": slice(63, 90), "omega": slice(90, 117)}
SENSOR_SIZE = 117


def _part_body(name: str, i: int) -> str:
    return f"body{i}" if name == "body" else f"{name}_{i}"


def _sensors(i: int) -> str:
    parts = [_part_body(p, i) for p in PARTS]
    lines = [f'<framepos objtype="xbody" objname="{b}"/>' for b in parts]
    lines += [f'<frameyaxis objtype="xbody" objname="{b}"/>' for b in parts]
    lines += [f'<framexaxis objtype="xbody" objname="body{i}"/>', f'<framezaxis objtype="xbody" objname="body{i}"/>',
              f'<framelinvel objtype="xbody" objname="body{i}"/>']
    lines += [f'<framelinvel objtype="body" objname="{b}"/>' for b in parts]
    lines += [f'<frameangvel objtype="body" objname="{b}"/>' for b in parts]
    return "\n".join(lines)


def arena_mib(num_agents: int) -> int:
    """MiB of MuJoCo's arena (``<size memory>``) for num_agents crawlers. Its stack takes about
    2 x bodies x degrees of freedom bytes a step (mj_collision's allocation, measured from 12 to
    1000 crawlers: 58 kB for 12, 29 MB for 300, 325 MB for 1000), which grows with the square of
    the crawlers, so a fixed size refuses large scenes (1000 crawlers overflowed 64M). 25% more
    and 16 MiB for contacts, at least the 64 MiB the course's 12 always had."""
    bodies, dofs = 1 + len(PARTS) * num_agents, (6 + 3 * N_LEGS) * num_agents
    return max(64, math.ceil((2.5 * bodies * dofs) / 2**20) + 16)


def build_mjcf(num_agents: int, substeps: int = SUBSTEPS_PER_PHYSICS_STEP, only: int | None = None) -> str:
    """The MJCF text of a scene with num_agents crawlers (12 in the course's build), stepped
    substeps times per physics step of the original; with `only`, that crawler alone, where it
    stands in the whole scene (the environment steps each crawler in a model of its own, which
    MuJoCo steps exactly as the scene's island of that crawler: they never touch)."""
    agents = range(num_agents) if only is None else (only,)
    actuators = "\n".join(
        f'<position name="{name}_{i}" joint="{name}_{i}" kp="{scene.DRIVE_SPRING:g}" kv="{scene.DRIVE_DAMPER:g}" '
        f'forcelimited="true" forcerange="-1 1"/>'
        for i in agents for name in ACTUATED)
    crawlers = "\n".join(_crawler(i) for i in agents)
    sensors = "\n".join(_sensors(i) for i in agents)
    mid = 0.5 * (agent_origin(0)[2] + agent_origin(num_agents - 1)[2])
    first = agent_origin(min(1, num_agents - 1))  # the overview looks along the row from its end
    overview = first + np.array([-14.0, 12.0, -80.0])
    return f"""<mujoco model="unity_crawler">
  <compiler angle="degree" inertiafromgeom="true"/>
  <option timestep="{scene.PHYSICS_DT / substeps:.9g}" gravity="0 {scene.GRAVITY:g} 0" integrator="implicitfast"/>
  <size memory="{arena_mib(len(agents))}M"/>
  <!-- The clipping planes scale with the model's extent, which the far targets and the wide ground
       would make hundreds of units: a crawler is about 5 across. -->
  <statistic extent="20" center="{_vec(agent_origin(0))}"/>
  <visual><global offwidth="{OFFSCREEN_WIDTH}" offheight="{OFFSCREEN_HEIGHT}"/><quality shadowsize="2048"/>
    <map znear="0.005" zfar="60"/></visual>
  <default><geom friction="{scene.FRICTION:g} 0.005 0.0001"/></default>
  <asset>
    <texture name="grid" type="2d" builtin="checker" rgb1=".2 .23 .27" rgb2=".15 .17 .2" width="512" height="512"/>
    <material name="grid" texture="grid" texrepeat="400 400" reflectance="0.05"/>
    <material name="body" rgba=".25 .5 .85 1"/>
    <material name="leg" rgba=".9 .55 .15 1"/>
    <material name="foot" rgba=".85 .35 .1 1"/>
    <material name="target" rgba=".2 .8 .3 1"/>
  </asset>
  <worldbody>
    <light pos="0 60 {mid:.6g}" dir="0 -1 0" directional="true"/>
    <geom name="ground" type="plane" size="2000 2000 1" pos="0 {scene.GROUND_TOP:g} 0" quat="0.70710678 -0.70710678 0 0" material="grid"/>
    <camera name="overview" pos="{_vec(overview)}" xyaxes="{_vec(look_axes(first - overview).T.ravel()[:6])}"/>
{crawlers}
  </worldbody>
  <actuator>
{actuators}
  </actuator>
  <sensor>
{sensors}
  </sensor>
</mujoco>
"""
