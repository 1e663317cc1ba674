"""Reproducible mode (ddpg/command_line/reproducible.py, train.py --reproducible) and the machine record."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import evaluate
import train as train_mod
from ddpg.command_line import reproducible

ROOT = Path(__file__).resolve().parent.parent

# What another machine's libraries would choose, imitated here: PyTorch's kernels without SIMD,
# MKL's own code path, numba compiled for this CPU, two threads. The pins must override all of it.
# Two short episodes of 4 arms, learning from the 600th transition: some 460 updates, enough for the unpinned choices
# to give other scores.
SHORT = ["--agents", "4", "--max-t", "300", "--config", '{"warmup": 600}']
ANOTHER_MACHINE = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "AUTO", "NUMBA_CPU_NAME": "host",
                   "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}


def _unpinned_environment() -> dict[str, str]:
    """This environment without any pin, so a child process starts as a user's would."""
    return {k: v for k, v in os.environ.items() if k not in reproducible.PINS and k != reproducible.MARKER}


@pytest.mark.skipif(not reproducible.cpu_has_avx2(), reason="reproducible mode needs a CPU with AVX2")
def test_a_reproducible_run_gives_the_same_scores_whatever_the_machine_chooses(tmp_path) -> None:
    """Valid on every x86-64 CPU with AVX2, by design: the mode pins every library's code path
    and thread count, so a run's scores are the same bits wherever it runs (checked across CPUs
    on an AMD EPYC with AVX-512 and the same machine emulating an Intel Haswell:
    benchmarks/results/reproducibility/reproducible_cross_cpu.txt). Here two runs, one started as a
    user's shell would start it and one from an environment that makes the libraries choose as
    another machine's would, give the same scores (two short episodes, a few hundred updates);
    the same choices unpinned give other ones, so the pins are what made them equal. The program
    restarts itself pinned, so each child starts unpinned, as a user's shell is."""
    def scores(name: str, pinned: bool, extra: dict[str, str]) -> list[list[str]]:
        out = tmp_path / name
        subprocess.run([sys.executable, "train.py", *(["--reproducible"] if pinned else []), "--episodes", "2",
                        "--seed", "0", "--out", str(out), "--quiet", "--no-progress", *SHORT], cwd=ROOT,
                       env={**_unpinned_environment(), **extra}, check=True, capture_output=True, timeout=300)
        record = json.loads((out / "run.json").read_text())
        assert record["reproducible"] is pinned
        if pinned:
            machine = record["machine"]
            assert machine["reproducible"] is True and machine["torch_cpu_capability"] == "AVX2"
            assert machine["mkl_cbwr"] == "COMPATIBLE" and machine["numba_target"] == "generic"
            assert "X86_V4" not in machine["numpy_simd"] and machine["torch_threads"] == 1
        return [row[1:] for row in list(csv.reader(open(out / "scores.csv")))[1:]]

    here = scores("here", True, {})
    assert len(here) == 2
    assert scores("elsewhere", True, ANOTHER_MACHINE) == here
    assert scores("elsewhere-unpinned", False, ANOTHER_MACHINE) != here


def test_pinning_after_the_libraries_loaded_is_refused() -> None:
    """This test process loaded torch and numpy unpinned: too late to pin, and it says so."""
    assert not reproducible.active()
    with pytest.raises(reproducible.NotPinned, match=r"must be set before numpy, torch.*restart"):
        reproducible.pin()
    with pytest.raises(reproducible.NotPinned, match="--reproducible needs the math libraries pinned"):
        reproducible.ensure(True, command_line=False)
    reproducible.ensure(False, command_line=False)  # not asked: nothing to do


@pytest.mark.parametrize("main", [train_mod.main, evaluate.main], ids=["train.py", "evaluate.py"])
def test_reproducible_in_a_process_that_cannot_restart_is_a_clear_error(main, capsys, tmp_path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--reproducible", "--out", str(tmp_path / "out")])
    assert exc.value.code == 2
    assert "--reproducible needs the math libraries pinned before they load" in capsys.readouterr().err


@pytest.mark.skipif(not reproducible.cpu_has_avx2(), reason="reproducible mode needs a CPU with AVX2")
def test_pin_first_then_every_library_runs_the_pinned_path() -> None:
    """What a notebook's first cell does: pin, then import."""
    code = ("from ddpg.command_line import reproducible; reproducible.pin()\n"
            "import numpy, torch, numba\nfrom reacher import physics\n"
            "import json; print(json.dumps(reproducible.machine()))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_unpinned_environment(), check=True,
                          capture_output=True, text=True, timeout=120)
    machine = json.loads(done.stdout.strip().splitlines()[-1])
    assert machine["reproducible"] is True and machine["torch_cpu_capability"] == "AVX2"
    assert machine["numba_target"] == "generic" and "X86_V4" not in machine["numpy_simd"]


def test_the_machine_record_names_what_decides_the_rounding() -> None:
    machine = reproducible.machine()
    assert set(machine) >= {"cpu", "cpu_count", "torch_cpu_capability", "blas", "mkl_cbwr", "torch_threads",
                            "torch_interop_threads", "numpy_simd", "numba_target", "reproducible"}
    assert machine["cpu"] and machine["torch_cpu_capability"] in {"DEFAULT", "AVX2", "AVX512", "SVE256", "ZVECTOR"}
    assert machine["reproducible"] is False and machine["mkl_cbwr"] == os.environ.get("MKL_CBWR")


def test_the_cross_cpu_record_says_the_pinned_runs_agreed() -> None:
    """The record of the check across CPUs (a real second CPU, emulated) says the pinned runs gave
    the same scores and weights, and the unpinned ones did not."""
    text = (ROOT / "benchmarks" / "results" / "reproducibility" / "reproducible_cross_cpu.txt").read_text()
    section = text[text.index("# The gamma-0.95 default"):]
    assert "gamma-0.95 default, --reproducible: scores identical True, weights bitwise identical True" in section

