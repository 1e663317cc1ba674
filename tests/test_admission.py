"""The fast learner's admission: its record of the code it restates matches the code on disk, what
differs is named, a check that fails runs the readable learner, and a run records what ran."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import evaluate
import train
from ddpg import backends
from ddpg.backends import admission, restated
from ddpg_agent import Agent, DDPGConfig
from tests._agent_helpers import QUICK_JSON
from tests.test_mutations import BATCH_NORM_ACTOR, WHERE, _edited_module, _use_edited_model

SMALL = QUICK_JSON
RUN = ["--agents", "2", "--max-t", "50", "--no-progress", "--quiet", "--config", SMALL]


def test_the_record_is_the_code_on_disk(capsys) -> None:
    """Edit ddpg_agent.py's or model.py's restated code, or the fast code, and this fails."""
    why = admission.stale(admission.read_record())
    assert why is None, (
        f"{why}. The record says which code the fast paths restate. Once ddpg/backends/fast_cpu.py (and "
        f"fast_steps.py) compute the code on disk, run `{admission.WRITE}`: it runs the fast learner against the "
        "readable update over 200 updates from the committed checkpoints on real Reacher transitions, and writes "
        "the record only where they agree to float32 rounding")
    assert admission.main([]) == 0
    record = admission.read_record()
    assert record["parts"] == admission.source_fingerprints() and record["fast_code"] == admission.fast_code_hashes()
    assert set(restated.SETTINGS) <= {f.name for f in dataclasses.fields(DDPGConfig)}


def test_a_changed_fast_code_or_a_stale_record_is_named_with_the_command(capsys) -> None:
    record = admission.read_record()
    record["fast_code"]["passes.py"] = "0" * 16
    assert "passes.py" in admission.stale(record)
    line = admission.differences(Agent(33, 4, 0, buffer_size=1000), record)
    assert "ddpg/backends/passes.py" in line and admission.WRITE in line
    record = admission.read_record()
    record["parts"]["Agent.td_target"] = ["0" * 16]
    assert "Agent.td_target" in admission.stale(record)


def test_a_record_that_differs_names_the_part(tmp_path) -> None:
    record = admission.read_record()
    record["parts"]["Agent.optimise"] = ["0" * 16]
    assert "Agent.optimise" in admission.differences(Agent(33, 4, 0, buffer_size=1000), record)
    with pytest.MonkeyPatch.context() as patch:  # a setting the fast paths do not handle: fast at its default only
        patch.setattr(restated, "SETTINGS", tuple(s for s in restated.SETTINGS if s != "tau"))
        assert admission.differences(Agent(33, 4, 0, buffer_size=1000), admission.read_record()) is None
        assert "tau = 0.05" in admission.differences(Agent(33, 4, 0, buffer_size=1000, tau=0.05), admission.read_record())


def _documented():
    def f(x):
        """One docstring."""
        return x + 1  # a comment
    return f


def _commented():
    def f(x):
        # another comment

        return x + 1
    return f


def _changed():
    def f(x):
        """One docstring."""
        return x + 2
    return f


def test_comments_and_docstrings_do_not_count() -> None:
    assert admission.fingerprint(_documented()) == admission.fingerprint(_commented())
    assert admission.fingerprint(_documented()) != admission.fingerprint(_changed())


def test_a_check_that_fails_runs_the_readable_learner(monkeypatch, capsys) -> None:
    def broken(*args, **kwargs):
        raise RuntimeError("something unexpected")

    monkeypatch.setattr(admission, "fingerprints", broken)
    agent = Agent(33, 4, 0, config=DDPGConfig(buffer_size=1000))
    assert backends.attach(agent, "auto", threads=1) == "readable"
    line = capsys.readouterr().out.strip()
    assert line.startswith("Learner: readable.") and "something unexpected" in line and len(line.splitlines()) == 1


def test_an_edit_drawing_from_numpys_global_stream_repeats_with_the_seed(tmp_path, monkeypatch) -> None:
    act = Agent.act

    def jittery(self, states, add_noise=True):
        return act(self, states, add_noise) + 0.01 * np.random.standard_normal((len(states), 4))  # noqa: NPY002

    monkeypatch.setattr(Agent, "act", jittery)
    np.random.seed(123)  # noqa: NPY002 (whatever the stream was left at, the run seeds it)
    assert train.main(["--episodes", "1", *RUN, "--out", str(tmp_path / "a")]) == 0
    assert train.main(["--episodes", "1", *RUN, "--out", str(tmp_path / "b")]) == 0
    assert (tmp_path / "a" / "scores.csv").read_bytes() == (tmp_path / "b" / "scores.csv").read_bytes()


@pytest.fixture(scope="module")
def plain_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("plain") / "run"
    assert train.main(["--episodes", "1", *RUN, "--save-every", "1", "--out", str(out)]) == 0
    return out


def test_a_resume_after_an_edit_records_each_parts_learner(tmp_path, monkeypatch, plain_run) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(plain_run, run)
    assert json.loads((run / "run.json").read_text())["learners"] == ["fast"]
    monkeypatch.setattr(Agent, "td_target", lambda self, r, ns, d: r)  # an edit between the two parts
    assert train.main(["--resume", str(run), "--episodes", "2", "--no-progress", "--quiet"]) == 0
    record = json.loads((run / "run.json").read_text())
    assert record["learners"] == ["fast", "readable"] and record["learner"] == "readable"


def test_a_run_whose_layers_model_py_no_longer_builds_is_refused_in_one_line(tmp_path, monkeypatch, capsys, plain_run) -> None:
    edited = _edited_module(tmp_path, "model.py", BATCH_NORM_ACTOR, "edited_batch_norm_rebuild", WHERE["model-batch-norm-actor"])
    _use_edited_model(monkeypatch, edited)
    with pytest.raises(SystemExit) as stop:
        evaluate.main(["--run", str(plain_run), "--agents", "1", "--episodes", "1", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and "bn1" in err[-1] and "Traceback" not in "\n".join(err)
