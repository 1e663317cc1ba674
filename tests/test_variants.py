"""The variants of ddpg/variants/: sum tree, prioritized replay, NoisyNet, batch norm, n-step returns."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ddpg.variants import VariantAgent, VariantConfig, parse_config, registry, variants_of
from ddpg.variants.batch_norm import BatchNormActor
from ddpg.variants.config import switch_value
from ddpg.variants.noisy import NoisyActor
from ddpg.variants.prioritized import PrioritizedReplayBuffer, SumTree
from ddpg.variants.twin import PolicyDelay
from ddpg_agent import Agent, DDPGConfig
from tests._agent_helpers import fill

SMALL = {"buffer_size": 2000, "batch_size": 32, "warmup": 64, "learn_every": 5, "learn_updates": 2}


# ----------------------------------------------------------------------------- sum tree
def test_sum_tree_totals_and_updates() -> None:
    tree = SumTree(5)  # not a power of two: 8 leaves, 3 unused
    tree.update(np.arange(5), np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert tree.total == 15.0
    tree.update(np.array([1, 3]), np.array([0.5, 10.0]))
    assert tree.total == pytest.approx(1 + 0.5 + 3 + 10 + 5)
    np.testing.assert_array_equal(tree.priorities(np.arange(5)), [1, 0.5, 3, 10, 5])
    for node in range(1, tree.leaves):  # every inner node is the sum of its children
        assert tree.nodes[node] == pytest.approx(tree.nodes[2 * node] + tree.nodes[2 * node + 1])
    # find: slot i covers [prefix_i, prefix_i + p_i)
    np.testing.assert_array_equal(tree.find(np.array([0.0, 0.99, 1.0, 1.49, 1.5, 4.49, 4.5, 19.49])),
                                  [0, 0, 1, 1, 2, 2, 3, 4])
    with pytest.raises(IndexError, match="slots must be in"):
        tree.update(np.array([5]), np.array([1.0]))


def test_sum_tree_samples_in_proportion_to_priority() -> None:
    """Chi-squared test of 40,000 draws against a known priority vector (df = 7)."""
    priorities = np.array([1.0, 2.0, 0.5, 4.0, 8.0, 0.25, 3.0, 1.25])
    tree = SumTree(len(priorities))
    tree.update(np.arange(len(priorities)), priorities)
    rng = np.random.default_rng(0)
    n = 40_000
    counts = np.bincount(tree.find(rng.random(n) * tree.total), minlength=len(priorities))
    expected = n * priorities / priorities.sum()
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 24.32  # the 0.999 quantile of chi-squared with 7 degrees of freedom
    # and a wrong vector is rejected: uniform draws give a huge statistic
    uniform = np.bincount(rng.integers(0, 8, n), minlength=8)
    assert float(((uniform - expected) ** 2 / expected).sum()) > 1000


def _filled_per(n: int = 100, **kwargs) -> PrioritizedReplayBuffer:
    buf = PrioritizedReplayBuffer(3, 1, 128, 16, seed=0, **kwargs)
    rng = np.random.default_rng(1)
    buf.add(rng.normal(size=(n, 3)), rng.normal(size=(n, 1)), rng.normal(size=n), rng.normal(size=(n, 3)), 0.99)
    return buf


def test_new_transitions_get_the_highest_priority_and_updates_set_td_priorities() -> None:
    buf = _filled_per(alpha=0.5, eps=0.01)
    np.testing.assert_array_equal(buf.tree.priorities(np.arange(100)), np.ones(100))
    index = torch.tensor([3, 7])
    buf.update_priorities(index, torch.tensor([[2.0], [-0.5]]))
    np.testing.assert_allclose(buf.tree.priorities(np.array([3, 7])), [2.01 ** 0.5, 0.51 ** 0.5])
    assert buf.max_priority == pytest.approx(2.01 ** 0.5)
    buf.add(np.zeros((1, 3)), np.zeros((1, 1)), np.zeros(1), np.zeros((1, 3)), 0.99)
    assert buf.tree.priorities(np.array([100]))[0] == pytest.approx(2.01 ** 0.5)


def test_importance_weights_and_beta_annealing() -> None:
    buf = _filled_per(beta=0.4, beta_updates=10)
    buf.update_priorities(torch.arange(100), torch.linspace(0.1, 3.0, 100))
    *_, weights, index = buf.sample()
    p = buf.tree.priorities(index.numpy()) / buf.tree.total
    w = (100 * p) ** -0.4
    np.testing.assert_allclose(weights.numpy().ravel(), w / w.max(), rtol=1e-6)
    assert weights.shape == (16, 1) and float(weights.max()) == 1.0
    assert buf.beta == pytest.approx(0.4 + 0.6 / 10)
    for _ in range(20):
        buf.sample()
    assert buf.beta == 1.0


def test_prioritized_sampling_prefers_large_td_errors() -> None:
    buf = _filled_per(alpha=1.0)
    errors = torch.full((100,), 0.01)
    errors[:10] = 10.0
    buf.update_priorities(torch.arange(100), errors)
    drawn = np.concatenate([buf.sample()[-1].numpy() for _ in range(50)])
    assert (drawn < 10).mean() > 0.9  # 10 of 100 rows hold ~99% of the mass


# ----------------------------------------------------------------------------- NoisyNet
def test_noisy_actor_resamples_and_is_deterministic_under_a_seed() -> None:
    state = torch.randn(4, 33)
    a, b = NoisyActor(33, 4, seed=3), NoisyActor(33, 4, seed=3)
    torch.testing.assert_close(a(state), b(state))
    first = a(state)
    a.resample()
    assert not torch.allclose(first, a(state))  # new noise, new actions
    b.resample()
    torch.testing.assert_close(a(state), b(state))  # same seed, same draws
    a.set_noisy(False)
    mean = a(state)
    a.resample()
    torch.testing.assert_close(a(state), mean)  # the mean weights ignore the noise


def test_noisy_agent_explores_through_weights_and_evaluates_without_noise() -> None:
    agent = VariantAgent(33, 4, 0, exploration="noisy", **SMALL)
    states = np.random.default_rng(0).normal(size=(20, 33))
    greedy = agent.act(states, add_noise=False)
    np.testing.assert_array_equal(greedy, agent.act(states, add_noise=False))
    explore1, explore2 = agent.act(states), agent.act(states)
    assert not np.allclose(explore1, explore2) and not np.allclose(explore1, greedy)
    assert agent.actor_local.fc1.noisy and not agent.actor_target.fc1.noisy
    assert agent.exploration_scale() == pytest.approx(agent.actor_local.mean_sigma())


# ----------------------------------------------------------------------------- batch norm
def test_batch_norm_modes_when_acting_learning_and_targeting() -> None:
    agent = VariantAgent(33, 4, 0, batch_norm=True, critic_layer_norm=False, **SMALL)
    assert isinstance(agent.actor_local, BatchNormActor)
    assert not agent.actor_target.training and not agent.critic_target.training
    rng = np.random.default_rng(0)
    states = rng.normal(5.0, 3.0, size=(20, 33))  # far from the initial running statistics (0, 1)
    # acting uses the running statistics: an arm's action does not depend on the others
    alone, together = agent.act(states[:1], add_noise=False)[0], agent.act(states, add_noise=False)[0]
    np.testing.assert_allclose(alone, together, rtol=1e-5, atol=1e-8)
    agent.actor_local.train()
    with torch.no_grad():  # what training mode would give: normalised by the batch's own statistics
        batch_mode = agent.actor_local(torch.tensor(states, dtype=torch.float32))[0].numpy()
    assert np.abs(batch_mode - together).max() > 100 * np.abs(alone - together).max() + 1e-6
    assert agent.actor_local.training  # back in training mode after acting
    before = agent.actor_local.bn0.running_mean.clone()
    target_before = agent.actor_target.bn0.running_mean.clone()
    for _ in range(20):
        agent.step(states, agent.act(states), rng.normal(size=20), rng.normal(size=(20, 33)))
    assert agent.n_updates > 0
    assert not torch.equal(agent.actor_local.bn0.running_mean, before)  # learning in training mode
    moved = agent.actor_target.bn0.running_mean - target_before  # the targets' statistics follow slowly
    assert 0 < float(moved.abs().max()) < float((agent.actor_local.bn0.running_mean - before).abs().max())


# ----------------------------------------------------------------------------- config
def test_variant_config_is_checked_and_plain_agents_refuse_variants() -> None:
    with pytest.raises(ValueError, match="replay must be one of"):
        VariantConfig(replay="ranked")
    with pytest.raises(ValueError, match="n_step must be a whole number >= 1"):
        VariantConfig(n_step=0)  # plain DDPG's own setting, checked as DDPGConfig checks it
    with pytest.raises(ValueError, match="per_eps must be > 0"):
        VariantConfig(per_eps=0.0)
    with pytest.raises(ValueError, match=r"^tau must be"):
        VariantConfig(tau=0)  # the plain keys are checked as DDPGConfig checks them
    assert VariantConfig().variants() == {} and variants_of(DDPGConfig()) == {}
    assert VariantConfig(replay="prioritized", n_step=2).variants() == {"replay": "prioritized"}
    # The readable agent's config has no variant keys at all: a plain agent refuses one by name.
    assert "replay" not in DDPGConfig().to_dict()
    with pytest.raises(TypeError, match="batch_norm"):
        Agent(33, 4, 0, batch_norm=True)


def test_parse_config_gives_the_plain_config_unless_a_variant_is_on() -> None:
    plain = parse_config({"tau": 0.02})
    assert type(plain) is DDPGConfig and plain.tau == 0.02
    # Older run records hold every variant key at plain DDPG's value: still plain DDPG.
    assert type(parse_config({**VariantConfig().to_dict(), "tau": 0.02})) is DDPGConfig
    assert type(parse_config({"n_step": 3})) is DDPGConfig  # n-step returns are plain DDPG's own
    on = parse_config({"replay": "prioritized", "tau": 0.02})
    assert type(on) is VariantConfig and on.variants() == {"replay": "prioritized"} and on.tau == 0.02
    with pytest.raises(ValueError, match=r"per_alpha is set but does nothing without replay 'prioritized'"):
        parse_config({"per_alpha": 0.7, "n_step": 3})  # would silently do nothing
    with pytest.raises(ValueError, match=r"noisy_sigma0 is set but does nothing without exploration 'noisy'"):
        parse_config({"noisy_sigma0": 0.3})
    assert parse_config({"per_alpha": 0.7, "replay": "prioritized"}).per_alpha == 0.7
    with pytest.raises(ValueError, match=r"unknown config key\(s\) \['nope'\]"):
        parse_config({"nope": 1})


def _alone(v: registry.Variant) -> dict:
    """The config that turns one registered variant on by itself (``config.switch_value``; a count of its own: 2)."""
    given = switch_value(v)
    return {v.switch: 2 if given is None else given,
            **({"critic_layer_norm": False} if v.switch in ("batch_norm", "crossq") else {})}


# Every registered variant alone (a new one is trained here with no edit), then combinations.
@pytest.mark.parametrize("variant", [_alone(v) for v in registry.VARIANTS] + [
                                     {"replay": "prioritized", "n_step": 2},
                                     {"twin_critics": True, "critic_layer_norm": True},
                                     {"twin_critics": True, "policy_delay": 2},
                                     {"target_noise": 0.2, "n_step": 3}, {"ensemble": 3, "n_step": 3},
                                     {"preset": "crossq"}, {"crossq": True, "replay": "prioritized"}])
def test_every_variant_learns_a_few_updates(variant) -> None:
    agent = VariantAgent(33, 4, 0, config=parse_config({**SMALL, **variant}))
    before = [p.detach().clone() for p in agent.critic_local.parameters()]
    rng = np.random.default_rng(0)
    states = rng.normal(size=(4, 33))
    for _ in range(30):
        next_states = rng.normal(size=(4, 33))
        agent.step(states, agent.act(states), rng.normal(size=4), next_states)
        states = next_states
    assert agent.n_updates > 0
    assert any(not torch.equal(b, p) for b, p in zip(before, agent.critic_local.parameters(), strict=True))
    assert all(torch.isfinite(p).all() for p in agent.actor_local.parameters())


def test_td3_preset_and_its_three_changes() -> None:
    """{"preset": "td3"} is DDPG with clipped double Q, target smoothing and policy delay."""
    config = parse_config({"preset": "td3", "tau": 0.005})
    assert config.variants() == {"twin_critics": True, "target_noise": 0.2, "policy_delay": 2}
    assert config.tau == 0.005 and config.target_noise_clip == 0.5
    assert parse_config({"preset": "td3", "policy_delay": 3}).policy_delay == 3  # a key beside it wins
    for bad in ("td4", ["td3"]):
        with pytest.raises(ValueError, match="unknown preset"):
            parse_config({"preset": bad})
    agent = VariantAgent(33, 4, 0, **SMALL, **parse_config({"preset": "td3"}).variants())
    assert not torch.equal(agent.critic_local.q1.fc2.weight, agent.critic_local.q2.fc2.weight)  # two critics
    rng = np.random.default_rng(0)
    states = rng.normal(size=(4, 33))
    for _ in range(20):
        agent.step(states, agent.act(states), rng.normal(size=4), rng.normal(size=(4, 33)))
    assert agent.n_updates % 2 == 0
    actor, target = agent.actor_local.fc1.weight.detach().clone(), agent.critic_target.q2.fc3.weight.detach().clone()
    critic = agent.critic_local.q2.fc3.weight.detach().clone()
    agent.learn_many(1)  # a policy update: everything moves
    assert not torch.equal(agent.actor_local.fc1.weight, actor)
    assert not torch.equal(agent.critic_target.q2.fc3.weight, target)
    assert not torch.equal(agent.critic_local.q2.fc3.weight, critic)
    actor, target = agent.actor_local.fc1.weight.detach().clone(), agent.critic_target.q2.fc3.weight.detach().clone()
    critic = agent.critic_local.q2.fc3.weight.detach().clone()
    agent.learn_many(1)  # an update in between: the critics learn, the actor and the targets wait
    assert torch.equal(agent.actor_local.fc1.weight, actor) and torch.equal(agent.critic_target.q2.fc3.weight, target)
    assert not torch.equal(agent.critic_local.q2.fc3.weight, critic)


@pytest.mark.parametrize("variant", [{}, {"preset": "sac", "obs_norm": True}, {"preset": "redq", "ensemble": 3},
                                     {"preset": "td3", "critic_fc1": 48, "critic_fc2": 24, "critic_layer_norm": False}])
def test_critic_action_first_reads_the_action_beside_the_state(variant) -> None:
    """{"critic_action": "first"}: every critic's first layer reads [state, action], its second the first's units
    alone, at the widths and with the layer norm the config asks for, initialised as model.Critic; the action
    reaches Q through the first layer only."""
    config = parse_config({**SMALL, **variant, "critic_action": "first"})
    agent = VariantAgent(33, 4, 0, config=config)
    fc1, fc2 = config.critic_fc1 or 128, config.critic_fc2 or 128
    weights = {name.replace("__", "."): p for name, p in agent.critic_local.named_parameters()}
    first = [p for name, p in weights.items() if name.endswith("fcs1.weight")]
    second = [p for name, p in weights.items() if name.endswith("fc2.weight")]
    assert first and len(first) == len(second)
    assert all(p.shape[-2:] == (fc1, 33 + 4) and p.abs().max() <= 1 / 37 ** 0.5 for p in first)
    assert all(p.shape[-2:] == (fc2, fc1) for p in second)
    assert any(".ln1." in name or name.startswith("ln1.") for name in weights) == config.critic_layer_norm
    states, actions = torch.randn(16, 33), torch.rand(16, 4) * 2 - 1
    with torch.no_grad():
        q = torch.stack(agent.critic_values(states, actions))
        assert not torch.allclose(q, torch.stack(agent.critic_values(states, actions.flip(0))))
        for p in first:
            p[..., 33:] = 0.0  # the action's columns of the first layer: with them gone Q ignores the action
        assert torch.equal(torch.stack(agent.critic_values(states, actions)),
                           torch.stack(agent.critic_values(states, -actions)))


@pytest.mark.parametrize("other", [{"preset": "crossq"}, {"batch_norm": True}])
def test_critic_action_first_refuses_the_variants_that_build_their_own_critic(other) -> None:
    with pytest.raises(ValueError, match="critic_action"):
        VariantAgent(33, 4, 0, config=parse_config({**SMALL, **other, "critic_action": "first"}))


def _delayed_agent(variant: dict) -> VariantAgent:
    """An agent of the variant with a buffer of 64 transitions and no update yet."""
    return fill(VariantAgent(33, 4, 0, config=parse_config({**SMALL, **variant})), 64)


@pytest.mark.parametrize("variant", [{"preset": "td3"}, {"preset": "td3", "policy_delay": 3},
                                     {"preset": "sac", "policy_delay": 2}, {"preset": "crossq"},
                                     {"preset": "crossq", "sac": True}])
def test_updates_between_actor_steps_build_no_actor_loss(variant, monkeypatch) -> None:
    """With a policy delay the actor's loss is built at the updates that step the actor, and only there."""
    agent = _delayed_agent(variant)
    mro = type(agent).__mro__
    behind = next(k for k in mro[mro.index(PolicyDelay) + 1:] if "actor_loss" in k.__dict__)  # TD3's, SAC's or CrossQ's
    loss, built = behind.__dict__["actor_loss"], []

    def counted(self, states):
        built.append(self.n_updates)
        return loss(self, states)

    monkeypatch.setattr(behind, "actor_loss", counted)
    for _ in range(7):
        agent.learn(agent.memory.sample())
    assert built == list(range(0, 7, agent.config.policy_delay))


def test_skipping_the_actor_loss_between_actor_steps_changes_no_update(monkeypatch) -> None:
    """TD3's actor loss draws no numbers, so its updates with and without the skip are bitwise the same."""
    def trained() -> list[torch.Tensor]:
        agent = _delayed_agent({"preset": "td3"})
        torch.manual_seed(3)
        for _ in range(7):
            agent.learn(agent.memory.sample())
        return [p.detach().clone() for m in (agent.actor_local, agent.critic_local, agent.critic_target)
                for p in m.parameters()]

    skipping = trained()
    monkeypatch.delattr(PolicyDelay, "actor_loss")  # every update builds it, as before
    assert all(torch.equal(a, b) for a, b in zip(skipping, trained(), strict=True))


def test_batch_norm_replaces_the_critics_layer_norm() -> None:
    """Layer norm is on by default; {"batch_norm": true} is the paper's critic, without it."""
    assert DDPGConfig().critic_layer_norm
    assert parse_config({"batch_norm": True}).critic_layer_norm is False
    with pytest.raises(ValueError, match=r"batch_norm is not combined here .* with critic_layer_norm"):
        VariantAgent(33, 4, 0, config=parse_config({"batch_norm": True, "critic_layer_norm": True}))
    with pytest.raises(ValueError, match="critic_layer_norm must be true or false, got 1"):
        parse_config({"critic_layer_norm": 1})
