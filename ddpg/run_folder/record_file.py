"""A run's record, run.json, as a file: reading it back (``read_record``), and what it records of
the code and the machine that ran (``git_commit``, ``versions``). Its fields are
``ddpg.run_folder.record.RunRecord``'s; it is written as JSON (``ddpg.run_folder.atomic.write_json``), last of a save.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

import numpy as np
import torch

from ddpg.run_folder.file_names import RECORD_FILE
from ddpg.run_folder.record import RunRecord


def git_commit() -> str | None:
    """Commit of the code that ran (with '-dirty' if tracked files were modified)."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=here, capture_output=True, text=True, timeout=10).stdout
        return commit + ("-dirty" if dirty.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def versions() -> dict[str, str | None]:
    """Versions of the interpreter and the main libraries, for the run record."""
    out: dict[str, str | None] = {"python": platform.python_version(),
                                  "torch": torch.__version__, "numpy": np.__version__}
    for pkg in ("mujoco", "gymnasium", "unityagents"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def read_record(run: str | os.PathLike[str]) -> RunRecord:
    """The ``RunRecord`` of a run folder, or of a record file itself (such as the committed
    checkpoint_run.json). ValueError with the reason when it cannot be used."""
    path = Path(run)
    if path.is_dir() or not path.suffix:
        path = path / RECORD_FILE
        if not path.is_file():
            raise FileNotFoundError(f"{run} is not a run folder: it has no {RECORD_FILE} "
                                    "(train first: python train.py --out DIR)")
    elif not path.is_file():
        raise FileNotFoundError(f"run record not found: {path}")
    try:
        return RunRecord.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None


def environment_id(run: str | os.PathLike[str]) -> str | None:
    """The Gymnasium id a run trained on (train.py --env); None for the built-in Reacher."""
    return read_record(run).env_id


__all__ = ["environment_id", "git_commit", "read_record", "versions"]
