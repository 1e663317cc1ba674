"""The Crawler's action as ML-Agents' JointDriveController reads it: which value drives which joint,
the joints' targets and the drives' force caps. Here so that a study of the drives
(benchmarks/bench_crawler_drives.py) and the docs' action table read them without the simulator.
"""

from __future__ import annotations

import numpy as np

from crawler import scene
from crawler.mjcf import N_LEGS

ACTION_SIZE = 20


# The action by index: (indices, meaning, the line of ML-Agents' code that reads them), for docs/crawler.md.
ACTIONS = (
    ("0-7", "hip targets of legs 0-3 in pairs: across the leg, -60 to 0 degrees; about the vertical, -20 to 20",
     "CrawlerAgent.AgentAction: bpDict[legNUpper].SetJointTargetRotation(vectorAction[2N], vectorAction[2N + 1], 0)"),
    ("8-11", "knee targets of legs 0-3, 0 to 150 degrees",
     "CrawlerAgent.AgentAction: bpDict[legNLower].SetJointTargetRotation(vectorAction[8 + N], 0, 0)"),
    ("12-15", "upper legs' strengths: the hip's drive up to (s + 1) / 2 x 10000",
     "CrawlerAgent.AgentAction: bpDict[legNUpper].SetJointStrength(vectorAction[12 + N])"),
    ("16-19", "lower legs' strengths: the knee's drive likewise",
     "CrawlerAgent.AgentAction: bpDict[legNLower].SetJointStrength(vectorAction[16 + N])"),
)


def joint_targets(actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Actions (n, 20) as JointDriveController reads them: the targets (n, 12) in radians in the
    actuators' order (hip x of legs 0-3, hip y, knee) and their normalised values (n, 12) in [0, 1]."""
    t = np.clip((actions[:, :12] + 1.0) * 0.5, 0.0, 1.0)  # Mathf.Lerp clamps
    norm = np.concatenate([t[:, 0:8:2], t[:, 1:8:2], t[:, 8:12]], axis=1)
    low = np.repeat([scene.HIP_X_LIMITS[0], -scene.HIP_Y_LIMIT, scene.KNEE_X_LIMITS[0]], N_LEGS)
    high = np.repeat([scene.HIP_X_LIMITS[1], scene.HIP_Y_LIMIT, scene.KNEE_X_LIMITS[1]], N_LEGS)
    return np.radians(low + (high - low) * norm), norm


def drive_limits(actions: np.ndarray) -> np.ndarray:
    """The drives' maximum forces (n, 12), actuators' order: (s + 1) / 2 x 10000, an upper leg's
    strength for both its hip axes (one slerp drive), a lower leg's for its knee. The strength is
    not clipped: SetJointStrength uses the raw value (only the targets are clamped, by Lerp)."""
    s = (actions[:, 12:20] + 1.0) * 0.5 * scene.MAX_JOINT_FORCE
    return np.concatenate([s[:, :4], s[:, :4], s[:, 4:]], axis=1)


__all__ = ["ACTIONS", "ACTION_SIZE", "drive_limits", "joint_targets"]
