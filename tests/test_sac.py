"""The SAC variant (ddpg/variants/sac.py): its policy's log-probability, the soft TD target, the
actor's and the temperature's losses, acting, and a Crawler run that resumes exactly and plays
greedily through evaluate.py and watch.py."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch.distributions import Normal, TanhTransform, TransformedDistribution

from ddpg.variants import VariantAgent, parse_config
from ddpg.variants.sac import LOG_STD_MAX, LOG_STD_MIN, SquashedGaussianActor
from tests._agent_helpers import resumed_as_whole

SMALL = {"buffer_size": 2000, "batch_size": 16, "warmup": 32, "learn_every": 2, "learn_updates": 2}


def sac_agent(**extra) -> VariantAgent:
    return VariantAgent(6, 3, 0, config=parse_config({**SMALL, "preset": "sac", **extra}))


@pytest.mark.parametrize("seed", range(6))
def test_log_probability_is_the_squashed_gaussians(seed) -> None:
    """Against torch.distributions' tanh-transformed Normal, over states and draws of every size."""
    actor = SquashedGaussianActor(5, 4, seed, fc1_units=16, fc2_units=8)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        actor.log_std.bias.uniform_(-3.0, 1.0, generator=g)  # stds well away from 1
        states, noise = 3 * torch.randn(64, 5, generator=g), torch.randn(64, 4, generator=g)
        actions, log_prob = actor(states, noise)
        h = torch.relu(actor.fc2(torch.relu(actor.fc1(states))))
        mean, std = actor.fc3(h), actor.log_std(h).clamp(LOG_STD_MIN, LOG_STD_MAX).exp()
        policy = TransformedDistribution(Normal(mean, std), [TanhTransform()])
        u = mean + std * noise
        expected = policy.log_prob(torch.tanh(u).clamp(-1 + 1e-6, 1 - 1e-6)).sum(-1, keepdim=True)
    assert log_prob.shape == (64, 1)
    torch.testing.assert_close(actions, torch.tanh(u))
    far = (u.abs() > 4).any(dim=1)  # tanh saturates in float32 there: the distribution's own value is the inexact one
    torch.testing.assert_close(log_prob[~far], expected[~far], rtol=1e-4, atol=1e-3)
    assert (~far).sum() > 40


def test_greedy_action_is_the_mean_squashed_and_training_acts_by_samples() -> None:
    agent = sac_agent()
    states = np.random.default_rng(0).normal(size=(5, 6))
    with torch.no_grad():
        mean = agent.actor_local(torch.as_tensor(states, dtype=torch.float32)).numpy()
    np.testing.assert_allclose(agent.act(states, add_noise=False), mean, rtol=1e-6)
    rng_state = agent.noise.rng.bit_generator.state
    sampled = agent.act(states)
    agent.noise.rng.bit_generator.state = rng_state  # the same draws give the same sample: the agent's noise is its source
    np.testing.assert_array_equal(agent.act(states), sampled)
    assert np.abs(sampled - mean).max() > 0.1 and np.abs(sampled).max() <= 1.0


def filled(agent: VariantAgent, n: int = 64) -> tuple[torch.Tensor, ...]:
    rng = np.random.default_rng(1)
    for _ in range(n // 4):
        states = rng.normal(size=(4, 6))
        agent.memory.add(states, rng.uniform(-1, 1, (4, 3)), rng.normal(size=4), rng.normal(size=(4, 6)),
                         rng.choice([0.0, 0.99], 4))
    return agent.memory.sample()


def test_soft_td_target_takes_the_smaller_target_value_less_the_entropy_term() -> None:
    agent = sac_agent()
    with torch.no_grad():
        agent.actor_local.log_alpha.fill_(np.log(0.3))
        agent.actor_local.fc3.bias.add_(0.3)  # the actor now differs from its target copy, which SAC does not use
    _, _, rewards, next_states, discounts = filled(agent)
    torch.manual_seed(5)
    y = agent.td_target(rewards, next_states, discounts)
    torch.manual_seed(5)
    with torch.no_grad():
        actions, log_prob = agent.actor_local(next_states, torch.randn(len(next_states), 3))
        q1, q2 = agent.critic_target.both(next_states, actions)
        expected = rewards + discounts * (torch.min(q1, q2) - 0.3 * log_prob)
    torch.testing.assert_close(y, expected)


def test_actor_and_temperature_each_take_their_own_gradient() -> None:
    """The actor's gradient is that of mean(alpha log pi - min Q), alpha fixed; the temperature's that of
    -log alpha (log pi + target entropy), the policy fixed (the same draws for both)."""
    agent = sac_agent()
    states = filled(agent)[0]
    with torch.no_grad():
        agent.actor_local.log_alpha.fill_(np.log(0.5))
    torch.manual_seed(2)
    agent.actor_local.zero_grad()
    agent.actor_loss(states).backward()
    got = {n: p.grad.clone() for n, p in agent.actor_local.named_parameters()}
    torch.manual_seed(2)
    agent.actor_local.zero_grad()
    actions, log_prob = agent.actor_local(states, torch.randn(len(states), 3))
    q = torch.min(*agent.critic_local.both(states, actions))
    (0.5 * log_prob - q).mean().backward()
    for name, p in agent.actor_local.named_parameters():
        if name != "log_alpha":
            torch.testing.assert_close(got[name], p.grad, msg=name)
    torch.testing.assert_close(got["log_alpha"], -(log_prob.detach() - 3).mean())


@pytest.mark.parametrize("log_std, falls", [(0.0, True), (-4.0, False)])
def test_the_temperature_learns_towards_the_target_entropy(log_std, falls) -> None:
    """The target is -1 nat a dimension: a policy of std 1 before the squash has more (about +0.5), so alpha
    falls; one of std 0.02 has less (about -2.6), so alpha rises. The policy is held still, so only the
    temperature's own loss moves it."""
    agent = sac_agent(learn_every=1, learn_updates=1, lr_actor=1e-2)
    filled(agent, 256)
    with torch.no_grad():
        agent.actor_local.log_std.bias.fill_(log_std)
    for name, p in agent.actor_local.named_parameters():
        p.requires_grad_(name == "log_alpha")
    start = agent.exploration_scale()
    agent.learn_many(20)
    assert start == 1.0
    assert agent.exploration_scale() < 0.9 if falls else agent.exploration_scale() > 1.1


def test_what_sac_does_not_combine_with_is_refused() -> None:
    for other in ({"exploration": "gaussian"}, {"exploration": "noisy"}, {"target_noise": 0.2},
                  {"batch_norm": True}, {"preset": "td3"}):
        with pytest.raises(ValueError, match="sac"):
            parse_config({"sac": True, **other})


def test_a_crawler_run_resumes_exactly_and_plays_greedily(tmp_path) -> None:
    import evaluate as evaluate_mod
    import watch as watch_mod
    from ddpg.agents import agent_from_checkpoints, agent_from_run

    base = ["--env", "UnityCrawler-v0", "--num-envs", "2", "--max-t", "25", "--no-progress", "--quiet",
            "--save-buffer", "--config", json.dumps({"preset": "sac", "obs_norm": True, "warmup": 40, "batch_size": 16})]
    whole, _ = resumed_as_whole(tmp_path, base)
    saved = torch.load(whole / "checkpoint_actor.pth")
    assert float(saved["log_alpha"]) != 0.0  # the temperature learned, and travels with the actor
    for agent in (agent_from_run(whole), agent_from_checkpoints(whole / "checkpoint_actor.pth",
                                                                whole / "checkpoint_critic.pth")):
        assert isinstance(agent.actor_local, SquashedGaussianActor)
        assert torch.equal(agent.actor_local.log_alpha, saved["log_alpha"])
    assert watch_mod.main(["--run", str(whole), "--out", str(tmp_path / "c.gif"), "--steps", "3", "--every", "3"]) == 0
    assert evaluate_mod.main(["--run", str(whole), "--episodes", "1", "--agents", "2", "--no-progress",
                              "--out", str(tmp_path / "eval")]) == 0
    assert np.isfinite(json.loads((tmp_path / "eval" / "evaluation.json").read_text())["mean"])
