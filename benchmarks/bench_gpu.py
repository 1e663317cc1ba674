"""The GPU check: on a machine with a CUDA GPU, what each device costs and whether --device cuda pays.

    python -m benchmarks.bench_gpu
    python -m benchmarks.bench_gpu --tests --json OUT.json   # make bench-gpu: --tests, in .venv
    python -m benchmarks.bench_gpu --check                   # the prepared device check (below), ~9 minutes

Run on an H200 with a 16-core Xeon on 2026-11-26 (``benchmarks/results/gpu_nvidia_h200.json``;
docs/training.md quotes it) as ``--tests --max-episodes 120 --cuda-learners graph,graph-overlap``:
the whole command, the wheels' install included, took about 8.6 minutes: a minute for the tests,
under a minute for the costs, and 6.8 minutes for the nine training runs (29-55 s on CUDA, 51-75 s
on the CPU). The defaults leave out the three in-step ``graph`` runs (``auto`` takes
``graph-overlap`` on CUDA), which brings it to about 6.5 minutes; ``--seeds 0-1`` takes a third
of the runs out.

In one command it prints and records:

1. the cost of one update of the default networks: eagerly on the GPU (autograd, what the
   course's code does with ``device = "cuda"``), captured as a CUDA graph (``--learner graph``)
   and on this machine's CPU (the readable learner, one thread); and of an ensemble of 5
   and of 10 critics (``{"ensemble": N}``), captured on the GPU and eagerly on the CPU;
2. the cost of acting for 20 arms: on the CPU (the actor module itself and
   the graph back-end's CPU copy of the actor), and eagerly on the GPU;
3. the 20-arm default trained to solved on each seed (default 0-2) with ``--device cuda``, by
   ``--learner graph`` and ``--learner graph-overlap`` (the environment stepping while the GPU
   replays), and with ``--device cpu`` on the same machine, interleaved, each run as ``train.py``
   runs it (``bench_train.run_seed``): its solved-at episode, wall-clock, updates and where the
   time went.

With ``--tests`` it first runs tests/test_backends.py, whose CUDA tests (a replayed update
against the eager one, the device buffer, checkpoints and states crossing devices, the same seed
giving the same updates) run only where there is a GPU. The results go to
``benchmarks/results/gpu_<gpu name>.json`` (or ``--json``) after every step, so a run cut short
keeps what it measured; each training run has its ``device``, ``seed``, ``solved_at``,
``wall_s`` and ``updates``. The last lines compare the figures with the GPU issue's aims:
3/3 solved by episode 102, a median under 30 s on CUDA, at least twice as fast as the CPU.

**The prepared check** (``--check``, issue 54; nothing else runs with it but ``--tests`` if
asked) fits one command of about 9 minutes (``--budget-s``, default 510 s of work after
start-up) and writes ``benchmarks/results/gpu/gpu_<gpu name>.json`` after every step:

1. the environment's threads: ``benchmarks/bench_env.py --threads 1,2,4,8,16`` in a child
   process (microseconds per decision for 20 arms, the physics alone too, and numba's layer),
   which says whether ``reacher.stepper.default_threads()`` is right on this machine;
2. seeds 0-2 alone, each trained with ``auto`` on CUDA and then, interleaved, on the CPU (the
   readable learner), the environment on ``--env-threads`` threads (default: the environment's
   default here): wall-clocks comparable with the run above (31 s on the H200, 28 s of it the
   environment and acting);
3. seeds 0-19 with ``auto`` on CUDA, ``--jobs`` at a time (default: the fewest that fit what
   is left of the budget, a seed planned at 1.4 times its alone wall-clock and 15 s for its
   process to start), each job's environment on the threads that leave a CPU free
   (``REACHER_THREADS`` in the jobs). Solved-at episodes do not depend on load
   (bench_train.py): the distribution over 20 seeds, while the wall-clocks of step 2 are the
   ones to compare.

A pair of step 2 that would leave step 3 too little of the budget is not started (the file
says so). Step 1 also compiles the environment's kernels into numba's cache before the jobs
start, so that they do not all compile at once. On a 16-core H200 machine the plan comes to
about 40 s for step 1, 5 minutes for step 2 and 2-3 minutes for step 3 (7 jobs of 2 threads),
by the figures of the run above; the command, from the repository's root after the wheels'
install below: ``PYTHONPATH=/tmp/site python3 -m benchmarks.bench_gpu --check``.

**Packages.** Beyond PyTorch and NumPy it needs ``mujoco`` (the built-in Reacher's physics) and
``tqdm``; ``pytest`` for ``--tests``. Gymnasium, matplotlib and the rest are not imported. A GPU
machine without network gets mujoco as wheels: on a machine with network,
``sh benchmarks/gpu_wheels.sh`` downloads mujoco and the two packages it imports (glfw,
PyOpenGL) for CPython 3.12 on x86-64 Linux into ``.whl/`` (``PY=3.11 sh ...`` for another
Python); carry ``.whl`` over and run there, from the repository's root::

    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
    PYTHONPATH=/tmp/site python3 -m benchmarks.bench_gpu --tests

The repository need not be installed there: run as a module from its root (``python3 -m``),
the root is on ``sys.path``, as it is for the child processes this starts.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks.bench_train import distribution, learner_updates_per_s, run_seed, seed_list, seed_runs
from ddpg.agents import make_agent
from ddpg.backends import GPU_LEARNERS
from ddpg.command_line import reproducible
from ddpg.command_line.device import describe
from ddpg.command_line.parsing import positive_int
from ddpg.loop import GOOD_SCORE, GOOD_UPDATES
from ddpg.run_folder import agent_state
from ddpg.run_folder.atomic import write_json
from ddpg.run_folder.record_file import git_commit
from ddpg.variants import parse_config
from ddpg_agent import DDPGConfig
from reacher import stepper

ROOT = Path(__file__).resolve().parent.parent

# The GPU issue's aims, checked on the last lines.
AIM_SOLVED_BY = 102
AIM_MEDIAN_S = 30.0
AIM_SPEED_UP = 2.0
ENSEMBLES = (5, 10)  # critics in the ensembles whose update is timed (the 20-arm screen's 5, REDQ's 10)

# The prepared check (--check).
CHECK_BUDGET_S = 510.0  # its work after start-up: with start-up and the wheels' install, about 9 minutes
CHECK_ENV_THREADS = "1,2,4,8,16"  # the environment's thread counts timed (bench_env.py --threads)
CHECK_ALONE_SEEDS = "0-2"  # trained alone on CUDA and on the CPU, interleaved
CHECK_JOB_SEEDS = "0-19"  # trained with auto on CUDA, --jobs at a time
PAIR_ESTIMATE_S = 110.0  # one seed on CUDA and on the CPU, before one is measured (the H200: 29-55 + 51-75 s)
SEED_ALONE_ESTIMATE_S = 35.0  # one CUDA seed alone, before one is measured (the H200: median 31 s)
LOAD_FACTOR = 1.4  # a seed beside the other jobs takes this much longer than alone (a margin, not a measurement)
JOB_START_S = 15.0  # a job's process starting: imports, CUDA, the compiled kernels from numba's cache (a margin)


def acting_us(learner: str, device: str, calls: int = 2000, blocks: int = 5) -> float:
    """Median microseconds of ``agent.act`` for 20 states (host in, host out), as training acts."""
    agent = make_agent(learner, (33, 4, 0), DDPGConfig(buffer_size=1024), device)
    states = np.random.default_rng(0).standard_normal((20, 33)).astype(np.float32)
    for _ in range(200):
        agent.act(states)
    times = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(calls):
            agent.act(states)
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return float(np.median(times))


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def resolve_learner(name: str, device: str) -> str:
    """The learner ``name`` ("auto") runs on ``device``: what a results file names."""
    return agent_state.learner(make_agent(name, (33, 4, 0), DDPGConfig(buffer_size=1), device))


@contextlib.contextmanager
def reacher_threads(threads: int) -> Iterator[None]:
    """``REACHER_THREADS`` set to ``threads`` inside (the environments made here, and the jobs
    spawned here, which inherit it), put back after."""
    before = os.environ.get(stepper.THREADS_VARIABLE)
    os.environ[stepper.THREADS_VARIABLE] = str(threads)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(stepper.THREADS_VARIABLE, None)
        else:
            os.environ[stepper.THREADS_VARIABLE] = before


def env_thread_sweep(threads: str, out: Path) -> dict[str, Any]:
    """``bench_env.py --threads threads`` in a child process (its CPU pinning and numba's threads
    stay there); its JSON, with the command and its exit status."""
    command = [sys.executable, "-m", "benchmarks.bench_env", "--threads", threads,
               "--decisions", "2000", "--repeats", "5", "--json", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    print("\n".join(["# environment threads:", *(done.stdout + done.stderr).strip().splitlines()[-8:]]), flush=True)
    result: dict[str, Any] = {"command": " ".join(["python", *command[1:]]), "returncode": done.returncode}
    if out.is_file():
        result.update(json.loads(out.read_text()))
        out.unlink()
    return result


def plan_jobs(n_seeds: int, cpus: int, remaining_s: float, seed_s: float, env_threads: int) -> tuple[int, int]:
    """(jobs, each job's environment threads) for ``n_seeds`` seeds in ``remaining_s`` when one
    seed takes ``seed_s`` beside the others: the fewest jobs that fit (the less they share the
    machine, the closer to alone), at most one per CPU but one; each job's environment on the
    threads that leave a CPU free, at most ``env_threads``."""
    waves = max(1, int(remaining_s // seed_s))
    jobs = max(1, min(n_seeds, math.ceil(n_seeds / waves), max(1, cpus - 1)))
    return jobs, max(1, min(env_threads, (cpus - 1) // jobs))


def seed_beside_others_s(cuda_alone_s: list[float]) -> float:
    """What one seed in a job is planned to take: LOAD_FACTOR times its alone wall-clock on CUDA
    (the median of those measured, else SEED_ALONE_ESTIMATE_S), and its process's start."""
    alone = statistics.median(cuda_alone_s) if cuda_alone_s else SEED_ALONE_ESTIMATE_S
    return LOAD_FACTOR * alone + JOB_START_S


def _median(values: list[float]) -> float | None:
    return round(float(statistics.median(values)), 1) if values else None


def _run_record(r: dict, phase: str, device: str, learner: str, env_threads: int) -> dict:
    return {"phase": phase, "device": device, "learner": learner, "env_threads": env_threads,
            **{k: r[k] for k in ("seed", "solved_at", "wall_s", "updates", "first_30", "seconds")}}


def run_check(args: argparse.Namespace, report: dict, save: Any, out: Path) -> None:
    """The prepared check (the module docstring's steps 1-3) into ``report["runs"]`` and the
    rest, saved to ``out`` (by ``save``) after every step."""
    start = time.perf_counter()
    cpus = stepper.available_cpus()
    config = DDPGConfig()
    cuda_learner = resolve_learner("auto", "cuda")
    env_threads = args.env_threads or stepper.default_threads()
    alone_seeds, job_seeds = seed_list(CHECK_ALONE_SEEDS), seed_list(CHECK_JOB_SEEDS)
    check: dict[str, Any] = {
        "budget_s": args.budget_s, "cpus": cpus, "cuda_learner": cuda_learner,
        "default_env_threads": stepper.default_threads(), "alone_env_threads": env_threads,
        "alone_seeds": alone_seeds, "job_seeds": job_seeds, "max_episodes": args.max_episodes}
    report["check"] = check
    alone_runs: list[dict] = []
    job_runs: list[dict] = []

    # 1. The environment's threads (and numba's cache filled before the jobs start).
    sweep = env_thread_sweep(CHECK_ENV_THREADS, out.with_suffix(".env.tmp.json"))
    report["environment_threads"] = sweep
    rows = sweep.get("rows", [])
    if rows:
        best = min(rows, key=lambda row: row["env_us"]["median"])
        check["fastest_env_threads"] = best["threads"]
        print(f"environment: fastest on {best['threads']} thread(s), {best['env_us']['median']:.0f} us per "
              f"decision; the default here is {stepper.default_threads()}", flush=True)
    save()

    # 2. Seeds alone on CUDA, the CPU interleaved, the environment threaded.
    pairs_s: list[float] = []
    for seed in alone_seeds:
        elapsed = time.perf_counter() - start
        cuda_alone = [r["wall_s"] for r in alone_runs if r["device"] == "cuda"]
        least_for_jobs = math.ceil(len(job_seeds) / max(1, cpus - 1)) * seed_beside_others_s(cuda_alone)
        if elapsed + max(pairs_s, default=PAIR_ESTIMATE_S) + least_for_jobs > args.budget_s:
            check["alone_cut"] = f"seeds from {seed} on not run: the budget's {args.budget_s:.0f} s would not hold"
            print(f"# {check['alone_cut']}", flush=True)
            break
        t0 = time.perf_counter()
        for device, learner in (("cuda", cuda_learner), ("cpu", "readable")):
            with reacher_threads(env_threads):
                r = run_seed(seed, config, args.max_episodes, 20, learner, GOOD_SCORE, GOOD_UPDATES, device)
            alone_runs.append(_run_record(r, "alone", device, learner, env_threads))
            report["runs"] = alone_runs + job_runs
            save()
            print(f"alone: seed {seed} on {device}, {learner}, environment on {env_threads} thread(s): solved at "
                  f"{r['solved_at']}, {r['wall_s']:.1f} s; time: "
                  + ", ".join(f"{k} {v:.1f}s" for k, v in r["seconds"].items()), flush=True)
        pairs_s.append(time.perf_counter() - t0)

    # 3. Twenty seeds with auto on CUDA, --jobs at a time.
    seed_s = seed_beside_others_s([r["wall_s"] for r in alone_runs if r["device"] == "cuda"])
    remaining = args.budget_s - (time.perf_counter() - start)
    jobs, job_threads = plan_jobs(len(job_seeds), cpus, remaining, seed_s, env_threads)
    if args.jobs:
        jobs, job_threads = args.jobs, max(1, min(env_threads, (cpus - 1) // args.jobs))
    check.update(jobs=jobs, job_env_threads=job_threads, jobs_planned_for_s=round(remaining, 1),
                 seed_beside_others_s=round(seed_s, 1))
    print(f"# {len(job_seeds)} seeds, {jobs} at a time, each environment on {job_threads} thread(s) "
          f"({remaining:.0f} s of the budget left, a seed taking about {seed_s:.0f} s beside the others)", flush=True)
    t0 = time.perf_counter()
    settings = (config, args.max_episodes, 20, cuda_learner, GOOD_SCORE, GOOD_UPDATES, "cuda")
    with reacher_threads(job_threads):
        for r in seed_runs(job_seeds, settings, jobs):
            job_runs.append(_run_record(r, "jobs", "cuda", cuda_learner, job_threads))
            job_runs.sort(key=lambda x: x["seed"])
            report["runs"] = alone_runs + job_runs
            save()
            print(f"jobs: seed {r['seed']}: solved at {r['solved_at']}, {r['wall_s']:.1f} s beside the others",
                  flush=True)
    check["jobs_wall_s"] = round(time.perf_counter() - t0, 1)

    summary: dict[str, Any] = {}
    for device, learner in (("cuda", cuda_learner), ("cpu", "readable")):
        runs = [r for r in alone_runs if r["device"] == device]
        solved = [r["solved_at"] for r in runs if r["solved_at"] is not None]
        summary[f"alone {device} {learner}"] = row = {
            "solved": len(solved), "runs": len(runs), "worst_solved_at": max(solved, default=None),
            "median_wall_s": _median([r["wall_s"] for r in runs]),
            "median_environment_s": _median([r["seconds"]["environment"] for r in runs]),
            "median_acting_s": _median([r["seconds"]["acting"] for r in runs])}
        print(f"alone, {device} {learner}: {row['solved']}/{row['runs']} solved, worst at {row['worst_solved_at']}, "
              f"median {row['median_wall_s']} s (environment {row['median_environment_s']} s, acting "
              f"{row['median_acting_s']} s)", flush=True)
    summary["jobs cuda"] = dist = distribution(job_runs) if job_runs else {}
    if dist:
        print(f"{dist['n_solved']}/{dist['n_seeds']} seeds solved with auto on CUDA: median {dist['median_solved_at']}, "
              f"90th percentile {dist['p90_solved_at']}, worst {dist['worst_solved_at']}", flush=True)
    cuda, cpu = summary[f"alone cuda {cuda_learner}"], summary["alone cpu readable"]
    if cuda["median_wall_s"] and cpu["median_wall_s"]:
        cuda["cpu_over_cuda"] = round(cpu["median_wall_s"] / cuda["median_wall_s"], 2)
        summary["aims_met"] = aims = {
            f"solves every seed by episode {AIM_SOLVED_BY}":
                bool(dist) and dist["n_solved"] == dist["n_seeds"]
                and (dist["worst_solved_at"] or 10**9) <= AIM_SOLVED_BY,
            f"median at most {AIM_MEDIAN_S:g} s": cuda["median_wall_s"] <= AIM_MEDIAN_S,
            f"at least {AIM_SPEED_UP:g}x faster than cpu": cuda["cpu_over_cuda"] >= AIM_SPEED_UP}
        print(f"cpu / cuda median wall-clock, alone: {cuda['cpu_over_cuda']}x", flush=True)
        for aim, met in aims.items():
            print(f"{'met' if met else 'NOT met'}: {aim}", flush=True)
    report["summary"] = summary
    check["wall_s"] = round(time.perf_counter() - start, 1)
    save()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    p.add_argument("--seeds", default="0-2", help="seeds to train on each device (default 0-2)")
    p.add_argument("--max-episodes", type=int, default=120,
                   help="episode cap per run (default 120: the default solves at 100-102; a cap bounds a bad run)")
    p.add_argument("--json", default=None, help="where to write the results (default benchmarks/results/gpu_<gpu>.json; "
                                                 "with --check benchmarks/results/gpu/gpu_<gpu>.json)")
    p.add_argument("--check", action="store_true",
                   help="the prepared check (issue 54): the environment's threads, seeds 0-2 alone on CUDA and the CPU, "
                        "seeds 0-19 with auto on CUDA in jobs; about 9 minutes")
    p.add_argument("--budget-s", type=float, default=CHECK_BUDGET_S,
                   help=f"--check: seconds of work it plans for (default {CHECK_BUDGET_S:g})")
    p.add_argument("--jobs", type=positive_int, default=None,
                   help="--check: seeds trained at once in step 3 (default: the fewest that fit the budget)")
    p.add_argument("--env-threads", type=positive_int, default=None,
                   help="--check: the environment's threads in step 2 (default: its default here)")
    p.add_argument("--tests", action="store_true", help="first run tests/test_backends.py (its CUDA tests included)")
    p.add_argument("--skip-training", action="store_true", help="only the update and acting costs")
    p.add_argument("--cuda-learners", default="graph-overlap",
                   help="the learners trained on CUDA, comma-separated: graph-overlap (the default, auto's "
                        "choice) and graph (in step with the environment)")
    args = p.parse_args(argv)
    try:
        seeds = seed_list(args.seeds)
    except argparse.ArgumentTypeError as exc:
        p.error(f"--seeds: {exc}")
    cuda_learners = [x.strip() for x in args.cuda_learners.split(",") if x.strip()]
    if not cuda_learners or any(x not in GPU_LEARNERS for x in cuda_learners):
        p.error(f"--cuda-learners: expected some of {', '.join(GPU_LEARNERS)}, got {args.cuda_learners!r}")
    if not torch.cuda.is_available():
        p.error("no CUDA GPU: PyTorch sees none here (this check is for a GPU machine; "
                "its CPU half is benchmarks/bench_train.py)")
    torch.set_num_threads(1)  # as train.py
    gpu = describe(torch.device("cuda"))
    folder = ROOT / "benchmarks" / "results" / ("gpu" if args.check else "")
    out = Path(args.json) if args.json else folder / f"gpu_{_slug(gpu['name'])}.json"
    if args.check and out.is_file() and "check" not in json.loads(out.read_text()):
        p.error(f"{out} holds a run that is not a --check: give --json another file")
    command = "python -m benchmarks.bench_gpu " + " ".join(sys.argv[1:] if argv is None else argv)
    report: dict = {"command": command.strip(), "git_commit": git_commit(), "torch": torch.__version__, "gpu": gpu,
                    "machine": reproducible.machine(), "config": DDPGConfig().to_dict(),
                    "schedule": {"good_score": GOOD_SCORE, "good_updates": GOOD_UPDATES}, "runs": []}
    print(f"# {report['command']}\n# {gpu['name']} ({gpu['memory_gib']} GiB, CUDA {gpu['cuda']}, driver "
          f"{gpu['driver']}), torch {torch.__version__}, CPU {reproducible.cpu_model()} x {os.cpu_count()}, "
          f"commit {report['git_commit']}", flush=True)

    def save() -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_json(out, report)

    if args.tests:
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_backends.py"],
                              cwd=ROOT, capture_output=True, text=True)
        tail = (done.stdout + done.stderr).strip().splitlines()[-15:]
        print("\n".join(["# tests/test_backends.py:", *tail]), flush=True)
        report["tests"] = {"returncode": done.returncode, "summary": tail[-1] if tail else "",
                           "seconds": round(time.perf_counter() - t0, 1)}
        save()

    if args.check:
        run_check(args, report, save, out)
        print(f"Wrote {out}")
        return 0

    config = DDPGConfig()
    costs = {}
    for key, learner, device, n, blocks in (("update_eager_cuda_ms", "readable", "cuda", 200, 3),
                                            ("update_graph_cuda_ms", "graph", "cuda", 1000, 5),
                                            ("update_readable_cpu_ms", "readable", "cpu", 1000, 5)):
        rate, _ = learner_updates_per_s(config, learner, n_updates=n, blocks=blocks, device=device)
        costs[key] = round(1000 / rate, 3)
        if learner == "graph":
            probe = make_agent("graph", (33, 4, 0), DDPGConfig(buffer_size=1024, batch_size=64), "cuda")
            fill = np.random.default_rng(0).standard_normal((1024, 33))
            probe.memory.add(fill, np.zeros((1024, 4)), np.zeros(1024), fill, 0.95)
            probe.learn_many(8)
            backend = probe.backend
            report["graph_capture"] = ("captured" if backend.graphs else
                                       f"failed: {backend.fallback}" if backend.fallback else "not captured")
            print(f"graph capture: {report['graph_capture']}", flush=True)
        print(f"one update, {learner} on {device}: {costs[key]:.3f} ms ({rate:,.0f} updates/s)", flush=True)
    # An ensemble of critics (ddpg/variants/ensemble.py) runs its members as one batched pass: on a
    # GPU its update may cost about what one critic's does, which decides whether it pays there.
    for n in ENSEMBLES:
        ensemble = parse_config({"ensemble": n})
        for key, learner, device, count in ((f"update_ensemble{n}_graph_cuda_ms", "graph", "cuda", 1000),
                                            (f"update_ensemble{n}_readable_cpu_ms", "readable", "cpu", 100)):
            rate, _ = learner_updates_per_s(ensemble, learner, n_updates=count, blocks=3, device=device)
            costs[key] = round(1000 / rate, 3)
            print(f"one update, {n} critics, {learner} on {device}: {costs[key]:.3f} ms", flush=True)
    for key, learner, device in (("act_readable_cpu_us", "readable", "cpu"), ("act_graph_cpu_copy_us", "graph", "cuda"),
                                 ("act_eager_cuda_us", "readable", "cuda")):
        costs[key] = round(acting_us(learner, device), 1)
        where = {"graph": "CPU copy of a GPU-trained actor",
                 "readable": "on the CPU" if device == "cpu" else "eagerly on the GPU"}[learner]
        print(f"acting for 20 arms, {where}: {costs[key]:.1f} us per decision", flush=True)
    report["costs"] = costs
    save()

    if not args.skip_training:
        kinds = [("cuda", learner) for learner in cuda_learners] + [("cpu", "readable")]
        for seed in seeds:
            for device, learner in kinds:
                r = run_seed(seed, config, args.max_episodes, 20, learner, GOOD_SCORE, GOOD_UPDATES, device)
                run = {"device": device, "learner": learner,
                       **{k: r[k] for k in ("seed", "solved_at", "wall_s", "updates", "first_30", "seconds")}}
                report["runs"].append(run)
                save()
                print(f"seed {seed} on {device}, {learner}: solved at {r['solved_at']}, {r['wall_s']:.1f} s, "
                      f"{r['updates']:,} updates; time: "
                      + ", ".join(f"{k} {v:.1f}s" for k, v in r["seconds"].items()), flush=True)
        summary: dict = {}
        for device, learner in kinds:
            runs = [r for r in report["runs"] if (r["device"], r["learner"]) == (device, learner)]
            solved = [r for r in runs if r["solved_at"] is not None]
            summary[f"{device} {learner}"] = row = {
                "solved": len(solved), "runs": len(runs),
                "worst_solved_at": max((r["solved_at"] for r in solved), default=None),
                "median_wall_s": round(float(np.median([r["wall_s"] for r in runs])), 1) if runs else None}
            print(f"{device}, {learner}: {len(solved)}/{len(runs)} solved, worst at {row['worst_solved_at']}, "
                  f"median {row['median_wall_s']} s", flush=True)
        cpu = summary["cpu readable"]
        summary["aims_met"] = {}
        for learner in cuda_learners:
            cuda = summary[f"cuda {learner}"]
            if not (cuda["median_wall_s"] and cpu["median_wall_s"]):
                continue
            cuda["cpu_over_cuda"] = round(cpu["median_wall_s"] / cuda["median_wall_s"], 2)
            aims = summary["aims_met"][learner] = {
                f"solves every seed by episode {AIM_SOLVED_BY}":
                    cuda["solved"] == cuda["runs"] and (cuda["worst_solved_at"] or 10**9) <= AIM_SOLVED_BY,
                f"median at most {AIM_MEDIAN_S:g} s": cuda["median_wall_s"] <= AIM_MEDIAN_S,
                f"at least {AIM_SPEED_UP:g}x faster than cpu": cuda["cpu_over_cuda"] >= AIM_SPEED_UP}
            print(f"cpu / cuda ({learner}) median wall-clock: {cuda['cpu_over_cuda']}x", flush=True)
            for aim, met in aims.items():
                print(f"{'met' if met else 'NOT met'} ({learner}): {aim}", flush=True)
        report["summary"] = summary
        save()
    print(f"Wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
