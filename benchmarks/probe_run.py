"""What the diagnosis scripts share: train one seed of the 20-arm Reacher as ``train.py`` does
and hand the agent to a probe after every episode.

``diagnose_saturation.py`` and ``diagnose_batch_norm.py`` each define only their probe (a
function of the agent, returning named figures) and how a row prints; the run, its
arguments and the JSON of the rows are here, so both probes see the run ``train.py`` makes
(the readable learner, one thread, the default schedule unless
``--good-updates`` says otherwise).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ddpg.agents import make_agent
from ddpg.command_line.parsing import json_object, non_negative_int, positive_int, random_seed
from ddpg.loop import GOOD_SCORE, Callback, Episode, Run, train
from ddpg.tasks import reacher_task
from ddpg.variants import parse_config
from ddpg_agent import Agent, DDPGConfig

ROOT = Path(__file__).resolve().parent.parent


def parser(doc: str, seed: int, episodes: int, config: dict[str, Any], good_updates: int) -> argparse.ArgumentParser:
    """The arguments every probe takes, with that probe's defaults."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=doc.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=random_seed, default=seed)
    p.add_argument("--episodes", type=positive_int, default=episodes)
    p.add_argument("--max-t", type=positive_int, default=1000, help="decisions per episode (default 1000)")
    p.add_argument("--agents", type=positive_int, default=20,
                   help="arms (default 20; 1 is the course's version 1, with its own settings: tasks.REACHER_ONE_ARM)")
    p.add_argument("--config", type=json_object, default=config,
                   help=f"JSON object of config overrides (default {json.dumps(config)})")
    p.add_argument("--good-updates", type=non_negative_int, default=good_updates,
                   help=f"updates per learning step after a good episode (default {good_updates})")
    p.add_argument("--json", default=None, help="also write the rows to this JSON file")
    return p


def checked_config(p: argparse.ArgumentParser, args: argparse.Namespace) -> DDPGConfig:
    """The run's config (the task's settings for its number of arms, then --config); a bad one is
    the parser's error (exit 2, no traceback)."""
    task = reacher_task(args.agents)
    try:
        return parse_config({**(task.config if task else {}), **args.config})
    except ValueError as exc:
        p.error(str(exc))
        raise  # unreachable: p.error exits


def run(args: argparse.Namespace, config: DDPGConfig, probe: Callable[[Agent], dict[str, float]],
        show: Callable[[dict[str, float]], None], header: str) -> list[dict[str, float]]:
    """Train ``args.episodes`` episodes; after each, a row {"episode", "score", **probe(agent)},
    printed by ``show`` and written to ``args.json`` at the end."""
    from reacher import ReacherEnvironment

    torch.set_num_threads(1)
    agents, task = args.agents, reacher_task(args.agents)
    env = ReacherEnvironment(num_agents=agents, seed=args.seed, verbose=False)
    torch.manual_seed(args.seed)
    agent = make_agent("auto", (33, 4, args.seed), config)
    rows: list[dict[str, float]] = []
    good_score = task.good_score if task else GOOD_SCORE  # as train.py: one arm has no pause
    print(f"# seed {args.seed}  arms {agents}  config overrides {json.dumps(args.config)}  good score {good_score}  "
          f"good updates {args.good_updates}")
    print(header)

    class Probe(Callback):
        def on_episode(self, run: Run, episode: Episode) -> None:
            rows.append({"episode": episode.number, "score": float(episode.score.mean()), **probe(agent)})
            show(rows[-1])
            sys.stdout.flush()

    try:
        train(env, agent, episodes=args.episodes, max_t=args.max_t, stop_when_solved=False,
              good_score=good_score, good_updates=args.good_updates, callbacks=[Probe()])
    finally:
        env.close()
    if args.json:
        Path(args.json).write_text(json.dumps({"seed": args.seed, "agents": agents, "config": args.config,
                                               "good_score": good_score, "good_updates": args.good_updates,
                                               "command": "python benchmarks/" + Path(sys.argv[0]).name + " "
                                               + " ".join(sys.argv[1:]), "rows": rows}, indent=1))
    return rows
