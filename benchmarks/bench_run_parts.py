"""What the default run's wall-clock is made of: a decision of the 20 arms, by part, and an update.

The default run makes 100,000 decisions and 20,000 updates (``checkpoint_run.json``), and the
decisions after an episode's mean reaches the schedule's score have no update between them. This
times the training loop's three calls per decision (acting, the environment's step, storing), with
learning off, on the readable decisions (``Agent.act`` and ``Agent.step`` as ddpg_agent.py writes
them) and on the fast ones (``ddpg.backends.fast_steps``), alternating; then, in each round, the
fast learner's updates on the buffer those decisions filled, in learning steps of the default's
size, on train.py's two threads. It reports the medians over rounds; ``docs/training.md`` puts
them beside the whole run's wall-clock (``bench_speedup.py``).

    python -m benchmarks.bench_run_parts --json benchmarks/results/run_speed/parts.json
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

PARTS = ("act", "env", "store", "decision", "update")


def one_round(decisions: bool, steps: int, updates: int, seed: int = 0) -> dict[str, float]:
    """Microseconds per call of each part over ``steps`` decisions (after 200 untimed ones), and
    per update over ``updates`` (after one untimed learning step)."""
    from ddpg import backends
    from ddpg.tasks import open_environment
    from ddpg_agent import Agent, DDPGConfig

    env = open_environment(n=20, seed=seed)
    brain = env.brain_names[0]
    config = DDPGConfig()
    agent = Agent(33, 4, seed, config=config)
    agent.learn_updates = 0  # the decisions alone; the updates are timed below
    with contextlib.redirect_stdout(io.StringIO()):  # its one line, once per round
        backends.attach(agent, "fast")
    decide = agent.backend.decisions if decisions else agent
    assert decide is not None, "the fast decisions were not admitted for the unedited code"
    totals = dict.fromkeys(PARTS, 0.0)
    states = np.asarray(env.reset(train_mode=True)[brain].vector_observations)
    agent.reset()
    clock = time.perf_counter
    for t in range(200 + steps):
        if t == 200:
            totals = dict.fromkeys(PARTS, 0.0)
        t0 = clock()
        actions = decide.act(states)
        t1 = clock()
        info = env.step(actions)[brain]
        t2 = clock()
        next_states = np.asarray(info.vector_observations, dtype=np.float64)
        rewards = np.asarray(info.rewards, dtype=np.float64)
        terminated = np.asarray(info.local_done, dtype=bool) & ~np.asarray(info.max_reached, dtype=bool)
        decide.step(states, actions, rewards, next_states, terminated)
        t3 = clock()
        totals["act"] += t1 - t0
        totals["env"] += t2 - t1
        totals["store"] += t3 - t2
        totals["decision"] += t3 - t0
        states = next_states
    env.close()
    out = {k: round(v / steps * 1e6, 2) for k, v in totals.items()}
    per_step = config.learn_updates  # updates per learning step, as the default run makes them
    agent.learn_many(per_step)
    start = clock()
    for _ in range(max(updates // per_step, 1)):
        agent.learn_many(per_step)
    out["update"] = round((clock() - start) / (max(updates // per_step, 1) * per_step) * 1e6, 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternating pairs (default 5)")
    parser.add_argument("--steps", type=int, default=3000, help="timed decisions per round (default 3000)")
    parser.add_argument("--updates", type=int, default=1000, help="timed updates per round (default 1000)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    if min(args.rounds, args.steps, args.updates) < 1 or args.steps * 20 < 20_000:
        parser.error("--rounds, --steps, --updates: expected whole numbers >= 1, and --steps >= 1000 "
                     f"(the buffer's warm-up), got {args.rounds}, {args.steps}, {args.updates}")
    rounds: dict[str, list[dict[str, float]]] = {"readable": [], "fast": []}
    for _ in range(args.rounds):
        for name in rounds:
            rounds[name].append(one_round(name == "fast", args.steps, args.updates))
    medians = {name: {part: round(statistics.median(r[part] for r in rs), 2) for part in PARTS}
               for name, rs in rounds.items()}
    for name, m in medians.items():
        print(f"{name} decisions: " + "  ".join(f"{part} {m[part]:.1f} us" for part in PARTS))
    ratio = medians["fast"]["decision"] / medians["readable"]["decision"]
    print(f"fast/readable decision: {ratio:.3f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "command": f"python -m benchmarks.bench_run_parts --rounds {args.rounds} --steps {args.steps} "
                       f"--updates {args.updates}",
            "git_commit": git_commit(), "machine": reproducible.machine(), "rounds": rounds, "median_us": medians,
            "fast_over_readable": round(ratio, 3)}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
