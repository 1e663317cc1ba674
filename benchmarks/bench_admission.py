"""What admitting the fast CPU learner costs, and that the learner it admits is as fast as before.

The default learner proves, when it is attached, that the hand-written fast CPU learner computes
the loaded code's acting and update (``ddpg.backends.proof``). This prints, and writes as JSON:

* the check's cost at start: ``backends.fast_cpu_problem`` on a fresh agent of the 20-arm and of
  the one-arm default, the median of ``--repeats`` calls after one warm-up;
* with ``--old DIR`` (a checkout of the code before the check, e.g. a ``git worktree``), the fast
  learner's updates/s there and here, ``bench_train.py --updates-only`` alternating ``--rounds``
  times (old, new, old, new, ...) in one sitting, so a drift of the machine's speed falls on both;
  and in each round the readable learner's here: what an edited agent runs on instead.

    .venv/bin/python -m benchmarks.bench_admission --old /tmp/old --json benchmarks/results/learner_speed/admission.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from ddpg import backends, reproducible
from ddpg.agents import make_agent
from ddpg.rundir import git_commit, write_json
from ddpg.tasks import reacher_task
from ddpg.variants import parse_config

ROOT = Path(__file__).resolve().parent.parent


def check_cost(agents: int, repeats: int) -> dict:
    """Seconds per ``fast_cpu_problem`` call on a fresh agent of the task's default settings."""
    task = reacher_task(agents)
    config = parse_config(task.config if task else {})
    agent = make_agent("readable", (33, 4, 0), config)  # the agent's class for the config, nothing attached
    assert backends.fast_cpu_problem(agent) is None  # the unedited code is admitted (and a warm-up)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        backends.fast_cpu_problem(agent)
        times.append(time.perf_counter() - t0)
    return {"agents": agents, "batch_size": config.batch_size, "median_s": statistics.median(times),
            "min_s": min(times), "max_s": max(times), "repeats": repeats}


def update_rates(where: Path, learner: str = "fast") -> dict:
    """``bench_train.py --updates-only`` in the checkout ``where``: the learner's updates/s (the fast
    one on 2 and on 1 thread)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rates.json"
        subprocess.run([sys.executable, "-m", "benchmarks.bench_train", "--updates-only", "--learner", learner, "--json",
                        str(out)], cwd=where, check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(where)})
        report = json.loads(out.read_text())
    if learner != "fast":
        return {"git_commit": report.get("git_commit"), "updates_per_s": report["learner_updates_per_s"]}
    return {"git_commit": report.get("git_commit"), "updates_per_s_2_threads": report["learner_updates_per_s"],
            "updates_per_s_1_thread": report.get("learner_1_thread_updates_per_s")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=9, help="timed calls of the check per task (default 9)")
    parser.add_argument("--old", type=Path, help="a checkout of the code before the check, to compare updates/s")
    parser.add_argument("--rounds", type=int, default=3, help="old/new pairs of --updates-only runs (default 3)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    report: dict = {"command": "python -m benchmarks.bench_admission " + " ".join(argv or sys.argv[1:]),
                    "git_commit": git_commit(), "machine": reproducible.machine(), "check": []}
    for agents in (20, 1):
        cost = check_cost(agents, args.repeats)
        report["check"].append(cost)
        print(f"admission check, {agents} arm(s), batch {cost['batch_size']}: median {cost['median_s'] * 1e3:.1f} ms "
              f"(min {cost['min_s'] * 1e3:.1f}, max {cost['max_s'] * 1e3:.1f}, {args.repeats} calls)", flush=True)
    if args.old is not None:
        runs = []
        for i in range(args.rounds):
            for code, where in (("old", args.old.resolve()), ("new", ROOT)):
                rates = {"order": len(runs) + 1, "code": code, **update_rates(where)}
                runs.append(rates)
                print(f"round {i + 1} {code} ({rates['git_commit']}): {rates['updates_per_s_2_threads']:.0f} updates/s "
                      f"on 2 threads, {rates['updates_per_s_1_thread']:.0f} on 1", flush=True)
            readable = {"order": len(runs) + 1, "code": "new", "learner": "readable", **update_rates(ROOT, "readable")}
            runs.append(readable)  # what an edited agent runs on instead, in the same sitting
            print(f"round {i + 1} readable learner: {readable['updates_per_s']:.0f} updates/s", flush=True)
        report["runs"] = runs
        for threads in ("2_threads", "1_thread"):
            old = statistics.median(r[f"updates_per_s_{threads}"] for r in runs if r["code"] == "old")
            new = statistics.median(r[f"updates_per_s_{threads}"] for r in runs if r["code"] == "new" and
                                    "learner" not in r)
            report[f"median_{threads}"] = {"old": old, "new": new, "new_over_old": new / old}
            print(f"median on {threads.replace('_', ' ')}: old {old:.0f}, new {new:.0f} updates/s (new/old {new / old:.3f})")
        readable = statistics.median(r["updates_per_s"] for r in runs if r.get("learner") == "readable")
        report["median_readable"] = readable
        print(f"median readable learner: {readable:.0f} updates/s, the fast one "
              f"{report['median_2_threads']['new'] / readable:.1f}x that on 2 threads")
    if args.json:
        write_json(args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
