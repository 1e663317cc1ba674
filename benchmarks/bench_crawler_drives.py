"""Why the Crawler needs 20 MuJoCo steps per physics step: its drives' force cap.

    python -m benchmarks.bench_crawler_drives --json benchmarks/results/crawler_physics/crawler_drives.json

Each joint's drive is a position actuator (spring 40000, damper 3000) whose force the agent's
strength caps at up to 10000. MuJoCo's implicit integrator treats the damper implicitly while the
force is under its cap; once capped, the force is a constant, and at the next step the damper's
force from the velocity it let build can reach the opposite cap: a bang-bang that grows where a
step is long. This plays uniform random actions, one crawler in its own model as the environment
steps it, for several substep counts, with the caps the actions ask for and with none (the full
spring and damper), and records the fastest joint or body speed. Without the cap the drive holds
at 5 substeps; with it, the speeds stay bounded only from about 20.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from crawler.actions import ACTION_SIZE, drive_limits, joint_targets
from crawler.mjcf import build_mjcf
from envkit.mujoco_gl import mujoco

COUNTS = (5, 8, 10, 12, 16, 20)
UNSTABLE = 1e4  # rad/s: past this a run is counted as blown up and stopped


def fastest(substeps: int, capped: bool, crawler: int, decisions: int, seed: int) -> float:
    """The fastest joint or body speed of one crawler over uniform random play (inf once it blows up)."""
    model = mujoco.MjModel.from_xml_string(build_mjcf(12, substeps, only=crawler))
    data = mujoco.MjData(model)
    if not capped:
        model.actuator_forcelimited[:] = 0
    rng = np.random.default_rng(seed)
    top = 0.0
    for _ in range(decisions):
        action = rng.uniform(-1.0, 1.0, (1, ACTION_SIZE))
        data.ctrl[:] = joint_targets(action)[0][0]
        if capped:
            limits = drive_limits(action)[0]
            model.actuator_forcerange[:, 0], model.actuator_forcerange[:, 1] = -limits, limits
        mujoco.mj_step(model, data, nstep=5 * substeps)
        speed = float(np.abs(data.qvel).max())
        if not np.isfinite(speed) or speed > UNSTABLE:
            return float("inf")
        top = max(top, speed)
    return top


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--decisions", type=int, default=150, help="decisions per run (default 150)")
    parser.add_argument("--crawlers", type=int, default=4, help="crawlers (each its own seed) per count (default 4)")
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for count in COUNTS:
        row: dict[str, Any] = {"substeps": count}
        for capped in (True, False):
            speeds = [fastest(count, capped, i, args.decisions, seed=i) for i in range(args.crawlers)]
            median = float(np.median(speeds))
            row["capped" if capped else "uncapped"] = {"median_fastest": median if np.isfinite(median) else None,
                                                       "blown_up": int(sum(np.isinf(speeds)))}
        rows.append(row)
        c, u = row["capped"], row["uncapped"]
        print(f"substeps {count:3d}: capped drives fastest {c['median_fastest'] or float('inf'):9.1f} ({c['blown_up']} of "
              f"{args.crawlers} blew up); uncapped {u['median_fastest'] or float('inf'):7.1f} ({u['blown_up']} blew up)",
              flush=True)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"benchmark": "bench_crawler_drives", "decisions": args.decisions,
                                               "crawlers": args.crawlers, "unstable_above": UNSTABLE,
                                               "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
