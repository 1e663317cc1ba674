"""The Reacher's goal as its observation shows it: where the hand is, where a goal moving on its
ring would be, and the reward it would give. What a learner that relabels goals needs of this
scene (the goal paths variant, ``ddpg/variants/goal_paths.py``, takes it through ``ddpg.tasks``).

A goal moves at a constant angular speed around the ring (``goal_offsets``), four physics steps a
decision; the reward is 0.01 for each physics step the hand is within reach of the goal (with the
default goal size). Within a decision the hand is taken to move in a straight line between the
two observations: against the goal's own path this reproduces the environment's rewards for all
but about 1% of the decisions (``tests/test_goal_paths.py``).
"""

from __future__ import annotations

import numpy as np

from reacher import observation as obs
from reacher.environment import (
    ACTION_SIZE,
    DEFAULT_RESET_PARAMETERS,
    PHYSICS_STEPS_PER_DECISION,
    REWARD_PER_PHYSICS_STEP,
    goal_offsets,
)
from reacher.mjcf import B_CENTRE, HAND, HAND_RADIUS, SEGMENT_QUAT_WXYZ

OBSERVATION_SIZE = obs.OBSERVATION_SIZE
REACH = HAND_RADIUS + 0.5 * DEFAULT_RESET_PARAMETERS["goal_size"]  # hand centre to goal centre, when rewarded
GOAL_SPEED = DEFAULT_RESET_PARAMETERS["goal_speed"]  # goal speeds are drawn from +- this, degrees per physics step


def _rotate(q_xyzw: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Vectors ``v`` (..., 3) rotated by unit quaternions (..., 4) in x, y, z, w order."""
    u, w = q_xyzw[..., :3], q_xyzw[..., 3:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


# The hand in the lower segment's own frame: where the rest pose puts it, taken back through
# the segment's rest rotation (the observation's quaternions are world rotations from that frame).
_REST = np.array([*SEGMENT_QUAT_WXYZ[1:], SEGMENT_QUAT_WXYZ[0]])
HAND_IN_SEGMENT = _rotate(_REST * np.array([-1.0, -1.0, -1.0, 1.0]), HAND - B_CENTRE)


def hand_positions(states: np.ndarray) -> np.ndarray:
    """The hand's centre relative to the arm's root, (..., 3), from observations (..., 33)."""
    segment = states[..., obs.B + obs.POSITION:obs.B + obs.POSITION + 3].astype(np.float64)
    quaternion = states[..., obs.B + obs.QUATERNION:obs.B + obs.QUATERNION + 4].astype(np.float64)
    return segment + _rotate(quaternion, np.broadcast_to(HAND_IN_SEGMENT, segment.shape))


def ring_angle(points: np.ndarray) -> np.ndarray:
    """The angle (degrees) of the ring point nearest each point (..., 3): goal_offsets' (8 sin, -1, 8 cos) inverted."""
    return np.degrees(np.arctan2(points[..., 0], points[..., 2]))


def path_angles(angle_then: np.ndarray, speeds: np.ndarray, when: np.ndarray, decisions: int) -> np.ndarray:
    """The angles (decisions + 1, K, N) of goals at ``angle_then`` at decision ``when``, moving at ``speeds``."""
    return angle_then + PHYSICS_STEPS_PER_DECISION * speeds * (np.arange(decisions + 1)[:, None, None] - when)


def path_rewards(hands: np.ndarray, angles: np.ndarray, speeds: np.ndarray) -> np.ndarray:
    """Each decision's reward against goal paths: ``hands`` (T + 1, N, 3) at the observations,
    ``angles`` (T, K, N) the goals' angles (degrees) in each decision's first observation and
    ``speeds`` (K, N) theirs, in degrees per physics step; returns (T, K, N)."""
    k = np.arange(1, PHYSICS_STEPS_PER_DECISION + 1)[None, :, None, None]  # the physics steps of a decision
    start, moved = hands[:-1, None, None], (hands[1:] - hands[:-1])[:, None, None]
    hand = start + moved * (k / PHYSICS_STEPS_PER_DECISION)[..., None]  # (T, 4, 1, N, 3): on the line between
    goals = goal_offsets(angles[:, None] + k * speeds)  # (T, 4, K, N, 3)
    within = ((hand - goals) ** 2).sum(-1) < REACH * REACH
    return within.sum(axis=1) * REWARD_PER_PHYSICS_STEP


def with_goals(states: np.ndarray, angles: np.ndarray, speeds: np.ndarray) -> np.ndarray:
    """Observations (T + 1, N, 33) against K goal paths: (T + 1, K, N, 33) with each path's goal and speed."""
    relabelled = np.repeat(states[:, None], angles.shape[1], axis=1)
    relabelled[..., obs.GOAL:obs.GOAL + 3] = goal_offsets(angles)
    relabelled[..., obs.GOAL_SPEED] = speeds
    return relabelled


__all__ = ["ACTION_SIZE", "GOAL_SPEED", "HAND_IN_SEGMENT", "OBSERVATION_SIZE", "REACH", "hand_positions", "path_angles",
           "path_rewards", "ring_angle", "with_goals"]
