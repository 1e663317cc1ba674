"""benchmarks/reference_sac_crawler.py: the reference SAC's transitions and updates rebuilt from its loop's counting."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks import reference_sac_crawler as ref


def _files(tmp_path, lives: np.ndarray, longest: np.ndarray) -> None:
    scores = np.arange(1, len(lives) + 1, dtype=float)  # episode k scores k
    np.save(tmp_path / "sac_crawler_rewards.npy", np.column_stack([scores, scores - 1, scores + 1]))
    np.save(tmp_path / "sac_crawler_lengths.npy", np.column_stack([lives, lives / 2, longest]))


def test_transitions_updates_and_windows_follow_the_loop(tmp_path) -> None:
    # 20 episodes: 12 crawlers living 500 decisions on average (6,000 transitions), the longest 800 decisions.
    _files(tmp_path, np.full(20, 500.0), np.full(20, 800.0))
    out = tmp_path / "out.json"
    ref.main(["--data", str(tmp_path), "--json", str(out)])
    record = json.loads(out.read_text())
    assert record["transitions"] == 120_000
    # Episodes starting past 20,000 transitions (the 5th on: 24,000 before it) run 3 updates a decision of the longest life.
    assert record["updates"] == 16 * 3 * 800
    assert record["random_play"] == {"episodes": 3, "mean_life": 500.0}  # 18,000 transitions, all before learning
    (at_100k,) = [p for p in record["by_transitions"] if p["at"] == 100_000]
    assert at_100k["episode"] == 17 and at_100k["transitions"] == 102_000
    assert at_100k["updates"] == 13 * 3 * 800 and at_100k["score"] == np.mean(np.arange(10, 18))
    assert [p["at"] for p in record["by_transitions"]] == [100_000]  # 200,000 and beyond never reached
    assert record["by_updates"] == []  # 38,400 updates in all: short of the first point, 50,000


def test_a_point_inside_the_first_window_is_left_out(tmp_path) -> None:
    _files(tmp_path, np.full(12, 1000.0), np.full(12, 1000.0))  # 12,000 transitions an episode
    record = ref.reference(tmp_path)
    assert [p["at"] for p in record["by_transitions"]] == [100_000]  # the 9th episode: 8 in its window
    assert record["by_transitions"][0]["episode"] == 9
    c = ref.curve(np.load(tmp_path / "sac_crawler_rewards.npy"), np.load(tmp_path / "sac_crawler_lengths.npy"))
    assert ref.at(c, "transitions", 30_000) is None  # the 3rd episode: fewer than 8 to average
    assert ref.at(c, "transitions", 96_000)["score"] == np.mean(np.arange(1, 9))


def test_missing_files_are_named_without_a_traceback(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        ref.main(["--data", str(tmp_path)])
    assert stop.value.code == 2
    assert "sac_crawler_rewards.npy" in capsys.readouterr().err
