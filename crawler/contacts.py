"""Which parts of a crawler touch the ground, from its sensors: what GroundContact reports, and
which contacts end an episode. The ground is a plane, so the distance of a part's collider to it
is exact: a capsule's lowest point is its centre less its half-length along its own y axis and
its radius (the body is a sphere)."""

from __future__ import annotations

import numpy as np

from crawler import scene
from crawler.mjcf import BODY_RADIUS, LEG_RADIUS, LOWER_CENTRE, LOWER_HALF, PARTS, SENSOR_SLICES, UPPER_HALF

N_PARTS = len(PARTS)
_RADIUS = np.array([BODY_RADIUS] + [LEG_RADIUS] * 8)  # the parts' shapes, PARTS' order
_HALF = np.array([0.0] + [UPPER_HALF, LOWER_HALF] * 4)  # half the cylinder (the body is a sphere)
_CENTRE = np.array([0.0] + [0.0, LOWER_CENTRE] * 4)  # the collider's centre along the part's own y
ENDS = np.array([True, True, False, True, False, True, False, True, False])  # body and upper legs: -1, done
_POS, _YAXIS = SENSOR_SLICES["pos"], SENSOR_SLICES["yaxis"]


def touching_in(rows: np.ndarray) -> np.ndarray:
    """Which parts touch the ground in sensor rows (..., SENSOR_SIZE): within the sum of the two
    shapes' contact offsets of the platform's top, where PhysX makes contacts and GroundContact
    hears of them (the ground is a plane, so the distance is exact)."""
    shape = (*rows.shape[:-1], N_PARTS, 3)
    axis_y = rows[..., _YAXIS].reshape(shape)[..., 1]  # each part's own y axis (the capsules' length), world y
    centre_y = rows[..., _POS].reshape(shape)[..., 1] + axis_y * _CENTRE
    lowest = centre_y - np.abs(axis_y) * _HALF - _RADIUS
    return np.less_equal(lowest - scene.GROUND_TOP, scene.CONTACT_DISTANCE)


__all__ = ["ENDS", "N_PARTS", "touching_in"]
