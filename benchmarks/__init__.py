"""Benchmarks and diagnostics: scripts (``python benchmarks/bench_train.py``) whose shared pieces
(``probe_run``, ``bench_train.warmed_up_agent``) the others and the tests import as
``benchmarks.<module>``. Their raw results live in ``benchmarks/results/``."""
