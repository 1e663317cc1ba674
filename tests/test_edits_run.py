"""What a learner edits is what runs: the default learner (``auto``, and the notebook's
``attach(agent)``) takes the hand-written fast learner only where it computes the loaded code,
and an edit of the agent or its networks sends the run to the readable learner, with one line."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

import model
import train as train_mod
from ddpg import agent_state, backends
from ddpg.agents import make_agent
from ddpg.backends import restated
from ddpg.backends.proof import fast_cpu_differs
from ddpg_agent import Agent, DDPGConfig, ReplayBuffer
from tests._agent_helpers import QUICK_LEARNING

FAST = QUICK_LEARNING
RUN = ["--episodes", "2", "--seed", "0", "--agents", "2", "--max-t", "50", "--no-progress", "--quiet",
       "--config", json.dumps(FAST)]

_actor_forward, _critic_forward = model.Actor.forward, model.Critic.forward
_td_target, _optimise, _learn = Agent.td_target, Agent.optimise, Agent.learn


def _still_actor(self, state):  # an arm that should never move
    return 0.0 * _actor_forward(self, state)


def _doubled_critic(self, state, action):
    return 2.0 * _critic_forward(self, state, action)


def _shorter_horizon(self, rewards, next_states, discounts):
    return _td_target(self, rewards, next_states, 0.5 * discounts)


def _target_from_the_online_actor(self, rewards, next_states, discounts):
    with torch.no_grad():
        return rewards + discounts * self.critic_target(next_states, self.actor_local(next_states))


def _halved_critic_loss(self, actor_loss, critic_loss):
    return _optimise(self, actor_loss, 0.5 * critic_loss)


def _huber_critic_loss(self, states, actions, y):
    return torch.nn.functional.smooth_l1_loss(self.critic_local(states, actions), y)


def _penalised_actor_loss(self, states):  # keep the actions small
    return -self.critic_local(states, self.actor_local(states)).mean() + self.actor_local(states).pow(2).mean()


def _doubled_rewards(self, experiences):
    states, actions, rewards, next_states, discounts = experiences
    return _learn(self, (states, actions, 2.0 * rewards, next_states, discounts))


# (what is edited, its replacement, the part the line names)
EDITS = [(model.Actor, "forward", _still_actor, "acting"),
         (model.Critic, "forward", _doubled_critic, "update"),
         (Agent, "td_target", _shorter_horizon, "update"),
         (Agent, "td_target", _target_from_the_online_actor, "update"),
         (Agent, "critic_loss", _huber_critic_loss, "update"),
         (Agent, "actor_loss", _penalised_actor_loss, "update"),
         (Agent, "optimise", _halved_critic_loss, "update"),
         (Agent, "learn", _doubled_rewards, "update")]
IDS = ["Actor.forward", "Critic.forward", "td_target-discount", "td_target-online-actor", "critic_loss", "actor_loss",
       "optimise", "learn"]


def _run(tmp_path, name: str, *extra: str) -> tuple[dict, bytes]:
    out = tmp_path / name
    assert train_mod.main([*RUN, *extra, "--out", str(out)]) == 0
    return json.loads((out / "run.json").read_text()), (out / "checkpoint_actor.pth").read_bytes()


@pytest.fixture(scope="module")
def unedited(tmp_path_factory) -> bytes:
    record, actor = _run(tmp_path_factory.mktemp("unedited"), "run")
    assert record["learner"] == "fast" and record["learner_updates"] > 0
    return actor


def test_unedited_code_takes_the_fast_learner_and_says_so(capsys) -> None:
    agent = make_agent("auto", (33, 4, 0), DDPGConfig(**FAST), threads=1)
    assert agent_state.learner(agent) == "fast" and isinstance(agent.backend, backends.FastCPU)
    line = capsys.readouterr().out.strip()
    assert line.startswith("Learner: fast.") and "unchanged" in line and len(line.splitlines()) == 1
    assert fast_cpu_differs(Agent(33, 4, 1, critic_layer_norm=False, actor_fc1=64, batch_size=100)) is None


@pytest.mark.parametrize(("owner", "name", "edit", "part"), EDITS, ids=IDS)
def test_an_edit_runs_on_the_readable_learner_and_says_so(tmp_path, capsys, monkeypatch, unedited, owner, name,
                                                          edit, part) -> None:
    monkeypatch.setattr(owner, name, edit)
    agent = Agent(33, 4, 0, config=DDPGConfig(**FAST))
    assert backends.attach(agent, "auto", threads=1) == "readable" and agent.backend is None
    line = capsys.readouterr().out.strip()
    label = f"{owner.__name__}.{name}"
    assert line.startswith("Learner: readable.") and label in line and len(line.splitlines()) == 1

    record, actor = _run(tmp_path, "edited")
    assert record["learner"] == "readable" and record["learner_updates"] > 0
    assert actor != unedited  # the edit changed what was learned
    assert label in capsys.readouterr().out

    with pytest.raises(ValueError, match=f"--learner fast refuses this agent: .*{label}"):
        backends.choose(Agent(33, 4, 0, config=DDPGConfig(**FAST)), "fast")


def test_learner_fast_on_an_edited_agent_is_refused_in_one_line(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(model.Actor, "forward", _still_actor)
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as stop:
        train_mod.main([*RUN, "--learner", "fast", "--out", str(out)])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "--learner fast refuses this agent" in err[-1] and "Actor.forward" in err[-1]
    assert "Traceback" not in "\n".join(err)
    assert not (out / "run.json").exists()


@pytest.mark.parametrize("edit", ["learn_many", "sample"])
def test_an_edit_of_the_schedule_or_the_batches_runs_too(monkeypatch, edit) -> None:
    """What the fast learner replaces beyond the update itself: the loop of updates and the draw."""
    if edit == "learn_many":
        def twice(self, n_updates):  # two updates per batch
            for _ in range(n_updates):
                batch = self.memory.sample()
                self.learn(batch)
                self.learn(batch)
        monkeypatch.setattr(Agent, "learn_many", twice)
    else:
        sample = ReplayBuffer.sample
        def mismatched(self):  # a batch that pairs each state with another transition's action
            states, *rest = sample(self)
            return (torch.roll(states, 1, 0), *rest)
        monkeypatch.setattr(ReplayBuffer, "sample", mismatched)
    name, why = backends.choose(Agent(33, 4, 0, config=DDPGConfig(**FAST)))
    assert name == "readable" and ("Agent.learn_many" if edit == "learn_many" else "ReplayBuffer.sample") in why


def test_every_part_the_fast_learner_computes_is_covered_by_a_test_here() -> None:
    edited = {f"{owner.__name__}.{name}" for owner, name, _, _ in EDITS} | {"Agent.learn_many", "ReplayBuffer.sample"}
    computes = {label for label in restated.parts(restated.UPDATE) if not label.endswith("__init__")}
    # policy and soft_update: the whole-run tests; step: test_mutations; the rest are VariantAgent's or the draw's.
    assert computes - edited <= {"Agent.policy", "Agent.soft_update", "Agent.step", "Agent.target_action", "Agent.target_value",
                                 "Agent.critic_values", "Agent.smallest", "Agent.value_loss", "ReplayBuffer.split"}


def test_a_subclass_that_changes_the_update_runs_as_written() -> None:
    class Shorter(Agent):
        def td_target(self, rewards, next_states, discounts):
            return super().td_target(rewards, next_states, 0.9 * discounts)

    assert backends.choose(Shorter(33, 4, 0, config=DDPGConfig(**FAST)))[0] == "readable"
    assert backends.choose(Agent(33, 4, 0, config=DDPGConfig(**FAST)))[0] == "fast"


def test_the_check_leaves_the_agent_and_every_random_stream_as_it_found_them(monkeypatch) -> None:
    def noisy_target(self, rewards, next_states, discounts):  # an edit that draws from the global streams
        np.random.standard_normal()  # noqa: NPY002
        random.random()
        return _td_target(self, rewards, next_states, discounts) + 0.1 * torch.randn_like(rewards)

    torch.manual_seed(7)
    np.random.seed(7)  # noqa: NPY002
    random.seed(7)
    agent = Agent(33, 4, 0, config=DDPGConfig(**FAST))
    agent.memory.add(np.ones((40, 33)), np.zeros((40, 4)), np.ones(40), np.ones((40, 33)), 0.9)
    nets = ("actor_local", "critic_local", "actor_target", "critic_target")
    weights = [v.clone() for net in nets for v in getattr(agent, net).state_dict().values()]
    numpy_stream = np.random.get_state  # the legacy global stream an edit may draw from
    before = (torch.get_rng_state(), numpy_stream()[1].copy(), random.getstate(),
              agent.memory.generator.get_state(), agent.noise.rng.bit_generator.state, torch.get_num_threads())
    monkeypatch.setattr(Agent, "td_target", noisy_target)
    assert fast_cpu_differs(agent) is not None
    after = (torch.get_rng_state(), numpy_stream()[1], random.getstate(), agent.memory.generator.get_state(),
             agent.noise.rng.bit_generator.state, torch.get_num_threads())
    assert torch.equal(before[0], after[0]) and np.array_equal(before[1], after[1]) and before[2] == after[2]
    assert torch.equal(before[3], after[3]) and before[4] == after[4] and before[5] == after[5]
    assert all(torch.equal(v, w) for v, w in zip(weights, [
        v for net in nets for v in getattr(agent, net).state_dict().values()], strict=True))
    assert len(agent.memory) == 40 and agent.n_updates == 0 and agent.backend is None
    assert not agent.actor_optimizer.state and not agent.critic_optimizer.state


def test_a_refused_learner_keeps_the_run_force_would_replace(tmp_path, monkeypatch) -> None:
    _, actor = _run(tmp_path, "run")
    monkeypatch.setattr(model.Actor, "forward", _still_actor)
    with pytest.raises(SystemExit):
        train_mod.main([*RUN, "--learner", "fast", "--force", "--out", str(tmp_path / "run")])
    assert (tmp_path / "run" / "checkpoint_actor.pth").read_bytes() == actor
