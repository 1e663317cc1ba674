"""benchmarks/bench_train.py: what it reports when a seed's run is stopped."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_stopped_seed_ends_the_benchmark_without_writing(tmp_path, monkeypatch, capsys) -> None:
    """train() returns early, unsolved, when Ctrl-C or SIGTERM stops it: that is no result."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import bench_train

    def stopped(seed, *args, **kwargs):
        return {"seed": seed, "solved_at": None, "episodes": 7, "wall_s": 1.0, "updates": 0,
                "final_avg100": 0.0, "seconds": {}, "episode_means": []}

    monkeypatch.setattr(bench_train, "run_seed", stopped)
    out = tmp_path / "result.json"
    assert bench_train.main(["--skip-updates", "--max-episodes", "50", "--json", str(out)]) == 130
    assert not out.exists()
    assert "seed 0 was stopped by a signal after 7 episodes" in capsys.readouterr().err
