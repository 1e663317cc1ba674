"""The pictures of a run: the reward plot and the value maps' animation (the run folder,
``ddpg.run_folder``, writes them to files)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ddpg.solved import SOLVE_SCORE, SOLVE_WINDOW, solved_at, trailing_average


def scores_figure(scores: np.ndarray, target: float | None = SOLVE_SCORE, window: int = SOLVE_WINDOW,
                  unit: str = "episode") -> Any:
    """Reward plot: per-episode mean over agents with the min-max band (or, one score an episode, that
    score: each agent-episode of the Crawler's), the trailing average, the target; ``unit`` names an episode."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    if len(scores):
        episodes = np.arange(1, len(scores) + 1)
        mean = scores.mean(axis=1)
        if scores.shape[1] > 1:
            ax.fill_between(episodes, scores.min(axis=1), scores.max(axis=1), alpha=0.25,
                            label="min-max over agents")
        ax.plot(episodes, mean, lw=1, label="mean over agents" if scores.shape[1] > 1 else f"score per {unit}")
        ax.plot(episodes, trailing_average(mean, window), lw=2,
                label=f"trailing {window}-{unit} average")
        solved = None if target is None else solved_at(mean, target, window)
        if solved is not None:
            ax.axvline(solved, color="green", ls=":", label=f"solved at {unit} {solved}")
    if target is not None:
        ax.axhline(target, color="red", ls="--", label=f"target {target:+g}")
    ax.set_xlabel(unit)
    ax.set_ylabel("score")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def encode_animation(frames: Sequence[str | os.PathLike[str]], stem: Path, fps: float = 4.0) -> Path:
    """The PNG ``frames`` as ``stem``.mp4, or ``stem``.gif where ffmpeg cannot run; its path."""
    import imageio.v2 as imageio

    images = [imageio.imread(f)[..., :3] for f in frames]
    encoded = stem.with_suffix(".mp4")
    try:
        imageio.mimwrite(encoded, images, format="FFMPEG", fps=fps, codec="libx264", quality=6,
                         pixelformat="yuv420p", macro_block_size=16)
    except (OSError, RuntimeError, ImportError) as exc:  # no ffmpeg binary: a GIF instead
        print(f"No MP4 ({exc}); writing a GIF")
        encoded = stem.with_suffix(".gif")
        imageio.mimwrite(encoded, images, format="GIF", duration=1000.0 / fps, loop=0)
    return encoded


__all__ = ["encode_animation", "scores_figure"]
