"""Fault injection: real training runs killed at many moments, each resumed.

A reference run lists every fault point it passes (``ddpg.run_folder.faults``: each file's three steps
of ``atomic_write``, the middle and the end of every episode). Runs of the same command are
then stopped at chosen points: SIGKILL (kill -9) at points spread over the whole run, the
first save included, and SIGINT (Ctrl-C) in the middle of episodes and during a save. Each
is resumed, and must:

- resume (the folder is a run from its very first write on), continuing from the last
  complete save (kill -9) or from the last complete episode (Ctrl-C: nothing lost);
- say so, with the episodes that were lost, if any;
- leave no temporary file behind;
- end with exactly the scores and, bit for bit, the networks of the reference run: the
  replay buffer is saved (--save-buffer; a Ctrl-C saves it anyway), so every resume is exact.

The buffer holds 60 transitions and an episode adds 40, so it wraps in the second episode
and a Ctrl-C after that has to put overwritten rows back (``ddpg.run_folder.snapshot``).

The reference run is ``python train.py`` in a fresh process. The 23 stopped runs, and the
resumes that train, are processes forked from one that imported PyTorch, Numba, MuJoCo and
Matplotlib beforehand (``tests/_forked_runs.py``: each runs ``train.py`` as ``__main__``, this
project imported afresh after its environment is set), 2 s each rather than 7; they must end
with the fresh process's scores all the same.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import train as train_mod
from ddpg.run_folder.file_names import RECORD_FILE, SCORES_FILE, TEMPORARY_MARK
from tests._forked_runs import ForkedRun, forker, run

ROOT = Path(train_mod.__file__).resolve().parent
EPISODES = 8
COMMAND = ["--agents", "2", "--max-t", "20", "--episodes", str(EPISODES), "--save-every", "3", "--save-buffer",
           "--no-stop", "--seed", "3", "--no-progress", "--quiet", "--config",
           json.dumps({"buffer_size": 60, "batch_size": 8, "warmup": 16, "learn_every": 2, "learn_updates": 1})]


def _train(out: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "train.py"), "--out", str(out), *COMMAND],
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=300, cwd=ROOT)


def _saved_at(points: list[str], index: int, name: str) -> int:
    """Episodes recorded by the last rename of ``name`` at or before point ``index`` (0: none):
    a save made after episode n follows episode n's middle."""
    renamed = [i for i, point in enumerate(points[:index], start=1) if point == f"renamed {name}"]
    return sum(1 for point in points[:renamed[-1]] if point == "mid-episode") if renamed else 0


def _expected_resume(points: list[str], index: int, how: str) -> int:
    """The episode a resume continues after: kill -9, the last training state renamed into place
    (0: none yet); Ctrl-C, the episodes complete when the signal acts."""
    if how == "SIGKILL":
        return _saved_at(points, index, "training_state.pt")
    middles = sum(1 for name in points[:index] if name == "mid-episode")
    # In the middle of an episode the signal stops it, and it is dropped; during a save the
    # signal waits until that episode is recorded.
    return middles - 1 if points[index - 1] == "mid-episode" else middles


def _choose(points: list[str]) -> list[tuple[int, str]]:
    """20 kill -9s: every kind of moment a save has, the rest evenly spread over the run; and 3 Ctrl-Cs."""
    n = len(points)
    first = {name: i for i, name in reversed(list(enumerate(points, start=1)))}
    second = {name: i for i, name in reversed(list(enumerate(points, start=1))) if i > first[name]}
    middles = [i for i, name in enumerate(points, start=1) if name == "mid-episode"]
    kills = {middles[2], first["open run.json"], first["written run.json"], first["renamed run.json"],  # the very first save
             first["written training_state.pt"], first["renamed scores.png"], n,
             # The second periodic save, when an older state and its buffer are there: the new
             # buffer written aside, then the state, then the buffer renamed into place.
             second["renamed replay_buffer.next.pt"], second["renamed training_state.pt"],
             second["renamed replay_buffer.pt"]}
    spread = 20 - len(kills)
    while len(kills | {round(1 + k * (n - 1) / (spread + 1)) for k in range(1, spread + 1)}) < 20:
        spread += 1  # evenly spaced points over the whole run, as many as make 20 with the ones above
    kills |= {round(1 + k * (n - 1) / (spread + 1)) for k in range(1, spread + 1)}
    state_writes = [i for i, name in enumerate(points, start=1) if name == "written training_state.pt"]
    # Ctrl-C: in the first episode, after the buffer wrapped (episode 6), and inside a periodic save.
    ints = {middles[0], middles[5], state_writes[1]}
    return sorted((i, "SIGKILL") for i in kills) + sorted((i, "SIGINT") for i in ints)


def test_runs_killed_at_any_moment_resume_from_their_last_complete_save(tmp_path, capsys) -> None:
    reference, log = tmp_path / "reference", tmp_path / "points.log"
    with forker() as process:  # imports the libraries while the reference runs
        done = _train(reference, {"DDPG_FAULT_LOG": str(log)})
        assert done.returncode == 0, done.stderr
        points = [line.split(" ", 1)[1] for line in log.read_text().splitlines()]
        cases = _choose(points)
        kills = len([c for c in cases if c[1] == "SIGKILL"])
        assert kills == 20
        docs = " ".join((ROOT / "docs" / "training.md").read_text().split())  # what the docs say this test does
        assert f"the {len(points)} points" in docs and f"SIGKILL at {kills} of them" in docs
        assert f"SIGINT at {len(cases) - kills}" in docs
        # Two cores: two crashing runs at a time.
        crashed = run(process, [ForkedRun(["--out", str(tmp_path / f"{how}-{index}"), *COMMAND],
                                          {"DDPG_CRASH_AT": f"{index}:{how}"}, tmp_path / "logs" / f"{how}-{index}")
                                for index, how in cases], parallel=2, timeout=300)

        resumable = []
        for (index, how), proc in zip(cases, crashed, strict=True):
            where = f"{how} at point {index} ({points[index - 1]})"
            out = tmp_path / f"{how}-{index}"
            assert proc.returncode == (-signal.SIGKILL if how == "SIGKILL" else 128 + signal.SIGINT), (where, proc.stderr)
            assert "Traceback" not in proc.stderr, where
            if not (out / RECORD_FILE).exists():  # killed inside the very first write: nothing was saved
                assert points[index - 1] in ("open run.json", "written run.json"), where
                with pytest.raises(SystemExit):
                    train_mod.main(["--resume", str(out)])
                assert "stopped before it saved its run.json, so nothing is lost" in capsys.readouterr().err, where
                assert train_mod.main(["--out", str(out), *COMMAND]) == 0, where  # no --force needed
            elif json.loads((out / RECORD_FILE).read_text())["finished"]:  # killed after the final save: complete
                assert points[index - 1] == "renamed run.json" and _saved_at(points, index, "run.json") == EPISODES, where
                with pytest.raises(SystemExit):
                    train_mod.main(["--resume", str(out)])
                assert f"the run already has {EPISODES} episodes" in capsys.readouterr().err, where
            else:
                resumable.append((index, how))
        # The rest resume, two at a time: `python train.py --resume`, forked as the stopped runs were.
        resumes = run(process, [ForkedRun(["--resume", str(tmp_path / f"{how}-{index}"), "--no-progress", "--quiet"], {},
                                          tmp_path / "logs" / f"{how}-{index}-resume") for index, how in resumable],
                      parallel=2, timeout=300)

    for (index, how), proc in zip(resumable, resumes, strict=True):
        where = f"{how} at point {index} ({points[index - 1]})"
        out = tmp_path / f"{how}-{index}"
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (where, proc.stderr)
        said = proc.stdout
        resumed = json.loads((out / RECORD_FILE).read_text())["resumed"][-1]
        expected = _expected_resume(points, index, how)
        assert resumed["from_episode"] == expected, where
        if how == "SIGINT" or expected:
            assert f"from episode {expected + 1}, exactly" in said, (where, said)
            assert resumed["exact"] is True, where
        else:
            assert "starts again from episode 1" in said, (where, said)
        written = _saved_at(points, index, "scores.csv")
        if how == "SIGKILL" and written > expected:
            episodes = f"episode {written}, run after the last complete save, is" if written == expected + 1 \
                else f"episodes {expected + 1}-{written}, run after the last complete save, are"
            lost = f"{episodes} lost" if expected else f"its {written} episode(s) written are lost"
            assert lost in said, (where, said)
    expected_scores = (reference / SCORES_FILE).read_bytes()
    # So short a run scores 0.00 throughout: its networks, bit for bit, show whether it is the reference run.
    networks = {name: torch.load(reference / name, weights_only=True) for name in ("checkpoint_actor.pth", "checkpoint_critic.pth")}
    for index, how in cases:
        where = f"{how} at point {index} ({points[index - 1]})"
        out = tmp_path / f"{how}-{index}"
        assert (out / SCORES_FILE).read_bytes() == expected_scores, where
        for name, expected in networks.items():
            tensors = torch.load(out / name, weights_only=True)
            assert tensors.keys() == expected.keys() and all(torch.equal(tensors[k], expected[k]) for k in expected), \
                (where, name)
        assert not [p.name for p in out.rglob(f"*{TEMPORARY_MARK}*")], where
