"""benchmarks/bench_train.py: what it reports when a seed's run is stopped."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_a_stopped_seed_ends_the_benchmark_without_writing(tmp_path, monkeypatch, capsys) -> None:
    """train() returns early, unsolved, when Ctrl-C or SIGTERM stops it: that is no result."""
    from benchmarks import bench_train

    def stopped(seed, *args, **kwargs):
        return {"seed": seed, "solved_at": None, "episodes": 7, "wall_s": 1.0, "updates": 0,
                "final_avg100": 0.0, "seconds": {}, "episode_means": []}

    monkeypatch.setattr(bench_train, "run_seed", stopped)
    out = tmp_path / "result.json"
    assert bench_train.main(["--skip-updates", "--max-episodes", "50", "--json", str(out)]) == 130
    assert not out.exists()
    assert "seed 0 was stopped by a signal after 7 episodes" in capsys.readouterr().err


def _bench(monkeypatch):
    from benchmarks import bench_train

    return bench_train


def _fake_run(solved: dict[int, int | None], ran: list[int], stop_at: int | None = None):
    """run_seed's stand-in: seed -> solved-at episode (None: unsolved at the cap); records the
    seeds it ran; ``stop_at``'s run is cut short, as Ctrl-C does."""
    def run(seed, config, max_episodes, *args, **kwargs):
        ran.append(seed)
        if seed == stop_at:
            return {"seed": seed, "solved_at": None, "episodes": 3, "wall_s": 1.0, "updates": 0,
                    "final_avg100": 0.0, "seconds": {}, "episode_means": [], "first_30": None}
        at = solved[seed]
        return {"seed": seed, "solved_at": at, "episodes": at or max_episodes, "wall_s": float(at or 999),
                "updates": 1000 * (at or max_episodes), "final_avg100": 30.0,
                "seconds": {"learning": 1.0}, "episode_means": [], "first_30": (at - 40) if at else None}
    return run


def test_seeds_take_counts_lists_and_ranges(monkeypatch, capsys) -> None:
    bench_train = _bench(monkeypatch)
    assert bench_train.seed_list("0-3,7,9-10") == [0, 1, 2, 3, 7, 9, 10]
    assert bench_train.seed_list("5") == [0, 1, 2, 3, 4] and bench_train.seed_list("2", 7) == [7, 8]
    for bad in ("0-", "3-1", "a", "1,1", "0"):
        with pytest.raises(SystemExit) as exc:
            bench_train.main(["--seeds", bad, "--skip-updates"])
        assert exc.value.code == 2
    assert "expected a count (5) or seeds and ranges" in capsys.readouterr().err


def test_the_distribution_ranks_unsolved_runs_last(monkeypatch) -> None:
    bench_train = _bench(monkeypatch)
    runs = [{"solved_at": e, "updates": 10 * (e or 0), "wall_s": float(e or 0), "first_30": e and e - 30}
            for e in [101, 140, 99, None, 120, 110, 105, 100, 130, 102]]
    d = bench_train.distribution(runs)
    assert d["n_solved"] == 9 and d["n_seeds"] == 10
    assert d["median_solved_at"] == 107.5 and d["p90_solved_at"] == 140 and d["worst_solved_at"] is None
    assert d["median_updates"] == 1075 and d["median_first_30"] == 77.5
    assert bench_train.rank_with_unsolved([3, 1, 2], 0.9) == 3 and bench_train.rank_with_unsolved([5], 0.5) == 5


def test_a_stopped_sweep_keeps_its_seeds_and_continues_where_it_stopped(tmp_path, monkeypatch, capsys) -> None:
    bench_train = _bench(monkeypatch)
    out = tmp_path / "sweep.json"
    solved = {0: 110, 1: 101, 2: None, 3: 125}
    ran: list[int] = []
    monkeypatch.setattr(bench_train, "run_seed", _fake_run(solved, ran, stop_at=2))
    args = ["--seeds", "0-3", "--skip-updates", "--max-episodes", "200", "--json", str(out)]
    assert bench_train.main(args) == 130
    kept = json.loads(out.read_text())
    assert [r["seed"] for r in kept["seeds"]] == [0, 1] and kept["median_solved_at"] == 105.5
    monkeypatch.setattr(bench_train, "run_seed", _fake_run(solved, ran))
    assert bench_train.main(args) == 0
    assert ran == [0, 1, 2, 2, 3]  # seeds 0 and 1 were not run again
    done = json.loads(out.read_text())
    assert [r["seed"] for r in done["seeds"]] == [0, 1, 2, 3]
    assert done["n_solved"] == 3 and done["worst_solved_at"] is None and done["p90_solved_at"] is None
    text = capsys.readouterr().out
    assert "continuing" in text and "90th percentile solved-at episode: unsolved" in text
    assert "first mean >= 30 at episode 70" in text
    # Other settings cannot continue this file.
    with pytest.raises(SystemExit) as exc:
        bench_train.main([*args, "--good-updates", "5"])
    assert exc.value.code == 2 and "other settings (schedule)" in capsys.readouterr().err


def test_diagnose_saturation_reports_shares_per_episode(tmp_path, monkeypatch, capsys) -> None:
    from benchmarks import diagnose_saturation

    out = tmp_path / "rows.json"
    assert diagnose_saturation.main(["--seed", "1", "--episodes", "2", "--max-t", "200", "--json", str(out),
                                     "--config", '{"warmup": 256}']) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["episode"] for r in rows] == [1, 2]
    assert all(0 <= r["saturated"] <= 1 and 0 <= r["mean_abs_action"] <= 1 for r in rows)
    assert rows[1]["mean_abs_pre"] > 0 and "saturated" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        diagnose_saturation.main(["--config", '{"n_steps": 3}'])  # a misspelt key is refused


def test_diagnose_forgetting_probes_the_one_arm_run_without_changing_it(tmp_path, capsys) -> None:
    """The probe (a greedy 20-arm episode, the critic's values, the actor's drift) leaves the
    training run as it is: its scores are those of the same run with a probe that does nothing."""
    from benchmarks import diagnose_forgetting, probe_run

    args = ["--episodes", "3", "--max-t", "200", "--config", '{"warmup": 256}']
    out = tmp_path / "rows.json"
    assert diagnose_forgetting.main([*args, "--json", str(out)]) == 0
    saved = json.loads(out.read_text())
    rows = saved["rows"]
    assert saved["agents"] == 1 and saved["good_score"] is None and [r["episode"] for r in rows] == [1, 2, 3]
    assert all(0 <= r["greedy"] <= 40 and 0 <= r["saturated"] <= 1 and np.isfinite(r["q"]) for r in rows)
    assert rows[2]["drift"] > 0  # it learned in episodes 2 and 3
    p = probe_run.parser("", seed=4, episodes=3, config={}, good_updates=0)
    p.set_defaults(agents=1)
    plain = p.parse_args(args)
    bare = probe_run.run(plain, probe_run.checked_config(p, plain), lambda agent: {}, lambda row: None, "")
    assert [r["score"] for r in bare] == [r["score"] for r in rows]
    assert "first 30" not in capsys.readouterr().out  # 200 decisions never score 30


def test_diagnose_batch_norm_probes_copies_and_reports_each_episode(tmp_path, monkeypatch, capsys) -> None:
    import torch

    from benchmarks import diagnose_batch_norm
    from ddpg.variants import VariantAgent
    from tests._agent_helpers import fill

    agent = fill(VariantAgent(33, 4, 0, buffer_size=5000, batch_size=32, batch_norm=True, critic_layer_norm=False))
    agent.learn_many(3)
    before = [{k: v.clone() for k, v in net.state_dict().items()}
              for net in (agent.actor_local, agent.critic_local, agent.critic_target)]
    row = diagnose_batch_norm.probe(agent, torch.Generator().manual_seed(0))
    after = [net.state_dict() for net in (agent.actor_local, agent.critic_local, agent.critic_target)]
    assert all(torch.equal(b[k], a[k]) for b, a in zip(before, after, strict=True) for k in b)  # running stats too
    assert row["act_gap"] > 0 and row["bn0_var_ratio"] > 0 and agent.actor_local.training

    out = tmp_path / "rows.json"
    assert diagnose_batch_norm.main(["--episodes", "2", "--max-t", "100", "--json", str(out),
                                     "--config", '{"batch_norm": true, "warmup": 256, "n_step": 1}']) == 0
    assert [r["episode"] for r in json.loads(out.read_text())["rows"]] == [1, 2]
    assert "act gap" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        diagnose_batch_norm.main(["--config", '{"n_step": 3}'])  # no batch norm: nothing to probe


def test_jobs_give_each_seed_what_it_gives_alone(tmp_path) -> None:
    """--jobs trains seeds in separate processes at once: each seed's episodes and updates are
    those of the same seed trained alone, and the file lists the seeds in order."""
    from benchmarks import bench_train

    small = json.dumps({"warmup": 2000, "learn_updates": 2, "buffer_size": 50_000})
    figures = {}
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}.json"
        args = ["--seeds", "1,0", "--skip-updates", "--max-episodes", "2", "--agents", "2", "--config", small,
                "--jobs", str(jobs), "--json", str(out)]
        assert bench_train.main(args) == 0
        figures[jobs] = json.loads(out.read_text())
    assert figures[2]["jobs"] == 2 and figures[2]["threads"] == figures[1]["threads"] == 1
    for report in figures.values():
        assert [r["seed"] for r in report["seeds"]] == [1, 0]
    alone, together = figures[1]["seeds"], figures[2]["seeds"]
    assert [r["updates"] for r in together] == [r["updates"] for r in alone] and alone[0]["updates"] > 0
    assert [r["episode_means"] for r in together] == [r["episode_means"] for r in alone]
    assert alone[0]["episode_means"] != alone[1]["episode_means"]  # the seeds differ: the check has teeth


def test_a_seed_that_fails_in_a_job_is_named() -> None:
    from benchmarks import bench_train

    broken = (None, 2, 20, "no-such-learner", 33.0, 0, 1, "cpu")  # run_seed fails in the worker
    with pytest.raises(RuntimeError, match=r"seed [01] failed: \w+"):
        list(bench_train.seed_runs([0, 1], broken, jobs=2))
