"""The run folder as a whole: whether ``--out`` can hold a run (``check_out_dir``), clearing an
old run for ``--force`` (``clear_run``), whether a run can be resumed (``resumable_record``),
and a complete save of a run's results (``write_run``: the checkpoints, the scores and the plot,
run.json last). Each file has its own module, which alone writes and reads it (``ddpg.run_folder``
lists them).
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
    STATE_FILE,
    TEMPORARY_MARK,
    VALUE_MAPS_DIR,
)
from ddpg.run_folder.record import RunRecord
from ddpg.run_folder.record_file import read_record
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


def resumable_record(run: str | os.PathLike[str]) -> RunRecord:
    """The record of a run that ``train.py --resume`` can continue; ValueError (FileNotFoundError
    for a folder without a run) saying why it cannot. A run whose process was killed before
    its first training state was saved has only its run.json: it starts again from episode 1
    with the recorded settings (``load_training_state`` tells the two apart). A run whose
    run.json records a save but whose training_state.pt is gone is refused: starting it again
    would overwrite what it saved."""
    try:
        record = read_record(run)
    except FileNotFoundError:
        if Path(run).is_dir() and any(Path(run).glob(f".*{TEMPORARY_MARK}*")):
            raise FileNotFoundError(f"{run} holds no run: the run that wrote into it stopped before it saved its "
                                    f"{RECORD_FILE}, so nothing is lost; start it again with --out {run}") from None
        raise
    missing = record.missing_for_resume()
    if missing:
        raise ValueError(f"{run} was not saved by train.py with its training state ({RECORD_FILE} lacks "
                         f"{', '.join(missing)})")
    if not (str(record.environment).startswith("reacher.") or record.env_id):
        raise ValueError("only runs on the built-in environment or a Gymnasium task can be resumed")
    # run.json is rewritten only after training_state.pt is in place, so a record that names a
    # save (or a finished run) without the file means the file went afterwards: starting again
    # from episode 1 would train over the run's checkpoints and scores.
    if (record.finished or (record.resumable_from_episode or 0) > 0) and not (Path(run) / STATE_FILE).is_file():
        what = "the finished run's final save" if record.finished else "a save"
        saved = record.resumable_from_episode if record.resumable_from_episode is not None else record.episodes_run
        raise ValueError(f"{run} has no {STATE_FILE}, though its {RECORD_FILE} records {what}, after episode {saved}: "
                         f"it cannot be continued without that file, and nothing was changed; put the file back, or "
                         f"train it again from episode 1 with its command ({RECORD_FILE}'s \"command\") and --force")
    return record


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


__all__ = ["check_out_dir", "clear_run", "resumable_record", "write_run"]
