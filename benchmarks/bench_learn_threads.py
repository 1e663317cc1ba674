"""What a second thread buys an update: milliseconds per update of a config's agent at the
Crawler's sizes (129 observations, 20 actions), with PyTorch on 1 and on 2 threads.

    python -m benchmarks.bench_learn_threads --candidate sac_wide \\
        --json benchmarks/results/learner_speed/learn_threads_sac_wide.json

train.py runs PyTorch on one thread ("small matrices: one thread per op is fastest"), which held
for 128-unit networks. The Crawler's environment does not step while the agent learns, so the
second core idles through every update; whether wider networks (256 units, twin critics) run
faster on two is measured here. Each measurement is a fresh process (its own thread pool), the
two thread counts alternating, ``--pairs`` times: run it alone on the machine. A measurement fills
the buffer with random transitions, makes ``--warm`` updates, then times ``--updates``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
STATE, ACTION = 129, 20


def measure(config: dict, threads: int, updates: int, warm: int) -> float:
    """Milliseconds per update in this process, with PyTorch on ``threads`` threads."""
    import torch

    from ddpg.agents import make_agent
    from ddpg.variants import parse_config

    torch.set_num_threads(threads)
    agent = make_agent("readable", (STATE, ACTION, 0), parse_config({**config, "buffer_size": 50_000}))
    rng = np.random.default_rng(0)
    for _ in range(200):
        agent.memory.add(rng.normal(size=(12, STATE)), rng.uniform(-1, 1, (12, ACTION)), rng.normal(size=12),
                         rng.normal(size=(12, STATE)), np.full(12, 0.99))
    agent.learn_many(warm)
    start = time.perf_counter()
    agent.learn_many(updates)
    return 1000 * (time.perf_counter() - start) / updates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--config", default="{}", help="the agent's --config (JSON)")
    parser.add_argument("--candidate", default=None, help="instead of --config, a candidate of benchmarks/crawler_walks.py")
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--warm", type=int, default=30)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--json", default=None)
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)  # a child: its thread count
    args = parser.parse_args(argv)
    if args.candidate is not None:
        from benchmarks.crawler_walks import CANDIDATES

        args.config = json.dumps(CANDIDATES[args.candidate])
    config = json.loads(args.config)
    if args.one is not None:
        print(measure(config, args.one, args.updates, args.warm))
        return 0
    times: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(args.pairs):
        for threads in (1, 2):
            out = subprocess.run([sys.executable, "-m", "benchmarks.bench_learn_threads", "--config", args.config,
                                  "--updates", str(args.updates), "--warm", str(args.warm), "--one", str(threads)],
                                 cwd=ROOT, check=True, capture_output=True, text=True).stdout
            times[threads].append(float(out.strip().splitlines()[-1]))
    one, two = float(np.median(times[1])), float(np.median(times[2]))
    print(f"ms per update, median of {args.pairs}: 1 thread {one:.2f} ({', '.join(f'{t:.2f}' for t in times[1])}), "
          f"2 threads {two:.2f} ({', '.join(f'{t:.2f}' for t in times[2])}): {one / two:.2f}x")
    if args.json:
        from ddpg.command_line import reproducible

        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        report = {"benchmark": "bench_learn_threads", "config": config, "state_size": STATE, "action_size": ACTION,
                  "updates": args.updates, "pairs": args.pairs, "ms_per_update": {"1": times[1], "2": times[2]},
                  "median_ms": {"1": one, "2": two}, "speedup": one / two, "git_commit": commit,
                  "command": "python -m benchmarks.bench_learn_threads " + " ".join(sys.argv[1:]),
                  "machine": reproducible.machine()}
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
