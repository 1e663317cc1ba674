"""Fidelity: the built-in Reacher against PhysX 4.1 running the same arm.

    .venv/bin/python -m benchmarks.bench_fidelity                      # 50 episodes x 20 arms per policy
    .venv/bin/python -m benchmarks.bench_fidelity --json benchmarks/results/environment/fidelity.json

Prints, beside the reference's figures (tests/physx_reference/): the mean episode score
under uniform, clipped-Gaussian and Ornstein-Uhlenbeck actions; how far the segments
have moved after 50 uniform decisions; how often the 7 rad/s cap fires; the path under a
constant torque; how many decisions of the reference's recorded uniform episode the
built-in arm follows; and, for comparison, how long two runs of the built-in arm itself
stay together when one starts with a small nudge.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from ddpg.command_line.parsing import random_seed
from reacher.fidelity import (
    POLICIES,
    REFERENCE_POLICY_NAMES,
    TOLERANCES,
    constant_torque_path,
    horizon,
    measure_policy,
    read_recorded_episode,
    read_reference_cap_fractions,
    read_reference_constant_path,
    read_reference_results,
    replay,
)

ROOT = Path(__file__).resolve().parent.parent

REFERENCE = ROOT / "tests" / "physx_reference"
STATS = REFERENCE / "unity_6_1_1000_arm_episodes.txt"
CAPS_AND_CONST = REFERENCE / "unity_6_1_100_arm_episodes_and_const.txt"


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=50, help="episodes of 20 arms per policy (default 50)")
    parser.add_argument("--seed", type=random_seed, default=0)
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = parser.parse_args()
    reference = read_reference_results(STATS)
    out: dict = {"command": " ".join(["python", "-m", "benchmarks.bench_fidelity", *sys.argv[1:]]), "policies": {}}
    print(f"# {out['command']}")
    print(f"# {args.episodes} episodes x 20 arms per policy, seed {args.seed}; PhysX figures from tests/physx_reference/")

    print(f"{'policy':8} {'arm-episodes':>12} {'score':>15} {'PhysX':>15} | {'A moved @50':>11} {'PhysX':>6} "
          f"{'B moved @50':>11} {'PhysX':>6} | {'cap A':>6} {'cap B':>6}")
    for policy in POLICIES:
        start = time.perf_counter()
        s = measure_policy(policy, episodes=args.episodes, seed=args.seed)
        r = reference[REFERENCE_POLICY_NAMES[policy]]
        print(f"{policy:8} {s.arm_episodes:>12} {s.score_mean:>8.3f} +- {s.score_se:.3f} "
              f"{r['score_mean']:>8.3f} +- {r['score_se']:.3f} | {s.distance_a_median:>11.2f} {r['dA50_med']:>6.2f} "
              f"{s.distance_b_median:>11.2f} {r['dB50_med']:>6.2f} | {s.cap_fraction_a:>6.3f} {s.cap_fraction_b:>6.3f}"
              f"   ({time.perf_counter() - start:.1f} s)")
        out["policies"][policy] = {**s.__dict__, "physx": r}
    caps = read_reference_cap_fractions(CAPS_AND_CONST)["uniform"]
    print(f"PhysX's cap under uniform actions: A {caps[0]:.3f}, B {caps[1]:.3f} of physics steps")
    out["physx_cap_uniform"] = caps

    path = constant_torque_path(decisions=150, every=15)
    physx = read_reference_constant_path(CAPS_AND_CONST)
    print("\nconstant action (1, 0, 0, 0) from rest, arm 0: capsule centres (built-in | PhysX)")
    print(f"{'dec':>4} | {'A y':>7} {'A z':>7} {'B y':>7} {'B z':>7} | {'A y':>7} {'A z':>7} {'B y':>7} {'B z':>7} | max diff")
    for row, prow in zip(path, physx, strict=True):
        diff = np.abs(row[1:] - prow[1:]).max()
        print(f"{int(row[0]):>4} | {row[2]:7.3f} {row[3]:7.3f} {row[5]:7.3f} {row[6]:7.3f} | "
              f"{prow[2]:7.3f} {prow[3]:7.3f} {prow[5]:7.3f} {prow[6]:7.3f} | {diff:.3f}")
    out["constant_path"] = {"built_in": path.tolist(), "physx": physx.tolist()}

    episode = read_recorded_episode(REFERENCE / "uniform_episode_unity_joint.csv")
    obs, _ = replay(episode)
    followed = horizon(obs, episode.observations)
    print("\nrecorded PhysX uniform episode (unity joint), same actions and goal: decisions over which the "
          "segment centres agree within")
    print("  " + ", ".join(f"{tol:g}: {n}" for tol, n in followed.within.items()))
    print(f"  largest difference after decision 1: {followed.position_error[1]:.2e}")
    out["recorded_episode"] = {"within": {str(k): v for k, v in followed.within.items()},
                               "error_after_first_decision": float(followed.position_error[1])}
    out["self_divergence"] = {}
    for nudge in (1e-6, 1e-3):
        nudged, _ = replay(episode, velocity_nudge=nudge)
        apart = horizon(obs, nudged)
        print(f"built-in against itself, B nudged by {nudge:g} rad/s at the start: " + ", ".join(
            f"{tol:g}: {n}" for tol, n in apart.within.items()))
        out["self_divergence"][str(nudge)] = {str(k): v for k, v in apart.within.items()}
    out["tolerances"] = list(TOLERANCES)

    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
