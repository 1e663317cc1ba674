"""Learning metrics per episode: ``metrics.csv`` in the run folder, and TensorBoard.

Scores say whether an agent learns; these say why it does not. After every episode (one
window of updates) the networks are probed on one batch drawn from the replay buffer with
a generator of its own, so probing changes none of the run's random draws or numbers. That
generator is seeded afresh from the run's seed and the episode's number, so nothing of it
needs saving: a resumed run probes on the batches the uninterrupted run does (one generator
carried from episode 1 started again at a resume, and the loss columns after it differed):

    critic_loss   the agent's own critic loss against its own TD target (``agent.critic_loss``,
                  ``agent.td_target``: mean (Q(s, a) - y)^2 for DDPG, whatever an edited agent minimises)
    actor_loss    -mean Q(s, mu(s))
    mean_q        mean Q(s, a) over the batch
    exploration   the action noise's sigma x its decay scale, or NoisyNet's mean |sigma|

The probe uses the networks as they act (batch norm's running statistics, NoisyNet's mean
weights). With an empty buffer (warm-up) these columns are left empty. ``train.py
--tensorboard DIR`` also writes every column as a scalar (``tensorboard --logdir DIR``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from ddpg_agent import Agent

PROBE_BATCH = 256
PROBE_SEED_OFFSET = 7919  # mixed into the probe's seed (apart from the buffer's own generator)
# (column, TensorBoard tag) in metrics.csv order
COLUMNS = (
    ("episode", None),
    ("score_mean", "score/mean"), ("score_min", "score/min"), ("score_max", "score/max"),
    ("average100", "score/average100"),
    ("critic_loss", "loss/critic"), ("actor_loss", "loss/actor"), ("mean_q", "q/mean"),
    ("exploration", "exploration/scale"),
    ("updates", "learner/updates"), ("updates_per_s", "learner/updates_per_s"),
    ("episode_s", "time/episode_s"), ("wall_s", "time/wall_s"), ("env_steps", "env/steps"),
)


def probe(agent: Agent, generator: torch.Generator, batch: int = PROBE_BATCH) -> dict[str, float]:
    """Critic loss, actor loss and mean Q on one batch from the agent's buffer ({} when empty)."""
    memory = agent.memory
    if len(memory) == 0:
        return {}
    rows = memory.data[torch.randint(len(memory), (batch,), generator=generator)].to(agent.device)  # host rows
    states, actions, rewards, next_states, discounts = memory.split(rows)
    nets = (agent.actor_local, agent.critic_local, agent.actor_target, agent.critic_target)
    training = [net.training for net in nets]
    noisy = [net for net in nets if hasattr(net, "set_noisy")]
    for net in nets:
        net.eval()
    for net in noisy:
        net.set_noisy(False)
    try:
        with torch.no_grad(), _left_as_it_was(agent, len(states)):
            # The agent's own target and loss (a Huber loss, a TD3 target, an ensemble's), so the column
            # is the loss it minimises; their random draws (TD3's smoothing, REDQ's subset) come from
            # the global generators, which are put back, so the run is the one a run without metrics makes.
            critic_loss = agent.critic_loss(states, actions, agent.td_target(rewards, next_states, discounts))
            q = agent.critic_local(states, actions)
            actor_loss = -agent.critic_local(states, agent.actor_local(states)).mean()
            return {"critic_loss": float(critic_loss), "actor_loss": float(actor_loss), "mean_q": float(q.mean())}
    finally:
        for net, was in zip(nets, training, strict=True):
            net.train(was)
        for net in noisy:
            net.set_noisy(net is not agent.actor_target)


def probe_generator(seed: int, episode: int) -> torch.Generator:
    """The generator of episode ``episode``'s probe: a function of the run's seed and the episode
    alone, so a run resumed at any episode draws the probe batches of the run never stopped."""
    mixed = np.random.SeedSequence([seed, PROBE_SEED_OFFSET, episode]).generate_state(1, np.uint64)[0]
    return torch.Generator().manual_seed(int(mixed))


@contextlib.contextmanager
def _left_as_it_was(agent: Agent, batch: int) -> Iterator[None]:
    """Whatever the agent's loss and target draw or note is undone: torch's global generators (the CPU's
    and the agent's device's) are restored, and so is every attribute they set (prioritized replay
    notes its TD errors). Prioritized replay weighs its own draw; the probe's is uniform, so each
    row weighs 1 for it."""
    noted = dict(vars(agent))
    devices = [agent.device] if agent.device.type == "cuda" else []
    try:
        with torch.random.fork_rng(devices=devices):
            agent.importance = torch.ones(batch, 1, device=agent.device)  # (removed after, unless it was there)
            yield
    finally:
        for name in set(vars(agent)) - set(noted):
            delattr(agent, name)
        for name, value in noted.items():
            if vars(agent).get(name) is not value:
                setattr(agent, name, value)


class Metrics:
    """Collects one row per episode; ``rows`` goes to metrics.csv (``ddpg.run_folder.score_files.write_metrics``).

    ``rows`` continues a resumed run's earlier rows.
    """

    def __init__(self, agent: Agent, seed: int, tensorboard_dir: str | os.PathLike[str] | None = None,
                 rows: list[dict[str, Any]] | None = None) -> None:
        self.agent = agent
        self.seed = seed
        self.rows: list[dict[str, Any]] = list(rows or [])
        self.updates_before = agent.n_updates
        self.writer = None
        if tensorboard_dir is not None:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(log_dir=str(tensorboard_dir))

    def episode(self, episode: int, score: np.ndarray, average: float, episode_s: float, wall_s: float,
                env_steps: int) -> dict[str, Any]:
        """Record the episode that just ended (or the round, with own_episodes: its agent-episodes, maybe none); returns its row."""
        updates = self.agent.n_updates - self.updates_before
        self.updates_before = self.agent.n_updates
        some = len(score) > 0
        row: dict[str, Any] = {
            "episode": episode, "score_mean": float(score.mean()) if some else None,
            "score_min": float(score.min()) if some else None, "score_max": float(score.max()) if some else None,
            "average100": average if np.isfinite(average) else None,
            "critic_loss": None, "actor_loss": None, "mean_q": None,
            "exploration": self.agent.exploration_scale(),
            "updates": updates, "updates_per_s": updates / episode_s if episode_s > 0 else None,
            "episode_s": episode_s, "wall_s": wall_s, "env_steps": env_steps,
            **probe(self.agent, probe_generator(self.seed, episode)),
        }
        self.rows.append(row)
        if self.writer is not None:
            for column, tag in COLUMNS:
                if tag is not None and row[column] is not None:
                    self.writer.add_scalar(tag, row[column], global_step=episode)
            self.writer.flush()
        return row

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
