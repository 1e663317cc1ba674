"""Score the committed checkpoints with the greedy policy (no noise), as the course reloads them.

    .venv/bin/python -m benchmarks.eval_checkpoints     # 100 episodes of 20 arms, then 100 of 1 arm

Prints, per environment size, the mean over episodes of the per-episode score averaged
over the arms, and the lowest and highest episode. The seeds are the ones
tests/test_checkpoints.py uses: its episodes (the first 10 of 20 arms, the first 20 of 1 arm)
are the first of these same runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ddpg.reporting.playing import load_agent
from evaluate import evaluate

ROOT = Path(__file__).resolve().parent.parent

RUNS = ((20, 2024), (1, 2025))  # (arms, environment seed)


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100)
    args = parser.parse_args()
    agent = load_agent(ROOT / "checkpoint_actor.pth", ROOT / "checkpoint_critic.pth")
    print(f"# python -m benchmarks.eval_checkpoints{'' if args.episodes == 100 else f' --episodes {args.episodes}'}")
    for arms, seed in RUNS:
        s = evaluate(agent, args.episodes, arms, seed, progress=False)
        print(f"{arms} arm(s), {args.episodes} episodes, seed {seed}: mean {s.mean():.2f} (episodes from {s.min():.2f} to {s.max():.2f})",
              flush=True)


if __name__ == "__main__":
    main()
