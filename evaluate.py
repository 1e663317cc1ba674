"""Score a trained policy: the greedy actor (no exploration noise) over many episodes.

    python evaluate.py                               # the committed checkpoints, 100 episodes of 20 arms
    python evaluate.py --run runs/latest --episodes 20 --agents 1 --out runs/latest/eval
    python evaluate.py --actor my_actor.pth --seed 7
    python evaluate.py --run runs/mcc                # a Gymnasium run: its task, from run.json

Prints the mean, the standard deviation and a 95% confidence interval of the per-episode
score (the mean over the arms, as the task defines it; Student's t interval, as the standard
deviation is estimated from the same few episodes), with a progress bar while it plays. A task
whose agents each live their own episodes (the Crawler: ``ddpg.tasks.Task.own_episodes``) is
scored by every agent-episode instead: ``--agents 12 --episodes 2`` plays 24 crawler-episodes,
each crawler's score summed until it falls or reaches 1000 decisions, and prints their mean,
spread, lowest, highest and count.
With --out it writes the per-episode scores (CSV) and the summary (JSON) there.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

# Light modules only (neither PyTorch nor MuJoCo): --help is answered before either loads;
# the run folder's module is imported in main, the agent and the environment in ddpg.reporting.playing's functions.
from ddpg.command_line import reproducible
from ddpg.command_line.device import add_device_option, resolve_device
from ddpg.command_line.parsing import path_text, positive_int, random_seed
from ddpg.reporting.playing import DEFAULT_ACTOR, DEFAULT_CRITIC, load_agent, played_task, run_episode
from ddpg.tasks import DEFAULT_ENV, open_environment, task_for

SUMMARY_FILE = "evaluation.json"
EPISODES_FILE = "evaluation.csv"


def evaluate(agent: Any, episodes: int = 100, agents: int = 20, seed: int = 0,
             progress: bool = True, env_id: str = DEFAULT_ENV, each_agent: bool = False) -> np.ndarray:
    """Per-episode scores (mean over the arms, or over the copies of a Gymnasium task
    ``env_id``) of the greedy policy, one per episode; with ``each_agent``, every agent's own
    score instead, (episodes, agents): what a task whose agents each live their own episodes
    (the Crawler) is scored by."""
    from tqdm.auto import tqdm

    scores = np.empty((episodes, agents))
    with open_environment(env_id, agents, seed, own_episodes=False) as env:  # every agent starts each episode
        for i in tqdm(range(episodes), disable=None if progress else True, unit="ep", leave=False):
            scores[i] = run_episode(env, agent)
    return scores if each_agent else scores.mean(axis=1)


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), by its continued fraction (modified
    Lentz), on the side of x where it converges fast (Numerical Recipes, 6.4): what Student's t
    distribution needs, without SciPy for one number."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - _incomplete_beta(b, a, 1.0 - x)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)) / a
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    fraction = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            fraction *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return front * fraction


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile (0.5 < p < 1) of Student's t distribution with ``df`` degrees of
    freedom: t(0.975, 1) = 12.706, t(0.975, 2) = 4.303, t(0.975, 10) = 2.228. Its distribution
    function, 1 - I_{df / (df + t^2)}(df / 2, 1 / 2) / 2, is inverted by bisection."""
    if not 0.5 < p < 1 or df < 1:
        raise ValueError(f"t_quantile needs 0.5 < p < 1 and df >= 1, got p={p} and df={df}")

    def upper_tail(t: float) -> float:
        return 0.5 * _incomplete_beta(df / 2.0, 0.5, df / (df + t * t))

    low, high = 0.0, 1.0
    while upper_tail(high) > 1.0 - p:
        low, high = high, 2.0 * high
    for _ in range(200):
        middle = 0.5 * (low + high)
        if upper_tail(middle) > 1.0 - p:
            low = middle
        else:
            high = middle
        if high - low <= 1e-13 * high:
            break
    return 0.5 * (low + high)


def summarise(scores: np.ndarray) -> dict[str, float | None]:
    """Mean, sample standard deviation and a 95% confidence interval of the mean: Student's t
    with n - 1 degrees of freedom, since the standard deviation is estimated from the same n
    episodes (1.96, the normal quantile, would make a few episodes' interval too narrow: with
    two, 6.5 times). One episode has no spread, so those are None rather than a zero-width interval."""
    n = len(scores)
    mean = float(scores.mean())
    std = float(scores.std(ddof=1)) if n > 1 else None
    half = None if std is None else t_quantile(0.975, n - 1) * std / math.sqrt(n)
    return {"episodes": n, "mean": mean, "std": std, "ci95_low": None if half is None else mean - half,
            "ci95_high": None if half is None else mean + half, "min": float(scores.min()), "max": float(scores.max())}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(allow_abbrev=False, prog="evaluate.py", description=__doc__.splitlines()[0])
    p.add_argument("--run", metavar="DIR", default=None,
                   help="a run folder written by train.py (the architecture comes from its run.json)")
    p.add_argument("--actor", default=None, help=f"actor state_dict, any layer sizes (default: {DEFAULT_ACTOR.name})")
    p.add_argument("--critic", default=None, help=f"critic state_dict, checked to load (default: {DEFAULT_CRITIC.name})")
    p.add_argument("--episodes", type=positive_int, default=100, help="episodes to play (default 100)")
    p.add_argument("--agents", type=positive_int, default=None,
                   help="arms (default 20), or copies of the run's Gymnasium task (default 1)")
    p.add_argument("--seed", type=random_seed, default=0, help="environment seed, 0 to 2**63 - 1 (default 0)")
    add_device_option(p, acting_only=True)
    p.add_argument("--out", type=path_text, default=None, metavar="DIR", help=f"write {EPISODES_FILE} and {SUMMARY_FILE} into DIR")
    p.add_argument("--reproducible", action="store_true",
                   help="pin the math libraries' code paths, so the scores are the same on any x86-64 CPU with AVX2 "
                        "(ddpg/command_line/reproducible.py; without it they reproduce on the same machine only)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as held:  # --out's lock (ddpg.run_folder.run_lock), let go however main ends
        return _main(parser, args, argv is None, held)


def _main(parser: argparse.ArgumentParser, args: argparse.Namespace, command_line: bool,
          held: contextlib.ExitStack) -> int:
    """``main`` once the command line has parsed; --out's folder is held in ``held``."""
    from ddpg.run_folder import run_lock
    from ddpg.run_folder.atomic import atomic_write, write_json
    try:
        reproducible.ensure(args.reproducible, command_line=command_line)  # may relaunch: before a folder is made
    except reproducible.NotPinned as exc:
        parser.error(str(exc))
    if args.out is not None:
        try:  # before the episodes are played, not after; one writer (a run training there refuses it)
            held.enter_context(run_lock.claim(args.out))
        except ValueError as exc:
            parser.error(str(exc))
    try:
        agent = load_agent(args.actor, args.critic, seed=0, run=args.run, device=resolve_device(args.device))
    except (FileNotFoundError, ValueError) as exc:
        parser.error(f"--run {exc.for_run(args.run)}" if args.run is not None and hasattr(exc, "for_run") else str(exc))
    source = args.run or args.actor or DEFAULT_ACTOR.name
    try:  # a bare checkpoint's task from its sizes (the Crawler's is not the Reacher's)
        env_id, agents = played_task(args.run, agent)
    except ValueError as exc:
        parser.error(str(exc))
    args.agents = agents if args.agents is None else args.agents
    each = env_id != DEFAULT_ENV and task_for(env_id).own_episodes  # the Crawler: every crawler-episode on its own
    table = evaluate(agent, args.episodes, args.agents, args.seed, progress=not args.no_progress, env_id=env_id,
                     each_agent=True)
    scores = table.reshape(-1) if each else table.mean(axis=1)
    summary = {"source": str(source), "environment": env_id, "agents": args.agents, "seed": args.seed,
               "scored": "each agent-episode" if each else "each episode's mean over the agents",
               **summarise(scores), "machine": reproducible.machine()}
    if args.out is not None:
        out = Path(args.out)
        text = ("episode,agent,score\n" + "".join(f"{i},{a},{table[i - 1, a]:.4f}\n" for i in range(1, args.episodes + 1)
                                                 for a in range(args.agents)) if each else
                "episode,score\n" + "".join(f"{i},{s:.4f}\n" for i, s in enumerate(scores, start=1)))
        try:
            out.mkdir(parents=True, exist_ok=True)
            atomic_write(out / EPISODES_FILE, lambda fh: fh.write(text.encode()))
            write_json(out / SUMMARY_FILE, summary)
        except OSError as exc:  # ddpg.run_folder.atomic.SaveError included: a full disk, an unwritable folder
            print(f"evaluate.py: error: cannot write into --out {out}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        print(f"Wrote {out / EPISODES_FILE} and {out / SUMMARY_FILE}")
    unit = "arm(s)" if env_id == DEFAULT_ENV else f"{env_id}"
    if each:
        spread = "" if summary["std"] is None else (
            f", std {summary['std']:.2f}, 95% CI [{summary['ci95_low']:.2f}, {summary['ci95_high']:.2f}]")
        print(f"{source}: {summary['episodes']} agent-episodes ({args.agents} {unit} x {args.episodes} episodes), seed "
              f"{args.seed}: mean {summary['mean']:.2f}{spread}, min {summary['min']:.2f}, max {summary['max']:.2f}")
        return 0
    if summary["std"] is None:
        print(f"{source}: 1 episode of {args.agents} {unit}, seed {args.seed}: score {summary['mean']:.2f} (one "
              "episode has no spread or confidence interval: pass --episodes 2 or more for them)")
        return 0
    print(f"{source}: {args.episodes} episodes of {args.agents} {unit}, seed {args.seed}: mean {summary['mean']:.2f}, "
          f"std {summary['std']:.2f}, 95% CI [{summary['ci95_low']:.2f}, {summary['ci95_high']:.2f}], "
          f"episodes from {summary['min']:.2f} to {summary['max']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
