"""The Crawler study's runner (benchmarks/crawler_walks.py): what it keeps of each seed, that the
study's index accepts it, that a committed seed is skipped and an uncommitted one run again, that
a commit takes the seed's files and nothing else, and that one failed seed leaves the others.
Training is replaced by a run folder written on the spot: what is tested is the bookkeeping,
which a real seed (minutes) would not test any better."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from benchmarks import catalogue
from benchmarks import crawler_walks as walks


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def study(tmp_path, monkeypatch):
    """A repository of its own holding the study folder, and a stand-in for run_seed that counts its calls."""
    root = tmp_path / "repo"
    results = root / "benchmarks" / "results"
    (results / "crawler_walks").mkdir(parents=True)
    (results / "crawler_walks" / "study.toml").write_text('title = "t"\nquestion = "q"\n')
    _git(root, "init", "-q")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    for key, value in {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                       "GIT_COMMITTER_EMAIL": "t@t"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(walks, "ROOT", root)
    monkeypatch.setattr(walks, "STUDY", results / "crawler_walks")
    monkeypatch.setattr(walks, "RUNS", tmp_path / "runs")
    monkeypatch.setattr(catalogue, "RESULTS", results)
    calls: list[tuple[int, int, str | None]] = []
    failing: set[int] = set()

    def run_seed(seed: int, transitions: int, runs: Path, config: str | None = None, save_buffer: bool = False,
                 resume: bool = False, threads: int = 1, learner: str = "auto", crawler_threads: int | None = None) -> dict:
        calls.append((seed, transitions, config, threads, learner, crawler_threads))
        assert save_buffer == resume == walks.STAGES["final"].resumable if transitions == walks.STAGES["final"].transitions \
            else not (save_buffer or resume)
        if seed in failing:
            raise subprocess.CalledProcessError(1, ["python", "train.py", "--seed", str(seed)])
        out = runs / f"seed{seed}"
        out.mkdir(parents=True, exist_ok=True)
        (out / "run.json").write_text(json.dumps({"env_steps": transitions, "wall_time_s": 60.0 + seed,
                                                  "machine": {"cpu": "test cpu", "cpu_count": 2}}))
        for name in ("scores.csv", "metrics.csv", "checkpoint_actor.pth", "checkpoint_critic.pth", "scores.png"):
            (out / name).write_text(name)
        (out / "training_state.pt").write_text("not kept")
        (runs / f"seed{seed}-eval").mkdir(exist_ok=True)
        greedy = {"episodes": 24, "mean": 100.0 + seed, "std": 5.0, "min": 90.0, "max": 110.0}
        (runs / f"seed{seed}-eval" / "evaluation.json").write_text(json.dumps(greedy))
        return {"seed": seed, "env_steps": transitions, "wall_s": 61.0 + seed, "greedy": greedy,
                "greedy_score": greedy["mean"], "run": str(out), "curve": [{"round": 1, "avg100": 3.0}]}

    monkeypatch.setattr(walks, "run_seed", run_seed)
    return root, calls, failing


def test_a_seed_is_kept_whole_and_indexed(study):
    _, calls, _ = study
    assert walks.main(["--stage", "screen", "--candidates", "g99", "--seeds", "0,1", "--jobs", "2"]) == 0
    assert sorted(c[0] for c in calls) == [0, 1] and {c[1] for c in calls} == {walks.STAGES["screen"].transitions}
    assert {c[3:] for c in calls} == {(1, "auto", 1)}  # two side by side: PyTorch and the environment on one thread each
    assert all(json.loads(c[2]) == walks.CANDIDATES["g99"] for c in calls)
    folder = walks.seed_dir("screen", "g99", 1)
    assert sorted(p.name for p in folder.iterdir()) == sorted([*walks.RUN_FILES, "evaluation.json", "seed.json"])
    record = json.loads((folder / "seed.json").read_text())
    assert (record["candidate"], record["seed"], record["config"], record["jobs"]) == ("g99", 1, walks.CANDIDATES["g99"], 2)
    assert (record["transitions"], record["wall_s"], record["greedy_score"]) == (walks.STAGES["screen"].transitions, 62.0, 101.0)
    manifest = tomllib.loads((walks.STUDY / "study.toml").read_text())
    assert set(manifest["files"]) == {"screen/g99/seed0/run.json", "screen/g99/seed1/run.json"}
    assert manifest["files"]["screen/g99/seed1/run.json"]["machine"] == "test cpu x 2"
    # the index takes a run folder as one result, its run.json, with every other file in it
    (study_entry,) = [s for s in catalogue.catalogue() if s["folder"] == "crawler_walks"]
    assert [r["name"] for r in study_entry["results"]] == ["screen/g99/seed0/run.json", "screen/g99/seed1/run.json"]
    assert len(study_entry["results"][0]["with"]) == len(walks.RUN_FILES) + 1


def test_what_is_in_is_skipped(study):
    _, calls, _ = study
    walks.main(["--candidates", "g99,g99_norm", "--seeds", "0"])
    walks.main(["--candidates", "g99,g99_norm", "--seeds", "0,1"])
    assert [c[0] for c in calls] == [0, 0, 1, 1]  # seed 0 of each once, then seed 1 of each
    assert {c[3:] for c in calls} == {(2, "auto", None)}  # a seed alone: PyTorch on two threads, the environment on all
    walks.main(["--candidates", "sac3_overlap", "--seeds", "0"])
    assert calls[-1][3:] == (1, "overlap", 1)  # one core learns, the other steps the environment
    record = json.loads((walks.seed_dir("screen", "sac3_overlap", 0) / "seed.json").read_text())
    assert record["crawler_threads"] == 1
    assert len(tomllib.loads((walks.STUDY / "study.toml").read_text())["files"]) == 5


def test_commits_take_the_seed_alone_and_skip_only_what_is_committed(study):
    root, calls, _ = study
    (root / "unrelated.txt").write_text("work in progress")
    walks.main(["--candidates", "g99", "--seeds", "0", "--commit"])
    assert len(calls) == 1
    committed = set(_git(root, "ls-files").split())
    assert "benchmarks/results/crawler_walks/screen/g99/seed0/seed.json" in committed
    assert "unrelated.txt" not in committed and "?? unrelated.txt" in _git(root, "status", "--short")
    assert "g99 seed 0" in _git(root, "log", "-1", "--format=%s")
    # a seed on disk but not committed (a stop between the two) runs again; the committed one does not
    walks.main(["--candidates", "g99", "--seeds", "2"])
    walks.main(["--candidates", "g99", "--seeds", "0,2", "--commit"])
    assert [c[0] for c in calls] == [0, 2, 2]


def test_a_failed_seed_leaves_the_others(study, capsys):
    _, calls, failing = study
    failing.add(1)
    assert walks.main(["--candidates", "g99", "--seeds", "0,1,2"]) == 1
    assert [c[0] for c in calls] == [0, 1, 2]
    assert not walks.seed_dir("screen", "g99", 1).exists()
    assert walks.seed_dir("screen", "g99", 2).joinpath("seed.json").is_file()
    assert "seed 1: failed" in capsys.readouterr().out


def test_unknown_candidate_is_one_line(study, capsys):
    with pytest.raises(SystemExit) as stop:
        walks.main(["--candidates", "g99,nope"])
    assert stop.value.code == 2 and "nope" in capsys.readouterr().err


def test_a_stop_file_starts_no_more_seeds(study, capsys):
    _, calls, _ = study
    real = walks.run_seed

    def stop_after_first(*args, **kwargs):
        walks.stop_file().parent.mkdir(parents=True, exist_ok=True)
        walks.stop_file().touch()  # asked to stop while the first seed runs
        return real(*args, **kwargs)

    walks.run_seed = stop_after_first
    try:
        assert walks.main(["--candidates", "g99", "--seeds", "0,1,2"]) == 0
    finally:
        walks.run_seed = real
    assert [c[0] for c in calls] == [0] and walks.seed_dir("screen", "g99", 0).joinpath("seed.json").is_file()
    assert "2 seed(s) not started" in capsys.readouterr().out and not walks.stop_file().exists()
    walks.main(["--candidates", "g99", "--seeds", "0,1,2"])  # the same command goes on
    assert [c[0] for c in calls] == [0, 1, 2]


def test_a_final_seed_saves_its_buffer_and_goes_on_from_its_last_save(tmp_path, monkeypatch):
    """bench_crawler.run_seed with resume: a fresh seed starts with --force (and --save-buffer), an unfinished run
    in its folder goes on with train.py --resume, a finished one is only scored (its own wall-clock kept)."""
    from benchmarks import bench_crawler

    commands: list[list[str]] = []

    def fake_run(command, **_):
        commands.append([str(c) for c in command])
        if "--resume" in command:
            return subprocess.CompletedProcess(command, 0)
        out = Path(command[command.index("--out") + 1])
        if "evaluate.py" in command[1]:
            out.mkdir(parents=True, exist_ok=True)
            (out / "evaluation.json").write_text(json.dumps({"episodes": 24, "mean": 1.0, "std": 0.0, "min": 1, "max": 1}))
        elif "--resume" not in command:
            out.mkdir(parents=True, exist_ok=True)
            (out / "run.json").write_text(json.dumps({"env_steps": 2400, "finished": True, "wall_time_s": 9.0}))
            (out / "metrics.csv").write_text("episode,average100,env_steps,wall_s\n")
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(bench_crawler.subprocess, "run", fake_run)
    import torch

    monkeypatch.setattr(torch, "load", lambda *a, **k: {"agent": {"t_step": 200}})  # the run's training state
    runs = tmp_path / "runs"
    first = bench_crawler.run_seed(0, 2400, runs, save_buffer=True, resume=True)
    assert "--force" in commands[0] and "--save-buffer" in commands[0] and not first["resumed"]
    record = json.loads((runs / "seed0" / "run.json").read_text())
    (runs / "seed0" / "run.json").write_text(json.dumps({**record, "finished": False}))  # stopped midway
    commands.clear()
    bench_crawler.run_seed(0, 2400, runs, save_buffer=True, resume=True)
    assert commands[0][1:4] == ["train.py", "--resume", str(runs / "seed0")] and "--force" not in commands[0]
    (runs / "seed0" / "run.json").write_text(json.dumps({**record, "finished": True, "wall_time_s": 123.0}))
    commands.clear()
    done = bench_crawler.run_seed(0, 2400, runs, save_buffer=True, resume=True)
    assert [c[1] for c in commands] == ["evaluate.py"] and done["resumed"] and done["wall_s"] == 123.0


def test_every_candidate_says_why_and_runs_on_a_learner_train_py_has():
    """A seed's record takes its candidate's reason when it ends (minutes or hours in): a missing one
    would lose the seed there."""
    from ddpg.command_line.options import LEARNERS

    assert set(walks.WHY) == set(walks.CANDIDATES)
    assert set(walks.LEARNER) <= set(walks.CANDIDATES) and set(walks.LEARNER.values()) <= set(LEARNERS)
