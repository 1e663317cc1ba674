"""Where each quantity sits in the 33-value Reacher observation (the original's order).

One place for the layout: the physics kernel fills the segments' part, the environment
the goal's, and tests and tools read them by these names.
"""

from __future__ import annotations

OBSERVATION_SIZE = 33

# Per segment (A = upper, B = lower), 13 values from its offset:
SEGMENT_SIZE = 13
A = 0  # upper segment
B = 13  # lower segment
POSITION = 0  # + 0..2: capsule centre, relative to the arm's root, world axes
QUATERNION = 3  # + 3..6: rotation x, y, z, w (world)
ANGULAR_VELOCITY = 7  # + 7..9: rad/s, world axes
LINEAR_VELOCITY = 10  # + 10..12: velocity of the centre of mass, world axes

GOAL = 26  # 26..28: goal centre, relative to the arm's root
HAND_LOCAL = 29  # 29..31: the hand in B's own frame, always (0, 1, 0)
GOAL_SPEED = 32  # degrees per physics step, signed
