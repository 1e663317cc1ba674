"""benchmarks/bench_speedup.py: the default run's wall-clock against an earlier checkout, alternating."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import bench_speedup

ROOT = Path(__file__).resolve().parent.parent


def test_it_alternates_the_two_codes_and_checks_their_scores(tmp_path, capsys) -> None:
    out = tmp_path / "speedup.json"
    assert bench_speedup.main(["--old", str(ROOT), "--rounds", "1", "--quick", "--json", str(out)]) == 0
    record = json.loads(out.read_text())
    assert [r["code"] for r in record["runs"]] == ["old", "new"] and record["scores_identical"]
    assert record["new_over_old"] > 0 and record["quick"]


def test_a_folder_without_train_py_is_one_line(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        bench_speedup.main(["--old", str(tmp_path)])
    assert stop.value.code == 2 and "no train.py" in capsys.readouterr().err


def test_each_side_runs_its_own_settings_and_records_its_cpu_time(tmp_path) -> None:
    out = tmp_path / "settings.json"
    argv = ["--old", str(ROOT), "--rounds", "1", "--quick", "--old-args", "--seed 1", "--json", str(out)]
    assert bench_speedup.main(argv) == 1  # another seed: other scores, which the benchmark reports
    record = json.loads(out.read_text())
    assert record["old_args"] == ["--seed", "1"] and record["new_args"] == [] and not record["scores_identical"]
    assert all(r["cpu_s"] > 0 for r in record["runs"])
