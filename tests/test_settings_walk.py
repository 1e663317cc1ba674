"""No setting can be forgotten by a resume: every option of train.py and every config field is
either recorded in run.json and restored by --resume, or declared as this invocation's only.

The walk starts a real run with every recorded option away from its default (one on the
built-in Reacher, one on a Gymnasium task for the options only it takes), then resolves a bare
``--resume`` of it and compares the two resolved configurations field by field. A new option
must be put in one of ddpg.command_line.options' groups (the first test), and if it is recorded, this walk
needs a value for it (the second test fails until it has one)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ddpg.command_line.options import INVOCATION, RESUMABLE, RUN, START, build_parser, roles
from ddpg.command_line.parsing import given_options
from ddpg.command_line.run_config import RunConfig, resolve
from ddpg.run_folder.record import RunRecord
from ddpg.run_folder.resume import resumable_record
from ddpg.variants import VariantConfig, parse_config, registry
from ddpg_agent import DDPGConfig

ROOT = Path(__file__).resolve().parent.parent
QUICK = {"buffer_size": 400, "batch_size": 16, "warmup": 40, "learn_every": 5, "learn_updates": 1}

# A value away from the default for each recorded option, and the run that can take it.
REACHER = {"--seed": "7", "--agents": "2", "--max-t": "15", "--target": "12.5",
           "--config": json.dumps({**QUICK, "gamma": 0.9, "n_step": 2}), "--good-score": "off", "--good-updates": "3",
           "--reproducible": None, "--episodes": "2", "--max-env-steps": "100000", "--no-stop": None,
           "--save-every": "1", "--save-buffer": None, "--device": "cpu", "--learner": "readable"}
GYM = {"--env": "Pendulum-v1", "--num-envs": "2", "--max-t": "12", "--config": json.dumps(QUICK), "--episodes": "1",
       "--learner": "readable", "--threads": "2"}
NOT_WALKED = {"--unity": "needs the Unity client: test_unity_is_recorded_and_restored below"}
# What differs between a run and its resume by construction, not by a setting.
PER_RUN = {"resume", "out", "force", "command", "record", "quiet", "progress", "animate", "animate_every",
           "tensorboard"}


def _resolve(argv: list[str], record: RunRecord | None = None) -> RunConfig:
    parser = build_parser()
    return resolve(parser.parse_args(argv), given_options(parser, argv), record, "python train.py")


def _argv(options: dict[str, str | None]) -> list[str]:
    return [x for k, v in options.items() for x in ([k] if v is None else [k, v])]


def _same_run(first: RunConfig, resumed: RunConfig) -> None:
    """Every field of the resolved configuration that a setting decides is the same."""
    for f in dataclasses.fields(RunConfig):
        if f.name in PER_RUN:
            continue
        a, b = getattr(first, f.name), getattr(resumed, f.name)
        if f.name == "agent":  # widths left to model.py (None) resume as the run built them
            built = {k: v for k, v in dataclasses.asdict(b).items() if getattr(a, k) is None}
            assert dataclasses.replace(a, **built) == b and all(isinstance(v, int) for v in built.values())
        else:
            assert a == b, f"{f.name}: {a!r} before, {b!r} on resume"


def test_every_option_has_one_role() -> None:
    parser = build_parser()
    options = {"--" + a.dest.replace("_", "-") for a in parser._actions if a.option_strings and a.dest != "help"}
    assert set(roles(parser)) == options  # each in one of the four groups
    assert set(roles(parser).values()) == {RUN, RESUMABLE, START, INVOCATION}


def test_every_recorded_option_is_walked() -> None:
    recorded = {name for name, role in roles(build_parser()).items() if role in (RUN, RESUMABLE)}
    assert recorded == set(REACHER) | set(GYM) | set(NOT_WALKED)


@pytest.mark.parametrize("options", [REACHER, GYM], ids=["reacher", "gymnasium"])
def test_a_resume_restores_every_recorded_setting(tmp_path, options) -> None:
    argv = _argv(options)
    first = _resolve(argv)
    default = _resolve(_argv({k: v for k, v in options.items() if k in ("--env", "--agents", "--num-envs")}))
    changed = {f.name for f in dataclasses.fields(RunConfig) if getattr(first, f.name) != getattr(default, f.name)}
    assert changed >= {"seed", "agent", "loop"} - ({"seed"} if "--seed" not in options else set())
    out = tmp_path / "run"
    # its own process: --reproducible pins the math libraries before they load
    done = subprocess.run([sys.executable, "train.py", *argv, "--out", str(out), "--no-progress", "--quiet"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    resumed = _resolve(["--resume", str(out)], resumable_record(out))
    _same_run(first, resumed)


def _value_away_from_default(f: dataclasses.Field) -> object:
    check, default = f.metadata["check"], f.default
    if isinstance(check, tuple):
        return next(v for v in check if v != default)
    if check == "size":  # model.py's own width (None) by default: a width of its own
        return 48
    return {"count": lambda: default + 1 if isinstance(default, int) else default, "whole": lambda: default + 1,
            ">=0": lambda: default + 0.5 if isinstance(default, float) else default + 1,
            "fraction": lambda: 0.5 if default != 0.5 else 0.25, "rate": lambda: 0.5 if default != 0.5 else 0.25,
            "bool": lambda: not default}[check]()


@pytest.mark.parametrize("field", dataclasses.fields(VariantConfig), ids=lambda f: f.name)
def test_every_config_field_is_recorded_and_restored(tmp_path, field) -> None:
    """Each field of the agent's settings, away from its default (with what it needs switched on),
    goes into run.json and comes back on resume exactly."""
    fields = {f.name: f for f in dataclasses.fields(VariantConfig)}
    needs = {s: {v.switch: v.value if v.value is not None else _value_away_from_default(fields[v.switch])}
             for v in registry.VARIANTS for s in v.settings}  # a variant's setting does nothing without its switch
    needs["ensemble_subset"] = {"ensemble": 3}  # the subset must fit in the ensemble
    values = {field.name: _value_away_from_default(field), **needs.get(field.name, {})}
    if field.name in ("crossq", "renorm_warmup", "batch_norm"):
        values["critic_layer_norm"] = False  # their own normalisation replaces layer norm
    if field.name == "ensemble_subset":
        values["ensemble_subset"] = 3
    config = parse_config(values)
    assert getattr(config, field.name) != field.default or field.name == "ensemble_subset"
    record = RunRecord(config=config.to_dict(), seed=0, n_agents=2, max_t=10, environment="x", state_size=33)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(record.to_dict()))
    back = _resolve(["--resume", str(tmp_path)], RunRecord.from_dict(json.loads(path.read_text())))
    assert back.agent == config and type(back.agent) is type(config)


def test_unity_is_recorded_and_restored(tmp_path) -> None:
    """--unity is the run's environment: run.json records the binary, and a resume opens it again."""
    binary = Path(__file__).resolve().parent.parent / "Reacher_Linux_NoVis" / "Reacher.x86_64"
    first = _resolve(["--unity", str(binary), "--agents", "2"])
    assert first.unity == str(binary) and first.record["unity"] == str(binary)
    record = RunRecord(config=DDPGConfig().to_dict(), seed=0, n_agents=2, max_t=1000, environment="x",
                       **{k: v for k, v in first.record.items() if k in ("unity", "task_why")})
    back = _resolve(["--resume", str(tmp_path)], RunRecord.from_dict(json.loads(json.dumps(record.to_dict()))))
    assert back.unity == str(binary)


def test_threads_are_one_unless_given_and_refused_beside_reproducible() -> None:
    assert _resolve([]).threads == 1 and _resolve(["--threads", "2"]).threads == 2
    assert _resolve(["--reproducible", "--threads", "1"]).threads == 1
    with pytest.raises(ValueError, match="--threads") as info:
        _resolve(["--reproducible", "--threads", "2"])
    assert "\n" not in str(info.value)
