"""CrossQ's critic (Bhatt et al. 2024): batch renormalisation in the critic and no target
networks. The TD target's Q(s', mu(s')) comes from the learning critic itself, in the same
forward pass as Q(s, a): the two halves of one batch of 2B rows, [(s, a); (s', mu(s'))], so
both are normalised by the same statistics.

How it differs from ``{"batch_norm": true}``, which collapsed here (Report.md, "What mattered"):
that critic learned in training mode on (s, a) batches while its target copy read (s', mu'(s'))
with running statistics, so the value it regressed on came from another network under another
normalisation, and the critic's over-estimation ran away through its bootstrapped targets.
CrossQ's point is that the statistics mismatch, not normalisation, is the trouble: normalising
the current and the next state-actions together makes them one distribution (the actions of
the replay batch and the policy's actions differ most early on), and the target then needs no
slow copy at all, so the value propagates at the learning rate rather than at tau's.

Batch renormalisation (Ioffe 2017) rather than batch norm, as CrossQ does: after the config's
``renorm_warmup`` updates the batch's statistics are corrected towards the running ones (the
factors r and d, clipped to ``R_MAX`` and ``D_MAX``, carry no gradient), so training mode and the
running statistics, which acting and the actor's loss use, drift apart less. The actor stays
``model.Actor`` (SAC's squashed Gaussian with ``sac``); CrossQ's own critics are also much wider
(2,048 units), which this CPU could not afford: the critic keeps ``critic_fc1``/``critic_fc2``.
The agent's target copies still follow at tau (the metrics' probe reads them), but the update
never does.

On Reacher, as built here, it learned nothing in 15 episodes of 20 arms; on Pendulum-v1 it
learns, later than plain DDPG (Report.md, "More from each update").
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from model import Critic, given

R_MAX, D_MAX = 3.0, 5.0  # Ioffe's limits on the renormalisation factors, as CrossQ uses them
MOMENTUM = 0.01  # running statistics move this far towards each training batch's (flax's 0.99, as CrossQ's)


class BatchRenorm1d(nn.Module):
    """Batch renormalisation over the batch dimension, with a learned gain and shift.

    Training mode: x_hat = (x - mean_B) / std_B * r + d, with r = std_B / std_run and
    d = (mean_B - mean_run) / std_run clipped and detached (r = 1, d = 0, plain batch norm, for
    the first ``warmup`` training passes); the running statistics then move towards the batch's.
    Evaluation mode: x_hat = (x - mean_run) / std_run."""

    def __init__(self, features: int, warmup: int, eps: float = 1e-3) -> None:
        super().__init__()
        self.warmup, self.eps = warmup, eps
        self.weight = nn.Parameter(torch.ones(features))
        self.bias = nn.Parameter(torch.zeros(features))
        self.register_buffer("running_mean", torch.zeros(features))
        self.register_buffer("running_var", torch.ones(features))
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        running_std = (self.running_var + self.eps).sqrt()
        if not self.training:
            return (x - self.running_mean) / running_std * self.weight + self.bias
        # The variance as the mean square about the mean: on the CPU torch.var over the batch dimension is
        # much slower (in a profile of a CrossQ update on the Crawler it took a third of the time).
        mean = x.mean(dim=0)
        centred = x - mean
        var = centred.square().mean(dim=0)
        std = (var + self.eps).sqrt()
        x_hat = centred / std
        with torch.no_grad():
            # Renormalise once warm (a tensor condition, so a CUDA graph replays it unchanged).
            warm = self.steps >= self.warmup
            r = torch.where(warm, (std / running_std).clamp(1 / R_MAX, R_MAX), torch.ones_like(std))
            d = torch.where(warm, ((mean - self.running_mean) / running_std).clamp(-D_MAX, D_MAX),
                            torch.zeros_like(mean))
            self.running_mean.lerp_(mean, MOMENTUM)
            self.running_var.lerp_(var * (len(x) / (len(x) - 1)), MOMENTUM)  # unbiased, as batch norm keeps it
            self.steps += 1
        return (x_hat * r + d) * self.weight + self.bias


class RenormCritic(Critic):
    """``model.Critic`` (same layers and initial weights) with batch renormalisation on the state
    input and before each hidden ReLU, the second after the action has joined."""

    def __init__(self, state_size: int, action_size: int, seed: int, fcs1_units: int = 128,
                 fc2_units: int = 128, warmup: int = 1000) -> None:
        super().__init__(state_size, action_size, seed, fcs1_units, fc2_units)
        self.bn0 = BatchRenorm1d(state_size, warmup)
        self.bn1 = BatchRenorm1d(fcs1_units, warmup)
        self.bn2 = BatchRenorm1d(fc2_units, warmup)

    def forward(self, state: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        xs = F.relu(self.bn1(self.fcs1(self.bn0(state))))
        x = F.relu(self.bn2(self.fc2(torch.cat((xs, action), dim=1))))
        return self.fc3(x)


class CrossQ:
    """The piece (``registry``): CrossQ (Bhatt et al. 2024): batch renormalisation on the critic's
    state input and hidden layers (plain batch norm for the first ``renorm_warmup`` updates) and no
    target networks: the target's Q(s', mu(s')) comes from the learning critic in one pass with
    Q(s, a), both halves normalised by one batch's statistics, so ``td_target`` only hands its inputs
    on to ``critic_loss``, which takes the next action and its bonus from ``next_action`` (so SAC, behind
    it, composes: ``registry``'s ``takes_over``). Alone it is one critic; the preset adds twin critics and
    a policy delay of 3."""

    def make_one_critic(self: Any, seed: int) -> RenormCritic:
        cfg = self.config
        return RenormCritic(self.state_size, self.action_size, seed, warmup=cfg.renorm_warmup,
                            **given(fcs1_units=cfg.critic_fc1, fc2_units=cfg.critic_fc2))

    def td_target(self: Any, rewards: torch.Tensor, next_states: torch.Tensor, discounts: torch.Tensor) -> Any:
        return rewards, next_states, discounts

    def target_action(self: Any, next_states: torch.Tensor) -> torch.Tensor:
        """No target actor either: the actor's own action."""
        return self.actor_local(next_states)

    def critic_loss(self: Any, states: torch.Tensor, actions: torch.Tensor, y: Any) -> torch.Tensor:
        """y = r + d (min Q(s', a') + bonus), (a', bonus) from ``next_action`` (with SAC: its sample and
        -alpha log pi), Q(s', a') from the joint pass."""
        rewards, next_states, discounts = y
        with torch.no_grad():
            next_actions, bonus = self.next_action(next_states)
        both = self.critic_values(torch.cat((states, next_states)), torch.cat((actions, next_actions)))
        n = len(states)
        target = rewards + discounts * (self.smallest(tuple(v[n:] for v in both)).detach() + bonus)
        return self.value_loss(tuple(v[:n] for v in both), target)

    def actor_loss(self: Any, states: torch.Tensor) -> torch.Tensor:
        """The actor climbs Q with the running statistics, leaving them as they are."""
        self.critic_local.eval()
        loss = super().actor_loss(states)  # type: ignore[misc]
        self.critic_local.train()
        return loss


__all__ = ["D_MAX", "MOMENTUM", "R_MAX", "BatchRenorm1d", "RenormCritic"]
