"""One update's cost on this CPU: today's default learner against an earlier commit's learners, alternating.

The default learner runs the agent's own ``Agent.learn``; until commit 892bcff the default on a CPU
was a hand-written restatement of it (``fast``), and ``readable`` was the same autograd update as
today's before ``Agent.optimise`` took its actor gradients with ``inputs=`` and its soft update in one
``_foreach_lerp_``. Each side is ``bench_train.py --updates-only`` in its own checkout and process
(the median of 5 blocks of 1,000 updates on a buffer of 100,000 random transitions, one PyTorch
thread as train.py sets, the fast learner on the two threads it took), and the sides alternate
round by round, so the machine's drift falls on all of them alike; the figures are the medians over
rounds.

    git worktree add /tmp/old 892bcff
    .venv/bin/python -m benchmarks.bench_learners --old /tmp/old --rounds 3 --json benchmarks/results/learner_speed/learners_892bcff.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def updates_per_s(where: Path, learner: str) -> float:
    """``bench_train.py --updates-only --learner LEARNER`` in the checkout ``where``: its updates/s."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "figures.json"
        argv = [sys.executable, "-m", "benchmarks.bench_train", "--updates-only", "--learner", learner,
                "--json", str(out)]
        done = subprocess.run(argv, cwd=where, env={**os.environ, "PYTHONPATH": str(where)}, capture_output=True,
                              text=True)
        if done.returncode != 0:
            raise SystemExit(f"bench_learners: {' '.join(argv[1:])} failed in {where}: "
                             f"{done.stderr.strip().splitlines()[-1:]}")
        return float(json.loads(out.read_text())["learner_updates_per_s"])


def git_commit(where: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="a checkout of the earlier commit (git worktree)")
    parser.add_argument("--old-learners", default="fast,readable",
                        help="the earlier commit's learners to time, comma-separated (default fast,readable)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every side (default 3)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds: expected a whole number >= 1, got {args.rounds}")
    if not (args.old / "benchmarks" / "bench_train.py").exists():
        parser.error(f"--old {args.old}: no benchmarks/bench_train.py there; expected a checkout of the earlier commit")
    sides = [(f"old {name}", args.old.resolve(), name) for name in args.old_learners.split(",")] + [
        ("new default", ROOT, "auto")]
    runs = []
    for i in range(args.rounds):
        for label, where, learner in sides:
            rate = updates_per_s(where, learner)
            runs.append({"round": i + 1, "side": label, "updates_per_s": round(rate, 1)})
            print(f"round {i + 1} {label}: {rate:.0f} updates/s ({1000 / rate:.2f} ms an update)", flush=True)
    medians = {label: statistics.median(r["updates_per_s"] for r in runs if r["side"] == label) for label, _, _ in sides}
    new = medians["new default"]
    for label, rate in medians.items():
        print(f"median {label}: {rate:.0f} updates/s; new default / it: {new / rate:.3f}")
    if args.json:
        from ddpg.command_line import reproducible
        from ddpg.run_folder.atomic import write_json

        write_json(args.json, {"command": "python -m benchmarks.bench_learners " + " ".join(argv or sys.argv[1:]),
                               "old_commit": git_commit(args.old), "new_commit": git_commit(ROOT),
                               "machine": reproducible.machine(), "runs": runs, "median_updates_per_s": medians,
                               "new_over": {label: round(new / rate, 3) for label, rate in medians.items()}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
