"""What every scene's constructor and `step` check, in one place so that one mistake gets one message
in any scene: a count that must be a positive integer, the seed, and the actions.

Bad input gets one line naming the problem and the expected form, before anything is built or stepped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np


def checked_positive_int(value: object, name: str, meaning: str) -> int:
    """``value`` as a positive int, or a one-line ValueError naming ``name`` (an argument or an environment
    variable) and what it counts (``meaning``): the scenes' num_agents, threads and substeps.
    A bool is refused though Python counts it an int: ``num_agents=True`` is a slip, not one agent."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer ({meaning}), got {value!r}")
    return int(value)


def checked_seed(seed: object) -> int:
    """``seed`` as an int, or a one-line ValueError: a float or a string would seed NumPy differently
    from what the caller meant, or fail deep inside it."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    return int(seed)


def checked_actions(vector_action: Any, n: int, action_size: int, brain: str) -> np.ndarray:
    """The actions of ``n`` agents as an (n, action_size) float64 array: what unityagents' ``step`` accepts (an
    array, a flat sequence, ``{brain: actions}``, None for zeros), or a one-line ValueError naming the expected
    form. Every scene passes its own size and brain, so all refuse the same input alike (a transposed array,
    complex numbers, another brain's or a wrong value under the brain's name)."""
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


__all__ = ["checked_actions", "checked_positive_int", "checked_seed"]
