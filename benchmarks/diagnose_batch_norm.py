"""Diagnosis: what batch norm's two modes do to DDPG on the 20-arm Reacher, episode by episode.

    .venv/bin/python -m benchmarks.diagnose_batch_norm --seed 1 --episodes 80

With ``{"batch_norm": true}`` (``ddpg/variants/batch_norm.py``) the local networks learn in
training mode, each replay batch normalised by its own statistics, while the arms act, and
the TD target is computed, in evaluation mode, with running statistics. Those are two
different functions of the same weights. This trains one seed as ``train.py`` does with
batch norm (by default on the settings of the ablation's batch-norm row: one-step returns,
warm-up 2,560, 10 updates per learning step while good) and after every episode measures,
on copies of the networks (so the run is the one train.py makes) and a 256-state batch from
the replay buffer drawn with a generator of its own:

* ``act gap``: mean |mu_eval(s) - mu_train(s)|, between the action the arms take and the
  action the actor's update improves;
* ``act gap (recent)``: the same on the buffer's latest 1,000 states (the arms' last 50
  steps), each mode on that batch: the states the policy acts on now;
* ``Q``: the local critic's mean Q(s, a) in training mode, and ``Q' gap``: the mean
  |Q_eval(s, a) - Q_train(s, a)| of the target critic against the local one, relative to
  mean |Q|: how far the critic of the TD target is from the critic that learns;
* ``bn0 var ratio``: the actor's input batch norm, its running variance over the variance
  of those latest states, median over the 33 inputs: whether the running statistics that
  act describe the states acted on.
"""

from __future__ import annotations

import copy
import sys

import torch

from benchmarks import probe_run

BATCH = 256
RECENT = 1000  # the latest transitions: 50 steps of the 20 arms
# The ablation's batch-norm row ran on the default of its commit: one-step returns, a warm-up
# of 2,560 transitions and 10 updates per learning step after a good episode.
ABLATION_CONFIG = {"batch_norm": True, "n_step": 1, "warmup": 2560}
ABLATION_GOOD_UPDATES = 10


def probe(agent, generator: torch.Generator) -> dict[str, float]:
    """The gaps between batch norm's modes, measured on copies of the networks."""
    memory = agent.memory
    rows = memory.data[torch.randint(len(memory), (BATCH,), generator=generator)]
    states, actions = memory.split(rows)[:2]
    latest = (memory.pos - 1 - torch.arange(min(RECENT, len(memory)))) % memory.capacity
    arms = memory.split(memory.data[latest])[0]
    actor = copy.deepcopy(agent.actor_local)
    critic, target = copy.deepcopy(agent.critic_local), copy.deepcopy(agent.critic_target)
    with torch.no_grad():
        actor.train()
        mu_train, mu_train_arms = actor(states), actor(arms)
        actor.eval()
        mu_eval, mu_eval_arms = actor(states), actor(arms)
        critic.train()
        q_train = critic(states, actions)
        target.eval()
        q_target = target(states, actions)
    running_var = agent.actor_local.bn0.running_var
    arm_var = arms.var(dim=0, unbiased=False).clamp_min(1e-8)
    return {"act_gap": float((mu_eval - mu_train).abs().mean()),
            "act_gap_recent": float((mu_eval_arms - mu_train_arms).abs().mean()),
            "mean_q": float(q_train.mean()),
            "target_gap": float((q_target - q_train).abs().mean() / q_train.abs().mean().clamp_min(1e-8)),
            "bn0_var_ratio": float((running_var / arm_var).median())}


def main(argv: list[str] | None = None) -> int:
    p = probe_run.parser(__doc__, seed=1, episodes=80, config=ABLATION_CONFIG, good_updates=ABLATION_GOOD_UPDATES)
    args = p.parse_args(argv)
    config = probe_run.checked_config(p, args)
    if not getattr(config, "batch_norm", False):
        p.error('--config must switch batch norm on ({"batch_norm": true, ...}): this probes its modes')
    generator = torch.Generator().manual_seed(10_007)  # its own: the run is the one train.py makes

    def show(row: dict[str, float]) -> None:
        print(f"{row['episode']:7d}  {row['score']:10.2f}  {row['act_gap']:7.3f}  {row['act_gap_recent']:16.3f}  "
              f"{row['mean_q']:6.2f}  {row['target_gap']:6.3f}  {row['bn0_var_ratio']:13.2f}")

    probe_run.run(args, config, lambda agent: probe(agent, generator), show,
                  "episode  mean score  act gap  act gap (recent)  mean Q  Q' gap  bn0 var ratio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
