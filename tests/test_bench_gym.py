"""benchmarks/bench_gym.py: every method gets the same budget of environment steps, the table
judges "solved" against it, and a stopped sweep continues where it stopped."""

from __future__ import annotations

import inspect
import json
import os
import signal
import sys
import tempfile
import threading
import time

import gymnasium as gym
import pytest

from benchmarks import bench_gym
from ddpg.tasks import TASKS

BUDGET = 20_000
PENDULUM_BUDGET = bench_gym.BENCH_TASKS["Pendulum-v1"]["budget_steps"]  # what a run of the task is given


def _run(method: str, seed: int, steps: int | None, seconds: float | None = None, final: float = -150.0,
         capped: bool = False, task: str = "T") -> dict:
    """A run's record as run_one writes it (``steps``: environment steps to the threshold, None: never)."""
    return {"task": task, "method": method, "seed": seed, "env_steps_to_threshold": steps,
            "seconds_to_threshold": seconds if steps is not None else None, "solved_at_episode": None,
            "final_return": final, "episodes": 100, "env_steps": steps or BUDGET, "wall_s": 1.0, "capped": capped}


def test_every_task_has_a_step_budget_the_zoo_s_where_it_tunes_the_task():
    zoo_n_timesteps = {"MountainCarContinuous-v0": 300_000, "Pendulum-v1": 20_000}  # hyperparams/{ddpg,td3}.yml
    scaled = {"Pendulum-v1": 3}  # the zoo's 20,000 Pendulum steps are only the 100-episode window
    assert set(bench_gym.BENCH_TASKS) == set(bench_gym.ZOO)
    for task, spec in bench_gym.BENCH_TASKS.items():
        budget = spec["budget_steps"]
        assert isinstance(budget, int) and budget > 0 and budget % spec["num_envs"] == 0, task
        assert budget == scaled.get(task, 1) * zoo_n_timesteps.get(task, budget // scaled.get(task, 1)), task
        assert ("n_timesteps" in spec["budget_from"]) == (task in zoo_n_timesteps), task
    for task in ("InvertedPendulum-v5", "InvertedDoublePendulum-v5", "Reacher-v5"):
        assert bench_gym.BENCH_TASKS[task]["threshold"] == gym.spec(task).reward_threshold
        assert task in TASKS and bench_gym.ZOO[task] == {"noise_type": "normal", "noise_std": 0.1}


def test_the_summary_judges_solved_against_the_budget_and_keeps_capped_runs_apart():
    runs = [_run("ours", 0, 1000, 10.0), _run("ours", 1, 3000, 30.0), _run("ours", 2, 2000, 20.0),
            _run("ours", 3, None, capped=True, final=-900.0),
            _run("peer", 0, 8000, 40.0), _run("peer", 1, 25_000, 90.0, final=-199.0),  # reached after the budget
            _run("peer", 2, None, final=-400.0)]
    table = bench_gym.summarise(runs, {"T": BUDGET})["T"]
    ours, peer = table["ours"], table["peer"]
    assert (ours["seeds"], ours["capped"], ours["solved"]) == (4, 1, 3)  # capped: neither solved nor unsolved
    assert ours["median_env_steps"] == 2000 and ours["median_seconds"] == 20.0 and ours["ratio_env_steps"] == 1.0
    assert ours["median_final_return"] == -150.0  # the capped run's return is left out too
    assert (peer["seeds"], peer["capped"], peer["solved"]) == (3, 0, 1)
    assert peer["median_env_steps"] is None and peer["ratio_env_steps"] is None and peer["ratio_seconds"] is None
    assert peer["median_final_return"] == -199.0
    text = bench_gym.format_table({"T": table}, {"T": BUDGET}, {"T": -200.0})
    assert "T (threshold -200, budget 20,000 env steps)" in text
    peer_line = next(line for line in text.splitlines() if line.strip().startswith("peer"))
    assert "1 / 3" in peer_line and "not within 20,000 steps" in peer_line
    ours_line = next(line for line in text.splitlines() if line.strip().startswith("ours"))
    assert "3 / 3" in ours_line and "2,000" in ours_line and "1.00" in ours_line

    # Within the budget, the peer's medians and their ratios to ours appear.
    runs[5] = _run("peer", 1, 6000, 60.0)
    peer = bench_gym.summarise(runs, {"T": BUDGET})["T"]["peer"]
    assert peer["solved"] == 2 and peer["median_env_steps"] == 8000 and peer["ratio_env_steps"] == 4.0
    assert peer["median_seconds"] == 60.0 and peer["ratio_seconds"] == 3.0
    # Every run capped: nothing measured.
    only_capped = bench_gym.summarise([_run("ours", 0, None, capped=True)], {"T": BUDGET})
    assert only_capped["T"]["ours"]["median_env_steps"] is None
    assert "capped" in bench_gym.format_table(only_capped, {"T": BUDGET}, {"T": -200.0}).splitlines()[2]


def test_a_run_of_ours_takes_exactly_its_budget():
    """train.py --max-env-steps under the budget: 450 steps of Pendulum are 2 episodes and 50 steps dropped."""
    run = bench_gym.run_ours("Pendulum-v1", 0, 450)
    assert run["env_steps"] == 450 and run["episodes"] == 2 and not run["capped"]
    assert run["env_steps_to_threshold"] is None and run["final_return"] < -200


def test_a_sigterm_stops_a_run_of_ours_as_capped(monkeypatch):
    """The wall-clock guard's SIGTERM, here sent from inside the run's 300th step: train.py saves
    what it finished and the run is reported as capped, short of its budget."""
    from ddpg import tasks  # train.py opens its environment through it, once the options are parsed

    opened = tasks.open_environment

    def open_and_stop(*args, **kwargs):
        env = opened(*args, **kwargs)
        step, taken = env.step, [0]

        def step_then_stop(actions):
            taken[0] += 1
            if taken[0] == 300:
                os.kill(os.getpid(), signal.SIGTERM)
            return step(actions)
        env.step = step_then_stop
        return env

    monkeypatch.setattr(tasks, "open_environment", open_and_stop)
    run = bench_gym.run_ours("Pendulum-v1", 0, 60_000)
    assert run["capped"] and run["episodes"] == 1 and run["env_steps"] < 60_000


def test_the_wall_clock_guard_sends_a_sigterm_and_keeps_what_the_run_says():
    """run_capped: at the cap the process is asked to stop, and its last words are still read."""
    child = ("import signal, sys, time\n"
             "signal.signal(signal.SIGTERM, lambda *_: (print('stopped'), sys.exit(0)))\n"
             "print('started', flush=True)\n"
             "time.sleep(60)\n")
    start = time.perf_counter()
    stdout, _, code = bench_gym.run_capped([sys.executable, "-c", child], cap_s=2.0)
    assert stdout.split() == ["started", "stopped"] and code == 0 and time.perf_counter() - start < 30
    stdout, _, code = bench_gym.run_capped([sys.executable, "-c", "print('done')"], cap_s=60.0)
    assert stdout.split() == ["done"] and code == 0
    deaf = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('started', flush=True)\ntime.sleep(60)\n"
    start = time.perf_counter()  # a run that ignores the SIGTERM is killed after the grace period
    stdout, _, code = bench_gym.run_capped([sys.executable, "-c", deaf], cap_s=2.0, grace_s=1.0)
    assert stdout.split() == ["started"] and code == -signal.SIGKILL and time.perf_counter() - start < 30


def test_the_guard_passes_a_run_s_progress_on_as_it_comes():
    """run_capped: a marked stderr line reaches ``progress`` while the run goes on (this child
    waits for the file the callback writes, so it would sit until the cap if lines came only at
    its end); other stderr lines are kept for the error message, not passed on."""
    with tempfile.TemporaryDirectory() as tmp:
        seen = os.path.join(tmp, "seen")
        child = ("import os, sys, time\n"
                 "print('a warning', file=sys.stderr, flush=True)\n"
                 f"print({bench_gym.PROGRESS_MARK!r} + '10 of 20 steps', file=sys.stderr, flush=True)\n"
                 f"while not os.path.exists({seen!r}):\n"
                 "    time.sleep(0.01)\n"
                 "print('done')\n")
        lines: list[str] = []

        def progress(line: str) -> None:
            lines.append(line)
            open(seen, "w").close()

        stdout, stderr, code = bench_gym.run_capped([sys.executable, "-c", child], cap_s=60.0, progress=progress)
    assert code == 0 and stdout == "done\n" and lines == ["#   10 of 20 steps"]
    assert stderr.splitlines() == ["a warning", bench_gym.PROGRESS_MARK + "10 of 20 steps"]


def test_the_sweep_s_lines_are_whole_when_its_threads_print_at_once(monkeypatch):
    """Two runs' progress lines and the sweep's run lines come from different threads: each is
    one write of the line and its newline (print's two writes let another thread's line in
    between, which ran two progress lines together in a real sweep's log), and the runs'
    progress goes through it unless told otherwise."""
    writes: list[str] = []
    monkeypatch.setattr(sys, "stdout", type("Out", (), {"write": writes.append, "flush": lambda self: None})())
    threads = [threading.Thread(target=lambda k=k: [bench_gym.say(f"#   run {k}: line {i}") for i in range(200)])
               for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(writes) == sorted(f"#   run {k}: line {i}\n" for k in range(4) for i in range(200))
    assert inspect.signature(bench_gym.run_capped).parameters["progress"].default is bench_gym.say


def test_a_peer_run_takes_exactly_its_budget(capsys):
    pytest.importorskip("stable_baselines3")
    run = bench_gym.run_sb3("Pendulum-v1", "td3", 0, 450)
    assert run["env_steps"] == 450 and run["episodes"] == 2 and not run["capped"]
    assert run["env_steps_to_threshold"] is None and run["final_return"] < -200
    assert bench_gym.PROGRESS_MARK not in capsys.readouterr().err  # 10 minutes apart: none in a short run
    bench_gym.run_sb3("Pendulum-v1", "td3", 0, 450, progress_every_s=1e-9)  # then one line a step
    reports = [line.removeprefix(bench_gym.PROGRESS_MARK) for line in capsys.readouterr().err.splitlines()
               if line.startswith(bench_gym.PROGRESS_MARK)]
    assert len(reports) == 450 and reports[0].startswith("Pendulum-v1 sb3-td3 seed 0: 1 of 450 steps, 0 episodes, "
                                                        "last-100 average -")
    assert reports[-1].startswith(f"Pendulum-v1 sb3-td3 seed 0: 450 of 450 steps, 2 episodes, last-100 average "
                                  f"{run['final_return']:.2f} (threshold -200), ")


def test_a_suspended_peer_run_continues_from_its_state(tmp_path):
    """Suspended at 400 steps (two Pendulum episodes), then continued to its budget: the run
    keeps the first segment's episodes, steps and replay buffer, and says where it resumed."""
    pytest.importorskip("stable_baselines3")
    state = tmp_path / "Pendulum-v1__sb3-td3__0"
    first = bench_gym.run_sb3("Pendulum-v1", "td3", 0, 1000, state, suspend_at_steps=400)
    assert first == {"suspended": True, "env_steps": 400, "episodes": 2}
    saved = json.loads((state / "progress.json").read_text())
    assert len(saved["means"]) == 2 and saved["resumed_at_steps"] == []
    assert not list(tmp_path.glob("*.partial")) and not list(tmp_path.glob("*.old"))
    run = bench_gym.run_sb3("Pendulum-v1", "td3", 0, 1000, state)
    assert run["env_steps"] == 1000 and run["episodes"] == 5 and run["resumed_at_steps"] == [400]
    assert not run["capped"] and run["wall_s"] >= saved["seconds"] and len(run["segment_commits"]) == 2
    # A stop between the save's two renames leaves only the earlier state, as .old: it is taken back.
    state.rename(tmp_path / (state.name + ".old"))
    assert bench_gym._suspended_progress(state) == saved and state.is_dir()
    whole = bench_gym.run_sb3("Pendulum-v1", "td3", 0, 1000)
    assert "resumed_at_steps" not in whole and whole["episodes"] == 5


def test_a_sweep_keeps_suspended_runs_out_of_the_file_and_continues_them(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench_gym, "sb3_version", lambda: "test")
    out = tmp_path / "r.json"
    command = ["--tasks", "Pendulum-v1", "--methods", "ours", "sb3-td3", "--seeds", "1", "--peer-seeds", "1",
               "--jobs", "1", "--out", str(out), "--suspend-after-s", "3600"]
    states: list = []

    def suspending(task, method, seed, budget_steps, cap_s, state=None, suspend_s=None):
        states.append((method, state, suspend_s))
        if method == "ours":
            return {**_run(method, seed, 15_000, 30.0, task=task), "solved": True}
        return {"task": task, "method": method, "seed": seed, "suspended": True, "env_steps": 4_000, "episodes": 20}

    monkeypatch.setattr(bench_gym, "run_one", suspending)
    assert bench_gym.main(command) == 0
    printed = capsys.readouterr().out
    assert "sb3-td3   seed 0: suspended at 4,000 steps (20 episodes)" in printed
    assert "1 runs suspended or not started" in printed
    assert [(r["method"], r["seed"]) for r in json.loads(out.read_text())["runs"]] == [("ours", 0)]
    assert states[1][1] == tmp_path / "r.suspended" / "Pendulum-v1__sb3-td3__0" and 0 < states[1][2] <= 3600
    ran: list = []
    monkeypatch.setattr(bench_gym, "run_one", _fake_runner(ran))
    saved = states[1][1]  # what run_sb3 leaves there when it suspends
    saved.mkdir(parents=True)
    (saved / "progress.json").write_text(json.dumps({"means": [-900.0] * 20, "seconds": 150.0}))
    assert bench_gym.main(command[:-2]) == 0  # the same sweep again: the suspended run, not ours
    assert ran == [("Pendulum-v1", "sb3-td3", 0, PENDULUM_BUDGET)]
    plan = capsys.readouterr().out
    assert "1 runs already in it, 1 to go" in plan
    assert "to run: Pendulum-v1 sb3-td3 seed 0, from its saved state (20 episodes, 2 min)" in plan


def _fake_runner(ran: list[tuple], fail_at: tuple | None = None):
    """run_one's stand-in: records what it ran; ``fail_at``'s run fails as a crashed run does."""
    def run_one(task, method, seed, budget_steps, cap_s, state=None, suspend_s=None):
        ran.append((task, method, seed, budget_steps))
        if (task, method, seed) == fail_at:
            raise RuntimeError(f"{method} on {task}, seed {seed} failed")
        steps = 15_000 if method == "ours" else None
        return {**_run(method, seed, steps, 30.0, task=task), "solved": steps is not None}
    return run_one


def test_a_stopped_sweep_continues_where_it_stopped(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench_gym, "sb3_version", lambda: "test")
    out = tmp_path / "gym.json"
    command = ["--tasks", "Pendulum-v1", "--methods", "ours", "sb3-td3", "--seeds", "2", "--peer-seeds", "1",
               "--jobs", "1", "--out", str(out)]
    ran: list[tuple] = []
    monkeypatch.setattr(bench_gym, "run_one", _fake_runner(ran, fail_at=("Pendulum-v1", "sb3-td3", 0)))
    assert bench_gym.main(command) == 1
    assert ran[0] == ("Pendulum-v1", "ours", 0, PENDULUM_BUDGET)
    kept = json.loads(out.read_text())
    assert [(r["method"], r["seed"]) for r in kept["runs"]] == [("ours", 0), ("ours", 1)]
    assert kept["tasks"]["Pendulum-v1"]["budget_steps"] == PENDULUM_BUDGET and kept["command"].endswith(str(out))
    assert kept["git_commit"] == kept["sittings"][0]["git_commit"] and "cpu" in kept["machine"]

    ran.clear()
    monkeypatch.setattr(bench_gym, "run_one", _fake_runner(ran))
    assert bench_gym.main(command) == 0
    assert ran == [("Pendulum-v1", "sb3-td3", 0, PENDULUM_BUDGET)]  # only the run the file lacks
    done = json.loads(out.read_text())
    assert [r["sitting"] for r in done["runs"]] == [0, 0, 1] and len(done["sittings"]) == 2
    assert done["summary"]["Pendulum-v1"]["ours"]["solved"] == 2
    assert done["summary"]["Pendulum-v1"]["sb3-td3"]["median_env_steps"] is None
    assert f"not within {PENDULUM_BUDGET:,} steps" in out.with_suffix(".txt").read_text()

    ran.clear()
    assert bench_gym.main(command) == 0 and ran == []  # nothing left to run
    assert bench_gym.main([*command, "--seeds", "0-2"]) == 0 and ran == [("Pendulum-v1", "ours", 2, PENDULUM_BUDGET)]

    # Runs at another budget cannot join these.
    with pytest.raises(SystemExit):
        bench_gym.main([*command, "--budget-steps", "2000"])
    assert "Pendulum-v1 budget_steps" in capsys.readouterr().err


def test_a_results_file_of_the_earlier_format_is_not_continued(tmp_path, capsys):
    out = tmp_path / "old.json"
    out.write_text(json.dumps({"cap_s": 300.0, "tasks": {"Pendulum-v1": {"threshold": -200.0, "episodes": 200}},
                               "runs": []}))
    with pytest.raises(SystemExit):
        bench_gym.main(["--tasks", "Pendulum-v1", "--methods", "ours", "--out", str(out)])
    assert "earlier, wall-clock-capped version" in capsys.readouterr().err


@pytest.mark.parametrize("option, value, expected", [
    ("--seeds", "x", "expected a count (5) or seeds and ranges"),
    ("--peer-seeds", "3-1", "expected a count (5) or seeds and ranges"),
    ("--budget-steps", "0", "expected a positive integer"),
    ("--cap-s", "-1", "expected a positive number"),
])
def test_bad_options_name_the_expected_form(option, value, expected, tmp_path, capsys):
    with pytest.raises(SystemExit):
        bench_gym.main(["--methods", "ours", option, value, "--out", str(tmp_path / "x.json")])
    assert expected in capsys.readouterr().err


def test_a_budget_must_split_into_whole_steps_of_every_copy(tmp_path, capsys):
    with pytest.raises(SystemExit):
        bench_gym.main(["--tasks", "UnityReacher-v0", "--methods", "ours", "--budget-steps", "1010",
                        "--out", str(tmp_path / "x.json")])
    assert "expected a multiple of 20, got 1010" in capsys.readouterr().err
