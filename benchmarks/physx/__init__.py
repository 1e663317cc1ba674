"""The PhysX 4.1 Crawler reference (crawler_physx.cpp, built by build.sh) and its Python client
(``benchmarks.physx.server``), importable so that tests and comparisons can play policies in it."""
