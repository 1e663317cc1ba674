"""Diagnosis: how saturated the actor is while a seed learns, episode by episode.

    .venv/bin/python -m benchmarks.diagnose_saturation --seed 14 --episodes 40
    .venv/bin/python -m benchmarks.diagnose_saturation --seed 14 --episodes 40 --config '{"n_step": 3}'

A slow start on the 20-arm Reacher (the mean score under 10 for tens of episodes) comes with
an actor whose tanh outputs sit at +-1: a torque pinned to a bound says nothing about where
the goal is, and at a saturated tanh the actor's gradient all but vanishes, so the policy
stays there until the critic teaches it otherwise. This trains one seed as ``train.py``
does (one thread, the default schedule unless --good-updates says otherwise)
and, after every episode, prints the mean score over the arms and, for the actor as it then
is on 4,096 states drawn from the replay buffer (a generator of its own, so the run is the
one train.py makes): the share of action components with |mu(s)| > 0.99, the mean |mu(s)|,
and the mean |pre-activation| of the output layer.
"""

from __future__ import annotations

import sys

import torch

from benchmarks import probe_run
from ddpg.loop import GOOD_UPDATES

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
    p = probe_run.parser(__doc__, seed=0, episodes=40, config={}, good_updates=GOOD_UPDATES)
    args = p.parse_args(argv)
    config = probe_run.checked_config(p, args)
    generator = torch.Generator().manual_seed(10_007)  # its own: the run is the one train.py makes

    def show(row: dict[str, float]) -> None:
        print(f"{row['episode']:7d}  {row['score']:10.2f}  {row['saturated']:9.2f}  {row['mean_abs_action']:8.2f}  "
              f"{row['mean_abs_pre']:15.2f}")

    probe_run.run(args, config, lambda agent: saturation(agent, generator), show,
                  "episode  mean score  saturated  mean |a|  mean |pre-tanh|")
    return 0


if __name__ == "__main__":
    sys.exit(main())
