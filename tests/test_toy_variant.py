"""A variant is a piece: a module of its own (tests/_toy_variant.py) and one registry entry. Once
registered it trains through train.py's path (parse_config, make_agent, the loop, the run folder)
on the readable learner, and on the CUDA-graph back-end run eagerly, with nothing else edited."""

from __future__ import annotations

import json

import pytest

import train as train_mod
from ddpg.agents import make_agent
from ddpg.backends import CudaGraph
from ddpg.loop import train
from ddpg.reporting import callbacks
from ddpg.run_folder.record_file import read_record
from ddpg.variants import parse_config, registry
from tests._agent_helpers import FakeEnv
from tests._toy_variant import TOY, ScaledCriticLoss


@pytest.fixture
def toy():
    registry.register(TOY)
    ScaledCriticLoss.calls = 0
    yield TOY
    registry.unregister(TOY)


def test_a_registered_variant_trains_through_train_py_on_the_readable_learner(tmp_path, toy, quick_learning) -> None:
    out = tmp_path / "run"
    config = json.dumps({**quick_learning, "critic_loss_scale": 0.5})
    assert train_mod.main(["--episodes", "2", "--agents", "2", "--max-t", "50", "--no-progress", "--quiet",
                           "--config", config, "--out", str(out)]) == 0
    record = json.loads((out / "run.json").read_text())
    assert record["variants"] == {"critic_loss_scale": 0.5} and record["learner"] == "readable"
    assert ScaledCriticLoss.calls == record["learner_updates"] > 0  # the piece ran in every update
    # and the run resumes with it, its setting read back from run.json
    assert train_mod.main(["--resume", str(out), "--episodes", "3", "--no-progress", "--quiet"]) == 0
    assert read_record(out).config["critic_loss_scale"] == 0.5


def test_a_registered_variant_runs_on_the_graph_back_end_eagerly(tmp_path, toy, quick_learning) -> None:
    agent = make_agent("readable", (33, 4, 0), parse_config({**quick_learning, "critic_loss_scale": 2.0}))
    CudaGraph(agent, capture=False)
    train(FakeEnv(num_agents=2, episode_len=50), agent, episodes=2, max_t=50,
          callbacks=callbacks.standard(tmp_path / "graph", seed=0, progress=False))
    assert isinstance(agent, ScaledCriticLoss) and agent.n_updates > 0
    assert ScaledCriticLoss.calls == agent.n_updates  # the graph back-end ran the agent's own update


def test_without_the_entry_the_key_is_unknown() -> None:
    with pytest.raises(ValueError, match=r"unknown config key.*critic_loss_scale"):
        parse_config({"critic_loss_scale": 0.5})
