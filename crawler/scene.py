"""Every number of the Crawler scene, with the file of ML-Agents it comes from.

The course's Crawler is ML-Agents' `CrawlerStaticTarget` scene of mid-2018 (the build whose
brain declares 129 observations and 20 actions). Its numbers are read from these files of
Unity-Technologies/ml-agents, under `unity-environment/Assets/ML-Agents/Examples/`:

* `Crawler/Prefabs/FixedPlatform.prefab` (commit 1534d137): the platform the scene places 12
  times, holding its own copy of the crawler (bodies, colliders, joints, agent settings);
* `Crawler/Scenes/CrawlerStaticTarget.unity` (1534d137): the platforms' positions, the brain;
* `Crawler/Scripts/CrawlerAgent.cs` (1534d137): observations, actions, reward, episode end;
* `SharedAssets/Scripts/JointDriveController.cs` (ac79e5c6): how actions set the joints' drives;
* `SharedAssets/Scripts/GroundContact.cs` (9390292a): which contacts end an episode;
* `Crawler/Scripts/CrawlerAcademy.cs` (0900eb07): the physics time step and solver iterations.

`SOURCES` pairs each value with its file and field; docs/crawler.md is generated from it, so
the page and the simulator cannot disagree. Lengths are Unity units (metres), masses kg,
angles degrees, times seconds. Unity's own defaults that no file sets are marked so.
"""

from __future__ import annotations

from typing import NamedTuple

PREFAB = "Crawler/Prefabs/FixedPlatform.prefab"
SCENE = "Crawler/Scenes/CrawlerStaticTarget.unity"
AGENT = "Crawler/Scripts/CrawlerAgent.cs"
DRIVES = "SharedAssets/Scripts/JointDriveController.cs"
CONTACT = "SharedAssets/Scripts/GroundContact.cs"
ACADEMY = "Crawler/Scripts/CrawlerAcademy.cs"
UNITY_DEFAULT = "Unity 2017 default (no file sets it)"

# ---------------------------------------------------------------- time
PHYSICS_DT = 0.01333  # CrawlerAcademy.InitializeAcademy: Time.fixedDeltaTime = 0.01333f (75 Hz)
PHYSICS_STEPS_PER_DECISION = 5  # agent's numberOfActionsBetweenDecisions
MAX_PHYSICS_STEPS = 5000  # agent's maxStep: 1000 decisions
SOLVER_ITERATIONS = 12  # Physics.defaultSolverIterations (and velocity iterations) = 12
GRAVITY = -9.81  # DynamicsManager m_Gravity y
MAX_ANGULAR_VELOCITY = 100.0  # rad/s, JointDriveController.SetupBodyPart: rb.maxAngularVelocity = 100
ANGULAR_DRAG = 0.05  # every Rigidbody's m_AngularDrag (m_Drag is 0)

# ---------------------------------------------------------------- the body and legs
AGENT_ROOT = (-200.0, 2.1, 0.0)  # platform (200, 0, z) + the agent's m_LocalPosition (-400, 2.1, 0)
AGENT_ROOT_YAW = 45.0  # the agent object's m_LocalRotation (0, 0.3827, 0, 0.9239)
PLATFORM_Z = tuple(-300.0 + 50.0 * k for k in range(12))  # the scene's 12 FixedPlatform instances, z
BODY_OFFSET = (0.0, 0.15, 0.0)  # Body m_LocalPosition
BODY_YAW = 45.0  # Body m_LocalRotation (0, 0.3827, 0, 0.9239): with the root's, it faces +x
BODY_SCALE = 1.05  # Body m_LocalScale
BODY_RADIUS = 0.3  # Body SphereCollider m_Radius (times the scale: 0.315)
BODY_MASS = 1.0  # Body m_Mass
LEG_RADIUS = 0.5  # every leg's CapsuleCollider m_Radius (times the x scale 0.3: 0.15)
LEG_HEIGHT = 1.7  # every leg's CapsuleCollider m_Height, along y (times the y scale)
LEG_WIDTH_SCALE = 0.3  # legs' m_LocalScale x and z
UPPER_LENGTH_SCALE = 0.48  # leg0-3 m_LocalScale y
LOWER_LENGTH_SCALE = 0.78  # foreleg0-3 m_LocalScale y
UPPER_DISTANCE = 0.9  # leg0-3 m_LocalPosition: 0.9 from the agent's origin, on its +-x and +-z axes
LOWER_DISTANCE = 1.98  # foreleg0-3 m_LocalPosition: 1.98 likewise
LOWER_COLLIDER_CENTRE = 0.12  # foreleg0-3 CapsuleCollider m_Center y (times 0.78: 0.0936 outward)
UPPER_MASS = 3.0  # leg0-3 m_Mass
LOWER_MASS = 1.0  # foreleg0-3 m_Mass
# leg0-3 sit at -z, -x, +z, +x of the agent's origin (m_LocalPosition), each pointing outward.
LEG_DIRECTIONS = ((0.0, 0.0, -1.0), (-1.0, 0.0, 0.0), (0.0, 0.0, 1.0), (1.0, 0.0, 0.0))

# ---------------------------------------------------------------- joints and drives
JOINT_ANCHOR = -1.0  # every ConfigurableJoint m_Anchor (0, -1, 0): the leg's inner end, in its scaled frame
HIP_X_LIMITS = (-60.0, 0.0)  # leg0-3 joints: lowAngularXLimit, highAngularXLimit (angularXMotion limited)
HIP_Y_LIMIT = 20.0  # leg0-3 joints: angularYLimit (angularYMotion limited; angularZMotion locked)
KNEE_X_LIMITS = (0.0, 150.0)  # foreleg0-3 joints: low/highAngularXLimit (angularY/ZMotion locked)
DRIVE_SPRING = 40000.0  # JointDriveController maxJointSpring (prefab): the slerp drive's positionSpring
DRIVE_DAMPER = 3000.0  # JointDriveController jointDampen (prefab): positionDamper
MAX_JOINT_FORCE = 10000.0  # JointDriveController maxJointForceLimit (prefab): maximumForce at strength 1

# ---------------------------------------------------------------- ground, target, contacts
GROUND_TOP = 0.5  # Ground: m_LocalPosition y 0, m_LocalScale y 1, a unit BoxCollider: top at 0.5
TARGET = (1175.0, 4.0)  # Target: platform x 200 + m_LocalPosition (975, 4, 0): world x, y (z: the platform's)
FRICTION = 0.6  # Unity's default PhysicMaterial (every collider's m_Material is none)
CONTACT_OFFSET = 0.01  # DynamicsManager m_DefaultContactOffset, every collider's (the ground's too)
# PhysX makes contacts (and Unity's OnCollisionEnter) for shapes within the sum of their offsets.
CONTACT_DISTANCE = 2 * CONTACT_OFFSET

# ---------------------------------------------------------------- reward
REWARD_VELOCITY = 0.03  # CrawlerAgent.RewardFunctionMovingTowards: AddReward(0.03f * movingTowardsDot)
REWARD_FACING = 0.01  # ... rewardFacingTarget: AddReward(0.01f * facingDot)
GROUND_PENALTY = -1.0  # GroundContact: SetReward(groundContactPenalty), -1 on Body and leg0-3


class Source(NamedTuple):
    """One number of the scene and where it is written."""

    what: str
    value: str
    file: str
    field: str


def _fmt(value: object) -> str:
    return ", ".join(f"{v:g}" for v in value) if isinstance(value, tuple) else f"{value:g}"


SOURCES: tuple[Source, ...] = (
    Source("physics time step", _fmt(PHYSICS_DT), ACADEMY, "InitializeAcademy: Time.fixedDeltaTime = 0.01333f"),
    Source("physics steps per decision", _fmt(PHYSICS_STEPS_PER_DECISION), PREFAB, "numberOfActionsBetweenDecisions"),
    Source("episode length (physics steps)", _fmt(MAX_PHYSICS_STEPS), PREFAB, "CrawlerAgent maxStep"),
    Source("solver iterations (position, velocity)", "12, 12", ACADEMY,
           "Physics.defaultSolverIterations, defaultSolverVelocityIterations"),
    Source("gravity (y)", _fmt(GRAVITY), "ProjectSettings/DynamicsManager.asset", "m_Gravity"),
    Source("maximum angular velocity (rad/s)", _fmt(MAX_ANGULAR_VELOCITY), DRIVES,
           "SetupBodyPart: rb.maxAngularVelocity = 100"),
    Source("angular drag (1/s)", _fmt(ANGULAR_DRAG), PREFAB, "every Rigidbody m_AngularDrag (m_Drag 0)"),
    Source("agents", "12", SCENE, "12 FixedPlatform instances"),
    Source("platform z", f"{PLATFORM_Z[0]:g} to {PLATFORM_Z[-1]:g}, every 50", SCENE, "FixedPlatform m_LocalPosition z"),
    Source("agent origin (x, y)", _fmt(AGENT_ROOT[:2]), PREFAB,
           "platform x 200 + Crawler m_LocalPosition (-400, 2.1, 0)"),
    Source("agent yaw (deg)", _fmt(AGENT_ROOT_YAW), PREFAB, "Crawler m_LocalRotation (0, 0.3827, 0, 0.9239)"),
    Source("body offset, yaw, scale", f"{_fmt(BODY_OFFSET)}; {BODY_YAW:g}; {BODY_SCALE:g}", PREFAB,
           "Body m_LocalPosition, m_LocalRotation, m_LocalScale"),
    Source("body collider radius (scaled)", f"{BODY_RADIUS:g} ({BODY_RADIUS * BODY_SCALE:g})", PREFAB,
           "Body SphereCollider m_Radius"),
    Source("masses: body, upper leg, lower leg", f"{BODY_MASS:g}, {UPPER_MASS:g}, {LOWER_MASS:g}", PREFAB,
           "Body, leg0-3, foreleg0-3 m_Mass"),
    Source("leg capsule radius, height", f"{LEG_RADIUS:g}, {LEG_HEIGHT:g}", PREFAB,
           "leg and foreleg CapsuleCollider m_Radius, m_Height (m_Direction 1: along y)"),
    Source("leg scale: width, upper length, lower length",
           f"{LEG_WIDTH_SCALE:g}, {UPPER_LENGTH_SCALE:g}, {LOWER_LENGTH_SCALE:g}", PREFAB,
           "leg0-3, foreleg0-3 m_LocalScale"),
    Source("leg distance from the origin: upper, lower", f"{UPPER_DISTANCE:g}, {LOWER_DISTANCE:g}", PREFAB,
           "leg0-3, foreleg0-3 m_LocalPosition"),
    Source("lower leg collider centre (y, unscaled)", _fmt(LOWER_COLLIDER_CENTRE), PREFAB,
           "foreleg0-3 CapsuleCollider m_Center"),
    Source("joint anchor (y, unscaled)", _fmt(JOINT_ANCHOR), PREFAB, "every ConfigurableJoint m_Anchor (0, -1, 0)"),
    Source("hip x limits (deg)", _fmt(HIP_X_LIMITS), PREFAB, "leg0-3 lowAngularXLimit, highAngularXLimit"),
    Source("hip y limit (deg)", _fmt(HIP_Y_LIMIT), PREFAB, "leg0-3 angularYLimit (angularZMotion locked)"),
    Source("knee x limits (deg)", _fmt(KNEE_X_LIMITS), PREFAB,
           "foreleg0-3 lowAngularXLimit, highAngularXLimit (angularY/ZMotion locked)"),
    Source("drive spring, damper", f"{DRIVE_SPRING:g}, {DRIVE_DAMPER:g}", PREFAB,
           "JointDriveController maxJointSpring, jointDampen; applied by SetJointStrength"),
    Source("drive maximum force at strength 1", _fmt(MAX_JOINT_FORCE), PREFAB,
           "JointDriveController maxJointForceLimit; SetJointStrength: (s + 1) / 2 of it"),
    Source("ground top (y)", _fmt(GROUND_TOP), PREFAB, "Ground m_LocalPosition y 0, m_LocalScale y 1, BoxCollider"),
    Source("target (x, y)", _fmt(TARGET), PREFAB, "platform x 200 + Target m_LocalPosition (975, 4, 0)"),
    Source("friction (static, dynamic)", "0.6, 0.6", UNITY_DEFAULT, "every collider's m_Material: none"),
    Source("contact offset", _fmt(CONTACT_OFFSET), "ProjectSettings/DynamicsManager.asset",
           "m_DefaultContactOffset"),
    Source("contact distance (a part and the ground)", _fmt(CONTACT_DISTANCE), "ProjectSettings/DynamicsManager.asset",
           "the sum of both shapes' m_DefaultContactOffset, where PhysX makes contacts"),
    Source("reward: velocity toward the target", _fmt(REWARD_VELOCITY), AGENT,
           "RewardFunctionMovingTowards: AddReward(0.03f * movingTowardsDot)"),
    Source("reward: facing the target", _fmt(REWARD_FACING), AGENT,
           "rewardFacingTarget: AddReward(0.01f * facingDot)"),
    Source("reward: body or upper leg on the ground", _fmt(GROUND_PENALTY), CONTACT,
           "SetReward(groundContactPenalty); Done() (agentDoneOnGroundContact on Body, leg0-3)"),
)
