"""Soft actor-critic (Haarnoja et al. 2018, the version with a learned temperature): a stochastic
actor, a tanh-squashed Gaussian, whose every target and loss adds the policy's entropy, weighted
by a temperature alpha that learns to hold the entropy near a target (-1 per action dimension).

Where it departs from DDPG, part by part (``registry.PARTS``):

- ``make_actor``: ``SquashedGaussianActor``, model.py's ``Actor`` (its layers, widths and
  initialisation; ``fc3`` is the Gaussian's mean) with a second head for the log standard
  deviation and the temperature's logarithm as a parameter. Called with states alone it gives
  tanh(mean), the deterministic action that ``evaluate.py``, ``watch.py`` and greedy acting play;
  called with a draw of standard normal noise, a sampled action and its log-probability.
- ``act``: while training, the action is the policy's own sample; its noise comes from the agent's
  ``noise`` generator (a ``GaussianNoise`` of scale 1), so a run's state saves and resumes it as it
  does OU noise. No noise is added on top.
- ``td_target``: y = r + d (min Q'(s', a') - alpha log pi(a'|s')), a' drawn from the current actor
  (SAC keeps no target actor; the agent's one still follows, unused). With twin critics (the
  ``sac`` preset) the minimum is TD3's clipped double Q. The draw and its entropy term are
  ``next_action``, which CrossQ's target, computed in its critic's loss, reads too: with
  ``{"preset": "crossq", "sac": true}`` the soft target comes from CrossQ's joint pass.
- ``actor_loss``: mean(alpha log pi(a|s) - min Q(s, a)) over fresh draws a, plus the temperature's
  loss, -log alpha (log pi(a|s) + target entropy), with each term's gradient reaching only its own
  parameters (the other's inputs detached). The temperature is a parameter of the actor, so the
  actor's optimiser steps it (at ``lr_actor``), its checkpoint and resume carry it, and one
  backward pass serves both.
- ``exploration_scale`` (the metrics' "exploration"): the temperature alpha.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ddpg.variants.gaussian import GaussianNoise
from model import FINAL_INIT, Actor, given

LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0  # the Gaussian's std kept in [0.0067, 7.4] before the squash
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


class SquashedGaussianActor(Actor):
    """``Actor``'s layers with ``fc3`` as the mean, a ``log_std`` head and ``log_alpha``, the
    temperature's logarithm (0 at the start: alpha 1). ``forward(state)``: tanh(mean);
    ``forward(state, noise)``: (tanh(mean + std * noise), its log-probability (B, 1))."""

    def __init__(self, state_size: int, action_size: int, seed: int, **widths: int) -> None:
        super().__init__(state_size, action_size, seed, **widths)
        self.log_std = nn.Linear(self.fc2.out_features, action_size)
        nn.init.uniform_(self.log_std.weight, -FINAL_INIT, FINAL_INIT)  # std near 1 at the start
        nn.init.uniform_(self.log_std.bias, -FINAL_INIT, FINAL_INIT)
        self.log_alpha = nn.Parameter(torch.zeros(()))

    def forward(self, state: torch.Tensor, noise: torch.Tensor | None = None) -> Any:  # type: ignore[override]
        if noise is None:
            return super().forward(state)
        h = F.relu(self.fc2(F.relu(self.fc1(state))))
        mean, log_std = self.fc3(h), self.log_std(h).clamp(LOG_STD_MIN, LOG_STD_MAX)
        u = mean + log_std.exp() * noise
        # log N(u; mean, std) less the squash's log-Jacobian, log(1 - tanh(u)^2) = 2 (log 2 - u - softplus(-2u))
        log_prob = (-0.5 * noise.square() - log_std - _HALF_LOG_2PI - 2 * (math.log(2) - u - F.softplus(-2 * u)))
        return torch.tanh(u), log_prob.sum(dim=-1, keepdim=True)


class SoftActorCritic:
    """The piece (``registry``): SAC with a learned temperature (Haarnoja et al. 2018): a tanh-squashed
    Gaussian actor acting by its own samples, the entropy, weighted by alpha, in the TD target and the
    actor's loss, and alpha learning to hold the entropy at -1 per action dimension; no target actor."""

    def make_actor(self: Any) -> SquashedGaussianActor:
        cfg = self.config
        return SquashedGaussianActor(self.state_size, self.action_size, self.seed,
                                     **given(fc1_units=cfg.actor_fc1, fc2_units=cfg.actor_fc2))

    def make_noise(self: Any) -> GaussianNoise:
        return GaussianNoise(self.action_size, self.seed, sigma=1.0)  # the policy's standard normal draws

    def act(self: Any, states: np.ndarray, add_noise: bool = True) -> np.ndarray:
        """The policy's sample while training (``add_noise``), tanh(mean) otherwise."""
        if not add_noise:
            return super().act(states, add_noise=False)  # type: ignore[misc]
        states = np.asarray(states, dtype=np.float32)
        flat = torch.from_numpy(states.reshape(-1, self.state_size)).to(self.device)
        noise = torch.from_numpy(self.noise.sample(len(flat)).astype(np.float32)).to(self.device)
        actor = self.actor_local if self.backend is None else self.backend.actor()  # a back-end may act on a copy
        with torch.no_grad():
            actions = actor(flat, noise)[0].cpu().numpy().astype(np.float64)
        return actions[0] if states.ndim == 1 else actions

    def temperature(self: Any) -> torch.Tensor:
        return self.actor_local.log_alpha.exp()

    def exploration_scale(self: Any) -> float:
        return float(self.actor_local.log_alpha.detach().exp())

    def next_action(self: Any, next_states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """a' drawn from the current actor, and its value's entropy term, -alpha log pi(a'|s')."""
        noise = torch.randn(len(next_states), self.action_size, device=next_states.device)
        next_actions, log_prob = self.actor_local(next_states, noise)
        return next_actions, -self.temperature() * log_prob

    def td_target(self: Any, rewards: torch.Tensor, next_states: torch.Tensor, discounts: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            next_actions, bonus = self.next_action(next_states)
            return rewards + discounts * (self.target_value(next_states, next_actions) + bonus)

    def actor_loss(self: Any, states: torch.Tensor) -> torch.Tensor:
        noise = torch.randn(len(states), self.action_size, device=states.device)
        actions, log_prob = self.actor_local(states, noise)
        q = self.smallest(self.critic_values(states, actions))
        log_alpha = self.actor_local.log_alpha
        temperature_loss = -(log_alpha * (log_prob.detach() - self.action_size)).mean()  # target entropy -action_size
        return (log_alpha.exp().detach() * log_prob - q).mean() + temperature_loss


__all__ = ["LOG_STD_MAX", "LOG_STD_MIN", "SoftActorCritic", "SquashedGaussianActor"]
