"""Benchmark: where a learner update's time goes on this machine, and what bounds it.

    .venv/bin/python -m benchmarks.bench_learner_parts

Prints, each as the median of several timed repeats:
- the share of a one-thread update (batch 256, 128-128 nets) spent in matrix products
  (torch profiler: self CPU time of mm, addmm and addmm+ReLU over all operations);
- float32 throughput of the update's largest matrix product (256x132 @ 132x128) and of a
  1024^3 product (close to one core's peak), and the same product in bfloat16;
- the time to hand work to another thread and get the answer back (a lock round trip),
  the price the two-thread learner pays a few times per update.
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import torch

from benchmarks.bench_train import warmed_up_agent
from ddpg_agent import DDPGConfig

ROOT = Path(__file__).resolve().parent.parent


def median_time(fn: Callable[[], object], number: int, repeats: int = 5) -> float:
    """Median seconds per call of ``fn`` over ``repeats`` blocks of ``number`` calls."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


_MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::_addmm_activation")


def matmul_share_of_update(n_updates: int = 500) -> float:
    """Fraction of a one-thread update's self CPU time spent in mm/addmm."""
    from torch.profiler import ProfilerActivity, profile

    agent = warmed_up_agent(DDPGConfig(), n=50_000)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        agent.learn_many(n_updates)
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)
    matmul = sum(e.self_cpu_time_total for e in events if e.key in _MATMUL_OPS)
    return matmul / total


def matmul_rates() -> dict[str, float]:
    """Seconds per product and GFLOP/s, float32 and bfloat16."""
    out: dict[str, float] = {}
    for name, (m, k, n), number in (("256x132x128", (256, 132, 128), 2000),
                                    ("1024x1024x1024", (1024, 1024, 1024), 10)):
        a, b = torch.randn(m, k), torch.randn(k, n)
        c = torch.empty(m, n)
        sec = median_time(lambda a=a, b=b, c=c: torch.mm(a, b, out=c), number)
        out[f"{name} float32 us"] = sec * 1e6
        out[f"{name} float32 GFLOP/s"] = 2 * m * k * n / sec / 1e9
    a16, b16 = torch.randn(256, 132).bfloat16(), torch.randn(132, 128).bfloat16()
    out["256x132x128 bfloat16 us"] = median_time(lambda: torch.mm(a16, b16), 2000) * 1e6
    return out


def handover_round_trip_us(n: int = 20_000) -> float:
    """Median microseconds to wake another thread and be woken by it (two locks)."""
    ping, pong = threading.Lock(), threading.Lock()
    ping.acquire()
    pong.acquire()
    stop = False

    def partner() -> None:
        while True:
            ping.acquire()
            if stop:
                return
            pong.release()

    thread = threading.Thread(target=partner, daemon=True)
    thread.start()

    def round_trip() -> None:
        ping.release()
        pong.acquire()

    sec = median_time(round_trip, n)
    stop = True
    ping.release()
    thread.join()
    return sec * 1e6


def main() -> int:
    torch.set_num_threads(1)
    print(f"# torch {torch.__version__}, 1 torch thread")
    share = matmul_share_of_update()
    print(f"matrix products: {share:.0%} of a one-thread update's time (batch 256, 128-128)")
    for key, value in matmul_rates().items():
        print(f"{key}: {value:.1f}")
    print(f"thread hand-over round trip: {handover_round_trip_us():.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
