"""What "solved" means, and the statistics of runs that may not solve.

A run is solved at the first episode where the trailing 100-episode average of the
per-episode mean score over the agents reaches 30 (the course's definition for Reacher; a
Gymnasium task's threshold comes from ``ddpg.tasks.TASKS`` or its spec instead).
"""

from __future__ import annotations

import numpy as np

from ddpg.tasks import REACHER_TARGET

SOLVE_SCORE = REACHER_TARGET  # the course's; UnityReacher-v0's spec carries it too
SOLVE_WINDOW = 100

# The schedule (train.py's defaults on Reacher, run by ddpg.loop): once an episode's mean score
# reaches GOOD_SCORE, the next episode makes GOOD_UPDATES updates per learning step instead of the
# config's ``learn_updates``: none, so learning pauses while the policy is good and resumes
# after an episode below it. In a run that solves at episode ~100 this saves most of the
# second half's updates.
GOOD_SCORE = 33.0
GOOD_UPDATES = 0


def trailing_average(values: np.ndarray, window: int = SOLVE_WINDOW) -> np.ndarray:
    """Mean of the last ``window`` values at each position (fewer at the start)."""
    values = np.asarray(values, dtype=np.float64)
    csum = np.concatenate(([0.0], np.cumsum(values)))
    idx = np.arange(1, len(values) + 1)
    lo = np.maximum(0, idx - window)
    return (csum[idx] - csum[lo]) / (idx - lo)


def solved_at(episode_means: np.ndarray, target: float = SOLVE_SCORE,
              window: int = SOLVE_WINDOW) -> int | None:
    """First 1-based episode E >= window whose mean over episodes E-window+1..E >= target.

    This is the project's "solved-at episode" (the course's "solved in 63 episodes" is
    E = 163). None if never reached.
    """
    means = np.asarray(episode_means, dtype=np.float64)
    if len(means) < window:
        return None
    hits = np.flatnonzero(trailing_average(means, window)[window - 1:] >= target)
    return int(hits[0]) + window if hits.size else None


def median_with_unsolved(values: list[float | None]) -> float | None:
    """Median over runs of a figure to solve (episode, steps, seconds), None for a run that
    did not solve: such a run ranks worse than every solved one, and the result is None
    when the median run did not solve."""
    ranked = sorted(values, key=lambda v: (v is None, v if v is not None else 0.0))
    middle = ranked[(len(ranked) - 1) // 2: len(ranked) // 2 + 1]
    if any(v is None for v in middle):
        return None
    return float(np.mean(middle))


__all__ = ["SOLVE_SCORE", "SOLVE_WINDOW", "median_with_unsolved", "solved_at", "trailing_average"]
