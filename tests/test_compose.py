"""Variants compose or refuse: a part an active variant needs is never skipped in silence."""

from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F

import train as train_mod
from ddpg.variants import VariantAgent, compose, parse_config, registry
from ddpg.variants.registry import Variant
from ddpg_agent import Agent, setting
from tests._toy_variant import TOY


class OutrightLoss:
    """A piece that replaces the critic's loss outright (a Huber loss), as docs/variants.md allows, without super()."""

    def critic_loss(self, states, actions, y):
        return F.smooth_l1_loss(self.critic_local(states, actions), y)


# A test's own switch, named so that no variant of the project's may take it.
HUBER = Variant("test_outright_loss", OutrightLoss,
                fields=(("test_outright_loss", bool, setting(False, "bool", "Huber loss for the critic, outright")),))


def _course_learn(self, experiences):
    """The course's order: the critic steps, then the actor; optimise is never called."""
    states, actions, rewards, next_states, discounts = experiences
    critic_loss = self.critic_loss(states, actions, self.td_target(rewards, next_states, discounts))
    self.critic_optimizer.zero_grad()
    critic_loss.backward()
    self.critic_optimizer.step()
    actor_loss = self.actor_loss(states)
    self.actor_optimizer.zero_grad()
    actor_loss.backward()
    self.actor_optimizer.step()
    self.soft_update(self.critic_local, self.critic_target, self.config.tau)
    self.soft_update(self.actor_local, self.actor_target, self.config.tau)


@pytest.fixture
def huber():
    registry.register(HUBER)
    compose.problem.cache_clear()
    yield
    registry.unregister(HUBER)
    compose.problem.cache_clear()


@pytest.mark.parametrize("values", [{"preset": "td3"}, {"preset": "redq"}, {"preset": "crossq"}, {"replay": "prioritized"},
                                    {"exploration": "noisy"}, {"exploration": "gaussian"}, {"batch_norm": True},
                                    {"goal_paths": 2}, {"preset": "td3", "replay": "prioritized"},
                                    {"twin_critics": True, "exploration": "noisy"}, {"preset": "crossq", "sac": True}])
def test_the_built_in_variants_compose(values) -> None:
    agent = VariantAgent(33, 4, 0, config=parse_config({**values, "buffer_size": 1000}))
    assert compose.problem(type(agent)) is None


def test_a_piece_that_replaces_the_critic_loss_is_refused_with_twin_critics(huber) -> None:
    assert VariantAgent(33, 4, 0, config=parse_config({"test_outright_loss": True, "buffer_size": 1000}))  # alone it composes
    with pytest.raises(ValueError, match=r"OutrightLoss\.critic_loss does not call critic_values, so twin_critics"):
        VariantAgent(33, 4, 0, config=parse_config({"test_outright_loss": True, "twin_critics": True, "buffer_size": 1000}))


def test_a_piece_that_wraps_the_critic_loss_composes_with_twin_critics() -> None:
    registry.register(TOY)
    compose.problem.cache_clear()
    try:
        agent = VariantAgent(33, 4, 0, config=parse_config({"critic_loss_scale": 2.0, "twin_critics": True, "buffer_size": 1000}))
        before = [p.clone() for p in agent.critic_local.q2.parameters()]
        agent.memory.add(torch.randn(64, 33).numpy(), torch.zeros(64, 4).numpy(), torch.ones(64).numpy(),
                         torch.randn(64, 33).numpy(), 0.9)
        agent.learn(agent.memory.sample())
        assert any(not torch.equal(a, b) for a, b in zip(before, agent.critic_local.q2.parameters(), strict=True))
    finally:
        registry.unregister(TOY)
        compose.problem.cache_clear()


def test_a_learn_that_skips_optimise_is_refused_with_the_policy_delay(monkeypatch) -> None:
    monkeypatch.setattr(Agent, "learn", _course_learn)
    compose.problem.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"Agent\.learn does not call optimise, so policy_delay's PolicyDelay"):
            VariantAgent(33, 4, 0, config=parse_config({"preset": "td3", "buffer_size": 1000}))
        assert VariantAgent(33, 4, 0, config=parse_config({"exploration": "gaussian", "buffer_size": 1000}))
    finally:
        compose.problem.cache_clear()


class OwnTarget:
    """A piece with a TD target of its own (half the reward), without super(); with ``next_action`` too, when asked."""

    def td_target(self, rewards, next_states, discounts):
        with torch.no_grad():
            return 0.5 * rewards + discounts * self.target_value(next_states, self.target_action(next_states))


class OwnTargetAndAction(OwnTarget):
    def next_action(self, next_states):
        return self.target_action(next_states), 0.0


@pytest.mark.parametrize("piece, composes", [(OwnTarget, False), (OwnTargetAndAction, True)])
def test_crossq_takes_the_target_over_only_from_a_piece_that_gives_next_action(piece, composes) -> None:
    """CrossQ computes every target itself, inside its critic's loss, from next_action: a piece behind it whose
    own td_target would be lost is refused, one that also gives its next action composes (as SAC does)."""
    variant = Variant("test_own_target", piece, fields=(("test_own_target", bool, setting(False, "bool", "own target")),))
    registry.register(variant)
    compose.problem.cache_clear()
    try:
        values = {"test_own_target": True, "crossq": True, "buffer_size": 1000}
        if composes:
            assert VariantAgent(33, 4, 0, config=parse_config(values))
        else:
            with pytest.raises(ValueError, match=r"CrossQ\.td_target replaces td_target without calling super\(\)"):
                VariantAgent(33, 4, 0, config=parse_config(values))
        assert VariantAgent(33, 4, 0, config=parse_config({"test_own_target": True, "buffer_size": 1000}))
    finally:
        registry.unregister(variant)
        compose.problem.cache_clear()


def test_sac_is_refused_beside_a_crossq_that_no_longer_reads_next_action(monkeypatch) -> None:
    """SAC's soft target reaches CrossQ's only through next_action: a CrossQ loss that stops calling it would drop
    the entropy term in silence, so the two no longer compose."""
    from ddpg.variants.crossq import CrossQ

    def hard_loss(self, states, actions, y):
        rewards, next_states, discounts = y
        with torch.no_grad():
            next_actions = self.target_action(next_states)
        both = self.critic_values(torch.cat((states, next_states)), torch.cat((actions, next_actions)))
        n = len(states)
        return self.value_loss(tuple(v[:n] for v in both),
                               rewards + discounts * self.smallest(tuple(v[n:] for v in both)).detach())

    values = {"preset": "crossq", "sac": True, "buffer_size": 1000}
    monkeypatch.setattr(CrossQ, "critic_loss", hard_loss)
    compose.problem.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"SoftActorCritic\.td_target"):
            VariantAgent(33, 4, 0, config=parse_config(values))
        assert VariantAgent(33, 4, 0, config=parse_config({"preset": "crossq", "buffer_size": 1000}))
    finally:
        compose.problem.cache_clear()


def test_train_py_refuses_it_in_one_line(tmp_path, capsys, huber) -> None:
    config = json.dumps({"test_outright_loss": True, "twin_critics": True, "buffer_size": 5000, "warmup": 64})
    with pytest.raises(SystemExit) as stop:
        train_mod.main(["--episodes", "1", "--agents", "2", "--max-t", "20", "--quiet", "--no-progress",
                        "--config", config, "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and "do not compose" in err[-1] and "Traceback" not in "\n".join(err)
    assert not (tmp_path / "run" / "run.json").exists()
