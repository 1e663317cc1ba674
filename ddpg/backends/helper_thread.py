"""The fast learner's second thread: one job per update, handed over with locks, safe under Ctrl-C."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import torch


class HelperThread:
    """A second thread that runs one job per update (handed over with locks).

    Inside a job the caller and the helper meet at two points: ``to_helper`` (released by
    the caller, awaited by the job) and ``to_caller`` (released by the job, awaited by the
    caller); both are held between jobs. An exception in the job is re-raised by ``wait``
    in the calling thread.

    Ctrl-C (KeyboardInterrupt) can stop the caller anywhere, even between a hand-over and
    the ``try`` meant to follow it, leaving a job running or waiting for the caller.
    ``finish`` settles such a job; ``submit`` calls it first, so a later update never
    overlaps an interrupted one.
    """

    def __init__(self) -> None:
        self.pid = os.getpid()  # a forked child has no copy of the thread
        self._go = threading.Lock()
        self._done = threading.Lock()
        self.to_helper = threading.Lock()
        self.to_caller = threading.Lock()
        for lock in (self._go, self._done, self.to_helper, self.to_caller):
            lock.acquire()
        self.pending = False  # a job was (or was about to be) handed over, not yet collected
        self._idle = True  # the helper is waiting for a job
        self._job: Callable[[], Any] | None = None
        self._error: BaseException | None = None
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="ddpg-learner-helper", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        torch.set_num_threads(1)  # per thread under OpenMP: each op on one core
        while True:
            self._idle = True
            self._go.acquire()
            self._idle = False
            if self._stopping:
                return
            try:
                assert self._job is not None
                self._job()
            except BaseException as exc:  # handed to the caller by wait()
                self._error = exc
            self._job = None  # drop the reference to the agent's closure
            self._done.release()

    def submit(self, job: Callable[[], Any]) -> None:
        """Start ``job`` on the helper thread (after settling an interrupted one)."""
        if self.pending:
            self.finish()
        self.pending = True  # before the hand-over: an interrupt in between is settled
        self._job = job
        self._go.release()

    def wait(self) -> None:
        """Block until the submitted job has finished; re-raise its exception if any."""
        self._done.acquire()
        self._collect()
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def finish(self) -> None:
        """Settle a job whose caller was interrupted: let it run to its end (it may be
        waiting for the caller) and drop its error, which belongs to an aborted update."""
        if not self.pending:
            return
        if self.to_helper.locked():
            self.to_helper.release()
        idle_polls = 0
        while not self._done.acquire(timeout=0.05):
            # Interrupted before the hand-over: the helper keeps waiting for a job. Two
            # polls in a row, each after a failed wait, rule out the instant between the
            # helper taking a job and clearing its idle flag.
            idle_polls = idle_polls + 1 if self._idle and self._go.locked() else 0
            if idle_polls == 2:
                break
        self._collect()
        self._job = self._error = None

    def _collect(self) -> None:
        """Mark the job collected and hold both meeting points again."""
        self.pending = False
        for lock in (self.to_helper, self.to_caller):
            lock.acquire(blocking=False)

    def stop(self) -> None:
        """Let the thread exit (called when its agent is garbage-collected)."""
        self._stopping = True
        self._go.release()



__all__ = ["HelperThread"]
