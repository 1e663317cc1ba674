"""Observation normalisation (``ddpg/variants/normalise.py``, ``{"obs_norm": true}``): running statistics
updated by ``step`` only, one set for the actor, the critics and the targets, carried by the networks'
own state through checkpoints, resume, evaluate.py and watch.py."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from ddpg.agents import agent_from_checkpoints
from ddpg.run_folder.checkpoints import load_checkpoints, save_checkpoints
from ddpg.variants import VariantAgent, parse_config
from ddpg.variants.config import VariantConfig
from ddpg.variants.normalise import CLIP, ObservationNorm
from ddpg_agent import Agent, DDPGConfig
from tests._agent_helpers import resumed_as_whole

SMALL = {"buffer_size": 2000, "batch_size": 16, "warmup": 32, "learn_every": 2, "learn_updates": 2}


def stepped(variant: dict, steps: int = 12, seed: int = 0) -> VariantAgent:
    """An obs_norm agent stepped on observations far from mean 0, std 1, with a few updates behind it."""
    agent = VariantAgent(6, 2, 0, config=parse_config({**SMALL, "obs_norm": True, **variant}))
    rng = np.random.default_rng(seed)
    scale = np.array([0.01, 0.1, 1.0, 10.0, 100.0, 1.0])
    for _ in range(steps):
        states = 5.0 + scale * rng.normal(size=(4, 6))
        agent.step(states, agent.act(states), rng.normal(size=4), 5.0 + scale * rng.normal(size=(4, 6)))
    return agent


def test_the_statistics_are_the_mean_and_variance_of_every_batch_merged() -> None:
    rng = np.random.default_rng(1)
    data = rng.normal(3.0, [0.1, 2.0, 50.0], size=(1000, 3))
    norm = ObservationNorm(3)
    for batch in np.array_split(data, [1, 2, 30, 31, 500]):  # any split, a batch of one included
        norm.update(torch.from_numpy(batch))
    assert float(norm.count) == 1000
    np.testing.assert_allclose(norm.mean.numpy(), data.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(norm.var.numpy(), data.var(axis=0), rtol=1e-10)
    x = torch.from_numpy(data[:5]).float()
    expected = (x.double() - torch.from_numpy(data.mean(axis=0))) / torch.from_numpy(np.sqrt(data.var(axis=0) + 1e-8))
    torch.testing.assert_close(norm(x), expected.float())
    assert norm(x).dtype == torch.float32


def test_a_constant_observation_stays_finite_and_outliers_are_clipped() -> None:
    norm = ObservationNorm(2)
    norm.update(torch.tensor([[1.0, 0.0], [1.0, 2.0]]))  # the first input never varies
    out = norm(torch.tensor([[1.0, 1.0], [1e6, -1e6]]))
    assert torch.isfinite(out).all()
    assert out[0].tolist() == [0.0, 0.0] and out[1].tolist() == [CLIP, -CLIP]


def test_off_by_default_and_plain_ddpg_holds_no_statistics() -> None:
    assert VariantConfig().obs_norm is False
    assert type(parse_config({})) is DDPGConfig
    agent = VariantAgent(6, 2, 0, config=parse_config({"exploration": "gaussian"}))
    assert not any("obs_norm" in k for k in (*agent.actor_local.state_dict(), *agent.critic_local.state_dict()))


def test_only_step_updates_the_statistics_acting_greedy_or_not_never_does() -> None:
    agent = stepped({})
    before = {k: v.clone() for k, v in agent.actor_local.obs_norm.state_dict().items()}
    states = np.random.default_rng(2).normal(size=(4, 6)) * 100
    agent.act(states, add_noise=False)
    agent.act(states)
    assert all(torch.equal(v, agent.actor_local.obs_norm.state_dict()[k]) for k, v in before.items())
    assert float(before["count"]) == 12 * 4  # one row per arm per step
    agent.step(states, agent.act(states), np.zeros(4), states)
    assert float(agent.actor_local.obs_norm.count) == 13 * 4


@pytest.mark.parametrize("variant", [{}, {"preset": "td3"}, {"preset": "redq"}, {"replay": "prioritized"},
                                     {"preset": "crossq"}])
def test_actor_critics_and_targets_hold_one_normaliser_and_apply_it(variant: dict) -> None:
    agent = stepped(variant)
    assert agent.n_updates > 0
    norm = agent.actor_local.obs_norm
    critics = [agent.critic_local, agent.critic_target]
    members = [c for critic in critics for c in ([critic.q1, critic.q2] if hasattr(critic, "q1") else [critic])]
    assert all(m.obs_norm is norm for m in (agent.actor_target, *members))  # the targets read today's, no lag
    states = torch.from_numpy(np.random.default_rng(3).normal(5.0, 10.0, size=(7, 6))).float()
    with torch.no_grad():
        acted = agent.actor_local(states)
        agent.actor_local.obs_norm = torch.nn.Identity()  # the same network, fed normalised states by hand
        try:
            by_hand, raw = agent.actor_local(norm(states)), agent.actor_local(states)
        finally:
            agent.actor_local.obs_norm = norm
    torch.testing.assert_close(acted, by_hand, rtol=0, atol=0)
    assert not torch.allclose(acted, raw)


def test_the_ensemble_applies_it_once_before_its_batched_pass() -> None:
    agent = stepped({"preset": "redq"})
    ensemble, calls = agent.critic_local, []
    assert ensemble.obs_norm is agent.actor_local.obs_norm is agent.critic_target.obs_norm
    assert not any("obs_norm" in k for k in ensemble.names + ensemble.buffer_names)  # not stacked per member
    ensemble.obs_norm.register_forward_hook(lambda *_: calls.append(1))
    states, actions = torch.full((3, 6), 5.0), torch.zeros(3, 2)
    with torch.no_grad():
        every = ensemble.all(states, actions)
    assert len(calls) == 1 and every.shape == (10, 3, 1)


def test_checkpoints_carry_the_statistics_and_the_loader_says_which_side_lacks_them(tmp_path) -> None:
    agent = stepped({"preset": "td3"})
    actor, critic = tmp_path / "actor.pth", tmp_path / "critic.pth"
    save_checkpoints(agent, actor, critic)
    assert float(torch.load(actor)["obs_norm.count"]) == 48
    fresh = VariantAgent(6, 2, 5, config=parse_config({"preset": "td3", "obs_norm": True}))
    load_checkpoints(fresh, actor, critic)
    assert fresh.critic_target.q2.obs_norm is fresh.actor_local.obs_norm
    assert torch.equal(fresh.actor_local.obs_norm.mean, agent.actor_local.obs_norm.mean)
    states = np.random.default_rng(4).normal(5.0, 3.0, size=(3, 6))
    np.testing.assert_array_equal(fresh.act(states, add_noise=False), agent.act(states, add_noise=False))
    alone = agent_from_checkpoints(actor)  # watch.py --actor FILE: the statistics in the file say obs_norm
    np.testing.assert_array_equal(alone.act(states, add_noise=False), agent.act(states, add_noise=False))
    with pytest.raises(ValueError, match=r"holds observation statistics \(obs_norm\).*\"obs_norm\": true") as info:
        load_checkpoints(Agent(6, 2, 0), actor)
    assert "\n" not in str(info.value)
    plain = tmp_path / "plain.pth"
    torch.save(Agent(6, 2, 0).actor_local.state_dict(), plain)
    with pytest.raises(ValueError, match="holds no observation statistics") as info:
        load_checkpoints(fresh, plain)
    assert "\n" not in str(info.value)


def test_the_removed_fixed_normalisation_is_still_refused_in_one_line(tmp_path) -> None:
    agent = stepped({})
    old = {"obs_scale": torch.full((6,), 2.0), "obs_bias": torch.zeros(6), **Agent(6, 2, 0).actor_local.state_dict()}
    torch.save(old, tmp_path / "old.pth")
    with pytest.raises(ValueError, match=r"removed fixed input normalisation \(obs_scale, obs_bias\)") as info:
        load_checkpoints(agent, tmp_path / "old.pth")
    assert "\n" not in str(info.value)


def test_a_run_resumes_exactly_and_evaluate_and_watch_apply_its_statistics(tmp_path) -> None:
    import evaluate as evaluate_mod
    import watch as watch_mod
    from ddpg.agents import agent_from_run

    base = ["--env", "UnityCrawler-v0", "--num-envs", "2", "--max-t", "25", "--no-progress", "--quiet",
            "--save-buffer", "--config", json.dumps({"obs_norm": True, "warmup": 40, "batch_size": 16})]
    whole, _ = resumed_as_whole(tmp_path, base)
    saved = torch.load(whole / "checkpoint_actor.pth")
    assert float(saved["obs_norm.count"]) > 0 and json.loads((whole / "run.json").read_text())["config"]["obs_norm"]
    agent = agent_from_run(whole)  # what evaluate.py and watch.py --run build
    assert torch.equal(agent.actor_local.obs_norm.mean, saved["obs_norm.mean"])
    assert torch.equal(agent.critic_local.obs_norm.var, saved["obs_norm.var"])
    assert watch_mod.main(["--run", str(whole), "--out", str(tmp_path / "c.gif"), "--steps", "3", "--every", "3"]) == 0
    assert evaluate_mod.main(["--run", str(whole), "--episodes", "1", "--agents", "1", "--no-progress",
                              "--out", str(tmp_path / "eval")]) == 0
    assert np.isfinite(json.loads((tmp_path / "eval" / "evaluation.json").read_text())["mean"])
    after = torch.load(whole / "checkpoint_actor.pth")
    assert all(torch.equal(saved[k], after[k]) for k in saved)  # playing never changes them


def test_a_cuda_graph_is_refused_until_made_safe_for_statistics_written_every_step() -> None:
    from ddpg.variants import registry

    assert any("observation normalisation" in p for p in registry.capture_problems(parse_config({"obs_norm": True})))
    assert registry.capture_problems(parse_config({"preset": "td3"})) == []


@pytest.mark.parametrize("variant", [{"preset": "sac"}, {"preset": "td3"}, {}])
def test_an_update_normalises_each_batch_once_with_the_numbers_of_normalising_at_every_network(variant, monkeypatch) -> None:
    """The normaliser's memo: s and s' once an update whatever the networks, bit for bit what each network
    normalising them on its own gives."""
    calls = []
    real = ObservationNorm._normalise

    def counted(self, x):
        calls.append(x.shape)
        return real(self, x)

    torch.manual_seed(0)
    memo = stepped(variant)
    monkeypatch.setattr(ObservationNorm, "_normalise", counted)
    batch = memo.memory.sample()
    memo.learn(batch)
    assert len(calls) == 2  # s and s'
    monkeypatch.setattr(ObservationNorm, "forward", lambda self, x: real(self, x))  # every network on its own
    torch.manual_seed(0)
    plain = stepped(variant)
    plain.learn(batch)
    for a, b in ((memo.actor_local, plain.actor_local), (memo.critic_local, plain.critic_local)):
        sa, sb = a.state_dict(), b.state_dict()
        assert all(torch.equal(sa[k], sb[k]) for k in sa)


def test_a_kept_result_is_given_back_only_while_nothing_it_was_made_of_changed() -> None:
    norm = ObservationNorm(3)
    norm.update(torch.tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]], dtype=torch.float64))
    x = torch.tensor([[2.0, 5.0, -1.0]])
    first = norm(x)
    assert norm(x) is first and norm(x.clone()) is not first  # the very tensor, not an equal one
    x.add_(1.0)  # the input changed in place
    assert torch.equal(norm(x), norm._normalise(x)) and not torch.equal(norm(x), first)
    kept = norm(x)
    norm.update(torch.tensor([[10.0, 0.0, 0.0]], dtype=torch.float64))  # new statistics
    assert not torch.equal(norm(x), kept) and torch.equal(norm(x), norm._normalise(x))
    kept = norm(x)
    norm.load_state_dict({k: v * 2 for k, v in norm.state_dict().items()})  # statistics loaded
    assert torch.equal(norm(x), norm._normalise(x)) and not torch.equal(norm(x), kept)
    kept = norm(x)
    kept.mul_(0.0)  # someone changed the result in place
    assert torch.equal(norm(x), norm._normalise(x))
    y = torch.ones(1, 3)
    norm(y), norm(x), norm(torch.zeros(1, 3))  # two kept, the oldest dropped
    assert len(norm._memo) == ObservationNorm.MEMO
