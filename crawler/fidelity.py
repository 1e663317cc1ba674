"""The built-in Crawler against PhysX 4.1 running the same crawler (benchmarks/physx/crawler_physx.cpp).

Both sides play the same policies from the same action streams (splitmix64, one per episode) and
report, per episode: decisions until a fall (at most the cap), whether it fell, the score, the
body's height at decision 30 and the body's top speed. `still` (no drive: the crawler drops onto
its body) and `stand` (hips level, knees at 75 degrees, full strength) are deterministic and also
give the body's height each decision; `uniform` and `gauss` are random play, compared as
distributions (the motion is chaotic, so single episodes part ways within decisions).
The PhysX side is played in closed loop (`play(..., engine=...)`: the reference steps, this
package's rules score) and committed in tests/physx_reference/ (`write_closed_loop`,
`read_closed_loop`); benchmarks/bench_crawler_physics.py compares, and docs/crawler.md reports the
figures. `read_reference` reads the reference's own earlier output (its --episodes mode).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from crawler import observation as obs
from crawler.environment import ACTION_SIZE, BRAIN_NAME, CrawlerEnvironment, ExternalPhysics

POLICIES = ("still", "stand", "uniform", "gauss")
_MASK = (1 << 64) - 1


class SplitMix64:
    """The reference's generator, so both sides draw the same actions."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def uni(self) -> float:
        return (self.next() >> 11) * (1.0 / 9007199254740992.0)

    def normal(self) -> float:
        while (u1 := self.uni()) <= 0.0:
            pass
        return float(np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * self.uni()))


def policy_action(policy: str, rng: SplitMix64 | None) -> np.ndarray:
    """One decision's 20 values of a policy (drawn from rng for the random ones)."""
    if policy == "still":
        return np.r_[np.zeros(12), -np.ones(8)]
    if policy == "stand":
        return np.r_[np.tile([1.0, 0.0], 4), np.zeros(4), np.ones(8)]
    assert rng is not None
    if policy == "uniform":
        return np.array([2.0 * rng.uni() - 1.0 for _ in range(ACTION_SIZE)])
    if policy == "gauss":
        return np.clip([rng.normal() for _ in range(ACTION_SIZE)], -1.0, 1.0)
    raise ValueError(f"unknown policy {policy!r}; expected one of {', '.join(POLICIES)}")


@dataclass
class Episodes:
    """Per episode: decisions, fell (0/1), score, height at decision 30 (0 if it ended before), top speed;
    and for the scripted policies the body's height per decision."""

    decisions: np.ndarray
    fell: np.ndarray
    score: np.ndarray
    height30: np.ndarray
    top_speed: np.ndarray
    trace: np.ndarray | None = None


def play(policy: str, episodes: int = 20, decisions: int = 1000, seed: int = 0,
         engine: Callable[[int], ExternalPhysics] | None = None) -> Episodes:
    """Play episodes of a policy on the built-in Crawler, one crawler per episode, all at once; with
    `engine` (n crawlers -> an engine, the PhysX reference's), on that engine under the same rules."""
    n = 1 if policy in ("still", "stand") else episodes
    env = CrawlerEnvironment(num_agents=n, verbose=False, show_viewer=False, physics=None if engine is None else engine(n))
    rngs = [SplitMix64(seed + e) for e in range(n)]
    env.reset()
    alive = np.ones(n, dtype=bool)
    count = np.zeros(n, dtype=np.int64)
    fell = np.zeros(n, dtype=bool)
    score, height30, top = np.zeros(n), np.zeros(n), np.zeros(n)
    trace = []
    for step in range(1, decisions + 1):
        actions = np.stack([policy_action(policy, r) for r in rngs])
        info = env.step(actions)[BRAIN_NAME]
        speeds = np.linalg.norm(info.vector_observations[:, obs.BODY + 1:obs.BODY + 4], axis=1)
        heights = info.vector_observations[:, obs.BODY_HEIGHT]
        score[alive] += np.asarray(info.rewards)[alive]
        top[alive] = np.maximum(top[alive], speeds[alive])
        count[alive] = step
        if step == 30:
            height30[alive] = heights[alive]
        trace.append(heights[0])
        ended = alive & np.asarray(info.local_done) & ~np.asarray(info.max_reached)
        fell |= ended
        alive &= ~ended
        if not alive.any():
            break
    env.close()
    return Episodes(count, fell.astype(int), score, height30, top, np.array(trace) if n == 1 else None)


def read_reference(path: str | Path) -> dict[str, Episodes]:
    """The reference program's output, per policy."""
    rows: dict[str, list[list[float]]] = {}
    traces: dict[str, list[float]] = {}
    for line in Path(path).read_text().splitlines():
        parts = line.split()
        if parts and parts[0] == "EPISODE":
            rows.setdefault(parts[1], []).append([float(v) for v in parts[3:]])
        elif parts and parts[0] == "TRACE":
            traces.setdefault(parts[1], []).append(float(parts[3]))
    out = {}
    for policy, values in rows.items():
        a = np.array(values)
        trace = np.array(traces[policy]) if policy in traces else None
        out[policy] = Episodes(a[:, 0].astype(int), a[:, 1].astype(int), a[:, 2], a[:, 3], a[:, 4], trace)
    return out


def write_closed_loop(path: str | Path, played: dict[str, Episodes], about: dict[str, object]) -> None:
    """The closed-loop PhysX side, per policy, as JSON (with what made it: `about`)."""
    import json

    record = {"about": about, "policies": {policy: {k: (None if v is None else np.asarray(v).tolist())
                                                    for k, v in vars(e).items()} for policy, e in played.items()}}
    Path(path).write_text(json.dumps(record, indent=1) + "\n")


def read_closed_loop(path: str | Path) -> dict[str, Episodes]:
    """What `write_closed_loop` wrote, per policy."""
    import json

    policies = json.loads(Path(path).read_text())["policies"]
    return {policy: Episodes(**{k: None if v is None else np.asarray(v) for k, v in e.items()})
            for policy, e in policies.items()}
