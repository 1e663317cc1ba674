"""benchmarks/bench_tests.py reads pytest's own figures from make test's output."""

from __future__ import annotations

import pytest

from benchmarks.bench_tests import parse

OUTPUT = """\
============================= slowest 10 durations =============================
75.92s call     tests/test_sweep.py::test_trials_on_local_ray[a b]
19.63s setup    tests/test_unity_standin.py::test_banner_printed_by_the_genuine_client
=========================== short test summary info ============================
SKIPPED [1] tests/test_backends.py:273: needs a CUDA GPU
================== 549 passed, 8 skipped in 293.96s (0:04:53) ==================
"""


def test_the_summary_and_the_slowest_tests_are_read() -> None:
    figures = parse(OUTPUT)
    assert figures["pytest_s"] == 293.96
    assert figures["counts"] == {"passed": 549, "skipped": 8}
    assert figures["slowest"] == [
        {"seconds": 75.92, "phase": "call", "test": "tests/test_sweep.py::test_trials_on_local_ray[a b]"},
        {"seconds": 19.63, "phase": "setup", "test": "tests/test_unity_standin.py::test_banner_printed_by_the_genuine_client"}]
    quiet = parse("549 passed, 8 skipped in 12.5s\n")  # pytest -q prints it without the rules
    assert quiet["pytest_s"] == 12.5 and quiet["slowest"] == []


def test_an_output_without_a_summary_is_refused() -> None:
    with pytest.raises(ValueError, match="no pytest summary line"):
        parse("make: *** [Makefile:55: test] Error 1\n")
