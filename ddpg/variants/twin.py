"""TD3's clipped double Q (Fujimoto et al. 2018): two critics, and the smaller of their
target values in the TD target, against the over-estimation one critic's maximisation
feeds on.

``TwinCritic`` holds both critics as one module, so the agent's one critic optimiser, its
gradient clipping (over both), the soft target update and the saved state all treat the
pair as "the critic". Its ``forward`` is the first critic's Q: the actor climbs Q1, as in
TD3. The two are initialised from different seeds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn


class TwinCritic(nn.Module):
    """Two critics, ``make_critic(seed)`` and ``make_critic(seed + 1)``: ``forward`` gives Q1,
    ``both`` gives (Q1, Q2)."""

    def __init__(self, make_critic: Callable[[int], nn.Module], seed: int) -> None:
        super().__init__()
        self.q1, self.q2 = make_critic(seed), make_critic(seed + 1)

    def forward(self, state: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return self.q1(state, action)

    def both(self, state: torch.Tensor, action: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.q1(state, action), self.q2(state, action)


class TwinCritics:
    """The piece (``registry``): TD3's clipped double Q (Fujimoto et al. 2018): two critics, each from its
    own seed; both learn from one target, the smaller of their target values; the actor climbs the first."""

    def make_critic(self: Any) -> TwinCritic:
        return TwinCritic(self.make_one_critic, self.seed)

    def critic_values(self: Any, states: torch.Tensor, actions: torch.Tensor,
                      critic: nn.Module | None = None) -> tuple[torch.Tensor, ...]:
        return (self.critic_local if critic is None else critic).both(states, actions)

    def smallest(self: Any, values: tuple[torch.Tensor, ...]) -> torch.Tensor:
        return torch.min(*values)

    def target_value(self: Any, next_states: torch.Tensor, next_actions: torch.Tensor) -> torch.Tensor:
        return self.smallest(self.critic_values(next_states, next_actions, self.critic_target))


class TargetSmoothing:
    """The piece (``registry``): TD3's target policy smoothing: Gaussian noise of ``target_noise``
    clipped at ``target_noise_clip`` on the target actor's action, so the target is an average over
    nearby actions."""

    def target_action(self: Any, next_states: torch.Tensor) -> torch.Tensor:
        actions, cfg = super().target_action(next_states), self.config  # type: ignore[misc]
        noise = (torch.randn_like(actions) * cfg.target_noise).clamp(-cfg.target_noise_clip, cfg.target_noise_clip)
        return (actions + noise).clamp(-1.0, 1.0)


class PolicyDelay:
    """The piece (``registry``): TD3's delayed policy updates: the actor and the targets every
    ``policy_delay``-th update; the updates in between step the critic only, and compute no actor
    loss (SAC's would draw actions and run both critics for nothing)."""

    partly_replaces = ("actor_loss", "optimise")  # the updates in between are its own code, not Agent's

    def actor_learns(self: Any) -> bool:
        """Whether this update steps the actor and the targets: every ``policy_delay``-th."""
        return self.n_updates % self.config.policy_delay == 0

    def actor_loss(self: Any, states: torch.Tensor) -> torch.Tensor:
        if not self.actor_learns():  # a critic-only update: nothing reads it
            return states.new_zeros(())
        return super().actor_loss(states)  # type: ignore[misc]

    def optimise(self: Any, actor_loss: torch.Tensor, critic_loss: torch.Tensor) -> None:
        if self.actor_learns():
            return super().optimise(actor_loss, critic_loss)  # type: ignore[misc]
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        if self.config.grad_clip > 0:
            nn.utils.clip_grad_norm_(self.critic_local.parameters(), self.config.grad_clip)
        self.critic_optimizer.step()
        self.n_updates += 1
        return None
