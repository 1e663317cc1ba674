"""The built-in Crawler's physics: against PhysX 4.1 running the same crawler, and against itself
with fewer or more MuJoCo steps per physics step.

    python -m benchmarks.bench_crawler_physics --json benchmarks/results/crawler_physics/crawler_physx.json

PhysX's side is `tests/physx_reference/crawler_physx_closed_loop.json`: the same policies from the
same action streams (`crawler/fidelity.py`) played on the PhysX reference in closed loop, with its kept
readings, under this package's rules (`--physx BINARY` plays it anew; `benchmarks/physx/build.sh`
builds the binary), so the two sides differ in their engine only. The substeps part
plays 150 decisions of uniform random actions on 12 crawlers for each count and records the
fastest joint or body speed and the highest body: what too few substeps let the stiff drives do.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from crawler import observation as obs
from crawler.environment import ACTION_SIZE, BRAIN_NAME, CrawlerEnvironment
from crawler.fidelity import Episodes, play, read_closed_loop, write_closed_loop

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "tests" / "physx_reference" / "crawler_physx_closed_loop.json"


def summary(e: Episodes) -> dict[str, Any]:
    lived = e.height30[e.decisions >= 30]
    out = {"episodes": len(e.decisions), "median_decisions": float(np.median(e.decisions)),
           "mean_decisions": round(float(e.decisions.mean()), 1), "fell": int(e.fell.sum()),
           "mean_score": round(float(e.score.mean()), 3), "median_top_speed": round(float(np.median(e.top_speed)), 3),
           "median_height30": round(float(np.median(lived)), 3) if len(lived) else None}
    if e.trace is not None:
        out["height"] = [round(float(v), 4) for v in e.trace[:40]]  # the first 40 decisions
        out["final_height"] = round(float(e.trace[-1]), 4)
    return out


def substeps(counts: tuple[int, ...] = (5, 10, 20, 40), decisions: int = 150) -> list[dict[str, Any]]:
    rows = []
    for count in counts:
        env = CrawlerEnvironment(12, verbose=False, show_viewer=False, substeps=count)
        env.reset()
        rng = np.random.default_rng(0)
        fastest = highest = 0.0
        for _ in range(decisions):
            info = env.step(rng.uniform(-1, 1, (12, ACTION_SIZE)))[BRAIN_NAME]
            fastest = max(fastest, float(np.abs(env._data.qvel).max()))
            highest = max(highest, float(info.vector_observations[:, obs.BODY_HEIGHT].max()))
        env.close()
        rows.append({"substeps": count, "max_speed": round(fastest, 1), "max_height": round(highest, 2)})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--episodes", type=int, default=40, help="random-play episodes per policy (the reference has 40)")
    parser.add_argument("--physx", type=Path, help="play the PhysX side anew on this reference binary "
                        f"(benchmarks/physx/build.sh's crawler_physx) and rewrite {REFERENCE.relative_to(ROOT)}")
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args(argv)
    if args.physx is not None:
        if not args.physx.is_file():
            parser.error(f"--physx {args.physx}: no such file (build it with `bash benchmarks/physx/build.sh PHYSX_GIT_DIR`)")
        from benchmarks.physx.server import KEPT_READINGS, PhysXCrawlers

        def engine(n: int) -> PhysXCrawlers:
            return PhysXCrawlers(args.physx, n, KEPT_READINGS)

        write_closed_loop(REFERENCE, {p: play(p, episodes=args.episodes, decisions=1000, engine=engine)
                                      for p in ("still", "stand", "uniform", "gauss")},
                          {"engine": "PhysX 4.1.2, benchmarks/physx/crawler_physx.cpp --serve", "options": list(KEPT_READINGS),
                           "episodes": args.episodes, "command": "python -m benchmarks.bench_crawler_physics --physx BINARY"})
    reference = read_closed_loop(REFERENCE)
    policies = {}
    for policy in ("still", "stand", "uniform", "gauss"):
        ours = play(policy, episodes=args.episodes, decisions=1000)
        policies[policy] = {"mujoco": summary(ours), "physx": summary(reference[policy])}
        m, p = policies[policy]["mujoco"], policies[policy]["physx"]
        print(f"{policy:8s} decisions (median) {m['median_decisions']:6.1f} vs PhysX {p['median_decisions']:6.1f}; "
              f"score {m['mean_score']:7.2f} vs {p['mean_score']:7.2f}; top speed {m['median_top_speed']:.2f} vs "
              f"{p['median_top_speed']:.2f}; height at 30 {m['median_height30']} vs {p['median_height30']}")
    steps = substeps()
    for row in steps:
        print(f"substeps {row['substeps']:3d}: fastest {row['max_speed']:.1f}, highest body {row['max_height']:.2f}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"benchmark": "bench_crawler_physics", "reference": REFERENCE.name,
                                               "policies": policies, "substeps": steps}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
