"""What keeping a run safe costs: the per-episode work of the run folder, and the saves.

Usage: python -m benchmarks.bench_saving [--repeats 21] [--json benchmarks/results/saving/bench_saving.json]

train.py's ``Saver`` (ddpg/reporting/callbacks.py) does, after every episode, what is cheap enough to do
that often, and the rest every --save-every episodes. This prints the median cost of each
part for the default 20-arm agent at its worst case (a full replay buffer of one million
transitions, 300 episodes of scores and metrics), and compares the per-episode part with the
mean episode of the committed run (checkpoint_run.json: its wall time over its episodes):

- the snapshot (``ddpg.run_folder.snapshot``): the agent's small state and the buffer rows the next
  episode may overwrite, copied so that a Ctrl-C saves the run as of the last complete episode;
- the progress files: scores.csv, metrics.csv and run.json;
- the checkpoints alone (not written every episode: this says what that would add);
- a periodic save without the buffer (training state, checkpoints, plot, the progress files);
- the save at a stop: the snapshot's training state and the whole buffer (about 300 MB).
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch

from ddpg.agents import make_agent
from ddpg.loop import LoopSettings, Run
from ddpg.reporting import callbacks
from ddpg.reporting.metrics import COLUMNS
from ddpg.run_folder.atomic import write_json
from ddpg.run_folder.checkpoints import save_checkpoints
from ddpg.run_folder.file_names import ACTOR_FILE, BUFFER_FILE, CRITIC_FILE
from ddpg.run_folder.record_file import read_record
from ddpg.run_folder.run_state import write_training_state
from ddpg.run_folder.snapshot import EpisodeSnapshot
from ddpg.signals import StopSignals
from ddpg_agent import DDPGConfig

ROOT = Path(__file__).resolve().parent.parent
EPISODES = 300  # scores and metrics rows at the end of a 300-episode budget
ARMS = 20


def median_ms(action: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return 1000.0 * statistics.median(times)


def worst_case_run(out: Path) -> tuple[Run, callbacks.Saver]:
    """A Run of the default agent with a full buffer and EPISODES episodes, and its Saver."""
    torch.set_num_threads(1)
    agent = make_agent("auto", (33, 4, 0), DDPGConfig())
    memory, rng = agent.memory, np.random.default_rng(0)
    memory.data.copy_(torch.from_numpy(rng.standard_normal(memory.data.shape, dtype=np.float32)))
    memory.pos, memory.size = 0, memory.capacity
    scores = [rng.uniform(0, 40, ARMS) for _ in range(EPISODES)]
    run = Run(LoopSettings(episodes=EPISODES + 1), agent, SimpleNamespace(random_state=None), ARMS, StopSignals(),
              scores=scores)
    rows = [{name: (i + 1 if name == "episode" else float(rng.uniform())) for name, _ in COLUMNS} for i in range(EPISODES)]
    saver = callbacks.Saver(out, seed=0, metrics=SimpleNamespace(rows=rows), log=lambda _: None)  # type: ignore[arg-type]
    saver.on_start(run)
    return run, saver


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21, help="timings per figure (the stop's save: a third)")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    out = Path(tempfile.mkdtemp(prefix="bench_saving_"))
    try:
        run, saver = worst_case_run(out)
        snapshot = EpisodeSnapshot(ARMS, run.settings.max_t, run.agent.config.n_step)
        figures = {
            "snapshot_ms": median_ms(lambda: snapshot.take(run.agent, run.loop_state(), None), args.repeats),
            "progress_files_ms": median_ms(lambda: saver.write_progress(run), args.repeats),
            "checkpoints_ms": median_ms(lambda: save_checkpoints(run.agent, out / ACTOR_FILE, out / CRITIC_FILE),
                                        args.repeats),
            "periodic_save_ms": median_ms(lambda: saver.save(run, final=False), args.repeats),
            "stop_save_ms": median_ms(lambda: write_training_state(out, *snapshot.for_saving(run.agent)),
                                      max(3, args.repeats // 3)),
        }
        buffer_mb = (out / BUFFER_FILE).stat().st_size / 1e6
    finally:
        shutil.rmtree(out, ignore_errors=True)
    committed = read_record(ROOT / "checkpoint_run.json")
    episode_ms = 1000.0 * committed.wall_time_s / committed.episodes_run
    per_episode = figures["snapshot_ms"] + figures["progress_files_ms"]
    result = {**{k: round(v, 2) for k, v in figures.items()}, "buffer_file_mb": round(buffer_mb, 1),
              "per_episode_ms": round(per_episode, 2), "committed_episode_ms": round(episode_ms, 1),
              "per_episode_share": round(per_episode / episode_ms, 4), "repeats": args.repeats,
              "arms": ARMS, "episodes": EPISODES, "platform": platform.platform(),
              "command": "python -m benchmarks.bench_saving" + (f" --repeats {args.repeats}" if args.repeats != 21 else "")}
    print(f"Default agent, {ARMS} arms, a full buffer ({run.agent.memory.capacity:,} transitions), {EPISODES} episodes; "
          f"medians of {args.repeats}:")
    print(f"  every episode: snapshot {result['snapshot_ms']:.2f} ms + scores.csv, metrics.csv, run.json "
          f"{result['progress_files_ms']:.2f} ms = {per_episode:.2f} ms, {100 * result['per_episode_share']:.2f}% of "
          f"the committed run's mean episode ({episode_ms:.0f} ms)")
    print(f"  the checkpoints alone: {result['checkpoints_ms']:.2f} ms (written at the saves, not every episode)")
    print(f"  every --save-every episodes: {result['periodic_save_ms']:.1f} ms (training state, checkpoints, plot, "
          "progress files; no buffer)")
    print(f"  at a stop: {result['stop_save_ms']:.0f} ms (training state and the {buffer_mb:.0f} MB buffer)")
    if args.json:
        write_json(args.json, result)
        print(f"Wrote {args.json}")


if __name__ == "__main__":
    main()
