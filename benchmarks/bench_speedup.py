"""The default run's whole wall-clock here against an earlier commit's, alternating in one sitting.

Issue 61 asks for the 20-arm default (train.py with no settings, to solved) in at most 0.55 of the
wall-clock of commit 861a09a, on the same machine, with the same scores. A run's wall-clock moves
with the machine's load by more than most single changes, so the two codes run alternately (old,
new, old, new, ...), each as its own process from the command line as a user starts it (imports,
start-up and exit included, after one untimed short run each that writes its bytecode and Numba
caches), and the ratio is of the medians. Each pair's scores.csv must be
byte-identical: a change that alters the numbers is not a speed-up but a new default. A new
default, validated over seeds elsewhere, is timed with ``--new-default``: the scores may differ,
so each run's learning updates are recorded beside its wall-clock (a run's updates follow its
scores, through the schedule's pause), and ``--train-args '--no-stop --good-score off --episodes
N'`` times both codes on the same work.

    git worktree add /tmp/old 861a09a
    .venv/bin/python -m benchmarks.bench_speedup --old /tmp/old --rounds 3 --json benchmarks/results/run_speed/speedup_861a09a.json

With ``--old .`` and ``--old-args``/``--new-args`` it compares two settings of this code instead
(the learner's ``--threads 1`` against 2, say), with each side's CPU time beside its wall-clock.

``--quick`` runs 3 episodes of 200 decisions instead (a check of the script, not a measurement).
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one_run(where: Path, out: Path, quick: bool, extra: list[str] | None = None) -> dict:
    """``python train.py --out OUT --force [extra]`` in the checkout ``where``, timed as a process."""
    argv = [sys.executable, "train.py", "--out", str(out), "--force", "--no-progress", *(extra or [])]
    if quick:
        argv += ["--episodes", "3", "--max-t", "200"]
    env = {**os.environ, "PYTHONPATH": str(where)}  # that checkout's modules, not this one's
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=where, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"bench_speedup: train.py failed in {where}: {done.stderr.strip().splitlines()[-1:]}")
    solved = next((line for line in done.stdout.splitlines() if line.startswith("Solved")), None)
    import json

    record = json.loads((out / "run.json").read_text())
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "load_before": round(load, 2), "solved": solved,
            "updates": record.get("learner_updates"), "learner": record.get("learner"),
            "scores": (out / "scores.csv").read_bytes()}


def git_commit(where: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="a checkout of the earlier commit (git worktree)")
    parser.add_argument("--rounds", type=int, default=3, help="old/new pairs (default 3)")
    parser.add_argument("--quick", action="store_true", help="3 short episodes: checks the script, measures nothing")
    parser.add_argument("--train-args", default="", metavar="ARGS",
                        help="more train.py options for both codes, e.g. '--learner readable --episodes 3' "
                             "(the readable learner, which must be no slower)")
    parser.add_argument("--old-args", default="", metavar="ARGS",
                        help="train.py options for the old side alone; with --old . two settings of this code "
                             "(e.g. --old . --old-args '--threads 1' --new-args '--threads 2')")
    parser.add_argument("--new-args", default="", metavar="ARGS", help="train.py options for the new side alone")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--new-default", action="store_true",
                        help="the new code computes a new default (validated over seeds elsewhere): scores that "
                             "differ are recorded, not an error")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds: expected a whole number >= 1, got {args.rounds}")
    if not (args.old / "train.py").exists():
        parser.error(f"--old {args.old}: no train.py there; expected a checkout of the earlier commit")
    codes = {"old": args.old.resolve(), "new": ROOT}
    extra = shlex.split(args.train_args)
    sides = {"old": extra + shlex.split(args.old_args), "new": extra + shlex.split(args.new_args)}
    runs, same_scores = [], True
    with tempfile.TemporaryDirectory() as tmp:
        if not args.quick:  # untimed: each checkout's bytecode and Numba caches written once (--quick times nothing)
            for code, where in codes.items():
                one_run(where, Path(tmp) / code, quick=True, extra=sides[code])
        for i in range(args.rounds):
            scores = {}
            for code, where in codes.items():
                result = one_run(where, Path(tmp) / code, args.quick, sides[code])
                scores[code] = result.pop("scores")
                runs.append({"round": i + 1, "code": code, **result})
                print(f"round {i + 1} {code}: {result['wall_s']:.1f} s, CPU {result['cpu_s']:.1f} s, "
                      f"{result['updates']} updates on {result['learner']} (load {result['load_before']}); "
                      f"{result['solved']}",
                      flush=True)
            same_scores &= scores["old"] == scores["new"]
    medians = {code: statistics.median(r["wall_s"] for r in runs if r["code"] == code) for code in codes}
    cpu = {code: statistics.median(r["cpu_s"] for r in runs if r["code"] == code) for code in codes}
    ratio = medians["new"] / medians["old"]
    print(f"median wall-clock: old {medians['old']:.1f} s, new {medians['new']:.1f} s, new/old {ratio:.3f}; "
          f"CPU time: old {cpu['old']:.1f} s, new {cpu['new']:.1f} s; "
          f"scores {'byte-identical' if same_scores else 'DIFFER'} in every pair")
    if args.json:
        from ddpg.command_line import reproducible
        from ddpg.run_folder.atomic import write_json

        write_json(args.json, {"command": "python -m benchmarks.bench_speedup " + " ".join(argv or sys.argv[1:]),
                               "old_commit": git_commit(codes["old"]), "new_commit": git_commit(ROOT),
                               "quick": args.quick, "train_args": extra, "old_args": sides["old"][len(extra):],
                               "new_args": sides["new"][len(extra):], "machine": reproducible.machine(), "runs": runs,
                               "median_old_s": medians["old"], "median_new_s": medians["new"],
                               "median_old_cpu_s": cpu["old"], "median_new_cpu_s": cpu["new"],
                               "new_over_old": round(ratio, 4), "scores_identical": same_scores})
    return 0 if same_scores or args.new_default else 1


if __name__ == "__main__":
    sys.exit(main())
