"""Benchmark: train to solved for several seeds, and measure the learner's speed.

    .venv/bin/python -m benchmarks.bench_train                  # 5 seeds, cap 300 episodes
    .venv/bin/python -m benchmarks.bench_train --seeds 3 --max-episodes 200
    .venv/bin/python -m benchmarks.bench_train --updates-only   # learner updates/s only
    .venv/bin/python -m benchmarks.bench_train --learner readable   # the plain-autograd agent
    .venv/bin/python -m benchmarks.bench_train --config '{"critic_layer_norm": true}'   # a candidate
    .venv/bin/python -m benchmarks.bench_train --agents 1 --max-episodes 500   # one arm (tasks.REACHER_ONE_ARM)
    .venv/bin/python -m benchmarks.bench_train --seeds 0-19 --skip-updates --json sweep.json   # a distribution
    .venv/bin/python -m benchmarks.bench_train --seeds 0-19 --skip-updates --jobs 16 --json sweep.json   # on 16 cores

Per seed it prints the solved-at episode E (first episode whose trailing 100-episode
average of the per-episode mean over agents is >= 30, so E >= 100), the first episode whose
mean reached 30, and the wall-clock time of ``train()`` until it stopped, split into stepping
the environment, acting, learning and the rest (storing transitions, the loop); then the
distribution over the seeds (an unsolved seed counts as worse than any solved one): how many
solved, the median, 90th percentile (nearest rank) and worst solved-at episode, and the
medians of the learner updates and the wall-clock to solve and of the first episode at 30.
With --json the results file is rewritten after every seed; run the same command again
after a stop and it continues with the seeds not yet in the file (other settings are refused).
With --jobs N, N seeds train at once, each in its own process on one learner thread: on a
machine with N free cores a distribution takes a fraction of the time, and each seed's
episodes and updates are what it gives alone (its wall-clock then includes the cores' shared
memory and caches, so compare wall-clocks only between runs made with the same --jobs).
Episode counts do not depend on other load (every process computes on one PyTorch thread, as
train.py), so distributions may run beside other work; wall-clock comparisons need a quiet
machine, in one sitting. The learner figure is the median of 5 timed blocks of 1,000 updates
(``Agent.learn_many``, what training runs) on a filled buffer (batch 256, 128-128 networks
unless --config says otherwise), for the chosen learner.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from queue import Empty
from typing import Any

import numpy as np
import torch

from ddpg.agents import LEARNERS, make_agent
from ddpg.backends import GPU_LEARNERS
from ddpg.command_line import reproducible
from ddpg.command_line.device import add_device_option, describe, resolve_device
from ddpg.command_line.parsing import SEED_MAX, finite_float, json_object, non_negative_int, positive_int, random_seed
from ddpg.loop import GOOD_SCORE, GOOD_UPDATES, train
from ddpg.run_folder import agent_state
from ddpg.run_folder.atomic import write_json
from ddpg.run_folder.record_file import git_commit
from ddpg.solved import SOLVE_SCORE, median_with_unsolved, solved_at
from ddpg.tasks import reacher_task
from ddpg.variants import parse_config
from ddpg_agent import Agent, DDPGConfig
from reacher import stepper

ROOT = Path(__file__).resolve().parent.parent


def warmed_up_agent(config: DDPGConfig, n: int = 100_000, seed: int = 0, learner: str = "auto",
                    device: str = "cpu") -> Agent:
    """An agent whose buffer holds exactly n random transitions, after 200 updates (so
    the timed updates see warm caches or a captured graph)."""
    config = parse_config({**config.to_dict(), "buffer_size": n})
    agent = make_agent(learner, (33, 4, seed), config, device)
    rng = np.random.default_rng(seed)
    agent.memory.add(rng.standard_normal((n, 33)), rng.uniform(-1, 1, (n, 4)),
                     rng.uniform(0, 0.04, n), rng.standard_normal((n, 33)), config.gamma)
    agent.learn_many(200)
    return agent


def learner_updates_per_s(config: DDPGConfig, learner: str, n_updates: int = 1000,
                          blocks: int = 5, seed: int = 0, device: str = "cpu") -> tuple[float, list[float]]:
    """Median updates/s of ``Agent.learn_many`` (what training runs) over ``blocks`` timed
    blocks of ``n_updates``, after warm-up, on a buffer of 100,000 random transitions (on a GPU
    each block waits for its last kernel)."""
    agent = warmed_up_agent(config, seed=seed, learner=learner, device=device)
    cuda = agent.device.type == "cuda"
    rates = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        agent.learn_many(n_updates)
        if cuda:
            torch.cuda.synchronize(agent.device)
        rates.append(n_updates / (time.perf_counter() - t0))
    return float(np.median(rates)), rates


def _timed(function: Callable[..., Any], seconds: dict[str, float], key: str) -> Callable[..., Any]:
    """``function`` that adds its wall-clock time to ``seconds[key]``."""
    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            seconds[key] += time.perf_counter() - t0
    return timed


def run_seed(seed: int, config: DDPGConfig, max_episodes: int, n_agents: int,
             learner: str = "auto", good_score: float | None = GOOD_SCORE,
             good_updates: int = GOOD_UPDATES, device: str = "cpu",
             make: Callable[[], Agent] | None = None) -> dict:
    """Train one seed to solved (or the cap), as ``python train.py`` does; return its figures,
    with where the time went: stepping the environment (``env.step``), acting
    (``agent.act``), learning (the updates ``agent.step`` makes) and the rest (storing
    transitions, the training loop, resets). ``make`` builds the agent instead of ``make_agent``
    (called after torch is seeded with ``seed``), for a back-end no learner name gives."""
    from reacher import ReacherEnvironment

    env = ReacherEnvironment(num_agents=n_agents, seed=seed, verbose=False)
    seconds = {"environment": 0.0, "acting": 0.0, "learning": 0.0}
    try:
        torch.manual_seed(seed)
        agent = make() if make is not None else make_agent(learner, (33, 4, seed), config, device)
        env.step = _timed(env.step, seconds, "environment")  # type: ignore[method-assign]
        agent.act = _timed(agent.act, seconds, "acting")  # type: ignore[method-assign]
        agent.learn_many = _timed(agent.learn_many, seconds, "learning")  # type: ignore[method-assign]
        t0 = time.perf_counter()
        scores = train(env, agent, episodes=max_episodes, good_score=good_score, good_updates=good_updates)
        wall = time.perf_counter() - t0
    finally:
        env.close()
    seconds["other"] = wall - sum(seconds.values())
    means = scores.mean(axis=1)
    reached = np.flatnonzero(means >= SOLVE_SCORE)
    return {"seed": seed, "solved_at": solved_at(means), "episodes": len(scores),
            "first_30": int(reached[0]) + 1 if reached.size else None,
            "wall_s": round(wall, 1), "updates": agent.n_updates,
            "final_avg100": round(float(means[-100:].mean()), 2),
            "seconds": {k: round(v, 1) for k, v in seconds.items()},
            "episode_means": [round(float(m), 3) for m in means]}


def _run_in_worker(seed: int, settings: tuple, results: Any) -> None:
    torch.set_num_threads(1)  # as train.py
    try:
        results.put(run_seed(seed, *settings))
    except BaseException as exc:  # a stop before train() began, or a failure: say which seed
        results.put({"seed": seed, "error": f"{type(exc).__name__}: {exc}"})


def seed_runs(seeds: list[int], settings: tuple, jobs: int) -> Iterator[dict]:
    """``run_seed`` for each seed: one after the other in this process, or ``jobs`` at a time,
    each in a fresh process (spawned: nothing of this process's threads or state is
    inherited), the results as they finish. A seed's episodes are the same either way.

    A stop: Ctrl-C (and a closed terminal's SIGHUP) reaches every process of the group, and
    each worker's train() stops its seed and returns what it has, which main() leaves out; a
    SIGTERM sent to this process alone is passed on to the workers. No seed starts after a
    stop, and this process goes on collecting, so the seeds that finished are written."""
    if jobs == 1 or len(seeds) <= 1:
        for seed in seeds:
            yield run_seed(seed, *settings)
        return
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    # Each worker's environment steps on the threads its share of the CPUs gets by default (unless
    # REACHER_THREADS says): N jobs of a 16-core machine's default would wait on one another's cores.
    share = stepper.default_threads_for(max(1, stepper.available_cpus() // jobs))
    os.environ.setdefault(stepper.THREADS_VARIABLE, str(share))  # the spawned workers inherit it
    waiting, running = list(seeds), {}
    stops: list[int] = []

    def on_signal(signum: int, _frame: Any) -> None:
        stops.append(signum)
        if signum == signal.SIGTERM:
            for process in running.values():
                with contextlib.suppress(ProcessLookupError):  # it may have just finished
                    os.kill(process.pid, signum)

    wanted = [signal.SIGINT, signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
    previous = {sig: signal.signal(sig, on_signal) for sig in wanted}
    try:
        while waiting or running:
            while waiting and len(running) < jobs and not stops:
                seed = waiting.pop(0)
                running[seed] = context.Process(target=_run_in_worker, args=(seed, settings, queue), daemon=True)
                running[seed].start()
            if not running:
                break
            try:
                r = queue.get(timeout=1.0)
            except Empty:
                gone = [seed for seed, process in running.items() if not process.is_alive() and queue.empty()]
                if gone and not stops:
                    raise RuntimeError(f"the process training seed {gone[0]} ended without a result "
                                       f"(exit code {running[gone[0]].exitcode})") from None
                for seed in gone:  # a stop reached it before train() began: nothing to keep
                    running.pop(seed).join()
                continue
            running.pop(r["seed"]).join()
            if "error" in r:
                if stops:  # stopped before its training began
                    continue
                raise RuntimeError(f"seed {r['seed']} failed: {r['error']}")
            yield r
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        for process in running.values():
            process.terminate()


def seed_list(text: str, first_seed: int = 0) -> list[int]:
    """--seeds: a count N (N seeds from ``first_seed`` on, as before), or seeds and inclusive
    ranges separated by commas: '0-19', '0,3,7', '0-4,10'. Raises ArgumentTypeError."""
    expected = "expected a count (5) or seeds and ranges such as '0-19' or '0,3,7-9'"
    text = text.strip()
    if text.isdigit():
        if int(text) < 1:
            raise argparse.ArgumentTypeError(f"{expected}, got {text!r}")
        if first_seed + int(text) - 1 > SEED_MAX:  # the last seed run, as every --seed is checked
            random_seed(str(first_seed + int(text) - 1))
        return list(range(first_seed, first_seed + int(text)))
    seeds: list[int] = []
    for part in text.split(","):
        low, dash, high = part.strip().partition("-")
        if not low.isdigit() or (dash and (not high.isdigit() or int(high) < int(low))):
            raise argparse.ArgumentTypeError(f"{expected}, got {text!r}")
        seeds += range(int(low), int(high or low) + 1)
    if len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"a seed is listed twice in {text!r}")
    for seed in seeds:  # each one as every --seed is checked (ddpg.command_line.parsing.random_seed)
        random_seed(str(seed))
    return seeds


def rank_with_unsolved(values: list[float | None], q: float) -> float | None:
    """The nearest-rank q-quantile (0 < q <= 1) over runs, an unsolved run (None) ranking
    worse than every solved one; None when that rank is an unsolved run."""
    ranked = sorted(values, key=lambda v: (v is None, v if v is not None else 0.0))
    return ranked[max(math.ceil(q * len(ranked)), 1) - 1]


def distribution(results: list[dict]) -> dict[str, Any]:
    """What a sweep of seeds says: how many solved, where the solved-at episodes fall (the
    median, the 90th percentile, the worst), and the medians of the updates and the
    wall-clock to solve and of the first episode whose mean reached 30."""
    solved = [r["solved_at"] for r in results]
    return {
        "n_seeds": len(results), "n_solved": sum(e is not None for e in solved),
        "median_solved_at": median_with_unsolved(solved), "p90_solved_at": rank_with_unsolved(solved, 0.9),
        "worst_solved_at": rank_with_unsolved(solved, 1.0),
        "median_updates": median_with_unsolved([r["updates"] if r["solved_at"] is not None else None for r in results]),
        "median_wall_s": median_with_unsolved([r["wall_s"] if r["solved_at"] is not None else None for r in results]),
        "median_first_30": median_with_unsolved([r.get("first_30") for r in results]),
    }


def _same_settings(report: dict, earlier: dict) -> list[str]:
    """The settings in which a results file differs from this run (so it cannot continue it)."""
    keys = ("learner", "config", "schedule", "agents", "max_episodes", "reproducible")
    return [k for k in keys if report.get(k) != earlier.get(k)]


def _seed_line(r: dict, cap: int) -> str:
    solved = r["solved_at"] if r["solved_at"] is not None else f"unsolved (cap {cap})"
    return (f"seed {r['seed']}: solved at episode {solved}  wall {r['wall_s']:.1f}s  updates {r['updates']}  "
            f"final avg100 {r['final_avg100']:.2f}  first mean >= 30 at episode {r.get('first_30') or '-'}")


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    p.add_argument("--seeds", default="5",
                   help="a count N: N seeds from --first-seed on (default 5: seeds 0-4); or seeds and ranges, "
                        "'0-19', '0,3,7-9'")
    p.add_argument("--first-seed", type=random_seed, default=0, help="first seed, 0 to 2**63 - 1 (default 0)")
    p.add_argument("--learner", choices=LEARNERS, default="auto",
                   help="which learner trains (default auto, as train.py: readable on the CPU, graph-overlap on CUDA)")
    add_device_option(p)
    p.add_argument("--max-episodes", type=positive_int, default=300,
                   help="episode cap per seed (default 300)")
    p.add_argument("--agents", type=positive_int, default=20)
    p.add_argument("--config", type=json_object, default={},
                   help="JSON object of config overrides, as train.py --config")
    p.add_argument("--good-score", type=finite_float, default=None,
                   help=f"train.py's schedule: after an episode scoring at least this (mean over arms), "
                        f"make --good-updates updates per learning step; negative: off (default {GOOD_SCORE:g}; "
                        "one arm: tasks.REACHER_ONE_ARM's, off)")
    p.add_argument("--good-updates", type=non_negative_int, default=GOOD_UPDATES,
                   help=f"updates per learning step while good (default {GOOD_UPDATES})")
    p.add_argument("--jobs", type=positive_int, default=1,
                   help="seeds trained at once, each in its own process (default 1); on a machine with more "
                        "cores, a distribution in a fraction of the time, each seed's numbers the same")
    p.add_argument("--updates-only", action="store_true", help="only measure the learner")
    p.add_argument("--skip-updates", action="store_true", help="skip the learner measurement")
    p.add_argument("--show-curve", action="store_true",
                   help="also print each seed's mean score every 5 episodes")
    p.add_argument("--json", default=None, help="also write all figures to this JSON file")
    p.add_argument("--reproducible", action="store_true",
                   help="train as train.py --reproducible does: the math libraries pinned to their AVX2 paths")
    args = p.parse_args(argv)
    if args.jobs > (os.cpu_count() or 1):
        print(f"# warning: {args.jobs} jobs on {os.cpu_count()} CPUs: the seeds' wall-clocks will include waiting "
              "for a CPU", file=sys.stderr)
    try:
        seeds = seed_list(args.seeds, args.first_seed)
    except argparse.ArgumentTypeError as exc:
        p.error(f"--seeds: {exc}")
    try:
        reproducible.ensure(args.reproducible, command_line=argv is None)
    except reproducible.NotPinned as exc:
        p.error(str(exc))
    task = reacher_task(args.agents)  # as train.py: the one-arm version has its own settings
    try:
        config = parse_config({**(task.config if task else {}), **args.config})
    except (TypeError, ValueError) as exc:
        p.error(f"--config: {exc}")
    try:
        device = str(resolve_device(args.device))
        # The learner that runs (run.json's name): a results file names it, not "auto".
        probe = make_agent(args.learner, (33, 4, 0), parse_config({**config.to_dict(), "buffer_size": 1}), device)
        args.learner = agent_state.learner(probe)
    except ValueError as exc:
        p.error(str(exc))
    if args.good_score is None:
        args.good_score = task.good_score if task else GOOD_SCORE
    elif args.good_score < 0:
        args.good_score = None
    torch.set_num_threads(1)  # as train.py
    command = "python -m benchmarks.bench_train " + " ".join(sys.argv[1:] if argv is None else argv)
    print(f"# {command}")
    print(f"# arms {args.agents}  settings: {'tasks.REACHER_ONE_ARM' if task else 'DDPGConfig defaults'}  "
          f"schedule: good score {args.good_score}, good updates {args.good_updates}")
    print(f"# learner {args.learner}  config overrides: {json.dumps(args.config)}  commit {git_commit()}  "
          f"torch {torch.__version__}  {reproducible.cpu_model()}  cpus {os.cpu_count()}  "
          f"kernels {torch.backends.cpu.get_cpu_capability()}  reproducible {reproducible.active()}")
    report: dict = {"command": command, "learner": args.learner, "config": config.to_dict(),
                    "schedule": {"good_score": args.good_score, "good_updates": args.good_updates},
                    "agents": args.agents,
                    "threads": 1, "jobs": args.jobs, "git_commit": git_commit(), "reproducible": reproducible.active(),
                    "machine": reproducible.machine(),
                    **({"device": describe(torch.device(device))} if device != "cpu" else {})}

    if not args.updates_only:
        report["max_episodes"] = args.max_episodes
        results: list[dict] = []
        if args.json and Path(args.json).is_file():  # a sweep stopped earlier: continue it
            earlier = json.loads(Path(args.json).read_text())
            differ = _same_settings(report, earlier)
            if differ:
                p.error(f"--json {args.json} holds seeds run with other settings ({', '.join(differ)}); "
                        "give another file to start a new sweep")
            results = [r for r in earlier.get("seeds", []) if r["seed"] in seeds]
            if results:
                print(f"# continuing {args.json}: seeds {[r['seed'] for r in results]} already run")
        todo = [s for s in seeds if s not in {r["seed"] for r in results}]
        settings = (config, args.max_episodes, args.agents, args.learner, args.good_score, args.good_updates,
                    device)
        for r in seed_runs(todo, settings, args.jobs):
            seed = r["seed"]
            if r["solved_at"] is None and r["episodes"] < args.max_episodes:
                # train() ends a run early only when solved, or when Ctrl-C / SIGTERM stops it
                print(f"seed {seed} was stopped by a signal after {r['episodes']} episodes; not written "
                      f"(the seeds finished before it are{' in ' + args.json if args.json else ' not kept without --json'})",
                      file=sys.stderr)
                if args.jobs == 1:
                    return 130
                continue  # the other jobs stop too (the signal reaches them all); keep what finished
            results.append(r)
            print(_seed_line(r, args.max_episodes), flush=True)
            print("  time: " + ", ".join(f"{k} {v:.1f}s ({v / r['wall_s']:.0%})" for k, v in r["seconds"].items()),
                  flush=True)
            if args.show_curve:
                m = r["episode_means"]
                print("  mean score at episodes 5, 10, ...: "
                      + " ".join(f"{m[i]:.1f}" for i in range(4, len(m), 5)), flush=True)
            results.sort(key=lambda x: seeds.index(x["seed"]))
            if args.json:  # seed by seed, so that a stopped sweep continues where it stopped
                Path(args.json).parent.mkdir(parents=True, exist_ok=True)
                write_json(args.json, {**report, "seeds": results, **distribution(results)})
        missing = [s for s in seeds if s not in {r["seed"] for r in results}]
        if missing:  # with --jobs, a stop leaves out the seeds it stopped and those not yet begun
            print(f"not written (stopped): seeds {', '.join(map(str, missing))}", file=sys.stderr)
            return 130
        summary = distribution(results)
        report.update(seeds=results, **summary)
        unsolved = "unsolved"
        for name, key in (("median", "median_solved_at"), ("90th percentile", "p90_solved_at"),
                          ("worst", "worst_solved_at")):
            value = summary[key]
            print(f"{name} solved-at episode: {value if value is not None else unsolved}")
        med_wall, med_updates, first = summary["median_wall_s"], summary["median_updates"], summary["median_first_30"]
        print(f"median wall-clock to solve: {f'{med_wall:.1f}s' if med_wall is not None else unsolved}")
        print(f"median learner updates to solve: {f'{med_updates:,.0f}' if med_updates is not None else unsolved}")
        print(f"median first episode with a mean of 30: {first if first is not None else 'never'}")
        print(f"solved: {summary['n_solved']}/{len(results)}")

    if not args.skip_updates:
        rate, rates = learner_updates_per_s(config, args.learner, device=device)
        where = f"on {device}" if args.learner in GPU_LEARNERS else f"autograd on {device}"
        print(f"learner: {rate:.0f} updates/s (batch {config.batch_size}, actor {config.actor_fc1}-{config.actor_fc2}, "
              f"critic {config.critic_fc1}-{config.critic_fc2}, learner '{args.learner}' {where}; blocks: "
              f"{', '.join(f'{x:.0f}' for x in rates)})", flush=True)
        report.update({"learner_updates_per_s": rate, "learner_blocks": rates})
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        write_json(args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
