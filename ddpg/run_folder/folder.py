"""The run folder as a whole: whether ``--out`` can hold a run (``check_out_dir``), clearing an
old run for ``--force`` (``clear_run``), and a complete save of a run's results (``write_run``: the
checkpoints, the scores and the plot, run.json last). Taking a run back up is ``resume``'s. Each
file has its own module, which alone writes and reads it (``ddpg.run_folder`` lists them).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

from ddpg.run_folder.atomic import remove_leftovers, write_json
from ddpg.run_folder.checkpoints import save_checkpoints, write_checkpoints
from ddpg.run_folder.file_names import (
    ACTOR_FILE,
    CRITIC_FILE,
    PLOT_FILE,
    RECORD_FILE,
    RUN_FILES,
    SCORES_FILE,
    VALUE_MAPS_DIR,
)
from ddpg.run_folder.record import RunRecord
from ddpg.run_folder.score_files import CsvLines, plot_scores, write_scores
from ddpg_agent import Agent


def check_out_dir(out_dir: str | os.PathLike[str], allow_existing_run: bool) -> None:
    """Fail early (before any training) when ``out_dir`` cannot hold a run, or already holds
    one that ``allow_existing_run`` does not allow to replace. ValueError says what to do."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file; expected a folder (new or holding a run)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--out {out} cannot be created: {exc.strerror or exc}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise ValueError(f"--out {out} is not writable")
    left = remove_leftovers(out)
    if left:
        print(f"Removed {len(left)} temporary file(s) from {out} left by a run killed while saving "
              f"({', '.join(p.name for p in left)})")
    existing = [name for name in RUN_FILES if (out / name).exists()]
    if existing and not allow_existing_run:
        raise ValueError(f"--out {out} already holds a run ({', '.join(existing)}); pass --resume {out} "
                         "to continue it or --force to replace it")


def clear_run(out_dir: str | os.PathLike[str]) -> bool:
    """Remove the files of a run from ``out_dir`` (for --force), so that nothing of the old run
    passes for part of the new one; True when there was something to remove."""
    found = [Path(out_dir) / name for name in RUN_FILES if (Path(out_dir) / name).exists()]
    for path in found:
        path.unlink()
    frames = Path(out_dir) / VALUE_MAPS_DIR
    if frames.is_dir():
        for path in frames.glob("episode_*.png"):
            path.unlink()
        found.append(frames)
    return bool(found)


def write_run(out_dir: str | os.PathLike[str], agent: Agent, scores: np.ndarray,
              record: RunRecord, plot: bool = True,
              networks: tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]] | None = None,
              scores_lines: CsvLines | None = None) -> None:
    """Write the checkpoints (the agent's networks, or ``networks``: an actor's and a critic's
    state_dict), scores.csv, (with ``plot``) scores.png, and run.json last."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if networks is None:
        save_checkpoints(agent, out / ACTOR_FILE, out / CRITIC_FILE)
    else:
        write_checkpoints(*networks, out / ACTOR_FILE, out / CRITIC_FILE)
    write_scores(out / SCORES_FILE, scores, scores_lines)
    if plot:
        plot_scores(scores, out / PLOT_FILE, record.target_score, record.window,
                    "agent-episode" if record.own_episodes else "episode")
    write_json(out / RECORD_FILE, record.to_dict())


__all__ = ["check_out_dir", "clear_run", "write_run"]
