"""Reproducible mode (``--reproducible``), and what a run records about the machine it ran on.

A run is a long chain of float32 and float64 operations, and the math libraries pick their
code path from the CPU they find: MKL a matrix-product kernel per instruction set, PyTorch
its own kernels per SIMD width (AVX2, AVX-512), numpy its SIMD loops, numba the code it
compiles for the host. Those paths round differently, learning amplifies the differences,
and by episode 1 two CPUs already follow different paths. The same seed on the same machine
reproduces a run bit for bit; on another CPU it does not.

Reproducible mode pins every path to one that rounds the same way on every x86-64 CPU with
AVX2 (Intel since Haswell, AMD since Zen) and every thread count to one, so that a seed
gives the same scores on all of them. The libraries read the pins once, when they load, so
they are set before anything imports them: ``relaunch`` runs the command again in a fresh
interpreter with them set (what ``train.py --reproducible`` does), and a notebook calls
``pin()`` in its first cell.

    MKL_CBWR=COMPATIBLE            MKL's conditional numerical reproducibility, its portable
                                   branch: the same matrix-product kernels on Intel and AMD
                                   (its AVX2 branch is not: on an AMD CPU MKL keeps its own
                                   kernels whatever branch is asked for)
    ATEN_CPU_CAPABILITY=avx2       PyTorch's own kernels (elementwise, reductions): AVX2 build
    ONEDNN_MAX_CPU_ISA=AVX2        oneDNN, should anything reach it
    NPY_DISABLE_CPU_FEATURES=...   numpy's SIMD loops up to x86-64-v3 (AVX2), no AVX-512 ones
    NUMBA_CPU_NAME=generic         numba compiles for the generic x86-64, not for the host
    OMP/MKL/OPENBLAS_NUM_THREADS=1 one thread per operation: sums are split the same way
    OPENBLAS_CORETYPE=Haswell      numpy's bundled OpenBLAS, should anything reach it

One operation could not be pinned: ``torch.sqrt`` goes through MKL's vector maths, which
rounds differently on AMD and Intel CPUs whatever the branch. The learners' one square root
(Adam's) therefore avoids it in both modes: the agent's Adam is PyTorch's fused one, IEEE-exact
(the hand-written learner retired after commit 892bcff took numpy's). MuJoCo needs no pin (its
wheel is compiled once for every x86-64 CPU with AVX), nor does glibc's maths library (it
takes its FMA versions of sin and cos on every CPU with AVX2). What stays fixed besides: the
pinned package versions (requirements.txt).

Checked: the same 2-episode run, bit for bit, on an AMD EPYC (Zen 4, AVX-512) and on the same
machine emulating an Intel Haswell (``qemu-x86_64 -cpu Haswell``), where the unpinned runs
differ from the first episode (tests/test_reproducible.py holds the scores).
"""

from __future__ import annotations

import functools
import os
import platform
import sys
from typing import Any, NoReturn

SWITCH = "--reproducible"
MARKER = "REACHER_REPRODUCIBLE"  # set by relaunch() and pin(); the notebook's switch reads it
_RELAUNCHED = "REACHER_REPRODUCIBLE_RELAUNCHED"  # set by relaunch(): a second relaunch would loop
PINS: dict[str, str] = {
    "MKL_CBWR": "COMPATIBLE",
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
    "NUMBA_CPU_NAME": "generic",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "OPENBLAS_CORETYPE": "Haswell",
}
# Libraries that read the pins when they load: pinning after any of them is too late.
_READERS = ("numpy", "torch", "numba", "mujoco")


class NotPinned(RuntimeError):
    """Reproducible mode was asked for in a process whose libraries loaded unpinned, or on a
    CPU without AVX2."""


def _pinned_environment() -> bool:
    return all(os.environ.get(name) == value for name, value in PINS.items())


def pin() -> bool:
    """Set the pins in this process's environment, before numpy, torch or numba load (the
    first cell of a notebook); returns whether the process is now in reproducible mode.

    Raises NotPinned if one of those libraries already loaded unpinned (restart the
    interpreter or kernel, then pin first). On a CPU without AVX2 the pinned paths do not
    exist: it says so and returns False, and the run reproduces on this machine only."""
    loaded = [name for name in _READERS if name in sys.modules]
    if loaded and not _pinned_environment():
        raise NotPinned(f"reproducible mode must be set before {', '.join(loaded)} load(s); restart the "
                        "interpreter (the notebook's kernel) and call reproducible.pin() first")
    if not cpu_has_avx2():
        print("reproducible mode needs a CPU with AVX2; this one has none, so this run reproduces on this "
              "machine only", file=sys.stderr)
        return False
    os.environ.update(PINS)
    os.environ[MARKER] = "1"
    return True


def relaunch() -> NoReturn:
    """Run this process's command again, from the start, in a fresh interpreter with the pins
    set: how a command-line program honours --reproducible once it has parsed its options."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]],
              {**os.environ, **PINS, MARKER: "1", _RELAUNCHED: "1"})


def ensure(requested: bool, command_line: bool) -> None:
    """For a program's ``main()``: with ``--reproducible`` requested, go on if this process is
    pinned, else relaunch it pinned when it was started from the ``command_line``; an
    in-process call (a test calling ``main(argv)``) cannot relaunch and raises NotPinned."""
    if not requested or active():
        return
    if os.environ.get(_RELAUNCHED) == "1" or not cpu_has_avx2():  # a relaunch cannot help: say why
        check()
        raise NotPinned(f"the pins did not take effect: one of {sorted(PINS)} is set otherwise")
    if command_line:
        relaunch()
    raise NotPinned(f"{SWITCH} needs the math libraries pinned before they load: run the command as its "
                    f"own process (python train.py {SWITCH} ...) or call reproducible.pin() before importing numpy")


def check() -> None:
    """Raise NotPinned unless the loaded libraries run the pinned paths."""
    if not cpu_has_avx2():
        raise NotPinned("reproducible mode needs a CPU with AVX2 (its pinned code paths are AVX2's); "
                        "this one has none")
    if "torch" in sys.modules:
        import torch

        capability = torch.backends.cpu.get_cpu_capability()
        if capability != "AVX2":
            raise NotPinned(f"PyTorch runs its {capability} kernels, not the pinned AVX2 ones: it loaded "
                            "before the pins were set")
    if "numba" in sys.modules:
        import numba

        if numba.config.CPU_NAME != PINS["NUMBA_CPU_NAME"]:
            raise NotPinned("numba compiles for this CPU, not the pinned generic one: it loaded before the pins")


def active() -> bool:
    """Whether this process runs in reproducible mode (pinned before its libraries loaded)."""
    if not _pinned_environment():
        return False
    try:
        check()
    except NotPinned:
        return False
    return True


@functools.cache
def cpu_has_avx2() -> bool:
    """Whether the CPU has AVX2 and FMA (Linux: /proc/cpuinfo; elsewhere assumed)."""
    try:
        with open("/proc/cpuinfo") as fh:
            flags = next((line.split(":", 1)[1].split() for line in fh if line.startswith("flags")), None)
    except OSError:
        return True
    return flags is None or {"avx2", "fma"} <= set(flags)


@functools.cache
def cpu_model() -> str:
    """The CPU's model name as the OS reports it."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    """What decides a run's rounding, for run.json and the benchmarks' records: the CPU, the
    code paths the libraries took on it, their thread counts, and whether they were pinned."""
    import numpy as np
    import torch

    config = torch.__config__.show()
    blas = next((line.strip(" -") for line in config.splitlines() if "Math Kernel Library" in line
                 or "OpenBLAS" in line), "unknown")
    try:
        from numpy._core import _multiarray_umath as umath

        numpy_simd = [name for name in umath.__cpu_dispatch__ if umath.__cpu_features__.get(name)]
    except (ImportError, AttributeError):
        numpy_simd = None
    numba_target = None
    if "numba" in sys.modules:
        import numba
        from llvmlite import binding

        numba_target = numba.config.CPU_NAME or binding.get_host_cpu_name()
    return {
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "blas": blas,
        "mkl_cbwr": os.environ.get("MKL_CBWR"),
        "torch_threads": torch.get_num_threads(),
        "torch_interop_threads": torch.get_num_interop_threads(),
        "numpy_simd": numpy_simd,
        "numpy": np.__version__,
        "numba_target": numba_target,
        "libc": " ".join(platform.libc_ver()).strip() or None,
        "reproducible": active(),
    }


__all__ = ["MARKER", "PINS", "SWITCH", "NotPinned", "active", "check", "cpu_model", "ensure", "machine", "pin",
           "relaunch"]
