"""The built-in Crawler judged by the course's own agents: an actor trained on the genuine Unity build,
played greedily here as its author's notebook plays it, and uniform random play, both by first lives.

    python -m benchmarks.bench_crawler_genuine --actor PATH --json benchmarks/results/crawler_genuine/mujoco.json
    python -m benchmarks.bench_crawler_genuine --actor PATH --physx BINARY [--physx-option=--hip-y-sign ...] \
        --json benchmarks/results/crawler_genuine/physx_READING.json

PATH is ``models/sac_crawler_best.pth`` of a clone of github.com/legalaspro/unity-reacher-crawler-deeprl
(MIT, commit 4ee73e2): a SAC trained on the genuine Udacity Crawler, where its notebook scored 1933.7
with every crawler up for the whole 1000 decisions. Its sha256 is recorded, the file is not kept here.
The actor is rebuilt from the file's weights alone (a 129-256-256-40 perceptron with ReLUs, whose
first 20 outputs are the Gaussian's mean; greedy play is tanh of the mean), so nothing of its
author's code is needed.

The protocol is the notebook's and the training loop's: every reset starts the 12 crawlers together,
each crawler's first life counts (its score the sum of its rewards up to and including the decision
it is done in, its life the decisions it lived), and a crawler that is done is left out, its actions
zeroed, until all 12 are or decision 1000 passes. The genuine build's uniform random play (the
reference's first 7 episodes, 84 lives, before learning started) lived 208.3 decisions on average.

With ``--physx BINARY`` (benchmarks/physx/build.sh builds it) the same crawlers, rules and protocol run
on the PhysX 4.1 reference instead of MuJoCo (``CrawlerEnvironment(physics=...)``): each
``--physx-option`` is one of its readings of what Unity's closed engine leaves open, passed through.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import torch
from torch import nn

from crawler import MAX_EPISODE_STEPS
from crawler.environment import ACTION_SIZE, BRAIN_NAME, CrawlerEnvironment
from crawler.mjcf import SUBSTEPS_PER_PHYSICS_STEP
from crawler.observation import OBSERVATION_SIZE
from ddpg.run_folder.atomic import write_json

CRAWLERS = 12
GENUINE = {"source": "github.com/legalaspro/unity-reacher-crawler-deeprl, models/sac_crawler_best.pth, commit 4ee73e2",
           "sha256": "20b6d32e6198109bee46d61e1c034b7eb1020843709b78d168ec83c72ed22ddd",
           "greedy_score": 1933.73, "greedy_full_lives": 1.0, "random_mean_life": 208.3, "random_lives": 84}


def load_actor(path: Path) -> nn.Module:
    """The greedy policy of a SAC checkpoint ({"actor": state dict of three Linear layers}): tanh of the
    mean, the first half of the last layer's outputs."""
    state = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(state, dict) or "actor" not in state:
        raise SystemExit(f"--actor {path}: expected a checkpoint with an 'actor' state dict (the SAC's "
                         f"models/sac_crawler_best.pth), got keys {sorted(state) if isinstance(state, dict) else type(state).__name__}")
    weights = [v for k, v in state["actor"].items() if k.endswith("weight")]
    biases = [v for k, v in state["actor"].items() if k.endswith("bias")]
    shapes = [tuple(w.shape) for w in weights]
    if len(weights) != 3 or shapes[0][1] != OBSERVATION_SIZE or shapes[-1][0] != 2 * ACTION_SIZE:
        raise SystemExit(f"--actor {path}: expected three Linear layers from {OBSERVATION_SIZE} inputs to "
                         f"{2 * ACTION_SIZE} outputs (mean and log-std), got weights {shapes}")
    layers: list[nn.Module] = []
    for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
        linear = nn.Linear(w.shape[1], w.shape[0])
        linear.weight.data.copy_(w)
        linear.bias.data.copy_(b)
        layers += [linear] if i == 2 else [linear, nn.ReLU()]
    net = nn.Sequential(*layers).eval()

    class Greedy(nn.Module):
        def forward(self, obs: torch.Tensor) -> torch.Tensor:
            return torch.tanh(net(obs)[..., :ACTION_SIZE])

    return Greedy()


def first_lives(env: Any, act: Any, resets: int) -> dict[str, Any]:
    """Per reset, each crawler's first life: its score and the decisions it lived."""
    scores, lives = np.zeros((resets, CRAWLERS)), np.zeros((resets, CRAWLERS), dtype=int)
    for r in range(resets):
        info = env.reset(train_mode=True)[BRAIN_NAME]
        alive = np.ones(CRAWLERS, dtype=bool)
        for _ in range(MAX_EPISODE_STEPS):
            actions = np.where(alive[:, None], act(info.vector_observations), 0.0)
            info = env.step(actions)[BRAIN_NAME]
            scores[r, alive] += np.asarray(info.rewards)[alive]
            lives[r, alive] += 1
            alive &= ~np.asarray(info.local_done)
            if not alive.any():
                break
    return {"scores": scores.round(4).tolist(), "lives": lives.tolist(),
            "mean_score": round(float(scores.mean()), 2),
            "score_se": round(float(scores.mean(axis=1).std(ddof=1) / np.sqrt(resets)), 2) if resets > 1 else None,
            "mean_life": round(float(lives.mean()), 1),
            "life_se": round(float(lives.mean(axis=1).std(ddof=1) / np.sqrt(resets)), 1) if resets > 1 else None,
            "full_lives": round(float((lives >= MAX_EPISODE_STEPS).mean()), 4)}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def measure(actor_path: Path | None, resets: int, random_resets: int, seed: int, env_factory: Any) -> dict[str, Any]:
    """The record: the actor's greedy first lives and uniform random play's, each with its time."""
    record: dict[str, Any] = {"genuine_build": GENUINE, "crawlers": CRAWLERS}
    env = env_factory()
    try:
        if actor_path is not None:
            policy = load_actor(actor_path)
            torch.set_num_threads(1)

            def act(obs: np.ndarray) -> np.ndarray:
                with torch.no_grad():
                    return policy(torch.as_tensor(obs, dtype=torch.float32)).numpy().astype(np.float64)

            start = time.perf_counter()
            record["actor"] = {"path_name": actor_path.name, "sha256": sha256(actor_path), "resets": resets,
                               **first_lives(env, act, resets), "seconds": round(time.perf_counter() - start, 1)}
        rng = np.random.default_rng(seed)
        start = time.perf_counter()
        record["random"] = {"resets": random_resets, "seed": seed,
                            **first_lives(env, lambda obs: rng.uniform(-1.0, 1.0, (len(obs), ACTION_SIZE)), random_resets),
                            "seconds": round(time.perf_counter() - start, 1)}
    finally:
        env.close()
    return record


def _environment(physx: Path | None, options: list[str]) -> CrawlerEnvironment:
    """The 12 crawlers on MuJoCo, or on the PhysX reference (closed with the environment)."""
    if physx is None:
        return CrawlerEnvironment(num_agents=CRAWLERS, verbose=False, show_viewer=False)
    from benchmarks.physx.server import PhysXCrawlers

    return CrawlerEnvironment(num_agents=CRAWLERS, verbose=False, show_viewer=False,
                              physics=PhysXCrawlers(physx, CRAWLERS, options))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--actor", type=Path, help="models/sac_crawler_best.pth of legalaspro/unity-reacher-crawler-deeprl")
    parser.add_argument("--resets", type=int, default=5, help="resets of the actor's greedy play (12 first lives each)")
    parser.add_argument("--random-resets", type=int, default=20, help="resets of uniform random play")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random play's actions")
    parser.add_argument("--physx", type=Path, help="play on the PhysX 4.1 reference (crawler_physx) instead of MuJoCo")
    parser.add_argument("--physx-option", action="append", default=[], metavar="ARG",
                        help="one argument for the reference, repeated in order (e.g. --physx-option=--locked "
                             "--physx-option=locked-twist-swing)")
    parser.add_argument("--json", type=Path, help="write the record here")
    args = parser.parse_args(argv)
    if args.physx is not None and not args.physx.is_file():
        parser.error(f"--physx {args.physx}: no such file (build it with `bash benchmarks/physx/build.sh PHYSX_GIT_DIR`)")
    if args.physx_option and args.physx is None:
        parser.error("--physx-option needs --physx BINARY")
    if args.actor is not None and not args.actor.is_file():
        parser.error(f"--actor {args.actor}: no such file (expected models/sac_crawler_best.pth of a clone of "
                     "legalaspro/unity-reacher-crawler-deeprl)")
    if args.resets < 1 or args.random_resets < 1:
        parser.error("--resets and --random-resets take a positive number of resets")
    record = measure(args.actor, args.resets, args.random_resets, args.seed, lambda: _environment(args.physx, args.physx_option))
    record["engine"] = ({"name": "MuJoCo " + mujoco.__version__, "substeps": SUBSTEPS_PER_PHYSICS_STEP} if args.physx is None
                        else {"name": "PhysX 4.1.2 (benchmarks/physx/crawler_physx.cpp)", "options": args.physx_option})
    summary = {k: {m: v[m] for m in ("mean_score", "score_se", "mean_life", "life_se", "full_lives", "seconds")}
               for k, v in record.items() if k in ("actor", "random")}
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        write_json(args.json, record)


if __name__ == "__main__":
    main()
