"""The critic variants for learning more per transition: REDQ's ensemble and CrossQ's critic."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ddpg.variants import VariantAgent, parse_config
from ddpg.variants.crossq import D_MAX, R_MAX, BatchRenorm1d, RenormCritic
from ddpg.variants.ensemble import CriticEnsemble
from model import Critic

SMALL = {"buffer_size": 2000, "batch_size": 32, "warmup": 64, "learn_every": 5, "learn_updates": 2}


def filled_agent(variant: dict, steps: int = 20) -> VariantAgent:
    """An agent of the variant with a few hundred transitions and a few updates behind it."""
    agent = VariantAgent(33, 4, 0, config=parse_config({**SMALL, **variant}))
    rng = np.random.default_rng(0)
    states = rng.normal(size=(8, 33))
    for _ in range(steps):
        next_states = rng.normal(size=(8, 33))
        agent.step(states, agent.act(states), rng.normal(size=8), next_states)
        states = next_states
    return agent


# ----------------------------------------------------------------------------- ensemble
@pytest.mark.parametrize("layer_norm", [False, True])
def test_ensemble_members_are_model_critics_run_together(layer_norm) -> None:
    """Member i computes model.Critic(seed + i): its weights, its layer norm, its Q."""
    def make(seed: int) -> Critic:
        return Critic(33, 4, seed, 64, 32, layer_norm)

    ensemble = CriticEnsemble(make, 5, 4)
    with torch.no_grad():  # gains and shifts away from their initial 1 and 0, so a mix-up would show
        for i, p in enumerate(p for name, p in ensemble.named_parameters() if name.startswith("ln")):
            p.add_(0.1 * (i + 1) * torch.randn(p.shape, generator=torch.Generator().manual_seed(i)))
    members = [make(5 + i) for i in range(4)]
    if layer_norm:
        for i, member in enumerate(members):
            for ln in ("ln1", "ln2"):
                getattr(member, ln).weight.data = getattr(ensemble, f"{ln}__weight")[i].detach().clone()
                getattr(member, ln).bias.data = getattr(ensemble, f"{ln}__bias")[i].detach().clone()
    state, action = torch.randn(16, 33), torch.rand(16, 4) * 2 - 1
    every = ensemble.all(state, action)
    assert every.shape == (4, 16, 1)
    for i, member in enumerate(members):
        torch.testing.assert_close(every[i], member(state, action), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(ensemble(state, action), every.mean(0))
    picked = ensemble.all(state, action, torch.tensor([3, 1]))
    torch.testing.assert_close(picked, every[[3, 1]])
    assert not torch.allclose(every[0], every[1])  # different seeds, different critics


def test_subset_min_draws_members_afresh_from_torchs_generator() -> None:
    ensemble = CriticEnsemble(lambda seed: Critic(33, 4, seed, 32, 32), 0, 6)
    state, action = torch.randn(64, 33), torch.rand(64, 4)
    every = ensemble.all(state, action)
    torch.manual_seed(11)
    members = torch.rand(6).argsort()[:2]
    torch.manual_seed(11)
    torch.testing.assert_close(ensemble.subset_min(state, action, 2), every[members].min(0).values)
    torch.testing.assert_close(ensemble.subset_min(state, action, 6), every.min(0).values)  # all: the minimum
    torch.manual_seed(0)
    draws = {tuple(sorted(torch.rand(6).argsort()[:2].tolist())) for _ in range(200)}
    assert len(draws) == 15  # every pair of six comes up


def test_ensemble_agent_learns_every_member_from_one_target() -> None:
    agent = filled_agent({"ensemble": 3, "ensemble_subset": 2})
    assert isinstance(agent.critic_local, CriticEnsemble) and isinstance(agent.critic_target, CriticEnsemble)
    before = agent.critic_local.fc3__weight.detach().clone()
    agent.learn_many(1)
    moved = (agent.critic_local.fc3__weight - before).flatten(1).abs().amax(1)
    assert (moved > 0).all()  # each of the three learned
    # The target: rewards + discount times the smaller target value of the pair the generator draws.
    _, _, rewards, next_states, discounts = agent.memory.sample()
    torch.manual_seed(3)
    y = agent.td_target(rewards, next_states, discounts)
    torch.manual_seed(3)
    with torch.no_grad():
        values = agent.critic_target.all(next_states, agent.actor_target(next_states))
    members = torch.rand(3).argsort()[:2]
    torch.testing.assert_close(y, rewards + discounts * values[members].min(0).values)


def test_ensemble_settings_are_checked() -> None:
    assert parse_config({"preset": "redq"}).variants() == {"ensemble": 10}
    with pytest.raises(ValueError, match=r"ensemble_subset must be at most ensemble \(3\), got 4"):
        parse_config({"ensemble": 3, "ensemble_subset": 4})
    with pytest.raises(ValueError, match="ensemble_subset is set but does nothing without ensemble > 1"):
        parse_config({"ensemble_subset": 3})
    with pytest.raises(ValueError, match="ensemble is not combined here with twin_critics"):
        parse_config({"ensemble": 4, "twin_critics": True})
    with pytest.raises(ValueError, match="ensemble must be a whole number >= 1, got 0"):
        parse_config({"ensemble": 0})


# ----------------------------------------------------------------------------- CrossQ
def test_batch_renorm_is_batch_norm_while_warming_up_then_renormalises() -> None:
    torch.manual_seed(0)
    layer = BatchRenorm1d(5, warmup=2)
    x = torch.randn(64, 5) * 5 + 8
    # Warming up: plain batch norm in training mode, running statistics as nn.BatchNorm1d's.
    reference = torch.nn.BatchNorm1d(5, eps=1e-3, momentum=0.01)
    torch.testing.assert_close(layer(x), reference(x))
    torch.testing.assert_close(layer.running_mean, reference.running_mean)
    torch.testing.assert_close(layer.running_var, reference.running_var)
    layer(x)
    assert int(layer.steps) == 2
    # Warm: x_hat * r + d, r and d from the running statistics, clipped.
    mean, var = x.mean(0), x.var(0, unbiased=False)
    std, running_std = (var + 1e-3).sqrt(), (layer.running_var + 1e-3).sqrt()
    r = (std / running_std).clamp(1 / R_MAX, R_MAX)
    d = ((mean - layer.running_mean) / running_std).clamp(-D_MAX, D_MAX)
    assert (r == R_MAX).any() and (d.abs() == D_MAX).any()  # the running statistics are far off: clipped
    torch.testing.assert_close(layer(x), (x - mean) / std * r + d)
    # Evaluation: the running statistics only, and they stay.
    layer.eval()
    running = layer.running_mean.clone()
    torch.testing.assert_close(layer(x), (x - running) / (layer.running_var + 1e-3).sqrt())
    assert torch.equal(layer.running_mean, running) and int(layer.steps) == 3


def test_crossq_needs_no_target_networks() -> None:
    """The update is the same whatever the target copies hold: CrossQ never reads them."""
    first, second = filled_agent({"preset": "crossq"}), filled_agent({"preset": "crossq"})
    assert isinstance(first.critic_local.q1, RenormCritic) and not first.config.critic_layer_norm
    with torch.no_grad():
        for p in (*second.critic_target.parameters(), *second.actor_target.parameters()):
            p.uniform_(-5, 5)
    state = torch.get_rng_state()
    first.learn_many(3)
    torch.set_rng_state(state)
    second.learn_many(3)
    for a, b in zip(first.critic_local.state_dict().values(), second.critic_local.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    for a, b in zip(first.actor_local.parameters(), second.actor_local.parameters(), strict=True):
        assert torch.equal(a, b)


def test_crossq_target_comes_from_the_joint_batch() -> None:
    """Q(s', mu(s')) is read in the same training-mode pass as Q(s, a): one set of batch statistics."""
    agent = filled_agent({"crossq": True})
    critic = agent.critic_local
    states, actions, rewards, next_states, discounts = agent.memory.sample()
    seen, steps = [], int(critic.bn1.steps)
    hook = critic.bn1.register_forward_hook(lambda module, inputs, output: seen.append(len(inputs[0])))
    try:
        agent.learn((states, actions, rewards, next_states, discounts))
    finally:
        hook.remove()
    assert seen == [2 * len(states), len(states)]  # the joint pass (training mode), then the actor's...
    assert int(critic.bn1.steps) == steps + 1  # ...under the running statistics, which it leaves as they are
    assert critic.training and not agent.actor_target.training


def test_crossq_with_sac_takes_the_soft_target_from_the_joint_batch() -> None:
    """With SAC behind it, CrossQ's target is r + d (min Q(s', a') - alpha log pi(a'|s')): a' SAC's own draw,
    Q(s', a') the learning critics' in the joint training-mode pass, and no target network read."""
    agent = filled_agent({"preset": "crossq", "sac": True})
    with torch.no_grad():
        agent.actor_local.log_alpha.fill_(np.log(0.3))
        for p in (*agent.critic_target.parameters(), *agent.actor_target.parameters()):
            p.uniform_(-5, 5)  # read anywhere, these would show
    states, actions, rewards, next_states, discounts = agent.memory.sample()
    critic = agent.critic_local
    before = {k: v.clone() for k, v in critic.state_dict().items()}
    torch.manual_seed(3)
    loss = agent.critic_loss(states, actions, agent.td_target(rewards, next_states, discounts))
    critic.load_state_dict(before)  # the batch statistics as the pass found them
    torch.manual_seed(3)
    with torch.no_grad():
        next_actions, log_prob = agent.actor_local(next_states, torch.randn(len(next_states), 4))
    q1, q2 = critic.both(torch.cat((states, next_states)), torch.cat((actions, next_actions)))
    n = len(states)
    y = rewards + discounts * (torch.min(q1[n:], q2[n:]).detach() - 0.3 * log_prob)
    torch.testing.assert_close(loss, F.mse_loss(q1[:n], y) + F.mse_loss(q2[:n], y))
    hard = rewards + discounts * torch.min(q1[n:], q2[n:]).detach()  # the entropy term is there, and counts
    assert not torch.allclose(loss, F.mse_loss(q1[:n], hard) + F.mse_loss(q2[:n], hard))


def test_crossq_settings() -> None:
    config = parse_config({"preset": "crossq"})
    assert config.variants() == {"twin_critics": True, "policy_delay": 3, "crossq": True}
    assert config.critic_layer_norm is False
    with pytest.raises(ValueError, match="crossq has its own normalisation"):
        parse_config({"crossq": True, "critic_layer_norm": True})
    with pytest.raises(ValueError, match="renorm_warmup is set but does nothing without crossq True"):
        parse_config({"renorm_warmup": 10})


def test_renorm_critic_starts_as_model_critic() -> None:
    """Same layers, same initial weights: with identity normalisation it is model.Critic."""
    renorm, plain = RenormCritic(33, 4, 2, 32, 16), Critic(33, 4, 2, 32, 16)
    for name, p in plain.named_parameters():
        assert torch.equal(p, dict(renorm.named_parameters())[name])
    renorm.eval()  # running statistics 0 and 1: (x - 0) / sqrt(1 + eps)
    state, action = torch.randn(8, 33), torch.rand(8, 4)
    scale = (1 + 1e-3) ** -0.5
    xs = F.relu(renorm.fcs1(state * scale) * scale)
    expected = renorm.fc3(F.relu(renorm.fc2(torch.cat((xs, action), 1)) * scale))
    torch.testing.assert_close(renorm(state, action), expected)
