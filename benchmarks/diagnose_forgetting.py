"""Diagnosis: when the one-arm Reacher's score falls back after first reaching 30, is it the policy?

    .venv/bin/python -m benchmarks.diagnose_forgetting --seed 4 --episodes 180 --json F.json

One arm's training episode is one sample: one goal's path, with the exploration noise on.
After its score first reaches 30 it often falls back to the teens before the run solves
(Report.md, "One arm"). This trains one seed as ``train.py --agents 1`` does (the one-arm
settings, ``tasks.REACHER_ONE_ARM``; one thread) and, after every episode, asks
the agent as it then is:

* ``greedy``: the score of its greedy policy (no noise) on one episode of 20 arms, the same
  20 goal paths every time (a fresh environment with seed 1000): a policy's own score, free
  of the one-goal luck and of the noise;
* ``q``: the critic's mean value of the policy, Q(s, mu(s)), on 4,096 states from the replay
  buffer (a generator of its own), beside ``q_earned``, the value the episode's reward rate
  would give if it lasted for ever at this discount (score / decisions / (1 - gamma));
* ``saturated``: the share of the actor's action components with |mu(s)| > 0.99 on those states;
* ``drift``: how far the actor's weights moved during the episode, relative to their size.

A falling training score with a steady greedy score is the episode's luck or the noise; with
a falling greedy score, the policy itself got worse (forgot).
"""

from __future__ import annotations

import sys

import numpy as np
import torch

from benchmarks import probe_run
from ddpg.loop import GOOD_UPDATES
from evaluate import evaluate

PROBE_STATES = 4096
SATURATED = 0.99
EVAL_SEED = 1000


def main(argv: list[str] | None = None) -> int:
    p = probe_run.parser(__doc__, seed=4, episodes=180, config={}, good_updates=GOOD_UPDATES)
    p.set_defaults(agents=1)
    args = p.parse_args(argv)
    config = probe_run.checked_config(p, args)
    generator = torch.Generator().manual_seed(10_007)  # its own: the run is the one train.py makes
    previous: list[torch.Tensor] = []

    def probe(agent) -> dict[str, float]:
        memory = agent.memory
        rows = memory.data[torch.randint(len(memory), (PROBE_STATES,), generator=generator)]
        states = memory.split(rows)[0]
        with torch.no_grad():
            actions = agent.actor_local(states)
            q = agent.critic_local(states, actions)
        weights = torch.cat([w.detach().reshape(-1) for w in agent.actor_local.parameters()])
        drift = float((weights - previous[0]).norm() / weights.norm()) if previous else float("nan")
        previous[:] = [weights.clone()]
        greedy = float(evaluate(agent, episodes=1, agents=20, seed=EVAL_SEED, progress=False)[0])
        return {"greedy": greedy, "q": float(q.mean()), "saturated": float((actions.abs() > SATURATED).float().mean()),
                "drift": drift}

    def show(row: dict[str, float]) -> None:
        row["q_earned"] = row["score"] / args.max_t / (1 - config.gamma)
        print(f"{row['episode']:7d}  {row['score']:6.2f}  {row['greedy']:6.2f}  {row['q']:6.3f}  {row['q_earned']:8.3f}  "
              f"{row['saturated']:9.3f}  {row['drift']:8.5f}")

    rows = probe_run.run(args, config, probe, show, "episode   score  greedy       q  q_earned  saturated     drift")
    scores = np.array([r["score"] for r in rows])
    reached = np.flatnonzero(scores >= 30)
    if reached.size:
        first = int(reached[0])
        after = rows[first + 1:]
        if after:
            low = min(after, key=lambda r: r["score"])
            print(f"first 30 at episode {first + 1}; the lowest training episode after it: {low['score']:.2f} at "
                  f"episode {low['episode']} (greedy {low['greedy']:.2f}); greedy after it: "
                  f"{min(r['greedy'] for r in after):.2f} to {max(r['greedy'] for r in after):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
