"""What the fast paths' guard costs: its checks at each entry against the work they guard.

The fast learner checks, at each ``learn_many`` (one learning step of 20 updates by default), that the
agent still holds what it was admitted for and reads every setting live (``FastCPU._enter``: the
guard's update checks and ``FlatAdam.read_settings``); the fast decisions check once per decision
(``Guard.problem("decisions")``). This times each check alone and, in the same process, a learning
step of the default's size and a decision's acting, on the default agent with a filled buffer; it
prints the medians over rounds and each check's share of what it guards.

    python -m benchmarks.bench_guard --json benchmarks/results/run_speed/guard.json
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import time
from pathlib import Path

import numpy as np

from ddpg import reproducible
from ddpg.record_file import git_commit


def one_round(calls: int, steps: int, seed: int = 0) -> dict[str, float]:
    """Microseconds per call of each check (``calls`` calls), per learning step and per act (``steps`` each)."""
    from ddpg import backends
    from ddpg.backends.restated import DECISIONS
    from ddpg_agent import Agent, DDPGConfig

    config = DDPGConfig()
    agent = Agent(33, 4, seed, config=config)
    rng = np.random.default_rng(seed)
    rows = 20_000
    agent.memory.add(rng.standard_normal((rows, 33)), rng.uniform(-1, 1, (rows, 4)), rng.random(rows) * 0.1,
                     rng.standard_normal((rows, 33)), config.gamma ** config.n_step)
    with contextlib.redirect_stdout(io.StringIO()):
        backends.attach(agent, "fast")
    backend, decide = agent.backend, agent.backend.decisions
    assert backend is not None and decide is not None, "the fast paths were not admitted for the unedited code"
    states = rng.standard_normal((20, 33))
    clock = time.perf_counter
    out = {}
    t0 = clock()
    for _ in range(calls):
        backend._enter()
    out["update_guard"] = (clock() - t0) / calls * 1e6
    t0 = clock()
    for _ in range(calls):
        backend.guard.problem(DECISIONS)
    out["decision_guard"] = (clock() - t0) / calls * 1e6
    backend.learn_many(config.learn_updates)  # untimed: the helper thread starts
    t0 = clock()
    for _ in range(steps):
        backend.learn_many(config.learn_updates)
    out["learning_step"] = (clock() - t0) / steps * 1e6
    out["one_update"] = out["learning_step"] / config.learn_updates
    t0 = clock()
    for _ in range(steps):
        decide.act(states)
    out["act"] = (clock() - t0) / steps * 1e6
    assert agent.backend is backend and not decide.aside, "the guard stepped aside on the unedited agent"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    rounds = [one_round(args.calls, args.steps) for _ in range(args.rounds)]
    median = {key: round(statistics.median(r[key] for r in rounds), 2) for key in rounds[0]}
    shares = {"update_guard_per_learning_step": round(median["update_guard"] / median["learning_step"], 5),
              "update_guard_per_update": round(median["update_guard"] / median["one_update"], 5),
              "decision_guard_per_act": round(median["decision_guard"] / median["act"], 5),
              "decision_guard_per_update": round(median["decision_guard"] / median["one_update"], 5)}
    print(f"update guard {median['update_guard']:.1f} us per learning step of {median['learning_step']:.0f} us "
          f"({100 * shares['update_guard_per_learning_step']:.2f}%; {100 * shares['update_guard_per_update']:.1f}% "
          f"of one update of {median['one_update']:.0f} us)")
    print(f"decision guard {median['decision_guard']:.1f} us per act of {median['act']:.1f} us "
          f"({100 * shares['decision_guard_per_act']:.1f}%; {100 * shares['decision_guard_per_update']:.2f}% of one update)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"what": __doc__.splitlines()[0], "command": "python -m benchmarks.bench_guard "
                                         f"--rounds {args.rounds} --calls {args.calls} --steps {args.steps}",
                                         "git_commit": git_commit(), "machine": reproducible.machine(), "medians_us": median,
                                         "shares": shares, "rounds": rounds}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
