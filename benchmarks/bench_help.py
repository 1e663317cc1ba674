"""How long each command's ``--help`` takes, as a whole process: the interpreter's start, the
script's imports and the parser (issue 53: at most 1 s each, the median of 5).

Usage: python -m benchmarks.bench_help [--repeats 5] [--json benchmarks/results/cli/help_times.json]

Each script is run once to warm the file cache, then ``--repeats`` times; the median, the fastest
and the slowest are printed. What keeps ``--help`` quick is that no script imports PyTorch or
MuJoCo before its options are parsed (tests/test_help_speed.py checks that, without timing).
The machine's load average is recorded before and after: on a busy machine every figure grows.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ("train.py", "watch.py", "evaluate.py", "sweep.py")
LIMIT_S = 1.0  # issue 53: each script's --help within a second (the median)


def help_seconds(script: str, repeats: int) -> list[float]:
    """Wall-clock seconds of ``python SCRIPT --help``, ``repeats`` times after one warm-up run."""
    command = [sys.executable, str(ROOT / script), "--help"]
    times = []
    for i in range(repeats + 1):
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        if i:  # the first run only warms the cache
            times.append(time.perf_counter() - start)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per script, after one warm-up (default 5)")
    parser.add_argument("--json", default=None, metavar="PATH", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")

    load_before = os.getloadavg()
    scripts = {}
    print(f"{'script':12s} {'median s':>9s} {'min s':>7s} {'max s':>7s}  (python SCRIPT --help, {args.repeats} runs)")
    for script in SCRIPTS:
        times = help_seconds(script, args.repeats)
        scripts[script] = {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
                           "times_s": times, "within_limit": statistics.median(times) <= LIMIT_S}
        row = scripts[script]
        print(f"{script:12s} {row['median_s']:9.3f} {row['min_s']:7.3f} {row['max_s']:7.3f}"
              + ("" if row["within_limit"] else f"  over {LIMIT_S:g} s"), flush=True)
    load_after = os.getloadavg()
    print(f"load average (1, 5, 15 min) before: {', '.join(f'{x:.2f}' for x in load_before)}; "
          f"after: {', '.join(f'{x:.2f}' for x in load_after)} ({os.cpu_count()} CPUs)")

    if args.json:
        from ddpg.command_line import reproducible  # PyTorch loads here, after the timings
        from ddpg.run_folder.atomic import write_json
        from ddpg.run_folder.record_file import git_commit

        record = {
            "command": "python -m benchmarks.bench_help " + " ".join(argv if argv is not None else sys.argv[1:]),
            "date": datetime.date.today().isoformat(),
            "git_commit": git_commit(),
            "machine": reproducible.machine(),
            "repeats": args.repeats,
            "limit_s": LIMIT_S,
            "load_average_before": list(load_before),
            "load_average_after": list(load_after),
            "scripts": scripts,
        }
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_json(out, record)
        print(f"Wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
