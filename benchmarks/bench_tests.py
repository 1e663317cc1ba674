"""How long the test suite takes: ``make test``'s pytest, timed, with its ten slowest tests
(issue 53: at most 300 s in a fresh clone on the 2-core development machine).

Usage: python -m benchmarks.bench_tests [--json benchmarks/results/test_suite/make_test.json]

Runs ``make test PYTEST_ARGS="--durations=10 -p no:cacheprovider"`` (the Makefile owns the
command: set-up, ruff, then pytest on every core), and prints pytest's own wall-clock, its
counts and the ten slowest tests. Run it in a fresh clone, nothing else heavy on the machine:
the load average before and after is recorded, since on a busy machine every figure grows.
The durations are measured with the other workers running, so they add up to more than the
wall-clock.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT_S = 300.0  # issue 53
PYTEST_ARGS = "--durations=10 -p no:cacheprovider"

_SUMMARY = re.compile(r"^=* ?(?P<counts>\d+ \w+(?:, \d+ \w+)*) in (?P<seconds>[\d.]+)s(?: \([\d:]+\))?(?: =+)?$", re.M)
_DURATION = re.compile(r"^(?P<seconds>[\d.]+)s (?P<phase>call|setup|teardown)\s+(?P<test>\S.*)$", re.M)


def parse(output: str) -> dict:
    """pytest's final line (counts, seconds) and its --durations lines, from its output."""
    found = list(_SUMMARY.finditer(output))
    if not found:
        raise ValueError("no pytest summary line in the output (did make test run pytest?)")
    summary = found[-1]
    counts = {name: int(n) for n, name in re.findall(r"(\d+) (\w+)", summary["counts"])}
    slowest = [{"seconds": float(m["seconds"]), "phase": m["phase"], "test": m["test"].strip()}
               for m in _DURATION.finditer(output)]
    return {"pytest_s": float(summary["seconds"]), "counts": counts, "slowest": slowest}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None, metavar="PATH", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)

    load_before = os.getloadavg()
    start = time.perf_counter()
    done = subprocess.run(["make", "test", f"PYTEST_ARGS={PYTEST_ARGS}"], cwd=ROOT, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    make_s = time.perf_counter() - start
    load_after = os.getloadavg()
    if done.returncode != 0:
        print(done.stdout[-4000:] + done.stderr[-4000:], file=sys.stderr)
        print(f"bench_tests.py: make test failed (exit {done.returncode}); no figures", file=sys.stderr)
        return 1
    figures = parse(done.stdout)
    print(f"pytest {figures['pytest_s']:.1f} s ({', '.join(f'{n} {k}' for k, n in figures['counts'].items())}); "
          f"make test as a whole {make_s:.1f} s; limit {LIMIT_S:g} s: "
          + ("within" if figures["pytest_s"] <= LIMIT_S else "OVER"))
    for row in figures["slowest"]:
        print(f"  {row['seconds']:7.2f} s {row['phase']:8s} {row['test']}")
    print(f"load average (1, 5, 15 min) before: {', '.join(f'{x:.2f}' for x in load_before)}; "
          f"after: {', '.join(f'{x:.2f}' for x in load_after)} ({os.cpu_count()} CPUs)")

    if args.json:
        from ddpg.command_line import reproducible  # PyTorch loads here, after the timing
        from ddpg.run_folder.atomic import write_json
        from ddpg.run_folder.record_file import git_commit

        record = {
            "command": "python -m benchmarks.bench_tests " + " ".join(argv if argv is not None else sys.argv[1:]),
            "runs": f"make test PYTEST_ARGS=\"{PYTEST_ARGS}\"",
            "date": datetime.date.today().isoformat(),
            "git_commit": git_commit(),
            "machine": reproducible.machine(),
            "limit_s": LIMIT_S,
            "make_test_s": make_s,
            "load_average_before": list(load_before),
            "load_average_after": list(load_after),
            **figures,
        }
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_json(out, record)
        print(f"Wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
