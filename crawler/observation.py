"""The 129 observation values of one crawler, by index, in CrawlerAgent.CollectObservations' order.

    0-2    direction to the target, normalised (world)
    3      the body's height (world y; the ground's top is at 0.5)
    4-6    the body's forward axis (world)
    7-9    the body's up axis (world)
    10-16  body: touching the ground (0/1), velocity (3), angular velocity (3, rad/s)
    17-128 each leg part in the order upper0, lower0, upper1, lower1, ..., lower3, 14 values each:
           touching the ground, velocity (3), angular velocity (3), its origin in the body's
           frame (3; divided by the body's scale 1.05, as InverseTransformPoint does), the
           commanded joint rotations normalised to [0, 1] (x, y, z: 0 where the joint has no
           such axis), and the commanded strength (0 to 1)
"""

from __future__ import annotations

from crawler.mjcf import PARTS

OBSERVATION_SIZE = 129
TARGET_DIRECTION = 0
BODY_HEIGHT = 3
BODY_FORWARD = 4
BODY_UP = 7
BODY = 10  # the body's 7 values
LEGS = 17  # the first leg part's 14 values
PART_SIZE = 7
LEG_PART_SIZE = 14
# Within a leg part's 14 values:
CONTACT, VELOCITY, ANGULAR_VELOCITY, LOCAL_POSITION, ROTATION, STRENGTH = 0, 1, 4, 7, 10, 13

assert LEGS + LEG_PART_SIZE * (len(PARTS) - 1) == OBSERVATION_SIZE


def part_start(part: int) -> int:
    """Index of the first value of part (0 the body, 1-8 the leg parts in PARTS' order)."""
    return BODY if part == 0 else LEGS + LEG_PART_SIZE * (part - 1)


_AGENT = "CrawlerAgent.cs"


def blocks() -> list[tuple[str, str, str, str]]:
    """The observation by index range: (indices, values, frame, the line of ML-Agents' code that adds
    them), for docs/crawler.md."""
    out = [("0-2", "direction to the target, normalised", "world", f"{_AGENT} CollectObservations: AddVectorObs(dirToTarget.normalized)"),
           ("3", "the body's height", "world y", f"{_AGENT}: AddVectorObs(body.transform.position.y)"),
           ("4-6", "the body's forward axis", "world", f"{_AGENT}: AddVectorObs(body.forward)"),
           ("7-9", "the body's up axis", "world", f"{_AGENT}: AddVectorObs(body.up)")]
    body = f"{_AGENT} CollectObservationBodyPart: groundContact.touchingGround, rb.velocity, rb.angularVelocity"
    out.append((f"{BODY}-{BODY + PART_SIZE - 1}", "body: on the ground (0/1), velocity, angular velocity (rad/s)", "world",
                body))
    legs = ", ".join(f"{part_start(p)}-{part_start(p) + LEG_PART_SIZE - 1} {name}" for p, name in enumerate(PARTS) if p)
    out.append((legs, "each leg part, 14 values: on the ground, velocity (3), angular velocity (3); its origin in the "
                "body's frame (3, divided by the body's scale 1.05); commanded rotation x, y, z in [0, 1] (0 for an "
                "axis the joint lacks); strength in [0, 1]", "world; the body's; -",
                body + ", body.InverseTransformPoint(rb.position), currentX/Y/ZNormalizedRot, "
                "currentStrength / maxJointForceLimit"))
    return out


def labels() -> list[str]:
    """A name for each of the 129 values, for plots and the docs."""
    out = [f"target direction {a}" for a in "xyz"] + ["body height"]
    out += [f"body forward {a}" for a in "xyz"] + [f"body up {a}" for a in "xyz"]
    for name in PARTS:
        out += [f"{name} on ground"] + [f"{name} velocity {a}" for a in "xyz"]
        out += [f"{name} angular velocity {a}" for a in "xyz"]
        if name != "body":
            out += [f"{name} position {a}" for a in "xyz"] + [f"{name} target rotation {a}" for a in "xyz"]
            out += [f"{name} strength"]
    return out
