"""Tests of the readable agent (ddpg_agent.py): replay buffer, noise, networks, learning."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from ddpg.variants import parse_config, settings
from ddpg_agent import Agent, DDPGConfig, OUNoise, ReplayBuffer
from model import Actor, Critic
from tests._agent_helpers import filled_agent


def _transitions(n: int, start: int = 0) -> tuple[np.ndarray, ...]:
    """n transitions whose states carry their index in every column (to identify rows)."""
    idx = np.arange(start, start + n, dtype=np.float64)
    states = np.repeat(idx[:, None], 33, axis=1)
    actions = np.full((n, 4), 0.5)
    rewards = idx * 0.001
    next_states = states + 0.5
    return states, actions, rewards, next_states, np.full(n, 0.99)


# --------------------------------------------------------------------------- buffer
def test_buffer_adds_all_agents_at_once_with_shapes() -> None:
    buf = ReplayBuffer(33, 4, buffer_size=50, batch_size=8, seed=0)
    buf.add(*_transitions(20))
    assert len(buf) == 20
    assert buf.data.shape == (50, 33 + 4 + 1 + 33 + 1)
    np.testing.assert_allclose(buf.data[:20, 0].numpy(), np.arange(20))
    s, a, r, ns, d = buf.sample()
    assert s.shape == (8, 33) and a.shape == (8, 4) and r.shape == (8, 1)
    assert ns.shape == (8, 33) and d.shape == (8, 1)
    assert s.dtype == torch.float32
    # Each sampled row stays consistent across its fields.
    torch.testing.assert_close(ns, s + 0.5)
    torch.testing.assert_close(r[:, 0], s[:, 0] * 0.001)
    torch.testing.assert_close(d, torch.full((8, 1), 0.99))


def test_buffer_wraps_around() -> None:
    buf = ReplayBuffer(33, 4, buffer_size=50, batch_size=8, seed=0)
    for k in range(3):
        buf.add(*_transitions(20, start=100 * k))
    assert len(buf) == 50 and buf.pos == 10
    first_col = buf.data[:, 0].numpy()
    # Third batch (200..219): 200..209 went to rows 40..49, 210..219 wrapped to rows 0..9.
    np.testing.assert_allclose(first_col[40:50], np.arange(200, 210))
    np.testing.assert_allclose(first_col[0:10], np.arange(210, 220))
    np.testing.assert_allclose(first_col[10:20], np.arange(10, 20))  # oldest survivors
    np.testing.assert_allclose(first_col[20:40], np.arange(100, 120))


def test_buffer_sampling_covers_the_buffer() -> None:
    buf = ReplayBuffer(33, 4, buffer_size=64, batch_size=32, seed=1)
    buf.add(*_transitions(64))
    seen = set()
    for _ in range(50):
        seen.update(buf.sample()[0][:, 0].int().tolist())
    assert seen == set(range(64))


def test_buffer_samples_only_filled_rows() -> None:
    buf = ReplayBuffer(33, 4, buffer_size=1000, batch_size=256, seed=0)
    buf.add(*_transitions(5))
    values = buf.sample()[0][:, 0]
    assert values.max().item() <= 4


# ---------------------------------------------------------------------------- noise
def test_noise_is_zero_mean_and_mean_reverting() -> None:
    noise = OUNoise(4, seed=0, theta=0.15, sigma=0.2)
    samples = np.stack([noise.sample(20) for _ in range(5000)])
    assert samples.shape == (5000, 20, 4)
    assert abs(samples.mean()) < 0.02
    # Stationary OU: variance sigma^2 / (1 - (1 - theta)^2) per step; neighbours correlate
    # with 1 - theta.
    assert samples[100:].var() == pytest.approx(0.04 / (1 - 0.85 ** 2), rel=0.1)
    lag1 = np.corrcoef(samples[100:-1].ravel(), samples[101:].ravel())[0, 1]
    assert lag1 == pytest.approx(0.85, abs=0.02)
    noise.reset()
    assert np.all(noise.state == 0.0)


def test_noise_decays_to_its_floor() -> None:
    noise = OUNoise(4, seed=0, sigma=0.2, decay=0.5, scale_min=0.1)
    assert noise.scale == 1.0
    noise.reset()
    assert noise.scale == pytest.approx(0.5)
    first = noise.sample(3)
    np.testing.assert_allclose(first, 0.5 * noise.state)
    for _ in range(10):
        noise.reset()
    assert noise.scale == pytest.approx(0.1)


# ------------------------------------------------------------------------- networks
def test_default_agent_builds_default_architecture() -> None:
    agent = Agent(state_size=33, action_size=4, random_seed=0)
    assert DDPGConfig().actor_fc1 is None  # model.py's own widths unless the config gives them...
    cfg = agent.config  # ...and the agent's config records the widths built
    assert cfg.actor_fc1 == cfg.actor_fc2 == cfg.critic_fc1 == cfg.critic_fc2 == 128
    assert agent.actor_local.fc1.out_features == cfg.actor_fc1
    assert agent.actor_local.fc2.out_features == cfg.actor_fc2
    assert agent.critic_local.fcs1.out_features == cfg.critic_fc1
    assert agent.critic_local.fc2.out_features == cfg.critic_fc2
    assert isinstance(agent.actor_target, Actor) and isinstance(agent.critic_target, Critic)


def test_paper_initialisation_ranges() -> None:
    actor = Actor(33, 4, seed=0, fc1_units=64, fc2_units=32)
    assert actor.fc1.weight.abs().max() <= 1 / np.sqrt(33)
    assert actor.fc2.weight.abs().max() <= 1 / np.sqrt(64)
    assert actor.fc3.weight.abs().max() <= 3e-3
    critic = Critic(33, 4, seed=0, fcs1_units=64, fc2_units=32)
    assert critic.fc2.in_features == 68
    assert critic.fc3.weight.abs().max() <= 3e-3


def test_config_round_trip_and_clear_errors() -> None:
    """Each setting is checked by what its field declares (``ddpg_agent.setting``), by every path
    a user's values take (``settings.from_dict``, ``parse_config``)."""
    cfg = DDPGConfig(lr_actor=2e-3, tau=0.05)
    assert settings.from_dict(DDPGConfig, cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match=r"unknown config key.*'nope'.*valid keys"):
        settings.from_dict(DDPGConfig, {"nope": 1})
    for values, message in [({"batch_size": 0}, "batch_size must be a whole number >= 1, got 0"),
                            ({"tau": "x"}, r"tau must be a number in \(0, 1\], got the string 'x'"),
                            ({"gamma": 1.5}, r"gamma must be a number in \[0, 1\], got 1.5"),
                            ({"buffer_size": 1e6}, r"buffer_size must be a whole number >= 1, got 1000000\.0 \(a float\)"),
                            ({"critic_layer_norm": 1}, "critic_layer_norm must be true or false, got 1")]:
        for build in (lambda v: settings.from_dict(DDPGConfig, v), parse_config):
            with pytest.raises(ValueError, match=message):
                build(values)
    assert settings.network_keys(DDPGConfig) == ("actor_fc1", "actor_fc2", "critic_fc1", "critic_fc2",
                                                 "critic_layer_norm")


# ---------------------------------------------------------------------------- act
def test_act_shapes_and_bounds() -> None:
    agent = Agent(33, 4, 0, buffer_size=100, noise_sigma=5.0)
    states = np.random.default_rng(0).standard_normal((20, 33)) * 10
    clean = agent.act(states, add_noise=False)
    assert clean.shape == (20, 4)
    assert np.all(np.abs(clean) <= 1.0)
    np.testing.assert_array_equal(clean, agent.act(states, add_noise=False))
    noisy = agent.act(states, add_noise=True)
    assert noisy.shape == (20, 4)
    assert np.all(np.abs(noisy) <= 1.0)
    assert not np.allclose(noisy, clean)
    assert np.isclose(np.abs(noisy), 1.0).any()  # huge noise is clipped, not wrapped
    assert agent.act(states[0], add_noise=False).shape == (4,)


# ------------------------------------------------------------------------ learning
def test_soft_update_formula() -> None:
    local, target = nn.Linear(3, 2), nn.Linear(3, 2)
    before = [p.detach().clone() for p in target.parameters()]
    Agent.soft_update(local, target, 0.1)
    for t, b, lp in zip(target.parameters(), before, local.parameters(), strict=True):
        torch.testing.assert_close(t, 0.1 * lp + 0.9 * b)


def test_learn_soft_updates_the_agents_targets() -> None:
    agent = filled_agent(tau=0.05)
    old_targets = [[p.detach().clone() for p in net.parameters()]
                   for net in (agent.actor_target, agent.critic_target)]
    agent.learn(agent.memory.sample())
    for target, old, local in zip((agent.actor_target, agent.critic_target), old_targets,
                                  (agent.actor_local, agent.critic_local), strict=True):
        for t, o, lp in zip(target.parameters(), old, local.parameters(), strict=True):
            torch.testing.assert_close(t, 0.05 * lp + 0.95 * o)


@pytest.mark.parametrize("layer_norm", [False, True])
def test_one_learning_step_lowers_critic_loss_and_raises_q_of_the_policy(layer_norm) -> None:
    # Adam's first step moves every weight by about the learning rate; with layer norm the
    # critic's last layer sees unit-scale features, so 1e-3 overshoots this batch's small
    # targets: the step is checked at 1e-4 there.
    agent = filled_agent(lr_critic=1e-4 if layer_norm else 1e-3, lr_actor=1e-3, critic_layer_norm=layer_norm)
    s, a, r, ns, d = (t.clone() for t in agent.memory.sample())
    with torch.no_grad():
        y = r + d * agent.critic_target(ns, agent.actor_target(ns))

    def loss() -> float:
        with torch.no_grad():
            return float(((agent.critic_local(s, a) - y) ** 2).mean())

    def policy_value() -> float:
        with torch.no_grad():
            return float(agent.critic_local(s, agent.actor_local(s)).mean())

    before, value = loss(), policy_value()
    critic_before = [p.detach().clone() for p in agent.critic_local.parameters()]
    agent.learn((s, a, r, ns, d))
    assert loss() < before
    # The actor climbs the critic it was given (the one from before this update's step).
    moved_critic = [p.detach().clone() for p in agent.critic_local.parameters()]
    with torch.no_grad():
        for p, old in zip(agent.critic_local.parameters(), critic_before, strict=True):
            p.copy_(old)
    assert policy_value() > value
    with torch.no_grad():
        for p, new in zip(agent.critic_local.parameters(), moved_critic, strict=True):
            p.copy_(new)


def test_learn_clips_the_critic_gradient() -> None:
    agent = filled_agent(grad_clip=1e-3)
    agent.learn(agent.memory.sample())
    norm = torch.linalg.vector_norm(torch.cat([p.grad.reshape(-1) for p in agent.critic_local.parameters()]))
    assert norm == pytest.approx(1e-3, rel=1e-3)


def test_step_follows_learning_schedule() -> None:
    agent = Agent(33, 4, 0, buffer_size=1000, batch_size=16, warmup=40, learn_every=5,
                  learn_updates=3, n_step=1)  # one-step: each step stores its transitions at once
    rng = np.random.default_rng(0)
    for _ in range(10):
        s = rng.standard_normal((4, 33))
        agent.step(s, rng.uniform(-1, 1, (4, 4)), [0.0] * 4, s)
    # 40 transitions are reached at step 10; learning happens at steps 5 and 10 only if
    # the buffer holds >= 40, so only step 10 learns.
    assert agent.n_updates == 3


def test_learn_updates_can_be_lowered_by_the_training_loop() -> None:
    agent = Agent(33, 4, 0, buffer_size=1000, batch_size=16, warmup=4, learn_every=1, learn_updates=3, n_step=1)
    rng = np.random.default_rng(0)
    s = rng.standard_normal((4, 33))
    agent.step(s, rng.uniform(-1, 1, (4, 4)), [0.0] * 4, s)
    agent.learn_updates = 1
    agent.step(s, rng.uniform(-1, 1, (4, 4)), [0.0] * 4, s)
    assert agent.n_updates == 3 + 1


def _stored_discounts(agent: Agent) -> np.ndarray:
    return agent.memory.data[: len(agent.memory), -1].numpy()


def test_only_true_terminals_stop_the_bootstrap() -> None:
    rng = np.random.default_rng(0)
    s = rng.standard_normal((3, 33))
    a = rng.uniform(-1, 1, (3, 4))
    agent = Agent(33, 4, 0, buffer_size=100, gamma=0.9, n_step=1)  # (n-step: tests/test_n_step.py)
    agent.step(s, a, [0.1] * 3, s)  # Reacher: no terminal states
    agent.step(s, a, [0.1] * 3, s, [True, False, True])
    np.testing.assert_allclose(_stored_discounts(agent), [0.9] * 3 + [0.0, 0.9, 0.0], rtol=1e-6)
