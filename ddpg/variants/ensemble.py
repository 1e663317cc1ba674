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
initialised from its own seed, and run as one batched pass: their weights are stacked, and
``model.Critic.forward`` itself runs on all of them at once (``torch.func.vmap``), so an edit of
model.py's critic is the ensemble's too.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from model import Critic


class CriticEnsemble(nn.Module):
    """``n`` critics of ``model.Critic``, ``make_critic(seed + i)`` for i < n: ``forward`` gives
    their mean Q, ``all`` every member's, ``subset_min`` the smallest of a random ``m``."""

    def __init__(self, make_critic: Callable[[int], Critic], seed: int, n: int) -> None:
        super().__init__()
        members = [make_critic(seed + i) for i in range(n)]
        self.n = n
        # One member's module, with no storage of its own, whose forward runs on each member's weights.
        self.shape = [copy.deepcopy(members[0]).to("meta")]  # a list: not a submodule, no parameters
        params, buffers = torch.func.stack_module_state(members)
        self.names = list(params)
        for name, stacked in params.items():  # (n, ...) each: every member's tensor of that name
            self.register_parameter(name.replace(".", "__"), nn.Parameter(stacked.detach().clone()))
        for name, stacked in buffers.items():
            self.register_buffer(name.replace(".", "__"), stacked.clone())
        self.buffer_names = list(buffers)
        self.obs_norm: nn.Module = nn.Identity()  # normalise.ObservationNormalisation's, when on: one map for all

    def all(self, state: torch.Tensor, action: torch.Tensor, members: torch.Tensor | None = None) -> torch.Tensor:
        """Q(state, action) of every member (or of ``members``, indices), shape (n, B, 1):
        ``model.Critic.forward`` itself for each, vectorised over the members (``torch.func.vmap``), on
        the states as ``obs_norm`` maps them, once for all members (the identity unless obs_norm is on)."""
        state = self.obs_norm(state)

        def stacked(name: str) -> torch.Tensor:
            t = getattr(self, name.replace(".", "__"))
            return t if members is None else t[members]

        params = {name: stacked(name) for name in self.names}
        buffers = {name: stacked(name) for name in self.buffer_names}

        def one(p: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> torch.Tensor:
            return torch.func.functional_call(self.shape[0], (p, b), (state, action))

        return torch.func.vmap(one)(params, buffers)

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
