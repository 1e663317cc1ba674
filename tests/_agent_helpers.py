"""Small helpers for the agent and training tests: a fast fake environment with the
unityagents 0.4 interface and a filled replay buffer, so tests need not run MuJoCo."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ddpg_agent import Agent

# Small, quick learning settings: a few dozen decisions of two arms already run updates. The tests that train
# through train.py or the agent take these (as ``--config`` JSON, QUICK_JSON); conftest's ``quick_learning`` fixture
# hands out a copy.
QUICK_LEARNING = {"buffer_size": 5000, "batch_size": 32, "warmup": 64, "learn_every": 5, "learn_updates": 2}
QUICK_JSON = json.dumps(QUICK_LEARNING)


@dataclass
class FakeBrain:
    """The two fields of unityagents' BrainParameters that train.py reads."""

    vector_observation_space_size: int = 33
    vector_action_space_size: int = 4


@dataclass
class FakeInfo:
    """BrainInfo-like record."""

    vector_observations: np.ndarray
    rewards: list[float]
    local_done: list[bool]
    max_reached: list[bool] = field(default_factory=list)


class FakeEnv:
    """Deterministic stand-in: random observations, a constant reward per decision,
    done (time limit) after ``episode_len`` decisions; optionally raises
    KeyboardInterrupt during a given episode to test Ctrl-C handling."""

    def __init__(self, num_agents: int = 2, seed: int = 0, reward: float = 0.04,
                 episode_len: int = 1000, interrupt_in_episode: int | None = None) -> None:
        self.brain_names = ["ReacherBrain"]
        self.brains = {"ReacherBrain": FakeBrain()}
        self.n = num_agents
        self.rng = np.random.default_rng(seed)
        self.reward = reward
        self.episode_len = episode_len
        self.interrupt_in_episode = interrupt_in_episode
        self.episode = 0
        self.t = 0
        self.closed = False

    def _info(self, done: bool) -> dict[str, FakeInfo]:
        obs = self.rng.standard_normal((self.n, 33))
        return {"ReacherBrain": FakeInfo(obs, [self.reward] * self.n, [done] * self.n, [done] * self.n)}

    def reset(self, train_mode: bool = True) -> dict[str, FakeInfo]:
        self.episode += 1
        self.t = 0
        info = self._info(False)
        info["ReacherBrain"].rewards = [0.0] * self.n
        return info

    def step(self, actions: np.ndarray) -> dict[str, FakeInfo]:
        actions = np.asarray(actions)
        assert actions.shape == (self.n, 4) and np.all(np.abs(actions) <= 1.0)
        if self.interrupt_in_episode == self.episode and self.t == 3:
            raise KeyboardInterrupt
        self.t += 1
        return self._info(self.t >= self.episode_len)

    def close(self) -> None:
        self.closed = True


def fill(agent: Agent, n: int = 2000, seed: int = 0) -> Agent:
    """Put n random transitions into the agent's buffer; return the agent."""
    rng = np.random.default_rng(seed)
    agent.memory.add(rng.standard_normal((n, 33)), rng.uniform(-1, 1, (n, 4)),
                     rng.uniform(0, 0.04, n), rng.standard_normal((n, 33)), 0.99)
    return agent


def filled_agent(seed: int = 0, n: int = 2000, **overrides: object) -> Agent:
    """A readable agent whose buffer holds n random transitions (batch 64)."""
    opts: dict[str, object] = {"buffer_size": 10_000, "batch_size": 64}
    opts.update(overrides)
    return fill(Agent(33, 4, seed, **opts), n, seed)


def as_recorded(config) -> dict:
    """A config's dict as a run records it: widths left to model.py (None) as model.py builds them."""
    from dataclasses import replace

    built = Agent(33, 4, 0, buffer_size=16).config
    return replace(config, **{k: getattr(built, k) for k in ("actor_fc1", "actor_fc2", "critic_fc1", "critic_fc2")
                              if getattr(config, k) is None}).to_dict()


def resumed_as_whole(tmp_path: Any, base: list[str], episodes: int = 3, stopped_after: int = 2) -> tuple[Any, Any]:
    """train.py ``base`` for ``episodes`` in one go (``whole``) and, in another folder, for ``stopped_after``
    then ``--resume`` to ``episodes`` (``parts``); asserts the two end with the same scores.csv and, bit for bit,
    the same checkpoints (``base`` must save the buffer: ``--save-buffer``). The two folders, for more checks."""
    import torch

    import train as train_mod

    whole, parts = tmp_path / "whole", tmp_path / "parts"
    assert train_mod.main([*base, "--episodes", str(episodes), "--out", str(whole)]) == 0
    assert train_mod.main([*base, "--episodes", str(stopped_after), "--out", str(parts)]) == 0
    assert train_mod.main(["--resume", str(parts), "--episodes", str(episodes), "--no-progress", "--quiet"]) == 0
    a = np.loadtxt(whole / "scores.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(a, np.loadtxt(parts / "scores.csv", delimiter=",", skiprows=1))
    for name in ("checkpoint_actor.pth", "checkpoint_critic.pth"):
        x, y = torch.load(whole / name), torch.load(parts / name)
        assert x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x), name
    return whole, parts
