"""At the edges: every command line refuses abbreviations; bad files, an unwritable place and a
full disk are one line each, exit non-zero, and leave what was saved as it was."""

from __future__ import annotations

import ast
import errno
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import evaluate as evaluate_mod
import train as train_mod
import watch as watch_mod
from ddpg.run_folder import atomic

ROOT = Path(__file__).resolve().parent.parent


def test_every_command_line_refuses_abbreviated_options() -> None:
    """argparse takes '--conf' for '--config' unless told not to: a typo then sets another option."""
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    parsers = []
    for name in tracked.stdout.split():
        for node in ast.walk(ast.parse((ROOT / name).read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "ArgumentParser":
                refuses = any(k.arg == "allow_abbrev" and isinstance(k.value, ast.Constant) and k.value.value is False
                              for k in node.keywords)
                parsers.append((f"{name}:{node.lineno}", refuses))
    assert len(parsers) >= 13  # train, watch, evaluate, sweep, the stand-in and the benchmarks
    assert [where for where, refuses in parsers if not refuses] == []


# ------------------------------------------------------------- bad files: one line each
SMALL = ["--agents", "2", "--max-t", "60", "--no-progress", "--quiet", "--config",
         json.dumps({"buffer_size": 5000, "batch_size": 32, "warmup": 32, "learn_every": 5, "learn_updates": 2})]


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _one_line_error(capsys: pytest.CaptureFixture[str], call: Any, code: int = 2) -> str:
    with pytest.raises(SystemExit) as exc:
        call()
    err = capsys.readouterr().err
    assert exc.value.code == code and "Traceback" not in err
    return err.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("edges") / "run"
    assert train_mod.main(["--episodes", "2", "--out", str(run), *SMALL]) == 0
    return run


@pytest.mark.parametrize("script", ["evaluate", "watch"])
def test_a_random_bytes_checkpoint_is_one_line(tmp_path, capsys, script) -> None:
    junk = tmp_path / "junk.pth"
    junk.write_bytes(np.random.default_rng(0).bytes(4096))
    main = (evaluate_mod if script == "evaluate" else watch_mod).main
    line = _one_line_error(capsys, lambda: main(["--actor", str(junk), "--critic", str(junk)]))
    assert line == (f"{script}.py: error: cannot read {junk}: it is not a checkpoint (a network's state_dict) "
                    "saved by torch.save, or it is damaged (PyTorch: UnpicklingError)")


def test_a_training_state_given_as_a_checkpoint_is_named(run_folder, capsys) -> None:
    line = _one_line_error(capsys, lambda: evaluate_mod.main(["--actor", str(run_folder / "training_state.pt")]))
    assert "holds a training state (training_state.pt), expected a network's state_dict" in line


def test_resume_with_a_checkpoint_for_a_training_state_is_one_line(run_folder, tmp_path, capsys) -> None:
    run = tmp_path / "run"
    shutil.copytree(run_folder, run)
    shutil.copy(run / "checkpoint_actor.pth", run / "training_state.pt")
    before = _files(run)
    line = _one_line_error(capsys, lambda: train_mod.main(["--resume", str(run), "--episodes", "3"]))
    assert line.endswith("is not a training state written by train.py: it lacks networks, optimizer, noise, agent, "
                         "buffer, random, loop (it looks like a network's state_dict: a checkpoint_*.pth?)")
    assert _files(run) == before


def test_resume_with_a_training_state_of_another_architecture_is_one_line(run_folder, tmp_path, capsys) -> None:
    other = tmp_path / "other"
    assert train_mod.main(["--episodes", "1", "--out", str(other), *SMALL[:-1],
                           json.dumps({**json.loads(SMALL[-1]), "actor_fc1": 64})]) == 0
    run = tmp_path / "run"
    shutil.copytree(run_folder, run)
    shutil.copy(other / "training_state.pt", run / "training_state.pt")
    before = _files(run)
    capsys.readouterr()
    line = _one_line_error(capsys, lambda: train_mod.main(["--resume", str(run), "--episodes", "3"]))
    assert "does not fit the run: its actor_local has fc1.bias 64 where the run's run.json has 128 (layers [fc1 33->64, " \
           "fc2 64->128, fc3 128->4] against [fc1 33->128, fc2 128->128, fc3 128->4])" in line
    assert _files(run) == before


def test_watch_into_an_unwritable_place_is_one_line_and_keeps_an_older_video(tmp_path, capsys) -> None:
    line = _one_line_error(capsys, lambda: watch_mod.main(["--out", "/proc/watch.mp4", "--steps", "2", "--width", "64",
                                                           "--height", "48"]))
    assert line.startswith("watch.py: error: --out /proc/watch.mp4 cannot be written (") and \
        line.endswith("); expected a file in a folder that can be written (missing folders are made)")
    video = tmp_path / "watch.gif"
    video.write_bytes(b"an older video")
    assert watch_mod.main(["--out", str(video), "--steps", "2", "--width", "64", "--height", "48"]) == 0
    assert video.read_bytes()[:6] == b"GIF89a" and not list(tmp_path.glob(".*"))


# ------------------------------------------------------------- a full disk
class _FullDisk:
    """A file whose every write fails as on a full disk."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh

    def write(self, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.fh, name)

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.fh.close()


def _full_disk(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """The run folder's writes of files whose path holds ``name`` fail as on a full disk."""
    real_open = open

    def full_open(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        fh = real_open(path, mode, *args, **kwargs)
        return _FullDisk(fh) if "w" in mode and name in str(path) else fh

    monkeypatch.setattr(atomic, "open", full_open, raising=False)


def test_a_full_disk_stops_the_run_with_one_line_and_keeps_the_last_save(run_folder, tmp_path, monkeypatch,
                                                                         capsys) -> None:
    """Writes of training_state.pt fail as on a full disk (torch.save then reports only
    'unexpected pos'); the run stops with the OS's reason, and the folder is as it was."""
    run = tmp_path / "run"
    shutil.copytree(run_folder, run)
    before = _files(run)
    _full_disk(monkeypatch, "training_state.pt")
    assert train_mod.main(["--resume", str(run), "--episodes", "6", "--save-every", "2", "--no-progress",
                           "--quiet"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"train.py: error: cannot write {run / 'training_state.pt'}: No space left on device; {run} keeps "
                   f"its last complete save: once the cause is fixed, python train.py --resume {run} continues from it"]
    assert _files(run)["training_state.pt"] == before["training_state.pt"]
    assert not list(run.glob(".*"))
    monkeypatch.undo()
    assert train_mod.main(["--resume", str(run), "--episodes", "3", "--no-progress", "--quiet"]) == 0
    assert "from episode 3, not exactly" in capsys.readouterr().out  # the run does not save its buffer


def test_a_real_full_disk(tmp_path, capsys) -> None:
    """The same on a 1 MB tmpfs (needs root, as in CI): the buffer outgrows it at a save."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (root needed): {mounted.stderr.decode().strip()}")
    try:
        run = disk / "run"
        done = subprocess.run([sys.executable, str(ROOT / "train.py"), "--out", str(run), "--episodes", "40",
                               "--save-every", "2", "--save-buffer", "--no-stop", "--seed", "2", *SMALL],
                              capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert done.returncode == 1
        line = done.stderr.strip().splitlines()
        assert len(line) == 1 and ": No space left on device; " in line[0] and "Traceback" not in done.stderr
        assert not list(run.glob(".*"))
        saved = tmp_path / "saved"
        shutil.copytree(run, saved)
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
    # The last complete save, moved to a disk with room, resumes exactly: the run ends as one never
    # stopped, one episode past the last one recorded (so past the save that failed), with the same
    # scores and, bit for bit, the same networks (a short run's scores alone are mostly 0.00).
    record = json.loads((saved / "run.json").read_text())
    ended = record["episodes_run"] + 1
    assert record["resumable_from_episode"] < record["episodes_run"]
    assert train_mod.main(["--resume", str(saved), "--episodes", str(ended), "--no-progress", "--quiet"]) == 0
    assert f"from episode {record['resumable_from_episode'] + 1}, exactly" in capsys.readouterr().out
    straight = tmp_path / "straight"
    assert train_mod.main(["--out", str(straight), "--episodes", str(ended), "--save-every", "2", "--save-buffer",
                           "--no-stop", "--seed", "2", *SMALL]) == 0
    assert (saved / "scores.csv").read_bytes() == (straight / "scores.csv").read_bytes()
    for name in ("checkpoint_actor.pth", "checkpoint_critic.pth"):
        resumed, whole = (torch.load(folder / name, weights_only=True) for folder in (saved, straight))
        assert resumed.keys() == whole.keys() and all(torch.equal(resumed[k], whole[k]) for k in whole), name


# ------------------------------------------------------------- what the tools say is so
def test_watch_writes_a_filmstrip_for_a_png(tmp_path, capsys) -> None:
    strip = tmp_path / "strip.png"
    assert watch_mod.main(["--out", str(strip), "--steps", "30", "--agents", "2", "--width", "64", "--height", "48"]) == 0
    from PIL import Image

    with Image.open(strip) as image:
        assert image.size == (4 * 64 + 3 * 4, 48)  # four stills and the white gaps between them
    assert "Saved" in capsys.readouterr().out


def test_one_evaluation_episode_claims_no_interval(capsys) -> None:
    assert evaluate_mod.main(["--episodes", "1", "--agents", "2", "--no-progress"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert "1 episode of 2 arm(s)" in line and "CI" not in line and "no spread or confidence interval" in line
    summary = evaluate_mod.summarise(np.array([3.0]))
    assert summary["std"] is None and summary["ci95_low"] is None and summary["mean"] == 3.0


def test_progress_bars_only_on_a_terminal(capsys) -> None:
    """Written into a log (stderr not a terminal, as under pytest), a bar would be noise."""
    from ddpg.loop import train
    from ddpg.reporting.callbacks import Printer
    from ddpg_agent import Agent
    from tests._agent_helpers import FakeEnv

    printer = Printer(quiet=True, progress=True)
    train(FakeEnv(num_agents=2, episode_len=5), Agent(33, 4, 0, buffer_size=100), episodes=2, callbacks=[printer])
    assert printer.bar.disable and "ep/s" not in capsys.readouterr().err


def test_nothing_points_outside_the_repository_and_no_issue_numbers_in_what_readers_read() -> None:
    """Readers do not see the issue tracker: a change is told in words or by commit."""
    shared = subprocess.run(["git", "grep", "-l", "-F", "../shared", "--", ":!tests"], cwd=ROOT, capture_output=True, text=True)
    assert shared.stdout.split() == []
    readable = [ROOT / "README.md", ROOT / "Report.md", *sorted((ROOT / "docs").glob("*.md"))]
    texts = {p.name: p.read_text() for p in readable}
    for notebook in sorted(ROOT.glob("*.ipynb")):
        cells = json.loads(notebook.read_text())["cells"]
        texts[notebook.name] = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    import re

    found = {name: re.findall(r"issues? \d+", text, flags=re.IGNORECASE) for name, text in texts.items()}
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_the_readme_shows_the_trained_arms_made_by_its_command() -> None:
    """The README's animation exists, loads fast, and the command that made it is beside it."""
    readme = (ROOT / "README.md").read_text()
    assert "](docs/media/arms.gif)" in readme
    command = ".venv/bin/python watch.py --out docs/media/arms.gif --steps 250 --every 2 --fps 12.5 --width 320 --height 240"
    assert command in " ".join(readme.split())
    gif = ROOT / "docs" / "media" / "arms.gif"
    assert gif.stat().st_size <= 2_000_000
    from PIL import Image

    with Image.open(gif) as image:  # the command's frames: decisions 0, 2, ..., 250 at 320x240, looping
        assert (image.n_frames, image.size, image.info["loop"]) == (126, (320, 240), 0)


# ------------------------------------------------------------- the second pass
TINY = [*SMALL[:2], "--max-t", "20", *SMALL[4:]]  # SMALL's settings, 20 decisions an episode


class _Killed(BaseException):
    """What kill -9 does to a run, in this process: nothing after it runs (no callback's end,
    no save), and the folder is left as the moment found it."""


def _stop_at(monkeypatch: pytest.MonkeyPatch, name: str, count: int, stop: type[BaseException]) -> None:
    """Raise ``stop`` at the ``count``-th time the run passes the fault point ``name``
    (``ddpg.run_folder.faults``): KeyboardInterrupt is Ctrl-C, _Killed a kill -9."""
    from ddpg.run_folder import faults

    passed = {"n": 0}

    def point(where: str) -> None:
        if where == name:
            passed["n"] += 1
            if passed["n"] == count:
                raise stop

    monkeypatch.setattr(faults, "point", point)


def _said(line: str) -> str:
    """An error line without its program's name (train.py's parser takes it from sys.argv[0])."""
    return line.split(": error: ", 1)[1]


def _record(run: Path) -> dict[str, Any]:
    return json.loads((run / "run.json").read_text())


def test_a_resume_keeps_the_runs_save_every(tmp_path, monkeypatch, capsys) -> None:
    """Ctrl-C after episode 3 of a run saving every 2 episodes; the resume still saves every 2,
    so a kill -9 after episode 9 loses episode 9 alone (it saved every 10: episodes 4-9)."""
    run = tmp_path / "run"
    _stop_at(monkeypatch, "mid-episode", 4, KeyboardInterrupt)
    assert train_mod.main(["--episodes", "12", "--save-every", "2", "--out", str(run), *TINY]) == 130
    assert _record(run)["save_every"] == 2 and _record(run)["resumable_from_episode"] == 3
    _stop_at(monkeypatch, "episode 9 done", 1, _Killed)
    with pytest.raises(_Killed):
        train_mod.main(["--resume", str(run), "--no-progress", "--quiet"])
    assert _record(run)["resumable_from_episode"] == 8 and _record(run)["episodes_run"] == 9
    monkeypatch.undo()
    capsys.readouterr()
    assert train_mod.main(["--resume", str(run), "--episodes", "10", "--save-every", "5", "--no-progress",
                           "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "from episode 9, not exactly" in out and "; episode 9, run after the last complete save, is lost" in out
    assert _record(run)["save_every"] == 5  # given on the resume: it applies, and is recorded
    # A run.json written before save_every was recorded resumes with the default it ran with.
    record = _record(run)
    del record["save_every"]
    (run / "run.json").write_text(json.dumps(record))
    assert train_mod.main(["--resume", str(run), "--episodes", "11", "--no-progress", "--quiet"]) == 0
    assert _record(run)["save_every"] == 10


def test_a_save_buffer_that_failed_is_not_kept_and_no_save_buffer_turns_it_off(run_folder, tmp_path, monkeypatch,
                                                                             capsys) -> None:
    """The disk has no room for the buffer: the resume asking for it stops at its first save,
    and run.json still says what the last complete save did (no buffer), so a resume without
    the flag does not try again; --no-save-buffer turns a recorded buffer off."""
    run = tmp_path / "run"
    shutil.copytree(run_folder, run)
    _full_disk(monkeypatch, "replay_buffer")
    assert train_mod.main(["--resume", str(run), "--episodes", "5", "--save-every", "1", "--save-buffer",
                           "--no-progress", "--quiet"]) == 1
    assert "No space left on device" in capsys.readouterr().err
    assert _record(run)["save_buffer"] is False
    assert train_mod.main(["--resume", str(run), "--episodes", "4", "--no-progress", "--quiet"]) == 0
    assert _record(run)["save_buffer"] is False and not (run / "replay_buffer.pt").exists()
    monkeypatch.undo()
    assert train_mod.main(["--resume", str(run), "--episodes", "5", "--save-buffer", "--no-progress", "--quiet"]) == 0
    assert _record(run)["save_buffer"] is True and (run / "replay_buffer.pt").exists()
    assert train_mod.main(["--resume", str(run), "--episodes", "6", "--no-save-buffer", "--no-progress",
                           "--quiet"]) == 0
    assert _record(run)["save_buffer"] is False and not (run / "replay_buffer.pt").exists()


@pytest.mark.parametrize(("config", "agents", "message"), [
    ({"buffer_size": 1}, "2", "--config: buffer_size must be at least 2, the transitions of one step (one per arm or "
                              "copy), got 1"),
    ({"buffer_size": 100, "warmup": 101}, "2", "--config: warmup must be at most buffer_size (learning starts once the "
                                               "buffer holds warmup transitions, and it never holds more than "
                                               "buffer_size), got warmup 101 and buffer_size 100"),
    ({"goal_paths": 2, "buffer_size": 30, "warmup": 10}, "1",
     "--config: buffer_size must be at least 40, the transitions an episode adds at its end against its goal paths "
     "(2 goal paths x 1 arm(s) x 20 decisions), got 30"),
])
def test_a_buffer_too_small_for_the_task_is_refused_before_anything_is_written(tmp_path, capsys, config, agents,
                                                                               message) -> None:
    out = tmp_path / "B"
    line = _one_line_error(capsys, lambda: train_mod.main(["--config", json.dumps(config), "--agents", agents,
                                                           "--max-t", "20", "--episodes", "2", "--out", str(out)]))
    assert _said(line) == message
    assert not out.exists()


@pytest.mark.parametrize("script", ["train", "watch", "evaluate"])
def test_a_seed_beyond_what_pytorch_takes_is_one_line_and_makes_no_folder(tmp_path, capsys, script) -> None:
    out = tmp_path / ("S" if script == "train" else "S.png")
    main = {"train": train_mod, "watch": watch_mod, "evaluate": evaluate_mod}[script].main
    line = _one_line_error(capsys, lambda: main(["--seed", str(2**64), "--episodes", "1", "--out", str(out)]))
    assert _said(line) == ("argument --seed: expected a seed: an integer from 0 to 2**63 - 1 (9223372036854775807), "
                           f"got {2**64}")
    assert not out.exists()
    line = _one_line_error(capsys, lambda: main(["--seed", "-1", "--episodes", "1", "--out", str(out)]))
    assert line.endswith("expected a seed: an integer from 0 to 2**63 - 1 (9223372036854775807), got -1")


def test_the_largest_seed_trains_with_twin_critics(tmp_path) -> None:
    """The seed's offsets (a second critic: + 1, the metrics' probe: + 7919) stay within PyTorch's range."""
    from ddpg.command_line.parsing import SEED_MAX

    run = tmp_path / "S"
    config = json.dumps({**json.loads(SMALL[-1]), "preset": "td3"})
    assert train_mod.main(["--seed", str(SEED_MAX), "--episodes", "1", "--out", str(run), *TINY[:-1], config]) == 0
    assert _record(run)["seed"] == SEED_MAX


def test_the_filmstrip_plays_every_decision_asked_and_serves_short_ones(tmp_path, capsys, monkeypatch) -> None:
    from reacher import ReacherEnvironment

    assert watch_mod.still_decisions(4, 50) == [0, 16, 33, 50]
    assert watch_mod.still_decisions(4, 2) == [0, 1, 2] and watch_mod.still_decisions(4, 1) == [0, 1]
    played = []
    real_step = ReacherEnvironment.step
    monkeypatch.setattr(ReacherEnvironment, "step", lambda self, actions: played.append(1) or real_step(self, actions))
    agent = watch_mod.load_agent()
    with ReacherEnvironment(num_agents=2, seed=0, verbose=False) as env:
        strip = watch_mod.filmstrip(env, agent, tmp_path / "a.png", steps=50, width=16, height=16)
    assert len(played) == 50  # not 48 = 3 x (50 // 3)
    with ReacherEnvironment(num_agents=2, seed=0, verbose=False) as env:
        np.testing.assert_array_equal(strip, watch_mod.run_episode(env, agent, steps=50))
    from PIL import Image

    for steps, stills, words in (("50", 4, "four stills over 50 decisions"), ("2", 3, "three stills over 2 decisions"),
                                 ("1", 2, "two stills over 1 decision of")):
        assert watch_mod.main(["--out", str(tmp_path / "s.png"), "--steps", steps, "--agents", "2", "--width", "16",
                               "--height", "16"]) == 0
        assert words in capsys.readouterr().out
        with Image.open(tmp_path / "s.png") as image:
            assert image.size == (stills * 16 + (stills - 1) * 4, 16)


def test_watch_finds_an_unwritable_output_before_rendering(monkeypatch, capsys) -> None:
    def no_rendering(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the environment was made: rendering would begin")

    monkeypatch.setattr(watch_mod, "ReacherEnvironment", no_rendering)
    for out in ("/proc/x/a.gif", "/proc/x/a.png"):
        line = _one_line_error(capsys, lambda out=out: watch_mod.main(["--out", out, "--steps", "100"]))
        assert line.startswith(f"watch.py: error: --out {out} cannot be written (")


def test_the_confidence_interval_is_students_t() -> None:
    """A few episodes estimate their own spread: the interval is Student's t, not the normal 1.96."""
    import math

    for df, table in ((1, 12.706), (2, 4.303), (10, 2.228), (100, 1.984)):
        assert round(evaluate_mod.t_quantile(0.975, df), 3) == table
    assert evaluate_mod.t_quantile(0.975, 1) == pytest.approx(math.tan(math.pi * 0.475), rel=1e-12)
    assert evaluate_mod.t_quantile(0.975, 2) == pytest.approx(0.95 / math.sqrt(2 * 0.975 * 0.025), rel=1e-12)
    assert evaluate_mod.t_quantile(0.975, 10**6) == pytest.approx(1.959966, abs=1e-5)
    summary = evaluate_mod.summarise(np.array([30.0, 32.0]))  # std sqrt(2), n 2: the half-width is t(0.975, 1)
    assert summary["ci95_high"] - summary["mean"] == pytest.approx(12.7062047, rel=1e-8)


def test_a_finished_run_without_its_training_state_is_refused_not_retrained(run_folder, tmp_path, capsys) -> None:
    run = tmp_path / "run"
    shutil.copytree(run_folder, run)
    (run / "training_state.pt").unlink()
    before = _files(run)
    line = _one_line_error(capsys, lambda: train_mod.main(["--resume", str(run), "--episodes", "3"]))
    assert _said(line) == (f"--resume: {run} has no training_state.pt, though its run.json records the "
                    "finished run's final save, after episode 2: it cannot be continued without that file, and nothing "
                    "was changed; put the file back, or train it again from episode 1 with its command (run.json's "
                    "\"command\") and --force")
    assert _files(run) == before


def test_a_run_killed_before_its_first_save_starts_again_and_says_so(tmp_path, monkeypatch, capsys) -> None:
    """run.json is written when the run starts: a run killed before its first training state
    was saved still resumes, from episode 1, with its recorded settings (killed for real: a
    finished run whose training_state.pt was deleted is refused, the test above)."""
    run, straight = tmp_path / "run", tmp_path / "straight"
    assert train_mod.main(["--episodes", "2", "--seed", "4", "--out", str(straight), *TINY]) == 0
    _stop_at(monkeypatch, "episode 2 done", 1, _Killed)
    with pytest.raises(_Killed):
        train_mod.main(["--episodes", "3", "--seed", "4", "--out", str(run), *TINY])
    assert not (run / "training_state.pt").exists() and _record(run)["resumable_from_episode"] is None
    monkeypatch.undo()
    capsys.readouterr()
    assert train_mod.main(["--resume", str(run), "--episodes", "2", "--no-progress", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "no training state" in out and "starts again from episode 1" in out and "2 episode(s) written are lost" in out
    assert (run / "scores.csv").read_bytes() == (straight / "scores.csv").read_bytes()  # the same seed, from its start
    assert _record(run)["seed"] == 4 and _record(run)["resumed"][0]["from_episode"] == 0


def test_a_resume_refused_for_its_budget_says_nothing_of_resuming(run_folder, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        train_mod.main(["--resume", str(run_folder), "--no-progress", "--quiet"])
    said = capsys.readouterr()
    assert exc.value.code == 2 and "Traceback" not in said.err
    assert _said(said.err.strip().splitlines()[-1]) == "--resume: the run already has 2 episodes; pass --episodes above that"
    assert "Resuming" not in said.out


@pytest.mark.parametrize("script", ["train", "evaluate"])
def test_an_empty_out_is_refused(tmp_path, capsys, monkeypatch, script) -> None:
    monkeypatch.chdir(tmp_path)
    main = train_mod.main if script == "train" else evaluate_mod.main
    line = _one_line_error(capsys, lambda: main(["--out", "", "--episodes", "1"]))
    assert _said(line) == "argument --out: expected a path, got '' (for the current folder, write .)"
    assert list(tmp_path.iterdir()) == []


def test_the_retired_fast_learner_is_one_line(run_folder, tmp_path, capsys) -> None:
    """--learner fast was the hand-written CPU learner, retired: a command that still gives it gets
    argparse's one line, naming the learners there are, and no folder. (Its --threads is PyTorch's
    thread count now, for any learner: tests/test_settings_walk.py.)"""
    line = _one_line_error(capsys, lambda: train_mod.main(["--learner", "fast", "--out", str(tmp_path / "r"),
                                                           "--episodes", "1"]))
    assert "--learner" in line and "'fast'" in line and "readable" in line
    line = _one_line_error(capsys, lambda: train_mod.main(["--threads", "0", "--out", str(tmp_path / "r"),
                                                           "--episodes", "1"]))
    assert "--threads" in line
    assert not (tmp_path / "r").exists()


def test_sweep_without_ray_names_the_make_target_that_installs_it(monkeypatch, capsys) -> None:
    import sweep

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, as where it is not installed
    line = _one_line_error(capsys, lambda: sweep.main(["--seeds", "1"]))
    assert _said(line) == "Ray is not installed: pip install -r requirements-sweep.txt (or make sweep-setup)"
    assert "\nsweep-setup:" in (ROOT / "Makefile").read_text()


# ------------------------------------------------------------- sizes the machine cannot hold
@pytest.mark.parametrize(("config", "setting"), [({"buffer_size": 10**11}, "buffer_size"),
                                                  ({"buffer_size": 1000, "warmup": 10, "batch_size": 10**9},
                                                   "batch_size")])
def test_a_size_the_machine_cannot_hold_is_one_line_before_anything_is_allocated(tmp_path, capsys, monkeypatch,
                                                                                 config, setting) -> None:
    import ddpg.agents

    monkeypatch.setattr(ddpg.agents, "make_agent", lambda *a, **k: pytest.fail("the agent was made"))
    out = tmp_path / "runs" / "big"
    line = _one_line_error(capsys, lambda: train_mod.main(["--config", json.dumps(config), "--agents", "2",
                                                           "--episodes", "1", "--out", str(out)]))
    assert _said(line).startswith(f"--config: {setting} {config[setting]:,} cannot be held") and "bytes" in line
    assert list(tmp_path.iterdir()) == []


def test_the_memory_estimate_takes_what_the_machine_has(tmp_path) -> None:
    from ddpg.command_line import memory_need
    from ddpg_agent import DDPGConfig

    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       16000000 kB\nMemAvailable:    1000000 kB\n")
    assert memory_need.available(meminfo, tmp_path / "no_cgroup") == (1_024_000_000, "MemAvailable in /proc/meminfo")
    (tmp_path / "memory.max").write_text("600000000\n")
    (tmp_path / "memory.current").write_text("100000000\n")
    assert memory_need.available(meminfo, tmp_path)[0] == 500_000_000  # a container's limit, when lower
    config = DDPGConfig(buffer_size=1_000_000, batch_size=256)
    buffer, _ = memory_need.needed(config, 33, 4)
    assert buffer == 1_000_000 * (72 + 4) * 4  # 304 MB, the rows and their steps: fits a 1 GB machine, not 0.2 GB
    assert memory_need.problem(config, 33, 4, room=(10**9, "test")) is None
    said = memory_need.problem(config, 33, 4, room=(2 * 10**8, "test"))
    assert said is not None and "buffer_size 1,000,000" in said and "200,000,000 bytes" in said


@pytest.mark.parametrize(("value", "kind"), [("128", "the string '128'"), (128.0, "128.0 (a float)"),
                                             (128.5, "128.5 (a float)"), (True, "true (a boolean)")])
def test_a_setting_of_the_wrong_type_says_the_type_expected_and_got(tmp_path, capsys, value, kind) -> None:
    out = tmp_path / "T"
    line = _one_line_error(capsys, lambda: train_mod.main(["--config", json.dumps({"batch_size": value}), "--out",
                                                           str(out)]))
    assert _said(line) == f"--config: batch_size must be a whole number >= 1, got {kind}"  # not "invalid VariantConfig"
    assert not out.exists()


# ------------------------------------------------------------- metrics.csv: the agent's own critic loss
def _filled(agent: Any) -> Any:
    rng = np.random.default_rng(0)
    agent.memory.add(rng.normal(size=(40, 4)), rng.uniform(-1, 1, size=(40, 2)), 50.0 * rng.normal(size=40),
                     rng.normal(size=(40, 4)), 0.9)
    return agent


def test_metrics_log_the_critic_loss_the_agent_minimises() -> None:
    """An agent with a Huber loss logs its Huber loss, against its own target, not DDPG's MSE."""
    import torch.nn.functional as F

    from ddpg.reporting import metrics
    from ddpg_agent import Agent, DDPGConfig

    class Huber(Agent):
        def critic_loss(self, states: torch.Tensor, actions: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return F.smooth_l1_loss(self.critic_local(states, actions), y)

        def td_target(self, rewards: torch.Tensor, next_states: torch.Tensor, discounts: torch.Tensor) -> torch.Tensor:
            return rewards  # a one-step bandit's target

    agent = _filled(Huber(4, 2, 0, config=DDPGConfig(buffer_size=64, batch_size=8, warmup=8)))
    got = metrics.probe(agent, torch.Generator().manual_seed(3))["critic_loss"]
    rows = agent.memory.data[torch.randint(len(agent.memory), (metrics.PROBE_BATCH,),
                                           generator=torch.Generator().manual_seed(3))]
    states, actions, rewards, _, _ = agent.memory.split(rows)
    with torch.no_grad():
        q = agent.critic_local(states, actions)
        assert got == pytest.approx(float(F.smooth_l1_loss(q, rewards)), rel=1e-6)
        assert got != pytest.approx(float((q - rewards).pow(2).mean()), rel=1e-2)


@pytest.mark.parametrize("config", [{"preset": "td3"}, {"preset": "redq"}, {"replay": "prioritized"}])
def test_probing_a_variants_loss_draws_nothing_and_changes_nothing(config) -> None:
    """TD3's smoothing and REDQ's subset draw from torch's global generator, prioritized replay notes
    its TD errors: the probe puts all of it back, so training is the run a run without metrics is."""
    from ddpg.reporting import metrics
    from ddpg.variants import VariantAgent, parse_config

    agent = _filled(VariantAgent(4, 2, 0, config=parse_config({"buffer_size": 64, "batch_size": 8, "warmup": 8,
                                                               **config})))
    before, attributes = torch.get_rng_state(), dict(vars(agent))
    row = metrics.probe(agent, torch.Generator().manual_seed(3))
    assert row["critic_loss"] > 0 and torch.equal(torch.get_rng_state(), before)
    assert set(vars(agent)) == set(attributes) and all(vars(agent)[k] is v for k, v in attributes.items())


def test_sweep_refuses_an_empty_out_in_one_line(capsys) -> None:
    import sweep

    line = _one_line_error(capsys, lambda: sweep.main(["--seeds", "1", "--out", ""]))
    assert _said(line) == "argument --out: expected a path, got '' (for the current folder, write .)"


def test_the_benchmarks_seeds_take_the_shared_seed_check(capsys) -> None:
    from benchmarks import bench_train, probe_run
    from ddpg.command_line.parsing import SEED_MAX

    for argv in (["--first-seed", str(2**64)], ["--first-seed", "-1"], ["--first-seed", str(SEED_MAX), "--seeds", "2"],
                 ["--seeds", f"0,{2**64}"]):
        line = _one_line_error(capsys, lambda argv=argv: bench_train.main(argv))
        assert "expected a seed: an integer from 0 to 2**63 - 1" in line, argv
    with pytest.raises(SystemExit):
        probe_run.parser("", 0, 1, {}, 0).parse_args(["--seed", str(2**64)])


@pytest.mark.parametrize("script", ["watch", "evaluate"])
@pytest.mark.parametrize("shapes_recorded", [True, False])
def test_a_run_whose_record_no_longer_builds_its_networks_says_what_differs(run_folder, tmp_path, capsys, script,
                                                                            shapes_recorded) -> None:
    """watch.py --run DIR is what rebuilds the agent from run.json: its line must not send the user there.
    (A run.json written before runs recorded their networks' shapes is checked against the checkpoint.)"""
    run = tmp_path / "run"
    shutil.copytree(run_folder, run)
    record = json.loads((run / "run.json").read_text())
    record["config"]["actor_fc1"] = 64  # as if the width had been edited since
    if not shapes_recorded:
        record.pop("networks", None)
    (run / "run.json").write_text(json.dumps(record))
    main = (watch_mod if script == "watch" else evaluate_mod).main
    line = _one_line_error(capsys, lambda: main(["--run", str(run), "--out", str(tmp_path / "w.gif")]))
    assert str(run) in line and "128" in line and "64" in line and "put " in line  # what differs, what to do
    assert "--run DIR" not in line and "watch.py --run" not in line


def test_max_t_help_names_each_kind_of_tasks_limit() -> None:
    """--max-t's default is the task's episode limit: its help named only the Reacher's."""
    import re

    import gymnasium as gym

    import crawler
    from ddpg.command_line.options import build_parser

    (action,) = [a for a in build_parser()._actions if a.dest == "max_t"]
    text = " ".join(action.help.split())
    assert "Gymnasium" in text and "max_episode_steps" in text
    named = dict((env_id, int(n)) for n, env_id in re.findall(r"(\d+) for ([\w-]+-v\d+)", text))
    assert named.get(crawler.GYMNASIUM_ID) == crawler.MAX_EPISODE_STEPS
    assert all(gym.spec(env_id).max_episode_steps == n for env_id, n in named.items())


TIMING_COLUMNS = ("updates_per_s", "episode_s", "wall_s")


def _metrics_without_timing(run: Path) -> list[list[str]]:
    import csv

    with open(run / "metrics.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    keep = [i for i, name in enumerate(rows[0]) if name not in TIMING_COLUMNS]
    return [[row[i] for i in keep] for row in rows]


def test_a_stopped_and_resumed_run_writes_the_metrics_of_one_never_stopped(tmp_path, monkeypatch, capsys) -> None:
    """Ctrl-C in episode 3, then --resume: metrics.csv is the uninterrupted run's, byte for byte but
    for its timing columns (the probe's generator started again at the resume: the losses differed)."""
    command = ["--episodes", "5", *TINY]
    assert train_mod.main([*command, "--out", str(tmp_path / "whole")]) == 0
    _stop_at(monkeypatch, "mid-episode", 3, KeyboardInterrupt)
    assert train_mod.main([*command, "--out", str(tmp_path / "stopped")]) == 130
    assert _record(tmp_path / "stopped")["resumable_from_episode"] == 2
    monkeypatch.undo()
    assert train_mod.main(["--resume", str(tmp_path / "stopped"), "--no-progress", "--quiet"]) == 0
    whole, resumed = _metrics_without_timing(tmp_path / "whole"), _metrics_without_timing(tmp_path / "stopped")
    assert len(whole) == 6 and all(row[5] for row in whole[3:])  # episodes 3-5 probed (critic_loss)
    assert resumed == whole
    assert (tmp_path / "stopped" / "scores.csv").read_bytes() == (tmp_path / "whole" / "scores.csv").read_bytes()


def _bare_actor(tmp_path: Path, inputs: int, actions: int) -> Path:
    """An actor checkpoint of those sizes, with no run folder around it."""
    from ddpg.agents import agent_from_checkpoints  # noqa: F401 (the agent's modules, as the commands load them)
    from ddpg_agent import Agent

    path = tmp_path / f"actor_{inputs}_{actions}.pth"
    torch.save(Agent(inputs, actions, 0, buffer_size=64).actor_local.state_dict(), path)
    return path


@pytest.mark.parametrize("script", ["evaluate", "watch"])
def test_a_bare_crawler_checkpoint_plays_the_crawler(tmp_path, monkeypatch, capsys, script) -> None:
    """129 inputs and 20 actions are the Crawler's: without --run they played the Reacher (33, 4) and
    failed in a reshape. Now the Crawler is opened, with --agents crawlers (watch.py ignored it)."""
    actor = _bare_actor(tmp_path, 129, 20)
    opened = []
    module = evaluate_mod if script == "evaluate" else watch_mod

    def opening(env_id: str, n: int, *args: Any, **kwargs: Any) -> Any:
        opened.append((env_id, n))
        return real(env_id, n, *args, **kwargs)

    real = module.open_environment
    monkeypatch.setattr(module, "open_environment", opening)
    common = ["--actor", str(actor), "--agents", "2"]
    if script == "evaluate":
        assert evaluate_mod.main([*common, "--episodes", "1", "--no-progress"]) == 0
    else:
        assert watch_mod.main([*common, "--steps", "2", "--out", str(tmp_path / "crawler.mp4")]) == 0
        assert (tmp_path / "crawler.mp4").stat().st_size > 0
    assert opened == [("UnityCrawler-v0", 2)]


@pytest.mark.parametrize("script", ["evaluate", "watch"])
def test_a_bare_checkpoint_of_no_known_size_asks_for_run(tmp_path, capsys, script) -> None:
    actor = _bare_actor(tmp_path, 5, 2)
    main = evaluate_mod.main if script == "evaluate" else watch_mod.main
    line = _one_line_error(capsys, lambda: main(["--actor", str(actor), "--episodes", "1"]))
    assert "--run" in line and "5" in line and "2" in line


def test_watch_fps_help_names_the_crawlers_rate() -> None:
    from crawler.gym_env import RENDER_FPS

    (action,) = [a for a in watch_mod.build_parser()._actions if a.dest == "fps"]
    text = " ".join(action.help.split())
    assert f"Crawler's {round(RENDER_FPS)}" in text and f"Reacher's {watch_mod.DECISIONS_PER_SECOND:g}" in text
