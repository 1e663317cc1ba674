"""What the Reacher environment accepts, checked: the academy's reset parameters, and the arms' action size
(the checks every scene shares, actions included, are `envkit.checks`).

Bad input gets one line naming the problem and the expected form, before anything is stepped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

ACTION_SIZE = 4
DEFAULT_RESET_PARAMETERS = {"goal_speed": 1.0, "goal_size": 5.0}


def checked_reset_parameters(config: Mapping[str, Any]) -> dict[str, float]:
    """The academy's reset parameters as numbers, or a one-line ValueError naming the key and what it takes."""
    checked = {}
    for key, value in config.items():
        if key not in DEFAULT_RESET_PARAMETERS:
            valid = ", ".join(DEFAULT_RESET_PARAMETERS)
            raise ValueError(f"unknown reset parameter {key!r}: the Reacher academy declares only {valid}")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"reset parameter {key!r} must be a number, got {value!r}") from None
        if not math.isfinite(number):
            raise ValueError(f"reset parameter {key!r} must be finite, got {value!r}")
        if key == "goal_size" and number <= 0:
            raise ValueError(f"reset parameter 'goal_size' must be positive (the goal's diameter), got {value!r}")
        checked[key] = number
    return checked


__all__ = ["ACTION_SIZE", "DEFAULT_RESET_PARAMETERS", "checked_reset_parameters"]
