"""An ensemble of critics with REDQ's target (Chen et al. 2021, "Randomized Ensembled Double
Q-Learning"): N critics learn from one TD target, the smallest of the values of M target
critics drawn at random for each update, and the actor climbs the mean of all N.

TD3's twin critics take the minimum of two, which under-estimates by a fixed amount; the
minimum of a random M out of N is an estimator whose bias M tunes, and the N critics' mean
gives the actor a smoother, lower-variance gradient than one critic's. REDQ pairs it with many
updates per transition (a high update-to-data ratio), which a single critic's growing
over-estimation would not survive: here that is ``learn_updates`` as ever.

``CriticEnsemble`` holds the N critics as one module, so the agent's one critic optimiser, its
gradient clipping (over all N), the soft target update and the saved state treat them as
"the critic", as ``twin.TwinCritic`` does for two. Its members are ``model.Critic``s, each
initialised from its own seed, and run as one batched pass: their weights are stacked, so a
layer of all N critics is one batched matrix product rather than N small ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from model import Critic


class CriticEnsemble(nn.Module):
    """``n`` critics of ``model.Critic``'s shape, ``make_critic(seed + i)`` for i < n: ``forward``
    gives their mean Q, ``all`` every member's, ``subset_min`` the smallest of a random ``m``."""

    def __init__(self, make_critic: Callable[[int], Critic], seed: int, n: int) -> None:
        super().__init__()
        members = [make_critic(seed + i) for i in range(n)]
        self.n, self.layer_norm = n, isinstance(members[0].ln1, nn.LayerNorm)

        def stacked(get: Callable[[Critic], torch.Tensor]) -> nn.Parameter:
            return nn.Parameter(torch.stack([get(m).detach() for m in members]))

        # Linear layers as (n, in, out) weights and (n, 1, out) biases: x @ W + b for every member at once.
        for name in ("fcs1", "fc2", "fc3"):
            self.register_parameter(f"{name}_w", stacked(lambda m, name=name: getattr(m, name).weight.T))
            self.register_parameter(f"{name}_b", stacked(lambda m, name=name: getattr(m, name).bias[None]))
        if self.layer_norm:  # each member's own gain and shift, as nn.LayerNorm's
            for name in ("ln1", "ln2"):
                self.register_parameter(f"{name}_w", stacked(lambda m, name=name: getattr(m, name).weight[None]))
                self.register_parameter(f"{name}_b", stacked(lambda m, name=name: getattr(m, name).bias[None]))

    def all(self, state: torch.Tensor, action: torch.Tensor, members: torch.Tensor | None = None) -> torch.Tensor:
        """Q(state, action) of every member (or of ``members``, indices), shape (n, B, 1):
        ``model.Critic.forward`` for each, one batched matrix product per layer."""
        n = self.n if members is None else len(members)

        def w(name: str) -> torch.Tensor:
            stacked = getattr(self, name)
            return stacked if members is None else stacked[members]

        def layer(x: torch.Tensor, fc: str, ln: str) -> torch.Tensor:
            x = torch.baddbmm(w(f"{fc}_b"), x, w(f"{fc}_w"))
            if self.layer_norm:
                x = F.layer_norm(x, x.shape[-1:]) * w(f"{ln}_w") + w(f"{ln}_b")
            return F.relu(x)

        xs = layer(state.expand(n, *state.shape), "fcs1", "ln1")
        x = layer(torch.cat((xs, action.expand(n, *action.shape)), dim=2), "fc2", "ln2")
        return torch.baddbmm(w("fc3_b"), x, w("fc3_w"))

    def forward(self, state: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        """The members' mean Q, (B, 1): what the actor climbs, the metrics read and ``watch.py`` shows."""
        return self.all(state, action).mean(dim=0)

    def subset_min(self, state: torch.Tensor, action: torch.Tensor, m: int) -> torch.Tensor:
        """The smallest Q of ``m`` members drawn without replacement, the same ones for the whole
        batch (REDQ). The draw uses torch's default generator on the device, as TD3's target noise
        does, so a captured CUDA graph draws afresh at every replay."""
        members = torch.rand(self.n, device=state.device).argsort()[:m]
        return self.all(state, action, members).min(dim=0).values


class Ensemble:
    """The piece (``registry``): an ensemble of critics with REDQ's target (Chen et al. 2021):
    ``ensemble`` critics, each a ``model.Critic`` from its own seed, run as one batched pass; every
    one learns from one target, the smallest target value of ``ensemble_subset`` members drawn
    afresh for each update, and the actor climbs their mean."""

    def make_critic(self: Any) -> CriticEnsemble:
        return CriticEnsemble(self.make_one_critic, self.seed, self.config.ensemble)

    def critic_values(self: Any, states: torch.Tensor, actions: torch.Tensor,
                      critic: nn.Module | None = None) -> tuple[torch.Tensor, ...]:
        return tuple((self.critic_local if critic is None else critic).all(states, actions).unbind(0))

    def target_value(self: Any, next_states: torch.Tensor, next_actions: torch.Tensor) -> torch.Tensor:
        return self.critic_target.subset_min(next_states, next_actions, self.config.ensemble_subset)


__all__ = ["CriticEnsemble"]
