"""One writer per run folder (ddpg.run_folder.run_lock), and no folder left behind by a refusal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import evaluate as evaluate_mod
import train as train_mod
import watch as watch_mod
from ddpg.run_folder import run_lock

ROOT = Path(__file__).resolve().parent.parent
TINY = ["--agents", "2", "--max-t", "20", "--no-progress", "--quiet", "--config",
        json.dumps({"buffer_size": 400, "batch_size": 8, "warmup": 16, "learn_every": 5, "learn_updates": 1})]


def _refused(capsys: pytest.CaptureFixture[str], call: Any) -> str:
    """The one line a refusal (exit status 2, no traceback) ends with."""
    with pytest.raises(SystemExit) as stop:
        call()
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "Traceback" not in err, err
    return err.strip().splitlines()[-1]


def _holding(folder: Path) -> subprocess.Popen[str]:
    """Another process that holds ``folder``'s lock until its stdin closes (or it is killed)."""
    code = ("import sys\nfrom ddpg.run_folder import run_lock\nwith run_lock.claim(sys.argv[1]):\n"
            "    print('held', flush=True)\n    sys.stdin.read()\n")
    process = subprocess.Popen([sys.executable, "-c", code, str(folder)], cwd=ROOT, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    return process


def test_a_claim_is_one_writer_and_a_killed_holder_leaves_no_stale_lock(tmp_path) -> None:
    folder = tmp_path / "run"
    holder = _holding(folder)
    try:
        assert run_lock.holder(folder) == holder.pid
        with pytest.raises(run_lock.FolderInUse, match=f"process {holder.pid} "), run_lock.claim(folder):
            pass
    finally:
        holder.kill()  # SIGKILL: the kernel lets the lock go
        holder.wait()
    assert (folder / run_lock.LOCK_FILE).exists() and run_lock.holder(folder) is None  # the file stays, not the lock
    with run_lock.claim(folder):
        assert run_lock.holder(folder) == os.getpid()
    assert list(folder.iterdir()) == []  # let go: the lock file is removed


def test_a_claim_removes_the_empty_folders_it_made_and_only_those(tmp_path) -> None:
    deep = tmp_path / "a" / "b" / "c"
    with pytest.raises(RuntimeError), run_lock.claim(deep):
        assert deep.is_dir()
        raise RuntimeError("refused")
    assert list(tmp_path.iterdir()) == []
    kept = tmp_path / "kept"
    kept.mkdir()
    with run_lock.claim(kept / "new") as new:
        (new / "scores.csv").write_text("1\n")
    assert [p.name for p in (kept / "new").iterdir()] == ["scores.csv"]
    with run_lock.claim(kept):
        pass
    assert kept.is_dir()  # there before: never removed
    with run_lock.claim(tmp_path / "gone", create=False):
        pass
    assert not (tmp_path / "gone").exists()


def test_a_lock_file_removed_by_its_last_holder_is_not_locked_twice(tmp_path, monkeypatch) -> None:
    """A claim that opened the lock file just as its holder removed it (and let go) would lock a
    file no longer at the path, beside a third process locking the new one: it locks the new one."""
    gone = tmp_path / "removed"
    gone.write_text("")
    real_open, opened = os.open, []

    def racing_open(path: Any, flags: int, mode: int = 0o777) -> int:
        opened.append(path)
        if len(opened) == 1:  # the first open finds the file its holder is about to remove
            fd = real_open(gone, flags, mode)
            gone.unlink()
            return fd
        return real_open(path, flags, mode)

    monkeypatch.setattr(run_lock.os, "open", racing_open)
    with run_lock.claim(tmp_path / "run") as folder:
        monkeypatch.undo()
        assert len(opened) == 2 and run_lock.holder(folder) == os.getpid()


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("locked") / "run"
    assert train_mod.main(["--episodes", "2", "--out", str(run), *TINY]) == 0
    assert not (run / run_lock.LOCK_FILE).exists()
    return run


def _files(folder: Path) -> dict[str, bytes]:
    """The run's files (not the lock file, which the holding process keeps there)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file() and p.name != run_lock.LOCK_FILE}


def test_every_writer_is_refused_a_folder_in_use_naming_its_process(trained, tmp_path, capsys) -> None:
    before = _files(trained)
    holder = _holding(trained)
    try:
        for argv in (["--resume", str(trained), "--episodes", "3"], ["--force", "--out", str(trained), *TINY],
                     ["--out", str(trained), *TINY]):
            line = _refused(capsys, lambda argv=argv: train_mod.main(argv))
            assert f"process {holder.pid}" in line and str(trained) in line, argv
        line = _refused(capsys, lambda: evaluate_mod.main(["--run", str(trained), "--episodes", "1", "--out",
                                                           str(trained)]))
        assert f"process {holder.pid}" in line
        line = _refused(capsys, lambda: watch_mod.main(["--run", str(trained), "--out", str(trained / "a.gif"),
                                                        "--steps", "2"]))
        assert f"process {holder.pid}" in line
        assert _files(trained) == before  # --force cleared nothing, --resume wrote nothing
    finally:
        holder.kill()
        holder.wait()
    capsys.readouterr()
    assert train_mod.main(["--resume", str(trained), "--episodes", "3", "--no-progress", "--quiet"]) == 0
    assert not (trained / run_lock.LOCK_FILE).exists()


def test_a_training_run_holds_its_folder_and_kill_9_frees_it(tmp_path, capsys) -> None:
    """A real train.py: while it trains, a second one is refused; killed with SIGKILL, it leaves no
    stale lock (the crash tests resume after kill -9 too)."""
    run = tmp_path / "run"
    process = subprocess.Popen([sys.executable, str(ROOT / "train.py"), "--out", str(run), "--episodes", "100000",
                                "--no-stop", *TINY], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (run / "scores.csv").exists():  # an episode written: it is training
            assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()  # type: ignore[union-attr]
            time.sleep(0.1)
        second = subprocess.run([sys.executable, str(ROOT / "train.py"), "--resume", str(run), "--episodes", "200000"],
                                cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert second.returncode == 2 and f"process {process.pid}" in second.stderr.strip().splitlines()[-1]
        assert "Traceback" not in second.stderr
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert train_mod.main(["--force", "--out", str(run), "--episodes", "1", *TINY]) == 0


# ------------------------------------------------------------- no folder left by a refusal
def test_reacher_threads_is_named_and_leaves_no_folder(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("REACHER_THREADS", "abc")
    out = tmp_path / "runs" / "latest"
    line = _refused(capsys, lambda: train_mod.main(["--out", str(out), "--episodes", "1", *TINY]))
    assert "REACHER_THREADS" in line and "--env" not in line
    assert list(tmp_path.iterdir()) == []


def test_a_refused_learner_or_an_agent_failing_at_start_leaves_no_folder(tmp_path, capsys, monkeypatch) -> None:
    out = tmp_path / "graph"
    line = _refused(capsys, lambda: train_mod.main(["--learner", "graph", "--device", "cpu", "--out", str(out),
                                                    "--episodes", "1", *TINY]))
    assert "--learner graph" in line and list(tmp_path.iterdir()) == []

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("an edit that breaks at start")

    import ddpg.agents

    monkeypatch.setattr(ddpg.agents, "make_agent", broken)
    with pytest.raises(RuntimeError, match="breaks at start"):
        train_mod.main(["--out", str(tmp_path / "broken"), "--episodes", "1", *TINY])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("script", ["train", "evaluate", "watch"])
def test_a_path_the_file_system_refuses_is_one_line(tmp_path, capsys, script) -> None:
    out = tmp_path / ("x" * 300)
    if script == "watch":
        out = out / "v.gif"
    main = {"train": train_mod, "evaluate": evaluate_mod, "watch": watch_mod}[script].main
    line = _refused(capsys, lambda: main(["--out", str(out), "--episodes", "1"]))
    assert line.startswith(f"{script}.py: error: --out")
    assert list(tmp_path.iterdir()) == []


def test_evaluate_leaves_no_folder_when_the_agent_cannot_load(tmp_path, capsys) -> None:
    out = tmp_path / "eval"
    _refused(capsys, lambda: evaluate_mod.main(["--actor", str(tmp_path / "missing.pth"), "--out", str(out)]))
    assert list(tmp_path.iterdir()) == []
