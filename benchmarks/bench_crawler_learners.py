"""What a Crawler decision costs on each CPU learner: milliseconds per decision of the 12 crawlers
while learning, for a candidate of the study, ``readable`` against ``overlap``.

    python -m benchmarks.bench_crawler_learners --candidate sac3 --rounds 2 \\
        --json benchmarks/results/crawler_speed/learners_sac3.json

The study's budget is 1,000,000 transitions (83,334 decisions) in 40 minutes on 2 cores: 28.8 ms a
decision, environment and updates together. ``readable`` steps the environment, then learns, one
after the other (PyTorch on ``--threads``); ``overlap`` learns on a worker thread while the
environment steps (ddpg/backends/overlap.py). Each setting is its own ``train.py`` process, the
settings alternating ``--rounds`` times; a run stores ``--warmup`` transitions, then learns for
``--decisions`` decisions in rounds of ``ROUND`` decisions, and its figure is the median round's
wall-clock per decision once learning has begun. Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CRAWLERS, ROUND, BUDGET_S, TRANSITIONS = 12, 200, 40 * 60, 1_000_000
# name: (train.py --learner, PyTorch threads, the environment's threads)
SETTINGS = {"readable": ("readable", 2, 2), "overlap": ("overlap", 1, 1), "overlap_env2": ("overlap", 1, 2)}


def measure(config: dict, setting: str, warmup: int, decisions: int) -> dict:
    """One train.py process: its median milliseconds per decision over the rounds that learned."""
    learner, threads, env_threads = SETTINGS[setting]
    config = {**config, "warmup": warmup}
    steps = (warmup // CRAWLERS + decisions) * CRAWLERS
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "train.py", "--env", "UnityCrawler-v0", "--num-envs", str(CRAWLERS),
                   "--max-t", str(ROUND), "--max-env-steps", str(steps), "--episodes", "100000", "--seed", "0",
                   "--learner", learner, "--threads", str(threads), "--config", json.dumps(config),
                   "--out", out, "--quiet", "--no-progress", "--force"]
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True,
                       env={**os.environ, "CRAWLER_THREADS": str(env_threads)})
        wall = time.perf_counter() - start
        with open(Path(out) / "metrics.csv") as f:
            rows = [r for r in csv.DictReader(f) if float(r["updates"]) > 0]
    per_decision = [1000 * float(r["episode_s"]) / ROUND for r in rows[1:]]  # the first learning round: mixed
    return {"setting": setting, "learner": learner, "torch_threads": threads, "crawler_threads": env_threads,
            "ms_per_decision": float(np.median(per_decision)), "rounds": per_decision, "process_wall_s": wall}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--candidate", default="sac3", help="a candidate of benchmarks/crawler_walks.py")
    parser.add_argument("--settings", default=",".join(SETTINGS), help=f"comma-separated, of {', '.join(SETTINGS)}")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=2400, help="transitions stored before learning (the run's warmup)")
    parser.add_argument("--decisions", type=int, default=2000, help="decisions learned on, per run")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    from benchmarks.crawler_walks import CANDIDATES
    from ddpg.command_line import reproducible
    from ddpg.run_folder.record_file import git_commit

    settings = args.settings.split(",")
    unknown = [s for s in settings if s not in SETTINGS]
    if unknown or args.candidate not in CANDIDATES:
        parser.error(f"--settings: expected some of {', '.join(SETTINGS)}; --candidate: one of {', '.join(CANDIDATES)}")
    config = CANDIDATES[args.candidate]
    runs = []
    for round_ in range(args.rounds):
        for setting in settings:
            runs.append({"round": round_ + 1, **measure(config, setting, args.warmup, args.decisions)})
            print(f"round {round_ + 1} {setting}: {runs[-1]['ms_per_decision']:.1f} ms a decision", flush=True)
    summary = {}
    for setting in settings:
        ms = float(np.median([r["ms_per_decision"] for r in runs if r["setting"] == setting]))
        summary[setting] = {"ms_per_decision": ms,
                            "minutes_for_1M": ms * TRANSITIONS / CRAWLERS / 1000 / 60,
                            "within_40_min": ms * TRANSITIONS / CRAWLERS / 1000 <= BUDGET_S}
        print(f"{setting}: {ms:.1f} ms a decision (median of {args.rounds}), "
              f"{summary[setting]['minutes_for_1M']:.1f} min for 1M transitions")
    if args.json:
        record = {"command": "python -m benchmarks.bench_crawler_learners " + " ".join(argv or sys.argv[1:]),
                  "candidate": args.candidate, "config": config, "warmup": args.warmup, "decisions": args.decisions,
                  "round_decisions": ROUND, "settings": {s: dict(zip(("learner", "torch_threads", "crawler_threads"),
                                                                      SETTINGS[s], strict=True)) for s in settings},
                  "git_commit": git_commit(), "machine": reproducible.machine(), "runs": runs, "summary": summary}
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
