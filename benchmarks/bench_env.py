"""Speed of the built-in Reacher: 20-agent decisions per second with random actions.

Usage: python benchmarks/bench_env.py [--agents 20] [--decisions 4000] [--repeats 7]

Runs on one core (pinned where the OS allows), rendering off, and prints the median
of several timed runs. Actions are drawn before timing so only the environment counts.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from reacher import ReacherEnvironment


def decisions_per_second(env: ReacherEnvironment, actions: np.ndarray) -> float:
    env.reset()
    start = time.perf_counter()
    for a in actions:
        env.step(a)
    return len(actions) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--decisions", type=int, default=4000, help="decisions per timed run (episodes restart by themselves)")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

    env = ReacherEnvironment(num_agents=args.agents, seed=0, verbose=False)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (args.decisions, args.agents, 4))
    decisions_per_second(env, actions[:200])  # warm-up (numba's compiled kernel loads)
    rates = [decisions_per_second(env, actions) for _ in range(args.repeats)]
    env.close()
    median = statistics.median(rates)
    print(f"agents: {args.agents}, random actions, rendering off, one core, {args.repeats} runs of {args.decisions} decisions")
    print(f"decisions/s: median {median:,.0f} (min {min(rates):,.0f}, max {max(rates):,.0f})")
    print(f"agent-steps/s: median {median * args.agents:,.0f}")
    print(f"physics steps/s: median {median * 4:,.0f} (4 per decision, all agents in one compiled call)")
    print(f"per decision: {1e6 / median:.0f} us in all (interface included), "
          f"{1e6 / median / (4 * args.agents):.2f} us per arm and physics step")


if __name__ == "__main__":
    main()
