"""benchmarks/bench_cores.py: it runs, and prints the lines Report.md's figures are read from."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from common.cpus import available_cpus

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(available_cpus() < 2, reason="the benchmark needs two CPUs")
def test_a_short_run_prints_both_figures() -> None:
    out = subprocess.run([sys.executable, "-m", "benchmarks.bench_cores", "--repeats", "1", "--decisions", "4", "--updates", "4"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT, check=True).stdout
    assert re.search(r"^products: one process [\d.]+ us per product; two processes at once [\d.]+ us each: "
                     r"speed-up [\d.]+", out, re.M), out
    assert re.search(r"^overlap: 4 decisions with acting \d+ ms, 4 updates \d+ ms; one after the other \d+ ms; "
                     r"at once on two threads \d+ ms \(gain [\d.]+\), in two processes \d+ ms \(gain [\d.]+\)",
                     out, re.M), out


def test_bad_arguments_are_refused_without_a_traceback() -> None:
    run = subprocess.run([sys.executable, "-m", "benchmarks.bench_cores", "--repeats", "0"], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "--repeats" in run.stderr
