"""Benchmarks and diagnostics: scripts (``python -m benchmarks.bench_train``) whose shared pieces
(``probe_run``, ``bench_train.warmed_up_agent``) the others and the tests import as
``benchmarks.<module>``. Their raw results live in ``benchmarks/results/``."""
