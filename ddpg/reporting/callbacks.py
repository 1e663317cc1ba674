"""What happens around the training loop (``ddpg.loop.train``), one callback a concern.

    Printer     the progress bar, a line per episode, the solved and interrupted messages
    MetricsLog  losses, mean Q, exploration and update rate per episode (ddpg.reporting.metrics),
                optionally to TensorBoard
    Saver       the run folder: its progress after every episode, everything every
                ``save_every`` episodes and at the end, and at a stop the run as it stood
                after its last complete episode, so a resume loses nothing (ddpg.run_folder lists the files)

``standard(...)`` gives what train.py uses; the value maps of a 2-D task are
``ddpg.reporting.value_maps.Recorder``, a callback too. Their order is the order they run in.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ddpg.command_line import reproducible
from ddpg.command_line.device import describe
from ddpg.loop import Callback, Episode, Run
from ddpg.reporting.metrics import Metrics
from ddpg.run_folder import agent_state
from ddpg.run_folder.atomic import write_json
from ddpg.run_folder.file_names import RECORD_FILE, SCORES_FILE
from ddpg.run_folder.folder import write_run
from ddpg.run_folder.record import RunRecord
from ddpg.run_folder.record_file import git_commit, versions
from ddpg.run_folder.run_state import training_state, write_training_state
from ddpg.run_folder.score_files import CsvLines, write_metrics, write_scores
from ddpg.run_folder.snapshot import EpisodeSnapshot
from ddpg.signals import Stopped, signal_number
from ddpg.variants import variants_of


class Printer(Callback):
    """A tqdm bar and (unless ``quiet``) a line per episode; ``log`` replaces tqdm.write. The bar
    shows on a terminal or in a notebook only: in a log file its redraws would be noise."""

    def __init__(self, quiet: bool = False, progress: bool = True, log: Callable[[str], None] | None = None) -> None:
        self.quiet, self.progress, self._log = quiet, progress, log
        self.bar: Any = None

    def say(self, message: str) -> None:
        if self._log is not None:
            self._log(message)
        else:
            from tqdm.auto import tqdm

            tqdm.write(message)

    def on_start(self, run: Run) -> None:
        from tqdm.auto import tqdm

        unit = "round" if run.settings.own_episodes else "ep"
        self.bar = tqdm(total=run.settings.episodes, initial=run.done, disable=None if self.progress else True, unit=unit,
                        dynamic_ncols=True, leave=False)

    def on_episode(self, run: Run, episode: Episode) -> None:
        score, window = episode.score, run.settings.window
        self.bar.update(1)
        if run.settings.own_episodes:
            self._round(run, episode)
            return
        self.bar.set_postfix(mean=f"{score.mean():.2f}", avg=f"{episode.average:.2f}")
        if not self.quiet:
            self.say(f"Episode {episode.number:4d}  min {score.min():6.2f}  max {score.max():6.2f}  "
                     f"mean {score.mean():6.2f}  avg{window} {episode.average:6.2f}  "
                     f"time {episode.seconds:5.2f}s  total {run.wall():7.1f}s")
        if run.solved_at == episode.number:
            self.say(f"Solved at episode {episode.number}: average {episode.average:.2f} over episodes "
                     f"{episode.number - window + 1}-{episode.number}, {run.solve_time:.1f}s")

    def _round(self, run: Run, episode: Episode) -> None:
        """A round of own_episodes: the agent-episodes done, this round's and the trailing window's mean."""
        score, window, done = episode.score, run.settings.window, len(run.scores)
        self.bar.set_postfix(episodes=done, avg=f"{episode.average:.2f}")
        if not self.quiet:
            ended = (f"{len(score):3d} ended: mean {score.mean():7.2f}  min {score.min():7.2f}  max {score.max():7.2f}"
                     if len(score) else "  0 ended" + " " * 45)
            self.say(f"Round {episode.number:4d}  episodes {done:6d}  {ended}  avg{window} {episode.average:7.2f}  "
                     f"steps {run.env_steps:,}  time {episode.seconds:5.2f}s  total {run.wall():7.1f}s")
        if run.solved_at is not None and done - len(score) < run.solved_at <= done:
            self.say(f"Solved at agent-episode {run.solved_at} (round {episode.number}): average of at least "
                     f"{run.settings.target_score:g} over agent-episodes {run.solved_at - window + 1}-{run.solved_at}, "
                     f"{run.solve_time:.1f}s")

    def on_end(self, run: Run) -> None:
        unit = "round" if run.settings.own_episodes else "episode"
        if run.stop is not None:
            self.say(f"Interrupted ({run.stop if isinstance(run.stop, Stopped) else 'SIGINT'}): the {run.done} "
                     f"complete {unit}s are kept; the {unit} in progress is dropped.")
        elif run.steps_spent:
            spent = f"Step budget spent: {run.env_steps:,} of {run.settings.max_env_steps:,} environment steps"
            if run.settings.own_episodes:
                self.say(f"{spent}, in round {run.done}: the agents' episodes in progress are kept to go on from.")
            else:
                self.say(f"{spent}; the unfinished episode {len(run.scores) + 1} ({run.dropped_steps} steps) is not counted."
                         if run.dropped_steps else f"{spent}, at the end of episode {len(run.scores)}.")
        self.bar.close()
        if run.scores:
            window = run.settings.window
            recent = run.scores_array()[-window:]
            if run.settings.own_episodes:  # one score an agent-episode
                self.say(f"Last {len(recent)} agent-episodes of {len(run.scores)}: mean {recent.mean():.2f}, "
                         f"std {recent.std():.2f}, min {recent.min():.2f}, max {recent.max():.2f}")
                return
            self.say(f"{window}-episode average per agent (last {min(window, len(run.scores))} episodes):")
            self.say("  " + "  ".join(f"{i}:{v:.2f}" for i, v in enumerate(recent.mean(axis=0))))


class MetricsLog(Callback):
    """``ddpg.reporting.metrics.Metrics`` fed every episode (``rows`` go to metrics.csv with the run)."""

    def __init__(self, seed: int, tensorboard_dir: str | os.PathLike[str] | None = None,
                 earlier: list[dict[str, Any]] | None = None) -> None:
        self.seed, self.tensorboard_dir, self.earlier = seed, tensorboard_dir, earlier or []
        self.metrics: Metrics | None = None

    @property
    def rows(self) -> list[dict[str, Any]]:
        return [] if self.metrics is None else self.metrics.rows

    def on_start(self, run: Run) -> None:
        self.metrics = Metrics(run.agent, self.seed, self.tensorboard_dir, self.earlier[:run.done])

    def on_episode(self, run: Run, episode: Episode) -> None:
        assert self.metrics is not None
        self.metrics.episode(episode.number, episode.score, episode.average, episode.seconds, run.wall(),
                             run.env_steps)

    def on_end(self, run: Run) -> None:
        if self.metrics is not None:
            self.metrics.close()


class Saver(Callback):
    """The run folder (``ddpg.run_folder``), so that nothing finished is lost whatever stops the run:

    - at the start, run.json: from then on the folder is a run that ``--resume`` accepts;
    - after every episode, what is cheap to write: scores.csv, metrics.csv and run.json;
    - every ``save_every`` episodes and at the end, everything: the training state (with
      ``save_buffer`` the replay buffer too), the checkpoints and the plot;
    - at a stop (Ctrl-C, SIGTERM), the run as it stood after its last complete episode
      (``ddpg.run_folder.snapshot``), replay buffer included, so the resume is exact and loses nothing.

    Every file is written atomically; a process killed outright (kill -9, a power cut) leaves
    the last complete save, which ``--resume`` continues from, saying what was lost.

    run.json's ``save_buffer`` is what the last complete save did (``saved_buffer`` before this
    run's first: a resumed run's record), not what was asked: a save that fails on the buffer
    (a full disk) leaves it as it was, so a later resume does not try the buffer again unasked.
    """

    def __init__(self, out_dir: str | os.PathLike[str], seed: int | None = None, save_every: int = 10,
                 save_buffer: bool = False, command: str | None = None, metrics: MetricsLog | None = None,
                 record: dict[str, Any] | None = None, log: Callable[[str], None] = print,
                 saved_buffer: bool | None = None) -> None:
        self.out_dir, self.seed, self.save_every, self.save_buffer = out_dir, seed, save_every, save_buffer
        self.recorded_buffer = save_buffer if saved_buffer is None else saved_buffer
        self.command, self.metrics, self.extra, self.log = command, metrics, record or {}, log
        self.saved_episodes: int | None = None
        self.provenance: dict[str, Any] = {}
        self.pinned = False  # train.py --reproducible, asked at the start
        self.snapshot: EpisodeSnapshot | None = None
        self.lines = {"scores": CsvLines(), "metrics": CsvLines()}  # rewritten every episode

    def on_start(self, run: Run) -> None:
        # Fixed for the run: asked once (git runs in a subprocess), not at every save.
        self.provenance = {"versions": versions(), "machine": reproducible.machine(),
                           "git_commit": git_commit()}
        self.pinned = reproducible.active()
        self.saved_episodes = run.resumed_episodes
        self.snapshot = EpisodeSnapshot(run.n_agents, run.settings.max_t, run.agent.config.n_step)
        self.snapshot.take(run.agent, run.loop_state(), run.env_state_at_start)
        Path(self.out_dir).mkdir(parents=True, exist_ok=True)
        write_json(Path(self.out_dir) / RECORD_FILE, self.record(run, run.scores_array(), False).to_dict())

    def on_episode(self, run: Run, episode: Episode) -> None:
        if not run.stopping and episode.number % self.save_every == 0 and episode.number < run.settings.episodes:
            self.save(run, final=False)
        else:
            self.write_progress(run)
        self._take_snapshot(run)

    def on_end(self, run: Run) -> None:
        if run.stop is None:
            self.save(run, final=True)
            self.log(f"Wrote the run (checkpoints, scores.csv, metrics.csv, run.json, scores.png, training state) "
                     f"to {self.out_dir}")
            return
        assert self.snapshot is not None and self.snapshot.state is not None
        state, rows = self.snapshot.for_saving(run.agent)
        self.save(run, final=True, saved=(state, rows))
        done, unit = run.done, "round" if run.settings.own_episodes else "episode"
        how = ("with its replay buffer: a resume continues exactly" if rows is not None
               else "without its replay buffer: a resume refills it, so it is not exact")
        self.log(f"Saved the run as it stood after {unit} {done}, {how} from {unit} {done + 1}: "
                 f"python train.py --resume {self.out_dir}")

    def save(self, run: Run, final: bool, saved: tuple[dict[str, Any], dict[str, Any] | None] | None = None) -> None:
        """Everything: metrics first, then the training state, then the checkpoints, scores and
        plot, run.json last; so the training state is never ahead of metrics.csv. ``saved``: the
        training state and buffer rows to write (at a stop, the snapshot's), else the run's now;
        the checkpoints and the update count are that state's."""
        self._write_metrics()
        state, rows = saved or training_state(run.agent, run.loop_state(), getattr(run.env, "random_state", None),
                                              self.save_buffer)
        write_training_state(self.out_dir, state, rows)
        self.saved_episodes, self.recorded_buffer = run.done, self.save_buffer
        scores, networks = run.scores_array(), state["networks"]
        write_run(self.out_dir, run.agent, scores, self.record(run, scores, final, state["agent"]["n_updates"]),
                  networks=(networks["actor_local"], networks["critic_local"]), scores_lines=self.lines["scores"])

    def write_progress(self, run: Run) -> None:
        """What is cheap enough for every episode (benchmarks/bench_saving.py): the scores and
        metrics so far, and run.json, which says up to which episode a resume would continue."""
        self._write_metrics()
        scores = run.scores_array()
        write_scores(Path(self.out_dir) / SCORES_FILE, scores, self.lines["scores"])
        write_json(Path(self.out_dir) / RECORD_FILE, self.record(run, scores, False).to_dict())

    def _write_metrics(self) -> None:
        write_metrics(self.out_dir, self.metrics.rows if self.metrics is not None else [], self.lines["metrics"])

    def _take_snapshot(self, run: Run) -> None:
        assert self.snapshot is not None
        self.snapshot.take(run.agent, run.loop_state(), getattr(run.env, "random_state", None))

    def record(self, run: Run, scores: np.ndarray, final: bool, updates: int | None = None) -> RunRecord:
        agent, settings, wall = run.agent, run.settings, run.wall()
        return RunRecord(
            config=agent.config.to_dict(), seed=self.seed, learner=agent_state.learner(agent), variants=variants_of(agent.config),
            threads=agent_state.threads(agent), device=describe(agent.device), reproducible=self.pinned,
            schedule={"good_score": settings.good_score, "good_updates": settings.good_updates},
            reward_scale=settings.reward_scale, state_size=agent.state_size, action_size=agent.action_size,
            n_agents=run.n_agents, episodes_run=run.done, max_episodes=settings.episodes, max_t=settings.max_t,
            target_score=settings.target_score, window=settings.window, stop_when_solved=settings.stop_when_solved,
            max_env_steps=settings.max_env_steps,
            step_budget_spent=None if settings.max_env_steps is None else run.steps_spent,
            solved_at_episode=run.solved_at,
            time_to_solve_s=None if run.solve_time is None else round(run.solve_time, 2),
            env_steps=run.env_steps, env_steps_to_solve=run.solve_steps, wall_time_s=round(wall, 2),
            final_average=float(scores.mean(axis=1)[-settings.window:].mean()) if len(scores) else None,
            learner_updates=agent.n_updates if updates is None else updates, finished=final and run.stop is None,
            interrupted=run.stop is not None,
            signal=None if run.stop is None else signal_number(run.stop), resumable_from_episode=self.saved_episodes,
            save_buffer=self.recorded_buffer, save_every=self.save_every,
            environment=type(run.env).__module__ + "." + type(run.env).__name__,
            own_episodes=True if settings.own_episodes else None,
            agent_episodes=len(run.scores) if settings.own_episodes else None,
            **self.provenance, command=self.command, platform=platform.platform(), **self.extra)


def standard(out_dir: str | os.PathLike[str] | None = None, seed: int = 0, quiet: bool = False,
             progress: bool = True, log: Callable[[str], None] | None = None,
             tensorboard_dir: str | os.PathLike[str] | None = None, save_every: int = 10,
             save_buffer: bool = False, command: str | None = None, record: dict[str, Any] | None = None,
             earlier_metrics: list[dict[str, Any]] | None = None, saved_buffer: bool | None = None) -> list[Callback]:
    """train.py's callbacks: printing, then (with a run folder or TensorBoard) metrics, then
    (with a run folder) saving; ``record`` adds fields to run.json (``RunRecord``'s names). A
    resumed run's ``earlier_metrics`` (the rows of its metrics.csv, read with the rest of its save:
    ``ddpg.run_folder.resume``) go on in the new one; ``saved_buffer``: whether its last save had the
    buffer (``Saver``)."""
    printer = Printer(quiet, progress, log)
    callbacks: list[Callback] = [printer]
    metrics = None
    if out_dir is not None or tensorboard_dir is not None:
        metrics = MetricsLog(seed, tensorboard_dir, earlier_metrics)
        callbacks.insert(0, metrics)
    if out_dir is not None:
        callbacks.append(Saver(out_dir, seed, save_every, save_buffer, command, metrics, record, printer.say,
                               saved_buffer))
    return callbacks


__all__ = ["MetricsLog", "Printer", "Saver", "standard"]
