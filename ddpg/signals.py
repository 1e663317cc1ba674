"""Ctrl-C, SIGTERM and SIGHUP (a batch scheduler, a closed terminal) stop training cleanly.

Inside ``StopSignals`` a signal raises ``Stopped`` where the loop is, so the episode in
progress is abandoned and every finished one is saved. While the run folder is being written
(``hold``) a signal waits instead, and ``release`` raises it once the files are whole.
"""

from __future__ import annotations

import signal
import threading
from typing import Any


class Stopped(KeyboardInterrupt):
    """Raised in the training loop by Ctrl-C (SIGINT), SIGTERM or SIGHUP."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signal_number(stop: BaseException) -> int:
    """The signal behind a stop (a bare KeyboardInterrupt is Ctrl-C's SIGINT)."""
    return stop.signum if isinstance(stop, Stopped) else signal.SIGINT.value


class StopSignals:
    """The handlers, installed for the ``with`` block (only the main thread can have them)."""

    def __init__(self) -> None:
        self.holding = False
        self.pending: list[int] = []
        self._previous: dict[int, Any] = {}

    def _handler(self, signum: int, _frame: Any) -> None:
        if self.holding:
            self.pending.append(signum)
        else:
            raise Stopped(signum)

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            wanted = [signal.SIGINT, signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
            self._previous = {sig: signal.signal(sig, self._handler) for sig in wanted}
        return self

    def __exit__(self, *_: Any) -> None:
        for sig, old in self._previous.items():
            signal.signal(sig, old)

    def hold(self) -> None:
        """From now on a signal waits (the files are being written)."""
        self.holding = True

    def release(self) -> None:
        """Signals act again; one that came while holding stops the run now."""
        self.holding = False
        if self.pending:
            raise Stopped(self.pending[0])


__all__ = ["StopSignals", "Stopped", "signal_number"]
