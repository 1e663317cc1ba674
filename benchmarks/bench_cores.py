"""Benchmark: what a second core adds to this project's work on this machine.

    .venv/bin/python -m benchmarks.bench_cores [--repeats 15] [--decisions 200] [--updates 200]

A run spends most of its time in the learner's matrix products, the rest stepping the
environment and acting (``bench_train.py`` prints the split). Two ways to use a second core
are worth building only if the machine's cores really run such work side by side, so this
measures that first, each figure the median of ``--repeats`` timed blocks:

1. products: the update's largest matrix product (256x132 @ 132x128, float32, one torch
   thread) in one process alone, then in two processes at once, one pinned to each CPU.
   The speed-up is (two processes' products per second) / (one process's): 2.0 for two
   independent cores, about 1 when the two CPUs share one core's arithmetic units.
2. overlap: a block of 200 environment decisions with acting (20 arms, the fast learner's
   policy) and 200 one-thread learner updates (batch 256 from a filled buffer of 100,000):
   a full-learning stretch of a run, 10 learning steps of 20 decisions and 20 updates.
   Timed one after the other, then at once as an overlapped training loop would run them:
   the updates on a second thread, or the decisions in a second process (its own
   environment and actor). The gain is (one after the other) / (at once): the most such a
   loop could save, before the price of keeping the acting policy in step.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks.bench_train import warmed_up_agent
from common.cpus import available_cpus
from ddpg.backends.fast_cpu import FastCPU
from ddpg.cli import positive_int
from ddpg_agent import Agent, DDPGConfig
from reacher import ReacherEnvironment

ROOT = Path(__file__).resolve().parent.parent

PRODUCTS = 4000  # matrix products per timed block


def product_seconds(cpu: int | None, repeats: int, start: Any = None) -> list[float]:
    """Seconds per product over ``repeats`` blocks, on ``cpu`` (pinned) when given."""
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpu})
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(256, 132, generator=gen), torch.randn(132, 128, generator=gen)
    out = torch.empty(256, 128)
    for _ in range(200):
        torch.mm(a, b, out=out)
    times = []
    for _ in range(repeats):
        if start is not None:
            start.wait()  # both processes time the same moments
        t0 = time.perf_counter()
        for _ in range(PRODUCTS):
            torch.mm(a, b, out=out)
        times.append((time.perf_counter() - t0) / PRODUCTS)
    return times


def _product_worker(cpu: int, repeats: int, start: Any, results: Any) -> None:
    results.put((cpu, product_seconds(cpu, repeats, start)))


def products_side_by_side(repeats: int) -> tuple[float, float]:
    """(seconds per product alone, seconds per product with two processes at once)."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0, 1]
    ctx = mp.get_context("spawn")
    alone = statistics.median(_in_process(ctx, [cpus[0]], repeats))
    both = statistics.median(_in_process(ctx, cpus[:2], repeats))
    return alone, both


def _in_process(ctx: mp.context.BaseContext, cpus: list[int], repeats: int) -> list[float]:
    """Every block's seconds per product, of processes pinned one to each of ``cpus``."""
    start, results = ctx.Barrier(len(cpus)), ctx.Queue()
    workers = [ctx.Process(target=_product_worker, args=(cpu, repeats, start, results)) for cpu in cpus]
    for w in workers:
        w.start()
    times = [t for _ in workers for t in results.get()[1]]
    for w in workers:
        w.join()
    return times


def _player(decisions: int) -> Callable[[], None]:
    """A function that plays ``decisions`` 20-arm decisions: the fast learner's policy, then
    a step of the built-in Reacher (its own environment and actor)."""
    env = ReacherEnvironment(num_agents=20, seed=0, verbose=False)
    brain = env.brain_names[0]
    actor = Agent(33, 4, 1)
    FastCPU(actor, threads=1)
    states = [np.asarray(env.reset(train_mode=True)[brain].vector_observations)]

    def play() -> None:
        for _ in range(decisions):
            info = env.step(actor.act(states[0]))[brain]
            states[0] = np.asarray(info.vector_observations)
    return play


def _play_worker(decisions: int, blocks: int, start: Any, results: Any) -> None:
    """Another process: after each ``start``, play one block and report its seconds."""
    torch.set_num_threads(1)
    play = _player(decisions)
    play()  # warm-up
    for _ in range(blocks):
        start.wait()
        t0 = time.perf_counter()
        play()
        results.put(time.perf_counter() - t0)


def overlap(repeats: int, decisions: int, updates: int) -> dict[str, float]:
    """Median seconds of a block of ``decisions`` and ``updates``: each alone, one after the
    other, at once on two threads, and at once in two processes."""
    play = _player(decisions)
    learner = warmed_up_agent(DDPGConfig(), threads=1)

    def learn() -> None:
        learner.learn_many(updates)

    def threads() -> None:
        thread = threading.Thread(target=learn)
        thread.start()
        play()
        thread.join()

    def processes() -> None:  # the decisions in the other process, from the same moment
        start.wait()
        learn()
        results.get()  # its block has ended too

    ctx = mp.get_context("spawn")
    start, results = ctx.Barrier(2), ctx.Queue()
    worker = ctx.Process(target=_play_worker, args=(decisions, repeats + 1, start, results))
    worker.start()
    ways = {"play": play, "learn": learn, "serial": lambda: (play(), learn()), "threads": threads,
            "processes": processes}
    times: dict[str, list[float]] = {name: [] for name in ways}
    for i in range(repeats + 1):  # the ways take turns, so a slow moment of the machine hits each
        for name, fn in ways.items():
            t0 = time.perf_counter()
            fn()
            if i:  # the first round warms up
                times[name].append(time.perf_counter() - t0)
    worker.join()
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=positive_int, default=15, help="timed blocks per figure (default 15)")
    parser.add_argument("--decisions", type=positive_int, default=200, help="decisions per overlap block (default 200)")
    parser.add_argument("--updates", type=positive_int, default=200,
                        help="updates per overlap block (default 200: a full-learning episode's ratio)")
    args = parser.parse_args()
    if available_cpus() < 2:
        sys.exit("bench_cores.py: error: this process may use only one CPU; the benchmark needs two")
    alone, both = products_side_by_side(args.repeats)
    print(f"# torch {torch.__version__}, {available_cpus()} CPUs, medians of {args.repeats} blocks")
    print(f"products: one process {alone * 1e6:.1f} us per product; two processes at once {both * 1e6:.1f} us each: "
          f"speed-up {2 * alone / both:.2f} (2.00 for two independent cores)")
    f = overlap(args.repeats, args.decisions, args.updates)
    print(f"overlap: {args.decisions} decisions with acting {f['play'] * 1e3:.0f} ms, {args.updates} updates "
          f"{f['learn'] * 1e3:.0f} ms; one after the other {f['serial'] * 1e3:.0f} ms; at once on two threads "
          f"{f['threads'] * 1e3:.0f} ms (gain {f['serial'] / f['threads']:.2f}), in two processes "
          f"{f['processes'] * 1e3:.0f} ms (gain {f['serial'] / f['processes']:.2f})")


if __name__ == "__main__":
    main()
