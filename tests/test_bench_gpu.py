"""benchmarks/bench_gpu.py --check, the prepared device check, with CUDA faked: which runs it
starts (devices, learners, seeds, jobs, the environment's threads), what it plans within its
budget, and the file it writes. The training itself is faked too; on a GPU machine the check
runs for real (about 9 minutes)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import torch

from benchmarks import bench_gpu
from ddpg.loop import GOOD_SCORE, GOOD_UPDATES
from ddpg_agent import DDPGConfig
from reacher import stepper

FAKE_GPU = {"type": "cuda", "name": "NVIDIA Fake GPU 80GB", "index": 0, "memory_gib": 79.2, "capability": "9.0",
            "cuda": "12.8", "driver": "580.0"}


def fake_result(seed: int, wall_s: float) -> dict:
    return {"seed": seed, "solved_at": 100 + seed % 3, "episodes": 100 + seed % 3, "first_30": 60, "wall_s": wall_s,
            "updates": 150_000, "final_avg100": 30.5,
            "seconds": {"environment": wall_s * 0.6, "acting": wall_s * 0.2, "learning": wall_s * 0.1,
                        "other": wall_s * 0.1}, "episode_means": []}


@pytest.fixture
def faked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict:
    """CUDA, the GPU's description, 16 CPUs, and every run recorded instead of trained."""
    calls: dict = {"alone": [], "jobs": [], "sweep": []}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(bench_gpu, "describe", lambda device: dict(FAKE_GPU))
    monkeypatch.setattr(bench_gpu, "resolve_learner", lambda name, device: "graph-overlap" if device == "cuda" else "readable")
    monkeypatch.setattr(stepper, "available_cpus", lambda: 16)
    monkeypatch.delenv(stepper.THREADS_VARIABLE, raising=False)
    monkeypatch.setattr(bench_gpu, "ROOT", tmp_path)

    def run_seed(seed, config, max_episodes, n_agents, learner, good_score, good_updates, device):
        calls["alone"].append({"seed": seed, "device": device, "learner": learner, "agents": n_agents,
                               "max_episodes": max_episodes, "env": os.environ.get(stepper.THREADS_VARIABLE)})
        return fake_result(seed, 31.0 if device == "cuda" else 62.0)

    def runs(seeds, settings, jobs):
        calls["jobs"].append({"seeds": list(seeds), "settings": settings, "jobs": jobs,
                              "env": os.environ.get(stepper.THREADS_VARIABLE)})
        for seed in reversed(seeds):  # as they finish, in any order
            yield fake_result(seed, 40.0)

    def sweep(threads, out):
        calls["sweep"].append({"threads": threads, "out": out})
        return {"command": f"python -m benchmarks.bench_env --threads {threads}", "returncode": 0,
                "rows": [{"threads": t, "used": t, "env_us": {"median": us}}
                         for t, us in ((1, 111.0), (2, 90.0), (4, 80.0), (8, 85.0), (16, 120.0))]}

    monkeypatch.setattr(bench_gpu, "run_seed", run_seed)
    monkeypatch.setattr(bench_gpu, "seed_runs", runs)
    monkeypatch.setattr(bench_gpu, "env_thread_sweep", sweep)
    return calls


def test_check_runs_the_planned_seeds_and_writes_the_file(faked: dict, tmp_path: Path) -> None:
    assert bench_gpu.main(["--check"]) == 0
    out = tmp_path / "benchmarks" / "results" / "gpu" / "gpu_nvidia_fake_gpu_80gb.json"
    report = json.loads(out.read_text())
    default = stepper.default_threads_for(16)

    # 1. The environment's thread counts, in a child process.
    assert [c["threads"] for c in faked["sweep"]] == ["1,2,4,8,16"]
    assert report["check"]["fastest_env_threads"] == 4
    # 2. Seeds 0-2 alone: auto on CUDA, then the CPU, interleaved, the environment threaded.
    assert [(c["seed"], c["device"], c["learner"]) for c in faked["alone"]] == [
        (0, "cuda", "graph-overlap"), (0, "cpu", "readable"), (1, "cuda", "graph-overlap"), (1, "cpu", "readable"),
        (2, "cuda", "graph-overlap"), (2, "cpu", "readable")]
    assert {c["env"] for c in faked["alone"]} == {str(default)}
    assert {(c["agents"], c["max_episodes"]) for c in faked["alone"]} == {(20, 120)}
    # 3. Seeds 0-19 with auto on CUDA, in jobs; the jobs' environments leave a CPU free.
    (jobs_call,) = faked["jobs"]
    assert jobs_call["seeds"] == list(range(20))
    config, max_episodes, agents, learner, good_score, good_updates, device = jobs_call["settings"]
    assert (max_episodes, agents, learner, device) == (120, 20, "graph-overlap", "cuda")
    assert config.to_dict() == DDPGConfig().to_dict() and (good_score, good_updates) == (GOOD_SCORE, GOOD_UPDATES)
    jobs, threads = report["check"]["jobs"], report["check"]["job_env_threads"]
    assert jobs_call["jobs"] == jobs and jobs_call["env"] == str(threads)
    # A seed beside the others: 1.4 x the 31 s measured alone and 15 s to start; 8 waves fit in
    # the 510 s budget (the fakes take no time), so 3 at a time, the default's threads each.
    assert report["check"]["seed_beside_others_s"] == round(1.4 * 31 + 15, 1)
    assert (jobs, threads) == (3, min(default, 15 // 3))
    assert os.environ.get(stepper.THREADS_VARIABLE) is None  # put back

    runs = report["runs"]
    assert [(r["phase"], r["device"]) for r in runs[:6]] == [("alone", "cuda"), ("alone", "cpu")] * 3
    assert [r["seed"] for r in runs[6:]] == list(range(20)) and {r["phase"] for r in runs[6:]} == {"jobs"}
    assert all({"seed", "solved_at", "wall_s", "updates", "env_threads", "seconds"} <= set(r) for r in runs)
    summary = report["summary"]
    assert summary["alone cuda graph-overlap"]["median_wall_s"] == 31.0
    assert summary["alone cuda graph-overlap"]["cpu_over_cuda"] == 2.0
    assert summary["jobs cuda"]["n_seeds"] == 20 and summary["jobs cuda"]["worst_solved_at"] == 102
    assert summary["aims_met"] == {"solves every seed by episode 102": True, "median at most 30 s": False,
                                   "at least 2x faster than cpu": True}
    assert report["gpu"]["name"] == FAKE_GPU["name"] and report["command"] == "python -m benchmarks.bench_gpu --check"
    assert "alone_cut" not in report["check"]


def test_a_short_budget_leaves_out_the_alone_pairs_and_adds_jobs(faked: dict, tmp_path: Path) -> None:
    out = tmp_path / "short.json"
    assert bench_gpu.main(["--check", "--budget-s", "150", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert faked["alone"] == [] and "seeds from 0 on not run" in report["check"]["alone_cut"]
    # A seed beside the others: 1.4 x the 35 s estimate and 15 s to start, 64 s; two waves fit in
    # 150 s, so 10 at a time, one environment thread each (15 CPUs for 10 jobs).
    assert report["check"]["seed_beside_others_s"] == 64.0
    assert report["check"]["jobs"] == 10 and faked["jobs"][0]["jobs"] == 10
    assert report["check"]["job_env_threads"] == 1


def test_jobs_and_env_threads_can_be_given(faked: dict, tmp_path: Path) -> None:
    out = tmp_path / "given.json"
    assert bench_gpu.main(["--check", "--jobs", "4", "--env-threads", "3", "--json", str(out)]) == 0
    assert {c["env"] for c in faked["alone"]} == {"3"}
    assert faked["jobs"][0]["jobs"] == 4 and faked["jobs"][0]["env"] == "3"


def test_check_does_not_overwrite_a_record_of_another_kind(faked: dict, tmp_path: Path) -> None:
    out = tmp_path / "old.json"
    out.write_text(json.dumps({"runs": [], "costs": {}}))
    with pytest.raises(SystemExit):
        bench_gpu.main(["--check", "--json", str(out)])
    assert faked["alone"] == [] and json.loads(out.read_text()) == {"runs": [], "costs": {}}


def test_plan_jobs() -> None:
    # 20 seeds of 49 s each in 185 s: three waves, so 7 at a time, two threads each on 16 CPUs.
    assert bench_gpu.plan_jobs(20, 16, 185, 49, 4) == (7, 2)
    assert bench_gpu.plan_jobs(20, 16, 10_000, 49, 4) == (1, 4)  # time enough: one at a time
    assert bench_gpu.plan_jobs(20, 16, 10, 49, 4) == (15, 1)  # never more jobs than CPUs but one
    assert bench_gpu.plan_jobs(20, 2, 10, 49, 4) == (1, 1)


def test_env_thread_sweep_runs_bench_env_in_a_child(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen = {}

    class Done:
        returncode, stdout, stderr = 0, "threads 1 (used 1): ...\n", ""

    def run(command, **kwargs):
        seen["command"], seen["cwd"] = command, kwargs.get("cwd")
        Path(command[command.index("--json") + 1]).write_text(json.dumps({"rows": [{"threads": 1}]}))
        return Done()

    monkeypatch.setattr(bench_gpu.subprocess, "run", run)
    out = tmp_path / "sweep.json"
    result = bench_gpu.env_thread_sweep("1,2,4,8,16", out)
    assert seen["command"][:3] == [sys.executable, "-m", "benchmarks.bench_env"]
    assert seen["command"][3:5] == ["--threads", "1,2,4,8,16"] and seen["cwd"] == bench_gpu.ROOT
    assert result["rows"] == [{"threads": 1}] and result["returncode"] == 0 and not out.exists()
