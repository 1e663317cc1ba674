"""The committed checkpoints, loaded exactly as a course user would, solve the task."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from ddpg_agent import Agent
from reacher import ReacherEnvironment

ROOT = Path(__file__).resolve().parents[1]
ACTOR = ROOT / "checkpoint_actor.pth"
CRITIC = ROOT / "checkpoint_critic.pth"


@pytest.fixture(scope="module")
def agent() -> Agent:
    assert ACTOR.exists() and CRITIC.exists(), "checkpoint_actor.pth / checkpoint_critic.pth must be committed (make run)"
    agent = Agent(state_size=33, action_size=4, random_seed=0)
    agent.actor_local.load_state_dict(torch.load(ACTOR, weights_only=True))
    agent.critic_local.load_state_dict(torch.load(CRITIC, weights_only=True))
    return agent


def evaluate(agent: Agent, num_agents: int, episodes: int, seed: int) -> np.ndarray:
    """Per-episode score averaged over agents, greedy policy (no exploration noise)."""
    env = ReacherEnvironment(num_agents=num_agents, seed=seed, verbose=False)
    means = []
    for _ in range(episodes):
        states = env.reset(train_mode=True)["ReacherBrain"].vector_observations
        score = np.zeros(num_agents)
        while True:
            info = env.step(agent.act(states, add_noise=False))["ReacherBrain"]
            score += info.rewards
            states = info.vector_observations
            if any(info.local_done):
                break
        means.append(score.mean())
    env.close()
    return np.array(means)


@pytest.mark.timeout(900)
def test_committed_checkpoints_score_30_over_100_episodes_of_20_agents(agent):
    means = evaluate(agent, num_agents=20, episodes=100, seed=2024)
    assert means.mean() >= 30.0, f"mean {means.mean():.2f} over 100 episodes"


@pytest.mark.timeout(900)
def test_committed_checkpoints_score_30_over_100_episodes_of_1_agent(agent):
    means = evaluate(agent, num_agents=1, episodes=100, seed=2025)
    assert means.mean() >= 30.0, f"mean {means.mean():.2f} over 100 episodes"


def test_run_record_describes_the_committed_run():
    record = json.loads((ROOT / "checkpoint_run.json").read_text())
    assert record["solved_at_episode"] is not None and record["solved_at_episode"] >= 100
    assert record["seed"] == 0 and record["wall_time_s"] > 0 and not record["interrupted"]
    assert record["git_commit"] and record["command"]
    # The committed weights are the ones that run produced (the config matches the defaults).
    from ddpg_agent import DDPGConfig

    assert record["config"] == DDPGConfig().to_dict()
