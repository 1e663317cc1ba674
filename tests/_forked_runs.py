"""Many short ``python train.py`` runs, each its own process, without paying each one's imports.

A process started as ``python train.py`` spends about 5 of its 7 seconds importing PyTorch
(and ``torch._dynamo``, which its Adam optimizer loads), Numba, MuJoCo and Matplotlib. Here
one process imports those libraries once, and nothing of this project, then forks a child
per run: the child sets the run's environment variables, points its output at files and runs
``train.py`` as ``__main__``, as ``python train.py ARGS`` does. Every module of this project
(``ddpg.run_folder.faults``, which reads ``DDPG_CRASH_AT`` when it is imported, included) is imported in
the child, after its environment is set, so each run is what a fresh process would be: its
own pid, its own signal handlers, killed by a real SIGKILL or stopped by a real SIGINT, its
exit status the operating system's.

    with forker() as process:          # starts importing now, while the caller does something else
        ...
        runs = run(process, [ForkedRun(argv, env, logs), ...], parallel=2)   # CompletedProcess each
        ...                                # and as many more batches as wanted

Run as a script, this file is that importing process: it reads each batch of runs as a line of
JSON on stdin and answers a line of JSON on stdout, each child's exit status (negative: the
signal that killed it); it ends when its stdin closes.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "train.py"


@dataclass(frozen=True)
class ForkedRun:
    """``python train.py *argv`` with ``env`` added to the environment; its stdout and stderr go
    into ``logs`` (stdout.txt, stderr.txt)."""

    argv: list[str]
    env: dict[str, str]
    logs: Path


@contextlib.contextmanager
def forker() -> Iterator[subprocess.Popen[str]]:
    """The importing process, with this process's environment; it imports while the caller does
    something else, then waits for ``run``'s batches on its stdin. Stopped on the way out."""
    process = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=ROOT, start_new_session=True)
    try:
        yield process
    finally:  # it and any run it forked (a failed test may leave a batch unfinished)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()


def run(process: subprocess.Popen[str], runs: list[ForkedRun], parallel: int = 2,
        timeout: float = 300) -> list[subprocess.CompletedProcess[str]]:
    """Run ``runs``, ``parallel`` at a time (each stopped after ``timeout`` seconds); one
    CompletedProcess per run, in order, with the run's stdout and stderr."""
    assert process.stdin is not None and process.stdout is not None
    for r in runs:
        r.logs.mkdir(parents=True, exist_ok=True)
    request = {"parallel": parallel, "timeout": timeout,
               "runs": [{"argv": r.argv, "env": r.env, "logs": str(r.logs)} for r in runs]}
    process.stdin.write(json.dumps(request) + "\n")
    process.stdin.flush()
    line = process.stdout.readline()
    assert line, f"the forking process ended: {process.communicate()[1][-3000:]}"
    answer = json.loads(line)
    late = [runs[i].argv for i in answer["timed_out"]]
    assert not late, f"stopped after {timeout} s: {late}"
    return [subprocess.CompletedProcess([sys.executable, str(TRAIN), *r.argv], code,
                                        (r.logs / "stdout.txt").read_text(), (r.logs / "stderr.txt").read_text())
            for r, code in zip(runs, answer["codes"], strict=True)]


def _child(run: dict) -> None:
    """In the forked child: become ``python train.py *argv``; never returns."""
    code = 1
    try:
        os.environ.update(run["env"])
        logs = Path(run["logs"])
        for fd, name in ((1, "stdout.txt"), (2, "stderr.txt")):
            target = os.open(logs / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(target, fd)
            os.close(target)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        sys.argv = [str(TRAIN), *run["argv"]]
        sys.path[0] = str(ROOT)  # as for `python train.py`: the script's folder first
        import runpy

        try:
            runpy.run_path(str(TRAIN), run_name="__main__")
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, int | None):
                print(exc.code, file=sys.stderr)
    except BaseException as exc:  # as the interpreter would: the traceback on stderr, then status 1
        import traceback

        traceback.print_exc()
        code = 1
        if isinstance(exc, KeyboardInterrupt):  # ...or, for Ctrl-C, the process ends by SIGINT
            sys.stdout.flush()
            sys.stderr.flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _serve() -> None:
    # What `python train.py` spends its first seconds on, imported once; nothing of this project.
    import matplotlib.pyplot  # noqa: F401
    import mujoco  # noqa: F401
    import numba  # noqa: F401
    import numpy  # noqa: F401
    import torch
    import torch._dynamo  # torch.optim loads it when an optimizer is made
    import torch.optim  # noqa: F401

    for line in iter(sys.stdin.readline, ""):
        request = json.loads(line)
        codes, late = _batch(request["runs"], request["parallel"], request["timeout"])
        print(json.dumps({"codes": codes, "timed_out": late}), flush=True)


def _batch(runs: list[dict], parallel: int, timeout: float) -> tuple[list[int | None], list[int]]:
    """Each run's exit status, and the runs stopped after ``timeout`` seconds."""
    import time

    codes: list[int | None] = [None] * len(runs)
    late: list[int] = []
    running: dict[int, tuple[int, float]] = {}  # pid: (run's index, start time)
    following = 0
    while following < len(runs) or running:
        while following < len(runs) and len(running) < parallel:
            pid = os.fork()
            if pid == 0:
                _child(runs[following])
            running[pid] = (following, time.monotonic())
            following += 1
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            for child, (index, began) in running.items():
                if time.monotonic() - began > timeout and index not in late:
                    late.append(index)
                    os.kill(child, signal.SIGKILL)
            time.sleep(0.02)
            continue
        index, _ = running.pop(pid)
        codes[index] = os.waitstatus_to_exitcode(status)
    return codes, late


if __name__ == "__main__":
    _serve()
