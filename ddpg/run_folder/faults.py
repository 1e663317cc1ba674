"""Fault injection for the crash tests: named points where a test can stop the process.

Every file the run folder writes (``ddpg.run_folder.atomic.atomic_write``) passes three points (the
temporary file opened, its bytes handed over, the rename done), and the training loop one in
the middle of each episode and one after it. With neither variable set a point costs one
comparison; the tests set them in the environment of a ``train.py`` they start:

    DDPG_FAULT_LOG=PATH       append "<count> <point>" for every point passed
    DDPG_CRASH_AT=N           at the N-th point, SIGKILL this process (what kill -9 does)
    DDPG_CRASH_AT=N:SIGINT    ... or send it another signal (Ctrl-C), as a user would

Counting points, rather than waiting a time, makes each crash land at the same moment on
every machine (tests/test_crash_safety.py).
"""

from __future__ import annotations

import os
import signal

_LOG = os.environ.get("DDPG_FAULT_LOG")
_AT = os.environ.get("DDPG_CRASH_AT")
_ACTIVE = _LOG is not None or _AT is not None
_count = 0


def _target() -> tuple[int, signal.Signals] | None:
    if _AT is None:
        return None
    number, _, name = _AT.partition(":")
    return int(number), signal.Signals[name] if name else signal.SIGKILL


_TARGET = _target()


def point(name: str) -> None:
    """A place where a crash test may stop the process (see the module docstring)."""
    if not _ACTIVE:
        return
    global _count
    _count += 1
    if _LOG is not None:
        with open(_LOG, "a") as fh:
            fh.write(f"{_count} {name}\n")
    if _TARGET is not None and _count == _TARGET[0]:
        os.kill(os.getpid(), _TARGET[1])


__all__ = ["point"]
