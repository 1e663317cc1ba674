"""The committed checkpoints, loaded exactly as a course user would, solve the task."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from ddpg_agent import Agent
from evaluate import evaluate, main, summarise

ROOT = Path(__file__).resolve().parents[1]
ACTOR = ROOT / "checkpoint_actor.pth"
CRITIC = ROOT / "checkpoint_critic.pth"


@pytest.fixture(scope="module")
def agent() -> Agent:
    assert ACTOR.exists() and CRITIC.exists(), "checkpoint_actor.pth / checkpoint_critic.pth must be committed (make run)"
    agent = Agent(state_size=33, action_size=4, random_seed=0)
    agent.actor_local.load_state_dict(torch.load(ACTOR, weights_only=True))
    agent.critic_local.load_state_dict(torch.load(CRITIC, weights_only=True))
    return agent


# The full figures, 100 episodes of each, are benchmarks/eval_checkpoints.py's (README: 37.59 on
# 20 arms, every episode between 36.15 and 38.53; 37.33 on 1 arm, 30.42 to 39.60). These tests
# play the first episodes of the same runs (the same seeds) and ask more of them than a mean of
# 30: the whole 95% confidence interval of the mean (Student's t) above 30. The 100 episodes'
# standard deviation is 0.47 on 20 arms and 2.6 on 1, so 10 and 20 episodes put the interval's
# low end at about 37.4 and 35.5; a policy whose mean is under 30 cannot pass.
def _assert_scores_30(means: np.ndarray) -> None:
    summary = summarise(means)
    assert summary["ci95_low"] >= 30.0, (f"mean {summary['mean']:.2f} over {len(means)} episodes, 95% CI "
                                         f"[{summary['ci95_low']:.2f}, {summary['ci95_high']:.2f}]: not surely 30 or more")


def test_committed_checkpoints_score_30_over_10_episodes_of_20_agents(agent):
    _assert_scores_30(evaluate(agent, episodes=10, agents=20, seed=2024, progress=False))


def test_committed_checkpoints_score_30_over_20_episodes_of_1_agent(agent):
    _assert_scores_30(evaluate(agent, episodes=20, agents=1, seed=2025, progress=False))


def test_run_record_describes_the_committed_run():
    record = json.loads((ROOT / "checkpoint_run.json").read_text())
    assert record["solved_at_episode"] is not None and record["solved_at_episode"] >= 100
    assert record["seed"] == 0 and record["wall_time_s"] > 0 and not record["interrupted"]
    assert record["git_commit"] and record["command"]
    # The committed weights are the ones that run produced: plain DDPG with the defaults.
    from ddpg_agent import DDPGConfig
    from tests._agent_helpers import as_recorded

    # (A setting added since has no entry: the run was made before it existed.)
    defaults = as_recorded(DDPGConfig())
    assert record["config"] == {k: v for k, v in defaults.items() if k in record["config"]}
    assert set(record["config"]) <= set(defaults)


def test_evaluate_command_prints_its_summary_last_and_writes_files(tmp_path, capsys):
    assert main(["--episodes", "3", "--agents", "2", "--seed", "5", "--out", str(tmp_path), "--no-progress"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("checkpoint_actor.pth: 3 episodes of 2 arm(s), seed 5: mean ") and "95% CI [" in last
    summary = json.loads((tmp_path / "evaluation.json").read_text())
    scores = np.loadtxt(tmp_path / "evaluation.csv", delimiter=",", skiprows=1)[:, 1]
    assert summary["episodes"] == 3 and summary["mean"] == pytest.approx(scores.mean(), abs=1e-4)
    half = 4.302653 * scores.std(ddof=1) / np.sqrt(3)  # Student's t(0.975) with 2 degrees of freedom
    assert summary["ci95_high"] - summary["mean"] == pytest.approx(half, abs=1e-4)
    assert summary["mean"] > 30  # the committed policy


def test_evaluate_rejects_bad_input(tmp_path, capsys):
    for args, message in ((["--episodes", "0"], "expected a positive integer"),
                          (["--run", str(tmp_path)], "not a run folder"),
                          (["--run", str(tmp_path), "--actor", "a.pth"], "leave out --actor")):
        with pytest.raises(SystemExit) as exc:
            main(args)
        assert exc.value.code == 2 and message in capsys.readouterr().err


def test_one_comparison_of_layers_names_the_first_differing_tensor() -> None:
    """``layer_mismatch`` is the one comparison (checkpoints, the training state, --resume, watch and evaluate
    --run): a state_dict and run.json's recorded shapes give the same phrase, naming the first tensor."""
    from ddpg.run_folder.agent_state import differing_shapes, network_shapes
    from ddpg.run_folder.checkpoints import layer_mismatch
    from ddpg_agent import Agent
    from model import Actor

    narrow, wide = Actor(33, 4, 0, fc1_units=64).state_dict(), Actor(33, 4, 0).state_dict()
    recorded = {k: list(v.shape) for k, v in narrow.items()}
    assert layer_mismatch(narrow, narrow, "it", "the agent") is None
    said = layer_mismatch(narrow, wide, "it", "the agent")
    assert said == layer_mismatch(recorded, wide, "it", "the agent")
    assert said.startswith("it has fc1.bias 64 where the agent has 128 (layers [fc1 33->64")
    missing = dict(wide)
    missing.pop("fc3.bias")
    assert "fc3.bias no such tensor" in layer_mismatch(missing, wide, "it", "the agent")
    agent = Agent(33, 4, 0, buffer_size=100)
    shapes = network_shapes(agent)
    assert differing_shapes(agent, shapes) is None
    shapes["critic"]["fc3.weight"] = [1, 64]
    assert differing_shapes(agent, shapes).startswith("the run's critic has fc3.weight 1x64 where model.py's has 1x128")
