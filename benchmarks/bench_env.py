"""Speed of the built-in Reacher: 20-agent decisions per second with random actions, per thread count.

Usage: python -m benchmarks.bench_env [--agents 20] [--decisions 4000] [--repeats 7]
       python -m benchmarks.bench_env --threads 1,2,4,8,16 [--json OUT.json]

Rendering off; actions are drawn before timing so only the environment counts. With one
thread count of 1 (``--threads 1``) the process is pinned to one core, as it always was; with
several, to the first max(--threads) CPUs it may use, and the thread counts take turns in
every repeat (the order reversed every other repeat), so that a drift of the machine's speed
(another job on a core) reaches them alike; the speed-up against one thread is taken repeat
by repeat and its median printed. Every thread count steps its own environment through the
same actions from the same seed, and the runs must end bitwise equal (checked).

Two figures per thread count: the whole ``env.step`` (the interface included: checks,
observations, rewards) and the physics alone (``reacher.stepper.ArmStepper``, the part the
threads share), both in microseconds per decision. A thread count above what this process
can use (its CPUs, numba's launched threads) runs on fewer: the ``used`` column says how many.
Where the threads stall (another job holds the cores), ``ArmStepper`` sends the steps to one
thread for a while: the line then says how many times (``fallbacks`` in the JSON);
``--no-fallback`` times the threads stalls and all.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from reacher import ReacherEnvironment, physics, stepper
from reacher.environment import DRAG_FACTOR, GRAVITY, MAX_ANGULAR_SPEED, PHYSICS_DT

ROOT = Path(__file__).resolve().parent.parent


def decisions_per_second(env: ReacherEnvironment, actions: np.ndarray) -> float:
    """Decisions per second of ``env.step`` over ``actions`` (one decision each), from a reset."""
    env.reset()
    start = time.perf_counter()
    for a in actions:
        env.step(a)
    return len(actions) / (time.perf_counter() - start)


def physics_us(env: ReacherEnvironment, threads: int, torques: np.ndarray, goals: np.ndarray) -> float:
    """Microseconds per decision of the physics alone (``ArmStepper.step``, 4 physics steps of
    every arm) on ``threads`` threads, on a copy of ``env``'s state, through the given torques and goal tracks."""
    qpos, qvel, body_vel = env._qpos.copy(), env._qvel.copy(), env._body_vel.copy()
    counts, capped = np.zeros(env.num_agents, dtype=np.int64), np.zeros(2, dtype=np.int64)
    arms = stepper.ArmStepper(threads)
    start = time.perf_counter()
    for torque, track in zip(torques, goals, strict=True):
        arms.step(qpos, qvel, body_vel, torque, track, 16.0, counts, capped, env._arm,
                     PHYSICS_DT, GRAVITY, DRAG_FACTOR, MAX_ANGULAR_SPEED)
    _fallbacks[threads] = _fallbacks.get(threads, 0) + arms.fallbacks
    return (time.perf_counter() - start) / len(torques) * 1e6


_fallbacks: dict[int, int] = {}  # per thread count: ArmStepper's fall-backs to one thread in the physics runs


def thread_counts(text: str) -> list[int]:
    """--threads: positive counts separated by commas, each once ('1,2,4,8,16')."""
    parts = [part.strip() for part in text.split(",")]
    if not all(part.isdigit() and int(part) >= 1 for part in parts):
        raise argparse.ArgumentTypeError(f"expected positive thread counts separated by commas, got {text!r}")
    counts = [int(part) for part in parts]
    if len(set(counts)) != len(counts):
        raise argparse.ArgumentTypeError(f"a thread count is listed twice in {text!r}")
    return counts


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: prints one line per thread count; --json writes the figures."""
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--decisions", type=int, default=4000, help="decisions per timed run (episodes restart by themselves)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=thread_counts, default=None,
                        help="thread counts to compare, e.g. 1,2,4,8,16 (default: 1 and the environment's "
                             f"default, {stepper.default_threads()} here)")
    parser.add_argument("--no-fallback", action="store_true",
                        help="time the threads as they are, stalls included (ArmStepper's fall-back to one thread off)")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.no_fallback:
        stepper.STALLS_TO_FALL_BACK = 10**9
    counts = args.threads or sorted({1, stepper.default_threads()})
    load_before = [round(x, 2) for x in os.getloadavg()]  # other jobs on the machine (1, 5, 15 minutes)
    if hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, set(cpus[:max(1, min(max(counts), len(cpus)))]))

    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (args.decisions, args.agents, 4))
    torques = 150.0 * rng.uniform(-1, 1, (args.decisions, args.agents, 2, 3))
    goals = rng.uniform(-8, 8, (args.decisions, 4, args.agents, 3))
    envs, first_step_s = {}, {}
    for t in counts:
        envs[t] = ReacherEnvironment(num_agents=args.agents, seed=0, verbose=False, threads=t)
        envs[t].reset()
        t0 = time.perf_counter()
        envs[t].step(actions[0])  # loads the compiled kernels (compiles them where numba's cache is cold)
        first_step_s[t] = time.perf_counter() - t0
        decisions_per_second(envs[t], actions[:200])  # warm-up
        physics_us(envs[t], t, torques[:200], goals[:200])
    used = {t: stepper.usable_threads(t) for t in counts}
    layer = stepper.threading_layer() if max(counts) > 1 else None

    env_us: dict[int, list[float]] = {t: [] for t in counts}
    phys_us: dict[int, list[float]] = {t: [] for t in counts}
    for r in range(args.repeats):
        for t in counts if r % 2 == 0 else counts[::-1]:
            env_us[t].append(1e6 / decisions_per_second(envs[t], actions))
            phys_us[t].append(physics_us(envs[t], t, torques, goals))
    final = {t: envs[t].step(actions[0])["ReacherBrain"].vector_observations for t in counts}
    identical = all(np.array_equal(final[counts[0]], final[t]) for t in counts)
    for env in envs.values():
        env.close()  # (its stepper's fall-backs stay readable)

    cpus_used = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"agents: {args.agents}, random actions, rendering off, {args.repeats} runs of {args.decisions} decisions "
          f"per thread count, taking turns; {cpus_used} CPU(s) of {os.cpu_count()}; numba layer {layer or '-'}, "
          f"{physics.numba.config.NUMBA_NUM_THREADS} numba threads")
    rows = []
    for t in counts:
        ratios = [a / b for a, b in zip(env_us[counts[0]], env_us[t], strict=True)]
        phys_ratios = [a / b for a, b in zip(phys_us[counts[0]], phys_us[t], strict=True)]
        row = {"threads": t, "used": used[t],
               "env_us": {"median": round(statistics.median(env_us[t]), 1), "min": round(min(env_us[t]), 1),
                          "max": round(max(env_us[t]), 1), "runs": [round(x, 1) for x in env_us[t]]},
               "physics_us": {"median": round(statistics.median(phys_us[t]), 1), "min": round(min(phys_us[t]), 1),
                              "max": round(max(phys_us[t]), 1), "runs": [round(x, 1) for x in phys_us[t]]},
               f"env_speed_up_vs_{counts[0]}": round(statistics.median(ratios), 3),
               f"physics_speed_up_vs_{counts[0]}": round(statistics.median(phys_ratios), 3),
               "first_step_s": round(first_step_s[t], 3),
               "fallbacks": {"environment": envs[t]._stepper.fallbacks, "physics": _fallbacks.get(t, 0)}}
        rows.append(row)
        print(f"threads {t} (used {used[t]}): per decision {row['env_us']['median']:.0f} us in all "
              f"(min {row['env_us']['min']:.0f}, max {row['env_us']['max']:.0f}), physics {row['physics_us']['median']:.0f} us; "
              f"x{row[f'env_speed_up_vs_{counts[0]}']:.2f} in all, x{row[f'physics_speed_up_vs_{counts[0]}']:.2f} physics "
              f"against {counts[0]} thread(s); first step {first_step_s[t]:.2f} s"
              + (f"; stalled, fell back to one thread {row['fallbacks']}" if any(row["fallbacks"].values()) else ""),
              flush=True)
    if len(counts) == 1:
        median = 1e6 / rows[0]["env_us"]["median"]
        print(f"decisions/s: median {median:,.0f}; agent-steps/s: median {median * args.agents:,.0f}; "
              f"{rows[0]['env_us']['median'] / (4 * args.agents):.2f} us per arm and physics step")
    print(f"all thread counts ended bitwise equal: {identical}")
    if args.json:
        from ddpg.command_line import reproducible
        from ddpg.run_folder.atomic import write_json
        from ddpg.run_folder.record_file import git_commit

        command = "python -m benchmarks.bench_env " + " ".join(sys.argv[1:] if argv is None else argv)
        report = {"command": command.strip(), "git_commit": git_commit(), "machine": reproducible.machine(),
                  "cpus_available": cpus_used, "cpu_count": os.cpu_count(), "numba_layer": layer,
                  "numba_num_threads": physics.numba.config.NUMBA_NUM_THREADS,
                  "default_threads": stepper.default_threads(), "fallback": not args.no_fallback,
                  "load_average": {"before": load_before, "after": [round(x, 2) for x in os.getloadavg()]},
                  "agents": args.agents,
                  "decisions": args.decisions, "repeats": args.repeats, "bitwise_equal": identical, "rows": rows}
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        write_json(args.json, report)
        print(f"Wrote {args.json}")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
