"""The Crawler over seeds: train.py's Crawler settings for a fixed budget of environment steps per
seed, one seed after another, then each run's final actor played greedily.

    python -m benchmarks.bench_crawler --seeds 0-4 --max-env-steps 300000 \\
        --json benchmarks/results/crawler_5_seeds/bench_crawler_5seeds.json
    python -m benchmarks.bench_crawler --config '{"preset": "td3"}' --runs runs/bench_crawler_td3 \\
        --json benchmarks/results/crawler_5_seeds/bench_crawler_td3_5seeds.json

Each seed is a plain ``train.py --env UnityCrawler-v0 --num-envs 12`` run (its folder under
``--runs``), timed as a whole process on the machine as it is: run it alone. Every crawler lives
its own episodes (``ddpg.loop.run_rounds``). Per seed it records the rounds, crawler-episodes
and environment steps run, the transitions kept per decision (the run's own counters: the
transitions handed to the agent over the decisions it stepped; 12 when none is wasted), the
wall-clock, the training curve (the 100-crawler-episode average at the end of every round,
against environment steps and seconds), its best and final value, and the greedy score:
``evaluate.py --episodes 2 --agents 12``, the mean over 24 crawler-episodes with their spread
(crawlers given the same actions part within decisions, so each is its own draw). Scores are
ML-Agents' units: the reward summed over an episode's 5,000 physics steps, as its published
"Benchmark Mean Reward" of 2000 counts them.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
ENV_ID = "UnityCrawler-v0"
AGENTS = 12


def _seeds(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def _curve(metrics: list[dict[str, str]]) -> list[dict[str, float]]:
    """Every round of metrics.csv: environment steps, seconds and the 100-crawler-episode average."""
    return [{"round": int(m["episode"]), "env_steps": int(float(m["env_steps"])), "seconds": round(float(m["wall_s"]), 1),
             "avg100": round(float(m["average100"]), 3)} for m in metrics if m["average100"] != ""]


def run_seed(seed: int, max_env_steps: int, runs: Path, config: str | None = None, eval_episodes: int = 2,
             save_buffer: bool = False, resume: bool = False, threads: int = 1, learner: str = "auto",
             crawler_threads: int | None = None) -> dict[str, Any]:
    """Train one seed (with train.py's --config, if given) and score its final actor. With ``resume``, a
    run already in the seed's folder goes on from its last save (``train.py --resume``: exactly as if never
    stopped when it saves its buffer, ``save_buffer``) rather than starting again, and a finished one is
    only scored; its wall-clock is then the run's own (run.json's, over its parts). ``threads``: train.py's
    --threads (PyTorch's); ``learner``: its --learner; ``crawler_threads``: the environment's (``CRAWLER_THREADS``;
    None: as this process has it)."""
    out = runs / f"seed{seed}"
    command: list[str] | None = [
        sys.executable, "train.py", "--env", ENV_ID, "--num-envs", str(AGENTS), "--seed", str(seed),
        "--max-env-steps", str(max_env_steps), "--episodes", "100000", "--out", str(out), "--force",
        "--quiet", "--no-progress", *(["--config", config] if config else []), *(["--save-buffer"] if save_buffer else []),
        *(["--threads", str(threads)] if threads != 1 else []), *(["--learner", learner] if learner != "auto" else [])]
    resumed = resume and (out / "run.json").is_file()
    if resumed:
        finished = json.loads((out / "run.json").read_text()).get("finished")
        command = None if finished else [sys.executable, "train.py", "--resume", str(out), "--quiet", "--no-progress"]
    start = time.perf_counter()
    if command is not None:
        env = {**os.environ, **({"CRAWLER_THREADS": str(crawler_threads)} if crawler_threads else {})}
        subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    record = json.loads((out / "run.json").read_text())
    if resumed:
        wall = record["wall_time_s"]
    with open(out / "metrics.csv") as f:
        metrics = list(csv.DictReader(f))
    import torch

    decisions = torch.load(out / "training_state.pt", weights_only=False)["agent"]["t_step"]  # agent.step calls
    evaluation = runs / f"seed{seed}-eval"
    subprocess.run([sys.executable, "evaluate.py", "--run", str(out), "--episodes", str(eval_episodes), "--agents", str(AGENTS),
                    "--out", str(evaluation), "--no-progress"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    greedy = json.loads((evaluation / "evaluation.json").read_text())
    curve = _curve(metrics)
    return {"seed": seed, "rounds": len(metrics), "crawler_episodes": record.get("agent_episodes"),
            "env_steps": record["env_steps"], "decisions": decisions,
            "kept_per_decision": round(record["env_steps"] / decisions, 3), "wall_s": round(wall, 1),
            "transitions_per_s": round(record["env_steps"] / wall, 1),
            "best_avg100": max(c["avg100"] for c in curve) if curve else None,
            "final_avg100": curve[-1]["avg100"] if curve else None,
            "greedy_score": round(float(greedy["mean"]), 3),
            "greedy": {k: greedy[k] for k in ("episodes", "mean", "std", "min", "max")},
            "resumed": resumed, "run": out.relative_to(ROOT).as_posix() if out.is_relative_to(ROOT) else str(out),
            "curve": curve}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--seeds", default="0-4", help="a seed or a range, e.g. 0-4")
    parser.add_argument("--max-env-steps", type=int, default=300_000, help="per seed (12 crawlers: a twelfth in decisions)")
    parser.add_argument("--runs", default="runs/bench_crawler", help="where the runs go")
    parser.add_argument("--config", default=None, help="train.py's --config for every seed, e.g. '{\"preset\": \"td3\"}'")
    parser.add_argument("--eval-episodes", type=int, default=2, help="greedy episodes of the 12 crawlers per seed (default 2)")
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    results = []
    for seed in _seeds(args.seeds):
        r = run_seed(seed, args.max_env_steps, ROOT / args.runs, args.config, args.eval_episodes)
        results.append(r)
        g = r["greedy"]
        print(f"seed {seed}: {r['crawler_episodes']} crawler-episodes in {r['rounds']} rounds, {r['env_steps']:,} steps "
              f"({r['kept_per_decision']:.2f} kept per decision) in {r['wall_s']:.0f} s; avg100 best {r['best_avg100']}, "
              f"final {r['final_avg100']}; greedy mean {g['mean']:.1f} (std {g['std']:.1f}, {g['min']:.1f} to "
              f"{g['max']:.1f}, {g['episodes']} crawler-episodes)", flush=True)
    greedy = [r["greedy_score"] for r in results]
    print(f"greedy score (each seed's mean over {args.eval_episodes * AGENTS} crawler-episodes): median {np.median(greedy):.1f} "
          f"(range {min(greedy):.1f} to {max(greedy):.1f}); "
          f"ML-Agents' published benchmark 2000")
    if args.json:
        report = {"benchmark": "bench_crawler", "env_id": ENV_ID, "agents": AGENTS, "max_env_steps": args.max_env_steps,
                  "config": json.loads(args.config) if args.config else {},
                  "commit": commit, "machine": {"cpu": platform.processor() or platform.machine(),
                                                "cpu_count": __import__("os").cpu_count()},
                  "mlagents_benchmark": 2000.0, "seeds": results}
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
