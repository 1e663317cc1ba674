"""ddpg.command_line.run_config.resolve: the command line, the task and a resumed run's record become one
frozen RunConfig, with the precedence its docstring states."""

from __future__ import annotations

import dataclasses

import pytest

import train
from ddpg.command_line.parsing import given_options
from ddpg.command_line.run_config import resolve
from ddpg.loop import GOOD_SCORE
from ddpg.run_folder.record import RunRecord
from ddpg.tasks import REACHER_ONE_ARM, TASKS
from ddpg_agent import DDPGConfig


def _resolve(argv: list[str], record: RunRecord | None = None):
    parser = train.build_parser()
    return resolve(parser.parse_args(argv), given_options(parser, argv), record, "python train.py " + " ".join(argv))


def test_the_default_run_is_ddpgconfigs_defaults_and_the_schedule():
    cfg = _resolve([])
    assert cfg.env_id == "reacher" and cfg.n_agents == 20 and cfg.agent == DDPGConfig()
    assert (cfg.loop.episodes, cfg.loop.max_t, cfg.loop.target_score, cfg.loop.good_score) == (300, 1000, 30.0, GOOD_SCORE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.seed = 3  # type: ignore[misc]


def test_one_arm_takes_its_task_and_the_command_line_wins_over_it():
    cfg = _resolve(["--agents", "1"])
    assert cfg.agent.lr_critic == REACHER_ONE_ARM.config["lr_critic"] and cfg.loop.good_score is None
    assert cfg.loop.episodes == REACHER_ONE_ARM.episodes and cfg.record == {"task_why": REACHER_ONE_ARM.why}
    cfg = _resolve(["--agents", "1", "--config", '{"lr_critic": 0.002}', "--episodes", "7", "--good-score", "31"])
    assert cfg.agent.lr_critic == 0.002 and cfg.loop.episodes == 7 and cfg.loop.good_score == 31.0
    assert cfg.agent.tau == REACHER_ONE_ARM.config["tau"]  # the task's other settings stay


def test_a_gymnasium_task_takes_its_limit_and_threshold_from_the_task_or_its_spec():
    cfg = _resolve(["--env", "Pendulum-v1"])
    task = TASKS["Pendulum-v1"]
    assert cfg.gymnasium and cfg.loop.max_t == 200 and cfg.loop.target_score == task.target
    assert cfg.loop.reward_scale == task.reward_scale and cfg.loop.good_score is None
    assert _resolve(["--env", "Reacher-v5"]).loop.target_score == -3.75  # the spec's reward_threshold
    with pytest.raises(ValueError, match="--env: unknown Gymnasium environment 'NoSuch-v0'"):
        _resolve(["--env", "NoSuch-v0"])


def test_a_resumed_run_keeps_its_recorded_settings_and_refuses_new_ones(tmp_path):
    record = RunRecord(config={**DDPGConfig().to_dict(), "tau": 0.02}, seed=4, learner="readable", threads=1,
                       schedule={"good_score": None, "good_updates": 0}, reward_scale=0.5, n_agents=3, max_t=60,
                       target_score=None, environment="reacher.environment.ReacherEnvironment",
                       resumed=[{"command": "first"}])
    cfg = _resolve(["--resume", str(tmp_path), "--episodes", "9"], record)
    assert (cfg.seed, cfg.learner, cfg.n_agents, cfg.agent.tau, cfg.out, cfg.resume) == (4, "readable", 3, 0.02,
                                                                                           str(tmp_path), str(tmp_path))
    assert (cfg.loop.episodes, cfg.loop.max_t, cfg.loop.target_score, cfg.loop.good_score, cfg.loop.reward_scale) == \
        (9, 60, None, None, 0.5)
    assert [r["command"] for r in cfg.record["resumed"]] == ["first", cfg.command]
    with pytest.raises(ValueError, match="leave out --seed"):
        _resolve(["--resume", str(tmp_path), "--seed", "1"], record)
