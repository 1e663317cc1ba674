"""The built-in Crawler's speed here against an earlier commit's, alternating in one sitting.

The environment alone: 12 crawlers, uniform random actions (a fixed stream), a warm-up, then a
fixed number of decisions timed; decisions per second. Each measurement is its own process, run
in the checkout it measures (``PYTHONPATH`` pointing at it, this same Python and venv). The
earlier commit is checked out by ``git worktree add`` into a temporary folder and removed after.
A machine's load moves a measurement by more than many changes, so the codes run alternately
(old, new, old, new, ...) and the ratio is of the medians.

    python -m benchmarks.bench_crawler_speed --old 001be10 --rounds 3 --json benchmarks/results/environment/crawler_speed.json

``--threads N`` sets this checkout's ``CRAWLER_THREADS`` (the old code stepped on one thread);
``--old-threads``/``--new-threads`` with ``--old .`` compare two thread counts of this code.

The second figure is training at the Crawler's settings as each checkout has them: ``train.py
--env UnityCrawler-v0 --num-envs 12 --max-env-steps N`` (``--train-steps``, default 60,000: the
warm-up's 20,000 and 40,000 more with an update a decision) in the checkout, to a temporary run
folder; the kept transitions per second are run.json's ``env_steps`` (the transitions handed to
the agent) over its ``wall_time_s``, and the transitions kept per decision are ``env_steps`` over
the decisions the agent stepped (training_state.pt's ``t_step``): 12 when no crawler waits for
the others. ``--figures`` picks which figures run; each is measured in the same alternating pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Runs in the measured checkout (its own crawler package): prints one JSON line.
_ENV_SNIPPET = """
import json, sys, time
import numpy as np
from crawler.environment import BRAIN_NAME, CrawlerEnvironment
agents, warmup, decisions = (int(v) for v in sys.argv[1:4])
env = CrawlerEnvironment(num_agents=agents, verbose=False, show_viewer=False)
env.reset()
actions = np.random.default_rng(0).uniform(-1.0, 1.0, (warmup + decisions, agents, 20))
for a in actions[:warmup]:
    env.step(a)
start = time.perf_counter()
total = 0.0
for a in actions[warmup:]:
    total += sum(env.step(a)[BRAIN_NAME].rewards)
seconds = time.perf_counter() - start
print(json.dumps({"decisions_per_s": decisions / seconds, "seconds": seconds, "reward_sum": total,
                  "threads": getattr(env, "threads", 1)}))
"""


def env_decisions_per_s(where: Path, threads: int | None, agents: int, warmup: int, decisions: int) -> dict:
    """The environment alone in the checkout ``where``: decisions per second, in a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(where)}
    env.pop("CRAWLER_THREADS", None)
    if threads is not None:
        env["CRAWLER_THREADS"] = str(threads)
    done = subprocess.run([sys.executable, "-c", _ENV_SNIPPET, str(agents), str(warmup), str(decisions)], cwd=where,
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench_crawler_speed: the measurement failed in {where}: {done.stderr.strip()[-500:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["load_before"] = round(os.getloadavg()[0], 2)
    return result


def training_transitions_per_s(where: Path, threads: int | None, steps: int) -> dict:
    """train.py on the Crawler in the checkout ``where``, ``steps`` transitions: kept transitions per
    second and per decision, in a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(where)}
    env.pop("CRAWLER_THREADS", None)
    if threads is not None:
        env["CRAWLER_THREADS"] = str(threads)
    load = round(os.getloadavg()[0], 2)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        done = subprocess.run([sys.executable, "train.py", "--env", "UnityCrawler-v0", "--num-envs", "12",
                               "--max-env-steps", str(steps), "--episodes", "100000", "--out", str(out), "--quiet",
                               "--no-progress"], cwd=where, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"bench_crawler_speed: training failed in {where}: {done.stderr.strip()[-500:]}")
        record = json.loads((out / "run.json").read_text())
        import torch

        decisions = torch.load(out / "training_state.pt", weights_only=False)["agent"]["t_step"]
    return {"transitions_per_s": record["env_steps"] / record["wall_time_s"], "env_steps": record["env_steps"],
            "wall_time_s": record["wall_time_s"], "decisions": decisions,
            "kept_per_decision": round(record["env_steps"] / decisions, 3), "updates": record["learner_updates"],
            "threads": threads, "load_before": load}


# Figure name -> (function(where, threads, args) -> dict, the dict's key holding the figure).
FIGURES: dict[str, tuple[Callable[[Path, int | None, argparse.Namespace], dict], str]] = {
    "env_decisions_per_s": (lambda where, threads, a: env_decisions_per_s(where, threads, a.agents, a.warmup,
                                                                            a.decisions), "decisions_per_s"),
    "training_transitions_per_s": (lambda where, threads, a: training_transitions_per_s(where, threads, a.train_steps),
                                   "transitions_per_s"),
}


def git_commit(where: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", default="001be10",
                        help="the earlier commit (checked out in a temporary git worktree), or '.' for this checkout "
                             "(default 001be10, before the crawlers were stepped apart)")
    parser.add_argument("--rounds", type=int, default=3, help="old/new pairs (default 3)")
    parser.add_argument("--agents", type=int, default=12, help="crawlers (default 12, the course's)")
    parser.add_argument("--warmup", type=int, default=30, help="decisions before timing (default 30)")
    parser.add_argument("--decisions", type=int, default=300, help="decisions timed (default 300)")
    parser.add_argument("--train-steps", type=int, default=60_000,
                        help="environment steps of each training run (default 60,000)")
    parser.add_argument("--threads", type=int, default=None,
                        help="CRAWLER_THREADS for this checkout (default: unset, the environment's default)")
    parser.add_argument("--old-threads", type=int, default=None, help="CRAWLER_THREADS for the old side")
    parser.add_argument("--figures", default=",".join(FIGURES),
                        help=f"which figures, comma-separated (default and all: {','.join(FIGURES)})")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    figures = [f for f in args.figures.split(",") if f]
    unknown = [f for f in figures if f not in FIGURES]
    if unknown:
        parser.error(f"--figures: unknown {unknown}; expected some of {list(FIGURES)}")
    for name in ("rounds", "agents", "decisions", "train_steps"):
        if getattr(args, name) < 1:
            parser.error(f"--{name}: expected a whole number >= 1, got {getattr(args, name)}")
    with tempfile.TemporaryDirectory() as tmp:
        old = ROOT if args.old == "." else Path(tmp) / "old"
        if args.old != ".":
            added = subprocess.run(["git", "worktree", "add", "--detach", str(old), args.old], cwd=ROOT,
                                   capture_output=True, text=True)
            if added.returncode != 0:
                parser.error(f"--old {args.old}: git worktree add failed: {added.stderr.strip()}")
        try:
            codes = {"old": (old, args.old_threads), "new": (ROOT, args.threads)}
            old_commit = git_commit(old)
            runs = []
            for i in range(args.rounds):
                for figure in figures:
                    measure, key = FIGURES[figure]
                    for code, (where, threads) in codes.items():
                        result = measure(where, threads, args)
                        runs.append({"round": i + 1, "code": code, "figure": figure, **result})
                        print(f"round {i + 1} {code}: {figure} {result[key]:.1f} "
                              f"(threads {result.get('threads')}, load {result['load_before']})", flush=True)
        finally:
            if args.old != ".":
                subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, capture_output=True)
    summary = {}
    for figure in figures:
        key = FIGURES[figure][1]
        medians = {code: statistics.median(r[key] for r in runs if r["code"] == code and r["figure"] == figure)
                   for code in ("old", "new")}
        summary[figure] = {"median_old": round(medians["old"], 2), "median_new": round(medians["new"], 2),
                           "new_over_old": round(medians["new"] / medians["old"], 3)}
        print(f"{figure}: median old {medians['old']:.1f}, new {medians['new']:.1f}, "
              f"new/old {medians['new'] / medians['old']:.2f}x")
    if args.json:
        from ddpg.command_line import reproducible
        from ddpg.run_folder.atomic import write_json

        write_json(args.json, {"command": "python -m benchmarks.bench_crawler_speed " + " ".join(argv or sys.argv[1:]),
                               "old": args.old, "old_commit": old_commit, "new_commit": git_commit(ROOT),
                               "agents": args.agents, "warmup": args.warmup, "decisions": args.decisions,
                               "train_steps": args.train_steps,
                               "threads": args.threads, "old_threads": args.old_threads,
                               "machine": reproducible.machine(), "runs": runs, "summary": summary})
    return 0


if __name__ == "__main__":
    sys.exit(main())
