"""Diagnosis: how saturated the actor is while a seed learns, episode by episode.

    .venv/bin/python benchmarks/diagnose_saturation.py --seed 14 --episodes 40
    .venv/bin/python benchmarks/diagnose_saturation.py --seed 14 --episodes 40 --config '{"n_step": 3}'

A slow start on the 20-arm Reacher (the mean score under 10 for tens of episodes) comes with
an actor whose tanh outputs sit at +-1: a torque pinned to a bound says nothing about where
the goal is, and at a saturated tanh the actor's gradient all but vanishes, so the policy
stays there until the critic teaches it otherwise. This trains one seed as ``train.py``
does (fast learner, one thread, the default schedule unless --good-updates says otherwise)
and, after every episode, prints the mean score over the arms and, for the actor as it then
is on 4,096 states drawn from the replay buffer (a generator of its own, so the run is the
one train.py makes): the share of action components with |mu(s)| > 0.99, the mean |mu(s)|,
and the mean |pre-activation| of the output layer.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cli import json_object, non_negative_int, positive_int  # noqa: E402
from train import GOOD_SCORE, GOOD_UPDATES, make_agent, train  # noqa: E402
from variants import parse_config  # noqa: E402

PROBE_STATES = 4096
SATURATED = 0.99


def saturation(agent, generator: torch.Generator) -> dict[str, float]:
    """The actor's output statistics on states from the agent's buffer."""
    memory = agent.memory
    rows = memory.data[torch.randint(len(memory), (PROBE_STATES,), generator=generator)]
    states = memory.split(rows)[0]
    actor = agent.actor_local
    with torch.no_grad():
        hidden = torch.relu(actor.fc2(torch.relu(actor.fc1(states))))
        pre = actor.fc3(hidden)
    actions = torch.tanh(pre)
    return {"saturated": float((actions.abs() > SATURATED).float().mean()),
            "mean_abs_action": float(actions.abs().mean()), "mean_abs_pre": float(pre.abs().mean())}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=non_negative_int, default=0)
    p.add_argument("--episodes", type=positive_int, default=40)
    p.add_argument("--max-t", type=positive_int, default=1000, help="decisions per episode (default 1000)")
    p.add_argument("--config", type=json_object, default={}, help="JSON object of config overrides")
    p.add_argument("--good-updates", type=non_negative_int, default=GOOD_UPDATES,
                   help=f"updates per learning step after an episode scoring {GOOD_SCORE:g} (default {GOOD_UPDATES})")
    p.add_argument("--json", default=None, help="also write the rows to this JSON file")
    args = p.parse_args(argv)
    try:
        config = parse_config(args.config)
    except ValueError as exc:
        p.error(str(exc))
    from reacher import ReacherEnvironment

    torch.set_num_threads(1)
    env = ReacherEnvironment(num_agents=20, seed=args.seed, verbose=False)
    torch.manual_seed(args.seed)
    agent = make_agent("fast", (33, 4, args.seed), config, threads=1)
    generator = torch.Generator().manual_seed(10_007)
    rows: list[dict[str, float]] = []
    print(f"# seed {args.seed}  config overrides {json.dumps(args.config)}  good updates {args.good_updates}")
    print("episode  mean score  saturated  mean |a|  mean |pre-tanh|")

    def on_episode(episode: int, _trajectory: np.ndarray, score: np.ndarray) -> None:
        row = {"episode": episode, "score": float(score.mean()), **saturation(agent, generator)}
        rows.append(row)
        print(f"{episode:7d}  {row['score']:10.2f}  {row['saturated']:9.2f}  {row['mean_abs_action']:8.2f}  "
              f"{row['mean_abs_pre']:15.2f}", flush=True)

    try:
        train(env, agent, n_episodes=args.episodes, max_t=args.max_t, progress=False, quiet=True, log=lambda _m: None,
              stop_when_solved=False, good_updates=args.good_updates, on_episode=on_episode)
    finally:
        env.close()
    if args.json:
        Path(args.json).write_text(json.dumps({"seed": args.seed, "config": args.config,
                                               "good_updates": args.good_updates, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
