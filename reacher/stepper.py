"""How many threads step the arms, and the stepper that splits them over those threads.

``physics.simulate`` steps the arms one after another; ``physics.simulate_parallel`` steps blocks of
them on numba's threads, each arm bitwise as on one. ``ArmStepper`` picks between them at every step:
the threads asked for (``default_threads``, ``REACHER_THREADS`` or the environment's ``threads``),
as many as this process may use and numba's threading layer serves quickly, and one thread while
the threads stall. The numbers are the same on any count.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time

import numba
import numpy as np

from envkit.checks import checked_positive_int
from envkit.cpus import available_cpus
from reacher.physics import ArmModel, simulate, simulate_parallel

# The number of threads that step the arms: this environment variable, else `default_threads()`.
THREADS_VARIABLE = "REACHER_THREADS"
# The default (`default_threads_for`): one thread on fewer CPUs than MIN_CPUS_FOR_THREADS, else a
# quarter of them, at most MAX_DEFAULT_THREADS. On 2 cores (benchmarks/results/environment_threads/) two threads
# made the physics 1.45x faster and a whole step no faster (x0.99-1.07), and with one busy job beside
# it a step took 0.7 ms instead of 0.2 (the threads wait for a CPU): one thread there. With
# many cores, a few threads and the rest left to the learner, acting and other jobs; 20 arms on 4
# threads is 5 each. On a 16-core Xeon (benchmarks/results/gpu/gpu_nvidia_h200_check.json) a decision
# took 162 us on 1 thread, 121 on the default 4 and 107 on 16.
MIN_CPUS_FOR_THREADS = 8
MAX_DEFAULT_THREADS = 4
# Numba's threading layers whose hand-over is quick enough for a step of ~100 us. Its fallback,
# workqueue, sleeps between calls: 75-200 us a call measured on 2 cores, more than a step saves
# (and it aborts on calls from two Python threads at once).
FAST_LAYERS = ("omp", "tbb")
# ArmStepper's fall-back to one thread while the threads stall (a parallel step is ~0.1 ms).
STALL_S = 0.002
STALLS_TO_FALL_BACK = 8
STALL_WINDOW = 200
RETRY_AFTER = 5000




def checked_threads(threads: object, source: str = "threads") -> int:
    """threads as a positive int, or ValueError naming `source` (an argument or a variable)."""
    return checked_positive_int(threads, source, "threads that step the arms")


def default_threads_for(cpus: int) -> int:
    """The default thread count on `cpus` CPUs: one below `MIN_CPUS_FOR_THREADS`, else a quarter
    of them, at most `MAX_DEFAULT_THREADS` (the constants say which measurements chose them)."""
    if cpus < MIN_CPUS_FOR_THREADS:
        return 1
    return max(1, min(cpus // 4, MAX_DEFAULT_THREADS))


def default_threads() -> int:
    """The threads that step the arms when the environment is not told: `REACHER_THREADS` if
    set, else `default_threads_for` the CPUs this process may use."""
    text = os.environ.get(THREADS_VARIABLE, "").strip()
    if text:
        return checked_threads(int(text) if text.isdigit() else text, THREADS_VARIABLE)
    return default_threads_for(available_cpus())


_state = threading.local()  # per Python thread: the numba thread count last set (numba's is per thread too)
_layer: str | None = None  # numba's threading layer, once launched in this process
_forked_after_launch = False  # a child forked after the threads launched: GNU OpenMP would abort in it


def _after_fork_in_child() -> None:
    global _forked_after_launch
    if _layer is not None:
        _forked_after_launch = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _openmp_runtime() -> ctypes.CDLL | None:
    """GNU OpenMP, the runtime numba's omp layer links (the one loaded already, else the one it will load)."""
    try:
        return ctypes.CDLL("libgomp.so.1")
    except OSError:  # not on glibc Linux: numba's omp layer, if any, uses another runtime
        return None


def threading_layer() -> str:
    """Numba's threading layer in this process, launching its threads if not yet.

    Numba's omp layer sets, as it launches, OpenMP's thread count and nesting for the thread
    that launched it (omp_set_num_threads(NUMBA_NUM_THREADS), omp_set_nested(1)). PyTorch's CPU
    wheels share that runtime (libgomp.so.1), so its intra-op thread count silently became the
    CPU count: the learner, set to one thread per op, then ran its ops on two OpenMP threads
    beside its helper thread and numba's, ten times slower on 2 cores (measured). Both settings
    are put back as they were; numba's parallel loops name their thread count themselves.
    """
    global _layer
    if _layer is None:
        runtime = _openmp_runtime()
        before = (runtime.omp_get_max_threads(), runtime.omp_get_max_active_levels()) if runtime else None
        numba.get_num_threads()  # launches the threads: which layer loaded is known from then on
        if runtime is not None and before is not None:
            runtime.omp_set_num_threads(before[0])
            runtime.omp_set_max_active_levels(before[1])
        _layer = numba.threading_layer()
    return _layer


def usable_threads(threads: int) -> int:
    """How many threads a step asked to run on `threads` runs on here: at most the CPUs this
    process may use and numba's launched threads (NUMBA_NUM_THREADS); 1 where numba's layer is
    a slow one (not in FAST_LAYERS) or this process was forked after its threads launched
    (GNU OpenMP then aborts the process). The results are the same on any number."""
    if threads <= 1 or _forked_after_launch:
        return 1
    if threading_layer() not in FAST_LAYERS:
        return 1
    return max(1, min(threads, available_cpus(), numba.config.NUMBA_NUM_THREADS))


class ArmStepper:
    """Steps the arms on `threads` threads (`usable_threads(threads)` of them), and on one
    while the threads stall.

    A parallel step waits at its end for every thread; when a thread gets no CPU (another
    job holds the other cores) the wait is the scheduler's, not the step's: on 2 cores with a
    busy loop beside it, 0.7 ms a step instead of 0.2 (benchmarks/results/environment_threads/), and 3-16 ms
    with the learner in the process and other jobs on the machine. So a
    step slower than `STALL_S` counts as a stall, and `STALLS_TO_FALL_BACK` of them within
    `STALL_WINDOW` parallel steps send the stepping to one thread for `RETRY_AFTER` steps,
    twice as many after each fall-back. Any thread count gives the same numbers.
    """

    def __init__(self, threads: int) -> None:
        self.threads = checked_threads(threads)
        self.fallbacks = 0  # how many times the threads stalled and the steps went to one thread
        self._serial_left = 0  # steps to go on one thread before the threads are tried again
        self._window = self._stalls = 0

    @property
    def threads_now(self) -> int:
        """The threads the next step runs on."""
        return 1 if self.threads == 1 or self._serial_left > 0 else usable_threads(self.threads)

    def step(
        self, qpos: np.ndarray, qvel: np.ndarray, body_vel: np.ndarray, torque: np.ndarray, goals: np.ndarray,
        reach_sq: float, counts: np.ndarray, capped: np.ndarray, arm: ArmModel,
        dt: float, gravity: float, drag_factor: float, max_angular_speed: float,
    ) -> None:
        """`simulate`'s step (same arguments, the arm's constants as `arm`): the one-thread loop
        on one thread (no thread pool involved), `simulate_parallel` in one block of arms per
        thread on more."""
        used = self.threads_now if qpos.shape[0] > 1 else 1
        if used == 1:
            self._serial_left = max(0, self._serial_left - 1)
            simulate(qpos, qvel, body_vel, torque, goals, reach_sq, counts, capped, *arm.arrays,
                     dt, gravity, drag_factor, max_angular_speed)
            return
        if getattr(_state, "threads", None) != used:  # numba.set_num_threads costs ~4 us: only on a change
            numba.set_num_threads(used)
            _state.threads = used
        start = time.perf_counter()
        simulate_parallel(qpos, qvel, body_vel, torque, goals, reach_sq, counts, capped, *arm.arrays,
                          dt, gravity, drag_factor, max_angular_speed, min(used, qpos.shape[0]))
        self._stalls += time.perf_counter() - start > STALL_S
        self._window += 1
        if self._stalls >= STALLS_TO_FALL_BACK:
            self.fallbacks += 1
            self._serial_left = RETRY_AFTER * 2 ** min(self.fallbacks - 1, 10)
        if self._stalls >= STALLS_TO_FALL_BACK or self._window >= STALL_WINDOW:
            self._window = self._stalls = 0


__all__ = ["FAST_LAYERS", "MAX_DEFAULT_THREADS", "MIN_CPUS_FOR_THREADS", "THREADS_VARIABLE", "ArmStepper", "available_cpus",
           "checked_threads", "default_threads", "default_threads_for", "threading_layer", "usable_threads"]
