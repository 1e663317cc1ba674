"""Score the committed checkpoints with the greedy policy (no noise), as the course reloads them.

    .venv/bin/python benchmarks/eval_checkpoints.py     # 100 episodes of 20 arms, then 100 of 1 arm

Prints, per environment size, the mean over episodes of the per-episode score averaged
over the arms, and the lowest and highest episode. The seeds are the ones
tests/test_checkpoints.py uses, so its assertions and these figures are the same runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ddpg_agent import Agent  # noqa: E402
from reacher import BRAIN_NAME, ReacherEnvironment  # noqa: E402

RUNS = ((20, 2024), (1, 2025))  # (arms, environment seed)


def greedy_scores(agent: Agent, num_agents: int, episodes: int, seed: int) -> np.ndarray:
    env = ReacherEnvironment(num_agents=num_agents, seed=seed, verbose=False)
    means = []
    try:
        for _ in range(episodes):
            states = env.reset(train_mode=True)[BRAIN_NAME].vector_observations
            score = np.zeros(num_agents)
            while True:
                info = env.step(agent.act(states, add_noise=False))[BRAIN_NAME]
                score += info.rewards
                states = info.vector_observations
                if any(info.local_done):
                    break
            means.append(score.mean())
    finally:
        env.close()
    return np.array(means)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100)
    args = parser.parse_args()
    agent = Agent(state_size=33, action_size=4, random_seed=0)
    agent.actor_local.load_state_dict(torch.load(ROOT / "checkpoint_actor.pth", weights_only=True))
    agent.critic_local.load_state_dict(torch.load(ROOT / "checkpoint_critic.pth", weights_only=True))
    print(f"# python benchmarks/eval_checkpoints.py{'' if args.episodes == 100 else f' --episodes {args.episodes}'}")
    for arms, seed in RUNS:
        s = greedy_scores(agent, arms, args.episodes, seed)
        print(f"{arms} arm(s), {args.episodes} episodes, seed {seed}: mean {s.mean():.2f} (episodes from {s.min():.2f} to {s.max():.2f})",
              flush=True)


if __name__ == "__main__":
    main()
