"""How many threads step the crawlers (each crawler is stepped in a MuJoCo model of its own, so
the numbers are the same on any count): the argument, else `CRAWLER_THREADS`, else the CPUs."""

from __future__ import annotations

import os

from envkit.checks import checked_positive_int
from envkit.cpus import available_cpus

# The number of threads that step the crawlers: this environment variable, else `default_threads()`.
THREADS_VARIABLE = "CRAWLER_THREADS"
# The default: as many threads as CPUs, at most this many. On the 2-core development machine,
# shared with other work, 12 crawlers made 157.7 decisions/s on 2 threads against 93.9 on 1
# (medians of 6 alternating rounds of 100), and with a busy process beside them (a learner's
# stand-in) 56.4 against 45.8: two threads even then.
MAX_DEFAULT_THREADS = 2


def checked_threads(threads: object, source: str = "threads") -> int:
    """threads as a positive int, or ValueError naming `source` (an argument or a variable)."""
    return checked_positive_int(threads, source, "threads that step the crawlers")


def default_threads() -> int:
    """The threads that step the crawlers when the environment is not told: `CRAWLER_THREADS` if
    set, else the CPUs this process may use, at most `MAX_DEFAULT_THREADS`."""
    text = os.environ.get(THREADS_VARIABLE, "").strip()
    if text:
        return checked_threads(int(text) if text.isdigit() else text, THREADS_VARIABLE)
    return max(1, min(available_cpus(), MAX_DEFAULT_THREADS))


__all__ = ["MAX_DEFAULT_THREADS", "THREADS_VARIABLE", "checked_threads", "default_threads"]
