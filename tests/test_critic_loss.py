"""One critic loss for every variant: ``Agent.critic_loss`` in ddpg_agent.py is the loss of each critic's
values for plain DDPG, TD3's twins, REDQ's ensemble and prioritized replay's weighted batch alike, and it
computes today's numbers (the mean squared error; importance-weighted for prioritized replay)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ddpg.variants import VariantAgent, parse_config
from ddpg_agent import Agent

SMALL = {"buffer_size": 2000, "batch_size": 16, "warmup": 10_000}  # no update while filling
VARIANTS = {"ddpg": None, "td3": {"preset": "td3"}, "redq": {"preset": "redq"},
            "prioritized": {"replay": "prioritized"}, "crossq": {"preset": "crossq"}}


def filled(variant: dict | None) -> Agent:
    agent = Agent(5, 2, 0, **SMALL) if variant is None else VariantAgent(5, 2, 0, config=parse_config({**SMALL, **variant}))
    rng = np.random.default_rng(0)
    for _ in range(20):
        states = rng.normal(size=(4, 5))
        agent.step(states, rng.uniform(-1, 1, (4, 2)), rng.normal(size=4), rng.normal(size=(4, 5)))
    return agent


def critic_after_one_update(variant: dict | None) -> list[torch.Tensor]:
    agent = filled(variant)
    torch.manual_seed(1)  # TD3's target noise, REDQ's subset
    agent.learn(agent.memory.sample())
    return [p.detach().clone() for p in agent.critic_local.parameters()]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_an_edit_of_agent_critic_loss_reaches_every_variant(monkeypatch, name: str) -> None:
    """A Huber loss written into Agent.critic_loss changes the critic's update of each variant."""
    before = critic_after_one_update(VARIANTS[name])
    calls: list[int] = []

    def huber(self: Agent, states: torch.Tensor | None, actions: torch.Tensor | None, y: torch.Tensor,
              q: torch.Tensor | None = None, weights: torch.Tensor | None = None) -> torch.Tensor:
        calls.append(1)
        losses = F.huber_loss(self.critic_local(states, actions) if q is None else q, y, reduction="none", delta=0.01)
        return losses.mean() if weights is None else (weights * losses).mean()

    monkeypatch.setattr(Agent, "critic_loss", huber)
    after = critic_after_one_update(VARIANTS[name])
    assert calls, f"{name}: Agent.critic_loss was not called"
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True)), f"{name}: the edit changed nothing"


def old_loss(agent: Agent, experiences: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """The critic losses as each variant wrote them before they went through Agent.critic_loss."""
    states, actions, rewards, next_states, discounts, *drawn = experiences
    y = agent.td_target(rewards, next_states, discounts)
    if not isinstance(agent, VariantAgent):
        return F.mse_loss(agent.critic_local(states, actions), y)
    values = agent.critic_values(states, actions)
    if drawn:
        return sum((drawn[0] * (q - y).pow(2)).mean() for q in values)
    return sum((q - y).pow(2).mean() for q in values)


@pytest.mark.parametrize("name", ["ddpg", "td3", "redq", "prioritized"])
def test_the_loss_and_its_gradients_are_todays_bit_for_bit(name: str) -> None:
    agent = filled(VARIANTS[name])
    if name == "prioritized":  # priorities apart, so the importance weights are not all 1
        rows = np.arange(len(agent.memory))
        agent.memory.update_priorities(torch.from_numpy(rows), torch.from_numpy(np.random.default_rng(2).random(len(rows))))
    experiences = agent.memory.sample()
    assert name != "prioritized" or experiences[5].min() < 0.9
    grads = []
    for new in (True, False):
        torch.manual_seed(1)
        if new:
            states, actions, rewards, next_states, discounts, *drawn = experiences
            if drawn:
                agent.importance = drawn[0]
            loss = agent.critic_loss(states, actions, agent.td_target(rewards, next_states, discounts))
        else:
            loss = old_loss(agent, experiences)
        agent.critic_optimizer.zero_grad()
        loss.backward()
        grads.append((loss.detach(), [p.grad.clone() for p in agent.critic_local.parameters()]))
    (new_loss, new_grads), (old, old_grads) = grads
    assert torch.equal(new_loss, old)
    assert all(torch.equal(a, b) for a, b in zip(new_grads, old_grads, strict=True))
