"""sweep.py: seeds x configurations as Ray Tune trials, each leaving a normal run folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import sweep

ROOT = Path(__file__).resolve().parent.parent


def test_expand_grid_names_every_combination() -> None:
    combos = sweep.expand_grid({"tau": [0.01, 0.02], "batch_size": [128]})
    assert combos == [("tau=0.01,batch_size=128", {"tau": 0.01, "batch_size": 128}),
                      ("tau=0.02,batch_size=128", {"tau": 0.02, "batch_size": 128})]
    with pytest.raises(ValueError, match="non-empty lists"):
        sweep.expand_grid({"tau": 0.01})


@pytest.mark.parametrize(("args", "message"), [
    (["--grid", '{"tau": [0.01]}', "--variants", '{"a": {}}'], "not both"),
    (["--grid", '{"tau": 0.01}'], "non-empty lists"),
    (["--grid", '{"tau": [2.0]}'], "tau must be a number in (0, 1]"),
    (["--variants", '{"a": 1}'], "must map to JSON objects"),
    (["--", "--seed", "3"], "leave out --seed"),
    (["--", "--seed=3"], "leave out --seed"),
    # The options after -- are train.py's: its own message, here, rather than a Ray worker's death.
    (["--", "--bogus"], "after --, train.py refuses the options: unrecognized arguments: --bogus"),
    (["--", "--agents", "x"], "train.py refuses the options: argument --agents: expected a positive integer"),
    (["--", "--agents", "4", "--max-env-steps", "3"], "--max-env-steps: one step of the 4 arms"),
])
def test_bad_arguments_exit_2_with_a_clear_message(args, message, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        sweep.main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.timeout(600)
def test_trials_on_local_ray_leave_their_run_folders_and_a_rerun_keeps_them(tmp_path, monkeypatch, capsys) -> None:
    out = tmp_path / "sweep"
    # Two seeds of one configuration (other than the default), short episodes of 2 arms (options
    # after -- go to every train.py): what is checked is the sweep's bookkeeping, which is the
    # same for the 20 arms' 1,000-step episodes and for more configurations (test_expand_grid...).
    command = [sys.executable, "sweep.py", "--seeds", "2", "--episodes", "2", "--grid", '{"tau": [0.02]}',
               "--out", str(out), "--", "--agents", "2", "--max-t", "50"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=420)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    folders = sorted(p.parent for p in out.glob("*/seed*/scores.csv"))
    assert [f"{p.parent.name}/{p.name}" for p in folders] == ["tau=0.02/seed0", "tau=0.02/seed1"]
    for folder in folders:
        record = json.loads((folder / "run.json").read_text())
        assert record["finished"] and record["episodes_run"] == 2 and record["threads"] == 1
        assert record["n_agents"] == 2 and record["max_t"] == 50  # the options after --, in every trial
        assert record["config"]["tau"] == float(folder.parent.name.split("=")[1])
        assert record["seed"] == int(folder.name.removeprefix("seed"))
    assert "tau=0.02" in done.stdout and "Run folders in" in done.stdout
    # Run again: finished trials are reported from their records, neither trained again nor
    # handed to Ray (which is not even started); in a Ray worker too, one is kept as it is.
    stamps = {p: (p / "scores.csv").stat().st_mtime_ns for p in folders}

    def no_ray(*args, **kwargs):
        raise AssertionError("Ray was started for finished trials")

    monkeypatch.setattr(sweep, "_tune", no_ray)
    import train

    monkeypatch.setattr(train, "main", no_ray)
    assert sweep.main(command[2:]) == 0
    assert "tau=0.02" in capsys.readouterr().out
    params = {"name": "tau=0.02", "seed": 0, "config": {"tau": 0.02}, "episodes": 2, "out": str(folders[0]),
              "train_args": []}
    assert sweep._run_trial({"trial": params})["episodes"] == 2
    assert {p: (p / "scores.csv").stat().st_mtime_ns for p in folders} == stamps


class _Result:
    def __init__(self, config: dict | None, metrics: dict | None = None) -> None:
        self.config, self.metrics, self.error = config, metrics, None


def test_a_stopped_sweep_reports_its_unstarted_trials(tmp_path, monkeypatch) -> None:
    """After Ctrl-C, Ray Tune returns results without a config for trials never started."""
    import types

    trials = [sweep.Trial("a", 0, {}), sweep.Trial("a", 1, {})]
    started = {"trial": {"out": str(sweep.trial_dir(tmp_path.resolve(), trials[0]))}}
    fake_tune = types.SimpleNamespace(
        Tuner=lambda *a, **k: types.SimpleNamespace(fit=lambda: [_Result(started, {"solved_at": 101}), _Result(None)]),
        with_resources=lambda fn, res: fn, grid_search=lambda space: space, RunConfig=lambda **k: None)
    fake_ray = types.SimpleNamespace(init=lambda **k: None, shutdown=lambda: None, tune=fake_tune)
    monkeypatch.setitem(sys.modules, "ray", fake_ray)
    monkeypatch.setitem(sys.modules, "ray.tune", fake_tune)
    first, second = sweep.run_sweep(trials, 2, tmp_path)
    assert first["solved_at"] == 101 and first["error"] is None
    assert "not run (the sweep was stopped)" in second["error"]


def test_bench_ablation_keeps_a_variant_until_every_seed_has_finished(tmp_path, monkeypatch) -> None:
    """A stopped ablation (some seeds unfinished) must not replace a variant's committed records."""
    from benchmarks import bench_ablation

    saved = {"command": "python -m benchmarks.bench_ablation", "runs": []}
    json_file = tmp_path / "ablation.json"
    json_file.write_text(json.dumps(saved))
    for name, value in (("JSON_FILE", json_file), ("TABLE_FILE", tmp_path / "ablation.md"),
                        ("PLOT_FILE", tmp_path / "ablation.png")):
        monkeypatch.setattr(bench_ablation, name, value)
    record = {"group": "variants", "config": {}, "scores": [1.0], "solved_at": None, "time_to_solve_s": None,
              "wall_time_s": 1.0, "first_mean_30": None, "learner": "readable", "threads": 1, "git_commit": None}
    finished = [{**record, "variant": "noisy", "seed": 0}, {**record, "variant": "batch_norm", "seed": 0},
                {**record, "variant": "batch_norm", "seed": 1}]
    monkeypatch.setattr(bench_ablation, "run_sweep", lambda *a, **k: [])
    monkeypatch.setattr(bench_ablation, "collect", lambda names, runs_dir: finished)
    assert bench_ablation.main(["--variants", "noisy,batch_norm", "--seeds", "2", "--runs-dir", str(tmp_path)]) == 0
    runs = json.loads(json_file.read_text())["runs"]
    assert sorted((r["variant"], r["seed"]) for r in runs) == [("batch_norm", 0), ("batch_norm", 1)]
