"""What the Reacher environment accepts, checked: the academy's reset parameters and the arms' actions.

Bad input gets one line naming the problem and the expected form, before anything is stepped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from reacher.brain import BRAIN_NAME

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

def checked_actions(vector_action: Any, n: int, action_size: int = ACTION_SIZE, brain: str = BRAIN_NAME) -> np.ndarray:
    """The actions of ``n`` agents as an (n, action_size) float64 array: what unityagents' ``step`` accepts (an
    array, a flat sequence, ``{brain: actions}``, None for zeros), or a one-line ValueError naming the expected
    form. The Reacher's arms by default; the Crawler passes its own size and brain, so both refuse the same input."""
    if type(vector_action) is np.ndarray and vector_action.shape == (n, action_size) and vector_action.dtype.kind == "f":
        actions = vector_action.astype(np.float64)  # the loop's case, checked in fewer calls; a copy, as below
        if np.isfinite(actions).all():
            return actions
    expected = f"an ({n}, {action_size}) array, a flat sequence of {n * action_size} numbers, or {{'{brain}': actions}}"
    if isinstance(vector_action, Mapping):
        unknown = set(vector_action) - {brain}
        if unknown:
            raise ValueError(f"actions given for unknown brain(s) {sorted(map(str, unknown))}: the only brain is {brain!r}")
        vector_action = vector_action.get(brain)
    if vector_action is None:  # the original sends zeros for a brain given no action
        return np.zeros((n, action_size))
    try:
        raw = np.asarray(vector_action)
    except (TypeError, ValueError):  # ragged nesting
        raise ValueError(f"actions must be numbers: expected {expected}") from None
    if raw.dtype.kind not in "biuf":  # complex (its imaginary part would be dropped), object, text
        raise ValueError(f"actions must be real numbers, got an array of dtype {raw.dtype}: expected {expected}")
    actions = raw.astype(np.float64)
    if actions.size != n * action_size or (actions.ndim == 2 and actions.shape != (n, action_size)) or actions.ndim > 2:
        raise ValueError(f"actions have shape {actions.shape} ({actions.size} values): expected {expected}")
    actions = actions.reshape(n, action_size)
    if not np.isfinite(actions).all():
        bad = np.argwhere(~np.isfinite(actions))[0]
        value = actions[tuple(bad)]
        raise ValueError(f"actions must be finite: agent {bad[0]}, action {bad[1]} is {value}; expected values in "
                         "[-1, 1], not NaN or infinity")
    return actions


__all__ = ["ACTION_SIZE", "DEFAULT_RESET_PARAMETERS", "checked_actions", "checked_reset_parameters"]
