"""The fast decisions (ddpg.backends.fast_steps) are Agent.act and Agent.step, bitwise, wherever the loop takes them:
whole training runs compared with the same runs on the readable decisions, in one process."""

from __future__ import annotations

import types
from typing import ClassVar

import numpy as np
import pytest
import torch

import ddpg_agent
from ddpg import backends
from ddpg.backends.fast_steps import FastSteps
from ddpg.loop import train
from ddpg_agent import Agent, DDPGConfig
from reacher import ReacherEnvironment

SMALL = {"batch_size": 32, "warmup": 200, "learn_every": 5, "learn_updates": 2}


class FallingArms:
    """A small unityagents-like world whose arms end their episodes at different steps (terminal
    states and arms leaving), so every path of the n-step returns is taken."""

    brain_names: ClassVar[list[str]] = ["arm"]

    def __init__(self, n: int = 4, seed: int = 1) -> None:
        self.n, self.rng = n, np.random.default_rng(seed)
        self.w = self.rng.standard_normal((33, 33)) * 0.2
        self.u = self.rng.standard_normal((4, 33)) * 0.5

    def _info(self, done: np.ndarray, limit: np.ndarray) -> dict[str, types.SimpleNamespace]:
        return {"arm": types.SimpleNamespace(vector_observations=self.states.copy(), rewards=self.rewards.tolist(),
                                             local_done=done.tolist(), max_reached=limit.tolist())}

    def reset(self, train_mode: bool = True) -> dict[str, types.SimpleNamespace]:
        self.states, self.t = self.rng.standard_normal((self.n, 33)), 0
        self.rewards = np.zeros(self.n)
        self.ends = 10 + self.rng.integers(0, 25, self.n)  # each arm's last step; arm 0 runs to the time limit
        return self._info(np.zeros(self.n, bool), np.zeros(self.n, bool))

    def step(self, actions: np.ndarray) -> dict[str, types.SimpleNamespace]:
        self.t += 1
        self.states = np.tanh(self.states @ self.w + np.asarray(actions) @ self.u)
        self.rewards = np.round(0.1 * (self.states[:, 0] > 0) + 0.01 * self.t, 6)
        done = self.t >= self.ends
        done[0] = self.t >= 40
        return self._info(done, np.arange(self.n) == 0)


def _run(env_factory, decisions: bool, episodes: int, max_t: int, **config) -> tuple[np.ndarray, Agent]:
    agent = Agent(33, 4, 0, config=DDPGConfig(**{**SMALL, **config}))
    backends.attach(agent, "fast", threads=1)
    assert isinstance(agent.backend.decisions, FastSteps)
    if not decisions:
        agent.backend.decisions = None
    scores = train(env_factory(), agent, episodes=episodes, max_t=max_t, target_score=None, good_score=None)
    return scores, agent


def _state(agent: Agent) -> dict[str, np.ndarray]:
    nets = (agent.actor_local, agent.critic_local, agent.actor_target, agent.critic_target)
    pending = [x for step in agent.returns.steps for x in step]
    return {"weights": torch.cat([p.detach().reshape(-1) for net in nets for p in net.parameters()]).numpy(),
            "buffer": agent.memory.data[:len(agent.memory)].numpy(), "position": np.array([agent.memory.pos]),
            "noise": agent.noise.state, "rng": np.array(agent.noise.rng.bit_generator.state["state"]["state"], dtype=object),
            "pending": np.concatenate([np.ravel(x) for x in pending]) if pending else np.zeros(0),
            "last": np.asarray(agent.returns.last_states), "counts": np.array([agent.t_step, agent.n_updates])}


def _same_runs(env_factory, episodes: int, max_t: int, **config) -> Agent:
    (fast_scores, fast), (scores, readable) = (_run(env_factory, d, episodes, max_t, **config) for d in (True, False))
    np.testing.assert_array_equal(fast_scores, scores)
    a, b = _state(fast), _state(readable)
    for key in a:
        assert np.array_equal(a[key], b[key]), f"{key} differs between the fast and the readable decisions"
    assert fast.n_updates > 0
    return fast


@pytest.mark.parametrize("config", [{"buffer_size": 2010}, {"n_step": 1, "buffer_size": 5000},
                                    {"n_step": 5, "gamma": 0.9, "buffer_size": 1990}],
                         ids=["3-step, the buffer wraps", "1-step", "5-step, wraps"])
def test_training_on_reacher_is_bitwise_the_readable_decisions(config) -> None:
    agent = _same_runs(lambda: ReacherEnvironment(num_agents=20, seed=3, verbose=False), 3, 60, **config)
    assert agent.memory.size == agent.memory.capacity or config.get("n_step") == 1  # the wrap was taken


def test_terminal_states_and_arms_leaving_take_the_readable_paths_with_the_same_numbers() -> None:
    _same_runs(FallingArms, 6, 60, buffer_size=700)


def test_the_noise_draws_into_its_array_as_the_readable_draw_does() -> None:
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    out = np.empty((20, 4))
    for _ in range(3):
        a.standard_normal(out=out)
        assert np.array_equal(out, b.standard_normal((20, 4)))


def _plain() -> Agent:
    return Agent(33, 4, 0, config=DDPGConfig(**SMALL))


class LouderNoise(ddpg_agent.OUNoise):
    def sample(self, n: int = 1) -> np.ndarray:
        return 2.0 * super().sample(n)


class HalvedRewards(ddpg_agent.ReplayBuffer):
    def add(self, states, actions, rewards, next_states, discounts) -> None:
        super().add(states, actions, 0.5 * np.asarray(rewards), next_states, discounts)


# Each edit of a part the fast decisions restate, as a patch or a subclass: the fast update stays, the decisions are
# the loaded code's, and the line names the part.
EDITS = {
    "Agent.act": lambda agent: setattr(agent, "act", types.MethodType(lambda self, s, add_noise=True: Agent.act(self, s, False),
                                                                     agent)),
    "OUNoise.sample": lambda agent: setattr(agent, "noise", LouderNoise(4, 0)),
    "ReplayBuffer.add": lambda agent: setattr(agent.memory, "__class__", HalvedRewards),
    "NStepReturns.transitions": lambda agent: setattr(agent.returns, "transitions", lambda *a: ()),
    "NStepReturns.push": lambda agent: setattr(agent.returns, "push", lambda *a: []),
}


@pytest.mark.parametrize("part", sorted(EDITS))
def test_an_edit_of_a_restated_decision_part_runs_as_loaded(part, capsys) -> None:
    agent = _plain()
    EDITS[part](agent)
    name = backends.attach(agent, "auto", threads=1)
    line = capsys.readouterr().out.strip()
    assert name == "fast" and agent.backend.decisions is None
    assert len(line.splitlines()) == 1 and part in line


def test_an_edit_of_len_or_a_class_method_is_seen_too(monkeypatch, capsys) -> None:
    monkeypatch.setattr(ddpg_agent.ReplayBuffer, "__len__", lambda self: self.size + 1)
    agent = _plain()
    backends.attach(agent, "auto", threads=1)
    assert agent.backend.decisions is None and "ReplayBuffer.__len__" in capsys.readouterr().out


def test_unedited_code_takes_the_fast_decisions_and_says_so(capsys) -> None:
    agent = _plain()
    backends.attach(agent, "auto", threads=1)
    line = capsys.readouterr().out
    assert isinstance(agent.backend.decisions, FastSteps) and "fast_steps.py" in line


def test_a_data_only_variant_keeps_its_own_step(capsys) -> None:
    from ddpg.variants.agent import VariantAgent
    from ddpg.variants.config import VariantConfig

    agent = VariantAgent(33, 4, 0, config=VariantConfig(**SMALL, goal_paths=1))  # its piece wraps step
    name = backends.attach(agent, "auto", threads=1)
    assert name == "fast" and agent.backend.decisions is None and "variant" in capsys.readouterr().out
