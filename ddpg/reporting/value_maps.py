"""What the critic and the actor believe, drawn over a 2-D observation space (and written into the
run folder: value_maps/, value_map.png and the animation are this module's files).

For a task whose observation has two numbers (MountainCarContinuous-v0: position and
velocity) every state is a point of a plane, so the whole of Q(s, mu(s)) and mu(s) fits in
two heatmaps. Drawn every few episodes while training (``train.py --animate``), they show
the critic discovering the goal and the actor learning to swing: in MountainCar the value
rises first near the goal, then spreads back along the spiral the car must follow, and
the policy splits the plane into "push left" and "push right" regions along that spiral.

    fig = draw(agent, grid, trajectory, title)     # a matplotlib Figure, two panels

``Grid`` holds the plane in the task's own units and how to map it into what the agent
sees (``GymEnvironment`` may scale observations to [-1, 1]).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ddpg.loop import Callback, Episode, Run
from ddpg.run_folder import plots
from ddpg.run_folder.atomic import atomic_write
from ddpg.run_folder.file_names import ANIMATION_STEM, VALUE_MAP_FILE, VALUE_MAPS_DIR

GRID_POINTS = 101  # per axis: 10,201 states, one forward pass of each network


@dataclass(frozen=True)
class Grid:
    """A rectangle of the observation plane in the task's units, and the map from those
    units to the agent's inputs."""

    low: tuple[float, float]
    high: tuple[float, float]
    labels: tuple[str, str] = ("observation[0]", "observation[1]")
    to_agent: Callable[[np.ndarray], np.ndarray] = lambda obs: obs
    action_label: str = "action[0]"
    points: int = GRID_POINTS

    def axes(self) -> tuple[np.ndarray, np.ndarray]:
        return (np.linspace(self.low[0], self.high[0], self.points),
                np.linspace(self.low[1], self.high[1], self.points))


def grid_for(env: Any, labels: Sequence[str] | None = None, margin: float = 0.05,
             seen: np.ndarray | None = None) -> Grid:
    """The grid of a ``GymEnvironment`` with a 2-D observation: its Box bounds, or where a
    bound is infinite, the range of ``seen`` observations (task units) widened by ``margin``."""
    space = env.envs.single_observation_space
    if int(np.prod(space.shape)) != 2:
        raise ValueError(f"{env.env_id} has a {space.shape} observation; the maps need exactly 2 numbers")
    low, high = np.array(space.low, dtype=np.float64).ravel(), np.array(space.high, dtype=np.float64).ravel()
    for i in range(2):
        if not (np.isfinite(low[i]) and np.isfinite(high[i])):
            if seen is None or not len(seen):
                raise ValueError(f"{env.env_id}'s observation[{i}] is unbounded; pass observations seen")
            lo, hi = float(np.min(seen[:, i])), float(np.max(seen[:, i]))
            pad = margin * max(hi - lo, 1e-6)
            low[i], high[i] = lo - pad, hi + pad
    return Grid(low=(low[0], low[1]), high=(high[0], high[1]),
                labels=tuple(labels) if labels else ("observation[0]", "observation[1]"),  # type: ignore[arg-type]
                to_agent=env.observation_to_agent)


def evaluate_grid(agent: Any, grid: Grid) -> tuple[np.ndarray, np.ndarray]:
    """Q(s, mu(s)) and mu(s)[0] on the grid, each (points, points) indexed [y, x]."""
    xs, ys = grid.axes()
    gx, gy = np.meshgrid(xs, ys)
    states = grid.to_agent(np.column_stack([gx.ravel(), gy.ravel()]))
    with torch.no_grad():
        s = torch.as_tensor(states, dtype=torch.float32, device=next(agent.actor_local.parameters()).device)
        mu = agent.actor_local(s)
        q = agent.critic_local(s, mu).cpu()
        mu = mu.cpu()
    shape = (grid.points, grid.points)
    return q.numpy().reshape(shape), mu[:, 0].numpy().reshape(shape)


def draw(agent: Any, grid: Grid, trajectory: np.ndarray | None = None, title: str = "") -> Any:
    """A figure with Q(s, mu(s)) (left) and mu(s) (right) over the grid, the episode's
    ``trajectory`` (task units, (T, 2)) drawn on both."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    q, mu = evaluate_grid(agent, grid)
    extent = (grid.low[0], grid.high[0], grid.low[1], grid.high[1])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    panels = ((axes[0], q, "Q(s, mu(s))", "viridis", None),
              (axes[1], mu, f"mu(s): {grid.action_label}", "coolwarm", (-1.0, 1.0)))
    for ax, values, name, cmap, limits in panels:
        vmin, vmax = limits if limits else (float(values.min()), float(values.max()))
        image = ax.imshow(values, origin="lower", extent=extent, aspect="auto", cmap=cmap, vmin=vmin, vmax=vmax)
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.03)
        if trajectory is not None and len(trajectory):
            ax.plot(trajectory[:, 0], trajectory[:, 1], color="black", lw=1.2)
            ax.plot(trajectory[0, 0], trajectory[0, 1], "o", color="white", mec="black", ms=6, label="start")
            ax.plot(trajectory[-1, 0], trajectory[-1, 1], "X", color="white", mec="black", ms=8, label="end")
        ax.set_xlim(extent[0], extent[1])
        ax.set_ylim(extent[2], extent[3])
        ax.set_xlabel(grid.labels[0])
        ax.set_ylabel(grid.labels[1])
        ax.set_title(name)
    axes[1].legend(loc="upper left", fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def figure_to_rgb(fig: Any) -> np.ndarray:
    """The figure's pixels as an (H, W, 3) uint8 array (a frame of the animation)."""
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()


def write_value_map(out_dir: str | os.PathLike[str], fig: Any, episode: int | None = None) -> Path:
    """Save a value-map figure: the frame of ``episode`` into value_maps/, or (no episode) the
    final picture value_map.png. Returns the path."""
    if episode is None:
        path = Path(out_dir) / VALUE_MAP_FILE
    else:
        (Path(out_dir) / VALUE_MAPS_DIR).mkdir(parents=True, exist_ok=True)
        path = Path(out_dir) / VALUE_MAPS_DIR / f"episode_{episode:05d}.png"
    atomic_write(path, lambda fh: fig.savefig(fh, format="png", dpi=80))
    return path


def write_animation(out_dir: str | os.PathLike[str], fps: float = 4.0) -> Path | None:
    """Assemble value_maps/episode_*.png, in episode order, into value_maps.mp4 (a GIF where
    ffmpeg cannot run; ``ddpg.run_folder.plots.encode_animation``); None when there are no frames."""
    import tempfile

    frames = sorted((Path(out_dir) / VALUE_MAPS_DIR).glob("episode_*.png"))
    if not frames:
        return None
    with tempfile.TemporaryDirectory() as tmp:  # ffmpeg wants a file name: encode beside, then move in
        encoded = plots.encode_animation(frames, Path(tmp) / ANIMATION_STEM, fps)
        path = Path(out_dir) / encoded.name
        atomic_write(path, lambda fh: fh.write(encoded.read_bytes()))
    return path


class Recorder(Callback):
    """A training callback (``ddpg.loop.train(..., callbacks=[Recorder(env, agent, run_dir)])``):
    the maps of episode 1 and of every ``every``-th episode into the run folder, and at the
    end the last episode's maps (value_map.png) and the animation of them all, whose path is
    then ``animation`` (``write_value_map``, ``write_animation``)."""

    wants_trajectory = True

    def __init__(self, env: Any, agent: Any, run_dir: str | os.PathLike[str], every: int = 5) -> None:
        from ddpg.tasks import task_for

        task = task_for(env.env_id)
        self.env, self.agent, self.run_dir, self.every = env, agent, run_dir, every
        self.grid = grid_for(env, task.observation_labels or None)
        if task.action_labels:
            self.grid = dataclasses.replace(self.grid, action_label=task.action_labels[0])
        self.last: tuple[int, np.ndarray, float] | None = None
        self.animation: Path | None = None

    def _draw(self, episode: int, trajectory: np.ndarray, score: float) -> Any:
        title = f"{self.env.env_id}, episode {episode}: return {score:.1f}"
        return draw(self.agent, self.grid, self.env.observation_from_agent(trajectory), title)

    def on_episode(self, run: Run, episode: Episode) -> None:
        assert episode.trajectory is not None
        self.last = (episode.number, episode.trajectory, float(episode.score[0]))
        if episode.number == 1 or episode.number % self.every == 0:
            self._write(self._draw(*self.last), episode.number)

    def on_end(self, run: Run) -> None:
        self.animation = self.finish()

    def _write(self, fig: Any, *episodes: int | None) -> None:
        import matplotlib.pyplot as plt

        for episode in episodes:
            write_value_map(self.run_dir, fig, episode)
        plt.close(fig)

    def finish(self) -> Path | None:
        """Write the last episode's maps (also the animation's last frame) and the
        animation; returns the animation's path (None before any episode)."""
        if self.last is None:
            return None
        self._write(self._draw(*self.last), self.last[0], None)
        return write_animation(self.run_dir)


__all__ = ["GRID_POINTS", "Grid", "Recorder", "draw", "evaluate_grid", "figure_to_rgb", "grid_for", "write_animation",
           "write_value_map"]
