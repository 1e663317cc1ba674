"""Reproducible mode (ddpg/reproducible.py, train.py --reproducible) and the machine record."""

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
from ddpg import reproducible

ROOT = Path(__file__).resolve().parent.parent

# `python train.py --reproducible --episodes 2 --seed 0` (20 arms, the defaults): each arm's
# score in episodes 1 and 2, as scores.csv writes them. Episode 1 fills the warm-up (the
# untrained actor with OU noise, the environment's rounding); learning starts at the first
# learning step of episode 2 (1,000 updates in it), so episode 2 depends on the learner's
# rounding too.
GOLDEN_SCORES = [
    ["1.1200", "0.6800", "0.9800", "0.5600", "0.9800", "0.5800", "0.7300", "0.9100", "1.0700", "0.7100",
     "0.5300", "1.2700", "0.3300", "1.1900", "1.1500", "0.8900", "0.6600", "0.2200", "0.3400", "0.8500"],
    ["0.3800", "0.6000", "0.0000", "0.1200", "1.7100", "0.5600", "0.6400", "0.1900", "0.8200", "0.3000",
     "0.0800", "0.4600", "0.6600", "0.4100", "0.1000", "0.6800", "0.0000", "0.8400", "0.1400", "1.6300"],
]

def _unpinned_environment() -> dict[str, str]:
    """This environment without any pin, so a child process starts as a user's would."""
    return {k: v for k, v in os.environ.items() if k not in reproducible.PINS and k != reproducible.MARKER}


@pytest.mark.skipif(not reproducible.cpu_has_avx2(), reason="reproducible mode needs a CPU with AVX2")
def test_a_reproducible_run_gives_the_committed_scores_on_any_cpu(tmp_path) -> None:
    """Valid on every x86-64 CPU with AVX2, by design: the mode pins every library's code path
    and thread count, so this run's scores are the same bits wherever it runs (checked on an
    AMD EPYC with AVX-512 and on the same machine emulating an Intel Haswell, where the
    unpinned run differs from episode 1; see ddpg/reproducible.py).
    Without the pins this comparison would hold on one machine only. The program restarts
    itself pinned, so the child starts from an unpinned environment, as a user's shell is."""
    out = tmp_path / "run"
    subprocess.run([sys.executable, "train.py", "--reproducible", "--episodes", "2", "--seed", "0", "--out", str(out),
                    "--quiet", "--no-progress"], cwd=ROOT, env=_unpinned_environment(), check=True,
                   capture_output=True, timeout=300)
    rows = list(csv.reader(open(out / "scores.csv")))
    assert [row[1:] for row in rows[1:]] == GOLDEN_SCORES
    record = json.loads((out / "run.json").read_text())
    assert record["reproducible"] is True
    machine = record["machine"]
    assert machine["reproducible"] is True and machine["torch_cpu_capability"] == "AVX2"
    assert machine["mkl_cbwr"] == "COMPATIBLE" and machine["numba_target"] == "generic"
    assert "X86_V4" not in machine["numpy_simd"]
    assert machine["torch_threads"] == 1


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
    code = ("from ddpg import reproducible; reproducible.pin()\n"
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


def test_the_golden_scores_are_the_ones_checked_on_two_cpus() -> None:
    """The scores above are those the cross-CPU record shows, natively and under emulation."""
    text = (ROOT / "benchmarks" / "results" / "reproducibility" / "reproducible_cross_cpu.txt").read_text()
    section = text[text.index("# The gamma-0.95 default"):]
    assert "gamma-0.95 default, --reproducible: scores identical True, weights bitwise identical True" in section
    for episode, scores in enumerate(GOLDEN_SCORES, start=1):
        assert section.count(f"episode {episode} " + ",".join(scores)) == 2  # this CPU and the emulated Haswell
