"""The run folder (ddpg/run_folder/): checkpoints in the course's format, the record, the scores,
atomic writes, and rebuilding an agent of any architecture from a run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from ddpg.agents import agent_from_checkpoints, agent_from_run
from ddpg.run_folder import agent_state
from ddpg.run_folder.atomic import atomic_write, write_json
from ddpg.run_folder.checkpoints import load_checkpoints, save_checkpoints
from ddpg.run_folder.file_names import ACTOR_FILE, BUFFER_FILE, CRITIC_FILE
from ddpg.run_folder.folder import write_run
from ddpg.run_folder.record import UNRECORDED_SETTINGS, RunRecord
from ddpg.run_folder.record_file import read_record
from ddpg.run_folder.run_state import load_training_state, save_training_state
from ddpg.run_folder.score_files import read_scores
from ddpg.solved import solved_at, trailing_average
from ddpg_agent import Agent
from model import Actor
from tests._agent_helpers import fill, filled_agent

SMALL = {"actor_fc1": 64, "actor_fc2": 32, "critic_fc1": 48, "critic_fc2": 24}


def _trained(agent_class: type[Agent] = Agent, **config: object) -> Agent:
    agent = fill(agent_class(33, 4, 3, buffer_size=5000, batch_size=32, **config))
    agent.learn_many(3)
    return agent


def _write(tmp_path, agent: Agent, episodes: int = 4):
    scores = np.random.default_rng(0).uniform(0, 40, (episodes, 3))
    record = RunRecord(config=agent.config.to_dict(), seed=3, state_size=33, action_size=4)
    write_run(tmp_path, agent, scores, record)
    return scores


def test_checkpoints_load_as_in_the_course(tmp_path) -> None:
    agent = _trained()
    actor_path, critic_path = tmp_path / "checkpoint_actor.pth", tmp_path / "checkpoint_critic.pth"
    save_checkpoints(agent, actor_path, critic_path)
    fresh = Agent(state_size=33, action_size=4, random_seed=0)
    fresh.actor_local.load_state_dict(torch.load(actor_path))
    fresh.critic_local.load_state_dict(torch.load(critic_path))
    states = np.random.default_rng(0).standard_normal((5, 33))
    np.testing.assert_array_equal(fresh.act(states, add_noise=False), agent.act(states, add_noise=False))
    # Plain, compact tensors (each its own storage, as torch.save writes a module's).
    state = torch.load(actor_path)
    assert list(state) == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"]
    assert state["fc1.weight"].untyped_storage().nbytes() == 128 * 33 * 4


def test_load_checkpoints_fills_the_targets_and_training_continues(tmp_path) -> None:
    agent = _trained()
    save_checkpoints(agent, tmp_path / "a.pth", tmp_path / "c.pth")
    other = load_checkpoints(fill(Agent(33, 4, 1, buffer_size=5000, batch_size=32)),
                             tmp_path / "a.pth", tmp_path / "c.pth")
    torch.testing.assert_close(other.actor_target.fc1.weight, agent.actor_local.fc1.weight)
    torch.testing.assert_close(other.critic_target.fc2.weight, agent.critic_local.fc2.weight)
    before = other.actor_local.fc1.weight.detach().clone()
    other.learn_many(2)  # the loaded weights are the ones the optimiser steps
    assert not torch.equal(before, other.actor_local.fc1.weight)


def test_missing_corrupt_and_mismatched_checkpoints_give_clear_errors(tmp_path) -> None:
    agent = Agent(33, 4, 0, buffer_size=100)
    with pytest.raises(FileNotFoundError, match=r"checkpoint not found: .*nothing\.pth"):
        load_checkpoints(agent, tmp_path / "nothing.pth")
    bad = tmp_path / "bad.pth"
    bad.write_bytes(b"this is not a torch file")
    with pytest.raises(ValueError, match=r"cannot read .*bad\.pth: it is not a checkpoint"):
        load_checkpoints(agent, bad)
    wrong = tmp_path / "wrong.pth"
    torch.save(Actor(33, 4, 0, fc1_units=64, fc2_units=64).state_dict(), wrong)
    with pytest.raises(ValueError, match=r"wrong\.pth does not match the network: it has fc1\.bias 64 where the agent "
                       r"has 128 \(layers \[fc1 33->64, fc2 64->64, fc3 64->4\] against "
                       r"\[fc1 33->128, fc2 128->128, fc3 128->4\]\)"):
        load_checkpoints(agent, wrong)


def test_checkpoints_of_earlier_versions_still_load(tmp_path) -> None:
    """Earlier versions saved an identity input normalisation with each network."""
    agent = _trained()
    old = {"obs_scale": torch.ones(33), "obs_bias": torch.zeros(33), **agent.actor_local.state_dict()}
    torch.save(old, tmp_path / "old.pth")
    fresh = load_checkpoints(Agent(33, 4, 0, buffer_size=100), tmp_path / "old.pth")
    torch.testing.assert_close(fresh.actor_local.fc3.weight, agent.actor_local.fc3.weight)
    old["obs_scale"] = torch.full((33,), 2.0)
    torch.save(old, tmp_path / "normalised.pth")
    with pytest.raises(ValueError, match="input normalisation"):
        load_checkpoints(fresh, tmp_path / "normalised.pth")


@pytest.mark.parametrize("layer_norm", [False, True])
def test_checkpoints_alone_rebuild_the_critic_with_or_without_layer_norm(tmp_path, layer_norm) -> None:
    """watch.py --actor/--critic: the critic's file says whether it has layer norm."""
    agent = _trained(critic_layer_norm=layer_norm)
    actor, critic = tmp_path / "a.pth", tmp_path / "c.pth"
    save_checkpoints(agent, actor, critic)
    replay = agent_from_checkpoints(actor, critic)
    assert replay.config.critic_layer_norm == layer_norm
    states, actions = torch.randn(5, 33), torch.rand(5, 4) * 2 - 1
    torch.testing.assert_close(replay.critic_local(states, actions), agent.critic_local(states, actions))
    other = Agent(33, 4, 0, buffer_size=100, critic_layer_norm=not layer_norm)
    with pytest.raises(ValueError, match=r"does not match the network: it has ln1\.\w+ (128|no such tensor) "
                                         r"where the agent has (128|no such tensor)"):
        load_checkpoints(other, actor, critic)


def test_write_run_and_read_it_back(tmp_path) -> None:
    agent = _trained(**SMALL)
    scores = _write(tmp_path, agent)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "checkpoint_actor.pth", "checkpoint_critic.pth", "run.json", "scores.csv", "scores.png"]
    np.testing.assert_allclose(read_scores(tmp_path), scores, atol=5e-5)
    assert read_record(tmp_path).config["actor_fc2"] == 32
    assert (tmp_path / "scores.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_agent_from_run_rebuilds_any_architecture(tmp_path) -> None:
    agent = _trained(Agent, **SMALL)
    _write(tmp_path, agent)
    replay = agent_from_run(tmp_path)
    assert replay.actor_local.fc1.out_features == 64 and replay.critic_local.fc2.out_features == 24
    states = np.random.default_rng(1).standard_normal((4, 33))
    np.testing.assert_array_equal(replay.act(states, add_noise=False), agent.act(states, add_noise=False))
    # The checkpoint files alone give the same agent: their sizes are read from the weights.
    alone = agent_from_checkpoints(tmp_path / ACTOR_FILE, tmp_path / CRITIC_FILE)
    assert alone.actor_local.fc1.out_features == 64 and alone.critic_local.fc2.out_features == 24
    np.testing.assert_array_equal(alone.act(states, add_noise=False), agent.act(states, add_noise=False))
    with pytest.raises(ValueError, match=r"not model.Actor's state_dict"):
        agent_from_checkpoints(tmp_path / CRITIC_FILE)  # a critic is no actor


@pytest.mark.parametrize("layer_norm", [False, True])
def test_records_without_the_newer_settings_mean_what_they_ran(tmp_path, layer_norm) -> None:
    """A record written before n_step and critic_layer_norm existed ran one-step DDPG without
    layer norm, whatever the defaults are now; a record that holds them keeps them."""
    agent = _trained(**SMALL, n_step=1, critic_layer_norm=layer_norm)
    _write(tmp_path, agent)
    assert {k: read_record(tmp_path).config[k] for k in UNRECORDED_SETTINGS} == \
        {"n_step": 1, "critic_layer_norm": layer_norm}
    replay = agent_from_run(tmp_path)
    assert isinstance(replay.critic_local.ln2, torch.nn.LayerNorm) == layer_norm
    if not layer_norm:  # as an older train.py wrote it
        record = json.loads((tmp_path / "run.json").read_text())
        record["config"] = {k: v for k, v in record["config"].items() if k not in UNRECORDED_SETTINGS}
        (tmp_path / "run.json").write_text(json.dumps(record))
        assert {k: read_record(tmp_path).config[k] for k in UNRECORDED_SETTINGS} == \
            UNRECORDED_SETTINGS
        assert isinstance(agent_from_run(tmp_path).critic_local.ln2, torch.nn.Identity)


def test_read_record_errors(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match=r"not a run folder: it has no run\.json"):
        read_record(tmp_path)
    (tmp_path / "run.json").write_text("{not json")
    with pytest.raises(ValueError, match="cannot read"):
        read_record(tmp_path)
    (tmp_path / "run.json").write_text(json.dumps({"seed": 0}))
    with pytest.raises(ValueError, match="no 'config'"):
        read_record(tmp_path)


def test_atomic_write_keeps_the_old_file_when_writing_fails(tmp_path) -> None:
    path = tmp_path / "run.json"
    write_json(path, {"a": 1})

    def failing(fh) -> None:
        fh.write(b'{"half": ')
        raise KeyboardInterrupt  # stopped in the middle of writing

    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, failing)
    assert json.loads(path.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]  # no temporary file left


def test_solved_at_definition() -> None:
    means = np.concatenate([np.full(100, 29.0), np.full(50, 40.0)])
    # Average of episodes E-99..E reaches 30 when 10 of the 100 are 40s: E = 110.
    assert solved_at(means) == 110
    assert solved_at(np.full(99, 40.0)) is None
    assert solved_at(np.full(100, 30.0)) == 100


def test_trailing_average() -> None:
    np.testing.assert_allclose(trailing_average(np.arange(1, 6), window=2), [1, 1.5, 2.5, 3.5, 4.5])


def test_filled_agent_helper_is_readable_agent() -> None:
    assert type(filled_agent()) is Agent


def test_training_state_round_trip_and_a_mismatched_buffer(tmp_path) -> None:
    agent = _trained()
    agent.t_step = 7
    save_training_state(tmp_path, agent, {"scores": []}, None, save_buffer=True)
    fresh = Agent(33, 4, 3, buffer_size=5000, batch_size=32)
    saved = load_training_state(tmp_path, fresh)
    assert saved["exact"] and len(fresh.memory) == len(agent.memory) and fresh.t_step == 7
    assert torch.equal(fresh.memory.data, agent.memory.data)
    for name in ("actor_local", "actor_target", "critic_local", "critic_target"):
        for a, b in zip(getattr(fresh, name).parameters(), getattr(agent, name).parameters(), strict=True):
            assert torch.equal(a, b)
    # A buffer file from another save (the process died between the two writes) is not used.
    agent.t_step = 8
    other = tmp_path / "other"
    other.mkdir()
    save_training_state(other, agent, {"scores": []}, None, save_buffer=True)
    (other / BUFFER_FILE).replace(tmp_path / BUFFER_FILE)
    again = Agent(33, 4, 3, buffer_size=5000, batch_size=32)
    assert load_training_state(tmp_path, again)["exact"] is False
    assert len(again.memory) == 0


def test_a_record_loads_typed_and_writes_back_what_it_read(tmp_path) -> None:
    """RunRecord is run.json's schema: the committed record loads, its fields are typed, and
    keys this version does not know come back unchanged."""
    data = json.loads((Path(__file__).resolve().parents[1] / "checkpoint_run.json").read_text())
    record = RunRecord.from_dict({**data, "a_later_key": [1, 2]})
    assert record.solved_at_episode == data["solved_at_episode"] and record.n_agents == data["n_agents"]
    written = record.to_dict()
    assert written["a_later_key"] == [1, 2]
    assert {k: written[k] for k in data} == {**data, "config": {**UNRECORDED_SETTINGS, **data["config"]}}
    with pytest.raises(ValueError, match="no 'config' object"):
        RunRecord.from_dict({"seed": 1})


def _adam_moments(agent: Agent) -> list[torch.Tensor]:
    """Each parameter's Adam step count and moments, [actor | critic], as the agent's torch Adam holds them."""
    out = []
    for opt in (agent.actor_optimizer, agent.critic_optimizer):
        for p in opt.param_groups[0]["params"]:
            out += [opt.state[p]["step"], opt.state[p]["exp_avg"], opt.state[p]["exp_avg_sq"]]
    return out


def test_a_training_state_of_the_retired_fast_learner_still_loads() -> None:
    """Training states the hand-written fast learner saved before it became a back-end hold one flat
    Adam state ([actor | critic] moments, one step count): they load into the agent's two torch Adams,
    which then continue as the agent that saved the moments would."""
    readable = _trained()
    state = agent_state.capture(readable)
    moments = _adam_moments(readable)
    legacy = {**state, "optimizer": {"flat": {"exp_avg": torch.cat([m.reshape(-1) for m in moments[1::3]]),
                                              "exp_avg_sq": torch.cat([m.reshape(-1) for m in moments[2::3]]),
                                              "t": int(moments[0])}}}
    old = Agent(33, 4, 3, buffer_size=5000, batch_size=32)
    agent_state.restore(old, legacy)
    for a, b in zip(_adam_moments(old), moments, strict=True):
        assert torch.equal(a, b)
    for agent in (readable, old):
        fill(agent)
    readable.learn_many(2)
    old.learn_many(2)
    for a, b in zip(readable.actor_local.parameters(), old.actor_local.parameters(), strict=True):
        assert torch.equal(a, b)
