"""Taking a run back up (``train.py --resume``): whether it can be (``resumable_record``), and its
last complete save loaded into the agent and the environment (``restore_run``), with what the run
continues from and the line that says so.

What a save holds is ``run_state``'s (training_state.pt, the replay buffer) and ``agent_state``'s;
here the folder's files are read together, so that everything a resumed run goes on from (the
loop's state, the metrics' rows, whether the continuation is exact) is known, and can refuse the
resume, before anything is said or written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple

from ddpg.run_folder.file_names import RECORD_FILE, STATE_FILE, TEMPORARY_MARK
from ddpg.run_folder.record import RunRecord
from ddpg.run_folder.record_file import read_record
from ddpg.run_folder.run_state import load_training_state
from ddpg.run_folder.score_files import episodes_written, read_metrics
from ddpg_agent import Agent


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


class NotResumable(ValueError):
    """A training state that does not fit the run's agent (one line, naming both): the resume is
    refused before anything is said or written."""


class Restored(NamedTuple):
    """What a resumed run goes on from: the loop's state (``ddpg.loop.Run.loop_state``; its scores
    alone when the run stopped before its first save), whether the continuation is exact, the line
    that says where the run continues and what a killed process lost (printed by the caller once
    nothing can refuse the resume), and the rows of its metrics.csv."""

    loop: dict[str, Any]
    exact: bool
    message: str
    metrics: list[dict[str, float | None]]


def restore_run(run: str | os.PathLike[str], agent: Agent, env: Any, own_episodes: bool) -> Restored:
    """Load the run's last complete save into ``agent`` and ``env`` (its random generators), so the
    run goes on as if it had never stopped; what was written after that save (``own_episodes``: the
    run counts rounds of agent-episodes) is what the line says is lost. ``NotResumable`` for a
    training state that does not fit the agent."""
    written = episodes_written(run)
    metrics = read_metrics(run)
    try:
        saved = load_training_state(run, agent)
    except FileNotFoundError:  # killed before its first save (resumable_record): the settings are all there is
        saved = None
    except ValueError as exc:
        raise NotResumable(str(exc)) from None
    if saved is None:
        return Restored({"scores": []}, False, (
            f"Resuming {run}: it has no training state (the run stopped before its first save), so it starts "
            f"again from episode 1 with its recorded settings" + (f"; its {written} episode(s) written are lost"
                                                                   if written else "")), metrics)
    env.random_state = saved["environment"]
    resume, exact = saved["loop"], saved["exact"]
    done = len(resume["scores"])  # episodes, or agent-episodes (scores.csv's rows either way)
    kind = "agent-episode" if own_episodes else "episode"
    lost = (f"{kind} {written}" if written == done + 1 else f"{kind}s {done + 1}-{written}") \
        if written > done else ""
    where = f"round {resume['rounds'] + 1}" if own_episodes else f"episode {done + 1}"
    return Restored(resume, exact, (
        f"Resuming {run} from {where}, "
        + ("exactly (the replay buffer was saved)" if exact else
           "not exactly: the replay buffer was not saved with this state (--save-buffer), so it refills")
        + (f"; {lost}, run after the last complete save, {'is' if written == done + 1 else 'are'} lost and run again"
           if lost else "")), metrics)


__all__ = ["NotResumable", "Restored", "restore_run", "resumable_record"]
